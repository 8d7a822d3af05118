package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/agenttest/agenttest/internal/steps"
)

// messagingTo is the Messaging channel to a simulator: a client per
// connector, as the CLI builds it, over hc.
func messagingTo(s *simtest.Sim, hc *http.Client) Channel {
	return messagingWith(s, hc, MessagingOptions{TurnTimeout: 5 * time.Second})
}

// messagingWith is messagingTo with the channel's options mo.
func messagingWith(s *simtest.Sim, hc *http.Client, mo MessagingOptions) Channel {
	base := platform.Config{
		BuildURL: s.BuildURL, MessagingURL: s.MessagingURL, MessagingHost: s.Info.MessagingHost,
		HTTPClient: hc, Retry: platform.RetryPolicy{Sleep: fakeclock.New().Sleep},
	}
	token := func(agent, env string) (string, error) {
		if tok := s.Info.MessagingConnectors[agent][env]; tok != "" {
			return tok, nil
		}
		return "", fmt.Errorf("no connector for %s in %s", agent, env)
	}
	return Messaging(MessagingClients(base, token), mo)
}

// msgEnv is a simulator with a settable clock, whose agents' think time
// advances it, and run options with both channels.
type msgEnv struct {
	sim *simtest.Sim
	clk *fakeclock.Clock
}

func newMsgEnv(t *testing.T, opts sim.Options) *msgEnv {
	t.Helper()
	clk := fakeclock.New()
	opts.Now = clk.Now
	opts.Sleep = func(_ context.Context, d time.Duration) { clk.Advance(d) }
	opts.TickInterval = time.Hour // expiry happens on the next event
	return &msgEnv{sim: simtest.Start(t, opts), clk: clk}
}

func (e *msgEnv) opts(t *testing.T) Options {
	tr := platform.NewTransport(64)
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	c, err := platform.New(platform.Config{BuildURL: e.sim.BuildURL, BuildKey: e.sim.BuildKey, RuntimeURL: e.sim.RuntimeURL,
		RuntimeKey: e.sim.RuntimeKey, AccountID: e.sim.AccountID, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Channel: DebugChat(c), Messaging: messagingTo(e.sim, hc), Records: c,
		Parallel: 4, RetryDelay: -1, TurnTimeout: 5 * time.Second,
		ConfirmTimeout: 3 * time.Second, ConfirmPoll: 10 * time.Millisecond,
	}
}

// runOne runs one suite written inline and returns its only case.
func runOne(t *testing.T, opts Options, src string) *result.Case {
	t.Helper()
	res, err := Run(context.Background(), loadYAML(t, src), opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	t.Logf("%s", describe(c))
	return c
}

// TestMessagingConversation runs a conversation over the Messaging API
// end to end: the greeting is the join's answer, a handoff reaches the
// live agent, the session ends, and the record is confirmed as WEBCHAT with
// the conversation id of the joined event.
func TestMessagingConversation(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 1})
	c := runOne(t, e.opts(t), `suite: web chat
agent: utility-billing
via: messaging
scenarios:
  - name: hands over to a live agent
    greeting:
      response: {contains: Northwind}
      events: {includes: [EVENT_TYPE_VENDOR_AGENT_JOINED]}
    turns:
      - say: I want to talk to a real person
        expect:
          handoff: billing_team
          response: {contains: "this is Sam"}
          events: {sequence: [EVENT_TYPE_HANDOFF_INITIATED, EVENT_TYPE_LIVE_AGENT_JOINED, EVENT_TYPE_LIVE_AGENT_MESSAGE]}
          system_message: false
          session_ended: false
      - say: my bill is too high
        expect: {response: {contains: looking into}, handoff: false}
      - say: bye
        expect: {session_ended: true, ended: true, response: {contains: Goodbye}}
    confirm:
      conversation: {channel: WEBCHAT, handoff: true, handoff_destination: billing_team, in_progress: false}
`)
	if c.Status != result.Passed {
		t.Fatalf("status %s", c.Status)
	}
	if c.Via != steps.ViaMessaging {
		t.Errorf("via %q", c.Via)
	}
	a := c.Last()
	if len(a.Turns) != 4 || a.ConversationID == "" {
		t.Fatalf("%d turns, conversation %q", len(a.Turns), a.ConversationID)
	}
	for _, tr := range a.Turns {
		m := tr.Messaging
		// Joined is the session's, in every turn after the join's.
		if m == nil || m.SessionID == "" || len(m.Events) == 0 || !m.Joined || tr.Result.ConversationID != a.ConversationID {
			t.Errorf("turn %d: %+v", tr.Index, m)
		}
		if !strings.HasPrefix(string(tr.Response), "[{") {
			t.Errorf("turn %d: response is not the events: %.80s", tr.Index, tr.Response)
		}
	}
	if got := a.Turns[3].Messaging.EndReason; got != "live_agent_ended" {
		t.Errorf("end reason %q", got)
	}
}

