package sim_test

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

var seedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func seeded(t *testing.T, n int, projects map[string]sim.ProjectOptions) *simtest.Sim {
	t.Helper()
	return simtest.Start(t, sim.Options{
		Agents:            []*agent.Definition{helpdesk(t)},
		SeedConversations: n,
		Seed:              3,
		Now:               func() time.Time { return seedNow },
		Projects:          projects,
	})
}

func TestPagingWalk(t *testing.T) {
	t.Parallel()
	// 1000 conversations (seed 3) in pages of 100, and of an odd 37,
	// walk about as many pages as 3000 did in pages of 300 and 137: 7 in
	// live, 2 in sandbox (5 at the odd limit) and 3 in pre-release, each
	// walk ending on a short page.
	const n = 1000
	// Transcripts and metrics off: the walk is about paging, and smaller
	// pages keep the test fast under -race.
	s := seeded(t, n, map[string]sim.ProjectOptions{"helpdesk": {HideTranscripts: true, HideMetrics: true}})
	var mu sync.Mutex
	total := 0
	t.Run("envs", func(t *testing.T) {
		for _, env := range []string{"live", "sandbox", "pre-release"} {
			t.Run(env, func(t *testing.T) {
				t.Parallel()
				modes := []struct {
					name     string
					byCursor bool
					limit    string
				}{{"cursor", true, "100"}, {"offset", false, "100"}}
				if env == "sandbox" {
					modes = append(modes, struct {
						name     string
						byCursor bool
						limit    string
					}{"cursor-odd-limit", true, "37"})
				}
				want := -1
				for _, mode := range modes {
					ids := listAll(t, s, "helpdesk", url.Values{"client_env": {env}, "limit": {mode.limit}}, mode.byCursor)
					seen := map[string]bool{}
					for _, id := range ids {
						if seen[id] {
							t.Fatalf("%s: %s returned twice", mode.name, id)
						}
						seen[id] = true
					}
					if mode.name == "cursor" {
						want = len(ids)
						mu.Lock()
						total += len(ids)
						mu.Unlock()
					} else if len(ids) != want {
						t.Fatalf("%s walk returned %d, the cursor walk %d", mode.name, len(ids), want)
					}
				}
			})
		}
	})
	if total != n {
		t.Fatalf("walks returned %d conversations, want %d", total, n)
	}
}

