package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/secret"
)

// The Messaging API (reference, "Messaging API"): a connector token and
// host exchanged for a JWT, a session, then a WebSocket carrying an event
// log. One MessagingSession is one conversation, driven by one goroutine:
//
//	m, err := c.OpenMessaging(ctx, platform.MessagingStart{Streaming: true})
//	if m != nil { defer m.Close() }
//	if err != nil { ... }                   // m.Opening() holds what arrived
//	turn, err := m.Say(ctx, "a table for two")
//	// turn.Reply, turn.Events, turn.System, turn.SessionEnded, turn.Handoff
//
// # Completion
//
// An answer is complete at the first of:
//   - a session end event;
//   - the end of the agent's typing indicator (typing false, or a
//     *_TYPING_STOP-style event) once the turn has an answer: a complete
//     agent or live-agent message, or an error-level system message;
//     with MessagingStart.Quiet set, that much time after it without a
//     new event (one restarts the wait, a typing indicator that comes on
//     again holds it until it goes off again), for an agent that turns
//     its indicator off between the messages of one answer;
//   - MessagingStart.Settle (or Quiet, when longer) without a new event
//     once the turn has an answer while the typing indicator is off (a
//     platform without one, or one that turns it off before the
//     message).
//
// An end that follows the answer (after the typing indicator went off) is
// read by the next exchange, before it sends anything, and that exchange
// returns ErrMessagingEnded; AwaitEnd gives it to the last turn instead,
// for a caller whose turn expects the session to end.
//
// A whole message is complete when it arrives; a streamed one at its final
// chunk (final, is_final, last, done or complete true), at a stream-end
// event naming its message id (one naming none ends the open stream,
// or the one a final chunk just completed), or when a whole message with
// the same id follows its chunks (its text is the message's when it says
// the chunks' words; without text, or with only white space, it only
// completes the stream). A stream end's text stands in for chunks
// without any, and is otherwise held to theirs as a whole message's is
// (contradictedBy); one whose
// text is a delta, on an open stream, is its last piece unless it
// repeats the last chunk or the chunks' words (finalPiece). A message id
// names one message in the session: a whole message or stream end that
// names a message streamed in an earlier turn, sent after that turn was
// complete, is kept out of the turn it arrives in, and held to that
// message's chunks (lateWhole). The turn fails with a *NetworkError after
// MessagingStart.TurnTimeout without a complete answer;
// MessagingTurnTimeout tells it from a connection that failed.
//
// # Reconnects
//
// A dropped socket is reopened with the same session and the cursor of the
// last event seen (the highest numeric seq or id), up to MaxReconnects
// times per turn; replayed events already seen are dropped by id (by seq
// for events without one). Every
// client event carries metadata.custom.agenttest_id, a number unique in
// the session, so that its echo can be recognised. The client event of
// the turn is sent again only when it certainly never arrived: the
// platform echoes client events (seen earlier in the session) and the
// replay holds no echo of this one. The join request is never sent twice
// once the replay shows the agent joined (rule 2).
//
// # What the platform gets wrong
//
// An event that no conversation could mean is the platform's error (a
// *ResponseError of WS /ws), never read into the turn: another
// conversation's event (sameConversation), a conversation id that is no
// string, a frame that is not UTF-8, two events under one id, a log out
// of order (a seq before one received, a chunk after its message was
// complete), a whole message or a stream end that says other words than
// its chunks (in their turn or after it),
// content after the session end. A key that a stream's chunks
// spell between them is masked (maskSpread).
//
// # Closing
//
// Close sends a normal closure and gives the platform messagingCloseGrace
// to answer it, waited on the client's clock (RetryPolicy.Sleep). Past the
// grace it closes the connection under the socket, so a platform that
// never answers the close frame, that stopped reading, or that went away
// holds the caller no longer than the grace, and nothing of the socket
// outlives Close.

