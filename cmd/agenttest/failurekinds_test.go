package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRepeatedFailuresGroupedByKind: a die right 80% of the time, wrong
// as "five" (16%) or, rarely, "four" (4%). Under seed 1 the first three
// of 40 runs that fail all say "five" and "four" first comes in run 15.
// The console and JUnit list the failed runs grouped by what failed and
// what the agent said, with how many runs and which, and the console's
// three runs in full include the one that says "four": a designer sees
// the rare wrong answer without opening the other transcripts.
func TestRepeatedFailuresGroupedByKind(t *testing.T) {
	t.Parallel()
	agent := diceAgent("[{text: six, weight: 80}, {text: five, weight: 16}, {text: four, weight: 4}]")
	suite := "agent: dice\nscenarios:\n  - name: rolls a six\n    repeat: 40\n    pass_rate: 0.9\n    turns:\n      - say: roll the dice\n        expect: {response: six}\n"
	dir := writeTree(t, map[string]string{"agents/dice.yaml": agent, "suites/s.yaml": suite})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents", "--seed", "1", "--junit", "r.xml").expect(t, exitFailed)
	junit, err := os.ReadFile(filepath.Join(dir, "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const what = `suites/s.yaml:8:18: turn 1: reply is not the expected text`
	groups := "failed runs by what failed first (2 kinds of failure):\n" +
		"      8× (runs 2, 3, 5, 6, 8, …): " + what + " (actual: five)\n" +
		"      1× (run 15): " + what + " (actual: four)\n"
	if !strings.Contains(out, "    "+groups) {
		t.Errorf("the console does not group the failed runs:\nwant\n%s\nin\n%s", groups, out)
	}
	if !strings.Contains(string(junit), strings.ReplaceAll(groups, "\n      ", "\n  ")) {
		t.Errorf("JUnit does not group the failed runs:\n%s", junit)
	}
	shown := regexp.MustCompile(`(?m)^    run (\d+) of 40 failed:$`).FindAllStringSubmatch(out, -1)
	var runs []string
	for _, m := range shown {
		runs = append(runs, m[1])
	}
	if got := strings.Join(runs, " "); got != "2 3 15" {
		t.Errorf("the console shows in full runs %s, want 2 3 15 (the first of each kind, then the earliest):\n%s", got, out)
	}
	if !strings.Contains(out, "… and 6 more failed runs") {
		t.Errorf("the console does not count the runs it leaves out:\n%s", out)
	}
}
