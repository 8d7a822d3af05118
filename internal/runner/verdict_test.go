package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/platform"
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
	opts, jitter := e.opts(), time.Second/4
	opts.Retries, opts.RetryDelay = 1, time.Second
	pauses := recordPauses(&opts)
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Files[0].Cases[0]; c.Status != result.Flaky || len(c.Attempts) != 2 {
		t.Fatalf("case %s after %d attempts, want flaky after 2%s", c.Status, len(c.Attempts), describe(c))
	}
	if slept := pauses(); len(slept) != 1 || slept[0] < time.Second-jitter || slept[0] > time.Second+jitter {
		t.Errorf("slept %v, want one pause of 1s ± 25%%", slept)
	}
}

// TestRunRetryPauses: the pause before a retry. Two cases hit by one
// outage do not come back in lockstep: the jitter of each is drawn from
// the run's seed and the case. Options that leave the delay unset pause
// the default delay, not none.
func TestRunRetryPauses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		cases []*scenario.Scenario
		ok    func(slept []time.Duration) bool
		want  string
	}{
		{"per case", func(o *Options) { o.Seed = 7 }, []*scenario.Scenario{booking("one", 10), booking("two", 20)},
			func(s []time.Duration) bool { return len(s) == 2 && s[0] != s[1] }, "two different ones"},
		{"default delay", func(o *Options) { o.RetryDelay = 0 }, []*scenario.Scenario{booking("books", 10)},
			func(s []time.Duration) bool {
				return len(s) == 1 && s[0] >= DefaultRetryDelay*3/4 && s[0] <= DefaultRetryDelay*5/4
			}, "one of the default delay ± 25%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := outage(t)
			tc.edit(&opts)
			pauses := recordPauses(&opts)
			if _, err := Run(context.Background(), []*scenario.Suite{suite(file, tc.cases...)}, opts); err != nil {
				t.Fatal(err)
			}
			if slept := pauses(); !tc.ok(slept) {
				t.Errorf("pauses %v, want %s", slept, tc.want)
			}
		})
	}
}

// outage is e.opts() of a fresh simulator whose every turn answers 500,
// with one retry after a pause of a second.
func outage(t *testing.T) Options {
	t.Helper()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.onRequest(func(kind string, _ int64, _ *http.Request, w http.ResponseWriter) bool {
		return kind == "turn" && fail500(w)
	})
	opts := e.opts()
	opts.Retries, opts.RetryDelay = 1, time.Second
	return opts
}

// recordPauses makes opts' Sleep record the pauses asked for, and returns
// them so far.
func recordPauses(opts *Options) func() []time.Duration {
	var (
		mu    sync.Mutex
		slept []time.Duration
	)
	opts.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		slept = append(slept, d)
		return ctx.Err()
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(slept)
	}
}

// TestRunInterruptedDuringBackoff: an interruption that ends the pause
// before a retry ends the case there, unfinished, with the attempt it
// made: no further session is asked for.
func TestRunInterruptedDuringBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
		return kind == "turn" && fail500(w)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := e.opts()
	opts.Retries, opts.RetryDelay = 2, time.Second
	opts.Sleep = func(context.Context, time.Duration) error {
		cancel()
		return context.Canceled
	}
	res, err := Run(ctx, []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Pending || len(c.Attempts) != 1 || c.Attempts[0].Status != result.Errored || !res.Interrupted || e.proxy.starts.Load() != 1 {
		t.Fatalf("case %s after %d attempts (%d sessions), interrupted %v; want pending after the one errored attempt%s",
			c.Status, len(c.Attempts), e.proxy.starts.Load(), res.Interrupted, describe(c))
	}
}

// TestRunRecoversPanicAfterAnAttempt: a panic between attempts (here in
// the pause before a retry) is recorded on an attempt of its own: the
// finished attempt keeps the error it ended with.
func TestRunRecoversPanicAfterAnAttempt(t *testing.T) {
	t.Parallel()
	opts := outage(t)
	opts.Sleep = func(context.Context, time.Duration) error { panic("sleep bug") }
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Errored || len(c.Attempts) != 2 || c.Attempts[0].Error == nil || c.Attempts[0].Error.Kind != result.KindHTTP ||
		c.Attempts[1].Error == nil || c.Attempts[1].Error.Kind != result.KindInternal {
		t.Fatalf("case %s, want errored: the HTTP error, then the panic on an attempt of its own%s", c.Status, describe(c))
	}
}

