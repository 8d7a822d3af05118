package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/clock"
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
//   - MessagingStart.Settle without a new event once the turn has an
//     answer while the typing indicator is off (a platform without one,
//     or one that turns it off before the message).
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
	// clientIDKey is the metadata.custom member that tags each client
	// event, so its echo can be recognised after a reconnect.
	clientIDKey = "agenttest_id"
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
		if err := checkURL("messaging socket URL", c.MessagingSocketURL, CheckMessagingURL, c.AllowHTTP); err != nil {
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

	seen           map[string]uint64 // event id (or seq:N) -> MessagingEvent.print
	logged         int64             // the highest seq member received
	cursor         int64
	turns          []*MessagingTurn
	last           *MessagingTurn // the turn of the last exchange
	opening        *MessagingTurn
	joined         bool
	echoes         bool // the platform echoes client events
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
	m.opening = &MessagingTurn{Started: c.now()}
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
	return m.exchange(ctx, m.events.UserMessage, map[string]any{"text": msg.Text}, msg.Custom, nil)
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
// session ends, MessagingStart.Settle passes without a new event (the
// quiet that completes an answer on a platform without typing
// indicators), or the socket drops (the next send reconnects); an end
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
	m.c.setQuiet(&quiet, m.start.Settle)
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
			m.c.setQuiet(&quiet, m.start.Settle)
		case <-quiet.C():
			return turn, nil
		case <-ctx.Done():
			return turn, m.timeout(ctx)
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

// messagingToken is step 1.
func (c *Client) messagingToken(ctx context.Context) (string, error) {
	rq := &call{ep: epAccessToken, path: epAccessToken.template, body: []byte("{}")}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return "", err
	}
	defer resp.release()
	var body struct {
		AccessToken jString `json:"access_token"`
		Token       jString `json:"token"`
	}
	tok := ""
	if json.Unmarshal(resp.body(), &body) == nil {
		tok = body.AccessToken.V
		if tok == "" {
			tok = body.Token.V
		}
	}
	var problem string
	switch {
	case tok == "":
		problem = `no "access_token" string in the answer`
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
	var r struct {
		SessionID jString `json:"session_id"`
		ID        jString `json:"sessionId"`
	}
	raw := m.redactBytes(resp.body())
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", m.c.responseError(rq, resp.status, raw, describeDecodeError(err))
	}
	id := r.SessionID.V
	if id == "" {
		id = r.ID.V
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

// dial opens a socket, with the client's retry policy for the handshake.
// A 429 is paced as the HTTP calls' are (do): it is no attempt, its
// Retry-After is waited out and charged to the account of ctx, and only
// that account's budget (Config.RateWait) bounds the waits, past which
// the handshake fails with a *RateLimitError. It returns the connection
// under the socket too, for Close to end a close handshake that takes
// too long.
func (m *MessagingSession) dial(ctx context.Context) (*websocket.Conn, io.Closer, error) {
	q := url.Values{"session_id": {m.sessionID}, "access_token": {m.jwt}}
	if m.cursor > 0 {
		q.Set("cursor", strconv.FormatInt(m.cursor, 10))
	}
	// The socket URL has no query of its own (Config.Validate).
	target := m.c.socket + "?" + q.Encode()
	rq := m.socketCall()
	keep := &keepUpgrade{base: m.c.http.Transport}
	if keep.base == nil {
		keep.base = http.DefaultTransport
	}
	hc := *m.c.http // the client's redirect policy included
	hc.Transport = keep
	opts := &websocket.DialOptions{HTTPClient: &hc, HTTPHeader: http.Header{"User-Agent": {m.c.cfg.UserAgent}}}
	acct := RateAccountFrom(ctx)
	if acct == nil {
		acct = NewRateAccount()
	}
	acct.setLimit(m.c.cfg.RateWait)
	// The platform limits a session's handshakes: the pacer is the
	// handshake's own (pacerFor), and only honours its 429s.
	pc := m.c.pacerFor(m.Host(), rq)
	for attempt := 1; ; {
		t, err := pc.wait(ctx, acct, m.c.paceNow, m.c.paceSleep)
		if err != nil {
			if eb, ok := errors.AsType[errBudget](err); ok {
				return nil, nil, m.c.rateLimitError(rq, acct, eb)
			}
			return nil, nil, m.redactError(m.c.networkError(rq, err, false, attempt-1))
		}
		conn, resp, err := websocket.Dial(ctx, target, opts)
		var failure error
		if err != nil {
			failure = m.handshakeError(rq, resp, err, attempt)
		}
		answered, limited, pause := m.c.outcome(failure, pc)
		pc.done(m.c.paceNow(), t, answered, limited, pause)
		if answered {
			acct.count(limited)
		}
		switch {
		case failure == nil:
			// read enforces maxMessagingFrame itself, to tell a frame
			// too large from a dropped socket; the library's limit only
			// stops a read that runs past it.
			conn.SetReadLimit(m.limits.frame + 2)
			return conn, keep.body, nil
		case limited:
			continue
		}
		wait, retry := m.c.shouldRetry(ctx, rq, failure, attempt)
		if !retry {
			return nil, nil, failure
		}
		if err := m.c.retry.sleep(ctx, wait); err != nil {
			return nil, nil, m.redactError(m.c.networkError(rq, err, false, attempt))
		}
		attempt++
	}
}

// handshakeError is the error of a handshake that opened no socket:
// the answer resp (nil when none came) and the library's err.
func (m *MessagingSession) handshakeError(rq *call, resp *http.Response, err error, attempt int) error {
	switch {
	case resp != nil && isRedirect(resp.StatusCode):
		// checkRedirect refused it (another origin): the access
		// token stays here, and the error names where it pointed.
		if resp.Request == nil {
			resp.Request, _ = http.NewRequest(http.MethodGet, m.c.socket, nil)
		}
		// rq's redactor masks the access token in the Location.
		return m.c.redirectError(rq, resp.Request, resp)
	case resp != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299:
		// An answer, but no socket: the URL is not the Messaging
		// API's (a web server, a proxy that strips the upgrade).
		return m.c.responseError(rq, resp.StatusCode, nil,
			fmt.Errorf("the handshake was answered %d, not 101 Switching Protocols: no WebSocket there", resp.StatusCode))
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		return m.redactError(m.c.apiError(rq, resp, attempt))
	case resp != nil:
		// A 101 the library refused: the answer breaks the
		// WebSocket handshake (no Upgrade, a wrong accept key).
		// The platform's (or a proxy's) error, as a 200 is; the
		// connection was not lost, and a new try fares no better.
		return m.c.responseError(rq, resp.StatusCode, nil,
			fmt.Errorf("the handshake's 101 answer breaks the WebSocket protocol: %s", protocolViolation(err)))
	}
	// networkError drops the url.Error, which repeats the URL and the
	// access token with it, and masks the rest with rq's redactor.
	return m.c.networkError(rq, err, !neverSent(err), attempt)
}

// protocolViolation is what coder/websocket says of a handshake answer
// it refused, without its prefixes.
func protocolViolation(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	s := strings.TrimPrefix(err.Error(), "failed to WebSocket dial: ")
	return strings.TrimPrefix(s, "WebSocket protocol violation: ")
}

// keepUpgrade keeps the body of the handshake's 101 answer: the
// connection the library reads and writes the socket through and closes
// last (coder/websocket dial.go takes it as the Conn's rwc), which no API
// of the library gives back. http.Client calls RoundTrip in the dialling
// goroutine, so body needs no lock.
type keepUpgrade struct {
	base http.RoundTripper
	body io.Closer
}

func (k *keepUpgrade) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := k.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		k.body = resp.Body
	}
	return resp, err
}

