package scenario

import (
	"fmt"
	"strings"
	"testing"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/steps"
)

// pickleSteps renders pickles as the Cucumber report reads them: each
// step's type and text, with the keyword and line of its AST step.
func pickleSteps(doc *messages.GherkinDocument, pickles []*messages.Pickle) string {
	kw := map[string]string{}
	var all [][]*messages.Step
	children := doc.Feature.Children
	for len(children) > 0 {
		c := children[0]
		children = children[1:]
		switch {
		case c.Background != nil:
			all = append(all, c.Background.Steps)
		case c.Scenario != nil:
			all = append(all, c.Scenario.Steps)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				children = append(children, &messages.FeatureChild{Background: rc.Background, Scenario: rc.Scenario})
			}
		}
	}
	for _, sts := range all {
		for _, st := range sts {
			kw[st.Id] = st.Keyword
		}
	}
	locs := Locations(doc)
	var b strings.Builder
	for _, p := range pickles {
		fmt.Fprintf(&b, "%s tags=%d @%d\n", p.Name, len(p.Tags), locs[p.AstNodeIds[len(p.AstNodeIds)-1]].Line)
		for _, st := range p.Steps {
			fmt.Fprintf(&b, "  %s %s%s @%d\n", st.Type, kw[st.AstNodeIds[0]], st.Text, locs[st.AstNodeIds[0]].Line)
		}
	}
	return b.String()
}

// TestGherkinOfAYAMLSuite: each step of a YAML program reads as the
// Gherkin step it stands for, with its keyword, at its own line.
func TestGherkinOfAYAMLSuite(t *testing.T) {
	at := func(line int) diag.Pos { return diag.Pos{File: "s.yaml", Line: line, Col: 3} }
	s := &Suite{Path: "s.yaml", Name: "s", Scenarios: []*Scenario{nil, {Name: "a", Pos: at(2), Tags: []string{"smoke", "slow"}, Steps: []*steps.Step{
		{Kind: steps.Setup, Pos: at(3)},
		{Kind: steps.Probe, Pos: at(4)},
		{Kind: steps.Open, Pos: at(5)},
		{Kind: steps.Check, Pos: at(6), Greeting: true},
		{Kind: steps.Say, Pos: at(7), Say: " a  table\n for 4 "},
		{Kind: steps.Say, Pos: at(8), Silent: true},
		nil,
		{Kind: steps.Check, Pos: at(9)},
		{Kind: steps.Capture, Pos: at(10), Capture: &steps.CaptureSpec{Name: "ref", From: "state.code"}},
		{Kind: steps.CallStatus, Pos: at(11), Status: &steps.StatusSpec{Want: "success"}},
		{Kind: steps.Confirm, Pos: at(12)},
	}}}}
	n := 0
	doc, pickles, err := Gherkin(s, nil, func() string { n++; return fmt.Sprint(n) })
	if err != nil {
		t.Fatal(err)
	}
	want := `a tags=2 @2
  Context Given the session is set up @3
  Context Given a probe starts the conversation @4
  Context Given a conversation is opened @5
  Outcome Then the greeting meets the expectations of greeting: @6
  Action When the user says "a table for 4" @7
  Action When the user stays silent @8
  Outcome Then the reply meets the expectations of expect: @9
  Outcome Then state.code of the reply is captured as ${ref} @10
  Outcome Then the call ends with status success @11
  Outcome Then the platform's records meet the expectations of confirm: @12
`
	if got := pickleSteps(doc, pickles); got != want {
		t.Errorf("pickles:\n%s\nwant:\n%s", got, want)
	}
	if l := doc.Feature.Location; l.Line != 1 || l.Column != 1 {
		t.Errorf("feature at %d:%d, want 1:1 (a suite without a position)", l.Line, l.Column)
	}
	if got := StepText(s.Scenarios[1].Steps[1]); got != "Given a probe starts the conversation" {
		t.Errorf("StepText %q", got)
	}
}

