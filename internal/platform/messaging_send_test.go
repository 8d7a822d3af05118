package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// writeFault breaks the client's next write on its connections once
// armed: the write fails with an error that quotes the access token (as
// an error naming the socket's URL would), after before has run. It
// tells read of every read that returns bytes once armed, and closed of
// every connection closed.
type writeFault struct {
	armed  atomic.Bool
	before func()
	read   chan struct{}
	closed chan struct{}
}

// faultyTransport is srv's client transport with every connection under
// fault.
func faultyTransport(srv *httptest.Server, fault *writeFault) *http.Transport {
	transport := srv.Client().Transport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &faultConn{Conn: c, fault: fault}, nil
	}
	return transport
}

type faultConn struct {
	net.Conn
	fault *writeFault
}

func (c *faultConn) Write(p []byte) (int, error) {
	if !c.fault.armed.CompareAndSwap(true, false) {
		return c.Conn.Write(p)
	}
	if c.fault.before != nil {
		c.fault.before()
	}
	return 0, fmt.Errorf("write to ws://platform/ws?access_token=%s: connection reset by peer", plantedJWT)
}

func (c *faultConn) Close() error {
	if c.fault.closed != nil {
		select {
		case c.fault.closed <- struct{}{}:
		default:
		}
	}
	return c.Conn.Close()
}

func (c *faultConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.fault.read != nil {
		select {
		case c.fault.read <- struct{}{}:
		default:
		}
	}
	return n, err
}

// echoOf is the frame of a platform that logs client event data back to
// the socket under id, metadata and all.
func echoOf(id string, data []byte) string {
	var e map[string]any
	if json.Unmarshal(data, &e) != nil {
		e = map[string]any{}
	}
	e["id"] = id
	b, _ := json.Marshal(e)
	return string(b)
}

// writeAll writes frames; false when the socket is gone.
func writeAll(ctx context.Context, c *websocket.Conn, frames ...string) bool {
	for _, f := range frames {
		if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
			return false
		}
	}
	return true
}

