package runner

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
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
		if !res.Interrupted || res.RunStatus() != result.RunInterrupted {
			t.Errorf("during %t: interrupted %t, run %s, want interrupted", during, res.Interrupted, res.RunStatus())
		}
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
