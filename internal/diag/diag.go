// Package diag holds source positions and the diagnostics that carry them.
//
// Every user-facing problem in agenttest, whether a YAML key it does not know,
// a Gherkin step it cannot match or an expectation the agent broke, points at
// a place in a file. Positions are captured when a file is loaded (from
// yaml.Node and Gherkin locations) and never recovered later by scanning text.
//
// Loaders collect problems instead of stopping at the first one:
//
//	var diags diag.Diagnostics
//	diags = diags.Errorf(pos, "unknown key %q", key)
//	...
//	if diags.HasErrors() {
//		return nil, diags
//	}
package diag

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Pos is a position in a source file. Line and Col are 1-based; a zero Line
// means the position is unknown and only the file is meaningful.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// String renders the position as file:line:col, dropping the parts that are
// unknown.
func (p Pos) String() string {
	switch {
	case p.File == "" && p.Line == 0:
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	}
}

// IsZero reports whether the position says nothing at all.
func (p Pos) IsZero() bool { return p == Pos{} }

// Before orders positions by file, then line, then column.
func (p Pos) Before(q Pos) bool {
	if p.File != q.File {
		return p.File < q.File
	}
	if p.Line != q.Line {
		return p.Line < q.Line
	}
	return p.Col < q.Col
}

// Severity says whether a diagnostic stops a run.
type Severity int

const (
	// Error diagnostics make the file invalid; nothing is run.
	Error Severity = iota
	// Warning diagnostics are printed but do not stop a run.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in a file.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Pos      Pos      `json:"pos"`
	// Message says what is wrong, lower-case, without trailing punctuation.
	Message string `json:"message"`
	// Hint, when set, says how to fix it ("did you mean ...").
	Hint string `json:"hint,omitempty"`
	// Source is the offending line of the file, echoed under the message
	// (cut to its Excerpt when printed). Pos.Col is at SourceCol in it when
	// SourceCol is set: masking the keys on the line moves it
	// (MaskedExcerpt).
	// The whole line, not an excerpt: a key the cut went through would no
	// longer be found to be masked. Loaders keep a slice of the file's
	// text, so a file's thousands of diagnostics share its long lines.
	Source    string `json:"source,omitempty"`
	SourceCol int    `json:"source_col,omitempty"`
}

// ExcerptWidth is how many runes of a long source line a diagnostic
// shows; excerptBefore of them come before the column at fault.
const ExcerptWidth, excerptBefore = 120, 40

// Excerpt is the part of a source line a diagnostic shows, and the column
// col of the line in it: the whole line when it is short, else
// ExcerptWidth runes around col, with … where the line goes on. A
// generated or minified file can hold a line of megabytes, which the
// terminal would only scroll past, and which a file's thousands of
// diagnostics would each hold. An excerpt's excerpt is itself: a line
// no longer than an excerpt, its two … included, is shown whole.
func Excerpt(line string, col int) (string, int) {
	r, start, end := excerptRunes(line, col)
	if r == nil {
		return line, col
	}
	return excerptOf(r, start, end, col)
}

// excerptOf is the excerpt of runes r, [start, end), and col in it.
func excerptOf(r []rune, start, end, col int) (string, int) {
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
		col -= start - 1 // the … takes a column
	}
	b.WriteString(string(r[start:end]))
	if end < len(r) {
		b.WriteString("…")
	}
	return b.String(), col
}

// excerptRunes is the line's runes and the part of them Excerpt shows,
// [start, end); nil runes when it shows the whole line.
func excerptRunes(line string, col int) (r []rune, start, end int) {
	const whole = ExcerptWidth + 2
	if len(line) <= whole { // bytes: no more runes than that
		return nil, 0, 0
	}
	r = []rune(line)
	if len(r) <= whole {
		return nil, 0, 0
	}
	start = max(0, min(col-1-excerptBefore, len(r)-ExcerptWidth))
	return r, start, min(len(r), start+ExcerptWidth)
}

