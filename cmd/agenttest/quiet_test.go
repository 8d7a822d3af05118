package main

import (
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/config"
)

// TestMessagingQuietPastTheTurnTimeout: a messaging_quiet as long as the
// turn timeout would have every web chat answer wait it out and time
// out: the run stops before anything is called, naming both.
func TestMessagingQuietPastTheTurnTimeout(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"web.yaml": webSuite})
	env := map[string]string{"AGENTTEST_MESSAGING_QUIET": "5s"}
	newCLI(t, dir, env, "run", "--sim", "--turn-timeout", "5s", "web.yaml").expect(t, exitUsage,
		`agenttest: target sim: messaging_quiet 5s is not shorter than the turn timeout of 5s: every web chat answer would wait it out and time out; lower messaging_quiet or raise --turn-timeout`)
	env["AGENTTEST_MESSAGING_QUIET"] = "11s"
	newCLI(t, dir, env, "run", "--sim", "web.yaml").expect(t, exitUsage,
		`AGENTTEST_MESSAGING_QUIET: messaging_quiet: "11s" is longer than 10s`)
}

// webSuite is a scenario over web chat.
const webSuite = "suite: web\nagent: restaurant\nvia: messaging\nscenarios:\n  - name: greets\n    greeting: {response: {contains: Welcome}}\n"

// TestMessagingOptions: the Messaging channel waits the target's
// messaging_quiet, within the run's turn timeout.
func TestMessagingOptions(t *testing.T) {
	t.Parallel()
	mo, err := messagingOptions(&config.Target{Name: "sandbox", MessagingQuiet: 1500 * time.Millisecond}, 30*time.Second)
	if err != nil || mo.Quiet != 1500*time.Millisecond || mo.TurnTimeout != 30*time.Second {
		t.Errorf("options %+v, %v", mo, err)
	}
	if _, err := messagingOptions(&config.Target{Name: "sandbox", MessagingQuiet: 30*time.Second - 1}, 30*time.Second); err != nil {
		t.Errorf("a quiet shorter than the turn timeout: %v", err)
	}
}

// TestCompareMessagingQuietPastTheTurnTimeout: compare holds each side's
// target to the same rule as run.
func TestCompareMessagingQuietPastTheTurnTimeout(t *testing.T) {
	t.Parallel()
	compareCLI(t, writeTree(t, map[string]string{"web.yaml": webSuite}), map[string]string{"AGENTTEST_MESSAGING_QUIET": "5s"},
		"compare", "--sim", "--turn-timeout", "5s", "--baseline", "sandbox", "--candidate", "pre-release", "web.yaml").expect(t, exitUsage,
		`agenttest: target sim: messaging_quiet 5s is not shorter than the turn timeout of 5s`)
}
