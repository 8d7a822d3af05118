package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/steps"
)

// Final statuses a probe may expect.
var probeStatuses = []string{reply.CallSuccess, reply.CallFailure}

var confirmKeys = keySet{
	what: "confirm",
	keys: []string{"conversation", "handoff_state", "webhooks", "recording"},
	moved: map[string]string{
		"handoff":   "handoff is a field of the record: confirm: {conversation: {handoff: true}}",
		"state":     "state is a field of the record: confirm: {conversation: {state: {...}}}",
		"metrics":   "metrics is a field of the record: confirm: {conversation: {metrics: {...}}}",
		"num_turns": "num_turns is a field of the record: confirm: {conversation: {num_turns: N}}",
		"events":    "the events to expect are listed under webhooks: [...]",
	},
	means: map[string]string{
		"webhook": "webhooks",
		"audio":   "recording",
	},
}

// conversationKeys are the Conversation summary fields of the reference.
func conversationKeys() keySet {
	names := make([]string, len(assert.ConversationFields))
	for i, f := range assert.ConversationFields {
		names[i] = f.Name
	}
	return keySet{
		what: "confirm: conversation",
		keys: names,
		moved: map[string]string{
			"intents":       "intents are checked under turns: {intents: {includes: [...]}}",
			"handoff_state": "handoff_state is written next to conversation:, under confirm:",
			"webhooks":      "webhooks is written next to conversation:, under confirm:",
			"conversation":  "conversation: is written once, under confirm:",
			"response":      "reply checks belong to a turn's expect:; the record has turns: and its fields",
		},
	}
}

// confirm decodes `confirm:` into its Confirm step.
func (d *decoder) confirm(p pair) *steps.Step {
	fields, order, ok := d.object(p.Val, confirmKeys)
	if !ok {
		return nil
	}
	c := &assert.Confirm{Pos: d.pos(p.Key)}
	for _, f := range order {
		switch f.Name {
		case "conversation":
			c.Conversation = d.confirmConversation(f)
		case "handoff_state":
			c.HandoffState = d.handoffState(f)
		case "webhooks":
			c.Webhooks = d.webhooks(f)
		case "recording":
			if v, ok := d.boolean(f.Val, "recording"); ok {
				c.Recording = &assert.RecordingCheck{Pos: d.pos(f.Key), Want: v}
			}
		}
	}
	if len(fields) == 0 && len(order) == 0 {
		if n := d.resolve(p.Val); n != nil && len(n.Content) == 0 {
			d.warnf(p.Key, "confirm has no checks: add conversation:, handoff_state:, webhooks: or recording:")
		}
	}
	st := &steps.Step{Kind: steps.Confirm, Pos: c.Pos,
		Confirm: func(steps.Expander) (*assert.Confirm, error) { return c, nil }}
	for _, w := range c.Webhooks {
		if !slices.Contains(st.Webhooks, w.Event) {
			st.Webhooks = append(st.Webhooks, w.Event)
		}
	}
	return st
}

func (d *decoder) confirmConversation(p pair) *assert.ConversationChecks {
	_, order, ok := d.object(p.Val, conversationKeys())
	if !ok {
		return nil
	}
	cc := &assert.ConversationChecks{Pos: d.pos(p.Key)}
	for _, f := range order {
		kind, _ := assert.ConversationFieldKind(f.Name)
		what := "conversation." + f.Name
		switch kind {
		case assert.TextField:
			if t := d.matcherAt(f, what); t != nil {
				cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: d.pos(f.Key), Field: f.Name, Text: t})
			}
		case assert.NumberField:
			if n := d.numberCheck(f.Val, what); n != nil {
				n.Pos = d.pos(f.Key)
				cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: d.pos(f.Key), Field: f.Name, Number: n})
			}
		case assert.BoolField:
			if v, ok := d.boolean(f.Val, what); ok {
				cc.Fields = append(cc.Fields, assert.FieldCheck{Pos: d.pos(f.Key), Field: f.Name, Bool: &assert.Bool{Pos: d.pos(f.Key), Value: v}})
			}
		case assert.MetricsField:
			// The forms of expect: metrics, decoded by the same code.
			var e assert.Expect
			d.metrics(&e, f)
			cc.Metrics = e.Metrics
		case assert.StateField:
			cc.State = d.keyChecks(f, "conversation.state")
		case assert.TurnsField:
			cc.Turns = d.turnsCheck(f)
		}
	}
	if len(order) == 0 {
		if n := d.resolve(p.Val); n != nil && n.Kind == yaml.MappingNode && len(n.Content) == 0 {
			d.warnf(p.Key, "conversation has no checks")
		}
	}
	return cc
}

