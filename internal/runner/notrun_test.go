package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

// notRunYAML and notRunFeature are the same scenarios in both formats:
// each ends early (a failed check, an error), leaving later turns and a
// confirmation unrun, and one runs to its end.
const notRunYAML = `suite: not run
agent: AGENT
scenarios:
  - name: fails at the first turn
    turns:
      - say: I have chest pain
        expect: {response: {contains: banana}}
      - say: thanks
      - say: bye
    confirm:
      conversation: {handoff: true}
      handoff_state: {data: {reason: urgent_symptoms}}
      recording: false
      webhooks: [handoff.created]
  - name: errors at the second turn
    turns:
      - say: hello
      - say: "${env:AGENTTEST_NOT_RUN_UNSET}"
        expect: {response: {contains: hi}}
        capture: {day: {response: '(\w+day)'}}
      - say: goodbye
  - name: runs every step
    turns:
      - say: I have chest pain
    confirm:
      conversation: {handoff: true}
`

const notRunFeature = `@agent:AGENT
Feature: not run

  Scenario: fails at the first turn
    When the user says "I have chest pain"
    Then the agent's reply contains "banana"
    When the user says "thanks"
    And the user says "bye"
    Then the conversation record shows:
      | handoff | true |
    And the handoff state "reason" is "urgent_symptoms"
    And the conversation has no recording
    And a "handoff.created" webhook arrives

  Scenario: errors at the second turn
    When the user says "hello"
    And the user says "${env:AGENTTEST_NOT_RUN_UNSET}"
    Then the agent's reply contains "hi"
    And I remember "day" from the reply matching "(\w+day)"
    When the user says "goodbye"

  Scenario: runs every step
    When the user says "I have chest pain"
    Then the conversation record shows:
      | handoff | true |
`

// TestNotRun: an attempt that ends at a step records the steps after it
// as not run, with their positions, turns and text, and what a
// confirmation would have read; a YAML scenario and a feature, one step
// program, record the same turns and confirmations.
func TestNotRun(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	suites := loadFiles(t, map[string]string{
		"notrun.yaml":    strings.ReplaceAll(notRunYAML, "AGENT", e.clinic),
		"notrun.feature": strings.ReplaceAll(notRunFeature, "AGENT", e.clinic),
	})
	res, err := Run(context.Background(), suites, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*result.File{}
	for _, f := range res.Files {
		byPath[f.Path] = f
	}
	steps := func(f *result.File, i int) string {
		var b strings.Builder
		for _, st := range f.Cases[i].Last().NotRun {
			fmt.Fprintf(&b, "%s %s %d %q %v\n", st.Pos, st.Kind, st.Turn, st.Text, st.Confirms)
		}
		return b.String()
	}
	yml, feat := byPath["notrun.yaml"], byPath["notrun.feature"]
	wantStatus := []result.Status{result.Failed, result.Errored, result.Passed}
	for _, f := range []*result.File{yml, feat} {
		for i, want := range wantStatus {
			if c := f.Cases[i]; c.Status != want {
				t.Fatalf("%s %s: %s, want %s%s", f.Path, c.Name, c.Status, want, describe(c))
			}
		}
	}
	wants := map[string][]string{
		"notrun.yaml": {
			`notrun.yaml:8:9 say 2 "When the user says \"thanks\"" []
notrun.yaml:9:9 say 3 "When the user says \"bye\"" []
notrun.yaml:10:5 confirm 0 "Then the platform's records meet the expectations of confirm:" [conversation handoff_state recording webhooks]
`,
			`notrun.yaml:19:9 check 2 "Then the reply meets the expectations of expect:" []
notrun.yaml:20:19 capture 2 "Then response of the reply is captured as ${day}" []
notrun.yaml:21:9 say 3 "When the user says \"goodbye\"" []
`,
			"",
		},
		"notrun.feature": {
			`notrun.feature:7:5 say 2 "When the user says \"thanks\"" []
notrun.feature:8:5 say 3 "And the user says \"bye\"" []
notrun.feature:9:5 confirm 0 "Then the conversation record shows:" [conversation]
notrun.feature:11:5 confirm 0 "And the handoff state \"reason\" is \"urgent_symptoms\"" [handoff_state]
notrun.feature:12:5 confirm 0 "And the conversation has no recording" [recording]
notrun.feature:13:5 confirm 0 "And a \"handoff.created\" webhook arrives" [webhooks]
`,
			`notrun.feature:18:5 check 2 "Then the agent's reply contains \"hi\"" []
notrun.feature:19:5 capture 2 "And I remember \"day\" from the reply matching \"(\\w+day)\"" []
notrun.feature:20:5 say 3 "When the user says \"goodbye\"" []
`,
			"",
		},
	}
	for path, w := range wants {
		for i := range w {
			if got := steps(byPath[path], i); got != w[i] {
				t.Errorf("%s %s: not run\n%s\nwant\n%s", path, byPath[path].Cases[i].Name, got, w[i])
			}
		}
	}
	if got, want := allFacts(feat), allFacts(yml); got != want {
		t.Errorf("feature facts:\n%s\nYAML facts:\n%s", got, want)
	}
}
