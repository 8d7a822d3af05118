package platform

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/secret"
)

// Error codes of the debug-chat error body (reference, Errors / Debug chat).
// The reference does not map them to HTTP statuses, so they are recognised
// by code whatever the status.
const (
	// CodeChatTimeout: the chat session exceeded the timeout limit; a new
	// session is needed.
	CodeChatTimeout = "CHAT_TIMEOUT"
	// CodeConversationsNotFound: the conversation id does not exist.
	CodeConversationsNotFound = "CONVERSATIONS_NOT_FOUND"
)

// APIError is a non-2xx answer of the platform (or a 2xx debug-chat answer
// whose body says success: false).
type APIError struct {
	// Method is the HTTP method.
	Method string
	// Endpoint is the path template, e.g.
	// "/v1/agents/{agentId}/debug-chat/{conversationId}": stable across
	// calls, for grouping errors in reports.
	Endpoint string
	// Path is the concrete path, without the query.
	Path string
	// Host is the host (host:port) the call went to.
	Host string
	// Credential names what authenticated the call (see Credential*):
	// what to check after a 401 or 403.
	Credential string
	// Status is the HTTP status code.
	Status int
	// Code is the debug-chat error_code (or a code field of another body
	// shape), when the body had one.
	Code string
	// Message is the server's explanation, taken from error_message,
	// message or error, whichever the body shape had; for a body that is
	// not JSON (a proxy's HTML page) its title or first line. Redacted.
	Message string
	// RetryAfter is the wait the server asked for (429, 503), or 0.
	RetryAfter time.Duration
	// RetryAfterCap is set when RetryAfter alone ended the retries: it
	// is past the longest the client waits to retry (RetryPolicy's
	// MaxRetryAfter), which this holds.
	RetryAfterCap time.Duration
	// Attempts is how many times the request was sent.
	Attempts int
	// Body is the start of the response body, redacted.
	Body []byte
	// Redirected is the path (redacted) that gave the answer when the
	// client followed a redirect (redirect.go) to it, or "" when Path
	// did. A 404 there says nothing of the resource at Path: IsNotFound
	// is false.
	Redirected string
}

