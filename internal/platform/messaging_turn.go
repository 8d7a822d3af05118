package platform

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/clock"
	"github.com/agenttest/agenttest/internal/secret"
)

// exchange sends one client event and collects its answer into turn (a
// new one when nil).
func (m *MessagingSession) exchange(ctx context.Context, typ string, payload map[string]any, custom map[string]any, turn *MessagingTurn) (*MessagingTurn, error) {
	if turn == nil {
		turn = &MessagingTurn{Started: m.c.now(), brand: m.c.cfg.Brand}
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
			if m.framesWaiting() {
				continue
			}
			if st.answered && !m.typingOn {
				turn.CompletedBy = "settle"
				if st.typedOff {
					turn.CompletedBy = "quiet"
				}
				turn.Latency = st.answeredAt.Sub(turn.Started)
				return turn, nil
			}
			continue
		case <-ctx.Done():
			return turn, m.timedOut(ctx, turn, st)
		}
		if in.err != nil {
			if ctx.Err() != nil {
				// The read ended with the turn's context, and select
				// chose its error over ctx.Done(): the turn ran out of
				// time, the connection did not break; a reconnect
				// would only fail its handshake on the ended context.
				return turn, m.timedOut(ctx, turn, st)
			}
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
			m.c.setQuiet(&settle, m.window(st))
		}
	}
}

// framesWaiting reports whether the reader queued a frame the session has
// not taken: a window of quiet that fired then was not quiet, as the
// frame came before the session's goroutine got to the firing (on a
// loaded machine, a runner's parallel cases on 2 cores), and select,
// choosing at random between the two, would complete an answer the
// platform was still sending, its rest left to the next turn.
func (m *MessagingSession) framesWaiting() bool { return len(m.frames.ch) > 0 }

// timedOut is the error of a turn that ran out of time, whose latency is
// then the time it waited, as a debug-chat call cut short has: the
// transcript and the latency plot show how long the agent was waited
// for, not a turn that took no time.
func (m *MessagingSession) timedOut(ctx context.Context, turn *MessagingTurn, st *turnState) error {
	turn.Latency = m.c.now().Sub(turn.Started)
	return m.timeout(ctx, m.awaited(turn, st))
}

