package platform

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/agenttest/agenttest/internal/diag"
)

// The rules of a base URL setting (build, runtime, Messaging) live here,
// for Config.Validate and for the config package, which checks the same
// settings as they are read so that a refused URL is named at its place
// in agenttest.yaml and is never printed with a key in it.

// URLError is a URL setting whose form CheckBaseURL or CheckMessagingURL
// refuses.
type URLError struct {
	// URL is the setting as a message may show it: its credentials
	// masked, and without its query and fragment, whatever the problem:
	// either may hold a key.
	URL string
	// Problem says what is wrong, in words that follow the quoted URL.
	Problem string
	// Query is set when the problem is a query or fragment. A key
	// written there is never shown; config reports this problem only
	// once it has looked for the target's own keys in the setting, so
	// that a pasted key is named as the key it is.
	Query bool
}

func (e *URLError) Error() string { return fmt.Sprintf("%q: %s", e.URL, e.Problem) }

// CheckBaseURL checks the form of a build or runtime URL: an absolute
// http or https URL without credentials, query or fragment. Transport
// security is CheckScheme's.
func CheckBaseURL(raw string) error {
	if err := checkForm(raw, "the key settings", "http", "https"); err != nil {
		return err
	}
	return checkPath(raw, "/v1/... and /v3/...", func(seg string, _ bool) bool { return versionSegment(seg) })
}

// CheckMessagingURL checks the form of a Messaging URL, as CheckBaseURL
// does, where ws and wss are accepted too: the reference names the
// cluster by its socket, wss://{messaging_host}.
func CheckMessagingURL(raw string) error {
	if err := checkMessagingForm(raw); err != nil {
		return err
	}
	return checkPath(raw, "/api/v1/... and the socket's /ws", func(seg string, last bool) bool {
		return seg == "api" || versionSegment(seg) || (last && seg == "ws")
	})
}

// checkMessagingForm is the form of a Messaging URL, and of the socket's
// URL, whose path is the socket's own.
func checkMessagingForm(raw string) error {
	return checkForm(raw, "the connector token setting", "http", "https", "ws", "wss")
}

