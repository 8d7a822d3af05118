package platform_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
)

// Keys planted in the fuzzed client: distinctive, so that a piece of one
// in an error message cannot be a coincidence.
const (
	fuzzBuildKey   = "fzBUILDkey-9c41e7a2b5d8"
	fuzzRuntimeKey = "fzRUNTIMEkey-3b7f0d6e1a94"
	// fuzzMaxBody is the body limit of the fuzzed client, low so that
	// "huge body" inputs are cheap.
	fuzzMaxBody = 8 << 10
)

// cannedTransport answers every request with one fuzzed response, without
// a network: the client's whole decoding path runs, thousands of times a
// second.
type cannedTransport struct {
	status   int
	ctype    string
	body     []byte
	truncate bool
}

func (c *cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var body io.Reader = bytes.NewReader(c.body)
	if c.truncate {
		// The connection breaks after the bytes that arrived.
		body = io.MultiReader(body, errReader{io.ErrUnexpectedEOF})
	}
	h := http.Header{}
	if c.ctype != "" {
		h.Set("Content-Type", c.ctype)
	}
	return &http.Response{
		StatusCode: c.status, Status: strconv.Itoa(c.status) + " " + http.StatusText(c.status),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(body), ContentLength: -1, Request: req,
	}, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// fuzzCall is one client method, and the method and path its errors must
// name.
type fuzzCall struct {
	want string
	call func(ctx context.Context, c *platform.Client) (any, error)
}

var fuzzCalls = []fuzzCall{
	{"POST /v1/agents/agent-1/debug-chat", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.StartChat(ctx, "agent-1", platform.ChatStart{ClientEnv: "sandbox"})
	}},
	{"POST /v1/agents/agent-1/debug-chat/conv-1", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.SendTurn(ctx, "agent-1", "conv-1", platform.ChatTurn{ClientEnv: "sandbox", Message: "hi"})
	}},
	{"GET /v3/ws-abcd1234/agent-1/conversations/conv-1", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.GetConversation(ctx, "agent-1", "conv-1")
	}},
	{"GET /v3/ws-abcd1234/agent-1/conversations", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.ListConversations(ctx, "agent-1", platform.ListQuery{})
	}},
	{"GET /v1/ws-abcd1234/agent-1/handoff_state", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.HandoffState(ctx, "agent-1", "conv-1", "")
	}},
	{"GET /v1/alerts", func(ctx context.Context, c *platform.Client) (any, error) {
		return c.FiringAlerts(ctx)
	}},
}

