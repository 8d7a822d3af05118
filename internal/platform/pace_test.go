package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
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
	// A deadline far off (on the real clock) leaves the waits alone.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	acct := NewRateAccount()
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
	// A request sent half of the way to the next token waits only for
	// the rest of it.
	clk.Advance(100 * time.Millisecond)
	if _, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
		t.Fatal(err)
	}
	if took := clk.Now().Sub(fakeclock.Start); took != 3200*time.Millisecond {
		t.Errorf("the 21st request, sent at 3.1s, went at %s, want 3.2s", took)
	}
}

// TestRetryAfterDatePausesTheKey: a 429 whose Retry-After is an HTTP-date
// 2s after the answer's Date pauses the key 2s, however far the server's
// clock is from the client's: both dates are the server's. Without a Date
// the client's clock is all there is.
func TestRetryAfterDatePausesTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		skew   time.Duration // the server's clock less the client's
		noDate bool
	}{
		{name: "same clock"},
		{name: "server an hour ahead", skew: time.Hour},
		{name: "server an hour behind", skew: -time.Hour},
		{name: "server 30s behind", skew: -30 * time.Second},
		{name: "no Date", noDate: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New()
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served := clk.Now().Add(tc.skew).UTC()
				if tc.noDate {
					w.Header()["Date"] = nil // net/http would add its own
				} else {
					w.Header().Set("Date", served.Format(http.TimeFormat))
				}
				if hits.Add(1) == 1 {
					w.Header().Set("Retry-After", served.Add(2*time.Second).Format(http.TimeFormat))
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
				t.Errorf("waited %s for an HTTP-date 2s after the answer, %d requests", waited, hits.Load())
			}
		})
	}
}

// TestCallTokenIsPacedApart: outbound calling has a limit of its own
// (the reference's Limits: "per account configuration"), so its 429
// pauses outbound calling alone, not the runtime key's Conversations
// reads, whichever credential it sends: the call token, or the runtime
// key when there is none (before, the pause held both then, and a 429 of
// a calls-per-minute limit paused every confirmation read of a run for
// its Retry-After); nor does the key's 429 pause outbound calling. SMS,
// limited per project, is paced apart from the key it sends. A
// Retry-After of 30s is past the wait budget of 1s: a call paused by it
// errors at once, and a call held by that pause would too.
func TestCallTokenIsPacedApart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		callToken string
		refused   string // the path prefix answered 429
		sms       bool   // the refused call is an SMS, not a call's status
	}{
		{name: "call token", callToken: "ct-secret-calling", refused: "/v1/outbound-"},
		{name: "SMS", refused: "/v1/outbound-", sms: true},
		{name: "runtime key", refused: "/v1/outbound-"},
		{name: "call token is the runtime key", callToken: redirectRuntimeKey, refused: "/v1/outbound-"},
		{name: "runtime key refused", refused: "/v3/"},
		{name: "runtime key refused, call token", callToken: "ct-secret-calling", refused: "/v3/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New()
			var refusals atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case strings.HasPrefix(r.URL.Path, tc.refused):
					refusals.Add(1)
					w.Header().Set("Retry-After", "30")
					w.WriteHeader(http.StatusTooManyRequests)
				case strings.HasPrefix(r.URL.Path, "/v1/outbound-calling/"):
					_, _ = w.Write([]byte(`{"call_sid":"CA1","status":"success"}`))
				default:
					_, _ = w.Write([]byte(`{"id":"c1","account_id":"ws-abcd1234","project_id":"a1","variant_id":"","variant_name":"","environment":"sandbox","started_at":"2026-03-01T12:00:00Z","channel":"VOICE","from_number":"","to_number":"","in_progress":false,"num_turns":0,"total_duration":0,"vendor_duration":0,"handoff":false,"handoff_reason":"","num_silences":0,"num_ood":0,"metrics":{},"state":{},"turns":[]}`))
				}
			}))
			t.Cleanup(srv.Close)
			c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234",
				BuildKey: redirectBuildKey, RuntimeKey: redirectRuntimeKey, CallToken: tc.callToken,
				Now: clk.Now, RateWait: time.Second, Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := WithRateAccount(context.Background(), NewRateAccount())
			status := func() error { _, err := c.CallStatus(ctx, "CA1"); return err }
			read := func() error { _, err := c.GetConversation(ctx, "a1", "c1"); return err }
			refused, other := status, read
			switch {
			case tc.sms:
				refused = func() error {
					_, err := c.SendSMS(ctx, SMSRequest{To: "+447700900002", Message: "Reply YES to confirm", ConnectorID: "conn-1"})
					return err
				}
			case tc.refused == "/v3/":
				refused, other = read, status
			}
			if err := refused(); !IsRateLimited(err) {
				t.Fatalf("refused call: err = %v, want the 429 past the wait budget", err)
			}
			if err := other(); err != nil {
				t.Errorf("the other limit's call: err = %v, want it not held by the refused call's pause", err)
			}
			// The refused limit's next call is held by its pause, without
			// a request: its calls share a pacer. An SMS's pacer is its
			// own, so the next SMS is sent, and refused again.
			if err := refused(); !IsRateLimited(err) {
				t.Errorf("the refused limit's next call: err = %v, want it held by the pause", err)
			}
			want := int32(1)
			if tc.sms {
				want = 2
			}
			if n := refusals.Load(); n != want {
				t.Errorf("the platform refused %d requests, want %d", n, want)
			}
			if waited := clk.Now().Sub(fakeclock.Start); waited != 0 {
				t.Errorf("waited %s, want no wait", waited)
			}
		})
	}
}

