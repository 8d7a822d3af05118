package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// matcherKeys are the keys of a matcher mapping (assert.Text).
var matcherKeys = []string{
	"equals", "contains", "not_contains", "matches", "not_matches",
	"one_of", "similar", "ignore_case", "any", "all", "not",
}

// matcherKeySet is the allow-list of a matcher mapping, with hints for the
// words people reach for first.
var matcherKeySet = keySet{keys: matcherKeys, moved: map[string]string{
	"level":   "level applies to system_message only",
	"present": "present/absent apply to state, metrics and metadata keys only",
	"absent":  "present/absent apply to state, metrics and metadata keys only",
	// A threshold written beside similar, as other tools spell it.
	"threshold": similarMin,
	"min":       similarMin,
	"to":        similarMin,
}, means: map[string]string{"regex": "matches", "is": "equals"}}

// similarMin is the hint for a threshold written beside `similar:`.
const similarMin = `similar's threshold goes inside it: similar: {to: "…", min: 0.7}`

// expectDecoders are the keys of `expect:` and `greeting:`, each with the
// function that decodes it.
var expectDecoders = map[string]func(d *decoder, e *assert.Expect, p pair){
	"response":   func(d *decoder, e *assert.Expect, p pair) { e.Response = d.matcherAt(p, "response") },
	"node":       func(d *decoder, e *assert.Expect, p pair) { e.Node = d.matcherAt(p, "node") },
	"flow":       func(d *decoder, e *assert.Expect, p pair) { e.Flow = d.matcherAt(p, "flow") },
	"step":       func(d *decoder, e *assert.Expect, p pair) { e.Step = d.matcherAt(p, "step") },
	"trace":      (*decoder).trace,
	"state":      (*decoder).state,
	"handoff":    (*decoder).handoff,
	"ended":      func(d *decoder, e *assert.Expect, p pair) { e.Ended = d.boolCheck(p, "ended") },
	"delayed":    func(d *decoder, e *assert.Expect, p pair) { e.Delayed = d.boolCheck(p, "delayed") },
	"metrics":    (*decoder).metrics,
	"functions":  (*decoder).functions,
	"topics":     (*decoder).topics,
	"latency_ms": (*decoder).latency,
	"lang":       (*decoder).lang,
	"metadata":   (*decoder).metadata,
	// Messaging only.
	"events":         (*decoder).events,
	"system_message": (*decoder).systemMessage,
	"session_ended":  func(d *decoder, e *assert.Expect, p pair) { e.SessionEnded = d.boolCheck(p, "session_ended") },
}

// expectKeys is the allow-list of `expect:`, in the order the keys are
// listed in hints; every key has its decoder in expectDecoders.
var expectKeys = keySet{
	what: "expect",
	keys: []string{
		"response", "trace", "node", "flow", "step", "state", "handoff",
		"ended", "delayed", "metrics", "functions", "topics", "latency_ms",
		"lang", "metadata", "events", "system_message", "session_ended",
	},
	moved: map[string]string{
		"contains": "matchers go under a field: response: {contains: ...}",
		"matches":  "matchers go under a field: response: {matches: ...}",
		"equals":   "matchers go under a field: response: {equals: ...}",
		"say":      "say belongs to the turn, next to expect:",
		"capture":  "capture belongs to the turn, next to expect:",
	},
	// Other tools' names for these keys (expect_text, node_trace) are
	// diag's synonyms, which Suggest reads.
}

// expect decodes the checks on one reply. The Pos of the result is the key
// that introduced it (`expect:` or `greeting:`).
func (d *decoder) expect(p pair, what string) *assert.Expect {
	ks := expectKeys
	ks.what = what
	if n := d.resolve(p.Val); n != nil && n.Kind != yaml.MappingNode {
		d.errorHint(n, expectShapeHint(n, what), "%s must be a mapping, not %s", what, kindName(n))
		return nil
	}
	_, order, ok := d.object(p.Val, ks)
	if !ok {
		return nil
	}
	e := &assert.Expect{Pos: d.pos(p.Key)}
	for _, f := range order {
		expectDecoders[f.Name](d, e, f)
	}
	d.viaRules(order, what)
	if d.messaging && what == "expect" && e.Events != nil {
		d.joinedOnTurn(e, e.Events.Pos)
	}
	if !hasChecks(d.resolve(p.Val)) {
		d.warnf(p.Key, "%s has no checks", what)
	}
	for _, u := range e.Unfailing() {
		d.diags = d.diags.Warnf(u.Pos, "%s: %s", u.Key, unfailing(u))
	}
	return e
}

