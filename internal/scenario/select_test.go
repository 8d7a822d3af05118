package scenario

import (
	"slices"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/diag"
)

const outlineSuite = `suite: s
agent: a
scenarios:
  - name: greets
    examples:
      - {day: friday}
      - {day: monday}
    greeting: {response: {contains: "${day}"}}
  - name: plain
    greeting: {response: {contains: x}}
`

const outlineFeature = `Feature: f
  Scenario Outline: greets
    When the user says "<day>"
    Then the agent's reply contains "x"

    Examples:
      | day    |
      | friday |
      | monday |

  Scenario: plain
    When the user says "hi"
    Then the agent's reply contains "x"
`

// loadOutlines loads outlineSuite as s.yaml and outlineFeature as
// f.feature.
func loadOutlines(t *testing.T) []*Suite {
	t.Helper()
	fsys := fstest.MapFS{
		"s.yaml":    {Data: []byte(outlineSuite)},
		"f.feature": {Data: []byte(outlineFeature)},
	}
	suites, diags := Load(fsys, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return suites
}

// TestSelectAt: a scenario's line selects it, an outline's line all its
// rows, a row's line that row, in YAML and features alike; other files
// are not restricted.
func TestSelectAt(t *testing.T) {
	t.Parallel()
	suites := loadOutlines(t)
	names := func(sel Selection) []string {
		var out []string
		for _, s := range Select(suites, sel) {
			for _, sc := range s.Scenarios {
				out = append(out, s.Path+" "+sc.Name)
			}
		}
		return out
	}
	at := func(file string, lines ...int) Selection {
		var sel Selection
		for _, l := range lines {
			sel.At = append(sel.At, diag.Pos{File: file, Line: l})
		}
		return sel
	}
	for _, tc := range []struct {
		name string
		sel  Selection
		want []string
	}{
		{"outline line", at("s.yaml", 4), []string{"f.feature greets [day=friday]", "f.feature greets [day=monday]", "f.feature plain", "s.yaml greets [day=friday]", "s.yaml greets [day=monday]"}},
		{"row line", at("./s.yaml", 7), []string{"f.feature greets [day=friday]", "f.feature greets [day=monday]", "f.feature plain", "s.yaml greets [day=monday]"}},
		{"two lines of two files", Selection{At: []diag.Pos{{File: "s.yaml", Line: 9}, {File: "f.feature", Line: 8}}}, []string{"f.feature greets [day=friday]", "s.yaml plain"}},
		{"feature outline", at("f.feature", 2), []string{"f.feature greets [day=friday]", "f.feature greets [day=monday]", "s.yaml greets [day=friday]", "s.yaml greets [day=monday]", "s.yaml plain"}},
		{"cases", Selection{Cases: map[CaseRef]bool{{"s.yaml", "greets [day=monday]"}: true, {"f.feature", "plain"}: true}}, []string{"f.feature plain", "s.yaml greets [day=monday]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := names(tc.sel)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("selected\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	sel := Selection{At: []diag.Pos{{File: "s.yaml", Line: 4}, {File: "s.yaml", Line: 5}}, Cases: map[CaseRef]bool{{"s.yaml", "plain"}: true, {"s.yaml", "gone"}: true}}
	badAt, badCases := sel.Unmatched(suites)
	if len(badAt) != 1 || badAt[0].Line != 5 || len(badCases) != 1 || badCases[0].Name != "gone" {
		t.Errorf("Unmatched = %v, %v", badAt, badCases)
	}
	// The cases that are gone come sorted by file, then name, whatever
	// the order of the map: the message lists them so.
	gone := Selection{Cases: map[CaseRef]bool{{"t.yaml", "a"}: true, {"s.yaml", "z"}: true, {"s.yaml", "gone"}: true, {"r.yaml", "b"}: true}}
	if _, got := gone.Unmatched(suites); !slices.Equal(got, []CaseRef{{"r.yaml", "b"}, {"s.yaml", "gone"}, {"s.yaml", "z"}, {"t.yaml", "a"}}) {
		t.Errorf("Unmatched cases = %v, want them by file, then name", got)
	}
	if got := Lines(suites, "s.yaml"); !slices.Equal(got, []int{4, 6, 7, 9}) {
		t.Errorf("Lines = %v", got)
	}
}

// TestSelectWithin: a line inside a scenario (a turn, a check, a step, an
// Examples header: where a failure points) selects the scenario it is
// written in, all its rows for an outline; a row's line still selects its
// row. A line before the first scenario or past the file's end selects
// none, and Unmatched says so.
func TestSelectWithin(t *testing.T) {
	t.Parallel()
	suites := loadOutlines(t)
	for _, tc := range []struct {
		file string
		line int
		want []string // nil: unmatched
	}{
		{"s.yaml", 8, []string{"greets [day=friday]", "greets [day=monday]"}},
		{"s.yaml", 5, []string{"greets [day=friday]", "greets [day=monday]"}},
		{"s.yaml", 7, []string{"greets [day=monday]"}},
		{"s.yaml", 10, []string{"plain"}},
		{"s.yaml", 3, nil},
		{"s.yaml", 11, nil},
		{"f.feature", 12, []string{"plain"}},
		{"f.feature", 6, []string{"greets [day=friday]", "greets [day=monday]"}},
		{"f.feature", 9, []string{"greets [day=monday]"}},
		{"f.feature", 1, nil},
	} {
		sel := Selection{At: []diag.Pos{{File: tc.file, Line: tc.line}}}.Within(suites)
		var got []string
		for _, s := range Select(suites, sel) {
			if s.Path != tc.file {
				continue
			}
			for _, sc := range s.Scenarios {
				got = append(got, sc.Name)
			}
		}
		bad, _ := sel.Unmatched(suites)
		if tc.want == nil {
			if len(bad) != 1 || bad[0].Line != tc.line {
				t.Errorf("%s:%d: Unmatched %v, want the line itself", tc.file, tc.line, bad)
			}
			continue
		}
		if !slices.Equal(got, tc.want) || len(bad) != 0 {
			t.Errorf("%s:%d: selected %q, unmatched %v; want %q", tc.file, tc.line, got, bad, tc.want)
		}
	}
}

func TestParseName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arg   string
		match string
		want  bool
	}{
		{"books [day=friday]", "books [day=friday]", true},
		{"books [day=friday]", "books d", false},
		{"a.b", "axb", false},
		{"/a.b/", "axb", true},
		{"/", "x/y", true},
		{"/^x$/", "x", true},
	} {
		re, err := ParseName(tc.arg)
		if err != nil {
			t.Fatalf("%q: %v", tc.arg, err)
		}
		if got := re.MatchString(tc.match); got != tc.want {
			t.Errorf("ParseName(%q) on %q = %v, want %v", tc.arg, tc.match, got, tc.want)
		}
	}
	if _, err := ParseName("/(/"); err == nil {
		t.Error("ParseName(/(/) accepted a bad regex")
	}
}

// ruleFeature has a Background, a tagged scenario and two Rules, the
// first with a Background of its own, below an outline.
const ruleFeature = `Feature: f
  Background:
    Given the environment "sandbox"

  Scenario Outline: says bye
    When the user says "bye on <day>"
    Then the agent's reply contains "bye"

    Examples: days
      | day    |
      | friday |

  @tagged
  Scenario: plain
    When the user says "hi"
    Then the agent's reply contains "x"

  @rule
  Rule: r
    Rule text.

    Background:
      When the user says "hello"

    Scenario: in r
      Then the agent's reply contains "x"

    Scenario: also in r
      Then the agent's reply contains "y"

  Rule: empty
    Scenario Outline: no rows
      When the user says "<x>"
      Then the agent's reply contains "x"
      Examples:
        | x |
`

// TestSelectWithinRulesAndBackgrounds: a line of a Background (where its
// step's failure points) selects the scenarios it runs before, and a
// Rule's header or a scenario's tags the scenarios they apply to, as
// Cucumber's lines do; never the scenario written above them.
func TestSelectWithinRulesAndBackgrounds(t *testing.T) {
	t.Parallel()
	suites, diags := Load(fstest.MapFS{"r.feature": {Data: []byte(ruleFeature)}}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	all := []string{"says bye [day=friday]", "plain", "in r", "also in r"}
	for _, tc := range []struct {
		line int
		want []string // nil: unmatched
	}{
		{1, nil},
		{3, all},
		{13, []string{"plain"}},
		{16, []string{"plain"}},
		{18, []string{"in r", "also in r"}},
		{19, []string{"in r", "also in r"}},
		{20, []string{"in r", "also in r"}},
		{23, []string{"in r", "also in r"}},
		{26, []string{"in r"}},
		{29, []string{"also in r"}},
		{31, nil},
	} {
		sel := Selection{At: []diag.Pos{{File: "r.feature", Line: tc.line}}}.Within(suites)
		var got []string
		for _, s := range Select(suites, sel) {
			for _, sc := range s.Scenarios {
				got = append(got, sc.Name)
			}
		}
		bad, _ := sel.Unmatched(suites)
		if tc.want == nil {
			if len(bad) != 1 || bad[0].Line != tc.line {
				t.Errorf("%d: Unmatched %v, want the line itself", tc.line, bad)
			}
			continue
		}
		if !slices.Equal(got, tc.want) || len(bad) != 0 {
			t.Errorf("%d: selected %q, unmatched %v; want %q", tc.line, got, bad, tc.want)
		}
	}
}
