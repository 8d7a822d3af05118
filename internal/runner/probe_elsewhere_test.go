package runner

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestSMSProbeOfAnotherConnector: an SMS runs in the project and
// environment of its connector id, whatever the scenario says, and the
// simulator's answer names both. Sent with another agent's connector, or
// another environment's, its conversation was never where the
// confirmation read it: the case waited out the confirmation's bound and
// failed the agent ("conversation ... was not recorded within 30s"), or
// passed on a conversation of the wrong environment. It now errors at
// once, as the configuration's, naming where the SMS went; not retried.
// Its line in the reports is ✗ (not held): the SMS was sent, but did not
// do what the scenario asked of the platform.
func TestSMSProbeOfAnotherConnector(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	billing := agentID(t, e.sim, "utility-billing")
	type testCase struct {
		name, env string
		// connector is the agent and environment whose connector id the
		// run sends.
		connAgent, connEnv string
		want               result.Status
		where              string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		o := e.opts()
		o.Retries = 1
		o.ConfirmTimeout = 200 * time.Millisecond
		o.Connector = func(string, string) string { return e.sim.Info.ConnectorIDs[tc.connAgent][tc.connEnv] }
		src := "suite: s\nagent: " + e.clinic + "\nenv: " + tc.env + "\nscenarios:\n  - name: sms\n" +
			`    probe: {sms: {to: "+447700900123", message: "Your appointment is tomorrow at 10"}}` + "\n" +
			"    confirm: {conversation: {channel: SMS, environment: " + tc.env + "}}\n"
		res, err := Run(t.Context(), loadYAML(t, src), o)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		a := c.Last()
		if c.Status != tc.want {
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		}
		// The SMS's line is ✗ when it went elsewhere: sent, but not where
		// the scenario asked, so the reports do not tick the line of the
		// case's error.
		var sms *result.Confirmation
		for _, r := range a.Confirmations {
			if r.Kind == result.ConfirmSMS {
				sms = r
			}
		}
		if sms == nil || !sms.Found || sms.Held != (tc.want == result.Passed) {
			t.Fatalf("SMS line %+v, want found and held %v%s", sms, tc.want == result.Passed, describe(c))
		}
		if tc.want == result.Passed {
			return
		}
		want := "probe: SMS to +447700900123: the platform opened its conversation in " + tc.where +
			": an SMS runs in the project and environment of its connector id (X-TOKEN-ID), so the one sent is not the connector of agent " + e.clinic + " in " + tc.env
		if a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) || len(c.Attempts) != 1 || len(a.Failures) != 0 {
			t.Fatalf("%d attempts, want one configuration error %q%s", len(c.Attempts), want, describe(c))
		}
	}
	for _, tc := range []testCase{
		{name: "the agent's own", env: "sandbox", connAgent: e.clinic, connEnv: "sandbox", want: result.Passed},
		{name: "another agent's", env: "sandbox", connAgent: billing, connEnv: "sandbox", want: result.Errored,
			where: "project " + billing + ", not " + e.clinic},
		{name: "another environment's", env: "pre-release", connAgent: e.clinic, connEnv: "sandbox", want: result.Errored,
			where: "environment sandbox, not pre-release"},
		{name: "both", env: "live", connAgent: billing, connEnv: "pre-release", want: result.Errored,
			where: "project " + billing + ", not " + e.clinic + ", environment pre-release, not live"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestProbeAnswerNamesWhere: what a platform written by someone else
// names in its answer to an SMS or in a call's status. Another project
// in the scenario's form, or another environment in any spelling, errors
// the case as the configuration's; an agent named in the other form (the
// platform may name it PROJECT-XXXXXXXX where the suite wrote a slug) and
// an environment that is none of the conversations' (the reference's
// token environment "dev") say nothing of where the conversation went,
// and the probe goes on to its conversation.
func TestProbeAnswerNamesWhere(t *testing.T) {
	t.Parallel()
	smsRec := record("conv-1", "+447700900002", "SMS", fakeclock.Start, true, false, "")
	callRec := record("conv-1", "+447700900002", "VOICE-SIP", fakeclock.Start, false, false, `"call_sid":"OUT-1"`)
	type testCase struct {
		name string
		// named is what the answer adds: the SMS's body, or the call
		// status's members; placed, the answer to the call's placement.
		named, placed string
		call          bool
		where         string // "" when the probe goes on and passes
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		h := &hostileRuntime{smsStatus: http.StatusOK, callBody: tc.placed, list: func(int) []string { return nil }}
		src := "suite: s\nagent: p1\nscenarios:\n  - name: probe\n"
		if tc.call {
			h.get = func(string) *string { return &callRec }
			h.status = func(int) string {
				return `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-1"` + tc.named + `}`
			}
			src += `    probe: {outbound_call: {to: "+447700900002"}, within: 2m}` + "\n"
		} else {
			h.get = func(string) *string { return &smsRec }
			h.smsBody = `{"conversation_id":"conv-1"` + tc.named + `}`
			src += `    probe: {sms: {to: "+447700900002", message: "Reply YES"}}` + "\n"
		}
		src += "    confirm: {conversation: {to_number: \"+447700900002\"}}\n"
		c := runHostile(t, h, src, func(o *Options) { o.Retries = 2 })
		a := c.Last()
		if tc.where == "" {
			if c.Status != result.Passed {
				t.Fatalf("%s, want passed%s", c.Status, describe(c))
			}
			return
		}
		if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || len(c.Attempts) != 1 ||
			!strings.Contains(a.Error.Message, " in "+tc.where+": ") {
			t.Fatalf("%s after %d attempts, want one configuration error naming %q%s", c.Status, len(c.Attempts), tc.where, describe(c))
		}
		if h.getReads != 0 {
			t.Errorf("%d reads of the record, want none: it is not the scenario's", h.getReads)
		}
	}
	for _, tc := range []testCase{
		{name: "sms names the scenario's", named: `,"project_id":"p1","environment":"sandbox"`},
		{name: "sms names nothing"},
		{name: "sms names another project", named: `,"project_id":"p2"`, where: "project p2, not p1"},
		{name: "sms names the agent in the other form", named: `,"project_id":"PROJECT-abcd1234"`},
		{name: "sms names the agent in capitals", named: `,"project_id":"P1"`},
		{name: "sms names another environment", named: `,"environment":"PRE_RELEASE"`, where: "environment pre-release, not sandbox"},
		{name: "sms names a token environment", named: `,"environment":"dev"`},
		{name: "call names the scenario's", call: true, named: `,"agent_id":"p1","environment":"sandbox"`},
		{name: "call names another environment", call: true, named: `,"environment":"live"`, where: "environment live, not sandbox"},
		{name: "call names another project", call: true, named: `,"project_id":"p9"`, where: "project p9, not p1"},
		{name: "call placed for another project", call: true, placed: `{"call_sid":"OUT-1","status":"queued","agent_id":"p7"}`, where: "project p7, not p1"},
		{name: "call placed for the agent, status names none", call: true, placed: `{"call_sid":"OUT-1","status":"queued","agent_id":"p1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
