package result

import "testing"

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
		want        RunStatus
	}{
		{name: "nothing selected", want: RunEmpty},
		{name: "every case skipped", cases: []*Case{{Status: Skipped}}, want: RunEmpty},
		{name: "passed and flaky", cases: []*Case{{Status: Passed}, {Status: Flaky}}, want: RunPassed},
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Files: []*File{{Path: "a.yaml", Cases: tc.cases}}, Checks: tc.checks, Stop: tc.stop, Interrupted: tc.interrupted}
			if got := r.RunStatus(); got != tc.want {
				t.Errorf("RunStatus = %s, want %s", got, tc.want)
			}
		})
	}
}
