package assert

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// none stands for an empty list in Actual, so "nothing" never reads as a
// missing value.
const none = "(none)"

// Check evaluates every key of exp against one reply and returns the broken
// expectations, in the order they were written (by Pos; checks without a
// position keep the order of the Expect fields). A nil exp checks nothing.
// expand resolves ${...} references in expected values; nil expands nothing.
// References that cannot be resolved and patterns that do not compile become
// failures of their key, never panics.
func Check(exp *Expect, obs Observation, expand Expander) []Failure {
	fails, _ := CheckScores(exp, obs, expand)
	return fails
}

// CheckScores is Check that also gives the Score of every similar
// matcher it evaluated, passing or failing, in the order evaluated: the
// scores are a by-product of the checks, measured once. It allocates
// nothing for them when exp has no similar matcher.
func CheckScores(exp *Expect, obs Observation, expand Expander) ([]Failure, []Score) {
	if exp == nil {
		return nil, nil
	}
	if obs.Result == nil {
		return []Failure{{Pos: exp.Pos, Key: "response", Message: "no reply to check"}}, nil
	}
	c := checker{pos: exp.Pos, res: obs.Result, msg: obs.Messaging, expand: expand}
	if exp.Response != nil {
		c.text(exp.Response, label{key: "response", subject: "reply"}, "text", obs.Result.Response)
	}
	if exp.Trace != nil {
		c.trace(exp.Trace)
	}
	if exp.Node != nil {
		c.text(exp.Node, label{key: "node", subject: "current node"}, "value", c.res.CurrentNode())
	}
	if exp.Flow != nil {
		c.text(exp.Flow, label{key: "flow", subject: "flow"}, "value", c.res.InFlow())
	}
	if exp.Step != nil {
		c.text(exp.Step, label{key: "step", subject: "step"}, "value", c.res.InStep())
	}
	for i := range exp.State {
		c.state(&exp.State[i])
	}
	if exp.Handoff != nil {
		c.handoff(exp.Handoff)
	}
	if exp.Ended != nil {
		c.boolean(exp.Ended, "ended", obs.Result.ConversationEnded, "conversation did not end", "conversation ended unexpectedly")
	}
	if exp.Delayed != nil {
		c.boolean(exp.Delayed, "delayed", obs.Result.DelayedResponse, "reply was not delayed", "reply was delayed unexpectedly")
	}
	if len(exp.Metrics) > 0 {
		metrics := c.res.Metrics()
		for i := range exp.Metrics {
			c.metric(&exp.Metrics[i], metrics)
		}
	}
	if exp.Functions != nil {
		c.functions(exp.Functions)
	}
	if exp.Topics != nil {
		c.topics(exp.Topics)
	}
	if exp.LatencyMS != nil {
		c.latency(exp.LatencyMS, obs)
	}
	if exp.Lang != nil {
		pos := c.at(exp.Lang.Pos)
		if exp.Lang.ASR != nil {
			c.reported(pos, exp.Lang.ASR, label{key: "lang.asr", subject: "asr language"}, "asrLangCode", c.res.ASRLang())
		}
		if exp.Lang.TTS != nil {
			c.reported(pos, exp.Lang.TTS, label{key: "lang.tts", subject: "tts language"}, "ttsLangCode", c.res.TTSLang())
		}
	}
	for i := range exp.Metadata {
		c.metadata(&exp.Metadata[i])
	}
	if exp.Events != nil || exp.SystemMessage != nil || exp.SessionEnded != nil {
		c.messaging(exp, obs.Messaging)
	}
	if len(c.fails) > 1 {
		sort.SliceStable(c.fails, func(i, j int) bool { return c.fails[i].Pos.Before(c.fails[j].Pos) })
	}
	return c.fails, c.scores
}

// checker accumulates the failures of one Check.
type checker struct {
	// pos is the position of the whole Expect, used for checks written
	// without a position of their own.
	pos diag.Pos
	res *reply.TurnResult
	// msg is the turn's events when it came over Messaging.
	msg    *reply.Messaging
	expand Expander
	fails  []Failure
	// scores are the similar matchers' scores (CheckScores).
	scores []Score
}

