package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// Keys planned by later issues. They are part of the allow-lists so that a
// file written for a newer agenttest gets a clear message instead of "did
// you mean"; adding one means adding its decoder where it is reported below.
var reserved = map[string]string{}

var suiteKeys = keySet{
	what:       "suite",
	keys:       []string{"suite", "agent", "env", "via", "streaming", "tags", "start", "vars", "scenarios"},
	extensions: true,
	moved: map[string]string{
		"name":     "the suite's name is written suite:",
		"turns":    "turns belong to a scenario: scenarios: [{name: ..., turns: [...]}]",
		"greeting": "greeting belongs to a scenario, under scenarios:",
	},
	means: map[string]string{
		"scenario": "scenarios",
	},
}

var scenarioKeys = keySet{
	what: "scenario",
	keys: []string{
		"name", "tags", "agent", "env", "via", "streaming", "start", "vars", "greeting", "turns",
		"skip", "timeout", "retries", "repeat", "pass_rate", "confidence", "margin",
		"quarantine", "examples", "confirm", "probe",
	},
	moved: map[string]string{
		"say":      "say belongs to a turn: turns: [{say: ..., expect: ...}]",
		"expect":   "expect belongs to a turn: turns: [{say: ..., expect: ...}]",
		"capture":  "capture belongs to a turn: turns: [{say: ..., capture: ...}]",
		"metadata": "user input metadata belongs to a turn: turns: [{say: ..., metadata: {...}}]",
		"suite":    "suite: names the file and is written at the top level",
	},
	means: map[string]string{
		"steps": "turns",
	},
}

var turnKeys = keySet{
	what: "turn",
	keys: []string{"say", "silence", "metadata", "expect", "capture", "confirm"},
	moved: map[string]string{
		"response": "checks go under expect: {response: ...}",
		"node":     "checks go under expect: {node: ...}",
		"state":    "checks go under expect: {state: ...}",
		"trace":    "checks go under expect: {trace: ...}",
		"handoff":  "checks go under expect: {handoff: ...}",
		"ended":    "checks go under expect: {ended: ...}",
	},
	means: map[string]string{
		"user":    "say",
		"message": "say",
	},
}

var startKeys = keySet{
	what: "start",
	keys: []string{"channel", "variant", "asr_lang", "tts_lang", "integration_attributes", "conversation_id"},
	moved: map[string]string{
		"env": "env is written next to start:, not inside it",
		// The create call takes no user message, so no user input
		// metadata: the greeting has none to send.
		"metadata": "the session's creation takes no user input metadata: write metadata: on a turn, next to say: (integration_attributes: are the session's)",
	},
	means: map[string]string{
		"variantId":             "variant",
		"asrLangCode":           "asr_lang",
		"ttsLangCode":           "tts_lang",
		"integrationAttributes": "integration_attributes",
		"conversationId":        "conversation_id",
	},
}

// captureFields are the fields a capture may read; state. and metadata. take
// a key or dotted path after the dot.
var captureFields = []string{"response", "node", "state.KEY", "metadata.PATH"}

// name refuses a name, written at n, that holds a character no name may
// (badName). The position is the scalar's: a quoted scalar's escapes make
// the offset in the name no column of the line.
func (d *decoder) name(n *yaml.Node, what, name string) {
	if msg, hint, ok := badName(what, name); !ok {
		d.errorHint(n, hint, "%s", msg)
	}
}

// suiteDecl keeps the suite-level nodes that every scenario re-reads: their
// ${...} references are checked in each scenario's scope.
type suiteDecl struct {
	start, vars *pair
}

// suite decodes the top-level mapping of a suite file.
func (d *decoder) suite(root *yaml.Node, file string) *Suite {
	s := &Suite{
		Path:  file,
		Name:  strings.TrimSuffix(path.Base(file), path.Ext(file)),
		Pos:   d.pos(root),
		Lines: lineCount(d.src),
	}
	if root.Kind == yaml.SequenceNode {
		d.errorHint(root, "start the file with scenarios: and put the list under it",
			"a suite file must be a mapping with a scenarios: list, not a list")
		return s
	}
	fields, _, ok := d.object(root, suiteKeys)
	if !ok {
		return s
	}
	if p, ok := fields["suite"]; ok {
		if v, ok := d.scalar(p.Val, "suite"); ok && strings.TrimSpace(v) != "" {
			s.Name = v
			d.name(p.Val, "suite name", v)
		}
	}
	if p, ok := fields["agent"]; ok {
		s.Agent, s.AgentPos = d.agent(p)
	}
	if p, ok := fields["env"]; ok {
		s.Env = d.env(p)
	}
	if p, ok := fields["tags"]; ok {
		s.Tags = d.tags(p)
	}
	var decl suiteDecl
	if p, ok := fields["vars"]; ok {
		decl.vars = &p
		s.Vars = d.vars(p)
	}
	if p, ok := fields["start"]; ok {
		decl.start = &p
		s.Start = d.start(p)
	}
	if p, ok := fields["via"]; ok {
		s.Start.Via, s.Start.ViaPos = d.via(p)
	}
	if p, ok := fields["streaming"]; ok {
		if on, at := d.streaming(p); !at.IsZero() {
			s.Start.Streaming, s.Start.StreamingPos = on, at
		}
	}
	p, ok := fields["scenarios"]
	if !ok {
		if !suiteKeys.tookFor(root, "scenarios") {
			d.errorHint(root, "a suite lists its scenarios under scenarios:", "suite has no scenarios: key")
		}
		return s
	}
	list := d.resolve(p.Val)
	if list == nil {
		return s
	}
	if list.Kind != yaml.SequenceNode {
		// The usual slip: the scenario's keys written under scenarios:
		// without the dash that makes it an item.
		d.errorHint(list, "each scenario is an item of the list: start it with a dash, as in scenarios: then - name: ...", "scenarios must be a list, not %s", kindName(list))
		return s
	}
	if len(list.Content) == 0 {
		d.warnf(p.Key, "scenarios is empty: the suite runs nothing")
	}
	seen := map[string]diag.Pos{}
	d.fileCaptures = fileCaptureSites(list, d.file)
	defer func() { d.fileCaptures = nil }()
	for i, item := range list.Content {
		d.item = i
		// Once decoded, an item's nodes are no longer needed: dropping
		// them lets a large file's tree shrink as its programs grow,
		// instead of both being held until the file is done. A node an
		// alias elsewhere points at stays reachable through the alias.
		list.Content[i] = nil
		for _, sc := range d.scenarioItem(item, s, decl) {
			if first, dup := seen[sc.Name]; dup {
				d.diags = d.diags.Append(diag.Diagnostic{
					Severity: diag.Error,
					Pos:      sc.Pos,
					Message:  fmt.Sprintf("duplicate scenario name %q (first at line %d)", sc.Name, first.Line),
					Hint:     "names identify scenarios in reports and filters; make each one unique",
				})
				continue
			}
			seen[sc.Name] = sc.Pos
			s.Scenarios = append(s.Scenarios, sc)
		}
	}
	d.diags = append(d.diags, d.streamingUses.unused()...)
	return s
}