// TestAlertGateScope: the gate fails on a firing rule of the whole
// account (no project_id) as on one of an agent of the run, and not on
// one of an agent the run did not talk to. Its failure says the scope,
// the threshold and the value.
func TestAlertGateScope(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	ctx := context.Background()
	restaurant := agentID(t, e.sim, "restaurant")
	greets := func(agent string) string {
		return "suite: gate\nagent: " + agent + "\nscenarios:\n  - name: greets\n    turns:\n      - say: hello\n"
	}
	// A conversation with the restaurant makes its volume rule fire.
	if res, err := Run(ctx, loadYAML(t, greets(restaurant)), e.opts()); err != nil || res.RunStatus() != result.RunPassed {
		t.Fatalf("restaurant run: %v %v", err, statuses(res))
	}
	for _, r := range []platform.AlertRuleRequest{
		{Name: "restaurant volume", ProjectID: restaurant, Metric: "call_volume", Operator: ">=", ThresholdValue: 1, WindowDuration: "5m"},
		{Name: "account volume", Metric: "call_volume", ThresholdValue: 2, WindowDuration: "5m"},
	} {
		if _, err := e.client.CreateAlertRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	opts := e.opts()
	opts.Alerts = e.client
	res, err := Run(ctx, loadYAML(t, greets(e.clinic)), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) != 1 || res.Checks[0].Status != result.Failed {
		t.Fatalf("checks %+v, want the alert gate failed", res.Checks)
	}
	want := assert.Failure{Key: "alerts.call_volume", Message: `alert firing (account-wide): rule "account volume"`,
		Expected: "call_volume below 2 (call_volume >= 2 not reached)", Actual: "firing at 2"}
	fs := res.Checks[0].Last().Failures
	if len(fs) != 1 || fs[0].Key != want.Key || !strings.HasPrefix(fs[0].Message, want.Message) || fs[0].Expected != want.Expected || fs[0].Actual != want.Actual {
		t.Errorf("failures %+v, want only %+v", fs, want)
	}
	// Both rules fire: the restaurant's is left out, not missing.
	if cs := res.Checks[0].Last().Confirmations; len(cs) != 1 || cs[0].Summary != "2 firing, 1 for agents "+e.clinic+" or account-wide" {
		t.Errorf("confirmations %+v, want the restaurant's rule among 2 firing", cs)
	}
	if st := res.RunStatus(); st != result.RunFailed {
		t.Errorf("run %s, want failed", st)
	}
	// A run with no case left (a filter took them all) reads the alerts
	// of the run's agent.
	opts.DefaultAgent, opts.Select = restaurant, scenario.Selection{Name: regexp.MustCompile("^no such case$")}
	if res, err = Run(ctx, loadYAML(t, greets(e.clinic)), opts); err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) != 1 || res.Checks[0].Agent != restaurant || len(res.Checks[0].Last().Failures) != 2 {
		t.Errorf("checks %+v, want the gate failed on the restaurant's rule and the account's", res.Checks)
	}
}

