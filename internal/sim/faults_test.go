package sim_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestInjectedLatency pins the waits the fault drills inject, as the
// server's Sleep sees them: Latency alone, Jitter alone (each request a
// different draw below it), and no wait at all without faults.
func TestInjectedLatency(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		faults sim.Faults
		check  func(t *testing.T, slept []time.Duration)
	}
	run := func(t *testing.T, tc testCase) {
		var mu sync.Mutex
		var slept []time.Duration
		_, c := startHelpdesk(t, sim.Options{Seed: 3, Faults: tc.faults, Sleep: func(_ context.Context, d time.Duration) {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
		}})
		for range 5 {
			if r := c.runtime("/conversations"); r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		tc.check(t, slept)
	}
	for _, tc := range []testCase{
		{"latency", sim.Faults{Latency: 2 * time.Second}, func(t *testing.T, slept []time.Duration) {
			if len(slept) != 5 || slept[0] != 2*time.Second || slept[4] != 2*time.Second {
				t.Errorf("slept %v, want 2s for each of 5 requests", slept)
			}
		}},
		{"jitter", sim.Faults{Jitter: 10 * time.Second}, func(t *testing.T, slept []time.Duration) {
			if len(slept) != 5 {
				t.Fatalf("slept %v, want one wait for each of 5 requests", slept)
			}
			for _, d := range slept {
				if d <= 0 || d >= 10*time.Second {
					t.Errorf("jitter wait %v outside (0, 10s)", d)
				}
			}
			if slept[0] == slept[1] && slept[1] == slept[2] {
				t.Errorf("slept %v: the jitter does not vary", slept)
			}
		}},
		{"none", sim.Faults{}, func(t *testing.T, slept []time.Duration) {
			if len(slept) != 0 {
				t.Errorf("slept %v without faults", slept)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestInjectedLatencyAbortedByTheClient pins that a request whose client
// goes away during the injected latency is not processed: it does not
// even take a token from its key's rate limit.
func TestInjectedLatencyAbortedByTheClient(t *testing.T) {
	t.Parallel()
	sleeping := make(chan struct{})
	var once sync.Once
	srv, err := sim.New(sim.Options{RatePerKey: 1, Faults: sim.Faults{Latency: time.Hour}, TickInterval: time.Hour,
		Sleep: func(ctx context.Context, _ time.Duration) {
			first := false
			once.Do(func() { first = true })
			if first { // the first request waits for its client to leave
				close(sleeping)
				<-ctx.Done()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(ctx context.Context, hs *httptest.Server) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v3/"+sim.DefaultAccountID+"/"+srv.Info().AgentIDs[0]+"/conversations", nil)
		req.Header.Set("x-api-key", sim.DefaultRuntimeKey)
		return http.DefaultClient.Do(req)
	}
	hs := httptest.NewServer(srv.RuntimeHandler())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-sleeping
		cancel()
	}()
	if resp, err := get(ctx, hs); !errors.Is(err, context.Canceled) {
		if err == nil {
			resp.Body.Close()
		}
		t.Fatalf("request: %v, want it cancelled", err)
	}
	hs.Close() // waits for the aborted request's handler to return
	hs = httptest.NewServer(srv.RuntimeHandler())
	defer hs.Close()
	resp, err := get(context.Background(), hs)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the next request: %d, want 200: the aborted one took the only token", resp.StatusCode)
	}
}

// TestInjectedFaultsAreIndependent pins that drop and 500 are separate
// draws: with both at one half, some requests are dropped and some of
// the rest answered 500. A shared draw would make every would-be 500 a
// drop.
func TestInjectedFaultsAreIndependent(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{Seed: 5, Faults: sim.Faults{Drop: 0.5, Error500: 0.5}})
	// No keep-alive: a dropped reused connection would be retried by the
	// transport, drawing twice for one request.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var dropped, failed, ok int
	for range 40 {
		req, _ := http.NewRequest("GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations", nil)
		req.Header.Set("x-api-key", s.RuntimeKey)
		resp, err := client.Do(req)
		if err != nil {
			dropped++
			continue
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case 500:
			failed++
		case 200:
			ok++
		}
	}
	if dropped == 0 || failed == 0 || ok == 0 {
		t.Errorf("%d dropped, %d answered 500, %d answered 200: want some of each", dropped, failed, ok)
	}
}

// TestRetryAfter pins Retry-After as whole seconds rounded up, as real
// servers send it: for injected 429s (a configured 1.5s is 2) and for the
// per-key token bucket, whose wait is the time until a whole token.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	t.Run("injected", func(t *testing.T) {
		_, c := startHelpdesk(t, sim.Options{Faults: sim.Faults{Error429: 1, RetryAfter: 1500 * time.Millisecond}})
		if r := c.runtime("/conversations"); r.status != 429 || r.header.Get("Retry-After") != "2" {
			t.Errorf("%d Retry-After=%q, want 429 and 2", r.status, r.header.Get("Retry-After"))
		}
	})
	t.Run("bucket", func(t *testing.T) {
		clk := fakeclock.New()
		_, c := startHelpdesk(t, sim.Options{Now: clk.Now, RatePerKey: 0.4})
		want := func(what string, status int, retryAfter string) {
			t.Helper()
			r := c.runtime("/conversations")
			if r.status != status || r.header.Get("Retry-After") != retryAfter {
				t.Errorf("%s: %d Retry-After=%q, want %d %q", what, r.status, r.header.Get("Retry-After"), status, retryAfter)
			}
		}
		want("the burst of one", 200, "")
		want("empty bucket: a token in 2.5s", 429, "3")
		clk.Advance(1500 * time.Millisecond)
		want("0.6 of a token: the rest in 1s", 429, "1")
		clk.Advance(time.Second)
		want("a whole token", 200, "")
	})
}

// TestRateLimitRefill pins the token bucket's refill: capped at the burst
// (max(1, rate)) however long the key was idle, and counted from the last
// request, not from the bucket's creation.
func TestRateLimitRefill(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	_, c := startHelpdesk(t, sim.Options{Now: clk.Now, RatePerKey: 2})
	statuses := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(http.StatusText(c.runtime("/conversations").status) + ";")
		}
		return b.String()
	}
	if got := statuses(1); got != "OK;" {
		t.Fatalf("first request: %s", got)
	}
	clk.Advance(time.Minute)
	if got, want := statuses(3), "OK;OK;Too Many Requests;"; got != want {
		t.Errorf("after a minute idle: %s, want a burst of 2", got)
	}
	clk.Advance(500 * time.Millisecond)
	if got, want := statuses(2), "OK;Too Many Requests;"; got != want {
		t.Errorf("half a second later: %s, want one token", got)
	}
	clk.Advance(500 * time.Millisecond)
	if got, want := statuses(2), "OK;Too Many Requests;"; got != want {
		t.Errorf("another half second later: %s, want one token", got)
	}
}

// TestRateLimitPerKey pins one bucket per API key, not per host: the
// scoped runtime key has a budget of its own beside the runtime key's.
func TestRateLimitPerKey(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, RatePerKey: 1})
	if r := c.runtime("/conversations"); r.status != 200 {
		t.Fatalf("runtime key: %d", r.status)
	}
	r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations", s.Info.ScopedRuntimeKey, nil)
	if r.status != 403 {
		t.Errorf("scoped runtime key: %d %s, want 403 from a budget of its own", r.status, r.body)
	}
}