// unfailing words the warning of a check that cannot fail
// (assert.Expect.Unfailing), for YAML suites and feature files alike; a
// suite's warning names the key before it, where a feature's step says
// what it checks.
func unfailing(u assert.Unfailing) string {
	return u.Text.Describe() + " holds for every text, an empty one too: the check cannot fail"
}

// expectShapeHint says how to write the checks of an expect: or a
// greeting: that is not a mapping: the reply text under response:, the
// items of a list as keys, the checks of a null indented below the key.
func expectShapeHint(n *yaml.Node, what string) string {
	switch {
	case isNull(n):
		return fmt.Sprintf("write the checks on the lines below %s:, indented further than it", what)
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("to check the reply text, write %s: {response: %q}", what, n.Value)
	case n.Kind == yaml.SequenceNode:
		return fmt.Sprintf("write the checks as keys of a mapping, not items of a list: %s: {response: ..., node: ...}", what)
	}
	return ""
}

// matcherAt decodes the matcher written as the value of a key; its Pos is
// the key.
func (d *decoder) matcherAt(p pair, what string) *assert.Text {
	t := d.matcher(p.Val, what, false)
	if t != nil {
		t.Pos = d.pos(p.Key)
	}
	return t
}

// matcher decodes a string matcher: a bare value is an exact match after
// trimming; a mapping combines matcher keys (all must hold). ignore_case is
// inherited by nested matchers unless they set it themselves, so
// `{ignore_case: true, any: [...]}` folds case everywhere inside.
func (d *decoder) matcher(n *yaml.Node, what string, ignoreCase bool) *assert.Text {
	n = d.resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := d.str(n, what)
		if !ok {
			return nil
		}
		return &assert.Text{Pos: d.pos(n), Exact: d.ref(s), IgnoreCase: ignoreCase}
	case yaml.SequenceNode:
		d.errorHint(n, "use one_of: [...] for alternatives, or all:/any: for several matchers",
			"%s: a list is not a matcher", what)
		return nil
	}
	ks := matcherKeySet
	ks.what = what + " matcher"
	fields, order, ok := d.object(n, ks)
	if !ok {
		return nil
	}
	t := &assert.Text{Pos: d.pos(n), IgnoreCase: ignoreCase}
	if p, ok := fields["ignore_case"]; ok {
		if v, ok := d.boolean(p.Val, what+": ignore_case"); ok {
			t.IgnoreCase, t.MatchCase = v, !v
		}
	}
	checks := 0
	for _, p := range order {
		sub := what + ": " + p.Name
		switch p.Name {
		case "ignore_case":
			continue
		case "equals":
			t.Equals = d.strPtr(p.Val, sub)
		case "contains":
			t.Contains = d.strPtr(p.Val, sub)
		case "not_contains":
			t.NotContains = d.strPtr(p.Val, sub)
		case "matches":
			t.Matches = d.regexPtr(p.Val, sub)
		case "not_matches":
			t.NotMatches = d.regexPtr(p.Val, sub)
		case "one_of":
			t.OneOf, _ = d.strList(p.Val, sub, false)
		case "similar":
			if t.Similar = d.similar(p.Val, sub); t.Similar != nil {
				t.Similar.Pos = d.pos(p.Key)
			}
		case "any":
			t.Any = d.matcherList(p.Val, sub, t.IgnoreCase)
		case "all":
			t.All = d.matcherList(p.Val, sub, t.IgnoreCase)
		case "not":
			d.negated = !d.negated
			t.Not = d.matcher(p.Val, sub, t.IgnoreCase)
			d.negated = !d.negated
		}
		checks++
	}
	// Only complain about a matcher without checks when every key was
	// understood; unknown keys were reported already.
	if checks == 0 && len(n.Content)/2 == len(order) {
		d.errorHint(n, "add one of: "+strings.Join(matcherKeys[:len(matcherKeys)-4], ", ")+", any, all, not",
			"%s: matcher has no checks", what)
	}
	return t
}

