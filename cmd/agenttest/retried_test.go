package main

import (
	"strings"
	"testing"
)

// TestRetriedAgentNamedFlaky runs a scenario with retries against the
// clinic, which routes half the repeat-prescription requests wrongly
// (embedded simulator, seeds fixed: seed 2 passes at once, seeds 1 and 16
// pass only on a retry). A rescued case passes the run, as flaky counts
// as passed, but the summary must name it with the attempt that passed
// and what the attempts before met: a count alone hides an agent wrong
// half the time behind a green run, and a retry past a platform error
// must not read as one.
func TestRetriedAgentNamedFlaky(t *testing.T) {
	t.Parallel()
	const line = "FLAKY cmd/agenttest/testdata/retried/clinic.yaml:7 renews a repeat prescription"
	type testCase struct {
		seed string
		// simFlags are the embedded simulator's (AGENTTEST_SIM_FLAGS).
		simFlags string
		// summary is the line under "flaky, passed only on a retry:",
		// empty when the case passed at once and the group is absent.
		summary string
	}
	cases := []testCase{
		{seed: "2"},
		{seed: "1", summary: "  " + line + " (passed on attempt 2 of 2 after a failed check)\n"},
		{seed: "16", summary: "  " + line + " (passed on attempt 3 of 3 after a failed check)\n"},
		// A retry that got past an injected 500 says nothing about the
		// agent: the line must tell it from a wrong answer (seed 10 meets
		// a 500 on its first attempt, and routes right on its second).
		{seed: "10", simFlags: "--error-500=0.3", summary: "  " + line + " (passed on attempt 2 of 2 after a platform error (500))\n"},
	}
	run := func(t *testing.T, tc testCase) {
		env := examplesEnv()
		if tc.simFlags != "" {
			env["AGENTTEST_SIM_FLAGS"] = tc.simFlags
		}
		c := newCLI(t, repoRoot, env, "run", "cmd/agenttest/testdata/retried", "--seed", tc.seed, "--parallel", "1")
		if code := c.run(t); code != exitOK {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, c.stdout.String(), c.stderr.String())
		}
		out := c.stdout.String()
		const head = "\nflaky, passed only on a retry:\n"
		switch {
		case tc.summary == "" && strings.Contains(out, head):
			t.Errorf("a case that passed at once is listed as flaky:\n%s", out)
		case tc.summary != "" && !strings.Contains(out, head+tc.summary):
			t.Errorf("summary does not name the flaky case (want %q after %q):\n%s", tc.summary, head, out)
		}
	}
	for _, tc := range cases {
		t.Run("seed "+tc.seed, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}