// agent decodes agent: and says where its value is written.
func (d *decoder) agent(p pair) (string, diag.Pos) {
	v, ok := d.scalar(p.Val, "agent")
	if !ok {
		return "", diag.Pos{}
	}
	if strings.TrimSpace(v) == "" {
		d.errorf(p.Val, "agent must not be empty")
	}
	if msg, hint := fixedBeforeRun("agent", v); msg != "" {
		d.errorHint(p.Val, hint, "%s", msg)
		return "", diag.Pos{}
	}
	return v, d.pos(p.Val)
}

func (d *decoder) env(p pair) string {
	v, ok := d.scalar(p.Val, "env")
	if !ok {
		return ""
	}
	if msg, hint := fixedBeforeRun("env", v); msg != "" {
		d.errorHint(p.Val, hint, "%s", msg)
		return ""
	}
	if !reply.ValidEnv(v) {
		d.errorHint(p.Val, envHint(v), "env %q is not a platform environment", v)
		return ""
	}
	return v
}

// envHint is the hint of a value that is not a platform environment, in
// a suite, a tag or a step: the one meant, by its spelling or by the name
// other tools give it (prod for live), else the three.
func envHint(v string) string {
	if env := cmp.Or(diag.Suggest(v, reply.Envs), reply.EnvMeant(v)); env != "" {
		return fmt.Sprintf("did you mean %q?", env)
	}
	return "one of " + strings.Join(reply.Envs, ", ")
}

// tags reads a list of tags, or one string of tags separated by spaces or
// commas. A leading @ is dropped.
func (d *decoder) tags(p pair) []string {
	n := d.resolve(p.Val)
	if n == nil {
		return nil
	}
	var raw []*yaml.Node
	switch n.Kind {
	case yaml.SequenceNode:
		raw = n.Content
	case yaml.ScalarNode:
		raw = []*yaml.Node{n}
	default:
		d.errorf(n, "tags must be a list, not %s", kindName(n))
		return nil
	}
	var out []string
	for _, item := range raw {
		v, ok := d.scalar(item, "tag")
		if !ok {
			continue
		}
		words := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if item != n && len(words) > 1 {
			d.errorf(d.resolve(item), "tag %q contains spaces or commas: write one tag per list item", v)
			continue
		}
		for _, w := range words {
			t := strings.TrimPrefix(w, "@")
			if !validTag(t) {
				d.errorHint(d.resolve(item), hintTag, "invalid tag %q", w)
				continue
			}
			out = append(out, t)
		}
	}
	return out
}

// hintTag is the hint of a tag validTag rejects, in a suite or a feature.
const hintTag = "tags may not contain ( ) & | ! ~ , @ or spaces: a tag filter reads them as its syntax"

// validTag rejects what the tag-expression language would read as syntax:
// a scenario tagged so could not be selected by it.
func validTag(t string) bool {
	return t != "" && !strings.ContainsAny(t, "()&|!~,@ \t\n")
}

// vars reads name -> scalar.
func (d *decoder) vars(p pair) map[string]string {
	ps, ok := d.pairs(p.Val, "vars")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ps))
	for _, kv := range ps {
		if !interp.ValidName(kv.Name) {
			d.errorf(kv.Key, "invalid var name %q: use letters, digits, '_' and '-', starting with a letter or '_'", kv.Name)
			continue
		}
		d.sc.at(kv.Name, true)
		v, ok := d.str(kv.Val, "vars."+kv.Name)
		if !ok {
			continue
		}
		out[kv.Name] = v
	}
	return out
}

// start reads the session parameters of the debug-chat create call.
func (d *decoder) start(p pair) Start {
	fields, _, ok := d.object(p.Val, startKeys)
	st := Start{Pos: d.pos(p.Key)}
	if !ok {
		return st
	}
	get := func(key string) string {
		if f, ok := fields[key]; ok {
			d.sc.at(key, false)
			v, _ := d.str(f.Val, "start: "+key)
			return v
		}
		return ""
	}
	st.Channel = get("channel")
	if msg, hint := channelWarning(st.Channel); msg != "" {
		d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: d.pos(fields["channel"].Val), Message: msg, Hint: hint})
	}
	st.Variant = get("variant")
	st.ASRLang = get("asr_lang")
	st.TTSLang = get("tts_lang")
	st.ConversationID = get("conversation_id")
	if f, ok := fields["integration_attributes"]; ok {
		ps, _ := d.pairs(f.Val, "start: integration_attributes")
		st.IntegrationAttributes = make(map[string]string, len(ps))
		for _, kv := range ps {
			d.sc.at(startKey(kv.Name), true)
			if v, ok := d.str(kv.Val, "integration_attributes."+kv.Name); ok {
				st.IntegrationAttributes[kv.Name] = v
			}
		}
	}
	return st
}