// TestMessagingWriteFails: a socket whose write of the user's message
// fails after a good handshake (the platform reset the connection, or
// closed it mid-turn) is reopened with the session and the cursor of
// the last event, and the message is sent again only where the platform
// echoes client events (its replay would hold the echo had it arrived);
// the answer on the new socket is the turn's. Where it cannot be, the
// turn's error is the platform's (a *NetworkError, its refusal of the
// new handshake, its malformed event), with no credential in it:
// reconnects off, a handshake refused, an event that came before the
// write failed and cannot be used, a close status that refuses or a
// frame over the limit, which the write's own error does not carry (the
// reader has it). A session
// end that arrived before the failed write is the turn's answer, not
// reconnected.
func TestMessagingWriteFails(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// echo: the platform echoes client events.
		echo bool
		// before is what the platform does once the client's write is
		// under way, before it fails: "" nothing, "end" a session end,
		// "refuse" a close frame with a status that refuses, "malformed"
		// an event no conversation could mean, "huge" a frame over the
		// client's limit of 1 KiB.
		before string
		// refuse404 refuses the second handshake: the session is gone.
		refuse404     bool
		maxReconnects int
		// want is the turn's error, "" for none.
		want       string
		reply      string
		resent     int
		reconnects int
		handshakes int32
		// cursors are the cursor queries of the handshakes.
		cursors []string
		ended   bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		act := make(chan struct{})   // the client's write is under way
		acted := make(chan struct{}) // the platform did what before says
		var (
			mu      sync.Mutex
			cursors []string
			p       *hostileMessaging
		)
		p = &hostileMessaging{}
		p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
			mu.Lock()
			cursors = append(cursors, r.URL.Query().Get("cursor"))
			mu.Unlock()
			if tc.refuse404 && p.handshakes.Load() > 1 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"error":"session not found for %s"}`, plantedJWT)
				return true
			}
			return false
		}
		p.socket = func(ctx context.Context, c *websocket.Conn) {
			if p.handshakes.Load() > 1 {
				// The new socket: the resent message, if it comes, is
				// answered; without echoes the platform answers as if
				// the message had arrived.
				if tc.echo {
					_, data, err := c.Read(ctx)
					if err != nil || !writeAll(ctx, c, echoOf("5", data)) {
						return
					}
				}
				if writeAll(ctx, c, `{"id":"6","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Answer."}}`,
					`{"id":"7","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
					c.Read(ctx)
				}
				return
			}
			_, data, err := c.Read(ctx) // the join
			if err != nil {
				return
			}
			if tc.echo && !writeAll(ctx, c, echoOf("1", data)) {
				return
			}
			if !writeAll(ctx, c, `{"id":"2","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
				return
			}
			select {
			case <-act:
			case <-ctx.Done():
				return
			}
			switch tc.before {
			case "end":
				writeAll(ctx, c, `{"id":"5","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"expired"}}`)
			case "refuse":
				go c.Close(websocket.StatusPolicyViolation, "refused "+plantedJWT)
			case "malformed":
				writeAll(ctx, c, `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":{"value":"Hello."}}}`)
			case "huge":
				writeAll(ctx, c, `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"`+strings.Repeat("x", 2<<10)+`"}}`)
			}
			close(acted)
			c.Read(ctx)
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		fault := &writeFault{read: make(chan struct{}, 1), closed: make(chan struct{}, 1)}
		transport := faultyTransport(srv, fault)
		defer transport.CloseIdleConnections()
		c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
			HTTPClient: &http.Client{Transport: transport}, Retry: RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		c.msgLimits = messagingLimits{frame: 1 << 10}
		m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, MaxReconnects: tc.maxReconnects})
		if m.Opening().Reply != "Hello." {
			t.Fatalf("opening %q", m.Opening().Reply)
		}
		fault.before = func() {
			// Drained before the write: what the platform does now is
			// read only once the write failed.
			for len(fault.read) > 0 {
				<-fault.read
			}
			for len(fault.closed) > 0 {
				<-fault.closed
			}
			close(act)
			<-acted
			switch tc.before {
			case "end", "malformed":
				// The event is in the session's queue before the write
				// fails, as when it came just before a close.
				in := <-m.frames.ch
				m.frames.ch <- in
			case "refuse":
				// The close frame reached the client's reader.
				<-fault.read
			case "huge":
				// The reader read past the limit and closed the socket
				// under the write, which fails on it; the reader's
				// error waits for the write to let go of the socket.
				<-fault.closed
			}
		}
		fault.armed.Store(true)
		turn, err := m.Say(context.Background(), "What is my balance?")
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("error\n%s\nwant\n%s", got, tc.want)
		}
		if s := fmt.Sprintf("%v %+v %s %s", err, err, turn.Request, turn.Reply); strings.Contains(s, "PLANTED") {
			t.Errorf("a credential leaked: %s", s)
		}
		if turn.Reply != tc.reply || turn.Resent != tc.resent || turn.Reconnects != tc.reconnects || turn.SessionEnded != tc.ended {
			t.Errorf("reply %q, resent %d, %d reconnects, ended %t; want %q, %d, %d, %t",
				turn.Reply, turn.Resent, turn.Reconnects, turn.SessionEnded, tc.reply, tc.resent, tc.reconnects, tc.ended)
		}
		if n := p.handshakes.Load(); n != tc.handshakes {
			t.Errorf("%d handshakes, want %d", n, tc.handshakes)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(cursors, ",") != strings.Join(tc.cursors, ",") {
			t.Errorf("cursors %q, want %q", cursors, tc.cursors)
		}
		if tc.want != "" {
			var ne *NetworkError
			var ae *APIError
			var re *ResponseError
			if !errors.As(err, &ne) && !errors.As(err, &ae) && !errors.As(err, &re) {
				t.Errorf("error %T, want the platform's: a *NetworkError, *APIError or *ResponseError", err)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "echoed: the message goes again on the new socket", echo: true,
			reply: "Answer.", resent: 1, reconnects: 1, handshakes: 2, cursors: []string{"", "4"}},
		{name: "not echoed: the message is not sent twice",
			reply: "Answer.", reconnects: 1, handshakes: 2, cursors: []string{"", "4"}},
		{name: "reconnects off", echo: true, maxReconnects: -1,
			want:       "WS /ws: connection lost after the request was sent: socket closed (0 reconnects in this turn): failed to write msg: failed to write frame: failed to flush: write to ws://platform/ws?access_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]: connection reset by peer",
			handshakes: 1, cursors: []string{""}},
		{name: "the new socket is refused", echo: true, refuse404: true,
			want:       "WS /ws: 404: session not found for eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]",
			reconnects: 1, handshakes: 2, cursors: []string{"", "4"}},
		{name: "a session end before the write", before: "end",
			handshakes: 1, cursors: []string{""}, ended: true},
		{name: "a malformed event before the write", echo: true, before: "malformed",
			want:       "WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: payload.text is an object, want a string",
			handshakes: 1, cursors: []string{""}},
		// The reader closed the socket on it; the write's own error
		// ("closed") would read as a drop worth a reconnect, which the
		// platform would answer as if nothing had happened.
		{name: "a frame over the limit before the write", echo: true, before: "huge",
			want:       "WS /ws: 101: malformed response: a frame exceeds the limit of 1 KiB",
			handshakes: 1, cursors: []string{""}},
		{name: "a refusing close before the write", echo: true, before: "refuse",
			want:       `WS /ws: connection lost after the request was sent: the platform closed the socket with status 1008: "refused eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]"`,
			handshakes: 1, cursors: []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingHandshakeWaitCut: a caller that gives up while a
// handshake waits (a 429's Retry-After, the backoff after a 503; in the
// opening or in a turn's reconnect) has its call end at once, with its
// context's error in a *NetworkError of the socket: not after the wait,
// not as a rate limit or the turn's own timeout, and with no handshake
// more.
func TestMessagingHandshakeWaitCut(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// refused is the handshake the platform refuses: 1 the
		// opening's, 2 the reconnect's.
		refused int32
		status  int
		wait    time.Duration
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		p := &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
			c.Read(ctx) // the message, then the socket drops without a close frame
		})}
		p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
			if p.handshakes.Load() != tc.refused {
				return false
			}
			if tc.status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "30")
			}
			w.WriteHeader(tc.status)
			fmt.Fprintf(w, `{"error":"busy %s"}`, plantedJWT)
			return true
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		clk := newStandingClock()
		c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
			Retry: RetryPolicy{MaxAttempts: 3, BaseDelay: time.Second, MaxDelay: time.Second, Sleep: clk.Sleep}, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		var m *MessagingSession
		go func() {
			defer close(done)
			m, err = c.OpenMessaging(ctx, MessagingStart{})
			if err == nil {
				_, err = m.Say(ctx, "What is my balance?")
			}
		}()
		select {
		case d := <-clk.asked:
			if d <= 0 || tc.wait != 0 && d != tc.wait {
				t.Errorf("a wait of %s, want the Retry-After of %s (or a backoff when 0)", d, tc.wait)
			}
		case <-done:
			t.Fatalf("no wait: %v", err)
		}
		cancel()
		await(t, done, "the call once its context ended")
		if m != nil {
			m.Close()
		}
		var ne *NetworkError
		var rl *RateLimitError
		if !errors.As(err, &ne) || !errors.Is(err, context.Canceled) || errors.As(err, &rl) {
			t.Errorf("error %v (%T), want the context's in a *NetworkError", err, err)
		}
		if _, ok := MessagingTurnTimeout(err); ok {
			t.Errorf("error %v: a turn timeout", err)
		}
		if !strings.Contains(err.Error(), "WS /ws: ") || !strings.HasSuffix(err.Error(), "context canceled") {
			t.Errorf("error %q, want the socket's and the context's", err)
		}
		if n := p.handshakes.Load(); n != tc.refused {
			t.Errorf("%d handshakes, want %d", n, tc.refused)
		}
		if s := fmt.Sprintf("%v %+v", err, err); strings.Contains(s, "PLANTED") {
			t.Errorf("a credential leaked: %s", s)
		}
	}
	for _, tc := range []testCase{
		{name: "the opening's Retry-After", refused: 1, status: http.StatusTooManyRequests, wait: 30 * time.Second},
		{name: "the opening's backoff", refused: 1, status: http.StatusServiceUnavailable},
		{name: "a reconnect's Retry-After", refused: 2, status: http.StatusTooManyRequests, wait: 30 * time.Second},
		{name: "a reconnect's backoff", refused: 2, status: http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingOpenBeforeJoin: an opening whose history batch ends the
// session, or shows the agent joined, sends no join request (rule 2: the
// join is never sent once the agent joined; nor to a session over), and
// is no error: the opening holds what the batch said. An end that answers
// the join is the opening's answer, no error either: the caller judges
// it.
func TestMessagingOpenBeforeJoin(t *testing.T) {
	t.Parallel()
	const (
		end    = `{"id":"1","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"expired"}}`
		joined = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
		hello  = `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`
	)
	type testCase struct {
		name string
		// history is the batch's events; answer answers the join.
		history, answer string
		joins           int32
		ended, joinedIn bool
		reply           string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var joins atomic.Int32
		handled := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/v1/access-token":
				fmt.Fprintf(w, `{"access_token":%q}`, plantedJWT)
			case "/api/v1/sessions":
				fmt.Fprint(w, `{"session_id":"s-1"}`)
			case "/ws":
				defer close(handled)
				c, err := websocket.Accept(w, r, nil)
				if err != nil {
					return
				}
				defer c.CloseNow()
				ctx := r.Context()
				if !writeAll(ctx, c, `{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":[`+tc.history+`]}`) {
					return
				}
				for {
					if _, _, err := c.Read(ctx); err != nil {
						return
					}
					joins.Add(1)
					if tc.answer != "" && !writeAll(ctx, c, tc.answer) {
						return
					}
				}
			}
		}))
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
		if m == nil {
			t.Fatalf("no session: %v", err)
		}
		m.Close()
		await(t, handled, "the platform's socket once the client closed it")
		if err != nil {
			t.Fatalf("error %v", err)
		}
		o := m.Opening()
		ended, _ := m.Ended()
		if o.SessionEnded != tc.ended || ended != tc.ended || m.Joined() != tc.joinedIn || o.Reply != tc.reply {
			t.Errorf("opening ended %t (session %t), joined %t, reply %q; want %t, %t, %q", o.SessionEnded, ended, m.Joined(), o.Reply, tc.ended, tc.joinedIn, tc.reply)
		}
		if n := joins.Load(); n != tc.joins {
			t.Errorf("%d join requests, want %d", n, tc.joins)
		}
	}
	for _, tc := range []testCase{
		{name: "an end in the history batch", history: end, ended: true},
		{name: "the agent joined in the history batch", history: joined + "," + hello, joinedIn: true, reply: "Hello."},
		{name: "an end in answer to the join", answer: end, joins: 1, ended: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingReconnectsBounded: a platform whose every new socket
// drops (after its history batch, or before it) has a turn reopen it
// MaxReconnects times, no more, and then the turn's error says so: a
// *NetworkError of the socket that counts them.
func TestMessagingReconnectsBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// batch: the new sockets send their history batch first.
		batch bool
		want  string
	}{
		{name: "after the history batch", batch: true},
		{name: "before the history batch", want: "socket closed before the history batch: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p *hostileMessaging
			p = &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
				c.Read(ctx) // the message, then the socket drops
			})}
			p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
				if p.handshakes.Load() == 1 {
					return false
				}
				if c, err := websocket.Accept(w, r, nil); err == nil {
					if tc.batch {
						writeAll(r.Context(), c, `{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":[]}`)
					}
					c.CloseNow()
				}
				return true
			}
			srv := httptest.NewServer(p)
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, MaxReconnects: 2})
			turn, err := m.Say(context.Background(), "What is my balance?")
			var ne *NetworkError
			want := "WS /ws: connection lost after the request was sent: socket closed (2 reconnects in this turn): "
			if !errors.As(err, &ne) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (%T), want the socket's, after 2 reconnects", err, err)
			}
			if n := p.handshakes.Load(); n != 3 || turn.Reconnects != 2 || m.Reconnects() != 2 {
				t.Errorf("%d handshakes, %d reconnects in the turn, %d in the session; want 3, 2, 2", n, turn.Reconnects, m.Reconnects())
			}
		})
	}
}

