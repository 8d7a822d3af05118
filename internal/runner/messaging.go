package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/steps"
)

// The Messaging channel: a conversation is a Messaging session (access
// token, session, WebSocket, history batch, join), each turn one user
// message and the events until the answer is complete. The platform
// client does the protocol, reconnects included (a dropped socket is
// reopened with the session and the last cursor, replayed events are
// de-duplicated by id, the join is never sent twice): a drop it recovered
// from is no error here, only a count on the turn.

// MessagingOpener opens Messaging conversations; *platform.Client does,
// with its connector token and host.
type MessagingOpener interface {
	OpenMessaging(ctx context.Context, st platform.MessagingStart) (*platform.MessagingSession, error)
}

var _ MessagingOpener = (*platform.Client)(nil)

// MessagingConnector returns the opener of the connector of an agent in an
// environment: on the platform a connector belongs to one agent and
// environment, and the conversation runs where its connector points. An
// error says why there is none (it is a configuration problem: the
// scenario errors without retries).
type MessagingConnector func(agent, env string) (MessagingOpener, error)

// MessagingOptions configure the Messaging channel. Zero fields take the
// client's defaults.
type MessagingOptions struct {
	// Streaming asks for streamed replies (streaming_enabled) in the
	// conversations of scenarios that do not say (streaming:,
	// @streaming:, "Given the replies are streamed").
	Streaming bool
	// TurnTimeout bounds each answer, as the runner's TurnTimeout bounds
	// each call. When the client's timer fires first (a shorter
	// TurnTimeout, or the runner's moved out by rate-limit waits), the
	// case errors as a timeout naming it, as when the runner's fires.
	TurnTimeout time.Duration
	// Settle completes an answer after this much quiet on platforms
	// without typing indicators (platform.DefaultMessagingSettle).
	Settle time.Duration
	// MaxReconnects bounds the reconnects within one turn
	// (platform.DefaultMessagingReconnects).
	MaxReconnects int
	// Quiet is how long the agent may go on after its typing indicator
	// went off with an answer (the target's messaging_quiet;
	// platform.MessagingStart.Quiet). 0 completes the answer when the
	// indicator goes off.
	Quiet time.Duration
}

// CheckQuiet refuses a Quiet that is not shorter than the turn timeout
// (TurnTimeout, else the client's default): the quiet is waited within
// each turn, after its answer, so every answer would wait it out and
// time out, whatever the agent said.
func (o MessagingOptions) CheckQuiet() error {
	if limit := cmp.Or(o.TurnTimeout, platform.DefaultMessagingTurnTimeout); o.Quiet >= limit {
		return fmt.Errorf("messaging_quiet %s is not shorter than the turn timeout of %s: every web chat answer would wait it out and time out", o.Quiet, limit)
	}
	return nil
}

// Messaging is the Messaging channel over the connectors connector gives.
func Messaging(connector MessagingConnector, o MessagingOptions) Channel {
	return messagingChannel{connector: connector, opts: o}
}

type messagingChannel struct {
	connector MessagingConnector
	opts      MessagingOptions
}

// streamingChannel is a channel that can ask for streamed replies: the
// Messaging channel.
type streamingChannel interface {
	Channel
	// withStreaming is the channel asking for streamed replies, or not.
	withStreaming(on bool) streamingChannel
	// streams says whether the channel asks for streamed replies.
	streams() bool
}

var _ streamingChannel = messagingChannel{}

func (mc messagingChannel) withStreaming(on bool) streamingChannel {
	mc.opts.Streaming = on
	return mc
}

func (mc messagingChannel) streams() bool { return mc.opts.Streaming }

