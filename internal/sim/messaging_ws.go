package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/coder/websocket"
)

// This file serves step 3 of the Messaging API, the WebSocket at /ws, and
// plays a session's event log: the history batch, the join request, user
// messages answered by the agent of internal/sim/agent (whole or
// streamed), live-agent handoff, system messages and the session's end.
//
// Every server event is appended to the session's log, numbered from 1,
// and sent to each open socket of the session. A socket's cursor is the
// number of the last event it saw: a reconnect with it replays the rest
// in the history batch. All state of a session is guarded by its mutex;
// each socket has a writer goroutine fed by a bounded queue, so a slow
// reader never blocks the session.

// msgSession is one messaging session.
type msgSession struct {
	id string
	// name is the conversation id the session call asked for ("": the
	// join names the conversation).
	name      string
	hash      uint64 // of name, else of id: the seed of its fault draws
	connector *connector
	tokenID   string // the jti of the access token that created it
	streaming bool

	mu         sync.Mutex
	lastActive time.Time
	log        [][]byte // marshalled events; event n is log[n-1]
	conns      map[*sockConn]struct{}
	reserved   int // sockets open or being opened
	handshakes bucket
	events     bucket
	eventIdx   uint64 // join requests and user messages so far
	batches    int
	messages   int          // agent messages so far, for their ids
	chat       *chatSession // the agent's conversation once it joined
	joinFailed bool
	live       *liveChat // set while a live agent has the chat
	ended      bool
	// expiring is set by the EarlyExpiry fault: the session counts as
	// idle past the expiry from then on.
	expiring bool
}

// liveChat is a handoff in progress.
type liveChat struct {
	destination string
	messages    int // user messages forwarded or not
}

func (s *Server) newMsgSession(c *connector, tokenID string, streaming bool, name string, now time.Time) *msgSession {
	o := s.opts.Messaging
	id := s.newID(sessionIDPrefix)
	// A named session meets the same faults whatever the other sessions
	// do; the id of an unnamed one is its creation number's.
	hash := hashString(id)
	if name != "" {
		hash = hashString(name)
	}
	ms := &msgSession{
		id: id, name: name, hash: hash, connector: c, tokenID: tokenID, streaming: streaming,
		lastActive: now,
		conns:      map[*sockConn]struct{}{},
		handshakes: bucket{tokens: float64(o.HandshakeBurst), last: now},
		events:     bucket{tokens: float64(o.MessageBurst), last: now},
	}
	s.msg.mu.Lock()
	s.msg.sessions[id] = ms
	s.msg.mu.Unlock()
	return ms
}

func (ms *msgSession) expired(now time.Time, expiry time.Duration) bool {
	return ms.expiring || now.Sub(ms.lastActive) > expiry
}

// endKind is how a socket's writer finishes.
type endKind int

const (
	endClose endKind = iota // flush the queue, then a normal close
	endDrop                 // flush the queue, then close without a close frame
	endKill                 // close without a close frame at once
)

// sockConn is one open WebSocket of a session. budget and gone are
// guarded by the session's mutex.
type sockConn struct {
	ws   *websocket.Conn
	q    chan []byte
	end  chan endKind // buffered: detach sends once
	done chan struct{}
	// live ends with the writer (endLive): a pause of an answer on the
	// socket waits on it, and a socket the simulator closed (it shuts
	// down, the session ended) is not waited for.
	live    context.Context
	endLive context.CancelFunc
	// budget is the number of events still delivered before an injected
	// drop, or -1.
	budget int
	gone   bool
}

// write sends queued events until the socket is detached or fails.
func (sc *sockConn) write() {
	defer close(sc.done)
	defer sc.endLive()
	for {
		select {
		case raw := <-sc.q:
			if !sc.frame(raw) {
				sc.ws.CloseNow()
				return
			}
		case k := <-sc.end:
			if k != endKill && !sc.flush() {
				k = endKill
			}
			if k == endClose {
				sc.ws.Close(websocket.StatusNormalClosure, "session ended")
			} else {
				sc.ws.CloseNow()
			}
			return
		}
	}
}

// flush writes what is queued; nothing more arrives once detached.
func (sc *sockConn) flush() bool {
	for {
		select {
		case raw := <-sc.q:
			if !sc.frame(raw) {
				return false
			}
		default:
			return true
		}
	}
}