// window is the quiet that completes an answer whose typing indicator is
// off: MessagingStart.Quiet once the indicator went off after the
// answer, else the settle of a platform without one.
func (m *MessagingSession) window(st *turnState) time.Duration {
	if st.typedOff {
		return m.start.Quiet
	}
	return m.settle()
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
// deadline or the caller's, with what the turn was still waiting for
// (lacked), both in a *turnTimeoutError inside the *NetworkError. A
// debug-chat timeout names the call it cut short; a Messaging turn waits
// on one socket for a while, and its events alone cannot say why the
// wait never ended: an answer whose typing indicator stayed on reads in
// the transcript as an answer, a join the client never sent (no history
// batch came) as an agent that did not greet.
func (m *MessagingSession) timeout(ctx context.Context, lacked string) error {
	te := &turnTimeoutError{lacked: lacked, err: ctx.Err()}
	if errors.Is(context.Cause(ctx), errTurnTimeout) {
		te.limit = m.start.TurnTimeout
	}
	return m.netError(te)
}

// turnTimeoutError is a turn whose context ended: limit is
// MessagingStart.TurnTimeout when the turn's own timer ended it, 0 when
// the caller's context did.
type turnTimeoutError struct {
	limit  time.Duration
	lacked string
	err    error // the context's
}

func (e *turnTimeoutError) Error() string {
	if e.limit > 0 {
		return fmt.Sprintf("no complete answer within %s (%s): %v", e.limit, e.lacked, e.err)
	}
	return fmt.Sprintf("%s: %v", e.lacked, e.err)
}

func (e *turnTimeoutError) Unwrap() error { return e.err }

// MessagingTurnTimeout reports whether err is a Messaging turn that ran
// out of its own MessagingStart.TurnTimeout, and that timeout. The
// client's timer is its own: a caller with a bound of its own (the
// runner's turn timeout, which leaves rate-limit waits out) may see the
// client's fire first, and should report it as the timeout it is, not as
// the *NetworkError that carries it.
func MessagingTurnTimeout(err error) (time.Duration, bool) {
	if te, ok := errors.AsType[*turnTimeoutError](err); ok && te.limit > 0 {
		return te.limit, true
	}
	return 0, false
}

// MessagingAwaited is what a Messaging turn whose context ended (its own
// timeout, or its caller's) was still waiting for, e.g. "the answer
// came, but the agent's typing indicator stayed on", or "" when err is
// no such turn.
func MessagingAwaited(err error) string {
	if te, ok := errors.AsType[*turnTimeoutError](err); ok {
		return te.lacked
	}
	return ""
}

// awaited says what an exchange still waits for: what the events so far
// lack for the answer to be complete (the rules of "Completion").
func (m *MessagingSession) awaited(turn *MessagingTurn, st *turnState) string {
	what := "the user message"
	switch st.typ {
	case m.events.Join:
		what = "the join request"
	case m.events.UserMessage:
	default:
		what = typeText(st.typ)
	}
	if i := turn.stream(""); i >= 0 {
		return fmt.Sprintf("the stream of message %s never completed (no final chunk, stream end or whole message)", clipID(turn.Messages[i].ID))
	}
	switch {
	case st.answered && m.typingOn:
		return "an answer came, but the agent's typing indicator stayed on, and an answer is complete when it goes off"
	case st.typedOff:
		return fmt.Sprintf("an answer came and the agent's typing indicator went off, but the %s of quiet without a new event that then completes it had not passed", m.start.Quiet)
	case st.answered:
		// Typing off: the quiet that completes an answer on a platform
		// without a typing indicator had not passed.
		return fmt.Sprintf("an answer came, and no event completed it within the %s of quiet that completes one without a typing indicator", m.settle())
	case st.typ == m.events.Join && !m.joined:
		return "no answer to " + what + ": the agent did not join"
	case m.typingOn:
		return "no answer to " + what + ": the agent's typing indicator stayed on"
	}
	return "no answer to " + what
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
			return m.timeout(ctx, "the platform did not take "+typeText(st.typ)+": the write did not complete")
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
			return nil, m.timeout(ctx, "the socket that refused a write did not close")
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
		turn.shed()
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
				m.echoesMessages = m.echoesMessages || st.typ == m.events.UserMessage
			}
		}
	case EventJoined:
		m.joined = true
		turn.Joined = true
		m.joinedAgent = cmp.Or(m.joinedAgent, e.Agent)
		m.joinedEnv = cmp.Or(m.joinedEnv, e.Env)
	case EventAgentMessage, EventAgentChunk, EventAgentMessageEnd, EventLiveAgentMessage:
		if late, err := m.lateWhole(e, turn); late || err != nil {
			return err
		}
		e := turn.finalPiece(e)
		i, completed, err := turn.addMessage(e)
		if err != nil {
			return err
		}
		r := &turn.Messages[i]
		r.events = append(r.events, len(turn.Events)-1)
		if r.Streamed {
			m.maskSpread(turn, r, e)
		}
		if r.Complete {
			m.maskAcross(turn, i)
		}
		if completed && st != nil && m.heard(st) {
			st.answer(at)
		}
	case EventSystem:
		turn.System = append(turn.System, SystemMessage{Level: e.Level, Text: e.Text})
		if e.IsError() && st != nil {
			st.answer(at)
		}
	case EventTypingStop:
		m.typingOn = false
		switch {
		case st == nil || !st.answered:
		case m.start.Quiet > 0:
			// The agent may go on: the exchange waits the quiet
			// (window).
			st.typedOff = true
		default:
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
		turn.maskEvents(r)
	}
	if r.Complete && (masked || e.Kind == EventAgentChunk) {
		// The reply joined the message without its last chunk, or
		// with the key.
		turn.joinReply()
	}
}

