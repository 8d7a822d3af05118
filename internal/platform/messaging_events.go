package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/secret"
)

// This file holds what the client accepts in Messaging events: the payload
// members the reference leaves open ("not shown"), in one place, and the
// meaning of each event type of the one list of types agenttest knows
// (internal/reply, eventtypes.go), which lint reads too. The simulator's
// choices (docs/simulator.md) come first in each list; the others are the
// plausible forms of other implementations.

// MessagingEventKind is what an event means to a conversation.
type MessagingEventKind int

// The kinds of events. Unknown types are EventOther: kept, shown, never
// interpreted.
const (
	EventOther MessagingEventKind = iota
	// EventBatch is the history batch; its events are returned instead.
	EventBatch
	// EventEcho is a client event as the platform logged it.
	EventEcho
	EventJoined
	EventAgentMessage
	EventAgentChunk
	// EventAgentMessageEnd ends a streamed message.
	EventAgentMessageEnd
	EventTypingStart
	EventTypingStop
	EventSystem
	EventSessionEnd
	EventHandoff
	EventLiveAgentJoined
	EventLiveAgentMessage
)

var kindNames = [...]string{"other", "batch", "echo", "joined", "agent_message", "agent_chunk", "agent_message_end",
	"typing_start", "typing_stop", "system", "session_end", "handoff", "live_agent_joined", "live_agent_message"}

