package sim_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

func TestHostFamilies(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{})
	conv := c.start(nil)
	chatPath := "/v1/agents/helpdesk/debug-chat"
	listPath := "/v3/" + s.AccountID + "/helpdesk/conversations"

	type testCase struct {
		name   string
		method string
		url    string
		key    string
		want   int
	}
	run := func(t *testing.T, tc testCase) {
		var body any
		if tc.method == "POST" {
			body = map[string]any{"clientEnv": "live"}
		}
		r := call(t, tc.method, tc.url, tc.key, body)
		if r.status != tc.want {
			t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
		}
	}
	for _, tc := range []testCase{
		{"build path on build host", "POST", s.BuildURL + chatPath, s.BuildKey, 200},
		{"build path on runtime host", "POST", s.RuntimeURL + chatPath, s.RuntimeKey, 404},
		{"runtime path on runtime host", "GET", s.RuntimeURL + listPath, s.RuntimeKey, 200},
		{"runtime path on build host", "GET", s.BuildURL + listPath, s.BuildKey, 404},
		{"turn on runtime host", "POST", s.RuntimeURL + chatPath + "/" + conv, s.RuntimeKey, 404},
		{"unknown path", "GET", s.RuntimeURL + "/v9/nothing", s.RuntimeKey, 404},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	t.Run("wrong family names the family", func(t *testing.T) {
		r := call(t, "GET", s.BuildURL+listPath, s.BuildKey, nil)
		if msg := r.json(t)["error_message"].(string); !strings.Contains(msg, "runtime host family") {
			t.Errorf("message %q does not name the runtime family", msg)
		}
	})

	t.Run("single host serves both", func(t *testing.T) {
		one := simtest.StartSingleHost(t, sim.Options{Agents: []*agent.Definition{helpdesk(t)}})
		if one.BuildURL != one.RuntimeURL {
			t.Fatalf("single host has two URLs %s %s", one.BuildURL, one.RuntimeURL)
		}
		if r := call(t, "POST", one.BuildURL+chatPath, one.BuildKey, map[string]any{"clientEnv": "live"}); r.status != 200 {
			t.Errorf("debug chat: %d %s", r.status, r.body)
		}
		if r := call(t, "GET", one.RuntimeURL+listPath, one.RuntimeKey, nil); r.status != 200 {
			t.Errorf("list: %d %s", r.status, r.body)
		}
		// The keys stay separate even on one host.
		if r := call(t, "GET", one.RuntimeURL+listPath, one.BuildKey, nil); r.status != 401 {
			t.Errorf("build key on runtime path: %d, want 401", r.status)
		}
	})
}

