package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
)

func TestWriteDiagnostics(t *testing.T) {
	files := map[string]string{
		"suites/a.yaml": "suite: a\nscenarios:\n  - name: x\n    expct:\n\t\tbad: 1\n",
		// No line break at the end: its last line is a line.
		"suites/c.yaml": "suite: c\nscenarios: 3",
	}
	src := func(name string) []byte {
		if s, ok := files[name]; ok {
			return []byte(s)
		}
		return nil
	}
	diags := diag.Diagnostics{
		{Severity: diag.Error, Pos: pos("suites/a.yaml", 4, 5), Message: `unknown key "expct"`, Hint: `did you mean "expect"?`},
		{Severity: diag.Error, Pos: pos("suites/a.yaml", 5, 3), Message: "tabs are not allowed"},
		{Severity: diag.Warning, Pos: pos("suites/a.yaml", 1, 1), Message: "suite name shadows the file name"},
		{Severity: diag.Error, Pos: pos("suites/missing.yaml", 2, 7), Message: "cannot read the file"},
		{Severity: diag.Error, Pos: pos("features/b.feature", 9, 0), Message: "unknown step", Source: "    When the user sings"},
		{Severity: diag.Error, Message: "no suites found"},
		// A file's own problem, at no line: no source line, even with the
		// file at hand.
		{Severity: diag.Error, Pos: diag.Pos{File: "suites/a.yaml"}, Message: "the file repeats suite a"},
		{Severity: diag.Error, Pos: pos("suites/c.yaml", 2, 12), Message: "scenarios: want a list"},
		{Severity: diag.Warning, Pos: diag.Pos{File: "features/b.feature"}, Message: "no scenario tagged", Source: "Feature: b"},
	}
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		WriteDiagnostics(&b, diags, src, color)
		name := "diagnostics.txt"
		if color {
			name = "diagnostics-color.txt"
		}
		golden.Check(t, filepath.Join("testdata", name), b.Bytes())
	}
}

// TestWriteDiagnosticsCounts: the last line counts what there is, and is
// left out when there is nothing.
func TestWriteDiagnosticsCounts(t *testing.T) {
	warn := diag.Diagnostic{Severity: diag.Warning, Message: "w"}
	fail := diag.Diagnostic{Severity: diag.Error, Message: "e"}
	for _, tc := range []struct {
		diags diag.Diagnostics
		want  string
	}{
		{nil, ""},
		{diag.Diagnostics{warn}, "warning: w\n1 warning\n"},
		{diag.Diagnostics{fail, fail}, "e\ne\n2 errors\n"},
		{diag.Diagnostics{warn, fail, warn}, "warning: w\ne\nwarning: w\n1 error, 2 warnings\n"},
	} {
		var b bytes.Buffer
		WriteDiagnostics(&b, tc.diags, nil, false)
		if got := b.String(); got != tc.want {
			t.Errorf("%d diagnostics: got %q, want %q", len(tc.diags), got, tc.want)
		}
	}
}

func TestCaretPad(t *testing.T) {
	type testCase struct {
		line string
		col  int
		want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := caretPad(tc.line, tc.col); got != tc.want {
			t.Errorf("caretPad(%q, %d) = %q, want %q", tc.line, tc.col, got, tc.want)
		}
	}
	for name, tc := range map[string]testCase{
		"first column": {"abc", 1, ""},
		"spaces":       {"  key: v", 3, "  "},
		"tabs kept":    {"\t\tbad", 3, "\t\t"},
		"runes":        {"é€x", 3, "  "},
		"past the end": {"ab", 5, "    "},
		// Under the line as oneLine shows it: Hel\u200blo: bad.
		"an escaped character": {"Hel\u200blo: bad", 9, strings.Repeat(" ", 13)},
		"an escaped control":   {"a\x1bb", 4, "      "},
	} {
		t.Run(name, func(t *testing.T) { run(t, tc) })
	}
}