// reopened answers a handshake with a socket whose history batch holds
// the events replay, and then plays then.
func reopened(w http.ResponseWriter, r *http.Request, replay []string, then func(ctx context.Context, c *websocket.Conn)) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	if writeAll(r.Context(), c, `{"id":"h2","type":"EVENT_TYPE_EVENT_BATCH","payload":[`+strings.Join(replay, ",")+`]}`) {
		then(r.Context(), c)
	}
}

// TestMessagingResendAfterDrop: on a platform that echoes client events,
// a socket that drops while a turn waits is reopened, and the user's
// message goes again only when it certainly never arrived: not once its
// echo came, nor once its answer began, nor to a session whose replay
// shows it ended (the end before the message's echo is the same end as
// one read before sending: ErrMessagingEnded).
func TestMessagingResendAfterDrop(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// before are the frames the first socket sends for the message
		// before it drops; replay is the new socket's history batch;
		// after follows it, once the resent message is read when resent.
		before        []string
		replay, after []string
		resent        int
		reply         string
		ended         bool
		want          error
	}
	const (
		answer = `{"id":"6","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Answer."}}`
		stop   = `{"id":"7","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`
		end    = `{"id":"6","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"expired"}}`
	)
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var (
			p    *hostileMessaging
			mu   sync.Mutex
			echo string // of the message
		)
		echoed := func(frames []string) []string {
			mu.Lock()
			defer mu.Unlock()
			out := make([]string, len(frames))
			for i, f := range frames {
				out[i] = strings.ReplaceAll(f, "ECHO", echo)
			}
			return out
		}
		p = &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
			_, data, err := c.Read(ctx) // the join
			if err != nil || !writeAll(ctx, c, echoOf("1", data),
				`{"id":"2","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`,
				`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello."}}`,
				`{"id":"4","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
				return
			}
			if _, data, err = c.Read(ctx); err != nil { // the message
				return
			}
			mu.Lock()
			echo = echoOf("5", data)
			mu.Unlock()
			writeAll(ctx, c, echoed(tc.before)...) // then the socket drops without a close frame
		}}
		p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
			if p.handshakes.Load() == 1 {
				return false
			}
			reopened(w, r, echoed(tc.replay), func(ctx context.Context, c *websocket.Conn) {
				if tc.resent > 0 {
					if _, _, err := c.Read(ctx); err != nil {
						return
					}
				}
				if writeAll(ctx, c, tc.after...) {
					c.Read(ctx)
				}
			})
			return true
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, Settle: time.Hour})
		turn, err := m.Say(context.Background(), "What is my balance?")
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("error %v, want %v", err, tc.want)
		}
		if turn.Resent != tc.resent || turn.Reconnects != 1 || turn.Reply != tc.reply || turn.SessionEnded != tc.ended {
			t.Errorf("resent %d, %d reconnects, reply %q, ended %t; want %d, 1, %q, %t",
				turn.Resent, turn.Reconnects, turn.Reply, turn.SessionEnded, tc.resent, tc.reply, tc.ended)
		}
	}
	for _, tc := range []testCase{
		{name: "nothing arrived: sent again", after: []string{answer, stop}, resent: 1, reply: "Answer."},
		{name: "echoed", before: []string{"ECHO"}, after: []string{answer, stop}, reply: "Answer."},
		{name: "echoed in the replay", replay: []string{"ECHO"}, after: []string{answer, stop}, reply: "Answer."},
		{name: "answered", before: []string{answer}, after: []string{stop}, reply: "Answer."},
		{name: "ended in the replay", replay: []string{end}, ended: true, want: ErrMessagingEnded},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingEndedWhileDropped: a socket that dropped between turns is
// reopened before the next message goes; when the replay shows the
// session ended meanwhile, the message is not sent (ErrMessagingEnded,
// the end in the turn) instead of waiting out the turn for an answer.
func TestMessagingEndedWhileDropped(t *testing.T) {
	t.Parallel()
	var (
		p    *hostileMessaging
		sent atomic.Int32 // client events the new socket read
	)
	p = &hostileMessaging{socket: answerJoin(func(context.Context, *websocket.Conn) {})} // then drops
	p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
		if p.handshakes.Load() == 1 {
			return false
		}
		reopened(w, r, []string{`{"id":"5","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"expired"}}`}, func(ctx context.Context, c *websocket.Conn) {
			for {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				sent.Add(1)
			}
		})
		return true
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second})
	// The drop is queued before the turn begins.
	in := <-m.frames.ch
	m.frames.ch <- in
	turn, err := m.Say(context.Background(), "What is my balance?")
	if !errors.Is(err, ErrMessagingEnded) || !turn.SessionEnded || turn.Reconnects != 1 {
		t.Errorf("error %v, ended %t, %d reconnects; want ErrMessagingEnded after 1 reconnect, the end in the turn", err, turn.SessionEnded, turn.Reconnects)
	}
	m.Close()
	if n := sent.Load(); n != 0 || p.handshakes.Load() != 2 {
		t.Errorf("%d client events on the new socket, %d handshakes; want none, 2", n, p.handshakes.Load())
	}
}

