package steps

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
)

// Input is one step as written in a feature file, after Scenario Outline
// placeholders were substituted.
type Input struct {
	Pos diag.Pos
	// Keyword is the Gherkin keyword with its trailing space ("Given ",
	// "And ", "* ").
	Keyword string
	// Text is the step text after the keyword.
	Text string
	// Keywords are the step keywords of the file's language, trailing
	// space included, by their English name in lower case ("given":
	// "Soit ", "Étant donné ", ...), as Gherkin's dialects hold them; nil
	// in English. An undefined step's hint is written with them, so that
	// its fix parses in the file.
	Keywords map[string][]string
	// DocString is the content of a DocString argument, nil when none.
	// DocPos is where its text starts: its first line, at the opening
	// delimiter's column.
	DocString *string
	DocPos    diag.Pos
	// Table holds the cells of a DataTable argument, nil when none.
	Table [][]string
	// TableAt is where each cell of Table is written, in the same shape;
	// nil (or a row too short) when not known, and the step's Pos stands
	// for the cell. A check made of a row (a state key, a record field)
	// fails there, so a failure in a long table is found by its line.
	TableAt [][]diag.Pos
}

// Error is a step that cannot be compiled: undefined, used with the wrong
// argument, or with an invalid argument. Hint, when set, says how to fix it
// (for an undefined step: the closest defined steps).
type Error struct {
	Message string
	Hint    string
	// Col is the column, counted from 1 within the step's text (keyword
	// excluded), of the part at fault: the opening quote of a bad
	// argument. 0 means the step as a whole.
	Col int
	// Row and Cell locate the table cell at fault, each counted from 1
	// in the step's table as written (a header row counted); 0 means no
	// cell. A loader points there rather than at the step, so a mistake
	// in a long table is found by its line.
	Row, Cell int
	// Captures is the name a capture step refused for its pattern would
	// have given its value: a loader keeps the name in scope, so that the
	// step's one mistake is not reported again at every later ${name}.
	Captures string
	// arg is the argument at fault, counted from 1; Compile turns it
	// into Col.
	arg int
	// err is the error the message words, when there is one: a loader
	// that already reported a malformed ${...} at the reference itself
	// (interp.SyntaxError) knows this is the same mistake.
	err error
}

// Unwrap returns the error the message words, if any.
func (e *Error) Unwrap() error { return e.err }

// Error renders the message with its hint in parentheses.
func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Message
	}
	return e.Message + " (" + e.Hint + ")"
}

// Library is the compiled vocabulary. It is immutable and safe for
// concurrent use.
type Library struct {
	defs []Def
}

// New returns the library of every step definition.
func New() *Library { return &Library{defs: Defs()} }

// Defs returns the definitions in display order.
func (l *Library) Defs() []Def { return l.defs }

// Match returns the indexes of the definitions whose pattern matches text
// (the step without its keyword). More than one is an ambiguity, which the
// tests of this package rule out for every example.
func (l *Library) Match(text string) []int {
	var out []int
	for i := range l.defs {
		if l.defs[i].Pattern.MatchString(text) {
			out = append(out, i)
		}
	}
	return out
}

// otherLanguage adds to the hint of an undefined step in a file of
// another language than English that only its keywords are: a designer
// who wrote # language: fr may well have worded the step in French too.
func otherLanguage(in Input) string {
	if in.Keywords == nil {
		return ""
	}
	return " (# language: sets the keywords only: the words after them are agenttest's, in English)"
}