// Open opens a session of the agent's connector in req.ClientEnv and
// joins: the greeting is the join's answer. The integration attributes
// travel as the custom metadata of the client events (the platform
// echoes them; the join's are the conversation's attributes).
// req.ConversationID, set only by Options.ConversationIDs, names the
// session's conversation on the embedded simulator
// (platform.MessagingStart.ConversationID).
func (mc messagingChannel) Open(ctx context.Context, agentID string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	opener, err := mc.connector(agentID, req.ClientEnv)
	if err != nil {
		return nil, nil, err
	}
	m, err := opener.OpenMessaging(ctx, platform.MessagingStart{
		Streaming:      mc.opts.Streaming,
		Custom:         req.IntegrationAttributes,
		ConversationID: req.ConversationID,
		TurnTimeout:    mc.opts.TurnTimeout,
		Settle:         mc.opts.Settle,
		MaxReconnects:  mc.opts.MaxReconnects,
		Quiet:          mc.opts.Quiet,
	})
	if m == nil {
		return nil, nil, err
	}
	exch := exchangeOf(m, m.Opening(), "")
	if err != nil && !errors.Is(err, platform.ErrMessagingEnded) {
		_ = m.Close()
		return nil, exch, err
	}
	// An end read before the join went out (ErrMessagingEnded) is the
	// opening's answer, as an end in the history batch or one that
	// answers the join is: which of them the client reads is a race
	// between its goroutines, and the greeting is judged alike by the
	// end's reason (systemError).
	return &messagingConversation{m: m}, exch, nil
}

// messagingConversation is an open Messaging session.
type messagingConversation struct{ m *platform.MessagingSession }

// Send sends the user message (user input metadata as its custom
// metadata) and returns the answer. A session the platform ended before
// the turn (an expiry between turns) is a *messagingError; one its agent
// ended, an *endedError.
func (c *messagingConversation) Send(ctx context.Context, req platform.ChatTurn) (*platform.Exchange, error) {
	t, err := c.m.Send(ctx, platform.MessagingMessage{Text: req.Message, Custom: req.Metadata})
	exch := exchangeOf(c.m, t, req.Message)
	if errors.Is(err, platform.ErrMessagingEnded) {
		_, reason := c.m.Ended()
		if !platformEnd(reason) {
			// The agent ended it (its end arrived after the last turn
			// settled): talking on is the scenario's failure, as it is
			// when the end came with the last turn.
			return exch, &endedError{reason: reason}
		}
		err = &messagingError{msg: "the platform ended the session before this turn" + because(reason), retry: true}
	}
	return exch, err
}

// AwaitEnd gives the session's end the time to arrive after the answer of
// the last turn, whose checks expect it (platform.MessagingSession.AwaitEnd),
// and returns that turn again, with the end when it came.
func (c *messagingConversation) AwaitEnd(ctx context.Context, userInput string) (*platform.Exchange, error) {
	t, err := c.m.AwaitEnd(ctx)
	return exchangeOf(c.m, t, userInput), err
}

// exchangeOf is turn t of session m as the runner reads a reply (nil for
// no turn), with the session's state: whether the agent joined, and the
// host that answered.
func exchangeOf(m *platform.MessagingSession, t *platform.MessagingTurn, userInput string) *platform.Exchange {
	if t == nil {
		return nil
	}
	exch := t.Exchange(m.SessionID(), m.ConversationID(), userInput)
	exch.Messaging.Joined, exch.Host = m.Joined(), m.Host()
	exch.Messaging.JoinedAgent, exch.Messaging.JoinedEnv = m.JoinedAs()
	return exch
}

// joinedElsewhere errors the attempt when the joined event of a Messaging
// conversation names another agent or environment than the scenario's
// (elsewhere, the rule of the probes), and reports whether it did. A
// connector token belongs to one agent in one environment and the
// conversation runs where it points, whatever the scenario says: the
// target's connector for this agent and environment is another's, and
// that agent's answers would pass or fail this scenario's checks. A
// configuration error, not retried: every session opens with the same
// token. A platform whose joined event names neither cannot be held to
// this (docs/configuration.md, section Messaging).
func (s *Session) joinedElsewhere(m *reply.Messaging) bool {
	where := s.elsewhere(m.JoinedAgent, m.JoinedEnv)
	if where == "" {
		return false
	}
	at := s.params.ViaPos
	if at.IsZero() {
		at = s.sc.Pos
	}
	s.errored(&result.Error{Pos: at, Kind: result.KindConfig, Message: fmt.Sprintf(
		"start: the platform's joined event says the web chat's conversation runs in %s: a conversation over messaging runs in the agent and environment of its connector token, so the token sent is not the connector of agent %s in %s (check the target's connector for it: connectors.%s, or connector_token)",
		where, s.c.Agent, s.c.Env, s.c.Agent)})
	return true
}

// endAwaiter is a Conversation whose end may arrive after a turn's
// answer: Messaging's.
type endAwaiter interface {
	AwaitEnd(ctx context.Context, userInput string) (*platform.Exchange, error)
}

