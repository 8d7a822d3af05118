package scenario

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
)

// parseFeature parses Gherkin the way godog does (English by default, a
// `# language:` line may change it) and returns the document and its
// pickles, with ids from newID. Parse errors are returned as they come.
// src is the file's Text: its callers need the text too, for the lines
// they echo and the Source they report.
func parseFeature(path string, src []byte, newID func() string) (*messages.GherkinDocument, []*messages.Pickle, error) {
	if err := longLine(src); err != nil {
		return nil, nil, err
	}
	doc, err := gherkin.ParseGherkinDocumentForLanguage(bytes.NewReader(src), gherkin.DefaultDialect, newID)
	if err != nil {
		return nil, nil, err
	}
	doc.Uri = path
	if err := pickleBudget(doc); err != nil {
		return nil, nil, err
	}
	return doc, gherkin.Pickles(*doc, path, newID), nil
}

// maxGherkinLine is the longest line, in bytes without its line feed
// (a carriage return counts), that Gherkin's scanner reads: it reads
// lines with a bufio.Scanner of the default buffer, and on a longer one
// its parser dereferences a nil line and panics (gherkin/go v26), in
// agenttest and in godog alike.
const maxGherkinLine = bufio.MaxScanTokenSize - 1

// longLine returns, in the form of Gherkin's own parse errors, the first
// line of src longer than Gherkin reads, or nil when there is none.
func longLine(src []byte) error {
	for n := 1; len(src) > 0; n++ {
		end := bytes.IndexByte(src, '\n')
		if end < 0 {
			end = len(src)
		}
		if end > maxGherkinLine {
			return fmt.Errorf("(%d:1): line is %d bytes long: Gherkin reads lines of at most %d bytes", n, end, maxGherkinLine)
		}
		src = src[min(end+1, len(src)):]
	}
	return nil
}

// maxPickleCost bounds what the pickles of one feature file may hold,
// counted as pickleCost does. Background steps are repeated in every
// scenario of their Feature or Rule and a Scenario Outline's steps in
// every Examples row, so a small file can expand to millions of steps (a
// 179 KB outline of 4,000 steps and 4,000 rows took 48 s and 7 GB to
// lint). The bound is far above any real feature and costs about as much
// as the YAML loader's maxVisits (a few hundred MB).
const maxPickleCost = 1_000_000

// tooComplex is the error of a feature file whose pickles would exceed
// maxPickleCost, at the scenario where they do.
type tooComplex struct {
	at *messages.Location
}

func (e *tooComplex) Error() string {
	return fmt.Sprintf("(%d:%d): %s", e.at.Line, e.at.Column, e.message())
}

// message is the error without its position, as the diagnostic says it.
func (e *tooComplex) message() string {
	return fmt.Sprintf("file is too complex to load: its scenarios expand to more than %d steps and table cells", maxPickleCost)
}

// pickleBudget returns a *tooComplex when the pickles of doc would cost
// more than maxPickleCost, before Gherkin builds them.
func pickleBudget(doc *messages.GherkinDocument) error {
	if _, at := pickleTotal(doc, maxPickleCost); at != nil {
		return &tooComplex{at: at}
	}
	return nil
}

// pickleTotal is what the pickles of doc cost (pickleCost), counted up
// to the first scenario that takes the total above limit, which it
// returns too (nil when there is none).
func pickleTotal(doc *messages.GherkinDocument, limit int) (int, *messages.Location) {
	if doc.Feature == nil {
		return 0, nil
	}
	total := 0
	var add func(children []*messages.FeatureChild, background int) *messages.Location
	add = func(children []*messages.FeatureChild, background int) *messages.Location {
		for _, c := range children {
			switch {
			case c.Background != nil:
				background += pickleCost(c.Background.Steps)
			case c.Rule != nil:
				rule := make([]*messages.FeatureChild, 0, len(c.Rule.Children))
				for _, rc := range c.Rule.Children {
					rule = append(rule, &messages.FeatureChild{Background: rc.Background, Scenario: rc.Scenario})
				}
				if at := add(rule, background); at != nil {
					return at
				}
			case c.Scenario != nil:
				pickles := 1
				if len(c.Scenario.Examples) > 0 {
					pickles = 0
					for _, ex := range c.Scenario.Examples {
						pickles += len(ex.TableBody)
					}
				}
				if len(c.Scenario.Steps) > 0 { // Gherkin gives a scenario without steps no Background
					total += pickles * (background + pickleCost(c.Scenario.Steps))
				}
				if total > limit {
					return c.Scenario.Location
				}
			}
		}
		return nil
	}
	at := add(doc.Feature.Children, 0)
	return total, at
}

