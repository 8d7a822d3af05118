package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
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
	s.Regions = regions(doc.Feature, s.Lines)
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
	fl.rememberedElsewhere()
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
	// remembered is, by name, the first step of the file that remembers
	// a value, and unknownRefs the ${name} references of the scenarios
	// that no step of theirs remembers, so that one another scenario
	// remembers says so (rememberedElsewhere).
	remembered  map[string]rememberSite
	unknownRefs []unknownRef
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
	// background maps the ids of Background steps to their
	// Background's line. bgChatOnly holds,
	// per Background setup step that sets a parameter only debug chat
	// sends, its warning, or nil once a scenario over debug chat used it:
	// as a YAML suite's start:, a Background that serves debug-chat
	// scenarios too is not warned about. bgOrder keeps them in file order.
	background map[string]int
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
	background := func(bg *messages.Background) {
		stepsOf(bg.Steps)
		if fl.background == nil {
			fl.background = map[string]int{}
		}
		for _, st := range bg.Steps {
			fl.background[st.Id] = int(bg.Location.Line)
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
			background(ch.Background)
		case ch.Scenario != nil:
			scenario(ch.Scenario)
		case ch.Rule != nil:
			tags(ch.Rule.Tags)
			for _, rc := range ch.Rule.Children {
				switch {
				case rc.Background != nil:
					background(rc.Background)
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
	// chatOnlyAt is, per place the setup steps are written (each
	// Background by its line, the scenario's own steps at 0), the first
	// that set a parameter only debug chat sends; chatOnly lists the
	// places in order.
	var at setupPos
	chatOnlyAt := map[int]diag.Pos{}
	var chatOnly []int
	streamingStep := ""
	// startAt is the scenario's own first setup step (not its
	// Background's) that sets what YAML's start: does.
	startAt, startStep := diag.Pos{}, ""
	// scope is what a ${name} may refer to: the Examples row's columns,
	// then the captures of earlier steps.
	scope := make(map[string]bool, len(sc.Vars))
	for k := range sc.Vars {
		scope[k] = true
	}
	// unknown notes the ${name} references that named nothing in scope,
	// for the hint of a later step that remembers the name.
	unknown := map[string][]int{}
	defer fl.keepUnknown(unknown, p)
	// nil in English, as steps.Input says: an undefined step's hint
	// then needs no word on the language of its keywords.
	var keywords map[string][]string
	if p.Language != gherkin.DefaultDialect {
		keywords = dialect(p.Language).Keywords
	}
	for _, ps := range p.Steps {
		in := steps.Input{Text: ps.Text, Pos: sc.Pos, Keywords: keywords}
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
		if in.Table != nil && astStep != nil && astStep.DataTable != nil {
			in.TableAt = make([][]diag.Pos, len(in.Table))
			for i, row := range in.Table {
				for j := range row {
					if at, ok := fl.tableCell(ps, astStep, i+1, j+1); ok {
						in.TableAt[i] = append(in.TableAt[i], at)
					}
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
		unknownBefore := len(fl.diags)
		refsBroken := fl.checkRefs(texts, scope, unknown)
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
				if at, ok := fl.tableCell(ps, astStep, se.Row, se.Cell); ok {
					d.Pos = at
				}
				if se.Captures != "" {
					fl.rememberedLater(unknown, se.Captures, in.Pos, unknownBefore)
					fl.remember(se.Captures, sc, p, in.Pos)
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
				fl.threshold(exp, in, ps, astStep, asWritten)
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
			fl.rememberedLater(unknown, st.Capture.Name, in.Pos, unknownBefore)
			fl.remember(st.Capture.Name, sc, p, in.Pos)
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
		if params.Channel != before.Channel {
			if msg, hint := channelWarning(params.Channel); msg != "" {
				fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: argAt, Message: msg, Hint: hint})
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
		bg := 0
		if len(ps.AstNodeIds) > 0 {
			bg = fl.background[ps.AstNodeIds[0]]
		}
		if _, seen := chatOnlyAt[bg]; !seen && (params.Channel != before.Channel || params.Variant != before.Variant ||
			params.ASRLang != before.ASRLang || params.TTSLang != before.TTSLang) {
			chatOnlyAt[bg] = st.Pos
			chatOnly = append(chatOnly, bg)
		}
		if startAt.IsZero() && bg == 0 &&
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
	// Each place is warned about on its own, as each start: of a YAML
	// suite is: a Background that debug-chat scenarios share hides
	// neither a Rule's Background nor the scenario's own steps.
	for _, bg := range chatOnly {
		at := chatOnlyAt[bg]
		if ds := setupOverMessaging(sc, at); bg == 0 {
			fl.diags = append(fl.diags, ds...)
		} else if old, seen := fl.bgChatOnly[at]; !seen {
			if fl.bgChatOnly == nil {
				fl.bgChatOnly = map[diag.Pos][]diag.Diagnostic{}
			}
			fl.bgChatOnly[at] = ds
			fl.bgOrder = append(fl.bgOrder, at)
		} else if old != nil && ds == nil {
			fl.bgChatOnly[at] = nil
		}
	}
	for _, st := range sc.Steps {
		fl.diags = append(fl.diags, viaStep(st, sc.Messaging())...)
	}
	if probe == nil && !broken {
		fl.diags = append(fl.diags, chatRecordings(sc)...)
	}
	if probe != nil && !broken {
		fl.diags = append(fl.diags, confirmAfterFailedCall(sc.Steps)...)
		fl.diags = append(fl.diags, smsConfirmations(sc.Steps)...)
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

// threshold warns of a similarity step whose threshold checks next to
// nothing (assert.PointlessThreshold), as the YAML decoder does of a
// similar:'s min:, at the threshold as written, or at the cell of the
// Examples row that a Scenario Outline's <name> stands for.
func (fl *featureLoader) threshold(exp *assert.Expect, in steps.Input, ps *messages.PickleStep, ast *messages.Step, asWritten bool) {
	if exp.Response == nil || exp.Response.Similar == nil {
		return
	}
	why := assert.PointlessThreshold(exp.Response.Similar.Min, false)
	if why == "" {
		return
	}
	const lead = " with at least "
	i := strings.LastIndex(in.Text, lead)
	if i < 0 {
		return
	}
	at, written := in.Pos, in.Text[i+len(lead):]
	switch {
	case asWritten:
		at.Col += utf8.RuneCountInString(in.Keyword) + utf8.RuneCountInString(in.Text[:i+len(lead)])
	case ast != nil:
		// The threshold of the row, when the step as written is the
		// column's <name> alone; the step otherwise ("<n>%").
		if j := strings.LastIndex(ast.Text, lead); j >= 0 {
			if cell, ok := fl.placeholderCell(ps, ast.Text[j+len(lead):]); ok {
				at = cell
			}
		}
	}
	fl.diags = fl.diags.Warnf(at, "similar with at least %s %s", written, why)
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
		if in.Table != nil {
			// At the type's row, as a failure of the type is.
			return cmp.Or(ev.Parts.ItemPos(list, i), in.Pos), true
		}
		return fl.quotedAt(in, ps, ast, asWritten), true
	})...)
}

// tableCell is where cell (from 1) of row (from 1) of a step's DataTable
// is written: the Examples cell when the cell is an Outline's
// <placeholder>, since the value at fault comes from there. ok is false
// when the step has no such cell (row 0: the error is of no cell).
func (fl *featureLoader) tableCell(ps *messages.PickleStep, ast *messages.Step, row, cell int) (diag.Pos, bool) {
	if ast == nil || ast.DataTable == nil || row < 1 || row > len(ast.DataTable.Rows) {
		return diag.Pos{}, false
	}
	cells := ast.DataTable.Rows[row-1].Cells
	if len(cells) == 0 {
		return diag.Pos{}, false
	}
	c := cells[min(max(cell, 1), len(cells))-1]
	if pos, ok := fl.placeholderCell(ps, c.Value); ok {
		return pos, true
	}
	return fl.pos(c.Location), true
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
		to, from := "", ""
		if st.Probe.Call != nil {
			to, from = st.Probe.Call.To, st.Probe.Call.AgentNumber
		} else {
			to, from = st.Probe.SMS.To, st.Probe.SMS.AgentNumber
		}
		// An empty number is refused as YAML's to: "" is; one with ${...}
		// is checked when it is expanded. The agent number, when the step
		// names one, is held to the same rule as YAML's agent_number.
		for i, n := range []string{to, from} {
			if i == 1 && n == "" {
				continue // no agent number: the platform picks one
			}
			if !strings.Contains(n, "${") && !validPhone(n) {
				bad(fmt.Sprintf("probe step %q: %q is not a phone number", st.Text, n), `write an E.164 number such as "+447700900001"`)
				return
			}
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

// regions returns the Regions of feature f, a file of lines lines.
func regions(f *messages.Feature, lines int) []Region {
	var out []Region
	// first is an element's first line: its first tag's, or its keyword's.
	first := func(at *messages.Location, tags []*messages.Tag) int {
		l := int(at.Line)
		for _, t := range tags {
			l = min(l, int(t.Location.Line))
		}
		return l
	}
	starts := func(chs []*messages.FeatureChild) []int {
		var out []int
		for _, ch := range chs {
			switch {
			case ch.Scenario != nil:
				out = append(out, int(ch.Scenario.Location.Line))
			case ch.Rule != nil:
				for _, rc := range ch.Rule.Children {
					if rc.Scenario != nil {
						out = append(out, int(rc.Scenario.Location.Line))
					}
				}
			}
		}
		return out
	}
	// children adds the regions of the children of a Feature or a Rule,
	// whose last line is end; all holds the starts of the scenarios
	// their Background runs before.
	var children func(chs []*messages.FeatureChild, end int, all []int)
	children = func(chs []*messages.FeatureChild, end int, all []int) {
		for i, ch := range chs {
			to := end
			if i+1 < len(chs) {
				next := chs[i+1]
				switch {
				case next.Background != nil:
					to = first(next.Background.Location, nil) - 1
				case next.Scenario != nil:
					to = first(next.Scenario.Location, next.Scenario.Tags) - 1
				case next.Rule != nil:
					to = first(next.Rule.Location, next.Rule.Tags) - 1
				}
			}
			switch {
			case ch.Background != nil:
				out = append(out, Region{From: int(ch.Background.Location.Line), To: to, Starts: all})
			case ch.Scenario != nil:
				if from := first(ch.Scenario.Location, ch.Scenario.Tags); from < int(ch.Scenario.Location.Line) {
					out = append(out, Region{From: from, To: int(ch.Scenario.Location.Line) - 1, Starts: []int{int(ch.Scenario.Location.Line)}})
				}
			case ch.Rule != nil:
				r := ch.Rule
				rcs := ruleChildren(r)
				mine := starts(rcs)
				header := to
				if len(rcs) > 0 {
					c := rcs[0]
					if c.Background != nil {
						header = int(c.Background.Location.Line) - 1
					} else {
						header = first(c.Scenario.Location, c.Scenario.Tags) - 1
					}
				}
				out = append(out, Region{From: first(r.Location, r.Tags), To: header, Starts: mine})
				children(rcs, to, mine)
			}
		}
	}
	children(f.Children, lines, starts(f.Children))
	return out
}