// exampleRow is one row of `examples:`: its columns in the order written.
type exampleRow struct {
	Pos  diag.Pos
	Cols []string
	// keys are the keys of Cols as written, for a warning about a column.
	keys   []*yaml.Node
	Values map[string]string
	// EnvRefs are the ${env:NAME} references of each value, by column.
	EnvRefs map[string][]EnvRef
}

// suffix renders the row for the scenario name: [party=4 time=7pm]. Values
// that would be ambiguous there are quoted.
func (r exampleRow) suffix() string {
	parts := make([]string, len(r.Cols))
	for i, c := range r.Cols {
		v := r.Values[c]
		if v == "" || strings.ContainsAny(v, " \t[]=\"") || strings.ContainsFunc(v, notNameRune) {
			v = strconv.Quote(v)
		}
		parts[i] = c + "=" + v
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (d *decoder) examples(p pair) ([]exampleRow, bool) {
	n := d.resolve(p.Val)
	if n == nil {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		d.errorHint(n, "write one mapping per row: examples: [{party: 2}, {party: 4}]",
			"examples must be a list of rows, not %s", kindName(n))
		return nil, false
	}
	if len(n.Content) == 0 {
		d.errorf(n, "examples must not be empty")
		return nil, false
	}
	rows := make([]exampleRow, 0, len(n.Content))
	ok := true
	for _, item := range n.Content {
		ps, pok := d.pairs(item, "examples row")
		if !pok {
			ok = false
			continue
		}
		row := exampleRow{Pos: d.pos(d.resolve(item)), Values: map[string]string{}}
		for _, kv := range ps {
			if !interp.ValidName(kv.Name) {
				d.errorf(kv.Key, "invalid example column %q: use letters, digits, '_' and '-', starting with a letter or '_'", kv.Name)
				ok = false
				continue
			}
			v, vok := d.scalar(kv.Val, "examples."+kv.Name)
			if !vok {
				ok = false
				continue
			}
			row.Cols = append(row.Cols, kv.Name)
			row.keys = append(row.keys, kv.Key)
			row.Values[kv.Name] = v
			row.noteRefs(kv.Name, v, d.scalarAt(d.resolve(kv.Val)))
		}
		if len(row.Cols) == 0 && pok {
			d.errorf(d.resolve(item), "examples row has no values")
			ok = false
			continue
		}
		rows = append(rows, row)
	}
	return rows, ok
}

// scenarioItem decodes one item of `scenarios:`, expanded once per examples
// row. Each expansion decodes the item again in the scope of its row, so a
// reference to a column missing from one row is reported; the duplicate
// diagnostics of the other rows are merged when the file is finished.
func (d *decoder) scenarioItem(item *yaml.Node, s *Suite, decl suiteDecl) []*Scenario {
	fields, _, ok := d.object(item, scenarioKeys)
	if !ok {
		return nil
	}
	for key, msg := range reserved {
		if p, ok := fields[key]; ok {
			d.errorf(p.Key, "%s", msg)
		}
	}
	rows := []*exampleRow{nil}
	checkRefs := true
	if p, ok := fields["examples"]; ok {
		decoded, ok := d.examples(p)
		if !ok {
			// Without the columns every reference to them would be
			// reported as unknown: the examples error is enough.
			checkRefs = false
		}
		if len(decoded) > 0 {
			rows = rows[:0]
			for i := range decoded {
				rows = append(rows, &decoded[i])
			}
		}
		d.missingCols = missingColumns(decoded)
		defer func() { d.missingCols = nil }()
		if checkRefs {
			d.read = map[string]bool{}
			defer func() { d.read = nil }()
		}
	}
	out := make([]*Scenario, 0, len(rows))
	for i, row := range rows {
		if sc := d.scenario(item, fields, s, decl, row, checkRefs); sc != nil {
			if checkRefs && i == 0 {
				d.varsExpand(sc, item, fields, decl)
			}
			out = append(out, sc)
		}
	}
	if d.read != nil {
		d.unreadColumns(rows, out)
	}
	return out
}

// unreadColumns warns of an examples column that no ${column} of the
// scenario reads, in its texts (read while they were decoded) or in a
// var or another column (out holds them, per row): its rows run the same
// turns, several cases that test one thing, most often because the column
// or a reference to it is misspelt, or the column is left over.
func (d *decoder) unreadColumns(rows []*exampleRow, out []*Scenario) {
	for _, sc := range out {
		for _, v := range sc.Vars {
			markRead(d.read, v)
		}
	}
	// near are the names read that a row lacks as a column: the other
	// half of a misspelling, an error of its own where it is read.
	var near []string
	for _, name := range slices.Sorted(maps.Keys(d.read)) {
		if slices.ContainsFunc(rows, func(r *exampleRow) bool { return !slices.Contains(r.Cols, name) }) {
			near = append(near, name)
		}
	}
	warned := map[string]bool{}
	for _, row := range rows {
		for i, col := range row.Cols {
			if d.read[col] || warned[col] {
				continue
			}
			warned[col] = true
			hint := fmt.Sprintf("write ${%s} where the scenario should read it, or remove the column", col)
			if s := diag.Suggest(col, near); s != "" {
				hint = fmt.Sprintf("did you mean ${%s}? the scenario reads it and a row lacks that column: name the column and the reference alike", s)
			}
			d.diags = d.diags.Append(diag.Diagnostic{Severity: diag.Warning, Pos: d.pos(row.keys[i]), Hint: hint,
				Message: fmt.Sprintf("examples column %s is read by no ${%s}: its rows run the same turns", col, col)})
		}
	}
}

// varsExpand reports what expanding the vars of sc would error the
// scenario with every time it runs: a var that refers to itself, or vars
// that expand past interp.MaxVarBytes. Only the first examples row is
// expanded, so that a long table does not cost a megabyte per row; the
// environment reads as empty here.
func (d *decoder) varsExpand(sc *Scenario, item *yaml.Node, fields map[string]pair, decl suiteDecl) {
	refs := false
	for _, v := range sc.Vars {
		refs = refs || strings.Contains(v, "${")
	}
	if !refs {
		return
	}
	// Scenarios of one suite mostly share its vars: expand each set once.
	names := slices.Sorted(maps.Keys(sc.Vars))
	var key strings.Builder
	for _, n := range names {
		key.WriteString(n + "\x00" + sc.Vars[n] + "\x00")
	}
	if d.varsSeen[key.String()] {
		return
	}
	if d.varsSeen == nil {
		d.varsSeen = map[string]bool{}
	}
	d.varsSeen[key.String()] = true
	_, err := interp.ResolveVars(sc.Vars, func(string) (string, bool) { return "", true })
	if err == nil {
		return
	}
	var ve *interp.VarError
	if !errors.As(err, &ve) || !errors.Is(err, interp.ErrVarCycle) && !errors.Is(err, interp.ErrVarsTooLarge) {
		return // an unknown reference: reported where it is written
	}
	msg, name := err.Error(), ve.Var
	// The var's key: in the scenario's vars, the suite's, or the first
	// examples row (the row expanded here).
	var holders []*yaml.Node
	if p, ok := fields["vars"]; ok {
		holders = append(holders, p.Val)
	}
	if decl.vars != nil {
		holders = append(holders, decl.vars.Val)
	}
	if p, ok := fields["examples"]; ok {
		if ex := d.resolve(p.Val); ex != nil && ex.Kind == yaml.SequenceNode && len(ex.Content) > 0 {
			holders = append(holders, ex.Content[0])
		}
	}
	for _, m := range holders {
		if v := d.resolve(m); v != nil && v.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(v.Content); i += 2 {
				if v.Content[i].Value == name {
					d.errorf(v.Content[i], "%s", msg)
					return
				}
			}
		}
	}
	d.errorf(item, "%s", msg)
}

// missingColumns maps each column some examples rows have to the rows
// that lack it: a ${column} is unknown in those rows only, and its
// message names them.
func missingColumns(rows []exampleRow) map[string][]missingColumn {
	var out map[string][]missingColumn
	for _, r := range rows {
		for _, col := range r.Cols {
			if _, done := out[col]; done {
				continue
			}
			var lacking []missingColumn
			for _, other := range rows {
				if _, ok := other.Values[col]; !ok {
					lacking = append(lacking, missingColumn{line: other.Pos.Line, near: diag.Suggest(col, other.Cols)})
				}
			}
			if out == nil {
				out = map[string][]missingColumn{}
			}
			out[col] = lacking
		}
	}
	return out
}

// missingColumn is an examples row that lacks a column the other rows
// have: its line, and its own column near the name, likely the one
// misspelt ("" when none is).
type missingColumn struct {
	line int
	near string
}

// missingColumnHint names the examples rows that lack column name, for
// the message of a ${name} unknown in them, with a column of theirs that
// is likely the name misspelt; "" when every row has it.
func (d *decoder) missingColumnHint(name string) string {
	rows := d.missingCols[name]
	if len(rows) == 0 {
		return ""
	}
	ls := make([]string, len(rows))
	var nears []string
	for i, r := range rows {
		ls[i] = strconv.Itoa(r.line)
		if r.near != "" {
			nears = append(nears, fmt.Sprintf("%s at line %d", r.near, r.line))
		}
	}
	hint := fmt.Sprintf("the examples row at line %s has no %s column; the other rows have one", ls[0], name)
	if len(rows) > 1 {
		hint = fmt.Sprintf("the examples rows at lines %s have no %s column; the other rows have one", strings.Join(ls, ", "), name)
	}
	switch len(nears) {
	case 0:
	case 1:
		hint += fmt.Sprintf(": %s is likely %s misspelt", nears[0], name)
	default:
		hint += fmt.Sprintf(": %s are likely %s misspelt", strings.Join(nears, ", "), name)
	}
	return hint
}

// scenario decodes one expansion of a scenario item.
func (d *decoder) scenario(item *yaml.Node, fields map[string]pair, s *Suite, decl suiteDecl, row *exampleRow, checkRefs bool) *Scenario {
	item = d.resolve(item)
	if item == nil {
		return nil
	}
	d.expansions = expansions{}
	x := &d.expansions
	d.sc = x
	defer func() { d.sc = nil }()
	sc := &Scenario{
		Pos:      d.pos(item),
		Agent:    s.Agent,
		AgentPos: s.AgentPos,
		Env:      s.Env,
		Start:    s.Start,
		Vars:     maps.Clone(s.Vars),
	}
	if sc.Vars == nil {
		sc.Vars = map[string]string{}
	}
	if p, ok := fields["name"]; ok {
		// A null or a list is scalar's one error; only a written text
		// can be empty.
		if v, ok := d.scalar(p.Val, "name"); ok {
			if sc.Name = strings.TrimSpace(v); sc.Name == "" {
				d.errorf(p.Val, "scenario name must not be empty")
			}
			d.name(p.Val, "scenario name", sc.Name)
		}
	} else if !scenarioKeys.tookFor(item, "name") {
		d.errorHint(item, "every scenario needs a unique name: for reports and filters", "scenario has no name:")
	}
	if sc.Name == "" {
		sc.Name = fmt.Sprintf("scenario at line %d", item.Line)
	}

	// Vars first: every other value may refer to them.
	d.scope = nil
	if p, ok := fields["vars"]; ok {
		x.defining(&x.vars, func() { maps.Copy(sc.Vars, d.vars(p)) })
	}
	if row != nil {
		maps.Copy(sc.Vars, row.Values)
		sc.Name += " " + row.suffix()
		sc.Outline, sc.Pos = sc.Pos, row.Pos
	}
	if checkRefs {
		d.scope = make(map[string]bool, len(sc.Vars))
		for k := range sc.Vars {
			d.scope[k] = true
		}
		// Suite-level vars and start are checked in the scope of each
		// scenario, since they may use its vars and example columns.
		if decl.vars != nil {
			x.defining(&x.suiteVars, func() { d.vars(*decl.vars) })
		}
		if decl.start != nil {
			x.defining(&x.suiteStart, func() { d.start(*decl.start) })
		}
		if p, ok := fields["vars"]; ok {
			x.defining(&x.vars, func() { d.vars(p) })
		}
	}
	defer func() { d.scope = nil }()

	seenTags := map[string]bool{}
	for _, t := range s.Tags {
		if !seenTags[t] {
			seenTags[t] = true
			sc.Tags = append(sc.Tags, t)
		}
	}
	if p, ok := fields["tags"]; ok {
		for _, t := range d.tags(p) {
			if !seenTags[t] {
				seenTags[t] = true
				sc.Tags = append(sc.Tags, t)
			}
		}
	}
	if p, ok := fields["agent"]; ok {
		sc.Agent, sc.AgentPos = d.agent(p)
	}
	if p, ok := fields["env"]; ok {
		sc.Env = d.env(p)
	}
	// own is the scenario's own start:, else the suite's when the suite
	// chose messaging: the parameters a messaging scenario set, not the
	// defaults it shares with the suite's debug-chat scenarios.
	var own *Start
	if p, ok := fields["start"]; ok {
		var st Start
		x.defining(&x.start, func() { st = d.start(p) })
		own = &st
		sc.Start = s.Start.Merge(st)
	} else if s.Start.Via == steps.ViaMessaging {
		own = &s.Start
	}
	if p, ok := fields["via"]; ok {
		sc.Start.Via, sc.Start.ViaPos = d.via(p)
	}
	if p, ok := fields["streaming"]; ok {
		if on, at := d.streaming(p); !at.IsZero() {
			sc.Start.Streaming, sc.Start.StreamingPos = on, at
		}
	}
	d.messaging = sc.Messaging()
	d.streamingUses.note(sc, "streaming:", hintStreamingYAML)
	defer func() { d.messaging = false }()
	if d.messaging && own != nil {
		d.startOverMessaging(*own, sc.Start.ViaPos)
	}
	if p, ok := fields["skip"]; ok {
		sc.Skip = d.skip(p)
	}
	if p, ok := fields["timeout"]; ok {
		sc.Timeout = d.timeout(p)
	}
	if p, ok := fields["retries"]; ok {
		if v, ok := d.integer(p.Val, "retries"); ok {
			if v < 0 {
				d.errorf(p.Val, "retries must be 0 or more, not %d", v)
			} else {
				sc.Retries = &v
			}
		}
	}
	d.stats(sc, fields)
	if p, ok := fields["quarantine"]; ok {
		x.unexpanded(func() { sc.Quarantine = d.quarantine(p) })
	}

	// The program: open the session, check the greeting, each turn's say,
	// expect and captures, then confirm:; or, for a probe, the probe, its
	// call's status, then confirm:.
	var greeting, confirm *steps.Step
	var turns []*steps.Step
	checks := false
	if p, ok := fields["turns"]; ok {
		d.turnsNode = p.Val
	}
	defer func() { d.turnsNode, d.turn0 = nil, 0 }()
	d.turn0 = -1 // the greeting is checked before turn 0
	if p, ok := fields["greeting"]; ok {
		if exp := d.expect(p, "greeting"); exp != nil {
			greeting = &steps.Step{Kind: steps.Check, Pos: exp.Pos, Greeting: true, Expect: fixedExpect(exp)}
			checks = hasChecks(d.resolve(p.Val))
		}
	}
	if p, ok := fields["turns"]; ok {
		turns = d.turns(p)
	}
	if p, ok := fields["confirm"]; ok {
		confirm = d.confirm(p)
	}
	if p, ok := fields["probe"]; ok {
		if d.messaging {
			d.errorHint(p.Key, "write the probe in a scenario over debug chat",
				"a probe starts the conversation by call or SMS, so it cannot run over messaging (via: messaging at %s)", sc.Start.ViaPos)
		}
		sc.Steps = d.probe(p)
		if confirm != nil {
			sc.Steps = append(sc.Steps, confirm)
			d.diags = append(d.diags, confirmAfterFailedCall(sc.Steps)...)
			d.diags = append(d.diags, smsConfirmations(sc.Steps)...)
		}
		d.probeScenario(item, sc, fields, confirm != nil)
		sc.EnvRefs = x.expanded(sc, row.envRefs())
		return sc
	}
	sc.Steps = make([]*steps.Step, 0, 3+len(turns)) // open, greeting, turns, confirm
	sc.Steps = append(sc.Steps, &steps.Step{Kind: steps.Open, Pos: sc.Pos})
	if greeting != nil {
		sc.Steps = append(sc.Steps, greeting)
	}
	sc.Steps = append(sc.Steps, turns...)
	if confirm != nil {
		sc.Steps = append(sc.Steps, confirm)
		d.diags = append(d.diags, chatRecordings(sc)...)
	}
	if len(turns) == 0 && !checks {
		if _, ok := fields["turns"]; !ok && !scenarioKeys.tookFor(item, "turns") && !scenarioKeys.tookFor(item, "greeting") {
			d.errorHint(item, "add turns: [{say: ..., expect: ...}] or greeting checks",
				"scenario %q has no turns and no greeting checks", sc.Name)
		}
	}
	packSteps(sc.Steps)
	sc.EnvRefs = x.expanded(sc, row.envRefs())
	return sc
}

// ChecksSomething reports whether a scenario's program checks anything
// of the agent: a check, a capture (which fails when the reply does not
// have what it reads), a probe's call status or a confirmation. One that
// only opens the conversation and says its turns passes whenever the
// agent answers.
func ChecksSomething(program []*steps.Step) bool {
	return slices.ContainsFunc(program, func(st *steps.Step) bool {
		switch st.Kind {
		case steps.Check, steps.Capture, steps.Probe, steps.CallStatus, steps.Confirm:
			return true
		}
		return false
	})
}

// warnUnchecked warns of each scenario of s that checks nothing
// (ChecksSomething), saying why in what: its turns are said and nothing is
// read of the answers. An empty expect: {} gets a warning, and so does no
// expect at all. Once for the rows of examples (at the scenario), not for
// a skipped scenario; the loaders call it only for a file without
// errors, beside which it would be noise about a file that does not run.
func warnUnchecked(ds diag.Diagnostics, s *Suite, what string) diag.Diagnostics {
	warned := map[diag.Pos]bool{}
	for _, sc := range s.Scenarios {
		at := sc.Pos
		if !sc.Outline.IsZero() {
			at = sc.Outline
		}
		if sc.Skip != "" || warned[at] || ChecksSomething(sc.Steps) {
			continue
		}
		warned[at] = true
		ds = ds.Warnf(at, "the scenario checks nothing: %s; it passes whenever the agent answers", what)
	}
	return ds
}

// packSteps moves a program's steps into one allocation. Decoded one by
// one, they would be spread over the memory of the file's YAML tree,
// whose nodes have their size; once the tree is collected, each of its
// pages would be held by a few steps until every scenario on it has run.
// Packed, a scenario's steps are freed together when it has run.
func packSteps(program []*steps.Step) {
	packed := make([]steps.Step, len(program))
	for i, st := range program {
		packed[i] = *st
		program[i] = &packed[i]
	}
}

// fixedExpect is the Expect of a YAML check step: the checks as decoded
// (assert.Check expands their references when it runs).
func fixedExpect(e *assert.Expect) func(steps.Expander) (*assert.Expect, error) {
	return func(steps.Expander) (*assert.Expect, error) { return e, nil }
}

// hasChecks reports whether an expect mapping holds at least one key.
func hasChecks(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.MappingNode && len(n.Content) > 0
}

// skip reads `skip: reason`, or `skip: true` without a reason.
func (d *decoder) skip(p pair) string {
	n := d.resolve(p.Val)
	if n == nil {
		return ""
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		if v, _ := d.boolean(n, "skip"); v {
			return "skipped"
		}
		return ""
	}
	v, ok := d.scalar(n, "skip")
	if !ok {
		return ""
	}
	if b, ok := yaml11Bool(v); ok && !b && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
		// As for handoff: YAML 1.1 read skip: no as false, yaml.v3
		// reads the word, and a scenario meant to run was skipped with
		// the reason "no", the run green without it.
		d.errorHint(n, fmt.Sprintf("write false, or leave skip out, to run it; quote it (skip: %q) for a reason of that word", v),
			"skip: %s is not a boolean in YAML 1.2: it would skip the scenario with the reason %q", v, v)
		return ""
	}
	if strings.TrimSpace(v) == "" {
		d.errorHint(n, "say why, e.g. skip: waiting for the new booking flow", "skip needs a reason")
		return ""
	}
	return v
}