// pickleCost is what steps cost in every pickle that holds them: one for
// each step and each cell of its table, and one for each 64 bytes of its
// DocString (an Examples value in it makes a copy per row).
func pickleCost(steps []*messages.Step) int {
	cost := 0
	for _, st := range steps {
		cost++
		if st.DataTable != nil {
			for _, row := range st.DataTable.Rows {
				cost += len(row.Cells)
			}
		}
		if st.DocString != nil {
			cost += len(st.DocString.Content) / 64
		}
	}
	return cost
}

// parseLine matches one Gherkin parse error: "(4:3): expected: ...".
var parseLine = regexp.MustCompile(`^\((\d+):(\d+)\): (.*)$`)

// parseErrors turns the parser's error (an unexported list type) into
// diagnostics, one per line it holds. Tags above a line that takes none
// (a Background, a step) are one error at the tags: the parser, which
// reads them as the tags of a Rule to come, would fail every line after
// them, so the rest of the file is parsed again without them, up to
// maxTagReparses times (each parse reads the whole file).
func (fl *featureLoader) parseErrors(err error, src []byte) {
	fl.parseErrorsUpTo(err, src, maxTagReparses)
}

// maxTagReparses bounds the parses parseErrors adds for misplaced tags.
const maxTagReparses = 10

func (fl *featureLoader) parseErrorsUpTo(err error, src []byte, reparses int) {
	if tc := (*tooComplex)(nil); errors.As(err, &tc) {
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: fl.pos(tc.at),
			Message: tc.message(),
			Hint:    "Background steps repeat in every scenario and an outline's steps in every Examples row; split the file"})
		return
	}
	found := false
	lines := strings.Split(string(src), "\n")
	lang := gherkin.DefaultDialect
	for _, l := range lines {
		if m := languageLine.FindStringSubmatch(l); m != nil {
			lang = m[1]
			break
		}
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			break
		}
	}
	keywords, dl := stepKeywords(lang), dialect(lang)
	for line := range strings.SplitSeq(err.Error(), "\n") {
		m := parseLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		ln, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		if tagged, tags := misplacedTags(fl.file, lines, ln, m[3], dl); tags != nil && reparses > 0 {
			fl.diags = fl.diags.Append(tagged)
			for _, i := range tags {
				lines[i] = ""
			}
			without := []byte(strings.Join(lines, "\n"))
			if _, _, err := parseFeature(fl.file, without, (&messages.Incrementing{}).NewId); err != nil {
				fl.parseErrorsUpTo(err, without, reparses-1)
			}
			return
		}
		d := diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: fl.file, Line: ln, Col: max(col, 1)},
			Message: "invalid Gherkin: " + m[3]}
		if strings.HasPrefix(m[3], "unexpected end of file") && strings.Contains(m[3], "#DocStringSeparator") {
			// Gherkin says where the file ends (column 0), not which
			// doc string it ends in.
			if at, delim := openDocString(src, dl); at.Line > 0 {
				d.Pos.Line, d.Pos.Col = at.Line, at.Col
				d.Hint = fmt.Sprintf("this %s is never closed: end the doc string with %s on a line of its own", delim, delim)
			}
		}
		if m[3] == "inconsistent cell count within the table" && ln >= 1 && ln <= len(lines) {
			d.Hint = cellCountHint(lines, ln)
		}
		if m[3] == "A tag may not contain whitespace" && ln >= 1 && ln <= len(lines) {
			// Gherkin points at the tag; the mistake is the word after
			// its space, which a designer meant as part of it or as a
			// tag of its own.
			if at, hint := tagSpace(lines[ln-1], col); at > 0 {
				d.Pos.Col, d.Hint = at, hint
			}
		}
		if d.Hint == "" && strings.Contains(m[3], ", got '") && ln >= 1 && ln <= len(lines) {
			// A step written right is an error only where the parser
			// takes no step: after an Examples table.
			step, how := readsAsStep(strings.TrimSpace(lines[ln-1]), keywords, dl)
			if how == keywordCase || how == noKeyword || how == otherKeyword || (how == asWrittenStep && !strings.Contains(m[3], "#StepLine")) {
				d.Hint = stepHint(step, how, keywords)
			} else if kw := blockKeyword(lines[ln-1], dl); kw != "" {
				d.Hint = blockKeywordHint(kw)
			}
		}
		if strings.Contains(m[3], ", got '") && strings.Contains(m[3], "#FeatureLine") {
			// Every line after a missing or misspelt Feature: is an error
			// of its own, the parser waiting for one: the first says it.
			d.Hint = cmp.Or(d.Hint, "a feature file starts with Feature: and a title, above its scenarios")
			fl.diags = fl.diags.Append(d)
			return
		}
		fl.diags = fl.diags.Append(d)
		found = true
	}
	if !found {
		fl.diags = fl.diags.Errorf(diag.Pos{File: fl.file}, "invalid Gherkin: %v", err)
	}
}

