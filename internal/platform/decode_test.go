package platform

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

const goodTurn = `{"conversationId":"c1","userInput":"hi","response":"Hello!","metadata":{"currentNode":"greet","nodeTrace":["start","greet"],"state":{"n":2}},"conversationEnded":false,"delayedResponse":false}`

func TestDecodeTurn(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	rq := &call{ep: epChatTurn, path: "/v1/agents/a/debug-chat/c1"}
	type testCase struct {
		name    string
		body    string
		want    *reply.TurnResult // compared without RawMetadata
		wantErr string
		wantAPI bool
	}
	run := func(t *testing.T, tc testCase) {
		got, err := c.decodeTurn(rq, 200, []byte(tc.body), 1)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			var ae *APIError
			var re *ResponseError
			if tc.wantAPI && !errors.As(err, &ae) || !tc.wantAPI && !errors.As(err, &re) {
				t.Fatalf("err %T, want APIError=%v", err, tc.wantAPI)
			}
			if !strings.HasPrefix(err.Error(), "POST /v1/agents/a/debug-chat/c1: 200") {
				t.Errorf("error does not name the endpoint and status: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		got = undeferred(got)
		got.RawMetadata = nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %+v\nwant %+v", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "reference shape", body: goodTurn, want: (&reply.TurnResult{
			ConversationID: "c1", UserInput: "hi", Response: "Hello!", Plain: true,
		}).SetMetadata(reply.Metadata{"currentNode": "greet", "nodeTrace": []any{"start", "greet"}, "state": map[string]any{"n": 2.0}})},
		{name: "null strings", body: `{"conversationId":"c1","userInput":null,"response":null,"metadata":{},"conversationEnded":true,"delayedResponse":"true"}`,
			want: (&reply.TurnResult{ConversationID: "c1", ConversationEnded: true, DelayedResponse: true}).SetMetadata(reply.Metadata{})},
		// A required object or flag sent as null has no value: read as
		// {} or false, it failed the agent's node or ended check.
		{name: "null metadata", body: `{"conversationId":"c1","userInput":"","response":"x","metadata":null,"conversationEnded":false,"delayedResponse":false}`,
			wantErr: `malformed response: required field "metadata" is null, where the reference promises a value`},
		{name: "null conversationEnded", body: `{"conversationId":"c1","userInput":"","response":"x","metadata":{},"conversationEnded":null,"delayedResponse":false}`,
			wantErr: `malformed response: required field "conversationEnded" is null, where the reference promises a value`},
		{name: "null flags and metadata", body: `{"conversationId":"c1","userInput":"","response":"x","metadata":null,"conversationEnded":null,"delayedResponse":null}`,
			wantErr: `malformed response: required fields "metadata", "conversationEnded", "delayedResponse" are null, where the reference promises a value`},
		{name: "missing beside null", body: `{"conversationId":"c1","response":"x","metadata":null,"conversationEnded":null}`,
			wantErr: `malformed response: missing required fields "userInput", "delayedResponse"`},
		{name: "escapes and unicode", body: `{"conversationId":"c1","userInput":"caf\u00e9","response":"line\none \"q\" ✓","metadata":{},"conversationEnded":false,"delayedResponse":false}`,
			want: (&reply.TurnResult{ConversationID: "c1", UserInput: "café", Response: "line\none \"q\" ✓", Plain: true}).SetMetadata(reply.Metadata{})},
		{name: "data envelope", body: `{"success":true,"data":` + goodTurn + `}`, want: (&reply.TurnResult{
			ConversationID: "c1", UserInput: "hi", Response: "Hello!",
		}).SetMetadata(reply.Metadata{"currentNode": "greet", "nodeTrace": []any{"start", "greet"}, "state": map[string]any{"n": 2.0}})},
		{name: "truncated", body: goodTurn[:60], wantErr: "malformed response: truncated JSON"},
		{name: "not JSON", body: `<html>ok</html>`, wantErr: "malformed response: invalid JSON at byte 1"},
		{name: "empty body", body: ``, wantErr: "malformed response: truncated JSON"},
		{name: "missing fields", body: `{"conversationId":"c1","response":"x","metadata":{}}`, wantErr: `missing required fields "userInput", "conversationEnded", "delayedResponse"`},
		{name: "no conversationId", body: `{"userInput":"","response":"x","metadata":{},"conversationEnded":false,"delayedResponse":false}`, wantErr: `missing required field "conversationId"`},
		{name: "no metadata", body: `{"conversationId":"c1","userInput":"","response":"x","conversationEnded":false,"delayedResponse":false}`, wantErr: `missing required field "metadata"`},
		{name: "response is an object", body: `{"conversationId":"c1","userInput":"","response":{"text":"x"},"metadata":{},"conversationEnded":false,"delayedResponse":false}`,
			wantErr: `field "response": expected a string, got object`},
		{name: "ended is a word", body: `{"conversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":"maybe","delayedResponse":false}`,
			wantErr: `field "conversationEnded": expected a boolean, got string`},
		{name: "metadata is an array", body: `{"conversationId":"c1","userInput":"","response":"","metadata":["greet"],"conversationEnded":false,"delayedResponse":false}`,
			wantErr: `field "metadata": expected an object, got array`},
		// Empty metadata as an encoder that writes an empty map as []
		// (PHP's json_encode) sends it: no members, as null.
		{name: "metadata is an empty array", body: `{"conversationId":"c1","userInput":"","response":"x","metadata":[ ],"conversationEnded":false,"delayedResponse":false}`,
			want: (&reply.TurnResult{ConversationID: "c1", Response: "x"}).SetMetadata(reply.Metadata{})},
		{name: "empty conversation id", body: `{"conversationId":"","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false}`,
			wantErr: `field "conversationId" is empty`},
		{name: "top-level array", body: `[1,2]`, wantErr: "expected an object, got array"},
		{name: "success false", body: `{"success":false,"error_code":"CHAT_TIMEOUT","error_message":"too slow"}`, wantErr: "200 CHAT_TIMEOUT: too slow", wantAPI: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDecodeConversation(t *testing.T) {
	type testCase struct {
		name    string
		body    string
		check   func(t *testing.T, c *reply.Conversation)
		wantErr string
	}
	f := &fixed{status: 200}
	c := serveFixed(t, f)
	run := func(t *testing.T, tc testCase) {
		f.set(tc.body, nil)
		got, err := c.GetConversation(context.Background(), "restaurant", "c1")
		if tc.wantErr != "" {
			var re *ResponseError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want a ResponseError containing %q", err, tc.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "GET /v3/ws-abcd1234/restaurant/conversations/c1: 200: malformed response: ") {
				t.Errorf("error does not name the endpoint and status: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		tc.check(t, got)
	}
	const base = `"id":"c1","account_id":"ws-abcd1234","project_id":"restaurant","environment":"live","started_at":"2026-03-02T10:00:00Z","channel":"WEBCHAT","in_progress":false`
	for _, tc := range []testCase{
		{name: "every field", body: `{` + base + `,"variant_id":"v1","variant_name":"Summer menu","from_number":"+15550001","to_number":"+15550002",
			"num_turns":2,"total_duration":61,"vendor_duration":58,"handoff":true,"handoff_reason":"asked for human","handoff_destination":"sales",
			"num_silences":1,"num_ood":0,"metrics":{"CALL_DURATION":"61","CALL_TURN":["2026-03-02T10:00:01Z","2026-03-02T10:00:30Z"]},
			"state":{"from_":"+15550001","party":2},
			"turns":[{"user_input":"","user_input_dtmf":"","user_input_datetime":"2026-03-02T10:00:01Z","agent_response":"Hi","agent_response_datetime":"2026-03-02T10:00:01.5Z",
			"latency":0.42,"translated_user_input":"","english_agent_response":"","intents":[],"entities":[],"is_ood":false,"is_silence":true,"barge_in":false},
			{"user_input":"table for two","user_input_dtmf":"","user_input_datetime":"2026-03-02T10:00:20Z","agent_response":"Done","agent_response_datetime":"2026-03-02T10:00:21Z",
			"latency":1,"intents":["book"],"entities":[{"party_size":"2"},{"dishes":["soup","salad"]}],"is_ood":false,"is_silence":false,"barge_in":true}]}`,
			check: func(t *testing.T, c *reply.Conversation) {
				want := reply.Conversation{
					ID: "c1", AccountID: "ws-abcd1234", ProjectID: "restaurant", VariantID: "v1", VariantName: "Summer menu",
					Environment: "live", StartedAt: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), Channel: "WEBCHAT",
					FromNumber: "+15550001", ToNumber: "+15550002", NumTurns: 2, TotalDuration: 61, VendorDuration: 58,
					Handoff: true, HandoffReason: "asked for human", HandoffDestination: "sales", NumSilences: 1,
					Metrics: map[string][]string{"CALL_DURATION": {"61"}, "CALL_TURN": {"2026-03-02T10:00:01Z", "2026-03-02T10:00:30Z"}},
					State:   map[string]any{"from_": "+15550001", "party": 2.0},
					Turns: []reply.ConversationTurn{
						{UserInputAt: time.Date(2026, 3, 2, 10, 0, 1, 0, time.UTC), AgentResponse: "Hi",
							AgentResponseAt: time.Date(2026, 3, 2, 10, 0, 1, 5e8, time.UTC), Latency: 0.42, Intents: []string{},
							IsSilence: true},
						{UserInput: "table for two", UserInputAt: time.Date(2026, 3, 2, 10, 0, 20, 0, time.UTC), AgentResponse: "Done",
							AgentResponseAt: time.Date(2026, 3, 2, 10, 0, 21, 0, time.UTC), Latency: 1, Intents: []string{"book"},
							Entities: []map[string][]string{{"party_size": {"2"}}, {"dishes": {"soup", "salad"}}}, BargeIn: true},
					},
				}
				if !reflect.DeepEqual(*c, want) {
					t.Errorf("got  %+v\nwant %+v", *c, want)
				}
			}},
		{name: "tolerated forms", body: `{` + base + `,"variant_id":null,"num_turns":"7","total_duration":12.0,"handoff":null,"metrics":{"X":null,"Y":5},"turns":[{"user_input":null,"latency":"0.25","user_input_datetime":"2026-03-02 10:00:01","intents":"book","entities":[null,{"a":"b"}]}]}`,
			check: func(t *testing.T, c *reply.Conversation) {
				if c.VariantID != "" || c.NumTurns != 7 || c.TotalDuration != 12 || c.Handoff {
					t.Errorf("scalars: %+v", c)
				}
				if !reflect.DeepEqual(c.Metrics, map[string][]string{"Y": {"5"}}) {
					t.Errorf("metrics %v", c.Metrics)
				}
				tr := c.Turns[0]
				if tr.Latency != 0.25 || !reflect.DeepEqual(tr.Intents, []string{"book"}) || len(tr.Entities) != 1 || tr.UserInputAt.IsZero() {
					t.Errorf("turn %+v", tr)
				}
			}},
		// An empty map written as an empty array, as PHP's json_encode
		// writes one: metrics and state are empty; a non-empty array is
		// still no object.
		{name: "empty maps as arrays", body: `{` + base + `,"metrics":[],"state":[ ]}`,
			check: func(t *testing.T, c *reply.Conversation) {
				if len(c.Metrics) != 0 || len(c.State) != 0 {
					t.Errorf("metrics %v, state %v; want none", c.Metrics, c.State)
				}
			}},
		{name: "metrics a non-empty array", body: `{` + base + `,"metrics":["CALL_DURATION"]}`, wantErr: `field "metrics": expected an object, got array`},
		{name: "state a non-empty array", body: `{` + base + `,"state":[{"a":1}]}`, wantErr: `field "state": expected an object, got array`},
		{name: "missing required", body: `{"id":"c1","account_id":"a","project_id":"p"}`, wantErr: `conversation "c1": missing required fields "started_at", "environment", "channel", "in_progress"`},
		{name: "missing owners", body: `{"id":"c1","environment":"live","started_at":"2026-03-02T10:00:00Z","channel":"WEBCHAT","in_progress":false}`,
			wantErr: `conversation "c1": missing required fields "account_id", "project_id"`},
		// v3 sends empty strings, never null: a required member
		// sent as null is no value to judge (in_progress: null read
		// as settled, channel: null failed a channel check).
		{name: "null in_progress", body: `{` + strings.Replace(base, `"in_progress":false`, `"in_progress":null`, 1) + `}`,
			wantErr: `conversation "c1": required field "in_progress" is null, where the reference promises a value`},
		{name: "null required of every type", body: `{` + strings.NewReplacer(`"channel":"WEBCHAT"`, `"channel":null`, `"started_at":"2026-03-02T10:00:00Z"`, `"started_at":null`, `"environment":"live"`, `"environment":null`).Replace(base) + `}`,
			wantErr: `conversation "c1": required fields "started_at", "environment", "channel" are null, where the reference promises a value`},
		{name: "wrong type of required", body: `{` + strings.Replace(base, `"channel":"WEBCHAT"`, `"channel":["WEBCHAT"]`, 1) + `}`, wantErr: `field "channel": expected a string, got array`},
		{name: "in_progress wrong type", body: `{` + strings.Replace(base, `"in_progress":false`, `"in_progress":{}`, 1) + `}`, wantErr: `field "in_progress": expected a boolean, got object`},
		{name: "bad date", body: `{` + strings.Replace(base, `2026-03-02T10:00:00Z`, `yesterday`, 1) + `}`, wantErr: `"yesterday" is not an ISO 8601 date-time`},
		{name: "num_turns words", body: `{` + base + `,"num_turns":"many"}`, wantErr: `field "num_turns": expected an integer, got string`},
		{name: "metric object", body: `{` + base + `,"metrics":{"X":{"a":1}}}`, wantErr: `field "metrics": expected a string or an array of strings, got object`},
		{name: "entity value object", body: `{` + base + `,"turns":[{"entities":[{"a":{"b":1}}]}]}`, wantErr: `expected a string or an array of strings, got object`},
		{name: "turns not an array", body: `{` + base + `,"turns":{}}`, wantErr: `field "turns": expected an array, got object`},
		{name: "truncated", body: `{` + base, wantErr: `truncated JSON`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDecodeList(t *testing.T) {
	t.Parallel()
	const conv = `{"id":"c1","account_id":"a","project_id":"p","environment":"live","started_at":"2026-03-02T10:00:00Z","channel":"CHAT","in_progress":true}`
	f := &fixed{status: 200}
	c := serveFixed(t, f)
	for _, tc := range []struct {
		name       string
		body       string
		v1         bool
		wantN      int
		wantCursor string
		wantOffset int // -1: none
		wantErr    string
		notErr     string // not in the error
	}{
		{name: "cursor page", body: `{"conversations":[` + conv + `,` + conv + `],"cursor":"abc"}`, wantN: 2, wantCursor: "abc", wantOffset: -1},
		{name: "last page", body: `{"conversations":[],"cursor":null}`, wantOffset: -1},
		{name: "offset page", body: `{"conversations":[` + conv + `],"next_offset":"5"}`, wantN: 1, wantOffset: 5},
		{name: "null list", body: `{"conversations":null}`, wantOffset: -1},
		{name: "v1 whitelisted", v1: true, body: `{"conversations":[{"id":"c1","account_id":"a","project_id":"p","started_at":"2026-03-02T10:00:00Z"}],"descriptions":{"conversations":{"id":"conversation id"}},"next_offset":1}`, wantN: 1, wantOffset: 1},
		// A v3 record cut to v1's whitelist is the project's field
		// whitelisting, and said so.
		{name: "v3 needs more than the whitelist", body: `{"conversations":[{"id":"c1","account_id":"a","project_id":"p","started_at":"2026-03-02T10:00:00Z"}]}`,
			wantErr: `conversations[0]: conversation "c1": missing required fields "environment", "channel", "in_progress": it holds only id, account_id, project_id and started_at, the fields the reference's v1 keeps when the project's field whitelisting is on`},
		// Any other member than the four is no whitelisting: no hint.
		{name: "v3 missing fields beside others", body: `{"conversations":[{"id":"c1","account_id":"a","project_id":"p","started_at":"2026-03-02T10:00:00Z","to_number":"+447700900001"}]}`,
			wantErr: `conversations[0]: conversation "c1": missing required fields "environment", "channel", "in_progress"`, notErr: "whitelisting"},
		{name: "v3 without the whitelist's id either", body: `{"conversations":[{"account_id":"a","project_id":"p","started_at":"2026-03-02T10:00:00Z"}]}`,
			wantErr: `conversations[0]: missing required fields "id", "environment", "channel", "in_progress"`, notErr: "whitelisting"},
		{name: "v1 whitelisted with a null", v1: true, body: `{"conversations":[{"id":"c1","account_id":"a","project_id":"p","started_at":null}]}`,
			wantErr: `conversations[0]: conversation "c1": required field "started_at" is null`, notErr: "whitelisting"},
		{name: "next_offset 0 is the end", body: `{"conversations":[` + conv + `],"next_offset":0}`, wantN: 1, wantOffset: -1},
		{name: "an empty id", body: `{"conversations":[` + strings.Replace(conv, `"id":"c1"`, `"id":""`, 1) + `]}`, wantErr: `conversations[0]: field "id" is empty`},
		{name: "no conversations", body: `{"cursor":null}`, wantErr: `missing required field "conversations"`},
		{name: "conversations object", body: `{"conversations":{}}`, wantErr: `field "conversations": expected an array, got object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.set(tc.body, nil)
			var page *ConversationPage
			var err error
			if tc.v1 {
				page, err = c.ListConversationsV1(context.Background(), "p", ListQuery{})
			} else {
				page, err = c.ListConversations(context.Background(), "p", ListQuery{})
			}
			if tc.notErr != "" && err != nil && strings.Contains(err.Error(), tc.notErr) {
				t.Fatalf("err = %v, want nothing of %q", err, tc.notErr)
			}
			if erredAsWanted(t, err, tc.wantErr) {
				return
			}
			if len(page.Conversations) != tc.wantN || page.Cursor != tc.wantCursor {
				t.Errorf("page %+v", page)
			}
			if tc.wantOffset < 0 && page.NextOffset != nil || tc.wantOffset >= 0 && (page.NextOffset == nil || *page.NextOffset != tc.wantOffset) {
				t.Errorf("next offset %v, want %d", page.NextOffset, tc.wantOffset)
			}
			// v1 describes its keys; the description is handed on.
			if described := strings.Contains(tc.body, `"descriptions"`); (page.Descriptions != nil) != described {
				t.Errorf("descriptions %v, want some: %v", page.Descriptions, described)
			}
			if page.More() != (tc.wantCursor != "" || tc.wantOffset >= 0) {
				t.Errorf("More() = %v", page.More())
			}
		})
	}
}

func TestHugeBody(t *testing.T) {
	t.Parallel()
	f := &fixed{status: 200, body: `{"conversations":[` + strings.Repeat(`"x",`, 1<<10) + `"x"]}`}
	srv := serveFixed(t, f)
	c, err := New(Config{BuildURL: srv.BuildURL(), RuntimeURL: srv.RuntimeURL(), AccountID: "slug_1", MaxBodyBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListConversations(context.Background(), "p", ListQuery{})
	if err == nil || !strings.Contains(err.Error(), "GET /v3/slug_1/p/conversations: 200: malformed response: body exceeds the limit of 1 KiB") {
		t.Fatalf("err = %v", err)
	}
	// Without Content-Length the limit still holds.
	f.set(f.body, map[string]string{"Transfer-Encoding": "chunked"})
	_, err = c.ListConversations(context.Background(), "p", ListQuery{})
	if err == nil || !strings.Contains(err.Error(), "body exceeds the limit") {
		t.Fatalf("chunked: err = %v", err)
	}
}

// fastTurnBodies are bodies on both sides of fastTurn's line: the common
// shape it must read like the general path, and the shapes it must leave to
// the general path.
var fastTurnBodies = []struct {
	body string
	fast bool
}{
	{goodTurn, true},
	{" \n\t{ \"conversationId\" : \"c1\" , \"userInput\":\"\",\"response\":\"\",\"metadata\":{ } ,\"conversationEnded\":false,\"delayedResponse\":false}\r\n", true},
	{`{"conversationId":"c1","userInput":null,"response":null,"metadata":{},"conversationEnded":true,"delayedResponse":"true"}`, true},
	{`{"conversationId":"c1","userInput":"caf\u00e9","response":"line\none \"q\" ✓","metadata":{"k\u00e9y":"v\/","e":[],"o":{},"n":[-0.5e+3,1E2,0,-0,12345678901234567890],"b":[true,false,null]},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":42,"userInput":"","response":"","metadata":{"dup":1,"dup":2},"conversationEnded":0,"delayedResponse":"false","extra":{"x":[1,{"y":"\u2028"}]}}`, true},
	{"{\"conversationId\":\"c1\",\"userInput\":\"\xff\",\"response\":\"\",\"metadata\":{\"bad\":\"\xfe\xfd\"},\"conversationEnded\":false,\"delayedResponse\":false}", true},
	// Typed members: of types Check accepts as they are (the metadata
	// is deferred), or that it must look inside (built at once).
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"asrLangCode":"en","currentNode":7,"inFlow":true,"nodeTrace":["A",1,null],"node_trace":"A","state":{"a":[1e5]},"metrics":{"M":"1"},"functionEvents":[{"name":"f"},null],"function_events":{"name":"g"},"llmRequests":[],"cited_topic":null,"other":[[{}]]},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":"1","b":{"a":1}},"currentNode":null,"current_node":"X","node_trace":["A"],"dup":[{"x":"y"}],"dup":1},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{` + stateKeys(20) + `}},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{ "a" : 1 , "axb" : 2 , "ayb" : 3 }},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{ "b" : 1 , "a" : 2 , "a" : 3 }},"conversationEnded":false,"delayedResponse":false}`, false},
	// Keys of one hash (length, first and last byte), a key in UTF-8.
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"axb":1,"ayb":2,"":3,"größe":4,"":[]}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"axb":1,"ayb":2,"":3,"größe":4,"azb":{"axb":5}}},"conversationEnded":false,"delayedResponse":false}`, true},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"currentNode":{"name":"N"},"state":"{\"a\":1}","nodeTrace":[{"name":"A"},"B",null],"metrics":[{"name":"m","value":"1"}]},"conversationEnded":false,"delayedResponse":false}`, true},
	// Left to the general path.
	// A member read, or a key of state, sent twice (metadataSentTwice).
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":"1"},"currentNode":null,"state":{"b":"2"}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"currentNode":"A","currentNode":"A"},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"currentNode":{"name":"A"},"currentNode":"B"},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"currentNode":{"name":"A"},"currentNode":"B","inFlow":"x"},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":"1","b":"2","a":"3"}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":"1","\u0061":"3"}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{` + stateKeys(20) + `,"k19":0}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":"1",}},"conversationEnded":false,"delayedResponse":false}`, false},
	{"{\"conversationId\":\"c1\",\"userInput\":\"\",\"response\":\"\",\"metadata\":{\"state\":{\"\xff\":1,\"\xfe\":2}},\"conversationEnded\":false,\"delayedResponse\":false}", false},
	{"{\"conversationId\":\"c1\",\"userInput\":\"\",\"response\":\"\",\"metadata\":{\"state\":{\"é\t\":1}},\"conversationEnded\":false,\"delayedResponse\":false}", false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":1 "b":2}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":1,"b":}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":1,"b`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a":1,}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{a":1}},"conversationEnded":false,"delayedResponse":false}`, false},
	// A state value that does not read, and then what would read as
	// metadata members, were the state taken to end there.
	{`{"conversationId":"c1","userInput":"","response":"","conversationEnded":false,"delayedResponse":false,"metadata":{"state":{"a":-,"b":1}}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"a" "1"}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":[1],"currentNode":{},"nodeTrace":[[]]},"conversationEnded":false,"delayedResponse":false}`, false}, // Check refuses it
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"st\u0061te":{},"state":7},"conversationEnded":false,"delayedResponse":false}`, false},                     // Check refuses it
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":{"x":1e999}},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"success":true,"data":` + goodTurn + `}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":null,"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":null,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":null}`, false},
	{`{"success":false,"error_code":"CHAT_TIMEOUT","error_message":"too slow"}`, false},
	{`{"ConversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","conversationId":"c2","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":{"text":"x"},"metadata":{},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":[],"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"n":1e999},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"n":01},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"a\qb","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false,"extra":{"a\qb":1}}`, false},
	{"{\"conversationId\":\"c1\",\"userInput\":\"a\tb\",\"response\":\"\",\"metadata\":{},\"conversationEnded\":false,\"delayedResponse\":false}", false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false} x`, false},
	{`{"conversationId":"","userInput":"","response":"","metadata":{},"conversationEnded":false,"delayedResponse":false}`, false},
	{`{"conversationId":"c1","userInput":"","response":"","metadata":{"state":`, false}, // cut after a typed member's name
	{`{"conversationId":"c1","response":"x","metadata":{}}`, false},
	{goodTurn[:60], false},
	{`[1,2]`, false},
	{``, false},
}

// TestTurnMember: fastTurn's look-up by length finds each member it
// reads by its exact name, and no other key: a case-folded name, one a
// letter longer or shorter, an envelope's member, none, a long one.
func TestTurnMember(t *testing.T) {
	t.Parallel()
	for m, name := range turnMemberNames {
		if got := turnMember(name); got != m {
			t.Errorf("turnMember(%q) = %d, want %d", name, got, m)
		}
		for _, other := range []string{strings.ToUpper(name[:1]) + name[1:], name + "s", name[:len(name)-1]} {
			if got := turnMember(other); got != -1 {
				t.Errorf("turnMember(%q) = %d, want -1", other, got)
			}
		}
	}
	for _, other := range []string{"", "data", "success", "error_message", strings.Repeat("response", 3)} {
		if got := turnMember(other); got != -1 {
			t.Errorf("turnMember(%q) = %d, want -1", other, got)
		}
	}
}

// TestFastTurnMatchesGeneralPath checks fastTurn against the general path:
// what it accepts must decode to exactly the general path's result, raw
// metadata included, and what it refuses is decided by the general path.
func TestFastTurnMatchesGeneralPath(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	rq := &call{ep: epChatTurn, path: "/v1/agents/a/debug-chat/c1"}
	for i, tc := range fastTurnBodies {
		got, ok := fastTurn([]byte(tc.body))
		if ok != tc.fast {
			t.Errorf("body %d: fastTurn ok = %v, want %v\n%s", i, ok, tc.fast, tc.body)
			continue
		}
		if !ok {
			continue
		}
		want, err := c.decodeWireTurn(rq, 200, []byte(tc.body), 1)
		if err != nil {
			t.Errorf("body %d: fastTurn accepted what the general path refuses: %v", i, err)
			continue
		}
		if err := agreesWith(got, want, []byte(tc.body)); err != nil {
			t.Errorf("body %d: %v", i, err)
		}
	}
}

// agreesWith checks fastTurn's result against the general path's, and,
// when fastTurn calls the body plain, against reply.ParseTurn, which
// reads a released turn's body again (result.Turn.Release).
func agreesWith(fast, general *reply.TurnResult, body []byte) error {
	if err := membersAgree(fast.RawMetadata); err != nil {
		return fmt.Errorf("%q: %v", body, err)
	}
	if err := accessorsAgree(body, general.Meta()); err != nil {
		return err
	}
	plain := fast.Plain
	f := undeferred(fast)
	f.Plain = false
	if !reflect.DeepEqual(f, general) {
		return fmt.Errorf("disagree on %q:\nfast    %#v\ngeneral %#v", body, f, general)
	}
	if !plain {
		return nil
	}
	p, ok := reply.ParseTurn(body)
	if !ok || p.ConversationID != f.ConversationID || p.UserInput != f.UserInput || p.Response != f.Response ||
		p.ConversationEnded != f.ConversationEnded || p.DelayedResponse != f.DelayedResponse || string(p.RawMetadata) != string(f.RawMetadata) {
		return fmt.Errorf("plain %q, but ParseTurn gives %#v (ok %v), not %#v", body, p, ok, fast)
	}
	return nil
}

// memberSpellings are the spellings a reader of one typed member decodes
// alone (reply.Deferred): members with aliases and without.
var memberSpellings = [][]string{
	{"state"}, {"currentNode", "current_node"}, {"nodeTrace", "node_trace"},
	{"functionEvents", "function_events"}, {"citedTopic", "cited_topic"},
}

// membersAgree checks decodeMetadata's contract with reply.Deferred on
// the metadata raw, when fastTurn deferred it: the members decoded alone
// are those of the whole object under the spellings asked for, with the
// same values (the last of duplicate keys, as the whole holds them),
// whether read from the keys shallowMetadata recorded or, when it could
// not keep them all, from the object; there, untyped names too.
func membersAgree(raw []byte) error {
	var at reply.TypedAt
	if p := (fastParser{b: raw}); len(raw) == 0 || !p.shallowMetadata(&at) {
		return nil
	}
	var unknown reply.TypedAt
	for range 17 {
		unknown.Add(0, reply.Accept{})
	}
	whole := decodeMetadata(raw, nil, &at)
	if w := decodeMetadata(raw, nil, &unknown); !reflect.DeepEqual(w, whole) {
		return fmt.Errorf("the whole, read with and without offsets: %#v, %#v", whole, w)
	}
	check := func(sp []string, at *reply.TypedAt, how string) error {
		want := maps.Clone(whole)
		maps.DeleteFunc(want, func(k string, _ any) bool { return !slices.Contains(sp, k) })
		if got := decodeMetadata(raw, sp, at); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("members %q decoded alone %s: %#v, want %#v", sp, how, got, want)
		}
		return nil
	}
	for _, sp := range memberSpellings {
		if err := check(sp, &at, "from their keys"); err != nil {
			return err
		}
		if err := check(sp, &unknown, "from the object"); err != nil {
			return err
		}
	}
	for _, sp := range [][]string{{"dup"}, {"absent"}} {
		if err := check(sp, &unknown, "from the object"); err != nil {
			return err
		}
	}
	return nil
}

// accessorsAgree reads members of fastTurn's result for body through
// their accessors, each on a result of its own (so each is decoded
// alone, from the keys fastTurn recorded), against the whole metadata.
func accessorsAgree(body []byte, whole reply.Metadata) error {
	for _, rd := range []struct {
		name  string
		alone func(*reply.TurnResult) any
		whole func(reply.Metadata) any
	}{
		{"State", func(r *reply.TurnResult) any { return r.State() }, func(m reply.Metadata) any { return m.State() }},
		{"CurrentNode", func(r *reply.TurnResult) any { return r.CurrentNode() }, func(m reply.Metadata) any { return m.CurrentNode() }},
		{"NodeTrace", func(r *reply.TurnResult) any { return r.NodeTrace() }, func(m reply.Metadata) any { return m.NodeTrace() }},
		{"FunctionEvents", func(r *reply.TurnResult) any { return r.FunctionEvents() }, func(m reply.Metadata) any { return m.FunctionEvents() }},
		{"CitedTopic", func(r *reply.TurnResult) any { return r.CitedTopic() }, func(m reply.Metadata) any { return m.CitedTopic() }},
	} {
		r, _ := fastTurn(body)
		if got, want := rd.alone(r), rd.whole(whole); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("%q: %s() = %#v, Meta().%s() = %#v", body, rd.name, got, rd.name, want)
		}
	}
	return nil
}

// TestTypedMembersRecorded: shallowMetadata records the key of every
// typed member, under any spelling, escaped or repeated, with the member
// it is, and of no other; past what TypedAt holds it knows none, and
// members are found by reading the object (membersAgree holds both ways
// to the whole).
func TestTypedMembersRecorded(t *testing.T) {
	t.Parallel()
	big := `"pad":"` + strings.Repeat("x", 1<<16) + `",`
	// 16 typed keys (the last a state), each spelled once (a spelling twice is left to
	// the general path).
	many := ""
	for _, k := range []string{"asrLangCode", "asr_lang_code", "ttsLangCode", "tts_lang_code", "agentResponseAudioUrl", "agent_response_audio_url",
		"agentResponseAudioURL", "inFlow", "in_flow", "inStep", "in_step", "citedTopic", "cited_topic", "handoffDestination", "handoff_destination"} {
		many += strconv.Quote(k) + `:null,`
	}
	many += `"state":{},`
	for _, tc := range []struct {
		raw  string
		keys map[string][]string // by member: the keys at the offsets recorded; nil: none known
	}{
		{`{}`, map[string][]string{"state": {}, "currentNode": {}}},
		{`{"other":{"state":1},"st\u0061te":{"a":"1"},"current_node":"X","nodeTrace":["A"],"currentNode":null}`,
			map[string][]string{"state": {"state"}, "currentNode": {"current_node", "currentNode"}, "nodeTrace": {"nodeTrace"}, "inFlow": {}}},
		{`{ "inFlow" : "f" , "x" : [ "inStep" ] }`, map[string][]string{"inFlow": {"inFlow"}, "inStep": {}}},
		{`{` + big + `"state":{"a":"1"}}`, nil},
		{`{` + many + `"currentNode":"N"}`, nil},
	} {
		var at reply.TypedAt
		if p := (fastParser{b: []byte(tc.raw)}); !p.shallowMetadata(&at) {
			t.Errorf("shallowMetadata refused %.80s", tc.raw)
			continue
		}
		if _, ok := at.OffsetsOf("state", nil); ok != (tc.keys != nil) {
			t.Errorf("%.80s: offsets known = %v, want %v", tc.raw, ok, tc.keys != nil)
			continue
		}
		for member, want := range tc.keys {
			offs, _ := at.OffsetsOf(member, nil)
			keys := []string{}
			for _, off := range offs {
				p := fastParser{b: []byte(tc.raw), i: int(off)}
				k, _ := p.pairHead()
				keys = append(keys, k)
			}
			if !slices.Equal(keys, want) {
				t.Errorf("%.80s: keys recorded for %s %q, want %q", tc.raw, member, keys, want)
			}
		}
		if err := membersAgree([]byte(tc.raw)); err != nil {
			t.Error(err)
		}
	}
}

// TestDeferredMetadata checks that the metadata of the reference shape,
// which fastTurn leaves undecoded, is the same decoded value for every
// reader, however many read it at once (run with -race; that it is
// decoded once, on first read, is TestDeferMetadata's in package reply).
func TestDeferredMetadata(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	rq := &call{ep: epChatTurn, path: "/x"}
	res, err := c.decodeTurn(rq, 200, []byte(goodTurn), 1)
	if err != nil {
		t.Fatal(err)
	}
	const readers = 8
	got := make(chan reply.Metadata, readers)
	for range readers {
		go func() { got <- res.Meta() }()
	}
	first := <-got
	if want := (reply.Metadata{"currentNode": "greet", "nodeTrace": []any{"start", "greet"}, "state": map[string]any{"n": 2.0}}); !reflect.DeepEqual(first, want) {
		t.Fatalf("Meta() = %v, want %v", first, want)
	}
	for range readers - 1 {
		if m := <-got; reflect.ValueOf(m).UnsafePointer() != reflect.ValueOf(first).UnsafePointer() {
			t.Error("Meta decoded the metadata more than once")
		}
	}
}

// undeferred is r as its readers see it: the metadata decoded (Meta),
// whether the decoder deferred it or not.
func undeferred(r *reply.TurnResult) *reply.TurnResult {
	return (&reply.TurnResult{
		ConversationID: r.ConversationID, UserInput: r.UserInput, Response: r.Response,
		ConversationEnded: r.ConversationEnded, DelayedResponse: r.DelayedResponse,
		RawMetadata: r.RawMetadata, Plain: r.Plain,
	}).SetMetadata(r.Meta())
}

// TestFastTurnRawMetadataIsCapped checks that the raw metadata, a slice of
// the body, cannot be appended to over the rest of the body.
func TestFastTurnRawMetadataIsCapped(t *testing.T) {
	t.Parallel()
	body := []byte(goodTurn)
	res, ok := fastTurn(body)
	if !ok {
		t.Fatal("fastTurn refused the reference shape")
	}
	if cap(res.RawMetadata) != len(res.RawMetadata) {
		t.Fatalf("cap %d > len %d", cap(res.RawMetadata), len(res.RawMetadata))
	}
	_ = append(res.RawMetadata, 'x')
	if string(body) != goodTurn {
		t.Fatal("append to RawMetadata changed the body")
	}
}

// TestRawMetadataSharesBody: the raw metadata of a reply points into the
// body the transcript keeps, on the fast path and on the general one
// (an envelope, a repeated member), rather than being a second copy of it
// kept until the reports.
func TestRawMetadataSharesBody(t *testing.T) {
	t.Parallel()
	c := newTestClient(t, "http://127.0.0.1:1", RetryPolicy{})
	rq := &call{ep: epChatTurn, path: "/x"}
	for _, body := range []string{
		goodTurn,
		`{"success":true,"data":` + goodTurn + `}`,
		`{"conversationId":"c1","conversationId":"c1","userInput":"","response":"","metadata":{ "currentNode": "n" },"metadata":{"currentNode":"n"},"conversationEnded":false,"delayedResponse":false}`,
		// Members sent twice that say one thing, or that no check reads
		// as one (two spellings are read in order; an untyped member,
		// a key inside a state's value): read, not the platform's error.
		`{"conversationId":"c1","userInput":"","response":"","metadata":{"currentNode":"n","state":{"a":[1, 2],"a":[1,2],"b":{"x":1,"x":2}},"currentNode":"n","current_node":"m","other":1,"other":2,"state":{"a":[1,2],"a":[1,2],"b":{"x":1,"x":2}}},"conversationEnded":false,"delayedResponse":false}`,
	} {
		b := []byte(body)
		res, err := c.decodeTurn(rq, 200, b, 1)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		raw := res.RawMetadata
		if !within(b, raw) {
			t.Errorf("%s: RawMetadata %s is a copy, not the body's", body, raw)
		}
		if cap(raw) != len(raw) {
			t.Errorf("%s: RawMetadata can be appended to over the body (cap %d > len %d)", body, cap(raw), len(raw))
		}
	}
}

// within reports whether part is a slice of whole's memory.
func within(whole, part []byte) bool {
	for i := range whole {
		if len(part) > 0 && &whole[i] == &part[0] {
			return i+len(part) <= len(whole)
		}
	}
	return false
}

// FuzzFastTurn checks on arbitrary bodies that fastTurn never accepts what
// the general path refuses, and agrees with it on what it accepts.
func FuzzFastTurn(f *testing.F) {
	for _, tc := range fastTurnBodies {
		f.Add(tc.body)
	}
	c := newTestClient(f, "http://127.0.0.1:1", RetryPolicy{})
	rq := &call{ep: epChatTurn, path: "/x"}
	f.Fuzz(func(t *testing.T, body string) {
		got, ok := fastTurn([]byte(body))
		if !ok {
			return
		}
		want, err := c.decodeWireTurn(rq, 200, []byte(body), 1)
		if err != nil {
			t.Fatalf("fastTurn accepted what the general path refuses (%v): %q", err, body)
		}
		if err := agreesWith(got, want, []byte(body)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestTimeForms reads the date-time forms other implementations plausibly
// send: ISO 8601 as its producers write it (PostgreSQL's zone of hours
// only, a decimal comma, no seconds), and Unix time in seconds or
// milliseconds, as a number or a string, where the reference shows no
// format.
func TestTimeForms(t *testing.T) {
	t.Parallel()
	noon := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		json string
		want time.Time
		bad  bool
	}{
		{json: `"2026-03-01T12:00:00Z"`, want: noon},
		{json: `"2026-03-01T12:00:00.000Z"`, want: noon},
		{json: `"2026-03-01T13:00:00+01:00"`, want: noon},
		{json: `"2026-03-01T13:00:00+0100"`, want: noon},
		{json: `"2026-03-01T13:00:00+01"`, want: noon},
		{json: `"2026-03-01 13:00:00.000+01"`, want: noon},
		{json: `"2026-03-01 13:00:00+0100"`, want: noon},
		{json: `"2026-03-01T12:00:00,5Z"`, want: noon.Add(500 * time.Millisecond)},
		{json: `"2026-03-01T12:00Z"`, want: noon},
		{json: `"2026-03-01T12:00"`, want: noon},
		{json: `"2026-03-01 12:00:00"`, want: noon},
		{json: `1772366400`, want: noon},
		{json: `1772366400.25`, want: noon.Add(250 * time.Millisecond)},
		{json: `1772366400250`, want: noon.Add(250 * time.Millisecond)},
		{json: `"1772366400"`, want: noon},
		{json: `null`},
		{json: `""`},
		{json: `"yesterday"`, bad: true},
		{json: `-5`, bad: true},
		{json: `1e300`, bad: true},
		{json: `true`, bad: true},
		{json: `{}`, bad: true},
	} {
		var v jTime
		err := json.Unmarshal([]byte(tc.json), &v)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%s: read as %v, want an error", tc.json, v.V)
		case !tc.bad && err != nil:
			t.Errorf("%s: %v", tc.json, err)
		case !tc.bad && !v.V.Equal(tc.want):
			t.Errorf("%s: read as %v, want %v", tc.json, v.V, tc.want)
		}
		var x any
		if err := json.Unmarshal([]byte(tc.json), &x); err != nil {
			t.Fatal(err)
		}
		if got := (record{"t": x}).when("t"); !tc.bad && !got.Equal(tc.want) || tc.bad && !got.IsZero() {
			t.Errorf("record %s: read as %v", tc.json, got)
		}
	}
}

// TestSpecialLanes checks the word-at-a-time test of stringEnd against
// strPlain, byte by byte: every pair of byte values in every pair of
// lanes (a borrow from one lane into the next must not hide a byte that
// is not plain or flag one below the first), the other lanes plain.
func TestSpecialLanes(t *testing.T) {
	t.Parallel()
	for i := range 8 {
		for k := i; k < 8; k++ {
			for c1 := range 256 {
				for c2 := range 256 {
					w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
					w[i], w[k] = byte(c1), byte(c2)
					first := 8
					for l, c := range w {
						if !strPlain[c] {
							first = l
							break
						}
					}
					m := specialLanes(binary.LittleEndian.Uint64(w[:]))
					if got := bits.TrailingZeros64(m) / 8; got != first || m&^laneHigh != 0 {
						t.Fatalf("specialLanes(%q) = %#x: first lane %d, want %d", w, m, got, first)
					}
				}
			}
		}
	}
}

// TestStringEnd checks stringEnd, which steps over plain bytes 8 at a
// time, against the same scan a byte at a time, on literals with an end
// quote, an escape, a control character or a non-ASCII byte at every
// position of every length about a word or two.
func TestStringEnd(t *testing.T) {
	t.Parallel()
	byByte := func(b []byte) (int, bool, bool) {
		slow := false
		for j := 1; j < len(b); j++ {
			switch c := b[j]; {
			case strPlain[c]:
			case c == '"':
				return j + 1, slow, true
			case c == '\\':
				slow = true
				j++
			case c < 0x20:
				return 0, false, false
			default:
				slow = true
			}
		}
		return 0, false, false
	}
	specials := []string{`"`, `\"`, `\\`, `\`, "\x00", "\x1f", "\x7f", "\x80", "é", "\xff", " "}
	for n := range 26 {
		for at := range n + 1 {
			for _, sp := range specials {
				for _, tail := range []string{"", `"`, `x"`, `"` + strings.Repeat("y", 9) + `"`} {
					lit := []byte(`"` + strings.Repeat("a", at) + sp + strings.Repeat("b", n-at) + tail)
					p := fastParser{b: lit}
					end, slow, ok := p.stringEnd()
					wantEnd, wantSlow, wantOK := byByte(lit)
					if end != wantEnd || slow != wantSlow || ok != wantOK {
						t.Errorf("stringEnd(%q) = %d, %v, %v; byte by byte %d, %v, %v", lit, end, slow, ok, wantEnd, wantSlow, wantOK)
					}
				}
			}
		}
	}
}

// TestWhitelistHint: a v3 record that holds v1's whitelist (id,
// account_id, project_id, started_at) and nothing else is said to be the
// project's field whitelisting; one that lacks a member of the whitelist,
// or holds any other member of the summary, is a record cut short some
// other way, and is not.
func TestWhitelistHint(t *testing.T) {
	t.Parallel()
	f := &fixed{status: 200}
	c := serveFixed(t, f)
	kept := map[string]string{"id": `"c1"`, "account_id": `"a"`, "project_id": `"p"`, "started_at": `"2026-03-02T10:00:00Z"`}
	others := map[string]string{"variant_id": `"v"`, "variant_name": `"n"`, "environment": `"live"`, "channel": `"SMS"`,
		"from_number": `"+447700900001"`, "to_number": `"+447700900002"`, "in_progress": `true`, "num_turns": `1`,
		"total_duration": `1`, "vendor_duration": `1`, "handoff": `false`, "handoff_reason": `""`, "handoff_destination": `""`,
		"num_silences": `0`, "num_ood": `0`, "metrics": `{}`, "state": `{}`, "turns": `[]`}
	body := func(members map[string]string) string {
		var parts []string
		for k, v := range members {
			parts = append(parts, strconv.Quote(k)+":"+v)
		}
		return `{"conversations":[{` + strings.Join(parts, ",") + `}]}`
	}
	read := func(t *testing.T, members map[string]string) string {
		t.Helper()
		f.set(body(members), nil)
		_, err := c.ListConversations(context.Background(), "p", ListQuery{})
		if err == nil {
			t.Fatal("read, want an error: required members are missing")
		}
		return err.Error()
	}
	if msg := read(t, kept); !strings.Contains(msg, "the project's field whitelisting is on") {
		t.Fatalf("err = %s, want the whitelisting said", msg)
	}
	for name := range kept {
		t.Run("without "+name, func(t *testing.T) {
			m := maps.Clone(kept)
			delete(m, name)
			if msg := read(t, m); strings.Contains(msg, "whitelisting") {
				t.Errorf("err = %s, want no whitelisting said", msg)
			}
		})
	}
	for name, v := range others {
		t.Run("with "+name, func(t *testing.T) {
			m := maps.Clone(kept)
			m[name] = v
			if msg := read(t, m); strings.Contains(msg, "whitelisting") {
				t.Errorf("err = %s, want no whitelisting said", msg)
			}
		})
	}
}

// stateKeys is n members of a state, each key once: k0 to k(n-1).
func stateKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(keys, ",")
}

// TestStateDepth: shallowMetadata reads the members of a state, whose
// keys it holds to be distinct, as deep as those of any other object
// member, and defers them alike.
func TestStateDepth(t *testing.T) {
	t.Parallel()
	for n := maxFastDepth - 2; n <= maxFastDepth+1; n++ {
		deep := strings.Repeat("[", n) + strings.Repeat("]", n)
		var at reply.TypedAt
		state, other := fastParser{b: []byte(`{"state":{"a":` + deep + `}}`)}, fastParser{b: []byte(`{"other":{"a":` + deep + `}}`)}
		if s, o := state.shallowMetadata(&at), other.shallowMetadata(&at); s != o {
			t.Errorf("%d levels: a state read %v, another member %v", n, s, o)
		}
	}
}