// TestMessagingEndBeforeEchoAnswersTheRequest: on a platform that echoes
// client events, a session end that comes before the echo of the user's
// message says the message was never taken (ErrMessagingEnded); before
// the echo of a request to end the session, or of a live agent's, it is
// that request's answer, not an error.
func TestMessagingEndBeforeEchoAnswersTheRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		call func(m *MessagingSession) (*MessagingTurn, error)
		want error
		// before are what the platform sends before the end: the echo
		// of the request (echo), its answer.
		echo   bool
		before []string
		// silent is a platform that echoes nothing, the join neither.
		silent bool
	}{
		{name: "a user message", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hi") }, want: ErrMessagingEnded},
		// After the echo, or with an answer, the end is the message's.
		{name: "a user message after its echo", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hi") }, echo: true},
		{name: "a user message answered", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hi") },
			before: []string{`{"id":"7","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`}},
		{name: "a user message answered by an error", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hi") },
			before: []string{`{"id":"7","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"level":"SYSTEM_MESSAGE_LEVEL_ERROR","message":"Error: Session not found"}}`}},
		// Where nothing is echoed, an end cannot be told from an answer.
		{name: "a user message where nothing is echoed", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hi") }, silent: true},
		{name: "an end request", call: func(m *MessagingSession) (*MessagingTurn, error) { return m.End(context.Background()) }},
		{name: "a live agent request", call: func(m *MessagingSession) (*MessagingTurn, error) {
			return m.RequestLiveAgent(context.Background(), "help")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
				_, data, err := c.Read(ctx) // the join
				echo := echoOf("1", data)
				if tc.silent {
					echo = `{"id":"1","type":"EVENT_TYPE_READ_RECEIPT","payload":{}}`
				}
				if err != nil || !writeAll(ctx, c, echo,
					`{"id":"2","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`,
					`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
					`{"id":"4","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
					return
				}
				_, data, err = c.Read(ctx)
				if err != nil {
					return
				}
				frames := tc.before
				if tc.echo {
					frames = append(frames, echoOf("6", data))
				}
				writeAll(ctx, c, append(frames, `{"id":"5","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`)...)
				c.Read(ctx)
			}}
			srv := httptest.NewServer(p)
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, Settle: time.Hour})
			turn, err := tc.call(m)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) || !turn.SessionEnded {
				t.Errorf("error %v, ended %t; want %v, the end in the turn", err, turn.SessionEnded, tc.want)
			}
		})
	}
}