// numberCheck reads `N` or `{min: N, max: N}`, each bound a count of the
// record (assert.CountBound).
func (d *decoder) numberCheck(n *yaml.Node, what string) *assert.Number {
	n = d.resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		v, ok := d.recordCount(n, what)
		if !ok {
			return nil
		}
		return &assert.Number{Value: &v}
	}
	if n.Kind != yaml.MappingNode {
		d.errorHint(n, "write a number, or {min: N, max: N}", "%s must be a number or a range, not %s", what, kindName(n))
		return nil
	}
	fields, _, ok := d.object(n, keySet{what: what, keys: []string{"min", "max"}, moved: map[string]string{
		"value":  "write the number itself: " + strings.TrimPrefix(what, "conversation.") + ": N",
		"equals": "write the number itself: " + strings.TrimPrefix(what, "conversation.") + ": N",
		"count":  "write the number itself, or {min: N, max: N}",
	}})
	if !ok {
		return nil
	}
	out := &assert.Number{}
	if f, ok := fields["min"]; ok {
		if v, ok := d.recordCount(f.Val, what+": min"); ok {
			out.Min = &v
		}
	}
	if f, ok := fields["max"]; ok {
		if v, ok := d.recordCount(f.Val, what+": max"); ok {
			out.Max = &v
		}
	}
	if _, hasMin := fields["min"]; !hasMin {
		if _, hasMax := fields["max"]; !hasMax {
			if len(n.Content) == 0 {
				d.errorHint(n, "write {min: N}, {max: N} or both", "%s: the range has no bounds", what)
			}
			return nil
		}
	}
	if out.Min != nil && out.Max != nil && *out.Min > *out.Max {
		d.errorf(n, "%s: min %v is above max %v", what, *out.Min, *out.Max)
		return nil
	}
	return out
}

// recordCount reads a bound of a count of the record.
func (d *decoder) recordCount(n *yaml.Node, what string) (float64, bool) {
	v, ok := d.number(n, what)
	if !ok {
		return 0, false
	}
	if err := assert.CountBound(v); err != nil {
		d.errorf(n, "%s: %v", what, err)
		return 0, false
	}
	return v, true
}

// keyChecks reads key -> matcher or {present: bool}, in the order written,
// as expect: state does.
func (d *decoder) keyChecks(p pair, what string) []assert.StateCheck {
	ps, ok := d.pairs(p.Val, what)
	if !ok {
		return nil
	}
	if len(ps) == 0 {
		d.warnf(p.Key, "%s has no checks", what)
	}
	var out []assert.StateCheck
	for _, kv := range ps {
		w := what + "." + kv.Name
		if !reply.ValidPath(kv.Name) {
			d.errorf(kv.Key, "%s: invalid key %q: write dot-separated members, e.g. caller.id", what, kv.Name)
			continue
		}
		sc := assert.StateCheck{Pos: d.pos(kv.Key), Key: kv.Name}
		if present, isPresence := d.presence(kv.Val, w); isPresence {
			if present == nil {
				continue
			}
			sc.Present = present
		} else {
			sc.Match = d.stateMatcher(kv, w)
			if sc.Match == nil {
				continue
			}
		}
		out = append(out, sc)
	}
	return out
}

