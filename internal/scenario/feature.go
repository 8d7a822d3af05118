package scenario

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// library is the step vocabulary features are compiled with. It is
// immutable, so one value serves every load.
var library = steps.New()

// Steps returns the step library features are compiled with.
func Steps() *steps.Library { return library }

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

// loadFeature loads a Gherkin feature file: every pickle (a Scenario, or
// one Examples row of a Scenario Outline, Background steps included)
// becomes a Scenario whose steps are compiled with the step library. Tags
// like @agent:restaurant set the scenario's parameters. All problems are
// reported at file:line:col; the suite is nil when any is an error.
func loadFeature(file string, src []byte) (suite *Suite, diags diag.Diagnostics) {
	src = Text(src)
	fl := &featureLoader{file: file, nodes: map[string]any{}}
	defer func() {
		if r := recover(); r != nil {
			fl.diags = fl.diags.Errorf(diag.Pos{File: file}, "internal error while loading: %v", r)
			suite, diags = nil, finish(fl.diags, src)
		}
	}()
	if at, msg, hint, ok := notText(src); !ok {
		// As a YAML suite is. Names with bytes that are not UTF-8 would
		// not survive the JSON report (each becomes U+FFFD), so
		// --rerun-failed could not find their scenarios again; a control
		// character is nothing a designer writes, and one the agent is
		// sent, or a report shows, is a file damaged or crafted.
		at.File = file
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Message: msg, Hint: hint})
		return nil, finish(fl.diags, src)
	}
	doc, pickles, err := parseFeature(file, src, (&messages.Incrementing{}).NewId)
	if err != nil {
		fl.parseErrors(err, src)
		return nil, finish(fl.diags, src)
	}
	if doc.Feature == nil {
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: file, Line: 1, Col: 1},
			Message: "feature file has no Feature", Hint: "start the file with Feature: and a title"})
		return nil, finish(fl.diags, src)
	}
	s := &Suite{
		Path:  file,
		Name:  strings.TrimSpace(doc.Feature.Name),
		Pos:   fl.pos(doc.Feature.Location),
		Lines: lineCount(src),
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(path.Base(file), path.Ext(file))
	}
	if msg, hint, ok := badName("suite name", s.Name); !ok {
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: s.Pos, Message: msg, Hint: hint})
	}
	for _, t := range doc.Feature.Tags {
		s.Tags = append(s.Tags, strings.TrimPrefix(t.Name, "@"))
	}
	fl.index(doc.Feature)
	fl.outlineColumns(doc.Feature)
	fl.descriptionSteps(doc.Feature, src)
	seen := map[string]diag.Pos{}
	for _, p := range pickles {
		sc := fl.scenario(p)
		if sc == nil {
			continue
		}
		if first, dup := seen[sc.Name]; dup {
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: sc.Pos,
				Message: fmt.Sprintf("duplicate scenario name %q (first at line %d)", sc.Name, first.Line),
				Hint:    "names identify scenarios in reports and filters; make each one unique"})
			continue
		}
		seen[sc.Name] = sc.Pos
		s.Scenarios = append(s.Scenarios, sc)
	}
	for _, at := range fl.bgOrder {
		fl.diags = append(fl.diags, fl.bgChatOnly[at]...)
	}
	fl.diags = append(fl.diags, fl.streamingUses.unused()...)
	if len(pickles) == 0 {
		fl.diags = fl.diags.Warnf(s.Pos, "feature %q has no scenarios", s.Name)
	}
	s.EnvRefs = fl.envRefs.sorted()
	if !fl.diags.HasErrors() {
		fl.diags = warnUnchecked(fl.diags, s, "it has no Then step")
	}
	diags = finish(fl.diags, src)
	if diags.HasErrors() {
		return nil, diags
	}
	return s, diags
}

// FeatureDoc is a feature file parsed and indexed once, for compiling
// pickles of the same text that another parser produced (godog hands its
// own pickles to step hooks). It is safe for concurrent use.
type FeatureDoc struct {
	fl      featureLoader
	pickles []*messages.Pickle
}

// ParseFeatureDoc parses a feature file for Compile. Problems of the file
// itself (Gherkin syntax) are returned as diagnostics; the document is nil
// when there are any.
func ParseFeatureDoc(uri string, src []byte) (doc *FeatureDoc, diags diag.Diagnostics) {
	src = Text(src)
	fl := featureLoader{file: uri, nodes: map[string]any{}}
	defer func() {
		if r := recover(); r != nil {
			doc, diags = nil, diag.Diagnostics{}.Errorf(diag.Pos{File: uri}, "internal error while loading: %v", r)
		}
	}()
	gdoc, pickles, err := parseFeature(uri, src, (&messages.Incrementing{}).NewId)
	if err != nil {
		fl.parseErrors(err, src)
		return nil, finish(fl.diags, src)
	}
	if gdoc.Feature != nil {
		fl.index(gdoc.Feature)
	}
	return &FeatureDoc{fl: fl, pickles: pickles}, nil
}

