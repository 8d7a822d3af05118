package assert

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// record is the conversation the confirmation tests read.
func record() *reply.Conversation {
	return &reply.Conversation{
		ID: "conv-1", AccountID: "ws-sim00001", ProjectID: "clinic", Environment: "sandbox",
		StartedAt: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Channel: "WEBCHAT",
		InProgress: false, NumTurns: 4, TotalDuration: 30, Handoff: true,
		HandoffReason: "urgent symptoms", HandoffDestination: "on_call_nurse",
		Metrics: map[string][]string{"CALL_TURN": {"t1", "t2", "t3", "t4"}, "BOOKED": {"true"}},
		State:   map[string]any{"booking_code": "BK-42", "patient": map[string]any{"age": 41.0}, "call_sid": nil},
		Turns: []reply.ConversationTurn{
			{AgentResponse: "Hello"},
			{UserInput: "book", Intents: []string{"book_appointment"}},
			{UserInput: "chest pain", Intents: []string{"urgent_symptoms", "book_appointment"}},
			{UserInput: "ok"},
		},
	}
}

func TestCheckConversation(t *testing.T) {
	type testCase struct {
		name  string
		cc    *ConversationChecks
		conv  *reply.Conversation // nil: record()
		keys  []string            // failure keys, in order; none: passes
		msg   string              // part of the first message
		exact bool                // msg is the whole first message
		clear bool                // check a nil record
	}
	run := func(t *testing.T, tc testCase) {
		conv := tc.conv
		if conv == nil && !tc.clear {
			conv = record()
		}
		fails := CheckConversation(tc.cc, conv, nil)
		var keys []string
		for _, f := range fails {
			keys = append(keys, f.Key)
		}
		if strings.Join(keys, ",") != strings.Join(tc.keys, ",") {
			t.Fatalf("failure keys = %v, want %v (%+v)", keys, tc.keys, fails)
		}
		if tc.exact && fails[0].Message != tc.msg {
			t.Errorf("message %q, want %q", fails[0].Message, tc.msg)
		}
		if tc.msg != "" && !strings.Contains(fails[0].Message, tc.msg) {
			t.Errorf("message %q does not say %q", fails[0].Message, tc.msg)
		}
		for _, f := range fails {
			if f.Pos.IsZero() {
				t.Errorf("failure %s has no position", f.Key)
			}
		}
	}
	field := func(name string, fc FieldCheck) *ConversationChecks {
		fc.Field, fc.Pos = name, at(3)
		return &ConversationChecks{Pos: at(2), Fields: []FieldCheck{fc}}
	}
	for _, tc := range []testCase{
		{name: "number value passes", cc: field("num_turns", FieldCheck{Number: &Number{Value: new(float64(4))}})},
		{name: "number value fails", cc: field("num_turns", FieldCheck{Number: &Number{Value: new(float64(5))}}),
			keys: []string{"confirm.conversation.num_turns"}, msg: "conversation num_turns is 4, expected 5"},
		{name: "number range passes", cc: field("total_duration", FieldCheck{Number: &Number{Min: new(float64(10)), Max: new(float64(60))}})},
		{name: "number min fails", cc: field("num_ood", FieldCheck{Number: &Number{Min: new(float64(1))}}),
			keys: []string{"confirm.conversation.num_ood"}, msg: "num_ood is 0, expected at least 1"},
		{name: "bool passes", cc: field("handoff", FieldCheck{Bool: &Bool{Value: true}})},
		{name: "bool fails", cc: field("in_progress", FieldCheck{Bool: &Bool{Value: true}}),
			keys: []string{"confirm.conversation.in_progress"}, msg: "in_progress is false, expected true"},
		{name: "text exact passes", cc: field("channel", FieldCheck{Text: &Text{Exact: new("WEBCHAT")}})},
		{name: "text exact fails", cc: field("environment", FieldCheck{Text: &Text{Exact: new("live")}}),
			keys: []string{"confirm.conversation.environment"}, msg: "conversation environment is not the expected value"},
		{name: "text contains passes", cc: field("handoff_reason", FieldCheck{Text: &Text{Contains: new("urgent")}})},
		{name: "text contains fails", cc: field("handoff_destination", FieldCheck{Text: &Text{Contains: new("billing")}}),
			keys: []string{"confirm.conversation.handoff_destination"}, msg: "does not contain"},
		{name: "started_at renders ISO 8601", cc: field("started_at", FieldCheck{Text: &Text{Matches: new(`^2026-03-01T12:00:00\.000Z$`)}})},
		{name: "metric value and count pass", cc: &ConversationChecks{Pos: at(2), Metrics: []MetricCheck{
			{Pos: at(3), Name: "BOOKED", Match: &Text{Exact: new("true")}},
			{Pos: at(4), Name: "CALL_TURN", Count: new(4)},
		}}},
		{name: "metric fails", cc: &ConversationChecks{Pos: at(2), Metrics: []MetricCheck{
			{Pos: at(3), Name: "CALL_TURN", Count: new(2)},
			{Pos: at(4), Name: "HANDOFF_TO", Present: new(true)},
		}}, keys: []string{"confirm.conversation.metrics.CALL_TURN", "confirm.conversation.metrics.HANDOFF_TO"}, msg: "written 4 times, expected 2 times"},
		{name: "state passes", cc: &ConversationChecks{Pos: at(2), State: []StateCheck{
			{Pos: at(3), Key: "booking_code", Present: new(true)},
			{Pos: at(4), Key: "patient.age", Match: &Text{Exact: new("41")}},
			{Pos: at(5), Key: "ghost", Present: new(false)},
			{Pos: at(6), Key: "call_sid", Present: new(false)}, // null: not set
		}}},
		{name: "state fails", cc: &ConversationChecks{Pos: at(2), State: []StateCheck{
			{Pos: at(3), Key: "booking_code", Match: &Text{Matches: new(`^XX-`)}},
			{Pos: at(4), Key: "ghost", Present: new(true)},
			{Pos: at(5), Key: "call_sid", Present: new(true)},
		}}, keys: []string{"confirm.conversation.state.booking_code", "confirm.conversation.state.ghost", "confirm.conversation.state.call_sid"}, msg: `state "booking_code" does not match`},
		{name: "turns pass", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Count: &Number{Value: new(float64(4))},
			Intents: &IntentsCheck{Pos: at(4), Includes: []string{"book_appointment", "urgent_symptoms"}, Excludes: []string{"cancel"}}}}},
		{name: "turns fail", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Count: &Number{Min: new(float64(6))},
			Intents: &IntentsCheck{Pos: at(4), Includes: []string{"cancel"}, Excludes: []string{"urgent_symptoms"}}}},
			keys: []string{"confirm.conversation.turns.count", "confirm.conversation.turns.intents.includes", "confirm.conversation.turns.intents.excludes"},
			msg:  "conversation has 4 turns, expected at least 6"},
		// The agent's recorded text, one turn's response per line: what
		// an outbound call or an SMS said, which no reply shows.
		{name: "responses pass", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Responses: &Text{Pos: at(5), Exact: new("Hello")}}}},
		{name: "responses joined", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Responses: &Text{Pos: at(5), Equals: new("Hi\nBye")}}},
			conv: &reply.Conversation{ID: "c", Turns: []reply.ConversationTurn{{AgentResponse: "Hi"}, {UserInput: "x"}, {AgentResponse: "Bye"}}}},
		{name: "responses fail", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Responses: &Text{Pos: at(5), Contains: new("Goodbye")}}},
			keys: []string{"confirm.conversation.turns.responses"}, msg: "the recorded agent text does not contain the expected text"},
		{name: "hidden transcript is explained", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Count: &Number{Value: new(float64(4))}}},
			conv: &reply.Conversation{ID: "c", NumTurns: 4},
			keys: []string{"confirm.conversation.turns.count"}, msg: "transcript access may be off"},
		// A record that lists turns but counts none cannot judge a
		// num_turns check (UncountedTurns: the runner errors); one with
		// neither fails it.
		{name: "num_turns absent beside turns", cc: field("num_turns", FieldCheck{Number: &Number{Value: new(float64(1))}}),
			conv: &reply.Conversation{ID: "c", Turns: []reply.ConversationTurn{{UserInput: "hi"}}}},
		{name: "num_turns zero without turns", cc: field("num_turns", FieldCheck{Number: &Number{Value: new(float64(1))}}),
			conv: &reply.Conversation{ID: "c"},
			keys: []string{"confirm.conversation.num_turns"}, msg: "conversation num_turns is 0, expected 1", exact: true},
		{name: "no turns, none counted", cc: &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Count: &Number{Value: new(float64(4))}}},
			conv: &reply.Conversation{ID: "c"},
			keys: []string{"confirm.conversation.turns.count"}, msg: "conversation has 0 turns, expected 4", exact: true},
		{name: "no record", cc: &ConversationChecks{Pos: at(2)}, clear: true, keys: []string{"confirm.conversation"}, msg: "no conversation record"},
		{name: "nil checks", cc: nil},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestUncountedTurns: only a num_turns check, and only on a record that