func (k MessagingEventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Accepted payload members.
var (
	// membersText name a message's text; all but the last, delta, name
	// the whole of it, where delta names a piece (a chunk's, or a stream
	// end's last: finalPiece).
	membersText      = []string{"text", "message", "content", "delta"}
	membersWholeText = membersText[:len(membersText)-1]
	membersMessageID = []string{"message_id", "messageId", "id"}
	membersFinal     = []string{"final", "is_final", "isFinal", "last", "is_last", "done", "complete"}
	// membersDelayed flag a holding message (the simulator's delayed).
	// The reference shows no such flag: the transcript shows it, and no
	// check reads it (assert.NotOverMessaging).
	membersDelayed = []string{"delayed", "is_delayed", "isDelayed"}
	// membersTyping say whether the agent is typing, as a flag or a
	// word (typingOn); the first of them present decides.
	membersTyping       = []string{"typing", "is_typing", "isTyping", "active", "state", "status"}
	membersLevel        = []string{"level", "severity"}
	membersSystemText   = []string{"message", "text", "content"}
	membersBatch        = []string{"events", "items", "history"}
	membersName         = []string{"name", "agent_name", "agentName"}
	membersDest         = []string{"destination", "handoff_destination", "queue"}
	membersConversation = []string{"conversation_id", "conversationId", "conversation"}
	membersEndReason    = []string{"reason", "end_reason", "cause"}
	// membersAgent and membersEnv name the agent (project) and the
	// environment a joined event says joined. The reference shows no
	// member of the joined event; these are its plausible names, in the
	// Conversations API's words (project_id, environment) and the
	// simulator's (agent_id). They are all a client sees of where the
	// connector token opened the conversation.
	membersAgent = []string{"agent_id", "agentId", "project_id", "projectId"}
	membersEnv   = []string{"environment", "env", "client_env", "clientEnv"}
)

// eventForms maps the type names of one brand to their kinds.
type eventForms struct {
	join   string
	byType map[string]MessagingEventKind
	typing map[string]bool // types whose payload says start or stop
}

func newEventForms(b string) eventForms {
	w := brand.EventWord(b)
	f := eventForms{
		join:   reply.BrandEventType(reply.EventTypeJoinRequest, w),
		byType: map[string]MessagingEventKind{},
		typing: map[string]bool{},
	}
	put := func(names []string, k MessagingEventKind) {
		for _, n := range names {
			f.byType[reply.BrandEventType(n, w)] = k
		}
	}
	put(reply.EventTypesBatch, EventBatch)
	put(reply.EventTypesJoined, EventJoined)
	put(reply.EventTypesMessage, EventAgentMessage)
	put(reply.EventTypesChunk, EventAgentChunk)
	put(reply.EventTypesStreamEnd, EventAgentMessageEnd)
	put(reply.EventTypesTypingStart, EventTypingStart)
	put(reply.EventTypesTypingStop, EventTypingStop)
	put(reply.EventTypesSystem, EventSystem)
	put(reply.EventTypesSessionEnd, EventSessionEnd)
	put(reply.EventTypesHandoff, EventHandoff)
	put(reply.EventTypesLiveJoined, EventLiveAgentJoined)
	put(reply.EventTypesLiveMessage, EventLiveAgentMessage)
	// The user's typing is the client event the client never sends: it
	// is recognised in echoes only.
	put([]string{reply.EventTypeUserTyping}, EventEcho)
	for _, n := range reply.EventTypesTyping {
		f.typing[reply.BrandEventType(n, w)] = true
	}
	return f
}

// kind is the meaning of an event type; the client's own event names
// (echoes) come first, since a session may rename them.
func (f *eventForms) kind(typ string, client *MessagingClientEvents) MessagingEventKind {
	switch typ {
	case client.Join, client.UserMessage, client.RequestLiveAgent, client.EndSession:
		return EventEcho
	}
	return f.byType[typ]
}

// classify sets the kind of an event and the members read from its
// payload (decoded once, here). A message whose text cannot be read (a
// payload that is not an object, a text member of another JSON type) is
// the platform's error: read as an empty reply, it would fail the case on
// the agent.
func (f *eventForms) classify(e *MessagingEvent, client *MessagingClientEvents) error {
	e.Kind = f.kind(e.Type, client)
	p := payloadObject(e.Payload)
	if f.typing[e.Type] {
		on, err := typingOn(p)
		if err != nil {
			return fmt.Errorf("%s: %w", typeText(e.Type), err)
		}
		e.Kind = EventTypingStop
		if on {
			e.Kind = EventTypingStart
		}
	}
	switch e.Kind {
	case EventAgentMessage, EventAgentChunk, EventAgentMessageEnd, EventLiveAgentMessage, EventEcho:
		e.Text = p.str(membersText...)
		e.delta = e.Text != "" && p.str(membersWholeText...) == ""
		e.MessageID = p.str(membersMessageID...)
		e.Final, _ = p.boolean(membersFinal...)
		e.Delayed, _ = p.boolean(membersDelayed...)
		e.Name = p.str(membersName...)
	case EventSystem:
		e.Level = p.str(membersLevel...)
		e.Text = p.str(membersSystemText...)
	case EventHandoff, EventLiveAgentJoined:
		e.Name = p.str(membersName...)
		e.Destination = p.str(membersDest...)
		e.Reason = p.str("reason")
	case EventSessionEnd:
		e.Reason = p.str(membersEndReason...)
	case EventJoined:
		// The reference's ids and environments are strings: a number
		// names the agent in no form a scenario writes, and is no
		// evidence of where the conversation runs.
		e.Agent, e.Env = p.quoted(membersAgent...), p.quoted(membersEnv...)
	}
	if err := e.readConversation("payload", p); err != nil {
		return err
	}
	switch e.Kind {
	case EventAgentMessage, EventAgentChunk, EventLiveAgentMessage:
		return unreadableText(e, p)
	}
	return nil
}

// readConversation takes the conversation id that the members of where
// (the event itself, its payload or its metadata) name, into
// e.ConversationID. The reference shows conversation ids as strings and
// shows none in Messaging events; an event may name its conversation in
// conversation_id or conversationId, or as conversation (a string, or an
// object with an "id" string). An id member of another JSON type is the
// platform's error, never an empty or made-up id: read as "", the record
// of the conversation could not be confirmed, and a number read as text
// names a record the platform never gave. A conversation member of
// another shape may be something else than an id, and is left alone.
// Members that name two conversations in one event are the platform's
// error too.
func (e *MessagingEvent) readConversation(where string, p payloadMembers) error {
	for _, n := range membersConversation {
		v := bytes.TrimSpace(p[n])
		id := ""
		switch {
		case len(v) == 0, string(v) == "null":
			continue
		case v[0] == '"':
			id = scalarText(v)
		case n == "conversation":
			// An object with an id, or something else than an id.
			if iv := bytes.TrimSpace(payloadObject(v)["id"]); len(iv) > 0 && iv[0] == '"' {
				id = scalarText(iv)
			}
		default:
			return fmt.Errorf("%s: %s.%s is %s, want a string", typeText(e.Type), where, n, aJSONKind(v))
		}
		switch {
		case id == "":
		case e.ConversationID == "":
			e.ConversationID = id
		case e.ConversationID != id:
			return fmt.Errorf("%s names two conversations, %s and %s", typeText(e.Type), clipID(e.ConversationID), clipID(id))
		}
	}
	return nil
}

// typeText is an event type for a message: as it is when it is a name
// (EVENT_TYPE_...), else quoted and cut like an id, since the platform
// chose it and it reaches terminals and reports.
func typeText(t string) string {
	if len(t) > 0 && len(t) <= 64 && strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == "" {
		return t
	}
	return clipID(t)
}

// print is what an event says, for telling a replay of it (the same
// print) from another event under its id.
func (e *MessagingEvent) print() uint64 {
	h := fnv.New64a()
	for _, s := range []string{e.Type, e.Text, e.MessageID, e.Level, e.Reason, e.ConversationID, strconv.FormatBool(e.Final)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// clipID quotes an id the platform sent for a message, cut to a length
// a line can hold.
func clipID(id string) string {
	const max = 64
	if len(id) > max {
		return strconv.Quote(id[:max]) + "..."
	}
	return strconv.Quote(id)
}

// unreadableText says why a message's text cannot be read, or nil: its
// payload is missing, null or not an object (the reference gives every
// event a payload object), or it has no text but a text member of a type
// no reading takes (a null member is absent, a number is read as text).
func unreadableText(e *MessagingEvent, p payloadMembers) error {
	switch pl := bytes.TrimSpace(e.Payload); {
	case len(pl) == 0:
		return fmt.Errorf("%s: no payload, want an object", e.Type)
	case string(pl) == "null":
		return fmt.Errorf("%s: payload is null, want an object", e.Type)
	case pl[0] != '{':
		return fmt.Errorf("%s: payload is %s, want an object", e.Type, aJSONKind(pl))
	}
	if e.Text != "" {
		return nil
	}
	for _, n := range membersText {
		switch v := bytes.TrimSpace(p[n]); {
		case len(v) == 0, v[0] == '"', string(v) == "null":
		case v[0] == '{', v[0] == '[', v[0] == 't', v[0] == 'f':
			return fmt.Errorf("%s: payload.%s is %s, want a string", e.Type, n, aJSONKind(v))
		}
	}
	return nil
}

// aJSONKind is jsonKind with its article: "an object", "a string".
func aJSONKind(b []byte) string {
	k := jsonKind(b)
	if k == "object" || k == "array" {
		return "an " + k
	}
	return "a " + k
}

// MessagingEvent is one received event, redacted.
type MessagingEvent struct {
	// ID is the event's id ("" when the platform sent none); replays are
	// de-duplicated by it.
	ID string
	// Seq is the position in the event log (from seq, else a numeric
	// id), or 0.
	Seq int64
	// logged says Seq came from a seq member: a position in the log
	// for certain, where a numeric id may be only a name.
	logged bool
	// Type is the event type as sent, e.g. EVENT_TYPE_VENDOR_AGENT_JOINED.
	Type string
	// Timestamp is as sent; Time is it parsed (ISO 8601 or Unix time,
	// as parseTime reads them; the reference shows no format), or zero.
	Timestamp string
	Time      time.Time
	// Payload is the payload as sent.
	Payload json.RawMessage
	// Custom is metadata.custom: what the client sent, echoed.
	Custom map[string]any
	// Replayed is true for events that came in a history batch.
	Replayed bool
	// Raw is the whole event as received.
	Raw json.RawMessage

	// Kind and the members below are the client's reading of the event.
	Kind MessagingEventKind
	// Text of a message, chunk or system message.
	Text string
	// MessageID of a message or chunk; Final marks a stream's last chunk;
	// Delayed a holding message (the real reply follows the next user
	// message, as in debug chat).
	MessageID string
	Final     bool
	Delayed   bool
	// Level of a system message, as sent.
	Level string
	// Name of a live agent.
	Name string
	// ConversationID is the conversation the event names (a joined
	// event's, or any event's that carries one); Reason of a session end
	// or a handoff; Destination of a handoff.
	ConversationID, Reason, Destination string
	// Agent and Env are the agent (project) and environment a joined
	// event names, as sent, or "".
	Agent, Env string
	// delta says Text came from the delta member: a piece of the text
	// (finalPiece), not the whole of it.
	delta bool
}

// IsError reports whether a system message is at error level.
func (e MessagingEvent) IsError() bool {
	return e.Kind == EventSystem && strings.Contains(strings.ToUpper(e.Level), "ERROR")
}

// decodeEvent reads one event; data is redacted already.
func decodeEvent(data []byte) (MessagingEvent, error) {
	var w struct {
		ID        json.RawMessage `json:"id"`
		Seq       json.RawMessage `json:"seq"`
		Type      *string         `json:"type"`
		Timestamp json.RawMessage `json:"timestamp"`
		Payload   json.RawMessage `json:"payload"`
		Metadata  json.RawMessage `json:"metadata"`
		// The event's own conversation members (membersConversation).
		ConversationID    json.RawMessage `json:"conversation_id"`
		ConversationCamel json.RawMessage `json:"conversationId"`
		Conversation      json.RawMessage `json:"conversation"`
	}
	var e MessagingEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return e, describeDecodeError(err)
	}
	if w.Type == nil || *w.Type == "" {
		return e, errors.New(`event without a "type"`)
	}
	e.Type = *w.Type
	e.ID = scalarText(w.ID)
	if n, err := strconv.ParseInt(e.ID, 10, 64); err == nil && n > 0 {
		e.Seq = n
	}
	if n, err := strconv.ParseInt(scalarText(w.Seq), 10, 64); err == nil && n > 0 {
		e.Seq, e.logged = n, true
	}
	e.Timestamp = scalarText(w.Timestamp)
	if e.Timestamp != "" {
		e.Time, _ = parseTime(e.Timestamp)
	}
	e.Payload = w.Payload
	if err := e.readConversation("event", payloadMembers{"conversation_id": w.ConversationID,
		"conversationId": w.ConversationCamel, "conversation": w.Conversation}); err != nil {
		return e, err
	}
	if len(w.Metadata) > 0 && w.Metadata[0] == '{' {
		var md struct {
			Custom map[string]any `json:"custom"`
		}
		// A custom member that is not an object is the platform's
		// business; it is kept in Raw.
		_ = json.Unmarshal(w.Metadata, &md)
		e.Custom = md.Custom
		// The conversation members of metadata; those of custom are
		// the client's own, echoed.
		if err := e.readConversation("metadata", payloadObject(w.Metadata)); err != nil {
			return e, err
		}
	}
	e.Raw = data // the caller's own copy
	return e, nil
}

// batchEvents lists the events of a history batch: payload.events (or an
// alternative member), or a payload that is the list itself.
func batchEvents(payload json.RawMessage) ([]json.RawMessage, error) {
	var list []json.RawMessage
	p := bytes.TrimSpace(payload)
	switch {
	case len(p) == 0 || string(p) == "null":
		return nil, nil
	case p[0] == '[':
		if err := json.Unmarshal(p, &list); err != nil {
			return nil, fmt.Errorf("history batch: %w", describeDecodeError(err))
		}
		return list, nil
	case p[0] == '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(p, &obj); err != nil {
			return nil, fmt.Errorf("history batch: %w", describeDecodeError(err))
		}
		for _, k := range membersBatch {
			if v, ok := obj[k]; ok && string(v) != "null" {
				if err := json.Unmarshal(v, &list); err != nil {
					return nil, fmt.Errorf("history batch member %q: %w", k, describeDecodeError(err))
				}
				return list, nil
			}
		}
		return nil, nil
	}
	return nil, fmt.Errorf("history batch payload is %s, not an object or a list", jsonKind(p))
}

// scalarText renders a JSON string or number as text; anything else is "".
func scalarText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(v)
	}
	return ""
}

