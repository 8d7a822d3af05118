package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	opts := e.pacedOpts(t, fakeclock.New(), 1500*time.Millisecond)
	sc := booking("paced", 10)
	keepTurns(sc, 1)
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	a := c.Attempts[0]
	if c.Status != result.Errored || c.RateLimited != 2 || len(a.Turns) != 2 || a.Error == nil ||
		a.Error.Kind != result.KindTimeout || !strings.Contains(a.Error.Message, "turn timeout of 40ms exceeded (POST /v1/agents/") {
		t.Errorf("got %s after %d rate limits, want the turn cut by its timeout after 2: %s", c.Status, c.RateLimited, describe(c))
	}
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
		err       error // the call's, or nil: it waits for its context
		want      string
	}{
		{name: "succeeded", bound: time.Hour},
		{name: "failed", bound: time.Hour, err: failed, want: failed.Error()},
		{name: "bound passed", bound: time.Nanosecond, want: "context deadline exceeded (turn timeout of 1ns exceeded)"},
		// The turn timer cancels the call's context with a cause: its Err
		// is Canceled.
		{name: "bound passed, with an account", bound: time.Nanosecond, account: true, want: "context canceled (turn timeout of 1ns exceeded)"},
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
			_, err := Bounded(ctx, tc.bound, nil, func(cctx context.Context) (int, error) {
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