func (d *decoder) turnsCheck(p pair) *assert.TurnsCheck {
	fields, _, ok := d.object(p.Val, keySet{what: "conversation.turns", keys: []string{"count", "intents", "responses"},
		moved: map[string]string{"includes": "intents are checked under intents: {includes: [...]}"},
		means: map[string]string{"agent_response": "responses", "agent_responses": "responses"}})
	if !ok {
		return nil
	}
	t := &assert.TurnsCheck{Pos: d.pos(p.Key)}
	if f, ok := fields["count"]; ok {
		t.Count = d.numberCheck(f.Val, "conversation.turns: count")
		if t.Count != nil {
			t.Count.Pos = d.pos(f.Key)
		}
	}
	if f, ok := fields["intents"]; ok {
		t.Intents = d.intents(f)
	}
	if f, ok := fields["responses"]; ok {
		t.Responses = d.matcherAt(f, "conversation.turns.responses")
	}
	if len(fields) == 0 {
		d.warnf(p.Key, "turns has no checks: add count:, intents: or responses:")
	}
	return t
}

func (d *decoder) intents(p pair) *assert.IntentsCheck {
	n := d.resolve(p.Val)
	if n == nil {
		return nil
	}
	ic := &assert.IntentsCheck{Pos: d.pos(p.Key)}
	if n.Kind == yaml.SequenceNode {
		// A bare list reads as includes, like trace: [A, B].
		ic.Includes, _ = d.strList(n, "turns: intents", false)
		return ic
	}
	fields, _, ok := d.object(n, keySet{what: "turns: intents", keys: []string{"includes", "excludes"}})
	if !ok {
		return nil
	}
	if f, ok := fields["includes"]; ok {
		ic.Includes, _ = d.strList(f.Val, "turns: intents: includes", false)
	}
	if f, ok := fields["excludes"]; ok {
		ic.Excludes, _ = d.strList(f.Val, "turns: intents: excludes", false)
	}
	if len(fields) == 0 {
		d.errorf(n, "intents has no checks: add includes or excludes")
	}
	return ic
}

func (d *decoder) handoffState(p pair) *assert.HandoffStateCheck {
	fields, _, ok := d.object(p.Val, keySet{what: "handoff_state", keys: []string{"data", "shared_id"},
		moved: map[string]string{
			"id": "the record is read by the scenario's conversation id; write shared_id: to read it by the integrator's id",
		},
		means: map[string]string{"sharedId": "shared_id"}})
	if !ok {
		return nil
	}
	h := &assert.HandoffStateCheck{Pos: d.pos(p.Key)}
	if f, ok := fields["shared_id"]; ok {
		if v, ok := d.str(f.Val, "handoff_state: shared_id"); ok {
			if strings.TrimSpace(v) == "" {
				d.errorf(f.Val, "handoff_state: shared_id must not be empty")
			}
			h.SharedID = v
		}
	}
	if f, ok := fields["data"]; ok {
		h.Data = d.keyChecks(f, "handoff_state.data")
	}
	return h
}

// webhooks reads the list of events to expect. The reference names four
// events and says others are "not shown", so an unknown name is a warning
// (it may be real) with the closest known name.
func (d *decoder) webhooks(p pair) []assert.WebhookCheck {
	n := d.resolve(p.Val)
	if n == nil {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
		if len(items) == 0 {
			d.errorf(n, "webhooks must list at least one event: %s", strings.Join(reply.WebhookEvents, ", "))
			return nil
		}
	}
	var out []assert.WebhookCheck
	seen := map[string]bool{}
	for _, it := range items {
		v, ok := d.scalar(it, "webhooks item")
		if !ok {
			continue
		}
		it = d.resolve(it)
		if seen[v] {
			d.warnf(it, "webhook event %s is listed twice", v)
			continue
		}
		seen[v] = true
		d.diags = webhookEvent(d.diags, d.pos(it), v)
		out = append(out, assert.WebhookCheck{Pos: d.pos(it), Event: v})
	}
	return out
}