// payloadMembers is a decoded payload object.
type payloadMembers map[string]json.RawMessage

func payloadObject(p json.RawMessage) payloadMembers {
	var m payloadMembers
	if len(p) > 0 && p[0] == '{' {
		_ = json.Unmarshal(p, &m)
	}
	return m
}

// str returns the first of the members that is a string (or number).
func (p payloadMembers) str(names ...string) string {
	for _, n := range names {
		if s := scalarText(p[n]); s != "" {
			return s
		}
	}
	return ""
}

// quoted returns the first of the members that is a non-empty JSON
// string.
func (p payloadMembers) quoted(names ...string) string {
	for _, n := range names {
		if v := bytes.TrimSpace(p[n]); len(v) > 0 && v[0] == '"' {
			if s := scalarText(v); s != "" {
				return s
			}
		}
	}
	return ""
}

// The words a typing indicator's member may say it with (typingOn),
// besides true and false: the reference shows no payload of the event.
var (
	typingOnWords  = []string{"true", "1", "on", "start", "started", "starting", "typing", "active", "composing"}
	typingOffWords = []string{"false", "0", "off", "stop", "stopped", "end", "ended", "idle", "inactive", "paused", "done", ""}
)

// typingOn reads whether a typing indicator event (of a type that says
// neither in its name) says the agent is typing: by the first of
// membersTyping it holds, a flag (true, "true", 1) or a word ("start",
// "on", "typing"). One that holds none of them says the indicator is
// off, as it did before the members were read. One whose member says
// neither is the platform's error: read as off, a typing indicator that
// came on between two messages of one answer completed it at the first,
// and the agent failed on half its answer; read as on, an answer
// would wait out its turn timeout.
func typingOn(p payloadMembers) (bool, error) {
	for _, n := range membersTyping {
		v := bytes.TrimSpace(p[n])
		if len(v) == 0 || string(v) == "null" {
			continue
		}
		text := string(v)
		if v[0] == '"' {
			text = scalarText(v)
		}
		// A bare value (true, 1) is a JSON token, lower case already.
		switch word := strings.ToLower(strings.TrimSpace(text)); {
		case slices.Contains(typingOnWords, word):
			return true, nil
		case slices.Contains(typingOffWords, word):
			return false, nil
		}
		return false, fmt.Errorf("payload.%s is %s, which says neither that the agent is typing nor that it stopped", n, clipID(text))
	}
	return false, nil
}