// TestMessagingClientEventsOnTheWire: each call sends its client event
// under the name MessagingStart.Events gives it (a platform with names of
// its own), with its payload and with
// metadata.custom holding the session's custom values, the message's
// over them, and the client's id: the id is what recognises the event's
// echo after a reconnect, and a custom value of its name is refused
// (ownCustom). Join is refused once the agent joined.
func TestMessagingClientEventsOnTheWire(t *testing.T) {
	t.Parallel()
	got := make(chan map[string]any, 8)
	p := &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var e map[string]any
			json.Unmarshal(data, &e)
			if len(got) == 0 && !writeAll(ctx, c, joinedC1) {
				return
			}
			got <- e
			if !writeAll(ctx, c, `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"ok"}}`, `{"type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
				return
			}
		}
	}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	names := MessagingClientEvents{Join: "X_JOIN", UserMessage: "X_SAY", RequestLiveAgent: "X_HUMAN", EndSession: "X_BYE"}
	m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute, Events: names,
		Custom: map[string]any{"tenant": "t1", "lang": "en"}})
	ctx := context.Background()
	for _, call := range []func() (*MessagingTurn, error){
		func() (*MessagingTurn, error) {
			// A key the user typed reaches the platform, and no report:
			// the turn keeps the request masked.
			if _, err := m.Send(ctx, MessagingMessage{Text: "hi", Custom: map[string]any{clientIDKey: "mine"}}); err == nil || !strings.Contains(err.Error(), "would replace yours") {
				t.Errorf("a message's own %s: %v, want it refused before it is sent", clientIDKey, err)
			}
			turn, err := m.Send(ctx, MessagingMessage{Text: "hi " + plantedConnector, Custom: map[string]any{"lang": "fr"}})
			if err == nil && strings.Contains(string(turn.Request), "PLANTED") {
				t.Errorf("the request kept the key: %s", turn.Request)
			}
			return turn, err
		},
		func() (*MessagingTurn, error) { return m.RequestLiveAgent(ctx, "billing") },
		func() (*MessagingTurn, error) { return m.RequestLiveAgent(ctx, "") },
		func() (*MessagingTurn, error) { return m.End(ctx) },
	} {
		if turn, err := call(); err != nil || turn.Reply != "ok" {
			t.Fatalf("turn %v: %v", turn, err)
		}
	}
	// A second join is never right once the agent joined: it is
	// refused before it is sent.
	if _, err := m.Join(ctx); err == nil || !strings.Contains(err.Error(), "the agent has joined already") {
		t.Errorf("join after the agent joined: %v", err)
	}
	close(got)
	var wire []string
	for e := range got {
		b, _ := json.Marshal([]any{e["type"], e["payload"], e["metadata"]})
		wire = append(wire, string(b))
	}
	want := []string{
		`["X_JOIN",{},{"custom":{"agenttest_id":"c1","lang":"en","tenant":"t1"}}]`,
		`["X_SAY",{"text":"hi ` + plantedConnector + `"},{"custom":{"agenttest_id":"c2","lang":"fr","tenant":"t1"}}]`,
		`["X_HUMAN",{"reason":"billing"},{"custom":{"agenttest_id":"c3","lang":"en","tenant":"t1"}}]`,
		`["X_HUMAN",{},{"custom":{"agenttest_id":"c4","lang":"en","tenant":"t1"}}]`,
		`["X_BYE",{},{"custom":{"agenttest_id":"c5","lang":"en","tenant":"t1"}}]`,
	}
	if !slices.Equal(wire, want) {
		t.Errorf("client events\n%s\nwant\n%s", strings.Join(wire, "\n"), strings.Join(want, "\n"))
	}
}

// TestMessagingBetweenTurns: what arrived between turns is read before
// the next client event is sent: a session end makes the send
// ErrMessagingEnded with the end in the turn, an event that cannot be
// used the platform's error, and neither sends anything; a closed
// session refuses at once.
func TestMessagingBetweenTurns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, frame string
		closed      bool
		want        string
	}{
		{name: "the session ended", frame: `{"id":"5","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"expired"}}`, want: ErrMessagingEnded.Error()},
		{name: "a malformed event", frame: `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":"x"}`,
			want: "WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: payload is a string, want an object"},
		{name: "closed", closed: true, want: "messaging session s-1 is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sent atomic.Int32 // client events after the join
			srv := httptest.NewServer(&hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
				if tc.frame != "" && !writeAll(ctx, c, tc.frame) {
					return
				}
				for {
					if _, _, err := c.Read(ctx); err != nil {
						return
					}
					sent.Add(1)
					// Answered, a message sent by mistake fails the
					// test at once.
					writeAll(ctx, c, `{"id":"7","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Again."}}`, `{"id":"8","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`)
				}
			})})
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
			ctx := context.Background()
			if tc.closed {
				m.Close()
				// A session that went on would wait for no answer.
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				cancel()
			} else {
				// The frame is queued before the turn begins.
				in := <-m.frames.ch
				m.frames.ch <- in
			}
			turn, err := m.Say(ctx, "hi")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if ended := strings.Contains(tc.frame, "SESSION_END"); turn.SessionEnded != ended {
				t.Errorf("the turn ended %t, want %t", turn.SessionEnded, ended)
			}
			m.Close()
			if n := sent.Load(); n != 0 {
				t.Errorf("%d client events sent", n)
			}
		})
	}
}