// TestGherkinOfAFeatureSelection: the pickles of a feature are those of
// the scenarios selected, an outline's by row, Background and Rule steps
// at their own lines.
func TestGherkinOfAFeatureSelection(t *testing.T) {
	src := `Feature: f
  Background:
    Given the agent "a"

  Scenario: one
    When the user says "hi"

  Rule: r
    Background:
      Given the channel "WEB"

    Scenario Outline: two
      When the user says "<w>"

      Examples:
        | w   |
        | yes |
        | no  |
`
	s, ds := loadFeature("f.feature", []byte(src))
	if s == nil {
		t.Fatal(renderDiags(ds))
	}
	// The second row of the outline only.
	s.Scenarios = s.Scenarios[2:]
	n := 0
	doc, pickles, err := Gherkin(s, []byte(src), func() string { n++; return fmt.Sprint(n) })
	if err != nil {
		t.Fatal(err)
	}
	// The cucumber report's gherkinDocument names its file, as the
	// pickles do.
	if doc.Uri != "f.feature" {
		t.Errorf("document uri %q, want f.feature", doc.Uri)
	}
	if got := StepText(s.Scenarios[0].Steps[0]); got != `Given the agent "a"` {
		t.Errorf("StepText %q, want the step as written", got)
	}
	want := `two tags=0 @18
  Context Given the agent "a" @3
  Context Given the channel "WEB" @10
  Action When the user says "no" @13
`
	if got := pickleSteps(doc, pickles); got != want {
		t.Errorf("pickles:\n%s\nwant:\n%s", got, want)
	}
}

