package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/reply"
)

// Defaults of Options.
const (
	// DefaultMaxEvents bounds the verified events kept; the oldest go
	// first. A nightly run confirms a few hundred conversations at most.
	DefaultMaxEvents = 10000
	// DefaultMaxRejected bounds the rejected deliveries kept.
	DefaultMaxRejected = 1000
	// DefaultMaxBody bounds a delivery body. The reference shows no
	// payload limit; events are small JSON objects.
	DefaultMaxBody = 1 << 20
	// DefaultMaxSkew is the default Options.MaxSkew. It is wide: a
	// signed time only ever excludes an event, and a platform whose
	// clock is an hour off (a local time sent as UTC) must not have its
	// genuine events refused; a replay or a retry of an earlier
	// conversation with the same id is hours or days old.
	DefaultMaxSkew = time.Hour
)

// Options configure a Receiver. Zero fields take their defaults.
type Options struct {
	// Brand is the word of the signature header X-<Brand>-Signature;
	// default brand.Default.
	Brand string
	// Secret is the endpoint's signing secret, when known before the
	// receiver starts; else call SetSecret after registering.
	Secret string
	// MaxEvents and MaxRejected bound memory; MaxBody bounds one delivery.
	MaxEvents   int
	MaxRejected int
	MaxBody     int64
	// Now is the clock of ReceivedAt and of marks; default time.Now.
	Now func() time.Time
	// MaxSkew is how far the platform's clock may run behind the
	// receiver's: an event whose signed time is more than MaxSkew before
	// a mark was signed before the mark, and does not count for a wait
	// after it. Default DefaultMaxSkew.
	MaxSkew time.Duration
	// OnEvent and OnReject, when set, are called after a delivery is
	// stored, outside the receiver's lock, before the answer is written:
	// keep them quick (the platform allows 5 s per delivery).
	OnEvent  func(Event)
	OnReject func(Rejection)
}

// Event is a verified delivery.
type Event struct {
	// ID is the delivery's event id when it carries one (the same on
	// retries, so a retried event is stored once).
	ID string `json:"id,omitempty"`
	// Type is the event name, e.g. conversation.completed.
	Type string `json:"type"`
	// ConversationID and Environment are data.conversation_id and
	// data.environment ("" for alert events, which have none).
	ConversationID string `json:"conversation_id,omitempty"`
	Environment    string `json:"environment,omitempty"`
	// Data is the event's data object.
	Data map[string]any `json:"data,omitempty"`
	// Time is when the platform says the event happened, read from the
	// signed body (timestamp, created_at, occurred_at or time, of the
	// event or of its data; RFC 3339), or zero. The reference shows no
	// such member; where one is signed, it dates the event.
	Time time.Time `json:"time,omitzero"`
	// ReceivedAt is when the delivery arrived.
	ReceivedAt time.Time `json:"received_at"`

	// seq numbers the verified events in arrival order, from 1.
	seq uint64
}

// Mark is a point in the arrivals of a Receiver: Receiver.Mark takes one,
// and WaitAfter counts only the events that arrived after it. The zero
// Mark is before everything.
type Mark struct {
	seq uint64
	at  time.Time
	// env, when set, is the environment whose events count (In).
	env string
}

// In returns the mark, after which only the events of environment env
// count, and those that name no environment: the platform sends every
// environment's events to every endpoint (reference, Webhook events:
// "filter on data.environment to restrict"), and a conversation id can
// recur in another environment (a scenario that sets conversation_id,
// run against sandbox and live at once).
func (m Mark) In(env string) Mark {
	m.env = env
	return m
}

// Rejection is a delivery that failed verification or could not be read.
type Rejection struct {
	// Reason says why, e.g. "signature mismatch: ...".
	Reason string `json:"reason"`
	// Err is the verification error (errors.Is with ErrNoSignature,
	// ErrMalformedSignature, ErrSignatureMismatch, ErrNoSecret), nil for
	// other reasons.
	Err error `json:"-"`
	// Type and ConversationID are read from the unverified body, when it
	// parses (a conversation id that is a number as its JSON text), and
	// clipped to maxRejectedField bytes: they say which confirmation the
	// rejection concerns, and must not be trusted for anything else.
	Type           string    `json:"type,omitempty"`
	ConversationID string    `json:"conversation_id,omitempty"`
	ReceivedAt     time.Time `json:"received_at"`
}

