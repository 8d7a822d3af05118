package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// probeYAML is an agent whose greeting thinks for 10s, whose nodes each
// fill one of the debug-chat metadata members the server copies into the
// stored turn, and whose handoff stores no data.
const probeYAML = `
id: probe
name: Probe
numbers: ["+15550002222"]
start: Greeting
silence: Silence
fallback: Fallback
intents:
  hold: {keywords: [hold]}
  chat: {keywords: [chat]}
  transfer: {keywords: [transfer]}
  quick: {keywords: [quick]}
knowledge:
  hours:
    keywords: [hours]
    sources: ["https://probe.example/hours", "https://probe.example/faq"]
    answer: Open all day.
routes:
  - intent: hold
    goto: Hold
  - if: {knowledge: true}
    goto: Answer
  - intent: chat
    goto: Chat
  - intent: transfer
    goto: Transfer
  - intent: quick
    goto: Quick
nodes:
  Greeting:
    say: Probe here.
    latencyMs: 10000
  Answer:
    flow: info
    step: answer
    retrieve: true
    say: ${kb.answer}
  Hold:
    delay: One moment.
    say: Done holding.
  Chat:
    say: Chatting.
    llm: {model: sim-chat-1, promptTokens: 10}
  Transfer:
    say: Transferring.
    handoff:
      destination: desk
      sharedId: "x-${state.conversation_id}"
    end: true
  Quick:
    say: Quick.
    latencyMs: 1
  Silence:
    say: I heard nothing.
  Fallback:
    say: Say hours, hold or chat.
`

// oneshotYAML is an agent whose greeting ends the conversation.
const oneshotYAML = `
id: oneshot
name: One Shot
numbers: ["+15550003333"]
start: Bye
nodes:
  Bye:
    say: Bye.
    end: true
`

func loadAgent(t testing.TB, name, src string) *agent.Definition {
	t.Helper()
	def, diags := agent.Load(name, []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load %s: %v", name, diags)
	}
	return def
}

// startProbes serves helpdesk, probe and oneshot on a fake clock that
// the agents' think time advances.
func startProbes(t *testing.T, opts sim.Options) (*fakeclock.Clock, *simtest.Sim) {
	t.Helper()
	clk := fakeclock.New()
	opts.Now = clk.Now
	opts.Sleep = func(_ context.Context, d time.Duration) { clk.Advance(d) }
	opts.Agents = []*agent.Definition{helpdesk(t), loadAgent(t, "probe.yaml", probeYAML), loadAgent(t, "oneshot.yaml", oneshotYAML)}
	return clk, simtest.Start(t, opts)
}

// TestDebugChatMetadataIsRecorded pins what a turn's reply carries into
// the stored conversation: the start time before the greeting's think
// time, silence, the delayed flag, and each generative-AI member of
// include_turn_metadata, present only when the agent filled it.
func TestDebugChatMetadataIsRecorded(t *testing.T) {
	t.Parallel()
	_, s := startProbes(t, sim.Options{})
	c := chat{t: t, s: s, id: "probe"}
	id := c.start(nil)
	turn := func(msg string) map[string]any {
		t.Helper()
		r := c.turn(id, msg)
		if r.status != 200 {
			t.Fatalf("turn %q: %d %s", msg, r.status, r.body)
		}
		return r.json(t)
	}
	if r := turn(""); r["response"] != "I heard nothing." {
		t.Errorf("silence: %v", r)
	}
	md := turn("what are your hours")["metadata"].(map[string]any)
	if md["citedTopic"] != "hours" || md["inFlow"] != "info" || md["inStep"] != "answer" {
		t.Errorf("knowledge turn metadata: %v", md)
	}
	if r := turn("hold on"); r["delayedResponse"] != true || r["response"] != "One moment." {
		t.Errorf("delayed turn: %v", r)
	}
	if r := turn("chat"); r["delayedResponse"] != false {
		t.Errorf("the delayed reply's turn: %v", r)
	}
	turn("chat")
	turn("quick")

	sum := c.runtime("/conversations/" + id + "?include_turn_metadata=true&include_latency=true").json(t)
	if got, want := sum["started_at"], fakeclock.Start.Format("2006-01-02T15:04:05.000Z"); got != want {
		t.Errorf("started_at %v, want %s: the conversation starts when it is created, before the greeting's think time", got, want)
	}
	if sum["num_silences"] != 1.0 {
		t.Errorf("num_silences %v, want 1", sum["num_silences"])
	}
	turns := sum["turns"].([]any)
	meta := func(i int) map[string]any { return turns[i].(map[string]any)["metadata"].(map[string]any) }
	if turns[1].(map[string]any)["is_silence"] != true {
		t.Errorf("turn 1 is not silence: %v", turns[1])
	}
	if m := meta(2); m["citedTopic"] != "hours" || m["inFlow"] != "info" || m["inStep"] != "answer" ||
		len(m["retrievedSources"].([]any)) != 2 || len(m["retrievedTopics"].([]any)) != 1 {
		t.Errorf("knowledge turn metadata: %v", m)
	}
	if _, ok := meta(2)["llmRequests"]; ok {
		t.Errorf("llmRequests on a turn that made none: %v", meta(2))
	}
	if m := meta(5); len(m["llmRequests"].([]any)) != 1 {
		t.Errorf("llm turn metadata: %v", m)
	}
	// Even a think time of a millisecond is waited and recorded.
	if l := turns[6].(map[string]any)["latency"]; l != 0.001 {
		t.Errorf("latency of a 1ms node: %v, want 0.001", l)
	}
}

