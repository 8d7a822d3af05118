// Package reply is the model of what the agent platform says back: the
// debug-chat turn result and its metadata, the conversation record and
// the handoff state a confirmation reads, and the names the platform uses
// for call statuses and webhook events.
//
// It is a leaf: the standard library only, no HTTP. internal/platform
// decodes the platform's answers into these types; the checks
// (internal/assert), the loaders (internal/scenario, internal/steps) and
// the renderers (internal/report) read them without depending on the
// client. Every tolerant reading of a member the reference leaves open
// (aliases, shapes, null) is decided here, once (see metadata.go):
//
//	res := exch.Result                       // *reply.TurnResult
//	node := res.CurrentNode()                // that member alone, decoded
//	v, ok := res.Meta().Lookup("state.booking.code")
//	text := reply.Render(v)                  // "AB12", "4", "true", compact JSON
package reply

import (
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
)

// TurnResult is the reference's "Debug chat turn result": what both debug-chat
// endpoints return.
type TurnResult struct {
	ConversationID    string `json:"conversationId"`
	UserInput         string `json:"userInput"`
	Response          string `json:"response"`
	ConversationEnded bool   `json:"conversationEnded"`
	DelayedResponse   bool   `json:"delayedResponse"`
	// metadata holds the metadata members as decoded JSON values
	// (map[string]any, []any, string, float64, bool, nil), read with Meta
	// and set with SetMetadata: the platform client may defer decoding it
	// (Deferred), so a field read directly could be empty where the
	// reply is not, and a check that something is absent would pass.
	metadata Metadata
	// RawMetadata is the metadata object exactly as received, kept for
	// reports and the JSON output.
	RawMetadata json.RawMessage `json:"-"`
	// Plain is set by the platform client when the body held the
	// reference's members with their own JSON types and nothing it had
	// to tolerate, so ParseTurn of the body gives this result back: a
	// large run may then keep the body alone (result.Turn.Release).
	Plain bool `json:"-"`
	// deferred holds the metadata when its decoding was deferred
	// (Deferred).
	deferred *deferredMetadata
}

// Metadata is the metadata object of a debug-chat turn result.
type Metadata map[string]any

// ParseTurn decodes a debug-chat turn result in the reference's own shape
// with its members of their own types (strings, booleans, metadata an
// object), and reports whether body was one. The metadata is left as
// RawMetadata (Meta is nil): a caller that needs it decodes it. The
// platform client accepts far more shapes; ParseTurn is for bodies that
// are known to be plain, such as the replies a large run keeps and decodes
// again for its reports (result.Turn.Release).
func ParseTurn(body []byte) (*TurnResult, bool) {
	var w struct {
		ConversationID    *string         `json:"conversationId"`
		UserInput         *string         `json:"userInput"`
		Response          *string         `json:"response"`
		Metadata          json.RawMessage `json:"metadata"`
		ConversationEnded *bool           `json:"conversationEnded"`
		DelayedResponse   *bool           `json:"delayedResponse"`
	}
	if json.Unmarshal(body, &w) != nil || w.ConversationID == nil || w.UserInput == nil || w.Response == nil ||
		w.ConversationEnded == nil || w.DelayedResponse == nil || len(w.Metadata) == 0 || w.Metadata[0] != '{' {
		return nil, false
	}
	return &TurnResult{
		ConversationID:    *w.ConversationID,
		UserInput:         *w.UserInput,
		Response:          *w.Response,
		ConversationEnded: *w.ConversationEnded,
		DelayedResponse:   *w.DelayedResponse,
		RawMetadata:       w.Metadata,
		Plain:             true,
	}, true
}

// Meta returns the metadata: as set (SetMetadata), or, when the decoder
// deferred it (Deferred), decoded on first use. It is safe for
// concurrent use.
func (r *TurnResult) Meta() Metadata {
	if r.deferred == nil {
		return r.metadata
	}
	d := r.deferred
	d.once.Do(func() {
		d.md = d.decode(d.raw, nil, &d.at)
		d.built.Store(true)
	})
	return d.md
}