// Defaults of MessagingStart.
const (
	// DefaultMessagingTurnTimeout bounds the wait for one answer.
	DefaultMessagingTurnTimeout = 30 * time.Second
	// DefaultMessagingSettle is the quiet time that completes an answer
	// on a platform without typing indicators.
	DefaultMessagingSettle = 300 * time.Millisecond
	// DefaultMessagingReconnects is the most reconnects within one turn.
	DefaultMessagingReconnects = 3
	// maxMessagingFrame bounds one received event; the reference shows
	// no limit, and a history batch of a long session is the largest.
	maxMessagingFrame = 16 << 20
	// maxMessagingTurnBytes and maxMessagingTurnFrames bound what one
	// turn receives, as MaxReplyBytes bounds a debug-chat reply: a
	// platform that floods the socket with events that answer nothing
	// would otherwise fill memory until the turn timeout. A history batch
	// as large as a frame may be, or a reply streamed a token an event,
	// is far within them.
	maxMessagingTurnBytes  = maxMessagingFrame
	maxMessagingTurnFrames = 100_000
	// floodKept is how many events a flooded turn keeps, those of the
	// platform's first words: they show what the flood was, and the
	// rest repeats it. The turn errors, and its events stay in the
	// run's result and its JSON report until the run ends: all of them,
	// a turn took some 20 MB of memory and 28 MB of report, so a
	// platform that floods every session (a typing indicator stuck in a
	// loop) exhausted memory within a few hundred scenarios, and the
	// reports of the run were never written.
	floodKept = 1000
	// clientIDKey is the metadata.custom member that tags each client
	// event, so its echo can be recognised after a reconnect.
	clientIDKey = reply.ClientIDKey
	// messagingCloseGrace bounds Close. The close handshake is one round
	// trip (our close frame out, the platform's back): tens of
	// milliseconds, a few hundred across the world or through a proxy, so
	// a platform that has not answered within a second will not answer.
	// The library's own bounds are 5 s to write the frame and 5 s more for
	// the answer, and Close runs at the end of every Messaging attempt in
	// the worker of the case: past the verdict, every second is a
	// worker's second lost per scenario.
	messagingCloseGrace = time.Second
	// maxAccessToken bounds the access token the platform issues. It
	// travels in the session step's Authorization header and in the
	// request line of the handshake, which web servers and proxies cap
	// at 8 to 16 KiB (nginx and Apache at 8 KiB): a longer one reaches
	// no socket through them. And the session masks it in every form
	// (setJWT), which costs a few hundred bytes of memory per byte of
	// the token: a hostile answer of a token as long as a body may be
	// (16 MiB) would take gigabytes per session.
	maxAccessToken = 16 << 10
)

// MessagingStart configures one messaging conversation.
type MessagingStart struct {
	// Streaming asks for streamed replies (streaming_enabled).
	Streaming bool
	// Custom is sent as metadata.custom with every client event (the
	// platform echoes it); per-message values add to it.
	Custom map[string]any
	// ConversationID, when set, is sent as conversation_id in the body of
	// the session call, which the reference's body does not have: the
	// embedded simulator names the conversation its agent's join opens
	// with it and seeds that conversation's draws with it, as debug
	// chat's conversationId does. Set it for the simulator only.
	ConversationID string
	// TurnTimeout bounds each answer, the join's included, leaving out
	// the rate-limit waits of its handshakes (turnContext). Default
	// DefaultMessagingTurnTimeout. It and Settle run on the client's
	// timers (Config.AfterFunc).
	TurnTimeout time.Duration
	// Settle completes an answer after this much quiet on platforms
	// without typing indicators. Default DefaultMessagingSettle.
	Settle time.Duration
	// Quiet is how long the agent may go on after its typing indicator
	// went off with an answer: the answer is complete only after this
	// much time without a new event. 0, the default, completes it when
	// the indicator goes off. A Quiet longer than Settle stands in for
	// it too: a user who says the agent may pause that long means it on
	// a platform without a typing indicator as well.
	Quiet time.Duration
	// MaxReconnects bounds the reconnects within one turn. Default
	// DefaultMessagingReconnects; negative turns reconnects off.
	MaxReconnects int
	// Events names the client events; zero fields take the defaults.
	Events MessagingClientEvents
}

