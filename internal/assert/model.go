package assert

import (
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Text matches a string value: a reply, a node name, a state value, a
// metric. The zero Text matches anything. Every field that is set must hold
// (a map of several matcher keys in YAML means "all of these").
//
// String fields may contain ${name} references; they are expanded through the
// Expander given to Check just before matching, so captures from earlier
// turns can be used.
type Text struct {
	// Pos is where the matcher was written.
	Pos diag.Pos

	// Exact is the bare-string form: the actual value, trimmed, must equal
	// the trimmed expected value.
	Exact *string
	// Equals is an exact match without trimming.
	Equals *string
	// Contains and NotContains are substring checks.
	Contains    *string
	NotContains *string
	// Matches and NotMatches are RE2 regular expressions, unanchored.
	Matches    *string
	NotMatches *string
	// OneOf passes when the value equals (after trimming) one of the items.
	OneOf []string
	// Similar passes when the similarity of the value to Similar.To reaches
	// Similar.Min (see Similarity for the measure).
	Similar *Similar
	// IgnoreCase folds case for every comparison above, and makes regular
	// expressions case-insensitive. It holds for the matchers nested in
	// Any, All and Not too, but for those with MatchCase.
	IgnoreCase bool
	// MatchCase compares case even inside a matcher that ignores it: a
	// nested `ignore_case: false`, which a bool alone could not tell from
	// a nested matcher that says nothing of case.
	MatchCase bool

	// Any passes when at least one of its matchers passes.
	Any []*Text
	// All passes when every one of its matchers passes.
	All []*Text
	// Not passes when its matcher fails.
	Not *Text
}

// Similar is the `similar: {to: ..., min: ...}` matcher.
type Similar struct {
	// Pos is where the matcher was written (its `similar` key), for
	// the Score it records; zero places it at the enclosing Text.
	Pos diag.Pos
	To  string
	// Min is the least similarity, 0 to 1, that passes. Zero means the
	// documented default, DefaultSimilarity.
	Min float64
}

// DefaultSimilarity is the threshold of a `similar` matcher that gives none.
const DefaultSimilarity = 0.8

// UnrelatedSimilarity is as similar as replies about different things
// get: measured over pairs of unrelated sentences of the examples
// ("How many guests?" against "Goodbye!" scores 0, the opening hours
// against a booking confirmation 0.05, an on-call nurse against a
// request to repeat 0.099). A threshold at or below it passes nearly any
// reply, so lint warns of it (PointlessThreshold).
const UnrelatedSimilarity = 0.1

// SimilarityShare reads a similarity threshold v outside 0 to 1 as the
// percentage without its sign a designer likely meant (70 for 0.7), for
// the hint of the loaders that refuse it: ok is false when v is no such
// percentage.
func SimilarityShare(v float64) (share float64, ok bool) {
	return v / 100, v >= 10 && v <= 100
}

// Expect is the set of checks on one reply (the `expect:` of a turn, the
// `greeting:` of a scenario, or the Then steps of a feature that follow one
// When). A nil field is not checked.
type Expect struct {
	Pos diag.Pos

	// Response checks the reply text.
	Response *Text
	// Trace checks metadata.nodeTrace.
	Trace *Trace
	// Node checks metadata.currentNode; Flow metadata.inFlow; Step
	// metadata.inStep.
	Node *Text
	Flow *Text
	Step *Text
	// State checks metadata.state, key by key, in the order written.
	State []StateCheck
	// Handoff checks metadata.handoffDestination.
	Handoff *Handoff
	// Ended checks conversationEnded; Delayed checks delayedResponse.
	Ended   *Bool
	Delayed *Bool
	// Metrics checks metadata.metrics, name by name.
	Metrics []MetricCheck
	// Functions checks metadata.functionEvents.
	Functions *Functions
	// Topics checks retrievedTopics and citedTopic.
	Topics *Topics
	// LatencyMS bounds the reply time measured by the client.
	LatencyMS *Latency
	// Lang checks asrLangCode and ttsLangCode.
	Lang *Lang
	// Metadata reaches any member by a dotted path (the escape hatch).
	Metadata []MetadataCheck

	// The checks below read the events of a Messaging turn
	// (Observation.Messaging); events.go.

	// Events checks the event types received during the turn.
	Events *Events
	// SystemMessage checks the turn's EVENT_TYPE_SYSTEM_MESSAGE events.
	SystemMessage *SystemMessage
	// SessionEnded checks whether a session end event arrived.
	SessionEnded *Bool
}

// Parts says where each part of a compound check was written, by its
// key ("includes", "sequence", "not_called"), so that a failure points at
// the part that broke rather than at the check's key. The YAML loader
// fills it; a feature step is a single part written at the step, and a
// check with no Parts (or a part not in it) is placed at its Pos. A
// slice, not a map: a check has a few parts, and a map of one would cost
// a scenario program some 450 bytes against its 5 KB.
type Parts []Part

// Part is where one key of a compound check was written, or one item of
// its list: a row of a feature's table, an item of a YAML list.
type Part struct {
	Key string
	// Item, when not 0, is the item of Key's list written at Pos,
	// counted from 1; 0 is the key itself.
	Item int
	Pos  diag.Pos
}

// Pos is where the key part was written, zero when that is not known.
func (p Parts) Pos(part string) diag.Pos { return p.at(part, diag.Pos{}) }

// ItemPos is where item i (counted from 0) of the list of part was
// written, else where part was, else zero.
func (p Parts) ItemPos(part string, i int) diag.Pos {
	return p.itemAt(part, i, p.Pos(part))
}

// items places each item of the list of part: at its own position, else
// at def.
func (p Parts) items(part string, def diag.Pos) func(item int) diag.Pos {
	return func(i int) diag.Pos { return p.itemAt(part, i, def) }
}

// whole places every item of a list at pos: a list whose items are not
// written apart, or that fails as one.
func whole(pos diag.Pos) func(int) diag.Pos { return func(int) diag.Pos { return pos } }

// at is where part was written, or def when that is not known.
func (p Parts) at(part string, def diag.Pos) diag.Pos { return p.itemAt(part, -1, def) }

// itemAt is where item i (from 0; -1 for the key) of part was written, or
// def when that is not known.
func (p Parts) itemAt(part string, i int, def diag.Pos) diag.Pos {
	for _, x := range p {
		if x.Key == part && x.Item == i+1 && !x.Pos.IsZero() {
			return x.Pos
		}
	}
	return def
}

// Trace checks the node trace of a reply.
type Trace struct {
	Pos diag.Pos
	// Parts holds the positions of includes, excludes, sequence and
	// equals, and of the items of the first three: a failing item is
	// placed at its own.
	Parts Parts
	// Includes: each node appears somewhere in the trace.
	Includes []string
	// Excludes: no listed node appears.
	Excludes []string
	// Sequence: the nodes appear in this order, gaps allowed.
	Sequence []string
	// Equals: the trace is exactly this list.
	Equals []string
}

// StateCheck checks one key of metadata.state.
type StateCheck struct {
	Pos diag.Pos
	Key string
	// Match checks the value rendered as text (numbers and booleans in
	// their JSON form, objects and arrays as compact JSON).
	Match *Text
	// Present, when set, checks only whether the key exists.
	Present *bool
}

// Handoff checks metadata.handoffDestination.
type Handoff struct {
	Pos diag.Pos
	// Expected false means "no handoff"; true means a handoff happened.
	Expected bool
	// Destination, when set, checks where to.
	Destination *Text
}

// Bool checks a boolean field.
type Bool struct {
	Pos   diag.Pos
	Value bool
}

// MetricCheck checks one custom metric of metadata.metrics.
type MetricCheck struct {
	Pos  diag.Pos
	Name string
	// Match checks the value; for a metric written several times (an array
	// of strings) it passes when any written value matches.
	Match *Text
	// Count, when set, checks how many times the metric was written (a
	// string counts as 1, an array as its length, a missing metric as 0).
	Count *int
	// Present, when set, checks only whether the metric exists.
	Present *bool
}

// Functions checks metadata.functionEvents. How an event's name and failure
// are read is decided in one place: reply.Metadata.FunctionEvents.
type Functions struct {
	Pos diag.Pos
	// Parts holds the positions of called, not_called, failed and
	// no_errors.
	Parts     Parts
	Called    []string
	NotCalled []string
	Failed    []string
	// NoErrors: no function event failed.
	NoErrors bool
}

// Topics checks knowledge retrieval.
type Topics struct {
	Pos diag.Pos
	// Parts holds the position of retrieved (Cited has its own).
	Parts Parts
	// Retrieved: each topic appears in retrievedTopics.
	Retrieved []string
	// Cited checks citedTopic.
	Cited *Text
}

// Latency bounds the time from sending a turn to receiving its reply.
type Latency struct {
	Pos diag.Pos
	Max int
}

// Lang checks the language codes of a reply.
type Lang struct {
	Pos diag.Pos
	ASR *Text
	TTS *Text
}

// MetadataCheck reaches into the raw metadata by a dotted path
// ("state.booking.code", "llmRequests.0.model") and matches the value found
// there, rendered as text.
type MetadataCheck struct {
	Pos   diag.Pos
	Path  string
	Match *Text
	// Present, when set, checks only whether the path exists.
	Present *bool
}

// Observation is what a check looks at: one reply and how long it took,
// and for a turn over Messaging the events it received.
type Observation struct {
	Result  *reply.TurnResult
	Latency time.Duration
	// Messaging is the turn's events; nil for a debug-chat reply.
	Messaging *reply.Messaging
}

// Expander expands ${...} references in expected values. It returns an
// error naming the reference it could not resolve.
type Expander func(string) (string, error)

// Failure is one broken expectation.
type Failure struct {
	// Pos is where the broken expectation was written.
	Pos diag.Pos `json:"pos"`
	// Step is the feature step that made the check, keyword included
	// ("Then the agent's reply contains \"how many\""); empty for YAML.
	Step string `json:"step,omitempty"`
	// Key names the check, as the user wrote it: "response",
	// "state.party_size", "trace.sequence", "functions.failed".
	Key string `json:"key"`
	// Message is one line, lower-case: "reply does not contain the
	// expected text".
	Message string `json:"message"`
	// Expected and Actual are the compared values in plain text; Expected
	// describes the matcher when it is not a plain value ("contains
	// \"how many\" (ignoring case)").
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	// Diff is a plain-text diff of Expected against Actual (always of
	// those two: renderers that mark changes up themselves recompute it
	// from them), set when both are literal texts worth diffing: inline [-deleted-]{+inserted+} for one
	// line, "- "/"+ " lines for several.
	Diff string `json:"diff,omitempty"`
	// Nearest is set when the matcher offered several whole texts (the
	// items of one_of; the is, equals, one_of and similar alternatives of
	// any) and none passed: the one most similar to Actual, which is the
	// phrasing the agent most likely meant. Diff is then of Nearest
	// against Actual, not of Expected (a description of every
	// alternative), and Message gives their similarity.
	Nearest string `json:"nearest,omitempty"`
	// IgnoreCase is set when the check compared the texts ignoring case
	// (ignore_case): Diff then treats letters that differ only in case as
	// the same (DiffOfFold), and renderers that recompute it do too
	// (DiffFor).
	IgnoreCase bool `json:"ignore_case,omitempty"`
	// Unexpanded is set when the expectation could not be evaluated at
	// all: a ${...} reference in it cannot be expanded (ExpandError).
	// Whatever the agent said, the check would fail the same way: the
	// runner records the scenario's configuration error instead, as it
	// does for such a reference in a say.
	Unexpanded bool `json:"-"`
	// Unreported is set when the check failed on a value the platform
	// did not report: a metadata member the reference lets a reply
	// leave out (not every member is in every response), read as "".
	// Nothing the agent did is known, so the runner records the
	// platform's error instead of a failure of the agent.
	Unreported bool `json:"-"`
}

// DiffBase is the text Diff compares Actual with: Nearest when set, else
// Expected. Renderers that recompute the diff start from it.
func (f Failure) DiffBase() string {
	if f.Nearest != "" {
		return f.Nearest
	}
	return f.Expected
}