// Receiver is an http.Handler for webhook deliveries and the store of what
// arrived. It answers every delivery at once (2xx for a verified or
// duplicate event, 401 for a bad signature, 400 for a body that is not an
// event), well within the platform's 5 s budget, and never blocks on a
// reader. Safe for concurrent use.
type Receiver struct {
	opts Options
	sig  string // signature header name

	mu       sync.Mutex
	secret   string
	events   []Event // oldest first, at most MaxEvents
	seq      uint64  // of the last event stored
	seen     map[string]bool
	rejected []Rejection
	// reached is set once any delivery has reached the receiver, whatever
	// became of it: the route from the platform works.
	reached bool
	// changed is closed and replaced whenever something is stored, which
	// wakes every Wait.
	changed chan struct{}
}

// NewReceiver returns a receiver; set its secret before deliveries arrive,
// or they are answered 503 so that the platform retries them.
func NewReceiver(opts Options) *Receiver {
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = DefaultMaxEvents
	}
	if opts.MaxRejected <= 0 {
		opts.MaxRejected = DefaultMaxRejected
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxSkew <= 0 {
		opts.MaxSkew = DefaultMaxSkew
	}
	return &Receiver{
		opts:    opts,
		sig:     brand.SignatureHeader(opts.Brand),
		secret:  opts.Secret,
		seen:    map[string]bool{},
		changed: make(chan struct{}),
	}
}

// SetSecret sets the signing secret, known once the endpoint is registered.
func (r *Receiver) SetSecret(secret string) {
	r.mu.Lock()
	r.secret = secret
	r.mu.Unlock()
}

// otherBrand says which brand a delivery without the receiver's signature
// header is signed under, when it carries another brand's (a platform of
// brand Acme signs in X-Acme-Signature): the receiver then needs that
// brand, not another secret. Empty when it carries none.
func otherBrand(h http.Header) string {
	for name := range h {
		if w, ok := brand.OfSignatureHeader(name); ok {
			return fmt.Sprintf(" (the delivery is signed in %s: the platform's brand is %s: set brand: %s on the target, or webhooks listen --brand %s)",
				name, w, w, w)
		}
	}
	return ""
}

// SignatureHeader is the header the receiver reads the signature from.
func (r *Receiver) SignatureHeader() string { return r.sig }

// ServeHTTP handles one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook deliveries are POSTs", http.StatusMethodNotAllowed)
		return
	}
	r.mu.Lock()
	r.reached = true
	r.mu.Unlock()
	now := r.opts.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, r.opts.MaxBody+1))
	if err != nil {
		r.reject(w, http.StatusBadRequest, Rejection{Reason: "body could not be read: " + err.Error(), ReceivedAt: now})
		return
	}
	if int64(len(body)) > r.opts.MaxBody {
		r.reject(w, http.StatusRequestEntityTooLarge, Rejection{Reason: fmt.Sprintf("body exceeds %d bytes", r.opts.MaxBody), ReceivedAt: now})
		return
	}
	r.mu.Lock()
	secret := r.secret
	r.mu.Unlock()
	if secret == "" {
		// Not an attack and not the platform's fault: the endpoint was
		// registered but the secret is not set here yet. A 503 makes the
		// platform retry, by which time it is.
		http.Error(w, "receiver not ready: no signing secret yet", http.StatusServiceUnavailable)
		return
	}
	if err := Verify(secret, body, req.Header.Get(r.sig)); err != nil {
		reason := err.Error()
		if errors.Is(err, ErrNoSignature) {
			reason = "missing " + r.sig + " header" + otherBrand(req.Header)
		}
		typ, conv := readUnverified(body)
		r.reject(w, http.StatusUnauthorized, Rejection{Reason: reason, Err: err, Type: typ, ConversationID: conv, ReceivedAt: now})
		return
	}
	env, parseErr := parse(body)
	if parseErr != nil {
		typ, conv := readUnverified(body)
		r.reject(w, http.StatusBadRequest, Rejection{Reason: "signed body is not an event: " + parseErr.Error(), Type: typ, ConversationID: conv, ReceivedAt: now})
		return
	}
	ev := Event{
		ID: env.ID, Type: env.Type, ConversationID: env.conversationID(),
		Environment: env.str("environment"), Data: env.Data, Time: env.time(), ReceivedAt: now,
	}
	if r.store(ev) && r.opts.OnEvent != nil {
		r.opts.OnEvent(ev)
	}
	w.WriteHeader(http.StatusNoContent)
}