// lists turns while it counts none, is one the record cannot judge.
func TestUncountedTurns(t *testing.T) {
	numTurns := FieldCheck{Pos: at(3), Field: "num_turns", Number: &Number{Min: new(float64(1))}}
	turns := []reply.ConversationTurn{{UserInput: "hi"}}
	for _, tc := range []struct {
		name string
		cc   *ConversationChecks
		conv *reply.Conversation
		want bool
	}{
		{name: "turns, none counted", cc: &ConversationChecks{Fields: []FieldCheck{numTurns}}, conv: &reply.Conversation{Turns: turns}, want: true},
		{name: "after another field", cc: &ConversationChecks{Fields: []FieldCheck{{Field: "channel", Text: &Text{Exact: new("SMS")}}, numTurns}}, conv: &reply.Conversation{Turns: turns}, want: true},
		{name: "turns counted", cc: &ConversationChecks{Fields: []FieldCheck{numTurns}}, conv: &reply.Conversation{NumTurns: 1, Turns: turns}},
		{name: "no turns", cc: &ConversationChecks{Fields: []FieldCheck{numTurns}}, conv: &reply.Conversation{}},
		{name: "another count", cc: &ConversationChecks{Fields: []FieldCheck{{Field: "num_ood", Number: &Number{Value: new(float64(0))}}}}, conv: &reply.Conversation{Turns: turns}},
		{name: "num_turns as text", cc: &ConversationChecks{Fields: []FieldCheck{{Field: "num_turns", Text: &Text{Exact: new("1")}}}}, conv: &reply.Conversation{Turns: turns}},
		{name: "no checks", conv: &reply.Conversation{Turns: turns}},
		{name: "no record", cc: &ConversationChecks{Fields: []FieldCheck{numTurns}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UncountedTurns(tc.cc, tc.conv)
			if (got != nil) != tc.want || got != nil && got.Field != "num_turns" {
				t.Fatalf("UncountedTurns = %+v, want a check: %t", got, tc.want)
			}
		})
	}
}