// md is the reply's metadata, decoded by the first check that reads it.
// A check of one typed member reads it through the reply's accessor
// instead (c.res.State()), which decodes that member alone.
func (c *checker) md() reply.Metadata { return c.res.Meta() }

// at returns p, or the position of the Expect when p is unknown.
func (c *checker) at(p diag.Pos) diag.Pos {
	if p.IsZero() {
		return c.pos
	}
	return p
}

func (c *checker) fail(f Failure) { c.fails = append(c.fails, f) }

// names expands ${...} references in a list of names (nodes, functions,
// topics), so a name captured or given in a var can be checked like text.
// The list is returned as it is when nothing in it refers to anything, which
// is the common case and allocates nothing. An unresolved reference is a
// failure of key+part (joined only then), and the list is nil: that part
// checks nothing more, and the other parts of the check still run. It
// fails at the item, where at places it (at returns the part's position
// for a list whose items are not placed).
func (c *checker) names(at func(item int) diag.Pos, key, part string, list []string) (out []string) {
	for i, n := range list {
		if !strings.Contains(n, "${") || c.expand == nil {
			continue
		}
		v, err := c.expand(n)
		if err != nil {
			c.fail(Failure{Pos: at(i), Key: key + part, Message: "cannot expand expected value: " + err.Error(), Expected: n, Unexpanded: true})
			return nil
		}
		if out == nil {
			out = append([]string(nil), list...)
		}
		out[i] = v
	}
	if out == nil {
		out = list
	}
	return out
}

// label names a checked value: its Key ("state.party_size") and the subject
// of its messages (`state "party_size"`). The parts are joined only when a
// check fails, so passing checks build no strings.
type label struct {
	// key and subject are the fixed parts: "state" and "state".
	key, subject string
	// name, when set, is the variable part: "party_size".
	name string
	// quote quotes the name in the subject.
	quote bool
}

// Key is the Failure.Key: "state.party_size".
func (l label) Key() string {
	if l.name == "" {
		return l.key
	}
	return l.key + "." + l.name
}

// Subject starts the failure message: `state "party_size"`.
func (l label) Subject() string {
	switch {
	case l.name == "":
		return l.subject
	case l.quote:
		return l.subject + " " + strconv.Quote(l.name)
	}
	return l.subject + " " + l.name
}

// text checks a Text matcher; noun is "text" or "value", as the failure
// message calls the expected value.
func (c *checker) text(t *Text, l label, noun, actual string) {
	c.textAt(c.at(t.Pos), t, l, noun, actual)
}

// textAt is text with the position given by the caller, for matchers
// nested in a key that carries the position.
func (c *checker) textAt(pos diag.Pos, t *Text, l label, noun, actual string) {
	if r, pos, ok := c.resolveAt(pos, t, l, actual); ok {
		c.evalAt(pos, r, l, noun, actual)
	}
}

// reported is textAt of the metadata member a language code is read
// from. The reference lets a reply leave any metadata member out, and a
// code the platform did not report reads as "": a check that fails on it
// would compare against nothing the agent said, so it is marked
// Unreported and says so, rather than diff a code against "".
func (c *checker) reported(pos diag.Pos, t *Text, l label, member, actual string) {
	n := len(c.fails)
	c.textAt(pos, t, l, "value", actual)
	if len(c.fails) == n || c.fails[n].Unexpanded || c.res.Reports(member) {
		return
	}
	f := &c.fails[n]
	f.Message = fmt.Sprintf("the platform did not report the reply's %s: metadata.%s is not in the reply (the reference lets a reply leave any metadata member out), so the check cannot judge the agent", l.subject, member)
	f.Actual, f.Diff, f.Nearest, f.Unreported = "not reported", "", "", true
}

