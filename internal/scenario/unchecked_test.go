package scenario

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/diag"
)

// TestUncheckedScenarioWarns: a scenario that says its turns and reads
// nothing of the answers passes whenever the agent answers. An empty
// expect: {} drew a warning while no expect at all drew none, in YAML
// and in features (a When with no Then): both now warn, once per
// scenario (not per examples row), and not for a skipped scenario or
// beside the errors of a file that does not run.
func TestUncheckedScenarioWarns(t *testing.T) {
	t.Parallel()
	const warning = "the scenario checks nothing"
	for _, tc := range []struct {
		name, file, src string
		// want are the lines warned at; nil: no warning.
		want []int
		// errors: the file has errors besides.
		errors bool
	}{
		{name: "turns without expect", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n      - say: bye\n", want: []int{3}},
		{name: "examples rows, said once", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    examples: [{x: '1'}, {x: '2'}]\n    turns: [{say: '${x}'}]\n", want: []int{3}},
		{name: "one turn checked", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n      - say: bye\n        expect: {ended: true}\n"},
		{name: "greeting checks", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    greeting: {response: {contains: Welcome}}\n    turns: [{say: hi}]\n"},
		{name: "a capture", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    turns: [{say: hi, capture: {ref: {response: 'ref ([A-Z]+)'}}}]\n"},
		{name: "a confirmation", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n    confirm: {conversation: {channel: WEBCHAT}}\n"},
		{name: "skipped", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    skip: later\n    turns: [{say: hi}]\n"},
		{name: "beside an error", file: "s.yaml", errors: true,
			src: "agent: a\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi, expct: {ended: true}}]\n"},
		{name: "feature: a When with no Then", file: "f.feature",
			src: "@agent:a\nFeature: f\n\n  Scenario: a\n    When the user says \"hi\"\n", want: []int{4}},
		{name: "feature: outline rows, said once", file: "f.feature",
			src: "@agent:a\nFeature: f\n\n  Scenario Outline: a\n    When the user says \"<x>\"\n\n    Examples:\n      | x |\n      | 1 |\n      | 2 |\n", want: []int{4}},
		{name: "feature: a Then", file: "f.feature",
			src: "@agent:a\nFeature: f\n\n  Scenario: a\n    When the user says \"hi\"\n    Then the agent's reply contains \"hello\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Load(fstest.MapFS{tc.file: {Data: []byte(tc.src)}}, []string{tc.file})
			if ds.HasErrors() != tc.errors {
				t.Fatalf("errors %v, want %v:\n%s", ds.HasErrors(), tc.errors, renderDiags(ds))
			}
			var got []int
			for _, d := range ds {
				if strings.Contains(d.Message, warning) {
					if d.Severity != diag.Warning {
						t.Errorf("%s is not a warning", d)
					}
					got = append(got, d.Pos.Line)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("warned at lines %v, want %v:\n%s", got, tc.want, renderDiags(ds))
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("warned at lines %v, want %v", got, tc.want)
				}
			}
		})
	}
}
