package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// writeMessaging writes what a turn over Messaging received besides the
// reply: its event types in order, its system messages, the handoff, a
// holding message, the reconnects the client recovered from and the
// session's end.
func (d detail) writeMessaging(indent string, m *reply.Messaging) {
	if len(m.Events) > 0 {
		// A streamed reply is a run of chunks, one event each: a run of
		// one type is written once with its count, so that the events
		// around it stay readable (the JSON report keeps every one).
		var types []string
		last, n := "", 0
		flush := func() {
			switch {
			case n == 1:
				types = append(types, last)
			case n > 1:
				types = append(types, fmt.Sprintf("%s ×%d", last, n))
			}
		}
		for _, e := range m.Events {
			t := e.Type
			if e.Replayed {
				t += " (replayed)"
			}
			if t != last {
				flush()
				last, n = t, 0
			}
			n++
		}
		flush()
		line := "events: " + strings.Join(types, " → ")
		if m.Flooded > 0 {
			line += fmt.Sprintf(" → %d more, not kept: the platform flooded the turn", m.Flooded)
		}
		d.line(indent, d.st.flat(line))
	}
	if line := d.messagesLine(m); line != "" {
		d.line(indent, line)
	}
	for _, s := range m.System {
		line := d.st.flat(fmt.Sprintf("system message [%s]: %s", s.Level, s.Text))
		if s.IsError() {
			line = d.st.paint(sgrYellow, line)
		}
		d.line(indent, line)
	}
	if h := m.Handoff; h != nil {
		s := "handoff"
		if h.Destination != "" {
			s += " → " + h.Destination
		}
		if h.Joined {
			s += " (live agent joined"
			if h.LiveAgent != "" {
				s += ": " + h.LiveAgent
			}
			s += ")"
		}
		d.line(indent, d.st.paint(sgrYellow, d.st.flat(s)))
	}
	// A holding message the platform flagged, as debug chat's transcript
	// shows delayedResponse: read from the events, which the JSON report
	// keeps, so a report rendered again from it says the same.
	for _, e := range m.Events {
		if e.Delayed {
			d.line(indent, "delayed response")
			break
		}
	}
	if m.Reconnects > 0 {
		s := fmt.Sprintf("socket dropped, reconnected %d× with the last cursor", m.Reconnects)
		if m.Duplicates > 0 {
			s += fmt.Sprintf("; %d replayed events already seen were dropped", m.Duplicates)
		}
		if m.Resent > 0 {
			s += fmt.Sprintf("; the message was sent again %d×", m.Resent)
		}
		d.line(indent, s)
	}
	if m.SessionEnded {
		s := "session ended"
		if m.EndReason != "" {
			s += " (" + m.EndReason + ")"
		}
		d.line(indent, d.st.paint(sgrYellow, d.st.flat(s)))
	}
}

// sessionID is the Messaging session of an attempt, or "".
func sessionID(a *result.Attempt) string {
	if a == nil {
		return ""
	}
	for _, t := range a.Turns {
		if t != nil && t.Messaging != nil && t.Messaging.SessionID != "" {
			return t.Messaging.SessionID
		}
	}
	return ""
}

// noMessage is what a Messaging turn without a complete message shows in
// place of the reply: a stream cut before its end still put its chunks
// on the user's screen (reply.Messaging.ChunkText), and they are what to
// read when a stream broke.
func noMessage(m *reply.Messaging) string {
	if part := m.ChunkText(); part != "" {
		return "(no complete message; " + stoppedAfter(part) + ")"
	}
	return "(no message)"
}

func stoppedAfter(part string) string { return fmt.Sprintf("the stream stopped after %q", part) }

// messagesLine is how a turn's answer arrived when it was not one
// message: each whole message in order (cut as a summary cuts a value),
// how long the agent's typing indicator was off between two of one
// answer, and which
// came before the platform echoed this turn's own message. The reply
// line joins the messages, as the checks read them; this line is what
// the chat's user saw: "Let me check.", a pause, then the bill. A
// message before the echo answers the turn before, which ended too soon
// (a split answer without messaging_quiet): the head of this turn's
// reply is not its answer. "" for an answer of one message of its own,
// and for a streamed one (its chunks are counted on the events line).
func (d detail) messagesLine(m *reply.Messaging) string {
	type message struct {
		text, gap string
		live      bool
		before    bool
	}
	var msgs []message
	echoAt := -1
	stop, gap := "", ""
	for _, e := range m.Events {
		switch e.Kind {
		case reply.KindAgentChunk, "agent_message_end":
			return ""
		case "echo":
			echoAt = len(msgs)
		case "typing_stop":
			// One before the first message makes a gap no line shows.
			stop = e.Timestamp
		case "typing_start":
			if stop != "" {
				gap, stop = typingGap(stop, e.Timestamp), ""
			}
		case "agent_message", "live_agent_message":
			if e.Text == "" {
				continue
			}
			if stop != "" {
				gap, stop = typingGap(stop, e.Timestamp), ""
			}
			msgs = append(msgs, message{text: e.Text, gap: gap, live: e.Kind == "live_agent_message"})
			gap = ""
		}
	}
	for i := range min(echoAt, len(msgs)) {
		msgs[i].before = true
	}
	if len(msgs) < 2 && (len(msgs) == 0 || !msgs[0].before) {
		return ""
	}
	var b strings.Builder
	b.WriteString("messages: ")
	for i, msg := range msgs {
		if i > 0 {
			b.WriteString(" → ")
			if msg.gap != "" && msg.before == msgs[i-1].before {
				b.WriteString(msg.gap + " → ")
			}
		}
		if msg.live {
			b.WriteString("live agent ")
		}
		b.WriteString(d.st.compared().quotedShort(msg.text))
		if msg.before {
			b.WriteString(" (before the platform took this turn's message)")
		}
	}
	return d.st.flat(b.String())
}

// typingGap says how long the agent's typing indicator was off, from the
// platform's timestamps of its stop and of the next event: "typing off
// 800ms", or "typing off" when either is not a time.
func typingGap(from, to string) string {
	a, errA := time.Parse(time.RFC3339Nano, from)
	b, errB := time.Parse(time.RFC3339Nano, to)
	if errA != nil || errB != nil || b.Before(a) {
		return "typing off"
	}
	return "typing off " + formatDuration(b.Sub(a))
}