// TestRetryAfterForms: a 429 or a 503 of a read, then a success, with
// Retry-After in every form a server sends. A valid one is waited out on
// the client's clock (a date counted from the answer's Date); garbage is ignored (a backoff, under a second); a
// wait past what the client accepts fails the call at once.
func TestRetryAfterForms(t *testing.T) {
	t.Parallel()
	type testCase struct {
		status int
		after  string
		// wait is the time the call took on the fake clock; -1 is a
		// backoff (under a second).
		wait time.Duration
		// fails: the call ends at once, on the first answer.
		fails bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		clk := fakeclock.New()
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The server runs on the test's clock, as its dates do.
			w.Header().Set("Date", clk.Now().UTC().Format(http.TimeFormat))
			if hits.Add(1) == 1 {
				w.Header().Set("Retry-After", tc.after)
				w.WriteHeader(tc.status)
				return
			}
			_, _ = w.Write([]byte(`{"alerts":[]}`))
		}))
		t.Cleanup(srv.Close)
		c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now,
			Retry: RetryPolicy{MaxAttempts: 2, Sleep: clk.Sleep, Rand: func() float64 { return 0 }}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.FiringAlerts(context.Background())
		waited := clk.Now().Sub(fakeclock.Start)
		switch {
		case tc.fails:
			// A 429's is a RateLimitError: the wait is past the budget.
			if err == nil || !strings.Contains(err.Error(), "GET /v1/alerts") || IsRateLimited(err) != (tc.status == 429) || waited != 0 {
				t.Fatalf("err = %v after %s, want the %d at once", err, waited, tc.status)
			}
			// A 503's says why it was not retried: it said only "503
			// Service Unavailable".
			if want := "GET /v1/alerts: 503 Service Unavailable (not retried: its Retry-After of 24h0m0s is past the 1m0s the client waits to retry)"; tc.status == 503 && err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
		case err != nil:
			t.Fatalf("err = %v after %s", err, waited)
		case tc.wait < 0:
			if waited >= time.Second {
				t.Errorf("waited %s, want a backoff under a second", waited)
			}
		case waited != tc.wait:
			t.Errorf("waited %s, want %s", waited, tc.wait)
		}
	}
	date := func(d time.Duration) string { return fakeclock.Start.Add(d).UTC().Format(http.TimeFormat) }
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, tc := range []testCase{
			{after: "2", wait: 2 * time.Second},
			{after: "1.5", wait: 1500 * time.Millisecond},
			{after: date(3 * time.Second), wait: 3 * time.Second},
			{after: "", wait: -1},
			{after: "-1", wait: -1},
			{after: "0", wait: -1},
			{after: "soon", wait: -1},
			{after: "NaN", wait: -1},
			{after: "Inf", wait: -1},
			{after: "1e3", wait: -1},
			{after: date(-time.Hour), wait: -1},
			{after: "86400", fails: true},
			{after: "Fri, 31 Dec 9999 23:59:59 GMT", fails: true},
		} {
			tc.status = status
			t.Run(strconv.Itoa(status)+"/"+tc.after, func(t *testing.T) { run(t, tc) })
		}
	}
}

