package scenario

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	gherkin "github.com/cucumber/gherkin/go/v26"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
)

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
	check := func(sc *messages.Scenario, bgs []*messages.Background) {
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
		fl.unusedColumns(sc, tables, used, bgs)
	}
	featureBg := background(f.Children)
	for _, ch := range f.Children {
		check(ch.Scenario, []*messages.Background{featureBg})
		if ch.Rule != nil {
			bgs := []*messages.Background{featureBg, background(ruleChildren(ch.Rule))}
			for _, rc := range ch.Rule.Children {
				check(rc.Scenario, bgs)
			}
		}
	}
	fl.backgroundPlaceholders(f)
}

// background is the Background among chs, nil when there is none.
func background(chs []*messages.FeatureChild) *messages.Background {
	for _, ch := range chs {
		if ch.Background != nil {
			return ch.Background
		}
	}
	return nil
}

// unusedColumns warns of a column of the Examples tables of sc that
// nothing reads: no <column> in its steps (used) or its name, which
// Gherkin fills, and no ${column} in its steps, the Backgrounds it runs
// after (bgs) or another cell of the table. Its rows then run the same
// steps: several cases that test one thing, most often because the
// column or the step's <placeholder> is misspelt, or the column is left
// over from an earlier version of the steps.
func (fl *featureLoader) unusedColumns(sc *messages.Scenario, tables []*messages.Examples, used map[string]bool, bgs []*messages.Background) {
	read := maps.Clone(used)
	for _, m := range placeholder.FindAllStringSubmatch(sc.Name, -1) {
		read[m[1]] = true
	}
	refs := func(s string) { markRead(read, s) }
	stepRefs := func(sts []*messages.Step) {
		for _, st := range sts {
			for _, t := range fl.writtenTexts(st) {
				refs(t.text)
			}
		}
	}
	stepRefs(sc.Steps)
	for _, bg := range bgs {
		if bg != nil {
			stepRefs(bg.Steps)
		}
	}
	// columns are the names of every table's header, for the hint.
	var columns []string
	for _, ex := range tables {
		for _, r := range ex.TableBody {
			for _, c := range r.Cells {
				refs(c.Value)
			}
		}
		for _, c := range ex.TableHeader.Cells {
			columns = append(columns, c.Value)
		}
	}
	// unknown are the placeholders the steps write that no table has as
	// a column: the other half of a misspelling, already an error there.
	var unknown []string
	for _, p := range slices.Sorted(maps.Keys(used)) {
		if !slices.Contains(columns, p) {
			unknown = append(unknown, p)
		}
	}
	name := strings.TrimSpace(sc.Name)
	for _, ex := range tables {
		seen := map[string]bool{}
		for _, c := range ex.TableHeader.Cells {
			if read[c.Value] || seen[c.Value] {
				continue
			}
			seen[c.Value] = true
			hint := fmt.Sprintf("write <%s> or ${%s} in a step, or remove the column", c.Value, c.Value)
			if s := diag.Suggest(c.Value, unknown); s != "" {
				hint = fmt.Sprintf("did you mean <%s>? a step writes it and no column is named so: name the column and the placeholder alike", s)
			}
			fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: fl.pos(c.Location),
				Message: fmt.Sprintf("column %q of the Examples of %q is used by no step: its rows run the same steps", c.Value, name),
				Hint:    hint})
		}
	}
}

// backgroundPlaceholders reports a <column> in a Background step that is
// a column of an outline the Background runs before: Gherkin fills only
// the outline's own steps from its Examples, so the Background's would be
// sent as written, while ${column} reads the row there too.
func (fl *featureLoader) backgroundPlaceholders(f *messages.Feature) {
	// columns adds the Examples columns of sc to cols.
	columns := func(sc *messages.Scenario, cols map[string]bool) {
		if sc == nil {
			return
		}
		for _, ex := range sc.Examples {
			if ex.TableHeader != nil {
				for _, c := range ex.TableHeader.Cells {
					cols[c.Value] = true
				}
			}
		}
	}
	check := func(bg *messages.Background, cols map[string]bool) {
		if bg == nil || len(cols) == 0 {
			return
		}
		for _, st := range bg.Steps {
			for _, t := range fl.writtenTexts(st) {
				for _, m := range placeholder.FindAllStringSubmatchIndex(t.text, -1) {
					if col := t.text[m[2]:m[3]]; cols[col] {
						fl.diags = fl.diags.Append(diag.Diagnostic{Severity: diag.Error, Pos: t.at(m[0]),
							Message: fmt.Sprintf("<%s> is in a Background: Gherkin fills only the Scenario Outline's own steps from its Examples, so it would be sent as written", col),
							Hint:    fmt.Sprintf("write ${%s}, which reads the row in a Background too", col)})
					}
				}
			}
		}
	}
	// scan returns the Background of chs and the columns of their
	// scenarios' Examples, with those of their Rules'.
	var scan func(chs []*messages.FeatureChild) (*messages.Background, map[string]bool)
	scan = func(chs []*messages.FeatureChild) (*messages.Background, map[string]bool) {
		var bg *messages.Background
		cols := map[string]bool{}
		for _, ch := range chs {
			columns(ch.Scenario, cols)
			if ch.Background != nil {
				bg = ch.Background
			}
			if ch.Rule != nil {
				ruleBg, ruleCols := scan(ruleChildren(ch.Rule))
				check(ruleBg, ruleCols)
				maps.Copy(cols, ruleCols)
			}
		}
		return bg, cols
	}
	check(scan(f.Children))
}

// ruleChildren returns the children of r as a Feature's, which hold the
// same.
func ruleChildren(r *messages.Rule) []*messages.FeatureChild {
	out := make([]*messages.FeatureChild, len(r.Children))
	for i, rc := range r.Children {
		out[i] = &messages.FeatureChild{Background: rc.Background, Scenario: rc.Scenario}
	}
	return out
}

// markRead marks the names s reads (its ${name} references, not
// ${env:NAME}) in read: the columns of an outline's or a YAML scenario's
// examples that something reads (unusedColumns, unreadColumns). A
// malformed reference reads nothing; it is an error where it is written.
func markRead(read map[string]bool, s string) {
	refs, _ := interp.Scan(s)
	for _, r := range refs {
		if !r.Env {
			read[r.Name] = true
		}
	}
}