// boolean returns the first of the members that is a boolean.
func (p payloadMembers) boolean(names ...string) (bool, bool) {
	for _, n := range names {
		switch string(bytes.TrimSpace(p[n])) {
		case "true", `"true"`:
			return true, true
		case "false", `"false"`:
			return false, true
		}
	}
	return false, false
}

// MessagingTurn is one client event and its answer.
type MessagingTurn struct {
	// Request is the client event sent, redacted; nil for none.
	Request json.RawMessage
	// Events are the events received during the turn (replayed ones
	// included, duplicates left out), in order; events that arrived
	// between turns open the next one.
	Events []MessagingEvent
	// Reply is the text of the turn's complete agent and live-agent
	// messages, joined with spaces: what debug chat calls the response.
	// It is joined when the session hands the turn out (a Send, Opening,
	// AwaitEnd returns it), and by Exchange.
	Reply string
	// Messages are those messages one by one, incomplete streams
	// included.
	Messages []MessagingReply
	// System are the system messages; the harness decides what an error
	// level means.
	System []SystemMessage
	// Joined says the agent's joined event arrived in this turn.
	Joined bool
	// SessionEnded says a session end event arrived, with its reason.
	SessionEnded bool
	EndReason    string
	// Handoff is set when handoff events arrived.
	Handoff *MessagingHandoff
	// Started is when the client event was sent; Latency how long until
	// the answer was complete (the settle wait excluded).
	Started time.Time
	Latency time.Duration
	// CompletedBy says what completed the answer: "typing",
	// "session_end", "settle" or "quiet" (MessagingStart.Quiet after
	// the typing indicator went off).
	CompletedBy string
	// Reconnects in this turn, Resent client events, and Duplicates
	// (replayed events already seen, dropped).
	Reconnects, Resent, Duplicates int
	// Flooded counts the events of a turn the platform flooded that
	// were let go past the first floodKept (shed).
	Flooded int

	// received and frames count what arrived in the turn, duplicates
	// included, against maxMessagingTurnBytes and maxMessagingTurnFrames.
	received int64
	frames   int

	// byID is the index in Messages of the last message with each id,
	// and open the indexes of the streams opened, in order (those
	// complete since are dropped when they reach the top): stream finds
	// a message in constant time, where a scan of Messages at each event
	// made a turn of n messages (a history batch of a long session, or
	// a hostile one) cost time in n squared.
	byID map[string]int
	open []int
	// replyStale says Reply lags Messages: it is joined once when the
	// turn is handed out (finishReply), not at each message.
	replyStale bool
	// brand is the brand word of the client's event names (Config.Brand),
	// for the events check of Exchange.
	brand string
}