// TestMessagingSystemMessages: an error system message nothing expects is
// the platform's failure (Errored, named, retried when a fresh session may
// help); one the turn checks is part of what the scenario tests.
func TestMessagingSystemMessages(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name     string
		opts     sim.Options
		suite    string
		status   result.Status
		attempts int
		errWant  string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		e := newMsgEnv(t, tc.opts)
		o := e.opts(t)
		o.Retries = 1
		c := runOne(t, o, tc.suite)
		if c.Status != tc.status || len(c.Attempts) != tc.attempts {
			t.Fatalf("status %s after %d attempts, want %s after %d", c.Status, len(c.Attempts), tc.status, tc.attempts)
		}
		if tc.errWant == "" {
			return
		}
		e2 := c.Last().Error
		if e2 == nil || e2.Kind != result.KindMessaging || !strings.Contains(e2.Message, tc.errWant) {
			t.Errorf("error %+v, want kind %s with %q", e2, result.KindMessaging, tc.errWant)
		}
		// Reports name the greeting or the turn from the error's position:
		// the message must not say it again.
		if e2 != nil && (strings.HasPrefix(e2.Message, "turn ") || strings.HasPrefix(e2.Message, "start session")) {
			t.Errorf("error %q names its place, which reports already do", e2.Message)
		}
	}
	const handoff = `suite: s
agent: utility-billing
via: messaging
scenarios:
  - name: asks for a person
    turns:
      - say: I want to talk to a real person
`
	cases := []testCase{
		{name: "overload on the join errors and is retried", opts: sim.Options{Faults: sim.Faults{Overload: 1}},
			suite: handoff, status: result.Errored, attempts: 2,
			errWant: `the platform answered with an error system message: "Our system is experiencing high load. Please try again in a moment."`},
		{name: "a failed session lookup errors, is the platform's, and is retried", opts: sim.Options{Faults: sim.Faults{LookupFailure: 1}},
			suite: handoff, status: result.Errored, attempts: 2,
			errWant: `the platform answered with an error system message: "Error: Unable to retrieve session"`},
		{name: "no live agent errors a turn that does not expect it", opts: sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}},
			suite: handoff, status: result.Errored, attempts: 2,
			errWant: `the platform answered with an error system message: "Sorry, we could not connect you to an agent. Please try again.", and ended the session (reason handoff_failed)`},
		{name: "no live agent is what the turn checks", opts: sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}},
			suite:  handoff + "        expect: {system_message: {contains: could not connect you, level: error}, session_ended: true, handoff: true}\n",
			status: result.Passed, attempts: 1},
		// A check of one system message does not claim another: a reply
		// the platform could not generate, where the turn tests the
		// no-live-agent message, is the platform's error (retried), not
		// the agent's failure; so is one the check's level does not take.
		{name: "a platform fault where the turn checks another system message", opts: sim.Options{Faults: sim.Faults{ReplyFailure: 1}},
			suite:  handoff + "        expect: {system_message: {contains: could not connect you, level: error}, session_ended: true, handoff: true}\n",
			status: result.Errored, attempts: 2,
			errWant: `the platform answered with an error system message: "Sorry, I'm having trouble responding right now. Please try again."`},
		{name: "a platform fault where the turn checks a warning", opts: sim.Options{Faults: sim.Faults{ReplyFailure: 1}},
			suite:  handoff + "        expect: {system_message: {level: warning}}\n",
			status: result.Errored, attempts: 2, errWant: `"Sorry, I'm having trouble responding right now. Please try again."`},
		// The expected text is read with the scenario's variables.
		{name: "no live agent is what the turn checks, with a variable", opts: sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}},
			suite:  strings.Replace(handoff, "scenarios:", "vars: {nobody: could not connect you}\nscenarios:", 1) + "        expect: {system_message: {contains: \"${nobody}\"}, session_ended: true}\n",
			status: result.Passed, attempts: 1},
		// Any system message, or the event type, claims every one.
		{name: "a platform fault the turn expects", opts: sim.Options{Faults: sim.Faults{ReplyFailure: 1}},
			suite:  handoff + "        expect: {system_message: {level: error}}\n",
			status: result.Passed, attempts: 1},
		{name: "a platform fault the turn's events expect", opts: sim.Options{Faults: sim.Faults{ReplyFailure: 1}},
			suite:  handoff + "        expect: {events: [EVENT_TYPE_SYSTEM_MESSAGE]}\n",
			status: result.Passed, attempts: 1},
		{name: "a rejected handoff is not retried", opts: sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Destinations: []string{"sales"}}}},
			suite: handoff, status: result.Errored, attempts: 1, errWant: `"Sorry, handoff could not be initiated."`},
		{name: "a failed join errors", opts: sim.Options{Faults: sim.Faults{JoinFailure: 1}},
			suite: handoff, status: result.Errored, attempts: 2, errWant: "unable to start a conversation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingTurnAfterTheAgentEnded: a turn after the agent ended the
// session is never sent, so no transcript turn is at its line: its
// failure names it ("before turn 2"), since reports label it with the
// turn before.
func TestMessagingTurnAfterTheAgentEnded(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{})
	c := runOne(t, e.opts(t), `suite: s
agent: restaurant
via: messaging
scenarios:
  - name: talks after goodbye
    turns:
      - say: thanks, bye
        expect: {ended: true}
      - say: hello again
`)
	f := c.Last().Failures
	if c.Status != result.Failed || len(f) != 1 || f[0].Key != "ended" || f[0].Pos.Line != 9 ||
		f[0].Message != "the session ended before turn 2 (reason agent_ended)" {
		t.Errorf("status %s, failures %+v", c.Status, f)
	}
}

// TestMessagingDroppedSockets: a socket that drops during every join and
// every message is reopened by the client with the session and its
// cursor; the turn goes on and the verdict is the same as without drops.
func TestMessagingDroppedSockets(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 3, Faults: sim.Faults{SocketDrop: 1}})
	c := runOne(t, e.opts(t), `suite: s
agent: restaurant
via: messaging
scenarios:
  - name: books a table
    greeting: {events: [EVENT_TYPE_VENDOR_AGENT_JOINED]}
    turns:
      - say: I'd like to book a table
        expect: {response: {contains: how many, ignore_case: true}, system_message: false}
      - say: 4 people at 7pm
        expect: {response: {contains: reference}}
`)
	if c.Status != result.Passed || len(c.Attempts) != 1 {
		t.Fatalf("status %s after %d attempts", c.Status, len(c.Attempts))
	}
	reconnects := 0
	for _, tr := range c.Last().Turns {
		reconnects += tr.Messaging.Reconnects
	}
	if reconnects < 3 {
		t.Errorf("%d reconnects over 3 turns that each dropped", reconnects)
	}
	if n := e.sim.Server.MessagingStats().DuplicateJoins; n != 0 {
		t.Errorf("%d duplicate joins", n)
	}
}

// TestMessagingReconnectsOff: MessagingOptions.MaxReconnects reaches the
// client: with reconnects off, a socket that drops during the join errors
// the case as the network's fault, where the default reopens it.
func TestMessagingReconnectsOff(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 3, Faults: sim.Faults{SocketDrop: 1}})
	o := e.opts(t)
	o.Messaging = messagingWith(e.sim, nil, MessagingOptions{TurnTimeout: 5 * time.Second, MaxReconnects: -1})
	c := runOne(t, o, `suite: s
agent: clinic
via: messaging
scenarios:
  - name: greets
    turns:
      - say: When are you open?
`)
	if err := c.Last().Error; c.Status != result.Errored || err.Kind != result.KindNetwork || !strings.Contains(err.Message, "socket closed (0 reconnects in this turn)") {
		t.Errorf("status %s, error %+v: want a network error, the socket closed without a reconnect", c.Status, err)
	}
}

// TestMessagingExpiredSession: a session the platform expires between two
// turns (the user is idle past the expiry) errors the attempt with the
// platform's words and the end reason, and is retried.
func TestMessagingExpiredSession(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Messaging: sim.MessagingOptions{SessionExpiry: time.Minute}})
	o := e.opts(t)
	o.Retries = 1
	o.Messaging = idleBefore{Channel: o.Messaging, turn: 2, idle: 2 * time.Minute, clk: e.clk}
	c := runOne(t, o, `suite: s
agent: restaurant
via: messaging
scenarios:
  - name: books a table
    turns:
      - say: I'd like to book a table
      - say: 4 people at 7pm
`)
	if c.Status != result.Errored || len(c.Attempts) != 2 {
		t.Fatalf("status %s after %d attempts", c.Status, len(c.Attempts))
	}
	err := c.Last().Error
	if err.Kind != result.KindMessaging || !strings.Contains(err.Message, `"Error: Session not found"`) || !strings.Contains(err.Message, "(reason expired)") {
		t.Errorf("error %+v", err)
	}
	if err.Pos.Line != 8 {
		t.Errorf("error at %s, want the second turn", err.Pos)
	}
}