// webhookEvent checks an event a confirmation awaits, at pos: in a YAML
// webhooks: list and in a feature's webhook step alike. An alert event is
// refused: it is of a rule, not of a conversation, so none arrives for
// the scenario's and the wait could only end in a failure of the agent.
// An event the reference does not name is a warning, with the closest one
// it names.
func webhookEvent(ds diag.Diagnostics, pos diag.Pos, event string) diag.Diagnostics {
	if event == reply.EventAlertsTriggered || event == reply.EventAlertsResolved {
		return ds.Append(diag.Diagnostic{Severity: diag.Error, Pos: pos,
			Message: fmt.Sprintf("webhook event %s carries no conversation: an alert rule fires it, not the scenario's conversation, so it cannot confirm one", event),
			Hint:    "confirm " + reply.EventConversationCompleted + " or " + reply.EventHandoffCreated + "; watch alerts with --gate-alerts"})
	}
	if slices.Contains(reply.WebhookEvents, event) {
		return ds
	}
	hint := diag.DidYouMean(event, reply.WebhookEvents)
	if hint == "" {
		hint = "the reference names " + strings.Join(reply.WebhookEvents, ", ")
	}
	return ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: pos,
		Message: fmt.Sprintf("webhook event %q is not one the reference names; it is expected as written", event), Hint: hint})
}

var probeKeys = keySet{
	what: "probe",
	keys: []string{"outbound_call", "sms", "expect_status", "within"},
	moved: map[string]string{
		"confirm": "confirm: is written next to probe:, in the scenario",
	},
	means: map[string]string{
		"call":     "outbound_call",
		"outbound": "outbound_call",
		"status":   "expect_status",
		"timeout":  "within",
	},
}

// probe decodes `probe:` into its steps: the Probe step, and for a call
// the CallStatus step that awaits its final status (success unless
// expect_status: says otherwise).
func (d *decoder) probe(p pair) []*steps.Step {
	fields, _, ok := d.object(p.Val, probeKeys)
	if !ok {
		return nil
	}
	at := d.pos(p.Key)
	pr := &steps.ProbeSpec{}
	status := &steps.Step{Kind: steps.CallStatus, Pos: at, Status: &steps.StatusSpec{Want: reply.CallSuccess, Pos: at}}
	call, hasCall := fields["outbound_call"]
	sms, hasSMS := fields["sms"]
	switch {
	case hasCall && hasSMS:
		d.errorHint(sms.Key, "write one probe per scenario", "a probe is an outbound_call or an sms, not both")
		return nil
	case !hasCall && !hasSMS:
		// A misspelt one (call:, outbound_calls:) was said by object,
		// with the name it meant.
		if v := d.resolve(p.Val); !probeKeys.tookFor(v, "outbound_call") && !probeKeys.tookFor(v, "sms") {
			d.errorHint(p.Key, "write probe: {outbound_call: {to: ...}} or probe: {sms: {to: ..., message: ...}}", "probe has neither outbound_call nor sms")
		}
		return nil
	case hasCall:
		pr.Call = d.callProbe(call)
		pr.Within = steps.DefaultProbeWithin
	default:
		pr.SMS = d.smsProbe(sms)
	}
	if f, ok := fields["expect_status"]; ok {
		if v, ok := d.scalar(f.Val, "probe: expect_status"); ok {
			switch {
			case hasSMS:
				d.errorf(f.Key, "expect_status applies to outbound_call probes: an SMS has no call status")
			case !slices.Contains(probeStatuses, v):
				hint := diag.DidYouMean(v, probeStatuses)
				if hint == "" {
					hint = "write success or failure; queued and calling are not final"
				}
				d.errorHint(f.Val, hint, "expect_status %q is not a final call status", v)
			default:
				status.Status = &steps.StatusSpec{Want: v, Pos: d.pos(f.Key)}
			}
		}
	}
	if f, ok := fields["within"]; ok {
		if hasSMS {
			// Of no effect, as a feature's @within on a scenario that
			// places no call.
			d.warnf(f.Key, "within bounds the wait for an outbound call's status; an SMS probe places no call")
		} else if w := d.duration(f.Val, "probe: within"); w > 0 {
			pr.Within = w
		}
	}
	if (hasCall && pr.Call == nil) || (hasSMS && pr.SMS == nil) {
		return nil
	}
	out := []*steps.Step{{Kind: steps.Probe, Pos: at, Probe: pr}}
	if pr.Call != nil {
		out = append(out, status)
	}
	return out
}