// TestMessagingJoinAfterDrop: a socket that drops while the join waits
// for its answer is reopened, and the join goes again unless the replay
// shows the agent joined (rule 2), on a platform that echoes nothing.
func TestMessagingJoinAfterDrop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		replay []string
		resent int
	}{
		{name: "joined in the replay", replay: []string{joinedC1}},
		{name: "not joined: sent again", resent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var joins atomic.Int32 // on the new socket
			p := &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
				c.Read(ctx) // the join; then the socket drops without a close frame
			}}
			p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
				if p.handshakes.Load() == 1 {
					return false
				}
				reopened(w, r, tc.replay, func(ctx context.Context, c *websocket.Conn) {
					if tc.resent > 0 {
						if _, _, err := c.Read(ctx); err != nil {
							return
						}
						joins.Add(1)
					}
					if writeAll(ctx, c, hello, typingStop) {
						if _, _, err := c.Read(ctx); err == nil {
							joins.Add(1)
						}
					}
				})
				return true
			}
			srv := httptest.NewServer(p)
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, Settle: time.Hour})
			o := m.Opening()
			m.Close()
			if o.Resent != tc.resent || o.Reconnects != 1 || o.Reply != "Hello." || int(joins.Load()) != tc.resent {
				t.Errorf("resent %d (%d joins read), %d reconnects, reply %q; want %d, 1, %q", o.Resent, joins.Load(), o.Reconnects, o.Reply, tc.resent, "Hello.")
			}
		})
	}
}

