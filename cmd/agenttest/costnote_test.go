package main

import (
	"strings"
	"testing"
)

// TestStatisticalCostSaidBeforeTheRun: a statistical scenario runs until
// its test decides, up to a limit of hundreds of sessions; before the
// run, stderr says how many sessions the selected statistical scenarios
// may open and what an agent at the pass rate takes on average (the
// figures of the docs' table), so a nightly job against a rate-limited
// platform is not a surprise. A fixed repeat states its cost in the file,
// and a skipped scenario opens none.
func TestStatisticalCostSaidBeforeTheRun(t *testing.T) {
	t.Parallel()
	agent := diceAgent("six")
	roll := "    turns:\n      - say: roll the dice\n        expect: {response: six}\n"
	suite := "agent: dice\nscenarios:\n" +
		"  - name: rolls a six\n    pass_rate: 0.9\n    confidence: 0.95\n" + roll +
		"  - name: rolls a six five times\n    repeat: 5\n" + roll +
		"  - name: rolls once\n" + roll +
		"  - name: skipped\n    skip: not yet\n    confidence: 0.95\n" + roll
	many := "agent: dice\nscenarios:\n"
	for _, n := range []string{"a", "b", "c", "d"} {
		many += "  - name: " + n + "\n    pass_rate: 0.8\n    margin: 0.2\n    confidence: 0.95\n" + roll
	}
	dir := writeTree(t, map[string]string{"agents/dice.yaml": agent, "suites/s.yaml": suite, "many/m.yaml": many})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a scenario's own design", nil,
			`agenttest: note: 1 statistical scenario may open up to 282 sessions (and one more for each errored run): suites/s.yaml:3:5 "rolls a six": up to 282 (about 77 for an agent at 0.9)` + "\n"},
		{"the run's flags on a scenario without one", []string{"--confidence", "0.95", "--pass-rate", "0.8", "--margin", "0.2"},
			`agenttest: note: 2 statistical scenarios may open up to 387 sessions (and one more for each errored run): suites/s.yaml:3:5 "rolls a six": up to 282 (about 77 for an agent at 0.9); suites/s.yaml:14:5 "rolls once": up to 105 (about 32 for an agent at 0.8)` + "\n"},
		{"none statistical", []string{"--name", "once"}, ""},
		{"three", []string{"many", "--name", "/^[abc]$/"},
			`agenttest: note: 3 statistical scenarios may open up to 315 sessions (and one more for each errored run): many/m.yaml:3:5 "a": up to 105 (about 32 for an agent at 0.8); many/m.yaml:10:5 "b": up to 105 (about 32 for an agent at 0.8); many/m.yaml:17:5 "c": up to 105 (about 32 for an agent at 0.8)` + "\n"},
		// The note names three and counts the others.
		{"more than three", []string{"many"},
			`agenttest: note: 4 statistical scenarios may open up to 420 sessions (and one more for each errored run): many/m.yaml:3:5 "a": up to 105 (about 32 for an agent at 0.8); many/m.yaml:10:5 "b": up to 105 (about 32 for an agent at 0.8); many/m.yaml:17:5 "c": up to 105 (about 32 for an agent at 0.8); and 1 more` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := tc.args
			if len(args) == 0 || args[0] != "many" {
				args = append([]string{"suites"}, args...)
			}
			c := newCLI(t, dir, nil, append([]string{"run", "--sim-agents", "agents", "--seed", "1"}, args...)...)
			c.expect(t, exitOK)
			var notes []string
			for l := range strings.Lines(c.stderr.String()) {
				if strings.HasPrefix(l, "agenttest: note:") {
					notes = append(notes, l)
				}
			}
			if got := strings.Join(notes, ""); got != tc.want {
				t.Errorf("notes:\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