func TestCheckConversationOrderAndRefs(t *testing.T) {
	cc := &ConversationChecks{Pos: at(2),
		Fields: []FieldCheck{
			{Pos: at(5), Field: "channel", Text: &Text{Exact: new("VOICE-SIP")}},
			{Pos: at(3), Field: "id", Text: &Text{Exact: new("${conv}")}},
		},
		State: []StateCheck{{Pos: at(4), Key: "booking_code", Match: &Text{Exact: new("${code}")}}},
	}
	expand := func(s string) (string, error) {
		switch s {
		case "${conv}":
			return "conv-1", nil
		case "${code}":
			return "", fmt.Errorf("unknown variable ${code}")
		}
		return s, nil
	}
	fails := CheckConversation(cc, record(), expand)
	if len(fails) != 2 || fails[0].Key != "confirm.conversation.state.booking_code" || fails[1].Key != "confirm.conversation.channel" {
		t.Fatalf("failures = %+v, want the unresolved ref (line 4) then the channel (line 5)", fails)
	}
	if !strings.Contains(fails[0].Message, "${code}") {
		t.Errorf("message %q does not name the reference", fails[0].Message)
	}
}

func TestConversationInProgress(t *testing.T) {
	if (*ConversationChecks)(nil).InProgress() != nil {
		t.Error("nil checks ask for in_progress")
	}
	cc := &ConversationChecks{Fields: []FieldCheck{{Field: "in_progress", Bool: &Bool{Value: false}}}}
	if v := cc.InProgress(); v == nil || *v {
		t.Errorf("InProgress = %v, want false", v)
	}
	for _, f := range ConversationFields {
		if k, ok := ConversationFieldKind(f.Name); !ok || k != f.Kind {
			t.Errorf("kind of %s", f.Name)
		}
	}
	if _, ok := ConversationFieldKind("numTurns"); ok {
		t.Error("numTurns is not a reference name")
	}
}

