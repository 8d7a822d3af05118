package main

import (
	"path/filepath"
	"testing"
)

// TestMessagingQuietPastTheTurnTimeout: a messaging_quiet as long as the
// turn timeout would have every web chat answer wait it out and time
// out: the run stops before anything is called, naming both.
func TestMessagingQuietPastTheTurnTimeout(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(repoRoot, "examples")
	env := map[string]string{"AGENTTEST_MESSAGING_QUIET": "5s"}
	newCLI(t, dir, env, "run", "--sim", "--turn-timeout", "5s", "suites/clinic.yaml").expect(t, exitUsage,
		`agenttest: target sim: messaging_quiet 5s is not shorter than the turn timeout of 5s: every web chat answer would wait it out and time out; lower messaging_quiet or raise --turn-timeout`)
	env["AGENTTEST_MESSAGING_QUIET"] = "11s"
	newCLI(t, dir, env, "run", "--sim", "suites/clinic.yaml").expect(t, exitUsage,
		`AGENTTEST_MESSAGING_QUIET: messaging_quiet: "11s" is longer than 10s`)
}
