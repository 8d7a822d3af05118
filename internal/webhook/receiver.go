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

	"github.com/agenttest/agenttest/internal/brand"
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
	// Now is the clock of ReceivedAt; default time.Now.
	Now func() time.Time
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
	// ReceivedAt is when the delivery arrived.
	ReceivedAt time.Time `json:"received_at"`
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
	// parses: they say which confirmation the rejection concerns, and must
	// not be trusted for anything else.
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
	seen     map[string]bool
	rejected []Rejection
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

// SignatureHeader is the header the receiver reads the signature from.
func (r *Receiver) SignatureHeader() string { return r.sig }

// ServeHTTP handles one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook deliveries are POSTs", http.StatusMethodNotAllowed)
		return
	}
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
	env, parseErr := parse(body)
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
			reason = "missing " + r.sig + " header"
		}
		r.reject(w, http.StatusUnauthorized, Rejection{Reason: reason, Err: err, Type: env.Type, ConversationID: env.conversationID(), ReceivedAt: now})
		return
	}
	if parseErr != nil {
		r.reject(w, http.StatusBadRequest, Rejection{Reason: "signed body is not an event: " + parseErr.Error(), ReceivedAt: now})
		return
	}
	ev := Event{
		ID: env.ID, Type: env.Type, ConversationID: env.conversationID(),
		Environment: env.str("environment"), Data: env.Data, ReceivedAt: now,
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
	r.events = append(r.events, ev)
	r.broadcast()
	return true
}

func (r *Receiver) reject(w http.ResponseWriter, status int, rej Rejection) {
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
	ev, ok, _ := r.findLocked(conversationID, eventType)
	return ev, ok
}

func (r *Receiver) findLocked(conversationID, eventType string) (Event, bool, chan struct{}) {
	for _, ev := range r.events {
		if ev.Type == eventType && (conversationID == "" || ev.ConversationID == conversationID) {
			return ev, true, nil
		}
	}
	return Event{}, false, r.changed
}

// MissingError says that an expected event did not arrive verified before
// the wait ended. Rejected lists the deliveries of that event and
// conversation that were refused, whose reasons are usually the real cause
// (a wrong secret, a body changed by a proxy).
type MissingError struct {
	Type           string
	ConversationID string
	Rejected       []Rejection
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
	if errors.Is(e.Err, context.Canceled) {
		b.WriteString(" (wait cancelled)")
	}
	switch n := len(e.Rejected); {
	case n == 1:
		b.WriteString(": 1 delivery rejected: " + e.Rejected[0].Reason)
	case n > 1:
		fmt.Fprintf(&b, ": %d deliveries rejected, the last: %s", n, e.Rejected[n-1].Reason)
	}
	return b.String()
}

// Unwrap returns why the wait ended.
func (e *MissingError) Unwrap() error { return e.Err }

// Wait blocks until a verified event of eventType for conversationID ("" for
// any conversation) has arrived, or ctx ends; then it returns a
// *MissingError carrying the rejected deliveries that match. A rejected
// delivery does not end the wait: a valid retry of the same event, or the
// genuine delivery beside a forged one, may still come.
func (r *Receiver) Wait(ctx context.Context, conversationID, eventType string) (Event, error) {
	for {
		r.mu.Lock()
		ev, ok, changed := r.findLocked(conversationID, eventType)
		r.mu.Unlock()
		if ok {
			return ev, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if ev, ok := r.Find(conversationID, eventType); ok {
				return ev, nil
			}
			return Event{}, &MissingError{Type: eventType, ConversationID: conversationID, Rejected: r.rejectionsFor(conversationID, eventType), Err: ctx.Err()}
		}
	}
}

// rejectionsFor returns the rejections whose unverified body named the
// event and conversation; one that could not be parsed matches too, since
// it may have been that event.
func (r *Receiver) rejectionsFor(conversationID, eventType string) []Rejection {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Rejection
	for _, rej := range r.rejected {
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
// of implementations that send one.
type envelope struct {
	ID   string         `json:"id"`
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
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

func parse(body []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(body, &e); err != nil {
		return envelope{}, fmt.Errorf("invalid JSON: %v", err)
	}
	if e.Type == "" {
		return e, errors.New(`no "type" member`)
	}
	return e, nil
}
