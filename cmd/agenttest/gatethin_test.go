package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestGateThinEvidence: a report whose green rests on little. A case that
// passed only on a retry showed in the gate as a count ("1 flaky"), never
// by name, and no gate could refuse it; a scenario that checks nothing
// (turns said, nothing read of the answers) counted as tested: the gate
// passed a report of an agent whose only case would pass whatever it
// answered. Flaky cases are now named under the count, and refused with
// --no-flaky; cases that checked nothing are named, and do not gate: an
// agent with no other case is refused.
func TestGateThinEvidence(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	run := func(report, seed string, paths ...string) {
		t.Helper()
		args := append([]string{"run", "--seed", seed, "--parallel", "1", "--json", at(report)}, paths...)
		newCLI(t, "testdata/gatethin", simEnv(s), args...).expect(t, exitOK, "status: passed")
	}
	run("flaky.json", "2", "suites/clinic.yaml")
	run("steady.json", "1", "suites/clinic.yaml")
	run("unchecked.json", "1", "suites/unchecked.yaml")
	run("mixed.json", "1", "suites/unchecked.yaml", "suites/checked.yaml")
	run("twoagents.json", "1", "suites/unchecked.yaml", "suites/clinic.yaml")
	newCLI(t, "testdata/gatethin", simEnv(s), "run", "--seed", "1", "--json", at("inconclusive.json"), "stats").
		expect(t, exitFailed, "1 inconclusive (counted as failed)")

	const flakyLines = "\n  tested 1 case: 1 flaky\n  flaky, passed only on a retry:\n    suites/clinic.yaml:7:5 renews a repeat prescription (passed on attempt 2 of 2 after a failed check)\n"
	type testCase struct {
		name string
		args []string
		code int
		want []string
		not  []string
	}
	for _, tc := range []testCase{
		{name: "flaky, named", args: []string{at("flaky.json")}, code: exitOK, want: []string{flakyLines, "gate: passed"}},
		{name: "flaky, --no-flaky", args: []string{"--no-flaky", at("flaky.json")}, code: exitFailed, want: []string{flakyLines,
			"gate: 1 case passed only on a retry (--no-flaky): suites/clinic.yaml:7:5 renews a repeat prescription (passed on attempt 2 of 2 after a failed check); run the tests again, or gate without --no-flaky\n"}},
		{name: "no flaky, --no-flaky", args: []string{"--no-flaky", at("steady.json")}, code: exitOK, want: []string{"tested 1 case: 1 passed\n", "gate: passed"},
			not: []string{"flaky, passed only"}},
		// --no-flaky weighs the agents promoted: another's flaky case
		// does not hold up theirs.
		{name: "another agent flaky, --no-flaky --agent", args: []string{"--no-flaky", "--agent", "restaurant", at("twoagents.json")}, code: exitFailed,
			want: []string{"gate: restaurant: every case of it the report tested in sandbox checked nothing or is quarantined: a case that checks nothing passes whatever the agent answers, so the report vouches for the other agents, not for the agent promoted\n"}, not: []string{"passed only on a retry (--no-flaky)"}},
		{name: "checked nothing, alone", args: []string{at("unchecked.json")}, code: exitFailed, want: []string{
			"\n  tested 1 case: 1 passed\n  checked nothing (passed whenever the agent answered):\n    suites/unchecked.yaml:6:5 says hello\n",
			"gate: every case the run tested checked nothing or is quarantined (1 checked nothing, 0 quarantined): a case that checks nothing passes whatever the agent answers, so the report vouches for nothing; add expectations to the scenarios\n"}},
		// Beside an agent that gates, one whose cases all checked
		// nothing is refused by name.
		{name: "checked nothing, beside another agent", args: []string{at("twoagents.json")}, code: exitFailed, want: []string{
			"gate: restaurant in sandbox: every case of it that ran checked nothing or is quarantined: a case that checks nothing passes whatever the agent answers, and the gate would vouch for its deployment all the same: add expectations to its scenarios, or name the agents promoted with --agent\n"}},
		{name: "checked nothing, with --agent", args: []string{"--agent", "restaurant", at("unchecked.json")}, code: exitFailed, want: []string{
			"gate: every case the run tested checked nothing or is quarantined (1 checked nothing, 0 quarantined)"}},
		{name: "checked nothing beside a case that checks", args: []string{at("mixed.json")}, code: exitOK, want: []string{
			"\n  tested 2 cases: 2 passed\n  checked nothing (passed whenever the agent answered):\n    suites/unchecked.yaml:6:5 says hello\n", "gate: passed"}},
		// An inconclusive case is red, as the run is: the gate says it
		// was too few runs, not that the agent broke an expectation.
		{name: "inconclusive", args: []string{at("inconclusive.json")}, code: exitFailed, want: []string{
			"gate: the run did not pass: its status is failed: 1 statistical case was inconclusive (stats/hours.yaml:7:5 tells callers the opening hours): its runs showed neither that the agent reaches its pass rate nor that it falls short, and it counts as failed; let it run more (raise or leave out repeat:) or widen its margin\n"},
			not: []string{"a check failed"}},
		{name: "checked nothing, another agent promoted", args: []string{"--agent", "clinic", at("twoagents.json")}, code: exitOK, want: []string{"gate: passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newCLI(t, dir, simEnv(s), append([]string{"gate"}, tc.args...)...).expect(t, tc.code)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}
