package reply

import (
	"encoding/json"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"
)

// decodeMetadata builds Metadata the way the client does: from JSON.
func decodeMetadata(t *testing.T, js string) Metadata {
	t.Helper()
	var m Metadata
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("bad test JSON %s: %v", js, err)
	}
	return m
}

func TestMetadataStringMembers(t *testing.T) {
	type testCase struct {
		name string
		js   string
		get  func(Metadata) string
		want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := tc.get(decodeMetadata(t, tc.js)); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	cases := []testCase{
		{"current node", `{"currentNode":"Greeting"}`, Metadata.CurrentNode, "Greeting"},
		{"current node snake case", `{"current_node":"Greeting"}`, Metadata.CurrentNode, "Greeting"},
		{"current node object", `{"currentNode":{"name":"Greeting","id":"n1"}}`, Metadata.CurrentNode, "Greeting"},
		{"current node null", `{"currentNode":null}`, Metadata.CurrentNode, ""},
		{"current node null falls back to alias", `{"currentNode":null,"current_node":"X"}`, Metadata.CurrentNode, "X"},
		{"current node missing", `{}`, Metadata.CurrentNode, ""},
		{"current node not derived from trace", `{"nodeTrace":["A","B"]}`, Metadata.CurrentNode, ""},
		{"flow", `{"inFlow":"Booking"}`, Metadata.InFlow, "Booking"},
		{"step", `{"in_step":"AskTime"}`, Metadata.InStep, "AskTime"},
		{"handoff", `{"handoffDestination":"front-desk"}`, Metadata.HandoffDestination, "front-desk"},
		{"handoff empty", `{"handoffDestination":""}`, Metadata.HandoffDestination, ""},
		{"cited topic", `{"citedTopic":"Opening hours"}`, Metadata.CitedTopic, "Opening hours"},
		{"asr", `{"asrLangCode":"en-GB"}`, Metadata.ASRLang, "en-GB"},
		{"tts", `{"tts_lang_code":"fr-FR"}`, Metadata.TTSLang, "fr-FR"},
		{"audio", `{"agentResponseAudioUrl":"https://a/b.wav"}`, Metadata.AudioURL, "https://a/b.wav"},
		{"number rendered", `{"currentNode":42}`, Metadata.CurrentNode, "42"},
		{"array is not a string", `{"currentNode":["A"]}`, Metadata.CurrentNode, ""},
		{"null alias skipped for the next one", `{"agent_response_audio_url":null,"agentResponseAudioURL":"https://a/c.wav"}`, Metadata.AudioURL, "https://a/c.wav"},
		{"empty name key skipped for the next one", `{"currentNode":{"name":"","title":"Greeting"}}`, Metadata.CurrentNode, "Greeting"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestMetadataListMembers(t *testing.T) {
	type testCase struct {
		name string
		js   string
		get  func(Metadata) []string
		want []string
	}
	run := func(t *testing.T, tc testCase) {
		if got := tc.get(decodeMetadata(t, tc.js)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %#v, want %#v", got, tc.want)
		}
	}
	cases := []testCase{
		{"trace", `{"nodeTrace":["Start","AskParty"]}`, Metadata.NodeTrace, []string{"Start", "AskParty"}},
		{"trace snake case", `{"node_trace":["Start"]}`, Metadata.NodeTrace, []string{"Start"}},
		{"trace of objects", `{"nodeTrace":[{"name":"Start"},{"node":"AskParty"},{"id":"n3"}]}`, Metadata.NodeTrace, []string{"Start", "AskParty", "n3"}},
		{"trace single string", `{"nodeTrace":"Start"}`, Metadata.NodeTrace, []string{"Start"}},
		{"trace empty string", `{"nodeTrace":""}`, Metadata.NodeTrace, nil},
		{"trace built in Go", `{}`, func(Metadata) []string { return Metadata{"nodeTrace": []string{"A"}}.NodeTrace() }, []string{"A"}},
		{"trace drops empty and null entries", `{"nodeTrace":["A","",null,"B"]}`, Metadata.NodeTrace, []string{"A", "B"}},
		{"trace empty", `{"nodeTrace":[]}`, Metadata.NodeTrace, []string{}},
		{"trace null", `{"nodeTrace":null}`, Metadata.NodeTrace, nil},
		{"trace wrong type", `{"nodeTrace":{"a":1}}`, Metadata.NodeTrace, nil},
		{"topics", `{"retrievedTopics":["Hours","Parking"]}`, Metadata.RetrievedTopics, []string{"Hours", "Parking"}},
		{"topics of objects", `{"retrievedTopics":[{"title":"Hours","score":0.9}]}`, Metadata.RetrievedTopics, []string{"Hours"}},
		{"sources", `{"retrieved_sources":["kb/hours.md"]}`, Metadata.RetrievedSources, []string{"kb/hours.md"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestMetadataState(t *testing.T) {
	type testCase struct {
		name string
		js   string
		want map[string]any
	}
	run := func(t *testing.T, tc testCase) {
		if got := decodeMetadata(t, tc.js).State(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %#v, want %#v", got, tc.want)
		}
	}
	cases := []testCase{
		{"object", `{"state":{"party_size":4,"name":"Ann"}}`, map[string]any{"party_size": 4.0, "name": "Ann"}},
		{"json string", `{"state":"{\"party_size\":4}"}`, map[string]any{"party_size": 4.0}},
		{"not json string", `{"state":"party_size=4"}`, nil},
		{"null", `{"state":null}`, nil},
		{"missing", `{}`, nil},
		{"array", `{"state":[1,2]}`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestMetadataMetrics(t *testing.T) {
	type testCase struct {
		name string
		js   string
		want map[string][]string
	}
	run := func(t *testing.T, tc testCase) {
		if got := decodeMetadata(t, tc.js).Metrics(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %#v, want %#v", got, tc.want)
		}
	}
	cases := []testCase{
		{"string", `{"metrics":{"BOOKED":"true"}}`, map[string][]string{"BOOKED": {"true"}}},
		{"array written twice", `{"metrics":{"CALL_TURN":["2026-01-01T10:00:00Z","2026-01-01T10:00:05Z"]}}`,
			map[string][]string{"CALL_TURN": {"2026-01-01T10:00:00Z", "2026-01-01T10:00:05Z"}}},
		{"number and bool rendered", `{"metrics":{"PARTY":4,"VIP":false,"SCORE":0.5}}`,
			map[string][]string{"PARTY": {"4"}, "VIP": {"false"}, "SCORE": {"0.5"}}},
		{"null value is written but empty", `{"metrics":{"X":null}}`, map[string][]string{"X": {}}},
		{"missing", `{}`, nil},
		{"null", `{"metrics":null}`, nil},
		{"empty", `{"metrics":{}}`, map[string][]string{}},
		{"array of name/value objects", `{"metrics":[{"name":"A","value":"1"},{"metric":"A","value":2},{"name":"B","value":["x","y"]},{"value":"nameless"},"junk"]}`,
			map[string][]string{"A": {"1", "2"}, "B": {"x", "y"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	// Metadata built in Go rather than decoded may hold []string values.
	goBuilt := Metadata{"metrics": map[string]any{"A": []string{"x", "y"}}}
	if got, want := goBuilt.Metrics(), map[string][]string{"A": {"x", "y"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Go-built metrics: got %#v, want %#v", got, want)
	}
}

func TestMetadataFunctionEvents(t *testing.T) {
	type want struct {
		Name   string
		Failed bool
		Error  string
	}
	type testCase struct {
		name string
		js   string
		want []want
	}
	run := func(t *testing.T, tc testCase) {
		evs := decodeMetadata(t, tc.js).FunctionEvents()
		got := make([]want, len(evs))
		for i, ev := range evs {
			got[i] = want{ev.Name, ev.Failed, ev.Error}
			if ev.Raw == nil {
				t.Errorf("event %d has no Raw", i)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %+v, want %+v", got, tc.want)
		}
	}
	cases := []testCase{
		{"simulator shape ok", `{"functionEvents":[{"name":"check_availability","status":"success","latency_ms":3}]}`,
			[]want{{"check_availability", false, ""}}},
		{"simulator shape error", `{"functionEvents":[{"name":"book","status":"error","error":"no table"}]}`,
			[]want{{"book", true, "no table"}}},
		{"function key", `{"functionEvents":[{"function":"book"}]}`, []want{{"book", false, ""}}},
		{"functionName key", `{"functionEvents":[{"functionName":"book"}]}`, []want{{"book", false, ""}}},
		{"function_name key", `{"function_events":[{"function_name":"book"}]}`, []want{{"book", false, ""}}},
		{"nested function object", `{"functionEvents":[{"function":{"name":"book","arguments":{}}}]}`, []want{{"book", false, ""}}},
		{"status failed any case", `{"functionEvents":[{"name":"a","status":"FAILED"},{"name":"b","status":"Failure"},{"name":"c","status":"ok"}]}`,
			[]want{{"a", true, ""}, {"b", true, ""}, {"c", false, ""}}},
		{"success false", `{"functionEvents":[{"name":"a","success":false,"error_message":"boom"},{"name":"b","success":true}]}`,
			[]want{{"a", true, "boom"}, {"b", false, ""}}},
		{"error object with message", `{"functionEvents":[{"name":"a","error":{"code":500,"message":"upstream down"}}]}`,
			[]want{{"a", true, "upstream down"}}},
		{"error object without message", `{"functionEvents":[{"name":"a","error":{"code":500}}]}`,
			[]want{{"a", true, `{"code":500}`}}},
		{"empty error is not a failure", `{"functionEvents":[{"name":"a","error":"","status":"success"},{"name":"b","error":{}},{"name":"c","error":null}]}`,
			[]want{{"a", false, ""}, {"b", false, ""}, {"c", false, ""}}},
		{"single object", `{"functionEvents":{"name":"a"}}`, []want{{"a", false, ""}}},
		{"non-objects skipped", `{"functionEvents":["a",1,{"name":"b"}]}`, []want{{"b", false, ""}}},
		{"nameless", `{"functionEvents":[{"status":"error"}]}`, []want{{"", true, ""}}},
		{"first name key wins", `{"functionEvents":[{"name":"a","function":"b"}]}`, []want{{"a", false, ""}}},
		{"error object error_message and error", `{"functionEvents":[{"name":"a","error":{"error_message":"x"}},{"name":"b","error":{"error":"y"}}]}`,
			[]want{{"a", true, "x"}, {"b", true, "y"}}},
		{"status trimmed and any case", `{"functionEvents":[{"name":"a","status":" error "},{"name":"b","status":"ERROR"}]}`,
			[]want{{"a", true, ""}, {"b", true, ""}}},
		{"error_message of a call that did not fail", `{"functionEvents":[{"name":"a","status":"success","error_message":"stale"}]}`,
			[]want{{"a", false, ""}}},
		{"error true", `{"functionEvents":[{"name":"a","error":true},{"name":"b","error":false}]}`,
			[]want{{"a", true, ""}, {"b", false, ""}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	if evs := decodeMetadata(t, `{}`).FunctionEvents(); evs != nil {
		t.Errorf("missing member: got %#v, want nil", evs)
	}
}

func TestMetadataLookup(t *testing.T) {
	md := decodeMetadata(t, `{
		"state": {"booking": {"code": "AB12CD", "party": 4}, "a.b": "dotted", "none": null},
		"llmRequests": [{"model": "m-small"}, {"model": "m-large"}],
		"node_trace": ["Start"], "nodeTrace": null,
		"currentNode": null, "current_node": "Greet", "inFlow": null,
		"x.y": "long", "x": {"y": "short"},
		"deep": {"a.b": {"c": 1}, "a": {"b": {"d": 2}}, "k.l": "long", "k": {"l": "short"}}
	}`)
	type testCase struct {
		path   string
		want   any
		wantOK bool
	}
	run := func(t *testing.T, tc testCase) {
		got, ok := md.Lookup(tc.path)
		if ok != tc.wantOK || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Lookup(%q) = %#v, %v; want %#v, %v", tc.path, got, ok, tc.want, tc.wantOK)
		}
	}
	cases := []testCase{
		{"state.booking.code", "AB12CD", true},
		{"state.booking.party", 4.0, true},
		{"llmRequests.0.model", "m-small", true},
		{"llmRequests.1.model", "m-large", true},
		{"llmRequests.-1.model", "m-large", true},
		{"llmRequests.2.model", nil, false},
		{"llmRequests.x", nil, false},
		{"state.a.b", "dotted", true},
		{"state.none", nil, true},
		{"state.missing", nil, false},
		{"state.booking.code.deeper", nil, false},
		{"nodeTrace.0", "Start", true},
		// A null under the reference name falls back to the alias, as
		// CurrentNode and NodeTrace read it; a null alone is found.
		{"currentNode", "Greet", true},
		{"inFlow", nil, true},
		{"nothing", nil, false},
		{"x.y", "long", true},
		{"deep.k.l", "long", true},
		{"deep.a.b.d", 2.0, true},
		{"llmRequests.-2.model", "m-small", true},
		{"llmRequests.-3.model", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) { run(t, tc) })
	}
	if got, ok := Metadata(nil).Lookup(""); ok {
		t.Errorf("Metadata(nil).Lookup(\"\") = %#v, true; want not found", got)
	}
	if got, ok := LookupPath(4.0, ""); !ok || got != 4.0 {
		t.Errorf("LookupPath(4, \"\") = %#v, %v; want the value itself", got, ok)
	}
}

func TestMetadataRender(t *testing.T) {
	type testCase struct {
		name string
		in   any
		want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := Render(tc.in); got != tc.want {
			t.Errorf("Render(%#v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	cases := []testCase{
		{"string", "a <b>", "a <b>"},
		{"integral float", 4.0, "4"},
		{"large integral float", 1234567890123.0, "1234567890123"},
		{"negative", -2.0, "-2"},
		{"fraction", 2.5, "2.5"},
		{"2^53-1 still integral", float64(1<<53 - 1), "9007199254740991"},
		{"2^53 no longer exact", float64(1 << 53), "9.007199254740992e+15"},
		{"beyond int64", 1e20, "1e+20"},
		{"negative beyond int64", -1e20, "-1e+20"},
		{"small fraction", 1e-7, "1e-07"},
		{"float32 shortest", float32(0.1), "0.1"},
		{"float32 integral", float32(3), "3"},
		{"int64", int64(-5), "-5"},
		{"int", 7, "7"},
		{"json number", json.Number("3.0"), "3"},
		{"true", true, "true"},
		{"false", false, "false"},
		{"null", nil, ""},
		{"object sorted compact", map[string]any{"b": 1.0, "a": []any{"x", true}}, `{"a":["x",true],"b":1}`},
		{"no html escaping", map[string]any{"q": "<a&b>"}, `{"q":"<a&b>"}`},
		{"array", []any{1.0, "two", nil}, `[1,"two",null]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// acceptSamples are values of each type Accept names, by its byte.
var acceptSamples = map[byte][]any{
	'"': {"", "x", `{"a":1}`},
	'0': {0.0, -1.5},
	'b': {true, false},
	'{': {map[string]any{}, map[string]any{"name": ""}, map[string]any{"name": []any{}}},
	'[': {[]any{}, []any{"x"}},
}

// TestAcceptAgreesWithCheck holds AcceptOf to Check: every member and item
// type it accepts without looking inside, Check accepts whatever the
// value inside (an empty object has no name, an empty string is not a
// JSON object), so a decoder that defers the metadata on AcceptOf never
// skips an error Check would report.
func TestAcceptAgreesWithCheck(t *testing.T) {
	t.Parallel()
	samples := acceptSamples
	for spelling := range metadataTyped {
		a, typed := AcceptOf(spelling)
		if !typed {
			t.Fatalf("%s: not typed", spelling)
		}
		var values []any
		for _, v := range []byte(a.Value) {
			if v == '[' { // each item type inside
				values = append(values, []any{}, []any{nil})
				for _, it := range []byte(a.Items) {
					if samples[it] == nil {
						t.Fatalf("%s: no samples of %q", spelling, it)
					}
					for _, s := range samples[it] {
						values = append(values, []any{s}, []any{nil, s, s})
					}
				}
				continue
			}
			if samples[v] == nil {
				t.Fatalf("%s: no samples of %q", spelling, v)
			}
			values = append(values, samples[v]...)
		}
		values = append(values, nil)
		for _, v := range values {
			if err := (Metadata{spelling: v}).Check(); err != nil {
				t.Errorf("AcceptOf(%q) accepts %#v by its type, Check says %v", spelling, v, err)
			}
		}
	}
	if _, typed := AcceptOf("booking"); typed {
		t.Error("an untyped member is typed")
	}
}

// TestAcceptAsWideAsCheck is the converse: a type whose every value Check
// accepts is in Accept, so the decoder does not build metadata it could
// have checked by type alone.
func TestAcceptAsWideAsCheck(t *testing.T) {
	t.Parallel()
	samples := maps.Clone(acceptSamples)
	// An array is accepted by type when its items are (Items).
	samples['['] = []any{[]any{}, []any{nil}}
	allPass := func(spelling string, wrap func(any) any, values []any) bool {
		for _, v := range values {
			if (Metadata{spelling: wrap(v)}).Check() != nil {
				return false
			}
		}
		return true
	}
	for spelling := range metadataTyped {
		a, _ := AcceptOf(spelling)
		for typ, values := range samples {
			if allPass(spelling, func(v any) any { return v }, values) && !strings.ContainsRune(a.Value, rune(typ)) {
				t.Errorf("%s: Check accepts every %q value, Accept.Value %q leaves it out", spelling, typ, a.Value)
			}
			if !strings.ContainsRune(a.Value, '[') {
				continue
			}
			if allPass(spelling, func(v any) any { return []any{v} }, values) && !strings.ContainsRune(a.Items, rune(typ)) {
				t.Errorf("%s: Check accepts every %q item, Accept.Items %q leaves it out", spelling, typ, a.Items)
			}
		}
	}
}

func TestValidPath(t *testing.T) {
	t.Parallel()
	checkPredicate(t, "ValidPath", ValidPath, map[string]bool{
		"state": true, "state.booking.code": true, "llmRequests.-1.model": true,
		"": false, " ": false, "state.": false, ".state": false, "state..code": false,
		"state. .code": false, "state.\t": false,
	})
}

// TestDeferMetadata: metadata left undecoded (Deferred) is decoded on
// the first read, once, however many read it at once (run with -race);
// SetMetadata and DropMetadata replace it.
func TestDeferMetadata(t *testing.T) {
	t.Parallel()
	var decodes atomic.Int32
	decode := func(raw []byte, _ []string, _ *TypedAt) Metadata {
		decodes.Add(1)
		return Metadata{"currentNode": string(raw)}
	}
	r := Deferred([]byte("greet"), TypedAt{}, decode)
	if n := decodes.Load(); n != 0 {
		t.Fatalf("decoded %d times before it was read", n)
	}
	const readers = 8
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			if got := r.Meta().CurrentNode(); got != "greet" {
				t.Errorf("Meta().CurrentNode() = %q", got)
			}
		})
	}
	wg.Wait()
	if n := decodes.Load(); n != 1 {
		t.Errorf("decoded %d times for %d readers, want once", n, readers)
	}
	if r.SetMetadata(Metadata{"currentNode": "set"}).Meta().CurrentNode() != "set" {
		t.Error("SetMetadata did not replace the deferred metadata")
	}
	r = Deferred([]byte("again"), TypedAt{}, decode)
	r.Meta()
	r.DropMetadata()
	if md := r.Meta(); md != nil || decodes.Load() != 2 {
		t.Errorf("after DropMetadata, Meta() = %v (decodes %d)", md, decodes.Load())
	}
}

// TestDropMetadataLetsGo: the metadata decoded from a deferred reply
// shares the reply's allocation (Deferred), and DropMetadata lets it be
// collected while the reply itself is still kept, as a lean run keeps
// every transcript.
func TestDropMetadataLetsGo(t *testing.T) {
	var decoded weak.Pointer[string]
	r := Deferred([]byte("{}"), TypedAt{}, func([]byte, []string, *TypedAt) Metadata {
		v := new(string)
		*v = strings.Repeat("x", 64)
		decoded = weak.Make(v)
		return Metadata{"big": v}
	})
	r.Meta()
	r.DropMetadata()
	runtime.GC()
	if decoded.Value() != nil {
		t.Error("the decoded metadata is still reachable after DropMetadata")
	}
	runtime.KeepAlive(r)
}

// memberReaders are TurnResult's accessors of one member, each beside the
// Metadata method it must read as.
var memberReaders = []struct {
	name   string
	member func(*TurnResult) any
	whole  func(Metadata) any
}{
	{"NodeTrace", func(r *TurnResult) any { return r.NodeTrace() }, func(m Metadata) any { return m.NodeTrace() }},
	{"CurrentNode", func(r *TurnResult) any { return r.CurrentNode() }, func(m Metadata) any { return m.CurrentNode() }},
	{"InFlow", func(r *TurnResult) any { return r.InFlow() }, func(m Metadata) any { return m.InFlow() }},
	{"InStep", func(r *TurnResult) any { return r.InStep() }, func(m Metadata) any { return m.InStep() }},
	{"HandoffDestination", func(r *TurnResult) any { return r.HandoffDestination() }, func(m Metadata) any { return m.HandoffDestination() }},
	{"CitedTopic", func(r *TurnResult) any { return r.CitedTopic() }, func(m Metadata) any { return m.CitedTopic() }},
	{"ASRLang", func(r *TurnResult) any { return r.ASRLang() }, func(m Metadata) any { return m.ASRLang() }},
	{"TTSLang", func(r *TurnResult) any { return r.TTSLang() }, func(m Metadata) any { return m.TTSLang() }},
	{"RetrievedTopics", func(r *TurnResult) any { return r.RetrievedTopics() }, func(m Metadata) any { return m.RetrievedTopics() }},
	{"State", func(r *TurnResult) any { return r.State() }, func(m Metadata) any { return m.State() }},
	{"Metrics", func(r *TurnResult) any { return r.Metrics() }, func(m Metadata) any { return m.Metrics() }},
	{"FunctionEvents", func(r *TurnResult) any { return r.FunctionEvents() }, func(m Metadata) any { return m.FunctionEvents() }},
}

// jsonMembers decodes metadata as a client's Deferred decoder must:
// every member, or only those under spellings.
func jsonMembers(t *testing.T) func([]byte, []string, *TypedAt) Metadata {
	return func(raw []byte, spellings []string, _ *TypedAt) Metadata {
		var m Metadata
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("bad test JSON %s: %v", raw, err)
		}
		if spellings != nil {
			maps.DeleteFunc(m, func(k string, _ any) bool { return !slices.Contains(spellings, k) })
		}
		return m
	}
}

// TestMembersReadAsMeta: each accessor of one member, which decodes that
// member alone, reads what the Metadata method of the same name reads of
// the whole metadata, aliases, nulls and tolerated forms included: every
// member holds a value of its own, so an accessor paired with another
// member's spellings or reader fails.
func TestMembersReadAsMeta(t *testing.T) {
	t.Parallel()
	for _, js := range []string{
		`{"asrLangCode":"en-GB","tts_lang_code":"fr-FR","state":{"party_size":"4","a":{"b":1}},"currentNode":null,"current_node":"Confirm",` +
			`"nodeTrace":["A",{"name":"B"},3],"metrics":{"BOOKED":"true"},"in_flow":"booking","inStep":7,"handoff_destination":{"title":"desk"},` +
			`"retrievedTopics":"menu","citedTopic":"hours","functionEvents":{"name":"f","status":"error"},"other":[1]}`,
		`{"ttsLangCode":"de","tts_lang_code":"fr","state":"{\"x\":1}","node_trace":"N","metrics":[{"name":"m","value":2}],` +
			`"function_events":[{"function":"g"}],"retrieved_topics":[{"topic":"t"}],"cited_topic":"c","inFlow":true,"in_step":"s"}`,
		`{}`,
	} {
		whole := decodeMetadata(t, js)
		for _, rd := range memberReaders {
			r := Deferred([]byte(js), TypedAt{}, jsonMembers(t))
			got, want := rd.member(r), rd.whole(whole)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s of %s = %#v, Meta().%s = %#v", rd.name, js, got, rd.name, want)
			}
			if got, want := rd.member((&TurnResult{}).SetMetadata(whole)), rd.whole(whole); !reflect.DeepEqual(got, want) {
				t.Errorf("%s of set metadata %s = %#v, want %#v", rd.name, js, got, want)
			}
		}
	}
}

// TestMemberDecodesAlone: a member read through its accessor is decoded
// alone, once, and kept for the next reader; a third member has the whole
// metadata built, once, which every reader then shares; readers at once
// read the same (run with -race); DropMetadata lets the parts go.
func TestMemberDecodesAlone(t *testing.T) {
	t.Parallel()
	const js = `{"state":{"time":"19:00"},"currentNode":"Confirm","current_node":"X","nodeTrace":["A"],"inFlow":"f"}`
	var mu sync.Mutex
	var calls [][]string
	decode := func(raw []byte, spellings []string, at *TypedAt) Metadata {
		mu.Lock()
		calls = append(calls, spellings)
		mu.Unlock()
		return jsonMembers(t)(raw, spellings, at)
	}
	r := Deferred([]byte(js), TypedAt{}, decode)
	const readers = 8
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() {
			if got := r.State()["time"]; got != "19:00" {
				t.Errorf("State()[time] = %v", got)
			}
			if got := r.CurrentNode(); got != "Confirm" {
				t.Errorf("CurrentNode() = %q", got)
			}
		})
	}
	wg.Wait()
	want := [][]string{{"state"}, {"currentNode", "current_node"}}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("decoded %q for %d readers of two members, want %q", calls, readers, want)
	}
	for range readers {
		wg.Go(func() {
			if got := r.NodeTrace(); !reflect.DeepEqual(got, []string{"A"}) {
				t.Errorf("NodeTrace() = %q", got)
			}
			if got := r.Meta().InFlow(); got != "f" {
				t.Errorf("Meta().InFlow() = %q", got)
			}
			if got := r.State()["time"]; got != "19:00" {
				t.Errorf("State()[time] after the whole was built = %v", got)
			}
		})
	}
	wg.Wait()
	if want = append(want, nil); !reflect.DeepEqual(calls, want) {
		t.Fatalf("decoded %q, want %q: a third member builds the whole, once", calls, want)
	}
	if got := r.InFlow(); got != "f" || len(calls) != len(want) {
		t.Errorf("InFlow() = %q after the whole was built, decoding again: %q", got, calls)
	}
	calls = nil
	r = Deferred([]byte(js), TypedAt{}, decode)
	r.Meta()
	if got := r.State()["time"]; got != "19:00" || len(calls) != 1 {
		t.Errorf("State()[time] = %v after Meta, decoding %q: want the whole, decoded once", got, calls)
	}

	var part weak.Pointer[string]
	r = Deferred([]byte(js), TypedAt{}, func(raw []byte, spellings []string, _ *TypedAt) Metadata {
		v := new(string)
		*v = strings.Repeat("x", 64)
		part = weak.Make(v)
		return Metadata{"state": map[string]any{"big": v}}
	})
	r.State()
	r.DropMetadata()
	runtime.GC()
	if part.Value() != nil {
		t.Error("a member decoded alone is still reachable after DropMetadata")
	}
	if r.State() != nil {
		t.Error("State() after DropMetadata is not absent, as Meta() is")
	}
	runtime.KeepAlive(r)
}

// TestTypedOf: the look-up by length finds every typed spelling as
// metadataTyped holds it, and nothing else.
func TestTypedOf(t *testing.T) {
	t.Parallel()
	for spelling, want := range metadataTyped {
		if got := typedOf(spelling); got == nil || *got != want {
			t.Errorf("typedOf(%q) = %v, want %v", spelling, got, want)
		}
		for _, other := range []string{strings.ToUpper(spelling[:1]) + spelling[1:], spelling + "s", spelling[:len(spelling)-1]} {
			if _, typed := metadataTyped[other]; (typedOf(other) != nil) != typed {
				t.Errorf("typedOf(%q) = %v", other, typedOf(other))
			}
		}
	}
	for _, other := range []string{"", "booking", "x", strings.Repeat("state", 7)} {
		if typedOf(other) != nil {
			t.Errorf("typedOf(%q) found a typed member", other)
		}
	}
}

// TestTypedAt: the offsets a decoder records reach its decode function
// as recorded, in order, each with its member under any spelling, while
// they fit; past 16 members, or an offset past 64 KiB, none is known,
// so that a member is found by reading the object rather than missed.
func TestTypedAt(t *testing.T) {
	t.Parallel()
	type key struct {
		off      int
		spelling string
	}
	type testCase struct {
		name   string
		keys   []key
		of     string // the spelling OffsetsOf is asked for
		want   []uint16
		wantOK bool
	}
	var many []key
	for i := range 17 {
		many = append(many, key{i * 10, []string{"state", "current_node"}[i%2]})
	}
	cases := []testCase{
		{"none", nil, "state", nil, true},
		{"its own, in order", []key{{1, "state"}, {30, "nodeTrace"}, {7, "state"}}, "state", []uint16{1, 7}, true},
		{"under every spelling", []key{{1, "currentNode"}, {30, "nodeTrace"}, {7, "current_node"}}, "current_node", []uint16{1, 7}, true},
		{"another member's", []key{{1, "state"}, {30, "nodeTrace"}}, "currentNode", nil, true},
		{"sixteen", many[:16], "currentNode", []uint16{10, 30, 50, 70, 90, 110, 130, 150}, true},
		{"seventeen", many, "state", nil, false},
		{"last offset that fits", []key{{1, "state"}, {65535, "state"}}, "state", []uint16{1, 65535}, true},
		{"offset past 64 KiB", []key{{1, "state"}, {65536, "state"}, {2, "state"}}, "state", nil, false},
		{"a spelling of no typed member", []key{{1, "state"}}, "booking", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var at TypedAt
			for _, k := range tc.keys {
				a, typed := AcceptOf(k.spelling)
				if !typed {
					t.Fatalf("%q is no typed member", k.spelling)
				}
				at.Add(k.off, a)
			}
			var got []uint16
			var ok bool
			r := Deferred([]byte("{}"), at, func(_ []byte, _ []string, at *TypedAt) Metadata {
				got, ok = at.OffsetsOf(tc.of, nil)
				return Metadata{}
			})
			r.State()
			if !slices.Equal(got, tc.want) || ok != tc.wantOK {
				t.Errorf("OffsetsOf(%q) = %v, %v; want %v, %v", tc.of, got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestMetadataCheck(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		js   string
		want string // "" for no error
	}
	run := func(t *testing.T, tc testCase) {
		md := decodeMetadata(t, tc.js)
		// Several members may be wrong and a map has no order: the
		// report must not depend on the order Check meets them in.
		for range 20 {
			err := md.Check()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("Check(%s) = %q, want %q", tc.js, got, tc.want)
			}
		}
	}
	cases := []testCase{
		{"empty", `{}`, ""},
		{"untyped members are not looked at", `{"booking":[1],"custom":{"a":1}}`, ""},
		{"null is absent", `{"state":null,"currentNode":null,"nodeTrace":null,"llmRequests":null}`, ""},
		{"text scalars", `{"currentNode":"A","inFlow":3,"inStep":true}`, ""},
		{"text object with a name", `{"currentNode":{"name":"A"}}`, ""},
		{"text object without a name", `{"currentNode":{"id":""}}`, "metadata.currentNode is an object without a name, want a string"},
		{"text array", `{"citedTopic":[]}`, "metadata.citedTopic is an array, want a string"},
		{"names single string", `{"nodeTrace":"A"}`, ""},
		{"names with null, number and object items", `{"nodeTrace":["A",null,3,{"name":"B"}]}`, ""},
		{"names bad item", `{"nodeTrace":["A",null,[]]}`, "metadata.nodeTrace[2] is an array, want a string"},
		{"names bad item boolean kept", `{"retrievedTopics":[false]}`, ""},
		{"names object", `{"nodeTrace":{}}`, "metadata.nodeTrace is an object, want an array of strings"},
		{"state JSON string", `{"state":"{\"a\":1}"}`, ""},
		{"state other string", `{"state":"a=1"}`, "metadata.state is a string that is not a JSON object, want an object"},
		{"state array", `{"state":[1]}`, "metadata.state is an array, want an object"},
		{"metrics object", `{"metrics":{}}`, ""},
		{"metrics array of objects", `{"metrics":[{"name":"a"},null]}`, ""},
		{"metrics bad item", `{"metrics":[{"name":"a"},1]}`, "metadata.metrics[1] is a number, want an object"},
		{"metrics string", `{"metrics":"a"}`, "metadata.metrics is a string, want an object"},
		{"events single object", `{"functionEvents":{"name":"a"}}`, ""},
		{"events bad item", `{"functionEvents":[null,true]}`, "metadata.functionEvents[1] is a boolean, want an object"},
		{"events number", `{"function_events":1}`, "metadata.function_events is a number, want an array of objects"},
		{"requests array", `{"llmRequests":[{}]}`, ""},
		{"requests object", `{"llmRequests":{}}`, "metadata.llmRequests is an object, want an array of objects"},
		{"alias checked", `{"node_trace":{}}`, "metadata.node_trace is an object, want an array of strings"},
		{"first in reference order", `{"llmRequests":1,"inStep":[],"asrLangCode":[]}`, "metadata.asrLangCode is an array, want a string"},
		{"same member twice, reference spelling first", `{"node_trace":1,"nodeTrace":{}}`, "metadata.nodeTrace is an object, want an array of strings"},
		// Only the spelling the readers use is checked (member): an alias
		// beside a reference name that has a value is never read.
		{"unread alias", `{"nodeTrace":["A"],"node_trace":{}}`, ""},
		{"unread second alias", `{"agent_response_audio_url":"u","agentResponseAudioURL":[]}`, ""},
		{"alias read after a null", `{"nodeTrace":null,"node_trace":{}}`, "metadata.node_trace is an object, want an array of strings"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestSpellingBits: each spelling of a typed member has a bit of its own
// (Accept.Bit), so that a decoder tells a spelling met twice, which may
// say two things, from two spellings of one member, read in order.
func TestSpellingBits(t *testing.T) {
	t.Parallel()
	var all uint64
	for spelling := range metadataTyped {
		a, _ := AcceptOf(spelling)
		if b := a.Bit(); b == 0 || all&b != 0 {
			t.Errorf("%s: bit %#x is not its own", spelling, b)
		}
		all |= a.Bit()
	}
}