// MessagingReply is one agent or live-agent message.
type MessagingReply struct {
	// From is "agent" or "live_agent"; Name the live agent's.
	From, Name string
	ID         string
	Text       string
	// Streamed says it came in chunks; Complete that it is whole (a
	// stream cut off is not).
	Streamed, Complete bool
	// Delayed marks a holding message.
	Delayed bool

	// events are the indexes in MessagingTurn.Events of the message's
	// events, masked together when the stream spells a key or the
	// message and the next in the reply do (maskAcross); the first
	// masked of them are masked already.
	events []int
	masked int
	// spread holds Text as maskSpread last left it: it appends each
	// chunk there (nil before a stream's first event).
	spread *secret.Stream
	// lastChunk is the text of the stream's last chunk that had one, as
	// it arrived: a stream end may repeat it (contradictedBy).
	lastChunk string
}

// SystemMessage is an EVENT_TYPE_SYSTEM_MESSAGE.
type SystemMessage struct {
	Level string
	Text  string
}

// IsError reports whether the level is an error level.
func (s SystemMessage) IsError() bool { return strings.Contains(strings.ToUpper(s.Level), "ERROR") }

// MessagingHandoff is what the handoff events of a turn said.
type MessagingHandoff struct {
	Destination, Reason string
	// LiveAgent is the name of the live agent who joined, if one did.
	LiveAgent string
	Joined    bool
}