// Compile turns one step as written into the Step the interpreter runs. Errors are
// *Error.
func (l *Library) Compile(in Input) (*Step, error) {
	idx := l.Match(in.Text)
	step := strings.TrimSpace(strings.TrimSpace(in.Keyword) + " " + in.Text)
	switch len(idx) {
	case 0:
		if err := l.nearMiss(in, step); err != nil {
			return nil, err
		}
		return nil, &Error{
			Message: fmt.Sprintf("undefined step %q", step),
			Hint:    "closest defined steps: " + strings.Join(l.Closest(in.Keyword, in.Text, 3, in.Keywords), "; ") + "; run 'agenttest steps' for all of them" + otherLanguage(in),
		}
	case 1:
	default:
		// Ruled out by the tests; kept so a bad edit cannot run the wrong
		// step silently.
		return nil, &Error{Message: fmt.Sprintf("ambiguous step %q matches %d definitions", step, len(idx))}
	}
	d := &l.defs[idx[0]]
	switch {
	case d.Arg == DocStringArg && in.DocString == nil:
		return nil, &Error{Message: fmt.Sprintf("step %q needs a DocString", step), Hint: "put the text between \"\"\" lines under the step"}
	case d.Arg == TableArg && in.Table == nil:
		return nil, &Error{Message: fmt.Sprintf("step %q needs a table", step), Hint: "put | ... | rows under the step"}
	case d.Arg != DocStringArg && in.DocString != nil:
		return nil, &Error{Message: fmt.Sprintf("step %q takes no DocString", step)}
	case d.Arg != TableArg && in.Table != nil:
		return nil, &Error{Message: fmt.Sprintf("step %q takes no table", step)}
	}
	m := d.Pattern.FindStringSubmatchIndex(in.Text)
	args := make([]string, len(m)/2-1)
	for i := range args {
		if m[2*i+2] >= 0 {
			args[i] = unquote(in.Text[m[2*i+2]:m[2*i+3]])
		}
	}
	c := &call{def: d, pos: in.Pos, docPos: in.DocPos, step: step, args: args, table: in.Table, tableAt: in.TableAt, x: syntaxOnly}
	if in.DocString != nil {
		c.doc = *in.DocString
	}
	st, err := d.build(c)
	if err != nil {
		var se *Error
		if e, ok := err.(*Error); ok {
			se = e
			if se.arg > 0 && se.Col == 0 {
				se.Col = argCol(in.Text, m, se.arg-1)
			}
		} else {
			se = &Error{Message: fmt.Sprintf("step %q: %v", step, err), err: err}
		}
		return nil, se
	}
	return st, nil
}

// argCol is the column of argument i of a step's text, given the indexes
// of its match: its opening quote when it is quoted.
func argCol(text string, m []int, i int) int {
	start := m[2*i+2]
	if start < 0 {
		return 0
	}
	if start > 0 && text[start-1] == '"' {
		start--
	}
	return utf8.RuneCountInString(text[:start]) + 1
}