// maskEvents masks the events of message r not masked yet: each holds a
// part of a key its message's text held, and together the key.
func (t *MessagingTurn) maskEvents(r *MessagingReply) {
	for _, j := range r.events[r.masked:] {
		e := &t.Events[j]
		e.Text, e.Payload = secret.Mask, json.RawMessage(strconv.Quote(secret.Mask))
		e.Raw, _ = json.Marshal(map[string]string{"id": e.ID, "type": e.Type, "payload": secret.Mask})
	}
	r.masked = len(r.events)
}

// maskAcross masks a key that the message at i, complete, and the
// messages next to it in the reply spell between them, none holding it
// whole: a platform that cuts a long answer into messages of a few
// hundred characters, or an agent that goes on after a pause (what
// messaging_quiet waits for), may cut it anywhere. Each frame was
// redacted alone, and the reply joins the messages with a space, which
// no form of a key holds. Where the pieces meet, both messages lose
// them (each says it was masked) and their events their text.
func (m *MessagingSession) maskAcross(turn *MessagingTurn, i int) {
	red := m.redactor()
	if j := turn.inReply(i, -1); j >= 0 {
		turn.maskBetween(red, j, i)
	}
	if j := turn.inReply(i, 1); j >= 0 {
		turn.maskBetween(red, i, j)
	}
}

// inReply is the message the reply joins next to message i, the nearest
// complete one with text in direction step (-1 before, 1 after), or -1.
func (t *MessagingTurn) inReply(i, step int) int {
	for j := i + step; j >= 0 && j < len(t.Messages); j += step {
		if r := t.Messages[j]; r.Complete && r.Text != "" {
			return j
		}
	}
	return -1
}

// maskBetween masks what of a key the messages a and b, next to each
// other in the reply and each clean alone, spell where a's text ends and
// b's begins. Any match of their joined text crosses that point (each
// alone holds none), so the masked span is one: what String kept before
// and after it, each side keeps. The event that changed either text
// marked the reply to be joined again (addMessage, maskSpread).
func (t *MessagingTurn) maskBetween(red *secret.Redactor, a, b int) {
	x, y := &t.Messages[a], &t.Messages[b]
	joined := x.Text + y.Text
	if !red.Contains(joined) {
		return
	}
	start, end := maskedSpan(joined, red.String(joined))
	// A key learnt since one of them was redacted may lie in it whole:
	// each keeps its own text, and says it was masked.
	head, tail := min(start, len(x.Text)), max(end, len(x.Text))
	x.Text, y.Text = x.Text[:head]+secret.Mask, secret.Mask+joined[tail:]
	t.maskEvents(x)
	t.maskEvents(y)
}

// maskedSpan is the span of text that clean, text redacted with one
// mask, replaced. The mask's own bytes may be the text's around the key
// (a key that begins with "[RE"), so that clean shares more of text's
// start than text kept: of the spans that make clean, the one that
// starts first is taken, which masks more, never less. A clean of more
// than one mask (no span makes it) masks the whole text. Every form of
// a key is longer than the mask (secret.MinLen), so what clean kept of
// text is shorter than text.
func maskedSpan(text, clean string) (start, end int) {
	kept := len(clean) - len(secret.Mask)
	p := min(commonPrefix(text, clean), kept)
	for w := max(0, p-len(secret.Mask)); w <= p; w++ {
		after := kept - w
		if clean[w:w+len(secret.Mask)] == secret.Mask && clean[w+len(secret.Mask):] == text[len(text)-after:] {
			return w, len(text) - after
		}
	}
	return 0, len(text)
}

// commonPrefix is the length in bytes of the longest start a and b share.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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

// heard reports whether a message now can answer st's client event. On a
// platform that echoed an earlier user message, a message before the echo
// of this one is the tail of the answer before (an agent that turned its
// typing indicator off between two messages, the turn before completed
// at the first): it is part of this turn's reply, as it arrived in it,
// but the turn waits for its own answer, where it would have completed
// on the other's typing indicator going off and left its own answer to
// the turn after. A platform that echoes no user message cannot tell
// the two apart.
func (m *MessagingSession) heard(st *turnState) bool {
	return st.acked || !m.echoesMessages || st.typ != m.events.UserMessage
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
	// typedOff: the typing indicator went off after the answer, with
	// MessagingStart.Quiet set: the quiet completes the answer.
	typedOff bool
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