func TestAuthAndIDs(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{})
	alias := s.Info.ProjectIDs["helpdesk"]
	if !strings.HasPrefix(alias, "PROJECT-") || len(alias) != len("PROJECT-")+8 {
		t.Fatalf("alias %q is not PROJECT-XXXXXXXX", alias)
	}
	list := func(account, project string) string {
		return s.RuntimeURL + "/v3/" + account + "/" + project + "/conversations"
	}
	type testCase struct {
		name    string
		method  string
		url     string
		key     string
		want    int
		message string // substring of error_message
	}
	run := func(t *testing.T, tc testCase) {
		var body any
		if tc.method == "POST" {
			body = map[string]any{"clientEnv": "live"}
		}
		r := call(t, tc.method, tc.url, tc.key, body)
		if r.status != tc.want {
			t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
		}
		if tc.message != "" {
			if msg, _ := r.json(t)["error_message"].(string); !strings.Contains(msg, tc.message) {
				t.Errorf("error_message %q does not contain %q", msg, tc.message)
			}
		}
	}
	chatURL := s.BuildURL + "/v1/agents/helpdesk/debug-chat"
	for _, tc := range []testCase{
		{"runtime ok", "GET", list(s.AccountID, "helpdesk"), s.RuntimeKey, 200, ""},
		{"slug account", "GET", list(s.Info.AccountSlug, "helpdesk"), s.RuntimeKey, 200, ""},
		{"PROJECT alias", "GET", list(s.AccountID, alias), s.RuntimeKey, 200, ""},
		{"missing key", "GET", list(s.AccountID, "helpdesk"), "", 401, "missing x-api-key"},
		{"wrong key", "GET", list(s.AccountID, "helpdesk"), "nope", 401, "invalid API key"},
		{"build key on runtime", "GET", list(s.AccountID, "helpdesk"), s.BuildKey, 401, ""},
		{"scoped runtime key", "GET", list(s.AccountID, "helpdesk"), s.Info.ScopedRuntimeKey, 403, "no rights"},
		{"obsolete ACCOUNT prefix", "GET", list("ACCOUNT-12345678", "helpdesk"), s.RuntimeKey, 404, "ws-XXXXXXXX"},
		{"other workspace", "GET", list("ws-zzzzzzzz", "helpdesk"), s.RuntimeKey, 404, "not found"},
		{"unknown project", "GET", list(s.AccountID, "nope"), s.RuntimeKey, 404, "not found"},
		{"malformed project", "GET", list(s.AccountID, "Bad.Project"), s.RuntimeKey, 404, "malformed project id"},
		{"build ok", "POST", chatURL, s.BuildKey, 200, ""},
		{"build missing key", "POST", chatURL, "", 401, ""},
		{"runtime key on build", "POST", chatURL, s.RuntimeKey, 401, ""},
		{"scoped build key", "POST", chatURL, s.Info.ScopedBuildKey, 403, ""},
		{"build by alias", "POST", s.BuildURL + "/v1/agents/" + alias + "/debug-chat", s.BuildKey, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDebugChatErrors(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{})
	base := s.BuildURL + "/v1/agents/helpdesk/debug-chat"
	existing := c.start(map[string]any{"conversationId": "taken-1"})
	type testCase struct {
		name   string
		url    string
		body   any
		raw    string
		status int
		code   string
	}
	run := func(t *testing.T, tc testCase) {
		var r response
		if tc.raw != "" {
			req, _ := http.NewRequest("POST", tc.url, strings.NewReader(tc.raw))
			req.Header.Set("x-api-key", s.BuildKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			r.status = resp.StatusCode
			if r.status != tc.status {
				t.Fatalf("status %d, want %d", r.status, tc.status)
			}
			return
		}
		r = call(t, "POST", tc.url, s.BuildKey, tc.body)
		if r.status != tc.status {
			t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
		}
		m := r.json(t)
		for _, k := range []string{"success", "error", "error_id", "error_code", "error_message", "data"} {
			if _, ok := m[k]; !ok {
				t.Errorf("error body lacks %q: %s", k, r.body)
			}
		}
		if m["success"] != false || m["data"] != nil {
			t.Errorf("success/data: %s", r.body)
		}
		if m["error_code"] != tc.code {
			t.Errorf("error_code %v, want %s", m["error_code"], tc.code)
		}
	}
	for _, tc := range []testCase{
		{name: "clientEnv missing", url: base, body: map[string]any{}, status: 400, code: sim.CodeInvalidRequest},
		{name: "clientEnv bad", url: base, body: map[string]any{"clientEnv": "prod"}, status: 400, code: sim.CodeInvalidRequest},
		{name: "malformed json", url: base, raw: "{", status: 400},
		{name: "unknown variant", url: base, body: map[string]any{"clientEnv": "live", "variantId": "red"}, status: 400, code: sim.CodeInvalidRequest},
		{name: "duplicate id", url: base, body: map[string]any{"clientEnv": "live", "conversationId": existing}, status: 409, code: sim.CodeConversationExists},
		{name: "bad custom id", url: base, body: map[string]any{"clientEnv": "live", "conversationId": "a/b c"}, status: 400, code: sim.CodeInvalidRequest},
		{name: "unknown agent", url: s.BuildURL + "/v1/agents/nope/debug-chat", body: map[string]any{"clientEnv": "live"}, status: 404, code: sim.CodeAgentNotFound},
		{name: "unknown conversation", url: base + "/nope", body: map[string]any{"clientEnv": "live"}, status: 404, code: sim.CodeConversationsNotFound},
		{name: "turn clientEnv missing", url: base + "/" + existing, body: map[string]any{"message": "hi"}, status: 400, code: sim.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestDebugChatConversation(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{Seed: 7})
	r := c.create(map[string]any{"clientEnv": "sandbox", "variantId": "blue", "conversationId": "flow-1"})
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	g := r.json(t)
	if g["conversationId"] != "flow-1" || g["userInput"] != "" || !strings.HasPrefix(g["response"].(string), "Blue team") {
		t.Errorf("greeting: %s", r.body)
	}
	md := g["metadata"].(map[string]any)
	if md["currentNode"] != "Greeting" || md["state"] == nil || md["nodeTrace"] == nil {
		t.Errorf("greeting metadata: %v", md)
	}
	for _, k := range []string{"conversationEnded", "delayedResponse"} {
		if _, ok := g[k].(bool); !ok {
			t.Errorf("%s missing: %s", k, r.body)
		}
	}

	// While in progress the record is visible and says so.
	sum := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations/flow-1", s.RuntimeKey, nil).json(t)
	if sum["in_progress"] != true {
		t.Errorf("in_progress %v during the session", sum["in_progress"])
	}

	turn := func(msg string) map[string]any {
		r := c.turn("flow-1", msg)
		if r.status != 200 {
			t.Fatalf("turn %q: %d %s", msg, r.status, r.body)
		}
		return r.json(t)
	}
	if got := turn("ping"); got["response"] != "pong" || got["userInput"] != "ping" {
		t.Errorf("ping: %v", got)
	}
	turn("ping")
	turn("what is this")
	end := turn("a human please")
	if end["conversationEnded"] != true || end["metadata"].(map[string]any)["handoffDestination"] != "tier2" {
		t.Errorf("handoff turn: %v", end)
	}
	if r := c.turn("flow-1", "hello?"); r.status != 409 || r.json(t)["error_code"] != sim.CodeConversationEnded {
		t.Errorf("turn after end: %d %s", r.status, r.body)
	}

	got := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations/flow-1?include_latency=true", s.RuntimeKey, nil)
	if got.status != 200 {
		t.Fatalf("get: %d %s", got.status, got.body)
	}
	sum = got.json(t)
	want := map[string]any{
		"id": "flow-1", "account_id": s.AccountID, "project_id": "helpdesk", "environment": "sandbox",
		"channel": "WEBCHAT", "variant_id": "blue", "variant_name": "Blue Team", "in_progress": false,
		"num_turns": 5.0, "num_ood": 1.0, "num_silences": 0.0, "handoff": true,
		"handoff_destination": "tier2", "handoff_reason": "caller asked for a human",
	}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("%s = %v, want %v", k, sum[k], v)
		}
	}
	metrics := sum["metrics"].(map[string]any)
	if pings, ok := metrics["PINGS"].([]any); !ok || len(pings) != 2 {
		t.Errorf("PINGS written twice should be an array of 2: %v", metrics["PINGS"])
	}
	if turns, ok := metrics["CALL_TURN"].([]any); !ok || len(turns) != 5 {
		t.Errorf("CALL_TURN: %v", metrics["CALL_TURN"])
	}
	if _, ok := metrics["CALL_DURATION"].(string); !ok {
		t.Errorf("CALL_DURATION: %v", metrics["CALL_DURATION"])
	}
	state := sum["state"].(map[string]any)
	for _, k := range []string{"from_", "to", "call_sid", "conversation_id"} {
		if _, ok := state[k]; !ok {
			t.Errorf("state lacks %s: %v", k, state)
		}
	}
	turns := sum["turns"].([]any)
	t1 := turns[1].(map[string]any)
	if t1["user_input"] != "ping" || t1["agent_response"] != "pong" || t1["is_ood"] != false {
		t.Errorf("turn 1: %v", t1)
	}
	if ints := t1["intents"].([]any); len(ints) != 1 || ints[0] != "ping" {
		t.Errorf("intents %v", t1["intents"])
	}
	for _, k := range []string{"user_input_datetime", "agent_response_datetime"} {
		if _, err := time.Parse(time.RFC3339, t1[k].(string)); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, ok := t1["latency"].(float64); !ok {
		t.Errorf("include_latency did not add latency: %v", t1)
	}
	if turns[3].(map[string]any)["is_ood"] != true {
		t.Errorf("turn 3 should be OOD: %v", turns[3])
	}

	// handoff_state by id, by shared_id, shared_id winning, and neither.
	hs := func(q string) response {
		return call(t, "GET", s.RuntimeURL+"/v1/"+s.AccountID+"/helpdesk/handoff_state?"+q, s.RuntimeKey, nil)
	}
	if r := hs("id=flow-1"); r.status != 200 || r.json(t)["shared_id"] != "case-flow-1" ||
		r.json(t)["data"].(map[string]any)["priority"] != "high" {
		t.Errorf("by id: %d %s", r.status, r.body)
	}
	if r := hs("shared_id=case-flow-1"); r.status != 200 || r.json(t)["id"] != "flow-1" {
		t.Errorf("by shared_id: %d %s", r.status, r.body)
	}
	if r := hs("id=nope&shared_id=case-flow-1"); r.status != 200 {
		t.Errorf("shared_id should win: %d %s", r.status, r.body)
	}
	if r := hs(""); r.status != 400 {
		t.Errorf("neither: %d, want 400", r.status)
	}
	if r := hs("shared_id=nope"); r.status != 404 {
		t.Errorf("unknown shared_id: %d, want 404", r.status)
	}
	other := c.start(nil)
	if r := hs("id=" + other); r.status != 404 {
		t.Errorf("no handoff: %d, want 404", r.status)
	}
}

func TestChatTimeout(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, ChatIdleTimeout: time.Minute, JanitorInterval: time.Hour})
	id := c.start(nil)
	clk.Advance(59 * time.Second)
	if r := c.turn(id, "ping"); r.status != 200 {
		t.Fatalf("turn within the limit: %d %s", r.status, r.body)
	}
	clk.Advance(61 * time.Second)
	r := c.turn(id, "ping")
	if r.status != 408 || r.json(t)["error_code"] != sim.CodeChatTimeout {
		t.Fatalf("idle turn: %d %s", r.status, r.body)
	}
	// It stays timed out, and the record is no longer in progress.
	if r := c.turn(id, "ping"); r.json(t)["error_code"] != sim.CodeChatTimeout {
		t.Errorf("second idle turn: %s", r.body)
	}
	if sum := c.runtime("/conversations/" + id).json(t); sum["in_progress"] != false {
		t.Errorf("in_progress after timeout: %v", sum["in_progress"])
	}
	if n := s.Server.LiveSessions(); n != 0 {
		t.Errorf("%d live sessions after timeout", n)
	}
}

func TestStoreCapBoundsLiveSessions(t *testing.T) {
	t.Parallel()
	// Past the store's capacity the sessions opened first idle out, so a
	// run of any size holds at most StoreCap sessions in memory.
	s, c := startHelpdesk(t, sim.Options{StoreCap: 3})
	var ids []string
	for range 5 {
		ids = append(ids, c.start(nil))
	}
	if n := s.Server.LiveSessions(); n != 3 {
		t.Errorf("%d live sessions, want 3", n)
	}
	for i, id := range ids {
		r := c.turn(id, "ping")
		code, _ := r.json(t)["error_code"].(string)
		switch {
		case i < 2 && code != sim.CodeChatTimeout && code != sim.CodeConversationsNotFound:
			// Idled out; the record is then the first the store evicts.
			t.Errorf("session %d, idled out: %d %s", i, r.status, r.body)
		case i >= 2 && r.status != 200:
			t.Errorf("session %d: %d %s", i, r.status, r.body)
		}
	}
	// The store evicts an ended conversation when the next one comes.
	if n := s.Server.Store().Len(); n > 3+1 {
		t.Errorf("the store holds %d conversations, above its capacity of 3", n)
	}
}

func TestJanitorEndsIdleSessions(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, ChatIdleTimeout: time.Minute, JanitorInterval: 5 * time.Millisecond})
	for range 20 {
		c.start(nil)
	}
	if n := s.Server.LiveSessions(); n != 20 {
		t.Fatalf("%d live sessions, want 20", n)
	}
	clk.Advance(2 * time.Minute)
	// Nothing reads meanwhile: only the janitor's rounds can end them.
	if !settles(s.Server, func() bool { return s.Server.LiveSessions() == 0 }) {
		t.Fatalf("janitor left %d sessions", s.Server.LiveSessions())
	}
	r := c.runtime("/conversations?in_progress=true&client_env=live")
	if n := len(r.json(t)["conversations"].([]any)); n != 0 {
		t.Errorf("%d conversations still in progress", n)
	}
}

