package reply

import "strings"

// Names the reference gives for the Messaging API ("Messaging API",
// "Messaging system messages"). VENDOR in an event type stands for the
// platform's brand word, so type names with it are matched by shape
// (IsAgentJoined) rather than spelled here.
const (
	// EventTypeBatch is the history batch a socket receives first.
	EventTypeBatch = "EVENT_TYPE_EVENT_BATCH"
	// EventTypeSystemMessage carries platform messages; errors are at
	// SystemLevelError.
	EventTypeSystemMessage = "EVENT_TYPE_SYSTEM_MESSAGE"
	// SystemLevelError is the level of an error system message.
	SystemLevelError = "SYSTEM_MESSAGE_LEVEL_ERROR"
	// EventTypePrefix starts every event type the reference names.
	EventTypePrefix = "EVENT_TYPE_"
	// ClientIDKey is the metadata.custom member with which agenttest tags
	// each client event, so that its echo can be recognised after a
	// reconnect: the client's, not the scenario's metadata.
	ClientIDKey = "agenttest_id"
)

// IsAgentJoined reports whether an event type is the agent's joined event
// (EVENT_TYPE_<BRAND>_AGENT_JOINED, or the brandless
// EVENT_TYPE_AGENT_JOINED), as opposed to a live agent's.
func IsAgentJoined(typ string) bool {
	if !strings.HasPrefix(typ, EventTypePrefix) || !strings.HasSuffix(typ, "AGENT_JOINED") {
		return false
	}
	return !strings.Contains(typ, "LIVE_AGENT") && !strings.Contains(typ, "HUMAN_AGENT")
}

// Messaging is what one turn of a Messaging conversation received besides
// the reply text (which is TurnResult.Response): the events, as the client
// read them, and what they said about the session. The runner keeps one
// per turn of a conversation over `via: messaging`; the checks of
// `events`, `system_message`, `session_ended` and `handoff` read it.
type Messaging struct {
	// SessionID is the platform's session id (not a secret).
	SessionID string `json:"session_id,omitempty"`
	// Events are the events received during the turn, in arrival order,
	// replayed ones included and duplicates (by id) left out. Events that
	// arrived between two turns belong to the later one; the joined event
	// and the greeting belong to the opening (the greeting).
	Events []Event `json:"events"`
	// System are the turn's EVENT_TYPE_SYSTEM_MESSAGE events.
	System []SystemMessage `json:"system,omitempty"`
	// SessionEnded says a session end event arrived in the turn, and
	// EndReason why (as sent, e.g. agent_ended, expired).
	SessionEnded bool   `json:"session_ended,omitempty"`
	EndReason    string `json:"end_reason,omitempty"`
	// Joined says the agent has joined the conversation, in this turn or
	// before (the joined event, or its replay).
	Joined bool `json:"joined,omitempty"`
	// JoinedAgent and JoinedEnv are the agent (project) and environment
	// the joined event names, as sent, or "": where the platform opened
	// the conversation. The runner holds them to the scenario's; the
	// reports do not show them.
	JoinedAgent string `json:"-"`
	JoinedEnv   string `json:"-"`
	// Handoff is set when handoff events arrived in the turn.
	Handoff *MessagingHandoff `json:"handoff,omitempty"`
	// CompletedBy says how the client knew the answer was complete:
	// "typing" (the typing indicator went off), "session_end",
	// "settle" (quiet after the answer, on platforms without typing
	// indicators) or "quiet" (the target's messaging_quiet passed after
	// the typing indicator went off).
	CompletedBy string `json:"completed_by,omitempty"`
	// Reconnects counts the sockets reopened during the turn, Resent the
	// client events sent again after one, Duplicates the replayed events
	// dropped because they had been seen.
	Reconnects int `json:"reconnects,omitempty"`
	Resent     int `json:"resent,omitempty"`
	Duplicates int `json:"duplicates,omitempty"`
	// Flooded counts the events of a turn the platform flooded (past
	// the bounds of a turn, an error) that were not kept: Events holds
	// the first 1000.
	Flooded int `json:"flooded,omitempty"`
	// Brand is the platform's brand word in event names, as the client
	// spells it (brand.EventWord): "VENDOR" unless the target's brand:
	// says another. The events check reads a type written with the
	// reference's VENDOR as the platform's (Named).
	Brand string `json:"-"`
}

