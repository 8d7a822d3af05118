package sim_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// do makes one request with explicit headers; a string body is sent as
// is, any other non-nil body as JSON.
func do(t testing.TB, method, url string, hdr map[string]string, body any) response {
	t.Helper()
	var rd io.Reader
	if raw, ok := body.(string); ok {
		rd = strings.NewReader(raw) // sent as is, for malformed bodies
	} else if body != nil {
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
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// runtimeAuth is the outbound-calling credential of a simulator.
func runtimeAuth(s *simtest.Sim) map[string]string {
	return map[string]string{brand.AuthTokenHeader(s.Info.Brand): s.RuntimeKey}
}

func TestOutboundCallLifecycle(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, TickInterval: time.Hour, Outbound: sim.OutboundOptions{
		Queued: time.Second, Calling: 2 * time.Second, Retention: time.Hour, Unreachable: []string{"+1 555 000 9999"},
	}})
	auth := runtimeAuth(s)
	trigger := func(body map[string]any) response {
		return do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", auth, body)
	}
	status := func(sid string) response {
		return do(t, "GET", s.RuntimeURL+"/v1/outbound-calling/"+sid+"/status", auth, nil)
	}

	r := trigger(map[string]any{"to_number": "+15557654321", "agent_id": "helpdesk", "metadata": map[string]any{"order": "A1"}, "encryption": map[string]any{"key_id": "k1"}})
	if r.status != 200 {
		t.Fatalf("trigger: %d %s", r.status, r.body)
	}
	sid := r.json(t)["call_sid"].(string)
	if !strings.HasPrefix(sid, "OUT-") {
		t.Fatalf("call_sid %q lacks OUT-", sid)
	}
	want := func(st string) map[string]any {
		t.Helper()
		r := status(sid)
		if r.status != 200 {
			t.Fatalf("status: %d %s", r.status, r.body)
		}
		m := r.json(t)
		if m["status"] != st {
			t.Fatalf("status %v, want %s (%s)", m["status"], st, r.body)
		}
		return m
	}
	want("queued")
	clk.Advance(time.Second)
	want("calling")
	clk.Advance(2 * time.Second)
	m := want("success")
	convID, _ := m["conversation_id"].(string)
	if convID == "" {
		t.Fatalf("success without conversation_id: %v", m)
	}

	conv := c.runtime("/conversations/" + convID).json(t)
	if conv["channel"] != "VOICE-SIP" || conv["to_number"] != "+15557654321" || conv["from_number"] != "+15550001111" || conv["in_progress"] != false {
		t.Errorf("conversation fields: %v", conv)
	}
	state := conv["state"].(map[string]any)
	if state["call_sid"] != sid {
		t.Errorf("state call_sid %v, want %s", state["call_sid"], sid)
	}
	turns := conv["turns"].([]any)
	if len(turns) != 1 || turns[0].(map[string]any)["agent_response"] != "Help desk here, how can I help?" {
		t.Errorf("turns %v, want the greeting", turns)
	}
	if a := c.runtime("/conversations/" + convID + "/audio"); a.status != 200 || !bytes.HasPrefix(a.body, []byte("RIFF")) {
		t.Errorf("audio: %d", a.status)
	}

	// An unreachable number (written another way) fails; "to" is accepted.
	r = trigger(map[string]any{"to": "+1-555-000-9999"})
	if r.status != 200 {
		t.Fatalf("trigger unreachable: %d %s", r.status, r.body)
	}
	bad := r.json(t)["call_sid"].(string)
	clk.Advance(3 * time.Second)
	if m := status(bad).json(t); m["status"] != "failure" || m["conversation_id"] != nil {
		t.Errorf("unreachable: %v", m)
	}

	// Retention: an hour after the end both statuses are gone.
	clk.Advance(time.Hour + time.Second)
	for _, id := range []string{sid, bad} {
		if r := status(id); r.status != 404 {
			t.Errorf("status after retention: %d %s", r.status, r.body)
		}
	}
}

