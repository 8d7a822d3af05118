package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

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
		pc.done(m.c.paceNow(), rq, t, answered, limited, pause)
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
			return m.timeout(ctx, "the handshake of the socket did not complete")
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
		// The reference's client sends nothing before it (rule 1): a
		// platform that waits for the join first waits for ever.
		return m.timeout(ctx, "no history batch after the handshake, which the client waits for before it sends anything")
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
