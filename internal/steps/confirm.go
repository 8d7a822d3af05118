package steps

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// confirmDefs are the steps of probes and confirmations: the Gherkin form
// of a YAML scenario's `probe:` and `confirm:` (docs/confirmations.md).
// Their wording is a contract with designers: add aliases, never reword.
func confirmDefs() []Def {
	return []Def{
		def(GroupConfirm, `an outbound call is placed to `+q, NoArg, `When an outbound call is placed to "+447700900001"`, "",
			"Starts the scenario from an outbound call instead of a debug chat (the number must be a probe number of the target).", probeStep(false)),
		def(GroupConfirm, `an outbound call is placed to `+q+` from `+q, NoArg, `When an outbound call is placed to "+447700900001" from "+442071230002"`, "",
			"Starts the scenario from an outbound call placed from this agent number, one provisioned for the project (agent_number).", probeStep(false)),
		def(GroupConfirm, `the SMS `+q+` is sent to `+q, NoArg, `When the SMS "Reply YES to confirm" is sent to "+447700900002"`, "",
			"Starts the scenario from an SMS; later confirmations check the conversation it opened.", probeStep(true)),
		def(GroupConfirm, `the SMS `+q+` is sent to `+q+` from `+q, NoArg, `When the SMS "Reply YES to confirm" is sent to "+447700900002" from "+442071230002"`, "",
			"Starts the scenario from an SMS sent from this agent number, one provisioned for the project (agent_number); without it the platform picks the environment's.", probeStep(true)),
		def(GroupConfirm, `the call ends with status `+q, NoArg, `Then the call ends with status "success"`, "",
			"Waits for the call's final status (success or failure) and checks it; the wait is bounded by @within (default 2m).", callStatusStep),
		def(GroupConfirm, `the conversation record shows:`, TableArg, `Then the conversation record shows:`,
			"| field | value |\n| channel | WEBCHAT |\n| handoff | true |\n| num_turns | at least 2 |\n| metrics.BOOKED | true |\n| state.day | tuesday |",
			"The recorded conversation (Conversations API) has these fields; metrics.NAME, state.KEY, turns.count, turns.intents and turns.responses (what the agent said, contained) reach inside.", recordStep),
		def(GroupConfirm, `the handoff state `+q+` is `+q, NoArg, `Then the handoff state "reason" is "urgent_symptoms"`, "",
			"The handoff state stored for the conversation holds the value under the key of its data.", func(c *call) (*Step, error) {
				// A key built from ${...} is known only when the step
				// runs; its shape is checked now with each reference
				// blanked, as the state capture checks its key.
				if k, err := c.expand(0); err == nil {
					if bad := c.badKey(0, k, invalidKey); bad != nil {
						return nil, bad
					}
				}
				return confirmStep(c, func(c *call, x Expander, _ bool, cf *assert.Confirm) error {
					k, err := x(c.args[0])
					if err != nil {
						return err
					}
					if !reply.ValidPath(k) {
						return errors.New(invalidKey(c.args[0]))
					}
					v := c.args[1]
					cf.HandoffState = &assert.HandoffStateCheck{Pos: c.pos, Data: []assert.StateCheck{{Pos: c.pos, Key: k, Match: &assert.Text{Pos: c.pos, Exact: &v}}}}
					return nil
				})
			}),
		def(GroupConfirm, `the conversation has a recording`, NoArg, `Then the conversation has a recording`, "",
			"The conversation has a recording (its audio in the Conversations API); only voice conversations (VOICE-SIP) have one.", recordingStep(true)),
		def(GroupConfirm, `the conversation has no recording`, NoArg, `Then the conversation has no recording`, "",
			"The conversation has no recording: the Conversations API answers its audio with 404.", recordingStep(false)),
		def(GroupConfirm, `an? `+q+` webhook arrives`, NoArg, `Then a "handoff.created" webhook arrives`, "",
			"The event arrives, with a valid signature, for the conversation.", func(c *call) (*Step, error) {
				ev := strings.TrimSpace(c.args[0])
				if ev == "" || strings.Contains(ev, "${") {
					return nil, &Error{Message: fmt.Sprintf("step %q: the event must be written out (one of %s)", c.step, strings.Join(reply.WebhookEvents, ", ")), arg: 1}
				}
				st, err := confirmStep(c, func(c *call, _ Expander, _ bool, cf *assert.Confirm) error {
					cf.Webhooks = []assert.WebhookCheck{{Pos: c.pos, Event: ev}}
					return nil
				})
				if st != nil {
					st.Webhooks = []string{ev}
				}
				return st, err
			}),
	}
}

