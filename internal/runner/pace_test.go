package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestRunPacingSumsWhatRateLimitsCost: the run's pacing (the summary's
// "paced at" line, run.pacing in the JSON) is the sum of the cases'
// accounts and of the run's own calls (Options.Setup, the deployment
// reads before and after the cases), and is there whenever a request was
// refused or a case waited, each alone: a run paced by --rate alone
// meets no 429, and one whose only 429 was the command's own call before
// the cases waits in no case.
func TestRunPacingSumsWhatRateLimitsCost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// rate is the client's --rate; refuse is the kind of request
		// ("start", "turn") whose first is refused with Retry-After 1s;
		// setup makes a call before the run, as Options.Setup.
		rate   float64
		refuse string
		setup  bool
	}{
		{name: "unlimited"},
		{name: "paced by --rate", rate: 1},
		{name: "a 429 in a case", refuse: "turn"},
		{name: "a 429 before the cases", refuse: "start", setup: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Options{Seed: 1})
			e.proxy.refuse(func(kind string, n int64) string {
				if kind != tc.refuse || n != 1 {
					return ""
				}
				return "1"
			})
			clk := fakeclock.New()
			c, err := platform.New(platform.Config{BuildURL: e.proxy.URL, BuildKey: e.sim.BuildKey, Now: clk.Now,
				Retry: platform.RetryPolicy{Sleep: clk.Sleep}, Rate: tc.rate})
			if err != nil {
				t.Fatal(err)
			}
			opts := e.opts()
			opts.Channel, opts.Now, opts.Parallel = DebugChat(c), clk.Now, 1
			var setup platform.RateUsage
			reads := 0
			if tc.setup {
				// One agent in one environment: read before and after.
				opts.Deployments, reads = c, 2
				opts.Setup = platform.NewRateAccount()
				if _, err := c.StartChat(platform.WithRateAccount(context.Background(), opts.Setup), e.restaurant, platform.ChatStart{ClientEnv: "sandbox"}); err != nil {
					t.Fatal(err)
				}
				setup = opts.Setup.Usage(clk.Now())
				if setup.Limited != 1 || setup.Accepted != 1 {
					t.Fatalf("setup account %+v, want one 429 and one answer", setup)
				}
			}
			long, short := booking("long", 10), booking("short", 20)
			keepTurns(long, 3)
			keepTurns(short, 1)
			res, err := Run(context.Background(), []*scenario.Suite{suite(file, long, short)}, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := result.Pacing{Limited: setup.Limited}
			for _, cs := range res.Files[0].Cases {
				if cs.Status != result.Passed {
					t.Fatalf("%s: %s: %s", cs.Name, cs.Status, describe(cs))
				}
				want.Limited += cs.RateLimited
				want.Waited += cs.RateWaited
				want.MaxWaited = max(want.MaxWaited, cs.RateWaited)
			}
			// The proxy counted every debug-chat request, the setup's too.
			want.Accepted = int(e.proxy.starts.Load()+e.proxy.turns.Load()) - want.Limited + reads
			// At one request a second, the six requests of the long case
			// (four) and the short one waited 5s in all, one of them 3s
			// or more. A case refused once waited its Retry-After and
			// then the pace learnt from it. The setup's pause is over
			// before the first case.
			var wait, maxWait time.Duration
			switch {
			case tc.rate > 0:
				wait, maxWait = 5*time.Second, 3*time.Second
			case tc.refuse == "turn":
				wait, maxWait = want.Waited, time.Second
			}
			if limited := min(len(tc.refuse), 1); want.Waited != wait || want.MaxWaited < maxWait || want.Limited != limited {
				t.Fatalf("the cases waited %s in all, at most %s, with %d answers 429; want %s, at least %s, %d",
					want.Waited, want.MaxWaited, want.Limited, wait, maxWait, limited)
			}
			switch p := res.Pacing; {
			case want.Limited == 0 && want.Waited == 0:
				if p != nil {
					t.Errorf("run pacing %+v, want none: no request was refused, no case waited", p)
				}
			case p == nil || *p != want:
				t.Errorf("run pacing %+v, want %+v", p, want)
			}
		})
	}
}