func (d *decoder) timeout(p pair) time.Duration {
	n := d.resolve(p.Val)
	if n == nil {
		return 0
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		d.errorHint(n, fmt.Sprintf("add a unit, e.g. %ss", n.Value), "timeout %s has no unit", n.Value)
		return 0
	}
	v, ok := d.scalar(n, "timeout")
	if !ok {
		return 0
	}
	dur, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		d.errorHint(n, "write a Go duration such as 30s, 2m or 1m30s", "timeout %q is not a duration", v)
		return 0
	}
	if dur <= 0 {
		d.errorf(n, "timeout must be above 0, not %s", v)
		return 0
	}
	return dur
}

// stats reads repeat, pass_rate, confidence and margin together, and
// checks them as one design (Stats.Check): a rate only means something
// when the scenario runs more than once, a margin only with a confidence.
func (d *decoder) stats(sc *Scenario, fields map[string]pair) {
	bad := false
	if p, ok := fields["repeat"]; ok {
		if v, ok := d.integer(p.Val, "repeat"); !ok {
			bad = true
		} else if v < 1 {
			d.errorf(p.Val, "repeat must be 1 or more, not %d", v)
			bad = true
		} else {
			sc.Stats.Repeat = v
		}
	}
	share := func(key string, v *float64) {
		p, ok := fields[key]
		if !ok {
			return
		}
		if *v, ok = d.number(p.Val, key); !ok {
			bad = true
		}
		switch {
		case !ok:
		case key == "pass_rate" && !(*v > 0 && *v <= 1):
			d.errorHint(p.Val, "a share such as 0.8 or \"80%\"", "pass_rate must be above 0 and at most 1, not %v", *v)
			bad = true
		// Stats reads a zero as "unset" and a confidence at or below 0
		// as a fixed run, so a written 0 would pass Check and become the
		// default (margin 0.1), and a 0 or negative confidence no test at
		// all (the scenario run once, without a word); a negative margin
		// only a warning that it has no effect: refuse them here, as the
		// flags and the tags refuse them.
		case key == "confidence" && *v <= 0:
			d.errorHint(p.Val, "a probability such as 0.95 or 95%", "confidence must be above 0.5 and below 1, not %v", *v)
			bad = true
		case key == "margin" && *v <= 0:
			d.errorHint(p.Val, "leave margin out for the default, 0.1", "margin must be above 0 and below pass_rate, not %v", *v)
			bad = true
		}
	}
	share("pass_rate", &sc.Stats.PassRate)
	share("confidence", &sc.Stats.Confidence)
	share("margin", &sc.Stats.Margin)
	if bad {
		return
	}
	for _, pr := range sc.Stats.Check(YAMLNames) {
		p := fields[pr.Setting]
		at := p.Val
		if pr.Severity == diag.Warning {
			at = p.Key
		}
		d.diags = d.diags.Append(diag.Diagnostic{Severity: pr.Severity, Pos: d.pos(at), Message: pr.Message, Hint: pr.Hint})
	}
}