func TestListOrderingAndFilters(t *testing.T) {
	t.Parallel()
	// 300 conversations give every filter below at least 6 matches (in
	// progress) and 40 or more for all but one; each query returns all
	// its matches, so the test's cost grows with the store.
	s := seeded(t, 300, nil)
	list := func(q string) []map[string]any {
		t.Helper()
		r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations?"+q, s.RuntimeKey, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		var out []map[string]any
		for _, c := range r.json(t)["conversations"].([]any) {
			out = append(out, c.(map[string]any))
		}
		return out
	}
	all := list("")
	if len(all) == 0 {
		t.Fatal("no live conversations")
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i]["started_at"].(string) > all[j]["started_at"].(string) }) {
		t.Error("v3 is not newest first")
	}
	for _, c := range all {
		if c["environment"] != "live" {
			t.Fatalf("client_env defaults to live, got %v", c["environment"])
		}
	}
	type testCase struct {
		name  string
		query string
		check func(map[string]any) bool
	}
	run := func(t *testing.T, tc testCase) {
		got := list(tc.query)
		if len(got) == 0 {
			t.Fatal("filter returned nothing")
		}
		for _, c := range got {
			if !tc.check(c) {
				t.Fatalf("conversation %v does not satisfy %s", c["id"], tc.query)
			}
		}
	}
	mid := seedNow.Add(-15 * 24 * time.Hour).Format(time.RFC3339)
	for _, tc := range []testCase{
		{"channel", "channel=VOICE-SIP", func(c map[string]any) bool { return c["channel"] == "VOICE-SIP" }},
		{"channels", "channel=CHAT&channel=WEBCHAT", func(c map[string]any) bool { return c["channel"] != "VOICE-SIP" }},
		{"sandbox", "client_env=sandbox", func(c map[string]any) bool { return c["environment"] == "sandbox" }},
		{"in progress", "in_progress=true", func(c map[string]any) bool { return c["in_progress"] == true }},
		{"finished", "in_progress=false", func(c map[string]any) bool { return c["in_progress"] == false }},
		{"variant id", "variant_id=blue", func(c map[string]any) bool { return c["variant_id"] == "blue" }},
		{"variant name", "variant_name=Green%20Team", func(c map[string]any) bool { return c["variant_name"] == "Green Team" }},
		{"start time", "start_time=" + mid, func(c map[string]any) bool { return c["started_at"].(string) >= mid[:19] }},
		{"end time", "end_time=" + mid, func(c map[string]any) bool { return c["started_at"].(string) < mid[:19] }},
		{"transcript", "query_type=transcript&query=OUTAGE&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z",
			func(c map[string]any) bool { return strings.Contains(strings.ToLower(transcript(c, "")), "outage") }},
		{"transcript agent side", "query_type=transcript&query=crews&turn_type=agent&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z",
			func(c map[string]any) bool { return strings.Contains(transcript(c, "agent"), "crews") }},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	t.Run("transcript user side misses agent text", func(t *testing.T) {
		if got := list("query_type=transcript&query=crews&turn_type=user&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z"); len(got) != 0 {
			t.Errorf("%d hits for agent-only text on the user side", len(got))
		}
	})
	t.Run("semantic ranks by meaning", func(t *testing.T) {
		got := list("query_type=semantic&query=electricity+bills+payment&limit=10&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z")
		if len(got) == 0 {
			t.Fatal("no semantic hits")
		}
		for _, c := range got[:3] {
			if !strings.Contains(strings.ToLower(transcript(c, "")), "bill") {
				t.Errorf("top hit %v is not about bills: %s", c["id"], transcript(c, ""))
			}
		}
	})
	t.Run("sample is a reproducible permutation", func(t *testing.T) {
		q := "sample=random&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z&limit=50"
		a, b := ids(list(q)), ids(list(q))
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Error("same sample request, different pages")
		}
		walked := listAll(t, s, "helpdesk", url.Values{"sample": {"random"}, "start_time": {"2026-01-01T00:00:00Z"}, "end_time": {"2026-04-01T00:00:00Z"}, "limit": {"50"}}, true)
		if len(walked) != len(all) {
			t.Errorf("sample walk %d, want %d", len(walked), len(all))
		}
		if strings.Join(walked[:len(a)], ",") == strings.Join(ids(all[:len(a)]), ",") {
			t.Error("sample is in time order")
		}
	})
}

func transcript(c map[string]any, side string) string {
	var b strings.Builder
	for _, x := range c["turns"].([]any) {
		tj := x.(map[string]any)
		if side != "agent" {
			b.WriteString(tj["user_input"].(string) + " ")
		}
		if side != "user" {
			b.WriteString(tj["agent_response"].(string) + " ")
		}
	}
	return b.String()
}

func ids(cs []map[string]any) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c["id"].(string)
	}
	return out
}