// idleBefore is a channel whose conversations wait idle before their
// turn-th user message, on the simulator's clock.
type idleBefore struct {
	Channel
	turn int
	idle time.Duration
	clk  *fakeclock.Clock
}

func (c idleBefore) Open(ctx context.Context, agentID string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	conv, exch, err := c.Channel.Open(ctx, agentID, req)
	if conv != nil {
		conv = &idleConversation{Conversation: conv, ch: c}
	}
	return conv, exch, err
}

type idleConversation struct {
	Conversation
	ch idleBefore
	n  int
}

func (c *idleConversation) Send(ctx context.Context, req platform.ChatTurn) (*platform.Exchange, error) {
	if c.n++; c.n == c.ch.turn {
		c.ch.clk.Advance(c.ch.idle)
	}
	return c.Conversation.Send(ctx, req)
}

// TestMessagingConfigErrors: a scenario over messaging without the
// channel, or whose agent has no connector, errors at once, unretried.
func TestMessagingConfigErrors(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{})
	const suite = `suite: s
agent: restaurant
via: messaging
scenarios:
  - name: greets
    greeting: {response: {contains: Welcome}}
`
	o := e.opts(t)
	o.Retries = 2
	o.Messaging = nil
	c := runOne(t, o, suite)
	if c.Status != result.Errored || len(c.Attempts) != 1 || c.Last().Error.Kind != result.KindConfig ||
		!strings.Contains(c.Last().Error.Message, "no Messaging channel") || c.Last().Error.Pos.Line != 3 {
		t.Errorf("no channel: %s", describe(c))
	}
	o.Messaging = Messaging(func(agent, env string) (MessagingOpener, error) {
		return nil, errors.New("target has no Messaging connector for agent " + agent)
	}, MessagingOptions{})
	c = runOne(t, o, suite)
	if c.Status != result.Errored || len(c.Attempts) != 1 || c.Last().Error.Kind != result.KindConfig ||
		!strings.Contains(c.Last().Error.Message, "no Messaging connector for agent restaurant") {
		t.Errorf("no connector: %s", describe(c))
	}
	// MessagingClients says why the target has no token, as the
	// connector does.
	o.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: e.sim.MessagingURL, MessagingHost: e.sim.Info.MessagingHost},
		func(agent, env string) (string, error) {
			return "", fmt.Errorf("no connector for %s in %s", agent, env)
		}), MessagingOptions{})
	c = runOne(t, o, suite)
	if c.Status != result.Errored || len(c.Attempts) != 1 || c.Last().Error.Kind != result.KindConfig ||
		!strings.Contains(c.Last().Error.Message, "no connector for restaurant in sandbox") {
		t.Errorf("no token: %s", describe(c))
	}
	// A connector token the platform does not know: 401, named for the
	// connector, not retried.
	o.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: e.sim.MessagingURL, MessagingHost: e.sim.Info.MessagingHost},
		func(string, string) (string, error) { return "ct_not-a-connector-of-this-platform", nil }), MessagingOptions{})
	o.Redactor, _ = secret.New("ct_not-a-connector-of-this-platform")
	c = runOne(t, o, suite)
	if err := c.Last().Error; c.Status != result.Errored || len(c.Attempts) != 1 || err.Kind != result.KindHTTP || err.Status != http.StatusUnauthorized ||
		!strings.Contains(err.Message, "check the connector token") || strings.Contains(describe(c), "not-a-connector") {
		t.Errorf("unknown connector: %s", describe(c))
	}
	// The connector of another agent, or of the agent in another
	// environment: the simulator's joined event names where the
	// conversation runs, and the case errors at its via: as a
	// configuration error, not retried, whatever the greeting says.
	for _, tc := range []struct{ agent, env, want string }{
		{agent: "restaurant", env: "sandbox"},
		{agent: "clinic", env: "sandbox", want: "runs in project clinic, not restaurant"},
		{agent: "restaurant", env: "live", want: "runs in environment live, not sandbox"},
	} {
		o.Messaging = Messaging(MessagingClients(platform.Config{BuildURL: e.sim.BuildURL, MessagingURL: e.sim.MessagingURL, MessagingHost: e.sim.Info.MessagingHost},
			func(string, string) (string, error) { return e.sim.Info.MessagingConnectors[tc.agent][tc.env], nil }), MessagingOptions{})
		c = runOne(t, o, suite)
		if tc.want == "" {
			if c.Status != result.Passed {
				t.Errorf("own connector: %s", describe(c))
			}
			continue
		}
		if err := c.Last().Error; c.Status != result.Errored || len(c.Attempts) != 1 || err.Kind != result.KindConfig || err.Pos.Line != 3 ||
			!strings.Contains(err.Message, tc.want) {
			t.Errorf("connector of %s in %s: %s", tc.agent, tc.env, describe(c))
		}
	}
}