var callProbeKeys = keySet{what: "outbound_call", keys: []string{"to", "agent_number", "metadata"},
	means: map[string]string{"to_number": "to", "from": "agent_number", "number": "to"}}

var smsProbeKeys = keySet{what: "sms", keys: []string{"to", "message", "agent_number"},
	means: map[string]string{"to_number": "to", "number": "to", "text": "message", "body": "message", "from": "agent_number"}}

func (d *decoder) callProbe(p pair) *steps.CallProbe {
	fields, _, ok := d.object(p.Val, callProbeKeys)
	if !ok {
		return nil
	}
	cp := &steps.CallProbe{Pos: d.pos(p.Key)}
	to, ok := fields["to"]
	if !ok {
		if callProbeKeys.tookFor(d.resolve(p.Val), "to") {
			return nil
		}
		d.errorHint(p.Key, `write to: "+447700900001"`, "outbound_call needs to: (the number to call)")
		return nil
	}
	if cp.To = d.phone(to, "outbound_call: to"); cp.To == "" {
		return nil
	}
	if f, ok := fields["agent_number"]; ok {
		cp.AgentNumber = d.phone(f, "outbound_call: agent_number")
	}
	if f, ok := fields["metadata"]; ok {
		cp.Metadata = d.jsonObject(f, "outbound_call: metadata")
	}
	return cp
}

func (d *decoder) smsProbe(p pair) *steps.SMSProbe {
	fields, _, ok := d.object(p.Val, smsProbeKeys)
	if !ok {
		return nil
	}
	sp := &steps.SMSProbe{Pos: d.pos(p.Key)}
	ok = true
	to, has := fields["to"]
	if !has {
		if !smsProbeKeys.tookFor(d.resolve(p.Val), "to") {
			d.errorHint(p.Key, `write to: "+447700900002"`, "sms needs to: (the recipient)")
		}
		ok = false
	} else if sp.To = d.phone(to, "sms: to"); sp.To == "" {
		ok = false
	}
	msg, has := fields["message"]
	if !has {
		if !smsProbeKeys.tookFor(d.resolve(p.Val), "message") {
			d.errorHint(p.Key, `write message: "..."; it becomes the agent's greeting`, "sms needs message:")
		}
		ok = false
	} else if v, vok := d.str(msg.Val, "sms: message"); vok {
		if strings.TrimSpace(v) == "" {
			d.errorf(msg.Val, "sms: message must not be empty")
			ok = false
		}
		sp.Message = v
	} else {
		ok = false
	}
	if f, has := fields["agent_number"]; has {
		sp.AgentNumber = d.phone(f, "sms: agent_number")
	}
	if !ok {
		return nil
	}
	return sp
}

// phone reads a phone number: 6 to 15 digits, after an optional +, once
// the separators people write (spaces, dashes, dots, parentheses) are set
// aside; E.164 is what the reference advises. A number holding ${...} is
// checked at run time. The value is kept as written: the platform
// normalises it.
func (d *decoder) phone(p pair, what string) string {
	v, ok := d.str(p.Val, what)
	if !ok {
		return ""
	}
	if strings.Contains(v, "${") {
		return v
	}
	if !validPhone(v) {
		d.errorHint(p.Val, `write an E.164 number such as "+447700900001" (quote it, or YAML may read it as a number)`,
			"%s: %q is not a phone number", what, v)
		return ""
	}
	return v
}

func validPhone(v string) bool {
	digits := 0
	for i, r := range strings.TrimSpace(v) {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return false
		}
	}
	return digits >= 6 && digits <= 15
}

// jsonObject reads a mapping of arbitrary values (call metadata), as the
// platform will receive them in JSON.
func (d *decoder) jsonObject(p pair, what string) map[string]any {
	n := d.resolve(p.Val)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping, not %s", what, kindName(n))
		return nil
	}
	if !d.textKeys(n, what) {
		return nil
	}
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		d.errorHint(n, "keys must be plain text; values any YAML", "%s: %v", what, err)
		return nil
	}
	d.checkObjectRefs(n)
	return m
}

