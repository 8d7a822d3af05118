package sim_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// hit is one delivery a receiver saw.
type hit struct {
	header http.Header
	body   []byte
	event  map[string]any
}

// receiver is a webhook receiver whose answers are scripted per attempt.
type receiver struct {
	mu     sync.Mutex
	hits   []hit
	answer func(n int) int // status for the n-th hit (1-based)
	block  func(n int) time.Duration
	got    chan struct{}
}

func newReceiver(answer func(n int) int) *receiver {
	return &receiver{answer: answer, got: make(chan struct{}, 100)}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var ev map[string]any
	_ = json.Unmarshal(b, &ev)
	rc.mu.Lock()
	rc.hits = append(rc.hits, hit{header: r.Header.Clone(), body: b, event: ev})
	n := len(rc.hits)
	rc.mu.Unlock()
	rc.got <- struct{}{}
	if rc.block != nil {
		if d := rc.block(n); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
			}
		}
	}
	w.WriteHeader(rc.answer(n))
}

// count is the number of hits so far.
func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.hits)
}

// wait blocks until the receiver saw n hits in total.
func (rc *receiver) wait(t *testing.T, n int) []hit {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		rc.mu.Lock()
		if len(rc.hits) >= n {
			out := append([]hit(nil), rc.hits...)
			rc.mu.Unlock()
			return out
		}
		rc.mu.Unlock()
		select {
		case <-rc.got:
		case <-deadline:
			t.Fatalf("receiver saw fewer than %d deliveries", n)
		}
	}
}

func hmacHex(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func register(t *testing.T, buildURL, key string, body map[string]any) map[string]any {
	t.Helper()
	r := call(t, "POST", buildURL+"/v1/webhooks/endpoints", key, body)
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	return r.json(t)
}

func TestWebhookDeliveryRetriesAndSignature(t *testing.T) {
	t.Parallel()
	rc := newReceiver(func(n int) int {
		if n <= 2 {
			return 500
		}
		return 204
	})
	hs := httptest.NewServer(rc)
	defer hs.Close()
	// The retries wait on a fake clock: the test sees each backoff the
	// simulator sets, and a retry comes only once the clock passes it.
	clk := &timerClock{Clock: fakeclock.New(), set: make(chan time.Duration, 64)}
	const backoff = 20 * time.Millisecond
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, AfterFunc: clk.AfterFunc,
		Webhooks: sim.WebhookOptions{AllowInsecure: true, Backoff: backoff, MaxAttempts: 4}})
	ep := register(t, s.BuildURL, s.BuildKey, map[string]any{
		"url": hs.URL + "/hook", "description": "ci receiver", "events": []string{"conversation.completed"},
	})
	id, secret := ep["id"].(string), ep["signing_secret"].(string)
	if !strings.HasPrefix(id, "whe_") || secret == "" || ep["timeout_ms"] != 5000.0 || ep["enabled"] != true || ep["name"] != "ci receiver" {
		t.Fatalf("registration %v", ep)
	}

	conv := c.start(nil)
	if r := c.turn(conv, "bye"); r.status != 200 {
		t.Fatalf("bye: %d", r.status)
	}
	rc.wait(t, 1)
	// Exponential backoff: the base, then twice the base, each retry
	// sent only when its wait has passed.
	for i, wait := range []time.Duration{backoff, 2 * backoff} {
		clk.await(t, wait)
		clk.Advance(wait - time.Nanosecond)
		if n := rc.count(); n != i+1 {
			t.Fatalf("%d attempts %v into a backoff of %v, want %d", n, wait-time.Nanosecond, wait, i+1)
		}
		clk.Advance(time.Nanosecond)
		rc.wait(t, i+2)
	}
	hits := rc.wait(t, 3)
	for i, h := range hits {
		if got, want := h.header.Get("X-Vendor-Signature"), hmacHex(secret, h.body); got != want {
			t.Errorf("attempt %d: signature %q, want %q", i+1, got, want)
		}
		if string(h.body) != string(hits[0].body) {
			t.Errorf("attempt %d: body changed between retries", i+1)
		}
	}
	ev := hits[0].event
	data := ev["data"].(map[string]any)
	if ev["type"] != "conversation.completed" || data["conversation_id"] != conv || data["environment"] != "live" || data["project_id"] != "helpdesk" {
		t.Errorf("event %s", hits[0].body)
	}
	waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Delivered == 1 && st.Attempts == 3 })
}

func waitStats(t *testing.T, srv *sim.Server, ok func(sim.WebhookStats) bool) {
	t.Helper()
	if !settles(srv, func() bool { return ok(srv.WebhookStats()) }) {
		t.Fatalf("webhook stats %+v", srv.WebhookStats())
	}
}