// member returns metadata that reads as Meta does for the reference
// member name: all of it, or, while the decoder deferred it (Deferred),
// only that member under each of its spellings, decoded alone. A check
// reads one or two members of a reply (the node trace, the state), so
// building every other member for it is work and memory to collect for
// nothing. The accessors of TurnResult below pair each member with its
// reader, so only the reader of name ever sees the part. The parts are
// kept for the next reader; a reader of a third member has every member
// built (Meta). It is safe for concurrent use.
func (r *TurnResult) member(name string) Metadata {
	d := r.deferred
	if d == nil {
		return r.metadata
	}
	if d.built.Load() {
		return d.md
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for p := d.parts; p != nil; p = p.next {
		if p.name == name {
			return p.md
		}
		n++
	}
	if n == maxParts {
		// A reader of many members: build them all, once.
		return r.Meta()
	}
	md := d.decode(d.raw, metadataSpellings[name], &d.at)
	d.parts = &metadataPart{name: name, md: md, next: d.parts}
	return md
}

// maxParts is how many members of a reply are decoded alone (member):
// two, as the checks of a turn that read the state and the node do.
const maxParts = 2

// The members of the reply's metadata, each read as the Metadata method of
// the same name reads it (see member).

// NodeTrace is Meta().NodeTrace().
func (r *TurnResult) NodeTrace() []string { return r.member("nodeTrace").NodeTrace() }

// CurrentNode is Meta().CurrentNode().
func (r *TurnResult) CurrentNode() string { return r.member("currentNode").CurrentNode() }

// InFlow is Meta().InFlow().
func (r *TurnResult) InFlow() string { return r.member("inFlow").InFlow() }

// InStep is Meta().InStep().
func (r *TurnResult) InStep() string { return r.member("inStep").InStep() }

// HandoffDestination is Meta().HandoffDestination().
func (r *TurnResult) HandoffDestination() string {
	return r.member("handoffDestination").HandoffDestination()
}

// CitedTopic is Meta().CitedTopic().
func (r *TurnResult) CitedTopic() string { return r.member("citedTopic").CitedTopic() }

// ASRLang is Meta().ASRLang().
func (r *TurnResult) ASRLang() string { return r.member("asrLangCode").ASRLang() }

// TTSLang is Meta().TTSLang().
func (r *TurnResult) TTSLang() string { return r.member("ttsLangCode").TTSLang() }

// Reports reports whether the reply's metadata holds the reference
// member name (under any of its spellings) with a value: null and a
// missing member are not reported.
func (r *TurnResult) Reports(name string) bool { return r.member(name).spelling(name) != "" }

// RetrievedTopics is Meta().RetrievedTopics().
func (r *TurnResult) RetrievedTopics() []string {
	return r.member("retrievedTopics").RetrievedTopics()
}

// State is Meta().State(): do not modify the map.
func (r *TurnResult) State() map[string]any { return r.member("state").State() }

// Metrics is Meta().Metrics().
func (r *TurnResult) Metrics() map[string][]string { return r.member("metrics").Metrics() }

// FunctionEvents is Meta().FunctionEvents().
func (r *TurnResult) FunctionEvents() []FunctionEvent {
	return r.member("functionEvents").FunctionEvents()
}

// SetMetadata sets the metadata, decoded, and returns r, so that a
// result built from parts is one expression.
func (r *TurnResult) SetMetadata(md Metadata) *TurnResult {
	r.metadata, r.deferred = md, nil
	return r
}

// Deferred returns an empty TurnResult whose metadata is left undecoded
// until it is read, which decodes raw with decode: most turns' checks
// read only the reply's text. decode(raw, nil, at) builds every member;
// decode(raw, spellings, at) builds only the members received under one
// of spellings, the spellings of a typed member (the members of the object
// named so, with their values as the whole object's would hold them), for
// a reader of one member (see member). at is where the decoder met the
// typed members as it checked raw (TypedAt). The decoder must already
// have checked that raw decodes, and that the result passes Check. The
// result and what its metadata needs are one allocation, not two: a
// decoder makes one of each per reply.
func Deferred(raw []byte, at TypedAt, decode func(raw []byte, spellings []string, at *TypedAt) Metadata) *TurnResult {
	both := &struct {
		r TurnResult
		d deferredMetadata
	}{d: deferredMetadata{raw: raw, at: at, decode: decode}}
	both.r.deferred = &both.d
	return &both.r
}

// TypedAt records where a decoder met the typed members of a metadata
// object (those Check looks at, under any spelling: AcceptOf) as it
// checked it: the offsets of their keys in the object's text, in order,
// with the member each is. A member read alone is then decoded from its
// own keys without reading the other members again. It holds up to 16
// members of an object of up to 64 KiB; past that it knows none.
type TypedAt struct {
	at      [16]uint16
	member  [16]uint8
	n       uint8
	unknown bool
}

// Add records the key of a typed member, which AcceptOf accepts as a,
// starting at offset off.
func (t *TypedAt) Add(off int, a Accept) {
	if t.unknown || int(t.n) == len(t.at) || off > math.MaxUint16 {
		t.unknown = true
		return
	}
	t.at[t.n], t.member[t.n] = uint16(off), a.member
	t.n++
}

// OffsetsOf appends to offs the offsets of the keys of the typed member
// received as spelling (under any of its spellings), in order, and
// returns them; ok is false when they are not known (they did not fit,
// or spelling is of no typed member), and the member must be found by
// reading the object.
func (t *TypedAt) OffsetsOf(spelling string, offs []uint16) (_ []uint16, ok bool) {
	typed := typedOf(spelling)
	if typed == nil || t.unknown {
		return offs, false
	}
	for i, m := range t.member[:t.n] {
		if m == typed.accept.member {
			offs = append(offs, t.at[i])
		}
	}
	return offs, true
}

// DropMetadata drops the decoded metadata (RawMetadata gives it back), for
// a run that keeps thousands of replies. The deferred metadata shares the
// result's allocation (Deferred), so its map is let go of as well.
func (r *TurnResult) DropMetadata() {
	if d := r.deferred; d != nil {
		d.md, d.parts = nil, nil
	}
	r.metadata, r.deferred = nil, nil
}

// deferredMetadata is the metadata of a TurnResult, decoded on first use.
type deferredMetadata struct {
	once sync.Once
	// built is set once md holds every member: member reads it then.
	built  atomic.Bool
	raw    []byte
	decode func(raw []byte, spellings []string, at *TypedAt) Metadata
	md     Metadata
	// mu guards parts, the members decoded alone (member), the last
	// first: a list, not room in every reply for the few whose checks
	// read a member.
	mu    sync.Mutex
	parts *metadataPart
	at    TypedAt
}

// metadataPart is the metadata holding one reference member alone.
type metadataPart struct {
	name string
	md   Metadata
	next *metadataPart
}