// TestTinyRateErrorsAtOnce: a --rate too small to wait for errors the
// call at once with the wait budget's message, having slept not at all.
func TestTinyRateErrorsAtOnce(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{1e-10, 1e-300, 0.0001} {
		t.Run(strconv.FormatFloat(rate, 'g', -1, 64), func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New()
			var sleeps atomic.Int64
			sleep := func(ctx context.Context, d time.Duration) error {
				if sleeps.Add(1) > 100 {
					return fmt.Errorf("still waiting after 100 sleeps, the last of %s", d) // spinning
				}
				return clk.Sleep(ctx, d)
			}
			s := startCounted(t, sim.Options{Seed: 3})
			c, err := New(Config{BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now,
				Retry: RetryPolicy{Sleep: sleep}, Rate: rate, RateWait: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			ctx := WithRateAccount(context.Background(), NewRateAccount())
			// The bucket holds one request: the first goes at once.
			if _, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
				t.Fatal(err)
			}
			_, err = c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"})
			if err == nil || !IsRateLimited(err) || !strings.Contains(err.Error(), "budget") {
				t.Fatalf("err = %v, want the wait budget's error", err)
			}
			if n := sleeps.Load(); n != 0 || clk.Now() != fakeclock.Start {
				t.Errorf("slept %d times, %s in all, want an error before any wait", n, clk.Now().Sub(fakeclock.Start))
			}
		})
	}
}

