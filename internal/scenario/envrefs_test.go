package scenario

import (
	"fmt"
	"testing"
)

// Every ${env:NAME} a file reads is listed once per place, for lint's check
// that no suite reads a key, in both formats, at its own line and column:
// in a quoted value, a step's text, a DocString's line, a table's cell,
// an Examples cell (which a step may use as ${column}, in no step's text).
func TestEnvRefs(t *testing.T) {
	t.Parallel()
	yamlSuite := `agent: restaurant
vars:
  token: ${env:SUITE_TOKEN}
scenarios:
  - name: a ${row}
    examples:
      - {row: 1}
      - {row: 2}
    turns:
      - say: "key ${env:AGENTTEST_BUILD_KEY}"
        expect:
          response: {matches: "^${env:MY_KEY}$"}
  - name: call
    probe: {outbound_call: {to: "+447700900001", metadata: {note: "${env:CALL_NOTE}"}}, expect_status: success}
`
	feature := `Feature: f
  Scenario: a
    When the user says "${env:AGENTTEST_RUNTIME_KEY}"
    Then the agent's reply contains "${env:OTHER}"
    When the user says:
      """
      token ${env:DOC_KEY}
      """
    Then the state includes:
      | key   | value             |
      | token | ${env:TABLE_KEY}  |
  Scenario Outline: b
    When the user says "${p}"
    Examples:
      | p               |
      | ${env:CELL_KEY} |
`
	for _, tc := range []struct {
		file, src, want string
	}{
		{"s.yaml", yamlSuite, "[SUITE_TOKEN@s.yaml:3:10 AGENTTEST_BUILD_KEY@s.yaml:10:19 MY_KEY@s.yaml:12:33 CALL_NOTE@s.yaml:14:68]"},
		{"f.feature", feature, "[AGENTTEST_RUNTIME_KEY@f.feature:3:25 OTHER@f.feature:4:38 DOC_KEY@f.feature:7:13 TABLE_KEY@f.feature:11:17 CELL_KEY@f.feature:16:9]"},
	} {
		load := LoadFile
		if KindOf(tc.file) == Feature {
			load = loadFeature
		}
		s, diags := load(tc.file, []byte(tc.src))
		if diags.HasErrors() {
			t.Fatalf("%s: %v", tc.file, diags)
		}
		var got []string
		for _, r := range s.EnvRefs {
			got = append(got, r.Name+"@"+r.Pos.String())
		}
		if fmt.Sprint(got) != tc.want {
			t.Errorf("%s: %v, want %s", tc.file, got, tc.want)
		}
	}
}