// TestAlertGateInterrupted: a run interrupted once its cases are done,
// before or while the gate reads the alerts, is interrupted, not passed:
// the gate did not run, whatever the cases said.
func TestAlertGateInterrupted(t *testing.T) {
	t.Parallel()
	for _, during := range []bool{false, true} {
		e := newEnv(t, sim.Options{Seed: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		opts := e.opts()
		opts.Alerts = e.client
		if during {
			opts.Alerts = cancelling{Alerts: e.client, cancel: cancel}
		} else {
			rec := newRecorder()
			rec.onFinish = func(int) { cancel() }
			opts.Observer = rec
		}
		res, err := Run(ctx, []*scenario.Suite{suite(file, booking("books", 10))}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Files[0].Cases[0]; c.Status != result.Passed {
			t.Fatalf("during %t: case %s, want passed%s", during, c.Status, describe(c))
		}
		if len(res.Checks) != 1 || res.Checks[0].Status != result.Pending || res.Checks[0].SkipReason != result.ReasonInterrupted {
			t.Errorf("during %t: checks %+v, want the gate pending, interrupted", during, res.Checks)
		}
		wantInterrupted(t, res)
	}
}

// cancelling cancels the run as the gate reads the alerts.
type cancelling struct {
	Alerts
	cancel context.CancelFunc
}

func (c cancelling) FiringAlerts(ctx context.Context) ([]platform.Alert, error) {
	c.cancel()
	return c.Alerts.FiringAlerts(ctx)
}

// TestRunInterruptedBetweenCases: a run interrupted after a case
// finished, with none in flight, leaves the cases it never started
// pending and is interrupted: not passed on the one case that ran. A
// scenario's own skip: stays a skip.
func TestRunInterruptedBetweenCases(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := e.opts()
	opts.Parallel = 1
	rec := newRecorder()
	rec.onFinish = func(int) { cancel() }
	opts.Observer = rec
	skipped := booking("skipped", 30)
	skipped.Skip = "not today"
	res, err := Run(ctx, []*scenario.Suite{suite(file, booking("first", 10), booking("second", 20), skipped, booking("third", 40))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if got, want := strings.Join(statuses(res), " "), "first=passed second=pending skipped=skipped third=pending"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	if r := res.Files[0].Cases[1].SkipReason; r != result.ReasonInterrupted {
		t.Errorf("second: reason %q", r)
	}
	if r := res.Files[0].Cases[2].SkipReason; r != "not today" {
		t.Errorf("skipped: reason %q, want its own", r)
	}
	wantInterrupted(t, res)
}

// TestRunInterruptedRepeat: a repeated case interrupted during its
// second run, after an errored first one, has no verdict: pending, with
// the run it made counted and the cut one's transcript kept. The cut run
// is not evidence (counted as a failure, it completed the runs of the
// fixed rule and failed the case), and the errored run does not make the
// case errored: the interruption stopped it, not the platform.
func TestRunInterruptedRepeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.proxy.onRequest(func(kind string, n int64, r *http.Request, w http.ResponseWriter) bool {
		switch {
		case kind == "turn" && n == 1:
			return fail500(w)
		case kind == "turn" && n == 2:
			cancel()
			return hangUp(t, r, w)
		}
		return false
	})
	opts := e.opts()
	opts.Parallel = 1
	sc := booking("repeated", 10)
	keepTurns(sc, 1)
	sc.Stats = scenario.Stats{Repeat: 2, PassRate: 1}
	res, err := Run(ctx, []*scenario.Suite{suite(file, sc)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Pending || c.SkipReason != result.ReasonInterruptedRuns {
		t.Fatalf("case %s (%q), want pending, %q%s", c.Status, c.SkipReason, result.ReasonInterruptedRuns, describe(c))
	}
	if r := c.Repeat; r.Decision != result.DecisionInterrupted || r.Runs != 1 || r.Errored != 1 || r.Passed+r.Failed != 0 || r.Discarded != 0 {
		t.Errorf("repeat %+v, want interrupted after 1 errored run", r)
	}
	if len(c.Attempts) != 2 || c.Attempts[1].Run != 2 || c.Attempts[1].Error == nil || c.Attempts[1].Error.Kind != result.KindInterrupted {
		t.Errorf("attempts: want the errored run's and the cut one's%s", describe(c))
	}
	wantInterrupted(t, res)
}

// TestRunRepeatRecoversPanics: a run of a repeated case that panics is an
// errored run, counted as one, with the panic recorded; the case goes on
// to its verdict.
func TestRunRepeatRecoversPanics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel = 1
	sc := booking("repeated", 10)
	keepTurns(sc, 1)
	opts.Channel = DebugChat(panicky{DebugChatClient: e.client, victim: sayAt(sc, 0).Say, once: new(atomic.Bool)})
	sc.Stats = scenario.Stats{Repeat: 2, PassRate: 0.5}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Passed || c.Repeat.Runs != 2 || c.Repeat.Errored != 1 || c.Repeat.Passed != 1 {
		t.Fatalf("case %s, repeat %+v; want passed on 1 pass and 1 errored run%s", c.Status, c.Repeat, describe(c))
	}
	if a := c.Attempts[0]; a.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindInternal || !strings.Contains(a.Error.Message, "wrapper bug") {
		t.Errorf("the panic is not recorded on the first run%s", describe(c))
	}
}

// TestRunRecoversObserverPanics: a panic before the case made any
// attempt (here the observer's, as the case starts) errors the case on
// an attempt of its own; the other cases run.
func TestRunRecoversObserverPanics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel = 1
	opts.Observer = panicsAt{victim: "explodes"}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("before", 10), booking("explodes", 20), booking("after", 30))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(statuses(res), " "), "before=passed explodes=errored after=passed"; got != want {
		t.Fatalf("statuses %s, want %s", got, want)
	}
	c := res.Files[0].Cases[1]
	if a := c.Last(); len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindInternal || !strings.Contains(a.Error.Message, "observer bug") {
		t.Errorf("panic not recorded%s", describe(c))
	}
}

// panicsAt is an observer that panics when the case named victim starts.
type panicsAt struct {
	result.NoopObserver
	victim string
}

func (p panicsAt) CaseStarted(_ *result.File, c *result.Case) {
	if c.Name == p.victim {
		panic("observer bug")
	}
}

// TestFailFastLetsRepeatedCaseFinish: a repeated case in flight when
// --fail-fast stops the run makes all its runs and has its verdict, as a
// case run once finishes its retries; the alert gate still reads the
// alerts, as a fail-fast stop says nothing of the platform.
func TestFailFastLetsRepeatedCaseFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel, opts.FailFast, opts.Alerts = 2, true, e.client
	opts.ConversationIDs = func(c *result.Case, a *result.Attempt) string {
		return fmt.Sprintf("%s-%d-%d", c.Name, a.Run, a.Number)
	}
	rec := &finishSignal{recorder: newRecorder(), name: "breaks", done: make(chan struct{})}
	opts.Observer = rec
	// The repeated case's first greeting is held until the run has
	// stopped on the failure of the other.
	holdGreeting(t, e, rec, "repeated-1-1", nil)
	repeated := booking("repeated", 10)
	keepTurns(repeated, 1)
	repeated.Stats = scenario.Stats{Repeat: 3, PassRate: 1}
	breaks := broken("breaks", 30)
	breaks.Retries = new(0)
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, repeated, breaks, booking("never runs", 40))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if got, want := strings.Join(statuses(res), " "), "repeated=passed breaks=failed never runs=skipped"; got != want {
		t.Fatalf("statuses %q, want %q%s", got, want, describe(res.Files[0].Cases[0]))
	}
	if r := res.Files[0].Cases[0].Repeat; r.Runs != 3 || r.Decision != result.DecisionPassed {
		t.Errorf("repeat %+v, want 3 runs, passed", r)
	}
	if len(res.Checks) != 1 || res.Checks[0].Status != result.Passed {
		t.Errorf("checks %+v, want the alert gate read, and passed", res.Checks)
	}
	if res.Stop == nil || res.Stop.Kind != result.StopFailFast || res.RunStatus() != result.RunFailed {
		t.Errorf("stop %+v, run %s; want fail-fast, failed", res.Stop, res.RunStatus())
	}
}

// TestFailFastStops: --fail-fast stops on an errored case as on a failed
// one; a stop at the last case left nothing unrun, so the result reports
// none, whatever a scenario's skip: left.
func TestFailFastStops(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, e *env, scs ...*scenario.Scenario) *result.Result {
		t.Helper()
		opts := e.opts()
		opts.Parallel, opts.FailFast = 1, true
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, scs...)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Run("errored", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, sim.Options{Seed: 1})
		e.proxy.onRequest(func(kind string, _ int64, _ *http.Request, w http.ResponseWriter) bool {
			return kind == "turn" && fail500(w)
		})
		res := run(t, e, booking("errors", 10), booking("never runs", 20))
		if got, want := strings.Join(statuses(res), " "), "errors=errored never runs=skipped"; got != want {
			t.Errorf("statuses %q, want %q", got, want)
		}
		if res.Stop == nil || res.Stop.Kind != result.StopFailFast || res.RunStatus() != result.RunErrored {
			t.Errorf("stop %+v, run %s; want fail-fast, errored", res.Stop, res.RunStatus())
		}
	})
	t.Run("not on a flaky case", func(t *testing.T) {
		// A flaky case passed in the end: the run goes on.
		t.Parallel()
		e := newEnv(t, sim.Options{Seed: 1})
		e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
			return kind == "turn" && n == 1 && fail500(w)
		})
		flaky := booking("flaky", 10)
		flaky.Retries = new(1)
		res := run(t, e, flaky, booking("runs", 20))
		if got, want := strings.Join(statuses(res), " "), "flaky=flaky runs=passed"; got != want || res.Stop != nil {
			t.Errorf("statuses %q, stop %+v; want %q, no stop", got, res.Stop, want)
		}
	})
	t.Run("at the last case", func(t *testing.T) {
		t.Parallel()
		skipped := booking("skipped", 10)
		skipped.Skip = "not today"
		res := run(t, newEnv(t, sim.Options{Seed: 1}), skipped, booking("passes", 20), broken("breaks", 30))
		if got, want := strings.Join(statuses(res), " "), "skipped=skipped passes=passed breaks=failed"; got != want {
			t.Errorf("statuses %q, want %q", got, want)
		}
		if res.Stop != nil || res.RunStatus() != result.RunFailed {
			t.Errorf("stop %+v, run %s; want none, failed", res.Stop, res.RunStatus())
		}
	})
}

