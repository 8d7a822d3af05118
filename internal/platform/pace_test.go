package platform

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

func TestRateCapPacesBeforeAny429(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := startCounted(t, sim.Options{Seed: 3})
	c, err := New(Config{BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now,
		Retry: RetryPolicy{Sleep: clk.Sleep}, Rate: 5})
	if err != nil {
		t.Fatal(err)
	}
	ctx, acct := context.Background(), NewRateAccount()
	ctx = WithRateAccount(ctx, acct)
	for range 20 {
		if _, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
			t.Fatal(err)
		}
	}
	// A second of burst, then one request every 200 ms.
	u := acct.Usage(clk.Now())
	if took := clk.Now().Sub(fakeclock.Start); took < 3*time.Second || took > 3*time.Second+time.Millisecond {
		t.Errorf("20 requests at --rate 5 took %s, want 3s", took)
	}
	if u.Limited != 0 || u.Accepted != 20 || u.Waited != clk.Now().Sub(fakeclock.Start) {
		t.Errorf("account %+v", u)
	}
}

func TestRetryAfterDatePausesTheKey(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", clk.Now().Add(2*time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"conversationId":"c1","userInput":"","response":"hi","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now, Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := c.StartChat(context.Background(), "a", ChatStart{ClientEnv: "sandbox"})
	if err != nil || ex.Attempts != 1 {
		t.Fatalf("err = %v, exchange %+v: a 429 is not an attempt", err, ex)
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited != 2*time.Second || hits.Load() != 2 {
		t.Errorf("waited %s for an HTTP-date 2s ahead, %d requests", waited, hits.Load())
	}
}