// timerClock is a fake clock for the simulator's timers
// (Options.AfterFunc) that tells the test the length of each timer set,
// so the test moves the clock once the simulator waits on it.
type timerClock struct {
	*fakeclock.Clock
	set chan time.Duration
}

func (c *timerClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	stop = c.Clock.AfterFunc(d, f)
	c.set <- d
	return stop
}

// await returns once a timer of d was set, passing over the others.
func (c *timerClock) await(t *testing.T, d time.Duration) {
	t.Helper()
	guard := time.After(10 * time.Second)
	for {
		select {
		case got := <-c.set:
			if got == d {
				return
			}
		case <-guard:
			t.Fatalf("no timer of %v set on the simulator's clock", d)
		}
	}
}

// attemptContexts is a transport that hands the test the context of each
// request before sending it, so the test sees at once whether the
// simulator has cut an attempt.
type attemptContexts struct {
	ctxs chan context.Context
	http.RoundTripper
}

func (a attemptContexts) RoundTrip(r *http.Request) (*http.Response, error) {
	a.ctxs <- r.Context()
	return a.RoundTripper.RoundTrip(r)
}

// TestWebhookGivesUpAndTimesOut: an attempt that hangs is cut once the
// endpoint's timeout_ms has passed, not before, and retried after the
// backoff; a delivery answered 503 every time is given up after
// MaxAttempts. Both timers run on a fake clock (Options.AfterFunc), so
// the bounds are exact and cost no wall time.
func TestWebhookGivesUpAndTimesOut(t *testing.T) {
	t.Parallel()
	rc := newReceiver(func(int) int { return 200 })
	rc.block = func(n int) time.Duration {
		if n == 1 {
			return time.Hour // until the simulator gives up on it
		}
		return 0
	}
	hs := httptest.NewServer(rc)
	defer func() {
		hs.CloseClientConnections() // ends a hold the test failed to cut
		hs.Close()
	}()
	failing := newReceiver(func(int) int { return 503 })
	hf := httptest.NewServer(failing)
	defer hf.Close()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	attempts := attemptContexts{ctxs: make(chan context.Context, 16), RoundTripper: transport}
	clk := &timerClock{Clock: fakeclock.New(), set: make(chan time.Duration, 64)}
	const timeout, backoff = time.Second, 100 * time.Millisecond
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, AfterFunc: clk.AfterFunc,
		Webhooks: sim.WebhookOptions{AllowInsecure: true, Backoff: backoff, MaxAttempts: 3, Client: &http.Client{Transport: attempts}}})
	slow := register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hs.URL, "events": []string{"handoff.created"}})
	if r := call(t, "PATCH", s.BuildURL+"/v1/webhook-endpoints/"+slow["id"].(string), s.BuildKey, map[string]any{"timeout_ms": timeout.Milliseconds()}); r.status != 200 {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}

	conv := c.start(nil)
	c.turn(conv, "a human please")
	var first context.Context
	select {
	case first = <-attempts.ctxs:
	case <-time.After(10 * time.Second):
		t.Fatal("no delivery attempt")
	}
	clk.await(t, timeout)
	rc.wait(t, 1) // the receiver holds it
	clk.Advance(timeout - time.Millisecond)
	if first.Err() != nil {
		t.Fatalf("attempt cut %v into a timeout_ms of %v", timeout-time.Millisecond, timeout)
	}
	clk.Advance(time.Millisecond)
	if first.Err() == nil {
		t.Fatalf("attempt not cut once its timeout_ms of %v passed", timeout)
	}
	clk.await(t, backoff)
	clk.Advance(backoff)
	hits := rc.wait(t, 2)
	data := hits[1].event["data"].(map[string]any)
	if hits[1].event["type"] != "handoff.created" || data["conversation_id"] != conv || data["handoff_destination"] != "tier2" || data["environment"] != "live" {
		t.Errorf("handoff event %s", hits[1].body)
	}
	waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Delivered == 1 && st.Attempts == 2 })

	register(t, s.BuildURL, s.BuildKey, map[string]any{"url": hf.URL, "event_types": []string{"conversation.completed"}})
	c.turn(c.start(nil), "bye")
	clk.await(t, backoff)
	clk.Advance(backoff)
	clk.await(t, 2*backoff)
	clk.Advance(2 * backoff)
	// Both deliveries are final once counted delivered or failed: a
	// delivery that runs out of attempts is counted failed after its last
	// attempt, and never retried after that. So the attempts counted now
	// are all there will be: 2 to the slow endpoint, MaxAttempts to the
	// failing one.
	waitStats(t, s.Server, func(st sim.WebhookStats) bool { return st.Failed == 1 && st.Delivered == 1 })
	if st := s.Server.WebhookStats(); st.Attempts != 5 {
		t.Errorf("%d attempts in all, want 2 to the slow endpoint and MaxAttempts 3 to the failing one", st.Attempts)
	}
	if n := len(failing.wait(t, 0)); n != 3 {
		t.Errorf("failing receiver got %d attempts, want MaxAttempts 3", n)
	}
}