// recordingStep builds the Confirm step of a recording expected (want) or
// not.
func recordingStep(want bool) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		return confirmStep(c, func(c *call, _ Expander, _ bool, cf *assert.Confirm) error {
			cf.Recording = &assert.RecordingCheck{Pos: c.pos, Want: want}
			return nil
		})
	}
}

// probeStep builds a Probe step; the number and message are expanded when it
// runs, and checked against the probe numbers by the CLI before the run.
func probeStep(sms bool) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		st := c.newStep(Probe)
		// The agent number, when the step names one, is its last
		// argument.
		from := func(n int) string {
			if len(c.args) > n {
				return c.args[n]
			}
			return ""
		}
		if n := len(c.args) - 1; (sms && n == 2 || !sms && n == 1) && strings.TrimSpace(c.args[n]) == "" {
			return nil, &Error{Message: fmt.Sprintf("step %q: the agent number is empty", c.step),
				Hint: "write a number provisioned for the project, or leave the from part out to let the platform pick one", arg: n + 1}
		}
		if sms {
			st.Probe = &ProbeSpec{SMS: &SMSProbe{Pos: c.pos, Message: c.args[0], To: c.args[1], AgentNumber: from(2)}}
			if strings.TrimSpace(st.Probe.SMS.Message) == "" {
				return nil, &Error{Message: fmt.Sprintf("step %q: the SMS text must not be empty", c.step), Hint: "it becomes the agent's greeting", arg: 1}
			}
		} else {
			st.Probe = &ProbeSpec{Call: &CallProbe{Pos: c.pos, To: c.args[0], AgentNumber: from(1)}, Within: DefaultProbeWithin}
		}
		for _, a := range c.args {
			if _, err := syntaxOnly(a); err != nil {
				return nil, err
			}
		}
		return st, nil
	}
}

func callStatusStep(c *call) (*Step, error) {
	status := c.args[0]
	if status != reply.CallSuccess && status != reply.CallFailure {
		return nil, &Error{Message: fmt.Sprintf("step %q: %q is not a final call status", c.step, status),
			Hint: "write success or failure; queued and calling are not final", arg: 1}
	}
	st := c.newStep(CallStatus)
	st.Status = &StatusSpec{Want: status, Pos: c.pos}
	return st, nil
}

// confirmStep builds a Confirm step whose checks fill builds each time it
// runs, with the session's expander; it is built once now with a
// syntax-only expander (compiling true) so bad arguments are load errors.
func confirmStep(c *call, fill func(c *call, x Expander, compiling bool, cf *assert.Confirm) error) (*Step, error) {
	st := c.newStep(Confirm)
	build := func(x Expander, compiling bool) (*assert.Confirm, error) {
		cf := &assert.Confirm{Pos: c.pos}
		if err := fill(c, x, compiling, cf); err != nil {
			return nil, err
		}
		return cf, nil
	}
	st.Confirm = func(x Expander) (*assert.Confirm, error) { return build(x, false) }
	if _, err := build(syntaxOnly, true); err != nil {
		if se, ok := err.(*Error); ok {
			return nil, se
		}
		return nil, &Error{Message: fmt.Sprintf("step %q: %v", c.step, err), err: err}
	}
	return st, nil
}

// recordStep reads the | field | value | table of `the conversation record
// shows:`. Which fields exist and how each is compared (text, number,
// boolean) is assert.ConversationFields, the table the YAML decoder of
// `confirm: conversation:` reads too.
func recordStep(c *call) (*Step, error) {
	rows, err := c.pairs("field", "value")
	if err != nil {
		return nil, err
	}
	return confirmStep(c, func(c *call, x Expander, compiling bool, cf *assert.Confirm) error {
		cc := &assert.ConversationChecks{Pos: c.pos}
		for _, r := range rows {
			if err := recordRow(c, cc, c.rowPos(r.row), r.key, r.value, x, compiling); err != nil {
				cell := 1
				if v, ok := errors.AsType[*badValue](err); ok {
					cell, err = 2, v.err
				}
				return &Error{Message: fmt.Sprintf("step %q: row | %s | %s |: %v", c.step, r.key, r.value, err), Hint: hintOf(err), err: err, Row: r.row, Cell: cell}
			}
		}
		cf.Conversation = cc
		return nil
	})
}