// resolveAt expands the references of t, the matcher of a check of
// actual written at pos (or at t.Pos), and gives the matcher to evaluate
// and where the check fails. When a reference cannot be resolved, or
// leaves a matcher every text satisfies, the check fails saying so and
// ok is false.
func (c *checker) resolveAt(pos diag.Pos, t *Text, l label, actual string) (r *Text, at diag.Pos, ok bool) {
	if !t.Pos.IsZero() {
		pos = t.Pos
	}
	r, err := t.resolve(c.expand)
	if err != nil {
		c.fail(Failure{Pos: pos, Key: l.Key(), Message: err.Error(), Expected: t.Describe(), Actual: actual, Unexpanded: true})
		return nil, pos, false
	}
	if r != t && r.MatchesAll() && !t.MatchesAll() {
		// What lint warns of as written, made so by a reference: an
		// ${env:...} a CI job left empty, an examples cell of "", a
		// capture of nothing. The check would pass whatever came back.
		c.fail(Failure{Pos: pos, Key: l.Key(), Expected: t.Describe(), Actual: actual,
			Message: fmt.Sprintf("cannot check: the expected value expands to %s, which every text satisfies (is a value it refers to empty?)", r.Describe())})
		return nil, pos, false
	}
	return r, pos, true
}

// evalAt checks actual against r, a matcher resolveAt gave.
func (c *checker) evalAt(pos diag.Pos, r *Text, l label, noun, actual string) {
	sc := scoring{list: c.scores, l: l, pos: pos}
	m, err := r.eval(actual, false, noun, &sc)
	c.scores = sc.list
	if err != nil {
		c.fail(Failure{Pos: pos, Key: l.Key(), Message: err.Error(), Expected: r.Describe(), Actual: actual})
		return
	}
	if m == nil {
		return
	}
	f := Failure{Pos: pos, Key: l.Key(), Message: l.Subject() + " " + m.phrase, Expected: m.expected, Actual: actual,
		IgnoreCase: m.folded}
	if m.nearest != "" || m.literal {
		f.Nearest = m.nearest
		f.Diff = DiffTextFor(f, f.DiffBase(), actual, false)
	}
	c.fail(f)
}

func (c *checker) trace(t *Trace) {
	c.list(c.at(t.Pos), t.Parts, traceList, c.res.NodeTrace(), t.Includes, t.Excludes, t.Sequence, t.Equals)
}

// listSubject names an ordered list a check reads (the node trace, the
// event types of a turn) in its keys and messages.
type listSubject struct {
	// key prefixes the Failure keys: "trace" makes "trace.includes".
	key string
	// subject starts the message of a list that is not the expected one.
	subject string
	// missing, excluded and notAfter are the messages of the other
	// failures, given the item (and the item it should follow).
	missing, excluded func(item string) string
	notAfter          func(item, prev string) string
	// join renders a list for Expected and Actual.
	join func(items []string) string
	// named, when set, is the item as the actual list spells it (an
	// event type written with the reference's brand word).
	named func(item string) string
	// near names, beside a missing item, the item of the list spelt
	// nearly the same: a node name is the suite's own text, where a typo
	// is likely. An event type is one of a vocabulary checked on load, so
	// a near one is another event, not the one meant.
	near bool
}

var traceList = listSubject{
	key:      "trace",
	subject:  "node trace",
	missing:  func(n string) string { return "node trace is missing " + n },
	excluded: func(n string) string { return "node trace contains excluded node " + n },
	notAfter: func(n, prev string) string { return "node trace has no " + n + " after " + prev },
	join:     joinTrace,
	near:     true,
}