var quarantineKeys = keySet{
	what: "quarantine",
	keys: []string{"reason", "owner", "until"},
	means: map[string]string{
		"expires": "until",
		"why":     "reason",
	},
}

// quarantine reads `quarantine: {reason, owner, until}`; reason and until
// are required, so that no quarantine is silent or forever.
func (d *decoder) quarantine(p pair) *Quarantine {
	fields, _, ok := d.object(p.Val, quarantineKeys)
	if !ok {
		return nil
	}
	q := &Quarantine{Pos: d.pos(p.Key)}
	ok = true
	if f, has := fields["reason"]; has {
		if v, _ := d.str(f.Val, "quarantine reason"); strings.TrimSpace(v) != "" {
			q.Reason = strings.TrimSpace(v)
		}
	}
	if q.Reason == "" {
		d.errorHint(p.Key, `write quarantine: {reason: "why it may fail", until: 2026-12-31}`, "quarantine needs a reason")
		ok = false
	}
	if f, has := fields["owner"]; has {
		q.Owner, _ = d.str(f.Val, "quarantine owner")
	}
	if f, has := fields["until"]; has {
		if v, sok := d.scalar(f.Val, "quarantine until"); sok {
			t, err := parseUntil(v)
			if err != nil {
				d.errorf(f.Val, "quarantine %v", err)
				ok = false
			}
			q.Until = t
		} else {
			ok = false
		}
	} else {
		d.errorHint(p.Key, "a quarantine ends: add until: 2026-12-31 (the last day it holds)", "quarantine needs until:")
		ok = false
	}
	if !ok {
		return nil
	}
	return q
}