// TestDebugChatIdleCountsFromTheLastReply pins the idle timeout: it runs
// from the end of the last reply (after the agent's think time), a turn
// exactly at the limit has not exceeded it, each turn restarts it, and a
// late turn finds the conversation ended at the limit.
func TestDebugChatIdleCountsFromTheLastReply(t *testing.T) {
	t.Parallel()
	clk, s := startProbes(t, sim.Options{ChatIdleTimeout: time.Minute, JanitorInterval: time.Hour})
	c := chat{t: t, s: s, id: "probe"}
	id := c.start(nil) // the greeting thinks 10s
	clk.Advance(55 * time.Second)
	if r := c.turn(id, "chat"); r.status != 200 {
		t.Fatalf("55s after the greeting, 65s after the create: %d %s", r.status, r.body)
	}
	clk.Advance(time.Minute)
	if r := c.turn(id, "chat"); r.status != 200 {
		t.Fatalf("exactly at the limit after the last turn: %d %s", r.status, r.body)
	}
	clk.Advance(5 * time.Minute)
	if r := c.turn(id, "chat"); r.status != 408 || r.json(t)["error_code"] != sim.CodeChatTimeout {
		t.Fatalf("past the limit: %d %s", r.status, r.body)
	}
	// It ended when the limit passed (125s+60s), not when the late turn
	// came, as the janitor would have dated it.
	if d := c.runtime("/conversations/" + id).json(t)["total_duration"]; d != 185.0 {
		t.Errorf("total_duration %v, want 185", d)
	}
}

// TestDebugChatSessionBelongsToItsAgent pins that a session is found only
// under its own agent's path, live, timed out or ended, and that a
// conversation in progress outside debug chat is not a session.
func TestDebugChatSessionBelongsToItsAgent(t *testing.T) {
	t.Parallel()
	clk, s := startProbes(t, sim.Options{ChatIdleTimeout: time.Minute, JanitorInterval: time.Hour})
	help := chat{t: t, s: s, id: "helpdesk"}
	probe := chat{t: t, s: s, id: "probe"}
	wantCode := func(what string, r response, status int, code string) {
		t.Helper()
		if r.status != status || r.json(t)["error_code"] != code {
			t.Errorf("%s: %d %s, want %d %s", what, r.status, r.body, status, code)
		}
	}
	live := help.start(nil)
	wantCode("live session under another agent", probe.turn(live, "chat"), 404, sim.CodeConversationsNotFound)
	if r := help.turn(live, "ping"); r.status != 200 {
		t.Fatalf("the session under its own agent: %d %s", r.status, r.body)
	}

	ended := help.start(nil)
	help.turn(ended, "bye")
	wantCode("ended session under its agent", help.turn(ended, "ping"), 409, sim.CodeConversationEnded)
	wantCode("ended session under another agent", probe.turn(ended, "chat"), 404, sim.CodeConversationsNotFound)

	clk.Advance(2 * time.Minute)
	wantCode("timed-out session under its agent", help.turn(live, "ping"), 408, sim.CodeChatTimeout)
	wantCode("timed-out session under another agent", probe.turn(live, "chat"), 404, sim.CodeConversationsNotFound)

	// An SMS conversation is in progress but is no debug-chat session.
	r := do(t, "POST", s.RuntimeURL+"/v1/outbound-sms",
		map[string]string{"X-Vendor-Auth-Token": s.RuntimeKey, "X-TOKEN-ID": s.Info.ConnectorIDs["helpdesk"]["live"]},
		map[string]any{"to_number": "+15557654321", "message": "hello"})
	if r.status != 200 {
		t.Fatalf("sms: %d %s", r.status, r.body)
	}
	wantCode("SMS conversation", help.turn(r.json(t)["conversation_id"].(string), "ping"), 404, sim.CodeConversationsNotFound)
}

