package scenario

import (
	"strings"
	"testing"
)

// TestFeatureTableErrorsAtTheCell: a mistake in a step's table is
// reported where it is written, the row's line and the cell's column,
// not at the step: in a table of twenty rows the step's line says
// nothing of which one to fix.
func TestFeatureTableErrorsAtTheCell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       string // "line:col: text"
	}{
		{"record field", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | field | value |\n      | channel | WEBCHAT |\n      | bogus | 1 |\n",
			`9:9: unknown field "bogus"`},
		{"record number", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | num_turns | at least zz |\n",
			`7:21: "at least zz" is not a number`},
		{"record boolean", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | handoff | maybe |\n",
			`7:19: handoff is true or false, not "maybe"`},
		{"record intents", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | turns.intents | , |\n",
			`7:25: turns.intents lists no intent`},
		{"too many cells", "    When the user says \"hi\"\n    Then the state includes:\n      | day | tuesday | extra |\n",
			`7:25: table row 1 has 3 cells, want 2: | key | value |`},
		{"too few cells", "    When the user says \"hi\"\n    Then the state includes:\n      | time |\n",
			`7:9: table row 1 has 1 cells, want 2`},
		{"one column, two cells", "    When the user says \"hi\"\n    Then the node trace passes through:\n      | start | end |\n",
			`7:17: table row 1 has 2 cells, want 1: | node |`},
		{"state key", "    When the user says \"hi\"\n    Then the state includes:\n      | key | value |\n      | a..b | 1 |\n",
			`8:9: `},
		{"metadata key twice", "    When the user says \"hi\" with the metadata:\n      | tier | gold |\n      | tier | silver |\n",
			`7:9: metadata key "tier" is written twice`},
		{"outline value", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | handoff | <h> |\n\n    Examples:\n      | h |\n      | maybe |\n",
			`11:9: handoff is true or false, not "maybe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kind := "Scenario"
			if strings.Contains(tc.body, "Examples:") {
				kind = "Scenario Outline"
			}
			_, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  "+kind+": s\n"+tc.body)
			at, text, _ := strings.Cut(tc.want, ": ")
			for _, d := range diags {
				if strings.HasSuffix(d.Pos.String(), ":"+at) && strings.Contains(d.Message, text) {
					return
				}
			}
			t.Errorf("no diagnostic %q in %v", tc.want, diags)
		})
	}
}
