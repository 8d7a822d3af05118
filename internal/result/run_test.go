package result

import (
	"fmt"
	"testing"
	"time"
)

// TestRunStatus: the one rule behind the exit code, the console's last
// line and both reports, quarantine and statistical verdicts included.
func TestRunStatus(t *testing.T) {
	holds := &Quarantine{Reason: "wording varies", Until: "2026-12-31"}
	lapsed := &Quarantine{Reason: "wording varies", Until: "2026-01-31", Lapsed: true}
	inconclusive := &Repeat{Procedure: ProcedureSPRT, Decision: DecisionInconclusive}
	unreachable := &Stop{Kind: StopUnreachable, Reason: ReasonUnreachable}
	for _, tc := range []struct {
		name        string
		cases       []*Case
		checks      []*Case
		stop        *Stop
		interrupted bool
		deployments []*Deployment
		want        RunStatus
	}{
		{name: "nothing selected", want: RunEmpty},
		{name: "every case skipped", cases: []*Case{{Status: Skipped}}, want: RunEmpty},
		{name: "passed and flaky", cases: []*Case{{Status: Passed}, {Status: Flaky}}, want: RunPassed},
		// A flaky case passed in the end: it tested the agent.
		{name: "flaky alone", cases: []*Case{{Status: Flaky}, {Status: Skipped}}, want: RunPassed},
		{name: "a failure wins over an error", cases: []*Case{{Status: Errored}, {Status: Failed}}, want: RunFailed},
		{name: "errors only", cases: []*Case{{Status: Passed}, {Status: Errored}}, want: RunErrored},
		{name: "inconclusive is failed", cases: []*Case{{Status: Failed, Repeat: inconclusive}}, want: RunFailed},
		{name: "a held quarantine never gates", cases: []*Case{{Status: Passed}, {Status: Failed, Quarantine: holds}, {Status: Errored, Quarantine: holds}}, want: RunPassed},
		// Every selected case quarantined: they ran, so the run tested
		// something and is not empty.
		{name: "only quarantined cases", cases: []*Case{{Status: Failed, Quarantine: holds}}, want: RunPassed},
		{name: "a skipped quarantined case is not tested", cases: []*Case{{Status: Skipped, Quarantine: holds}}, want: RunEmpty},
		{name: "a lapsed quarantine gates", cases: []*Case{{Status: Passed}, {Status: Failed, Quarantine: lapsed}}, want: RunFailed},
		// The platform stop came at a quarantined case: the rest did not
		// run, so the run cannot pass.
		{name: "a platform stop is never a pass", cases: []*Case{{Status: Errored, Quarantine: holds}, {Status: Skipped, SkipReason: ReasonUnreachable}}, stop: unreachable, want: RunErrored},
		{name: "a failing check", cases: []*Case{{Status: Passed}}, checks: []*Case{{Status: Failed}}, want: RunFailed},
		{name: "a check alone tests nothing", checks: []*Case{{Status: Passed}}, want: RunEmpty},
		{name: "interrupted wins", cases: []*Case{{Status: Failed}}, interrupted: true, want: RunInterrupted},
		{name: "an unchanged deployment", cases: []*Case{{Status: Passed}}, deployments: []*Deployment{{Agent: "a", ID: "d1", After: "d1"}}, want: RunPassed},
		{name: "no evidence does not change the verdict", cases: []*Case{{Status: Passed}}, deployments: []*Deployment{{Agent: "a", Note: "not served"}, {Agent: "b", ID: "d1"}}, want: RunPassed},
		// Which deployment failed the check? No one can say.
		{name: "a changed deployment wins over a failure", cases: []*Case{{Status: Failed}}, deployments: []*Deployment{{Agent: "a", ID: "d1", After: "d1"}, {Agent: "b", ID: "d1", After: "d2"}}, want: RunErrored},
		{name: "a changed deployment errors a passing run", cases: []*Case{{Status: Passed}}, deployments: []*Deployment{{Agent: "b", ID: "d1", After: "d2"}}, want: RunErrored},
		{name: "interrupted wins over a change", cases: []*Case{{Status: Passed}}, deployments: []*Deployment{{Agent: "b", ID: "d1", After: "d2"}}, interrupted: true, want: RunInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Files: []*File{{Path: "a.yaml", Cases: tc.cases}}, Checks: tc.checks, Stop: tc.stop, Interrupted: tc.interrupted, Deployments: tc.deployments}
			if got := r.RunStatus(); got != tc.want {
				t.Errorf("RunStatus = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDeploymentEvidence(t *testing.T) {
	d := &Deployment{Agent: "restaurant", Env: "sandbox", ID: "dep-1", After: "dep-2"}
	if !d.Changed() || d.Verified() {
		t.Errorf("changed %v verified %v", d.Changed(), d.Verified())
	}
	if got, want := d.ChangeMessage(), "deployment of restaurant changed during the run: dep-1 → dep-2"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	for _, d := range []*Deployment{{ID: "dep-1"}, {After: "dep-1"}, {}} {
		if d.Changed() || d.Verified() {
			t.Errorf("%+v: half the evidence is neither a change nor a proof", d)
		}
	}
	r := &Result{Deployments: []*Deployment{{Agent: "a", Env: "live", ID: "x", After: "x"}, d}}
	if got := r.DeploymentOf("restaurant", "sandbox"); got != d {
		t.Errorf("DeploymentOf = %+v", got)
	}
	if got := r.DeploymentOf("restaurant", "live"); got != nil {
		t.Errorf("DeploymentOf another env = %+v", got)
	}
	if ch := r.DeploymentChanges(); len(ch) != 1 || ch[0] != d {
		t.Errorf("DeploymentChanges = %v", ch)
	}
}

// TestCheckMillis: a duration in milliseconds read from a report is one
// a run writes: not negative, and not past what a time.Duration holds,
// which would wrap around to another duration.
func TestCheckMillis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ms   float64
		want string
	}{
		{0, ""},
		{0.001, ""},
		{86_400_000, ""},
		{MaxMillis, ""},
		{-0.001, "-0.001 is a negative duration"},
		{-5000, "-5000 is a negative duration"},
		{MaxMillis * 2, "1.8446744073708e+13 milliseconds is longer than a duration can be (about 292 years)"},
		{1e300, "1e+300 milliseconds is longer than a duration can be (about 292 years)"},
	} {
		err := CheckMillis(tc.ms)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("CheckMillis(%v) = %v, want %q", tc.ms, err, tc.want)
		}
		if err == nil && time.Duration(tc.ms*float64(time.Millisecond)) < 0 {
			t.Errorf("CheckMillis(%v) passes a duration that wraps", tc.ms)
		}
	}
}

