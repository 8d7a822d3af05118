package scenario

import (
	"fmt"
	"slices"
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

// TestUnfailingCheckWarns: a check that every reply passes (contains "",
// a pattern that matches every text, an any: or a feature's "contains one
// of" with such an alternative) passed whatever the agent said, an empty
// reply too, and lint said nothing. It draws a warning at the check, in
// YAML and in features; a check of a state key with such a matcher still
// asks for the key and draws none, nor does a reference that may expand
// to "".
func TestUnfailingCheckWarns(t *testing.T) {
	t.Parallel()
	const warning = "the check cannot fail"
	yaml := func(expect string) string {
		return "agent: a\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: " + expect + "\n"
	}
	feature := func(then ...string) string {
		return "@agent:a\nFeature: f\n\n  Scenario: a\n    When the user says \"hi\"\n    Then " + strings.Join(then, "\n") + "\n"
	}
	for _, tc := range []struct {
		name, file, src string
		// want are the line:col warned at; nil: no warning.
		want []string
	}{
		{name: "contains empty", file: "s.yaml", src: yaml(`{response: {contains: ""}}`), want: []string{"6:18"}},
		{name: "matches every text", file: "s.yaml", src: yaml(`{response: {matches: '.*'}, node: {matches: 'x|'}}`), want: []string{"6:18", "6:45"}},
		{name: "an empty alternative", file: "s.yaml", src: yaml(`{response: {any: [{contains: menu}, {contains: ""}]}}`), want: []string{"6:18"}},
		{name: "greeting", file: "s.yaml",
			src: "agent: a\nscenarios:\n  - name: a\n    greeting: {response: {matches: '^'}}\n", want: []string{"4:16"}},
		{name: "not of what no text satisfies", file: "s.yaml", src: yaml(`{response: {not: {not_contains: ""}}}`), want: []string{"6:18"}},
		{name: "and a word", file: "s.yaml", src: yaml(`{response: {contains: "", matches: table}}`)},
		{name: "a state key", file: "s.yaml", src: yaml(`{state: {day: {contains: ""}}}`)},
		{name: "a reference", file: "s.yaml",
			src: "agent: a\nvars: {w: ''}\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {response: {contains: '${w}'}}\n"},
		{name: "feature: contains empty", file: "f.feature", src: feature(`the agent's reply contains ""`), want: []string{"6:37"}},
		{name: "feature: matches every text", file: "f.feature", src: feature(`the agent's reply matches "(a|b)?"`), want: []string{"6:36"}},
		{name: "feature: contains one of, a row empty", file: "f.feature",
			src: feature("the agent's reply contains one of:", "      | menu |", "      |      |"), want: []string{"6:5"}},
		{name: "feature: an outline's row", file: "f.feature",
			src:  "@agent:a\nFeature: f\n\n  Scenario Outline: a\n    When the user says \"hi\"\n    Then the agent's reply contains \"<w>\"\n\n    Examples:\n      | w    |\n      | menu |\n      |      |\n",
			want: []string{"11:14"}},
		{name: "feature: a state key", file: "f.feature", src: feature(`the state "day" matches ".*"`)},
		{name: "feature: a word", file: "f.feature", src: feature(`the agent's reply contains "menu"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Load(fstest.MapFS{tc.file: {Data: []byte(tc.src)}}, []string{tc.file})
			if ds.HasErrors() {
				t.Fatalf("errors:\n%s", renderDiags(ds))
			}
			var got []string
			for _, d := range ds {
				if strings.Contains(d.Message, warning) {
					if d.Severity != diag.Warning {
						t.Errorf("%s is not a warning", d)
					}
					got = append(got, fmt.Sprintf("%d:%d", d.Pos.Line, d.Pos.Col))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("warned at %v, want %v:\n%s", got, tc.want, renderDiags(ds))
			}
		})
	}
}
