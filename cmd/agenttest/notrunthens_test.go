package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotRunThenSteps: a feature whose first Then step breaks leaves its
// other Then steps of that turn untested; the console, JUnit and the
// GitHub annotation count them rather than name them as one check.
func TestNotRunThenSteps(t *testing.T) {
	t.Parallel()
	feature := "@agent:restaurant\nFeature: f\n\n  Scenario: books\n    When the user says \"I'd like to book a table\"\n" +
		"    Then the agent's reply contains \"guests\"\n    And the agent's reply contains \"people\"\n" +
		"    And the current node is \"CollectPartySize\"\n    And the agent's reply contains \"joining\"\n" +
		"    When the user says \"4 people\"\n    Then the agent's reply contains \"time\"\n"
	dir := writeTree(t, map[string]string{"features/f.feature": feature})
	out := newCLI(t, dir, map[string]string{"GITHUB_ACTIONS": "true"}, "run", "features", "--sim", "--junit", "r.xml").expect(t, exitFailed)
	junit, err := os.ReadFile(filepath.Join(dir, "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	const want = "not run: turn 1 checks (3), turn 2"
	if !strings.Contains(out, "\n    "+want+"\n") {
		t.Errorf("console: no line %q in\n%s", want, out)
	}
	if !strings.Contains(out, "%0A"+want+"\n") {
		t.Errorf("GitHub annotation does not end with %q:\n%s", want, out)
	}
	if !strings.Contains(string(junit), "\n"+want+"\n") {
		t.Errorf("JUnit: no line %q in\n%s", want, junit)
	}
}