// list checks an ordered list: every item of includes appears, none of
// excludes does, sequence appears in order (gaps allowed) and, when
// equals is not nil, the list is exactly equals. Items may hold ${...}
// references. Each part fails at its own position in parts, else at pos.
func (c *checker) list(pos diag.Pos, parts Parts, l listSubject, actual, includes, excludes, sequence, equals []string) {
	inclPos, exclPos := parts.at("includes", pos), parts.at("excludes", pos)
	seqPos, eqPos := parts.at("sequence", pos), parts.at("equals", pos)
	includes = c.names(parts.items("includes", inclPos), l.key, ".includes", includes)
	excludes = c.names(parts.items("excludes", exclPos), l.key, ".excludes", excludes)
	sequence = c.names(parts.items("sequence", seqPos), l.key, ".sequence", sequence)
	// equals fails as one list, at its key.
	equals = c.names(whole(eqPos), l.key, ".equals", equals)
	if l.named != nil {
		// Copies: the lists may be the scenario's own.
		includes, excludes, sequence, equals = l.rename(includes), l.rename(excludes), l.rename(sequence), l.rename(equals)
	}
	for i, n := range includes {
		if indexOf(actual, n, 0) < 0 {
			c.fail(Failure{Pos: parts.itemAt("includes", i, inclPos), Key: l.key + ".includes", Message: l.missing(n) + l.nearItem(n, actual), Expected: "includes " + n, Actual: l.join(actual)})
		}
	}
	for i, n := range excludes {
		if indexOf(actual, n, 0) >= 0 {
			c.fail(Failure{Pos: parts.itemAt("excludes", i, exclPos), Key: l.key + ".excludes", Message: l.excluded(n), Expected: "excludes " + n, Actual: l.join(actual)})
		}
	}
	if len(sequence) > 0 {
		from := 0
		for i, n := range sequence {
			at := indexOf(actual, n, from)
			if at >= 0 {
				from = at + 1
				continue
			}
			// "no X after Y" when X is there, before Y; when X is not
			// there at all, that is what is wrong.
			msg := l.missing(n) + l.nearItem(n, actual)
			if i > 0 && indexOf(actual, n, 0) >= 0 {
				msg = l.notAfter(n, sequence[i-1])
			}
			// At the item that broke the order: a row of a feature's
			// table, an item of a YAML list.
			c.fail(Failure{Pos: parts.itemAt("sequence", i, seqPos), Key: l.key + ".sequence", Message: msg,
				Expected: l.join(sequence) + " (in this order, gaps allowed)", Actual: l.join(actual)})
			break
		}
	}
	if equals != nil && !sameList(actual, equals) {
		want, got := l.join(equals), l.join(actual)
		c.fail(Failure{Pos: eqPos, Key: l.key + ".equals", Message: l.subject + " is not the expected list",
			Expected: want, Actual: got, Diff: Diff(want, got)})
	}
}

// rename is list with each item as named says, in a new slice.
func (l listSubject) rename(list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = l.named(n)
	}
	return out
}