func TestListValidation(t *testing.T) {
	t.Parallel()
	s := seeded(t, 10, nil)
	tr := "&start_time=2026-01-01T00:00:00Z&end_time=2026-04-01T00:00:00Z"
	type testCase struct {
		version string
		query   string
		want    int
	}
	run := func(t *testing.T, tc testCase) {
		r := call(t, "GET", s.RuntimeURL+"/"+tc.version+"/"+s.AccountID+"/helpdesk/conversations?"+tc.query, s.RuntimeKey, nil)
		if r.status != tc.want {
			t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
		}
		if tc.want != 200 {
			if msg, _ := r.json(t)["error_message"].(string); msg == "" {
				t.Errorf("no error_message: %s", r.body)
			}
		}
	}
	for _, tc := range []testCase{
		{"v3", "limit=1", 200},
		{"v3", "limit=1000", 200},
		{"v3", "limit=0", 400},
		{"v3", "limit=1001", 400},
		{"v3", "limit=ten", 400},
		{"v3", "offset=-1", 400},
		{"v3", "cursor=!!!", 400},
		{"v3", "cursor=bm90LWpzb24", 400},
		{"v3", "cursor=e30", 400},
		{"v3", "client_env=prod", 400},
		{"v3", "in_progress=maybe", 400},
		{"v3", "include_latency=sure", 400},
		{"v3", "variant_id=a&variant_name=b", 400},
		{"v3", "query_type=transcript" + tr, 400},
		{"v3", "query_type=fuzzy&query=x" + tr, 400},
		{"v3", "query_type=transcript&query=x", 400},
		{"v3", "sample=random", 400},
		{"v3", "sample=random&query=x" + tr, 400},
		{"v3", "sample=always" + tr, 400},
		{"v3", "query_type=semantic&query=x&sample=random" + tr, 400},
		{"v3", "turn_type=user", 400},
		{"v3", "query_type=transcript&query=x&turn_type=both" + tr, 400},
		{"v3", "start_time=yesterday", 400},
		{"v3", "query=x", 400},
		{"v2", "limit=1001", 400},
		{"v2", "limit=5", 200},
		{"v1", "limit=5000", 200},
		{"v1", "limit=5001", 400},
		{"v1", "limit=0", 400},
		{"v4", "", 404},
	} {
		t.Run(tc.version+"?"+tc.query, func(t *testing.T) { run(t, tc) })
	}
}