// MessagingClientEvents are the names of the client events the client
// sends. The reference names only the join request; the others default to
// the simulator's choices (docs/simulator.md).
type MessagingClientEvents struct {
	// Join defaults to EVENT_TYPE_REQUEST_<BRAND>_AGENT_JOIN.
	Join string
	// UserMessage (payload {text}) defaults to EVENT_TYPE_USER_MESSAGE.
	UserMessage string
	// RequestLiveAgent (payload {reason}) defaults to
	// EVENT_TYPE_REQUEST_LIVE_AGENT.
	RequestLiveAgent string
	// EndSession defaults to EVENT_TYPE_END_SESSION.
	EndSession string
}

// MessagingMessage is one user message.
type MessagingMessage struct {
	// Text is the message; empty is allowed (a silence).
	Text string
	// Custom adds to MessagingStart.Custom for this message.
	Custom map[string]any
}

// ErrMessagingEnded is returned by the calls that need a live session
// after the session ended.
var ErrMessagingEnded = errors.New("messaging session has ended")

// validateMessaging checks the messaging settings when any is given.
func (c Config) validateMessaging() error {
	var errs []error
	if c.MessagingURL != "" {
		if err := checkURL("messaging URL", c.MessagingURL, CheckMessagingURL, c.AllowHTTP); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MessagingSocketURL != "" {
		if err := checkURL("messaging socket URL", c.MessagingSocketURL, checkMessagingForm, c.AllowHTTP); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// messagingURLs derives the HTTP base and the WebSocket URL; both are
// empty when MessagingURL is.
func (c Config) messagingURLs() (*url.URL, string) {
	if c.MessagingURL == "" {
		return nil, ""
	}
	u, err := url.Parse(strings.TrimRight(c.MessagingURL, "/"))
	if err != nil {
		return nil, ""
	}
	ws := "ws"
	if u.Scheme == "https" || u.Scheme == "wss" {
		u.Scheme, ws = "https", "wss"
	} else {
		u.Scheme = "http"
	}
	socket := c.MessagingSocketURL
	if socket == "" {
		// The reference: wss://{messaging_host}/ws, the host alone.
		socket = ws + "://" + u.Host + "/ws"
	}
	return u, socket
}

// The Messaging API's HTTP steps. Both may be repeated safely: a second
// token or an unused session is all a retry can leave behind.
var (
	epAccessToken = endpoint{"POST", "/api/v1/access-token", messagingHost, authConnector, retrySession}
	epMsgSession  = endpoint{"POST", "/api/v1/sessions", messagingHost, authBearer, retrySession}
	// epSocket is the socket, its handshake included: one name in every
	// error of the session (first handshake, reconnect, mid-turn), as a
	// user cannot tell the GET that carries a handshake from the socket
	// it opens. The handshake is a read (it changes nothing) for retries.
	epSocket = endpoint{"WS", "/ws", messagingHost, authBearer, retryRead}
)

// MessagingSession is one conversation over the Messaging API. It is not
// safe for concurrent use: one goroutine drives it, and cancels a turn
// through its context.
type MessagingSession struct {
	c      *Client
	start  MessagingStart
	events MessagingClientEvents
	forms  *eventForms // shared by the client's sessions
	limits messagingLimits

	jwt       string
	red       *secret.Redactor // the keys, the JWT and its signature
	sessionID string

	conn *websocket.Conn
	// under is the connection under conn (the handshake's response
	// body): closing it ends whatever the library waits on.
	under  io.Closer
	frames *frameQueue // from the current connection's reader
	quit   chan struct{}
	// dropped is the error of a socket that failed between turns; the
	// next send reconnects first.
	dropped error

	seen        map[string]uint64 // event id (or seq:N) -> MessagingEvent.print
	logged      int64             // the highest seq member received
	cursor      int64
	turns       []*MessagingTurn
	last        *MessagingTurn // the turn of the last exchange
	opening     *MessagingTurn
	joined      bool
	joinedAgent string // JoinedAs
	joinedEnv   string
	echoes      bool // the platform echoes client events
	// echoesMessages: the platform echoed a user message of this
	// session, so a user message's answer comes after its echo.
	echoesMessages bool
	typingOn       bool // the agent's typing indicator is on
	ended          bool
	endReason      string
	conversationID string
	nextID         int
	reconnects     int
	closed         bool
}

// inbound is a frame or the error that ended a connection.
type inbound struct {
	data []byte
	err  error
}

// frameQueue carries a connection's frames from its reader to the
// session, bounded in bytes as well as in frames: the reader holds a
// frame back while it would take the frames queued before it, not yet
// taken, past limit bytes (a frame into an empty queue always goes), so
// the socket waits in the network instead. A
// platform that pushed frames of the largest size while no turn read
// them would otherwise have the client hold 64 of 16 MiB each, a session.
type frameQueue struct {
	ch    chan inbound
	limit int64
	// space is signalled when a frame is taken; queued is the bytes of
	// the frames in ch and of the one the reader is about to send.
	space  chan struct{}
	mu     sync.Mutex
	queued int64
}

func newFrameQueue(limit int64) *frameQueue {
	return &frameQueue{ch: make(chan inbound, 64), limit: limit, space: make(chan struct{}, 1)}
}

// put sends in once the queue has room for it (one frame always has),
// and reports false when quit closed first.
func (q *frameQueue) put(in inbound, quit <-chan struct{}) bool {
	for !q.reserve(int64(len(in.data))) {
		select {
		case <-q.space:
		case <-quit:
			return false
		}
	}
	select {
	case q.ch <- in:
		return true
	case <-quit:
		return false
	}
}

// reserve counts n bytes into the queue when it has room for them, and
// reports whether it had.
func (q *frameQueue) reserve(n int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued > 0 && q.queued+n > q.limit {
		return false
	}
	q.queued += n
	return true
}

// took is called with each frame received from ch: its bytes leave the
// queue.
func (q *frameQueue) took(in inbound) inbound {
	q.mu.Lock()
	q.queued -= int64(len(in.data))
	q.mu.Unlock()
	select {
	case q.space <- struct{}{}:
	default:
	}
	return in
}

// OpenMessaging runs the opening of a conversation: access token,
// session, socket, history batch and, unless the history shows the agent
// joined, the join request, whose answer (the greeting) is Opening(). The
// session is returned whenever it was created, also with an error, so the
// caller can read what arrived and must Close it.
func (c *Client) OpenMessaging(ctx context.Context, st MessagingStart) (*MessagingSession, error) {
	var problems []string
	if c.messaging == nil {
		problems = append(problems, "the messaging URL is not configured")
	}
	if c.cfg.ConnectorToken == "" {
		problems = append(problems, "the connector token is not configured")
	}
	if c.cfg.MessagingHost == "" {
		problems = append(problems, "the messaging host (X-Host) is not configured")
	}
	if err := ownCustom("integration attribute", st.Custom); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("open messaging: %s", strings.Join(problems, "; "))
	}
	m := newMessagingSession(c, st)
	jwt, err := c.messagingToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("open messaging: %w", err)
	}
	m.setJWT(jwt)
	if m.sessionID, err = m.createSession(ctx); err != nil {
		return nil, fmt.Errorf("open messaging: %w", err)
	}
	m.opening = &MessagingTurn{Started: c.now(), brand: c.cfg.Brand}
	if err := m.connect(ctx, m.opening, nil); err != nil {
		return m, fmt.Errorf("open messaging session %s: %w", m.sessionID, err)
	}
	if m.joined || m.ended {
		return m, nil
	}
	turn, err := m.exchange(ctx, m.events.Join, map[string]any{}, nil, m.opening)
	m.opening = turn
	if err != nil {
		return m, fmt.Errorf("open messaging session %s: join: %w", m.sessionID, err)
	}
	return m, nil
}

func newMessagingSession(c *Client, st MessagingStart) *MessagingSession {
	if st.TurnTimeout <= 0 {
		st.TurnTimeout = DefaultMessagingTurnTimeout
	}
	if st.Settle <= 0 {
		st.Settle = DefaultMessagingSettle
	}
	if st.MaxReconnects == 0 {
		st.MaxReconnects = DefaultMessagingReconnects
	}
	forms := c.messagingForms()
	ev := st.Events
	if ev.Join == "" {
		ev.Join = forms.join
	}
	if ev.UserMessage == "" {
		ev.UserMessage = reply.EventTypeUserMessage
	}
	if ev.RequestLiveAgent == "" {
		ev.RequestLiveAgent = reply.EventTypeRequestLiveAgent
	}
	if ev.EndSession == "" {
		ev.EndSession = reply.EventTypeEndSession
	}
	return &MessagingSession{c: c, start: st, events: ev, forms: forms, limits: c.msgLimits.orDefaults(), seen: map[string]uint64{}, quit: make(chan struct{})}
}

// settle is the quiet that completes an answer while the typing
// indicator is off without having gone off after it: Settle, or Quiet
// when longer.
func (m *MessagingSession) settle() time.Duration { return max(m.start.Settle, m.start.Quiet) }

// Host is the host (host:port) of the Messaging API the session talks
// to.
func (m *MessagingSession) Host() string { return m.c.hostOf(m.socketCall()) }

// SessionID is the platform's session id (not a secret).
func (m *MessagingSession) SessionID() string { return m.sessionID }

// ConversationID is the conversation id the session's events name (the
// joined event's), or "".
func (m *MessagingSession) ConversationID() string { return m.conversationID }

// Opening is the opening turn: the history batch and the join's answer.
func (m *MessagingSession) Opening() *MessagingTurn {
	m.opening.finishReply()
	return m.opening
}

// Joined reports whether the agent joined (now or in the history).
func (m *MessagingSession) Joined() bool { return m.joined }

// JoinedAs is the agent (project) and the environment the first joined
// event that names them says joined, as sent ("" for one it does not
// name): where the connector token opened the conversation, whatever the
// client asked for.
func (m *MessagingSession) JoinedAs() (agent, env string) { return m.joinedAgent, m.joinedEnv }

// Ended reports whether a session end event arrived, and its reason.
func (m *MessagingSession) Ended() (bool, string) { return m.ended, m.endReason }

// Events returns every event of the session so far, without duplicates,
// in arrival order: the events of its turns.
func (m *MessagingSession) Events() []MessagingEvent {
	var out []MessagingEvent
	for _, t := range m.turns {
		out = append(out, t.Events...)
	}
	return out
}

// messagingForms returns the event forms of the client's brand, built
// once.
func (c *Client) messagingForms() *eventForms {
	c.formsOnce.Do(func() {
		f := newEventForms(c.cfg.Brand)
		c.forms = &f
	})
	return c.forms
}

// Reconnects is the number of reconnects so far.
func (m *MessagingSession) Reconnects() int { return m.reconnects }

// Say sends a user message and returns its answer.
func (m *MessagingSession) Say(ctx context.Context, text string) (*MessagingTurn, error) {
	return m.Send(ctx, MessagingMessage{Text: text})
}

// Send sends a user message with its own custom metadata. On error the
// turn holds what arrived.
func (m *MessagingSession) Send(ctx context.Context, msg MessagingMessage) (*MessagingTurn, error) {
	if err := ownCustom("user input metadata key", msg.Custom); err != nil {
		return &MessagingTurn{Started: m.c.now(), brand: m.c.cfg.Brand}, fmt.Errorf("messaging session %s: %w", m.sessionID, err)
	}
	return m.exchange(ctx, m.events.UserMessage, map[string]any{"text": msg.Text}, msg.Custom, nil)
}

// ownCustom refuses a custom metadata member of the scenario's (what: an
// integration attribute, a turn's metadata key) named as the client's
// tag of its events, clientIDKey: the tag would replace it in every
// event, unsaid, and the agent would read agenttest's id where the
// scenario meant its own value.
func ownCustom(what string, custom map[string]any) error {
	if _, ok := custom[clientIDKey]; ok {
		return fmt.Errorf("%s %q: agenttest tags each web chat event with a metadata.custom member of that name (its echo tells the run's events apart after a reconnect), which would replace yours: name it otherwise", what, clientIDKey)
	}
	return nil
}

// Join sends the join request again: after an answer that the
// conversation could not start, the reference lets the user retry. It
// refuses once the agent has joined, since a second join is never right.
func (m *MessagingSession) Join(ctx context.Context) (*MessagingTurn, error) {
	if m.joined {
		return nil, fmt.Errorf("messaging session %s: the agent has joined already", m.sessionID)
	}
	return m.exchange(ctx, m.events.Join, map[string]any{}, nil, nil)
}

// RequestLiveAgent asks for a live agent (a client-requested handoff).
func (m *MessagingSession) RequestLiveAgent(ctx context.Context, reason string) (*MessagingTurn, error) {
	payload := map[string]any{}
	if reason != "" {
		payload["reason"] = reason
	}
	return m.exchange(ctx, m.events.RequestLiveAgent, payload, nil, nil)
}

// End asks the platform to end the session and waits for the end event.
func (m *MessagingSession) End(ctx context.Context) (*MessagingTurn, error) {
	return m.exchange(ctx, m.events.EndSession, map[string]any{}, nil, nil)
}

// AwaitEnd gives the session's end the time to arrive after the last
// turn's answer, for a turn that expects the session to end: a platform
// may turn its typing indicator off and only then send the session end
// event (the reference shows no typing indicator, nor an order of the
// two). The last turn takes the events that follow its answer until the
// session ends, the quiet that completes an answer on a platform without
// typing indicators (settle) passes without a new event, or the socket
// drops (the next send reconnects); an end
// arrives then as if with the answer. It returns the last turn (the
// opening, when the agent joined in the history batch and no exchange was
// made; nil before the session opened), and an error only for what the
// platform got wrong or ctx's end (a *NetworkError, as a turn's timeout
// is).
func (m *MessagingSession) AwaitEnd(ctx context.Context) (*MessagingTurn, error) {
	turn := m.last
	if turn == nil {
		// The greeting came in the history batch (Open sent no join): it
		// is the turn whose end is awaited.
		turn = m.opening
	}
	defer turn.finishReply()
	if turn == nil || m.ended || m.closed || m.dropped != nil || m.conn == nil {
		return turn, nil
	}
	var quiet quietTimer
	m.c.setQuiet(&quiet, m.settle())
	defer quiet.Stop()
	for !m.ended {
		select {
		case in := <-m.frames.ch:
			in = m.frames.took(in)
			if in.err != nil {
				m.dropped = in.err
				return turn, nil
			}
			if err := m.accept(in.data, turn, nil); err != nil {
				return turn, err
			}
			m.c.setQuiet(&quiet, m.settle())
		case <-quiet.C():
			if m.framesWaiting() {
				continue
			}
			return turn, nil
		case <-ctx.Done():
			return turn, m.timeout(ctx, "no session end after the answer")
		}
	}
	return turn, nil
}

// Close closes the socket with a normal closure (the session itself stays
// on the platform until it ends or expires). It returns once the platform
// answers the closure, or after messagingCloseGrace on the client's clock
// whatever the platform does; then the connection is closed.
func (m *MessagingSession) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	close(m.quit)
	if m.conn == nil {
		return nil
	}
	m.closeSocket()
	return nil
}