func (d *decoder) strPtr(n *yaml.Node, what string) *string {
	s, ok := d.str(n, what)
	if !ok {
		return nil
	}
	return d.ref(s)
}

func (d *decoder) regexPtr(n *yaml.Node, what string) *string {
	s, ok := d.str(n, what)
	if !ok {
		return nil
	}
	d.regex(d.resolve(n), s, what)
	return d.ref(s)
}

func (d *decoder) matcherList(n *yaml.Node, what string, ignoreCase bool) []*assert.Text {
	n = d.resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list of matchers, not %s", what, kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		d.errorf(n, "%s must not be empty", what)
		return nil
	}
	out := make([]*assert.Text, 0, len(n.Content))
	for _, item := range n.Content {
		if t := d.matcher(item, what+" item", ignoreCase); t != nil {
			out = append(out, t)
		}
	}
	return out
}

// similar reads `similar: "text"` or `similar: {to: ..., min: ...}`.
func (d *decoder) similar(n *yaml.Node, what string) *assert.Similar {
	n = d.resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		s, ok := d.str(n, what)
		if !ok {
			return nil
		}
		return &assert.Similar{To: s}
	}
	fields, _, ok := d.object(n, keySet{what: what, keys: []string{"to", "min"}})
	if !ok {
		return nil
	}
	out := &assert.Similar{}
	to, ok := fields["to"]
	if !ok {
		d.errorf(n, "%s needs to: (the text to compare with)", what)
		return nil
	}
	out.To, _ = d.str(to.Val, what+": to")
	if p, ok := fields["min"]; ok {
		if v, ok := d.number(p.Val, what+": min"); ok {
			share, percent := assert.SimilarityShare(v)
			switch {
			case percent:
				d.errorHint(p.Val, fmt.Sprintf("write %v or \"%v%%\"", share, v), "%s: min must be between 0 and 1, not %v", what, v)
			case v < 0 || v > 1:
				d.errorf(p.Val, "%s: min must be between 0 and 1, not %v", what, v)
			case v == 0:
				d.warnf(p.Val, "%s: min 0 means the default %v; omit it or give a value above 0", what, assert.DefaultSimilarity)
			default:
				out.Min = v
				if why := assert.PointlessThreshold(v, d.negated); why != "" {
					d.warnf(p.Val, "%s: min %v %s", what, v, why)
				}
			}
		}
	}
	return out
}

// trace reads `trace: [A, B]` (includes) or a mapping of includes,
// excludes, sequence and equals.
func (d *decoder) trace(e *assert.Expect, p pair) {
	l, ok := d.list(p, "trace", true)
	if !ok {
		return
	}
	e.Trace = &assert.Trace{Pos: d.pos(p.Key), Parts: l.parts, Includes: l.includes, Excludes: l.excludes, Sequence: l.sequence, Equals: l.equals}
}

// events reads `events: [A, B]` (includes) or a mapping of includes,
// excludes and sequence, over the event types of a Messaging turn.
func (d *decoder) events(e *assert.Expect, p pair) {
	l, ok := d.list(p, "events", false)
	if !ok {
		return
	}
	e.Events = &assert.Events{Pos: d.pos(p.Key), Parts: l.parts, Includes: l.includes, Excludes: l.excludes, Sequence: l.sequence}
	d.diags = append(d.diags, eventTypeWarnings(e.Events, func(list string, i int) (diag.Pos, bool) {
		n := d.resolve(l.nodes[list])
		if n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
			n = d.resolve(n.Content[i])
		}
		if n == nil || n.Kind != yaml.ScalarNode || isNull(n) {
			return diag.Pos{}, false
		}
		return d.pos(n), true
	})...)
}

// listChecks are the parts of a list check (trace, events).
type listChecks struct {
	includes, excludes, sequence, equals []string
	// parts are where the keys of the mapping form were written.
	parts assert.Parts
	// nodes are the values of includes, excludes and sequence as written
	// (a bare list is includes), for positions of their items.
	nodes map[string]*yaml.Node
}

