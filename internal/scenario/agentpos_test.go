package scenario

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// TestAgentPos: each scenario keeps where its agent is written, the place
// an agent the target does not serve is refused at: its own agent:, the
// suite's (shared by its scenarios and examples rows), a @agent: tag (a
// Feature's shared by its scenarios), the setup step that names it over
// a tag, a Background's shared; none when the target chooses.
func TestAgentPos(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, file, src string
		want            []string // agent@position, per scenario
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		suites, ds := Load(fstest.MapFS{tc.file: {Data: []byte(tc.src)}}, []string{tc.file})
		if ds.HasErrors() {
			t.Fatalf("load failed:\n%s", renderDiags(ds))
		}
		var got []string
		for _, sc := range suites[0].Scenarios {
			at := "none"
			if !sc.AgentPos.IsZero() {
				at = sc.AgentPos.String()
			}
			got = append(got, fmt.Sprintf("%s@%s", sc.Agent, at))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "suite and scenario", file: "s.yaml",
			src:  "agent: clinic\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    agent:   restaurant\n    turns: [{say: hi}]\n",
			want: []string{"clinic@s.yaml:1:8", "restaurant@s.yaml:6:14"}},
		{name: "examples rows share the suite's", file: "s.yaml",
			src:  "agent: clinic\nscenarios:\n  - name: a\n    examples: [{n: 1}, {n: 2}]\n    turns: [{say: \"${n}\"}]\n",
			want: []string{"clinic@s.yaml:1:8", "clinic@s.yaml:1:8"}},
		{name: "the target's", file: "s.yaml",
			src:  "scenarios:\n  - name: a\n    turns: [{say: hi}]\n",
			want: []string{"@none"}},
		{name: "feature tag, scenario tag, setup step", file: "f.feature",
			src:  "@agent:clinic\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n  @agent:restaurant\n  Scenario: b\n    When the user says \"hi\"\n  Scenario: c\n    Given the agent \"utility-billing\"\n    When the user says \"hi\"\n",
			want: []string{"clinic@f.feature:1:1", "restaurant@f.feature:5:3", "utility-billing@f.feature:9:21"}},
		{name: "a Background's step", file: "f.feature",
			src:  "Feature: f\n  Background:\n    Given the agent \"clinic\"\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			want: []string{"clinic@f.feature:3:21", "clinic@f.feature:3:21"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