// TestSpentBucketIsPacedAtThePlatformsRate: a run whose key's bucket is
// empty from its first request (the job before on the same key spent it)
// pauses for the first 429's Retry-After, then learns the platform's rate
// from what it accepts. The first 429 taught no rate, and taking it for
// one made the pacer go at its slowest (one request every ten seconds)
// and climb back for most of a minute: 200 requests at 20 a second took
// 52s, not 10.5s.
func TestSpentBucketIsPacedAtThePlatformsRate(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := startCounted(t, sim.Options{Seed: 3, Now: clk.Now, RatePerKey: 20})
	other, err := New(Config{BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now, Retry: RetryPolicy{Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // the job before spends the key's burst
		if _, err := other.StartChat(context.Background(), "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(Config{BuildURL: s.info.BuildURL, BuildKey: s.info.BuildKey, Now: clk.Now, Retry: RetryPolicy{Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	acct := NewRateAccount()
	ctx := WithRateAccount(context.Background(), acct)
	const n = 200
	for i := range n {
		if _, err := c.StartChat(ctx, "restaurant", ChatStart{ClientEnv: "sandbox"}); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	// A second's pause, a burst of 20, then 20 a second: 10s for 200,
	// give or take the 429 that ends the burst and the rate's probing.
	took := clk.Now().Sub(fakeclock.Start)
	u := acct.Usage(clk.Now())
	t.Logf("%d requests in %s, %d answers 429", n, took, u.Limited)
	if took > 11*time.Second || u.Limited > 4 {
		t.Errorf("%d requests against a spent bucket of 20 a second took %s with %d answers 429; want at most 11s and 4", n, took, u.Limited)
	}
}

// TestPacerServesItsQueueInOrder: a request that comes while others wait
// their turn at the key's pace waits behind them, even when a token is
// there for it: the first in line, asleep until that token, would wake to
// find it taken and sleep again, for as long as newcomers kept coming,
// until its case's wait budget errored it. One that gives up its place
// (its case cancelled) leaves the line: the turn passed to it was never
// passed on, and every request behind it waited for ever.
func TestPacerServesItsQueueInOrder(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	asleep, wake := make(chan time.Duration), make(chan struct{})
	sleep := func(ctx context.Context, d time.Duration) error {
		asleep <- d
		<-wake
		return nil
	}
	p := newPacer(1)
	acct := NewRateAccount()
	acct.setLimit(time.Hour)
	wait := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := p.wait(ctx, acct, clk.Now, sleep)
			done <- err
		}()
		return done
	}
	queued := func(n int, done ...<-chan error) {
		t.Helper()
		for in := false; !in; runtime.Gosched() {
			for _, d := range done {
				select {
				case err := <-d:
					t.Fatalf("a request that came while another waited went first (err %v)", err)
				default:
				}
			}
			p.mu.Lock()
			in = len(p.queue) == n
			p.mu.Unlock()
		}
	}
	if err := <-wait(context.Background()); err != nil { // the bucket's one token
		t.Fatal(err)
	}
	first := wait(context.Background())
	if d := <-asleep; d != time.Second {
		t.Fatalf("the first in line sleeps %s, want 1s", d)
	}
	clk.Advance(time.Second) // the next token is there
	ctx, giveUp := context.WithCancel(context.Background())
	gone := wait(ctx)
	queued(2, gone)
	second := wait(context.Background())
	queued(3, gone, second)
	giveUp()
	if err := <-gone; err != context.Canceled {
		t.Fatalf("the request that gave up: err = %v", err)
	}
	p.mu.Lock()
	n := len(p.queue)
	p.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d in line after one of three gave up, want 2", n)
	}
	wake <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if d := <-asleep; d != time.Second {
		t.Fatalf("the second in line sleeps %s, want 1s", d)
	}
	clk.Advance(time.Second)
	wake <- struct{}{}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
}

// TestPacerWaitsForTheWindowAsleep: the first in line behind a full
// window waits for a request in flight to end, without sleeping: a
// window waits for no time, and sleeping for none in a loop kept a core
// busy for as long as the window stayed full.
func TestPacerWaitsForTheWindowAsleep(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var sleeps atomic.Int32
	sleep := func(ctx context.Context, d time.Duration) error {
		sleeps.Add(1)
		return clk.Sleep(ctx, d)
	}
	p := newPacer(0)
	inFlight := admit(t, p, clk.Now(), startWindow)
	acct := NewRateAccount()
	acct.setLimit(time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := p.wait(context.Background(), acct, clk.Now, sleep)
		done <- err
	}()
	for waiting := false; !waiting && sleeps.Load() == 0; runtime.Gosched() {
		p.mu.Lock()
		waiting = p.freed != nil
		p.mu.Unlock()
	}
	p.done(clk.Now(), &call{}, inFlight[0], true, false, 0)
	if err := <-done; err != nil || sleeps.Load() != 0 {
		t.Errorf("err = %v after %d sleeps, want the request admitted without any", err, sleeps.Load())
	}
}

// TestPaceServesASleepThatReturnsEarly: a Sleep that returns before its
// time (a test's recorder, a capped pause) still serves the pause it was
// asked for: the pacer's clock moves on by it, where it waited the rest
// out again and again, in real time or, on a clock that does not move,
// for ever.
func TestPaceServesASleepThatReturnsEarly(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New() // never moved: the sleep returns at once
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"alerts":[]}`))
	}))
	t.Cleanup(srv.Close)
	var slept []time.Duration
	sleep := func(ctx context.Context, d time.Duration) error {
		if slept = append(slept, d); len(slept) > 10 {
			return fmt.Errorf("still waiting after %v", slept)
		}
		return ctx.Err()
	}
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now, Retry: RetryPolicy{Sleep: sleep}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.FiringAlerts(context.Background()); err != nil || len(slept) != 1 || slept[0] != time.Second {
		t.Errorf("err = %v after sleeps %v, want one of 1s", err, slept)
	}
}

// TestHeldCallNamesThe429: a call held back by the pause of another
// call's 429 with the same key, past its scenario's wait budget, errors
// naming the status and the call the platform answered it to: its own
// scenario received no 429 and, without them, the error named no answer
// of the platform at all ("rate limited: waited 0s for POST ...; the next
// try could go in 30s"). A scenario that received the 429 itself counts
// it, as before.
func TestHeldCallNamesThe429(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var chats atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/deployments/") {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		chats.Add(1)
		_, _ = w.Write([]byte(`{"conversationId":"c1","userInput":"","response":"hi","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now, RateWait: time.Second,
		Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	const refused = "GET /v1/agents/a1/deployments/active"
	_, err = c.ActiveDeployment(WithRateAccount(context.Background(), NewRateAccount()), "a1", "sandbox")
	if want := "rate limited: waited 0s for " + refused + " (1 answer 429); the next try could go in 30s"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("the refused call: err = %v, want %q", err, want)
	}
	_, err = c.StartChat(WithRateAccount(context.Background(), NewRateAccount()), "a1", ChatStart{ClientEnv: "sandbox"})
	want := "rate limited: waited 0s for POST /v1/agents/a1/debug-chat (none of this scenario's calls was answered 429: the platform answered 429 to " +
		refused + ", sent with the same key, and every call of the key waits as it asked); the next try could go in 30s, past the wait budget of 1s per scenario"
	if err == nil || err.Error() != want {
		t.Errorf("the held call: err = %v\nwant %s", err, want)
	}
	if n := chats.Load(); n != 0 {
		t.Errorf("%d chats sent during the pause, want none", n)
	}
}

// TestSelfPacedWaitSaysNo429: a call that the rate set for the key (and
// no 429: the platform refused nothing) would hold past the wait budget
// errors saying so, and SelfPaced tells it from a wait the platform asked
// for: it read as the platform's rate limit, and the case errored as the
// platform's fault.
func TestSelfPacedWaitSaysNo429(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"conversationId":"c1","userInput":"","response":"hi","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		rate float64
		unit string
	}{{1, "1 request"}, {0.01, "0.01 requests"}} {
		c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now, Rate: tc.rate, RateWait: 500 * time.Millisecond,
			Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		// The bucket holds one request: the first goes at once.
		if _, err := c.StartChat(WithRateAccount(context.Background(), NewRateAccount()), "a1", ChatStart{ClientEnv: "sandbox"}); err != nil {
			t.Fatal(err)
		}
		_, err = c.StartChat(WithRateAccount(context.Background(), NewRateAccount()), "a1", ChatStart{ClientEnv: "sandbox"})
		want := "rate limited: waited 0s for POST /v1/agents/a1/debug-chat (the platform answered no 429: the wait is the pace of the rate set for the key, " +
			tc.unit + " per second); the next try could go in "
		rl, ok := errors.AsType[*RateLimitError](err)
		if !ok || !rl.SelfPaced() || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("rate %g: err = %v, want a self-paced wait: %q", tc.rate, err, want)
		}
	}
	// A wait the platform asked for is not self-paced, the rate set or
	// not (TestHeldCallNamesThe429 for the key's 429).
	if (&RateLimitError{Limited: 1, Rate: 0}).SelfPaced() {
		t.Error("a wait after a 429 is self-paced")
	}
}