// textKeys refuses the keys, below the top level of the object at n, that
// YAML reads as other than text (`1:`, `true:`): such a mapping decodes
// to one JSON cannot encode, and the turn or call would fail unsent. The
// top level's keys decode as text.
func (d *decoder) textKeys(n *yaml.Node, what string) bool {
	ok := true
	var walk func(n *yaml.Node, top bool)
	walk = func(n *yaml.Node, top bool) {
		if n = d.resolve(n); n == nil {
			return
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				if !top && c.Tag != "!!str" && c.Tag != "!!merge" {
					d.errorHint(c, fmt.Sprintf("quote it: %q", c.Value), "%s: key %s is not text", what, c.Value)
					ok = false
				}
				continue
			}
			walk(c, false)
		}
	}
	walk(n, true)
	return ok
}

// checkObjectRefs checks the ${...} references of the strings of a nested
// value and lists its ${env:NAME} references (Suite.EnvRefs): its strings
// are expanded when the scenario runs, like any scalar's.
func (d *decoder) checkObjectRefs(n *yaml.Node) {
	n = d.resolve(n)
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		if n.Tag == "!!str" {
			d.envRefs.note(n.Value, d.scalarAt(n))
			d.checkRefs(n, n.Value)
			d.sc.read(n.Value, d.scalarAt(n))
		}
		return
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			// A key is sent as written.
			d.sc.unexpanded(func() { d.checkObjectRefs(c) })
			continue
		}
		d.checkObjectRefs(c)
	}
}

// probeScenario applies the rules of a probe scenario: it starts from the
// call or SMS, so it has no debug-chat turns or greeting; its checks are
// the call status and confirm:.
func (d *decoder) probeScenario(item *yaml.Node, sc *Scenario, fields map[string]pair, confirmed bool) {
	for _, key := range []string{"turns", "greeting"} {
		if f, ok := fields[key]; ok {
			d.errorHint(f.Key, "a probe scenario checks the record with confirm:; write a separate scenario for a debug chat",
				"a probe scenario has no %s: it starts from an outbound call or an SMS, not a debug chat", key)
		}
	}
	if f, ok := fields["start"]; ok {
		d.warnf(f.Key, "start: configures a debug-chat session and has no effect on a probe")
	}
	if pr := sc.Probe(); pr != nil && pr.SMS != nil && !confirmed {
		d.warnf(item, "probe scenario %q has no confirm: it only checks that the SMS is accepted", sc.Name)
	}
}

// confirmAfterFailedCall refuses each confirmation that follows the
// status step of a call expected to end in failure, in YAML and in a
// feature alike: a call that did not connect has no conversation, so the
// confirmation could never hold, and run, it failed the agent ("there is
// no conversation to confirm") on a call that did as the scenario asked.
func confirmAfterFailedCall(program []*steps.Step) diag.Diagnostics {
	var ds diag.Diagnostics
	failed := false
	for _, st := range program {
		switch {
		case st.Kind == steps.CallStatus && st.Status != nil:
			failed = st.Status.Want == reply.CallFailure
		case st.Kind == steps.Confirm && failed:
			ds = ds.Append(diag.Diagnostic{Severity: diag.Error, Pos: st.Pos,
				Message: "a confirmation after a call expected to end in failure has no conversation to confirm: a call that did not connect opens none",
				Hint:    "confirm in a scenario whose call is expected to succeed"})
		}
	}
	return ds
}