// closeSocket runs the close handshake for at most messagingCloseGrace.
// The wait ends early when the handshake does (the platform answered, or
// the connection is gone).
//
// Past the grace, CloseNow would not help: on a socket whose Close is in
// progress it only waits for that Close to end (coder/websocket v1.8
// close.go: casClosing, then waitGoroutines), on the library's timers.
// Closing the connection under the socket, which the library itself
// closes last, fails at once the write of the close frame (blocked on a
// platform that stopped reading) and every read (the session's reader,
// or the library's wait for the answer), so the library's Close ends
// without waiting on any of its timers, and the reader with it.
func (m *MessagingSession) closeSocket() {
	conn, under := m.conn, m.under
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		// A socket the platform dropped or closed already has nothing
		// left to close: the error says only that.
		_ = conn.Close(websocket.StatusNormalClosure, "")
		close(done)
		cancel() // the grace is over: the platform answered
	}()
	_ = m.c.retry.sleep(ctx, messagingCloseGrace)
	select {
	case <-done:
		return
	default:
	}
	if under != nil {
		_ = under.Close()
	}
	<-done
}

// The names of the access token and the session id in the answers of
// steps 1 and 2: the reference's first, then the camelCase a JavaScript
// implementation writes, then a bare "token". The answer may be bare or
// in an envelope (decodeRecord), as the client reads every other record.
// A bare "id" is not read as the session's: it may be the id of the
// answer, or of the conversation.
var (
	tokenNames   = []string{"access_token", "accessToken", "token"}
	sessionNames = []string{"session_id", "sessionId"}
)

