package assert

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// replyJSON is a debug-chat turn result as the simulator returns it.
const replyJSON = `{
	"conversationId": "c1",
	"userInput": "4 people",
	"response": "Great, a table for 4. What time would you like?",
	"conversationEnded": false,
	"delayedResponse": false,
	"metadata": {
		"currentNode": "CollectTime",
		"inFlow": "Booking",
		"inStep": "AskTime",
		"nodeTrace": ["Start", "CollectPartySize", "ValidateParty", "CollectTime"],
		"state": {"party_size": 4, "name": "Ann", "booking": {"code": "AB12CD"}, "vip": false},
		"metrics": {"BOOKED": "false", "CALL_TURN": ["t1", "t2"]},
		"functionEvents": [
			{"name": "check_availability", "status": "success"},
			{"name": "lookup_vip", "status": "error", "error": "timeout"}
		],
		"retrievedTopics": ["Opening hours", "Parking"],
		"citedTopic": "Opening hours",
		"asrLangCode": "en-GB",
		"ttsLangCode": "en-GB",
		"llmRequests": [{"model": "m-small"}]
	}
}`

const handoffJSON = `{
	"conversationId": "c2", "userInput": "a human please", "response": "Transferring you now.",
	"conversationEnded": true, "delayedResponse": true,
	"metadata": {"handoffDestination": "front-desk", "nodeTrace": [], "functionEvents": []}
}`

// functionsJSON holds function events that fail in two ways: a call that
// failed and was retried, and one without a name or an error.
const functionsJSON = `{"response": "Booked.", "metadata": {"functionEvents": [
	{"name": "book", "status": "error", "error": "no table"},
	{"name": "book", "status": "success"},
	{"status": "error"}
]}}`

// emptyMembersJSON writes every member it has nothing for, as another
// implementation's typed serializer does: empty, or null.
const emptyMembersJSON = `{"response": "Hello.", "metadata": {
	"citedTopic": "", "retrievedTopics": [], "functionEvents": null, "inFlow": null, "metrics": {},
	"state": {"notes": null, "tags": []}, "current_node": "", "currentNode": null
}}`

// longBooking is an expected text the similarity tests shorten.
const longBooking = "Your table for four is booked for seven tonight at the corner window, please arrive ten minutes early."

