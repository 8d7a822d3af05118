package runner

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// billerSuite checks both messages of the split answer in turn 1, and
// the next answer alone in turn 2.
const billerSuite = `suite: split answers
agent: biller
via: messaging
scenarios:
  - name: reads the bill
    turns:
      - say: my bill
        expect: {response: {contains: "Your bill is £84.20."}}
      - say: hours
        expect: {response: {equals: "We open at 9."}}
`

// billerStale has turn 1 check the bill, and, in a second scenario,
// only turn 2 check its answer: without messaging_quiet, the first fails
// on "Let me check." (and stops), the second on the stale bill.
const billerStale = `suite: split answers
agent: biller
via: messaging
scenarios:
  - name: reads the bill
    turns:
      - say: my bill
        expect: {response: {contains: "Your bill is £84.20."}}
  - name: gives the hours after the bill
    turns:
      - say: my bill
      - say: hours
        expect: {response: {equals: "We open at 9."}}
`

// splitEnv is a simulator serving billerAgent whose pauses wait until
// the test releases them, and a Messaging channel whose timers run on a
// clock that tells the test each window it sets.
type splitEnv struct {
	sim      *simtest.Sim
	paused   chan time.Duration
	release  chan struct{}
	clk      *fakeclock.Clock
	windows  chan time.Duration
	finished chan []*result.Case
}

func newSplitEnv(t *testing.T) *splitEnv {
	t.Helper()
	// The simulator's own test agent: "Let me check.", its typing
	// indicator off for 800 ms, then the bill.
	src, err := os.ReadFile("../sim/testdata/agents/biller.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, diags := agent.Load("biller.yaml", src)
	if diags.HasErrors() {
		t.Fatalf("load agent: %v", diags)
	}
	e := &splitEnv{paused: make(chan time.Duration, 4), release: make(chan struct{}), clk: fakeclock.New(),
		windows: make(chan time.Duration, 1024), finished: make(chan []*result.Case, 1)}
	e.sim = simtest.Start(t, sim.Options{Seed: 1, Agents: []*agent.Definition{def}, TickInterval: time.Hour,
		Sleep: func(ctx context.Context, d time.Duration) {
			e.paused <- d
			select {
			case <-e.release:
			case <-ctx.Done():
			}
		}})
	return e
}

// afterFunc is the client's timers: the fake clock's, each told to the
// test.
func (e *splitEnv) afterFunc(d time.Duration, f func()) func() bool {
	stop := e.clk.AfterFunc(d, f)
	e.windows <- d
	return stop
}

// run runs suite with messaging_quiet quiet on a goroutine of its own;
// its cases arrive on finished.
func (e *splitEnv) run(t *testing.T, suite string, quiet time.Duration) {
	t.Helper()
	tr := platform.NewTransport(8)
	t.Cleanup(tr.CloseIdleConnections)
	base := platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: e.sim.MessagingURL, MessagingHost: e.sim.Info.MessagingHost,
		HTTPClient: &http.Client{Transport: tr}, Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep}, AfterFunc: e.afterFunc}
	token := func(agent, env string) (string, error) { return e.sim.Info.MessagingConnectors[agent][env], nil }
	dc, err := platform.New(platform.Config{BuildURL: e.sim.BuildURL, BuildKey: e.sim.BuildKey, AccountID: e.sim.AccountID, HTTPClient: base.HTTPClient})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Channel: DebugChat(dc), Messaging: Messaging(MessagingClients(base, token), MessagingOptions{TurnTimeout: time.Minute, Quiet: quiet}),
		Parallel: 1, RetryDelay: -1, TurnTimeout: time.Minute}
	suites := loadYAML(t, suite)
	go func() {
		res, err := Run(context.Background(), suites, opts)
		if err != nil {
			t.Error(err)
			e.finished <- nil
			return
		}
		e.finished <- res.Files[0].Cases
	}()
}

// await waits for what ch gives, failing t past a guard that no test
// relies on.
func awaitValue[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not within 10s", what)
		var zero T
		return zero
	}
}

// window waits until the client sets a window of d: it took the events
// so far and waits for quiet.
func (e *splitEnv) window(t *testing.T, d time.Duration, what string) {
	t.Helper()
	for awaitValue(t, e.windows, "a window of "+d.String()+" "+what) != d {
	}
}

// TestMessagingSplitAnswer: an agent that turns its typing indicator off
// between the two messages of one answer (the simulator's pauseMs).
// Without messaging_quiet the answer ends at the first message, and the
// second opens the next turn's reply: turn 1 fails on "Let me check." and
// turn 2 on the bill and its own answer, the documented symptom. With messaging_quiet: 1s
// both messages are turn 1's reply and turn 2 is its own answer alone.
func TestMessagingSplitAnswer(t *testing.T) {
	t.Parallel()
	t.Run("without messaging_quiet", func(t *testing.T) {
		t.Parallel()
		e := newSplitEnv(t)
		e.run(t, billerStale, 0)
		select {
		case <-e.paused:
		case cs := <-e.finished:
			t.Fatalf("the run ended before the pause: %s", describe(cs[0]))
		}
		close(e.release)
		cs := awaitValue(t, e.finished, "the cases")
		if len(cs) != 2 || cs[0].Status != result.Failed || cs[1].Status != result.Failed {
			t.Fatalf("cases %v", cs)
		}
		fs := cs[0].Last().Failures
		if len(fs) != 1 || fs[0].Actual != "Let me check." {
			t.Errorf("turn 1 fails on %+v, want the first message alone", fs)
		}
		fs = cs[1].Last().Failures
		// The second message of turn 1's answer came before the platform
		// took turn 2's message: turn 2 waits for its own answer after
		// it, and does not complete on the earlier answer's typing
		// indicator going off.
		if len(fs) != 1 || fs[0].Actual != "Your bill is £84.20. We open at 9." {
			t.Errorf("turn 2 fails on %+v, want the second message of turn 1's answer, then its own", fs)
		}
	})
	t.Run("with messaging_quiet", func(t *testing.T) {
		t.Parallel()
		const quiet = time.Second
		e := newSplitEnv(t)
		e.run(t, billerSuite, quiet)
		e.window(t, quiet, "after the greeting")
		e.clk.Advance(quiet)
		awaitValue(t, e.paused, "the pause of the split answer")
		e.window(t, quiet, "after the first message")
		close(e.release)
		e.window(t, quiet, "after the second message")
		e.clk.Advance(quiet)
		e.window(t, quiet, "after the answer to hours")
		e.clk.Advance(quiet)
		cs := awaitValue(t, e.finished, "the case")
		if len(cs) != 1 || cs[0].Status != result.Passed {
			t.Fatalf("cases %v", cs)
		}
		turns := cs[0].Last().Turns // the greeting, then the two turns
		if got := turns[1].Result.Response; got != "Let me check. Your bill is £84.20." {
			t.Errorf("turn 1's reply %q", got)
		}
		if got := turns[1].Messaging.CompletedBy; got != "quiet" {
			t.Errorf("turn 1 completed by %q", got)
		}
	})
}