// Error renders "POST /v1/agents/a/debug-chat/c: 404 CONVERSATIONS_NOT_FOUND:
// conversation c does not exist".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(e.Status))
	if e.Code != "" {
		b.WriteByte(' ')
		b.WriteString(e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Code == "" {
		if t := http.StatusText(e.Status); t != "" {
			b.WriteByte(' ')
			b.WriteString(t)
		}
	}
	if e.Redirected != "" {
		b.WriteString(" (answered by ")
		b.WriteString(e.Redirected)
		b.WriteString(", which a redirect led to)")
	}
	if e.RetryAfterCap > 0 {
		fmt.Fprintf(&b, " (not retried: its Retry-After of %s is past the %s the client waits to retry)", e.RetryAfter, e.RetryAfterCap)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

// ResponseError is a 2xx answer the client could not use: malformed JSON,
// a required field missing or of the wrong type, or a body over the limit.
type ResponseError struct {
	// Method, Endpoint, Path and Host name the call as in APIError.
	Method   string
	Endpoint string
	Path     string
	Host     string
	// Status is the (2xx) HTTP status of the answer.
	Status int
	// Err says what is wrong with the body.
	Err error
	// Body is the start of the body, redacted.
	Body []byte
}

// Error renders "GET /v3/ws-a/p/conversations: 200: malformed response:
// ...".
func (e *ResponseError) Error() string {
	return fmt.Sprintf("%s %s: %d: malformed response: %v", e.Method, e.Path, e.Status, e.Err)
}

// Unwrap returns the decoding problem.
func (e *ResponseError) Unwrap() error { return e.Err }

// NetworkError is a transport failure: no HTTP answer, or an answer cut
// off.
type NetworkError struct {
	// Method, Endpoint, Path and Host name the call as in APIError.
	Method   string
	Endpoint string
	Path     string
	Host     string
	// Sent is false when the request certainly never reached the server
	// (dial failure, cancelled before sending) and true when it may have.
	Sent bool
	// Attempts is how many times the request was tried.
	Attempts int
	// Err is the underlying error (url.Error stripped, since its text
	// repeats the whole URL).
	Err error
	// msg is Err's text, redacted.
	msg string
}

// Error renders the endpoint, whether the request may have been received,
// and the cause.
func (e *NetworkError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.Path)
	b.WriteString(": ")
	switch {
	case errors.Is(e.Err, context.Canceled), errors.Is(e.Err, context.DeadlineExceeded):
		// The cause says it all.
	case e.Sent:
		b.WriteString("connection lost after the request was sent: ")
	default:
		b.WriteString("connection failed: ")
	}
	b.WriteString(e.msg)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the transport error, so errors.Is(err, context.Canceled)
// and errors.As(err, **net.OpError) work.
func (e *NetworkError) Unwrap() error { return e.Err }

// IsChatTimeout reports whether err is a debug-chat CHAT_TIMEOUT: the
// session exceeded its time limit and a new one is needed.
func IsChatTimeout(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == CodeChatTimeout
}

// IsNotFound reports whether err is a 404 or a CONVERSATIONS_NOT_FOUND of
// the path called. A 404 of the path a redirect led to is not: it does
// not say that the record asked for is absent (a confirmation would wait
// for it and then blame the agent), only that the platform sent the call
// somewhere that does not answer it.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Redirected == "" && (ae.Status == http.StatusNotFound || ae.Code == CodeConversationsNotFound)
}

// IsRateLimited reports whether err is a 429, or a call given up because
// waiting on the rate limit would exceed the wait budget.
func IsRateLimited(err error) bool {
	var ae *APIError
	var re *RateLimitError
	return errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests || errors.As(err, &re)
}

// IsAuth reports whether err is a 401 or 403: a wrong, missing or
// underprivileged key. Retrying will not help.
func IsAuth(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden)
}

// aboutAnother is the problem of an answer naming another subject than
// the one its call asked about: member says got where the call was about
// what want. Taken as the one asked about, someone else's record, call
// or endpoint would be believed.
func aboutAnother(member, got, what, want string) error {
	return fmt.Errorf("%s is %q, and the call was about %s %q", member, got, what, want)
}

// IsMessaging reports whether err is the platform's refusal (an
// APIError) or a network failure of the Messaging API's access-token,
// session or handshake step, or of its socket: a 401 there is about the
// connector token and host, not an API key, and a timeout there names no
// HTTP call. A malformed answer (a ResponseError) is not asked about: it
// is the platform's error wherever it came from.
func IsMessaging(err error) bool {
	var (
		ae *APIError
		ne *NetworkError
	)
	switch {
	case errors.As(err, &ae):
		return messagingEndpoint(ae.Endpoint)
	case errors.As(err, &ne):
		return messagingEndpoint(ne.Endpoint)
	}
	return false
}

// IsMessagingMisrouted reports whether err is a 404 of a Messaging step
// that creates something (the access token, the session): the reference
// gives those no 404, so no Messaging API answers at that address (a
// request to the wrong host family returns 404). Only the socket's 404 is
// a session the platform no longer knows.
func IsMessagingMisrouted(err error) bool {
	var ae *APIError
	return IsNotFound(err) && errors.As(err, &ae) && (ae.Endpoint == epAccessToken.template || ae.Endpoint == epMsgSession.template)
}

func messagingEndpoint(template string) bool {
	switch template {
	case epAccessToken.template, epMsgSession.template, epSocket.template:
		return true
	}
	return false
}

// IsUnreachable reports whether err is a failure to connect at all: the
// connection was refused, the host name did not resolve, the TLS
// handshake failed, or connecting timed out. Unlike a connection lost
// after the request was sent, such a failure says nothing reached the
// platform; when every call of a run fails this way the platform is
// unreachable, and the runner stops instead of erroring every case.
func IsUnreachable(err error) bool {
	var ne *NetworkError
	if !errors.As(err, &ne) || errors.Is(err, context.Canceled) {
		return false
	}
	if neverSent(ne.Err) {
		return true
	}
	var (
		rec   tls.RecordHeaderError
		alert tls.AlertError
		cert  *tls.CertificateVerificationError
		uae   x509.UnknownAuthorityError
		hn    x509.HostnameError
		inv   x509.CertificateInvalidError
	)
	return errors.As(ne.Err, &rec) || errors.As(ne.Err, &alert) || errors.As(ne.Err, &cert) ||
		errors.As(ne.Err, &uae) || errors.As(ne.Err, &hn) || errors.As(ne.Err, &inv) ||
		// net/http turns the tls.RecordHeaderError of an https URL
		// that reaches a plain HTTP server into this untyped error.
		strings.Contains(ne.Err.Error(), "server gave HTTP response to HTTPS client")
}

// Credentials, as named by APIError.Credential: the settings a user
// checks when the platform refuses a call.
const (
	CredentialBuildKey   = "build key"
	CredentialRuntimeKey = "runtime key"
	CredentialCallToken  = "call token"
	// CredentialRuntimeKeyAsCallToken is the runtime key sent as the
	// X-<Brand>-Auth-Token of outbound calling and SMS, when no call
	// token is configured.
	CredentialRuntimeKeyAsCallToken = "runtime key (as the call token)"
	CredentialConnectorToken        = "connector token"
	CredentialAccessToken           = "access token"
)

// IsTransient reports whether err may go away on its own: a 5xx, a 429, a
// CHAT_TIMEOUT or a network failure. Cancellation by the caller is not
// transient. The runner retries a scenario from a fresh session on these.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if ae, ok := errors.AsType[*APIError](err); ok {
		return ae.Status >= 500 || ae.Status == http.StatusTooManyRequests || ae.Code == CodeChatTimeout
	}
	// A network failure is transient, including a deadline: a turn that
	// outlived its timeout says the platform was slow, not that the
	// scenario is wrong.
	var ne *NetworkError
	return errors.As(err, &ne)
}

