package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// TestMessagingDelayedTranscript: a holding message a platform flags over
// Messaging (the simulator's payload.delayed) reads "delayed response" in
// the transcript, as a delayed reply does over debug chat: lint points
// designers there, since no check reads the flag over messaging. Every
// report says it, and so do the reports rendered again from the JSON one.
func TestMessagingDelayedTranscript(t *testing.T) {
	const file = "suites/webchat.yaml"
	holding := "That's a big party! Let me check, one moment please."
	turn := func(delayed bool) *result.Turn {
		msg := ev("5", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", holding)
		msg.Delayed = delayed
		return msgTurn(1, 8, "a table for 12", holding, "conv-100", 40, &reply.Messaging{Joined: true, CompletedBy: "typing",
			Events: []reply.Event{ev("4", "EVENT_TYPE_USER_MESSAGE", "a table for 12"), msg}})
	}
	run := func(delayed bool) *result.Result {
		a := &result.Attempt{Number: 1, Status: result.Failed, ConversationID: "conv-100", Started: at(0), Duration: 50 * time.Millisecond,
			Turns: []*result.Turn{turn(delayed)},
			Failures: []assert.Failure{failure(pos(file, 9, 11), "response", "reply does not contain the expected text",
				`contains "private dining"`, holding, "")}}
		c := &result.Case{Name: "books a large party", Pos: pos(file, 4, 5), Status: result.Failed, Via: "messaging",
			Duration: 50 * time.Millisecond, Agent: "restaurant", Env: "sandbox", Attempts: []*result.Attempt{a}}
		return &result.Result{Started: t0, Duration: 50 * time.Millisecond, Target: result.Target{Name: "sim", Env: "sandbox", Embedded: true},
			Files: []*result.File{{Path: file, Suite: "Web chat", Cases: []*result.Case{c}}}}
	}
	reports := func(t *testing.T, r *result.Result) map[string]string {
		t.Helper()
		var human, junit, page bytes.Buffer
		replay(NewHuman(&human, HumanOptions{}), r)
		if err := WriteJUnit(&junit, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&page, r, HTMLOptions{Coverage: coverage.Compute(r, nil)}); err != nil {
			t.Fatal(err)
		}
		_, data := splitPage(t, page.String())
		return map[string]string{"console": human.String(), "junit": junit.String(), "html": data}
	}
	for _, delayed := range []bool{true, false} {
		r := run(delayed)
		var doc bytes.Buffer
		if err := WriteJSON(&doc, r, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		rep, err := ReadJSON(bytes.NewReader(doc.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		for from, res := range map[string]*result.Result{"the run": r, "the JSON report": rep.Result} {
			for name, out := range reports(t, res) {
				if got := strings.Contains(out, "delayed response"); got != delayed {
					t.Errorf("flagged %t, %s rendered from %s: says \"delayed response\" %t, want %t:\n%s", delayed, name, from, got, delayed, out)
				}
			}
		}
	}
}

// TestWriteMessagingLines: what a Messaging turn received besides the
// reply, one line per fact, and nothing for what did not happen.
func TestWriteMessagingLines(t *testing.T) {
	t.Parallel()
	delayed := func() reply.Event {
		e := ev("5", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "one moment")
		e.Delayed = true
		return e
	}
	for _, tc := range []struct {
		name string
		m    *reply.Messaging
		want string
	}{
		{"nothing received", &reply.Messaging{}, ""},
		// Two holding messages are one fact.
		{"held twice", &reply.Messaging{Events: []reply.Event{delayed(), delayed()}},
			"events: EVENT_TYPE_VENDOR_AGENT_MESSAGE ×2\ndelayed response\n"},
		// A streamed reply is a run of chunks: counted, in its place; a
		// replayed one is told apart.
		{"streamed", &reply.Messaging{Events: []reply.Event{ev("1", "EVENT_TYPE_USER_MESSAGE", "hi"),
			ev("2", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "He"), ev("3", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "ll"),
			{ID: "4", Type: "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", Replayed: true}, ev("5", "EVENT_TYPE_VENDOR_AGENT_TYPING", "")}},
			"events: EVENT_TYPE_USER_MESSAGE → EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK ×2 → EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK (replayed) → EVENT_TYPE_VENDOR_AGENT_TYPING\n"},
		{"reconnected, nothing replayed", &reply.Messaging{Reconnects: 1},
			"socket dropped, reconnected 1× with the last cursor\n"},
		{"reconnected, replays dropped, resent", &reply.Messaging{Reconnects: 2, Duplicates: 3, Resent: 1},
			"socket dropped, reconnected 2× with the last cursor; 3 replayed events already seen were dropped; the message was sent again 1×\n"},
		{"a live agent joined, no destination", &reply.Messaging{Handoff: &reply.MessagingHandoff{Joined: true, LiveAgent: "Sam"}},
			"handoff (live agent joined: Sam)\n"},
		{"handed off, nobody joined yet", &reply.Messaging{Handoff: &reply.MessagingHandoff{Destination: "billing-queue"}},
			"handoff → billing-queue\n"},
		{"a live agent joined, unnamed", &reply.Messaging{Handoff: &reply.MessagingHandoff{Destination: "q", Joined: true}},
			"handoff → q (live agent joined)\n"},
		// A flood is its first events, and a count of the rest.
		{"flooded", &reply.Messaging{Events: []reply.Event{ev("1", "EVENT_TYPE_VENDOR_AGENT_TYPING", ""), ev("2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "")}, Flooded: 99997},
			"events: EVENT_TYPE_VENDOR_AGENT_TYPING ×2 → 99997 more, not kept: the platform flooded the turn\n"},
		// An answer in two messages: each, and the typing indicator's
		// pause between them, from the platform's timestamps.
		{"two messages", &reply.Messaging{Events: []reply.Event{kev("1", "echo", "", "09:26:53.000"), kev("2", "agent_message", "Let me check.", "09:26:53.010"),
			kev("3", "typing_stop", "", "09:26:53.020"), kev("4", "typing_start", "", "09:26:53.820"), kev("5", "agent_message", "Your bill is £84.20.", "09:26:53.900"),
			kev("6", "typing_stop", "", "09:26:53.910")}},
			"events: EVENT_TYPE_X ×6\nmessages: \"Let me check.\" → typing off 800ms → \"Your bill is £84.20.\"\n"},
		// No typing start: the pause runs to the message; a timestamp
		// that is not a time gives none. A live agent's is said so.
		{"live agent, timestamps unread", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "Transferring you.", "09:26:53.000"),
			kev("2", "typing_stop", "", "09:26:53.100"), kev("3", "live_agent_message", "Hi, I'm Sam.", "09:26:54.100"),
			kev("4", "typing_stop", "", "later"), kev("5", "agent_message", "Bye.", "09:26:55.000")}},
			"events: EVENT_TYPE_X ×5\nmessages: \"Transferring you.\" → typing off 1.0s → live agent \"Hi, I'm Sam.\" → typing off → \"Bye.\"\n"},
		// A clock that went back tells no pause.
		{"timestamps out of order", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "One.", "09:26:53.000"),
			kev("2", "typing_stop", "", "09:26:54.000"), kev("3", "agent_message", "Two.", "09:26:53.500")}},
			"events: EVENT_TYPE_X ×3\nmessages: \"One.\" → typing off → \"Two.\"\n"},
		// The tail of the answer before, ahead of this turn's echo, is
		// marked; no pause is told across the two answers. A message
		// alone before the echo is still told.
		{"the earlier answer's tail", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "Your bill is £84.20.", "09:26:53.000"),
			kev("2", "typing_stop", "", "09:26:53.010"), kev("3", "echo", "", "09:26:53.020"), kev("4", "agent_message", "We open at 9.", "09:26:53.500")}},
			"events: EVENT_TYPE_X ×4\nmessages: \"Your bill is £84.20.\" (before the platform took this turn's message) → \"We open at 9.\"\n"},
		{"only the earlier answer's tail", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "Your bill is £84.20.", "09:26:53.000"), kev("2", "echo", "", "09:26:53.020")}},
			"events: EVENT_TYPE_X ×2\nmessages: \"Your bill is £84.20.\" (before the platform took this turn's message)\n"},
		// One message of its own, an empty one, or a streamed answer
		// (its chunks are counted on the events line): no line.
		{"one message", &reply.Messaging{Events: []reply.Event{kev("1", "echo", "", "09:26:53.000"), kev("2", "agent_message", "Hi.", "09:26:53.000"), kev("3", "agent_message", "", "09:26:53.000")}},
			"events: EVENT_TYPE_X ×3\n"},
		{"streamed", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "Hi.", "09:26:53.000"), kev("2", "agent_chunk", "He", "09:26:53.000"), kev("3", "agent_message", "Hello.", "09:26:53.000")}},
			"events: EVENT_TYPE_X ×3\n"},
		{"stream ended", &reply.Messaging{Events: []reply.Event{kev("1", "agent_message", "Hi.", "09:26:53.000"), kev("2", "agent_message_end", "", "09:26:53.000"), kev("3", "agent_message", "Hello.", "09:26:53.000")}},
			"events: EVENT_TYPE_X ×3\n"},
		{"session ended, no reason", &reply.Messaging{SessionEnded: true}, "session ended\n"},
		{"session ended with a reason", &reply.Messaging{SessionEnded: true, EndReason: "agent closed"}, "session ended (agent closed)\n"},
	} {
		var b strings.Builder
		detail{b: &b}.writeMessaging("", tc.m)
		if got := b.String(); got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// kev is an event of kind at a time of 2026-03-14, its type left out of
// what the test reads.
func kev(id, kind, text, clock string) reply.Event {
	return reply.Event{ID: id, Type: "EVENT_TYPE_X", Kind: kind, Text: text, Timestamp: "2026-03-14T" + clock + "Z"}
}

// TestSessionID: the Messaging session of an attempt is the first one a
// turn recorded; a turn before the session opened has none to give.
func TestSessionID(t *testing.T) {
	t.Parallel()
	a := &result.Attempt{Turns: []*result.Turn{nil, {Index: 0}, {Index: 0, Messaging: &reply.Messaging{}},
		{Index: 1, Messaging: &reply.Messaging{SessionID: "ses_1"}}, {Index: 2, Messaging: &reply.Messaging{SessionID: "ses_2"}}}}
	if got := sessionID(a); got != "ses_1" {
		t.Errorf("sessionID = %q, want ses_1", got)
	}
	if got := sessionID(nil); got != "" {
		t.Errorf("sessionID(nil) = %q, want none", got)
	}
}