func decodeReply(t testing.TB, js string) *reply.TurnResult {
	t.Helper()
	var w struct {
		reply.TurnResult
		Metadata reply.Metadata `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(js), &w); err != nil {
		t.Fatalf("bad fixture: %v", err)
	}
	return w.TurnResult.SetMetadata(w.Metadata)
}

// at gives distinct positions so tests can see which check a failure names.
func at(line int) diag.Pos { return diag.Pos{File: "suites/booking.yaml", Line: line, Col: 7} }

func TestCheck(t *testing.T) {
	type testCase struct {
		name    string
		fixture string
		latency time.Duration
		exp     Expect
		// want lists the failures without their Diff; wantDiff, when set,
		// is the Diff of the first failure.
		want     []Failure
		wantDiff string
	}
	run := func(t *testing.T, tc testCase) {
		fixture := tc.fixture
		if fixture == "" {
			fixture = replyJSON
		}
		obs := Observation{Result: decodeReply(t, fixture), Latency: tc.latency}
		got := Check(&tc.exp, obs, vars(map[string]string{"code": "AB12CD", "n": "4", "empty": ""}))
		var diff string
		if len(got) > 0 {
			diff = got[0].Diff
		}
		for i, f := range got {
			// Every report shows a diff of Expected against Actual; the
			// HTML report recomputes it from them, so it must be that diff.
			if f.Diff != "" && f.Diff != DiffTextFor(f, f.DiffBase(), f.Actual, false) {
				t.Errorf("failure %d: Diff %q is not the diff of %q and Actual %q", i, f.Diff, f.DiffBase(), f.Actual)
			}
			got[i].Diff = ""
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("failures:\n got  %#v\n want %#v", got, tc.want)
		}
		if tc.wantDiff != "" && diff != tc.wantDiff {
			t.Errorf("diff:\n got  %q\n want %q", diff, tc.wantDiff)
		}
	}
	yes, no := new(true), new(false)
	// The phrasings a scenario lists for the fixture's question; the
	// reply is phrased like neither.
	phrasings := []string{"Great, a table for 4. When would you like it?", "Sure, four people. Which day?"}
	cases := []testCase{
		// A reply unlike every listed phrasing: the nearest one, how near,
		// and the diff against it, not against the list.
		{name: "response one_of fails: nearest phrasing", exp: Expect{Response: &Text{Pos: at(1), OneOf: phrasings}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is none of the expected values (the nearest is 0.81 similar)",
				Expected: `is one of "Great, a table for 4. When would you like it?", "Sure, four people. Which day?"`,
				Actual:   "Great, a table for 4. What time would you like?", Nearest: phrasings[0]}},
			wantDiff: "Great, a table for 4. [-When-]{+What time+} would you like[- it-]?"},
		{name: "response any fails: nearest of its whole texts", exp: Expect{Response: &Text{Pos: at(1), Any: []*Text{
			{Contains: new("how many")},
			{Similar: &Similar{To: "A table for four people, at what time?", Min: 0.9}},
			{OneOf: phrasings[1:]},
		}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply matches none of the alternatives (the nearest is 0.49 similar)",
				Expected: `any of [contains "how many" | is similar to "A table for four people, at what time?" (min 0.90) | is one of "Sure, four people. Which day?"]`,
				Actual:   "Great, a table for 4. What time would you like?", Nearest: "A table for four people, at what time?"}}},
		{name: "response any of contains alone has no nearest", exp: Expect{Response: &Text{Pos: at(1), Any: []*Text{{Contains: new("how many")}, {Matches: new("^When")}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply matches none of the alternatives",
				Expected: `any of [contains "how many" | matches /^When/]`, Actual: "Great, a table for 4. What time would you like?"}}},
		// response
		{name: "response contains passes", exp: Expect{Response: &Text{Pos: at(1), Contains: new("what time"), IgnoreCase: true}}},
		{name: "response contains fails", exp: Expect{Response: &Text{Pos: at(1), Contains: new("how many"), IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not contain the expected text",
				Expected: `contains "how many" (ignoring case)`, Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response exact fails with diff", exp: Expect{Response: &Text{Pos: at(1), Exact: new("Great, a table for 4. When would you like to come?")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not the expected text",
				Expected: "Great, a table for 4. When would you like to come?", Actual: "Great, a table for 4. What time would you like?"}},
			wantDiff: "Great, a table for 4. [-When-]{+What time+} would you like[- to come-]?"},
		{name: "response differs in case alone", exp: Expect{Response: &Text{Pos: at(1), Contains: new("what Time")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not contain the expected text (it does if case is ignored)",
				Expected: `contains "what Time"`, Actual: "Great, a table for 4. What time would you like?"}}},
		{name: "response exact differs in case alone", exp: Expect{Response: &Text{Pos: at(1), Exact: new(" great, a TABLE for 4. what time would you like?")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not the expected text (it is if case is ignored)",
				Expected: " great, a TABLE for 4. what time would you like?", Actual: "Great, a table for 4. What time would you like?"}}},
		// ignore_case on a literal text: Expected is the text itself (the
		// diff's base), so the message says case was ignored, as the
		// expected description of contains does.
		{name: "response equals ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), Equals: new("GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?"), IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not exactly the expected text (ignoring case)",
				Expected: "GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?", Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}},
			// The diff ignores case as the check did: only the real
			// change is marked, and shared text is the reply's own.
			wantDiff: "Great, a table for 4. [-WHEN-]{+What time+} would you like[- IT-]?"},
		{name: "response exact ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), Exact: new("great, a table for 4. when would you like it?"), IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not the expected text (ignoring case)",
				Expected: "great, a table for 4. when would you like it?", Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}},
			wantDiff: "Great, a table for 4. [-when-]{+What time+} would you like[- it-]?"},
		{name: "response one_of ignoring case fails: nearest diffed ignoring case", exp: Expect{Response: &Text{Pos: at(1), OneOf: []string{"GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?"}, IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is none of the expected values (the nearest is 0.81 similar)",
				Expected: `is one of "GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?" (ignoring case)`,
				Actual:   "Great, a table for 4. What time would you like?", Nearest: "GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?", IgnoreCase: true}},
			wantDiff: "Great, a table for 4. [-WHEN-]{+What time+} would you like[- IT-]?"},
		// An item that ignores case in an all: that does not: the failure,
		// and its diff, ignore case.
		{name: "response all item ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), All: []*Text{{Contains: new("Great")},
			{Exact: new("GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?"), IgnoreCase: true}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not the expected text (ignoring case)",
				Expected: "GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?", Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}},
			wantDiff: "Great, a table for 4. [-WHEN-]{+What time+} would you like[- IT-]?"},
		// ignore_case on an all: is said by the failure of its item.
		{name: "response all ignoring case fails on an item", exp: Expect{Response: &Text{Pos: at(1), IgnoreCase: true, All: []*Text{{Contains: new("great")}, {Contains: new("how many")}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not contain the expected text",
				Expected: `contains "how many" (ignoring case)`, Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response all ignoring case fails on an item ignoring case", exp: Expect{Response: &Text{Pos: at(1), IgnoreCase: true, All: []*Text{{Contains: new("how many"), IgnoreCase: true}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not contain the expected text",
				Expected: `contains "how many" (ignoring case)`, Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response all ignoring case fails on a text", exp: Expect{Response: &Text{Pos: at(1), IgnoreCase: true, All: []*Text{{Contains: new("great")},
			{All: []*Text{{Exact: new("GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?")}}}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not the expected text (ignoring case)",
				Expected: "GREAT, A TABLE FOR 4. WHEN WOULD YOU LIKE IT?", Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}},
			wantDiff: "Great, a table for 4. [-WHEN-]{+What time+} would you like[- IT-]?"},
		// The first item of an all: that fails is the failure; the others
		// that fail are named, so that one run shows every item to fix.
		{name: "response all names the other items that fail", exp: Expect{Response: &Text{Pos: at(1), All: []*Text{{Contains: new("how many")},
			{Contains: new("table")}, {Matches: new("^When")}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not contain the expected text; all: also fails on [matches /^When/]",
				Expected: `contains "how many"`, Actual: "Great, a table for 4. What time would you like?"}}},
		{name: "response all names every other item that fails", exp: Expect{Response: &Text{Pos: at(1), All: []*Text{{Contains: new("Great")},
			{Exact: new("Great!")}, {Contains: new("lunch")}, {Matches: new("^When")}, {Contains: new("dinner")}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: `reply is not the expected text; all: also fails on [contains "lunch"], [matches /^When/] and [contains "dinner"]`,
				Expected: "Great!", Actual: "Great, a table for 4. What time would you like?"}},
			wantDiff: "Great[-!-]{+, a table for 4. What time would you like?+}"},
		{name: "response not_contains ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), NotContains: new("GREAT"), IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply contains forbidden text", Expected: `does not contain "GREAT" (ignoring case)`,
				Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response matches ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), Matches: new("^when"), IgnoreCase: true}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply does not match the pattern", Expected: "matches /^when/ (ignoring case)",
				Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response any ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), IgnoreCase: true, Any: []*Text{{Contains: new("how many"), IgnoreCase: true}}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply matches none of the alternatives", Expected: `any of [contains "how many"] (ignoring case)`,
				Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "response not ignoring case fails", exp: Expect{Response: &Text{Pos: at(1), IgnoreCase: true, Not: &Text{Contains: new("great"), IgnoreCase: true}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply matches what it must not", Expected: `not [contains "great"] (ignoring case)`,
				Actual: "Great, a table for 4. What time would you like?", IgnoreCase: true}}},
		{name: "node equals differs in case alone", exp: Expect{Node: &Text{Pos: at(2), Equals: new("collectTime")}},
			want: []Failure{{Pos: at(2), Key: "node", Message: "current node is not exactly the expected value (it is if case is ignored)",
				Expected: "collectTime", Actual: "CollectTime"}}},
		{name: "response similar fails", exp: Expect{Response: &Text{Pos: at(1), Similar: &Similar{To: "Our opening hours are 9 to 5."}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not similar enough to the expected text (0.00, min 0.80)",
				Expected: "Our opening hours are 9 to 5.", Actual: "Great, a table for 4. What time would you like?"}},
			wantDiff: "[-Our opening hours are 9 to 5.-]{+Great, a table for 4. What time would you like?+}"},
		// 0.7971 to two decimals is 0.80: a failing score reads below its min.
		{name: "response similar fails a hair below its min", fixture: `{"response": "Booked for seven tonight at the corner window, please arrive ten"}`,
			exp: Expect{Response: &Text{Pos: at(1), Similar: &Similar{To: longBooking}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not similar enough to the expected text (0.797, min 0.80)",
				Expected: longBooking, Actual: "Booked for seven tonight at the corner window, please arrive ten"}}},
		{name: "response similar fails a min of three decimals", fixture: `{"response": "Booked for seven tonight at the corner window, please arrive ten minutes"}`,
			exp: Expect{Response: &Text{Pos: at(1), Similar: &Similar{To: longBooking, Min: 0.855}}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "reply is not similar enough to the expected text (0.85, min 0.855)",
				Expected: longBooking, Actual: "Booked for seven tonight at the corner window, please arrive ten minutes"}}},
		// Unfailing as written is lint's warning, not a failure: only a
		// reference that empties a check makes it one (the next cases).
		{name: "response any with an unfailing alternative and a reference", exp: Expect{Response: &Text{Pos: at(1), Any: []*Text{{Contains: new("")}, {Exact: new("${n}")}}}}},
		// Two failures, written in the other order than the Expect fields.
		{name: "failures in the order written", exp: Expect{Response: &Text{Pos: at(5), Contains: new("nope")}, State: []StateCheck{{Pos: at(3), Key: "name", Present: no}}},
			want: []Failure{
				{Pos: at(3), Key: "state.name", Message: `state has key "name"`, Expected: "absent", Actual: "Ann"},
				{Pos: at(5), Key: "response", Message: "reply does not contain the expected text", Expected: `contains "nope"`, Actual: "Great, a table for 4. What time would you like?"}}},
		{name: "response expanded", exp: Expect{Response: &Text{Pos: at(1), Contains: new("table for ${n}")}}},
		{name: "response unknown reference", exp: Expect{Response: &Text{Pos: at(1), Contains: new("${ref}")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: `cannot expand expected value: unknown variable "ref"`,
				Expected: `contains "${ref}"`, Actual: "Great, a table for 4. What time would you like?", Unexpanded: true}}},
		// A reference that makes a check unfailing: an empty variable.
		{name: "response contains an empty value", exp: Expect{Response: &Text{Pos: at(1), Contains: new("${empty}")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: `cannot check: the expected value expands to contains "", which every text satisfies (is a value it refers to empty?)`,
				Expected: `contains "${empty}"`, Actual: "Great, a table for 4. What time would you like?"}}},
		{name: "node pattern alternative left empty", exp: Expect{Node: &Text{Pos: at(2), Matches: new("^Collect|${empty}")}},
			want: []Failure{{Pos: at(2), Key: "node", Message: `cannot check: the expected value expands to matches /^Collect|/, which every text satisfies (is a value it refers to empty?)`,
				Expected: "matches /^Collect|${empty}/", Actual: "CollectTime"}}},
		{name: "state contains an empty value", exp: Expect{State: []StateCheck{{Pos: at(3), Key: "name", Match: &Text{Contains: new("${empty}")}}}},
			want: []Failure{{Pos: at(3), Key: "state.name", Message: `cannot check: the expected value expands to contains "", which every text satisfies (is a value it refers to empty?)`,
				Expected: `contains "${empty}"`, Actual: "Ann"}}},
		{name: "empty value beside a text", exp: Expect{Response: &Text{Pos: at(1), Contains: new("table for ${n}${empty}")}}},
		{name: "is an empty value", exp: Expect{Step: &Text{Pos: at(2), Exact: new("${empty}")}},
			want: []Failure{{Pos: at(2), Key: "step", Message: "step is not the expected value", Expected: "", Actual: "AskTime"}}},
		{name: "response bad pattern", exp: Expect{Response: &Text{Pos: at(1), Matches: new("(")}},
			want: []Failure{{Pos: at(1), Key: "response", Message: "invalid pattern /(/: error parsing regexp: missing closing ): `(`",
				Expected: "matches /(/", Actual: "Great, a table for 4. What time would you like?"}}},
		// node, flow, step
		{name: "node passes", exp: Expect{Node: &Text{Exact: new("CollectTime")}, Flow: &Text{Exact: new("Booking")}, Step: &Text{OneOf: []string{"AskTime", "AskDate"}}}},
		{name: "node fails", exp: Expect{Node: &Text{Pos: at(2), Exact: new("CollectPartySize")}},
			want:     []Failure{{Pos: at(2), Key: "node", Message: "current node is not the expected value", Expected: "CollectPartySize", Actual: "CollectTime"}},
			wantDiff: "[-CollectPartySize-]{+CollectTime+}"},
		{name: "flow fails", exp: Expect{Flow: &Text{Pos: at(2), Matches: new("^Pay")}},
			want: []Failure{{Pos: at(2), Key: "flow", Message: "flow does not match the pattern", Expected: "matches /^Pay/", Actual: "Booking"}}},
		{name: "step fails", exp: Expect{Step: &Text{Pos: at(2), OneOf: []string{"Confirm"}}},
			want: []Failure{{Pos: at(2), Key: "step", Message: "step is none of the expected values", Expected: `is one of "Confirm"`, Actual: "AskTime"}}},
		// trace
		{name: "trace names expanded", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Start", "${node}"}, Includes: []string{"${node}"}}},
			want: []Failure{
				{Pos: at(3), Key: "trace.includes", Message: `cannot expand expected value: unknown variable "node"`, Expected: "${node}", Unexpanded: true},
				{Pos: at(3), Key: "trace.sequence", Message: `cannot expand expected value: unknown variable "node"`, Expected: "${node}", Unexpanded: true}}},
		{name: "trace names from vars", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Start", "Collect${n}"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace is missing Collect4",
				Expected: "Start > Collect4 (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "function and topic names expanded", exp: Expect{Functions: &Functions{Pos: at(4), Called: []string{"lookup_${nope}"}},
			Topics: &Topics{Pos: at(5), Retrieved: []string{"Parking ${n}"}}},
			want: []Failure{
				{Pos: at(4), Key: "functions.called", Message: `cannot expand expected value: unknown variable "nope"`, Expected: "lookup_${nope}", Unexpanded: true},
				{Pos: at(5), Key: "topics.retrieved", Message: `topic "Parking 4" was not retrieved`, Expected: `retrieved "Parking 4"`, Actual: "Opening hours, Parking"}}},
		// A part whose names cannot expand checks nothing; the other parts
		// of its check, and of the others, still run.
		{name: "parts that cannot expand leave the others checked", exp: Expect{
			Trace:     &Trace{Pos: at(3), Includes: []string{"${nope}"}, Excludes: []string{"Start"}},
			Functions: &Functions{Pos: at(4), Called: []string{"${nope}"}, NotCalled: []string{"check_availability"}},
			Topics:    &Topics{Pos: at(5), Retrieved: []string{"${nope}"}, Cited: &Text{Exact: new("Parking")}}},
			want: []Failure{
				{Pos: at(3), Key: "trace.includes", Message: `cannot expand expected value: unknown variable "nope"`, Expected: "${nope}", Unexpanded: true},
				{Pos: at(3), Key: "trace.excludes", Message: "node trace contains excluded node Start", Expected: "excludes Start",
					Actual: "Start > CollectPartySize > ValidateParty > CollectTime"},
				{Pos: at(4), Key: "functions.called", Message: `cannot expand expected value: unknown variable "nope"`, Expected: "${nope}", Unexpanded: true},
				{Pos: at(4), Key: "functions.not_called", Message: "function check_availability was called", Expected: "not called check_availability",
					Actual: "check_availability (ok), lookup_vip (failed: timeout)"},
				{Pos: at(5), Key: "topics.retrieved", Message: `cannot expand expected value: unknown variable "nope"`, Expected: "${nope}", Unexpanded: true},
				{Pos: at(5), Key: "topics.cited", Message: "cited topic is not the expected value", Expected: "Parking", Actual: "Opening hours"}}},
		{name: "trace includes its first node", exp: Expect{Trace: &Trace{Includes: []string{"Start"}, Excludes: []string{"Nope"}}}},
		{name: "trace excludes its first node", exp: Expect{Trace: &Trace{Pos: at(3), Excludes: []string{"Start"}}},
			want: []Failure{{Pos: at(3), Key: "trace.excludes", Message: "node trace contains excluded node Start", Expected: "excludes Start",
				Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence names a node twice", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"CollectTime", "CollectTime"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace has no CollectTime after CollectTime",
				Expected: "CollectTime > CollectTime (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence fails once, at its first break", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Start", "Greeting", "Confirm"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace is missing Greeting",
				Expected: "Start > Greeting > Confirm (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace equals no node", exp: Expect{Trace: &Trace{Pos: at(3), Equals: []string{}}},
			want: []Failure{{Pos: at(3), Key: "trace.equals", Message: "node trace is not the expected list",
				Expected: "(none)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace equals a longer list", exp: Expect{Trace: &Trace{Pos: at(3), Equals: []string{"Start", "CollectPartySize", "ValidateParty", "CollectTime", "Confirm"}}},
			want: []Failure{{Pos: at(3), Key: "trace.equals", Message: "node trace is not the expected list",
				Expected: "Start > CollectPartySize > ValidateParty > CollectTime > Confirm", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace passes", exp: Expect{Trace: &Trace{Includes: []string{"ValidateParty"}, Excludes: []string{"Handoff"},
			Sequence: []string{"Start", "CollectTime"}, Equals: []string{"Start", "CollectPartySize", "ValidateParty", "CollectTime"}}}},
		{name: "trace includes fails", exp: Expect{Trace: &Trace{Pos: at(3), Includes: []string{"CollectPartySize", "Confirm"}}},
			want: []Failure{{Pos: at(3), Key: "trace.includes", Message: "node trace is missing Confirm", Expected: "includes Confirm",
				Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace excludes fails", exp: Expect{Trace: &Trace{Pos: at(3), Excludes: []string{"ValidateParty"}}},
			want: []Failure{{Pos: at(3), Key: "trace.excludes", Message: "node trace contains excluded node ValidateParty", Expected: "excludes ValidateParty",
				Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence out of order", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Start", "CollectTime", "ValidateParty"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace has no ValidateParty after CollectTime",
				Expected: "Start > CollectTime > ValidateParty (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence after the first node", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"CollectTime", "Start"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace has no Start after CollectTime",
				Expected: "CollectTime > Start (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence first missing", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Greeting", "Start"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: "node trace is missing Greeting",
				Expected: "Greeting > Start (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace equals fails", exp: Expect{Trace: &Trace{Pos: at(3), Equals: []string{"Start", "CollectPartySize", "CollectTime"}}},
			want: []Failure{{Pos: at(3), Key: "trace.equals", Message: "node trace is not the expected list",
				Expected: "Start > CollectPartySize > CollectTime", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}},
			wantDiff: "Start > CollectPartySize > {+ValidateParty > +}CollectTime"},
		// A node the trace lacks, written near one it has, names that one.
		{name: "trace includes a misspelt node", exp: Expect{Trace: &Trace{Pos: at(3), Includes: []string{"CollectPartySise"}}},
			want: []Failure{{Pos: at(3), Key: "trace.includes", Message: `node trace is missing CollectPartySise (did you mean "CollectPartySize"?)`,
				Expected: "includes CollectPartySise", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "trace sequence names a node in another case", exp: Expect{Trace: &Trace{Pos: at(3), Sequence: []string{"Start", "collect_time"}}},
			want: []Failure{{Pos: at(3), Key: "trace.sequence", Message: `node trace is missing collect_time (did you mean "CollectTime"?)`,
				Expected: "Start > collect_time (in this order, gaps allowed)", Actual: "Start > CollectPartySize > ValidateParty > CollectTime"}}},
		{name: "empty trace", fixture: handoffJSON, exp: Expect{Trace: &Trace{Pos: at(3), Includes: []string{"Start"}}},
			want: []Failure{{Pos: at(3), Key: "trace.includes", Message: "node trace is missing Start", Expected: "includes Start", Actual: "(none)"}}},
		// state
		{name: "state passes", exp: Expect{State: []StateCheck{
			{Key: "party_size", Match: &Text{Exact: new("4")}},
			{Key: "vip", Match: &Text{Exact: new("false")}},
			{Key: "booking.code", Match: &Text{Exact: new("${code}")}},
			{Key: "booking", Match: &Text{Equals: new(`{"code":"AB12CD"}`)}},
			{Key: "name", Present: yes},
			{Key: "time", Present: no},
		}}},
		{name: "state value fails", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "party_size", Match: &Text{Exact: new("5")}}}},
			want:     []Failure{{Pos: at(4), Key: "state.party_size", Message: `state "party_size" is not the expected value`, Expected: "5", Actual: "4"}},
			wantDiff: "[-5-]{+4+}"},
		// A matcher written at its own position fails there, not at the key's.
		{name: "state value fails at its matcher", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "party_size", Match: &Text{Pos: at(5), Exact: new("5")}}}},
			want: []Failure{{Pos: at(5), Key: "state.party_size", Message: `state "party_size" is not the expected value`, Expected: "5", Actual: "4"}}},
		{name: "state missing key", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "time", Match: &Text{Exact: new("7pm")}}}},
			want: []Failure{{Pos: at(4), Key: "state.time", Message: `state has no key "time"`, Expected: "present", Actual: "absent"}}},
		// A key the state does not have but nearly does: the typo is the suite's.
		{name: "state misspelt key", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "party_sise", Match: &Text{Exact: new("4")}}}},
			want: []Failure{{Pos: at(4), Key: "state.party_sise", Message: `state has no key "party_sise" (did you mean "party_size"?)`, Expected: "present", Actual: "absent"}}},
		{name: "state present fails", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "time", Present: yes}}},
			want: []Failure{{Pos: at(4), Key: "state.time", Message: `state has no key "time"`, Expected: "present", Actual: "absent"}}},
		{name: "state absent fails", exp: Expect{State: []StateCheck{{Pos: at(4), Key: "name", Present: no}}},
			want: []Failure{{Pos: at(4), Key: "state.name", Message: `state has key "name"`, Expected: "absent", Actual: "Ann"}}},
		// handoff, ended, delayed
		{name: "no handoff passes", exp: Expect{Handoff: &Handoff{Expected: false}}},
		{name: "handoff expected fails", exp: Expect{Handoff: &Handoff{Pos: at(5), Expected: true}},
			want: []Failure{{Pos: at(5), Key: "handoff", Message: "agent did not hand off", Expected: "a handoff", Actual: "no handoff"}}},
		{name: "handoff with destination expected fails", exp: Expect{Handoff: &Handoff{Pos: at(5), Expected: true, Destination: &Text{Exact: new("front-desk")}}},
			want: []Failure{{Pos: at(5), Key: "handoff", Message: "agent did not hand off", Expected: `a handoff to a destination that is "front-desk"`, Actual: "no handoff"}}},
		{name: "handoff passes", fixture: handoffJSON, exp: Expect{Handoff: &Handoff{Expected: true, Destination: &Text{Contains: new("desk")}}}},
		{name: "unexpected handoff", fixture: handoffJSON, exp: Expect{Handoff: &Handoff{Pos: at(5)}},
			want: []Failure{{Pos: at(5), Key: "handoff", Message: "agent handed off unexpectedly", Expected: "no handoff", Actual: "handoff to front-desk"}}},
		{name: "handoff destination fails", fixture: handoffJSON, exp: Expect{Handoff: &Handoff{Pos: at(5), Expected: true, Destination: &Text{Exact: new("billing")}}},
			want: []Failure{{Pos: at(5), Key: "handoff.destination", Message: "handoff destination is not the expected value", Expected: "billing", Actual: "front-desk"}}},
		{name: "ended and delayed pass", fixture: handoffJSON, exp: Expect{Ended: &Bool{Value: true}, Delayed: &Bool{Value: true}}},
		{name: "ended fails", exp: Expect{Ended: &Bool{Pos: at(6), Value: true}},
			want: []Failure{{Pos: at(6), Key: "ended", Message: "conversation did not end", Expected: "true", Actual: "false"}}},
		{name: "not ended fails", fixture: handoffJSON, exp: Expect{Ended: &Bool{Pos: at(6), Value: false}},
			want: []Failure{{Pos: at(6), Key: "ended", Message: "conversation ended unexpectedly", Expected: "false", Actual: "true"}}},
		{name: "delayed fails", exp: Expect{Delayed: &Bool{Pos: at(6), Value: true}},
			want: []Failure{{Pos: at(6), Key: "delayed", Message: "reply was not delayed", Expected: "true", Actual: "false"}}},
		{name: "not delayed fails", fixture: handoffJSON, exp: Expect{Delayed: &Bool{Pos: at(6)}},
			want: []Failure{{Pos: at(6), Key: "delayed", Message: "reply was delayed unexpectedly", Expected: "false", Actual: "true"}}},
		// metrics
		{name: "metrics pass", exp: Expect{Metrics: []MetricCheck{
			{Name: "BOOKED", Match: &Text{Exact: new("false")}},
			{Name: "CALL_TURN", Match: &Text{Exact: new("t1")}},
			{Name: "CALL_TURN", Count: new(2)},
			{Name: "BOOKED", Count: new(1), Present: yes},
			{Name: "NEVER", Count: new(0)},
			{Name: "NEVER", Present: no},
		}}},
		{name: "metric value fails", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "BOOKED", Match: &Text{Exact: new("true")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.BOOKED", Message: `metric "BOOKED" is not the expected value`, Expected: "true", Actual: "false"}}},
		{name: "metric repeated value fails", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "CALL_TURN", Match: &Text{Exact: new("t3")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.CALL_TURN", Message: `no value of metric "CALL_TURN" matches`, Expected: "t3", Actual: `["t1","t2"]`}}},
		{name: "metric repeated with unknown reference", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "CALL_TURN", Match: &Text{Exact: new("${nope}")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.CALL_TURN", Message: `cannot expand expected value: unknown variable "nope"`, Expected: `is "${nope}"`, Actual: `["t1","t2"]`, Unexpanded: true}}},
		// As for a metric written once: a check that would pass whatever
		// was written is not a pass.
		{name: "metric repeated with a reference left empty", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "CALL_TURN", Match: &Text{Contains: new("${empty}")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.CALL_TURN", Expected: `contains "${empty}"`, Actual: `["t1","t2"]`,
				Message: `cannot check: the expected value expands to contains "", which every text satisfies (is a value it refers to empty?)`}}},
		{name: "metric repeated with a bad pattern", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "CALL_TURN", Match: &Text{Matches: new("t(")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.CALL_TURN", Message: "invalid pattern /t(/: error parsing regexp: missing closing ): `t(`", Expected: "matches /t(/", Actual: "t2"}}},
		{name: "metric missing", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "HANDOFF_TO", Match: &Text{Exact: new("x")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.HANDOFF_TO", Message: `metric "HANDOFF_TO" was not written`, Expected: "present", Actual: "absent"}}},
		{name: "metric misspelt", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "BOOKD", Match: &Text{Exact: new("true")}}}},
			want: []Failure{{Pos: at(7), Key: "metrics.BOOKD", Message: `metric "BOOKD" was not written (did you mean "BOOKED"?)`, Expected: "present", Actual: "absent"}}},
		{name: "metric count fails", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "CALL_TURN", Count: new(1)}}},
			want: []Failure{{Pos: at(7), Key: "metrics.CALL_TURN", Message: `metric "CALL_TURN" was written 2 times, expected once`, Expected: "1", Actual: "2"}}},
		{name: "metric count of missing fails", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "X", Count: new(2)}}},
			want: []Failure{{Pos: at(7), Key: "metrics.X", Message: `metric "X" was written 0 times, expected 2 times`, Expected: "2", Actual: "0"}}},
		{name: "metric count 0 of a metric that must be present", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "X", Count: new(0), Present: yes}}},
			want: []Failure{{Pos: at(7), Key: "metrics.X", Message: `metric "X" was not written`, Expected: "present", Actual: "absent"}}},
		{name: "metric absent fails", exp: Expect{Metrics: []MetricCheck{{Pos: at(7), Name: "BOOKED", Present: no}}},
			want: []Failure{{Pos: at(7), Key: "metrics.BOOKED", Message: `metric "BOOKED" was written`, Expected: "absent", Actual: "false"}}},
		// functions
		{name: "functions pass", exp: Expect{Functions: &Functions{Called: []string{"check_availability"}, NotCalled: []string{"book"}, Failed: []string{"lookup_vip"}}}},
		{name: "functions no errors passes", fixture: handoffJSON, exp: Expect{Functions: &Functions{NoErrors: true, NotCalled: []string{"book"}}}},
		{name: "function not called", exp: Expect{Functions: &Functions{Pos: at(8), Called: []string{"book"}}},
			want: []Failure{{Pos: at(8), Key: "functions.called", Message: "function book was not called", Expected: "called book",
				Actual: "check_availability (ok), lookup_vip (failed: timeout)"}}},
		{name: "function called", exp: Expect{Functions: &Functions{Pos: at(8), NotCalled: []string{"check_availability"}}},
			want: []Failure{{Pos: at(8), Key: "functions.not_called", Message: "function check_availability was called", Expected: "not called check_availability",
				Actual: "check_availability (ok), lookup_vip (failed: timeout)"}}},
		{name: "function did not fail", exp: Expect{Functions: &Functions{Pos: at(8), Failed: []string{"check_availability", "book"}}},
			want: []Failure{
				{Pos: at(8), Key: "functions.failed", Message: "function check_availability did not fail", Expected: "check_availability failed",
					Actual: "check_availability (ok), lookup_vip (failed: timeout)"},
				{Pos: at(8), Key: "functions.failed", Message: "function book was not called", Expected: "book failed",
					Actual: "check_availability (ok), lookup_vip (failed: timeout)"}}},
		{name: "function errors", exp: Expect{Functions: &Functions{Pos: at(8), NoErrors: true}},
			want: []Failure{{Pos: at(8), Key: "functions.no_errors", Message: "function lookup_vip failed", Expected: "no function errors", Actual: "lookup_vip: timeout"}}},
		{name: "function that failed and was retried has failed", fixture: functionsJSON, exp: Expect{Functions: &Functions{Failed: []string{"book"}}}},
		{name: "functions errors of several, one unnamed", fixture: functionsJSON, exp: Expect{Functions: &Functions{Pos: at(8), NoErrors: true}},
			want: []Failure{{Pos: at(8), Key: "functions.no_errors", Message: "functions book, (unnamed) failed", Expected: "no function errors",
				Actual: "book: no table; (unnamed): failed"}}},
		{name: "no function called", fixture: handoffJSON, exp: Expect{Functions: &Functions{Pos: at(8), Called: []string{"book"}}},
			want: []Failure{{Pos: at(8), Key: "functions.called", Message: "function book was not called", Expected: "called book", Actual: "no function called"}}},
		// topics
		{name: "topics pass", exp: Expect{Topics: &Topics{Retrieved: []string{"Parking"}, Cited: &Text{Exact: new("Opening hours")}}}},
		{name: "topic not retrieved", exp: Expect{Topics: &Topics{Pos: at(9), Retrieved: []string{"Menu"}}},
			want: []Failure{{Pos: at(9), Key: "topics.retrieved", Message: `topic "Menu" was not retrieved`, Expected: `retrieved "Menu"`, Actual: "Opening hours, Parking"}}},
		{name: "topic not retrieved where none was", fixture: handoffJSON, exp: Expect{Topics: &Topics{Pos: at(9), Retrieved: []string{"Menu"}}},
			want: []Failure{{Pos: at(9), Key: "topics.retrieved", Message: `topic "Menu" was not retrieved`, Expected: `retrieved "Menu"`, Actual: "(none)"}}},
		{name: "cited topic fails", exp: Expect{Topics: &Topics{Pos: at(9), Cited: &Text{Exact: new("Parking")}}},
			want: []Failure{{Pos: at(9), Key: "topics.cited", Message: "cited topic is not the expected value", Expected: "Parking", Actual: "Opening hours"}}},
		// latency
		{name: "latency passes", latency: 2 * time.Second, exp: Expect{LatencyMS: &Latency{Max: 2000}}},
		{name: "latency fails", latency: 2300 * time.Millisecond, exp: Expect{LatencyMS: &Latency{Pos: at(10), Max: 2000}},
			want: []Failure{{Pos: at(10), Key: "latency_ms", Message: "reply took 2300 ms, more than 2000 ms", Expected: "at most 2000 ms", Actual: "2300 ms"}}},
		// lang
		{name: "lang passes", exp: Expect{Lang: &Lang{ASR: &Text{Exact: new("en-GB")}, TTS: &Text{Matches: new("^en")}}}},
		{name: "lang fails", exp: Expect{Lang: &Lang{Pos: at(11), ASR: &Text{Exact: new("fr-FR")}, TTS: &Text{Exact: new("fr-FR")}}},
			want: []Failure{
				{Pos: at(11), Key: "lang.asr", Message: "asr language is not the expected value", Expected: "fr-FR", Actual: "en-GB"},
				{Pos: at(11), Key: "lang.tts", Message: "tts language is not the expected value", Expected: "fr-FR", Actual: "en-GB"}}},
		// metadata
		{name: "metadata passes", exp: Expect{Metadata: []MetadataCheck{
			{Path: "llmRequests.0.model", Match: &Text{Exact: new("m-small")}},
			{Path: "state.booking.code", Match: &Text{Exact: new("AB12CD")}},
			{Path: "agentResponseAudioUrl", Present: no},
			{Path: "citedTopic", Present: yes},
		}}},
		{name: "metadata value fails", exp: Expect{Metadata: []MetadataCheck{{Pos: at(12), Path: "llmRequests.0.model", Match: &Text{Exact: new("m-large")}}}},
			want: []Failure{{Pos: at(12), Key: "metadata.llmRequests.0.model", Message: "metadata llmRequests.0.model is not the expected value", Expected: "m-large", Actual: "m-small"}}},
		{name: "metadata missing", exp: Expect{Metadata: []MetadataCheck{{Pos: at(12), Path: "llmRequests.3.model", Match: &Text{Exact: new("x")}}}},
			want: []Failure{{Pos: at(12), Key: "metadata.llmRequests.3.model", Message: "metadata has no llmRequests.3.model", Expected: "present", Actual: "absent"}}},
		// A reference member written empty or null is not reported, as
		// one left out is not; below the top level an empty value is the
		// agent's data, and null no value.
		{name: "metadata written empty is absent", fixture: emptyMembersJSON, exp: Expect{Metadata: []MetadataCheck{
			{Path: "citedTopic", Present: no}, {Path: "retrievedTopics", Present: no}, {Path: "functionEvents", Present: no},
			{Path: "inFlow", Present: no}, {Path: "metrics", Present: no}, {Path: "currentNode", Present: no},
			{Path: "state.notes", Present: no}, {Path: "state.tags", Present: yes}, {Path: "citedTopic", Match: &Text{Exact: new("")}},
		}}},
		{name: "metadata written empty is not present", fixture: emptyMembersJSON, exp: Expect{Metadata: []MetadataCheck{
			{Pos: at(12), Path: "citedTopic", Present: yes}, {Pos: at(13), Path: "retrievedTopics", Present: yes},
			{Pos: at(14), Path: "inFlow", Present: yes}, {Pos: at(15), Path: "metrics", Present: yes}, {Pos: at(16), Path: "state.notes", Present: yes},
			{Pos: at(17), Path: "inStep", Present: yes},
		}}, want: []Failure{
			{Pos: at(12), Key: "metadata.citedTopic", Message: `metadata has no citedTopic (the reply writes it "")`, Expected: "present", Actual: "absent"},
			{Pos: at(13), Key: "metadata.retrievedTopics", Message: "metadata has no retrievedTopics (the reply writes it [])", Expected: "present", Actual: "absent"},
			{Pos: at(14), Key: "metadata.inFlow", Message: "metadata has no inFlow (the reply writes it null)", Expected: "present", Actual: "absent"},
			{Pos: at(15), Key: "metadata.metrics", Message: "metadata has no metrics (the reply writes it {})", Expected: "present", Actual: "absent"},
			{Pos: at(16), Key: "metadata.state.notes", Message: "metadata has no state.notes (it is null)", Expected: "present", Actual: "absent"},
			{Pos: at(17), Key: "metadata.inStep", Message: "metadata has no inStep", Expected: "present", Actual: "absent"},
		}},
		// A state key written null is not set; an empty list is a value.
		// A value check of it is as before: null renders as "".
		{name: "state null is absent", fixture: emptyMembersJSON, exp: Expect{State: []StateCheck{{Key: "notes", Present: no}, {Key: "tags", Present: yes},
			{Key: "notes", Match: &Text{Exact: new("")}}}}},
		{name: "state null is not present", fixture: emptyMembersJSON, exp: Expect{State: []StateCheck{{Pos: at(3), Key: "notes", Present: yes}, {Pos: at(4), Key: "tags", Present: no}}},
			want: []Failure{
				{Pos: at(3), Key: "state.notes", Message: `state has no key "notes" (it is null)`, Expected: "present", Actual: "absent"},
				{Pos: at(4), Key: "state.tags", Message: `state has key "tags"`, Expected: "absent", Actual: "[]"}}},
		{name: "metadata unexpected", exp: Expect{Metadata: []MetadataCheck{{Pos: at(12), Path: "inFlow", Present: no}}},
			want: []Failure{{Pos: at(12), Key: "metadata.inFlow", Message: "metadata has inFlow", Expected: "absent", Actual: "Booking"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestCheckOrderFollowsPositions(t *testing.T) {
	// Written in this order in the file: state (line 3), response (line 5),
	// trace (line 8). The Expect fields are in another order.
	exp := &Expect{
		Pos:      at(2),
		Response: &Text{Pos: at(5), Contains: new("nope")},
		Trace:    &Trace{Pos: at(8), Includes: []string{"Nope"}},
		State:    []StateCheck{{Pos: at(3), Key: "nope", Present: new(true)}},
		Ended:    &Bool{Value: true}, // no position: falls back to the Expect's
	}
	keys := keysAt(Check(exp, Observation{Result: decodeReply(t, replyJSON)}, nil), func(f Failure) KeyAt { return KeyAt{f.Key, f.Pos} })
	want := []string{
		"ended@suites/booking.yaml:2:7",
		"state.nope@suites/booking.yaml:3:7",
		"response@suites/booking.yaml:5:7",
		"trace.includes@suites/booking.yaml:8:7",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("order:\n got  %v\n want %v", keys, want)
	}
}

// TestCheckKeepsOrderWithinAPosition: failures at one position (the
// names of one includes) stay in the order written when the failures are
// sorted, also past the dozen an unstable sort still keeps in order.
func TestCheckKeepsOrderWithinAPosition(t *testing.T) {
	var names, want []string
	for i := range 20 {
		n := fmt.Sprintf("Missing%02d", 20-i)
		names = append(names, n)
		want = append(want, "node trace is missing "+n)
	}
	exp := &Expect{
		Response: &Text{Pos: at(5), Contains: new("nope")},
		Trace:    &Trace{Pos: at(3), Includes: names},
	}
	var got []string
	for _, f := range Check(exp, Observation{Result: decodeReply(t, replyJSON)}, nil) {
		got = append(got, f.Message)
	}
	want = append(want, "reply does not contain the expected text")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order:\n got  %q\n want %q", got, want)
	}
}

// TestCheckPartsPositions: a failure of one part of a compound check
// (trace, functions, topics) points at that part, not at another part or
// at the key; a part written without a position falls back to the key's.
func TestCheckPartsPositions(t *testing.T) {
	exp := &Expect{
		Pos: at(2),
		Trace: &Trace{Pos: at(10), Parts: Parts{{Key: "includes", Pos: at(11)}, {Key: "excludes", Pos: at(12)}, {Key: "sequence"}},
			Includes: []string{"Nope"}, Excludes: []string{"Start"}, Sequence: []string{"CollectTime", "Start"}},
		Functions: &Functions{Pos: at(20), Parts: Parts{{Key: "called", Pos: at(21)}, {Key: "failed", Pos: at(22)}},
			Called: []string{"book_table"}, NotCalled: []string{"check_availability"}, Failed: []string{"check_availability"}},
		Topics: &Topics{Pos: at(30), Parts: Parts{{Key: "retrieved", Pos: at(31)}}, Retrieved: []string{"Menu"}},
	}
	keys := keysAt(Check(exp, Observation{Result: decodeReply(t, replyJSON)}, nil), func(f Failure) KeyAt { return KeyAt{f.Key, f.Pos} })
	want := []string{
		"trace.sequence@suites/booking.yaml:10:7",
		"trace.includes@suites/booking.yaml:11:7",
		"trace.excludes@suites/booking.yaml:12:7",
		"functions.not_called@suites/booking.yaml:20:7",
		"functions.called@suites/booking.yaml:21:7",
		"functions.failed@suites/booking.yaml:22:7",
		"topics.retrieved@suites/booking.yaml:31:7",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("positions:\n got  %v\n want %v", keys, want)
	}
}

func TestPartsPos(t *testing.T) {
	parts := Parts{{Key: "includes", Item: 1, Pos: at(12)}, {Key: "includes", Pos: at(11)}, {Key: "sequence"}, {Key: "sequence", Item: 2, Pos: at(15)}}
	for part, want := range map[string]diag.Pos{"includes": at(11), "sequence": {}, "equals": {}} {
		if got := parts.Pos(part); got != want {
			t.Errorf("Pos(%q) = %v, want %v", part, got, want)
		}
	}
	for _, tc := range []struct {
		part string
		i    int
		want diag.Pos
	}{
		{"includes", 0, at(12)},
		{"includes", 1, at(11)}, // no item 2: the key's
		{"sequence", 1, at(15)},
		{"sequence", 0, diag.Pos{}}, // neither the item nor the key placed
		{"excludes", 0, diag.Pos{}},
	} {
		if got := parts.ItemPos(tc.part, tc.i); got != tc.want {
			t.Errorf("ItemPos(%q, %d) = %v, want %v", tc.part, tc.i, got, tc.want)
		}
	}
}

// TestCheckListItemPositions: an item of a trace list that breaks (a
// node missing, one out of its sequence, one excluded) fails at the item
// as written (a row of a feature's table, an item of a YAML list), not
// at its key or step; an item not placed falls back to its key's
// position, then to the check's; equals fails as one list, at its key.
// An item whose ${...} cannot be expanded fails at that item too.
func TestCheckListItemPositions(t *testing.T) {
	expand := func(s string) (string, error) {
		if s == "${party}" {
			return "CollectTime", nil
		}
		return "", errors.New("unknown variable")
	}
	items := func(key string, lines ...int) Parts {
		var ps Parts
		for i, l := range lines {
			ps = append(ps, Part{Key: key, Item: i + 1, Pos: at(l)})
		}
		return ps
	}
	for _, tc := range []struct {
		name  string
		trace Trace
		want  []string
	}{
		{"a missing node at its row", Trace{Sequence: []string{"Start", "Nope", "CollectTime"}, Parts: items("sequence", 41, 42, 43)},
			[]string{"trace.sequence@suites/booking.yaml:42:7"}},
		{"out of order at the node that comes too late", Trace{Sequence: []string{"Start", "CollectTime", "ValidateParty"}, Parts: items("sequence", 41, 42, 43)},
			[]string{"trace.sequence@suites/booking.yaml:43:7"}},
		{"includes and excludes at their items", Trace{Includes: []string{"Start", "Nope"}, Excludes: []string{"Other", "ValidateParty"},
			Parts: append(append(Parts{{Key: "includes", Pos: at(50)}}, items("includes", 51, 52)...), items("excludes", 53, 54)...)},
			[]string{"trace.includes@suites/booking.yaml:52:7", "trace.excludes@suites/booking.yaml:54:7"}},
		{"an item not placed at its key", Trace{Sequence: []string{"Start", "Nope"}, Parts: append(Parts{{Key: "sequence", Pos: at(60)}}, items("sequence", 61)...)},
			[]string{"trace.sequence@suites/booking.yaml:60:7"}},
		{"no parts at the check", Trace{Sequence: []string{"Nope"}},
			[]string{"trace.sequence@suites/booking.yaml:10:7"}},
		{"equals at its key", Trace{Equals: []string{"Start"}, Parts: append(Parts{{Key: "equals", Pos: at(70)}}, items("equals", 71)...)},
			[]string{"trace.equals@suites/booking.yaml:70:7"}},
		{"an item that cannot expand at its item", Trace{Includes: []string{"Start", "${party}", "${nope}"}, Excludes: []string{"${nope}"},
			Sequence: []string{"${party}", "${nope}"},
			Parts:    append(append(append(Parts{{Key: "includes", Pos: at(80)}}, items("includes", 81, 82, 83)...), items("excludes", 84)...), items("sequence", 85, 86)...)},
			[]string{"trace.includes@suites/booking.yaml:83:7", "trace.excludes@suites/booking.yaml:84:7", "trace.sequence@suites/booking.yaml:86:7"}},
		{"equals that cannot expand at its key", Trace{Equals: []string{"Start", "${nope}"}, Parts: append(Parts{{Key: "equals", Pos: at(95)}}, items("equals", 96, 97)...)},
			[]string{"trace.equals@suites/booking.yaml:95:7"}},
		{"an item not placed that cannot expand at its key", Trace{Includes: []string{"${nope}"}, Parts: Parts{{Key: "includes", Pos: at(90)}}},
			[]string{"trace.includes@suites/booking.yaml:90:7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := tc.trace
			tr.Pos = at(10)
			fails := Check(&Expect{Pos: at(2), Trace: &tr}, Observation{Result: decodeReply(t, replyJSON)}, expand)
			if got := keysAt(fails, func(f Failure) KeyAt { return KeyAt{f.Key, f.Pos} }); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("positions:\n got  %v\n want %v", got, tc.want)
			}
		})
	}
}

// keysAt writes each item's key and position as "key@file:line:col", the
// form the order and position tests compare.
func keysAt[T any](items []T, at func(T) KeyAt) []string {
	var out []string
	for _, it := range items {
		k := at(it)
		out = append(out, k.Key+"@"+k.Pos.String())
	}
	return out
}

func TestCheckNilInputs(t *testing.T) {
	if got := Check(nil, Observation{}, nil); got != nil {
		t.Errorf("nil Expect: got %v", got)
	}
	got := Check(&Expect{Pos: at(1)}, Observation{}, nil)
	want := []Failure{{Pos: at(1), Key: "response", Message: "no reply to check"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nil result: got %#v", got)
	}
	// A reply without metadata fails the metadata checks without panicking.
	res := &reply.TurnResult{Response: "hi"}
	got = Check(&Expect{
		Trace:     &Trace{Includes: []string{"A"}},
		State:     []StateCheck{{Key: "a"}},
		Metrics:   []MetricCheck{{Name: "M"}},
		Functions: &Functions{Called: []string{"f"}, NoErrors: true},
		Metadata:  []MetadataCheck{{Path: "x.0.y"}},
	}, Observation{Result: res}, nil)
	if len(got) != 5 {
		t.Errorf("got %d failures, want 5: %#v", len(got), got)
	}
	// Without an expander a ${...} name is the name as written.
	got = Check(&Expect{Trace: &Trace{Pos: at(2), Includes: []string{"${node}"}}}, Observation{Result: res}, nil)
	want = []Failure{{Pos: at(2), Key: "trace.includes", Message: "node trace is missing ${node}", Expected: "includes ${node}", Actual: "(none)"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("name with a reference, no expander: got %#v", got)
	}
	if got := Check(&Expect{}, Observation{Result: res}, nil); got != nil {
		t.Errorf("empty Expect: got %v", got)
	}
}

// BenchmarkCheck measures a typical turn expectation that passes: a reply
// matcher, a trace check, two state keys, a metric and a function check.
func BenchmarkCheck(b *testing.B) {
	res := decodeReply(b, replyJSON)
	exp := &Expect{
		Response:  &Text{Pos: at(1), Contains: new("what time"), IgnoreCase: true},
		Trace:     &Trace{Pos: at(2), Includes: []string{"CollectPartySize"}, Sequence: []string{"Start", "CollectTime"}},
		Node:      &Text{Pos: at(3), Exact: new("CollectTime")},
		State:     []StateCheck{{Pos: at(4), Key: "party_size", Match: &Text{Exact: new("4")}}, {Pos: at(5), Key: "name", Match: &Text{Matches: new(`^[A-Z]`)}}},
		Metrics:   []MetricCheck{{Pos: at(6), Name: "BOOKED", Match: &Text{Exact: new("false")}}},
		Functions: &Functions{Pos: at(7), Called: []string{"check_availability"}},
	}
	obs := Observation{Result: res, Latency: 120 * time.Millisecond}
	expand := vars(map[string]string{"n": "4"})
	b.ReportAllocs()
	for b.Loop() {
		if fails := Check(exp, obs, expand); len(fails) != 0 {
			b.Fatalf("unexpected failures: %v", fails)
		}
	}
}

// BenchmarkCheckFailing measures the cost of building failures, diff
// included.
func BenchmarkCheckFailing(b *testing.B) {
	res := decodeReply(b, replyJSON)
	exp := &Expect{
		Response: &Text{Pos: at(1), Exact: new("Great, a table for 4. When would you like to come?")},
		State:    []StateCheck{{Pos: at(4), Key: "party_size", Match: &Text{Exact: new("5")}}},
	}
	obs := Observation{Result: res}
	b.ReportAllocs()
	for b.Loop() {
		if fails := Check(exp, obs, nil); len(fails) != 2 {
			b.Fatalf("want 2 failures, got %v", fails)
		}
	}
}

// TestPassingListCheckAllocatesNothing: a node trace that passes its
// includes, excludes, sequence and equals builds no failure key (they
// were joined for every check before).
func TestPassingListCheckAllocatesNothing(t *testing.T) {
	var c checker
	trace := []string{"Start", "CollectPartySize", "ConfirmBooking"}
	incl, excl, seq := []string{"CollectPartySize"}, []string{"Closed"}, []string{"Start", "ConfirmBooking"}
	n := testing.AllocsPerRun(100, func() { c.list(diag.Pos{}, nil, traceList, trace, incl, excl, seq, trace) })
	if len(c.fails) > 0 {
		t.Fatalf("failures: %+v", c.fails)
	}
	if n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