// TestDebugChatGreetingThatEnds pins a conversation the greeting ends: it
// holds no live session and a turn finds it ended.
func TestDebugChatGreetingThatEnds(t *testing.T) {
	t.Parallel()
	_, s := startProbes(t, sim.Options{})
	c := chat{t: t, s: s, id: "oneshot"}
	r := c.create(map[string]any{"clientEnv": "live"})
	if r.status != 200 || r.json(t)["conversationEnded"] != true {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if n := s.Server.LiveSessions(); n != 0 {
		t.Errorf("%d live sessions after a greeting that ended the conversation", n)
	}
	id := r.json(t)["conversationId"].(string)
	if r := c.turn(id, "hi"); r.status != 409 || r.json(t)["error_code"] != sim.CodeConversationEnded {
		t.Errorf("turn: %d %s", r.status, r.body)
	}
}

// TestDebugChatConversationIDs pins the custom conversation id rule: at
// most 128 of letters, digits, '-', '_' and '.'.
func TestDebugChatConversationIDs(t *testing.T) {
	t.Parallel()
	_, c := startHelpdesk(t, sim.Options{})
	for id, want := range map[string]int{
		strings.Repeat("a", 128):       200,
		strings.Repeat("b", 129):       400,
		"a.b_c-D9":                     200,
		"a/b":                          400,
		"a%2Fb":                        400,
		"caf\u00e9":                    400,
		strings.Repeat("c", 127) + "/": 400,
	} {
		if r := c.create(map[string]any{"clientEnv": "live", "conversationId": id}); r.status != want {
			t.Errorf("conversationId %q: %d, want %d: %s", id, r.status, want, r.body)
		}
	}
}

// TestAudioOfEveryVoiceChannel pins that every VOICE channel has a
// recording, not only VOICE-SIP.
func TestAudioOfEveryVoiceChannel(t *testing.T) {
	t.Parallel()
	_, c := startHelpdesk(t, sim.Options{})
	id := c.start(map[string]any{"channel": "VOICE-PSTN"})
	if r := c.runtime("/conversations/" + id + "/audio"); r.status != 200 {
		t.Errorf("VOICE-PSTN audio: %d %s", r.status, r.body)
	}
}

// TestStoreCapSparesTheNewSession pins that the session a create opens is
// never the one the store cap idles out, even when every older session
// it could idle out instead is in use (a turn thinking) or gone.
func TestStoreCapSparesTheNewSession(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	thinking, release := make(chan struct{}), make(chan struct{})
	s := simtest.Start(t, sim.Options{Now: clk.Now, StoreCap: 1, Agents: []*agent.Definition{loadAgent(t, "probe.yaml", probeYAML)},
		Sleep: func(_ context.Context, d time.Duration) {
			if d == time.Millisecond { // the quick node: hold the turn
				close(thinking)
				<-release
				return
			}
			clk.Advance(d)
		}})
	c := chat{t: t, s: s, id: "probe"}
	busy := c.start(nil)
	done := make(chan response, 1)
	go func() { done <- c.turn(busy, "quick") }()
	select {
	case <-thinking:
	case <-time.After(readTimeout): // a bound for a broken build only
		t.Fatal("the quick turn never thought")
	}
	c.start(nil) // idles nobody out: the only older session is in use
	last := c.start(nil)
	if r := c.turn(last, "chat"); r.status != 200 {
		t.Errorf("the session just opened: %d %s", r.status, r.body)
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Errorf("the held turn: %d %s", r.status, r.body)
	}
}
