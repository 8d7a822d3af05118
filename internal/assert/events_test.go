package assert

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/reply"
)

// handoffTurn is a Messaging turn that handed off to a live agent, as the
// client reads the simulator's events.
func handoffTurn() *reply.Messaging {
	return &reply.Messaging{
		Events: []reply.Event{
			{ID: "6", Type: "EVENT_TYPE_USER_MESSAGE"},
			{ID: "7", Type: "EVENT_TYPE_VENDOR_AGENT_TYPING"},
			{ID: "8", Type: "EVENT_TYPE_VENDOR_AGENT_MESSAGE", Text: "Transferring you now."},
			{ID: "9", Type: "EVENT_TYPE_HANDOFF_INITIATED"},
			{ID: "10", Type: "EVENT_TYPE_LIVE_AGENT_JOINED"},
			{ID: "11", Type: "EVENT_TYPE_LIVE_AGENT_MESSAGE", Text: "Hi, this is Sam."},
			{ID: "12", Type: "EVENT_TYPE_VENDOR_AGENT_TYPING"},
		},
		Joined:  true,
		Handoff: &reply.MessagingHandoff{Destination: "billing_team", Joined: true, LiveAgent: "Sam"},
	}
}

// acmeTurn is handoffTurn on a platform whose brand word is Acme.
func acmeTurn() *reply.Messaging {
	m := handoffTurn()
	m.Brand = "ACME"
	for i, e := range m.Events {
		m.Events[i].Type = strings.Replace(e.Type, "VENDOR", "ACME", 1)
	}
	return m
}

// failedTurn is a Messaging turn answered with a failed handoff: an error
// system message, then the session's end.
func failedTurn() *reply.Messaging {
	return &reply.Messaging{
		Events: []reply.Event{
			{ID: "3", Type: "EVENT_TYPE_HANDOFF_INITIATED"},
			{ID: "4", Type: reply.EventTypeSystemMessage, Level: reply.SystemLevelError, Text: "Sorry, we could not connect you to an agent. Please try again."},
			{ID: "5", Type: "EVENT_TYPE_SESSION_END"},
		},
		System:       []reply.SystemMessage{{Level: reply.SystemLevelError, Text: "Sorry, we could not connect you to an agent. Please try again."}},
		SessionEnded: true,
		EndReason:    "handoff_failed",
		Handoff:      &reply.MessagingHandoff{Destination: "billing_team"},
	}
}