func TestActiveDeployment(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{})
	r := call(t, "GET", s.BuildURL+"/v1/agents/helpdesk/deployments/active", s.BuildKey, nil)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	m := r.json(t)
	if id, _ := m["id"].(string); !strings.HasPrefix(id, "dep-") || m["environment"] != "sandbox" {
		t.Errorf("deployment %s", r.body)
	}
	if r := call(t, "GET", s.BuildURL+"/v1/agents/nope/deployments/active", s.BuildKey, nil); r.status != 404 {
		t.Errorf("unknown agent: %d", r.status)
	}
}

func TestAudio(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{})
	voice := c.start(map[string]any{"channel": "VOICE-SIP"})
	c.turn(voice, "ping")
	chatID := c.start(nil)

	r := c.runtime("/conversations/" + voice + "/audio")
	if r.status != 200 || r.header.Get("Content-Type") != "audio/wav" {
		t.Fatalf("voice audio: %d %s", r.status, r.header.Get("Content-Type"))
	}
	b := r.body
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" || string(b[36:40]) != "data" {
		t.Fatalf("not a WAV header: %q", b[:min(len(b), 44)])
	}
	if int(binary.LittleEndian.Uint32(b[4:]))+8 != len(b) || int(binary.LittleEndian.Uint32(b[40:]))+44 != len(b) {
		t.Errorf("WAV sizes do not match the %d bytes", len(b))
	}
	sum := c.runtime("/conversations/" + voice).json(t)
	if sum["to_number"] != "+15550001111" || sum["from_number"] == "" {
		t.Errorf("voice numbers: from %v to %v", sum["from_number"], sum["to_number"])
	}

	if r := c.runtime("/conversations/" + chatID + "/audio"); r.status != 404 {
		t.Errorf("chat audio: %d, want 404", r.status)
	}
	if r := c.runtime("/conversations/nope/audio"); r.status != 404 {
		t.Errorf("unknown audio: %d, want 404", r.status)
	}
	_ = s
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, RatePerKey: 2})
	path := "/conversations"
	for i := range 2 {
		if r := c.runtime(path); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := c.runtime(path)
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("third request: %d Retry-After=%q", r.status, r.header.Get("Retry-After"))
	}
	// The build key has its own budget.
	if r := c.create(map[string]any{"clientEnv": "live"}); r.status != 200 {
		t.Errorf("build key limited by runtime traffic: %d", r.status)
	}
	clk.Advance(time.Second)
	if r := c.runtime(path); r.status != 200 {
		t.Errorf("after refill: %d", r.status)
	}
	_ = s
}