// answerString is the one value of r (read by decodeAnswer) under names:
// a string, or a number as sent (an id sent as one); "" when none is set.
// Two names set to different values are refused rather than one picked
// (what is their plural in the error, "tokens" or "sessions"); the error
// names the members, never their values, which may be secret.
func answerString(r record, what string, names ...string) (string, error) {
	v, first := "", ""
	for _, n := range names {
		var s string
		switch x := r[n].(type) {
		case nil:
			// Absent or null: as an empty string, none.
		case string:
			s = x
		case json.Number:
			s = x.String()
		default:
			return "", fmt.Errorf("field %q: expected a string, got %s", n, jsonType(x))
		}
		switch {
		case s == "" || s == v:
		case v == "":
			v, first = s, n
		default:
			return "", fmt.Errorf("%q and %q name different %s", first, n, what)
		}
	}
	return v, nil
}

// answerTwice is sentTwice over an answer of steps 1 and 2 (body, read by
// decodeAnswer), bare and in its "data" envelope: a token or a session
// sent twice under one name with different values is two at once, of
// which decoding would keep the last, as answerString refuses two under
// two names.
func answerTwice(body []byte, names []string) error {
	if err := sentTwice(body, names); err != nil {
		return err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &env) == nil && bytes.HasPrefix(env.Data, []byte("{")) {
		return sentTwice(env.Data, names)
	}
	return nil
}