// CompileSteps compiles the pickle of the document that p stands for (same
// name, tags and steps) into a Scenario by the rules Load applies to a
// feature file: tag parameters, setup steps, probe rules, positions and
// Examples-row variables from the document. A pickle the document does not
// hold, or a nil document, is compiled from p alone: positions then name
// the file only and an Examples row adds neither variables nor a suffix to
// the name. The Scenario is nil when any diagnostic is an error.
//
// Only the steps whose text ours accepts (all of them when ours is nil)
// are compiled: a godog suite mixes its own steps with agenttest's, and
// only agenttest's belong to the program, which holds one step per
// accepted step, in order.
func (d *FeatureDoc) CompileSteps(uri string, p *messages.Pickle, ours func(text string) bool) (sc *Scenario, diags diag.Diagnostics) {
	fl := featureLoader{file: uri, nodes: map[string]any{}}
	if d != nil {
		fl = d.fl // a copy: diagnostics and tag state are per call
		for _, ours := range d.pickles {
			if samePickle(ours, p) {
				p = ours
				break
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			fl.diags = fl.diags.Errorf(diag.Pos{File: uri}, "internal error while compiling: %v", r)
			sc, diags = nil, finish(fl.diags, nil)
		}
	}()
	if ours != nil {
		kept := *p
		kept.Steps = nil
		for _, ps := range p.Steps {
			if ours(ps.Text) {
				kept.Steps = append(kept.Steps, ps)
			}
		}
		fl.partial = len(kept.Steps) < len(p.Steps)
		p = &kept
	}
	sc = fl.scenario(p)
	diags = finish(fl.diags, nil)
	if diags.HasErrors() {
		return nil, diags
	}
	return sc, diags
}

// samePickle reports whether two pickles of the same text, made by two
// parsers (whose ids differ), are the same scenario or Examples row.
func samePickle(a, b *messages.Pickle) bool {
	if a.Name != b.Name || len(a.Steps) != len(b.Steps) || len(a.Tags) != len(b.Tags) {
		return false
	}
	for i := range a.Tags {
		if a.Tags[i].Name != b.Tags[i].Name {
			return false
		}
	}
	for i, as := range a.Steps {
		bs := b.Steps[i]
		if as.Text != bs.Text || argument(as.Argument) != argument(bs.Argument) {
			return false
		}
	}
	return true
}

// argument renders a step argument for comparison.
func argument(a *messages.PickleStepArgument) string {
	switch {
	case a == nil:
		return ""
	case a.DocString != nil:
		return "doc:" + a.DocString.Content
	case a.DataTable != nil:
		var b strings.Builder
		for _, r := range a.DataTable.Rows {
			for _, c := range r.Cells {
				b.WriteString(c.Value)
				b.WriteByte(0)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	return ""
}

type featureLoader struct {
	file  string
	diags diag.Diagnostics
	// nodes maps AST node ids to the nodes, since pickles carry no
	// positions of their own.
	nodes map[string]any
	// tagOwner numbers the element (Feature, Rule, Scenario, Examples)
	// each tag id is written on: a pickle inherits its tags from several,
	// and only tags of one element can contradict each other.
	tagOwner map[string]int
	// within and withinAt are the @within tag of the scenario being
	// loaded (zero when none): the bound of its call's status wait.
	within   time.Duration
	withinAt diag.Pos
	// streamingTag is the @streaming: tag of the scenario being loaded
	// ("" when none), for the message when it applies to no
	// conversation over messaging; streamingUses are the file's
	// streaming settings (via.go).
	streamingTag  string
	streamingUses streamingUses
	// bareStreaming is where the scenario being loaded is tagged
	// @streaming, a filter tag that streams nothing.
	bareStreaming diag.Pos
	// envRefs are the ${env:NAME} references of the steps.
	envRefs envRefSet
	// background holds the ids of Background steps. bgChatOnly holds,
	// per Background setup step that sets a parameter only debug chat
	// sends, its warning, or nil once a scenario over debug chat used it:
	// as a YAML suite's start:, a Background that serves debug-chat
	// scenarios too is not warned about. bgOrder keeps them in file order.
	background map[string]bool
	bgChatOnly map[diag.Pos][]diag.Diagnostic
	bgOrder    []diag.Pos
	// partial is set when some of the pickle's steps are another
	// runner's (godog's, CompileSteps): setup steps alone are then not a
	// scenario without When or Then steps, but one whose conversation is
	// none of ours.
	partial bool
}

func (fl *featureLoader) pos(l *messages.Location) diag.Pos {
	if l == nil {
		return diag.Pos{File: fl.file}
	}
	return diag.Pos{File: fl.file, Line: int(l.Line), Col: int(l.Column)}
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
		if d.Hint == "" && strings.Contains(m[3], ", got '") && ln >= 1 && ln <= len(lines) {
			// A step written right is an error only where the parser
			// takes no step: after an Examples table.
			step, how := readsAsStep(strings.TrimSpace(lines[ln-1]), keywords, dl)
			if how == keywordCase || how == noKeyword || (how == asWrittenStep && !strings.Contains(m[3], "#StepLine")) {
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

// index records every node a pickle can point at.
func (fl *featureLoader) index(f *messages.Feature) {
	if fl.tagOwner == nil {
		fl.tagOwner = map[string]int{}
	}
	tags := func(ts []*messages.Tag) {
		owner := len(fl.tagOwner) + 1 // past every number given so far
		for _, t := range ts {
			fl.nodes[t.Id] = t
			fl.tagOwner[t.Id] = owner
		}
	}
	stepsOf := func(ss []*messages.Step) {
		for _, st := range ss {
			fl.nodes[st.Id] = st
		}
	}
	background := func(ss []*messages.Step) {
		stepsOf(ss)
		if fl.background == nil {
			fl.background = map[string]bool{}
		}
		for _, st := range ss {
			fl.background[st.Id] = true
		}
	}
	scenario := func(sc *messages.Scenario) {
		fl.nodes[sc.Id] = sc
		tags(sc.Tags)
		stepsOf(sc.Steps)
		for _, ex := range sc.Examples {
			tags(ex.Tags)
			for _, row := range ex.TableBody {
				fl.nodes[row.Id] = exampleRef{ex: ex, row: row}
			}
		}
	}
	tags(f.Tags)
	for _, ch := range f.Children {
		switch {
		case ch.Background != nil:
			background(ch.Background.Steps)
		case ch.Scenario != nil:
			scenario(ch.Scenario)
		case ch.Rule != nil:
			tags(ch.Rule.Tags)
			for _, rc := range ch.Rule.Children {
				switch {
				case rc.Background != nil:
					background(rc.Background.Steps)
				case rc.Scenario != nil:
					scenario(rc.Scenario)
				}
			}
		}
	}
}

// exampleRef is an Examples row with its table.
type exampleRef struct {
	ex  *messages.Examples
	row *messages.TableRow
}

// scenario turns one pickle into a Scenario. Positions come from the
// document's nodes; a pickle received without its document
// (FeatureDoc.CompileSteps) has the file's position only.
func (fl *featureLoader) scenario(p *messages.Pickle) *Scenario {
	var at *messages.Location
	var ast *messages.Scenario
	if len(p.AstNodeIds) > 0 {
		if ast, _ = fl.nodes[p.AstNodeIds[0]].(*messages.Scenario); ast != nil {
			at = ast.Location
		}
	}
	sc := &Scenario{
		Name:  strings.TrimSpace(p.Name),
		Pos:   fl.pos(at),
		Vars:  map[string]string{},
		Steps: []*steps.Step{},
	}
	if sc.Name == "" {
		sc.Name = fmt.Sprintf("scenario at line %d", sc.Pos.Line)
	}
	// The Examples row of an outline's scenario, when it is one.
	var ref exampleRef
	var row exampleRow
	isRow := false
	if len(p.AstNodeIds) > 1 {
		ref, isRow = fl.nodes[p.AstNodeIds[1]].(exampleRef)
	}
	fl.name(sc, ast, ref)
	if isRow {
		row = exampleRow{Values: map[string]string{}, Pos: fl.pos(ref.row.Location)}
		if ref.ex.TableHeader != nil {
			for i, c := range ref.ex.TableHeader.Cells {
				if i < len(ref.row.Cells) {
					cell := ref.row.Cells[i]
					row.Cols = append(row.Cols, c.Value)
					row.Values[c.Value] = cell.Value
					at := func(off int) diag.Pos {
						at := fl.pos(cell.Location)
						at.Col += utf8.RuneCountInString(cell.Value[:off])
						return at
					}
					row.noteRefs(c.Value, cell.Value, at)
					// A value used as ${column} is in no step's text.
					fl.envRefs.note(cell.Value, at)
				}
			}
		}
		maps.Copy(sc.Vars, row.Values)
		sc.Name += " " + row.suffix()
		sc.Outline, sc.Pos = sc.Pos, row.Pos
	}
	fl.tags(sc, p.Tags)
	if q := sc.Quarantine; q != nil {
		// The reason is the scenario's description: the lines under
		// Scenario:, where a reader of the feature sees it.
		if ast != nil {
			q.Reason = strings.Join(strings.Fields(ast.Description), " ")
		}
		if q.Reason == "" {
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: q.Pos,
				Message: "@quarantine needs a reason",
				Hint:    "say why in the scenario's description: the lines right under Scenario:"})
			sc.Quarantine = nil
		}
	}
	x := &expansions{}
	fl.steps(sc, p, x, row.EnvRefs)
	sc.EnvRefs = x.expanded(sc, row.EnvRefs)
	return sc
}

// name refuses a scenario's name that holds a character no name may
// (badName), as a YAML suite's loader does. The file holds none of
// them but NEL (notText), so one comes from an Examples cell (a "\n"
// escape) put in the name by its <column>: the problem is at that cell,
// else at the scenario.
func (fl *featureLoader) name(sc *Scenario, ast *messages.Scenario, ref exampleRef) {
	msg, hint, ok := badName("scenario name", sc.Name)
	if ok {
		return
	}
	at := sc.Pos
	if ast != nil && ref.row != nil && ref.ex.TableHeader != nil {
		for i, c := range ref.ex.TableHeader.Cells {
			if i < len(ref.row.Cells) && strings.Contains(ast.Name, "<"+c.Value+">") && strings.ContainsFunc(ref.row.Cells[i].Value, notNameRune) {
				at = fl.pos(ref.row.Cells[i].Location)
				break
			}
		}
	}
	fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Message: msg, Hint: hint})
}

// Tag parameters: @name:value on a Feature, Rule, Scenario or Examples. A
// later tag overrides an earlier one, so a Scenario overrides its Feature.
var tagParams = []string{"agent", "env", "via", "streaming", "retries", "repeat", "pass-rate", "confidence", "margin", "quarantine", "timeout", "within"}

// tagCount reads the count of @repeat:N or @retries:N in the range a
// suite's YAML takes (decoder.integer); tooBig says a whole number past
// it.
func tagCount(value string) (n int, ok, tooBig bool) {
	v, err := strconv.ParseInt(value, 10, 32)
	return int(v), err == nil, errors.Is(err, strconv.ErrRange)
}

// misspeltSkip reports whether a tag is @skip written wrong: in another
// case, with a letter missing, doubled or added, or two letters swapped.
// A letter replaced is left alone: @ship and @slip are words teams tag with.
func misspeltSkip(tag string) bool {
	t := strings.ToLower(tag)
	if t == "skip" {
		return tag != "skip"
	}
	switch len(t) {
	case 3, 5:
		return diag.EditDistance(t, "skip") == 1
	case 4:
		b := []byte(t)
		slices.Sort(b)
		return string(b) == "ikps"
	}
	return false
}

func (fl *featureLoader) tags(sc *Scenario, tags []*messages.PickleTag) {
	fl.within, fl.withinAt, fl.streamingTag, fl.bareStreaming = 0, diag.Pos{}, "", diag.Pos{}
	seen := map[string]bool{}
	// statAt is where each statistical setting was last written, for the
	// problems of the design; statsBad when one did not parse.
	statAt := map[string]diag.Pos{}
	statsBad := false
	// set is the parameter each element sets, by its key, for the
	// contradiction of two on one element (a YAML key given twice is an
	// error too); an element overrides the one it is inside, as before.
	type setting struct {
		owner int
		tag   string
		at    diag.Pos
	}
	set := map[string]setting{}
	for _, pt := range tags {
		name := strings.TrimPrefix(pt.Name, "@")
		t, _ := fl.nodes[pt.AstNodeId].(*messages.Tag)
		var at diag.Pos
		if t != nil {
			at = fl.pos(t.Location)
		} else {
			at = sc.Pos
		}
		if !validTag(name) {
			// As in a suite: no tag filter could select the scenario by
			// it, and "@smoke,@fast" is the tag "smoke," (the parser
			// splits at each @), which --tags @smoke leaves out in
			// silence.
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at,
				Message: fmt.Sprintf("invalid tag %q", pt.Name), Hint: hintTag})
			continue
		}
		if !seen[name] {
			seen[name] = true
			sc.Tags = append(sc.Tags, name)
		}
		if name == "skip" {
			sc.Skip = "skipped (@skip)"
			continue
		}
		key, value, ok := strings.Cut(name, ":")
		if !ok {
			// A misspelt @skip is a filter tag like any other, and the
			// scenario it was to hold back runs: say so.
			if misspeltSkip(name) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: at,
					Message: fmt.Sprintf("tag @%s is not @skip: the scenario runs", name), Hint: "did you mean @skip?"})
			}
			if strings.EqualFold(name, "streaming") {
				fl.bareStreaming = at
			}
			continue
		}
		bad := func(format string, args ...any) {
			fl.diags = fl.diags.Errorf(at, "tag @%s: %s", name, fmt.Sprintf(format, args...))
		}
		before := len(fl.diags)
		switch key {
		case "agent":
			if value == "" {
				bad("agent must not be empty")
			}
			if msg, hint := fixedBeforeRun("agent", value); msg != "" {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Message: fmt.Sprintf("tag @%s: %s", name, msg), Hint: hint})
				continue
			}
			sc.Agent, sc.AgentPos = value, at
		case "env":
			if !reply.ValidEnv(value) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Hint: envHint(value),
					Message: fmt.Sprintf("tag @%s: env %q is not a platform environment", name, value)})
				continue
			}
			sc.Env = value
		case "via":
			if !slices.Contains(steps.Vias, value) {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at, Hint: viaHint(value),
					Message: fmt.Sprintf("tag @%s: via must be one of %s", name, strings.Join(steps.Vias, ", "))})
				continue
			}
			sc.Start.Via, sc.Start.ViaPos = value, at
		case "streaming":
			if value != "true" && value != "false" {
				bad("streaming must be true or false")
				continue
			}
			sc.Start.Streaming, sc.Start.StreamingPos = value == "true", at
			fl.streamingTag = "tag @" + name
		case "retries":
			n, ok, tooBig := tagCount(value)
			switch {
			case tooBig:
				bad("%s is out of range (at most %d)", value, math.MaxInt32)
			case !ok || n < 0:
				bad("retries must be a whole number, 0 or more")
			default:
				sc.Retries = &n
			}
		case "repeat":
			n, ok, tooBig := tagCount(value)
			switch {
			case tooBig:
				bad("%s is out of range (at most %d)", value, math.MaxInt32)
				statsBad = true
			case !ok || n < 1:
				bad("repeat must be a whole number, 1 or more")
				statsBad = true
			default:
				sc.Stats.Repeat, statAt[TagNames.Repeat] = n, at
			}
		case "pass-rate", "pass_rate", "confidence", "margin":
			v, err := parseShare(value, shareExample[strings.ReplaceAll(key, "_", "-")])
			if err == nil && key != "confidence" && key != "margin" && v > 1 {
				err = fmt.Errorf("pass rate must be above 0 and at most 1 (0.8 or 80%%), not %q", value)
			}
			if err != nil {
				bad("%v", err)
				statsBad = true
				continue
			}
			switch key {
			case "confidence":
				sc.Stats.Confidence, statAt[TagNames.Confidence] = v, at
			case "margin":
				sc.Stats.Margin, statAt[TagNames.Margin] = v, at
			default:
				sc.Stats.PassRate, statAt[TagNames.PassRate] = v, at
			}
		case "quarantine":
			until, err := parseUntil(value)
			if err != nil {
				bad("%v", err)
				continue
			}
			sc.Quarantine = &Quarantine{Pos: at, Until: until}
		case "timeout":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				bad("timeout must be a duration above 0 such as 30s or 2m")
				continue
			}
			sc.Timeout = d
		case "within":
			d, err := time.ParseDuration(value)
			if err != nil || d <= 0 {
				bad("within must be a duration above 0 such as 30s or 2m")
				continue
			}
			fl.within, fl.withinAt = d, at
		default:
			if s := diag.Suggest(key, tagParams); s != "" {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: at,
					Message: fmt.Sprintf("tag @%s is not a parameter", name), Hint: fmt.Sprintf("did you mean @%s:%s?", s, value)})
			}
		}
		// A value the switch refused is its own problem, said once; a
		// valid one that another of the same element contradicts took the
		// last in silence ("@repeat:2 @repeat:3" ran three times).
		param := strings.ReplaceAll(key, "_", "-")
		owner, known := fl.tagOwner[pt.AstNodeId]
		if len(fl.diags) != before || !known || !slices.Contains(tagParams, param) {
			continue
		}
		if prev, ok := set[param]; ok && prev.owner == owner && prev.tag != name {
			fl.diags = fl.diags.Errorf(at, "tag @%s: @%s is already set on this element by @%s at %s: the two contradict each other", name, param, prev.tag, prev.at)
			statsBad = statsBad || slices.Contains([]string{"repeat", "pass-rate", "confidence", "margin"}, param)
			continue
		}
		set[param] = setting{owner: owner, tag: name, at: at}
	}
	if statsBad {
		return
	}
	for _, pr := range sc.Stats.Check(TagNames) {
		at, ok := statAt[pr.Setting]
		if !ok {
			at = sc.Pos
		}
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: pr.Severity, Pos: at, Message: pr.Message, Hint: pr.Hint})
	}
}