func TestShowValue(t *testing.T) {
	type testCase struct {
		in      string
		joiners bool // the failure's texts differ in joiners
		want    string
	}
	run := func(t *testing.T, tc testCase) {
		if got := (style{}).showValue(tc.in, "  ", tc.joiners); got != tc.want {
			t.Errorf("showValue(%q, joiners %v) = %q, want %q", tc.in, tc.joiners, got, tc.want)
		}
	}
	const coder = "\U0001F469\u200d\U0001F4BB"
	for name, tc := range map[string]testCase{
		"plain":          {"hello there", false, "hello there"},
		"empty":          {"", false, `""`},
		"trailing space": {"hi ", false, `"hi "`},
		"control":        {"a\x1bb", false, `"a\x1bb"`},
		"tab":            {"a\tb", false, `"a\tb"`},
		"multi-line":     {"a\nb", false, "|\n  a\n  b"},
		// A blank line of a block has no trailing indent.
		"multi-line, a blank line": {"a\n\nb", false, "|\n  a\n\n  b"},
		"zero-width space":         {"Hel\u200blo", false, `"Hel\u200blo"`},
		"tag characters":           {"ok\U000e0069", false, `"ok\U000e0069"`},
		"emoji sequence":           {coder + " ready", false, coder + " ready"},
		"emoji quoted":             {coder + " ", false, `"` + coder + ` "`},
		"joiners differing":        {coder + " ready", true, "\"\U0001F469\\u200d\U0001F4BB ready\""},
		"no joiner to show":        {"Hello", true, "Hello"},
		// %q writes a variation selector as it is: Go counts it as
		// printable.
		"variation selector differing":             {"I \u2764\ufe0f it", true, "\"I \u2764\\ufe0f it\""},
		"variation selector kept":                  {"I \u2764\ufe0f it ", false, "\"I \u2764\ufe0f it \""},
		"joiner beside an invalid byte":            {"\xff\u200c\u200d", false, "\"\\xff\u200c\u200d\""},
		"joiner beside an invalid byte, differing": {"\xff\u200c\u200d", true, `"\xff\u200c\u200d"`},
	} {
		t.Run(name, func(t *testing.T) { run(t, tc) })
	}
}

// A file with more problems than MaxPerFile shows the first ones, then how
// many more; the count line counts them all.
func TestWriteDiagnosticsCapsEachFile(t *testing.T) {
	var diags diag.Diagnostics
	for i := 1; i <= MaxPerFile+7; i++ {
		diags = diags.Errorf(pos("big.yaml", i, 1), "problem %d", i)
	}
	diags = diags.Errorf(pos("small.yaml", 1, 1), "only problem")
	var b bytes.Buffer
	WriteDiagnostics(&b, diags, nil, false)
	out := b.String()
	for _, want := range []string{"big.yaml:50:1: problem 50\n…and 7 more in big.yaml\nsmall.yaml:1:1: only problem\n58 errors\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "problem 51") {
		t.Errorf("problem 51 was printed")
	}
}

// TestWriteDiagnosticsEscapes: a problem quotes what the file holds, and
// the file's line is echoed: their control characters are escaped, never
// obeyed, and a CRLF file's line ends without its CR.
func TestWriteDiagnosticsEscapes(t *testing.T) {
	src := func(string) []byte { return []byte("suite: a\r\n\x1b]0;owned\x07: 1\r\n") }
	diags := diag.Diagnostics{
		{Severity: diag.Error, Pos: pos("a.yaml", 1, 1), Message: "suite a"},
		{Severity: diag.Error, Pos: pos("a.yaml", 2, 1), Message: "unknown key \"\x1b[2J\""},
	}
	var b bytes.Buffer
	WriteDiagnostics(&b, diags, src, false)
	want := "a.yaml:1:1: suite a\n 1 | suite: a\n   | ^\n" +
		"a.yaml:2:1: unknown key \"\\x1b[2J\"\n 2 | \\x1b]0;owned\\a: 1\n   | ^\n2 errors\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