// Errors returns the error-level system messages.
func (t *MessagingTurn) Errors() []SystemMessage {
	var out []SystemMessage
	for _, s := range t.System {
		if s.IsError() {
			out = append(out, s)
		}
	}
	return out
}

// Types lists the event types of the turn, in order.
func (t *MessagingTurn) Types() []string {
	out := make([]string, len(t.Events))
	for i, e := range t.Events {
		out[i] = e.Type
	}
	return out
}

// addMessage folds a message event into the turn. It returns the index in
// t.Messages of the message the event went into, and whether that message
// became complete. A chunk of a message that is complete already (a
// stream sent out of order: its final chunk first) is the platform's
// error: read as a new message, the reply would be the stream's tail. So
// is a whole message or a stream end whose text contradicts what its
// chunks added up to (contradictedBy, streamMismatch).
func (t *MessagingTurn) addMessage(e MessagingEvent) (at int, completed bool, err error) {
	from := "agent"
	if e.Kind == EventLiveAgentMessage {
		from = "live_agent"
	}
	switch e.Kind {
	case EventAgentMessage, EventLiveAgentMessage:
		if i := t.stream(e.MessageID); i >= 0 && e.MessageID != "" {
			// A whole message after its chunks: the platform's final
			// word on the message, once it says what they said. One
			// without text only completes the stream, as an end event
			// does, and takes no words from a message sent whole before.
			r := &t.Messages[i]
			switch {
			case blank(e.Text):
			case r.contradictedBy(e, false):
				return i, false, streamMismatch(e, r.Text)
			default:
				r.Text = e.Text
			}
			wasComplete := r.Complete
			r.Complete, r.Delayed = true, e.Delayed
			t.joinReply()
			return i, !wasComplete, nil
		}
		at = t.appendMessage(MessagingReply{From: from, Name: e.Name, ID: e.MessageID, Text: e.Text, Complete: true, Delayed: e.Delayed})
	case EventAgentChunk:
		at = t.stream(e.MessageID)
		switch {
		case at >= 0 && t.Messages[at].Complete && e.MessageID != "":
			return at, false, fmt.Errorf("%s: a chunk of message %s after the message was complete: the platform sent the stream out of order", e.Type, clipID(e.MessageID))
		case at < 0 || t.Messages[at].Complete:
			at = t.appendMessage(MessagingReply{From: from, ID: e.MessageID, Streamed: true})
		}
		// The chunk's text is the session's to append, to the stream
		// that keeps the message's text redacted as it grows
		// (MessagingSession.maskSpread); appended here too, the text
		// would be copied whole at every chunk. Until then the reply
		// joined below lacks it.
		r := &t.Messages[at]
		if e.Text != "" {
			r.lastChunk = e.Text
		}
		if !e.Final {
			return at, false, nil
		}
		r.Complete, r.Delayed = true, e.Delayed
	case EventAgentMessageEnd:
		// A stream end's text stands in for chunks without any, and is
		// held to theirs otherwise; the reply stays what they said.
		at = t.stream(e.MessageID)
		if n := len(t.Messages); at < 0 && e.MessageID == "" && n > 0 && t.Messages[n-1].Streamed {
			// One that names no message when none is open ends the
			// stream its final chunk completed: read as a message of
			// its own, its text would say the reply twice.
			at = n - 1
		}
		switch {
		case at < 0:
			at = t.appendMessage(MessagingReply{From: from, ID: e.MessageID, Streamed: true, Text: e.Text})
		case t.Messages[at].contradictedBy(e, false):
			return at, false, streamMismatch(e, t.Messages[at].Text)
		case t.Messages[at].Text == "":
			t.Messages[at].Text = e.Text
		}
		if t.Messages[at].Complete {
			return at, false, nil
		}
		t.Messages[at].Complete = true
	}
	t.joinReply()
	return at, true, nil
}