var _ endAwaiter = (*messagingConversation)(nil)

// endedError is a turn sent to a Messaging session that its agent (or a
// live agent) had ended, for a reason that is not the platform's
// (platformEnd).
type endedError struct{ reason string }

func (e *endedError) Error() string { return e.before("this turn") }

// before says that the session ended before turn.
func (e *endedError) before(turn string) string {
	return "the session ended before " + turn + because(e.reason)
}

// Close closes the socket. The session stays on the platform until it
// ends or expires, as when a user closes the chat window.
func (c *messagingConversation) Close() error { return c.m.Close() }

// because renders an end reason: " (reason expired)", or "".
func because(reason string) string {
	if reason == "" {
		return ""
	}
	return " (reason " + reason + ")"
}

// messagingError is a Messaging session that broke without a transport
// error: an error system message nothing expected, an agent that never
// joined, a session the platform ended. retry says whether a fresh
// session could do better.
type messagingError struct {
	msg   string
	retry bool
	// config: the reference names the message a configuration problem
	// (configSystem), not the platform's.
	config bool
}

func (e *messagingError) Error() string { return e.msg }

// permanentSystem are the error system messages of the reference that a
// fresh session would meet again: agenttest sent something the platform
// does not accept, or the connector or the handoff is misconfigured.
var permanentSystem = append(append(slices.Clip(typeRefused), configSystem...), "Sorry, handoff could not be initiated.")

// configSystem are the error system messages the reference gives as a
// configuration problem ("connector invalid; configuration problem"):
// the target's, as a refused connector token is, not the platform's.
var configSystem = []string{"Error: Connector not found"}

// typeRefused are the reference's answers to a client event whose type the
// platform does not take.
var typeRefused = []string{"Unknown event type or invalid message format", "Event type not allowed"}

// systemError is the error of a turn whose answer was an error system
// message that no check of the turn claims (claims), or that the platform
// ended for a reason of its own; nil when there is none. The opening is an
// error too when the agent did not join.
func systemError(m *reply.Messaging, opening bool, claims func(reply.SystemMessage) bool) *messagingError {
	if m == nil {
		return nil
	}
	var errs []reply.SystemMessage
	for _, s := range m.Errors() {
		if !claims(s) {
			errs = append(errs, s)
		}
	}
	if len(errs) == 0 {
		switch {
		case m.SessionEnded && platformEnd(m.EndReason):
			return &messagingError{msg: "the platform ended the session" + because(m.EndReason), retry: true}
		case opening && !m.Joined && !m.SessionEnded && len(m.Errors()) == 0:
			return &messagingError{msg: "the agent did not join the conversation: no joined event answered the join request", retry: true}
		}
		return nil
	}
	texts := make([]string, len(errs))
	for i, s := range errs {
		texts[i] = fmt.Sprintf("%q", s.Text)
	}
	retry := !oneOf(errs, permanentSystem)
	msg := "the platform answered with an error system message: " + strings.Join(texts, ", ")
	if opening && !m.Joined && m.Brand != "" && oneOf(errs, typeRefused) {
		msg += fmt.Sprintf(" (the join request went as %s: a platform whose brand word is not %s refuses it; set the target's brand:)",
			reply.BrandEventType(reply.EventTypeJoinRequest, m.Brand), m.Brand)
	}
	if m.SessionEnded {
		msg += ", and ended the session" + because(m.EndReason)
	}
	config := oneOf(errs, configSystem)
	if config {
		msg += " (the reference: the connector is invalid, a configuration problem: check the connector token of the agent and environment)"
	}
	return &messagingError{msg: msg, retry: retry, config: config}
}

// oneOf says whether one of errs is one of the reference's messages
// (permanentSystem, typeRefused): its text starts with one of them, as a
// message may name what it refused after them.
func oneOf(errs []reply.SystemMessage, messages []string) bool {
	for _, s := range errs {
		for _, p := range messages {
			if strings.HasPrefix(s.Text, p) {
				return true
			}
		}
	}
	return false
}

// platformEnd says whether a session end reason is the platform's doing
// (an expiry, an internal error) rather than the agent's, the live
// agent's or the user's. The reference does not name the reasons; these
// are the simulator's (expired, error) and the plausible spellings of
// other implementations.
func platformEnd(reason string) bool {
	r := strings.ToLower(reason)
	for _, w := range []string{"expire", "timeout", "timed_out", "inactiv", "idle"} {
		if strings.Contains(r, w) {
			return true
		}
	}
	return r == "error" || r == "internal_error"
}