// parseShare reads a rate or a probability: 0.8 or 80%, above 0. example
// is a value of the kind the tag takes, for the message.
func parseShare(s, example string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err == nil && strings.HasSuffix(s, "%") {
		v /= 100
	}
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("must be a number above 0 such as %s, not %q", example, s)
	}
	return v, nil
}

// shareExample is a typical value of each tag parameter parseShare reads.
var shareExample = map[string]string{"pass-rate": "0.8 or 80%", "confidence": "0.95 or 95%", "margin": "0.05 or 5%"}

// steps compiles the steps of a pickle into the scenario's program and
// applies its setup steps to the scenario; x collects the references the
// program expands, cells are those of its Examples row's values.
func (fl *featureLoader) steps(sc *Scenario, p *messages.Pickle, x *expansions, cells map[string][]EnvRef) {
	var params steps.Params
	started, broken := false, false
	// probe is the scenario's probe step, once one was compiled.
	var probe *steps.Step
	// at is where the setup steps start and the steps that chose the
	// agent and the channel and set streaming (written streamingStep).
	// chatOnlyAt is the first setup step that set a parameter only debug
	// chat sends.
	var at setupPos
	chatOnlyAt := diag.Pos{}
	streamingStep := ""
	chatOnlyBg := false
	// startAt is the scenario's own first setup step (not its
	// Background's) that sets what YAML's start: does.
	startAt, startStep := diag.Pos{}, ""
	// scope is what a ${name} may refer to: the Examples row's columns,
	// then the captures of earlier steps.
	scope := make(map[string]bool, len(sc.Vars))
	for k := range sc.Vars {
		scope[k] = true
	}
	for _, ps := range p.Steps {
		in := steps.Input{Text: ps.Text, Pos: sc.Pos}
		// asWritten: the step's text is the line's, not a Scenario
		// Outline's substitution, so a column within it is one of the line.
		// written is the step's text as the line has it.
		asWritten, written := false, ps.Text
		var astStep *messages.Step
		if len(ps.AstNodeIds) > 0 {
			if ast, ok := fl.nodes[ps.AstNodeIds[0]].(*messages.Step); ok {
				in.Pos, in.Keyword = fl.pos(ast.Location), ast.Keyword
				asWritten, written = ast.Text == ps.Text, ast.Text
				astStep = ast
			}
		}
		if a := ps.Argument; a != nil {
			if a.DocString != nil {
				doc := a.DocString.Content
				in.DocString = &doc
			}
			if a.DataTable != nil {
				in.Table = [][]string{}
				for _, r := range a.DataTable.Rows {
					row := make([]string, len(r.Cells))
					for i, c := range r.Cells {
						row[i] = c.Value
					}
					in.Table = append(in.Table, row)
				}
			}
		}
		texts := fl.stepTexts(in, astStep, asWritten)
		if in.DocString != nil {
			in.DocPos = texts[1].at(0)
		}
		for _, t := range texts {
			fl.envRefs.note(t.text, t.at)
		}
		refsBroken := fl.checkRefs(texts, scope)
		st, err := library.Compile(in)
		if _, ok := errors.AsType[*interp.SyntaxError](err); ok && refsBroken {
			// checkRefs reported it, at the reference itself.
			broken = true
			continue
		}
		if err != nil {
			d := diag.Diagnostic{Severity: diag.Error, Pos: in.Pos, Message: err.Error()}
			if se, ok := err.(*steps.Error); ok {
				d.Message, d.Hint = se.Message, se.Hint
				if se.Col > 0 && asWritten {
					d.Pos.Col += utf8.RuneCountInString(in.Keyword) + se.Col - 1
				}
				if se.Captures != "" {
					scope[se.Captures] = true
				}
				if !asWritten && len(library.Match(in.Text)) == 0 {
					if hint := rowBreaksStep(sc, written); hint != "" {
						d.Hint = hint
					}
				}
			}
			fl.diags = fl.diags.Append(d)
			broken = true
			continue
		}
		sc.Steps = append(sc.Steps, st)
		if st.Kind != steps.Setup {
			// A setup step's arguments are expanded when the
			// conversation opens, and not all of them (expansions).
			fl.expands(x, texts, in, astStep, cells)
		}
		if st.Kind == steps.Check {
			if exp, err := st.Expect(keepRefs); err == nil {
				fl.eventTypes(exp, in, ps, astStep, asWritten)
				fl.unfailing(exp, in, ps, astStep, asWritten)
			}
		}
		for _, ev := range st.Webhooks {
			at := in.Pos
			if asWritten {
				at = quoteAt(in)
			}
			fl.diags = webhookEvent(fl.diags, at, ev)
		}
		if st.Kind == steps.Capture {
			if scope[st.Capture.Name] {
				// As the YAML decoder warns of a capture: a ${name} means
				// the column (or the earlier value) above this step and
				// the remembered value below it. At the name's quote.
				at := in.Pos
				if asWritten {
					at = quoteAt(in)
				}
				fl.diags = fl.diags.Warnf(at, "capture %s replaces the variable of the same name from here on", st.Capture.Name)
			}
			scope[st.Capture.Name] = true
		}
		if st.Kind != steps.Setup {
			fl.probeRules(st, &probe, started)
			started = true
			continue
		}
		if started {
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: st.Pos,
				Message: fmt.Sprintf("setup step %q comes after the conversation started", st.Text),
				Hint:    "move it before the first When: session parameters are sent when the session opens"})
			continue
		}
		if at.first.IsZero() {
			at.first = st.Pos
		}
		// Setup arguments keep their ${...}: the runner expands the start
		// parameters when it opens the session, as for YAML. The agent
		// and the env are fixed before that.
		before := params
		before.Attributes = maps.Clone(params.Attributes)
		_ = st.Setup(&params, keepRefs)
		// A problem with the agent or the env is at the argument that
		// names it when the step is as written, and so is the agent's
		// place (an agent the target does not serve is refused there).
		argAt := st.Pos
		if asWritten {
			argAt = quoteAt(in)
		}
		for _, v := range [][3]string{{"agent", before.Agent, params.Agent}, {"env", before.Env, params.Env}} {
			if v[1] != v[2] {
				if msg, hint := fixedBeforeRun(v[0], v[2]); msg != "" {
					fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: argAt, Message: msg, Hint: hint})
				} else if v[0] == "env" && !reply.ValidEnv(v[2]) {
					// At the step that names it, not at the first setup
					// step (a Background's, perhaps).
					fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: argAt, Hint: envHint(v[2]),
						Message: fmt.Sprintf("environment %q is not a platform environment", v[2])})
				}
			}
		}
		if params.Agent != before.Agent {
			at.agent = argAt
		}
		if params.Via != before.Via {
			at.via = st.Pos
		}
		if params.Streaming != before.Streaming {
			at.streaming, streamingStep = st.Pos, st.Text
		}
		if chatOnlyAt.IsZero() && (params.Channel != before.Channel || params.Variant != before.Variant ||
			params.ASRLang != before.ASRLang || params.TTSLang != before.TTSLang) {
			chatOnlyAt = st.Pos
			chatOnlyBg = len(ps.AstNodeIds) > 0 && fl.background[ps.AstNodeIds[0]]
		}
		if startAt.IsZero() && !(len(ps.AstNodeIds) > 0 && fl.background[ps.AstNodeIds[0]]) &&
			(params.Channel != before.Channel || params.Variant != before.Variant || params.ASRLang != before.ASRLang ||
				params.TTSLang != before.TTSLang || !maps.Equal(params.Attributes, before.Attributes)) {
			startAt, startStep = st.Pos, st.Text
		}
	}
	if !started && !broken && !fl.partial {
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: sc.Pos,
			Message: fmt.Sprintf("scenario %q has no When or Then steps", sc.Name),
			Hint:    `add When the user says "..." and Then steps, or Given the conversation has started and greeting checks`})
	}
	if started && !broken && !slices.ContainsFunc(sc.Steps, func(st *steps.Step) bool { return st.Kind != steps.Setup && st.Kind != steps.Open }) {
		// The conversation opens and nothing is said or checked: the
		// scenario would pass whatever the agent did, as a YAML scenario
		// with no turns and no greeting checks would (an error there).
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: sc.Pos,
			Message: fmt.Sprintf("scenario %q starts the conversation but has no When or Then steps: it checks nothing", sc.Name),
			Hint:    `add Then steps that check the greeting, or When the user says "..." and Then steps`})
	}
	fl.apply(sc, params, at)
	what := fl.streamingTag
	if params.Streaming != nil {
		what = fmt.Sprintf("step %q", streamingStep)
	}
	fl.streamingUses.note(sc, what, hintStreamingFeature)
	if sc.Messaging() && sc.Start.StreamingPos.IsZero() && !fl.bareStreaming.IsZero() {
		// Written to stream the replies, it would leave them whole
		// without a word; over debug chat it is a filter tag like any
		// other.
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: fl.bareStreaming,
			Message: "tag @streaming is a filter tag: the replies are not streamed", Hint: "to ask for streamed replies, write @streaming:true"})
	}
	if ds := setupOverMessaging(sc, chatOnlyAt); !chatOnlyBg {
		fl.diags = append(fl.diags, ds...)
	} else if old, seen := fl.bgChatOnly[chatOnlyAt]; !seen {
		if fl.bgChatOnly == nil {
			fl.bgChatOnly = map[diag.Pos][]diag.Diagnostic{}
		}
		fl.bgChatOnly[chatOnlyAt] = ds
		fl.bgOrder = append(fl.bgOrder, chatOnlyAt)
	} else if old != nil && ds == nil {
		fl.bgChatOnly[chatOnlyAt] = nil
	}
	for _, st := range sc.Steps {
		fl.diags = append(fl.diags, viaStep(st, sc.Messaging())...)
	}
	if probe != nil && !broken {
		fl.diags = append(fl.diags, confirmAfterFailedCall(sc.Steps)...)
		fl.diags = append(fl.diags, smsConversationEnds(sc.Steps)...)
		// As the YAML decoder warns of a probe scenario's start: and of
		// an SMS probe without confirm:.
		if !startAt.IsZero() {
			fl.diags = fl.diags.Warnf(startAt, "setup step %q configures a debug-chat session and has no effect on a probe", startStep)
		}
		if probe.Probe.SMS != nil && !slices.ContainsFunc(sc.Steps, func(st *steps.Step) bool { return st.Kind == steps.Confirm }) {
			at := sc.Pos
			if !sc.Outline.IsZero() {
				// Each row at the outline, by its name, as YAML warns of
				// each examples row at its scenario.
				at = sc.Outline
			}
			fl.diags = fl.diags.Warnf(at, "probe scenario %q has no confirmation step: it only checks that the SMS is accepted", sc.Name)
		}
	}
	if fl.within > 0 {
		if probe != nil && probe.Probe.Call != nil {
			probe.Probe.Within = fl.within
		} else if !broken {
			fl.diags = fl.diags.Warnf(fl.withinAt, "@within bounds the wait for an outbound call's status; scenario %q places no call", sc.Name)
		}
	}
}

