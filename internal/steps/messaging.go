package steps

import "github.com/agenttest/agenttest/internal/assert"

// messagingDefs are the checks on the events of a turn over the Messaging
// channel (`Given the conversation is over messaging`). The reply text,
// handoff and end checks of GroupChecks work over Messaging too.
func messagingDefs() []Def {
	return []Def{
		def(GroupMessaging, `the events include `+q, NoArg, `Then the events include "EVENT_TYPE_LIVE_AGENT_JOINED"`, "",
			"An event of this type arrived during the last turn.", eventsCheck(false, func(e *assert.Events, t string) { e.Includes = []string{t} })),
		def(GroupMessaging, `the events do not include `+q, NoArg, `Then the events do not include "EVENT_TYPE_SYSTEM_MESSAGE"`, "",
			"No event of this type arrived during the last turn.", eventsCheck(false, func(e *assert.Events, t string) { e.Excludes = []string{t} })),
		def(GroupMessaging, `the events arrive in this order:`, TableArg, `Then the events arrive in this order:`,
			"| EVENT_TYPE_HANDOFF_INITIATED |\n| EVENT_TYPE_LIVE_AGENT_JOINED |",
			"Events of these types arrived during the last turn in this order, gaps allowed (one type per row).", eventsTable),
		def(GroupMessaging, `the greeting events include `+q, NoArg, `Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINED"`, "",
			"An event of this type arrived with the greeting (the join: the agent's joined event, its first message).",
			eventsCheck(true, func(e *assert.Events, t string) { e.Includes = []string{t} })),
		def(GroupMessaging, `a system message contains `+q, NoArg, `Then a system message contains "high load"`, "",
			"A system message of any level arrived during the last turn, and its text contains the text.", systemCheck("")),
		def(GroupMessaging, `an error system message contains `+q, NoArg, `Then an error system message contains "could not connect you"`, "",
			"A system message at error level arrived during the last turn, and its text contains the text.", systemCheck("error")),
		def(GroupMessaging, `there is no system message`, NoArg, `Then there is no system message`, "",
			"No system message arrived during the last turn.", check(func(c *call, e *assert.Expect) error {
				e.SystemMessage = &assert.SystemMessage{Pos: c.pos}
				return nil
			})),
		def(GroupMessaging, `the session ends`, NoArg, `Then the session ends`, "",
			"The Messaging session ended during the last turn (a session end event arrived).",
			boolCheck(func(e *assert.Expect, b *assert.Bool) { e.SessionEnded = b }, true)),
		def(GroupMessaging, `the session continues`, NoArg, `Then the session continues`, "",
			"The Messaging session is still open after the last turn.",
			boolCheck(func(e *assert.Expect, b *assert.Bool) { e.SessionEnded = b }, false)),
	}
}

// eventsCheck builds a check of the event types of the last turn (or of
// the greeting); the type may use ${...}.
func eventsCheck(greeting bool, set func(e *assert.Events, typ string)) func(c *call) (*Step, error) {
	return checkOn(greeting, func(c *call, e *assert.Expect) error {
		t, err := c.expand(0)
		ev := &assert.Events{Pos: c.pos}
		set(ev, t)
		e.Events = ev
		return err
	})
}

func eventsTable(c *call) (*Step, error) {
	types, err := c.column("event type")
	if err != nil {
		return nil, err
	}
	parts := c.rowParts("sequence", len(types)) // read-only, as in traceTable
	return check(func(c *call, e *assert.Expect) error {
		// As written, as in traceTable: the check expands each row.
		e.Events = &assert.Events{Pos: c.pos, Parts: parts, Sequence: types}
		return nil
	})(c)
}

// systemCheck builds a check that a system message (of level, when set)
// contains the text.
func systemCheck(level string) func(c *call) (*Step, error) {
	return check(func(c *call, e *assert.Expect) error {
		text := c.args[0]
		e.SystemMessage = &assert.SystemMessage{Pos: c.pos, Expected: true, Level: level, Text: &assert.Text{Pos: c.pos, Contains: &text}}
		return nil
	})
}
