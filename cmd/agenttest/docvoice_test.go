package main

import (
	"strings"
	"testing"
)

// TestDocVoiceSuiteRuns: the voice suite of docs/writing-scenarios.md
// ("Testing a voice agent") runs as it is against the embedded simulator
// and passes, with no warning: a voice designer who copies it starts from
// a suite that works, calls and SMS included.
func TestDocVoiceSuiteRuns(t *testing.T) {
	t.Parallel()
	lines, _ := docBlock(t, "docs/writing-scenarios.md", "suite: Billing line")
	dir := writeTree(t, map[string]string{"voice.yaml": strings.Join(lines, "\n") + "\n"})
	out := newCLI(t, dir, examplesEnv(), "run", "voice.yaml").expect(t, exitOK, "3 passed, 0 failed")
	if strings.Contains(out, "warning") {
		t.Errorf("the guide's suite draws a warning:\n%s", out)
	}
}