// connect opens a socket, reads the history batch into turn and starts
// the socket's reader. st is the exchange in progress, or nil. A turn's
// time that runs out meanwhile (a reconnect's handshake or history batch
// the platform holds) is the turn's timeout, as when it runs out waiting
// for the answer: the handshake's own error would say the connection was
// lost, and the wait for the batch only that a context ended.
func (m *MessagingSession) connect(ctx context.Context, turn *MessagingTurn, st *turnState) error {
	ctx, cancel := m.turnContext(ctx)
	defer cancel()
	conn, under, err := m.dial(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return m.timeout(ctx)
		}
		return err
	}
	m.conn, m.under = conn, under
	m.frames = newFrameQueue(m.limits.turnBytes)
	go m.read(conn, m.frames)
	// The history batch comes first; a platform that sends something
	// else first has that taken as a live event.
	in, err := m.next(ctx)
	if err != nil {
		return m.timeout(ctx)
	}
	if errors.Is(in.err, errFrameTooLarge) {
		return m.frameError(nil, in.err)
	}
	if in.err != nil {
		return m.netError(fmt.Errorf("socket closed before the history batch: %w", in.err))
	}
	return m.accept(in.data, turn, st)
}

// messagingLimits bound what a session receives: one frame, and one
// turn's frames and bytes.
type messagingLimits struct {
	frame, turnBytes int64
	turnFrames       int
}