// frame writes one event. A write blocked by a reader that stopped
// reading ends when the queue overflows: detachLocked closes the socket
// under it.
func (sc *sockConn) frame(raw []byte) bool {
	return sc.ws.Write(context.Background(), websocket.MessageText, raw) == nil
}

// detachLocked stops sending events to sc and tells its writer how to
// finish.
func (ms *msgSession) detachLocked(sc *sockConn, k endKind) {
	if sc.gone {
		return
	}
	sc.gone = true
	delete(ms.conns, sc)
	sc.end <- k
	if k == endKill {
		// At once, even under a writer blocked on a full connection.
		sc.ws.CloseNow()
	}
}

// wireEvent is an event as received by clients.
type wireEvent struct {
	ID        string        `json:"id"`
	Type      string        `json:"type"`
	Timestamp string        `json:"timestamp"`
	Payload   any           `json:"payload"`
	Metadata  eventMetadata `json:"metadata"`
}

// eventMetadata echoes the custom metadata of the client event an event
// answers.
type eventMetadata struct {
	Custom map[string]any `json:"custom,omitempty"`
}

// Payloads of the server events (choices.go lists them).
type (
	systemPayload struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	typingPayload struct {
		Typing bool `json:"typing"`
	}
	// joinedPayload names where the conversation runs: the agent and
	// environment of the session's connector.
	joinedPayload struct {
		ConversationID string `json:"conversation_id"`
		AgentID        string `json:"agent_id"`
		Environment    string `json:"environment"`
	}
	messagePayload struct {
		MessageID string `json:"message_id"`
		Text      string `json:"text"`
		Delayed   bool   `json:"delayed,omitempty"`
	}
	chunkPayload struct {
		MessageID string `json:"message_id"`
		Index     int    `json:"index"`
		Text      string `json:"text"`
		Final     bool   `json:"final"`
		Delayed   bool   `json:"delayed,omitempty"`
	}
	endPayload struct {
		Reason string `json:"reason"`
	}
	handoffPayload struct {
		Destination string `json:"destination"`
		Reason      string `json:"reason"`
	}
	liveJoinedPayload struct {
		Name        string `json:"name"`
		Destination string `json:"destination"`
	}
	liveMessagePayload struct {
		MessageID string `json:"message_id"`
		Name      string `json:"name"`
		Text      string `json:"text"`
	}
)

// emitLocked appends an event to the log and sends it to every socket.
func (s *Server) emitLocked(ms *msgSession, typ string, payload any, custom map[string]any) {
	ev := wireEvent{
		ID:        strconv.Itoa(len(ms.log) + 1),
		Type:      typ,
		Timestamp: formatTime(s.opts.Now()),
		Payload:   payload,
		Metadata:  eventMetadata{Custom: custom},
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		// Payloads are the simulator's own structs and validated client
		// JSON; a failure here is a bug, answered like any other.
		raw, _ = json.Marshal(wireEvent{ID: ev.ID, Type: EvSystemMessage, Timestamp: ev.Timestamp,
			Payload: systemPayload{Level: LevelError, Message: SysReplyFailed}})
	}
	ms.log = append(ms.log, raw)
	for sc := range ms.conns {
		switch {
		case sc.budget == 0:
			s.msg.stats.droppedSockets.Add(1)
			ms.detachLocked(sc, endDrop)
			continue
		case sc.budget > 0:
			sc.budget--
		}
		select {
		case sc.q <- raw:
		default:
			s.msg.stats.slowDisconnected.Add(1)
			ms.detachLocked(sc, endKill)
		}
	}
}

func (s *Server) systemLocked(ms *msgSession, text string, custom map[string]any) {
	s.emitLocked(ms, EvSystemMessage, systemPayload{Level: LevelError, Message: text}, custom)
}

// batchLocked builds the history batch of the events after cursor.
func (s *Server) batchLocked(ms *msgSession, cursor int) []byte {
	ms.batches++
	var b bytes.Buffer
	b.WriteString(`{"id":"batch_`)
	b.WriteString(strconv.Itoa(ms.batches))
	b.WriteString(`","type":"` + EvEventBatch + `","timestamp":"`)
	b.WriteString(formatTime(s.opts.Now()))
	b.WriteString(`","payload":{"events":[`)
	for i, raw := range ms.log[cursor:] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(raw)
	}
	b.WriteString(`]},"metadata":{}}`)
	return b.Bytes()
}