// finalPiece reads a stream end whose text is a delta as the last chunk
// of its stream, when the stream is open and the delta repeats neither
// the last chunk's words nor the whole of the chunks': the piece the
// stream ends on. The reference shows no member of an end event; a
// platform may put there the whole text (text, message, content), the
// last piece it streamed again, or a last piece not streamed before
// (delta), which read as the whole text would contradict the chunks, and
// dropped would cut the reply short. A delta that says what the chunks
// said is the whole text again, as it is after a final chunk
// (contradictedBy): appended, it would say the reply twice.
func (t *MessagingTurn) finalPiece(e MessagingEvent) MessagingEvent {
	if e.Kind != EventAgentMessageEnd || !e.delta {
		return e
	}
	at := t.stream(e.MessageID)
	if at < 0 {
		return e
	}
	if r := &t.Messages[at]; r.Complete || sameWords(r.lastChunk, e.Text) || r.Text != "" && sameWords(r.Text, e.Text) {
		return e
	}
	e.Kind, e.Final = EventAgentChunk, true
	return e
}

// contradictedBy reports whether e, the platform's last word on the
// streamed message r (a whole message sent after its chunks, or a stream
// end), says other words than the chunks added up to. The same words,
// whatever the whitespace (sameWords), agree; so do an event without
// text, and chunks without any (the event's text stands in for theirs).
// A stream end may also repeat the words of the last chunk that had
// text: the reference shows no member of an end event, and a platform
// may put there the whole text or the last piece it streamed. cutOff is
// a stream that ended without its final chunk in an earlier turn: its
// chunks agree with a text they begin (beginsWords). A message that was
// not streamed is held to nothing here.
func (r *MessagingReply) contradictedBy(e MessagingEvent, cutOff bool) bool {
	switch {
	case !r.Streamed, blank(e.Text), r.Text == "":
		return false
	case e.Kind == EventAgentMessageEnd && sameWords(r.lastChunk, e.Text):
		return false
	case e.Kind == EventAgentMessageEnd && e.delta && cutOff:
		// The piece the stream was cut off before (finalPiece), come
		// after its turn.
		return false
	case cutOff:
		return !beginsWords(e.Text, r.Text)
	}
	return !sameWords(r.Text, e.Text)
}

// blank reports whether a message's text says no words: like no text,
// it only completes a stream (a platform may end one with a newline).
func blank(s string) bool { return strings.TrimSpace(s) == "" }

// sameWords reports whether two texts of one message say the same words
// in the same order, whatever the whitespace between and around them: a
// platform may trim the message it sends whole, or space its chunks
// otherwise, and the checks read the words.
func sameWords(a, b string) bool {
	return slices.Equal(strings.Fields(a), strings.Fields(b))
}

// beginsWords reports whether text begins with the words of part, the
// last of which may be cut short: the chunks of a stream cut off begin
// its whole message, and may end in the middle of a word.
func beginsWords(text, part string) bool {
	w, p := strings.Fields(text), strings.Fields(part)
	if len(p) == 0 {
		return true
	}
	if len(p) > len(w) || !slices.Equal(w[:len(p)-1], p[:len(p)-1]) {
		return false
	}
	last := p[len(p)-1]
	if strings.HasSuffix(part, last) {
		// The chunks end in the last word, which may go on.
		return strings.HasPrefix(w[len(p)-1], last)
	}
	return w[len(p)-1] == last
}