func indexOf(list []string, s string, from int) int {
	for i := from; i < len(list); i++ {
		if list[i] == s {
			return i
		}
	}
	return -1
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// joinTrace renders a node list in the order the agent went through it.
func joinTrace(nodes []string) string {
	if len(nodes) == 0 {
		return none
	}
	return strings.Join(nodes, " > ")
}

func joinList(items []string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}

// presence checks an expected presence; it returns false when the check is
// settled (nothing more to evaluate on the key). A key written null is
// absent. missing and unexpected are
// formats of the messages, given the name of the key; near, when not nil,
// adds to a missing key's message the key likely meant. The messages and
// the actual value are built only on failure.
func (c *checker) presence(pos diag.Pos, l label, want *bool, found bool, missing, unexpected string, v any, near func() string) bool {
	if want != nil && found && v == nil {
		// Written null, the key holds no value: not set, as one left
		// out is not. A platform that declares every variable of the
		// agent writes those not filled yet as null.
		found, missing, near = false, missing+" (it is null)", nil
	}
	switch {
	case want != nil && !*want:
		if found {
			c.fail(Failure{Pos: pos, Key: l.Key(), Message: fmt.Sprintf(unexpected, l.name), Expected: "absent", Actual: reply.Render(v)})
		}
		return false
	case !found:
		msg := fmt.Sprintf(missing, l.name)
		if near != nil {
			msg += near()
		}
		c.fail(Failure{Pos: pos, Key: l.Key(), Message: msg, Expected: "present", Actual: "absent"})
		return false
	}
	return true
}

func (c *checker) state(s *StateCheck) {
	pos := c.at(s.Pos)
	l := label{key: "state", subject: "state", name: s.Key, quote: true}
	state := c.res.State()
	v, found := state[s.Key]
	if !found {
		// A dotted key reaches into nested objects: state.booking.code.
		v, found = reply.LookupPath(state, s.Key)
	}
	near := func() string { return nearKey(s.Key, state) }
	if !c.presence(pos, l, s.Present, found, "state has no key %q", "state has key %q", v, near) {
		return
	}
	if s.Match != nil {
		c.textAt(pos, s.Match, l, "value", reply.Render(v))
	}
}

// nearKey is the hint of a key a reply's state (or metrics) lacks: the
// key it has that the suite likely meant, ` (did you mean "party_size"?)`,
// or "". A typo in a suite's key would otherwise read as an agent that
// forgot a value.
func nearKey[V any](key string, m map[string]V) string {
	return nearItem(key, slices.Collect(maps.Keys(m)))
}

// nearItem is the hint of an item missing from the list actual: the item
// it has that the suite likely meant, or "" (listSubject.near).
func (l listSubject) nearItem(item string, actual []string) string {
	if !l.near {
		return ""
	}
	return nearItem(item, actual)
}

// nearItem is the hint of an item a reply's list (the node trace) or
// keys lack: the one it has that the suite
// likely meant (a node written `ConfirmBookng`, `confirm_booking` for
// `ConfirmBooking`), or "".
func nearItem(item string, have []string) string {
	if h := diag.DidYouMean(item, have); h != "" {
		return " (" + h + ")"
	}
	return ""
}

// handoff checks the handoff of a reply: metadata.handoffDestination of a
// debug-chat reply, the handoff events of a Messaging turn.
func (c *checker) handoff(h *Handoff) {
	pos := c.at(h.Pos)
	dest := c.res.HandoffDestination()
	happened := dest != ""
	if c.msg != nil {
		happened = c.msg.Handoff != nil
		if happened {
			dest = c.msg.Handoff.Destination
		}
	}
	switch {
	case !h.Expected && h.Destination == nil:
		if happened {
			actual := "a handoff"
			if dest != "" {
				actual = "handoff to " + dest
			}
			c.fail(Failure{Pos: pos, Key: "handoff", Message: "agent handed off unexpectedly", Expected: "no handoff", Actual: actual})
		}
	case !happened:
		exp := "a handoff"
		if h.Destination != nil {
			exp = "a handoff to a destination that " + h.Destination.Describe()
		}
		c.fail(Failure{Pos: pos, Key: "handoff", Message: "agent did not hand off", Expected: exp, Actual: "no handoff"})
	case h.Destination != nil:
		c.textAt(pos, h.Destination, label{key: "handoff.destination", subject: "handoff destination"}, "value", dest)
	}
}

func (c *checker) boolean(b *Bool, key string, actual bool, notTrue, notFalse string) {
	if actual == b.Value {
		return
	}
	msg := notTrue
	if !b.Value {
		msg = notFalse
	}
	c.fail(Failure{Pos: c.at(b.Pos), Key: key, Message: msg, Expected: strconv.FormatBool(b.Value), Actual: strconv.FormatBool(actual)})
}

func (c *checker) metric(m *MetricCheck, metrics map[string][]string) {
	pos := c.at(m.Pos)
	l := label{key: "metrics", subject: "metric", name: m.Name, quote: true}
	values, found := metrics[m.Name]
	if m.Present != nil && !*m.Present {
		if found {
			c.fail(Failure{Pos: pos, Key: l.Key(), Message: fmt.Sprintf("metric %q was written", m.Name), Expected: "absent", Actual: renderValues(values)})
		}
		return
	}
	if m.Count != nil && len(values) != *m.Count {
		// A missing metric counts as written zero times, so count: 0 passes.
		c.fail(Failure{Pos: pos, Key: l.Key(),
			Message:  fmt.Sprintf("metric %q was written %s, expected %s", m.Name, times(len(values)), times(*m.Count)),
			Expected: strconv.Itoa(*m.Count), Actual: strconv.Itoa(len(values))})
		return
	}
	if !found {
		if m.Count == nil || (m.Present != nil && *m.Present) {
			c.fail(Failure{Pos: pos, Key: l.Key(), Message: fmt.Sprintf("metric %q was not written", m.Name) + nearKey(m.Name, metrics), Expected: "present", Actual: "absent"})
		}
		return
	}
	if m.Match == nil {
		return
	}
	// Resolved once for every value, so that a reference which leaves a
	// matcher every text satisfies fails the check as it does for one
	// value, rather than passing on the first.
	r, pos, ok := c.resolveAt(pos, m.Match, l, renderValues(values))
	if !ok {
		return
	}
	// A metric written several times passes when any value matches.
	broken := false // the matcher itself cannot be evaluated
	if len(values) > 1 {
		sc := scoring{list: c.scores, l: l, pos: pos}
		held := false
		for _, v := range values {
			mm, err := r.eval(v, false, "value", &sc)
			if err != nil {
				broken = true
				break
			}
			if held = mm == nil; held {
				break
			}
		}
		c.scores = sc.list
		if held {
			return
		}
	}
	var one string
	if len(values) > 0 {
		one = values[len(values)-1]
	}
	n, k := len(c.fails), len(c.scores)
	c.evalAt(pos, r, l, "value", one)
	if len(values) > 1 {
		// The loop above scored the last value already.
		c.scores = c.scores[:k]
	}
	if len(c.fails) > n && len(values) > 1 && !broken {
		// Show every written value, not only the last one tried.
		f := &c.fails[len(c.fails)-1]
		f.Message = fmt.Sprintf("no value of metric %q matches", m.Name)
		f.Actual, f.Diff = renderValues(values), ""
	}
}

// renderValues renders the values of a metric: one value as itself, several
// as a JSON array.
func renderValues(values []string) string {
	switch len(values) {
	case 0:
		return ""
	case 1:
		return values[0]
	}
	list := make([]any, len(values))
	for i, v := range values {
		list[i] = v
	}
	return reply.Render(list)
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

func (c *checker) functions(f *Functions) {
	pos := c.at(f.Pos)
	calledPos, notCalledPos := f.Parts.at("called", pos), f.Parts.at("not_called", pos)
	failedPos, noErrorsPos := f.Parts.at("failed", pos), f.Parts.at("no_errors", pos)
	events := c.res.FunctionEvents()
	calledNames := c.names(whole(calledPos), "functions.called", "", f.Called)
	notCalled := c.names(whole(notCalledPos), "functions.not_called", "", f.NotCalled)
	failedNames := c.names(whole(failedPos), "functions.failed", "", f.Failed)
	called := func(name string) (seen, failed bool) {
		for _, ev := range events {
			if ev.Name == name {
				seen = true
				failed = failed || ev.Failed
			}
		}
		return seen, failed
	}
	for _, name := range calledNames {
		if seen, _ := called(name); !seen {
			c.fail(Failure{Pos: calledPos, Key: "functions.called", Message: "function " + name + " was not called", Expected: "called " + name, Actual: renderCalls(events)})
		}
	}
	for _, name := range notCalled {
		if seen, _ := called(name); seen {
			c.fail(Failure{Pos: notCalledPos, Key: "functions.not_called", Message: "function " + name + " was called", Expected: "not called " + name, Actual: renderCalls(events)})
		}
	}
	for _, name := range failedNames {
		switch seen, failed := called(name); {
		case !seen:
			c.fail(Failure{Pos: failedPos, Key: "functions.failed", Message: "function " + name + " was not called", Expected: name + " failed", Actual: renderCalls(events)})
		case !failed:
			c.fail(Failure{Pos: failedPos, Key: "functions.failed", Message: "function " + name + " did not fail", Expected: name + " failed", Actual: renderCalls(events)})
		}
	}
	if f.NoErrors {
		var names, errs []string
		for _, ev := range events {
			if !ev.Failed {
				continue
			}
			names = append(names, functionName(ev))
			e := functionName(ev) + ": "
			if ev.Error != "" {
				e += ev.Error
			} else {
				e += "failed"
			}
			errs = append(errs, e)
		}
		if len(names) > 0 {
			msg := "function " + names[0] + " failed"
			if len(names) > 1 {
				msg = "functions " + strings.Join(names, ", ") + " failed"
			}
			c.fail(Failure{Pos: noErrorsPos, Key: "functions.no_errors", Message: msg, Expected: "no function errors", Actual: strings.Join(errs, "; ")})
		}
	}
}

func functionName(ev reply.FunctionEvent) string {
	if ev.Name == "" {
		return "(unnamed)"
	}
	return ev.Name
}

// renderCalls lists the function events of a reply with their outcome:
// "check_availability (ok), book_table (failed: no table)".
func renderCalls(events []reply.FunctionEvent) string {
	if len(events) == 0 {
		return "no function called"
	}
	parts := make([]string, len(events))
	for i, ev := range events {
		switch {
		case !ev.Failed:
			parts[i] = functionName(ev) + " (ok)"
		case ev.Error != "":
			parts[i] = functionName(ev) + " (failed: " + ev.Error + ")"
		default:
			parts[i] = functionName(ev) + " (failed)"
		}
	}
	return strings.Join(parts, ", ")
}

func (c *checker) topics(t *Topics) {
	pos := c.at(t.Pos)
	if len(t.Retrieved) > 0 {
		retrievedPos := t.Parts.at("retrieved", pos)
		retrieved := c.names(whole(retrievedPos), "topics.retrieved", "", t.Retrieved)
		got := c.res.RetrievedTopics()
		for _, name := range retrieved {
			if indexOf(got, name, 0) < 0 {
				c.fail(Failure{Pos: retrievedPos, Key: "topics.retrieved", Message: fmt.Sprintf("topic %q was not retrieved", name),
					Expected: "retrieved " + strconv.Quote(name), Actual: joinList(got)})
			}
		}
	}
	if t.Cited != nil {
		c.textAt(pos, t.Cited, label{key: "topics.cited", subject: "cited topic"}, "value", c.res.CitedTopic())
	}
}

func (c *checker) latency(l *Latency, obs Observation) {
	ms := obs.Latency.Milliseconds()
	if ms <= int64(l.Max) {
		return
	}
	c.fail(Failure{Pos: c.at(l.Pos), Key: "latency_ms",
		Message:  fmt.Sprintf("reply took %d ms, more than %d ms", ms, l.Max),
		Expected: fmt.Sprintf("at most %d ms", l.Max), Actual: fmt.Sprintf("%d ms", ms)})
}

// emptyForm names the empty value v of a member not reported.
func emptyForm(v any) string {
	switch v.(type) {
	case string:
		return `""`
	case []any:
		return "[]"
	case map[string]any:
		return "{}"
	}
	return "null"
}

func (c *checker) metadata(m *MetadataCheck) {
	pos := c.at(m.Pos)
	l := label{key: "metadata", subject: "metadata", name: m.Path}
	v, found := c.md().Lookup(m.Path)
	missing := "metadata has no %s"
	if m.Present != nil && found && !reply.Reported(m.Path, v) {
		// Written empty or null: not reported, as if left out.
		found, missing = false, "metadata has no %s (the reply writes it "+emptyForm(v)+")"
	}
	if !c.presence(pos, l, m.Present, found, missing, "metadata has %s", v, nil) {
		return
	}
	if m.Match != nil {
		c.textAt(pos, m.Match, l, "value", reply.Render(v))
	}
}
