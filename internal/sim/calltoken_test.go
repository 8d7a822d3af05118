package sim_test

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/sim"
)

// The X-<Brand>-Auth-Token of outbound calling and SMS is the call token
// when one is configured, and only then; without one it is the runtime key.
func TestCallToken(t *testing.T) {
	t.Parallel()
	const token = "probe-token-not-a-secret"
	type testCase struct {
		name      string
		callToken string // Options.CallToken
		send      string // header value; "runtime" and "build" are the keys
		want      int
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		s, _ := startHelpdesk(t, sim.Options{CallToken: tc.callToken})
		send := tc.send
		switch send {
		case "runtime":
			send = s.RuntimeKey
		case "build":
			send = s.BuildKey
		}
		hdr := map[string]string{brand.AuthTokenHeader(s.Info.Brand): send}
		outbound := do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", hdr, map[string]any{"to_number": "+15557654321", "agent_id": "helpdesk"})
		hdr[brand.TokenIDHeader] = s.Info.ConnectorIDs["helpdesk"]["live"]
		sms := do(t, "POST", s.RuntimeURL+"/v1/outbound-sms", hdr, map[string]any{"to_number": "+15557654321", "message": "Your order has shipped."})
		if outbound.status != tc.want || sms.status != tc.want {
			t.Errorf("outbound call %d (%s), SMS %d (%s), want %d", outbound.status, outbound.body, sms.status, sms.body, tc.want)
		}
		if tc.callToken != "" && tc.want == 401 && !strings.Contains(string(outbound.body), "take the call token") {
			t.Errorf("refusal does not say what to send: %s", outbound.body)
		}
		if s.Info.CallToken != tc.callToken {
			t.Errorf("Info.CallToken = %q, want %q", s.Info.CallToken, tc.callToken)
		}
		// The token is a probe credential only: it opens no other group.
		if tc.callToken != "" {
			if r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/helpdesk/conversations", tc.callToken, nil); r.status != 401 {
				t.Errorf("call token read conversations: %d", r.status)
			}
		}
	}
	testCases := []testCase{
		{name: "no call token: the runtime key", send: "runtime", want: 200},
		{name: "no call token: the build key is refused", send: "build", want: 401},
		{name: "call token accepted", callToken: token, send: token, want: 200},
		{name: "call token set: the runtime key is refused", callToken: token, send: "runtime", want: 401},
		{name: "call token set: a wrong token is refused", callToken: token, send: token + "x", want: 401},
		{name: "call token scoped to another project", callToken: token, send: token + "-scoped-to-other-project", want: 403},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestCallTokenMustDifferFromTheKeys(t *testing.T) {
	t.Parallel()
	for _, o := range []sim.Options{
		{CallToken: sim.DefaultRuntimeKey},
		{CallToken: sim.DefaultBuildKey},
		{BuildKey: "b", RuntimeKey: "r", CallToken: "r"},
	} {
		if _, err := sim.New(o); err == nil || !strings.Contains(err.Error(), "call token must differ") {
			t.Errorf("New(call token %q) = %v", o.CallToken, err)
		}
	}
}