// neverSent reports whether a transport error certainly happened before any
// byte of the request reached the server: the connection was never made.
// Only then may a debug-chat turn be re-sent.
func neverSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return true
	}
	if op, ok := errors.AsType[*net.OpError](err); ok {
		return op.Op == "dial" || op.Op == "proxyconnect"
	}
	return false
}

func (c *Client) networkError(rq *call, err error, sent bool, attempts int) *NetworkError {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	return &NetworkError{
		Method:   rq.ep.method,
		Endpoint: rq.ep.template,
		Path:     rq.path,
		Host:     c.hostOf(rq),
		Sent:     sent,
		Attempts: attempts,
		Err:      err,
		// The transport quotes what the server sent (a malformed
		// header line of up to 10 MiB): server text, masked, then cut to
		// one line as an error body's message is.
		msg: oneLine(c.redactor(rq).String(err.Error())),
	}
}

func (c *Client) responseError(rq *call, status int, body []byte, err error) *ResponseError {
	return &ResponseError{
		Method:   rq.ep.method,
		Endpoint: rq.ep.template,
		Path:     rq.path,
		Host:     c.hostOf(rq),
		Status:   status,
		Err:      c.redactor(rq).Error(err),
		Body:     keepBody(c.redactor(rq), body),
	}
}