// TestTurnTimeoutGrantsACallItsOwnWaits: the turn timeout leaves out the
// rate-limit waits of the call it bounds, not those of the session's
// calls before it. The start waits 2s on a 429, the turn 1s; each answer
// takes 1.5s on the runner's clock against a turn timeout of 40ms. The
// start is granted its 2s and passes; the turn, granted its 1s, is cut.
func TestTurnTimeoutGrantsACallItsOwnWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.refuse(func(kind string, n int64) string {
		if n != 1 {
			return ""
		}
		return map[string]string{"start": "2", "turn": "1"}[kind]
	})
	c := runPaced(t, e.pacedOpts(t, fakeclock.New(), 1500*time.Millisecond))
	a := c.Attempts[0]
	if c.Status != result.Errored || c.RateLimited != 2 || len(a.Turns) != 2 || a.Error == nil ||
		a.Error.Kind != result.KindTimeout || !strings.Contains(a.Error.Message, "turn timeout of 40ms exceeded (POST /v1/agents/") {
		t.Errorf("got %s after %d rate limits, want the turn cut by its timeout after 2: %s", c.Status, c.RateLimited, describe(c))
	}
}

// TestTurnTimeoutLeavesOutEarlierWaits: a wait of an earlier call is not
// the later call's, even when no bound fell due during it. The start
// waits 1s on a 429 and answers in 100ms, well within the turn timeout of
// 2s; the turn, with no wait of its own, answers in 2.5s and is cut at 2s.
func TestTurnTimeoutLeavesOutEarlierWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.refuseFirstStart("1")
	clk := fakeclock.New()
	opts := e.pacedOpts(t, clk, 0)
	opts.TurnTimeout = 2 * time.Second
	opts.Channel = e.channelOver(t, byKind{
		start: slowAnswers{clk: clk, latency: 100 * time.Millisecond, next: e.transport},
		turn:  slowAnswers{clk: clk, latency: 2500 * time.Millisecond, next: e.transport},
	})
	c := runPaced(t, opts)
	if a := c.Attempts[0]; c.Status != result.Errored || c.RateLimited != 1 || a.Error == nil ||
		!strings.Contains(a.Error.Message, "turn timeout of 2s exceeded (POST /v1/agents/") {
		t.Errorf("got %s after %d rate limits, want the turn cut by its timeout: %s", c.Status, c.RateLimited, describe(c))
	}
	// On the runner's clock (the client's waits run on a clock of their
	// own): the start's answer and the turn's, which came past its
	// timeout.
	if c.Duration != 2600*time.Millisecond {
		t.Errorf("case took %s, want 2.6s", c.Duration)
	}
}

// runPaced runs the booking's first turn with opts and returns its case.
func runPaced(t *testing.T, opts Options) *result.Case {
	t.Helper()
	sc := booking("paced", 10)
	keepTurns(sc, 1)
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Files[0].Cases[0]
}

// byKind sends the session's creation through start and its turns through
// turn.
type byKind struct{ start, turn http.RoundTripper }

func (b byKind) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/debug-chat") {
		return b.start.RoundTrip(r)
	}
	return b.turn.RoundTrip(r)
}

