package report

import (
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
)

// MaxPerFile is how many problems of one file WriteDiagnostics prints.
const MaxPerFile = 50

// WriteDiagnostics prints load and lint problems the way compilers do:
//
//	suites/x.yaml:3:5: unknown key "expct" (did you mean "expect"?)
//	   3 |     expct:
//	     |     ^
//
// then a count line ("2 errors, 1 warning"). At most MaxPerFile problems
// of one file are printed, then "…and N more in FILE": a file generated
// wrong can hold tens of thousands, and the first ones say what is wrong.
// The count line counts them all. The source line comes from
// the diagnostic's Source when set, else from src (which may be nil, or
// return nil for a file it cannot read: the line is then left out). Colour
// marks the position and the severity when color is set. It returns
// nothing: diagnostics go to the terminal, where a failed write has nowhere
// better to be reported.
func WriteDiagnostics(w io.Writer, diags diag.Diagnostics, src func(file string) []byte, color bool) {
	st := style{color: color}
	var b strings.Builder
	cache := map[string][]string{}
	lineOf := func(p diag.Pos) (string, bool) {
		if src == nil || p.File == "" || p.Line <= 0 {
			return "", false
		}
		lines, ok := cache[p.File]
		if !ok {
			if data := src(p.File); data != nil {
				lines = strings.Split(string(data), "\n")
			}
			cache[p.File] = lines
		}
		if p.Line > len(lines) {
			return "", false
		}
		return strings.TrimRight(lines[p.Line-1], "\r"), true
	}
	errs, warns := 0, 0
	shown := map[string]int{}
	hidden, hiddenFile := 0, ""
	flushHidden := func() {
		if hidden > 0 {
			fmt.Fprintf(&b, "…and %d more in %s\n", hidden, hiddenFile)
			hidden = 0
		}
	}
	for _, d := range diags {
		code := sgrRed
		if d.Severity == diag.Warning {
			warns++
			code = sgrYellow
		} else {
			errs++
		}
		if d.Pos.File != hiddenFile {
			flushHidden()
		}
		if f := d.Pos.File; f != "" {
			if shown[f] >= MaxPerFile {
				hidden, hiddenFile = hidden+1, f
				continue
			}
			shown[f]++
		}
		head := oneLine(d.String())
		if pos := oneLine(d.Pos.String()); pos != "" && strings.HasPrefix(head, pos+":") {
			head = st.paint(sgrBold, pos+":") + st.paint(code, strings.TrimPrefix(head, pos+":"))
		} else {
			head = st.paint(code, head)
		}
		b.WriteString(head)
		b.WriteString("\n")
		line, col, ok := d.Source, cmp.Or(d.SourceCol, d.Pos.Col), d.Source != ""
		if !ok {
			line, ok = lineOf(d.Pos)
			col = d.Pos.Col
		}
		if ok && d.Pos.Line > 0 {
			num := strconv.Itoa(d.Pos.Line)
			gutter := strings.Repeat(" ", len(num))
			line, col := diag.Excerpt(line, col)
			fmt.Fprintf(&b, " %s | %s\n", num, oneLine(line))
			if col > 0 {
				fmt.Fprintf(&b, " %s | %s%s\n", gutter, caretPad(line, col), st.paint(code, "^"))
			}
		}
	}
	flushHidden()
	var counts []string
	if errs > 0 {
		counts = append(counts, fmt.Sprintf("%d %s", errs, plural(errs, "error", "errors")))
	}
	if warns > 0 {
		counts = append(counts, fmt.Sprintf("%d %s", warns, plural(warns, "warning", "warnings")))
	}
	if len(counts) > 0 {
		b.WriteString(strings.Join(counts, ", "))
		b.WriteString("\n")
	}
	io.WriteString(w, b.String()) //nolint:errcheck // see the doc comment
}

// caretPad is the blank space that puts a caret under column col (1-based,
// counted in runes, as yaml.v3 and Gherkin count) of line as oneLine
// shows it. Tabs are kept so that the caret lines up however wide the
// terminal draws them; a character shown escaped (a zero-width space is
// \u200b) takes the width of its escape.
func caretPad(line string, col int) string {
	var b strings.Builder
	i := 1
	for _, r := range line {
		if i >= col {
			break
		}
		switch c := string(r); {
		case r == '\t':
			b.WriteRune('\t')
		case escape.Needed(c, ""):
			b.WriteString(strings.Repeat(" ", len(escape.Line(c))))
		default:
			b.WriteRune(' ')
		}
		i++
	}
	for ; i < col; i++ {
		b.WriteRune(' ')
	}
	return b.String()
}
