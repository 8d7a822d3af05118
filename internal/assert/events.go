package assert

import (
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// Checks of a turn over the Messaging channel: the event types it
// received, its system messages, the session's end. They read
// Observation.Messaging; on a debug-chat reply, which has no events, they
// fail saying so.

// Events checks the event types of a turn, as Trace checks node names:
// each of Includes appears, none of Excludes does, Sequence appears in
// this order with gaps allowed. Types are written as the platform sends
// them (EVENT_TYPE_...).
type Events struct {
	Pos diag.Pos
	// Parts holds the positions of includes, excludes and sequence, and
	// of their items: a failing item is placed at its own.
	Parts    Parts
	Includes []string
	Excludes []string
	Sequence []string
}

// SystemMessage checks the EVENT_TYPE_SYSTEM_MESSAGE events of a turn.
// With Expected true it passes when one of them has the Level (when set)
// and a text that Text matches (when set); with Expected false when none
// of them has the Level (when set), or none arrived at all.
type SystemMessage struct {
	Pos      diag.Pos
	Expected bool
	// Text matches the message's text.
	Text *Text
	// Level is the level: as sent (SYSTEM_MESSAGE_LEVEL_ERROR) or its
	// last word (error), compared ignoring case.
	Level string
}

// DebugChatKeys are the expectation keys that read the metadata of a
// debug-chat reply, and delayed its delayedResponse. A Messaging turn
// carries no metadata, so they cannot be checked under `via: messaging`:
// the conversation record (confirm:) holds what the platform kept of it;
// of delayed, see NotOverMessaging.
var DebugChatKeys = []string{"trace", "node", "flow", "step", "state", "functions", "topics", "metrics", "metadata", "lang", "delayed"}

// NotOverMessaging says why key, one of DebugChatKeys, cannot be checked
// over messaging. delayed is not metadata but debug chat's
// delayedResponse: a Messaging platform may flag a holding message (the
// simulator sends delayed: true in its payload, and the transcript of
// such a turn shows it), but the reference shows no such flag, so a
// check could only be as good as a platform's unshown choice.
func NotOverMessaging(key string) string {
	if key == "delayed" {
		return "delayed checks debug chat's delayedResponse, and the reference shows no delayed flag in Messaging events: " +
			"on a platform that sends none, delayed: true would fail an agent that did delay, and delayed: false pass whatever happened"
	}
	return key + " needs debug-chat metadata, which a conversation over messaging does not have"
}

// MessagingKeys are the expectation keys that read the events of a
// Messaging turn; a debug-chat reply has none.
var MessagingKeys = []string{"events", "system_message", "session_ended"}

// KeyAt is an expectation key and where it is written.
type KeyAt struct {
	Key string
	Pos diag.Pos
}

// DebugChatOnly lists the keys of e that need a debug-chat reply
// (DebugChatKeys), in the order of DebugChatKeys.
func (e *Expect) DebugChatOnly() []KeyAt {
	if e == nil {
		return nil
	}
	var out []KeyAt
	add := func(key string, pos diag.Pos) { out = append(out, KeyAt{Key: key, Pos: e.at(pos)}) }
	if e.Trace != nil {
		add("trace", e.Trace.Pos)
	}
	if e.Node != nil {
		add("node", e.Node.Pos)
	}
	if e.Flow != nil {
		add("flow", e.Flow.Pos)
	}
	if e.Step != nil {
		add("step", e.Step.Pos)
	}
	if len(e.State) > 0 {
		add("state", e.State[0].Pos)
	}
	if e.Functions != nil {
		add("functions", e.Functions.Pos)
	}
	if e.Topics != nil {
		add("topics", e.Topics.Pos)
	}
	if len(e.Metrics) > 0 {
		add("metrics", e.Metrics[0].Pos)
	}
	if len(e.Metadata) > 0 {
		add("metadata", e.Metadata[0].Pos)
	}
	if e.Lang != nil {
		add("lang", e.Lang.Pos)
	}
	if e.Delayed != nil {
		add("delayed", e.Delayed.Pos)
	}
	return out
}

// MessagingOnly lists the keys of e that need a Messaging turn
// (MessagingKeys).
func (e *Expect) MessagingOnly() []KeyAt {
	if e == nil {
		return nil
	}
	var out []KeyAt
	if e.Events != nil {
		out = append(out, KeyAt{Key: "events", Pos: e.at(e.Events.Pos)})
	}
	if e.SystemMessage != nil {
		out = append(out, KeyAt{Key: "system_message", Pos: e.at(e.SystemMessage.Pos)})
	}
	if e.SessionEnded != nil {
		out = append(out, KeyAt{Key: "session_ended", Pos: e.at(e.SessionEnded.Pos)})
	}
	return out
}

// ClaimsSystemMessage reports whether e expects the system message sm:
// events that must include EVENT_TYPE_SYSTEM_MESSAGE, or a system_message
// check that wants one and whose level and text sm meets (references
// expanded with expand; one that cannot be, or a text that cannot be
// compared, claims it, and the check reports why). The runner lets an
// error-level system message that a check of its turn claims through to
// the checks instead of erroring the attempt. A check that wants none
// (system_message: false) claims nothing, and neither does one that wants
// another message: a platform fault beside the message a turn tests stays
// an error, never an agent's failure.
func (e *Expect) ClaimsSystemMessage(sm reply.SystemMessage, expand Expander) bool {
	if e == nil {
		return false
	}
	if ev := e.Events; ev != nil {
		for _, list := range [][]string{ev.Includes, ev.Sequence} {
			if slices.Contains(list, reply.EventTypeSystemMessage) {
				return true
			}
		}
	}
	want := e.SystemMessage
	if want == nil || !want.Expected || !levelMatches(want.Level, sm.Level) {
		return false
	}
	if want.Text == nil {
		return true
	}
	text, err := want.Text.resolve(expand)
	if err != nil {
		return true
	}
	m, err := text.eval(sm.Text, false, "text", nil)
	return err != nil || m == nil
}

// ExpectsEnd reports whether e expects the conversation to have ended
// with its reply: ended or session_ended true, or events that must
// include a session end event. Over Messaging the runner then gives the
// end the time to arrive after the answer (a platform may send it after
// its typing indicator goes off), so that the end is the turn's and not
// a thing of the past by the next one.
func (e *Expect) ExpectsEnd() bool {
	if e == nil {
		return false
	}
	if e.Ended != nil && e.Ended.Value || e.SessionEnded != nil && e.SessionEnded.Value {
		return true
	}
	if ev := e.Events; ev != nil {
		for _, list := range [][]string{ev.Includes, ev.Sequence} {
			for _, t := range list {
				if slices.Contains(reply.EventTypesSessionEnd, t) {
					return true
				}
			}
		}
	}
	return false
}

// at returns p, or the position of the Expect when p is unknown.
func (e *Expect) at(p diag.Pos) diag.Pos {
	if p.IsZero() {
		return e.Pos
	}
	return p
}

var eventsList = listSubject{
	key:      "events",
	subject:  "events",
	missing:  func(t string) string { return "no " + t + " event in the turn" },
	excluded: func(t string) string { return "the turn has an excluded " + t + " event" },
	notAfter: func(t, prev string) string { return "no " + t + " event after " + prev },
	join:     joinEvents,
}

// joinEvents renders event types in the order they arrived.
func joinEvents(types []string) string {
	if len(types) == 0 {
		return none
	}
	return strings.Join(types, " > ")
}

// messaging runs the checks of a Messaging turn.
func (c *checker) messaging(exp *Expect, m *reply.Messaging) {
	if m == nil {
		for _, k := range exp.MessagingOnly() {
			c.fail(Failure{Pos: k.Pos, Key: k.Key, Message: "the reply came over debug chat, which has no Messaging events",
				Expected: "a turn over messaging (via: messaging)", Actual: "a debug-chat reply"})
		}
		return
	}
	if ev := exp.Events; ev != nil {
		l := eventsList
		l.named = m.Named
		c.list(c.at(ev.Pos), ev.Parts, l, m.Types(), ev.Includes, ev.Excludes, ev.Sequence, nil)
	}
	if sm := exp.SystemMessage; sm != nil {
		c.systemMessage(sm, m.System)
	}
	if b := exp.SessionEnded; b != nil {
		unexpected := "the session ended unexpectedly"
		if m.EndReason != "" {
			unexpected += " (" + m.EndReason + ")"
		}
		c.boolean(b, "session_ended", m.SessionEnded, "the session did not end", unexpected)
	}
}

// systemMessage checks the turn's system messages.
func (c *checker) systemMessage(sm *SystemMessage, msgs []reply.SystemMessage) {
	pos := c.at(sm.Pos)
	var text *Text
	if sm.Text != nil {
		r, err := sm.Text.resolve(c.expand)
		if err != nil {
			c.fail(Failure{Pos: pos, Key: "system_message", Message: err.Error(), Expected: sm.Text.Describe(), Actual: renderSystem(msgs), Unexpanded: true})
			return
		}
		text = r
	}
	var matched []reply.SystemMessage
	for _, s := range msgs {
		if !levelMatches(sm.Level, s.Level) {
			continue
		}
		if text != nil {
			m, err := text.eval(s.Text, false, "text", nil)
			if err != nil {
				c.fail(Failure{Pos: pos, Key: "system_message", Message: err.Error(), Expected: text.Describe(), Actual: renderSystem(msgs)})
				return
			}
			if m != nil {
				continue
			}
		}
		matched = append(matched, s)
	}
	switch {
	case sm.Expected && len(matched) == 0:
		msg := "no system message in the turn"
		if len(msgs) > 0 {
			msg = "no system message of the turn is the expected one"
		}
		c.fail(Failure{Pos: pos, Key: "system_message", Message: msg, Expected: describeSystem("a", sm, text), Actual: renderSystem(msgs)})
	case !sm.Expected && len(matched) > 0:
		c.fail(Failure{Pos: pos, Key: "system_message", Message: "the turn has an unexpected system message",
			Expected: describeSystem("no", sm, text), Actual: renderSystem(matched)})
	}
}

// levelMatches compares a level as written with a level as sent: equal
// ignoring case, or the last word of the sent one ("error" for
// SYSTEM_MESSAGE_LEVEL_ERROR).
func levelMatches(want, got string) bool {
	if want == "" {
		return true
	}
	if strings.EqualFold(want, got) {
		return true
	}
	return strings.HasSuffix(strings.ToUpper(got), "_"+strings.ToUpper(want))
}

// describeSystem renders what a system_message check expects; article is
// "a" or "no".
func describeSystem(article string, sm *SystemMessage, text *Text) string {
	s := article + " system message"
	if sm.Level != "" {
		s += " at level " + sm.Level
	}
	if text != nil {
		s += " whose text " + text.Describe()
	}
	return s
}

// renderSystem lists system messages one per line: "[LEVEL] text".
func renderSystem(msgs []reply.SystemMessage) string {
	if len(msgs) == 0 {
		return none
	}
	parts := make([]string, len(msgs))
	for i, s := range msgs {
		parts[i] = "[" + s.Level + "] " + s.Text
	}
	return strings.Join(parts, "\n")
}
