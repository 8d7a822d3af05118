package sim_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// active reads GET deployments/active, with ?environment= when env is set.
func active(t testing.TB, s *simtest.Sim, agentID, env string) response {
	t.Helper()
	url := s.BuildURL + "/v1/agents/" + agentID + "/deployments/active"
	if env != "" {
		url += "?environment=" + env
	}
	return call(t, "GET", url, s.BuildKey, nil)
}

// admin calls a simulator admin endpoint with the build key.
func admin(t testing.TB, s *simtest.Sim, method, path string, body any) response {
	t.Helper()
	return call(t, method, s.BuildURL+"/_sim/agents/"+path, s.BuildKey, body)
}

func TestDeploymentsAtStart(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 5})
	type testCase struct {
		agent, env  string // env "" asks without the query parameter
		wantEnv     string
		wantVersion string
	}
	ids := map[string]string{}
	var mu sync.Mutex
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		r := active(t, s, tc.agent, tc.env)
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		m := r.json(t)
		id, _ := m["id"].(string)
		if !strings.HasPrefix(id, "dep-") || len(id) != len("dep-")+16 || m["environment"] != tc.wantEnv || m["version"] != tc.wantVersion ||
			m["agent_id"] != tc.agent || m["status"] != "active" || m["created_at"] == "" {
			t.Errorf("got %s, want environment %s, version %s", r.body, tc.wantEnv, tc.wantVersion)
		}
		if tc.env != "" {
			mu.Lock()
			ids[tc.agent+"/"+tc.env] = id
			mu.Unlock()
		}
	}
	testCases := []testCase{
		{"restaurant", "", "sandbox", "1.2"},
		{"restaurant", "sandbox", "sandbox", "1.2"},
		{"restaurant", "pre-release", "pre-release", "1.1"},
		{"restaurant", "live", "live", "1.0"},
		{"clinic", "sandbox", "sandbox", "1"},
		{"clinic", "pre-release", "pre-release", "1"},
		{"clinic", "live", "live", "1"},
	}
	t.Run("environments", func(t *testing.T) {
		for _, tc := range testCases {
			t.Run(tc.agent+" "+tc.env, func(t *testing.T) { run(t, tc) })
		}
	})
	// The PROJECT- alias reaches the same deployment.
	if r := active(t, s, s.Info.ProjectIDs["clinic"], "live"); r.status != 200 || r.json(t)["id"] != ids["clinic/live"] {
		t.Errorf("alias: %d %s, want %s", r.status, r.body, ids["clinic/live"])
	}
	// Every environment has its own deployment, with its own id.
	seen := map[string]string{}
	for k, id := range ids {
		if other, dup := seen[id]; dup {
			t.Errorf("%s and %s share deployment id %s", k, other, id)
		}
		seen[id] = k
	}
	// Ids are reproducible under the seed, and only under it.
	same, other := simtest.Start(t, sim.Options{Seed: 5}), simtest.Start(t, sim.Options{Seed: 6})
	want := active(t, s, "restaurant", "live").json(t)["id"]
	if got := active(t, same, "restaurant", "live").json(t)["id"]; got != want {
		t.Errorf("same seed: id %v, want %v", got, want)
	}
	if got := active(t, other, "restaurant", "live").json(t)["id"]; got == want {
		t.Errorf("another seed gave the same id %v", got)
	}
	for _, bad := range []string{"prod", "Live"} {
		if r := active(t, s, "restaurant", bad); r.status != 400 || !strings.Contains(string(r.body), "sandbox, pre-release, live") {
			t.Errorf("environment %q: %d %s", bad, r.status, r.body)
		}
	}
}