// parseCursor reads the cursor query parameter: the number of the last
// event the client saw. Anything that is not a number within the log
// replays from the start, as the reference says.
func parseCursor(v string, logLen int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > logLen {
		return 0
	}
	return n
}

// handleSocket is step 3: the handshake's checks, then the socket's
// life.
func (s *Server) handleSocket(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sid, tok := q.Get("session_id"), q.Get("access_token")
	if sid == "" || tok == "" {
		failMessaging(w, http.StatusBadRequest, errWSParams)
		return
	}
	o := s.opts.Messaging
	now := s.opts.Now().UTC()
	ms, ok := s.msg.lookupSession(sid)
	if !ok {
		failMessaging(w, http.StatusNotFound, errWSSessionNotFound)
		return
	}
	ms.mu.Lock()
	if ms.expired(now, o.SessionExpiry) {
		s.expireLocked(ms, false)
		ms.mu.Unlock()
		failMessaging(w, http.StatusNotFound, errWSSessionNotFound)
		return
	}
	if claims, err := s.msg.verify(tok, now); err != nil || claims.ID != ms.tokenID {
		ms.mu.Unlock()
		failMessaging(w, http.StatusUnauthorized, errWSAuth)
		return
	}
	if !o.Unlimited {
		if wait, ok := ms.handshakes.take(now, o.HandshakeRate, float64(o.HandshakeBurst)); !ok {
			ms.mu.Unlock()
			w.Header().Set("Retry-After", retryAfterHeader(wait))
			failMessaging(w, http.StatusTooManyRequests, errRateLimited)
			return
		}
	}
	if ms.reserved >= o.MaxConnections {
		ms.mu.Unlock()
		failMessaging(w, http.StatusTooManyRequests, errWSConnLimit)
		return
	}
	ms.reserved++
	ms.lastActive = now
	ms.mu.Unlock()

	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		// Accept has answered (not a WebSocket request, say).
		ms.mu.Lock()
		ms.reserved--
		ms.mu.Unlock()
		return
	}
	ws.SetReadLimit(maxClientEvent)
	sc := &sockConn{ws: ws, q: make(chan []byte, socketQueue), end: make(chan endKind, 1), done: make(chan struct{}), budget: -1}
	sc.live, sc.endLive = context.WithCancel(context.Background())
	s.msg.stats.handshakes.Add(1)
	s.msg.stats.openSockets.Add(1)
	s.changes.note()
	ms.mu.Lock()
	sc.q <- s.batchLocked(ms, parseCursor(q.Get("cursor"), len(ms.log)))
	if ms.ended {
		// Kept only so a reconnect can replay the end.
		sc.gone = true
		sc.end <- endClose
	} else {
		ms.conns[sc] = struct{}{}
	}
	ms.mu.Unlock()
	go sc.write()

	// The request's context must not be used after the hijack; the
	// socket lives until either side closes it.
	ctx := context.Background()
	var ended error // what ended the socket
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			ended = err
			break
		}
		s.onFrame(ms, sc, typ, data)
	}
	ms.mu.Lock()
	// A socket the simulator closed is gone already: its client only
	// echoed the simulator's closure.
	if !sc.gone && websocket.CloseStatus(ended) == websocket.StatusNormalClosure {
		s.msg.stats.normalClosures.Add(1)
	}
	ms.detachLocked(sc, endKill)
	ms.reserved--
	ms.mu.Unlock()
	<-sc.done
	s.msg.stats.openSockets.Add(-1)
	s.changes.note()
}

// clientEvent is a parsed client event.
type clientEvent struct {
	typ     string
	payload json.RawMessage
	custom  map[string]any
	text    string // EVENT_TYPE_USER_MESSAGE
	reason  string // EVENT_TYPE_REQUEST_LIVE_AGENT, optional
}