// hinted is an error with a hint for the step's Error.
type hinted struct{ msg, hint string }

// badValue is a record row's error in its value cell, not its field's.
type badValue struct{ err error }

func (b *badValue) Error() string { return b.err.Error() }
func (b *badValue) Unwrap() error { return b.err }

func (h *hinted) Error() string { return h.msg }

func hintOf(err error) string {
	if h, ok := err.(*hinted); ok {
		return h.hint
	}
	return ""
}

// recordRow adds the check of one row, written at pos, to cc.
func recordRow(c *call, cc *assert.ConversationChecks, pos diag.Pos, rawField, value string, x Expander, compiling bool) error {
	field, err := x(strings.TrimSpace(rawField))
	if err != nil {
		return err
	}
	// Numbers and booleans are parsed after expansion; while compiling, a
	// cell built from ${...} is known only at run time.
	scalar := func() (string, bool, error) {
		if compiling && strings.Contains(value, "${") {
			return "", false, nil
		}
		v, err := x(value)
		return strings.TrimSpace(v), err == nil, err
	}
	inValue := func(err error) error {
		if err == nil {
			return nil
		}
		return &badValue{err}
	}
	head, rest, nested := strings.Cut(field, ".")
	if nested {
		if rest == "" {
			return &hinted{msg: fmt.Sprintf("%s. names no member", head), hint: "write " + head + ".NAME"}
		}
		switch head {
		case "metrics":
			v := value
			cc.Metrics = append(cc.Metrics, assert.MetricCheck{Pos: pos, Name: rest, Match: &assert.Text{Pos: pos, Exact: &v}})
			return nil
		case "state":
			if !reply.ValidPath(rest) {
				return errors.New(invalidStateKey(rest))
			}
			v := value
			cc.State = append(cc.State, assert.StateCheck{Pos: pos, Key: rest, Match: &assert.Text{Pos: pos, Exact: &v}})
			return nil
		case "turns":
			if cc.Turns == nil {
				cc.Turns = &assert.TurnsCheck{Pos: pos}
			}
			switch rest {
			case "count":
				v, ok, err := scalar()
				if err != nil || !ok {
					return inValue(err)
				}
				n, err := parseCount(field, v)
				if err != nil {
					return inValue(err)
				}
				n.Pos = pos
				cc.Turns.Count = n
				return nil
			case "intents":
				var names []string
				for s := range strings.SplitSeq(value, ",") {
					if s = strings.TrimSpace(s); s != "" {
						names = append(names, s)
					}
				}
				if len(names) == 0 {
					return inValue(&hinted{msg: "turns.intents lists no intent", hint: "write the intents found in some turn, separated by commas"})
				}
				cc.Turns.Intents = &assert.IntentsCheck{Pos: pos, Includes: names}
				return nil
			case "responses":
				// Contains, not equals: the rows of a call's transcript
				// are many, and a designer checks what was said in it.
				if strings.TrimSpace(value) == "" {
					return inValue(&hinted{msg: "turns.responses has no text", hint: "write what the agent said in some turn"})
				}
				cc.Turns.Responses = &assert.Text{Pos: pos, Contains: &value}
				return nil
			}
			return &hinted{msg: fmt.Sprintf("unknown field turns.%s", rest), hint: "write turns.count, turns.intents or turns.responses"}
		}
		if _, known := assert.ConversationFieldKind(head); known {
			return &hinted{msg: fmt.Sprintf("%s has no members", head), hint: "write " + head + " alone"}
		}
		return unknownField(field)
	}
	kind, known := assert.ConversationFieldKind(field)
	if !known {
		return unknownField(field)
	}
	switch kind {
	case assert.TextField:
		v := value
		cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: pos, Field: field, Text: &assert.Text{Pos: pos, Exact: &v}})
	case assert.NumberField:
		v, ok, err := scalar()
		if err != nil || !ok {
			return inValue(err)
		}
		n, err := parseCount(field, v)
		if err != nil {
			return inValue(err)
		}
		n.Pos = pos
		cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: pos, Field: field, Number: n})
	case assert.BoolField:
		v, ok, err := scalar()
		if err != nil || !ok {
			return inValue(err)
		}
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return inValue(&hinted{msg: fmt.Sprintf("%s is true or false, not %q", field, v), hint: "write true or false"})
		}
		cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: pos, Field: field, Bool: &assert.Bool{Pos: pos, Value: b}})
	default:
		return &hinted{msg: fmt.Sprintf("%s is checked member by member", field), hint: "write " + field + ".NAME (turns.count, turns.intents, turns.responses for turns)"}
	}
	return nil
}