// versionSegment is a path segment that names a version of the API
// (v1, v3), where its endpoints' paths begin.
func versionSegment(seg string) bool {
	if len(seg) < 2 || (seg[0] != 'v' && seg[0] != 'V') {
		return false
	}
	for _, r := range seg[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// checkPath refuses a base URL whose path holds the start of the paths
// the client appends to it (build_url: https://build.example.com/v1,
// copied from the reference's {build_url}/v1/...): every call would go
// to /v1/v1/... and meet a 404 that reads as an unknown agent. A path
// before that (a gateway's prefix) is kept. appended is what the
// client appends, its first path first, for the message; endpoint says
// whether a segment (the last one, when last) begins it.
func checkPath(raw, appended string, endpoint func(seg string, last bool) bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // checkForm refused it
	}
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i, seg := range segs {
		if seg == "" || !endpoint(seg, i == len(segs)-1) {
			continue
		}
		kept := *u
		kept.Path = strings.Join(segs[:i], "/")
		if kept.Path != "" {
			kept.Path = "/" + kept.Path
		}
		kept.RawPath = ""
		from := "/" + strings.Join(segs[i:], "/")
		return &URLError{URL: WithoutQuery(u), Problem: fmt.Sprintf("%s is part of the paths agenttest appends to it (%s): the calls would go to %s%s; write %s",
			from, appended, from, strings.Fields(appended)[0], WithoutQuery(&kept))}
	}
	return nil
}

// checkForm refuses what a base URL must not carry. Credentials, a query
// or a fragment could each hold a key that the messages and reports
// showing the URL would print; a query would also corrupt every endpoint
// path the client appends to the base. keys names the settings a key
// belongs in, for credentials written in the URL instead.
func checkForm(raw, keys string, schemes ...string) error {
	if t := strings.TrimSpace(raw); t != raw && t != "" {
		// url.Parse's "first path segment in URL cannot contain colon"
		// or "invalid port" does not say the blank is what is wrong.
		return &URLError{URL: RedactURL(raw), Problem: "has blanks around it (write it without them)"}
	}
	u, err := url.Parse(raw)
	if err != nil && !strings.Contains(raw, "://") {
		// host:port without a scheme fails to parse as a path.
		return &URLError{URL: RedactURL(raw), Problem: "must be an absolute URL, with a host and scheme " + diag.List(schemes, "or") + " (" + schemes[len(schemes)-1] + "://HOST)"}
	}
	if err != nil {
		// url.Error repeats the input; say it once.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return &URLError{URL: RedactURL(raw), Problem: err.Error()}
	}
	shown := WithoutQuery(u)
	if u.Scheme != "" && !slices.Contains(schemes, u.Scheme) {
		return &URLError{URL: shown, Problem: "scheme must be " + diag.List(schemes, "or")}
	}
	if u.Scheme == "" || u.Host == "" {
		return &URLError{URL: shown, Problem: "must be an absolute URL, with a host and scheme " + diag.List(schemes, "or")}
	}
	if u.User != nil {
		return &URLError{URL: shown, Problem: "credentials in the URL are not allowed; use " + keys}
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return &URLError{URL: shown, Problem: "must not have a query or fragment (not shown: a key goes in the key settings, never in a URL)", Query: true}
	}
	return nil
}

// checkURL is Config.Validate's check of one URL setting: its form, then
// its transport, the error named for the setting.
func checkURL(what, raw string, form func(string) error, allowHTTP bool) error {
	if err := form(raw); err != nil {
		return fmt.Errorf("%s %w", what, err)
	}
	if err := CheckScheme(raw, allowHTTP); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// CheckScheme enforces transport security on a base URL: https (wss), or
// plain http (ws) to a loopback host (127.0.0.0/8, ::1, localhost), where nothing
// crosses a network. allowHTTP lifts the rule (a target's allow_http).
func CheckScheme(raw string, allowHTTP bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "ws") || allowHTTP || IsLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("%q sends the API key in clear text to a host that is not loopback; use https:// (or set AllowHTTP, a target's allow_http, to accept the risk)", RedactURL(raw))
}

// IsLoopback reports whether host (a name or an IP, without port or
// brackets) is this machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RedactURL is raw with its credentials masked, for messages: those of
// its authority, where a password reads xxxxx as in url.URL.Redacted, and
// so does a user name without one (https://TOKEN@host carries the token
// there, where Redacted would keep it); and the values of the query (and
// fragment) parameters credentialParam names (?token=xxxxx), the rest
// of the URL as written. A URL that does not parse is masked the same way
// from its text: everything of the authority before its last @, and the
// parameters.
func RedactURL(raw string) string {
	raw, _ = maskParams(raw)
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return raw
		}
		if _, ok := u.User.Password(); !ok {
			u.User = url.User("xxxxx")
			return u.String()
		}
		return u.Redacted()
	}
	start := strings.Index(raw, "//")
	if start < 0 {
		start = 0
	} else {
		start += 2
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndex(raw[start:end], "@")
	if at < 0 {
		return raw
	}
	return raw[:start] + "xxxxx" + raw[start+at:]
}

// URLCredentials are the credentials of raw that RedactURL masks: the
// password of its authority (or a user name without one), and the values
// of its credential parameters, decoded; none when it does not parse. The
// URL is sent to the platform (a webhook endpoint's), so a platform that
// echoes it in its words puts them where RedactURL cannot find them: a
// redactor must know them.
func URLCredentials(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	_, out := maskParams(raw)
	if u.User == nil {
		return out
	}
	c, ok := u.User.Password()
	if !ok {
		c = u.User.Username()
	}
	if c == "" {
		return out
	}
	return append(out, c)
}