func (l messagingLimits) orDefaults() messagingLimits {
	if l.frame == 0 {
		l.frame = maxMessagingFrame
	}
	if l.turnBytes == 0 {
		l.turnBytes = maxMessagingTurnBytes
	}
	if l.turnFrames == 0 {
		l.turnFrames = maxMessagingTurnFrames
	}
	return l
}

// errFrameTooLarge is a frame over the frame limit: the platform's error,
// which a reconnect would only receive again.
var errFrameTooLarge = errors.New("a frame exceeds the limit")

// read forwards a connection's frames until it fails or the session is
// closed.
func (m *MessagingSession) read(conn *websocket.Conn, out *frameQueue) {
	for {
		data, err := m.readFrame(conn)
		if !out.put(inbound{data: data, err: err}, m.quit) || err != nil {
			return
		}
	}
}

// readFrame reads one frame within the frame limit. A larger one closes
// the socket and is errFrameTooLarge.
func (m *MessagingSession) readFrame(conn *websocket.Conn) ([]byte, error) {
	_, r, err := conn.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, m.limits.frame+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > m.limits.frame {
		conn.CloseNow()
		return nil, fmt.Errorf("%w of %s", errFrameTooLarge, sizeText(m.limits.frame))
	}
	return data, nil
}

// next waits for the next frame of the current connection.
func (m *MessagingSession) next(ctx context.Context) (inbound, error) {
	select {
	case in := <-m.frames.ch:
		in = m.frames.took(in)
		return in, nil
	case <-ctx.Done():
		return inbound{}, ctx.Err()
	}
}

// reconnect replaces a dropped socket, continuing from the cursor. A new
// socket that drops before its history batch counts as one more
// reconnect; a refused handshake (404, 401) ends the attempts.
func (m *MessagingSession) reconnect(ctx context.Context, turn *MessagingTurn, cause error, st *turnState) error {
	if errors.Is(cause, errFrameTooLarge) {
		return m.frameError(nil, cause)
	}
	for {
		if err := m.refusal(cause); err != nil {
			return err
		}
		if m.start.MaxReconnects < 0 || turn.Reconnects >= m.start.MaxReconnects {
			return m.netError(fmt.Errorf("socket closed (%d reconnects in this turn): %w", turn.Reconnects, cause))
		}
		if m.conn != nil {
			m.conn.CloseNow()
		}
		m.reconnects++
		turn.Reconnects++
		err := m.connect(ctx, turn, st)
		var ne *NetworkError
		if err == nil || !errors.As(err, &ne) || ctx.Err() != nil {
			return err
		}
		cause = err
	}
}

// refusal is the error of a socket the platform closed on purpose, with
// a status that says a new socket would fare no better (policy
// violation, unsupported data, message too big, internal error, a
// registered 3000-3999 or an application's own 4000-4999: every status
// but the five below), or nil for a drop worth a reconnect: no
// close frame, a normal closure or going away, a restart, try again
// later, a bad gateway. Reconnecting after a refusal would wait out the
// turn's timeout for an answer that is not coming, and lose the
// platform's reason.
func (m *MessagingSession) refusal(cause error) error {
	var ce websocket.CloseError
	if !errors.As(cause, &ce) {
		return nil
	}
	switch ce.Code {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusServiceRestart,
		websocket.StatusTryAgainLater, websocket.StatusBadGateway:
		return nil
	}
	why := fmt.Sprintf("the platform closed the socket with status %d", int(ce.Code))
	if ce.Reason != "" {
		why += fmt.Sprintf(": %q", m.redact(ce.Reason))
	}
	return m.netError(errors.New(why))
}