// TestEditedDefinitionIsANewDeployment: a simulator started on an edited
// agent definition serves new deployments of that agent, in every
// environment, and of no other, under the same seed; the same files give
// the same ids. Before, the ids came from the seed alone: a nightly
// rehearsed on a fresh simulator per night, with the agent changed on
// one of them (docs/reliability.md, "The nightly job against live"),
// tested "the same deployment" before and after the change, which the
// history then said was not redeployed, and a gate would have vouched
// for.
func TestEditedDefinitionIsANewDeployment(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "agents", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	clinic, restaurant := read("clinic.yaml"), read("restaurant.yaml")
	edited := strings.Replace(clinic, "I'm putting you through to our on-call nurse right now.", "Let me transfer you to reception.", 1)
	if edited == clinic {
		t.Fatal("the clinic's urgent reply is not where the test edits it")
	}
	start := func(clinic string) *simtest.Sim {
		return simtest.Start(t, sim.Options{Seed: 5, Agents: []*agent.Definition{loadAgent(t, "clinic.yaml", clinic), loadAgent(t, "restaurant.yaml", restaurant)}})
	}
	ids := func(s *simtest.Sim, agentID string) []string {
		var out []string
		for _, env := range []string{"sandbox", "pre-release", "live"} {
			d, err := s.Server.ActiveDeployment(agentID, env)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.ID)
		}
		// A release made on it: a publish, then a promotion.
		for _, release := range []func() (sim.Deployment, error){
			func() (sim.Deployment, error) { return s.Server.Publish(agentID, "") },
			func() (sim.Deployment, error) { return s.Server.Promote(agentID, "pre-release", "") },
		} {
			d, err := release()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.ID)
		}
		return out
	}
	// Each simulator's deployments, read and published in one order:
	// a publish's id follows the ones made before it.
	deployed := func(clinic string) [2][]string {
		s := start(clinic)
		return [2][]string{ids(s, "clinic"), ids(s, "restaurant")}
	}
	a, same, changed := deployed(clinic), deployed(clinic), deployed(edited)
	if !slices.Equal(same[0], a[0]) || !slices.Equal(same[1], a[1]) {
		t.Errorf("the same definitions and seed: deployments %v, want %v", same, a)
	}
	for i := range a[0] {
		if a[0][i] == changed[0][i] {
			t.Errorf("the edited clinic serves deployment %s of the unedited one (%d of %v)", changed[0][i], i, changed[0])
		}
	}
	if !slices.Equal(changed[1], a[1]) {
		t.Errorf("the restaurant, not edited: deployments %v, want %v", changed[1], a[1])
	}
}