// claimsSystem returns whether the checks that follow st expect a system
// message (assert.Expect.ClaimsSystemMessage): those of the opening when
// greeting (st opened the conversation: every check before the first turn
// is on the greeting), else those of the turn st sent. Only then is an
// error system message part of what the scenario tests rather than a
// platform failure.
func (s *Session) claimsSystem(st *steps.Step, greeting bool) func(reply.SystemMessage) bool {
	return func(sm reply.SystemMessage) bool {
		return s.checksAfter(st, greeting, func(e *assert.Expect) bool { return e.ClaimsSystemMessage(sm, s.expand) })
	}
}

// untilEnd gives the session's end the time to arrive after exch, the
// answer of step st (the greeting when greeting, else the turn st sent),
// when a check of that answer expects the conversation to end with it
// (assert.Expect.ExpectsEnd): a platform may send the end after its
// typing indicator went off, and it is still this answer's
// (platform.MessagingSession.AwaitEnd). It returns that answer again,
// with the end when it came. Any other answer, and an error, pass
// through.
func (s *Session) untilEnd(ctx context.Context, st *steps.Step, greeting bool, userInput string, exch *platform.Exchange, err error) (*platform.Exchange, error) {
	ea, ok := s.conv.(endAwaiter)
	if !ok || err != nil || exch == nil || exch.Messaging == nil || exch.Messaging.SessionEnded ||
		!s.checksAfter(st, greeting, (*assert.Expect).ExpectsEnd) {
		return exch, err
	}
	return ea.AwaitEnd(ctx, userInput)
}

// checksAfter reports whether one of the checks of the reply of step st
// holds has: the greeting's when greeting, else the turn's that st sends.
func (s *Session) checksAfter(st *steps.Step, greeting bool, has func(*assert.Expect) bool) bool {
	program := s.sc.Steps
	i := slices.Index(program, st)
	if i < 0 {
		return false
	}
	from := i + 1
	switch {
	case greeting && st.Kind == steps.Check:
		from = i
	case greeting && st.Kind != steps.Open:
		// A turn opened the conversation: nothing checks the greeting.
		return false
	}
	for _, next := range program[from:] {
		switch {
		case next.Kind == steps.Capture:
			continue
		case next.Kind != steps.Check || (!greeting && next.Greeting):
			return false
		}
		if exp, err := next.Expect(keepRefs); err == nil && has(exp) {
			return true
		}
	}
	return false
}

// keepRefs expands nothing: the checks are only looked at.
func keepRefs(s string) (string, error) { return s, nil }

// viaAllows refuses a check the reply's channel cannot answer: debug-chat
// metadata of a Messaging turn. The loaders report it before the run; this
// guards steps handed over one at a time (godog).
func (s *Session) viaAllows(st *steps.Step, exp *assert.Expect, on *platform.Exchange) bool {
	if on == nil || on.Messaging == nil {
		return true
	}
	keys := exp.DebugChatOnly()
	if len(keys) == 0 {
		return true
	}
	fix := "check the record with confirm: instead"
	if keys[0].Key == "delayed" {
		fix = "test it in a scenario over debug_chat"
	}
	s.errored(&result.Error{Pos: keys[0].Pos, Kind: result.KindConfig,
		Message: prefixed(st.Text, assert.NotOverMessaging(keys[0].Key)+"; "+fix)})
	return false
}

// MessagingClients is a MessagingConnector over the platform client: one
// *platform.Client per connector token (a client holds one), made on
// first use from base with the token that token names for the agent and
// environment. The clients share base's HTTP client, so their calls and
// sockets share one connection pool.
func MessagingClients(base platform.Config, token func(agent, env string) (string, error)) MessagingConnector {
	var (
		mu      sync.Mutex
		clients = map[string]*platform.Client{}
	)
	return func(agent, env string) (MessagingOpener, error) {
		tok, err := token(agent, env)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if c, ok := clients[tok]; ok {
			return c, nil
		}
		cfg := base
		cfg.ConnectorToken = tok
		c, err := platform.New(cfg)
		if err != nil {
			return nil, err // platform.New names no key
		}
		clients[tok] = c
		return c, nil
	}
}
