package report

import (
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

// Cucumber's tools read a scenario's result from its last attempt, so the
// runs of a repeated scenario end with one whose outcome is the verdict.
func TestVerdictLast(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		c      *result.Case
		wantAt int // index in c.Attempts of the attempt emitted last
	}
	att := func(st ...result.Status) []*result.Attempt {
		out := make([]*result.Attempt, len(st))
		for i, s := range st {
			out[i] = &result.Attempt{Number: i + 1, Run: i + 1, Status: s}
		}
		return out
	}
	rep := &result.Repeat{Procedure: result.ProcedureFixed, Runs: 3}
	cases := []testCase{
		{name: "failed verdict, last run passed", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Passed, result.Failed, result.Passed)}, wantAt: 1},
		{name: "passed verdict, last run failed", c: &result.Case{Status: result.Passed, Repeat: rep,
			Attempts: att(result.Passed, result.Passed, result.Failed)}, wantAt: 1},
		{name: "verdict already last", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Passed, result.Failed)}, wantAt: 1},
		{name: "retries keep their order", c: &result.Case{Status: result.Flaky,
			Attempts: att(result.Failed, result.Passed)}, wantAt: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := verdictLast(tc.c)
			if len(got) != len(tc.c.Attempts) || got[len(got)-1] != tc.c.Attempts[tc.wantAt] {
				t.Fatalf("last attempt %+v, want attempt %d", got[len(got)-1], tc.wantAt+1)
			}
			seen := map[*result.Attempt]bool{}
			for _, a := range got {
				seen[a] = true
			}
			if len(seen) != len(tc.c.Attempts) {
				t.Errorf("attempts lost or repeated: %v", got)
			}
		})
	}
}
