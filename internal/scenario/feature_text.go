package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/steps"
)

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
// malformed, and notes each unknown name's diagnostic in unknown (name →
// indices in fl.diags), so that a later step remembering the name can say
// so (rememberedLater).
func (fl *featureLoader) checkRefs(texts []stepText, scope map[string]bool, unknown map[string][]int) (malformed bool) {
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
			unknown[r.Name] = append(unknown[r.Name], len(fl.diags))
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: t.at(r.Off),
				Message: fmt.Sprintf("unknown variable ${%s}: not an Examples column or a capture of an earlier step", r.Name), Hint: hint})
		}
	}
	return malformed
}

// rememberedLater rewrites the hint of the unknown ${name} references that
// checkRefs noted in unknown, now that the step at pos remembers name: the
// designer wrote the reference too early, not a wrong name, as the YAML
// decoder says of a capture of a later turn (capturedLater). The notes
// from since on are of the remembering step's own texts.
func (fl *featureLoader) rememberedLater(unknown map[string][]int, name string, pos diag.Pos, since int) {
	for _, i := range unknown[name] {
		where := fmt.Sprintf("by the step at line %d", pos.Line)
		if i >= since {
			where = "by this step"
		}
		fl.diags[i].Hint = fmt.Sprintf("${%s} is remembered %s: a remembered value is usable from the step after the one that remembers it", name, where)
	}
	delete(unknown, name)
}

// rememberSite is where a scenario of a feature remembers a name: the
// scenario's name and AST node (the rows of an outline share it) and the
// step's position.
type rememberSite struct {
	scenario, node string
	pos            diag.Pos
}

// unknownRef is a ${name} reference of a scenario (its AST node) that
// named nothing in its scope: the index of its diagnostic.
type unknownRef struct {
	name, node string
	diag       int
}

// scenarioNode is the id of the AST node a pickle comes from.
func scenarioNode(p *messages.Pickle) string {
	if len(p.AstNodeIds) > 0 {
		return p.AstNodeIds[0]
	}
	return ""
}

// remember notes that the step at pos of scenario sc (pickle p)
// remembers name.
func (fl *featureLoader) remember(name string, sc *Scenario, p *messages.Pickle, pos diag.Pos) {
	if _, ok := fl.remembered[name]; ok {
		return
	}
	if fl.remembered == nil {
		fl.remembered = map[string]rememberSite{}
	}
	fl.remembered[name] = rememberSite{scenario: sc.Name, node: scenarioNode(p), pos: pos}
}

// keepUnknown keeps the unknown references of pickle p that no step of
// its own remembers (what rememberedLater left in unknown), for
// rememberedElsewhere.
func (fl *featureLoader) keepUnknown(unknown map[string][]int, p *messages.Pickle) {
	for name, idxs := range unknown {
		for _, i := range idxs {
			fl.unknownRefs = append(fl.unknownRefs, unknownRef{name: name, node: scenarioNode(p), diag: i})
		}
	}
}

// rememberedElsewhere gives an unknown ${name} that another scenario of
// the file remembers the hint that says so, as the YAML decoder does of
// a capture of another scenario (capturedElsewhere): each scenario is a
// conversation of its own, and what it remembers ends with it.
func (fl *featureLoader) rememberedElsewhere() {
	for _, u := range fl.unknownRefs {
		r, ok := fl.remembered[u.name]
		if !ok || r.node == u.node {
			continue
		}
		fl.diags[u.diag].Hint = fmt.Sprintf("${%s} is remembered by scenario %q, at line %d: each scenario is a conversation of its own, and what it remembers ends with it", u.name, r.scenario, r.pos.Line)
	}
}