// Named is typ as the platform of this turn names it: a type of
// KnownEventTypes written with the reference's VENDOR in its brand slot
// (EVENT_TYPE_VENDOR_AGENT_JOINED) takes the platform's brand word there
// (EVENT_TYPE_ACME_AGENT_JOINED). A suite is written from the reference,
// whose VENDOR stands for the brand; any other type is as written.
func (m *Messaging) Named(typ string) string {
	if m.Brand == "" {
		return typ
	}
	for _, form := range knownEventTypes {
		if before, after, branded := strings.Cut(form, EventBrandSlot); branded && typ == before+ReferenceBrandWord+after {
			return before + m.Brand + after
		}
	}
	return typ
}

// Event is one received Messaging event, redacted.
type Event struct {
	// ID is the event's id; empty when the platform sent none.
	ID string `json:"id,omitempty"`
	// Type is the event type as sent (EVENT_TYPE_...).
	Type string `json:"type"`
	// Kind is the client's reading of the type: agent_message,
	// agent_chunk, typing_start, typing_stop, system, joined, handoff,
	// live_agent_joined, live_agent_message, session_end, echo (a client
	// event as the platform logged it) or other.
	Kind string `json:"kind,omitempty"`
	// Timestamp is as sent.
	Timestamp string `json:"timestamp,omitempty"`
	// Text is the text of a message, a chunk or a system message.
	Text string `json:"text,omitempty"`
	// Level is a system message's level.
	Level string `json:"level,omitempty"`
	// Delayed marks a message the platform flagged as a holding message
	// (delayed: true in its payload, as the simulator sends; the real
	// reply follows the next user message). The reference shows no such
	// flag, so no check reads it: the transcript shows it.
	Delayed bool `json:"delayed,omitempty"`
	// Replayed marks an event that came in a history batch after a
	// reconnect.
	Replayed bool `json:"replayed,omitempty"`
}

// SystemMessage is one EVENT_TYPE_SYSTEM_MESSAGE: its level as sent and
// its text.
type SystemMessage struct {
	Level string `json:"level,omitempty"`
	Text  string `json:"text"`
}

// IsError reports whether the level is an error level
// (SYSTEM_MESSAGE_LEVEL_ERROR, or any level naming ERROR).
func (s SystemMessage) IsError() bool { return strings.Contains(strings.ToUpper(s.Level), "ERROR") }

// MessagingHandoff is what a turn's handoff events said.
type MessagingHandoff struct {
	// Destination and Reason are those of the handoff event.
	Destination string `json:"destination,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// Joined says a live agent joined; LiveAgent is their name.
	Joined    bool   `json:"joined,omitempty"`
	LiveAgent string `json:"live_agent,omitempty"`
}

// ChunkText is the text of the turn's chunks (agent_chunk events), joined
// in order: what a streamed answer put on the user's screen. The reports
// show it for a stream cut before its end, which left no complete message
// (the checks never read it), and a report read again is masked in it,
// where its chunks may spell a key that none holds whole.
func (m *Messaging) ChunkText() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, e := range m.Events {
		if e.Kind == KindAgentChunk {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

// KindAgentChunk is the Kind of an event that carries a chunk of a
// streamed message.
const KindAgentChunk = "agent_chunk"

// Types lists the event types of the turn, in order.
func (m *Messaging) Types() []string {
	if m == nil {
		return nil
	}
	out := make([]string, len(m.Events))
	for i, e := range m.Events {
		out[i] = e.Type
	}
	return out
}

// Errors returns the error-level system messages of the turn.
func (m *Messaging) Errors() []SystemMessage {
	if m == nil {
		return nil
	}
	var out []SystemMessage
	for _, s := range m.System {
		if s.IsError() {
			out = append(out, s)
		}
	}
	return out
}
