package report

import (
	"encoding/json"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// msgTurn builds a turn over Messaging as the runner records it: the
// client event sent, the events received (the response, as a JSON array)
// and what they said.
func msgTurn(index, line int, say, text, conv string, ms int, m *reply.Messaging) *result.Turn {
	const file = "suites/webchat.yaml"
	req := mustJSON(map[string]any{"type": "EVENT_TYPE_USER_MESSAGE", "payload": map[string]any{"text": say}})
	if index == 0 {
		req = mustJSON(map[string]any{"type": "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN", "payload": map[string]any{}})
	}
	raw := make([]json.RawMessage, len(m.Events))
	for i, e := range m.Events {
		raw[i] = mustJSON(map[string]any{"id": e.ID, "type": e.Type, "timestamp": e.Timestamp, "payload": map[string]any{"text": e.Text}})
	}
	m.SessionID = "ses_0123456789abcdef"
	return &result.Turn{
		Index: index, Pos: pos(file, line, 9), Say: say, Started: at(ms), Latency: 40 * time.Millisecond,
		Request: req, Response: mustJSON(raw), Messaging: m,
		Result: &reply.TurnResult{ConversationID: conv, UserInput: say, Response: text, ConversationEnded: m.SessionEnded},
	}
}

func ev(id, typ, text string) reply.Event {
	return reply.Event{ID: id, Type: typ, Timestamp: "2026-03-14T09:26:53.000Z", Text: text}
}

// messagingFixture is a run over the Messaging channel: a handoff to a
// live agent after a dropped socket, an events check that failed on
// replies streamed in chunks, and a turn answered with an error system
// message.
func messagingFixture() *result.Result {
	const file = "suites/webchat.yaml"
	joined := func(conv string, ms int) *result.Turn {
		return msgTurn(0, 5, "", "Hello, this is Northwind Energy billing.", conv, ms, &reply.Messaging{Joined: true, CompletedBy: "typing",
			Events: []reply.Event{ev("1", "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN", ""), ev("2", "EVENT_TYPE_VENDOR_AGENT_JOINED", ""),
				ev("3", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "Hello, this is Northwind Energy billing.")}})
	}
	handoff := &result.Case{
		Name: "hands over to a live agent", Pos: pos(file, 4, 5), Status: result.Passed, Via: "messaging",
		Duration: 300 * time.Millisecond, Agent: "utility-billing", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-100", Started: at(0), Duration: 300 * time.Millisecond,
			Turns: []*result.Turn{
				joined("conv-100", 0),
				msgTurn(1, 8, "I want to talk to a real person", "Transferring you now. Hi, this is Sam.", "conv-100", 60, &reply.Messaging{
					Joined: true, CompletedBy: "typing", Reconnects: 1, Duplicates: 2,
					Handoff: &reply.MessagingHandoff{Destination: "billing_team", Joined: true, LiveAgent: "Sam"},
					Events: []reply.Event{ev("4", "EVENT_TYPE_USER_MESSAGE", "I want to talk to a real person"),
						{ID: "5", Type: "EVENT_TYPE_VENDOR_AGENT_MESSAGE", Text: "Transferring you now.", Replayed: true},
						ev("6", "EVENT_TYPE_HANDOFF_INITIATED", ""), ev("7", "EVENT_TYPE_LIVE_AGENT_JOINED", ""),
						ev("8", "EVENT_TYPE_LIVE_AGENT_MESSAGE", "Hi, this is Sam.")}}),
				msgTurn(2, 12, "bye", "You're welcome. Goodbye!", "conv-100", 120, &reply.Messaging{
					Joined: true, CompletedBy: "session_end", SessionEnded: true, EndReason: "live_agent_ended",
					Events: []reply.Event{ev("9", "EVENT_TYPE_USER_MESSAGE", "bye"), ev("10", "EVENT_TYPE_LIVE_AGENT_MESSAGE", "You're welcome. Goodbye!"),
						ev("11", "EVENT_TYPE_SESSION_END", "")}}),
			}}},
	}
	events := &result.Case{
		Name: "expects the live agent at once", Pos: pos(file, 20, 5), Status: result.Failed, Via: "messaging", Streaming: true,
		Duration: 100 * time.Millisecond, Agent: "utility-billing", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, ConversationID: "conv-101", Started: at(10), Duration: 100 * time.Millisecond,
			Turns: []*result.Turn{
				joined("conv-101", 10),
				msgTurn(1, 22, "hello", "Please tell me your 8-digit account number.", "conv-101", 70, &reply.Messaging{Joined: true, CompletedBy: "typing",
					Events: []reply.Event{ev("4", "EVENT_TYPE_USER_MESSAGE", "hello"), ev("5", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "Please tell me "),
						ev("6", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "your 8-digit account number.")}}),
			},
			Failures: []assert.Failure{failure(pos(file, 24, 11), "events.includes", "no EVENT_TYPE_LIVE_AGENT_JOINED event in the turn",
				"includes EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_USER_MESSAGE > EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK > EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "")},
		}},
	}
	nobody := &result.Case{
		Name: "finds nobody to hand over to", Pos: pos(file, 30, 5), Status: result.Errored, Via: "messaging",
		Duration: 90 * time.Millisecond, Agent: "utility-billing", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Errored, ConversationID: "conv-102", Started: at(20), Duration: 90 * time.Millisecond,
			Turns: []*result.Turn{
				joined("conv-102", 20),
				msgTurn(1, 32, "I want to talk to a real person", "Transferring you now.", "conv-102", 80, &reply.Messaging{
					Joined: true, CompletedBy: "session_end", SessionEnded: true, EndReason: "handoff_failed",
					Handoff: &reply.MessagingHandoff{Destination: "billing_team"},
					System:  []reply.SystemMessage{{Level: reply.SystemLevelError, Text: "Sorry, we could not connect you to an agent. Please try again."}},
					Events: []reply.Event{ev("4", "EVENT_TYPE_USER_MESSAGE", "I want to talk to a real person"),
						ev("5", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "Transferring you now."), ev("6", "EVENT_TYPE_HANDOFF_INITIATED", ""),
						{ID: "7", Type: reply.EventTypeSystemMessage, Level: reply.SystemLevelError, Text: "Sorry, we could not connect you to an agent. Please try again."},
						ev("8", "EVENT_TYPE_SESSION_END", "")}}),
			},
			Error: &result.Error{Pos: pos(file, 32, 9), Kind: result.KindMessaging,
				Message: `turn 1: the platform answered with an error system message: "Sorry, we could not connect you to an agent. Please try again.", and ended the session (reason handoff_failed)`},
		}},
	}
	return &result.Result{
		Started: t0, Duration: 400 * time.Millisecond,
		Target: result.Target{Name: "sim", Env: "sandbox", Embedded: true},
		Files:  []*result.File{{Path: file, Suite: "Web chat", Cases: []*result.Case{handoff, events, nobody}}},
	}
}