// TestInterruptedAfterFailFast: a case still running after a --fail-fast
// stop, then cut off by an interruption, is interrupted, not "not run:
// --fail-fast": it was running, and the run is interrupted.
func TestInterruptedAfterFailFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := e.opts()
	opts.Parallel, opts.FailFast = 2, true
	opts.ConversationIDs = func(c *result.Case, a *result.Attempt) string {
		return fmt.Sprintf("%s-%d", c.Name, a.Number)
	}
	rec := &finishSignal{recorder: newRecorder(), name: "breaks", done: make(chan struct{})}
	opts.Observer = rec
	// The greeting of the case cut off is held until the run has stopped
	// on the failure of the other; then the run is interrupted.
	holdGreeting(t, e, rec, "cut-1", cancel)
	breaks := broken("breaks", 30)
	breaks.Retries = new(0)
	res, err := Run(ctx, []*scenario.Suite{suite(file, booking("cut", 10), breaks)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if got, want := strings.Join(statuses(res), " "), "cut=pending breaks=failed"; got != want {
		t.Fatalf("statuses %q, want %q%s", got, want, describe(res.Files[0].Cases[0]))
	}
	if r := res.Files[0].Cases[0].SkipReason; r != result.ReasonInterrupted {
		t.Errorf("cut: reason %q, want %q", r, result.ReasonInterrupted)
	}
	wantInterrupted(t, res)
}

// holdGreeting holds the greeting of the conversation conv until the
// case rec waits for has finished, then calls then, when given.
func holdGreeting(t *testing.T, e *env, rec *finishSignal, conv string, then func()) {
	e.proxy.onResponse(func(kind string, _ int64, body []byte) []byte {
		if kind == "start" && strings.Contains(string(body), conv) {
			select {
			case <-rec.done:
			case <-time.After(10 * time.Second):
				t.Error("the failing case did not finish")
			}
			if then != nil {
				then()
			}
		}
		return body
	})
}

// wantInterrupted fails t unless res is of an interrupted run.
func wantInterrupted(t *testing.T, res *result.Result) {
	t.Helper()
	if !res.Interrupted || res.RunStatus() != result.RunInterrupted {
		t.Errorf("interrupted %t, run %s, want interrupted", res.Interrupted, res.RunStatus())
	}
}