// streamMismatch is the error of e, a message sent whole after its
// chunks or a stream end, whose text says other words than the chunks
// added up to (contradictedBy). The chunks are what the user's chat
// showed as they came, and e what the platform says the agent sent:
// which one is the agent's answer, the client cannot tell, and a check
// read on either would pass or fail the agent on the platform's
// inconsistency. The error shows both around where they first differ.
func streamMismatch(e MessagingEvent, chunks string) error {
	whole := e.Text
	i := 0
	for i < len(chunks) && i < len(whole) && chunks[i] == whole[i] {
		i++
	}
	for i > 0 && (i < len(chunks) && !utf8.RuneStart(chunks[i]) || i < len(whole) && !utf8.RuneStart(whole[i])) {
		i--
	}
	if e.Kind == EventAgentMessageEnd {
		of := ""
		if e.MessageID != "" {
			of = " of message " + clipID(e.MessageID)
		}
		return fmt.Errorf("%s: stream end%s says %s where its chunks said %s (from byte %d): the platform streamed one text and ended the stream with another",
			typeText(e.Type), of, around(whole, i), around(chunks, i), i)
	}
	return fmt.Errorf("%s: message %s sent whole says %s where its chunks said %s (from byte %d): the platform streamed one text and sent another as the whole message",
		typeText(e.Type), clipID(e.MessageID), around(whole, i), around(chunks, i), i)
}

// around quotes s about byte i (a rune's start): a few words before it
// and more after, with "..." where s goes on.
func around(s string, i int) string {
	const before, after = 24, 48
	from, to := max(0, i-before), min(len(s), i+after)
	for from > 0 && !utf8.RuneStart(s[from]) {
		from--
	}
	for to < len(s) && !utf8.RuneStart(s[to]) {
		to++
	}
	q := strconv.Quote(s[from:to])
	if from > 0 {
		q = "..." + q
	}
	if to < len(s) {
		q += "..."
	}
	return q
}

// stream finds the index of the message with id, or of the last open
// stream when id is empty; -1 when there is none.
func (t *MessagingTurn) stream(id string) int {
	if id != "" {
		if i, ok := t.byID[id]; ok {
			return i
		}
		return -1
	}
	// A message is complete for good once it is: the streams completed
	// since they opened leave the top as they reach it.
	for n := len(t.open); n > 0; n = len(t.open) {
		if i := t.open[n-1]; !t.Messages[i].Complete {
			return i
		}
		t.open = t.open[:n-1]
	}
	return -1
}

// appendMessage adds r to Messages, and to the indexes stream reads; it
// returns r's index.
func (t *MessagingTurn) appendMessage(r MessagingReply) int {
	at := len(t.Messages)
	t.Messages = append(t.Messages, r)
	if r.ID != "" {
		if t.byID == nil {
			t.byID = map[string]int{}
		}
		t.byID[r.ID] = at
	}
	if r.Streamed && !r.Complete {
		t.open = append(t.open, at)
	}
	return at
}

// joinReply notes that Reply no longer says what the complete messages
// say; finishReply joins it once the turn is handed out. Joined at each
// message, a turn of n messages would copy its reply n times.
func (t *MessagingTurn) joinReply() { t.replyStale = true }

// shed keeps the first floodKept events of a flooded turn, and the
// messages they can have begun (each began at an event of a message's
// kind), in arrays of their own so the rest can be freed; Flooded counts
// the events let go. The turn is over: the session errors with the
// flood, so no later event needs the indexes kept for a stream's
// masking.
func (t *MessagingTurn) shed() {
	if len(t.Events) <= floodKept {
		return
	}
	t.Flooded = len(t.Events) - floodKept
	t.Events = slices.Clone(t.Events[:floodKept])
	began := 0
	for _, e := range t.Events {
		switch e.Kind {
		case EventAgentMessage, EventAgentChunk, EventAgentMessageEnd, EventLiveAgentMessage:
			began++
		}
	}
	if began < len(t.Messages) {
		t.Messages = slices.Clone(t.Messages[:began])
		t.byID, t.open = nil, nil
		t.joinReply()
	}
}

// finishReply joins Reply from the complete messages, when a message
// changed since it was last joined.
func (t *MessagingTurn) finishReply() {
	if t == nil || !t.replyStale {
		return
	}
	t.replyStale = false
	var parts []string
	for _, r := range t.Messages {
		if r.Complete && r.Text != "" {
			parts = append(parts, r.Text)
		}
	}
	t.Reply = strings.Join(parts, " ")
}

func (t *MessagingTurn) noteHandoff(e MessagingEvent) {
	if t.Handoff == nil {
		t.Handoff = &MessagingHandoff{}
	}
	h := t.Handoff
	if e.Destination != "" {
		h.Destination = e.Destination
	}
	if e.Kind == EventHandoff {
		h.Reason = e.Reason
	} else {
		h.Joined, h.LiveAgent = true, e.Name
	}
}