// credentialParam reports whether a URL parameter's name says that its
// value is a credential. The names are those mature tools mask:
// Sentry's default scrubbing (a name holding password, secret, passwd,
// api_key, apikey, auth, credentials, mysql_pwd, privatekey, private_key,
// token, bearer), the OpenTelemetry HTTP conventions for url.query
// (AWSAccessKeyId, Signature, sig, X-Goog-Signature), OAuth 2.0
// (access_token, refresh_token, id_token, client_secret, code) and the
// API keys of Google and others (key). Case, - and _ aside (API-Key,
// api_key and apikey are one), a name holding one of the long words is
// one (X-Amz-Security-Token, client_secret); the short ones count as a
// word of the name between - _ and . or in camelCase (key, X-Hook-Sig,
// basic_auth, hookKey; not monkey or author), and code only alone
// (OAuth's; zip_code and zipCode are none).
// Masking a value that was none costs a message a detail; showing a
// credential cannot be undone.
func credentialParam(name string) bool {
	if strings.EqualFold(name, "code") {
		return true
	}
	words := paramWords(name)
	if slices.ContainsFunc(words, func(w string) bool { return slices.Contains(credentialParts, w) }) {
		return true
	}
	joined := strings.Join(words, "")
	return slices.ContainsFunc(credentialWords, func(w string) bool { return strings.Contains(joined, w) })
}

// paramWords are a parameter name's words, lower-cased: split at - _ and
// ., and where camelCase starts a word (hookKey, basicAuth, APIKey,
// webhookSig2), so that a short credential word written in camelCase
// counts as the word it is.
func paramWords(name string) []string {
	var words []string
	var w []rune
	rs := []rune(name)
	for i, r := range rs {
		if r == '-' || r == '_' || r == '.' {
			if len(w) > 0 {
				words = append(words, strings.ToLower(string(w)))
				w = w[:0]
			}
			continue
		}
		// A capital starts a word after a small letter or a digit
		// (hookKey), and ends a run of capitals when a small letter
		// follows it (the K of APIKey).
		if len(w) > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			if !unicode.IsUpper(prev) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) {
				words = append(words, strings.ToLower(string(w)))
				w = w[:0]
			}
		}
		w = append(w, r)
	}
	if len(w) > 0 {
		words = append(words, strings.ToLower(string(w)))
	}
	return words
}

// credentialWords name a credential wherever they are in a parameter's
// name (written without - and _); credentialParts only as a word of it.
var (
	credentialWords = []string{"token", "secret", "password", "passwd", "pwd", "apikey", "accesskey", "privatekey",
		"signature", "credential", "bearer"}
	credentialParts = []string{"key", "sig", "auth", "authorization", "pass", "jwt"}
)

// maskParams is raw with the values of its credential parameters, in the
// query and in the fragment (where OAuth's implicit grant puts
// access_token), written xxxxx, and those values decoded. Parameters
// are split at & and at ;, which some servers take as well.
func maskParams(raw string) (string, []string) {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	var values []string
	mask := func(params string) string {
		var b strings.Builder
		for params != "" {
			end := strings.IndexAny(params, "&;")
			if end < 0 {
				end = len(params)
			}
			part := params[:end]
			name, value, ok := strings.Cut(part, "=")
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
			if ok && value != "" && credentialParam(name) {
				part = part[:len(part)-len(value)] + "xxxxx"
				if v, err := url.QueryUnescape(value); err == nil {
					value = v
				}
				values = append(values, value)
			}
			b.WriteString(part)
			if end < len(params) {
				b.WriteByte(params[end])
				end++
			}
			params = params[end:]
		}
		return b.String()
	}
	out := base
	if hasQuery {
		out += "?" + mask(query)
	}
	if hasFrag {
		out += "#" + mask(frag)
	}
	return out, values
}

// WithoutQuery is u without its query and fragment, for messages about
// them: an api_key= there would be shown otherwise.
func WithoutQuery(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.RawFragment, v.ForceQuery = "", "", "", false
	return RedactURL(v.String())
}