// The admin endpoints change the deployments the way a release does; the
// steps run in order on one simulator, each checking the state it leaves.
func TestDeploymentAdmin(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := simtest.Start(t, sim.Options{Seed: 2, Now: clk.Now})
	start := map[string]map[string]any{}
	for _, env := range []string{"sandbox", "pre-release", "live"} {
		start[env] = active(t, s, "restaurant", env).json(t)
	}
	idOf := func(env string) string { return active(t, s, "restaurant", env).json(t)["id"].(string) }
	type step struct {
		name       string
		method     string
		path       string
		key        string // default the build key
		body       any
		bodyOf     func() any // a body that depends on the state so far
		wantStatus int
		wantBody   string                               // substring of the reply
		check      func(t *testing.T, m map[string]any) // on the reply, when 200
	}
	var publishedID string
	steps := []step{
		{name: "list", method: "GET", path: "restaurant/deployments", wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			deps := m["deployments"].([]any)
			if fmt.Sprint(m["versions"]) != "[1.2 1.1 1.0]" || len(deps) != 3 || deps[0].(map[string]any)["id"] != start["sandbox"]["id"] ||
				deps[2].(map[string]any)["version"] != "1.0" {
				t.Errorf("list: %v", m)
			}
		}},
		{name: "publish a version to sandbox", method: "POST", path: "restaurant/publish", body: map[string]any{"version": "1.1"}, wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			publishedID = m["id"].(string)
			if publishedID == start["sandbox"]["id"] || m["environment"] != "sandbox" || m["version"] != "1.1" || idOf("sandbox") != publishedID {
				t.Errorf("publish: %v (sandbox now %s)", m, idOf("sandbox"))
			}
			if m["created_at"] != "2026-03-01T12:00:02.000Z" {
				t.Errorf("created_at %v is not the server clock", m["created_at"])
			}
		}},
		{name: "republish: a new id, the same version", method: "POST", path: "restaurant/publish", wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			if m["id"] == publishedID || m["version"] != "1.1" {
				t.Errorf("republish: %v", m)
			}
			publishedID = m["id"].(string)
		}},
		{name: "promote a stale sandbox id", method: "POST", path: "restaurant/promote", body: map[string]any{"to": "pre-release", "deployment_id": fmt.Sprint(start["sandbox"]["id"])}, wantStatus: 409, wantBody: "is not the active sandbox deployment"},
		{name: "promote the active sandbox id", method: "POST", path: "restaurant/promote", bodyOf: func() any { return map[string]any{"to": "pre-release", "deployment_id": idOf("sandbox")} }, wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			if m["environment"] != "pre-release" || m["version"] != "1.1" || m["promoted_from"] != publishedID || m["id"] == start["pre-release"]["id"] {
				t.Errorf("promote: %v", m)
			}
		}},
		{name: "promote to live", method: "POST", path: "restaurant/promote", body: map[string]any{"to": "live"}, wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			if m["environment"] != "live" || m["version"] != "1.1" || idOf("live") != m["id"] {
				t.Errorf("promote to live: %v", m)
			}
		}},
		{name: "roll live back", method: "POST", path: "restaurant/rollback", body: map[string]any{"environment": "live"}, wantStatus: 200, check: func(t *testing.T, m map[string]any) {
			if m["id"] != start["live"]["id"] || m["version"] != "1.0" || idOf("live") != m["id"] {
				t.Errorf("rollback: %v, want the first live deployment back", m)
			}
		}},
		{name: "nothing earlier to roll back to", method: "POST", path: "restaurant/rollback", body: map[string]any{"environment": "live"}, wantStatus: 409, wantBody: "no earlier deployment"},
		{name: "unknown version", method: "POST", path: "restaurant/publish", body: map[string]any{"version": "3.0"}, wantStatus: 400, wantBody: "versions are 1.2, 1.1, 1.0"},
		{name: "promote to sandbox", method: "POST", path: "restaurant/promote", body: map[string]any{"to": "sandbox"}, wantStatus: 400, wantBody: "publish to it instead"},
		{name: "promote to an unknown environment", method: "POST", path: "restaurant/promote", body: map[string]any{"to": "prod"}, wantStatus: 400, wantBody: "not one of sandbox, pre-release, live"},
		{name: "promote without to", method: "POST", path: "restaurant/promote", body: map[string]any{}, wantStatus: 400, wantBody: `needs \"to\"`},
		{name: "rollback without environment", method: "POST", path: "restaurant/rollback", body: map[string]any{}, wantStatus: 400, wantBody: `needs \"environment\"`},
		{name: "malformed body", method: "POST", path: "restaurant/publish", body: "[", wantStatus: 400, wantBody: "malformed JSON"},
		{name: "unknown agent", method: "POST", path: "nope/publish", wantStatus: 404, wantBody: `agent \"nope\" not found`},
		{name: "PROJECT- alias", method: "GET", path: s.Info.ProjectIDs["restaurant"] + "/deployments", wantStatus: 200},
		{name: "no key", method: "GET", path: "restaurant/deployments", key: "-", wantStatus: 401},
		{name: "the runtime key", method: "GET", path: "restaurant/deployments", key: s.RuntimeKey, wantStatus: 401},
		{name: "a scoped build key", method: "POST", path: "restaurant/publish", key: s.Info.ScopedBuildKey, wantStatus: 401},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			clk.Advance(time.Second)
			key := st.key
			switch key {
			case "":
				key = s.BuildKey
			case "-":
				key = ""
			}
			body := st.body
			if st.bodyOf != nil {
				body = st.bodyOf()
			}
			var r response
			if raw, ok := body.(string); ok {
				r = do(t, st.method, s.BuildURL+"/_sim/agents/"+st.path, map[string]string{"x-api-key": key}, raw)
			} else {
				r = call(t, st.method, s.BuildURL+"/_sim/agents/"+st.path, key, body)
			}
			if r.status != st.wantStatus || !strings.Contains(string(r.body), st.wantBody) {
				t.Fatalf("%s %s: %d %s, want %d with %q", st.method, st.path, r.status, r.body, st.wantStatus, st.wantBody)
			}
			if st.check != nil {
				st.check(t, r.json(t))
			}
		})
	}
	// The admin endpoints belong to the build host only.
	if r := call(t, "GET", s.RuntimeURL+"/_sim/agents/restaurant/deployments", s.BuildKey, nil); r.status != 404 {
		t.Errorf("admin on the runtime host: %d", r.status)
	}
}

// A drill that breaks every platform call must not break the controls the
// test drives it with.
func TestAdminIgnoresFaults(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Faults: sim.Faults{Error500: 1}, RatePerKey: 0.001})
	if r := active(t, s, "restaurant", ""); r.status != 500 {
		t.Fatalf("deployments/active under Error500: %d", r.status)
	}
	for range 3 {
		if r := admin(t, s, "POST", "restaurant/publish", nil); r.status != 200 {
			t.Fatalf("publish under faults: %d %s", r.status, r.body)
		}
	}
	if d, err := s.Server.ActiveDeployment("restaurant", "sandbox"); err != nil || d.Version != "1.2" {
		t.Errorf("ActiveDeployment = %+v, %v", d, err)
	}
}