// quoteAt is the position of the opening quote of a step written as in
// the file (its first quoted argument), or the step's own when its text
// has none.
func quoteAt(in steps.Input) diag.Pos {
	at := in.Pos
	if q := strings.IndexByte(in.Text, '"'); q >= 0 {
		at.Col += utf8.RuneCountInString(in.Keyword) + utf8.RuneCountInString(in.Text[:q])
	}
	return at
}

// unfailing warns of the checks of a Then step that cannot fail
// (assert.Expect.Unfailing), as the YAML decoder does of an expect:'s:
// contains "", a pattern that matches every text, a row of contains one
// of left empty. At the step's quote, or at the cell of the Examples row
// that a Scenario Outline's "<name>" stands for.
func (fl *featureLoader) unfailing(exp *assert.Expect, in steps.Input, ps *messages.PickleStep, ast *messages.Step, asWritten bool) {
	for _, u := range exp.Unfailing() {
		at := in.Pos
		if in.Table == nil {
			at = fl.quotedAt(in, ps, ast, asWritten)
		}
		fl.diags = fl.diags.Warnf(at, "%s", unfailing(u))
	}
}

// quotedAt is where a warning of a step's quoted text points: at its
// opening quote, or, when the text as written is a Scenario Outline's
// "<name>", at the cell of the Examples row that stands for it.
func (fl *featureLoader) quotedAt(in steps.Input, ps *messages.PickleStep, ast *messages.Step, asWritten bool) diag.Pos {
	switch {
	case asWritten:
		return quoteAt(in)
	case ast != nil:
		if q, e := strings.IndexByte(ast.Text, '"'), strings.LastIndexByte(ast.Text, '"'); q >= 0 && e > q {
			if pos, ok := fl.placeholderCell(ps, ast.Text[q+1:e]); ok {
				return pos
			}
		}
	}
	return in.Pos
}