func TestOutboundCallErrors(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{})
	url := s.RuntimeURL + "/v1/outbound-calling"
	good := map[string]any{"to_number": "+15557654321"}
	type testCase struct {
		name string
		hdr  map[string]string
		body any
		want int
	}
	run := func(t *testing.T, tc testCase) {
		r := do(t, "POST", url, tc.hdr, tc.body)
		if r.status != tc.want {
			t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
		}
		if msg, _ := r.json(t)["error_message"].(string); msg == "" {
			t.Errorf("no error_message in %s", r.body)
		}
	}
	for _, tc := range []testCase{
		{"no token", nil, good, 401},
		{"x-api-key instead", map[string]string{"x-api-key": s.RuntimeKey}, good, 401},
		{"build key", map[string]string{"X-Vendor-Auth-Token": s.BuildKey}, good, 401},
		{"scoped key", map[string]string{"X-Vendor-Auth-Token": s.Info.ScopedRuntimeKey}, good, 403},
		{"no number", runtimeAuth(s), map[string]any{"metadata": map[string]any{}}, 400},
		{"not a number", runtimeAuth(s), map[string]any{"to_number": "call me"}, 400},
		{"bad encryption", runtimeAuth(s), map[string]any{"to_number": "+15557654321", "encryption": 5}, 400},
		{"bad environment", runtimeAuth(s), map[string]any{"to_number": "+15557654321", "environment": "prod"}, 400},
		{"unknown agent", runtimeAuth(s), map[string]any{"to_number": "+15557654321", "agent_id": "nobody"}, 404},
		{"agent number not provisioned", runtimeAuth(s), map[string]any{"to_number": "+15557654321", "agent_number": "+15550002222"}, 400},
		{"malformed JSON", runtimeAuth(s), "{", 400},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	t.Run("unknown sid", func(t *testing.T) {
		for _, sid := range []string{"OUT-0000000000000000", "CA123"} {
			if r := do(t, "GET", url+"/"+sid+"/status", runtimeAuth(s), nil); r.status != 404 {
				t.Errorf("%s: %d", sid, r.status)
			}
		}
	})
	t.Run("build host", func(t *testing.T) {
		if r := do(t, "POST", s.BuildURL+"/v1/outbound-calling", runtimeAuth(s), good); r.status != 404 {
			t.Errorf("outbound on build host: %d", r.status)
		}
	})
}

func TestOutboundCallAdvancesInBackground(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{TickInterval: 5 * time.Millisecond, Outbound: sim.OutboundOptions{Queued: time.Millisecond, Calling: time.Millisecond}})
	r := do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", runtimeAuth(s), map[string]any{"to_number": "+15557654321"})
	sid := r.json(t)["call_sid"].(string)
	created := func() bool {
		for _, c := range s.Server.Store().Select("helpdesk", func(*sim.Conversation) bool { return true }) {
			if c.Channel == "VOICE-SIP" && c.ToNumber == "+15557654321" {
				return true
			}
		}
		return false
	}
	if !settles(s.Server, created) {
		t.Fatalf("call %s never created its conversation without a status read", sid)
	}
}

func TestBrandOption(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{Brand: "Acme"})
	if s.Info.AuthTokenHeader != "X-Acme-Auth-Token" || s.Info.SignatureHeader != "X-Acme-Signature" {
		t.Fatalf("info headers %q %q", s.Info.AuthTokenHeader, s.Info.SignatureHeader)
	}
	body := map[string]any{"to_number": "+15557654321"}
	if r := do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", map[string]string{"X-Acme-Auth-Token": s.RuntimeKey}, body); r.status != 200 {
		t.Errorf("branded header: %d %s", r.status, r.body)
	}
	if r := do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", map[string]string{"X-Vendor-Auth-Token": s.RuntimeKey}, body); r.status != 401 {
		t.Errorf("default header under another brand: %d", r.status)
	}
	if _, err := sim.New(sim.Options{Brand: "Ac me"}); err == nil {
		t.Error("brand with a space accepted")
	}
}