// list reads a list check: a bare list (or one item) is includes; a
// mapping has includes, excludes, sequence and, withEquals, equals.
func (d *decoder) list(p pair, what string, withEquals bool) (l listChecks, ok bool) {
	n := d.resolve(p.Val)
	if n == nil {
		return l, false
	}
	if n.Kind == yaml.SequenceNode || (n.Kind == yaml.ScalarNode && !isNull(n)) {
		l.includes, _ = d.strList(n, what, false)
		l.nodes = map[string]*yaml.Node{"includes": n}
		l.parts = d.itemParts(l.parts, "includes", n)
		return l, true
	}
	keys := []string{"includes", "excludes", "sequence"}
	if withEquals {
		keys = append(keys, "equals")
	}
	fields, order, ok := d.object(n, keySet{what: what, keys: keys})
	if !ok {
		return l, false
	}
	l.parts = d.parts(fields)
	l.nodes = map[string]*yaml.Node{}
	for _, k := range []string{"includes", "excludes", "sequence"} {
		if p, ok := fields[k]; ok {
			l.nodes[k] = p.Val
			l.parts = d.itemParts(l.parts, k, p.Val)
		}
	}
	if p, ok := fields["includes"]; ok {
		l.includes, _ = d.strList(p.Val, what+": includes", false)
	}
	if p, ok := fields["excludes"]; ok {
		l.excludes, _ = d.strList(p.Val, what+": excludes", false)
	}
	if p, ok := fields["sequence"]; ok {
		l.sequence, _ = d.strList(p.Val, what+": sequence", false)
	}
	if p, ok := fields["equals"]; ok {
		// An empty list is meaningful here: the reply visited no node.
		if eq, ok := d.strList(p.Val, what+": equals", true); ok {
			if eq == nil {
				eq = []string{}
			}
			l.equals = eq
		}
	}
	// Keys all unknown were reported, each with its did-you-mean.
	if len(order) == 0 && len(fields) == 0 && !hasChecks(n) {
		d.errorf(n, "%s has no checks: add %s or %s", what, strings.Join(keys[:len(keys)-1], ", "), keys[len(keys)-1])
	}
	return l, true
}

// parts records where each key of a compound check was written, so that
// its failures point there (assert.Parts).
func (d *decoder) parts(fields map[string]pair) assert.Parts {
	if len(fields) == 0 {
		return nil
	}
	ps := make(assert.Parts, 0, len(fields))
	for name, p := range fields {
		ps = append(ps, assert.Part{Key: name, Pos: d.pos(p.Key)})
	}
	// In the order written, whatever the map's.
	slices.SortFunc(ps, func(a, b assert.Part) int { return cmp.Or(a.Pos.Line-b.Pos.Line, a.Pos.Col-b.Pos.Col) })
	return ps
}

// itemParts adds to ps where each item of the list n, the value of key,
// was written, so that a failure of one item (a node missing from a
// trace, out of its sequence) points at that item (assert.Parts).
func (d *decoder) itemParts(ps assert.Parts, key string, n *yaml.Node) assert.Parts {
	n = d.resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return ps
	}
	for i, item := range n.Content {
		ps = append(ps, assert.Part{Key: key, Item: i + 1, Pos: d.pos(item)})
	}
	return ps
}

// systemMessage reads `system_message:`: false (no system message), true
// (any), or a matcher over the text, whose mapping may also hold level:.
func (d *decoder) systemMessage(e *assert.Expect, p pair) {
	n := d.resolve(p.Val)
	if n == nil {
		return
	}
	sm := &assert.SystemMessage{Pos: d.pos(p.Key), Expected: true}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		sm.Expected, _ = d.boolean(n, "system_message")
		e.SystemMessage = sm
		return
	}
	if n.Kind == yaml.MappingNode {
		// level: sits beside the matcher keys; the matcher reads the rest.
		var rest []*yaml.Node
		var levelKey *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value == "level" {
				if levelKey != nil {
					d.dupKey("system_message", k, levelKey)
				}
				levelKey = k
				// Compared as written (levelMatches).
				d.sc.unexpanded(func() { sm.Level, _ = d.str(n.Content[i+1], "system_message: level") })
				continue
			}
			rest = append(rest, n.Content[i], n.Content[i+1])
		}
		if len(rest) == 0 {
			if sm.Level == "" {
				d.errorf(n, "system_message has no checks: add a matcher such as contains:, or level:")
			}
			e.SystemMessage = sm
			return
		}
		m := *n
		m.Content = rest
		n = &m
	}
	sm.Text = d.matcher(n, "system_message", false)
	if sm.Text == nil {
		return
	}
	sm.Text.Pos = d.pos(p.Key)
	e.SystemMessage = sm
}