// TestHeldPastTheDeadline: a call held by the key's pause past its own
// deadline (the turn timeout), though within the wait budget, errors at
// once naming the deadline, and the 429 behind the pause.
func TestHeldPastTheDeadline(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7200")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", Now: clk.Now, RateWait: 3 * time.Hour,
		Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	call := func() error {
		ctx, cancel := context.WithTimeout(WithRateAccount(context.Background(), NewRateAccount()), time.Hour)
		defer cancel()
		_, err := c.StartChat(ctx, "a1", ChatStart{ClientEnv: "sandbox"})
		return err
	}
	// The first meets the 429 itself: its pause outlasts the deadline.
	if err := call(); !IsRateLimited(err) {
		t.Fatalf("the refused call: err = %v, want its 429", err)
	}
	want := "rate limited: waited 0s for POST /v1/agents/a1/debug-chat (none of this scenario's calls was answered 429: the platform answered 429 to POST /v1/agents/a1/debug-chat, " +
		"sent with the same key, and every call of the key waits as it asked); the next try could go in 2h0m0s, past the call's deadline"
	if err := call(); err == nil || err.Error() != want {
		t.Errorf("the held call: err = %v\nwant %s", err, want)
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited != 0 {
		t.Errorf("waited %s, want no wait", waited)
	}
}