// TestParseErrorsAtTheEdges: the hints of a parse error hold on the
// first line of a file and on a last line without a line feed, and a
// `# language:` line below a blank one still sets the keywords.
func TestParseErrorsAtTheEdges(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"a step as the only line", `When the user says "hi"`,
			"f.feature:1:1: invalid Gherkin: expected: #EOF, #Language, #TagLine, #FeatureLine, #Comment, #Empty, got 'When the user says \"hi\"' (steps belong under Scenario: or Background:, and in a Scenario Outline above its Examples)\n"},
		{"tags on the last line's step", "Feature: f\n  Scenario: a\n    @t\n    When the user says \"hi\"",
			"f.feature:3:5: tags are not allowed on the step at line 4 (only a Feature, Rule, Scenario, Scenario Outline or Examples takes tags; tag the step's Scenario instead)\n"},
		{"tags on the first line", "@t\nWhen the user says \"hi\"\n",
			"f.feature:1:1: tags are not allowed on the step at line 2 (only a Feature, Rule, Scenario, Scenario Outline or Examples takes tags; tag the step's Scenario instead)\n" +
				"f.feature:2:1: invalid Gherkin: expected: #EOF, #Language, #TagLine, #FeatureLine, #Comment, #Empty, got 'When the user says \"hi\"' (steps belong under Scenario: or Background:, and in a Scenario Outline above its Examples)\n"},
		// Gherkin puts the end of a file without a last line feed on the
		// line after its last.
		{"tags at the end of the file", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n  @t",
			"f.feature:5:1: invalid Gherkin: unexpected end of file, expected: #TagLine, #RuleLine, #Comment, #Empty ()\n"},
		{"language below a comment", "# written by the booking team\n# language: fr\nFonctionnalité: f\n  Scénario: a\n    Quand the user says \"hi\"\n    quand the user says \"hi\"\n",
			"f.feature:6:5: invalid Gherkin: expected: #EOF, #TableRow, #DocStringSeparator, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got '    quand the user says \"hi\"' (did you mean Quand the user says \"hi\"? keywords are case-sensitive and followed by a space)\n"},
		// Only the file's head sets the language, as in Gherkin.
		{"a language comment in the body", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n    # language: fr\n    when the user says \"hi\"\n",
			"f.feature:5:5: invalid Gherkin: expected: #EOF, #TableRow, #DocStringSeparator, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got '    when the user says \"hi\"' (did you mean When the user says \"hi\"? keywords are case-sensitive and followed by a space)\n"},
		// Only the end of file is moved to the open doc string.
		{"another error above an open doc string", "Feature: f\n  Scenario: a\n    Given the integration attributes:\n      | a | b |\n      | c |\n    When the user says:\n      \"\"\"\n      hi\n",
			"f.feature:5:7: invalid Gherkin: inconsistent cell count within the table (this row has 1 cell, the table's first row (line 4) 2 cells: every row has a cell for each column, an empty one written | |)\n" +
				"f.feature:7:7: invalid Gherkin: unexpected end of file, expected: #DocStringSeparator, #Other (this \"\"\" is never closed: end the doc string with \"\"\" on a line of its own)\n"},
		// Only an end of file inside a doc string is moved: a
		// description line that starts like a separator opens none.
		{"a description line like a separator, tags at the end", "Feature: f\n  \"\"\" described\n  Scenario: a\n    When the user says \"hi\"\n  @t",
			"f.feature:6:1: invalid Gherkin: unexpected end of file, expected: #TagLine, #RuleLine, #Comment, #Empty ()\n"},
		// A description line like a separator opens no doc string: the
		// one left open is the step's, below it.
		{"a description line like a separator above an open doc string", "Feature: f\n  \"\"\" described\n  Scenario: a\n    When the user says:\n      \"\"\"\n      hi\n",
			"f.feature:5:7: invalid Gherkin: unexpected end of file, expected: #DocStringSeparator, #Other (this \"\"\" is never closed: end the doc string with \"\"\" on a line of its own)\n"},
		// A comment may stand between the step and its doc string.
		{"a comment between a step and its open doc string", "Feature: f\n  Scenario: a\n    When the user says:\n    # the text\n\n      ```\n      hi\n",
			"f.feature:6:7: invalid Gherkin: unexpected end of file, expected: #DocStringSeparator, #Other (this ``` is never closed: end the doc string with ``` on a line of its own)\n"},
		// A separator right after a closed doc string opens none (it is
		// an error of its own); the open one is the next step's.
		{"a stray separator after a doc string", "Feature: f\n  Scenario: a\n    When the user says:\n      \"\"\"\n      hi\n      \"\"\"\n      \"\"\"\n    Then the agent says:\n      \"\"\"\n      open\n",
			"f.feature:7:7: invalid Gherkin: expected: #EOF, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got '      \"\"\"' ()\n" +
				"f.feature:9:7: invalid Gherkin: unexpected end of file, expected: #DocStringSeparator, #Other (this \"\"\" is never closed: end the doc string with \"\"\" on a line of its own)\n"},
		// Gherkin closes a doc string at a line that starts with its
		// separator, text after it or not; the open one is the next.
		{"a doc string closed with text after its separator", "Feature: f\n  Scenario: a\n    When the user says:\n      \"\"\"\n      hi\n      \"\"\" trailing\n    Then the agent says:\n      \"\"\"\n      never closed\n",
			"f.feature:8:7: invalid Gherkin: unexpected end of file, expected: #DocStringSeparator, #Other (this \"\"\" is never closed: end the doc string with \"\"\" on a line of its own)\n"},
		// Gherkin says only that the counts differ: which, and against
		// which row.
		{"a table row with a cell missing", "Feature: f\n  Scenario: a\n    When the user says \"4 people\"\n    Then the state includes:\n      | party_size | 4 |\n      # the time\n      | time |\n",
			"f.feature:7:7: invalid Gherkin: inconsistent cell count within the table (this row has 1 cell, the table's first row (line 5) 2 cells: every row has a cell for each column, an empty one written | |)\n"},
		{"a table row with no | at its end", "Feature: f\n  Scenario: a\n    When the user says \"4 people\"\n    Then the state includes:\n      | party_size | 4 |\n      | time | 19:00\n",
			"f.feature:6:7: invalid Gherkin: inconsistent cell count within the table (this row has 1 cell, the table's first row (line 5) 2 cells: every row has a cell for each column, an empty one written | |; end the row with |)\n"},
		{"a table row with an escaped | and a cell too many", "Feature: f\n  Scenario: a\n    When the user says \"4 people\"\n    Then the state includes:\n      | a |\n      | b \\| c | d |\n",
			"f.feature:6:7: invalid Gherkin: inconsistent cell count within the table (this row has 2 cells, the table's first row (line 5) 1 cell: every row has a cell for each column, an empty one written | |)\n"},
		{"a table row ending in an escaped |", "Feature: f\n  Scenario: a\n    When the user says \"4 people\"\n    Then the state includes:\n      | a | b |\n      | c \\|\n",
			"f.feature:6:7: invalid Gherkin: inconsistent cell count within the table (this row has 0 cells, the table's first row (line 5) 2 cells: every row has a cell for each column, an empty one written | |; end the row with |)\n"},
		// Gherkin names the tag; the mistake is the word after its space.
		{"a tag with a space", "Feature: f\n  @smoke test\n  Scenario: a\n    When the user says \"hi\"\n",
			"f.feature:2:10: invalid Gherkin: A tag may not contain whitespace (a tag is one word: write @smoke-test for one tag, or @smoke @test for two)\n"},
		{"a tag with a space after its colon", "@agent: restaurant\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			"f.feature:1:9: invalid Gherkin: A tag may not contain whitespace (a tag is one word: write @agent:restaurant, with no space after the colon)\n"},
		{"a second tag with a space", "Feature: f\n  @a  @smoke\ttest  # why\n  Scenario: a\n    When the user says \"hi\"\n",
			"f.feature:2:14: invalid Gherkin: A tag may not contain whitespace (a tag is one word: write @smoke-test for one tag, or @smoke @test for two)\n"},
		{"language below a blank line", "\n# language: fr\nFonctionnalité: f\n  Scénario: a\n    Quand the user says \"hi\"\n    quand the user says \"hi\"\n",
			"f.feature:6:5: invalid Gherkin: expected: #EOF, #TableRow, #DocStringSeparator, #StepLine, #TagLine, #ExamplesLine, #ScenarioLine, #RuleLine, #Comment, #Empty, got '    quand the user says \"hi\"' (did you mean Quand the user says \"hi\"? keywords are case-sensitive and followed by a space)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := loadFeature("f.feature", []byte(tc.src))
			var b strings.Builder
			for _, d := range ds {
				fmt.Fprintf(&b, "%s: %s (%s)\n", d.Pos, d.Message, d.Hint)
			}
			if got := b.String(); got != tc.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestUndefinedStepHintInTheFilesLanguage: the closest steps an undefined
// step is offered are written with the keywords of the file's language,
// so that the fix parses there, and the keyword written weighs as in
// English (a turn for "Cuando I say", as for "When I say"); beyond
// English, the hint says that the steps' words are English.
func TestUndefinedStepHintInTheFilesLanguage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, lang, step, want string }{
		{"english", "", `When I say "hello"`, `closest defined steps: When the user says "hello"; `},
		// * is a keyword of every kind: the wording alone ranks.
		{"star", "", `* the agents say "x"`, `closest defined steps: Then the agent says "x"; `},
		{"spanish when", "# language: es\n", `Cuando I say "hello"`, `closest defined steps: Cuando the user says "hello"; `},
		{"spanish then", "# language: es\n", `Entonces the agents reply contain "x"`, `closest defined steps: Entonces the agent's reply contains "x"; `},
		{"french given, another of its words", "# language: fr\n", `Étant donné the agents "x"`, `closest defined steps: Soit the agent "x"; `},
		{"french words", "# language: fr\n", `Quand l'utilisateur dit "bonjour"`, `closest defined steps: Quand the user says "bonjour"; `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feature, scenario := "Feature", "Scenario"
			if tc.lang == "# language: es\n" {
				feature, scenario = "Característica", "Escenario"
			} else if tc.lang != "" {
				feature, scenario = "Fonctionnalité", "Scénario"
			}
			src := tc.lang + feature + ": f\n  " + scenario + ": a\n    " + tc.step + "\n"
			_, ds := loadFeature("f.feature", []byte(src))
			if len(ds) != 1 || !strings.HasPrefix(ds[0].Hint, tc.want) {
				t.Errorf("diagnostics %v: want one whose hint starts %q", ds, tc.want)
			}
			// Beyond English, the hint says the wording stays English:
			// the step may be worded in the file's language too.
			if len(ds) == 1 && strings.Contains(ds[0].Hint, "# language: sets the keywords only") != (tc.lang != "") {
				t.Errorf("hint %q: says the wording is English in a file of language %q", ds[0].Hint, tc.lang)
			}
		})
	}
}

// TestTagSpace: the word after a tag's space, and nothing for a line
// Gherkin's column does not show so (its contract, not relied on).
func TestTagSpace(t *testing.T) {
	for _, tc := range []struct {
		line     string
		col, at  int
		wantHint string
	}{
		{"@smoke test", 1, 8, "a tag is one word: write @smoke-test for one tag, or @smoke @test for two"},
		{"@agent: clinic", 1, 9, "a tag is one word: write @agent:clinic, with no space after the colon"},
		{"@smoke test", 0, 0, ""},
		{"@smoke test", 12, 0, ""},
		{"@smoke test", 2, 0, ""},
		{"@smoke", 1, 0, ""},
		{"@smoke ", 1, 0, ""},
		{"@smoke @test", 1, 0, ""},
		{"@smoke #test", 1, 0, ""},
	} {
		at, hint := tagSpace(tc.line, tc.col)
		if at != tc.at || hint != tc.wantHint {
			t.Errorf("tagSpace(%q, %d) = %d, %q; want %d, %q", tc.line, tc.col, at, hint, tc.at, tc.wantHint)
		}
	}
}
