package main

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestLiveSafetyFeatureProbes: a feature's probe steps meet the same
// probe_numbers check as YAML probes, before anything runs, at the step's
// file:line:col.
func TestLiveSafetyFeatureProbes(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	remote := simEnv(s)
	remote["AGENTTEST_AGENT_ID"] = "clinic"
	files := map[string]string{
		"agenttest.yaml": "targets:\n  remote:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    probe_numbers: [\"+44 7700 900001\"]\n",
		"features/probes.feature": `@agent:clinic
Feature: probes

  Scenario: listed call
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"

  Scenario: unlisted sms
    When the SMS "hi" is sent to "+447700900777"

  Scenario: sms from an unlisted number
    When the SMS "hi" is sent to "+447700900001" from "+447700900888"
`,
	}
	c := newCLI(t, writeTree(t, files), remote, "run", "--target", "remote", "features")
	if code := c.run(t); code != exitUsage {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, c.stdout, c.stderr)
	}
	if strings.Contains(c.stdout.String(), "running ") {
		t.Errorf("something ran before the refusal:\n%s", c.stdout)
	}
	for _, w := range []string{"features/probes.feature:9:5", `probe of scenario "unlisted sms" would call or text +447700900777 (sms: to), which is not an allowed probe number`,
		"features/probes.feature:12:5", `probe of scenario "sms from an unlisted number" would call or text +447700900888 (sms: agent_number), which is not an allowed probe number`} {
		if !strings.Contains(c.stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, c.stderr)
		}
	}
	if strings.Contains(c.stderr.String(), "probes.feature:5:5") {
		t.Errorf("the listed number was refused:\n%s", c.stderr)
	}
}