// misplacedTags returns the error of the tags above line ln when the
// parser failed at ln (msg is its message) because ln is a Background or
// a step, and the indexes in lines of the tag lines; no indexes
// otherwise. Comments and blank lines may stand between the tags and
// the line.
func misplacedTags(file string, lines []string, ln int, msg string, d *gherkin.Dialect) (diag.Diagnostic, []int) {
	if !strings.Contains(msg, ", got '") || ln < 1 || ln > len(lines) {
		return diag.Diagnostic{}, nil
	}
	text := strings.TrimSpace(lines[ln-1])
	var what, hint string
	switch {
	case slices.ContainsFunc(d.BackgroundKeywords(), func(kw string) bool { return strings.HasPrefix(text, kw+":") }):
		what, hint = "Background", "to tag the scenarios this Background runs before, tag their Feature or Rule"
	case slices.ContainsFunc(d.StepKeywords(), func(kw string) bool { return strings.HasPrefix(text, kw) }):
		what, hint = "step", "tag the step's Scenario instead"
	default:
		return diag.Diagnostic{}, nil
	}
	var tags []int
	for i := ln - 2; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if strings.HasPrefix(t, "@") {
			tags = append(tags, i)
		} else if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
	}
	if tags == nil {
		return diag.Diagnostic{}, nil
	}
	first := lines[tags[len(tags)-1]]
	col := utf8.RuneCountInString(first[:strings.Index(first, "@")]) + 1
	return diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: file, Line: tags[len(tags)-1] + 1, Col: col},
		Message: fmt.Sprintf("tags are not allowed on the %s at line %d", what, ln),
		Hint:    "only a Feature, Rule, Scenario, Scenario Outline or Examples takes tags; " + hint}, tags
}

// openDocString returns the line and column of the separator (""" or
// ```) of the doc string that src leaves open at its end, and the
// separator; a zero line when none is open. As Gherkin reads them (in
// dialect d), a line that starts with a separator opens a doc string
// right under a step (comments and blank lines between aside; a media
// type may follow it), and the next line that starts with the same
// separator closes it, whatever follows it there; what lies between is
// text. A separator anywhere else (a description's line) opens nothing.
func openDocString(src []byte, d *gherkin.Dialect) (at diag.Pos, delim string) {
	afterStep := false
	for i, line := range strings.Split(string(src), "\n") {
		text := strings.TrimSpace(line)
		switch {
		case delim != "":
			if strings.HasPrefix(text, delim) {
				delim, at, afterStep = "", diag.Pos{}, false
			}
		case afterStep && (strings.HasPrefix(text, `"""`) || strings.HasPrefix(text, "```")):
			delim = text[:3]
			at = diag.Pos{Line: i + 1, Col: utf8.RuneCountInString(line[:strings.Index(line, delim)]) + 1}
		case text != "" && !strings.HasPrefix(text, "#"):
			afterStep = slices.ContainsFunc(d.StepKeywords(), func(kw string) bool { return strings.HasPrefix(text, kw) })
		}
	}
	return at, delim
}