// TestIsStopReason: the reason of every stop, the one of a repeated
// case cut off by a stop included, reads as a stop's; an interruption's
// and a scenario's own skip: do not. A reader of a merged report that
// missed one would take the cases that stop left unrun for skipped on
// purpose, and --rerun-failed would not run them.
func TestIsStopReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason string
		want   bool
	}{
		{ReasonFailFast, true},
		{ReasonUnreachable, true},
		{ReasonCredentials, true},
		{ReasonUnknownAgent, true},
		{ReasonNoMessagingAPI, true},
		{ReasonStoppedRuns, true},
		{ReasonInterrupted, false},
		{ReasonInterruptedRuns, false},
		{"waits on the vendor", false},
		{"", false},
	} {
		if got := IsStopReason(tc.reason); got != tc.want {
			t.Errorf("IsStopReason(%q) = %t, want %t", tc.reason, got, tc.want)
		}
	}
}

// TestStopLeft: a case skipped with its run's stop's reason, or with
// another stop's (a merged report keeps one shard's stop), was left
// unrun by it; a skip: of the scenario was not, nor is anything in a run
// that did not stop.
func TestStopLeft(t *testing.T) {
	t.Parallel()
	custom := &Stop{Kind: "missing-shards", Reason: "not run: shard 2/3 missing"}
	for _, tc := range []struct {
		stop   *Stop
		reason string
		want   bool
	}{
		{&Stop{Kind: StopUnreachable, Reason: ReasonUnreachable}, ReasonUnreachable, true},
		{custom, "not run: shard 2/3 missing", true},
		{custom, ReasonFailFast, true},
		{custom, "waits on the vendor", false},
		{custom, ReasonInterrupted, false},
		{nil, ReasonUnreachable, false},
	} {
		if got := tc.stop.Left(tc.reason); got != tc.want {
			t.Errorf("%+v.Left(%q) = %t, want %t", tc.stop, tc.reason, got, tc.want)
		}
	}
}

// TestStopCausedBy: the error of a stop is the one whose message is the
// stop's cause; a stop without a cause (--fail-fast) is no error's, an
// error without a message included.
func TestStopCausedBy(t *testing.T) {
	t.Parallel()
	refused := &Stop{Kind: StopCredentials, Cause: "POST /v1/agents/a1/debug-chat: 401 Unauthorized", Config: true}
	for _, tc := range []struct {
		name string
		stop *Stop
		err  *Error
		want bool
	}{
		{"its cause", refused, &Error{Kind: KindHTTP, Message: refused.Cause}, true},
		{"another error", refused, &Error{Kind: KindHTTP, Message: "POST /v1/agents/a1/debug-chat: 500"}, false},
		{"no error", refused, nil, false},
		{"no stop", nil, &Error{Message: refused.Cause}, false},
		{"fail-fast", &Stop{Kind: StopFailFast}, &Error{Kind: KindNetwork}, false},
	} {
		if got := tc.stop.CausedBy(tc.err); got != tc.want {
			t.Errorf("%s: CausedBy = %t, want %t", tc.name, got, tc.want)
		}
	}
}