func TestCheckMessaging(t *testing.T) {
	type testCase struct {
		name string
		// msg is the turn's events; nil checks a debug-chat reply.
		msg  *reply.Messaging
		exp  Expect
		want []Failure
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		obs := Observation{Result: &reply.TurnResult{Response: "Transferring you now.", ConversationEnded: tc.msg != nil && tc.msg.SessionEnded}, Messaging: tc.msg}
		got := Check(&tc.exp, obs, vars(map[string]string{"live": "EVENT_TYPE_LIVE_AGENT_JOINED", "what": "could not connect"}))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("failures:\n got  %#v\n want %#v", got, tc.want)
		}
	}
	handoffTypes := "EVENT_TYPE_USER_MESSAGE > EVENT_TYPE_VENDOR_AGENT_TYPING > EVENT_TYPE_VENDOR_AGENT_MESSAGE > EVENT_TYPE_HANDOFF_INITIATED > EVENT_TYPE_LIVE_AGENT_JOINED > EVENT_TYPE_LIVE_AGENT_MESSAGE > EVENT_TYPE_VENDOR_AGENT_TYPING"
	noLive := "Sorry, we could not connect you to an agent. Please try again."
	cases := []testCase{
		{name: "events include passes, with a reference", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Includes: []string{"${live}", "EVENT_TYPE_HANDOFF_INITIATED"}}}},
		// A type written with the reference's VENDOR is the platform's,
		// its own brand word written out too.
		{name: "events of another brand pass as the reference writes them", msg: acmeTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Includes: []string{"EVENT_TYPE_VENDOR_AGENT_MESSAGE", "EVENT_TYPE_ACME_AGENT_TYPING", "${live}"},
				Sequence: []string{"EVENT_TYPE_VENDOR_AGENT_MESSAGE", "EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_VENDOR_AGENT_TYPING"},
				Excludes: []string{"EVENT_TYPE_VENDOR_AGENT_JOINED", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK"}}}},
		{name: "events of another brand fail as the platform names them", msg: acmeTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Excludes: []string{"EVENT_TYPE_VENDOR_AGENT_MESSAGE"}, Includes: []string{"EVENT_TYPE_VENDOR_AGENT_JOINED"}}},
			want: []Failure{
				{Pos: at(1), Key: "events.includes", Message: "no EVENT_TYPE_ACME_AGENT_JOINED event in the turn",
					Expected: "includes EVENT_TYPE_ACME_AGENT_JOINED", Actual: strings.ReplaceAll(handoffTypes, "VENDOR", "ACME")},
				{Pos: at(1), Key: "events.excludes", Message: "the turn has an excluded EVENT_TYPE_ACME_AGENT_MESSAGE event",
					Expected: "excludes EVENT_TYPE_ACME_AGENT_MESSAGE", Actual: strings.ReplaceAll(handoffTypes, "VENDOR", "ACME")}}},
		{name: "events include fails", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Includes: []string{"EVENT_TYPE_SESSION_END"}}},
			want: []Failure{{Pos: at(1), Key: "events.includes", Message: "no EVENT_TYPE_SESSION_END event in the turn",
				Expected: "includes EVENT_TYPE_SESSION_END", Actual: handoffTypes}}},
		{name: "events exclude fails", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Excludes: []string{"EVENT_TYPE_HANDOFF_INITIATED"}}},
			want: []Failure{{Pos: at(1), Key: "events.excludes", Message: "the turn has an excluded EVENT_TYPE_HANDOFF_INITIATED event",
				Expected: "excludes EVENT_TYPE_HANDOFF_INITIATED", Actual: handoffTypes}}},
		{name: "events sequence passes with gaps", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Sequence: []string{"EVENT_TYPE_VENDOR_AGENT_MESSAGE", "EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_VENDOR_AGENT_TYPING"}}}},
		{name: "events sequence out of order fails", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Sequence: []string{"EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_HANDOFF_INITIATED"}}},
			want: []Failure{{Pos: at(1), Key: "events.sequence", Message: "no EVENT_TYPE_HANDOFF_INITIATED event after EVENT_TYPE_LIVE_AGENT_JOINED",
				Expected: "EVENT_TYPE_LIVE_AGENT_JOINED > EVENT_TYPE_HANDOFF_INITIATED (in this order, gaps allowed)", Actual: handoffTypes}}},
		{name: "events sequence missing an event fails on it", msg: handoffTurn(),
			exp: Expect{Events: &Events{Pos: at(1), Sequence: []string{"EVENT_TYPE_HANDOFF_INITIATED", "EVENT_TYPE_SESSION_END"}}},
			want: []Failure{{Pos: at(1), Key: "events.sequence", Message: "no EVENT_TYPE_SESSION_END event in the turn",
				Expected: "EVENT_TYPE_HANDOFF_INITIATED > EVENT_TYPE_SESSION_END (in this order, gaps allowed)", Actual: handoffTypes}}},
		{name: "system message contains with level passes", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Level: "error", Text: &Text{Pos: at(2), Contains: new("could not connect")}}}},
		{name: "system message of the full level name passes", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Level: reply.SystemLevelError}}},
		{name: "system message of another level fails", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Level: "info"}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "no system message of the turn is the expected one",
				Expected: "a system message at level info", Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive}}},
		{name: "system message text fails", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Text: &Text{Pos: at(2), Contains: new("high load")}}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "no system message of the turn is the expected one",
				Expected: `a system message whose text contains "high load"`, Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive}}},
		{name: "events of a turn with none", msg: &reply.Messaging{}, exp: Expect{Events: &Events{Pos: at(1), Includes: []string{"EVENT_TYPE_SESSION_END"}}},
			want: []Failure{{Pos: at(1), Key: "events.includes", Message: "no EVENT_TYPE_SESSION_END event in the turn",
				Expected: "includes EVENT_TYPE_SESSION_END", Actual: "(none)"}}},
		{name: "system message text with a reference passes", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Text: &Text{Contains: new("${what}")}}}},
		{name: "system message text with an unknown reference", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Text: &Text{Contains: new("${nope}")}}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: `cannot expand expected value: unknown variable "nope"`,
				Expected: `contains "${nope}"`, Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive, Unexpanded: true}}},
		{name: "system message text with a bad pattern", msg: failedTurn(),
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Text: &Text{Matches: new("(")}}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "invalid pattern /(/: error parsing regexp: missing closing ): `(`",
				Expected: "matches /(/", Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive}}},
		// A level is its last word, not any end of it.
		{name: "system message of a level's tail fails", msg: failedTurn(), exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true, Level: "ror"}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "no system message of the turn is the expected one",
				Expected: "a system message at level ror", Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive}}},
		// Actual shows the messages that broke the check, not the others.
		{name: "no system message at a level fails on that level's", msg: &reply.Messaging{System: []reply.SystemMessage{
			{Level: reply.SystemLevelError, Text: noLive}, {Level: "SYSTEM_MESSAGE_LEVEL_INFO", Text: "An agent will join shortly."}}},
			exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Level: "info"}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "the turn has an unexpected system message",
				Expected: "no system message at level info", Actual: "[SYSTEM_MESSAGE_LEVEL_INFO] An agent will join shortly."}}},
		{name: "no system message at a level passes on another level's", msg: failedTurn(), exp: Expect{SystemMessage: &SystemMessage{Pos: at(2), Level: "info"}}},
		{name: "system message none arrived", msg: handoffTurn(),
			exp:  Expect{SystemMessage: &SystemMessage{Pos: at(2), Expected: true}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "no system message in the turn", Expected: "a system message", Actual: "(none)"}}},
		{name: "no system message passes", msg: handoffTurn(), exp: Expect{SystemMessage: &SystemMessage{Pos: at(2)}}},
		{name: "no system message fails", msg: failedTurn(), exp: Expect{SystemMessage: &SystemMessage{Pos: at(2)}},
			want: []Failure{{Pos: at(2), Key: "system_message", Message: "the turn has an unexpected system message",
				Expected: "no system message", Actual: "[SYSTEM_MESSAGE_LEVEL_ERROR] " + noLive}}},
		{name: "session ended passes", msg: failedTurn(), exp: Expect{SessionEnded: &Bool{Pos: at(3), Value: true}}},
		{name: "session ended unexpectedly names the reason", msg: failedTurn(), exp: Expect{SessionEnded: &Bool{Pos: at(3), Value: false}},
			want: []Failure{{Pos: at(3), Key: "session_ended", Message: "the session ended unexpectedly (handoff_failed)", Expected: "false", Actual: "true"}}},
		{name: "session did not end", msg: handoffTurn(), exp: Expect{SessionEnded: &Bool{Pos: at(3), Value: true}},
			want: []Failure{{Pos: at(3), Key: "session_ended", Message: "the session did not end", Expected: "true", Actual: "false"}}},
		{name: "handoff from the events passes", msg: handoffTurn(),
			exp: Expect{Handoff: &Handoff{Pos: at(4), Expected: true, Destination: &Text{Pos: at(4), Exact: new("billing_team")}}}},
		{name: "no handoff over messaging fails on the events", msg: handoffTurn(), exp: Expect{Handoff: &Handoff{Pos: at(4)}},
			want: []Failure{{Pos: at(4), Key: "handoff", Message: "agent handed off unexpectedly", Expected: "no handoff", Actual: "handoff to billing_team"}}},
		// The events of a handoff need not name where to.
		{name: "unexpected handoff without a destination", msg: &reply.Messaging{Handoff: &reply.MessagingHandoff{}}, exp: Expect{Handoff: &Handoff{Pos: at(4)}},
			want: []Failure{{Pos: at(4), Key: "handoff", Message: "agent handed off unexpectedly", Expected: "no handoff", Actual: "a handoff"}}},
		{name: "handoff expected, none over messaging", msg: &reply.Messaging{Joined: true}, exp: Expect{Handoff: &Handoff{Pos: at(4), Expected: true}},
			want: []Failure{{Pos: at(4), Key: "handoff", Message: "agent did not hand off", Expected: "a handoff", Actual: "no handoff"}}},
		{name: "messaging checks on a debug-chat reply fail", exp: Expect{Events: &Events{Pos: at(5), Includes: []string{"X"}}, SessionEnded: &Bool{Pos: at(6)}},
			want: []Failure{
				{Pos: at(5), Key: "events", Message: "the reply came over debug chat, which has no Messaging events", Expected: "a turn over messaging (via: messaging)", Actual: "a debug-chat reply"},
				{Pos: at(6), Key: "session_ended", Message: "the reply came over debug chat, which has no Messaging events", Expected: "a turn over messaging (via: messaging)", Actual: "a debug-chat reply"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestExpectChannelKeys(t *testing.T) {
	e := &Expect{Pos: at(1), Trace: &Trace{Pos: at(2)}, State: []StateCheck{{Pos: at(3), Key: "k"}}, Delayed: &Bool{},
		Events: &Events{Pos: at(4)}, SystemMessage: &SystemMessage{Pos: at(5)}, Response: &Text{}}
	if got, want := e.DebugChatOnly(), []KeyAt{{"trace", at(2)}, {"state", at(3)}, {"delayed", at(1)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("DebugChatOnly: %v, want %v", got, want)
	}
	if got, want := e.MessagingOnly(), []KeyAt{{"events", at(4)}, {"system_message", at(5)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("MessagingOnly: %v, want %v", got, want)
	}
	// Every key set: each list names all its keys, in its order.
	all := &Expect{Pos: at(1), Response: &Text{}, Trace: &Trace{}, Node: &Text{}, Flow: &Text{}, Step: &Text{},
		State: []StateCheck{{}}, Handoff: &Handoff{}, Ended: &Bool{}, Delayed: &Bool{}, Metrics: []MetricCheck{{}},
		Functions: &Functions{}, Topics: &Topics{}, LatencyMS: &Latency{}, Lang: &Lang{}, Metadata: []MetadataCheck{{}},
		Events: &Events{}, SystemMessage: &SystemMessage{}, SessionEnded: &Bool{}}
	for _, list := range []struct {
		name string
		got  []KeyAt
		want []string
	}{{"DebugChatOnly", all.DebugChatOnly(), DebugChatKeys}, {"MessagingOnly", all.MessagingOnly(), MessagingKeys}} {
		var got []string
		for _, k := range list.got {
			got = append(got, k.Key)
			if k.Pos != at(1) {
				t.Errorf("%s: %s at %v, want the Expect's position", list.name, k.Key, k.Pos)
			}
		}
		if !reflect.DeepEqual(got, list.want) {
			t.Errorf("%s of every key: %v, want %v", list.name, got, list.want)
		}
	}
	busy := reply.SystemMessage{Text: "Our system is experiencing high load.", Level: "SYSTEM_MESSAGE_LEVEL_ERROR"}
	contains := func(s string) *Text { return &Text{Contains: &s} }
	for _, tc := range []struct {
		e    *Expect
		want bool
	}{
		{nil, false},
		{&Expect{Response: &Text{}}, false},
		{&Expect{SystemMessage: &SystemMessage{Expected: true}}, true},
		{&Expect{SystemMessage: &SystemMessage{}}, false},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Level: "error"}}, true},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Level: "warning"}}, false},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Text: contains("high load")}}, true},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Text: contains("no agent")}}, false},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Text: contains("${load}")}}, true},
		{&Expect{SystemMessage: &SystemMessage{Expected: true, Text: contains("${unset}")}}, true},
		{&Expect{Events: &Events{Sequence: []string{reply.EventTypeSystemMessage}}}, true},
		{&Expect{Events: &Events{Includes: []string{reply.EventTypeSystemMessage}}}, true},
		{&Expect{Events: &Events{Excludes: []string{reply.EventTypeSystemMessage}}}, false},
		{&Expect{Events: &Events{Includes: []string{"EVENT_TYPE_SESSION_END"}}}, false},
	} {
		expand := func(s string) (string, error) {
			if s == "${unset}" {
				return "", errors.New("unset")
			}
			return strings.ReplaceAll(s, "${load}", "high load"), nil
		}
		if got := tc.e.ClaimsSystemMessage(busy, expand); got != tc.want {
			t.Errorf("ClaimsSystemMessage(%+v) = %v", tc.e, got)
		}
	}
	for _, tc := range []struct {
		e    *Expect
		want bool
	}{
		{nil, false},
		{&Expect{Response: &Text{}}, false},
		{&Expect{SessionEnded: &Bool{Value: true}}, true},
		{&Expect{SessionEnded: &Bool{}}, false},
		{&Expect{Ended: &Bool{Value: true}}, true},
		{&Expect{Ended: &Bool{}}, false},
		{&Expect{Events: &Events{Sequence: []string{reply.EventTypeSystemMessage, reply.EventTypeSessionEnd}}}, true},
		{&Expect{Events: &Events{Includes: []string{"EVENT_TYPE_SESSION_EXPIRED"}}}, true},
		{&Expect{Events: &Events{Excludes: []string{reply.EventTypeSessionEnd}}}, false},
	} {
		if got := tc.e.ExpectsEnd(); got != tc.want {
			t.Errorf("ExpectsEnd(%+v) = %v", tc.e, got)
		}
	}
}