// notText finds the first byte of src that a YAML suite may not hold
// either: one that is not UTF-8, or a control character other than tab,
// line feed and carriage return (C0, DEL, C1 but NEL), or U+FFFE or
// U+FFFF. It returns that byte's line and column and a diagnostic's
// message and hint, or ok when src is all text.
func notText(src []byte) (at diag.Pos, msg, hint string, ok bool) {
	at = diag.Pos{Line: 1, Col: 1}
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		switch {
		case r == utf8.RuneError && n == 1:
			return at, "invalid UTF-8", "save the file as UTF-8 text", false
		case notTextRune(r):
			return at, fmt.Sprintf("control character %U is not allowed", r),
				"remove it: tabs and line ends are the only control characters a feature file may hold, as in a YAML suite", false
		}
		at.Col++
		if r == '\n' {
			at.Line, at.Col = at.Line+1, 1
		}
		src = src[n:]
	}
	return diag.Pos{}, "", "", true
}

// tagSpace explains Gherkin's "A tag may not contain whitespace" for the
// tag at column col of line ("@smoke test", "@agent: restaurant"): it
// returns the column of the word after the tag's space and the fix, or 0
// when the line is not so.
func tagSpace(line string, col int) (int, string) {
	r := []rune(line)
	if col < 1 || col > len(r) || r[col-1] != '@' {
		return 0, ""
	}
	word := func(i int) int {
		for i < len(r) && !unicode.IsSpace(r[i]) {
			i++
		}
		return i
	}
	end := word(col - 1)
	next := end
	for next < len(r) && unicode.IsSpace(r[next]) {
		next++
	}
	// r[end] is a space, so next > end unless the line ends there.
	if next == len(r) || r[next] == '@' || r[next] == '#' {
		return 0, ""
	}
	tag, rest := string(r[col-1:end]), string(r[next:word(next)])
	if strings.HasSuffix(tag, ":") {
		return next + 1, fmt.Sprintf("a tag is one word: write %s%s, with no space after the colon", tag, rest)
	}
	return next + 1, fmt.Sprintf("a tag is one word: write %s-%s for one tag, or %s @%s for two", tag, rest, tag, rest)
}

// cellCountHint says how many cells the table row at line ln has against
// its table's first row, the one Gherkin counts the others against (so
// never the row at fault): a
// cell left out, or a | missing at a row's end (Gherkin drops the text
// after a row's last |).
func cellCountHint(lines []string, ln int) string {
	first := ln
	for i := ln - 1; i >= 1; i-- {
		t := strings.TrimSpace(lines[i-1])
		if strings.HasPrefix(t, "#") {
			continue
		}
		if !strings.HasPrefix(t, "|") {
			break
		}
		first = i
	}
	plural := func(n int) string {
		if n == 1 {
			return "1 cell"
		}
		return fmt.Sprintf("%d cells", n)
	}
	row, head := rowCells(lines[ln-1]), rowCells(lines[first-1])
	hint := fmt.Sprintf("this row has %s, the table's first row (line %d) %s: every row has a cell for each column, an empty one written | |", plural(row), first, plural(head))
	if t := strings.TrimSpace(lines[ln-1]); !strings.HasSuffix(t, "|") || strings.HasSuffix(t, `\|`) {
		hint += "; end the row with |"
	}
	return hint
}

// rowCells counts the cells of a Gherkin table row: the | not escaped
// (\|), less the one that ends it.
func rowCells(line string) int {
	n := 0
	escaped := false
	for _, r := range strings.TrimSpace(line) {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case r == '|':
			n++
		}
	}
	return n - 1 // a row starts with |
}