// messagingToken is step 1.
func (c *Client) messagingToken(ctx context.Context) (string, error) {
	rq := &call{ep: epAccessToken, path: epAccessToken.template, body: []byte("{}")}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return "", err
	}
	defer resp.release()
	// Decode errors are not shown: they may quote the token.
	tok, problem := "", `no "access_token" string in the answer`
	if r, err := decodeAnswer(resp.body()); err == nil {
		tok, err = answerString(r, "tokens", tokenNames...)
		if err == nil {
			err = answerTwice(resp.body(), tokenNames)
		}
		if err != nil {
			tok = ""
			problem = err.Error()
		}
	}
	switch {
	case tok == "":
	case len(tok) > maxAccessToken:
		problem = fmt.Sprintf(`the "access_token" is %d bytes long, more than the %s a token sent in a header and in the socket's URL can be`,
			len(tok), sizeText(maxAccessToken))
	case strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		// It would go in the session step's Authorization header,
		// which net/http refuses to send: the session step would fail
		// as a connection lost, and be retried for nothing.
		problem = `the "access_token" holds control characters, which an HTTP header cannot carry`
	default:
		return tok, nil
	}
	// The body is withheld: a half-broken answer may still hold a
	// token, and there is no way to know which part to redact.
	return "", &ResponseError{Method: rq.ep.method, Endpoint: rq.ep.template, Path: rq.path, Host: c.hostOf(rq), Status: resp.status,
		Err: errors.New(problem + " (body withheld: it may hold the token)")}
}

