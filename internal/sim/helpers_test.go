package sim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// helpdesk loads the test agent of testdata/agents.
func helpdesk(t testing.TB) *agent.Definition {
	t.Helper()
	src, err := os.ReadFile("testdata/agents/helpdesk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, diags := agent.Load("testdata/agents/helpdesk.yaml", src)
	if diags.HasErrors() {
		t.Fatalf("load helpdesk agent: %v", diags)
	}
	return def
}

// response is a read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

// testClient keeps enough idle connections for the tests' workers (up to
// 8 at a time per simulator): http.DefaultClient keeps 2 per host, so the
// others would open a new connection for every request.
var testClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 32}}

// call makes one request; body, when not nil, is sent as JSON.
func call(t testing.TB, method, url, key string, body any) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, url, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// chat is a debug-chat client for one simulator.
type chat struct {
	t  testing.TB
	s  *simtest.Sim
	id string // agent id
}

func (c chat) create(body map[string]any) response {
	return call(c.t, "POST", c.s.BuildURL+"/v1/agents/"+c.id+"/debug-chat", c.s.BuildKey, body)
}

func (c chat) turn(conv, msg string) response {
	return call(c.t, "POST", c.s.BuildURL+"/v1/agents/"+c.id+"/debug-chat/"+conv, c.s.BuildKey,
		map[string]any{"clientEnv": "live", "message": msg})
}

// start creates a live session and returns its id.
func (c chat) start(extra map[string]any) string {
	c.t.Helper()
	body := map[string]any{"clientEnv": "live"}
	maps.Copy(body, extra)
	r := c.create(body)
	if r.status != 200 {
		c.t.Fatalf("create: %d %s", r.status, r.body)
	}
	return r.json(c.t)["conversationId"].(string)
}

func (c chat) runtime(path string) response {
	return call(c.t, "GET", c.s.RuntimeURL+"/v3/"+c.s.AccountID+"/"+c.id+path, c.s.RuntimeKey, nil)
}

func startHelpdesk(t testing.TB, opts sim.Options) (*simtest.Sim, chat) {
	t.Helper()
	opts.Agents = []*agent.Definition{helpdesk(t)}
	s := simtest.Start(t, opts)
	return s, chat{t: t, s: s, id: "helpdesk"}
}

// settles reports whether cond holds, checking it again each time the
// server ends some background work (Server.Changed), so the wait ends the
// moment the change that makes cond true is made. It gives up after
// readTimeout, a bound for a broken build, not the mechanism: a cond
// that came true with no change reported is a failure too.
func settles(srv *sim.Server, cond func() bool) bool {
	bound := time.NewTimer(readTimeout)
	defer bound.Stop()
	for {
		changed := srv.Changed()
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-bound.C:
			return false
		}
	}
}

// waitFor waits until cond holds, a condition the server makes true in
// the background (a socket's clean-up after its close, a client event
// dropped); it fails after readTimeout.
func waitFor(t *testing.T, srv *sim.Server, cond func() bool) {
	t.Helper()
	if !settles(srv, cond) {
		t.Fatal("condition not reached")
	}
}