func TestFaults(t *testing.T) {
	t.Parallel()
	t.Run("500", func(t *testing.T) {
		_, c := startHelpdesk(t, sim.Options{Faults: sim.Faults{Error500: 1}})
		r := c.create(map[string]any{"clientEnv": "live"})
		if r.status != 500 || r.json(t)["error_code"] != sim.CodeInternal {
			t.Errorf("%d %s", r.status, r.body)
		}
		if r := c.runtime("/conversations"); r.status != 500 || r.json(t)["error_message"] == nil {
			t.Errorf("runtime: %d %s", r.status, r.body)
		}
	})
	t.Run("429", func(t *testing.T) {
		_, c := startHelpdesk(t, sim.Options{Faults: sim.Faults{Error429: 1, RetryAfter: 3 * time.Second}})
		r := c.runtime("/conversations")
		if r.status != 429 || r.header.Get("Retry-After") != "3" {
			t.Errorf("%d Retry-After=%q", r.status, r.header.Get("Retry-After"))
		}
	})
	t.Run("chat timeout", func(t *testing.T) {
		_, c := startHelpdesk(t, sim.Options{Faults: sim.Faults{ChatTimeout: 1}})
		id := c.start(nil)
		if r := c.turn(id, "ping"); r.status != 408 || r.json(t)["error_code"] != sim.CodeChatTimeout {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
	t.Run("drop", func(t *testing.T) {
		s, _ := startHelpdesk(t, sim.Options{Faults: sim.Faults{Drop: 1}})
		req, _ := http.NewRequest("GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations", nil)
		req.Header.Set("x-api-key", s.RuntimeKey)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("dropped request got a response: %d", resp.StatusCode)
		}
	})
	t.Run("deterministic under seed", func(t *testing.T) {
		statuses := func() string {
			_, c := startHelpdesk(t, sim.Options{Seed: 42, Faults: sim.Faults{Error500: 0.3, Error429: 0.2}})
			var b strings.Builder
			for range 40 {
				fmt.Fprintf(&b, "%d ", c.runtime("/conversations").status)
			}
			return b.String()
		}
		a, b := statuses(), statuses()
		if a != b {
			t.Errorf("same seed, different faults:\n%s\n%s", a, b)
		}
		if !strings.Contains(a, "500") || !strings.Contains(a, "429") || !strings.Contains(a, "200") {
			t.Errorf("fractions not applied: %s", a)
		}
	})
	t.Run("bad fraction", func(t *testing.T) {
		for _, o := range []sim.Options{
			{Faults: sim.Faults{Drop: 2}}, {Faults: sim.Faults{Drop: math.NaN()}}, {Faults: sim.Faults{SocketDrop: math.Inf(-1)}},
			{RatePerKey: math.NaN()}, {RatePerKey: math.Inf(1)}, {SMSRate: math.NaN()}, {SMSRate: -1},
			{Messaging: sim.MessagingOptions{MessageRate: math.NaN()}}, {Messaging: sim.MessagingOptions{HandshakeRate: math.Inf(1)}},
		} {
			o.Agents = []*agent.Definition{helpdesk(t)}
			if _, err := sim.New(o); err == nil {
				t.Errorf("accepted faults %+v, rates %v %v, messaging rates %v %v", o.Faults, o.RatePerKey, o.SMSRate, o.Messaging.HandshakeRate, o.Messaging.MessageRate)
			}
		}
	})
}

func TestConcurrentSessions(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{})
	const sessions, turns = 64, 5
	var wg sync.WaitGroup
	errs := make(chan string, sessions)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for i := range sessions {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("par-%03d", i)
			post := func(url, body string) int {
				req, _ := http.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("x-api-key", s.BuildKey)
				resp, err := client.Do(req)
				if err != nil {
					return -1
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			base := s.BuildURL + "/v1/agents/helpdesk/debug-chat"
			if st := post(base, `{"clientEnv":"live","conversationId":"`+id+`"}`); st != 200 {
				errs <- fmt.Sprintf("%s create: %d", id, st)
				return
			}
			for j := range turns {
				if st := post(base+"/"+id, `{"clientEnv":"live","message":"ping"}`); st != 200 {
					errs <- fmt.Sprintf("%s turn %d: %d", id, j, st)
					return
				}
			}
		}(i)
	}
	// Lists read the store while sessions write it.
	for range 10 {
		c.runtime("/conversations?include_latency=true")
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	got := c.runtime("/conversations").json(t)["conversations"].([]any)
	if len(got) != sessions {
		t.Fatalf("%d conversations, want %d", len(got), sessions)
	}
	for _, x := range got {
		if n := x.(map[string]any)["num_turns"]; n != float64(turns+1) {
			t.Fatalf("num_turns %v, want %d", n, turns+1)
		}
	}
}

func TestListenAndServe(t *testing.T) {
	t.Parallel()
	srv, err := sim.New(sim.Options{Agents: []*agent.Definition{helpdesk(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, single := range []bool{false, true} {
		t.Run(fmt.Sprintf("single=%v", single), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			infoc := make(chan sim.Info, 1)
			errc := make(chan error, 1)
			go func() {
				errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", single, func(i sim.Info) { infoc <- i })
			}()
			var info sim.Info
			select {
			case info = <-infoc:
			case err := <-errc:
				t.Fatalf("serve: %v", err)
			}
			if (info.BuildURL == info.RuntimeURL) != single {
				t.Errorf("build %s runtime %s", info.BuildURL, info.RuntimeURL)
			}
			r := call(t, "GET", info.RuntimeURL+"/v3/"+info.AccountID+"/helpdesk/conversations", info.RuntimeKey, nil)
			if r.status != 200 {
				t.Errorf("list: %d", r.status)
			}
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
}

// listAll walks a list endpoint and returns the ids in order.
func listAll(t *testing.T, s *simtest.Sim, project string, q url.Values, byCursor bool) []string {
	t.Helper()
	var ids []string
	for page := 0; ; page++ {
		if page > 20000 {
			t.Fatal("walk does not end")
		}
		r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+project+"/conversations?"+q.Encode(), s.RuntimeKey, nil)
		if r.status != 200 {
			t.Fatalf("page %d: %d %s", page, r.status, r.body)
		}
		var m struct {
			Conversations []struct {
				ID string `json:"id"`
			} `json:"conversations"`
			NextOffset *int            `json:"next_offset"`
			Cursor     json.RawMessage `json:"cursor"`
		}
		if err := json.Unmarshal(r.body, &m); err != nil {
			t.Fatal(err)
		}
		for _, c := range m.Conversations {
			ids = append(ids, c.ID)
		}
		if len(m.Cursor) == 0 {
			t.Fatal("v3 envelope lacks cursor")
		}
		if string(m.Cursor) == "null" {
			if m.NextOffset != nil {
				t.Fatal("next_offset present on the last page")
			}
			return ids
		}
		if byCursor {
			var cur string
			if err := json.Unmarshal(m.Cursor, &cur); err != nil {
				t.Fatal(err)
			}
			q.Set("cursor", cur)
			q.Set("offset", "999999") // cursor wins over offset
		} else {
			q.Set("offset", fmt.Sprint(*m.NextOffset))
		}
	}
}