// nearMiss explains an undefined step that is a defined one written with
// a mistake designers make: an "ignoring case" ending on a step that does
// not take it, or text in single or typographic quotes. Edit distance
// ranks such a step poorly (it would suggest unrelated steps), while the
// fix is certain.
func (l *Library) nearMiss(in Input, step string) *Error {
	if base, ok := strings.CutSuffix(strings.TrimRight(in.Text, " "), " ignoring case"); ok {
		if idx := l.Match(base); len(idx) == 1 {
			hint := `only the greeting, says, contains and does not contain steps take it: after their quoted text, or as "says, ignoring case:" and "contains, ignoring case:" before a DocString`
			if strings.Contains(l.defs[idx[0]].Pattern.String(), "match") {
				hint += "; a regular expression ignores case when it starts with (?i)"
			}
			return &Error{Message: fmt.Sprintf("step %q does not take %q", step, "ignoring case"), Hint: hint,
				Col: utf8.RuneCountInString(base) + 2}
		}
	}
	// A Gherkin comment takes a whole line: "# ..." after a step is part
	// of its text. So is a closing full stop.
	for i := strings.Index(in.Text, " #"); i >= 0; {
		if base := strings.TrimRight(in.Text[:i], " "); len(l.Match(base)) == 1 {
			return &Error{
				Message: fmt.Sprintf("undefined step %q", step),
				Hint:    fmt.Sprintf("did you mean %s%s? a comment takes a line of its own: Gherkin reads # after a step as part of its text", in.Keyword, base),
				Col:     utf8.RuneCountInString(in.Text[:i]) + 2,
			}
		}
		next := strings.Index(in.Text[i+2:], " #")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	if base := strings.TrimRight(in.Text, ".;, "); base != in.Text && len(l.Match(base)) == 1 {
		return &Error{
			Message: fmt.Sprintf("undefined step %q", step),
			Hint:    fmt.Sprintf("did you mean %s%s? a step ends without punctuation", in.Keyword, base),
			Col:     utf8.RuneCountInString(base) + 1,
		}
	}
	if text := doubleQuoted(in.Text); text != in.Text {
		if idx := l.Match(text); len(idx) == 1 {
			return &Error{
				Message: fmt.Sprintf("undefined step %q", step),
				Hint:    fmt.Sprintf("did you mean %s%s? a step's text is written in straight double quotes", in.Keyword, text),
			}
		}
	}
	// The last text written without its quotes: "the user says hi there".
	for i := strings.LastIndexByte(in.Text, '"') + 1; i < len(in.Text); i++ {
		if in.Text[i] != ' ' {
			continue
		}
		if text := in.Text[:i+1] + `"` + in.Text[i+1:] + `"`; len(l.Match(text)) == 1 {
			return &Error{
				Message: fmt.Sprintf("undefined step %q", step),
				Hint:    fmt.Sprintf("did you mean %s%s? a step's text is written in double quotes", in.Keyword, text),
				Col:     utf8.RuneCountInString(in.Text[:i+1]) + 1,
			}
		}
	}
	return nil
}

// doubleQuoted rewrites the texts of a step written in single quotes
// ('hi') or typographic ones (“hi”, ‘hi’) in straight double quotes. A
// single quote opens a text only at the start of a word and closes it only
// at the end of one, so the apostrophe of "agent's" is left alone.
func doubleQuoted(text string) string {
	r := []rune(text)
	pairs := map[rune]rune{'\'': '\'', '‘': '’', '“': '”', '„': '“'}
	boundary := func(i int) bool { return i < 0 || i >= len(r) || r[i] == ' ' }
	for i := 0; i < len(r); i++ {
		closing, ok := pairs[r[i]]
		if !ok || !boundary(i-1) {
			continue
		}
		for j := i + 1; j < len(r); j++ {
			if r[j] == closing && boundary(j+1) {
				r[i], r[j] = '"', '"'
				i = j
				break
			}
		}
	}
	return string(r)
}

// withArgs is example with its quoted arguments replaced, in order, by
// those of text, when both have as many; else example as it is. Like the
// quote-mistake hints, it offers the designer's own words back: "When the
// user says "I want a table"" for "When the user say "I want a table"".
func withArgs(example, text string) string {
	args := quoted.FindAllString(text, -1)
	if len(quoted.FindAllString(example, -1)) != len(args) {
		return example
	}
	i := 0
	return quoted.ReplaceAllStringFunc(example, func(string) string {
		i++
		return args[i-1]
	})
}

// unquote undoes the one escape of quoted arguments, \".
func unquote(s string) string { return strings.ReplaceAll(s, `\"`, `"`) }

// Closest returns up to n examples of the definitions closest to the
// step, best first: the "did you mean" of an undefined step. Quoted
// arguments and numbers are blanked on both sides, so only the wording
// counts; so does the keyword, a little: a newcomer's "When I say" means
// a turn more often than the setup step its few letters are nearest.
// A definition written with as many quoted arguments as the step is shown
// with the step's own (withArgs): the fix to copy, not an example to adapt.
func (l *Library) Closest(keyword, text string, n int, keywords map[string][]string) []string {
	want, kw := shape(text), strings.TrimSpace(keyword)
	// And, But and * say nothing of the step's kind: kind stays "".
	kind := ""
	for _, en := range []string{"Given", "When", "Then"} {
		if kw != "*" && (keywords == nil && kw == en || slices.Contains(keywords[strings.ToLower(en)], kw+" ")) {
			kind = en
			break
		}
	}
	type cand struct {
		ex   string
		dist int
	}
	cands := make([]cand, len(l.defs))
	for i, d := range l.defs {
		dkw, body, _ := strings.Cut(d.Example, " ")
		dist := diag.EditDistance(want, shape(body))
		if kind != "" && dkw != kind {
			dist += keywordWeight
		}
		// Every quoted argument of a definition is q, which takes any
		// quoted text: the result is a step the definition matches.
		cands[i] = cand{LocalKeyword(dkw, keywords) + " " + withArgs(body, text), dist}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].dist < cands[j].dist })
	out := make([]string, 0, n)
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.ex)
	}
	return out
}

// LocalKeyword is the first keyword of keywords (as in Input) for the
// English one en ("Given", "When", "Then"): a fix a hint offers must parse
// in the file's language. It is en itself when keywords has none.
func LocalKeyword(en string, keywords map[string][]string) string {
	for _, k := range keywords[strings.ToLower(en)] {
		if k = strings.TrimSpace(k); k != "*" && k != "" {
			return k
		}
	}
	return en
}

// keywordWeight is what another keyword adds to a definition's distance:
// a few letters, so that a step written with the wrong keyword but the
// right words (When the agent says) still finds its definition first.
const keywordWeight = 3

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	number = regexp.MustCompile(`\d+(?:\.\d+)?`)
)

func shape(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = quoted.ReplaceAllString(s, `""`)
	return number.ReplaceAllString(s, "0")
}

// call is one application of a definition to a step.
type call struct {
	def  *Def
	pos  diag.Pos
	step string
	args []string
	doc  string
	// docPos is Input.DocPos.
	docPos diag.Pos
	table  [][]string
	// tableAt is Input.TableAt.
	tableAt [][]diag.Pos
	// x expands plain arguments: syntaxOnly while compiling, the
	// session's expander while running.
	x Expander
}

