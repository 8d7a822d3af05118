package platform

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The redirect policy, one for every call of the client.
//
// Go's http.Client re-sends every header but Authorization, Cookie and
// WWW-Authenticate to another host on a redirect, so x-api-key and
// X-<Brand>-Auth-Token would follow a 307 from the platform to wherever it
// points, over plain http too. The client therefore follows a redirect only
// when it stays on the origin (scheme, host and port) the request was sent
// to, and only when it keeps the method: a 307 or 308 (which re-send the
// body), or a 301, 302 or 303 of a GET. A recording is the exception: it
// follows a GET's redirect to another origin with no credentials at all
// (keyless). A 301, 302 or 303 of a POST would
// silently turn a debug-chat turn into a GET and its answer into a
// misleading 404. At most maxRedirects are followed. Anything else ends
// the call with a *RedirectError, before the key is sent anywhere new.

// checkRedirect is the CheckRedirect of the client's http.Client. It
// returns http.ErrUseLastResponse to refuse, so attempt sees the redirect
// answer itself and reports it.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	prev := via[len(via)-1]
	switch {
	case len(via) > maxRedirects:
		return http.ErrUseLastResponse
	case req.Method != prev.Method:
		return http.ErrUseLastResponse
	case SameOrigin(req.URL, via[0].URL):
	case keyless(req, via[0]) && !c.red.Contains(req.URL.String()):
		// Only what any client sends: net/http copies the first
		// request's headers onto every hop, the key among them.
		for k := range req.Header {
			if k != "Accept" && k != "User-Agent" {
				delete(req.Header, k)
			}
		}
	default:
		return http.ErrUseLastResponse
	}
	return nil
}

// storageRedirects marks the context of a call whose redirect to another
// origin is followed without credentials (keyless).
type storageRedirects struct{}

// keyless reports whether the redirect req of the call first may be
// followed to another origin without the call's credentials: a
// recording's GET (checkRedirect keeps the method) (the audio endpoint, whose content type and source the
// reference does not show) that the platform keeps in an object store
// and answers with a redirect to a signed URL there. Over https, or the
// scheme of the call: never down to plain http. (checkRedirect also
// refuses a URL that holds a key, which would carry it there.)
func keyless(req, first *http.Request) bool {
	return req.Context().Value(storageRedirects{}) != nil &&
		(strings.EqualFold(req.URL.Scheme, "https") || strings.EqualFold(req.URL.Scheme, first.URL.Scheme))
}

// isRedirect reports whether status is a redirect http.Client follows.
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// SameOrigin compares scheme, host and port, with default ports filled in:
// a key goes only to the origin it was configured for (the redirect policy
// here, and the config's check of URLs overridden by the environment).
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// RedirectError is a redirect the client did not follow: to another
// origin, changing the method, or one too many. It is a problem of the
// target's configuration (the URL points at a host that moved or at a
// proxy), never of the agent, and retrying cannot help.
type RedirectError struct {
	// Method, Endpoint, Path and Host name the call as in APIError.
	Method   string
	Endpoint string
	Path     string
	Host     string
	// Status is the redirect status (301, 302, 303, 307, 308).
	Status int
	// Location is where it pointed, redacted ("" when absent).
	Location string
	// Reason says why it was not followed.
	Reason string
	// Setting is the target setting to fix: build_url or runtime_url.
	Setting string
}

// Error renders `POST /v1/agents/a/debug-chat: 307 redirect to
// "http://other/x" refused: it leads away from https://build.example, and
// the build key is sent only there. Fix build_url to the address the
// platform answers on`.
func (e *RedirectError) Error() string {
	loc := "with no Location"
	if e.Location != "" {
		loc = fmt.Sprintf("to %q", e.Location)
	}
	return fmt.Sprintf("%s %s: %d redirect %s refused: %s. Fix %s to the address the platform answers on",
		e.Method, e.Path, e.Status, loc, e.Reason, e.Setting)
}

// redirectError describes a 3xx answer that checkRedirect refused (or that
// had no usable Location).
func (c *Client) redirectError(rq *call, req *http.Request, res *http.Response) *RedirectError {
	e := &RedirectError{
		Method: rq.ep.method, Endpoint: rq.ep.template, Path: rq.path, Host: c.hostOf(rq),
		Status: res.StatusCode, Setting: "build_url",
	}
	switch rq.ep.host {
	case runtimeHost:
		e.Setting = "runtime_url"
	case messagingHost:
		e.Setting = "messaging_url"
	}
	if res.Request != nil {
		req = res.Request // the last request followed
	}
	from := req.URL
	loc := res.Header.Get("Location")
	var target *url.URL
	if loc != "" {
		if u, err := from.Parse(loc); err == nil {
			target = u
			loc = RedactURL(u.String())
		}
		e.Location = c.redactor(rq).String(loc)
	}
	switch {
	case target == nil:
		e.Reason = "there is nowhere to follow it to"
	case !SameOrigin(target, from):
		e.Reason = fmt.Sprintf("it leads away from %s://%s, and the %s is sent only there", from.Scheme, from.Host, c.credentialOf(rq.ep.auth))
	case req.Method != http.MethodGet && req.Method != http.MethodHead &&
		res.StatusCode != http.StatusTemporaryRedirect && res.StatusCode != http.StatusPermanentRedirect:
		e.Reason = fmt.Sprintf("a %d would turn the %s into a GET", res.StatusCode, req.Method)
	default:
		e.Reason = fmt.Sprintf("more than %d redirects", maxRedirects)
	}
	return e
}