// smsConfirmations warns, in YAML and in a feature alike, of each check
// of an SMS probe's confirmation that waits for its conversation to end
// (in_progress: false, a conversation.completed event): the conversation
// an SMS opens stays open for the reply, and the platform ends it only
// after a day without one. Such a check waits out its bound and fails the
// agent, unless the agent ends the conversation itself. A recording it
// expects is refused: an SMS conversation has none.
func smsConfirmations(program []*steps.Step) diag.Diagnostics {
	var ds diag.Diagnostics
	warn := func(pos diag.Pos, what string) {
		ds = ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: pos,
			Message: what + " waits for the end of an SMS probe's conversation, which stays open for the reply: the platform ends it after a day without one",
			Hint:    "confirm in_progress: true, as the reply is awaited"})
	}
	sms := false
	for _, st := range program {
		switch {
		case st.Kind == steps.Probe:
			sms = st.Probe != nil && st.Probe.SMS != nil
		case st.Kind == steps.Confirm && sms && st.Confirm != nil:
			cf, err := st.Confirm(keepRefs)
			if err != nil {
				continue
			}
			if cc := cf.Conversation; cc != nil {
				for _, f := range cc.Fields {
					if f.Field == "in_progress" && f.Bool != nil && !f.Bool.Value {
						warn(f.Pos, "in_progress: false")
					}
				}
			}
			for _, w := range cf.Webhooks {
				if w.Event == reply.EventConversationCompleted {
					warn(w.Pos, "the "+w.Event+" event")
				}
			}
			if rc := cf.Recording; rc != nil && rc.Want {
				// The platform answers the audio of any conversation
				// that is not a call with 404: run, it failed the agent.
				ds = ds.Append(diag.Diagnostic{Severity: diag.Error, Pos: rc.Pos,
					Message: "an SMS probe's conversation has no recording: only voice conversations (VOICE-SIP) have one",
					Hint:    "confirm a recording after an outbound call, or a debug chat on the channel VOICE-SIP"})
			}
		}
	}
	return ds
}

// chatChannels are the channels the reference answers a recording of with
// 404: its chats, and SMS.
var chatChannels = []string{"WEBCHAT", "CHAT", "SMS"}

// chatRecordings refuses, in YAML and in a feature alike, each recording
// a debug chat's or a web chat's confirmation expects when the scenario's
// conversation is a chat: one over messaging (web chat), or one whose
// channel (start: channel, Given the channel) is WEBCHAT, CHAT or SMS.
// The platform answers a chat's audio with 404, so the check could never
// hold, and run, it failed the agent. A channel written with ${...}, or
// none (the platform's default, which the reference does not give), or
// one agenttest does not know, is left to the run.
func chatRecordings(sc *Scenario) diag.Diagnostics {
	var channel string
	switch {
	case sc.Messaging():
		channel = "WEBCHAT"
	case slices.Contains(chatChannels, sc.Start.Channel):
		channel = sc.Start.Channel
	default:
		return nil
	}
	var ds diag.Diagnostics
	for _, st := range sc.Steps {
		if st.Kind != steps.Confirm || st.Confirm == nil {
			continue
		}
		cf, err := st.Confirm(keepRefs)
		if err != nil || cf.Recording == nil || !cf.Recording.Want {
			continue
		}
		ds = ds.Append(diag.Diagnostic{Severity: diag.Error, Pos: cf.Recording.Pos,
			Message: fmt.Sprintf("scenario %q runs on the channel %s, whose conversations have no recording: only voice conversations (VOICE-SIP) have one", sc.Name, channel),
			Hint:    "open the debug chat on VOICE-SIP (start: {channel: VOICE-SIP}, Given the channel \"VOICE-SIP\"), or confirm recording: false"})
	}
	return ds
}

// duration reads a positive Go duration with a unit (2m, 90s).
func (d *decoder) duration(n *yaml.Node, what string) time.Duration {
	n = d.resolve(n)
	if n == nil {
		return 0
	}
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		d.errorHint(n, fmt.Sprintf("add a unit, e.g. %ss", n.Value), "%s: %s has no unit", what, n.Value)
		return 0
	}
	v, ok := d.scalar(n, what)
	if !ok {
		return 0
	}
	dur, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		d.errorHint(n, "write a Go duration such as 30s, 2m or 1m30s", "%s: %q is not a duration", what, v)
		return 0
	}
	if dur <= 0 {
		d.errorf(n, "%s must be above 0, not %s", what, v)
		return 0
	}
	return dur
}