// TestSystemError is the rule that decides when the events of a turn are
// the platform's failure rather than the agent's answer.
func TestSystemError(t *testing.T) {
	t.Parallel()
	overload := []reply.SystemMessage{{Level: reply.SystemLevelError, Text: "Our system is experiencing high load. Please try again in a moment."}}
	type testCase struct {
		name    string
		m       *reply.Messaging
		opening bool
		reads   bool
		// claim, when set, claims the messages whose text holds it.
		claim string
		want  string // "" for no error
		retry bool
	}
	for _, tc := range []testCase{
		{name: "an answer", m: &reply.Messaging{Joined: true}},
		{name: "an info message", m: &reply.Messaging{Joined: true, System: []reply.SystemMessage{{Level: "SYSTEM_MESSAGE_LEVEL_INFO", Text: "hi"}}}},
		{name: "an error message", m: &reply.Messaging{Joined: true, System: overload},
			want: `the platform answered with an error system message: "Our system is experiencing high load. Please try again in a moment."`, retry: true},
		{name: "an error message the turn checks", m: &reply.Messaging{Joined: true, System: overload}, reads: true},
		{name: "an error message beside the one the turn checks", m: &reply.Messaging{Joined: true, System: append([]reply.SystemMessage{{Level: "ERROR", Text: "No agent is available."}}, overload...)},
			claim: "No agent", want: `the platform answered with an error system message: "Our system is experiencing high load. Please try again in a moment."`, retry: true},
		{name: "an invalid event is not retried", m: &reply.Messaging{Joined: true, System: []reply.SystemMessage{{Level: "ERROR", Text: "Event type not allowed: EVENT_TYPE_X"}}},
			want: `the platform answered with an error system message: "Event type not allowed: EVENT_TYPE_X"`},
		{name: "a malformed event is not retried", m: &reply.Messaging{Joined: true, System: []reply.SystemMessage{{Level: "ERROR", Text: "Unknown event type or invalid message format"}}},
			want: `the platform answered with an error system message: "Unknown event type or invalid message format"`},
		{name: "a connector not found is not retried", m: &reply.Messaging{Joined: true, System: []reply.SystemMessage{{Level: "ERROR", Text: "Error: Connector not found"}}},
			want: `the platform answered with an error system message: "Error: Connector not found" (the reference: the connector is invalid, a configuration problem: check the connector token of the agent and environment)`},
		// A join refused for its type: the brand word is the likely
		// cause, said only of an opening that did not join.
		{name: "a join of the wrong brand", m: &reply.Messaging{Brand: "VENDOR", System: []reply.SystemMessage{{Level: "ERROR", Text: "Unknown event type or invalid message format"}}}, opening: true,
			want: `the platform answered with an error system message: "Unknown event type or invalid message format" (the join request went as EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN: a platform whose brand word is not VENDOR refuses it; set the target's brand:)`},
		{name: "a join not allowed", m: &reply.Messaging{Brand: "ACME", System: []reply.SystemMessage{{Level: "ERROR", Text: "Event type not allowed: EVENT_TYPE_REQUEST_ACME_AGENT_JOIN"}}}, opening: true,
			want: `the platform answered with an error system message: "Event type not allowed: EVENT_TYPE_REQUEST_ACME_AGENT_JOIN" (the join request went as EVENT_TYPE_REQUEST_ACME_AGENT_JOIN: a platform whose brand word is not ACME refuses it; set the target's brand:)`},
		{name: "a refused type after the join", m: &reply.Messaging{Brand: "VENDOR", Joined: true, System: []reply.SystemMessage{{Level: "ERROR", Text: "Unknown event type or invalid message format"}}}, opening: true,
			want: `the platform answered with an error system message: "Unknown event type or invalid message format"`},
		{name: "a refused type of a turn", m: &reply.Messaging{Brand: "VENDOR", System: []reply.SystemMessage{{Level: "ERROR", Text: "Unknown event type or invalid message format"}}},
			want: `the platform answered with an error system message: "Unknown event type or invalid message format"`},
		{name: "an opening refused otherwise", m: &reply.Messaging{Brand: "VENDOR", System: overload}, opening: true,
			want: `the platform answered with an error system message: "Our system is experiencing high load. Please try again in a moment."`, retry: true},
		{name: "a join refused, of no known brand", m: &reply.Messaging{System: []reply.SystemMessage{{Level: "ERROR", Text: "Unknown event type or invalid message format"}}}, opening: true,
			want: `the platform answered with an error system message: "Unknown event type or invalid message format"`},
		{name: "the agent ended the session", m: &reply.Messaging{Joined: true, SessionEnded: true, EndReason: "agent_ended"}},
		{name: "the platform expired the session", m: &reply.Messaging{Joined: true, SessionEnded: true, EndReason: "expired"},
			want: "the platform ended the session (reason expired)", retry: true},
		{name: "an expiry the turn checks is still the platform's", m: &reply.Messaging{Joined: true, SessionEnded: true, EndReason: "session_timeout"}, reads: true,
			want: "the platform ended the session (reason session_timeout)", retry: true},
		{name: "an opening without a join", m: &reply.Messaging{}, opening: true,
			want: "the agent did not join the conversation: no joined event answered the join request", retry: true},
		{name: "an opening without a join whose error message the greeting checks", m: &reply.Messaging{System: overload}, opening: true, reads: true},
		{name: "an opening the agent ended at once", m: &reply.Messaging{SessionEnded: true, EndReason: "agent_ended"}, opening: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := systemError(tc.m, tc.opening, func(sm reply.SystemMessage) bool {
				return tc.reads || (tc.claim != "" && strings.Contains(sm.Text, tc.claim))
			})
			switch {
			case tc.want == "" && e != nil:
				t.Errorf("error %q", e.msg)
			case tc.want != "" && (e == nil || e.msg != tc.want || e.retry != tc.retry):
				t.Errorf("error %+v, want %q retry %t", e, tc.want, tc.retry)
			}
		})
	}
}

// TestPlatformEnd: the end reasons that are the platform's doing (an
// expiry, a timeout, inactivity, an internal error), in any case, and
// those that are not: an agent's, a live agent's, a user's end fails the
// scenario that talks on, where the platform's errors it.
func TestPlatformEnd(t *testing.T) {
	t.Parallel()
	for reason, want := range map[string]bool{
		"expired": true, "SESSION_EXPIRED": true, "timeout": true, "session_timed_out": true, "TIMED_OUT": true,
		"inactivity": true, "Inactive": true, "idle": true, "IDLE_TIMEOUT": true, "error": true, "ERROR": true, "internal_error": true,
		"": false, "agent_ended": false, "live_agent_ended": false, "user_ended": false, "errors_reported": false, "completed": false,
	} {
		if got := platformEnd(reason); got != want {
			t.Errorf("platformEnd(%q) = %t, want %t", reason, got, want)
		}
	}
}

// refusingMessaging is the Messaging channel to e's simulator through a
// proxy that answers the handshakes refuse picks (numbered from 1) with
// status and Retry-After retryAfter, as a platform's per-session limit
// does with 429; and the count of handshakes. cfg holds the client's
// clocks and budget.
func refusingMessaging(t *testing.T, e *msgEnv, cfg platform.Config, mo MessagingOptions, status int, retryAfter string, refuse func(n int64) bool) (Channel, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(e.sim.MessagingURL)
	if err != nil {
		t.Fatal(err)
	}
	var handshakes atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ws" && refuse(handshakes.Add(1)) {
			w.Header().Set("Retry-After", retryAfter)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			msg := "connection limit exceeded for session"
			if status == http.StatusNotFound {
				msg = "session not found" // the simulator's words
			}
			fmt.Fprintf(w, `{"error":%q}`, msg)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	cfg.BuildURL, cfg.MessagingURL, cfg.MessagingHost = e.sim.BuildURL, front.URL, e.sim.Info.MessagingHost
	return Messaging(MessagingClients(cfg, func(agent, env string) (string, error) {
		return e.sim.Info.MessagingConnectors[agent][env], nil
	}), mo), &handshakes
}

// bookingSuite is one scenario over messaging against the simulator's
// restaurant: a turn whose answer asks the party's size.
const bookingSuite = `suite: s
agent: restaurant
via: messaging
scenarios:
  - name: is asked the party's size
    turns:
      - say: I'd like to book a table
        expect: {response: {contains: how many, ignore_case: true}}
`