// TestMessagingAnswerAfterEcho: on a platform that echoed a user
// message, a message that comes before the echo of the next one is the
// tail of the answer before (an agent that turned its typing indicator
// off between two messages): the turn keeps it but completes on its own
// answer, after the echo. A platform that echoes the join but no user
// message, or a request other than a user message that is not echoed,
// is answered by what follows it, as before.
func TestMessagingAnswerAfterEcho(t *testing.T) {
	t.Parallel()
	const (
		tail  = `{"id":"20","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your bill is 84.20."}}`
		stop1 = `{"id":"21","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`
		own   = `{"id":"22","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"We open at 9."}}`
		stop2 = `{"id":"23","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`
	)
	for _, tc := range []struct {
		name string
		// echoFirst: the platform echoes the first user message.
		echoFirst bool
		// second is the second call; its answer is tail, stop1, then
		// (with echo) the echo of it, own, stop2.
		second func(m *MessagingSession) (*MessagingTurn, error)
		echo   bool
		want   string
		// middle: a live agent request, echoed and answered, comes
		// between the two (its echo does not unlearn the first's).
		middle bool
	}{
		{name: "a user message after an echoed one", echoFirst: true, echo: true,
			second: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hours") },
			want:   "Your bill is 84.20. We open at 9."},
		{name: "a user message after an echoed one and an echoed request", echoFirst: true, echo: true, middle: true,
			second: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hours") },
			want:   "Your bill is 84.20. We open at 9."},
		{name: "a user message where user messages are not echoed",
			second: func(m *MessagingSession) (*MessagingTurn, error) { return m.Say(context.Background(), "hours") },
			want:   "Your bill is 84.20."},
		{name: "a live agent request, not echoed", echoFirst: true,
			second: func(m *MessagingSession) (*MessagingTurn, error) {
				return m.RequestLiveAgent(context.Background(), "help")
			},
			want: "Your bill is 84.20."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
				_, data, err := c.Read(ctx) // the join, echoed
				if err != nil || !writeAll(ctx, c, echoOf("1", data),
					`{"id":"2","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`,
					`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`,
					`{"id":"4","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
					return
				}
				if _, data, err = c.Read(ctx); err != nil {
					return
				}
				var first []string
				if tc.echoFirst {
					first = append(first, echoOf("10", data))
				}
				if !writeAll(ctx, c, append(first, `{"id":"11","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Let me check."}}`,
					`{"id":"12","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`)...) {
					return
				}
				if _, data, err = c.Read(ctx); err != nil {
					return
				}
				if tc.middle {
					if !writeAll(ctx, c, echoOf("13", data), `{"id":"14","type":"EVENT_TYPE_LIVE_AGENT_MESSAGE","payload":{"text":"Sam here."}}`,
						`{"id":"15","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
						return
					}
					if _, data, err = c.Read(ctx); err != nil {
						return
					}
				}
				frames := []string{tail, stop1}
				if tc.echo {
					frames = append(frames, echoOf("19", data), own, stop2)
				}
				writeAll(ctx, c, frames...)
				c.Read(ctx)
			}}
			srv := httptest.NewServer(p)
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second, Settle: time.Hour})
			if turn, err := m.Say(context.Background(), "my bill"); err != nil || turn.Reply != "Let me check." {
				t.Fatalf("first turn: %v, reply %q", err, turn.Reply)
			}
			if tc.middle {
				if turn, err := m.RequestLiveAgent(context.Background(), "help"); err != nil || turn.Reply != "Sam here." {
					t.Fatalf("live agent request: %v, reply %q", err, turn.Reply)
				}
			}
			turn, err := tc.second(m)
			if err != nil || turn.Reply != tc.want || turn.CompletedBy != "typing" {
				t.Errorf("second turn: %v, reply %q completed by %q; want %q completed by typing", err, turn.Reply, turn.CompletedBy, tc.want)
			}
		})
	}
}
