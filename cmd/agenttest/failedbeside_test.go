package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedBesideErrored: a run where the agent broke an expectation and
// the platform kept another case from a verdict fails (exit 1), and its
// status says both, on the console and in JUnit's status_reason: the
// errored case is not the agent's fault.
func TestFailedBesideErrored(t *testing.T) {
	t.Parallel()
	suite := "agent: restaurant\nscenarios:\n  - name: greets wrongly\n    greeting: {response: Good morning}\n" +
		"  - name: books\n    turns:\n      - say: I'd like to book a table\n        expect: {response: {contains: How many}}\n"
	dir := writeTree(t, map[string]string{"suites/s.yaml": suite})
	// Every turn times out on the platform; the greeting is no turn.
	env := map[string]string{simFlagsEnv: "--chat-timeout 1"}
	out := newCLI(t, dir, env, "run", "suites", "--sim", "--retries", "0", "--junit", "r.xml").expect(t, exitFailed)
	const why = "a check failed: the agent broke an expectation; 1 case errored too: the platform or the network broke, not the agent"
	if !strings.Contains(out, "\nstatus: failed ("+why+")\n") {
		t.Errorf("console's status line does not say %q:\n%s", why, out)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `<property name="status_reason" value="`+why+`">`) {
		t.Errorf("JUnit's status_reason does not say %q:\n%s", why, junit)
	}
}