// store adds a verified event unless its id was seen; it reports whether
// the event is new.
func (r *Receiver) store(ev Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.ID != "" {
		if r.seen[ev.ID] {
			return false
		}
		r.seen[ev.ID] = true
	}
	if len(r.events) >= r.opts.MaxEvents {
		drop := len(r.events) - r.opts.MaxEvents + 1
		for _, old := range r.events[:drop] {
			delete(r.seen, old.ID)
		}
		// Copy down rather than reslice, so the dropped events' memory
		// is released instead of pinned by the backing array.
		n := copy(r.events, r.events[drop:])
		clear(r.events[n:])
		r.events = r.events[:n]
	}
	r.seq++
	ev.seq = r.seq
	r.events = append(r.events, ev)
	r.broadcast()
	return true
}

func (r *Receiver) reject(w http.ResponseWriter, status int, rej Rejection) {
	// What a rejection keeps of its body is bounded, as the number of
	// rejections is: a forged 1 MiB type would otherwise be kept whole,
	// a gigabyte for the rejections a flood of them fills.
	rej.Type, rej.ConversationID = clip(rej.Type), clip(rej.ConversationID)
	r.mu.Lock()
	if len(r.rejected) >= r.opts.MaxRejected {
		n := copy(r.rejected, r.rejected[1:])
		r.rejected = r.rejected[:n]
	}
	r.rejected = append(r.rejected, rej)
	r.broadcast()
	r.mu.Unlock()
	if r.opts.OnReject != nil {
		r.opts.OnReject(rej)
	}
	http.Error(w, rej.Reason, status)
}

// broadcast wakes every Wait; r.mu is held.
func (r *Receiver) broadcast() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Events returns the verified events kept, oldest first.
func (r *Receiver) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Rejections returns the rejected deliveries kept, oldest first.
func (r *Receiver) Rejections() []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rejection(nil), r.rejected...)
}

// Find returns the first verified event of eventType for conversationID
// ("" matches any conversation), without waiting.
func (r *Receiver) Find(conversationID, eventType string) (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, ok, _, _ := r.findLocked(conversationID, eventType, Mark{})
	return ev, ok
}

// Mark marks what has arrived so far, for WaitAfter. Take it before the
// conversation whose events are awaited begins: nothing that arrived
// before then can be one of them.
func (r *Receiver) Mark() Mark {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Mark{seq: r.seq, at: r.opts.Now()}
}

// findLocked returns the first event of eventType for conversationID that
// counts after mark, and what it passed over of that type and
// conversation.
func (r *Receiver) findLocked(conversationID, eventType string, after Mark) (Event, bool, skips, chan struct{}) {
	var sk skips
	for _, ev := range r.events {
		if ev.Type != eventType || conversationID != "" && ev.ConversationID != conversationID {
			continue
		}
		switch {
		case ev.seq <= after.seq:
			sk.earlier++
		case !ev.Time.IsZero() && !after.at.IsZero() && ev.Time.Before(after.at.Add(-r.opts.MaxSkew)):
			sk.stale++
		case after.env != "" && ev.Environment != "" && reply.EnvSpelled(ev.Environment) != after.env:
			sk.otherEnv++
		default:
			return ev, true, sk, nil
		}
	}
	return Event{}, false, sk, r.changed
}

// skips counts the events a wait passed over.
type skips struct{ earlier, stale, otherEnv int }

// MissingError says that an expected event did not arrive verified before
// the wait ended. Rejected lists the deliveries of that event and
// conversation that were refused, whose reasons are usually the real cause
// (a wrong secret, a body changed by a proxy).
type MissingError struct {
	Type           string
	ConversationID string
	Rejected       []Rejection
	// Earlier counts the verified events of that type and conversation
	// that arrived before the wait's mark; Stale those signed more than
	// MaxSkew before it. Neither can be of the conversation awaited (a
	// replay, a late retry, or an earlier conversation with the same id),
	// or the platform's clock is far off.
	Earlier, Stale int
	// OtherEnv counts those of another environment than the mark's
	// (Mark.In), named by Environment.
	OtherEnv    int
	Environment string
	// Unreached is set when no delivery of any event had reached the
	// receiver when the wait ended: nothing happened that sends one, or
	// the platform's deliveries do not reach the receiver (a tunnel that
	// is down). The platform says nothing of its deliveries, so which of
	// the two it is stays open.
	Unreached bool
	// Waited is how long the wait lasted, when its caller says (the
	// receiver does not know when its caller's bound began): the
	// message then says it.
	Waited time.Duration
	// State is what its caller knows of the conversation that the event
	// is sent for (it ended, it handed off, or not), continuing the
	// first sentence: it starts with its own punctuation (", while the
	// conversation ended ...", ": the conversation is still in
	// progress ..."). Empty when the caller knows nothing.
	State string
	// Happened is set when its caller knows that what the platform sends
	// the event for happened (the conversation ended, or handed off):
	// then an Unreached receiver is not explained by nothing happening.
	Happened bool
	// Err is why the wait ended (context.DeadlineExceeded, Canceled).
	Err error
}