func TestWebhookHTTPSAndAlertEvents(t *testing.T) {
	t.Parallel()
	rc := newReceiver(func(int) int { return 200 })
	hs := httptest.NewTLSServer(rc)
	defer hs.Close()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, TickInterval: time.Hour, Brand: "Acme", Webhooks: sim.WebhookOptions{Client: hs.Client()}})
	ep := register(t, s.BuildURL, s.BuildKey, map[string]any{
		"url": hs.URL, "events": []string{"alerts.triggered", "alerts.resolved"}, "headers": map[string]string{"X-Team": "qa"},
	})
	secret := ep["signing_secret"].(string)
	rule := call(t, "POST", s.BuildURL+"/v1/alert-rules", s.BuildKey, map[string]any{"name": "any call", "metric": "call_volume", "threshold_value": 1, "window_duration": "5m"}).json(t)
	c.start(nil)
	s.Server.Tick()
	clk.Advance(6 * time.Minute)
	s.Server.Tick()
	hits := rc.wait(t, 2)
	types := map[string]map[string]any{}
	for _, h := range hits {
		if got := h.header.Get("X-Acme-Signature"); got != hmacHex(secret, h.body) {
			t.Errorf("signature %q is not the HMAC of the body", got)
		}
		if h.header.Get("X-Team") != "qa" {
			t.Errorf("custom header missing: %v", h.header)
		}
		types[h.event["type"].(string)] = h.event["data"].(map[string]any)
	}
	trig, res := types["alerts.triggered"], types["alerts.resolved"]
	if trig == nil || res == nil || trig["rule_id"] != rule["id"] || trig["value"] != 1.0 || res["previous_state"] != "alert" {
		t.Errorf("alert events %v", types)
	}
}

func TestWebhookEndpointValidation(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{})
	strict := func(body map[string]any) int {
		return call(t, "POST", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, body).status
	}
	if st := strict(map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"conversation.completed"}}); st != 400 {
		t.Errorf("http receiver without the test option: %d", st)
	}
	for _, body := range []map[string]any{
		{"events": []string{"conversation.completed"}},
		{"url": "https://example.com/hook"},
		{"url": "https://example.com/hook", "events": []string{}},
		{"url": "https://example.com/hook", "events": []string{"call.started"}},
		{"url": "ftp://example.com/hook", "events": []string{"handoff.created"}},
		// null is no boolean: it must not register a disabled endpoint.
		{"url": "https://example.com/hook", "events": []string{"handoff.created"}, "enabled": nil},
	} {
		if st := strict(body); st != 400 {
			t.Errorf("register %v: %d, want 400", body, st)
		}
	}
	ep := register(t, s.BuildURL, s.BuildKey, map[string]any{"url": "https://example.com/hook", "events": []string{"handoff.created"}})
	path := s.BuildURL + "/v1/webhook-endpoints/" + ep["id"].(string)
	type testCase struct {
		name  string
		body  any
		field string
	}
	for _, tc := range []testCase{
		{"empty name", map[string]any{"name": ""}, "name"},
		{"long name", map[string]any{"name": strings.Repeat("n", 256)}, "name"},
		{"http url", map[string]any{"url": "http://example.com"}, "url"},
		{"no event types", map[string]any{"event_types": []string{}}, "event_types"},
		{"timeout too low", map[string]any{"timeout_ms": 999}, "timeout_ms"},
		{"timeout too high", map[string]any{"timeout_ms": 30001}, "timeout_ms"},
		{"reserved header", map[string]any{"headers": map[string]string{"Content-Type": "text/plain"}}, "headers"},
		{"signature header", map[string]any{"headers": map[string]string{"x-vendor-signature": "forged"}}, "headers"},
		{"enabled not bool", map[string]any{"enabled": "no"}, "enabled"},
		{"enabled null", map[string]any{"enabled": nil}, "enabled"},
		{"unknown field", map[string]any{"secret": "x"}, "secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, "PATCH", path, s.BuildKey, tc.body)
			if r.status != 400 || !strings.Contains(string(r.body), `"field":"`+tc.field+`"`) {
				t.Errorf("status %d body %s, want 400 on %s", r.status, r.body, tc.field)
			}
		})
	}
	r := call(t, "PATCH", path, s.BuildKey, map[string]any{"name": "renamed", "event_types": []string{"alerts.triggered"}, "timeout_ms": 30000, "enabled": false, "headers": map[string]string{"X-A": "1"}})
	m := r.json(t)
	if r.status != 200 || m["name"] != "renamed" || m["timeout_ms"] != 30000.0 || m["enabled"] != false || m["signing_secret"] != nil || len(m["event_types"].([]any)) != 1 {
		t.Errorf("patch: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", path, s.BuildKey, nil); r.status != 200 || r.json(t)["name"] != "renamed" {
		t.Errorf("read: %d %s", r.status, r.body)
	}
	if r := call(t, "GET", s.BuildURL+"/v1/webhooks/endpoints", s.BuildKey, nil); len(r.json(t)["endpoints"].([]any)) != 1 {
		t.Errorf("list: %s", r.body)
	}
	for _, tc := range []struct {
		id   string
		want int
	}{{"whe_!x", 422}, {"endpoint-1", 422}, {"whe_0000", 404}} {
		if r := call(t, "PATCH", s.BuildURL+"/v1/webhook-endpoints/"+tc.id, s.BuildKey, map[string]any{"enabled": true}); r.status != tc.want {
			t.Errorf("PATCH %s: %d, want %d", tc.id, r.status, tc.want)
		}
	}
	if r := call(t, "DELETE", path, s.BuildKey, nil); r.status != 204 {
		t.Errorf("delete: %d", r.status)
	}
	if r := call(t, "GET", path, s.BuildKey, nil); r.status != 404 {
		t.Errorf("read after delete: %d", r.status)
	}
	if r := call(t, "PATCH", path, "", map[string]any{}); r.status != 401 || r.json(t)["message"] == nil {
		t.Errorf("no key: %d %s", r.status, r.body)
	}
}

