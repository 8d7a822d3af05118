package platform

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	type testCase struct {
		in   string
		want time.Duration
	}
	run := func(t *testing.T, tc testCase) {
		if got := parseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"", 0},
		{"0", 0},
		{"3", 3 * time.Second},
		{" 7 ", 7 * time.Second},
		{"-4", 0},
		{"1.5", 1500 * time.Millisecond},
		{"999999999999", 24 * time.Hour},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{"Mon, 02 Mar 2026 12:00:30 GMT", 30 * time.Second},
		{"Monday, 02-Mar-26 12:00:10 GMT", 10 * time.Second}, // RFC 850
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},   // in the past
		{"soon", 0},
		{".5", 500 * time.Millisecond},
		{strings.Repeat("9", 400), 24 * time.Hour}, // past float64
		{"Fri, 31 Dec 9999 23:59:59 GMT", 24 * time.Hour},
		// What strconv takes besides decimal numbers is garbage here:
		// NaN was a negative wait of 292 years, Inf a day.
		{"NaN", 0},
		{"Inf", 0},
		{"+Inf", 0},
		{"infinity", 0},
		{"1e3", 0},
		{"0x1p4", 0},
		{"1_000", 0},
		{"+5", 0},
		{"-0.5", 0},
		{"1.2.3", 0},
		{".", 0},
		{"3, 4", 0},
		{"5s", 0},
	} {
		t.Run(tc.in, func(t *testing.T) { run(t, tc) })
	}
}

func TestBackoffBounds(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 0.5, 0.999999} {
		p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Rand: func() float64 { return f }}.withDefaults()
		for attempt := range 100 {
			ceiling := time.Second
			if attempt < 5 {
				ceiling = min(time.Second, 100*time.Millisecond<<max(attempt-1, 0))
			}
			got := p.Backoff(attempt)
			want := time.Duration(f * float64(ceiling))
			if got != want || got < 0 || got > time.Second {
				t.Fatalf("rand %v attempt %d: backoff %v, want %v", f, attempt, got, want)
			}
		}
	}
	// A broken source never yields a negative or excessive wait.
	p := RetryPolicy{Rand: func() float64 { return 7 }}.withDefaults()
	if got := p.Backoff(3); got != 0 {
		t.Errorf("out-of-range rand: backoff %v, want 0", got)
	}
}

func TestRetryPolicyValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p       RetryPolicy
		wantErr string
	}{
		{RetryPolicy{}, ""},
		{RetryPolicy{MaxAttempts: -1}, "retry attempts must not be negative"},
		{RetryPolicy{BaseDelay: -time.Second}, "retry delays must not be negative"},
		{RetryPolicy{BaseDelay: time.Minute, MaxDelay: time.Second}, "exceeds the max delay"},
	} {
		err := tc.p.validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("validate(%+v) = %v, want %q", tc.p, err, tc.wantErr)
		}
	}
}