// turns decodes the list of turns into their steps: each turn's say, its
// expect: and its captures. Captures of a turn are in scope from the next
// turn on.
func (d *decoder) turns(p pair) []*steps.Step {
	n := d.resolve(p.Val)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorHint(n, "write turns: [{say: ..., expect: ...}, ...]", "turns must be a list, not %s", kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, "turns must not be empty")
		return nil
	}
	out := make([]*steps.Step, 0, 2*len(n.Content))
	// Every capture a turn writes is in scope from the next turn on, one
	// refused for its field or pattern too: its one mistake is reported
	// at the capture, not again at each ${name} that uses it.
	sites := captureSites(n, d.file)
	for i, item := range n.Content {
		d.turn0 = i
		out = append(out, d.turn(item)...)
		for _, c := range sites {
			if c.turn == i && d.scope != nil && interp.ValidName(c.name) {
				d.scope[c.name] = true
			}
		}
	}
	return out
}

// captureSite is where a turn of a scenario captures a name: a ${name}
// used before that turn's reply is unknown, and its message says where
// the name is captured.
type captureSite struct {
	name string
	turn int
	pos  diag.Pos
}

// captureSites lists the captures written in the turns of a scenario, in
// order, read without diagnostics: decoding the turns reports their
// problems.
func captureSites(turns *yaml.Node, file string) []captureSite {
	deref := func(n *yaml.Node) *yaml.Node {
		for hops := 0; n != nil && n.Kind == yaml.AliasNode && hops <= 100; hops++ {
			n = n.Alias
		}
		if n == nil || n.Kind == yaml.AliasNode {
			return nil
		}
		return n
	}
	turns = deref(turns)
	if turns == nil || turns.Kind != yaml.SequenceNode {
		return nil
	}
	var sites []captureSite
	for i, item := range turns.Content {
		item = deref(item)
		if item == nil || item.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value != "capture" {
				continue
			}
			caps := deref(item.Content[j+1])
			if caps == nil || caps.Kind != yaml.MappingNode {
				continue
			}
			for k := 0; k+1 < len(caps.Content); k += 2 {
				key := caps.Content[k]
				sites = append(sites, captureSite{name: key.Value, turn: i,
					pos: diag.Pos{File: file, Line: key.Line, Col: key.Column}})
			}
		}
	}
	return sites
}