// Error renders `no verified "handoff.created" event for conversation c1
// arrived: 1 delivery rejected: signature mismatch: ...`.
func (e *MissingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no verified %q event", e.Type)
	if e.ConversationID != "" {
		fmt.Fprintf(&b, " for conversation %s", e.ConversationID)
	}
	b.WriteString(" arrived")
	if e.Waited > 0 {
		fmt.Fprintf(&b, " within %s", e.Waited)
	}
	b.WriteString(e.State)
	if errors.Is(e.Err, context.Canceled) {
		b.WriteString(" (wait cancelled)")
	}
	switch n := len(e.Rejected); {
	case n == 1:
		b.WriteString(": 1 delivery rejected: " + e.Rejected[0].Reason)
	case n > 1:
		fmt.Fprintf(&b, ": %d deliveries rejected, the last: %s", n, e.Rejected[n-1].Reason)
	}
	if e.Earlier > 0 {
		fmt.Fprintf(&b, "; %s arrived before this attempt began and did not count (a replay, a late retry, or an earlier conversation with the same id)", events(e.Earlier))
	}
	if e.Stale > 0 {
		fmt.Fprintf(&b, "; %s signed more than the allowed clock skew before this attempt began did not count (a replay, a late retry of an earlier conversation with the same id, or the platform's clock is off)", events(e.Stale))
	}
	if e.OtherEnv > 0 {
		fmt.Fprintf(&b, "; %s of another environment than %s did not count (a conversation with the same id there: the platform sends every environment's events to every endpoint)", events(e.OtherEnv), e.Environment)
	}
	if e.Unreached {
		b.WriteString("; no delivery of any event has reached the receiver since it started: ")
		if e.Happened {
			b.WriteString("the platform sent none, or its deliveries do not reach it")
		} else {
			b.WriteString("nothing happened that sends one, or the platform's deliveries do not reach it")
		}
		b.WriteString(" (check that the webhook URL leads to the receiver, through the tunnel or ingress in front of it)")
	}
	return b.String()
}

func events(n int) string {
	if n == 1 {
		return "1 verified event"
	}
	return fmt.Sprintf("%d verified events", n)
}

// Unwrap returns why the wait ended.
func (e *MissingError) Unwrap() error { return e.Err }

// Wait is WaitAfter with the zero Mark: any event that arrived counts.
func (r *Receiver) Wait(ctx context.Context, conversationID, eventType string) (Event, error) {
	return r.WaitAfter(ctx, conversationID, eventType, Mark{})
}

// WaitAfter blocks until a verified event of eventType for conversationID
// ("" for any conversation) has arrived after the mark, or ctx ends; then
// it returns a *MissingError carrying the rejected deliveries that match
// and the events that did not count. A rejected delivery does not end the
// wait: a valid retry of the same event, or the genuine delivery beside a
// forged one, may still come.
//
// The mark is what keeps an event from confirming twice: a conversation
// id can recur (a scenario that sets conversation_id, in its retries,
// repeats and nightly runs), and the reference gives a delivery no nonce,
// so an event of an earlier conversation with the same id, stored or
// replayed, would confirm the later one. After a mark taken before the
// conversation began, only events that arrived since count, and of those,
// an event whose signed time (when the body carries one) is before the
// mark by more than Options.MaxSkew does not.
func (r *Receiver) WaitAfter(ctx context.Context, conversationID, eventType string, after Mark) (Event, error) {
	for {
		r.mu.Lock()
		ev, ok, _, changed := r.findLocked(conversationID, eventType, after)
		r.mu.Unlock()
		if ok {
			return ev, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			r.mu.Lock()
			ev, ok, sk, _ := r.findLocked(conversationID, eventType, after)
			unreached := !r.reached
			r.mu.Unlock()
			if ok {
				return ev, nil
			}
			return Event{}, &MissingError{Type: eventType, ConversationID: conversationID, Rejected: r.rejectionsFor(conversationID, eventType, after),
				Earlier: sk.earlier, Stale: sk.stale, OtherEnv: sk.otherEnv, Environment: after.env, Unreached: unreached, Err: ctx.Err()}
		}
	}
}