// bookingEnv is the simulator that bookingSuite runs against (seed 3),
// its sockets dropped at every client event when drops, and the options
// of a run against it on its fake clock, with one retry.
func bookingEnv(t *testing.T, drops bool) (*msgEnv, Options) {
	var faults sim.Faults
	if drops {
		faults.SocketDrop = 1
	}
	e := newMsgEnv(t, sim.Options{Seed: 3, Faults: faults})
	o := e.opts(t)
	o.Retries, o.Now, o.Sleep = 1, e.clk.Now, e.clk.Sleep
	return e, o
}

// TestMessagingHandshakeRateLimited: a 429 on the WebSocket handshake
// (a platform's connection or rate limit) is waited out as Retry-After
// says, within the attempt; the case passes on its first attempt.
func TestMessagingHandshakeRateLimited(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{})
	o := e.opts(t)
	slept := fakeclock.New()
	var handshakes *atomic.Int64
	o.Messaging, handshakes = refusingMessaging(t, e, platform.Config{Now: slept.Now, Retry: platform.RetryPolicy{Sleep: slept.Sleep}},
		MessagingOptions{TurnTimeout: 5 * time.Second}, http.StatusTooManyRequests, "1", func(n int64) bool { return n <= 2 })
	c := runOne(t, o, `suite: s
agent: clinic
via: messaging
scenarios:
  - name: greets
    greeting: {events: [EVENT_TYPE_VENDOR_AGENT_JOINED]}
    turns:
      - say: When are you open?
`)
	if c.Status != result.Passed || len(c.Attempts) != 1 {
		t.Fatalf("status %s after %d attempts", c.Status, len(c.Attempts))
	}
	if n := handshakes.Load(); n != 3 {
		t.Errorf("%d handshakes, want 2 refused and 1 accepted", n)
	}
	if c.RateLimited != 2 || c.RateWaited != 2*time.Second {
		t.Errorf("the case waited %s for %d 429s; want the two Retry-After seconds for 2", c.RateWaited, c.RateLimited)
	}
}

// TestMessagingHandshakeRateLimitedPastTheTurnTimeout: the waits of a
// handshake's 429 are left out of both turn timeouts, the runner's and
// the Messaging client's own, as every rate-limit wait is: a Retry-After
// longer than them is waited out and the case passes on its first
// attempt, the waits charged to it, on fake timers and on real ones
// (whose deadline must not refuse the wait), in the opening and in the
// reconnects of a turn. Only past the wait budget does the rate limit
// error the case, as a rate limit (the platform's refusal, not the
// agent's failure), and unretried: another attempt would only wait more.
func TestMessagingHandshakeRateLimitedPastTheTurnTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// realTimers runs the turn timeouts on the real clock.
		realTimers bool
		drops      bool // the socket drops at every client event
		refuse     func(n int64) bool
		rateWait   time.Duration
		want       result.Status
	}{
		{name: "the opening's, on fake timers", refuse: func(n int64) bool { return n == 1 }, want: result.Passed},
		{name: "the opening's, on real timers", realTimers: true, refuse: func(n int64) bool { return n == 1 }, want: result.Passed},
		{name: "every reconnect's first handshake", drops: true, refuse: func(n int64) bool { return n%2 == 0 }, want: result.Passed},
		{name: "past the wait budget", refuse: func(n int64) bool { return n == 1 }, rateWait: 15 * time.Second, want: result.Errored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, o := bookingEnv(t, tc.drops)
			o.TurnTimeout = 10 * time.Second
			cfg := platform.Config{Now: e.clk.Now, Retry: platform.RetryPolicy{Sleep: e.clk.Sleep}, RateWait: tc.rateWait}
			if !tc.realTimers {
				o.AfterFunc, cfg.AfterFunc = e.clk.AfterFunc, e.clk.AfterFunc
			}
			var handshakes *atomic.Int64
			o.Messaging, handshakes = refusingMessaging(t, e, cfg, MessagingOptions{TurnTimeout: 10 * time.Second}, http.StatusTooManyRequests, "20", tc.refuse)
			c := runOne(t, o, bookingSuite)
			refused := 0
			for n := int64(1); n <= handshakes.Load(); n++ {
				if tc.refuse(n) {
					refused++
				}
			}
			if c.Status != tc.want || len(c.Attempts) != 1 {
				t.Fatalf("status %s after %d attempts, want %s after 1", c.Status, len(c.Attempts), tc.want)
			}
			if tc.want == result.Errored {
				if err := c.Last().Error; err.Kind != result.KindRateLimited || !strings.Contains(err.Message, "rate limited: waited 0s for WS /ws (1 answer 429); the next try could go in 20s, past the wait budget of 15s") {
					t.Errorf("error %+v, want a rate limit of WS /ws past the budget", err)
				}
				return
			}
			if refused == 0 || c.RateLimited != refused || c.RateWaited != time.Duration(refused)*20*time.Second {
				t.Errorf("the case waited %s for %d 429s; want 20s for each of the %d refused handshakes", c.RateWaited, c.RateLimited, refused)
			}
		})
	}
}