// FuzzResponses feeds arbitrary answers (status, content type, body, a
// connection cut short, a body over the limit) to each client call:
// truncated JSON, wrong types, null where a string belongs, HTML error
// pages, keys echoed back. None may panic; every error names the method,
// the path and the status of the answer, and no error shows a key or a
// piece of one.
func FuzzResponses(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add(s.which, s.status, s.ctype, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, which uint8, status uint16, ctype string, body []byte) {
		fc := fuzzCalls[int(which)%len(fuzzCalls)]
		tr := &cannedTransport{status: 200 + int(status)%400, ctype: ctype, body: body, truncate: which&0x80 != 0}
		if which&0x40 != 0 {
			// A huge body: the answer repeated past the limit.
			tr.body = bytes.Repeat(append(body, ' '), fuzzMaxBody/(len(body)+1)+2)
		}
		c, err := platform.New(platform.Config{
			BuildURL: "https://build.test", RuntimeURL: "https://runtime.test", AccountID: "ws-abcd1234",
			BuildKey: fuzzBuildKey, RuntimeKey: fuzzRuntimeKey,
			HTTPClient: &http.Client{Transport: tr}, MaxBodyBytes: fuzzMaxBody,
			// No waiting on a 429: the canned answer would never change.
			Retry: platform.RetryPolicy{MaxAttempts: 1}, RateWait: -1,
			// A clock that stands still: the refused second try queues
			// behind the 429's pause for as long as the machine takes to
			// decide (a millisecond under load on the real clock), and
			// the message must say "waited 0s" whatever the load.
			Now: fakeclock.New().Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := fc.call(context.Background(), c)
		if err == nil {
			if res == nil {
				t.Fatalf("%s: no error and no result", fc.want)
			}
			return
		}
		msg := err.Error()
		if _, ok := errors.AsType[*platform.RateLimitError](err); ok {
			if !strings.HasPrefix(msg, "rate limited: waited 0s for "+fc.want+" (1 answer 429)") || tr.status != 429 {
				t.Fatalf("status %d: %s", tr.status, msg)
			}
			return
		}
		if !strings.HasPrefix(msg, fc.want+":") && !strings.HasPrefix(msg, fc.want+"?") {
			t.Fatalf("error does not start with the call %q: %s", fc.want, msg)
		}
		var ae *platform.APIError
		var re *platform.ResponseError
		if (errors.As(err, &ae) || errors.As(err, &re)) && !strings.Contains(msg, ": "+strconv.Itoa(tr.status)) {
			t.Fatalf("error does not give the status %d: %s", tr.status, msg)
		}
		for _, key := range []string{fuzzBuildKey, fuzzRuntimeKey} {
			if leaked := keyPiece(msg, key, tr.body); leaked != "" {
				t.Fatalf("error shows %q, a piece of a key: %s", leaked, msg)
			}
		}
	})
}

// keyPiece returns the longest start or end of key, 8 bytes or more, that
// text shows and that the body does not hold by itself outside whole keys,
// as sent or as printed. Printed: a byte that is not UTF-8 is shown \xNN
// (internal/escape), so a body with the key's "4" sent as the byte 0xb4
// shows "\xb41e7a…": "41e7a…" is then the server's own text, as it is
// when the server writes the "4" as the JSON escape \u0034. Redaction
// masks whole keys; what a server makes of one is its own disclosure.
func keyPiece(text, key string, body []byte) string {
	rest := strings.ReplaceAll(string(body), key, "")
	printed := escape.Line(rest)
	for n := len(key); n >= 8; n-- {
		for _, piece := range []string{key[:n], key[len(key)-n:]} {
			if strings.Contains(text, piece) && !strings.Contains(rest, piece) && !strings.Contains(printed, piece) {
				return piece
			}
		}
	}
	return ""
}

// responseSeeds are the bad answers of the catalogue in docs/reliability.md,
// and good ones for the fuzzer to start from.
var responseSeeds = []struct {
	which  uint8
	status uint16
	ctype  string
	body   string
}{
	{0, 0, "application/json", `{"conversationId":"c1","response":"Hi","metadata":{"nodeTrace":["Greeting"]},"conversationEnded":false,"delayedResponse":false}`},
	{1, 0, "application/json", `{"conversationId":"c1","response":"Hi","metad`},
	{1, 0, "application/json", `{"conversationId":"c1","response":null,"metadata":{}}`},
	{1, 0, "application/json", `{"conversationId":17,"response":"Hi","metadata":[]}`},
	{0, 0, "application/json", `[]`},
	{0, 0, "text/html", `<html><title>Gateway</title></html>`},
	{0x80 | 1, 0, "application/json", `{"conversationId":"c1","response":"Hi"`},
	{0x40, 0, "application/json", `{"conversationId":"c1","response":"`},
	{1, 208, "application/json", `{"success":false,"error_code":"CHAT_TIMEOUT","error_message":"timed out"}`},
	{1, 300, "application/json", `{"error_message":"boom"}`},
	{0, 229, "application/json", `{"message":"slow down"}`},
	{2, 304, "application/json", `{"error_message":"conversation not found"}`},
	{0, 301, "application/json", `{"error_message":"bad key ` + fuzzBuildKey + `"}`},
	{0, 300, "text/plain", strings.Repeat("x", 290) + fuzzBuildKey + " echoed"},
	{3, 0, "application/json", `{"conversations":[{"id":"c1","account_id":"a","project_id":"p","environment":"live","started_at":"2026-01-01T00:00:00Z","channel":"WEBCHAT","in_progress":false,"turns":[]}],"cursor":null}`},
	{3, 0, "application/json", `{"conversations":null}`},
	{3, 0, "application/json", `{"conversations":[{"id":null}]}`},
	{2, 0, "application/json", `{"id":"c1","started_at":"yesterday"}`},
	{4, 0, "application/json", `{"id":"c1","data":"not an object"}`},
	{5, 0, "application/json", `{"alerts":"none"}`},
}
