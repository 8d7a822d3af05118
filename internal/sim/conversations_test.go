package sim_test

import (
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestListParameterMessages pins the list's parameter rules the status
// alone does not tell apart: which rule a request breaks (the first
// broken is reported), a parameter given twice, a cursor with a member
// it never carries, bounds of time and mode, and v1 ignoring the v3-only
// parameters as the older pipeline does.
func TestListParameterMessages(t *testing.T) {
	t.Parallel()
	s := seeded(t, 10, nil)
	tr := "&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z"
	list := func(version, q string) response {
		return call(t, "GET", s.RuntimeURL+"/"+version+"/"+s.AccountID+"/helpdesk/conversations?"+q, s.RuntimeKey, nil)
	}
	first := list("v3", "limit=1")
	keyset := first.json(t)["cursor"].(string)
	ranked := list("v3", "sample=random&limit=1"+tr).json(t)["cursor"].(string)
	stray := base64.RawURLEncoding.EncodeToString([]byte(`{"t":1,"id":"x","z":1}`))
	type testCase struct {
		version, query string
		want           int
		msg            string // a substring of error_message
	}
	for _, tc := range []testCase{
		{"v3", "limit=1&limit=2", 400, "given 2 times"},
		{"v3", "offset=abc", 400, "offset"},
		{"v3", "limit=0&offset=-1", 400, "limit"},
		{"v3", "cursor=" + stray, 400, "malformed cursor"},
		{"v3", "query_type=semantic&sample=random" + tr, 400, "mutually exclusive"},
		{"v3", "sample=random&query=x" + tr, 400, "sample does not take query"},
		{"v3", "query_type=semantic&query=x&turn_type=user" + tr, 400, "turn_type applies to query_type=transcript only"},
		{"v3", "query_type=transcript&query=x&start_time=2026-01-01T00:00:00Z", 400, "start_time and end_time are required"},
		{"v3", "sample=random&end_time=2026-04-01T00:00:00Z", 400, "start_time and end_time are required"},
		{"v3", "query_type=semantic&query=x&cursor=" + url.QueryEscape(keyset) + tr, 400, "not issued for this retrieval mode"},
		{"v3", "cursor=" + url.QueryEscape(ranked), 400, "not issued for this retrieval mode"},
		{"v3", "sample=random&cursor=" + url.QueryEscape(ranked) + tr, 200, ""},
		{"v1", "query_type=bogus&cursor=!!!&include_latency=sure", 200, ""},
	} {
		t.Run(tc.version+"?"+tc.query, func(t *testing.T) {
			r := list(tc.version, tc.query)
			if r.status != tc.want {
				t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
			}
			if msg, _ := r.json(t)["error_message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("error_message %q, want it to contain %q", msg, tc.msg)
			}
		})
	}
}

// recorded is a debug-chat conversation of the probe agent that record
// opens and in which it says text once (nothing when empty).
type recorded struct {
	id, channel, env, text string
}

// record opens convs in order on a fake clock, moving it a second after
// each, and returns the clock and a client of the probe agent.
func record(t *testing.T, opts sim.Options, convs []recorded) (*fakeclock.Clock, chat) {
	t.Helper()
	clk, s := startProbes(t, opts)
	c := chat{t: t, s: s, id: "probe"}
	for _, rc := range convs {
		body := map[string]any{"clientEnv": cmpOr(rc.env, "live"), "conversationId": rc.id}
		if rc.channel != "" {
			body["channel"] = rc.channel
		}
		if r := c.create(body); r.status != 200 {
			t.Fatalf("create %s: %d %s", rc.id, r.status, r.body)
		}
		if rc.text != "" {
			if r := call(t, "POST", s.BuildURL+"/v1/agents/probe/debug-chat/"+rc.id, s.BuildKey, map[string]any{"clientEnv": cmpOr(rc.env, "live"), "message": rc.text}); r.status != 200 {
				t.Fatalf("turn %s: %d %s", rc.id, r.status, r.body)
			}
		}
		clk.Advance(time.Second)
	}
	return clk, c
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// listIDs lists probe's conversations with query q, in the order given.
func listIDs(t *testing.T, c chat, q string) []string {
	t.Helper()
	r := c.runtime("/conversations?" + q)
	if r.status != 200 {
		t.Fatalf("%s: %d %s", q, r.status, r.body)
	}
	var out []string
	for _, x := range r.json(t)["conversations"].([]any) {
		out = append(out, x.(map[string]any)["id"].(string))
	}
	return out
}

// TestListFiltersAtTheirBounds pins the filters on conversations whose
// start times are known to the millisecond: every channel of a repeated
// channel, start_time inclusive, end_time exclusive, and a sample that is
// not the order the conversations were made in.
func TestListFiltersAtTheirBounds(t *testing.T) {
	t.Parallel()
	var convs []recorded
	for i, ch := range []string{"WEBCHAT", "CHAT", "VOICE-SIP"} {
		convs = append(convs, recorded{id: "c" + string(rune('0'+i)), channel: ch})
	}
	for i := range 20 {
		convs = append(convs, recorded{id: "s" + string(rune('a'+i)), env: "sandbox"})
	}
	_, c := record(t, sim.Options{ChatIdleTimeout: time.Hour}, convs)
	// Each create takes the greeting's 10s and the clock moves 1s more:
	// conversation i starts at 11i seconds.
	at := func(sec int) string {
		return url.QueryEscape(fakeclock.Start.Add(time.Duration(sec) * time.Second).Format(time.RFC3339Nano))
	}
	type testCase struct {
		query string
		want  []string
	}
	for _, tc := range []testCase{
		{"channel=CHAT&channel=WEBCHAT", []string{"c1", "c0"}},
		{"start_time=" + at(11), []string{"c2", "c1"}},
		{"end_time=" + at(11), []string{"c0"}},
		{"start_time=" + at(11) + "&end_time=" + at(22), []string{"c1"}},
	} {
		if got := listIDs(t, c, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	sample := listIDs(t, c, "client_env=sandbox&sample=random&start_time="+at(0)+"&end_time="+at(1000))
	made := listIDs(t, c, "client_env=sandbox")
	slices.Reverse(made)
	if len(sample) != 20 || slices.Equal(sample, made) {
		t.Errorf("sample %v: want the 20 sandbox conversations out of the order they were made", sample)
	}
}

// TestListNextOffsetAtTheEnd pins next_offset: absent on a v1 page that
// ends exactly at the last conversation, present in a streamed page that
// does not.
func TestListNextOffsetAtTheEnd(t *testing.T) {
	t.Parallel()
	var convs []recorded
	for i := range 5 {
		convs = append(convs, recorded{id: "n" + string(rune('0'+i))})
	}
	_, c := record(t, sim.Options{Projects: map[string]sim.ProjectOptions{"probe": {Streaming: true}}}, convs)
	v1 := call(t, "GET", c.s.RuntimeURL+"/v1/"+c.s.AccountID+"/probe/conversations", c.s.RuntimeKey, nil).json(t)
	if n := len(v1["conversations"].([]any)); n != 5 {
		t.Fatalf("v1 default page: %d conversations, want 5", n)
	}
	if _, ok := v1["next_offset"]; ok {
		t.Errorf("v1 next_offset %v on the last page", v1["next_offset"])
	}
	streamed := c.runtime("/conversations?limit=2").json(t)
	if streamed["next_offset"] != 2.0 || streamed["cursor"] == nil {
		t.Errorf("streamed page: next_offset %v, cursor %v; want 2 and a cursor", streamed["next_offset"], streamed["cursor"])
	}
}

// TestListIncludeFlagsFalse pins that include_latency=false and
// include_turn_metadata=false leave their members out.
func TestListIncludeFlagsFalse(t *testing.T) {
	t.Parallel()
	_, c := record(t, sim.Options{}, []recorded{{id: "f0", text: "chat"}})
	r := c.runtime("/conversations?include_latency=false&include_turn_metadata=false")
	tj := r.json(t)["conversations"].([]any)[0].(map[string]any)["turns"].([]any)[0].(map[string]any)
	for _, k := range []string{"latency", "metadata"} {
		if _, ok := tj[k]; ok {
			t.Errorf("%s present with include_...=false: %v", k, tj)
		}
	}
}

// TestHandoffStateScopes pins the handoff_state record: data is an
// object even when the agent stored none, and a conversation of another
// project is not found by id.
func TestHandoffStateScopes(t *testing.T) {
	t.Parallel()
	_, c := record(t, sim.Options{}, []recorded{{id: "h0", text: "transfer"}})
	hs := func(project, q string) response {
		return call(t, "GET", c.s.RuntimeURL+"/v1/"+c.s.AccountID+"/"+project+"/handoff_state?"+q, c.s.RuntimeKey, nil)
	}
	r := hs("probe", "id=h0")
	if r.status != 200 {
		t.Fatalf("handoff_state: %d %s", r.status, r.body)
	}
	if m := r.json(t); m["shared_id"] != "x-h0" {
		t.Errorf("shared_id %v", m["shared_id"])
	} else if d, ok := m["data"].(map[string]any); !ok || len(d) != 0 {
		t.Errorf("data %v, want {}", m["data"])
	}
	if r := hs("helpdesk", "id=h0"); r.status != 404 {
		t.Errorf("another project's conversation by id: %d %s", r.status, r.body)
	}
}

// TestTranscriptAndSemanticSearch pins the two search modes on
// conversations whose transcripts are known: transcript search on each
// side and in any case, and semantic search that keeps only the
// conversations sharing a term with the query, ranks by cosine (a short
// match above a long one repeating the term), breaks ties by id, stems
// plurals, and reads the agent's side and turns added since the last
// search.
func TestTranscriptAndSemanticSearch(t *testing.T) {
	t.Parallel()
	filler := "apple banana cherry dune elder fennel grape heron iris jasmine kiwi lemon mango nectar olive pepper quince radish sorrel tulip"
	_, c := record(t, sim.Options{ChatIdleTimeout: time.Hour}, []recorded{
		{id: "a-short", text: "bill"},
		{id: "b-long", text: "bill bill bill " + filler},
		{id: "c-none", text: "weather"},
		{id: "d-tie", text: "parcel"},
		{id: "e-tie", text: "parcel"},
		{id: "f-hours", text: "what are your hours"},
		{id: "g-stem", text: "companies things plan x"},
		{id: "h-bass", text: "bass"},
		{id: "s1", env: "sandbox", text: "invoice"},
		{id: "s2", env: "sandbox", text: "invoice"},
	})
	const tr = "&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z"
	type testCase struct {
		query string
		want  []string
	}
	for _, tc := range []testCase{
		{"query_type=transcript&turn_type=user&query=WEATHER", []string{"c-none"}},
		{"query_type=transcript&turn_type=agent&query=open+ALL", []string{"f-hours"}},
		{"query_type=transcript&turn_type=user&query=open", nil},
		{"query_type=semantic&query=bill", []string{"a-short", "b-long"}},
		{"query_type=semantic&query=parcel", []string{"d-tie", "e-tie"}},
		{"query_type=semantic&query=open", []string{"f-hours"}},
		{"query_type=semantic&query=company", []string{"g-stem"}},
		{"query_type=semantic&query=thing", []string{"g-stem"}},
		{"query_type=semantic&query=x", nil},
		{"query_type=semantic&query=bas", nil},
		{"query_type=semantic&query=invoice&client_env=sandbox", []string{"s1", "s2"}},
	} {
		if got := listIDs(t, c, tc.query+tr); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	if r := c.turn("c-none", "avalanche"); r.status != 200 {
		t.Fatalf("turn: %d %s", r.status, r.body)
	}
	if got := listIDs(t, c, "query_type=semantic&query=avalanche"+tr); !slices.Equal(got, []string{"c-none"}) {
		t.Errorf("a term said after the last search: %v, want [c-none]", got)
	}
}
