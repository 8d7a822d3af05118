package platform

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// TestIsUnreachable: a failure to connect at all (refused, no such host,
// a TLS handshake that fails) is unreachable and names the host; an HTTP
// answer, a connection lost after sending and a cancellation are not.
func TestIsUnreachable(t *testing.T) {
	t.Parallel()
	closed := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return "http://" + addr
	}
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
		c, err := New(Config{BuildURL: tc.url, BuildKey: "build-key-0123456789", AllowHTTP: true,
			Retry: RetryPolicy{MaxAttempts: 2, Sleep: fakeclock.New().Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.StartChat(tc.ctx(), "a1", ChatStart{ClientEnv: "sandbox"})
		if err == nil {
			t.Fatal("no error")
		}
		if got := IsUnreachable(err); got != tc.want {
			t.Errorf("IsUnreachable(%v) = %v, want %v", err, got, tc.want)
		}
		var ne *NetworkError
		var ae *APIError
		host := tc.url[len("http://"):]
		if u := tc.url; u[:5] == "https" {
			host = u[len("https://"):]
		}
		switch {
		case errors.As(err, &ne) && ne.Host != host:
			t.Errorf("NetworkError.Host = %q, want %q", ne.Host, host)
		case errors.As(err, &ae) && (ae.Host != host || ae.Credential != CredentialBuildKey):
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
