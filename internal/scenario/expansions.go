package scenario

import (
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/steps"
)

// expansions collects, while one scenario (one examples row) is decoded,
// the ${env:NAME} references its run expands (Scenario.EnvRefs). The
// runner expands them at different times, and expanded mirrors it:
//   - the texts of its program (says, matchers, capture patterns, probe
//     and confirm: values) as each step runs;
//   - its start parameters when it opens a conversation, which a probe
//     scenario never does (Session.startRequest);
//   - every var it has, its suite's, its own and its examples row's
//     alike, the first time a text holding a ${...} is expanded
//     (resolveVars, Session.interpolate): a scenario that expands no
//     such text never reads them.
type expansions struct {
	// defs, when set, receives what str reads: the definitions of vars or
	// start keys, by key; key and keepEmpty say of which one.
	defs      *map[string][]EnvRef
	key       string
	keepEmpty bool
	// text are the references of the texts of the program, and refers
	// says one of those texts holds a ${...} the run expands.
	text   envRefSet
	refers bool
	// The definitions of vars and start keys, the suite's and the
	// scenario's: the scenario's override the suite's key by key.
	suiteVars, vars, suiteStart, start map[string][]EnvRef
}

// read notes a value the run expands, as written at at (which may be nil
// when s holds no "${").
func (x *expansions) read(s string, at func(off int) diag.Pos) {
	switch {
	case x == nil:
	case x.defs != nil:
		if s == "" && !x.keepEmpty {
			return // Start.Merge keeps the suite's
		}
		var refs envRefSet
		refs.note(s, at)
		if *x.defs == nil {
			*x.defs = map[string][]EnvRef{}
		}
		(*x.defs)[x.key] = refs.refs
	default:
		x.refers = x.refers || hasRefs(s)
		x.text.note(s, at)
	}
}

// defining runs read with what str reads there going to defs.
func (x *expansions) defining(defs *map[string][]EnvRef, read func()) {
	if x == nil {
		read()
		return
	}
	x.defs = defs
	defer func() { x.defs = nil }()
	read()
}

// at names the var or start key the values read next define.
func (x *expansions) at(key string, keepEmpty bool) {
	if x != nil {
		x.key, x.keepEmpty = key, keepEmpty
	}
}

// unexpanded runs read with what it reads left out: values the run never
// expands.
func (x *expansions) unexpanded(read func()) {
	x.defining(new(map[string][]EnvRef), read)
}

// hasRefs reports whether s holds a ${...} reference the runner would
// expand. A text with only $${ is left out: not every kind of text hands
// one to the expander.
func hasRefs(s string) bool {
	if !strings.Contains(s, "${") {
		return false
	}
	refs, err := interp.Scan(s)
	return err == nil && len(refs) > 0
}

// expandedStartKeys are the start parameters the runner expands (but
// the integration attributes, startKey).
var expandedStartKeys = [...]string{"channel", "variant", "asr_lang", "tts_lang", "conversation_id"}

// startKey is the key of an integration attribute among the start keys.
func startKey(attr string) string { return "integration_attributes." + attr }

// expanded returns the references sc's run expands, in file order, given
// the references of its examples row's values (by column).
func (x *expansions) expanded(sc *Scenario, row map[string][]EnvRef) []EnvRef {
	refs := slices.Clone(x.text.refs)
	refers := x.refers
	if opensConversation(sc) {
		st := sc.Start
		for _, v := range [...]string{st.Channel, st.Variant, st.ASRLang, st.TTSLang, st.ConversationID} {
			refers = refers || hasRefs(v)
		}
		for _, v := range st.IntegrationAttributes {
			refers = refers || hasRefs(v)
		}
		if len(x.start)+len(x.suiteStart) > 0 {
			for _, k := range expandedStartKeys {
				refs = append(refs, definition(k, x.start, x.suiteStart)...)
			}
			for k := range st.IntegrationAttributes {
				refs = append(refs, definition(startKey(k), x.start, x.suiteStart)...)
			}
		}
	}
	if refers {
		for k := range sc.Vars {
			refs = append(refs, definition(k, row, x.vars, x.suiteVars)...)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	set := envRefSet{}
	for _, r := range refs {
		set.add(r)
	}
	return set.sorted()
}

// definition is the references of the definition of key that wins: the
// first of defs that has one.
func definition(key string, defs ...map[string][]EnvRef) []EnvRef {
	for _, d := range defs {
		if refs, ok := d[key]; ok {
			return refs
		}
	}
	return nil
}

// opensConversation reports whether a run of sc opens a conversation, and
// so expands its start parameters: a step needs one, and no probe came
// first (Session.exec).
func opensConversation(sc *Scenario) bool {
	for _, st := range sc.Steps {
		if st.Kind == steps.Probe {
			return false
		}
		if st.NeedsChat() {
			return true
		}
	}
	return false
}

// noteRefs records the ${env:NAME} references of the value of column col,
// written at at; none for a value without any, which still overrides a
// var of the same name.
func (r *exampleRow) noteRefs(col, v string, at func(off int) diag.Pos) {
	var refs envRefSet
	refs.note(v, at)
	if r.EnvRefs == nil {
		r.EnvRefs = map[string][]EnvRef{}
	}
	r.EnvRefs[col] = refs.refs
}

// envRefs are the references of the row's values by column; none for no
// row.
func (r *exampleRow) envRefs() map[string][]EnvRef {
	if r == nil {
		return nil
	}
	return r.EnvRefs
}
