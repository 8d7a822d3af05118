package scenario

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/steps"
)

// dumpFeature renders a loaded feature for golden files: every field a
// run depends on, positions as @line:col.
func dumpFeature(s *Suite) string {
	var b strings.Builder
	fmt.Fprintf(&b, "suite %q @%d:%d tags=%q\n", s.Name, s.Pos.Line, s.Pos.Col, s.Tags)
	for _, sc := range s.Scenarios {
		fmt.Fprintf(&b, "\nscenario %q @%d:%d\n", sc.Name, sc.Pos.Line, sc.Pos.Col)
		rs := sc.Stats.Resolve()
		fmt.Fprintf(&b, "  tags=%q agent=%q env=%q repeat=%d pass_rate=%g", sc.Tags, sc.Agent, sc.Env, rs.Repeat, rs.PassRate)
		if rs.Sequential() {
			fmt.Fprintf(&b, " confidence=%g margin=%g", rs.Confidence, rs.Margin)
		}
		if q := sc.Quarantine; q != nil {
			fmt.Fprintf(&b, " quarantine=%s@%d:%d reason=%q", q.UntilText(), q.Pos.Line, q.Pos.Col, q.Reason)
		}
		if sc.Retries != nil {
			fmt.Fprintf(&b, " retries=%d", *sc.Retries)
		}
		if sc.Timeout != 0 {
			fmt.Fprintf(&b, " timeout=%s", sc.Timeout)
		}
		if sc.Skip != "" {
			fmt.Fprintf(&b, " skip=%q", sc.Skip)
		}
		b.WriteString("\n")
		st := sc.Start
		fmt.Fprintf(&b, "  start @%d:%d channel=%q variant=%q attrs=%s", st.Pos.Line, st.Pos.Col, st.Channel, st.Variant, sortedMap(st.IntegrationAttributes))
		if st.Via != "" {
			fmt.Fprintf(&b, " via=%q @%d:%d", st.Via, st.ViaPos.Line, st.ViaPos.Col)
		}
		if st.ASRLang != "" || st.TTSLang != "" {
			fmt.Fprintf(&b, " asr=%q tts=%q", st.ASRLang, st.TTSLang)
		}
		if st.StreamingPos != (diag.Pos{}) {
			fmt.Fprintf(&b, " streaming=%t @%d:%d", st.Streaming, st.StreamingPos.Line, st.StreamingPos.Col)
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "  vars=%s\n", sortedMap(sc.Vars))
		for _, step := range sc.Steps {
			fmt.Fprintf(&b, "  @%d:%d %s [%s]\n", step.Pos.Line, step.Pos.Col, step.Text, step.Kind)
			switch step.Kind {
			case steps.Say:
				fmt.Fprintf(&b, "    say %q silent=%t\n", step.Say, step.Silent)
			case steps.Check:
				if step.Greeting {
					b.WriteString("    on the greeting\n")
				}
				fmt.Fprintf(&b, "    expect%s", strings.ReplaceAll(dump(expectOf(step)), "\n  ", "\n      "))
			case steps.Confirm:
				c, _ := step.Confirm(asWritten)
				fmt.Fprintf(&b, "    confirm%s", strings.ReplaceAll(dump(c), "\n  ", "\n      "))
				if step.Webhooks != nil {
					fmt.Fprintf(&b, "    webhooks=%q\n", step.Webhooks)
				}
			case steps.Capture:
				fmt.Fprintf(&b, "    capture%s", strings.ReplaceAll(dump(step.Capture), "\n  ", "\n      "))
			case steps.Probe:
				fmt.Fprintf(&b, "    probe%s", strings.ReplaceAll(dump(step.Probe), "\n  ", "\n      "))
			case steps.CallStatus:
				fmt.Fprintf(&b, "    status%s", strings.ReplaceAll(dump(step.Status), "\n  ", "\n      "))
			}
		}
	}
	return b.String()
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func loadFeatureFile(t *testing.T, path string) (*Suite, string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, ds := loadFeature(filepath.ToSlash(path), src)
	return s, renderDiags(ds)
}

// TestLoadFeatureValid loads every feature under testdata/features/valid
// and compares its model (positions, outlines, Rule, Background, tags on
// Examples, tables, DocStrings, tag parameters) with the golden file.
func TestLoadFeatureValid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/features/valid/*.feature")
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, diags := loadFeatureFile(t, f)
			if s == nil {
				t.Fatalf("not loaded:\n%s", diags)
			}
			golden.Check(t, strings.TrimSuffix(f, ".feature")+".golden", []byte(diags+dumpFeature(s)))
		})
	}
}

// TestLoadFeatureInvalid compares the diagnostics of broken features,
// file:line:col and hints included, with the golden files.
func TestLoadFeatureInvalid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/features/invalid/*.feature")
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, diags := loadFeatureFile(t, f)
			if s != nil {
				t.Errorf("loaded despite errors:\n%s", diags)
			}
			if !strings.Contains(diags, filepath.ToSlash(f)+":") {
				t.Errorf("diagnostics without positions:\n%s", diags)
			}
			golden.Check(t, strings.TrimSuffix(f, ".feature")+".golden", []byte(diags))
		})
	}
}

// TestStepsListsEveryTagParameter holds `agenttest steps` to the tag
// parameters the loader reads: a designer learns the tags from that
// listing, so one it leaves out is one nobody finds.
func TestStepsListsEveryTagParameter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := steps.New().Write(&b); err != nil {
		t.Fatal(err)
	}
	_, tags, ok := strings.Cut(b.String(), "\nTags on a Feature")
	if !ok {
		t.Fatalf("the listing has no line of tags:\n%s", b.String())
	}
	for _, p := range tagParams {
		if !strings.Contains(tags, "@"+p+":") {
			t.Errorf("agenttest steps does not list the tag @%s:", p)
		}
	}
}

// TestMisplacedTagsReparseBound holds the parses a file of misplaced tags
// costs to maxTagReparses more than one: the first that many are one
// error each, and the ones after them are reported as the parser says.
func TestMisplacedTagsReparseBound(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString("Feature: f\n  Scenario: a\n")
	for range maxTagReparses + 2 {
		src.WriteString("    @wip\n    When the user says \"hi\"\n")
	}
	s, ds := loadFeature("f.feature", []byte(src.String()))
	if s != nil {
		t.Fatal("loaded despite misplaced tags")
	}
	got := renderDiags(ds)
	if n := strings.Count(got, "tags are not allowed on the step"); n != maxTagReparses {
		t.Errorf("%d misplaced tags reported, want %d:\n%s", n, maxTagReparses, got)
	}
	if !strings.Contains(got, "invalid Gherkin") {
		t.Errorf("the errors past the bound are not reported:\n%s", got)
	}
}

// TestLongGherkinLine holds a feature file with a line longer than
// Gherkin's scanner reads to an error at that line, where the parser
// dereferenced a nil line and the file was an "internal error while
// loading" without a position; a line of the longest length Gherkin
// reads still loads, whatever its line ending and wherever it is.
// A feature file holds text, as a YAML suite must: a byte that is not
// UTF-8 or a control character YAML refuses is an error at its place,
// where a feature sent a NUL or an escape sequence to the agent and into
// every report while YAML refused the same step.
func TestFeatureNotText(t *testing.T) {
	t.Parallel()
	const top = "Feature: f\n  Scenario: a\n"
	said := func(text string) string {
		return top + "    When the user says \"" + text + "\"\n    Then the agent's reply contains \"x\"\n"
	}
	for _, tc := range []struct {
		name, src string
		err       string // "" when the file loads
	}{
		{"plain", said("hi there"), ""},
		{"replacement character written out", said("hi \ufffd"), ""},
		{"on the first line", "\x01Feature: f\n  Scenario: a\n    When the user says \"hi\"\n", "f.feature:1:1: control character U+0001 is not allowed"},
		{"the last byte", top + "    When the user says \"hi\"\n\x00", "f.feature:4:1: control character U+0000 is not allowed"},
		{"tab", said("hi\tthere"), ""},
		{"next line", said("hi\u0085there"), ""},
		{"no-break space", said("hi\u00a0thère"), ""},
		{"not UTF-8", said("hi\xffthere"), "f.feature:3:27: invalid UTF-8 (save the file as UTF-8 text)"},
		{"NUL", said("hi\x00there"), "f.feature:3:27: control character U+0000 is not allowed"},
		{"escape", said("é\x1b[31m"), "f.feature:3:26: control character U+001B is not allowed"},
		{"form feed", said("hi\fthere"), "f.feature:3:27: control character U+000C is not allowed"},
		{"DEL", said("hi\x7f"), "f.feature:3:27: control character U+007F is not allowed"},
		{"C1", said("hi\u009bthere"), "f.feature:3:27: control character U+009B is not allowed"},
		{"not a character", said("hi\uffff"), "f.feature:3:27: control character U+FFFF is not allowed"},
		{"the other not a character", said("hi\ufffe"), "f.feature:3:27: control character U+FFFE is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := tc.src
			s, ds := loadFeature("f.feature", []byte(src))
			got := renderDiags(ds)
			if tc.err == "" {
				if s == nil {
					t.Fatalf("not loaded:\n%s", got)
				}
				return
			}
			if s != nil || !strings.Contains(got, tc.err) {
				t.Errorf("loaded: %v, diagnostics:\n%s\nwant %q", s != nil, got, tc.err)
			}
		})
	}
}

func TestLongGherkinLine(t *testing.T) {
	t.Parallel()
	step := func(n int) string { // a step line of n bytes
		const head = `    When the user says "`
		return head + strings.Repeat("x", n-len(head)-1) + `"`
	}
	const top = "Feature: f\n  Scenario: a\n"
	const then = "    Then the agent's reply contains \"x\""
	for _, tc := range []struct {
		name, src string
		err       string // "" when the file loads
	}{
		{"longest", top + step(maxGherkinLine) + "\n" + then + "\n", ""},
		{"longest last line", top + then + "\n" + step(maxGherkinLine), ""},
		{"longest CRLF", strings.ReplaceAll(top, "\n", "\r\n") + step(maxGherkinLine-1) + "\r\n" + then + "\r\n", ""},
		{"one byte more", top + step(maxGherkinLine+1) + "\n" + then + "\n",
			"f.feature:3:1: invalid Gherkin: line is 65536 bytes long: Gherkin reads lines of at most 65535 bytes"},
		{"one byte more, last line", top + then + "\n" + step(maxGherkinLine+1),
			"f.feature:4:1: invalid Gherkin: line is 65536 bytes long: Gherkin reads lines of at most 65535 bytes"},
		{"one byte more, after a blank line", top + "\n" + step(maxGherkinLine+1) + "\n" + then + "\n",
			"f.feature:4:1: invalid Gherkin: line is 65536 bytes long: Gherkin reads lines of at most 65535 bytes"},
		{"one byte more, CRLF", strings.ReplaceAll(top, "\n", "\r\n") + step(maxGherkinLine) + "\r\n" + then + "\r\n",
			"f.feature:3:1: invalid Gherkin: line is 65536 bytes long: Gherkin reads lines of at most 65535 bytes"},
		{"megabytes", top + step(2<<20) + "\n",
			"f.feature:3:1: invalid Gherkin: line is 2097152 bytes long: Gherkin reads lines of at most 65535 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ds := loadFeature("f.feature", []byte(tc.src))
			_, docDiags := ParseFeatureDoc("f.feature", []byte(tc.src))
			got, gotDoc := renderDiags(ds), renderDiags(docDiags)
			if tc.err == "" {
				if s == nil || docDiags.HasErrors() {
					t.Fatalf("not loaded:\n%s%s", got, gotDoc)
				}
				return
			}
			if s != nil {
				t.Errorf("loaded despite the long line")
			}
			for _, out := range []string{got, gotDoc} {
				if !strings.Contains(out, tc.err) || strings.Contains(out, "internal error") {
					t.Errorf("diagnostics:\n%s\nwant %q", out, tc.err)
				}
			}
		})
	}
}

// TestPickleTotalCountsPickles holds pickleTotal to the pickles Gherkin
// builds: Backgrounds of a Feature and of a Rule, outlines with several
// Examples blocks (one without a header, which makes no pickles), tables,
// DocStrings and a scenario without steps (which gets no Background).
func TestPickleTotalCountsPickles(t *testing.T) {
	t.Parallel()
	src := `Feature: f
  Background:
    Given the channel "WEBCHAT"
    And the integration attributes:
      | tier | gold |
      | vip  | yes  |
  Scenario: plain
    When the user says "hi"
  Scenario: empty
  Scenario Outline: o <c>
    When the user says:
      """
      ` + strings.Repeat("<c> ", 1008) + `
      """
    Then the agent's reply contains "x"
    Examples:
      | c |
      | 1 |
      | 2 |
    Examples:
    Examples:
      | c |
      | 3 |
  Rule: r
    Background:
      Given the environment "sandbox"
    Scenario: in rule
      When the user says "hi"
      Then the state includes:
        | key | value |
        | a   | 1     |
`
	doc, pickles, err := parseFeature("f.feature", []byte(src), (&messages.Incrementing{}).NewId)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, p := range pickles {
		for _, st := range p.Steps {
			want++
			if st.Argument != nil && st.Argument.DataTable != nil {
				for _, row := range st.Argument.DataTable.Rows {
					want += len(row.Cells)
				}
			}
			if st.Argument != nil && st.Argument.DocString != nil {
				// The outline's DocString as written, not as filled in:
				// 63 units of 64 bytes, which 63 or 65 would count as 64
				// or 62.
				want += len(strings.Repeat("<c> ", 1008)) / 64
			}
		}
	}
	if got, at := pickleTotal(doc, math.MaxInt); got != want || at != nil {
		t.Errorf("pickleTotal = %d, %v; the pickles cost %d", got, at, want)
	}
}

// TestFeatureTooComplex holds a feature file whose Background or outline
// expands to more than maxPickleCost steps and cells to one error at the
// scenario that crosses the bound, reported before Gherkin builds the
// pickles: a 179 KB outline of 4,000 steps and 4,000 rows took 48 s and
// 7 GB to lint. A file at the bound is not refused.
func TestFeatureTooComplex(t *testing.T) {
	t.Parallel()
	repeat := func(s string, n int) string { return strings.Repeat(s, n) }
	rows := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "      | v%d |\n", i)
		}
		return b.String()
	}
	scenarios := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "  Scenario: s%d\n    When the user says \"hi\"\n", i)
		}
		return b.String()
	}
	const step = "    When the user says \"<c>\"\n"
	for _, tc := range []struct {
		name, src string
		at        string // "" when within the bound
	}{
		// 1000 scenarios of 999 Background steps and 1 step.
		{"background at the bound", "Feature: f\n  Background:\n" + repeat("    Given the channel \"WEBCHAT\"\n", 999) + scenarios(1000), ""},
		// The 1000th scenario takes the total to 1000 × 1001.
		{"background", "Feature: f\n  Background:\n" + repeat("    Given the channel \"WEBCHAT\"\n", 1000) + scenarios(1000), "f.feature:3001:3:"},
		{"rule background", "Feature: f\n  Rule: r\n    Background:\n" + repeat("      Given the channel \"WEBCHAT\"\n", 1000) +
			strings.ReplaceAll(scenarios(1000), "\n  ", "\n    "), "f.feature:3002:5:"},
		// A Rule before it holds little: the rules after the first count too.
		{"second rule", "Feature: f\n  Rule: q\n    Scenario: first\n      When the user says \"hi\"\n  Rule: r\n    Background:\n" +
			repeat("      Given the channel \"WEBCHAT\"\n", 1000) + strings.ReplaceAll(scenarios(1000), "\n  ", "\n    "), "f.feature:3005:5:"},
		{"outline at the bound", "Feature: f\n  Scenario Outline: o <c>\n" + repeat(step, 1000) + "    Examples:\n      | c |\n" + rows(1000), ""},
		{"outline", "Feature: f\n  Scenario Outline: o <c>\n" + repeat(step, 1000) + "    Examples:\n      | c |\n" + rows(1001), "f.feature:2:3:"},
		{"table cells", "Feature: f\n  Scenario Outline: o <c>\n    Given the integration attributes:\n" + repeat("      | a | b |\n", 2000) +
			"    Examples:\n      | c |\n" + rows(250), "f.feature:2:3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.at == "" {
				doc, err := gherkin.ParseGherkinDocumentForLanguage(strings.NewReader(tc.src), gherkin.DefaultDialect, (&messages.Incrementing{}).NewId)
				if err != nil {
					t.Fatal(err)
				}
				if total, at := pickleTotal(doc, maxPickleCost); total != maxPickleCost || at != nil {
					t.Errorf("pickleTotal = %d, %v; want %d, within the bound", total, at, maxPickleCost)
				}
				return
			}
			s, ds := loadFeature("f.feature", []byte(tc.src))
			_, docDiags := ParseFeatureDoc("f.feature", []byte(tc.src))
			if s != nil {
				t.Errorf("loaded despite expanding to more than %d steps", maxPickleCost)
			}
			want := tc.at + " file is too complex to load: its scenarios expand to more than 1000000 steps and table cells"
			for _, out := range []string{renderDiags(ds), renderDiags(docDiags)} {
				if !strings.Contains(out, want) || strings.Count(out, "\n") > 3 {
					t.Errorf("diagnostics:\n%s\nwant one: %q", out, want)
				}
			}
		})
	}
}

// TestCompileStepsFindsItsPickle compiles pickles another parser made
// (godog's, with other ids) against the document: each must be compiled
// as the row it is, and only the steps ours accepts are in the program.
func TestCompileStepsFindsItsPickle(t *testing.T) {
	t.Parallel()
	// The rows differ only in the doc string: same name, same step texts.
	const src = `Feature: f
  Scenario Outline: o
    Given my fixture is loaded
    When the user says:
      """
      <text>
      """
    Then the agent's reply contains "x"
    Examples:
      | text |
      | one  |
      | two  |
`
	doc, theirs := docAndOtherPickles(t, src, 2)
	ours := func(text string) bool { return text != "my fixture is loaded" }
	for i, want := range []string{"one", "two"} {
		sc, diags := doc.CompileSteps("f.feature", theirs[i], ours)
		if sc == nil {
			t.Fatalf("row %s: %s", want, renderDiags(diags))
		}
		if wantName := "o [text=" + want + "]"; sc.Name != wantName {
			t.Errorf("row %s compiled as %q, want %q", want, sc.Name, wantName)
		}
		var kinds []string
		for _, st := range sc.Steps {
			kinds = append(kinds, st.Kind.String())
		}
		if got := strings.Join(kinds, " "); got != "say check" {
			t.Errorf("row %s: program %s, want say check", want, got)
		}
		if say := stepOf(sc, steps.Say); say == nil || say.Say != want {
			t.Errorf("row %s says %+v", want, say)
		}
	}
}

// TestCompileStepsWithoutItsDocument: a pickle the document does not hold
// (or no document at all) is compiled from the pickle alone, and a
// problem with one of its tags is reported at the file, never without a
// position or as an internal error.
func TestCompileStepsWithoutItsDocument(t *testing.T) {
	t.Parallel()
	p := &messages.Pickle{Name: "elsewhere", Uri: "f.feature", AstNodeIds: []string{"s1"},
		Tags: []*messages.PickleTag{{Name: "@smoke", AstNodeId: "t1"}, {Name: "@repeat:0", AstNodeId: "t2"},
			{Name: "@quarantine:2026-12-31", AstNodeId: "t3"}},
		Steps: []*messages.PickleStep{{Text: `the user says "hi"`, Type: messages.PickleStepType_ACTION}}}
	doc, diags := ParseFeatureDoc("f.feature", []byte("Feature: f\n  Scenario: a\n    When the user says \"hi\"\n"))
	if diags.HasErrors() {
		t.Fatal(renderDiags(diags))
	}
	for _, d := range []*FeatureDoc{nil, doc} {
		sc, diags := d.CompileSteps("f.feature", p, nil)
		if sc != nil {
			t.Errorf("compiled despite @repeat:0: %+v", sc)
		}
		if got, want := renderDiags(diags), "f.feature: tag @repeat:0: repeat must be a whole number, 1 or more\n"+
			"f.feature: @quarantine needs a reason (say why in the scenario's description: the lines right under Scenario:)\n"; got != want {
			t.Errorf("diagnostics\n%s\nwant\n%s", got, want)
		}
	}
}

// TestParseFeatureDocEdges: the document godog's step hooks compile
// against reads what Load reads: a file saved with a byte order mark,
// and a file with no Feature yet (no scenario to compile, and no
// internal error).
func TestParseFeatureDocEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src string }{
		{"byte order mark", "\ufeffFeature: f\n  Scenario: a\n    When the user says \"hi\"\n"},
		{"no Feature", "# to be written\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, diags := ParseFeatureDoc("f.feature", []byte(tc.src))
			if doc == nil || len(diags) > 0 {
				t.Errorf("document %v, diagnostics:\n%s", doc != nil, renderDiags(diags))
			}
		})
	}
}

// TestCompileStepsTellsRowsByTags: two Examples blocks with the same row
// make pickles of one name and one text, told apart by their tags; each
// compiles with its own. One block's tags are the start of the other's:
// before the tags' count was compared, the shorter list matched the
// longer one's pickle.
func TestCompileStepsTellsRowsByTags(t *testing.T) {
	t.Parallel()
	const src = `Feature: f
  Scenario Outline: o
    When the user says "<w>"

    @first
    Examples:
      | w  |
      | hi |

    @first @second
    Examples:
      | w  |
      | hi |
`
	doc, theirs := docAndOtherPickles(t, src, 2)
	for i, want := range []string{"first", "second"} {
		sc, _ := doc.CompileSteps("f.feature", theirs[i], nil)
		if sc == nil || !slices.Contains(sc.Tags, want) || sc.Pos.Line != 8+5*i {
			t.Errorf("row %d compiled as %+v, want tag %s at line %d", i, sc, want, 8+5*i)
		}
	}
}

// docAndOtherPickles parses src for CompileSteps and, as another parser
// would (godog's, with other ids), into its n pickles.
func docAndOtherPickles(t *testing.T, src string, n int) (*FeatureDoc, []*messages.Pickle) {
	t.Helper()
	doc, diags := ParseFeatureDoc("f.feature", []byte(src))
	if diags.HasErrors() {
		t.Fatal(renderDiags(diags))
	}
	id := 1000
	_, theirs, err := parseFeature("f.feature", []byte(src), func() string { id++; return fmt.Sprint(id) })
	if err != nil || len(theirs) != n {
		t.Fatalf("%d pickles, %v", len(theirs), err)
	}
	return doc, theirs
}

// CompileSteps tells pickles of the same name and step texts apart by
// their tables, cell by cell: cells "a","bc" are not "ab","c".
func TestCompileStepsTellsTablesApart(t *testing.T) {
	t.Parallel()
	const src = `@agent:restaurant
Feature: f
  Scenario: o
    Then the state includes:
      | a | bc |

  Scenario: o
    Then the state includes:
      | ab | c |
`
	doc, theirs := docAndOtherPickles(t, src, 2)
	for i, want := range []int{3, 7} {
		sc, diags := doc.CompileSteps("f.feature", theirs[i], nil)
		if sc == nil || sc.Pos.Line != want {
			t.Errorf("pickle %d compiled as %+v (%s), want line %d", i, sc, renderDiags(diags), want)
		}
	}
}

// A tag of a Rule is reported where it is written, as a Feature's or a
// Scenario's is, not at the scenario it applies to.
func TestRuleTagAtItsPosition(t *testing.T) {
	t.Parallel()
	src := "@agent:restaurant\nFeature: f\n  @smoke,@fast\n  Rule: r\n    Scenario: a\n      When the user says \"hi\"\n      Then the agent's reply contains \"Welcome\"\n"
	_, ds := loadFeature("f.feature", []byte(src))
	if got := renderDiags(ds); !strings.HasPrefix(got, `f.feature:3:3: invalid tag "@smoke,"`) {
		t.Errorf("diagnostics:\n%s", got)
	}
}

// A scenario's name is trimmed of the spaces Gherkin leaves (a tab at
// its end), as a YAML scenario's is; a name an outline's columns put a
// line end in is refused once, at the first such cell of its row that the
// name reads (not z's, which only a step could read).
func TestFeatureScenarioNames(t *testing.T) {
	t.Parallel()
	s, ds := loadFeature("f.feature", []byte("@agent:restaurant\nFeature: f\n  Scenario: a\t\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n"))
	if s == nil || s.Scenarios[0].Name != "a" {
		t.Fatalf("scenario names %v:\n%s", s, renderDiags(ds))
	}
	src := "@agent:restaurant\nFeature: f\n  Scenario Outline: <a> <b>\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n\n    Examples:\n      | z    | b    | a    |\n      | p\\nq | r\\ns | x\\ny |\n"
	_, ds = loadFeature("f.feature", []byte(src))
	if got := renderDiags(ds); !strings.Contains(got, "f.feature:9:16: scenario name holds control character U+000A") || strings.Count(got, "scenario name holds") != 1 {
		t.Errorf("diagnostics:\n%s", got)
	}
}

// A reference in a step's text is at its column, counted in characters;
// in an outline's step text or DocString that a row's value changed, at
// the step or at the DocString's first line: its offset in the
// substituted text is no column of the file.
func TestStepReferencePositions(t *testing.T) {
	t.Parallel()
	src := "@agent:restaurant\nFeature: f\n  Scenario: p\n    When the user says \"é ${nix}\"\n  Scenario Outline: o\n    When the user says \"<x> ${nope}\"\n    When the user says:\n      \"\"\"\n      <x> ${nada}\n      \"\"\"\n    Then the agent's reply contains \"Welcome\"\n\n    Examples:\n      | x                    |\n      | a rather long value  |\n"
	_, ds := loadFeature("f.feature", []byte(src))
	var got []string
	for _, d := range ds {
		got = append(got, d.Pos.String()+" "+d.Message[:strings.Index(d.Message, ":")])
	}
	want := []string{"f.feature:4:27 unknown variable ${nix}", "f.feature:6:5 unknown variable ${nope}", "f.feature:9:7 unknown variable ${nada}"}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics %q, want %q", got, want)
	}
}

// TestBackgroundPlaceholder: Gherkin fills only an outline's own steps
// from its Examples, so a <column> in a Background (the Feature's or a
// Rule's) would be sent as written; ${column} reads the row there.
func TestBackgroundPlaceholder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"feature background", "Feature: f\n  Background:\n    When the user says \"a table for <party>\"\n\n  Scenario Outline: o\n    Then the state \"party_size\" is \"<party>\"\n    Examples:\n      | party |\n      | 2     |\n",
			`f.feature:3:37: <party> is in a Background: Gherkin fills only the Scenario Outline's own steps from its Examples, so it would be sent as written (write ${party}, which reads the row in a Background too)`},
		{"rule background, doc string", "Feature: f\n  Rule: r\n    Background:\n      When the user says:\n        \"\"\"\n        for <party>\n        \"\"\"\n\n    Scenario Outline: o\n      Then the state \"party_size\" is \"<party>\"\n      Examples:\n        | party |\n        | 2     |\n",
			`f.feature:6:13: <party> is in a Background: Gherkin fills only the Scenario Outline's own steps from its Examples, so it would be sent as written (write ${party}, which reads the row in a Background too)`},
		// Not a column of any outline it runs before: text like any other.
		{"not a column", "Feature: f\n  Background:\n    When the user says \"a <b>\"\n\n  Scenario Outline: o\n    Then the state \"party_size\" is \"<party>\"\n    Examples:\n      | party |\n      | 2     |\n", ""},
		{"another rule's column", "Feature: f\n  Rule: a\n    Background:\n      When the user says \"for <party>\"\n    Scenario: s\n      Then the state \"x\" is \"y\"\n  Rule: b\n    Scenario Outline: o\n      When the user says \"<party>\"\n      Then the state \"party_size\" is \"<party>\"\n      Examples:\n        | party |\n        | 2     |\n", ""},
		{"a Rule's outline below the Feature's Background", "Feature: f\n  Background:\n    When the user says \"for <party>\"\n  Rule: r\n    Scenario Outline: o\n      Then the state \"party_size\" is \"<party>\"\n      Examples:\n        | party |\n        | 2     |\n",
			`f.feature:3:29: <party> is in a Background: Gherkin fills only the Scenario Outline's own steps from its Examples, so it would be sent as written (write ${party}, which reads the row in a Background too)`},
		{"written ${party}", "Feature: f\n  Background:\n    When the user says \"a table for ${party}\"\n\n  Scenario Outline: o\n    Then the state \"party_size\" is \"<party>\"\n    Examples:\n      | party |\n      | 2     |\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := loadFeature("f.feature", []byte(tc.src))
			var got []string
			for _, d := range ds {
				if d.Severity == diag.Error {
					got = append(got, fmt.Sprintf("%s: %s (%s)", d.Pos, d.Message, d.Hint))
				}
			}
			if want := []string{tc.want}; tc.want == "" && len(got) != 0 || tc.want != "" && !slices.Equal(got, want) {
				t.Errorf("errors %q, want %q", got, tc.want)
			}
		})
	}
}