// rejectionsFor returns the rejections since after whose unverified body
// named the event and conversation; one that could not be parsed matches
// too, since it may have been that event.
func (r *Receiver) rejectionsFor(conversationID, eventType string, after Mark) []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Rejection
	for _, rej := range r.rejected {
		if rej.ReceivedAt.Before(after.at) {
			continue // before the wait's conversation began
		}
		if rej.Type != "" && rej.Type != eventType {
			continue
		}
		if conversationID != "" && rej.ConversationID != "" && rej.ConversationID != conversationID {
			continue
		}
		out = append(out, rej)
	}
	return out
}

// envelope is a delivery body: type and data (reference), and the event id
// and time of implementations that send them.
type envelope struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	Data       map[string]any `json:"data"`
	Timestamp  any            `json:"timestamp"`
	CreatedAt  any            `json:"created_at"`
	OccurredAt any            `json:"occurred_at"`
	TimeMember any            `json:"time"`
}

// time reads the event's time: the first of its time members, then of
// data's, that is an RFC 3339 string. Other forms are left unread: a time
// only ever excludes an event, so a form read wrong must not.
func (e envelope) time() time.Time {
	for _, v := range []any{e.Timestamp, e.CreatedAt, e.OccurredAt, e.TimeMember,
		e.Data["timestamp"], e.Data["created_at"], e.Data["occurred_at"], e.Data["time"]} {
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

func (e envelope) str(key string) string {
	s, _ := e.Data[key].(string)
	return s
}

// conversationID reads data.conversation_id (reference), or the camelCase
// spelling of other implementations.
func (e envelope) conversationID() string {
	if s := e.str("conversation_id"); s != "" {
		return s
	}
	return e.str("conversationId")
}

// maxRejectedField bounds the type and the conversation id a rejection
// keeps from its body; longer ones are cut and end in clipMark. Event
// names and conversation ids are far shorter, so a clipped one names no
// event and no conversation.
const maxRejectedField = 256

// clipMark ends a clipped field.
const clipMark = "...(clipped)"

// clip returns s, or, when longer than maxRejectedField bytes, a copy of
// its start (cut at a character's start) followed by clipMark: the copy
// holds none of the body's memory.
func clip(s string) string {
	if len(s) <= maxRejectedField {
		return s
	}
	n := maxRejectedField
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + clipMark
}

// readUnverified reads the type and conversation id of a body that was
// rejected (its signature failed, or it is signed but no event), for its
// rejection, and nothing else: an unsigned body is anyone's, and decoding
// its data whole (as parse does a signed one) would cost many times its
// size, for each of the connections a flood keeps open. A type that is
// not a string reads as absent; a conversation id that is a number reads
// as its JSON text, so that a signed event whose id is this
// conversation's, as a number, is known to be the platform's, sent
// malformed (parse refuses it).
func readUnverified(body []byte) (typ, conversationID string) {
	var u struct {
		Type string `json:"type"`
		Data struct {
			ConversationID      json.RawMessage `json:"conversation_id"`
			ConversationIDCamel json.RawMessage `json:"conversationId"`
		} `json:"data"`
	}
	// A member of another type is skipped and the rest still read
	// (*json.UnmarshalTypeError); a syntax error reads nothing.
	if err := json.Unmarshal(body, &u); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); !ok {
			return "", ""
		}
	}
	if id := idText(u.Data.ConversationID); id != "" {
		return u.Type, id
	}
	return u.Type, idText(u.Data.ConversationIDCamel)
}

// idText reads an id member: a string, or a number as its JSON text; ""
// for another JSON type or none.
func idText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return s
	case c == '-' || c >= '0' && c <= '9':
		return string(raw)
	}
	return ""
}

func parse(body []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return envelope{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if e.Type == "" {
		return e, errors.New(`no "type" member`)
	}
	// A conversation id of another JSON type would read as no
	// conversation: the event would confirm nothing, and the wait would
	// say it never came.
	for _, k := range []string{"conversation_id", "conversationId"} {
		switch v := e.Data[k].(type) {
		case nil, string:
		default:
			return e, fmt.Errorf("data.%s is %s, want a string", k, jsonKindOf(v))
		}
	}
	return e, nil
}

// jsonKindOf names the JSON type of a decoded value.
func jsonKindOf(v any) string {
	switch v.(type) {
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}