// exchange sends one client event and collects its answer into turn (a
// new one when nil).
func (m *MessagingSession) exchange(ctx context.Context, typ string, payload map[string]any, custom map[string]any, turn *MessagingTurn) (*MessagingTurn, error) {
	if turn == nil {
		turn = &MessagingTurn{Started: m.c.now()}
	}
	defer turn.finishReply()
	if m.closed {
		return turn, fmt.Errorf("messaging session %s is closed", m.sessionID)
	}
	if m.ended {
		return turn, fmt.Errorf("messaging session %s: %w", m.sessionID, ErrMessagingEnded)
	}
	ctx, cancel := m.turnContext(ctx)
	defer cancel()
	// What arrived between turns belongs to this one.
	if err := m.drain(turn); err != nil {
		return turn, err
	}
	if m.ended {
		return turn, fmt.Errorf("messaging session %s: %w", m.sessionID, ErrMessagingEnded)
	}
	m.nextID++
	id := "c" + strconv.Itoa(m.nextID)
	meta := map[string]any{}
	maps.Copy(meta, m.start.Custom)
	maps.Copy(meta, custom)
	meta[clientIDKey] = id
	frame, err := json.Marshal(map[string]any{"type": typ, "payload": payload, "metadata": map[string]any{"custom": meta}})
	if err != nil {
		return turn, fmt.Errorf("messaging session %s: encode %s: %w", m.sessionID, typ, err)
	}
	turn.Request = m.redactBytes(frame)
	st := &turnState{turn: turn, clientID: id, typ: typ}
	m.last = turn
	if m.dropped != nil {
		cause := m.dropped
		m.dropped = nil
		if err := m.reconnect(ctx, turn, cause, nil); err != nil {
			return turn, err
		}
		if m.ended {
			return turn, fmt.Errorf("messaging session %s: %w", m.sessionID, ErrMessagingEnded)
		}
	}
	turn.Started = m.c.now()
	if err := m.send(ctx, frame, turn, st); err != nil {
		return turn, err
	}
	// The settle timer is set only on platforms that need it.
	var settle quietTimer
	defer settle.Stop()
	for {
		if st.done() {
			turn.Latency = st.answeredAt.Sub(turn.Started)
			if m.endedUnheard(turn, st) {
				return turn, fmt.Errorf("messaging session %s: %w", m.sessionID, ErrMessagingEnded)
			}
			return turn, nil
		}
		var in inbound
		select {
		case in = <-m.frames.ch:
			in = m.frames.took(in)
		case <-settle.C():
			if st.answered && !m.typingOn {
				turn.CompletedBy = "settle"
				turn.Latency = st.answeredAt.Sub(turn.Started)
				return turn, nil
			}
			continue
		case <-ctx.Done():
			return turn, m.timeout(ctx)
		}
		if in.err != nil {
			if err := m.reconnect(ctx, turn, in.err, st); err != nil {
				return turn, err
			}
			// The replay is in turn now; send again only what certainly
			// never arrived.
			if m.shouldResend(st) {
				turn.Resent++
				if err := m.send(ctx, frame, turn, st); err != nil {
					return turn, err
				}
			}
			continue
		}
		if err := m.accept(in.data, turn, st); err != nil {
			return turn, err
		}
		if st.answered && !m.typingOn {
			m.c.setQuiet(&settle, m.start.Settle)
		}
	}
}

// turnContext bounds a turn by MessagingStart.TurnTimeout on the client's
// timers, leaving out the rate-limit waits charged meanwhile to the
// account of ctx (a handshake's 429, dial), as the runner's turn timeout
// leaves them out: a turn that waits its turn at a busy platform is not
// slow, and only the account's budget bounds those waits. Without an
// account in ctx the turn gets one of its own.
func (m *MessagingSession) turnContext(ctx context.Context) (context.Context, context.CancelFunc) {
	acct := RateAccountFrom(ctx)
	if acct == nil {
		acct = NewRateAccount()
		ctx = WithRateAccount(ctx, acct)
	}
	granted := acct.Waited(m.c.paceNow())
	return clock.WithTimeoutGrace(ctx, m.start.TurnTimeout, errTurnTimeout, m.c.cfg.AfterFunc, m.c.now, func() time.Duration {
		w := acct.Waited(m.c.paceNow())
		more := w - granted
		granted = w
		return more
	})
}

// errTurnTimeout is the cause of a turn's own deadline.
var errTurnTimeout = errors.New("turn timeout")

// timeout is the error of a turn whose context ended: the turn's own
// deadline (a *turnTimeoutError inside the *NetworkError), or the
// caller's.
func (m *MessagingSession) timeout(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(context.Cause(ctx), errTurnTimeout) {
		err = &turnTimeoutError{limit: m.start.TurnTimeout, err: err}
	}
	return m.netError(err)
}

