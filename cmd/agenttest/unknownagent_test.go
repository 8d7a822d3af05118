package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownAgentOfTheEmbeddedSimulator: an agent id the embedded
// simulator does not serve is refused before anything runs (exit 2: the
// suite's setting, not the agent, is wrong), at the place it is written,
// named with the one meant and the ones it serves, in YAML and Gherkin
// alike. A probe's agent is refused as a debug chat's: at its 404 it
// errored its case as the platform's fault (exit 4), an SMS saying to
// set sms_connector_id on a target the run has not.
func TestUnknownAgentOfTheEmbeddedSimulator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"yaml, a typo", "s.yaml", "agent: restaurnt\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n",
			[]string{`s.yaml:1:8: the embedded simulator does not serve agent "restaurnt" (did you mean "restaurant"? it serves clinic, restaurant, utility-billing)`}},
		{"feature, a typo", "f.feature", "@agent:clnic\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			[]string{`f.feature:1:1: the embedded simulator does not serve agent "clnic" (did you mean "clinic"? it serves clinic, restaurant, utility-billing)` + "\n"}},
		{"feature, a setup step", "f.feature", "@agent:clinic\nFeature: f\n  Scenario: a\n    Given the agent \"clnic\"\n    When the user says \"hi\"\n",
			[]string{`f.feature:4:21: the embedded simulator does not serve agent "clnic"`}},
		{"nothing close", "s.yaml", "agent: bakery\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n",
			[]string{`s.yaml:1:8: the embedded simulator does not serve agent "bakery" (it serves clinic, restaurant, utility-billing; for your agent on the platform, configure a target (agenttest.yaml, or AGENTTEST_* variables): docs/configuration.md; for an agent definition of your own, serve it with --sim-agents DIR (run, compare): docs/agent-definition.md)`}},
		{"sms probe", "s.yaml", "agent: clnic\nscenarios:\n  - name: texts\n    probe: {sms: {to: \"+447700900002\", message: hi}}\n",
			[]string{`s.yaml:1:8: the embedded simulator does not serve agent "clnic" (did you mean "clinic"?`}},
		{"call probe", "s.yaml", "scenarios:\n  - name: calls\n    agent: clnic\n    probe: {outbound_call: {to: \"+447700900001\"}}\n",
			[]string{`s.yaml:3:12: the embedded simulator does not serve agent "clnic" (did you mean "clinic"?`}},
		{"feature probe", "f.feature", "@agent:clnic\nFeature: f\n  Scenario: calls\n    When an outbound call is placed to \"+447700900001\"\n",
			[]string{`f.feature:1:1: the embedded simulator does not serve agent "clnic"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{tc.file: tc.src})
			out := newCLI(t, dir, nil, "run", tc.file).expect(t, exitUsage, tc.want...)
			if strings.Contains(out, "sms_connector_id") {
				t.Errorf("the refusal points at a target's setting:\n%s", out)
			}
		})
	}
}

// TestUnknownAgentsRefusedBeforeTheRun: every agent the embedded
// simulator does not serve is named, each once at its place, and nothing
// runs: no case starts (a scenario of a served agent included), no
// report is written. At run time the first debug chat with one stopped
// the run, after other cases had run, naming that agent alone.
func TestUnknownAgentsRefusedBeforeTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"two agents of two scenarios", "s.yaml",
			"scenarios:\n  - name: served\n    agent: clinic\n    turns: [{say: hi}]\n  - name: a\n    agent: restaurnt\n    turns: [{say: hi}]\n  - name: b\n    agent: clnic\n    turns: [{say: hi}]\n",
			[]string{`s.yaml:6:12: the embedded simulator does not serve agent "restaurnt"`, `s.yaml:9:12: the embedded simulator does not serve agent "clnic"`}},
		{"a suite's typo, once", "s.yaml",
			"agent: clnic\nscenarios:\n  - name: served\n    agent: clinic\n    turns: [{say: hi}]\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    examples: [{n: 1}, {n: 2}]\n    turns: [{say: \"${n}\"}]\n",
			[]string{`s.yaml:1:8: the embedded simulator does not serve agent "clnic"`}},
		{"a Feature's tag and a Background's step, once each", "f.feature",
			"@agent:clnic\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n  Rule: r\n    Background:\n      Given the agent \"restaurnt\"\n    Scenario: c\n      When the user says \"hi\"\n    Scenario: d\n      When the user says \"hi\"\n",
			[]string{`f.feature:1:1: the embedded simulator does not serve agent "clnic"`, `f.feature:9:23: the embedded simulator does not serve agent "restaurnt"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{tc.file: tc.src})
			out := newCLI(t, dir, nil, "run", "-v", "--json", "out.json", "--junit", "out.xml", tc.file).expect(t, exitUsage, tc.want...)
			if n := strings.Count(out, "does not serve agent"); n != len(tc.want) {
				t.Errorf("%d refusals, want %d:\n%s", n, len(tc.want), out)
			}
			nothingRan(t, dir, out)
		})
	}
}

// nothingRan fails t when a run refused before it started (out, in dir,
// with --json out.json --junit out.xml) ran a case or wrote a report.
func nothingRan(t *testing.T, dir, out string) {
	t.Helper()
	if strings.Contains(out, "running ") || strings.Contains(out, "PASS") || strings.Contains(out, "ERROR") {
		t.Errorf("cases ran:\n%s", out)
	}
	for _, name := range []string{"out.json", "out.xml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written (%v)", name, err)
		}
	}
}

// TestCompareRefusesUnknownAgents: compare's sides are refused as run
// is, before either starts; two sides of the embedded simulator share
// its agents, and each agent is named once.
func TestCompareRefusesUnknownAgents(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"s.yaml": "scenarios:\n  - name: a\n    agent: restaurnt\n    turns: [{say: hi}]\n  - name: b\n    agent: clnic\n    turns: [{say: hi}]\n"})
	out := newCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "s.yaml").expect(t, exitUsage,
		`s.yaml:3:12: the embedded simulator does not serve agent "restaurnt"`, `s.yaml:6:12: the embedded simulator does not serve agent "clnic"`,
		"agenttest: --candidate pre-release: the same as --baseline sandbox")
	if n := strings.Count(out, "does not serve agent"); n != 2 {
		t.Errorf("%d refusals, want 2:\n%s", n, out)
	}
}
