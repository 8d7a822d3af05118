package platform

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/reply"
)

// Exchange renders a Messaging turn in the form the runner keeps for every
// turn, whatever the channel: Result holds what debug chat would call the
// turn result (the reply text, the conversation id of the joined event,
// the session's end as conversationEnded, a holding message as
// delayedResponse), Messaging the events and what they said. conversationID
// is the session's (MessagingSession.ConversationID) and userInput the
// text sent ("" for the opening).
func (t *MessagingTurn) Exchange(sessionID, conversationID, userInput string) *Exchange {
	t.finishReply()
	m := &reply.Messaging{
		SessionID:    sessionID,
		Events:       make([]reply.Event, len(t.Events)),
		Joined:       t.Joined,
		SessionEnded: t.SessionEnded,
		EndReason:    t.EndReason,
		CompletedBy:  t.CompletedBy,
		Reconnects:   t.Reconnects,
		Resent:       t.Resent,
		Duplicates:   t.Duplicates,
		Flooded:      t.Flooded,
		Brand:        brand.EventWord(t.brand),
	}
	for i, e := range t.Events {
		m.Events[i] = reply.Event{ID: e.ID, Type: e.Type, Kind: e.Kind.String(), Timestamp: e.Timestamp, Text: e.Text, Level: e.Level, Delayed: e.Delayed, Replayed: e.Replayed}
	}
	for _, s := range t.System {
		m.System = append(m.System, reply.SystemMessage{Level: s.Level, Text: s.Text})
	}
	if h := t.Handoff; h != nil {
		m.Handoff = &reply.MessagingHandoff{Destination: h.Destination, Reason: h.Reason, Joined: h.Joined, LiveAgent: h.LiveAgent}
	}
	delayed := false
	for _, r := range t.Messages {
		delayed = delayed || r.Delayed
	}
	return &Exchange{
		Request:  t.Request,
		Response: t.rawEvents(),
		Status:   http.StatusSwitchingProtocols, // the events came over the socket
		Result: &reply.TurnResult{
			ConversationID:    conversationID,
			UserInput:         userInput,
			Response:          t.Reply,
			ConversationEnded: t.SessionEnded,
			DelayedResponse:   delayed,
		},
		Started:   t.Started,
		Latency:   t.Latency,
		Attempts:  1 + t.Reconnects,
		Messaging: m,
	}
}

// rawEvents is the turn's events as received (redacted), as one JSON
// array, for the JSON report.
func (t *MessagingTurn) rawEvents() json.RawMessage {
	if len(t.Events) == 0 {
		return json.RawMessage("[]")
	}
	n := 2
	for _, e := range t.Events {
		n += len(e.Raw) + 1
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteByte('[')
	for i, e := range t.Events {
		if i > 0 {
			b.WriteByte(',')
		}
		// Raw was decoded when it arrived: it is one JSON value.
		b.Write(e.Raw)
	}
	b.WriteByte(']')
	return b.Bytes()
}