// turnTimeoutError is a turn that ran out of MessagingStart.TurnTimeout.
type turnTimeoutError struct {
	limit time.Duration
	err   error // the context's
}

func (e *turnTimeoutError) Error() string {
	return fmt.Sprintf("no complete answer within %s: %v", e.limit, e.err)
}

func (e *turnTimeoutError) Unwrap() error { return e.err }

// MessagingTurnTimeout reports whether err is a Messaging turn that ran
// out of its own MessagingStart.TurnTimeout, and that timeout. The
// client's timer is its own: a caller with a bound of its own (the
// runner's turn timeout, which leaves rate-limit waits out) may see the
// client's fire first, and should report it as the timeout it is, not as
// the *NetworkError that carries it.
func MessagingTurnTimeout(err error) (time.Duration, bool) {
	if te, ok := errors.AsType[*turnTimeoutError](err); ok {
		return te.limit, true
	}
	return 0, false
}

// send writes a frame. When the socket is gone it reconnects and writes
// again only if the event certainly never arrived (shouldResend).
func (m *MessagingSession) send(ctx context.Context, frame []byte, turn *MessagingTurn, st *turnState) error {
	for {
		err := m.conn.Write(ctx, websocket.MessageText, frame)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return m.timeout(ctx)
		}
		gone, rerr := m.takeRest(ctx, turn, st)
		if rerr != nil {
			return rerr
		}
		if m.ended {
			// The socket closed after a SESSION_END (an expiry): the
			// turn has its answer, and there is nothing to reconnect to.
			return nil
		}
		if explains(gone) {
			// The write failed on a socket the platform had closed: its
			// reader holds the platform's word (a close status that
			// refuses, a frame too large), which the write's own error
			// ("closed") lost, and reconnect decides on it.
			err = gone
		}
		if err := m.reconnect(ctx, turn, err, st); err != nil {
			return err
		}
		if !m.shouldResend(st) {
			return nil
		}
		turn.Resent++
	}
}

// takeRest takes what a socket that refused a write delivered before it
// went: a server that ends a session sends SESSION_END and then closes,
// and a write can fail on the close before the end is read. The socket is
// closed first, so its reader stops at once with an error: gone, the
// error that ended the reader.
func (m *MessagingSession) takeRest(ctx context.Context, turn *MessagingTurn, st *turnState) (gone, err error) {
	m.conn.CloseNow()
	for {
		select {
		case in := <-m.frames.ch:
			in = m.frames.took(in)
			if in.err != nil {
				return in.err, nil
			}
			if err := m.accept(in.data, turn, st); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			return nil, m.timeout(ctx)
		}
	}
}

// explains reports whether err, the error that ended a socket's reader,
// says why the socket ended: the platform's close frame, or a frame over
// the limit. Any other is a connection that broke, or closed under the
// reader by the client.
func explains(err error) bool {
	var ce websocket.CloseError
	return errors.As(err, &ce) || errors.Is(err, errFrameTooLarge)
}