// Each environment serves its version; a conversation keeps the version it
// started on, and its record (Conversations API) stays in its environment.
func TestEnvironmentsServeTheirVersions(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 3})
	c := chat{t: t, s: s, id: "restaurant"}
	start := func(env string) string {
		r := c.create(map[string]any{"clientEnv": env})
		if r.status != 200 {
			t.Fatalf("create in %s: %d %s", env, r.status, r.body)
		}
		return r.json(t)["conversationId"].(string)
	}
	say := func(conv, env, msg string) string {
		r := call(t, "POST", s.BuildURL+"/v1/agents/restaurant/debug-chat/"+conv, s.BuildKey, map[string]any{"clientEnv": env, "message": msg})
		if r.status != 200 {
			t.Fatalf("turn: %d %s", r.status, r.body)
		}
		return r.json(t)["response"].(string)
	}
	const ask = "what's my reference?"
	const v12, v11 = "Would you like to book a table?", "Shall I book a table for you?"
	type testCase struct {
		env, want string
	}
	convs := map[string]string{}
	for _, tc := range []testCase{{"sandbox", v12}, {"pre-release", v11}, {"live", v12}} {
		conv := start(tc.env)
		convs[tc.env] = conv
		if got := say(conv, tc.env, ask); !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.env, got, tc.want)
		}
	}
	if got := say(convs["live"], "live", "when do you close?"); !strings.Contains(got, "didn't quite get that") {
		t.Errorf("live (1.0) answered the closing question: %q", got)
	}
	// Publishing 1.1 to sandbox: the open sandbox conversation stays on
	// 1.2, a new one runs 1.1.
	if _, err := s.Server.Publish("restaurant", "1.1"); err != nil {
		t.Fatal(err)
	}
	if got := say(convs["sandbox"], "sandbox", ask); !strings.Contains(got, v12) {
		t.Errorf("open sandbox conversation after the publish: %q, want 1.2's %q", got, v12)
	}
	fresh := start("sandbox")
	if got := say(fresh, "sandbox", ask); !strings.Contains(got, v11) {
		t.Errorf("new sandbox conversation after the publish: %q, want 1.1's %q", got, v11)
	}
	for env, conv := range map[string]string{"pre-release": convs["pre-release"], "sandbox": fresh} {
		r := c.runtime("/conversations/" + conv)
		m := r.json(t)
		turns, _ := m["turns"].([]any)
		if r.status != 200 || m["environment"] != env || len(turns) != 2 || !strings.Contains(fmt.Sprint(turns[1].(map[string]any)["agent_response"]), v11) {
			t.Errorf("record of %s conversation %s: %d %s", env, conv, r.status, r.body)
		}
	}
}

// A node's latencyMs delays the reply through Options.Sleep (here the
// test's clock), and the record carries it as the turn's latency.
func TestThinkTime(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var mu sync.Mutex
	var slept []time.Duration
	s := simtest.Start(t, sim.Options{Now: clk.Now, Sleep: func(_ context.Context, d time.Duration) {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		clk.Advance(d)
	}})
	c := chat{t: t, s: s, id: "restaurant"}
	type testCase struct {
		env         string
		wantSlept   []time.Duration
		wantLatency float64 // seconds, as include_latency reports it
	}
	run := func(t *testing.T, tc testCase) {
		mu.Lock()
		slept = nil
		mu.Unlock()
		r := c.create(map[string]any{"clientEnv": tc.env})
		conv := r.json(t)["conversationId"].(string)
		if r := call(t, "POST", s.BuildURL+"/v1/agents/restaurant/debug-chat/"+conv, s.BuildKey, map[string]any{"clientEnv": tc.env, "message": "A table for 2 at 7pm please"}); r.status != 200 {
			t.Fatalf("turn: %d %s", r.status, r.body)
		}
		mu.Lock()
		got := fmt.Sprint(slept)
		mu.Unlock()
		if got != fmt.Sprint(tc.wantSlept) {
			t.Errorf("slept %s, want %v", got, tc.wantSlept)
		}
		m := c.runtime("/conversations/" + conv + "?include_latency=true").json(t)
		if lat := m["turns"].([]any)[1].(map[string]any)["latency"]; lat != tc.wantLatency {
			t.Errorf("recorded latency %v, want %v", lat, tc.wantLatency)
		}
	}
	for _, tc := range []testCase{
		{env: "sandbox", wantSlept: nil, wantLatency: 0},
		{env: "pre-release", wantSlept: []time.Duration{400 * time.Millisecond}, wantLatency: 0.4},
	} {
		t.Run(tc.env, func(t *testing.T) { run(t, tc) })
	}
}