func TestV1AndV2(t *testing.T) {
	t.Parallel()
	s := seeded(t, 200, map[string]sim.ProjectOptions{"helpdesk": {V1Whitelist: false}})
	get := func(path string) map[string]any {
		r := call(t, "GET", s.RuntimeURL+path, s.RuntimeKey, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		return r.json(t)
	}
	v1 := get("/v1/" + s.AccountID + "/helpdesk/conversations")
	cs := v1["conversations"].([]any)
	if len(cs) != 5 {
		t.Errorf("v1 default limit: %d, want 5", len(cs))
	}
	if _, ok := v1["descriptions"].(map[string]any)["conversations"]; !ok {
		t.Error("v1 lacks descriptions.conversations")
	}
	if _, ok := v1["cursor"]; ok {
		t.Error("v1 returned a cursor")
	}
	if v1["next_offset"] != 5.0 {
		t.Errorf("v1 next_offset %v", v1["next_offset"])
	}
	for i := 1; i < len(cs); i++ {
		if cs[i-1].(map[string]any)["started_at"].(string) > cs[i].(map[string]any)["started_at"].(string) {
			t.Fatal("v1 is not ascending")
		}
	}
	// v2 pages by cursor only with chunked streaming (reference,
	// Versioning 3; the envelope's cursor is "v3 only"): without it, by
	// offset, and a cursor is refused.
	v2 := get("/v2/" + s.AccountID + "/helpdesk/conversations?limit=3")
	if _, ok := v2["cursor"]; ok || len(v2["conversations"].([]any)) != 3 || v2["next_offset"] != 3.0 {
		t.Errorf("v2 without streaming should page by offset: cursor %v, next_offset %v", v2["cursor"], v2["next_offset"])
	}
	v2next := get("/v2/" + s.AccountID + "/helpdesk/conversations?limit=3&offset=3")
	if first, next := v2["conversations"].([]any)[2], v2next["conversations"].([]any)[0]; first.(map[string]any)["id"] == next.(map[string]any)["id"] {
		t.Error("v2 offset page repeats the previous page")
	}
	v3 := get("/v3/" + s.AccountID + "/helpdesk/conversations?limit=3")
	if r := call(t, "GET", s.RuntimeURL+"/v2/"+s.AccountID+"/helpdesk/conversations?limit=3&cursor="+url.QueryEscape(v3["cursor"].(string)), s.RuntimeKey, nil); r.status != 400 || !strings.Contains(string(r.body), "streaming") {
		t.Errorf("v2 cursor without streaming: %d %.200s, want 400 naming streaming", r.status, r.body)
	}
	id := cs[0].(map[string]any)["id"].(string)
	if got := get("/v2/" + s.AccountID + "/helpdesk/conversations/" + id); got["id"] != id {
		t.Errorf("v2 get: %v", got["id"])
	}

	t.Run("whitelist", func(t *testing.T) {
		w := seeded(t, 20, map[string]sim.ProjectOptions{"helpdesk": {V1Whitelist: true}})
		r := call(t, "GET", w.RuntimeURL+"/v1/"+w.AccountID+"/helpdesk/conversations", w.RuntimeKey, nil)
		c := r.json(t)["conversations"].([]any)[0].(map[string]any)
		if len(c) != 4 || c["id"] == nil || c["started_at"] == nil || c["account_id"] == nil || c["project_id"] == nil {
			t.Errorf("whitelisted record %v", c)
		}
	})
}

func TestProjectToggles(t *testing.T) {
	t.Parallel()
	s := seeded(t, 50, map[string]sim.ProjectOptions{"helpdesk": {HideTranscripts: true, HideMetrics: true}})
	r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations?include_latency=true", s.RuntimeKey, nil)
	for _, x := range r.json(t)["conversations"].([]any) {
		c := x.(map[string]any)
		if len(c["turns"].([]any)) != 0 || c["num_turns"].(float64) == 0 {
			t.Fatalf("show_transcripts off: turns %v num_turns %v", c["turns"], c["num_turns"])
		}
		if len(c["metrics"].(map[string]any)) != 0 {
			t.Fatalf("metrics not empty: %v", c["metrics"])
		}
	}

	t.Run("turn metadata and latency", func(t *testing.T) {
		s := seeded(t, 5, nil)
		r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations?client_env=live&include_turn_metadata=true", s.RuntimeKey, nil)
		for _, x := range r.json(t)["conversations"].([]any) {
			tj := x.(map[string]any)["turns"].([]any)[0].(map[string]any)
			if _, ok := tj["metadata"]; !ok {
				t.Errorf("include_turn_metadata: %v", tj)
			}
			if _, ok := tj["latency"]; ok {
				t.Errorf("latency without include_latency: %v", tj)
			}
		}
	})

	t.Run("streaming", func(t *testing.T) {
		s := seeded(t, 300, map[string]sim.ProjectOptions{"helpdesk": {Streaming: true}})
		req, _ := http.NewRequest("GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations?limit=150", nil)
		req.Header.Set("x-api-key", s.RuntimeKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Errorf("transfer encoding %v", resp.TransferEncoding)
		}
		ids := listAll(t, s, "helpdesk", url.Values{"limit": {"100"}}, true)
		if len(ids) == 0 {
			t.Error("streamed walk returned nothing")
		}
		// With streaming, v2 returns and takes cursors like v3.
		r := call(t, "GET", s.RuntimeURL+"/v2/"+s.AccountID+"/helpdesk/conversations?limit=100", s.RuntimeKey, nil)
		cur, ok := r.json(t)["cursor"].(string)
		if r.status != 200 || !ok {
			t.Fatalf("streamed v2: %d, cursor %v", r.status, cur)
		}
		if r := call(t, "GET", s.RuntimeURL+"/v2/"+s.AccountID+"/helpdesk/conversations?limit=100&cursor="+url.QueryEscape(cur), s.RuntimeKey, nil); r.status != 200 {
			t.Errorf("streamed v2 with a cursor: %d %.200s", r.status, r.body)
		}
	})
}

func TestGetByID(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{SeedConversations: 30, Seed: 1})
	if len(s.AgentIDs) < 2 {
		t.Skip("needs two built-in agents")
	}
	a, b := s.AgentIDs[0], s.AgentIDs[1]
	r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+a+"/conversations?client_env=live&limit=1", s.RuntimeKey, nil)
	cs := r.json(t)["conversations"].([]any)
	if len(cs) == 0 {
		t.Skip("no live seeded conversation for " + a)
	}
	id := cs[0].(map[string]any)["id"].(string)
	if r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+a+"/conversations/"+id, s.RuntimeKey, nil); r.status != 200 {
		t.Errorf("own project: %d", r.status)
	}
	if r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+b+"/conversations/"+id, s.RuntimeKey, nil); r.status != 404 {
		t.Errorf("other project: %d, want 404", r.status)
	}
	if r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+a+"/conversations/nope", s.RuntimeKey, nil); r.status != 404 {
		t.Errorf("unknown id: %d, want 404", r.status)
	}
}