// TestMessagingScenarioTimeoutFallsDuringAHandshakePause: a scenario's
// timeout leaves out the rate-limit waits over messaging too, also when
// it falls due while a handshake waits out a 429's Retry-After (the
// opening's, or a reconnect's within a turn), as over the debug chat
// (TestScenarioTimeoutFallsDuringARateLimitPause). The pause blocks
// until the clock is moved past it, and the scenario's timer fires in
// the middle of it, from the goroutine that moves the clock, as a real
// timer would. Every HTTP answer (access token, session, handshake) takes
// 60ms; the refused handshake waits 1s first. A scenario whose own time
// fits its timeout passes; one whose does not is cut at the same point as
// without the pause, 30ms into the handshake after it, and errors as the
// scenario's timeout, neither as a rate limit nor as the agent's failure.
// Either way no wait is left behind.
func TestMessagingScenarioTimeoutFallsDuringAHandshakePause(t *testing.T) {
	t.Parallel()
	const latency, pause = 60 * time.Millisecond, time.Second
	type testCase struct {
		name  string
		drops bool // the socket drops at every client event
		// refused is the handshake answered 429 (from 1), or 0.
		refused int64
		timeout time.Duration
		want    result.Status
		own     time.Duration // the attempt's time without its waits
		turns   int           // the calls the attempt made
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		e, o := bookingEnv(t, tc.drops)
		o.Retries, o.AfterFunc = 0, e.clk.AfterFunc
		// The pause blocks until the clock passes it; the client's other
		// sleeps (the close's grace) pass at once.
		asleep := make(chan time.Duration)
		var sleeping atomic.Int64
		sleep := func(ctx context.Context, d time.Duration) error {
			if d != pause {
				return e.clk.Sleep(ctx, d)
			}
			sleeping.Add(1)
			defer sleeping.Add(-1)
			woke := make(chan struct{})
			stop := e.clk.AfterFunc(d, func() { close(woke) })
			select {
			case asleep <- d:
			case <-ctx.Done():
				stop()
				return ctx.Err()
			}
			select {
			case <-woke:
				return nil
			case <-ctx.Done():
				stop()
				return ctx.Err()
			}
		}
		tr := platform.NewTransport(8)
		t.Cleanup(tr.CloseIdleConnections)
		cfg := platform.Config{Now: e.clk.Now, AfterFunc: e.clk.AfterFunc, Retry: platform.RetryPolicy{Sleep: sleep},
			HTTPClient: &http.Client{Transport: slowAnswers{clk: e.clk, latency: latency, next: tr}}}
		var handshakes *atomic.Int64
		o.Messaging, handshakes = refusingMessaging(t, e, cfg, MessagingOptions{TurnTimeout: 10 * time.Second},
			http.StatusTooManyRequests, "1", func(n int64) bool { return n == tc.refused })
		suites := loadYAML(t, bookingSuite)
		suites[0].Scenarios[0].Timeout = tc.timeout
		done := make(chan *result.Result, 1)
		go func() {
			res, err := Run(context.Background(), suites, o)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		var res *result.Result
		for res == nil {
			select {
			case d := <-asleep:
				e.clk.Advance(d)
			case res = <-done:
			}
		}
		if n := sleeping.Load(); n != 0 {
			t.Errorf("%d pauses still waiting after the run", n)
		}
		c := res.Files[0].Cases[0]
		a := c.Last()
		if c.Status != tc.want || len(c.Attempts) != 1 {
			t.Fatalf("got %s after %d attempts, want %s after 1: %s", c.Status, len(c.Attempts), tc.want, describe(c))
		}
		limits, waited := 0, time.Duration(0)
		if tc.refused > 0 {
			limits, waited = 1, pause
			if n := handshakes.Load(); n <= tc.refused {
				t.Errorf("%d handshakes: none after the refused one", n)
			}
		}
		if c.RateLimited != limits || c.RateWaited != waited {
			t.Errorf("the case waited %s for %d 429s, want %s for %d", c.RateWaited, c.RateLimited, waited, limits)
		}
		if own := a.Duration - c.RateWaited; own != tc.own {
			t.Errorf("the attempt took %s, %s of it its own; want %s of its own", a.Duration, own, tc.own)
		}
		if len(a.Turns) != tc.turns {
			t.Errorf("%d calls, want %d: %s", len(a.Turns), tc.turns, describe(c))
		}
		if tc.want == result.Passed {
			return
		}
		// Each runs out in a handshake the slow transport holds.
		if want := fmt.Sprintf("scenario timeout of %s exceeded (WS /ws: the handshake of the socket did not complete)", tc.timeout); a.Error == nil || a.Error.Kind != result.KindTimeout ||
			a.Error.Message != want || len(a.Failures) != 0 {
			t.Errorf("error %+v, failures %+v: want the scenario's timeout, %q", a.Error, a.Failures, want)
		}
	}
	for _, tc := range []testCase{
		// Access token, session, handshake: 180ms of its own.
		{name: "the opening's, its own time fits", refused: 1, timeout: 200 * time.Millisecond, want: result.Passed, own: 180 * time.Millisecond, turns: 2},
		{name: "the opening's, its own time runs out", refused: 1, timeout: 150 * time.Millisecond, want: result.Errored, own: 180 * time.Millisecond, turns: 1},
		{name: "no pause, its own time runs out", timeout: 150 * time.Millisecond, want: result.Errored, own: 180 * time.Millisecond, turns: 1},
		// The join and the turn take two more handshakes each (their
		// reconnects): 360ms of its own, the turn's first handshake
		// refused 240ms in.
		{name: "a turn's reconnect's, its own time fits", drops: true, refused: 3, timeout: 380 * time.Millisecond, want: result.Passed, own: 360 * time.Millisecond, turns: 2},
		{name: "a turn's reconnect's, its own time runs out", drops: true, refused: 3, timeout: 270 * time.Millisecond, want: result.Errored, own: 300 * time.Millisecond, turns: 2},
		{name: "no pause in a turn, its own time runs out", drops: true, timeout: 270 * time.Millisecond, want: result.Errored, own: 300 * time.Millisecond, turns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingHandshakeRefusedNamesTheSocket: a handshake the platform
// refuses (a 404: the session is gone), on the opening or on a turn's
// reconnect, errors the case as the platform's answer, naming the socket
// as every other error of the session does (WS /ws), not the HTTP
// request that carries the handshake.
func TestMessagingHandshakeRefusedNamesTheSocket(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// refused is the handshake refused: 1 the opening's, 2 the
		// reconnect's of a socket that drops at the user's message.
		refused int64
	}{
		{name: "the opening's", refused: 1},
		{name: "a reconnect's", refused: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, o := bookingEnv(t, tc.refused > 1)
			o.Retries = 0 // a fresh session would pass
			cfg := platform.Config{Now: e.clk.Now, Retry: platform.RetryPolicy{Sleep: e.clk.Sleep}}
			o.Messaging, _ = refusingMessaging(t, e, cfg, MessagingOptions{TurnTimeout: 10 * time.Second}, http.StatusNotFound, "", func(n int64) bool { return n == tc.refused })
			c := runOne(t, o, bookingSuite)
			err := c.Last().Error
			if c.Status != result.Errored || err == nil || err.Kind != result.KindHTTP || err.Status != http.StatusNotFound ||
				!strings.Contains(err.Message, "WS /ws: 404: session not found") {
				t.Errorf("status %s, error %+v: want the platform's 404 of WS /ws", c.Status, err)
			}
		})
	}
}

// TestMessagingClientTurnTimeoutRetried: a Messaging attempt that runs
// out of the client's own turn timeout is the platform's (an errored
// attempt, a timeout) and is retried from a fresh session; the case
// passes on the attempt whose turn is answered, and is flaky.
func TestMessagingClientTurnTimeoutRetried(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var sessions atomic.Int64
	p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
		if n == 1 {
			return []platformtest.Frame{platformtest.Joined("1", ""), platformtest.Message("2", "", "Welcome."), platformtest.TypingStop("3")}
		}
		if sessions.Add(1) == 1 {
			// The first session's user message goes unanswered past
			// the client's timeout, within the runner's.
			clk.Advance(7 * time.Second)
			return nil
		}
		return []platformtest.Frame{platformtest.Message("4", "", "Your balance is 0."), platformtest.TypingStop("5")}
	})
	base := platform.Config{BuildURL: p.URL, MessagingURL: p.URL, MessagingHost: p.Host, AllowHTTP: true, Now: clk.Now,
		Retry: platform.RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}, AfterFunc: clk.AfterFunc}
	ch := Messaging(MessagingClients(base, func(string, string) (string, error) { return hostileConnector, nil }),
		MessagingOptions{TurnTimeout: 5 * time.Second, Settle: time.Hour})
	opts := Options{Channel: ch, Messaging: ch, Parallel: 1, Retries: 1, RetryDelay: -1, TurnTimeout: 10 * time.Second,
		Now: clk.Now, Sleep: clk.Sleep, AfterFunc: clk.AfterFunc}
	c := runOne(t, opts, balanceSuite)
	if c.Status != result.Flaky || len(c.Attempts) != 2 {
		t.Fatalf("status %s after %d attempts, want flaky after 2", c.Status, len(c.Attempts))
	}
	if a := c.Attempts[0]; a.Status != result.Errored || a.Error.Kind != result.KindTimeout || a.Error.Message != "turn timeout of 5s exceeded (WS /ws: no answer to the user message)" || len(a.Failures) != 0 {
		t.Errorf("first attempt %s, error %+v, failures %+v: want errored, the client's turn timeout", a.Status, a.Error, a.Failures)
	}
	if a := c.Attempts[1]; a.Status != result.Passed {
		t.Errorf("second attempt %s", a.Status)
	}
}