// drain takes the frames that arrived between turns.
func (m *MessagingSession) drain(turn *MessagingTurn) error {
	for {
		select {
		case in := <-m.frames.ch:
			in = m.frames.took(in)
			if in.err != nil {
				// Dropped between turns: the send reconnects first.
				m.dropped = in.err
				return nil
			}
			if err := m.accept(in.data, turn, nil); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// endedUnheard says whether the session ended before the platform took
// the turn's user message: on a platform known to echo client events, an
// end that came before the message's echo, and with nothing else said
// since the message was sent, was under way before the message arrived
// (most often sent just after the last turn settled, and read only once
// this one was sent). It is then the same end as one read before
// sending, which the caller tells by ErrMessagingEnded; taken as the
// message's answer, it would read as an agent that answered the message
// with silence. An end with an answer (an agent's message, an error
// system message such as "Error: Session not found") stays the turn's,
// with the platform's own words; so does every end where the platform
// does not echo, since the two cannot be told apart there.
func (m *MessagingSession) endedUnheard(turn *MessagingTurn, st *turnState) bool {
	return m.ended && m.echoes && !st.acked && st.typ == m.events.UserMessage && len(turn.Messages) == 0 && len(turn.System) == 0
}

// shouldResend decides whether the turn's client event goes again after
// a reconnect.
func (m *MessagingSession) shouldResend(st *turnState) bool {
	if st.acked || st.answered || m.ended {
		return false
	}
	if st.typ == m.events.Join {
		// Rule 2: send the join unless the replay shows the agent joined
		// (or, above, the join's echo says it arrived).
		return !m.joined
	}
	// A user message goes again only on a platform known to echo client
	// events, whose replay would hold the echo had it arrived; elsewhere
	// a second copy could be a second user turn, so the turn waits and
	// at worst times out.
	return m.echoes
}

// accept decodes a frame (an event or a history batch) into turn. st is
// nil for frames outside an exchange.
func (m *MessagingSession) accept(data []byte, turn *MessagingTurn, st *turnState) error {
	turn.received += int64(len(data))
	turn.frames++
	if turn.received > m.limits.turnBytes || turn.frames > m.limits.turnFrames {
		// The flood goes on: drop the socket now, rather than wait in
		// Close for a close handshake the platform is too busy to read.
		m.conn.CloseNow()
		return m.frameError(nil, fmt.Errorf("more than %s or %d frames in one turn without its answer ending it: the platform floods the session",
			sizeText(m.limits.turnBytes), m.limits.turnFrames))
	}
	if err := validUTF8(data); err != nil {
		// Its body is withheld: what is not text is no form the
		// redactor knows a key in, and says nothing the error does not.
		return m.frameError(nil, err)
	}
	data = m.redactBytes(data)
	ev, err := decodeEvent(data)
	if err != nil {
		return m.frameError(data, err)
	}
	if m.forms.kind(ev.Type, &m.events) == EventBatch {
		if err := m.sameConversation(ev); err != nil {
			return m.frameError(data, err)
		}
		list, err := batchEvents(ev.Payload)
		if err != nil {
			return m.frameError(data, err)
		}
		for _, raw := range list {
			e, err := decodeEvent(raw)
			if err != nil {
				return m.frameError(raw, fmt.Errorf("in the history batch: %w", err))
			}
			e.Replayed = true
			if err := m.add(e, turn, st); err != nil {
				return m.frameError(raw, fmt.Errorf("in the history batch: %w", err))
			}
		}
		return nil
	}
	if err := m.add(ev, turn, st); err != nil {
		return m.frameError(data, err)
	}
	return nil
}

// validUTF8 says where a frame is not UTF-8. A text frame must be (RFC
// 6455, 5.6), and a JSON event is text whatever frame it comes in: the
// decoder would read the bad bytes as U+FFFD, and the agent's reply would
// fail a check on text the platform mangled. A binary frame that holds a
// JSON event is read like a text frame: it says nothing else.
func validUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return fmt.Errorf("a frame of %d bytes is not valid UTF-8 (a JSON event is text): byte %d is %#02x", len(data), i, data[i])
}

// frameError is a *ResponseError for a received frame that cannot be
// used: the platform's fault, never the agent's.
func (m *MessagingSession) frameError(data []byte, err error) error {
	return &ResponseError{Method: epSocket.method, Endpoint: epSocket.template, Path: epSocket.template, Host: m.Host(), Status: http.StatusSwitchingProtocols,
		Err: m.redactor().Error(err), Body: keepBody(m.redactor(), data)}
}

// add records an event unless it was seen, and updates the session and
// the turn; an event it cannot use is the platform's error.
func (m *MessagingSession) add(e MessagingEvent, turn *MessagingTurn, st *turnState) error {
	if err := m.forms.classify(&e, &m.events); err != nil {
		return err
	}
	// An event is known by its id, else by its position in the log.
	key := e.ID
	if key == "" && e.logged {
		key = "seq:" + strconv.FormatInt(e.Seq, 10)
	}
	if key != "" {
		print := e.print()
		if was, ok := m.seen[key]; ok {
			if was != print {
				// Dropped as a replay, it would lose what the
				// platform said (the turn would wait out its timeout
				// for an answer that came); taken, it would be a
				// second event where the log has one.
				what := "event id " + clipID(e.ID)
				if e.ID == "" {
					what = "seq " + strconv.FormatInt(e.Seq, 10)
				}
				return fmt.Errorf("%s: %s came before as another event: the platform gave two events one id", typeText(e.Type), what)
			}
			turn.Duplicates++
			return nil
		}
		m.seen[key] = print
	}
	if e.logged {
		// A position in the log before one already received, of an
		// event not received: the platform sent its log out of order,
		// and the reply would be its messages in the wrong order.
		if e.Seq < m.logged {
			return fmt.Errorf("%s: seq %d after seq %d: the platform sent its event log out of order", typeText(e.Type), e.Seq, m.logged)
		}
		m.logged = e.Seq
	}
	if e.Seq > m.cursor {
		m.cursor = e.Seq
	}
	if err := m.sameConversation(e); err != nil {
		return err
	}
	if m.ended {
		switch e.Kind {
		case EventJoined, EventAgentMessage, EventAgentChunk, EventAgentMessageEnd, EventHandoff, EventLiveAgentJoined, EventLiveAgentMessage:
			// What the agent says, or who joins, once the session is
			// over belongs to no turn: taken as this one's, it would
			// pass or fail a check of an answer no user saw.
			return fmt.Errorf("%s after the session ended: the platform's event log goes on past its end", typeText(e.Type))
		}
	}
	if len(turn.Events) == 0 {
		m.turns = append(m.turns, turn)
	}
	turn.Events = append(turn.Events, e)
	at := m.c.now()
	switch e.Kind {
	case EventEcho:
		if id, _ := e.Custom[clientIDKey].(string); id != "" {
			m.echoes = true
			if st != nil && id == st.clientID {
				st.acked = true
			}
		}
	case EventJoined:
		m.joined = true
		turn.Joined = true
	case EventAgentMessage, EventAgentChunk, EventAgentMessageEnd, EventLiveAgentMessage:
		if late, err := m.lateWhole(e, turn); late || err != nil {
			return err
		}
		e := turn.finalPiece(e)
		i, completed, err := turn.addMessage(e)
		if err != nil {
			return err
		}
		if r := &turn.Messages[i]; r.Streamed {
			r.events = append(r.events, len(turn.Events)-1)
			m.maskSpread(turn, r, e)
		}
		if completed && st != nil {
			st.answer(at)
		}
	case EventSystem:
		turn.System = append(turn.System, SystemMessage{Level: e.Level, Text: e.Text})
		if e.IsError() && st != nil {
			st.answer(at)
		}
	case EventTypingStop:
		m.typingOn = false
		if st != nil && st.answered {
			st.complete("typing")
		}
	case EventTypingStart:
		m.typingOn = true
	case EventHandoff, EventLiveAgentJoined:
		turn.noteHandoff(e)
	case EventSessionEnd:
		m.ended = true
		m.endReason = e.Reason
		turn.SessionEnded, turn.EndReason = true, m.endReason
		if st != nil {
			st.answer(at)
			st.complete("session_end")
		}
	}
	return nil
}

// lateWhole reports whether e, a whole message or a stream end, is the
// last word on a message streamed in an earlier turn: one whose id names
// no message of this turn and names a streamed message of an earlier one.
// A platform may send it after its typing indicator went off, when the
// earlier turn was complete and returned; read as a message of this turn,
// the earlier answer's text would join this turn's reply (a check of it
// would pass on words the agent said a turn before, or fail on them), and
// it would answer this turn before the agent did. It is held to its
// chunks as one that follows them in their turn is (addMessage,
// contradictedBy): it must say the same words, or the words they began
// when the stream was cut off, or no text at all (a stream end may also
// repeat the last chunk's words); other words are the platform's error.
// A message id names one message in a session: the turn keeps the event
// among its events, and its messages and reply leave it out. A chunk is
// not looked up: a chunk under an earlier turn's id begins a message of
// this turn.
func (m *MessagingSession) lateWhole(e MessagingEvent, turn *MessagingTurn) (bool, error) {
	if e.MessageID == "" || e.Kind == EventAgentChunk || turn.stream(e.MessageID) >= 0 {
		return false, nil
	}
	r := m.earlierStream(e.MessageID, turn)
	switch {
	case r == nil:
		return false, nil
	case !r.contradictedBy(e, !r.Complete):
		return true, nil
	}
	sent := "sent whole"
	if e.Kind == EventAgentMessageEnd {
		sent = "its stream ended"
	}
	return true, fmt.Errorf("%w (the message was streamed in an earlier turn, and %s after that turn's answer was complete)",
		streamMismatch(e, r.Text), sent)
}

// earlierStream is the streamed message with id of a turn before turn,
// or nil when the last message of the earlier turns with that id was
// not streamed, or there is none.
func (m *MessagingSession) earlierStream(id string, turn *MessagingTurn) *MessagingReply {
	for _, t := range slices.Backward(m.turns) {
		if t == turn {
			continue
		}
		if j := t.stream(id); j >= 0 {
			if r := &t.Messages[j]; r.Streamed {
				return r
			}
			return nil
		}
	}
	return nil
}

// maskSpread appends a chunk's text to its streamed message and masks a
// key that the chunks of the message spell together and none holds alone
// (a key split between two tokens of a stream): each frame was redacted
// as it came, the text they join into is redacted here. The text grows in
// a secret.Stream, which at each chunk scans only where a key's form can
// newly end (the chunk and the redactor's reach before it: the longest
// form, a few hundred bytes) and copies no earlier chunk, so a reply of n
// chunks costs time linear in its length (BenchmarkStreamedReply). The
// other events of a streamed message (a whole message after its chunks,
// an end event with its text) may replace the text: it is scanned whole.
// When the text holds a key, the chunks lose their text and payload too,
// since each holds a part of the key and together the key.
func (m *MessagingSession) maskSpread(turn *MessagingTurn, r *MessagingReply, e MessagingEvent) {
	red := m.redactor()
	masked := false
	if e.Kind == EventAgentChunk {
		if r.spread == nil || r.spread.Redactor() != red {
			// A stream's first chunk (r.Text is empty), or a key
			// added since the last: the text so far was found clean
			// of the old keys only.
			r.spread = red.Stream()
			masked = r.spread.Append(r.Text)
		}
		masked = r.spread.Append(e.Text) || masked
	} else if r.spread == nil || r.spread.Redactor() != red || r.Text != r.spread.String() {
		// The event replaced the text (a whole message, a stream end's
		// text for chunks without any), or a key was added. An event
		// that left it as the last scan did (a stream end without text,
		// a repeat) adds nothing to scan: scanned again at each, a long
		// reply followed by many such events cost its length at every
		// one of them. (The comparison is of one string with itself,
		// which takes no time.)
		r.spread = red.Stream()
		masked = r.spread.Append(r.Text)
	}
	r.Text = r.spread.String()
	if masked {
		// The events masked at an earlier find are masked already.
		for _, j := range r.events[r.masked:] {
			e := &turn.Events[j]
			e.Text, e.Payload = secret.Mask, json.RawMessage(strconv.Quote(secret.Mask))
			e.Raw, _ = json.Marshal(map[string]string{"id": e.ID, "type": e.Type, "payload": secret.Mask})
		}
		r.masked = len(r.events)
	}
	if r.Complete && (masked || e.Kind == EventAgentChunk) {
		// The reply joined the message without its last chunk, or
		// with the key.
		turn.joinReply()
	}
}

// sameConversation holds the session to one conversation: the first
// conversation an event names is the session's (the joined event's, on
// every platform that names one), and an event that names another is the
// platform's error. The reference gives a session one conversation (the
// join starts it; "Conversation ID not found in session"), and the
// socket is the session's alone: another conversation's reply, read as
// this one's, would pass or fail this conversation's checks, and the
// records confirmed would be the other's. Ignoring it instead would hide
// a platform that crosses its users' conversations, and leave the turn
// to time out as if the agent were slow.
func (m *MessagingSession) sameConversation(e MessagingEvent) error {
	switch {
	case e.ConversationID == "":
	case m.conversationID == "":
		m.conversationID = e.ConversationID
	case e.ConversationID != m.conversationID:
		return fmt.Errorf("%s names conversation %s, and this session's conversation is %s: the platform sent another conversation's event on this session's socket",
			typeText(e.Type), clipID(e.ConversationID), clipID(m.conversationID))
	}
	return nil
}

// turnState tracks the completion of one answer.
type turnState struct {
	turn       *MessagingTurn
	clientID   string
	typ        string
	acked      bool // the echo of the client event arrived
	answered   bool
	answeredAt time.Time
	completed  bool
}

func (st *turnState) answer(at time.Time) {
	st.answered = true
	st.answeredAt = at
}

func (st *turnState) complete(by string) {
	st.completed = true
	st.turn.CompletedBy = by
}

func (st *turnState) done() bool { return st.completed }
