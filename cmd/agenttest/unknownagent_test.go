package main

import (
	"os"
	"path/filepath"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			newCLI(t, dir, nil, "run", tc.file).expect(t, exitUsage, tc.want...)
		})
	}
}