// fileCapture is where a scenario of a file captures a name.
type fileCapture struct {
	scenario string
	// item is the scenario's index in the scenarios: list.
	item int
	pos  diag.Pos
}

// fileCaptureSites lists the captures of every scenario of scenarios (the
// suite's scenarios: list) by name, read without diagnostics.
func fileCaptureSites(scenarios *yaml.Node, file string) map[string][]fileCapture {
	var out map[string][]fileCapture
	for i, item := range scenarios.Content {
		if item == nil || item.Kind != yaml.MappingNode {
			continue
		}
		name, turns := "", (*yaml.Node)(nil)
		for j := 0; j+1 < len(item.Content); j += 2 {
			switch item.Content[j].Value {
			case "name":
				name = item.Content[j+1].Value
			case "turns":
				turns = item.Content[j+1]
			}
		}
		for _, c := range captureSites(turns, file) {
			if out == nil {
				out = map[string][]fileCapture{}
			}
			out[c.name] = append(out[c.name], fileCapture{scenario: name, item: i, pos: c.pos})
		}
	}
	return out
}

// capturedElsewhere says where another scenario of the file captures
// name, for the hint of an unknown ${name}; "" when none does.
func (d *decoder) capturedElsewhere(name string) string {
	for _, c := range d.fileCaptures[name] {
		if c.item != d.item {
			return fmt.Sprintf("${%s} is captured by scenario %q, at line %d: each scenario is a conversation of its own, and its captures end with it", name, c.scenario, c.pos.Line)
		}
	}
	return ""
}

// capturedLater says where a turn at or after the one being decoded
// captures name, for the hint of an unknown ${name}; "" when none does.
func (d *decoder) capturedLater(name string) string {
	for _, c := range captureSites(d.turnsNode, d.file) {
		if c.name != name || c.turn < d.turn0 {
			continue
		}
		if c.turn == d.turn0 {
			return fmt.Sprintf("${%s} is captured by this turn, at line %d: a capture is usable from the next turn on", name, c.pos.Line)
		}
		return fmt.Sprintf("${%s} is captured by turn %d, at line %d: a capture is usable from the turn after the one that captures it", name, c.turn+1, c.pos.Line)
	}
	return ""
}