// TestMessagingStreamedAndWhole runs one conversation over messaging
// twice against the simulator, with streamed replies (streaming: true,
// the suite's) and whole ones (the scenario's streaming: false): both
// pass with the same replies, the streamed one's came as chunks and the
// other's did not, and each case says which it was.
func TestMessagingStreamedAndWhole(t *testing.T) {
	t.Parallel()
	e := newMsgEnv(t, sim.Options{Seed: 1})
	o := e.opts(t)
	o.Parallel = 1
	const conversation = `
    greeting:
      response: {contains: Northwind}
    turns:
      - say: I want to talk to a real person
        expect: {handoff: billing_team, response: {contains: "this is Sam"}}
      - say: my bill is too high
        expect: {response: {contains: looking into}}
    confirm:
      conversation: {channel: WEBCHAT, handoff: true}
`
	res, err := Run(context.Background(), loadYAML(t, `suite: web chat
agent: utility-billing
via: messaging
streaming: true
scenarios:
  - name: streamed`+conversation+`
  - name: whole
    streaming: false`+conversation), o)
	if err != nil {
		t.Fatal(err)
	}
	streamed, whole := res.Files[0].Cases[0], res.Files[0].Cases[1]
	replies := func(c *result.Case) (texts []string, chunks int) {
		t.Helper()
		t.Logf("%s", describe(c))
		if c.Status != result.Passed {
			t.Fatalf("%s: status %s", c.Name, c.Status)
		}
		for _, tr := range c.Last().Turns {
			texts = append(texts, tr.Result.Response)
			for _, ev := range tr.Messaging.Events {
				if ev.Kind == "agent_chunk" {
					chunks++
				}
			}
		}
		return texts, chunks
	}
	sTexts, sChunks := replies(streamed)
	wTexts, wChunks := replies(whole)
	if strings.Join(sTexts, "\n") != strings.Join(wTexts, "\n") {
		t.Errorf("streamed replies\n%s\nwhole replies\n%s", strings.Join(sTexts, "\n"), strings.Join(wTexts, "\n"))
	}
	if sChunks == 0 || wChunks != 0 {
		t.Errorf("%d chunks streamed, %d whole: want some, then none", sChunks, wChunks)
	}
	if !streamed.Streaming || whole.Streaming {
		t.Errorf("cases say streaming %t and %t, want true and false", streamed.Streaming, whole.Streaming)
	}
}

// openTurnstile lets Messaging conversations open one at a time, in a
// given order of their names.
type openTurnstile struct {
	t     *testing.T
	mu    sync.Mutex
	cond  *sync.Cond
	order []string
	next  int
}

func newOpenTurnstile(t *testing.T, order ...string) *openTurnstile {
	o := &openTurnstile{t: t, order: order}
	o.cond = sync.NewCond(&o.mu)
	return o
}

// open waits for name's turn, runs do and gives the turn to the next.
// A name that never comes fails the test after 10 s (real time: a safety
// net, never a wait the test relies on) rather than hanging it.
func (o *openTurnstile) open(name string, do func()) {
	timer := time.AfterFunc(10*time.Second, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.t.Errorf("%s waited for its turn in %v too long (at %d)", name, o.order, o.next)
		o.next = len(o.order)
		o.cond.Broadcast()
	})
	defer timer.Stop()
	o.mu.Lock()
	for o.next < len(o.order) && o.order[o.next] != name {
		o.cond.Wait()
	}
	o.mu.Unlock()
	do()
	o.mu.Lock()
	o.next++
	o.cond.Broadcast()
	o.mu.Unlock()
}

// orderedOpens is a Messaging channel whose conversations open (create
// their session and join) in the order of a turnstile, by the name
// Options.ConversationIDs gives them.
type orderedOpens struct {
	streamingChannel
	gate *openTurnstile
}

func (c orderedOpens) Open(ctx context.Context, agentID string, req platform.ChatStart) (conv Conversation, exch *platform.Exchange, err error) {
	c.gate.open(req.ConversationID, func() { conv, exch, err = c.streamingChannel.Open(ctx, agentID, req) })
	return conv, exch, err
}

func (c orderedOpens) withStreaming(on bool) streamingChannel {
	return orderedOpens{c.streamingChannel.withStreaming(on), c.gate}
}

