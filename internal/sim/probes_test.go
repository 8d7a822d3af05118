package sim_test

import (
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// dialerYAML is an agent with two numbers whose live environment serves
// an older version: which version a call or an SMS ran on shows in its
// greeting and metric, and the greeting names an integration attribute.
const dialerYAML = `
id: dialer
name: Dialer
numbers: ["+15550004444", "+15550005555"]
version: "2"
environments:
  live: "1"
versions:
  "1":
    nodes:
      Greeting:
        say: Old greeting for ${conv.integration_attributes.name}.
        metrics: {GEN: "old"}
start: Greeting
nodes:
  Greeting:
    say: New greeting for ${conv.integration_attributes.name}.
    metrics: {GEN: "new"}
`

func startDialer(t *testing.T, opts sim.Options) (*fakeclock.Clock, *simtest.Sim) {
	t.Helper()
	clk := fakeclock.New()
	opts.Now = clk.Now
	opts.TickInterval = time.Hour
	opts.Agents = []*agent.Definition{helpdesk(t), loadAgent(t, "dialer.yaml", dialerYAML)}
	return clk, simtest.Start(t, opts)
}

func conversation(t *testing.T, s *simtest.Sim, project, id string) map[string]any {
	t.Helper()
	r := call(t, "GET", s.RuntimeURL+"/v3/"+s.AccountID+"/"+project+"/conversations/"+id, s.RuntimeKey, nil)
	if r.status != 200 {
		t.Fatalf("conversation %s: %d %s", id, r.status, r.body)
	}
	return r.json(t)
}

// TestOutboundCallDetails pins what a call's status and conversation say
// beyond the lifecycle: each status's updated_at, the conversation
// starting at connect on the version its environment (live by default)
// serves, with the metadata as integration attributes, the first number
// as caller, outbound_metadata only when sent; an unreachable number
// queued like any other until the call ends; number and encryption
// forms; the retention bound; and the token's rights.
func TestOutboundCallDetails(t *testing.T) {
	t.Parallel()
	clk, s := startDialer(t, sim.Options{Outbound: sim.OutboundOptions{
		Queued: time.Second, Calling: 2 * time.Second, Retention: time.Hour, Unreachable: []string{"+15550009999"},
	}})
	auth := runtimeAuth(s)
	trigger := func(body map[string]any) response {
		return do(t, "POST", s.RuntimeURL+"/v1/outbound-calling", auth, body)
	}
	status := func(sid string) map[string]any {
		t.Helper()
		r := do(t, "GET", s.RuntimeURL+"/v1/outbound-calling/"+sid+"/status", auth, nil)
		if r.status != 200 {
			t.Fatalf("status %s: %d %s", sid, r.status, r.body)
		}
		return r.json(t)
	}
	at := func(d time.Duration) string { return fakeclock.Start.Add(d).Format("2006-01-02T15:04:05.000Z") }

	for number, want := range map[string]int{
		"+123456": 200, "+12345": 400, "+123456789012345": 200, "+1234567890123456": 400,
		"555.765.4321": 200, "1+5557654321": 400,
	} {
		if r := trigger(map[string]any{"to_number": number, "agent_id": "helpdesk"}); r.status != want {
			t.Errorf("to_number %q: %d, want %d: %s", number, r.status, want, r.body)
		}
	}
	if r := trigger(map[string]any{"to_number": "+15557654321"}); r.status != 400 {
		t.Errorf("no agent_id with two agents: %d %s", r.status, r.body)
	}

	r := trigger(map[string]any{"to_number": "+15557654321", "agent_id": "dialer", "metadata": map[string]any{"name": "Ann"}, "encryption": "k1"})
	if r.status != 200 {
		t.Fatalf("trigger: %d %s", r.status, r.body)
	}
	sid := r.json(t)["call_sid"].(string)
	plain := trigger(map[string]any{"to_number": "+15557654321", "agent_id": "helpdesk", "encryption": false})
	if plain.status != 200 {
		t.Fatalf("trigger with encryption false: %d %s", plain.status, plain.body)
	}
	lost := trigger(map[string]any{"to_number": "+15550009999", "agent_id": "helpdesk"}).json(t)["call_sid"].(string)
	if st := status(lost); st["status"] != "queued" || st["updated_at"] != at(0) {
		t.Errorf("unreachable call at once: %v", st)
	}
	clk.Advance(time.Second)
	if st := status(sid); st["status"] != "calling" || st["updated_at"] != at(time.Second) || st["environment"] != "live" {
		t.Errorf("calling: %v", st)
	}
	clk.Advance(2 * time.Second)
	st := status(sid)
	if st["status"] != "success" || st["updated_at"] != at(3*time.Second) {
		t.Fatalf("success: %v", st)
	}
	if st := status(lost); st["status"] != "failure" || st["updated_at"] != at(3*time.Second) {
		t.Errorf("unreachable call: %v", st)
	}
	conv := conversation(t, s, "dialer", st["conversation_id"].(string))
	turn := conv["turns"].([]any)[0].(map[string]any)
	if conv["started_at"] != at(3*time.Second) || conv["from_number"] != "+15550004444" || conv["environment"] != "live" ||
		turn["agent_response"] != "Old greeting for Ann." {
		t.Errorf("call conversation: started_at %v from %v env %v greeting %q", conv["started_at"], conv["from_number"], conv["environment"], turn["agent_response"])
	}
	if _, ok := conv["state"].(map[string]any)["outbound_metadata"]; !ok {
		t.Errorf("state lacks the metadata sent: %v", conv["state"])
	}
	plainConv := conversation(t, s, "helpdesk", status(plain.json(t)["call_sid"].(string))["conversation_id"].(string))
	if md, ok := plainConv["state"].(map[string]any)["outbound_metadata"]; ok {
		t.Errorf("outbound_metadata %v on a call sent none", md)
	}

	scoped := map[string]string{s.Info.AuthTokenHeader: s.Info.ScopedRuntimeKey}
	if r := do(t, "GET", s.RuntimeURL+"/v1/outbound-calling/"+sid+"/status", scoped, nil); r.status != 403 {
		t.Errorf("status with a token for another project: %d %s", r.status, r.body)
	}
	clk.Advance(time.Hour)
	status(sid) // exactly the retention after the end: still kept
	clk.Advance(time.Millisecond)
	if r := do(t, "GET", s.RuntimeURL+"/v1/outbound-calling/"+sid+"/status", auth, nil); r.status != 404 {
		t.Errorf("status past the retention: %d %s", r.status, r.body)
	}
}

// TestSMSDetails pins an SMS's numbers and record beyond the happy path:
// the number of the connector's environment as sender, agent_number
// normalised, the conversation in that environment on the version it
// serves, from_ and to in its state, a blank message refused, a rate
// limit per project, and the idle end exactly at the session timeout
// with no warning when the timeout comes before it, dated at the timeout.
func TestSMSDetails(t *testing.T) {
	t.Parallel()
	clk, s := startDialer(t, sim.Options{SMSRate: 1, SMSSessionTimeout: time.Hour})
	send := func(project, env string, body map[string]any) response {
		t.Helper()
		return do(t, "POST", s.RuntimeURL+"/v1/outbound-sms",
			map[string]string{s.Info.AuthTokenHeader: s.RuntimeKey, "X-TOKEN-ID": s.Info.ConnectorIDs[project][env]}, body)
	}
	if r := send("dialer", "pre-release", map[string]any{"to_number": "+15557654321", "message": "  \t"}); r.status != 400 {
		t.Errorf("blank message: %d %s", r.status, r.body)
	}
	r := send("dialer", "pre-release", map[string]any{"to_number": "+15557654321", "message": "hi"})
	if r.status != 200 {
		t.Fatalf("sms: %d %s", r.status, r.body)
	}
	first := r.json(t)
	if want := s.Info.EnvNumbers["dialer"]["pre-release"]; want != "+15550005555" || first["agent_number"] != want {
		t.Errorf("agent_number %v, want the pre-release number %s", first["agent_number"], want)
	}
	conv := conversation(t, s, "dialer", first["conversation_id"].(string))
	state := conv["state"].(map[string]any)
	if conv["environment"] != "pre-release" || state["from_"] != "+15550005555" || state["to"] != "+15557654321" {
		t.Errorf("sms conversation: environment %v, state %v", conv["environment"], state)
	}
	if r := send("helpdesk", "live", map[string]any{"to_number": "+15557654321", "message": "hi"}); r.status != 200 {
		t.Errorf("another project in the same second: %d %s", r.status, r.body)
	}

	clk.Advance(time.Second)
	r = send("dialer", "live", map[string]any{"to_number": "+15557654321", "message": "hi", "agent_number": "+1 (555) 000-5555"})
	if r.status != 200 || r.json(t)["agent_number"] != "+15550005555" {
		t.Fatalf("sms with agent_number: %d %s", r.status, r.body)
	}
	late := r.json(t)["conversation_id"].(string)
	if m := conversation(t, s, "dialer", late)["metrics"].(map[string]any); m["GEN"] != "old" {
		t.Errorf("live SMS ran on metric GEN %v, want the live version's old", m["GEN"])
	}

	// The first SMS idles exactly the timeout: it ends, with no warning
	// (the warning is due after 24h, past the timeout).
	clk.Advance(time.Hour - time.Second)
	s.Server.Tick()
	conv = conversation(t, s, "dialer", first["conversation_id"].(string))
	if conv["in_progress"] != false || len(conv["turns"].([]any)) != 1 {
		t.Errorf("at the timeout: in_progress %v, %d turns", conv["in_progress"], len(conv["turns"].([]any)))
	}
	// The second one is found an hour late: it ended at its timeout.
	clk.Advance(2 * time.Hour)
	s.Server.Tick()
	if conv := conversation(t, s, "dialer", late); conv["in_progress"] != false || conv["total_duration"] != 3600.0 {
		t.Errorf("found late: in_progress %v, total_duration %v, want ended after 3600s", conv["in_progress"], conv["total_duration"])
	}
}