// TestShouldRetry is the retry matrix: what each endpoint class does with
// each kind of failure.
func TestShouldRetry(t *testing.T) {
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{MaxAttempts: 3, Rand: func() float64 { return 0.5 }})
	turn := &call{ep: epChatTurn, path: "/t"}
	session := &call{ep: epChatStart, path: "/s"}
	customSession := &call{ep: epChatStart, path: "/s", noRetry5xx: true}
	read := &call{ep: epConv, path: "/r"}

	dial := c.networkError(turn, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false, 1)
	lost := c.networkError(turn, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, 1)
	api := func(status int, code string, ra time.Duration) error {
		return &APIError{Status: status, Code: code, RetryAfter: ra}
	}
	type testCase struct {
		name    string
		rq      *call
		err     error
		attempt int
		retry   bool
		wait    time.Duration // checked when non-zero
	}
	run := func(t *testing.T, tc testCase) {
		attempt := tc.attempt
		if attempt == 0 {
			attempt = 1
		}
		wait, retry := c.shouldRetry(context.Background(), tc.rq, tc.err, attempt)
		if retry != tc.retry {
			t.Fatalf("retry = %v, want %v", retry, tc.retry)
		}
		if tc.wait != 0 && wait != tc.wait {
			t.Errorf("wait = %v, want %v", wait, tc.wait)
		}
	}
	for _, tc := range []testCase{
		{name: "turn 500 is never re-sent", rq: turn, err: api(500, "", 0)},
		{name: "turn 502 is never re-sent", rq: turn, err: api(502, "", 0)},
		{name: "turn 429 is re-sent after Retry-After", rq: turn, err: api(429, "", 2*time.Second), retry: true, wait: 2*time.Second + 100*time.Millisecond},
		{name: "turn 429 without Retry-After backs off", rq: turn, err: api(429, "", 0), retry: true, wait: 100 * time.Millisecond},
		{name: "turn dial failure is re-sent", rq: turn, err: dial, retry: true},
		{name: "turn lost connection is not re-sent", rq: turn, err: lost},
		{name: "turn CHAT_TIMEOUT", rq: turn, err: api(408, CodeChatTimeout, 0)},
		{name: "turn CHAT_TIMEOUT as 500", rq: turn, err: api(500, CodeChatTimeout, 0)},
		{name: "turn not found", rq: turn, err: api(404, CodeConversationsNotFound, 0)},
		{name: "turn 400", rq: turn, err: api(400, "", 0)},
		{name: "session 500 is retried", rq: session, err: api(500, "", 0), retry: true},
		{name: "session with custom id 500 is not", rq: customSession, err: api(500, "", 0)},
		{name: "session lost connection is retried", rq: session, err: lost, retry: true},
		{name: "read 500 is retried", rq: read, err: api(500, "", 0), retry: true},
		{name: "read 503 honours Retry-After", rq: read, err: api(503, "", time.Second), retry: true, wait: time.Second + 100*time.Millisecond},
		{name: "read lost connection is retried", rq: read, err: lost, retry: true},
		{name: "read 401", rq: read, err: api(401, "", 0)},
		{name: "read 403", rq: read, err: api(403, "", 0)},
		{name: "read 404", rq: read, err: api(404, "", 0)},
		{name: "read CONVERSATIONS_NOT_FOUND as 500", rq: read, err: api(500, CodeConversationsNotFound, 0)},
		{name: "read CHAT_TIMEOUT as 503", rq: read, err: api(503, CodeChatTimeout, time.Second)},
		{name: "Retry-After beyond the cap ends retries", rq: read, err: api(429, "", time.Hour)},
		{name: "last attempt", rq: read, err: api(500, "", 0), attempt: 3},
		{name: "cancelled", rq: read, err: c.networkError(read, context.Canceled, false, 1)},
		{name: "response error", rq: read, err: &ResponseError{Err: errors.New("bad")}},
		{name: "other error", rq: read, err: fmt.Errorf("x")},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	t.Run("wait beyond the context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, retry := c.shouldRetry(ctx, read, api(429, "", 5*time.Second), 1); retry {
			t.Error("retried although the wait outlasts the deadline")
		}
	})
}

func TestNeverSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial", &net.OpError{Op: "dial", Err: errors.New("i/o timeout")}, true},
		{"refused", fmt.Errorf("x: %w", syscall.ECONNREFUSED), true},
		{"dns", &net.DNSError{Err: "no such host", Name: "nowhere.invalid"}, true},
		{"proxy", &net.OpError{Op: "proxyconnect", Err: syscall.ECONNRESET}, true},
		{"read reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, false},
		{"eof", errors.New("EOF"), false},
	} {
		if got := neverSent(tc.err); got != tc.want {
			t.Errorf("%s: neverSent = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// erredAsWanted checks err against want, a part of the error a test case
// expects ("" for none). It reports whether the case expected an error:
// its other checks then have nothing to check.
func erredAsWanted(t testing.TB, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

func newTestClient(t testing.TB, url string, p RetryPolicy) *Client {
	t.Helper()
	c, err := New(Config{BuildURL: url, RuntimeURL: url, AccountID: "ws-abcd1234", BuildKey: "bk-secret-build", RuntimeKey: "rk-secret-runtime", Retry: p})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