// TestMessagingNamedConversationsDrawAlike: two runs of one seed, at
// --parallel 3, whose web-chat bookings join in opposite orders, draw the
// same booking reference for each scenario, as debug chat's named
// conversations do. The Messaging conversation was named by the order of
// the joins server-wide, so that agenttest compare reported the booking
// reference of a web-chat scenario CHANGED when the two sides' sessions
// happened to join in different orders.
func TestMessagingNamedConversationsDrawAlike(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString(`suite: web-chat bookings
agent: restaurant
via: messaging
scenarios:
`)
	names := []string{"books-a", "books-b", "books-c"}
	for i, name := range names {
		fmt.Fprintf(&src, "  - name: %s\n    streaming: %v\n    turns:\n      - say: I'd like to book a table\n      - say: %d people at 7pm\n        expect: {response: {contains: reference}}\n",
			name, i == 1, i+2)
	}
	refRE := regexp.MustCompile(`reference ([A-Z0-9]{6})`)
	refs := func(order ...string) map[string]string {
		e := newMsgEnv(t, sim.Options{Seed: 3})
		opts := e.opts(t)
		opts.Parallel = 3
		opts.Messaging = orderedOpens{opts.Messaging.(streamingChannel), newOpenTurnstile(t, order...)}
		opts.ConversationIDs = func(c *result.Case, a *result.Attempt) string { return c.Name }
		res, err := Run(context.Background(), loadYAML(t, src.String()), opts)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, c := range res.Files[0].Cases {
			a := c.Last()
			if c.Status != result.Passed {
				t.Errorf("%s: %s, want passed%s", c.Name, c.Status, describe(c))
				continue
			}
			if a.ConversationID != c.Name {
				t.Errorf("%s: in conversation %q, want the name it asked for", c.Name, a.ConversationID)
			}
			if m := refRE.FindStringSubmatch(a.Turns[len(a.Turns)-1].Reply().Response); m != nil {
				out[c.Name] = m[1]
			}
		}
		return out
	}
	forward := refs("books-a", "books-b", "books-c")
	backward := refs("books-c", "books-b", "books-a")
	seen := map[string]bool{}
	for _, name := range names {
		if forward[name] == "" || forward[name] != backward[name] {
			t.Errorf("%s: reference %q joined in order, %q in reverse order", name, forward[name], backward[name])
		}
		seen[forward[name]] = true
	}
	if len(seen) != len(names) {
		t.Errorf("%d different references, want %d: %v", len(seen), len(names), forward)
	}
}

// TestMessagingScenarioConversationIDNotSent: a scenario's conversation_id
// is not sent over messaging (lint warns so): the platform names the
// conversation, or, on the embedded simulator of agenttest compare, the
// name Options.ConversationIDs gives.
func TestMessagingScenarioConversationIDNotSent(t *testing.T) {
	t.Parallel()
	const src = `suite: web chat
agent: utility-billing
via: messaging
start: {conversation_id: mine}
scenarios:
  - name: greets
    greeting: {response: {contains: Northwind}}
`
	for _, tc := range []struct {
		name, named, want string
	}{
		{"platform names it", "", "conv-"},
		{"ConversationIDs names it", "cmp-greets", "cmp-greets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newMsgEnv(t, sim.Options{Seed: 1})
			opts := e.opts(t)
			if tc.named != "" {
				opts.ConversationIDs = func(*result.Case, *result.Attempt) string { return tc.named }
			}
			c := runOne(t, opts, src)
			if id := c.Last().ConversationID; c.Status != result.Passed || !strings.HasPrefix(id, tc.want) || strings.Contains(id, "mine") {
				t.Errorf("%s in conversation %q, want passed in %s…", c.Status, id, tc.want)
			}
		})
	}
}

// TestMessagingInterruptedWhileRateLimited: a run interrupted while a
// Messaging handshake waits out a 429's Retry-After (the opening's, or a
// reconnect's within a turn) ends at once, not after the wait: the case
// is interrupted (pending, no verdict), as every call an interrupt cuts
// short, not errored nor retried.
func TestMessagingInterruptedWhileRateLimited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		drops  bool // the socket drops at every client event
		refuse func(n int64) bool
		// turns is the number of calls the attempt made: the opening's,
		// and the turn's when it is the turn that waits.
		turns int
	}{
		{name: "the opening's", refuse: func(n int64) bool { return n == 1 }, turns: 1},
		// The join's reconnect (the second handshake) goes through.
		{name: "a turn's reconnect", drops: true, refuse: func(n int64) bool { return n == 3 }, turns: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, o := bookingEnv(t, tc.drops)
			o.AfterFunc = e.clk.AfterFunc
			ctx, interrupt := context.WithCancel(context.Background())
			defer interrupt()
			// The Retry-After is waited until the run is interrupted.
			asked := make(chan time.Duration, 1)
			wait := func(ctx context.Context, d time.Duration) error {
				if d < time.Hour {
					return e.clk.Sleep(ctx, d)
				}
				select {
				case asked <- d:
				default:
				}
				<-ctx.Done()
				return ctx.Err()
			}
			cfg := platform.Config{Now: e.clk.Now, AfterFunc: e.clk.AfterFunc, Retry: platform.RetryPolicy{Sleep: wait}, RateWait: 2 * time.Hour}
			var handshakes *atomic.Int64
			o.Messaging, handshakes = refusingMessaging(t, e, cfg, MessagingOptions{}, http.StatusTooManyRequests, "3600", tc.refuse)
			done := make(chan *result.Result, 1)
			go func() {
				res, err := Run(ctx, loadYAML(t, bookingSuite), o)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			<-asked
			interrupt()
			var res *result.Result
			select {
			case res = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the run did not end once interrupted")
			}
			c := res.Files[0].Cases[0]
			a := c.Last()
			if c.Status != result.Pending || c.SkipReason != result.ReasonInterrupted || !res.Interrupted || len(c.Attempts) != 1 ||
				a.Error == nil || a.Error.Kind != result.KindInterrupted {
				t.Errorf("status %s (%s) after %d attempts, run interrupted %t, error %+v: want the case interrupted%s",
					c.Status, c.SkipReason, len(c.Attempts), res.Interrupted, a.Error, describe(c))
			}
			if len(a.Turns) != tc.turns {
				t.Errorf("%d calls, want %d", len(a.Turns), tc.turns)
			}
			if n := handshakes.Load(); !tc.refuse(n) {
				t.Errorf("%d handshakes: one after the refused", n)
			}
		})
	}
}

// TestMessagingRefusesTheClientsTag: over messaging, agenttest tags each
// client event with metadata.custom.agenttest_id; a scenario's own
// member of that name, a turn's metadata key or an integration
// attribute, was replaced by the tag without a word, and the agent read
// agenttest's id. It is the scenario's configuration error, at once.
func TestMessagingRefusesTheClientsTag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, scenario, want string }{
		{"turn metadata", `
    turns:
      - say: hi
        metadata: {agenttest_id: mine}
        expect: {response: {contains: a}}`, `user input metadata key "agenttest_id": agenttest tags each web chat event`},
		{"integration attribute", `
    start: {integration_attributes: {agenttest_id: mine}}
    turns:
      - say: hi
        expect: {response: {contains: a}}`, `integration attribute "agenttest_id": agenttest tags each web chat event`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newMsgEnv(t, sim.Options{Seed: 1})
			c := runOne(t, e.opts(t), "suite: tag\nagent: utility-billing\nvia: messaging\nscenarios:\n  - name: n"+tc.scenario+"\n")
			a := c.Deciding()
			if c.Status != result.Errored || a == nil || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, tc.want) {
				t.Errorf("%s%s, want a configuration error %q", c.Status, describe(c), tc.want)
			}
		})
	}
}
