package scenario

import (
	"fmt"
	"testing"
)

// TestScenarioEnvRefs: each scenario lists the ${env:NAME} references its
// run expands, as the runner expands them: its program's texts; its
// start parameters (the scenario's over the suite's, key by key) only
// when it opens a conversation, which a probe does not; every var it
// has, its examples row's included and no other row's, once it expands
// any ${...}, and none when it does not (a var set to "" overrides the
// suite's, as a start key set to "" does not but an attribute does, and a row's value without
// references overrides the scenario's var); never a name, a quarantine
// reason, a metadata key or a system_message level, which are sent or
// compared as written; a feature's setup steps are left to the run. A
// reference an outline's step holds through a <column> is at its
// Examples cell, once, as is one of a value used as a var.
func TestScenarioEnvRefs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src, want string
	}{
		{"texts of the program", "s.yaml", `agent: a
scenarios:
  - name: n ${env:NAME}
    via: messaging
    quarantine: {reason: "r ${env:REASON}", until: 2099-01-01}
    turns:
      - say: "hi ${env:SAY}"
        expect:
          response: {matches: "^${env:RE}$"}
          system_message: {level: "${env:LEVEL}"}
`, "[SAY@s.yaml:7:18 RE@s.yaml:9:33]"},
		{"start, the scenario's key over the suite's", "s.yaml", `agent: a
start: {channel: "${env:SUITE_CHANNEL}", variant: "${env:SUITE_VARIANT}", integration_attributes: {k: "${env:SUITE_ATTR}"}}
scenarios:
  - name: n
    start: {channel: "${env:CHANNEL}", variant: ""}
    turns: [{say: hi}]
`, "[SUITE_VARIANT@s.yaml:2:52 SUITE_ATTR@s.yaml:2:104 CHANNEL@s.yaml:5:23]"},
		{"the suite's start alone, and an attribute set to \"\"", "s.yaml", `agent: a
start: {channel: "${env:SUITE_ONLY}", integration_attributes: {k: "${env:BLANKED}"}}
scenarios:
  - name: suite's
    turns: [{say: hi}]
  - name: blanks k
    start: {integration_attributes: {k: ""}}
    turns: [{say: hi}]
`, "[SUITE_ONLY@s.yaml:2:19 BLANKED@s.yaml:2:68] [SUITE_ONLY@s.yaml:2:19]"},
		{"an integration attribute that refers expands the vars", "s.yaml", `agent: a
vars: {v: "${env:VAR}"}
scenarios:
  - name: n
    start: {integration_attributes: {k: "${v}"}}
    turns: [{say: hi}]
`, "[VAR@s.yaml:2:12]"},
		{"a probe opens no conversation", "s.yaml", `agent: a
start: {channel: "${env:CHANNEL}"}
vars: {v: "${env:VAR}"}
scenarios:
  - name: n
    probe: {outbound_call: {to: "+447700900001", metadata: {"${env:KEY}": "${env:NOTE}"}}, expect_status: success}
`, "[VAR@s.yaml:3:12 NOTE@s.yaml:6:76]"},
		{"vars, only once something expands", "s.yaml", `agent: a
vars: {v: "${env:SUITE_VAR}", w: "${env:OVERRIDDEN}"}
scenarios:
  - name: plain
    turns: [{say: hi}]
  - name: refers
    vars: {w: "", x: "${env:SHADOWED}"}
    examples:
      - {x: "${env:ROW_ONE}"}
      - {x: "${env:ROW_TWO}"}
      - {x: "3"}
    turns: [{say: "${w}"}]
`, "[] [SUITE_VAR@s.yaml:2:12 ROW_ONE@s.yaml:9:14] [SUITE_VAR@s.yaml:2:12 ROW_TWO@s.yaml:10:14] [SUITE_VAR@s.yaml:2:12]"},
		{"a feature's steps, rows and setup steps", "f.feature", `Feature: f
  Scenario Outline: n
    Given the channel "${env:CHANNEL}"
    When the user says "<p> ${env:SAY}"
    Then the agent's reply contains "${x}"
    Examples:
      | p              | x              |
      | ${env:ROW_ONE} | ${env:X_ONE} |
`, "[SAY@f.feature:4:29 ROW_ONE@f.feature:8:9 X_ONE@f.feature:8:26]"},
		{"a feature's Examples column no step uses", "f.feature", `Feature: f
  Scenario Outline: n
    When the user says "<p>"
    Examples:
      | p | q            |
      | 2 | ${env:UNUSED} |
`, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load := LoadFile
			if KindOf(tc.file) == Feature {
				load = loadFeature
			}
			s, diags := load(tc.file, []byte(tc.src))
			if diags.HasErrors() {
				t.Fatalf("%v", diags)
			}
			var got []string
			for _, sc := range s.Scenarios {
				var refs []string
				for _, r := range sc.EnvRefs {
					refs = append(refs, r.Name+"@"+r.Pos.String())
				}
				got = append(got, fmt.Sprint(refs))
			}
			if g := fmt.Sprint(got); g != "["+tc.want+"]" {
				t.Errorf("%s, want [%s]", g, tc.want)
			}
		})
	}
}