// setJWT keeps the access token and adds it to the client's redactor. Of
// a JWT, the signature is masked: it is the secret part (the header and
// claims are readable by design), and every form of the whole token (as
// sent, JSON-escaped, URL-encoded, inside base64) holds its signature in
// the same form, so no usable token can show. Masking the signature alone
// costs a session a fraction of the whole token's forms (BENCHMARKS.md,
// "Messaging through the runner"). An opaque token is masked whole.
func (m *MessagingSession) setJWT(jwt string) {
	m.jwt = jwt
	key := jwt
	if i := strings.LastIndexByte(jwt, '.'); i >= 0 && strings.Count(jwt, ".") == 2 && secret.CheckKey("", jwt[i+1:]) == nil {
		key = jwt[i+1:]
	}
	// A token too short to redact safely is still sent; it is the
	// platform's choice, and masking a short string would garble every
	// report.
	if secret.CheckKey("", key) != nil {
		return
	}
	m.red, _ = m.c.red.With(key)
}

// redactor is the session's redactor: the client's until the access token
// is known.
func (m *MessagingSession) redactor() *secret.Redactor {
	if m.red != nil {
		return m.red
	}
	return m.c.red
}

// redact removes the configured keys and the access token from text.
func (m *MessagingSession) redact(s string) string { return m.redactor().String(s) }