func (c *call) newStep(k Kind) *Step { return &Step{Kind: k, Pos: c.pos, Text: c.step} }

func (c *call) expand(i int) (string, error) { return c.x(c.args[i]) }

// text is the step's text argument: its DocString for a step that takes
// one, else its first quoted argument.
func (c *call) text() string {
	if c.def.Arg == DocStringArg {
		return c.doc
	}
	return c.args[0]
}

func (c *call) int(i int, what string) (int, error) {
	// As a YAML suite's whole numbers: at most 2^31-1, so that a bound
	// too large to mean anything is refused in either language.
	n, err := strconv.ParseInt(c.args[i], 10, 32)
	switch {
	case errors.Is(err, strconv.ErrRange) && n > 0:
		return 0, &Error{Message: fmt.Sprintf("step %q: %s: %s is out of range", c.step, what, c.args[i]), arg: i + 1}
	case err != nil || n < 0:
		return 0, fmt.Errorf("%s %q is not a whole number", what, c.args[i])
	}
	return int(n), nil
}

// regex checks that argument i compiles as RE2, as it will at run time
// (assert.CheckPattern), in the words a YAML suite gets for the same
// pattern.
func (c *call) regex(i int) error {
	if _, err := syntaxOnly(c.args[i]); err != nil {
		return err
	}
	if err := assert.CheckPattern(c.args[i]); err != nil {
		return &Error{Message: fmt.Sprintf("step %q: %v", c.step, err), Hint: assert.RE2Hint, arg: i + 1}
	}
	return nil
}

// pair is one | first | second | row of a two-column table; row is its
// number in the table as written, from 1 (a header counted), for an
// Error's Row.
type pair struct {
	key, value string
	row        int
}

// pairs reads a two-column table; a first row naming the columns (e.g.
// | key | value |) is a header and skipped.
func (c *call) pairs(first, second string) ([]pair, error) {
	var out []pair
	for i, row := range c.table {
		if len(row) != 2 {
			return nil, c.badRow(i, row, first, second)
		}
		if i == 0 && isHeader(row[0], first, "name", "key", "attribute") && isHeader(row[1], second) {
			continue
		}
		out = append(out, pair{key: row[0], value: row[1], row: i + 1})
	}
	if len(out) == 0 {
		return nil, &Error{Message: fmt.Sprintf("step %q: table has no rows", c.step)}
	}
	return out, nil
}

// rowPos is where table row n (counted from 1, as pair.row and
// Error.Row) is written: its first cell, else the step.
func (c *call) rowPos(n int) diag.Pos {
	if n >= 1 && n <= len(c.tableAt) && len(c.tableAt[n-1]) > 0 {
		return c.tableAt[n-1][0]
	}
	return c.pos
}

// rowParts places item i of the n items a one-column table gave (column)
// at its row, under key, so that a list check fails at the row of the item
// that broke it: the items are the table's last n rows, after any header.
func (c *call) rowParts(key string, n int) assert.Parts {
	first := len(c.table) - n + 1
	ps := make(assert.Parts, n)
	for i := range ps {
		ps[i] = assert.Part{Key: key, Item: i + 1, Pos: c.rowPos(first + i)}
	}
	return ps
}

// badRow is the error of table row i (from 0) whose number of cells is
// not the number of columns: at its first extra cell, or at its first
// cell when it has too few.
func (c *call) badRow(i int, row []string, columns ...string) *Error {
	n := len(columns)
	cell := 1
	if len(row) > n {
		cell = n + 1
	}
	return &Error{Message: fmt.Sprintf("step %q: table row %d has %d cells, want %d: | %s |", c.step, i+1, len(row), n, strings.Join(columns, " | ")),
		Row: i + 1, Cell: cell}
}

// column reads a one-column table; a first row equal to the column name is
// a header and skipped.
func (c *call) column(name string) ([]string, error) {
	var out []string
	for i, row := range c.table {
		if len(row) != 1 {
			return nil, c.badRow(i, row, name)
		}
		if i == 0 && isHeader(row[0], name, name+"s") {
			continue
		}
		out = append(out, row[0])
	}
	if len(out) == 0 {
		return nil, &Error{Message: fmt.Sprintf("step %q: table has no rows", c.step)}
	}
	return out, nil
}

func isHeader(cell string, names ...string) bool {
	cell = strings.ToLower(strings.TrimSpace(cell))
	return slices.Contains(names, cell)
}

// syntaxOnly stands for the session's expander while compiling: it checks
// the ${...} syntax and blanks each reference.
func syntaxOnly(s string) (string, error) {
	blank := func(string) (string, bool) { return "x", true }
	return interp.Interpolate(s, blank, blank)
}
