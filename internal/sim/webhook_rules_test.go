package sim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestWebhookEndpointRules pins the endpoint record's rules beyond the
// validation table: duplicate events kept once, integer timeout_ms, the
// description bound, a URL with a host, http:// only on loopback even
// for test receivers, a name made from a long URL cut to 255, headers
// and no signing_secret on reads, updated_at moved by a PATCH, and the
// cap on endpoints, a delete leaving the others listed.
func TestWebhookEndpointRules(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, _ := startHelpdesk(t, sim.Options{Now: clk.Now, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	create := func(body map[string]any) response {
		return call(t, "POST", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, body)
	}
	ev := []string{"handoff.created"}
	type testCase struct {
		name string
		body map[string]any
		want int
	}
	for _, tc := range []testCase{
		{"fractional timeout", map[string]any{"url": "https://example.com/h", "events": ev, "timeout_ms": 1500.5}, 400},
		{"description of 1001", map[string]any{"url": "https://example.com/h", "events": ev, "description": strings.Repeat("d", 1001)}, 400},
		{"description of 1000", map[string]any{"url": "https://example.com/h", "events": ev, "description": strings.Repeat("d", 1000)}, 201},
		{"no host", map[string]any{"url": "https:///hook", "events": ev}, 400},
		{"http not loopback", map[string]any{"url": "http://example.com/hook", "events": ev}, 400},
		{"http localhost", map[string]any{"url": "http://localhost:9/hook", "events": ev}, 201},
	} {
		if r := create(tc.body); r.status != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, r.status, tc.want, r.body)
		}
	}

	long := "https://example.com/" + strings.Repeat("p", 300)
	r := create(map[string]any{"url": long, "events": []string{"handoff.created", "handoff.created", "alerts.resolved"}})
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	ep := r.json(t)
	if name := ep["name"].(string); name != long[:255] {
		t.Errorf("name %q (%d), want the URL cut to 255", name, len(name))
	}
	if got := ep["event_types"].([]any); len(got) != 2 {
		t.Errorf("event_types %v, want each event once", got)
	}
	path := s.BuildURL + "/v1/webhook-endpoints/" + ep["id"].(string)
	got := call(t, "GET", path, s.BuildKey, nil).json(t)
	if _, ok := got["signing_secret"]; ok {
		t.Errorf("GET shows the signing secret: %v", got)
	}
	if h, ok := got["headers"].(map[string]any); !ok || len(h) != 0 {
		t.Errorf("headers %v, want {}", got["headers"])
	}
	for _, e := range call(t, "GET", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, nil).json(t)["endpoints"].([]any) {
		if _, ok := e.(map[string]any)["signing_secret"]; ok {
			t.Errorf("the list shows a signing secret: %v", e)
		}
	}
	clk.Advance(time.Hour)
	patched := call(t, "PATCH", path, s.BuildKey, map[string]any{"name": "renamed"}).json(t)
	if patched["updated_at"] == ep["updated_at"] || patched["created_at"] != ep["created_at"] {
		t.Errorf("after a PATCH: created_at %v, updated_at %v (were %v, %v)", patched["created_at"], patched["updated_at"], ep["created_at"], ep["updated_at"])
	}

	n := len(call(t, "GET", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, nil).json(t)["endpoints"].([]any))
	for i := n; i < 50; i++ {
		if r := create(map[string]any{"url": "https://example.com/h", "events": ev}); r.status != 201 {
			t.Fatalf("endpoint %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := create(map[string]any{"url": "https://example.com/h", "events": ev}); r.status != 409 {
		t.Errorf("endpoint 51: %d, want 409", r.status)
	}
	if r := call(t, "DELETE", path, s.BuildKey, nil); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	r = call(t, "GET", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, nil)
	if r.status != 200 || len(r.json(t)["endpoints"].([]any)) != 49 {
		t.Errorf("list after a delete: %d %.200s, want the 49 left", r.status, r.body)
	}
}

// gate is a webhook receiver that records each delivery and holds the
// ones listed in hold until release is closed (or the request ends).
type gate struct {
	mu      sync.Mutex
	hits    []*http.Request
	bodies  [][]byte
	status  int
	hold    map[int]bool
	release chan struct{}
	got     chan struct{}
}

func newGate(status int, hold ...int) *gate {
	g := &gate{status: status, hold: map[int]bool{}, release: make(chan struct{}), got: make(chan struct{}, 100)}
	for _, n := range hold {
		g.hold[n] = true
	}
	return g
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Read to the end, so the server notices when the client goes.
	b, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.hits = append(g.hits, r)
	g.bodies = append(g.bodies, b)
	n := len(g.hits)
	g.mu.Unlock()
	g.got <- struct{}{}
	if g.hold[n] {
		select {
		case <-g.release:
		case <-r.Context().Done():
		}
	}
	w.WriteHeader(g.status)
}

// await blocks until the gate saw n deliveries.
func (g *gate) await(t *testing.T, n int) {
	t.Helper()
	guard := time.After(10 * time.Second)
	for {
		g.mu.Lock()
		seen := len(g.hits)
		g.mu.Unlock()
		if seen >= n {
			return
		}
		select {
		case <-g.got:
		case <-guard:
			t.Fatalf("the receiver saw %d deliveries, want %d", seen, n)
		}
	}
}

// endConversation ends one helpdesk conversation: one
// conversation.completed event.
func endConversation(t *testing.T, c chat) {
	t.Helper()
	if r := c.turn(c.start(nil), "bye"); r.status != 200 {
		t.Fatalf("bye: %d %s", r.status, r.body)
	}
}

// TestWebhookDeliveryAccounting pins who gets a delivery and how it is
// counted, with one worker so the order is fixed: a disabled endpoint
// gets none; a delivery queued for an endpoint disabled before its turn
// is dropped, not failed; a full queue drops and counts; a 3xx is no
// success; each event has an id of its own; and the delivery request is
// JSON.
func TestWebhookDeliveryAccounting(t *testing.T) {
	t.Parallel()
	g := newGate(204, 1)
	hs := httptest.NewServer(g)
	defer hs.Close()
	s, c := startHelpdesk(t, sim.Options{Webhooks: sim.WebhookOptions{AllowInsecure: true, Workers: 1, Queue: 1, MaxAttempts: 1}})
	register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}, "enabled": false})
	on := register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}})
	endConversation(t, c) // delivery 1, held by the receiver
	g.await(t, 1)
	endConversation(t, c) // delivery 2, queued
	endConversation(t, c) // no room: dropped
	if st := s.Server.WebhookStats(); st.Dropped != 1 {
		t.Errorf("stats %+v after a delivery found the queue full, want 1 dropped", st)
	}
	if r := call(t, "PATCH", s.BuildURL+"/v1/webhook-endpoints/"+on["id"].(string), s.BuildKey, map[string]any{"enabled": false}); r.status != 200 {
		t.Fatalf("disable: %d %s", r.status, r.body)
	}
	close(g.release)
	waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Delivered == 1 && st.Dropped == 2 })
	if st := s.Server.WebhookStats(); st.Attempts != 1 || st.Failed != 0 {
		t.Errorf("stats %+v, want 1 attempt: the disabled endpoint gets nothing", st)
	}
	g.mu.Lock()
	h := g.hits[0].Header
	g.mu.Unlock()
	if h.Get("Content-Type") != "application/json" || h.Get("User-Agent") != "agenttest-sim-webhooks" {
		t.Errorf("delivery headers %v", h)
	}

	t.Run("3xx", func(t *testing.T) {
		g := newGate(302)
		hs := httptest.NewServer(g)
		defer hs.Close()
		s, c := startHelpdesk(t, sim.Options{Webhooks: sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 1}})
		register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}})
		endConversation(t, c)
		endConversation(t, c)
		waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Attempts == 2 && st.Delivered+st.Failed == 2 })
		if st := s.Server.WebhookStats(); st.Failed != 2 {
			t.Errorf("stats %+v, want each 302 failed", st)
		}
		// Two events, two ids: receivers deduplicate on it.
		g.mu.Lock()
		defer g.mu.Unlock()
		var a, b map[string]any
		if json.Unmarshal(g.bodies[0], &a) != nil || json.Unmarshal(g.bodies[1], &b) != nil || a["id"] == nil || a["id"] == b["id"] {
			t.Errorf("event ids %v and %v, want two different ones", a["id"], b["id"])
		}
	})
}