// presence reads a `{present: bool}` / `{absent: bool}` mapping. ok is false
// when n is not such a mapping (it is then a matcher or a count).
func (d *decoder) presence(n *yaml.Node, what string, others ...string) (present *bool, isPresence bool) {
	n = d.resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	var pk, ak *yaml.Node
	var pv, av *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "present":
			if pk != nil {
				d.dupKey(what, k, pk)
			}
			pk, pv = k, n.Content[i+1]
		case "absent":
			if ak != nil {
				d.dupKey(what, k, ak)
			}
			ak, av = k, n.Content[i+1]
		}
	}
	if pk == nil && ak == nil {
		return nil, false
	}
	if pk != nil && ak != nil {
		d.errorf(ak, "%s: write present or absent, not both", what)
		return nil, true
	}
	// Keys other than present/absent would be silently ignored: refuse them.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value != "present" && k.Value != "absent" {
			d.errorHint(k, "a presence check stands alone; write the matcher as a separate check",
				"%s: %q cannot be combined with present/absent", what, k.Value)
		}
	}
	if pk != nil {
		v, ok := d.boolean(pv, what+": present")
		if !ok {
			return nil, true
		}
		return &v, true
	}
	v, ok := d.boolean(av, what+": absent")
	if !ok {
		return nil, true
	}
	v = !v
	return &v, true
}

// state reads key -> matcher or presence, in the order written.
func (d *decoder) state(e *assert.Expect, p pair) {
	ps, ok := d.pairs(p.Val, "state")
	if !ok {
		return
	}
	if len(ps) == 0 {
		d.warnf(p.Key, "state has no checks")
	}
	for _, kv := range ps {
		what := "state." + kv.Name
		if !reply.ValidPath(kv.Name) {
			d.errorf(kv.Key, "state: invalid key %q: write dot-separated members, e.g. booking.party_size", kv.Name)
			continue
		}
		sc := assert.StateCheck{Pos: d.pos(kv.Key), Key: kv.Name}
		if present, isPresence := d.presence(kv.Val, what); isPresence {
			if present == nil {
				continue
			}
			sc.Present = present
		} else {
			sc.Match = d.stateMatcher(kv, what)
			if sc.Match == nil {
				continue
			}
		}
		e.State = append(e.State, sc)
	}
}

// stateMatcher decodes the matcher of a state or metadata key, with a hint
// for nested mappings, which look like an object comparison but are not.
func (d *decoder) stateMatcher(kv pair, what string) *assert.Text {
	n := d.resolve(kv.Val)
	if n != nil && n.Kind == yaml.MappingNode && len(n.Content) >= 2 && !slices.Contains(matcherKeys, n.Content[0].Value) {
		first := n.Content[0].Value
		if diag.Suggest(first, matcherKeys) == "" {
			d.errorHint(n.Content[0], "to check a nested value use metadata: {"+what+"."+first+": ...}",
				"%s: %q is not a matcher key", what, first)
			return nil
		}
	}
	t := d.matcher(kv.Val, what, false)
	if t != nil {
		t.Pos = d.pos(kv.Key)
	}
	return t
}