// parseClientEvent checks a frame; on failure it returns the system
// message that answers it.
func (n *messagingNames) parseClientEvent(typ websocket.MessageType, data []byte) (clientEvent, string) {
	var ev clientEvent
	if typ != websocket.MessageText {
		return ev, SysInvalidEvent
	}
	var raw struct {
		Type     *string         `json:"type"`
		Payload  json.RawMessage `json:"payload"`
		Metadata *struct {
			Custom json.RawMessage `json:"custom"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || raw.Type == nil {
		return ev, SysInvalidEvent
	}
	ev.typ = *raw.Type
	if n.serverOnly[ev.typ] {
		return ev, sysNotAllowedPrefix + ev.typ
	}
	if !n.client[ev.typ] || len(raw.Payload) == 0 || raw.Payload[0] != '{' {
		return ev, SysInvalidEvent
	}
	ev.payload = raw.Payload
	if raw.Metadata != nil && len(raw.Metadata.Custom) > 0 && string(raw.Metadata.Custom) != "null" {
		if json.Unmarshal(raw.Metadata.Custom, &ev.custom) != nil {
			return ev, SysInvalidEvent
		}
	}
	var p struct {
		Text   *string `json:"text"`
		Reason string  `json:"reason"`
	}
	if json.Unmarshal(raw.Payload, &p) != nil {
		return ev, SysInvalidEvent
	}
	switch ev.typ {
	case EvUserMessage:
		if p.Text == nil {
			return ev, SysInvalidEvent
		}
		ev.text = *p.Text
	case EvRequestLive:
		ev.reason = p.Reason
	}
	return ev, ""
}

// onFrame handles one client frame.
func (s *Server) onFrame(ms *msgSession, sc *sockConn, typ websocket.MessageType, data []byte) {
	o := s.opts.Messaging
	now := s.opts.Now().UTC()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if sc.gone {
		return // detached while the frame was in flight
	}
	if !o.Unlimited {
		if _, ok := ms.events.take(now, o.MessageRate, float64(o.MessageBurst)); !ok {
			s.msg.stats.droppedEvents.Add(1)
			s.changes.note()
			return
		}
	}
	names := &s.msg.names
	ev, problem := names.parseClientEvent(typ, data)
	if problem != "" {
		s.systemLocked(ms, problem, nil)
		return
	}
	switch {
	case ms.ended:
		s.systemLocked(ms, SysSessionNotFound, ev.custom)
		return
	case ms.expired(now, o.SessionExpiry):
		s.expireLocked(ms, true)
		return
	}
	if _, ok := s.msg.connector(ms.connector.Token); !ok {
		s.systemLocked(ms, SysConnectorNotFound, ev.custom)
		s.endLocked(ms, EndError, ev.custom)
		return
	}
	ms.lastActive = now
	if ev.typ == names.join || ev.typ == EvUserMessage {
		s.answerWithFaults(ms, sc, ev)
		return
	}
	s.emitLocked(ms, ev.typ, ev.payload, ev.custom) // the echo
	switch ev.typ {
	case EvRequestLive:
		s.answerLocked(ms, ev.custom, func() {
			switch {
			case ms.chat == nil:
				s.systemLocked(ms, SysHandoffRejected, ev.custom)
			case ms.live == nil:
				reason := ev.reason
				if reason == "" {
					reason = "requested by the user"
				}
				s.handoffLocked(ms, liveAgentDestination, reason, false, ev.custom)
			default:
				// A live agent has the chat already: they answer.
				la := s.opts.Messaging.LiveAgent
				s.liveTextLocked(ms, strings.Replace(defaultLiveAgentAlready, DefaultLiveAgentName, la.Name, 1), ev.custom)
			}
		})
	case EvEndSession:
		s.endLocked(ms, EndUser, ev.custom)
	}
}

// answerWithFaults handles a join request or a user message under the
// messaging faults: the socket may drop before (the event is lost) or
// during the answer, the answer may be an overload message, and the
// session may expire once it is answered.
func (s *Server) answerWithFaults(ms *msgSession, sc *sockConn, ev clientEvent) {
	f := &s.faults
	idx := ms.eventIdx
	ms.eventIdx++
	drop := f.f.SocketDrop > 0 && f.sessionDraw(ms.hash, idx, saltSocketDrop) < f.f.SocketDrop
	if drop {
		// One drop in five loses the event; the others deliver the
		// first 0-5 events of the answer, the rest waits for replay.
		u := f.sessionDraw(ms.hash, idx, saltDropPoint)
		if u < 0.2 {
			s.msg.stats.droppedSockets.Add(1)
			ms.detachLocked(sc, endKill)
			return
		}
		sc.budget = int((u - 0.2) / 0.8 * 6)
	}
	s.emitLocked(ms, ev.typ, ev.payload, ev.custom) // the echo
	s.answerLocked(ms, ev.custom, func() {
		if ev.typ == EvUserMessage && ms.chat == nil {
			if ms.joinFailed {
				s.systemLocked(ms, SysConvIDNotFound, ev.custom)
			} else {
				s.systemLocked(ms, SysConvNotFound, ev.custom)
			}
			return
		}
		if f.f.Overload > 0 && f.sessionDraw(ms.hash, idx, saltOverload) < f.f.Overload {
			s.systemLocked(ms, SysOverload, ev.custom)
			return
		}
		if f.f.LookupFailure > 0 && f.sessionDraw(ms.hash, idx, saltLookupFailure) < f.f.LookupFailure {
			s.systemLocked(ms, SysLookupFailed, ev.custom)
			return
		}
		if ev.typ == EvUserMessage {
			s.userMessageLocked(ms, sc, idx, ev)
		} else {
			s.joinLocked(ms, sc, idx, ev)
		}
	})
	if !ms.ended && f.f.EarlyExpiry > 0 && f.sessionDraw(ms.hash, idx, saltEarlyExpiry) < f.f.EarlyExpiry {
		// Not ended here: the expiry takes its usual course, at the next
		// Tick (SESSION_END to the open sockets) or event of the session
		// (answered "Error: Session not found" first), or at a handshake
		// (404).
		ms.expiring = true
	}
	if drop && !sc.gone {
		// The budget outlasted the answer: drop after all of it.
		s.msg.stats.droppedSockets.Add(1)
		ms.detachLocked(sc, endDrop)
	}
	sc.budget = -1
}

// answerLocked wraps an answer in the agent's typing indicator. The
// indicator's end is the last event of every answer that does not end the
// session (then SESSION_END is), which is how a client knows the answer
// is complete.
func (s *Server) answerLocked(ms *msgSession, custom map[string]any, answer func()) {
	typing := s.msg.names.typing
	s.emitLocked(ms, typing, typingPayload{Typing: true}, custom)
	answer()
	if !ms.ended {
		s.emitLocked(ms, typing, typingPayload{Typing: false}, custom)
	}
}

// joinLocked is the join request: the agent joins and greets.
func (s *Server) joinLocked(ms *msgSession, sc *sockConn, idx uint64, ev clientEvent) {
	agentID := ms.connector.AgentID
	if ms.chat != nil {
		// A second join (a client that missed the joined event in its
		// replay): the agent is there already; say so again.
		s.msg.stats.duplicateJoins.Add(1)
		s.emitLocked(ms, s.msg.names.joined, joinedPayload{ConversationID: ms.chat.conv.ID, AgentID: agentID, Environment: ms.connector.Env}, ev.custom)
		return
	}
	f := &s.faults
	if f.f.JoinFailure > 0 && f.sessionDraw(ms.hash, idx, saltJoinFailure) < f.f.JoinFailure {
		ms.joinFailed = true
		s.systemLocked(ms, SysStartFailed, ev.custom)
		return
	}
	// The conversation's draws are seeded by its id: the session's name
	// when the session call gave one, else the join's number server-wide
	// (which changes with the order concurrent sessions join in).
	id := ms.name
	if id == "" {
		id = s.newConversationID()
	}
	cs, reply, ok := s.openConversation(context.Background(), s.served(agentID, ms.connector.Env), agentID, convStart{
		id: id, env: ms.connector.Env, channel: messagingChannel, attrs: ev.custom,
	})
	if !ok {
		s.systemLocked(ms, SysStartFailed, ev.custom)
		return
	}
	ms.chat, ms.joinFailed = cs, false
	s.emitLocked(ms, s.msg.names.joined, joinedPayload{ConversationID: cs.conv.ID, AgentID: agentID, Environment: ms.connector.Env}, ev.custom)
	s.answerTextLocked(ms, sc, reply, -1, ev.custom)
	s.replyEffectsLocked(ms, reply.Handoff, reply.Ended, ev.custom)
}

// userMessageLocked is a user message: to the live agent during a
// handoff, else to the agent.
func (s *Server) userMessageLocked(ms *msgSession, sc *sockConn, idx uint64, ev clientEvent) {
	if ms.live != nil {
		s.forwardLocked(ms, ev)
		return
	}
	cs := ms.chat
	if cs.closed {
		s.systemLocked(ms, SysConvNotFound, ev.custom)
		return
	}
	f := &s.faults
	failed := f.f.ReplyFailure > 0 && f.sessionDraw(ms.hash, idx, saltReplyFailure) < f.f.ReplyFailure
	if failed && !ms.streaming {
		// Generation failed: the agent never saw the message.
		s.systemLocked(ms, SysReplyFailed, ev.custom)
		return
	}
	at := s.opts.Now().UTC()
	reply := cs.sess.Turn(ev.text, ev.custom)
	if reply.Latency > 0 {
		// The agent's think time (its nodes' latencyMs), as debug chat
		// waits it, with the typing indicator on: a web chat turn
		// can then be slower than --turn-timeout, the agent that never
		// answers. A session that ended meanwhile (it expired, the
		// simulator shuts down) gets no answer.
		s.pauseLocked(ms, sc, reply.Latency)
		if ms.ended || cs.closed {
			return
		}
	}
	done := s.opts.Now().UTC()
	s.record(cs, ev.text, ev.custom, at, done, reply)
	cs.lastActive = done
	cut := -1
	if failed {
		// The platform has the reply; the user sees part of it.
		// The stream breaks after 1 to n-1 of its n chunks (none of one).
		if n := len(splitChunks(reply.Response, chunkBytes)); n > 1 {
			cut = 1 + int(f.sessionDraw(ms.hash, idx, saltStreamCut)*float64(n-1))
		} else {
			cut = 0
		}
	}
	s.answerTextLocked(ms, sc, reply, cut, ev.custom)
	if failed {
		s.systemLocked(ms, SysStreamFailed, ev.custom)
	}
	s.replyEffectsLocked(ms, reply.Handoff, reply.Ended, ev.custom)
}

// answerTextLocked sends the agent's reply: one message, or the messages
// of a split answer (agent.Reply.Parts) with the typing indicator off
// for the pause before each, waited on Options.Sleep without the
// session's lock (its sockets and expiry go on meanwhile: a session that
// expires in a pause is closed and forgotten, and what follows reaches
// no one). The socket's reader waits with it, so the next event on the
// socket (a user message sent by a client that took the first message
// for the whole answer) is taken, and echoed, once the answer ended. A stream cut short (cut >= 0) is one message: the fault draws
// its cut over the whole reply.
func (s *Server) answerTextLocked(ms *msgSession, sc *sockConn, reply agent.Reply, cut int, custom map[string]any) {
	if len(reply.Parts) == 0 || cut >= 0 {
		s.agentTextLocked(ms, reply.Response, reply.Delayed, cut, custom)
		return
	}
	typing := s.msg.names.typing
	for i, p := range reply.Parts {
		if i > 0 {
			s.emitLocked(ms, typing, typingPayload{Typing: false}, custom)
			s.pauseLocked(ms, sc, p.Pause)
			s.emitLocked(ms, typing, typingPayload{Typing: true}, custom)
		}
		s.agentTextLocked(ms, p.Text, reply.Delayed, -1, custom)
	}
}

// pauseLocked waits d on Options.Sleep with the session's lock released.
// The wait ends early when the simulator closes the socket the event
// came on (it shuts down, the session ends): nothing waits on a socket
// that is gone, and a shutdown never waits on a pause.
func (s *Server) pauseLocked(ms *msgSession, sc *sockConn, d time.Duration) {
	ms.mu.Unlock()
	s.opts.Sleep(sc.live, d)
	ms.mu.Lock()
}

// agentTextLocked sends an agent message, whole or as chunks. cut >= 0
// sends only the first cut chunks (an interrupted stream).
func (s *Server) agentTextLocked(ms *msgSession, text string, delayed bool, cut int, custom map[string]any) {
	if text == "" {
		return
	}
	ms.messages++
	id := messageIDPrefix + strconv.Itoa(ms.messages)
	if !ms.streaming {
		s.emitLocked(ms, s.msg.names.message, messagePayload{MessageID: id, Text: text, Delayed: delayed}, custom)
		return
	}
	chunks := splitChunks(text, chunkBytes)
	for i, c := range chunks {
		if cut >= 0 && i >= cut {
			return
		}
		last := i == len(chunks)-1
		s.emitLocked(ms, s.msg.names.chunk, chunkPayload{MessageID: id, Index: i, Text: c, Final: last, Delayed: delayed && last}, custom)
	}
}

// splitChunks cuts text into pieces of about size bytes at word
// boundaries; their concatenation is text.
func splitChunks(text string, size int) []string {
	var out []string
	for len(text) > size {
		cut := strings.IndexByte(text[size:], ' ')
		if cut < 0 {
			break
		}
		cut += size + 1
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}

// replyEffectsLocked follows an agent reply: a handoff, or the end of the
// conversation (and so of the session).
func (s *Server) replyEffectsLocked(ms *msgSession, h *agent.Handoff, ended bool, custom map[string]any) {
	if h != nil {
		s.handoffLocked(ms, h.Destination, h.Reason, ended, custom)
		return
	}
	if ended {
		s.endLocked(ms, EndAgent, custom)
	}
}

// handoffLocked hands the chat to the live agent. agentEnded says the
// agent ended its conversation with the handoff, so a failed handoff ends
// the session; otherwise the agent keeps the chat.
func (s *Server) handoffLocked(ms *msgSession, dest, reason string, agentEnded bool, custom map[string]any) {
	la := s.opts.Messaging.LiveAgent
	fail := func(text string) {
		s.systemLocked(ms, text, custom)
		if agentEnded {
			s.endLocked(ms, EndHandoffFailed, custom)
		}
	}
	if len(la.Destinations) > 0 && !slices.Contains(la.Destinations, dest) {
		fail(SysHandoffRejected)
		return
	}
	s.emitLocked(ms, EvHandoffInitiated, handoffPayload{Destination: dest, Reason: reason}, custom)
	if la.Absent {
		fail(SysNoLiveAgent)
		return
	}
	ms.live = &liveChat{destination: dest}
	s.emitLocked(ms, EvLiveAgentJoined, liveJoinedPayload{Name: la.Name, Destination: dest}, custom)
	s.liveTextLocked(ms, la.Greeting, custom)
}

func (s *Server) liveTextLocked(ms *msgSession, text string, custom map[string]any) {
	ms.messages++
	s.emitLocked(ms, EvLiveAgentMessage, liveMessagePayload{
		MessageID: messageIDPrefix + strconv.Itoa(ms.messages), Name: s.opts.Messaging.LiveAgent.Name, Text: text,
	}, custom)
}

// forwardLocked gives a user message to the live agent, who answers from
// the script.
func (s *Server) forwardLocked(ms *msgSession, ev clientEvent) {
	la := s.opts.Messaging.LiveAgent
	ms.live.messages++
	if slices.Contains(la.ForwardFailures, ms.live.messages) {
		s.systemLocked(ms, SysForwardFailed, ev.custom)
		return
	}
	reply, end := la.DefaultReply, false
	lower := strings.ToLower(ev.text)
	for _, l := range la.Script {
		if strings.Contains(lower, strings.ToLower(l.Contains)) {
			reply, end = l.Reply, l.End
			break
		}
	}
	s.liveTextLocked(ms, reply, ev.custom)
	if end {
		s.endLocked(ms, EndLiveAgent, ev.custom)
	}
}

// endLocked ends the session: SESSION_END, the conversation ends (timed
// out when the session expired), and every socket is closed normally
// once it has the event. The session stays until it expires, so a
// reconnect replays its end.
func (s *Server) endLocked(ms *msgSession, reason string, custom map[string]any) {
	if ms.ended {
		return
	}
	s.emitLocked(ms, EvSessionEnd, endPayload{Reason: reason}, custom)
	ms.ended, ms.live = true, nil
	now := s.opts.Now().UTC()
	ms.lastActive = now
	if cs := ms.chat; cs != nil && !cs.closed {
		s.closeSession(cs, now, reason == EndExpired)
	}
	for sc := range ms.conns {
		ms.detachLocked(sc, endClose)
	}
}

// expireLocked ends an expired session and forgets it; onEvent says a
// client event found it expired, which is answered "Error: Session not
// found" first.
func (s *Server) expireLocked(ms *msgSession, onEvent bool) {
	if !ms.ended {
		if onEvent {
			s.systemLocked(ms, SysSessionNotFound, nil)
		}
		s.endLocked(ms, EndExpired, nil)
	}
	s.msg.forget(ms.id)
}
