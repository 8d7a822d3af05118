package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnknownAgentOfTheEmbeddedSimulator: an agent id the embedded
// simulator does not serve is named with the one meant and the ones it
// serves, in YAML and Gherkin alike, and the run stops (exit 2: the
// suite's setting, not the agent, is wrong).
func TestUnknownAgentOfTheEmbeddedSimulator(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"yaml, a typo", "s.yaml", "agent: restaurnt\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n",
			[]string{`the embedded simulator does not serve agent "restaurnt" (did you mean "restaurant"? it serves clinic, restaurant, utility-billing)`}},
		{"feature, a typo", "f.feature", "@agent:clnic\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			[]string{`does not serve agent "clnic" (did you mean "clinic"?`, "@agent: of a feature"}},
		{"nothing close", "s.yaml", "agent: bakery\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n",
			[]string{`does not serve agent "bakery" (it serves clinic, restaurant, utility-billing)`}},
		// A probe is refused before anything runs, at its call or SMS:
		// it errored its case at the platform's 404 (exit 4), an SMS
		// saying to set sms_connector_id on a target the run has not.
		{"sms probe", "s.yaml", "agent: clnic\nscenarios:\n  - name: texts\n    probe: {sms: {to: \"+447700900002\", message: hi}}\n",
			[]string{`s.yaml:4:13: probe of scenario "texts": the embedded simulator does not serve agent "clnic" (did you mean "clinic"?`}},
		{"call probe", "s.yaml", "agent: clnic\nscenarios:\n  - name: calls\n    probe: {outbound_call: {to: \"+447700900001\"}}\n",
			[]string{`s.yaml:4:13: probe of scenario "calls": the embedded simulator does not serve agent "clnic" (did you mean "clinic"?`}},
		{"feature probe", "f.feature", "@agent:clnic\nFeature: f\n  Scenario: calls\n    When an outbound call is placed to \"+447700900001\"\n",
			[]string{`f.feature:4:5: probe of scenario "calls": the embedded simulator does not serve agent "clnic"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			out := newCLI(t, dir, nil, "run", tc.file).expect(t, exitUsage, tc.want...)
			if strings.Contains(out, "sms_connector_id") {
				t.Errorf("the refusal points at a target's setting:\n%s", out)
			}
		})
	}
}