func (m *MessagingSession) redactBytes(b []byte) []byte { return m.redactor().Bytes(b) }

// redactError removes the access token from a typed error of the client.
func (m *MessagingSession) redactError(err error) error {
	var ae *APIError
	var re *ResponseError
	var ne *NetworkError
	switch {
	case errors.As(err, &ae):
		ae.Message, ae.Code, ae.Body = m.redact(ae.Message), m.redact(ae.Code), m.redactBytes(ae.Body)
	case errors.As(err, &re):
		re.Body = m.redactBytes(re.Body)
		re.Err = m.redactor().Error(re.Err)
	case errors.As(err, &ne):
		ne.msg = m.redact(ne.msg)
	}
	return err
}

// createSession is step 2.
func (m *MessagingSession) createSession(ctx context.Context) (string, error) {
	req := map[string]any{"streaming_enabled": m.start.Streaming}
	if m.start.ConversationID != "" {
		req["conversation_id"] = m.start.ConversationID
	}
	body, _ := json.Marshal(req)
	rq := &call{ep: epMsgSession, path: epMsgSession.template, body: body, bearer: m.jwt, red: m.redactor()}
	resp, err := m.c.do(ctx, rq)
	if err != nil {
		return "", m.redactError(err)
	}
	defer resp.release()
	raw := m.redactBytes(resp.body())
	r, err := decodeAnswer(raw)
	if err != nil {
		return "", m.c.responseError(rq, resp.status, raw, err)
	}
	id, err := answerString(r, "sessions", sessionNames...)
	if err == nil {
		err = answerTwice(raw, sessionNames)
	}
	if err != nil {
		return "", m.c.responseError(rq, resp.status, raw, err)
	}
	if id == "" {
		return "", m.c.responseError(rq, resp.status, raw, errors.New(`no "session_id" in the answer`))
	}
	return id, nil
}

// socketCall names the handshake in errors, whose answers may echo the
// access token.
func (m *MessagingSession) socketCall() *call {
	return &call{ep: epSocket, path: epSocket.template, red: m.redactor()}
}

// netError is a *NetworkError of the socket, redacted.
func (m *MessagingSession) netError(err error) *NetworkError {
	return &NetworkError{Method: epSocket.method, Endpoint: epSocket.template, Path: epSocket.template, Host: m.Host(), Sent: true, Attempts: 1, Err: err, msg: m.redact(err.Error())}
}