// TestBoundedSaysWhenItsBoundEndedTheCall: Bounded names its bound in the
// error of a call that bound ended, and only then: a call that failed on
// its own, or that the caller's context ended (an interrupt), keeps its
// error as it was, and one that succeeded has none. The bound runs on
// the real clock when the caller gives none.
func TestBoundedSaysWhenItsBoundEndedTheCall(t *testing.T) {
	t.Parallel()
	failed := errors.New("POST /v1/agents/a/debug-chat: 500")
	for _, tc := range []struct {
		name      string
		bound     time.Duration
		interrupt bool
		account   bool  // ctx carries a RateAccount, as the run's calls do
		fakeNow   bool  // the client's clock is a fake one that stands still
		err       error // the call's, or nil: it waits for its context
		want      string
	}{
		{name: "succeeded", bound: time.Hour},
		{name: "failed", bound: time.Hour, err: failed, want: failed.Error()},
		// The turn timer cancels the call's context with a cause: its Err
		// is Canceled. A ctx without an account gets one of its own, so
		// the call is bounded the same way (a plain deadline, "context
		// deadline exceeded", ended it at a 429 whose pause outlasted it).
		{name: "bound passed", bound: time.Nanosecond, want: "context canceled (turn timeout of 1ns exceeded)"},
		{name: "bound passed, with an account", bound: time.Nanosecond, account: true, want: "context canceled (turn timeout of 1ns exceeded)"},
		// The bound runs on the real clock whatever the client's is (a
		// command's fake State clock).
		{name: "bound passed, the client's clock fake", bound: time.Nanosecond, account: true, fakeNow: true, want: "context canceled (turn timeout of 1ns exceeded)"},
		{name: "interrupted", bound: time.Hour, interrupt: true, want: "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.account {
				ctx = platform.WithRateAccount(ctx, platform.NewRateAccount())
			}
			// No clock: the real one.
			var now func() time.Time
			if tc.fakeNow {
				now = fakeclock.New().Now
			}
			_, err := Bounded(ctx, tc.bound, now, nil, func(cctx context.Context) (int, error) {
				if tc.interrupt {
					cancel()
				}
				if tc.err != nil || tc.want == "" {
					return 1, tc.err
				}
				<-cctx.Done()
				return 0, cctx.Err()
			})
			if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestScenarioTimeoutFallsDuringARateLimitPause: a scenario's timeout
// leaves the rate-limit waits out (docs/configuration.md, pacing), also
// when it falls due while a call waits out a 429's Retry-After. One fake
// clock runs the runner's timers and the client's pauses, so the
// scenario's timer fires in the middle of the pause, as it would on a
// real clock. Every answer takes 60ms; the third call waits 1s first. A
// scenario whose own time fits its timeout passes; one whose own time
// does not is cut at the same point as without the pause, 30ms into its
// third answer, and errors as the scenario's timeout, not as a rate limit
// nor as a connection lost. Either way the run goes on: the scenario
// after it passes.
func TestScenarioTimeoutFallsDuringARateLimitPause(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		limited bool // the third call is refused once, Retry-After 1s
		timeout time.Duration
		want    result.Status
		own     time.Duration // the attempt's time without its waits
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		e := newEnv(t, sim.Options{Seed: 1})
		e.proxy.refuse(func(kind string, n int64) string {
			if tc.limited && kind == "turn" && n == 2 {
				return "1"
			}
			return ""
		})
		clk := fakeclock.New()
		c, err := platform.New(platform.Config{BuildURL: e.proxy.URL, BuildKey: e.sim.BuildKey, Now: clk.Now,
			HTTPClient: &http.Client{Transport: slowAnswers{clk: clk, latency: 60 * time.Millisecond, next: e.transport}},
			Retry:      platform.RetryPolicy{Sleep: clk.Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		opts := e.opts()
		opts.Channel, opts.Parallel = DebugChat(c), 1
		opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		timed := booking("timed", 10)
		timed.Timeout = tc.timeout
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, timed, booking("after", 20))}, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, after := res.Files[0].Cases[0], res.Files[0].Cases[1]
		if got.Status != tc.want || len(got.Attempts) != 1 {
			t.Fatalf("got %s after %d attempts, want %s after 1: %s", got.Status, len(got.Attempts), tc.want, describe(got))
		}
		limits, waited := 0, time.Duration(0)
		if tc.limited {
			limits, waited = 1, time.Second
		}
		// After the 429 the key is paced: the calls after the pause may
		// wait their turn too, and those waits are left out as well.
		if got.RateLimited != limits || got.RateWaited < waited {
			t.Errorf("the case waited %s for %d 429s, want %s at least for %d", got.RateWaited, got.RateLimited, waited, limits)
		}
		// The attempt's own time is what its waits leave of it: as
		// without them, 60ms an answer, and a cut answer's 60ms pass in
		// full on the clock before the client sees the cut (slowAnswers).
		a := got.Attempts[0]
		if own := a.Duration - got.RateWaited; own != tc.own {
			t.Errorf("the attempt took %s, %s of it its own; want %s of its own", a.Duration, own, tc.own)
		}
		if after.Status != result.Passed || res.Stop != nil {
			t.Errorf("the scenario after it %s, the run's stop %+v: want it passed and no stop: %s", after.Status, res.Stop, describe(after))
		}
		if tc.want == result.Passed {
			return
		}
		if a.Error.Kind != result.KindTimeout || !strings.HasPrefix(a.Error.Message, "scenario timeout of 150ms exceeded (POST /v1/agents/") {
			t.Errorf("error %+v, want the scenario's timeout", a.Error)
		}
		if n := len(a.Turns); n != 3 || a.Turns[n-1].Result != nil {
			t.Errorf("%d turns, want 3, the last one cut off: %s", n, describe(got))
		}
	}
	for _, tc := range []testCase{
		// Five calls of 60ms.
		{name: "its own time fits", limited: true, timeout: 330 * time.Millisecond, want: result.Passed, own: 300 * time.Millisecond},
		{name: "its own time runs out", limited: true, timeout: 150 * time.Millisecond, want: result.Errored, own: 180 * time.Millisecond},
		{name: "its own time runs out, no pause", timeout: 150 * time.Millisecond, want: result.Errored, own: 180 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestTurnTimerFiringLateKeepsItsDeadline: the turn timeout bounds a
// call's own time, the time since it was armed less the rate-limit waits
// granted, whenever its timer fires. A real timer fires late on a loaded
// machine; the deadline a firing moves out is the one set when the call
// was armed plus the waits granted, not the time the timer fired at, or
// every firing during a pause would add its lateness to the call's time.
// Here the timers fire 100ms after they are due, the call waits out a 5s
// Retry-After (four firings in it) and its answer then takes its time: an
// answer within the turn timeout passes, one past it is cut no later than
// one lateness past its timeout, where the deadline moved from each late
// firing let a 1.2s answer through.
func TestTurnTimerFiringLateKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	const (
		timeout = time.Second
		late    = 100 * time.Millisecond
		pause   = 5 * time.Second
	)
	for _, tc := range []struct {
		name   string
		answer time.Duration // the answer's time after the pause
		cut    bool
	}{
		{name: "answer within the timeout", answer: 900 * time.Millisecond},
		{name: "answer past the timeout", answer: 1200 * time.Millisecond, cut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, sim.Options{Seed: 1})
			e.proxy.refuseFirstStart("5")
			clk := fakeclock.New()
			c, err := platform.New(platform.Config{BuildURL: e.proxy.URL, BuildKey: e.sim.BuildKey, Now: clk.Now,
				HTTPClient: &http.Client{Transport: slowAnswers{clk: clk, latency: tc.answer, next: e.transport}},
				Retry:      platform.RetryPolicy{Sleep: clk.Sleep}})
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu    sync.Mutex
				ctx   context.Context
				cutAt time.Time
			)
			// The timers fire late, on the goroutine that moves clk: the
			// firing that ends the call's context notes the time.
			lateTimers := func(d time.Duration, f func()) func() bool {
				return clk.AfterFunc(d+late, func() {
					f()
					mu.Lock()
					defer mu.Unlock()
					if ctx.Err() != nil && cutAt.IsZero() {
						cutAt = clk.Now()
					}
				})
			}
			start := clk.Now()
			mu.Lock()
			ctx, cancel := withTimeout(platform.WithRateAccount(context.Background(), platform.NewRateAccount()), timeout,
				&Options{Now: clk.Now, AfterFunc: lateTimers})
			mu.Unlock()
			defer cancel()
			_, err = c.StartChat(ctx, e.restaurant, platform.ChatStart{ClientEnv: "sandbox"})
			mu.Lock()
			defer mu.Unlock()
			if !tc.cut {
				if err != nil {
					t.Fatalf("the call within its timeout failed: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				t.Fatalf("err %v, cause %v: want the call cut by its timeout", err, context.Cause(ctx))
			}
			// The call's own time when cut: its timeout, and at most one
			// late firing more.
			if own := cutAt.Sub(start) - pause; own < timeout || own > timeout+late {
				t.Errorf("cut %s into the call's own time, want between %s and %s", own, timeout, timeout+late)
			}
		})
	}
}

// TestCallTimeoutCancel: the cancel CallTimeout returns ends its context
// at once, as context.WithTimeout's does, with an account in ctx or not:
// a caller that cancels on return leaves nothing waiting on the bound.
func TestCallTimeoutCancel(t *testing.T) {
	t.Parallel()
	for _, account := range []bool{false, true} {
		ctx := context.Background()
		if account {
			ctx = platform.WithRateAccount(ctx, platform.NewRateAccount())
		}
		cctx, cancel := CallTimeout(ctx, time.Hour, nil, nil)
		if cctx.Err() != nil {
			t.Fatalf("account %t: ended before its hour: %v", account, cctx.Err())
		}
		cancel()
		if cctx.Err() != context.Canceled {
			t.Errorf("account %t: err %v once cancelled, want context.Canceled", account, cctx.Err())
		}
	}
}

// TestTurnTimerArmedAgain: a session's calls share one turn timer, armed
// for each. Each call is bounded by its own timeout: a call after one
// that returned in time, and a call after one that timed out (its context
// is replaced, not reused cancelled), on the real clock's timers and on a
// fake clock's. A call whose context its timer cancelled just as it
// returned leaves the next call a live one.
func TestTurnTimerArmedAgain(t *testing.T) {
	t.Parallel()
	for _, fake := range []bool{false, true} {
		clk := fakeclock.New()
		o := &Options{Now: time.Now}
		if fake {
			o.Now, o.AfterFunc = clk.Now, clk.AfterFunc
		}
		tt := newTurnTimer(platform.WithRateAccount(context.Background(), platform.NewRateAccount()), o)
		// prev is the context of the call before, cut or not.
		var prev context.Context
		// cut arms a call of d, and waits until its timer ends it.
		cut := func(d time.Duration) {
			t.Helper()
			wasCut := prev.Err() != nil
			ctx := tt.arm(d)
			if ctx == prev && wasCut {
				t.Fatalf("fake %t: a call armed for %s got the context of the call cut before it", fake, d)
			}
			// A real timer of d may end the call before it is looked at:
			// only a fake clock's waits for the clock to move.
			if fake && ctx.Err() != nil {
				t.Fatalf("fake %t: a call armed for %s starts ended: %v", fake, d, ctx.Err())
			}
			prev = ctx
			if fake {
				clk.Advance(d)
			}
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatalf("fake %t: a call armed for %s was not cut", fake, d)
			}
			tt.disarm()
		}
		// A call that returns in time, then one cut, then one more cut.
		prev = tt.arm(time.Hour)
		tt.disarm()
		cut(time.Nanosecond)
		cut(time.Nanosecond)
		tt.stop()
	}
}

// TestSessionOutsideARunWaitsOnRateLimits: a session opened outside a run
// (NewSession, as godogsteps opens one per godog scenario) waits out a
// 429 as a run's case does, its turn timeout leaving the wait out. The
// opening of its conversation is refused with a Retry-After of 1s, past
// the turn timeout of 40ms: the session had no wait account, so nothing
// was granted, and the step errored with "turn timeout of 40ms
// exceeded" where waiting would have worked.
func TestSessionOutsideARunWaitsOnRateLimits(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.refuseFirstStart("1")
	clk := fakeclock.New()
	opts := e.pacedOpts(t, clk, 10*time.Millisecond)
	// The client waits on the runner's clock, as a command's does.
	client, err := platform.New(platform.Config{
		BuildURL: e.proxy.URL, BuildKey: e.sim.BuildKey, Now: clk.Now,
		HTTPClient: &http.Client{Transport: slowAnswers{clk: clk, latency: 10 * time.Millisecond, next: e.transport}},
		Retry:      platform.RetryPolicy{Sleep: clk.Sleep},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts.Channel = DebugChat(client)
	sc := booking("outside a run", 10)
	c := &result.Case{Name: sc.Name, Pos: sc.Pos, Status: result.Pending, Agent: e.restaurant, Env: DefaultEnv}
	s, err := NewSession(context.Background(), sc, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.End()
	for _, st := range sc.Steps {
		if !s.Exec(st) {
			t.Fatalf("step %q did not hold: %s", st.Text, describe(c))
		}
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited < time.Second {
		t.Errorf("the session waited %s on the fake clock, want the Retry-After's 1s", waited)
	}
}
