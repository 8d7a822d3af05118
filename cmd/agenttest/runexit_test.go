package main

import (
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

// TestRunExit: the exit code follows the run's status, except that a
// stop on a configuration problem exits 2, as every configuration
// problem does; an interruption still exits 130, even when it came
// after such a stop, as the reports' status says.
func TestRunExit(t *testing.T) {
	t.Parallel()
	credentials := &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Config: true}
	unreachable := &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable}
	cases := func(ss ...result.Status) []*result.File {
		f := &result.File{Path: "a.yaml"}
		for _, s := range ss {
			f.Cases = append(f.Cases, &result.Case{Status: s})
		}
		return []*result.File{f}
	}
	for _, tc := range []struct {
		name       string
		res        *result.Result
		allowEmpty bool
		want       int
	}{
		{"passed", &result.Result{Files: cases(result.Passed)}, false, exitOK},
		{"failed", &result.Result{Files: cases(result.Passed, result.Failed)}, false, exitFailed},
		{"errored", &result.Result{Files: cases(result.Passed, result.Errored)}, false, exitErrored},
		{"a key refused after a failure", &result.Result{Files: cases(result.Failed, result.Errored, result.Skipped), Stop: credentials}, false, exitUsage},
		{"unreachable", &result.Result{Files: cases(result.Errored, result.Skipped), Stop: unreachable}, false, exitErrored},
		{"interrupted after a key was refused", &result.Result{Files: cases(result.Errored, result.Pending), Stop: credentials, Interrupted: true}, false, exitInterrupted},
		{"empty", &result.Result{Files: cases(result.Skipped)}, false, exitEmpty},
		{"empty, allowed", &result.Result{Files: cases(result.Skipped)}, true, exitOK},
	} {
		if got := runExit(tc.res, tc.allowEmpty); got != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, got, tc.want)
		}
	}
}
