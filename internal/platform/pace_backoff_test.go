package platform

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// TestBurstOf429sWithoutRetryAfter: a platform that refuses without a
// Retry-After (the reference promises one, but a proxy or gateway in
// front of it may not send it) answers 429 to a whole window of requests
// at once. Each such 429 steps the key's backoff up, and the pause of the
// last one was uncapped: BaseDelay doubled per 429, past MaxDelay, to 29
// hours for the 21st, so every scenario of a run at --parallel 32 errored
// at once on a wait past its budget. The pause of a 429 without
// Retry-After is a backoff, capped by MaxDelay like any other.
func TestBurstOf429sWithoutRetryAfter(t *testing.T) {
	t.Parallel()
	const workers = startWindow
	clk := fakeclock.New()
	var (
		hits    atomic.Int32
		arrived sync.WaitGroup
	)
	arrived.Add(workers)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) <= workers {
			// The whole window is refused together.
			arrived.Done()
			arrived.Wait()
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"alerts":[]}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now,
		Retry: RetryPolicy{Sleep: clk.Sleep, Rand: func() float64 { return 0.5 }}})
	if err != nil {
		t.Fatal(err)
	}
	accts := make([]*RateAccount, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		accts[i] = NewRateAccount()
		wg.Go(func() {
			_, errs[i] = c.FiringAlerts(WithRateAccount(context.Background(), accts[i]))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i+1, err)
		}
	}
	// Every pause is a backoff: at most MaxDelay, however many 429s
	// came together.
	if took := clk.Now().Sub(fakeclock.Start); took > time.Duration(workers)*DefaultMaxDelay {
		t.Errorf("the run took %s on the clock for %d 429s without Retry-After", took, workers)
	}
	for i, a := range accts {
		if u := a.Usage(clk.Now()); u.Limited != 1 || u.Accepted != 1 {
			t.Errorf("worker %d: account %+v, want one 429 and one answer", i+1, u)
		}
	}
}

// TestBackoffGrowsWithThe429sInARow: a key refused again and again
// without Retry-After backs off further each time (half the retry
// policy's ceiling at least, which doubles per 429 in a row), as a
// platform that sends none expects of a client; an accepted answer
// starts the run of 429s again.
func TestBackoffGrowsWithThe429sInARow(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := hits.Add(1); n <= 3 || n == 5 {
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"alerts":[]}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now,
		Retry: RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second, Sleep: clk.Sleep, Rand: func() float64 { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	// 50ms, 100ms and 200ms for the first three; 50ms for the one after
	// an answer.
	for i, want := range []time.Duration{350 * time.Millisecond, 400 * time.Millisecond} {
		if _, err := c.FiringAlerts(context.Background()); err != nil {
			t.Fatal(err)
		}
		if took := clk.Now().Sub(fakeclock.Start); took != want {
			t.Errorf("call %d ended at %s, want %s", i+1, took, want)
		}
	}
}