// TestCloseStopsEverything checks that Close leaves no goroutine behind,
// even with retries pending and a delivery hanging in a receiver. Only
// the goroutines started while the server was made and used count: they
// carry a pprof label of this test (goroutines inherit their creator's
// labels), so the package's parallel tests, whose servers come and go
// meanwhile, neither hide a leak nor make one up.
func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	hang := newReceiver(func(int) int { return 500 })
	hang.block = func(n int) time.Duration {
		if n == 1 {
			return 0
		}
		return time.Minute
	}
	hs := httptest.NewServer(hang)
	defer hs.Close()

	label := pprof.Labels("sim-close-test", t.Name())
	pprof.Do(context.Background(), label, func(context.Context) {
		def, diags := agent.Load("testdata/agents/helpdesk.yaml", mustRead(t, "testdata/agents/helpdesk.yaml"))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		srv, err := sim.New(sim.Options{Agents: []*agent.Definition{def}, TickInterval: time.Millisecond,
			Webhooks: sim.WebhookOptions{AllowInsecure: true, Backoff: time.Hour, Workers: 3}})
		if err != nil {
			t.Fatal(err)
		}
		build := httptest.NewServer(srv.BuildHandler())
		info := srv.Info()
		for range 2 {
			register(t, build.URL, info.BuildKey, map[string]any{"url": hs.URL, "events": []string{"conversation.completed"}})
		}
		for range 3 {
			r := call(t, "POST", build.URL+"/v1/agents/helpdesk/debug-chat", info.BuildKey, map[string]any{"clientEnv": "live"})
			id := r.json(t)["conversationId"].(string)
			call(t, "POST", build.URL+"/v1/agents/helpdesk/debug-chat/"+id, info.BuildKey, map[string]any{"clientEnv": "live", "message": "bye"})
		}
		if left := labelledGoroutines(label); len(left) == 0 {
			t.Fatal("no goroutine carries the test's label: the check below would prove nothing")
		}
		hang.wait(t, 2) // one retry scheduled, at least one attempt hanging
		build.Close()
		srv.Close()
	})
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := labelledGoroutines(label)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the server left after Close (%d stacks):\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// labelledGoroutines returns the goroutine profile's records (a count,
// then the stack) of the goroutines that carry every label of set.
func labelledGoroutines(set pprof.LabelSet) []string {
	var want []string
	pprof.ForLabels(pprof.WithLabels(context.Background(), set), func(k, v string) bool {
		want = append(want, fmt.Sprintf("%q:%q", k, v))
		return true
	})
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1)
	var out []string
	// The first record follows the profile's header line.
	_, profile, _ := strings.Cut(b.String(), "\n")
	for rec := range strings.SplitSeq(profile, "\n\n") {
		for line := range strings.SplitSeq(rec, "\n") {
			labels, ok := strings.CutPrefix(line, "# labels: ")
			if !ok {
				continue
			}
			all := true
			for _, w := range want {
				all = all && strings.Contains(labels, w)
			}
			if all {
				out = append(out, rec)
			}
			break
		}
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
