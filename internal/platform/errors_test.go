package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fixed serves the same answer to every request and counts them. It imitates
// the reference's error bodies where the simulator cannot (proxy pages,
// other implementations' shapes).
type fixed struct {
	status int
	header map[string]string
	body   string
	hits   atomic.Int32
	mu     sync.Mutex
}

// set changes the answer between requests.
func (f *fixed) set(body string, header map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body, f.header = body, header
}

func (f *fixed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	f.mu.Lock()
	status, header, body := f.status, f.header, f.body
	f.mu.Unlock()
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

func serveFixed(t *testing.T, f *fixed) *Client {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
}

func TestAPIErrorShapes(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name        string
		f           *fixed
		chat        bool // send a turn (else read a conversation)
		wantMsg     string
		wantCode    string
		pred        func(error) bool
		wantHits    int32
		wantRetried time.Duration
	}
	run := func(t *testing.T, tc testCase) {
		c := serveFixed(t, tc.f)
		var err error
		if tc.chat {
			var ex *Exchange
			ex, err = c.SendTurn(context.Background(), "restaurant", "abc", ChatTurn{ClientEnv: "sandbox", Message: "hi"})
			// The failed turn still has a transcript entry.
			if ex == nil || ex.Status != tc.f.status || !strings.Contains(string(ex.Request), `"message":"hi"`) || len(ex.Response) == 0 || ex.Result != nil {
				t.Errorf("partial exchange %+v", ex)
			}
		} else {
			_, err = c.GetConversation(context.Background(), "restaurant", "abc")
		}
		var ae *APIError
		if !errors.As(err, &ae) {
			t.Fatalf("error %v (%T), want *APIError", err, err)
		}
		if err.Error() != tc.wantMsg {
			t.Errorf("Error() =\n%s\nwant\n%s", err.Error(), tc.wantMsg)
		}
		if ae.Code != tc.wantCode {
			t.Errorf("Code = %q, want %q", ae.Code, tc.wantCode)
		}
		if tc.pred != nil && !tc.pred(err) {
			t.Errorf("classification predicate is false for %v", err)
		}
		if got := tc.f.hits.Load(); got != tc.wantHits {
			t.Errorf("server saw %d requests, want %d", got, tc.wantHits)
		}
	}
	for _, tc := range []testCase{
		{
			name:     "debug chat not found",
			f:        &fixed{status: 404, body: `{"success":false,"error":"Not Found","error_id":"e1","error_code":"CONVERSATIONS_NOT_FOUND","error_message":"conversation abc does not exist","data":null}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 404 CONVERSATIONS_NOT_FOUND: conversation abc does not exist",
			wantCode: CodeConversationsNotFound, pred: IsNotFound, wantHits: 1,
		},
		{
			name:     "not found code under another status",
			f:        &fixed{status: 400, body: `{"success":false,"error_code":"CONVERSATIONS_NOT_FOUND","error":"no such conversation"}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 400 CONVERSATIONS_NOT_FOUND: no such conversation",
			wantCode: CodeConversationsNotFound, pred: IsNotFound, wantHits: 1,
		},
		{
			name:     "chat timeout as 408",
			f:        &fixed{status: 408, body: `{"success":false,"error_code":"CHAT_TIMEOUT","error_message":"the chat session exceeded the timeout limit"}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 408 CHAT_TIMEOUT: the chat session exceeded the timeout limit",
			wantCode: CodeChatTimeout, pred: func(err error) bool { return IsChatTimeout(err) && IsTransient(err) }, wantHits: 1,
		},
		{
			name:     "chat timeout inside a 200",
			f:        &fixed{status: 200, body: `{"success":false,"error_code":"CHAT_TIMEOUT","error":"timeout"}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 200 CHAT_TIMEOUT: timeout",
			wantCode: CodeChatTimeout, pred: IsChatTimeout, wantHits: 1,
		},
		{
			name:     "turn 500 is not re-sent",
			f:        &fixed{status: 500, body: `{"success":false,"error":"Internal Server Error","error_code":"INTERNAL","error_message":"boom"}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 500 INTERNAL: boom",
			wantCode: "INTERNAL", pred: IsTransient, wantHits: 1,
		},
		{
			name:    "proxy HTML 502 on a read is retried",
			f:       &fixed{status: 502, header: map[string]string{"Content-Type": "text/html"}, body: "<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>"},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 502: 502 Bad Gateway (gave up after 3 attempts)",
			pred:    IsTransient, wantHits: 3,
		},
		{
			name:    "empty 503",
			f:       &fixed{status: 503},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 503 Service Unavailable (gave up after 3 attempts)",
			pred:    IsTransient, wantHits: 3,
		},
		{
			name:    "conversations 401",
			f:       &fixed{status: 401, body: `{"error_message":"invalid api key"}`},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 401: invalid api key",
			pred:    IsAuth, wantHits: 1,
		},
		{
			name:    "conversations 403",
			f:       &fixed{status: 403, body: `{"error_message":"key lacks permission for project restaurant"}`},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 403: key lacks permission for project restaurant",
			pred:    IsAuth, wantHits: 1,
		},
		{
			name:    "plain text 404",
			f:       &fixed{status: 404, body: "404 page not found\n"},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 404: 404 page not found",
			pred:    IsNotFound, wantHits: 1,
		},
		{
			name:     "alerts shape",
			f:        &fixed{status: 400, body: `{"message":"validation failed","errors":[{"field":"threshold_value","message":"threshold must be a non-negative integer"}]}`},
			wantMsg:  "GET /v3/ws-abcd1234/restaurant/conversations/abc: 400: validation failed: threshold_value: threshold must be a non-negative integer",
			wantHits: 1,
		},
		{
			// An errors list of strings (or of another shape) must not
			// cost the body its code: read as plain text, a CHAT_TIMEOUT
			// would not be recognised.
			name:     "errors as strings",
			f:        &fixed{status: 408, body: `{"success":false,"error_code":"CHAT_TIMEOUT","error_message":"timed out","errors":["session idle","retry with a new one",7]}`},
			chat:     true,
			wantMsg:  "POST /v1/agents/restaurant/debug-chat/abc: 408 CHAT_TIMEOUT: timed out: session idle; retry with a new one",
			wantCode: CodeChatTimeout, pred: IsChatTimeout, wantHits: 1,
		},
		{
			// A platform served by FastAPI answers its own errors so,
			// whatever the reference shows.
			name:    "FastAPI detail",
			f:       &fixed{status: 404, body: `{"detail":"Conversation not found"}`},
			wantMsg: "GET /v3/ws-abcd1234/restaurant/conversations/abc: 404: Conversation not found",
			pred:    IsNotFound, wantHits: 1,
		},
		{
			name:     "FastAPI validation detail",
			f:        &fixed{status: 422, body: `{"detail":[{"type":"missing","loc":["body","clientEnv"],"msg":"Field required","input":{}},{"loc":["query","limit",0],"msg":"Input should be a valid integer"}]}`},
			wantMsg:  "GET /v3/ws-abcd1234/restaurant/conversations/abc: 422: body.clientEnv: Field required; query.limit.0: Input should be a valid integer",
			wantHits: 1,
		},
		{
			name:     "errors not a list",
			f:        &fixed{status: 422, body: `{"message":"invalid id","errors":{"id":"must match ^alr_"}}`},
			wantMsg:  "GET /v3/ws-abcd1234/restaurant/conversations/abc: 422: invalid id",
			wantHits: 1,
		},
		{
			name:     "nested error object",
			f:        &fixed{status: 400, body: `{"error":{"code":"BAD_CURSOR","message":"malformed cursor"}}`},
			wantMsg:  "GET /v3/ws-abcd1234/restaurant/conversations/abc: 400 BAD_CURSOR: malformed cursor",
			wantCode: "BAD_CURSOR", wantHits: 1,
		},
		{
			// A message and a code are printed on the console: an escape
			// sequence in them must not drive the terminal.
			name:     "escape sequences in a JSON error",
			f:        &fixed{status: 400, body: `{"error_code":"BAD\u001b[31m","error_message":"wiped\u001b[2J\u001b]0;owned\u0007 here"}`},
			wantMsg:  `GET /v3/ws-abcd1234/restaurant/conversations/abc: 400 BAD\x1b[31m: wiped\x1b[2J\x1b]0;owned\a here`,
			wantCode: `BAD\x1b[31m`, wantHits: 1,
		},
		{
			name:    "escape sequences in a text error",
			f:       &fixed{status: 404, body: "gone \x1b[2J\x1b[H\rPASS"},
			wantMsg: `GET /v3/ws-abcd1234/restaurant/conversations/abc: 404: gone \x1b[2J\x1b[H PASS`,
			pred:    IsNotFound, wantHits: 1,
		},
		{
			name:    "truncated JSON error body",
			f:       &fixed{status: 500, body: `{"error_message": "half`},
			wantMsg: `GET /v3/ws-abcd1234/restaurant/conversations/abc: 500: {"error_message": "half (gave up after 3 attempts)`,
			pred:    IsTransient, wantHits: 3,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestAPIErrorLongBodyIsBounded(t *testing.T) {
	t.Parallel()
	f := &fixed{status: 400, body: `{"error_message":"` + strings.Repeat("x ", 100000) + `"}`}
	c := serveFixed(t, f)
	_, err := c.GetConversation(context.Background(), "p", "c")
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v", err)
	}
	if len(ae.Message) > maxMessage+3 || len(ae.Body) > errorKeep {
		t.Errorf("message %d bytes, body %d bytes: not bounded", len(ae.Message), len(ae.Body))
	}
}

func TestPredicatesOnOtherErrors(t *testing.T) {
	t.Parallel()
	for _, err := range []error{nil, errors.New("x"), context.Canceled, &ResponseError{Err: errors.New("bad")}} {
		if IsChatTimeout(err) || IsNotFound(err) || IsRateLimited(err) || IsAuth(err) || IsTransient(err) {
			t.Errorf("%v: classified", err)
		}
	}
	ne := &NetworkError{Err: context.Canceled}
	if IsTransient(ne) {
		t.Error("a cancelled request is transient")
	}
	if !IsTransient(&NetworkError{Err: errors.New("EOF"), Sent: true}) {
		t.Error("a lost connection is not transient")
	}
}

func TestHTMLTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"<html><head><title>502 Bad Gateway</title></head></html>", "502 Bad Gateway"},
		{"<TITLE lang=en>\n Service Unavailable \n</Title>", "Service Unavailable"},
		{"<title>no end", ""},
		{"no title at all", ""},
		// Invalid UTF-8 before the title changes the length of a lowered
		// copy; the title must still be found in the original.
		{"<\xff<title>x</title>", "x"},
		{"<\xff<title>", ""},
	} {
		if got := htmlTitle(tc.in); got != tc.want {
			t.Errorf("htmlTitle(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