// eventTypes warns about the event types of an events step, as the YAML
// decoder does about those of events:, at the type: the opening quote of
// the step's text, or the cell of the table row. A type that a Scenario
// Outline's <placeholder> stands for is pointed at in the Examples row.
func (fl *featureLoader) eventTypes(exp *assert.Expect, in steps.Input, ps *messages.PickleStep, ast *messages.Step, asWritten bool) {
	if exp.Events == nil {
		return
	}
	ev := exp.Events
	fl.diags = append(fl.diags, eventTypeWarnings(ev, func(list string, i int) (diag.Pos, bool) {
		at := in.Pos
		if in.Table != nil {
			// One type per row, after the header when there is one.
			n := map[string]int{"includes": len(ev.Includes), "excludes": len(ev.Excludes), "sequence": len(ev.Sequence)}[list]
			if ast != nil && ast.DataTable != nil {
				rows := ast.DataTable.Rows
				if r := len(rows) - n + i; r >= 0 && r < len(rows) && len(rows[r].Cells) > 0 {
					cell := rows[r].Cells[0]
					if pos, ok := fl.placeholderCell(ps, cell.Value); ok {
						return pos, true
					}
					return fl.pos(cell.Location), true
				}
			}
			return at, true
		}
		return fl.quotedAt(in, ps, ast, asWritten), true
	})...)
}