// turn decodes one turn: its Say step, then its Check and Capture steps.
func (d *decoder) turn(item *yaml.Node) []*steps.Step {
	item = d.resolve(item)
	if item == nil {
		return nil
	}
	if item.Kind == yaml.ScalarNode && !isNull(item) {
		d.errorHint(item, fmt.Sprintf("write - say: %q", item.Value), "a turn must be a mapping with say:, not %s", kindName(item))
		return nil
	}
	fields, _, ok := d.object(item, turnKeys)
	if !ok {
		return nil
	}
	say := &steps.Step{Kind: steps.Say, Pos: d.pos(item)}
	if p, ok := fields["confirm"]; ok {
		d.errorHint(p.Key, "write confirm: next to turns:, in the scenario",
			"confirm: checks the platform's record after the session ends, so it belongs to the scenario, not to a turn")
	}
	sayField, hasSay := fields["say"]
	if hasSay {
		say.Say, hasSay = d.str(sayField.Val, "say")
		if n := d.resolve(sayField.Val); n != nil && n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			say.SayPos = d.scalarAt(n)(0)
		}
		if hasSay && say.Say == "" {
			say.Silent = true
		}
	}
	if p, ok := fields["silence"]; ok {
		v, ok := d.boolean(p.Val, "silence")
		switch {
		case !ok:
		case v && hasSay && say.Say != "":
			d.errorf(p.Key, "a turn cannot both say something and be silent")
		case v:
			say.Silent = true
		case !hasSay:
			d.errorHint(item, "write silence: true to send an empty message", "turn has silence: false and no say:")
		}
	} else if _, wrote := fields["say"]; !wrote && !turnKeys.tookFor(item, "say") {
		d.errorHint(item, `write say: "...", or silence: true for an empty message`, "turn has no say:")
	}
	if p, ok := fields["metadata"]; ok {
		say.Metadata = d.jsonObject(p, "metadata")
	}
	out := []*steps.Step{say}
	if p, ok := fields["expect"]; ok {
		if exp := d.expect(p, "expect"); exp != nil {
			out = append(out, &steps.Step{Kind: steps.Check, Pos: exp.Pos, Expect: fixedExpect(exp)})
		}
	}
	if p, ok := fields["capture"]; ok {
		out = append(out, d.captures(p)...)
	}
	return out
}

// captures reads `capture: {name: {FIELD: 'regex'}}`, one Capture step
// per name.
func (d *decoder) captures(p pair) []*steps.Step {
	ps, ok := d.pairs(p.Val, "capture")
	if !ok {
		return nil
	}
	var out []*steps.Step
	for _, kv := range ps {
		if !interp.ValidName(kv.Name) {
			d.errorf(kv.Key, "invalid capture name %q: use letters, digits, '_' and '-', starting with a letter or '_'", kv.Name)
			continue
		}
		spec := d.resolve(kv.Val)
		if spec == nil {
			continue
		}
		if spec.Kind != yaml.MappingNode {
			d.errorHint(spec, fmt.Sprintf("write %s: {response: '...'} with the field to read and a regular expression", kv.Name),
				"capture %s must be a mapping of one field to a regular expression, not %s", kv.Name, kindName(spec))
			continue
		}
		fps, _ := d.pairs(spec, "capture "+kv.Name)
		if len(fps) != 1 {
			d.errorf(spec, "capture %s must name exactly one field (one of %s), not %d", kv.Name, strings.Join(captureFields, ", "), len(fps))
			continue
		}
		f := fps[0]
		if !validCaptureField(f.Name) {
			hint := diag.DidYouMean(f.Name, []string{"response", "node"})
			if hint == "" {
				hint = "one of " + strings.Join(captureFields, ", ")
			}
			d.errorHint(f.Key, hint, "capture %s: cannot read field %q", kv.Name, f.Name)
			continue
		}
		if d.messaging && captureNeedsChat(f.Name) {
			d.errorHint(f.Key, hintConfirm, "capture %s: %s needs debug-chat metadata, which a conversation over messaging does not have", kv.Name, f.Name)
		}
		pattern, ok := d.str(f.Val, "capture "+kv.Name)
		if !ok {
			continue
		}
		d.regex(d.resolve(f.Val), pattern, "capture "+kv.Name)
		if d.scope != nil && d.scope[kv.Name] {
			d.warnf(kv.Key, "capture %s replaces the variable of the same name from here on", kv.Name)
		}
		out = append(out, &steps.Step{Kind: steps.Capture, Pos: d.pos(kv.Key),
			Capture: &steps.CaptureSpec{Name: kv.Name, From: f.Name, Pattern: pattern}})
	}
	return out
}

func validCaptureField(f string) bool {
	switch f {
	case "response", "node":
		return true
	}
	for _, prefix := range []string{"state.", "metadata."} {
		if rest, ok := strings.CutPrefix(f, prefix); ok {
			return reply.ValidPath(rest)
		}
	}
	return false
}

// fixedBeforeRun refuses an agent or an environment written with ${...}:
// both are fixed when the run is planned (the deployments read before
// the first case, the pre-run checks, the clientEnv of every session),
// before any variable has a value, so the text would reach the platform
// as written. what is "agent" or "env"; msg is empty when v is fine.
func fixedBeforeRun(what, v string) (msg, hint string) {
	if !strings.Contains(v, "${") {
		return "", ""
	}
	msg = fmt.Sprintf("%s %q: ${...} is not expanded in the %s, which is fixed before the run starts", what, v, what)
	if what == "agent" {
		return msg, "write the agent id, or leave the agent out and set it on the target (agent_id, or AGENTTEST_AGENT_ID)"
	}
	return msg, "write one of " + strings.Join(reply.Envs, ", ") + "; or leave the env out and set it on the target (env:, --env or AGENTTEST_ENV)"
}