// The events check reads a type as the platform names it without
// changing the scenario's own list: the same scenario checked on a
// platform of the reference's brand after one of another still passes.
func TestEventsNamedLeaveTheScenario(t *testing.T) {
	t.Parallel()
	exp := Expect{Events: &Events{Includes: []string{"EVENT_TYPE_VENDOR_AGENT_MESSAGE"}, Excludes: []string{"EVENT_TYPE_VENDOR_AGENT_JOINED"},
		Sequence: []string{"EVENT_TYPE_VENDOR_AGENT_TYPING"}}}
	for _, m := range []*reply.Messaging{acmeTurn(), handoffTurn(), acmeTurn()} {
		if got := Check(&exp, Observation{Result: &reply.TurnResult{}, Messaging: m}, nil); len(got) > 0 {
			t.Errorf("brand %q: %+v", m.Brand, got)
		}
	}
	if exp.Events.Includes[0] != "EVENT_TYPE_VENDOR_AGENT_MESSAGE" || exp.Events.Excludes[0] != "EVENT_TYPE_VENDOR_AGENT_JOINED" || exp.Events.Sequence[0] != "EVENT_TYPE_VENDOR_AGENT_TYPING" {
		t.Errorf("the scenario's lists changed: %+v", exp.Events)
	}
}

// A list's named applies to each of its lists, equals too.
func TestListNamedEachList(t *testing.T) {
	t.Parallel()
	l := eventsList
	l.named = (&reply.Messaging{Brand: "ACME"}).Named
	c := &checker{}
	c.list(at(1), Parts{}, l, []string{"EVENT_TYPE_ACME_AGENT_JOINED"}, nil, nil, nil, []string{"EVENT_TYPE_VENDOR_AGENT_JOINED"})
	if len(c.fails) > 0 {
		t.Errorf("equals of the reference's name: %+v", c.fails)
	}
}
