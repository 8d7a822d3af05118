package platform_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
)

// TestIsUnreachable: a failure to connect at all (refused, no such host,
// a TLS handshake that fails) is unreachable and names the host; an HTTP
// answer, a connection lost after sending and a cancellation are not.
func TestIsUnreachable(t *testing.T) {
	t.Parallel()
	// A platform that is down: its port stays taken while the test runs,
	// where a port merely freed could be given to another test's server
	// before the client dialled it, which answered instead of refusing.
	closed := func(t *testing.T) string { return "http://" + platformtest.ClosedAddr(t) }
	tlsOnly := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsOnly.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes fail on purpose
	tlsOnly.StartTLS()
	defer tlsOnly.Close()
	plainOnly := httptest.NewServer(http.NotFoundHandler())
	defer plainOnly.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer hangUp.Close()

	type testCase struct {
		name  string
		url   string
		ctx   func() context.Context
		want  bool
		check func(t *testing.T, err error)
	}
	background := context.Background
	cancelled := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	run := func(t *testing.T, tc testCase) {
		c, err := platform.New(platform.Config{BuildURL: tc.url, BuildKey: "build-key-0123456789", AllowHTTP: true,
			Retry: platform.RetryPolicy{MaxAttempts: 2, Sleep: fakeclock.New().Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.StartChat(tc.ctx(), "a1", platform.ChatStart{ClientEnv: "sandbox"})
		if err == nil {
			t.Fatal("no error")
		}
		if got := platform.IsUnreachable(err); got != tc.want {
			t.Errorf("IsUnreachable(%v) = %v, want %v", err, got, tc.want)
		}
		var ne *platform.NetworkError
		var ae *platform.APIError
		host := tc.url[len("http://"):]
		if u := tc.url; u[:5] == "https" {
			host = u[len("https://"):]
		}
		switch {
		case errors.As(err, &ne) && ne.Host != host:
			t.Errorf("NetworkError.Host = %q, want %q", ne.Host, host)
		case errors.As(err, &ae) && (ae.Host != host || ae.Credential != platform.CredentialBuildKey):
			t.Errorf("APIError host %q credential %q", ae.Host, ae.Credential)
		}
	}
	for _, tc := range []testCase{
		{name: "connection refused", url: closed(t), ctx: background, want: true},
		{name: "no such host", url: "http://agenttest-no-such-host.invalid", ctx: background, want: true},
		{name: "https to a plain HTTP server", url: "https://" + plainOnly.Listener.Addr().String(), ctx: background, want: true},
		{name: "certificate not trusted", url: tlsOnly.URL, ctx: background, want: true},
		{name: "an HTTP answer", url: plainOnly.URL, ctx: background, want: false},
		{name: "connection lost after sending", url: hangUp.URL, ctx: background, want: false},
		{name: "cancelled", url: closed(t), ctx: cancelled, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDialFailureIsRetriedEvenForTurns: a connection that is refused
// never reached the platform, so even a turn, which is not sent twice
// once it may have arrived, is tried again.
func TestDialFailureIsRetriedEvenForTurns(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var waits []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return ctx.Err()
	}
	c, err := platform.New(platform.Config{BuildURL: "http://" + platformtest.ClosedAddr(t), Retry: platform.RetryPolicy{MaxAttempts: 3, Sleep: sleep}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendTurn(context.Background(), "restaurant", "c1", platform.ChatTurn{ClientEnv: "sandbox"})
	mu.Lock()
	defer mu.Unlock()
	var ne *platform.NetworkError
	if !errors.As(err, &ne) || ne.Sent || ne.Attempts != 3 || len(waits) != 2 {
		t.Fatalf("err = %v (%+v), waits %v", err, ne, waits)
	}
	if !strings.HasPrefix(err.Error(), "POST /v1/agents/restaurant/debug-chat/c1: connection failed: ") || !strings.HasSuffix(err.Error(), "(gave up after 3 attempts)") {
		t.Errorf("message %q", err)
	}
}

// TestMessagingSocketUnreachable: a handshake whose connection is refused
// never reached the platform, as a refused HTTP request: the error says
// the connection failed, not that it was lost once sent, and is
// unreachable; one whose connection the platform drops once it has the
// request was sent, and is neither. Neither error repeats the handshake's
// URL, which holds the access token.
func TestMessagingSocketUnreachable(t *testing.T) {
	t.Parallel()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	t.Cleanup(hangUp.Close) // after the subtests
	for _, tc := range []struct {
		name   string
		socket string // host:port
		sent   bool
		want   string
	}{
		{name: "refused", socket: platformtest.ClosedAddr(t), want: ": WS /ws: connection failed: "},
		{name: "dropped once sent", socket: hangUp.Listener.Addr().String(), sent: true, want: ": WS /ws: connection lost after the request was sent: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := platformtest.StartMessaging(t, func(int, []byte) []platformtest.Frame { return nil })
			c, err := platform.New(platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingSocketURL: "ws://" + tc.socket + "/ws",
				MessagingHost: p.Host, ConnectorToken: "ct-unreachable-0123", AllowHTTP: true,
				Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.OpenMessaging(context.Background(), platform.MessagingStart{TurnTimeout: 5 * time.Second})
			if m != nil {
				m.Close()
			}
			var ne *platform.NetworkError
			if !errors.As(err, &ne) || ne.Sent != tc.sent || platform.IsUnreachable(err) == tc.sent || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (%+v): want %q, sent %t, unreachable %t", err, ne, tc.want, tc.sent, !tc.sent)
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				if s := e.Error(); strings.Contains(s, platformtest.MessagingJWT) || strings.Contains(s, "access_token") {
					t.Errorf("the handshake's URL shows: %s", s)
				}
			}
		})
	}
}