// handoff reads false (no handoff), true (any handoff) or a destination
// matcher. A plain yes, no, on or off is refused: YAML 1.1 read them as
// booleans and yaml.v3 (YAML 1.2) reads them as text, so `handoff: no`
// would expect a handoff to a destination named "no". Quoted, such a word
// is a destination.
func (d *decoder) handoff(e *assert.Expect, p pair) {
	n := d.resolve(p.Val)
	if n == nil {
		return
	}
	h := &assert.Handoff{Pos: d.pos(p.Key), Expected: true}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		h.Expected, _ = d.boolean(n, "handoff")
		e.Handoff = h
		return
	}
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) == 0 {
		if b, ok := yaml11Bool(n.Value); ok {
			d.errorHint(n, fmt.Sprintf("write %t, or quote it (handoff: %q) for a destination of that name", b, n.Value),
				"handoff: %s is not a boolean in YAML 1.2: it would expect a handoff to a destination named %q", n.Value, n.Value)
			return
		}
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value == "" {
		// A handoff names where to (debug chat reports one by its
		// destination), so "" expects what no reply can give.
		d.errorHint(n, "write true for any handoff, or false for none", "handoff: an empty destination matches no handoff")
		return
	}
	h.Destination = d.matcher(n, "handoff", false)
	if h.Destination == nil {
		return
	}
	h.Destination.Pos = d.pos(p.Key)
	e.Handoff = h
}

// yaml11Bool reads the words YAML 1.1 took for booleans and YAML 1.2
// (yaml.v3) takes for text.
func yaml11Bool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "yes", "y", "on":
		return true, true
	case "no", "n", "off":
		return false, true
	}
	return false, false
}

func (d *decoder) boolCheck(p pair, what string) *assert.Bool {
	v, ok := d.boolean(p.Val, what)
	if !ok {
		return nil
	}
	return &assert.Bool{Pos: d.pos(p.Key), Value: v}
}

// metrics reads name -> matcher, {count: N} or presence.
func (d *decoder) metrics(e *assert.Expect, p pair) {
	ps, ok := d.pairs(p.Val, "metrics")
	if !ok {
		return
	}
	if len(ps) == 0 {
		d.warnf(p.Key, "metrics has no checks")
	}
	for _, kv := range ps {
		what := "metrics." + kv.Name
		mc := assert.MetricCheck{Pos: d.pos(kv.Key), Name: kv.Name}
		if present, isPresence := d.presence(kv.Val, what); isPresence {
			if present == nil {
				continue
			}
			mc.Present = present
		} else if count, isCount, ok := d.count(kv.Val, what); isCount {
			if !ok {
				continue
			}
			mc.Count = &count
		} else {
			mc.Match = d.matcher(kv.Val, what, false)
			if mc.Match == nil {
				continue
			}
			mc.Match.Pos = d.pos(kv.Key)
		}
		e.Metrics = append(e.Metrics, mc)
	}
}

// count reads `{count: N}`.
func (d *decoder) count(n *yaml.Node, what string) (count int, isCount, ok bool) {
	n = d.resolve(n)
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) < 2 {
		return 0, false, false
	}
	var countKey, countVal *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value == "count" {
			if countKey != nil {
				d.dupKey(what, k, countKey)
			}
			countKey, countVal = k, n.Content[i+1]
		}
	}
	if countVal == nil {
		return 0, false, false
	}
	ok = true
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value != "count" {
			d.errorf(k, "%s: %q cannot be combined with count", what, k.Value)
			ok = false
		}
	}
	c, cok := d.integer(countVal, what+": count")
	if cok && c < 0 {
		d.errorf(countVal, "%s: count must be 0 or more, not %d", what, c)
		cok = false
	}
	return c, true, ok && cok
}

var functionsKeys = keySet{what: "functions", keys: []string{"called", "not_called", "failed", "no_errors"}}

func (d *decoder) functions(e *assert.Expect, p pair) {
	fields, order, ok := d.object(p.Val, functionsKeys)
	if !ok {
		return
	}
	f := &assert.Functions{Pos: d.pos(p.Key), Parts: d.parts(fields)}
	e.Functions = f
	if v, ok := fields["called"]; ok {
		f.Called, _ = d.strList(v.Val, "functions: called", false)
	}
	if v, ok := fields["not_called"]; ok {
		f.NotCalled, _ = d.strList(v.Val, "functions: not_called", false)
	}
	if v, ok := fields["failed"]; ok {
		f.Failed, _ = d.strList(v.Val, "functions: failed", false)
	}
	if v, ok := fields["no_errors"]; ok {
		f.NoErrors, _ = d.boolean(v.Val, "functions: no_errors")
	}
	if len(order) == 0 && len(fields) == 0 {
		d.warnf(p.Key, "functions has no checks")
	}
}