// MaskedExcerpt is the Excerpt of line with mask applied first (mask
// replaces secrets, as a secret.Redactor's String does), and col moved
// past the masks before it: a cut through a secret would leave a part of
// it that mask no longer knows, in the clear. reach is the most bytes a
// text mask replaces can span. A line can be megabytes and hold
// thousands of problems: only the part around col an excerpt shows is
// masked, with room on each side for a secret its edge cuts, widened
// until what is shown is clear of that room.
func MaskedExcerpt(line string, col int, mask func(string) string, reach int) (string, int) {
	at, past := 0, 0 // col's byte, and how many columns it lies past the end
	for n := 1; n < col; n++ {
		if at == len(line) {
			past = col - n
			break
		}
		_, w := utf8.DecodeRuneInString(line[at:])
		at += w
	}
	for m := reach + 4*(ExcerptWidth+2); ; m *= 2 {
		lo, hi := max(0, at-m), min(len(line), at+m)
		for lo > 0 && !utf8.RuneStart(line[lo]) {
			lo--
		}
		for hi < len(line) && !utf8.RuneStart(line[hi]) {
			hi++
		}
		wcol := col
		if col > 0 {
			wcol = utf8.RuneCountInString(line[lo:at]) + 1 + past
		}
		win, wcol := maskLine(line[lo:hi], wcol, mask)
		r, start, end := excerptRunes(win, wcol)
		switch {
		case r == nil && lo == 0 && hi == len(line):
			return win, wcol // the whole line, short once masked
		case r == nil:
			continue // masks shortened the part to less than an excerpt
		case (lo == 0 || RuneOffset(win, start) >= reach) && (hi == len(line) || len(win)-RuneOffset(win, end) >= reach):
			return excerptOf(r, start, end, wcol)
		}
	}
}

// RuneOffset is the byte offset in s of its n-th rune (as []rune(s)
// counts them: an invalid byte is one), len(s) when s has fewer: where a
// text is cut after n runes, whatever cuts it (an excerpt here, a diff's
// context, a long value in a report).
func RuneOffset(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}

// maskLine returns line with mask applied and the column of line's
// column col in it: each mask before col moves it. A col inside a masked
// text is the column of its mask.
func maskLine(line string, col int, mask func(string) string) (string, int) {
	masked := mask(line)
	if masked == line || col <= 1 {
		return masked, col
	}
	i, n := 0, 1 // the byte and the column of col, or of the line's end
	for i < len(line) && n < col {
		_, w := utf8.DecodeRuneInString(line[i:])
		i, n = i+w, n+1
	}
	pre := mask(line[:i])
	if !strings.HasPrefix(masked, pre) {
		// A masked text runs across col: its part before col is no
		// secret mask knows, and the line's mask starts where the two
		// part.
		k := 0
		for k < len(pre) && k < len(masked) && pre[k] == masked[k] {
			k++
		}
		for k > 0 && k < len(masked) && !utf8.RuneStart(masked[k]) {
			k--
		}
		pre, n = masked[:k], col
	}
	return masked, utf8.RuneCountInString(pre) + 1 + col - n
}

// String renders the diagnostic as "file:line:col: message" followed, when
// known, by the hint in parentheses. It is the form `agenttest lint` prints.
func (d Diagnostic) String() string {
	var b strings.Builder
	if pos := d.Pos.String(); pos != "" {
		b.WriteString(pos)
		b.WriteString(": ")
	}
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		b.WriteString(" (")
		b.WriteString(d.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Diagnostics is a list of problems, accumulated in the order they are found.
type Diagnostics []Diagnostic

// Append adds a diagnostic and returns the extended list.
func (ds Diagnostics) Append(d Diagnostic) Diagnostics { return append(ds, d) }

// Errorf appends an error diagnostic at pos.
func (ds Diagnostics) Errorf(pos Pos, format string, args ...any) Diagnostics {
	return append(ds, Diagnostic{Severity: Error, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// Warnf appends a warning diagnostic at pos.
func (ds Diagnostics) Warnf(pos Pos, format string, args ...any) Diagnostics {
	return append(ds, Diagnostic{Severity: Warning, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders the diagnostics by position, keeping the order of problems
// found at the same place.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Pos.Before(ds[j].Pos) })
}

// Error renders every diagnostic, one per line, so Diagnostics can travel as
// an error through code that only knows errors.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns the diagnostics as an error when at least one is an error, and
// nil otherwise.
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return ds
}

// AsDiagnostics extracts diagnostics from an error chain, if it carries any.
func AsDiagnostics(err error) (Diagnostics, bool) {
	if ds, ok := errors.AsType[Diagnostics](err); ok {
		return ds, true
	}
	return nil, false
}
