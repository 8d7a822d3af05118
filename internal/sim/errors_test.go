package sim_test

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
)

// TestErrorBodies pins the error body of each family as the reference
// gives it: debug chat's {success, error, error_id, error_code,
// error_message, data} with the status text in error and an error_id that
// differs per error; {error_message} for the conversations groups;
// {message, errors} with errors an array for alerts and webhooks. All are
// JSON, so said.
func TestErrorBodies(t *testing.T) {
	t.Parallel()
	s, c := startHelpdesk(t, sim.Options{})
	type testCase struct {
		name   string
		r      response
		status int
		want   map[string]any // members compared as decoded
		msg    string         // a substring of the family's message member
	}
	run := func(t *testing.T, tc testCase) {
		if tc.r.status != tc.status {
			t.Fatalf("status %d, want %d: %s", tc.r.status, tc.status, tc.r.body)
		}
		if ct := tc.r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		m := tc.r.json(t)
		for k, v := range tc.want {
			if got, ok := m[k]; !ok || got != v {
				t.Errorf("%s = %v, want %v: %s", k, got, v, tc.r.body)
			}
		}
		msgKey := "error_message"
		if _, ok := m["message"]; ok {
			msgKey = "message"
			if errs, ok := m["errors"].([]any); !ok {
				t.Errorf("errors %v, want an array", m["errors"])
			} else if len(errs) != 0 {
				t.Errorf("errors %v, want none", errs)
			}
		}
		if msg, _ := m[msgKey].(string); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s %q, want it to contain %q", msgKey, msg, tc.msg)
		}
	}
	chatErr := func(text, code string) map[string]any {
		return map[string]any{"success": false, "error": text, "error_code": code, "data": nil}
	}
	for _, tc := range []testCase{
		{"debug chat unknown conversation", c.turn("nope", "hi"), 404, chatErr("Not Found", sim.CodeConversationsNotFound), `conversation "nope" not found`},
		{"debug chat clientEnv missing", c.create(map[string]any{}), 400, chatErr("Bad Request", sim.CodeInvalidRequest), "clientEnv is required"},
		{"debug chat no key", call(t, "POST", s.BuildURL+"/v1/agents/helpdesk/debug-chat", "", map[string]any{"clientEnv": "live"}), 401, chatErr("Unauthorized", sim.CodeUnauthorized), "missing x-api-key"},
		{"conversation unknown", c.runtime("/conversations/nope"), 404, nil, `conversation "nope" not found`},
		{"conversations no key", call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations", "", nil), 401, nil, "missing x-api-key"},
		{"alerts no key", call(t, "GET", s.BuildURL+"/v1/alert-rules", "", nil), 401, nil, "missing x-api-key"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	a, b := c.turn("nope", "hi").json(t)["error_id"], c.turn("nope", "hi").json(t)["error_id"]
	if a == "" || a == nil || a == b {
		t.Errorf("error ids %v and %v, want two different ones", a, b)
	}
}