func (d *decoder) topics(e *assert.Expect, p pair) {
	fields, _, ok := d.object(p.Val, keySet{what: "topics", keys: []string{"retrieved", "cited"}})
	if !ok {
		return
	}
	t := &assert.Topics{Pos: d.pos(p.Key), Parts: d.parts(fields)}
	e.Topics = t
	if v, ok := fields["retrieved"]; ok {
		t.Retrieved, _ = d.strList(v.Val, "topics: retrieved", false)
	}
	if v, ok := fields["cited"]; ok {
		t.Cited = d.matcherAt(v, "topics: cited")
	}
	if len(fields) == 0 {
		d.warnf(p.Key, "topics has no checks")
	}
}

// latency reads `latency_ms: N` or `latency_ms: {max: N}`.
func (d *decoder) latency(e *assert.Expect, p pair) {
	n := d.resolve(p.Val)
	if n == nil {
		return
	}
	valNode := n
	if n.Kind == yaml.MappingNode {
		fields, _, ok := d.object(n, keySet{what: "latency_ms", keys: []string{"max"}})
		if !ok {
			return
		}
		m, ok := fields["max"]
		if !ok {
			d.errorf(n, "latency_ms needs max: (milliseconds)")
			return
		}
		valNode = m.Val
	}
	if vn := d.resolve(valNode); vn != nil {
		// A duration (`2s`, as timeout: takes) is the likely mistake: say
		// the milliseconds it means. (A number, or a node that is no
		// scalar, is no duration: ParseDuration wants a unit.)
		if dur, err := time.ParseDuration(vn.Value); err == nil && dur > 0 && dur%time.Millisecond == 0 {
			d.errorHint(vn, fmt.Sprintf("write %d: latency_ms counts milliseconds", dur.Milliseconds()),
				"latency_ms must be a whole number of milliseconds, not the duration %s", vn.Value)
			return
		}
	}
	v, ok := d.integer(valNode, "latency_ms")
	if !ok {
		return
	}
	if v <= 0 {
		d.errorf(valNode, "latency_ms must be above 0, not %d", v)
		return
	}
	e.LatencyMS = &assert.Latency{Pos: d.pos(p.Key), Max: v}
}

func (d *decoder) lang(e *assert.Expect, p pair) {
	fields, _, ok := d.object(p.Val, keySet{what: "lang", keys: []string{"asr", "tts"}})
	if !ok {
		return
	}
	l := &assert.Lang{Pos: d.pos(p.Key)}
	if v, ok := fields["asr"]; ok {
		l.ASR = d.matcherAt(v, "lang: asr")
	}
	if v, ok := fields["tts"]; ok {
		l.TTS = d.matcherAt(v, "lang: tts")
	}
	if len(fields) == 0 {
		d.warnf(p.Key, "lang has no checks")
	}
	e.Lang = l
}

// metadata reads dotted path -> matcher or presence.
func (d *decoder) metadata(e *assert.Expect, p pair) {
	ps, ok := d.pairs(p.Val, "metadata")
	if !ok {
		return
	}
	if len(ps) == 0 {
		d.warnf(p.Key, "metadata has no checks")
	}
	for _, kv := range ps {
		what := "metadata." + kv.Name
		if !reply.ValidPath(kv.Name) {
			d.errorf(kv.Key, "metadata: invalid path %q: write dot-separated members, e.g. state.booking.code or llmRequests.0.model", kv.Name)
			continue
		}
		mc := assert.MetadataCheck{Pos: d.pos(kv.Key), Path: kv.Name}
		if present, isPresence := d.presence(kv.Val, what); isPresence {
			if present == nil {
				continue
			}
			mc.Present = present
		} else {
			mc.Match = d.matcher(kv.Val, what, false)
			if mc.Match == nil {
				continue
			}
			mc.Match.Pos = d.pos(kv.Key)
		}
		e.Metadata = append(e.Metadata, mc)
	}
}