func (c *Client) tooLarge(rq *call, status int, limit int64) *ResponseError {
	err := fmt.Errorf("body exceeds the limit of %s", sizeText(limit))
	if rq.ep.chat() && c.cfg.MaxReplyHint != "" {
		err = fmt.Errorf("reply exceeds the limit of %s (%s)", sizeText(limit), c.cfg.MaxReplyHint)
	}
	return c.responseError(rq, status, nil, err)
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

func keepBody(red *secret.Redactor, body []byte) []byte {
	// Redact first, then cut: see apiError.
	body = red.Bytes(body)
	if len(body) > errorKeep {
		body = body[:errorKeep]
	}
	if len(body) == 0 {
		return nil
	}
	out := make([]byte, len(body))
	copy(out, body)
	return out
}

// apiError reads a non-2xx answer into an APIError. It never fails: a body
// that cannot be read or parsed still yields the status.
func (c *Client) apiError(rq *call, res *http.Response, attempts int) *APIError {
	buf := c.bufs.get()
	defer c.bufs.put(buf)
	// A read error leaves whatever arrived; the status is what matters.
	// A 1xx has no body: the body of a 101 that switched protocols is
	// the connection itself, which a server may hold open for ever.
	if res.StatusCode >= 200 {
		_, _ = buf.ReadFrom(io.LimitReader(res.Body, errorBodyLimit))
	}
	raw := buf.Bytes()
	if rq.ep == epWebhookRegister && !c.learnRefusedSecrets(raw) {
		raw = nil // a secret that cannot be masked: the status alone
	}
	// Redact before anything cuts the body short (the kept body, the
	// one-line message): a key cut in two no longer matches the redactor,
	// and its first half would reach the report (found by FuzzResponses).
	red := c.redactor(rq)
	body := red.Bytes(raw)
	e := &APIError{
		Method:     rq.ep.method,
		Endpoint:   rq.ep.template,
		Path:       rq.path,
		Host:       c.hostOf(rq),
		Credential: c.credentialOf(rq.ep.auth),
		Status:     res.StatusCode,
		RetryAfter: parseRetryAfter(res.Header.Get("Retry-After"), servedAt(res.Header, c.now())),
		Attempts:   attempts,
		Body:       keepBody(red, body),
	}
	if res.Request != nil && res.Request.Response != nil {
		// The answer of a redirect followed (redirect.go).
		// Redacted before it is cut short, as the body.
		e.Redirected = red.String(res.Request.URL.EscapedPath())
		if len(e.Redirected) > maxRedirectedPath {
			e.Redirected = e.Redirected[:maxRedirectedPath] + "..."
		}
	}
	e.Code, e.Message = parseErrorBody(body, res.Header.Get("Content-Type"))
	e.Code = red.String(oneLine(e.Code))
	e.Message = red.String(e.Message)
	return e
}

// maxRedirectedPath bounds the path APIError.Redirected keeps of a
// redirect's target, which a hostile platform chooses.
const maxRedirectedPath = 200

// errorBody covers every error shape of the reference: debug chat
// (success, error, error_id, error_code, error_message, data), conversations
// (error_message), alerts (message, errors[]), and the common "code"; and
// the one a platform served by FastAPI answers with whatever the
// reference shows: {"detail": "Not Found"}, or a validation failure's
// {"detail": [{"loc": [...], "msg": ...}]}.
type errorBody struct {
	Error        json.RawMessage `json:"error"`
	ErrorCode    json.RawMessage `json:"error_code"`
	ErrorMessage json.RawMessage `json:"error_message"`
	Message      json.RawMessage `json:"message"`
	Code         json.RawMessage `json:"code"`
	// Errors is the alerts' list of {field, message}; read loosely
	// (errorDetails), since a list of strings or of another shape must
	// not cost the body its code and message.
	Errors json.RawMessage `json:"errors"`
	Detail json.RawMessage `json:"detail"`
}

// errorDetails renders the members of an "errors" or "detail" list:
// "field: message" of objects (FastAPI's "loc" path and "msg" where
// those are absent: "body.clientEnv: Field required"), strings as they
// are; anything else is left out.
func errorDetails(raw json.RawMessage) []string {
	var items []any
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var details []string
	for _, it := range items {
		switch x := it.(type) {
		case string:
			if x != "" {
				details = append(details, x)
			}
		case map[string]any:
			field, _ := x["field"].(string)
			if field == "" {
				field = location(x["loc"])
			}
			msg, _ := x["message"].(string)
			if msg == "" {
				msg, _ = x["msg"].(string)
			}
			switch {
			case field != "" && msg != "":
				details = append(details, field+": "+msg)
			case msg != "":
				details = append(details, msg)
			}
		}
	}
	return details
}

// location renders a FastAPI error's "loc", a path of names and
// indexes: ["body", "metadata", 0] is "body.metadata.0".
func location(loc any) string {
	items, _ := loc.([]any)
	parts := make([]string, 0, len(items))
	for _, it := range items {
		switch x := it.(type) {
		case string:
			parts = append(parts, x)
		case float64:
			parts = append(parts, strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	return strings.Join(parts, ".")
}

// maxMessage bounds a message taken from a body.
const maxMessage = 300

// parseErrorBody extracts a code and a one-line message from any body.
func parseErrorBody(body []byte, contentType string) (code, msg string) {
	trimmed := strings.TrimSpace(string(body))
	if trimmed == "" {
		return "", ""
	}
	var eb errorBody
	if trimmed[0] == '{' && json.Unmarshal(body, &eb) == nil {
		code = firstText(eb.ErrorCode, eb.Code)
		msg = firstText(eb.ErrorMessage, eb.Message, eb.Error, eb.Detail)
		if msg == "" && len(eb.Error) > 0 && eb.Error[0] == '{' {
			// {"error": {"code": ..., "message": ...}}
			var inner errorBody
			if json.Unmarshal(eb.Error, &inner) == nil {
				if code == "" {
					code = firstText(inner.Code, inner.ErrorCode)
				}
				msg = firstText(inner.Message, inner.ErrorMessage)
			}
		}
		if details := append(errorDetails(eb.Errors), errorDetails(eb.Detail)...); len(details) > 0 {
			if msg != "" {
				msg += ": "
			}
			msg += strings.Join(details, "; ")
		}
		if msg == "" && code == "" {
			msg = trimmed
		}
		return code, oneLine(msg)
	}
	if strings.Contains(contentType, "html") || strings.HasPrefix(trimmed, "<") {
		if t := htmlTitle(trimmed); t != "" {
			return "", oneLine(t)
		}
	}
	return "", oneLine(trimmed)
}

// firstText returns the first value that is a non-empty JSON string, or a
// number rendered as text.
func firstText(vals ...json.RawMessage) string {
	for _, v := range vals {
		if len(v) == 0 {
			continue
		}
		switch v[0] {
		case '"':
			var s string
			if json.Unmarshal(v, &s) == nil && s != "" {
				return s
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return string(v)
		}
	}
	return ""
}

// titleRe finds the title of an HTML error page (a proxy's 502, say). A
// regular expression rather than indexes into strings.ToLower(s): lowering
// changes the byte length of invalid UTF-8, so such indexes do not fit s
// (found by FuzzResponses).
var titleRe = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

func htmlTitle(s string) string {
	m := titleRe.FindStringSubmatch(s)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

// oneLine collapses whitespace, escapes the other control characters
// (an escape sequence from a hostile body must not drive the terminal that
// shows the message) and bounds the length, so a message fits one report
// line.
func oneLine(s string) string {
	s = escape.Line(strings.Join(strings.Fields(s), " "))
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// RateLimitError is a call given up because the platform's rate limit
// would make its case wait longer in all than Config.RateWait allows. The
// platform was not at fault (it asked to wait); the run's budget was too
// small for it.
type RateLimitError struct {
	// Method, Endpoint and Path name the call as in APIError.
	Method   string
	Endpoint string
	Path     string
	// Waited is how long the case had waited on rate limits; Limited how
	// many 429 answers it had received.
	Waited  time.Duration
	Limited int
	// Next is the wait the call still needed (a Retry-After pause, or
	// its turn at the key's pace); Budget the case's wait budget.
	Next, Budget time.Duration
	// Hint says how to raise the budget (Config.RateWaitHint).
	Hint string
	// Deadline is set when the wait would outlast the context's deadline
	// rather than the budget.
	Deadline bool
	// PacedBy names the call ("GET /v1/...") whose 429 last paused the
	// key, the one whose pause held this call: with Limited 0 it is the
	// platform's answer behind the error, which the case never saw.
	PacedBy string
	// Rate is the rate set for the key (Config.Rate) when the platform
	// refused none of the key's calls: the wait is its pace, and the
	// run's own settings (that rate, the wait budget, the calls in
	// parallel) held the call, not the platform. 0 otherwise.
	Rate float64
}

// SelfPaced reports whether the wait was the pace of the rate set for the
// key alone (Rate): the platform refused nothing.
func (e *RateLimitError) SelfPaced() bool { return e.Rate > 0 }

// Error renders "rate limited: waited 15m0s for POST
// /v1/agents/a/debug-chat (212 answers 429); the next try could go in 2s,
// past the wait budget of 15m0s per scenario".
func (e *RateLimitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "rate limited: waited %s for %s %s", roundWait(e.Waited), e.Method, e.Path)
	switch {
	case e.Limited > 0:
		fmt.Fprintf(&b, " (%d %s 429)", e.Limited, plural(e.Limited, "answer", "answers"))
	case e.PacedBy != "":
		// A call held back by a pause the platform asked of another
		// call with the same key (another case's, or the deployment
		// read before the first case): without it the message named
		// no answer of the platform at all.
		fmt.Fprintf(&b, " (none of this scenario's calls was answered 429: the platform answered 429 to %s, sent with the same key, and every call of the key waits as it asked)", e.PacedBy)
	case e.SelfPaced():
		// Before, this read as the platform's limit, and the case
		// errored as the platform's fault, though no 429 came at all.
		unit := "requests"
		if e.Rate == 1 {
			unit = "request"
		}
		fmt.Fprintf(&b, " (the platform answered no 429: the wait is the pace of the rate set for the key, %s %s per second)",
			strconv.FormatFloat(e.Rate, 'g', 4, 64), unit)
	}
	if e.Deadline {
		fmt.Fprintf(&b, "; the next try could go in %s, past the call's deadline", roundWait(e.Next))
		return b.String()
	}
	fmt.Fprintf(&b, "; the next try could go in %s, past the wait budget of %s per scenario", roundWait(e.Next), e.Budget)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// roundWait shows a wait to the millisecond below a second, to the tenth
// of a second below a minute and to the second beyond: more precision
// says nothing about a rate limit.
func roundWait(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
