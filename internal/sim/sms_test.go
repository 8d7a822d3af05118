package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

func TestOutboundSMS(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, TickInterval: time.Hour, SMSRate: 1})
	url := s.RuntimeURL + "/v1/outbound-sms"
	live := s.Info.ConnectorIDs["helpdesk"]["live"]
	hdr := func(token, tokenID string) map[string]string {
		h := map[string]string{}
		if token != "" {
			h["X-Vendor-Auth-Token"] = token
		}
		if tokenID != "" {
			h["X-TOKEN-ID"] = tokenID
		}
		return h
	}
	good := map[string]any{"to_number": "+15557654321", "message": "Your table is ready. Reply YES to confirm."}

	t.Run("errors", func(t *testing.T) {
		type testCase struct {
			name string
			hdr  map[string]string
			body any
			want int
		}
		for _, tc := range []testCase{
			{"no auth token", hdr("", live), good, 401},
			{"wrong auth token", hdr("nope", live), good, 401},
			{"no token id", hdr(s.RuntimeKey, ""), good, 401},
			{"unknown token id", hdr(s.RuntimeKey, "CONN-00000000"), good, 401},
			{"scoped key", hdr(s.Info.ScopedRuntimeKey, live), good, 403},
			{"no recipient", hdr(s.RuntimeKey, live), map[string]any{"message": "hi"}, 400},
			{"no message", hdr(s.RuntimeKey, live), map[string]any{"to_number": "+15557654321"}, 400},
			{"agent number not provisioned", hdr(s.RuntimeKey, live), map[string]any{"to": "+15557654321", "body": "hi", "agent_number": "+15550009999"}, 400},
			{"malformed JSON", hdr(s.RuntimeKey, live), "[", 400},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if r := do(t, "POST", url, tc.hdr, tc.body); r.status != tc.want {
					t.Fatalf("status %d, want %d: %s", r.status, tc.want, r.body)
				}
			})
		}
	})

	r := do(t, "POST", url, hdr(s.RuntimeKey, live), good)
	if r.status != 200 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	m := r.json(t)
	id := m["conversation_id"].(string)
	if m["agent_number"] != "+15550001111" || m["to_number"] != "+15557654321" || m["environment"] != "live" {
		t.Errorf("response %v", m)
	}
	conv := c.runtime("/conversations/" + id).json(t)
	turns := conv["turns"].([]any)
	if conv["channel"] != "SMS" || conv["in_progress"] != true || len(turns) != 1 ||
		turns[0].(map[string]any)["agent_response"] != good["message"] {
		t.Errorf("conversation %v", conv)
	}

	// The per-project rate: the second message within the second is 429.
	r = do(t, "POST", url, hdr(s.RuntimeKey, s.Info.ConnectorIDs["helpdesk"]["sandbox"]), map[string]any{"to": "+15557654321", "text": "again", "agent_number": "+1 555 000 1111"})
	if r.status != 429 || r.header.Get("Retry-After") != "1" {
		t.Fatalf("over the rate: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	clk.Advance(time.Second)
	r = do(t, "POST", url, hdr(s.RuntimeKey, s.Info.ConnectorIDs["helpdesk"]["sandbox"]), map[string]any{"to": "+15557654321", "text": "again", "agent_number": "+1 555 000 1111"})
	if r.status != 200 || r.json(t)["environment"] != "sandbox" {
		t.Fatalf("after the wait: %d %s", r.status, r.body)
	}

	// Idle for the session timeout: the warning turn, then the end.
	clk.Advance(sim.DefaultSMSSessionTimeout)
	s.Server.Tick()
	conv = c.runtime("/conversations/" + id).json(t)
	turns = conv["turns"].([]any)
	if conv["in_progress"] != false || len(turns) != 2 || !strings.Contains(turns[1].(map[string]any)["agent_response"].(string), "still there") {
		t.Errorf("after the idle timeout: %v", conv)
	}
}