// placeholderCell is where the value of a pickle's step text comes from
// when the text, as written, is just a Scenario Outline's <name>: the cell
// of the pickle's Examples row under that column.
func (fl *featureLoader) placeholderCell(ps *messages.PickleStep, written string) (diag.Pos, bool) {
	name, open := strings.CutPrefix(written, "<")
	name, closed := strings.CutSuffix(name, ">")
	if !open || !closed || len(ps.AstNodeIds) < 2 {
		return diag.Pos{}, false
	}
	ref, ok := fl.nodes[ps.AstNodeIds[1]].(exampleRef)
	if !ok || ref.ex.TableHeader == nil {
		return diag.Pos{}, false
	}
	for i, c := range ref.ex.TableHeader.Cells {
		if c.Value == name && i < len(ref.row.Cells) {
			return fl.pos(ref.row.Cells[i].Location), true
		}
	}
	return diag.Pos{}, false
}

// rowBreaksStep is the hint of a Scenario Outline's step (written: its
// text as the line has it) that its Examples row (of sc) makes undefined:
// a value with a double quote ends the step's quoted text early. It is
// empty when that is not what breaks the step.
func rowBreaksStep(sc *Scenario, written string) string {
	escaped := written
	var quoted []string
	for _, k := range slices.Sorted(maps.Keys(sc.Vars)) {
		v := sc.Vars[k]
		if strings.Contains(v, `"`) && strings.Contains(written, "<"+k+">") {
			quoted = append(quoted, "<"+k+">")
		}
		escaped = strings.ReplaceAll(escaped, "<"+k+">", strings.ReplaceAll(v, `"`, `\"`))
	}
	if len(quoted) == 0 || len(library.Match(escaped)) != 1 {
		return ""
	}
	return fmt.Sprintf(`the value of %s in the Examples row at line %d has a double quote, which ends the step's quoted text: write it \" in the table`,
		strings.Join(quoted, " and "), sc.Pos.Line)
}

// expands notes in x the references the texts of a step expand. A step
// of a Scenario Outline's row holds the row's values in place of its
// <column>s (cells: the references of each value): a reference among them
// is noted at its cell, and one the step writes itself at its place in the
// step, as the file has it, rather than all at the step.
func (fl *featureLoader) expands(x *expansions, texts []stepText, in steps.Input, ast *messages.Step, cells map[string][]EnvRef) {
	if ast == nil || cells == nil {
		for _, t := range texts {
			x.read(t.text, t.at)
		}
		return
	}
	for _, t := range texts {
		x.refers = x.refers || hasRefs(t.text)
	}
	var holds []string
	for _, t := range fl.writtenTexts(ast) {
		x.text.note(t.text, t.at)
		holds = append(holds, t.text)
	}
	for _, col := range slices.Sorted(maps.Keys(cells)) {
		if slices.ContainsFunc(holds, func(t string) bool { return strings.Contains(t, "<"+col+">") }) {
			for _, r := range cells[col] {
				x.text.add(r)
			}
		}
	}
}