// parseNumber reads the number forms of a table cell: N, "at least N",
// "at most N" and "between N and M" (inclusive), the words for YAML's
// N, {min: N}, {max: N} and {min: N, max: M}.
func parseNumber(s string) (*assert.Number, error) {
	bad := &hinted{msg: fmt.Sprintf("%q is not a number", s), hint: `write 4, "at least 1", "at most 10" or "between 1 and 10"`}
	num := func(t string) (*float64, bool) {
		v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return nil, false
		}
		return &v, true
	}
	low := strings.ToLower(strings.TrimSpace(s))
	switch {
	case strings.HasPrefix(low, "at least "):
		v, ok := num(low[len("at least "):])
		if !ok {
			return nil, bad
		}
		return &assert.Number{Min: v}, nil
	case strings.HasPrefix(low, "at most "):
		v, ok := num(low[len("at most "):])
		if !ok {
			return nil, bad
		}
		return &assert.Number{Max: v}, nil
	case strings.HasPrefix(low, "between "):
		a, b, found := strings.Cut(low[len("between "):], " and ")
		lo, ok1 := num(a)
		hi, ok2 := num(b)
		if !found || !ok1 || !ok2 {
			return nil, bad
		}
		if *lo > *hi {
			return nil, fmt.Errorf("between %v and %v: the first bound is above the second", *lo, *hi)
		}
		return &assert.Number{Min: lo, Max: hi}, nil
	}
	v, ok := num(low)
	if !ok {
		return nil, bad
	}
	return &assert.Number{Value: v}, nil
}

// parseCount is parseNumber for a count of the record, each bound held
// to assert.CountBound as the YAML decoder holds it.
func parseCount(field, s string) (*assert.Number, error) {
	n, err := parseNumber(s)
	if err != nil {
		return nil, err
	}
	for _, b := range []*float64{n.Value, n.Min, n.Max} {
		if b == nil {
			continue
		}
		if err := assert.CountBound(*b); err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
	}
	return n, nil
}

// unknownField names the closest Conversation summary field, by the one
// "did you mean" rule of agenttest (diag.DidYouMean).
func unknownField(name string) error {
	names := make([]string, len(assert.ConversationFields))
	for i, f := range assert.ConversationFields {
		names[i] = f.Name
	}
	hint := diag.DidYouMean(name, names)
	if hint == "" {
		hint = "the fields are those of the Conversation summary: run 'agenttest steps' or see docs/confirmations.md"
	}
	return &hinted{msg: fmt.Sprintf("unknown field %q", name), hint: hint}
}

// badKey is the problem of argument i when k, its expansion, is no path
// of dot-separated members (reply.ValidPath): refused at its quote, in
// the words invalid gives the argument as written. It is nil when k is
// one.
func (c *call) badKey(i int, k string, invalid func(string) string) *Error {
	if reply.ValidPath(k) {
		return nil
	}
	return &Error{Message: fmt.Sprintf("step %q: %s", c.step, invalid(c.args[i])), arg: i + 1}
}

// invalidStateKey is the problem with a state key that is not a path of
// dot-separated members, for the confirmation checks and the state
// capture alike.
func invalidStateKey(key string) string {
	return "invalid state " + strings.TrimPrefix(invalidKey(key), "invalid ")
}

// invalidKey is the problem with a key of the handoff state's data that
// is not a path of dot-separated members.
func invalidKey(key string) string {
	return fmt.Sprintf("invalid key %q: write dot-separated members, e.g. caller.id", key)
}