// TestWebhookBackoffCap pins MaxBackoff: the wait before a retry doubles
// from Backoff and stops at MaxBackoff.
func TestWebhookBackoffCap(t *testing.T) {
	t.Parallel()
	g := newGate(500)
	hs := httptest.NewServer(g)
	defer hs.Close()
	clk := &timerClock{Clock: fakeclock.New(), set: make(chan time.Duration, 64)}
	const backoff, maxBackoff = 100 * time.Millisecond, 150 * time.Millisecond
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, AfterFunc: clk.AfterFunc,
		Webhooks: sim.WebhookOptions{AllowInsecure: true, Backoff: backoff, MaxBackoff: maxBackoff, MaxAttempts: 3}})
	register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}})
	endConversation(t, c)
	clk.await(t, backoff)
	clk.Advance(backoff)
	clk.await(t, maxBackoff) // 2*backoff, capped
	clk.Advance(maxBackoff)
	waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Failed == 1 })
	if st := s.Server.WebhookStats(); st.Attempts != 3 {
		t.Errorf("stats %+v, want 3 attempts", st)
	}
}

// TestWebhookCloseFailsTheAttemptInFlight pins that Close cuts a delivery
// in flight and counts it failed, with no retry left behind.
func TestWebhookCloseFailsTheAttemptInFlight(t *testing.T) {
	t.Parallel()
	g := newGate(204, 1)
	hs := httptest.NewServer(g)
	defer hs.Close()
	s, c := startHelpdesk(t, sim.Options{Webhooks: sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 3}})
	register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}})
	endConversation(t, c)
	g.await(t, 1)
	s.Server.Close() // returns once the workers are gone
	if st := s.Server.WebhookStats(); st.Attempts != 1 || st.Failed != 1 {
		t.Errorf("stats %+v after Close, want the attempt in flight failed", st)
	}
}

// TestWebhookEveryEndpointGetsTheEvent pins that an event goes to each
// endpoint subscribed to it.
func TestWebhookEveryEndpointGetsTheEvent(t *testing.T) {
	t.Parallel()
	g1, g2 := newGate(204), newGate(204)
	h1, h2 := httptest.NewServer(g1), httptest.NewServer(g2)
	defer h1.Close()
	defer h2.Close()
	s, c := startHelpdesk(t, sim.Options{Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	for _, u := range []string{h1.URL, h2.URL} {
		register(t, s.BuildURL, s.BuildKey, map[string]any{"url": u, "events": []string{"conversation.completed"}})
	}
	endConversation(t, c)
	g1.await(t, 1)
	g2.await(t, 1)
}