// writtenTexts are the texts of a step as the file writes it, before a
// Scenario Outline's row fills its <column>s (stepTexts).
func (fl *featureLoader) writtenTexts(ast *messages.Step) []stepText {
	in := steps.Input{Text: ast.Text, Pos: fl.pos(ast.Location), Keyword: ast.Keyword}
	if ast.DocString != nil {
		doc := ast.DocString.Content
		in.DocString = &doc
	}
	if ast.DataTable != nil {
		for _, r := range ast.DataTable.Rows {
			row := make([]string, len(r.Cells))
			for i, c := range r.Cells {
				row[i] = c.Value
			}
			in.Table = append(in.Table, row)
		}
	}
	return fl.stepTexts(in, ast, true)
}

// stepText is one text of a step that may hold ${...} references (its
// text, DocString or a table cell), with where each byte offset of it is
// written in the file.
type stepText struct {
	text string
	at   func(off int) diag.Pos
}

// stepTexts returns the texts of a step (in, compiled from astStep;
// asWritten when the pickle's text is the step's line, not an outline's
// substitution). A reference in the step's text or its DocString is at
// its own line and column when the text is as written; else, and in a
// table cell, at the step, the DocString's first line or the cell.
func (fl *featureLoader) stepTexts(in steps.Input, astStep *messages.Step, asWritten bool) []stepText {
	whole := func(pos diag.Pos) func(int) diag.Pos { return func(int) diag.Pos { return pos } }
	text := stepText{text: in.Text, at: whole(in.Pos)}
	if asWritten {
		text.at = func(off int) diag.Pos {
			at := in.Pos
			at.Col += utf8.RuneCountInString(in.Keyword) + utf8.RuneCountInString(in.Text[:off])
			return at
		}
	}
	out := []stepText{text}
	if in.DocString != nil {
		doc := stepText{text: *in.DocString, at: whole(in.Pos)}
		if astStep != nil && astStep.DocString != nil {
			ds := astStep.DocString
			// Gherkin strips each content line's indentation up to the
			// opening delimiter's column, so a line's text starts there.
			first := fl.pos(ds.Location)
			first.Line++
			doc.at = whole(first)
			if ds.Content == *in.DocString {
				doc.at = func(off int) diag.Pos {
					at := first
					before := ds.Content[:off]
					line := strings.LastIndexByte(before, '\n') + 1
					at.Line += strings.Count(before, "\n")
					at.Col += utf8.RuneCountInString(before[line:])
					return at
				}
			}
		}
		out = append(out, doc)
	}
	for i, row := range in.Table {
		for j, cell := range row {
			at := in.Pos
			if astStep != nil && astStep.DataTable != nil && i < len(astStep.DataTable.Rows) && j < len(astStep.DataTable.Rows[i].Cells) {
				at = fl.pos(astStep.DataTable.Rows[i].Cells[j].Location)
			}
			out = append(out, stepText{text: cell, at: whole(at)})
		}
	}
	return out
}

// checkRefs reports the ${name} references of a step's texts (stepTexts)
// that are malformed or name nothing in scope, as the YAML decoder does,
// each where it is written: at run time they could only error the
// scenario. ${env:NAME} is left to run time. It reports whether one was
// malformed.
func (fl *featureLoader) checkRefs(texts []stepText, scope map[string]bool) (malformed bool) {
	for _, t := range texts {
		if !strings.Contains(t.text, "${") {
			continue
		}
		refs, err := interp.Scan(t.text)
		if err != nil {
			fl.diags = fl.diags.Errorf(t.at(interp.Offset(err)), "%v", err)
			malformed = true
			continue
		}
		for _, r := range refs {
			if r.Env || scope[r.Name] {
				continue
			}
			// Sorted: ties in Suggest must not depend on map order.
			names := slices.Sorted(maps.Keys(scope))
			hint := "a feature's variables are the Examples columns and the captures of earlier steps"
			if s := diag.Suggest(r.Name, names); s != "" {
				hint = fmt.Sprintf("did you mean ${%s}?", s)
			}
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: t.at(r.Off),
				Message: fmt.Sprintf("unknown variable ${%s}: not an Examples column or a capture of an earlier step", r.Name), Hint: hint})
		}
	}
	return malformed
}

// placeholder is a Scenario Outline's <column>.
var placeholder = regexp.MustCompile(`<([^<>\n]+)>`)