func TestCheckHandoffState(t *testing.T) {
	hs := &reply.HandoffState{ID: "conv-1", SharedID: "case-9", Data: map[string]any{"reason": "urgent_symptoms", "caller": map[string]any{"id": "P-7"}}}
	type testCase struct {
		name string
		hc   *HandoffStateCheck
		hs   *reply.HandoffState
		keys []string
		msg  string
	}
	run := func(t *testing.T, tc testCase) {
		fails := CheckHandoffState(tc.hc, tc.hs, nil)
		var keys []string
		for _, f := range fails {
			keys = append(keys, f.Key)
		}
		if strings.Join(keys, ",") != strings.Join(tc.keys, ",") {
			t.Fatalf("failure keys = %v, want %v (%+v)", keys, tc.keys, fails)
		}
		if tc.msg != "" && !strings.Contains(fails[0].Message, tc.msg) {
			t.Errorf("message %q does not say %q", fails[0].Message, tc.msg)
		}
	}
	for _, tc := range []testCase{
		{name: "passes", hs: hs, hc: &HandoffStateCheck{Pos: at(2), Data: []StateCheck{
			{Pos: at(3), Key: "reason", Match: &Text{Exact: new("urgent_symptoms")}},
			{Pos: at(4), Key: "caller.id", Present: new(true)},
		}}},
		{name: "value fails", hs: hs, hc: &HandoffStateCheck{Pos: at(2), Data: []StateCheck{
			{Pos: at(3), Key: "reason", Match: &Text{Exact: new("billing")}},
		}}, keys: []string{"confirm.handoff_state.data.reason"}, msg: `handoff data "reason" is not the expected value`},
		{name: "missing key", hs: hs, hc: &HandoffStateCheck{Pos: at(2), Data: []StateCheck{{Pos: at(3), Key: "queue"}}},
			keys: []string{"confirm.handoff_state.data.queue"}, msg: `handoff data has no key "queue"`},
		{name: "no record by shared id", hc: &HandoffStateCheck{Pos: at(2), SharedID: "case-1"},
			keys: []string{"confirm.handoff_state"}, msg: `shared id "case-1"`},
		{name: "existence only", hs: hs, hc: &HandoffStateCheck{Pos: at(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestWebhookFailure(t *testing.T) {
	w := WebhookCheck{Pos: at(7), Event: "handoff.created"}
	f := WebhookFailure(w, fmt.Errorf("no verified event arrived: 1 delivery rejected: signature mismatch: %w", context.DeadlineExceeded))
	if f.Key != "confirm.webhooks.handoff.created" || f.Pos != w.Pos || !strings.Contains(f.Message, "signature mismatch") {
		t.Errorf("failure = %+v", f)
	}
	if f := WebhookFailure(w, nil); !strings.Contains(f.Message, "did not arrive") {
		t.Errorf("failure = %+v", f)
	}
}

// TestConversationFieldsReadTheirOwn: every scalar field of the reference
// is read from its own member of the record. On a record whose fields all
// differ, a check of each field's own value passes, and one of another
// value fails at the check's line naming the field, with both values: a
// field read from its neighbour (account_id from id, total_duration from
// vendor_duration) passed checks that should fail and failed ones that
// should pass, the diff naming the wrong value.
func TestConversationFieldsReadTheirOwn(t *testing.T) {
	conv := &reply.Conversation{
		ID: "conv-1", AccountID: "ws-1", ProjectID: "proj-1", VariantID: "var-1", VariantName: "Variant One",
		Environment: "sandbox", StartedAt: time.Date(2026, 3, 1, 13, 0, 0, 5e6, time.FixedZone("CET", 3600)),
		Channel: "WEBCHAT", FromNumber: "+447700900001", ToNumber: "+447700900002",
		InProgress: true, NumTurns: 3, TotalDuration: 40, VendorDuration: 30, Handoff: false,
		HandoffReason: "urgent symptoms", HandoffDestination: "on_call_nurse", NumSilences: 2, NumOOD: 1,
		Turns: []reply.ConversationTurn{{}, {}},
	}
	values := map[string]any{
		"id": "conv-1", "account_id": "ws-1", "project_id": "proj-1", "variant_id": "var-1", "variant_name": "Variant One",
		"environment": "sandbox", "started_at": "2026-03-01T12:00:00.005Z", "channel": "WEBCHAT",
		"from_number": "+447700900001", "to_number": "+447700900002", "in_progress": true, "num_turns": 3,
		"total_duration": 40, "vendor_duration": 30, "handoff": false, "handoff_reason": "urgent symptoms",
		"handoff_destination": "on_call_nurse", "num_silences": 2, "num_ood": 1,
	}
	check := func(name string, v any, own bool) FieldCheck {
		fc := FieldCheck{Pos: at(3), Field: name}
		switch v := v.(type) {
		case string:
			if !own {
				v = "other"
			}
			fc.Text = &Text{Exact: new(v)}
		case int:
			if !own {
				v += 100
			}
			fc.Number = &Number{Value: new(float64(v))}
		case bool:
			fc.Bool = &Bool{Value: v == own}
		}
		return fc
	}
	for _, f := range ConversationFields {
		if f.Kind != TextField && f.Kind != NumberField && f.Kind != BoolField {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			v, ok := values[f.Name]
			if !ok {
				t.Fatalf("the test gives no value of %s", f.Name)
			}
			own := check(f.Name, v, true)
			if fails := CheckConversation(&ConversationChecks{Pos: at(2), Fields: []FieldCheck{own}}, conv, nil); len(fails) != 0 {
				t.Errorf("checking its own value %v fails: %+v", v, fails)
			}
			other := check(f.Name, v, false)
			fails := CheckConversation(&ConversationChecks{Pos: at(2), Fields: []FieldCheck{other}}, conv, nil)
			if len(fails) != 1 {
				t.Fatalf("checking another value: %d failures, want 1: %+v", len(fails), fails)
			}
			fl := fails[0]
			if fl.Key != "confirm.conversation."+f.Name || fl.Pos != at(3) || !strings.Contains(fl.Message, f.Name) ||
				fl.Actual != fmt.Sprint(v) || fl.Expected == fl.Actual {
				t.Errorf("failure %s %s: %q expected %q actual %q; want the field named, actual %v", fl.Pos, fl.Key, fl.Message, fl.Expected, fl.Actual, v)
			}
		})
	}
	// A record without started_at shows none, not year 1.
	fails := CheckConversation(&ConversationChecks{Pos: at(2), Fields: []FieldCheck{check("started_at", "", false)}}, &reply.Conversation{ID: "conv-1"}, nil)
	if len(fails) != 1 || fails[0].Actual != "" {
		t.Errorf("started_at of a record without it: %+v, want one failure showing nothing", fails)
	}
}

// TestConfirmationFailureDetails pins what a confirmation failure says
// beyond its verdict: the hint of a record that hides its turns (and only
// then), no failure of a num_turns check a record that lists turns but
// counts none cannot judge, where an intents check without a
// position of its own fails, the intents found listed once each, one
// failure for a missing key, not a second for its value, an expected
// intent that cannot be expanded failing alone under its own key, and
// failures in the order of their lines.
func TestConfirmationFailureDetails(t *testing.T) {
	noTurns := &reply.Conversation{ID: "c", NumTurns: 4}
	oneTurn := &reply.Conversation{ID: "c", Turns: []reply.ConversationTurn{{Intents: []string{"greet"}}}}
	fewerTurns := &reply.Conversation{ID: "c", NumTurns: 4, Turns: []reply.ConversationTurn{{}, {}}}
	expand := func(s string) (string, error) {
		if s == "${missing}" {
			return "", fmt.Errorf("unknown variable %s", s)
		}
		return s, nil
	}
	num := func(field string, v float64) *ConversationChecks {
		return &ConversationChecks{Pos: at(2), Fields: []FieldCheck{{Pos: at(3), Field: field, Number: &Number{Value: new(v)}}}}
	}
	count := func(v float64) *ConversationChecks {
		return &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Count: &Number{Value: new(v)}}}
	}
	intents := func(pos int, includes, excludes []string) *ConversationChecks {
		ic := &IntentsCheck{Includes: includes, Excludes: excludes}
		if pos != 0 {
			ic.Pos = at(pos)
		}
		return &ConversationChecks{Pos: at(2), Turns: &TurnsCheck{Pos: at(3), Intents: ic}}
	}
	type testCase struct {
		name string
		cc   *ConversationChecks
		conv *reply.Conversation
		// want is each failure as "line key: message | actual".
		want []string
	}
	for _, tc := range []testCase{
		{name: "turns but no num_turns", cc: num("num_turns", 2), conv: oneTurn},
		{name: "num_turns counted", cc: num("num_turns", 2), conv: fewerTurns,
			want: []string{"3 confirm.conversation.num_turns: conversation num_turns is 4, expected 2 | 4"}},
		{name: "another count with turns", cc: num("num_silences", 2), conv: oneTurn,
			want: []string{"3 confirm.conversation.num_silences: conversation num_silences is 0, expected 2 | 0"}},
		{name: "hidden turns", cc: count(4), conv: noTurns,
			want: []string{"3 confirm.conversation.turns.count: conversation has 0 turns, expected 4 (num_turns is 4: transcript access may be off for the project) | 0"}},
		{name: "fewer turns than num_turns", cc: count(4), conv: fewerTurns,
			want: []string{"3 confirm.conversation.turns.count: conversation has 2 turns, expected 4 | 2"}},
		{name: "intents at the turns' line", cc: intents(0, []string{"cancel"}, nil), conv: record(),
			want: []string{`3 confirm.conversation.turns.intents.includes: intent "cancel" was found in no turn | book_appointment, urgent_symptoms`}},
		// A part that cannot expand checks nothing; the other part still runs.
		{name: "includes that cannot expand", cc: intents(4, []string{"${missing}"}, []string{"urgent_symptoms"}), conv: record(),
			want: []string{"4 confirm.conversation.turns.intents.includes: cannot expand expected value: unknown variable ${missing} | ",
				`4 confirm.conversation.turns.intents.excludes: excluded intent "urgent_symptoms" was found in a turn | book_appointment, urgent_symptoms`}},
		{name: "excludes that cannot expand", cc: intents(4, nil, []string{"${missing}"}), conv: record(),
			want: []string{"4 confirm.conversation.turns.intents.excludes: cannot expand expected value: unknown variable ${missing} | "}},
		{name: "missing state key with a value", cc: &ConversationChecks{Pos: at(2), State: []StateCheck{{Pos: at(3), Key: "ghost", Match: &Text{Exact: new("x")}}}}, conv: record(),
			want: []string{`3 confirm.conversation.state.ghost: conversation state has no key "ghost" | absent`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range CheckConversation(tc.cc, tc.conv, expand) {
				got = append(got, fmt.Sprintf("%d %s: %s | %s", f.Pos.Line, f.Key, f.Message, f.Actual))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	hs := &reply.HandoffState{Data: map[string]any{"reason": "urgent"}}
	fails := CheckHandoffState(&HandoffStateCheck{Pos: at(2), Data: []StateCheck{
		{Pos: at(5), Key: "queue", Present: new(true)},
		{Pos: at(4), Key: "reason", Match: &Text{Exact: new("billing")}},
	}}, hs, nil)
	if len(fails) != 2 || fails[0].Pos.Line != 4 || fails[1].Pos.Line != 5 {
		t.Errorf("handoff data failures %+v, want line 4 then line 5", fails)
	}
	// Only in_progress says whether to wait for the end.
	cc := &ConversationChecks{Fields: []FieldCheck{{Field: "handoff", Bool: &Bool{Value: false}}}}
	if v := cc.InProgress(); v != nil {
		t.Errorf("InProgress of a handoff check = %v, want nil", *v)
	}
}

// TestCountBound: a bound of a count of the record is a whole number, 0
// or more; anything else could never be met, or always would be.
func TestCountBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    float64
		want string // the error; "" for none
	}{
		{v: 0},
		{v: 3},
		{v: 1e3},
		{v: -1, want: "-1 is not a whole number 0 or more"},
		{v: 2.5, want: "2.5 is not a whole number 0 or more"},
		{v: math.NaN(), want: "NaN is not a whole number 0 or more"},
		{v: math.Inf(1), want: "+Inf is not a whole number 0 or more"},
	} {
		err := CountBound(tc.v)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("CountBound(%v) = %v, want %q", tc.v, err, tc.want)
		}
	}
}

// TestCheckRecording: a recording expected, or none, against what the
// audio endpoint answered. A recording of no bytes is none; a missing one
// of a chat says that only voice conversations have one.
func TestCheckRecording(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		want    bool
		channel string
		got     Recording
		// msg, expected and actual are the failure's; msg "" passes.
		msg, expected, actual string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		rc := &RecordingCheck{Want: tc.want}
		fs := CheckRecording(rc, "conv-1", tc.channel, tc.got)
		if tc.msg == "" {
			if len(fs) != 0 {
				t.Fatalf("failures %+v, want none", fs)
			}
			return
		}
		if len(fs) != 1 || fs[0].Key != "confirm.recording" || fs[0].Message != tc.msg || fs[0].Expected != tc.expected || fs[0].Actual != tc.actual {
			t.Fatalf("failures %+v, want one: %q, expected %q, actual %q", fs, tc.msg, tc.expected, tc.actual)
		}
	}
	wav := Recording{Found: true, Size: 8044, ContentType: "audio/wav"}
	for _, tc := range []testCase{
		{name: "a call's recording", want: true, channel: "VOICE-SIP", got: wav},
		{name: "a chat without one", want: false, channel: "WEBCHAT"},
		{name: "a call without one", want: true, channel: "VOICE-SIP",
			msg: "conversation conv-1 has no recording (the audio endpoint answered 404)", expected: "a recording", actual: "none"},
		{name: "a call in lower case without one", want: true, channel: "voice-sip",
			msg: "conversation conv-1 has no recording (the audio endpoint answered 404)", expected: "a recording", actual: "none"},
		{name: "a record that names no channel", want: true,
			msg: "conversation conv-1 has no recording (the audio endpoint answered 404)", expected: "a recording", actual: "none"},
		{name: "a chat expected recorded", want: true, channel: "WEBCHAT",
			msg:      "conversation conv-1 has no recording (the audio endpoint answered 404): only voice conversations (VOICE-SIP) have recordings, and its channel is WEBCHAT",
			expected: "a recording", actual: "none"},
		{name: "an empty recording", want: true, channel: "VOICE-SIP", got: Recording{Found: true},
			msg: "conversation conv-1 has an empty recording: the audio endpoint answered with no bytes", expected: "a recording", actual: "0 bytes"},
		{name: "an empty recording is none", want: false, channel: "VOICE-SIP", got: Recording{Found: true}},
		{name: "a recording not expected", want: false, channel: "voice-sip", got: wav,
			msg: "conversation conv-1 has a recording", expected: "no recording", actual: "8044 bytes of audio/wav"},
		{name: "a recording without a type", want: false, got: Recording{Found: true, Size: 3},
			msg: "conversation conv-1 has a recording", expected: "no recording", actual: "3 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
