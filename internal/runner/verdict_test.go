package runner

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestRunFailureOutlivesLaterErrors: an attempt that failed an
// expectation, retried, then errored on every later attempt, leaves the
// case failed: the errors learnt nothing about the agent, and reading
// the verdict off the last attempt would turn a real failure into an
// error (exit 4, not 1).
func TestRunFailureOutlivesLaterErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	// Session 1 greets rudely (the greeting check fails before any
	// turn); the later sessions greet well, and every turn gets a 500.
	e.proxy.onResponse(func(kind string, n int64, body []byte) []byte {
		if kind == "start" && n == 1 {
			return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
		}
		return body
	})
	e.proxy.onRequest(func(kind string, _ int64, _ *http.Request, w http.ResponseWriter) bool {
		return kind == "turn" && fail500(w)
	})
	opts := e.opts()
	opts.Retries = 2
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	var got []string
	for _, a := range c.Attempts {
		got = append(got, a.Status.String())
	}
	if c.Status != result.Failed || strings.Join(got, " ") != "failed errored errored" {
		t.Fatalf("case %s after attempts %v, want failed after failed errored errored%s", c.Status, got, describe(c))
	}
	if st := res.RunStatus(); st != result.RunFailed {
		t.Errorf("run %s, want failed", st)
	}
}

// TestBackoff: the pause after the n-th errored attempt doubles from the
// base, is capped, and is jittered by at most a quarter either way.
func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		base   time.Duration
		n      int
		centre time.Duration
	}{
		{0, 0, 0},
		{-1, 3, 0},
		{time.Second, 0, time.Second},
		{time.Second, 2, 4 * time.Second},
		{time.Second, 3, maxRetryDelay},
		{time.Second, 40, maxRetryDelay},
		// Doubling past what a Duration holds wraps to a negative one.
		{time.Duration(1) << 60, 10, maxRetryDelay},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		lo, hi := tc.centre, tc.centre
		for range 200 {
			d := backoff(tc.base, tc.n, rng)
			lo, hi = min(lo, d), max(hi, d)
		}
		// 200 draws spread over most of the ±25% band.
		if lo < tc.centre-tc.centre/4 || hi > tc.centre+tc.centre/4 || tc.centre > 0 && (lo > tc.centre-tc.centre/5 || hi < tc.centre+tc.centre/5) {
			t.Errorf("backoff(%s, %d) in [%s, %s], want %s ± 25%%", tc.base, tc.n, lo, hi, tc.centre)
		}
	}
}

// TestRunRetryBacksOff: a retry after an errored attempt waits the
// backoff (on the run's Sleep), and the case still ends flaky.
func TestRunRetryBacksOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
		return kind == "turn" && n == 1 && fail500(w)
	})
	var (
		mu     sync.Mutex
		slept  []time.Duration
		opts   = e.opts()
		jitter = time.Second / 4
	)
	opts.Retries, opts.RetryDelay = 1, time.Second
	opts.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
		return ctx.Err()
	}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Files[0].Cases[0]; c.Status != result.Flaky || len(c.Attempts) != 2 {
		t.Fatalf("case %s after %d attempts, want flaky after 2%s", c.Status, len(c.Attempts), describe(c))
	}
	if len(slept) != 1 || slept[0] < time.Second-jitter || slept[0] > time.Second+jitter {
		t.Errorf("slept %v, want one pause of 1s ± 25%%", slept)
	}
}