// outlineColumns reports the <name> placeholders of each Scenario
// Outline's steps that an Examples table of the outline lacks as a
// column: Gherkin substitutes each row from its own table only and leaves
// the rest as they are, so a misspelt <dya>, or a <party> that one of two
// Examples tables has and the other has not, would be sent to the agent
// literally. It also reports a column named twice in one table (the row's
// <day> and ${day} would read different cells), an Examples block that
// adds no scenario, and a Scenario Outline with placeholders and no
// Examples at all (Gherkin runs it once, placeholders as written).
func (fl *featureLoader) outlineColumns(f *messages.Feature) {
	outline := map[string]bool{}
	if d := gherkin.DialectsBuiltin().GetDialect(f.Language); d != nil {
		for _, k := range d.ScenarioOutlineKeywords() {
			outline[k] = true
		}
	}
	check := func(sc *messages.Scenario) {
		if sc == nil {
			return
		}
		name := strings.TrimSpace(sc.Name)
		if len(sc.Examples) == 0 {
			if !outline[sc.Keyword] {
				return
			}
			for _, st := range sc.Steps {
				// The step's text, DocString and table cells: where a
				// placeholder is substituted.
				for _, t := range fl.writtenTexts(st) {
					if m := placeholder.FindStringSubmatchIndex(t.text); m != nil {
						fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: t.at(m[0]),
							Message: fmt.Sprintf("Scenario Outline %q has no Examples: %s would be sent as written", name, t.text[m[0]:m[1]]),
							Hint:    "add an Examples: table with a column for each <name>, or write the step without <...>"})
						return
					}
				}
			}
			return
		}
		// tables are the Examples blocks that add scenarios.
		var tables []*messages.Examples
		for _, ex := range sc.Examples {
			if ex.TableHeader == nil || len(ex.TableBody) == 0 {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: fl.pos(ex.Location),
					Message: fmt.Sprintf("%s of %q has no rows: it adds no scenario", strings.TrimSpace(ex.Keyword), name),
					Hint:    "write a | column | header and one row per scenario under it, or remove the block"})
				continue
			}
			tables = append(tables, ex)
			seen := map[string]bool{}
			for _, c := range ex.TableHeader.Cells {
				if seen[c.Value] {
					fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: fl.pos(c.Location),
						Message: fmt.Sprintf("column %q is named twice in the Examples of %q", c.Value, name),
						Hint:    "give each column its own name: <name> and ${name} would read different cells"})
				}
				seen[c.Value] = true
			}
		}
		// cols[i] holds the columns of tables[i]; all is every column, in
		// order, for the hint when no table has the placeholder.
		cols := make([]map[string]bool, len(tables))
		names := make([][]string, len(tables))
		var all []string
		for i, ex := range tables {
			cols[i] = map[string]bool{}
			for _, c := range ex.TableHeader.Cells {
				if !cols[i][c.Value] {
					cols[i][c.Value] = true
					names[i] = append(names[i], c.Value)
					if !slices.Contains(all, c.Value) {
						all = append(all, c.Value)
					}
				}
			}
		}
		// used are the placeholders of the steps: a column none of them
		// uses that is a near miss of one is more likely the typo.
		used := map[string]bool{}
		written := make([][]stepText, len(sc.Steps))
		for i, st := range sc.Steps {
			written[i] = fl.writtenTexts(st)
			for _, t := range written[i] {
				for _, m := range placeholder.FindAllStringSubmatch(t.text, -1) {
					used[m[1]] = true
				}
			}
		}
		header := func(col string) *messages.Location {
			for _, ex := range tables {
				for _, c := range ex.TableHeader.Cells {
					if c.Value == col {
						return c.Location
					}
				}
			}
			return nil
		}
		report := func(at diag.Pos, col, of string, names []string) {
			hint := "the columns are " + strings.Join(names, ", ")
			if s := diag.Suggest(col, names); s != "" {
				hint = fmt.Sprintf("did you mean <%s>?", s)
				if at := header(s); !used[s] && at != nil {
					hint = fmt.Sprintf("did you mean <%s>? no step uses that column (%s): if it is the one misspelt, name it %q", s, fl.pos(at), col)
				}
			}
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: at,
				Message: fmt.Sprintf("<%s> is not a column of %s: it would be sent as written", col, of), Hint: hint})
		}
		for _, texts := range written {
			for _, t := range texts {
				for _, m := range placeholder.FindAllStringSubmatchIndex(t.text, -1) {
					col := t.text[m[2]:m[3]]
					var lacking []int
					for i := range tables {
						if !cols[i][col] {
							lacking = append(lacking, i)
						}
					}
					switch {
					case len(lacking) == 0:
					case len(lacking) == len(tables):
						report(t.at(m[0]), col, fmt.Sprintf("the Examples of %q", name), all)
					default:
						for _, i := range lacking {
							report(t.at(m[0]), col, fmt.Sprintf("the Examples at line %d of %q", tables[i].Location.Line, name), names[i])
						}
					}
				}
			}
		}
	}
	for _, ch := range f.Children {
		check(ch.Scenario)
		if ch.Rule != nil {
			for _, rc := range ch.Rule.Children {
				check(rc.Scenario)
			}
		}
	}
}

// keepRefs is the expander of setup steps at load time: references stay
// as written until the session opens.
func keepRefs(s string) (string, error) { return s, nil }

// probeRules applies the rules of probe scenarios to one compiled step
// (started: an earlier step already ran something; probe: the scenario's
// probe step so far). A probe replaces the debug chat, as `probe:` does in
// YAML: it comes first, once, and no turn or reply check may follow it, so
// the CLI's live-safety check of probe numbers and `list` treat it exactly
// as a YAML probe, before anything runs.
func (fl *featureLoader) probeRules(st *steps.Step, probe **steps.Step, started bool) {
	bad := func(msg, hint string) {
		fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: st.Pos, Message: msg, Hint: hint})
	}
	switch st.Kind {
	case steps.Probe:
		switch {
		case *probe != nil:
			bad(fmt.Sprintf("probe step %q: the scenario already starts from a probe at %s", st.Text, (*probe).Pos),
				"write one probe per scenario")
			return
		case started:
			bad(fmt.Sprintf("probe step %q comes after the conversation started", st.Text),
				"a probe replaces the debug chat: make it the first When, or write a separate scenario")
			return
		}
		to := ""
		if st.Probe.Call != nil {
			to = st.Probe.Call.To
		} else {
			to = st.Probe.SMS.To
		}
		// An empty number is refused as YAML's to: "" is; one with ${...}
		// is checked when it is expanded.
		if !strings.Contains(to, "${") && !validPhone(to) {
			bad(fmt.Sprintf("probe step %q: %q is not a phone number", st.Text, to), `write an E.164 number such as "+447700900001"`)
			return
		}
		*probe = st
	case steps.CallStatus:
		if *probe == nil || (*probe).Probe.Call == nil {
			bad(fmt.Sprintf("step %q has no call to wait for", st.Text),
				`place the call first: When an outbound call is placed to "+447700900001"`)
		}
	case steps.Open, steps.Say, steps.Check, steps.Capture:
		if *probe != nil {
			bad(fmt.Sprintf("step %q needs a debug chat, but the scenario starts from a probe at %s", st.Text, (*probe).Pos),
				"a probe scenario checks what the platform recorded (the conversation record, handoff state, webhooks); write a separate scenario for a debug chat")
		}
	}
}

// setupPos is where a scenario's setup steps set what apply records a
// position for.
type setupPos struct {
	// first is the first setup step; agent, via and streaming are the
	// steps that chose the agent and the channel and set streaming.
	first, agent, via, streaming diag.Pos
}

// apply sets the parameters of Setup steps on the scenario; steps override
// tags, as the later word.
func (fl *featureLoader) apply(sc *Scenario, p steps.Params, at setupPos) {
	if p.Agent != "" {
		sc.Agent, sc.AgentPos = p.Agent, at.agent
	}
	if p.Env != "" {
		// Refused at its step when it is not an environment
		// (featureLoader.steps).
		sc.Env = p.Env
	}
	st := Start{Channel: p.Channel, Variant: p.Variant, ASRLang: p.ASRLang, TTSLang: p.TTSLang, IntegrationAttributes: p.Attributes}
	if st.Channel != "" || st.Variant != "" || st.ASRLang != "" || st.TTSLang != "" || len(st.IntegrationAttributes) > 0 {
		st.Pos = at.first
	}
	// A setup step chooses the channel over a @via tag, as the later word.
	st.Via, st.ViaPos = sc.Start.Via, sc.Start.ViaPos
	if p.Via != "" {
		st.Via, st.ViaPos = p.Via, at.via
	}
	st.Streaming, st.StreamingPos = sc.Start.Streaming, sc.Start.StreamingPos
	if p.Streaming != nil {
		st.Streaming, st.StreamingPos = *p.Streaming, at.streaming
	}
	sc.Start = st
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
