package platform

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/secret"
)

// hostileMessaging is a Messaging platform whose socket (or handshake)
// misbehaves as a test says. Its token and session steps are plain; every
// request it receives is counted and every credential it saw is kept.
type hostileMessaging struct {
	// handshake answers the handshake itself when it returns true.
	handshake func(w http.ResponseWriter, r *http.Request) bool
	// socket plays the socket after the history batch; the join request
	// has not been read yet.
	socket     func(ctx context.Context, c *websocket.Conn)
	handshakes atomic.Int32
	// token is the access token it issues, plantedJWT when empty.
	token string
}

func (p *hostileMessaging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/v1/access-token":
		fmt.Fprintf(w, `{"token":%q}`, cmp.Or(p.token, plantedJWT))
	case "/api/v1/sessions":
		fmt.Fprint(w, `{"sessionId":"s-1"}`)
	case "/ws":
		p.handshakes.Add(1)
		if p.handshake != nil && p.handshake(w, r) {
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		ctx := r.Context()
		if c.Write(ctx, websocket.MessageText, []byte(`{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":[]}`)) != nil {
			return
		}
		p.socket(ctx, c)
	default:
		http.NotFound(w, r)
	}
}

// flood writes frame until the client stops reading, then waits for its
// close.
func flood(frame []byte) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil { // the join
			return
		}
		for c.Write(ctx, websocket.MessageText, frame) == nil {
		}
	}
}

// answer reads the join and answers it with frames, then waits for the
// client to go.
func answer(frames ...string) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		for _, f := range frames {
			if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
				return
			}
		}
		c.Read(ctx)
	}
}

// recorder is another origin: it keeps every request it receives, with
// the query and the credentials.
type recorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.got = append(rec.got, fmt.Sprintf("%s %s?%s %v", r.Method, r.URL.Path, r.URL.RawQuery, r.Header))
		rec.mu.Unlock()
		fmt.Fprintf(w, `{"token":%q,"sessionId":"stolen"}`, plantedJWT)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.got...)
}

// switchWith answers a handshake 101 with the given header lines, and
// nothing else.
func switchWith(headers string) func(w http.ResponseWriter, r *http.Request) bool {
	return func(w http.ResponseWriter, r *http.Request) bool {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return true
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\n" + headers + "\r\n")
		brw.Flush()
		return true
	}
}

// TestMessagingHostileSocket: what a platform does wrong on the socket
// is its error (a *ResponseError, not retried, the agent never blamed),
// within bounds the client keeps, and carries no credential anywhere.
func TestMessagingHostileSocket(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		p      *hostileMessaging
		limits messagingLimits
		// want is the error's text after "open messaging session s-1: ".
		want       string
		handshakes int32
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(tc.p)
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
		c.msgLimits = tc.limits
		// Without the bounds the turn would wait for its timeout.
		m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
		if err == nil {
			t.Fatal("no error")
		}
		// The session was created: it comes with the error, for what
		// arrived to be read and the session closed. A flood stops at
		// the frame over the bounds.
		if m == nil {
			t.Fatal("no session with the error")
		}
		m.Close()
		var got int64
		for _, e := range m.Opening().Events {
			got += int64(len(e.Raw))
		}
		if n := len(m.Opening().Events); tc.limits.turnFrames > 0 && n != tc.limits.turnFrames-1 {
			t.Errorf("%d events taken, want %d (the history batch is a frame)", n, tc.limits.turnFrames-1)
		}
		if over := tc.limits.turnBytes; over > 0 && (got > over || got < over-2*1024) {
			t.Errorf("%d bytes of events taken, want the most under %d", got, over)
		}
		if got := strings.TrimPrefix(err.Error(), "open messaging session s-1: "); got != tc.want {
			t.Errorf("error\n%s\nwant\n%s", got, tc.want)
		}
		if IsTransient(err) {
			t.Errorf("a transient error: %v", err)
		}
		// A refused handshake is the socket's: a 401 there is about the
		// connector token and host, not an API key.
		if _, ok := errors.AsType[*APIError](err); ok && !IsMessaging(err) {
			t.Errorf("not a Messaging error: %v", err)
		}
		if n := tc.p.handshakes.Load(); n != tc.handshakes {
			t.Errorf("%d handshakes, want %d", n, tc.handshakes)
		}
		if s := fmt.Sprintf("%v %+v", err, err); strings.Contains(s, "PLANTED") {
			t.Errorf("a credential leaked: %s", s)
		}
	}
	frame := func(n int) []byte {
		return []byte(`{"type":"EVENT_TYPE_SOMETHING","payload":{"x":"` + strings.Repeat("x", n) + `"}}`)
	}
	for _, tc := range []testCase{
		{
			// A reconnect would only receive it again.
			name:   "a frame over the limit",
			p:      &hostileMessaging{socket: flood(frame(2048))},
			limits: messagingLimits{frame: 1024},
			want:   "join: WS /ws: 101: malformed response: a frame exceeds the limit of 1 KiB", handshakes: 1,
		},
		{
			name: "a history batch over the limit",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				c, err := websocket.Accept(w, r, nil)
				if err != nil {
					return true
				}
				defer c.CloseNow()
				c.Write(r.Context(), websocket.MessageText, []byte(`{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":[`+string(frame(2048))+`]}`))
				c.Read(r.Context())
				return true
			}},
			limits: messagingLimits{frame: 1024},
			want:   "WS /ws: 101: malformed response: a frame exceeds the limit of 1 KiB", handshakes: 1,
		},
		{
			name:   "a flood of events that answer nothing",
			p:      &hostileMessaging{socket: flood(frame(10))},
			limits: messagingLimits{turnFrames: 50},
			want:   "join: WS /ws: 101: malformed response: more than 16 MiB or 50 frames in one turn without its answer ending it: the platform floods the session", handshakes: 1,
		},
		{
			name:   "a flood of bytes",
			p:      &hostileMessaging{socket: flood(frame(1000))},
			limits: messagingLimits{turnBytes: 8 << 10},
			want:   "join: WS /ws: 101: malformed response: more than 8 KiB or 100000 frames in one turn without its answer ending it: the platform floods the session", handshakes: 1,
		},
		// A message whose text cannot be read would be an empty reply,
		// and fail the case on the agent.
		{
			name: "a message whose text is an object",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":{"value":"Hello."}}}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: payload.text is an object, want a string", handshakes: 1,
		},
		{
			name: "a chunk whose delta is an array",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","delta":["Hel","lo."],"final":true}}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE_CHUNK: payload.delta is an array, want a string", handshakes: 1,
		},
		{
			name: "a live agent's message whose text is a boolean",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_LIVE_AGENT_MESSAGE","payload":{"content":true}}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_LIVE_AGENT_MESSAGE: payload.content is a boolean, want a string", handshakes: 1,
		},
		{
			name: "a message whose payload is a string",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":"Hello."}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: payload is a string, want an object", handshakes: 1,
		},
		{
			name: "a message without a payload",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_AGENT_MESSAGE"}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: no payload, want an object", handshakes: 1,
		},
		{
			name: "a chunk whose payload is null",
			p:    &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":null}`)},
			want: "join: WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE_CHUNK: payload is null, want an object", handshakes: 1,
		},
		{
			name: "a replayed message whose text is an object",
			p: &hostileMessaging{socket: answer(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[` +
				`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message":{"text":"Hello."}}}]}`)},
			want: "join: WS /ws: 101: malformed response: in the history batch: EVENT_TYPE_AGENT_MESSAGE: payload.message is an object, want a string", handshakes: 1,
		},
		// The handshake is the socket's: its refusal names the socket
		// as every later error of the session does.
		{
			name: "a handshake answered 404",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"error":"session not found for %s"}`, r.URL.Query().Get("access_token"))
				return true
			}},
			want: "WS /ws: 404: session not found for eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]", handshakes: 1,
		},
		{
			name: "a handshake answered 200",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				fmt.Fprintf(w, `{"ok":true,"query":%q}`, r.URL.RawQuery)
				return true
			}},
			want: "WS /ws: 200: malformed response: the handshake was answered 200, not 101 Switching Protocols: no WebSocket there", handshakes: 1,
		},
		{
			name: "a handshake answered 299",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(299)
				return true
			}},
			want: "WS /ws: 299: malformed response: the handshake was answered 299, not 101 Switching Protocols: no WebSocket there", handshakes: 1,
		},
		// A 101 that breaks the handshake read as a connection lost,
		// and was tried again.
		{
			name: "a 101 without the WebSocket headers",
			p:    &hostileMessaging{handshake: switchWith("")},
			want: `WS /ws: 101: malformed response: the handshake's 101 answer breaks the WebSocket protocol: Connection header "" does not contain Upgrade`, handshakes: 1,
		},
		{
			name: "a 101 that upgrades to the access token",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				return switchWith("Connection: Upgrade\r\nUpgrade: "+r.URL.Query().Get("access_token")+"\r\n")(w, r)
			}},
			want: `WS /ws: 101: malformed response: the handshake's 101 answer breaks the WebSocket protocol: Upgrade header "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]" does not contain websocket`, handshakes: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingRedirectsKeepTheCredentials: a redirect of any Messaging
// step to another origin is refused before the connector token, the
// access token or the session reach it, and names where it pointed
// (redacted) and the setting to fix.
func TestMessagingRedirectsKeepTheCredentials(t *testing.T) {
	t.Parallel()
	// name is how the error names the step (the socket as every error
	// of the session names it), and cred the credential it keeps home.
	for step, want := range map[string]struct{ name, cred string }{
		"/api/v1/access-token": {"POST /api/v1/access-token", "connector token"},
		"/api/v1/sessions":     {"POST /api/v1/sessions", "access token"},
		"/ws":                  {"WS /ws", "access token"},
	} {
		t.Run(step, func(t *testing.T) {
			t.Parallel()
			rec := startRecorder(t)
			p := &hostileMessaging{socket: func(context.Context, *websocket.Conn) {}}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == step {
					// Echo the credentials into the Location, as a
					// careless gateway might.
					w.Header().Set("Location", rec.srv.URL+r.URL.Path+"?"+r.URL.RawQuery+"&t="+r.Header.Get("X-Token"))
					w.WriteHeader(http.StatusTemporaryRedirect)
					return
				}
				p.ServeHTTP(w, r)
			}))
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
			err := openError(c)
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != http.StatusTemporaryRedirect || re.Setting != "messaging_url" ||
				!strings.HasPrefix(re.Location, rec.srv.URL+step) || IsTransient(err) {
				t.Fatalf("got %T %v", err, err)
			}
			if !strings.Contains(err.Error(), ": "+want.name+": 307 redirect") || !strings.Contains(err.Error(), "and the "+want.cred+" is sent only there") {
				t.Errorf("error %q, want it to name %s and the %s", err, want.name, want.cred)
			}
			if got := rec.requests(); len(got) > 0 {
				t.Errorf("the other origin was reached: %q", got)
			}
			if s := fmt.Sprintf("%v %+v", err, re); strings.Contains(s, "PLANTED") {
				t.Errorf("a credential leaked: %s", s)
			}
		})
	}
}

// standingClock is the clock of a Close in a test: its Sleep tells the
// test the wait asked for, then stands still until the test moves the
// clock past the wait (pass), or until the wait is called off.
type standingClock struct {
	*fakeclock.Clock
	asked chan time.Duration
	moved chan struct{}
}

func newStandingClock() *standingClock {
	return &standingClock{Clock: fakeclock.New(), asked: make(chan time.Duration, 1), moved: make(chan struct{})}
}

func (c *standingClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case c.asked <- d:
	default:
	}
	select {
	case <-c.moved:
		c.Advance(d)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pass moves the clock past every wait, those to come included.
func (c *standingClock) pass() { close(c.moved) }

// closeGuard bounds a test's wait for a Close, below the library's own
// timers (5 s for each step of the close handshake, coder/websocket
// close.go): a Close that returns only when the library gives up fails
// instead of passing slowly. A passing test never waits on it.
const closeGuard = 4 * time.Second

// await fails t unless ch is closed within closeGuard.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(closeGuard):
		t.Fatalf("%s: not within %s", what, closeGuard)
	}
}

// answerJoin reads the join and answers it (joined, a greeting, the end
// of typing), then plays then.
func answerJoin(then func(ctx context.Context, c *websocket.Conn)) func(ctx context.Context, c *websocket.Conn) {
	return func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		for _, ev := range []string{
			`{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`,
			`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Hello."}}`,
			`{"id":"3","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`,
		} {
			if c.Write(ctx, websocket.MessageText, []byte(ev)) != nil {
				return
			}
		}
		then(ctx, c)
	}
}

// Modes of a watchConn.
const (
	writesPass  int32 = iota // writes go through
	writesTold               // writes go through, and the test is told
	writesStall              // writes block, and the test is told
)

// watchedTransport is srv's client transport with every connection a
// watchConn on mode, telling wrote of its writes.
func watchedTransport(srv *httptest.Server, mode *atomic.Int32, wrote chan<- struct{}) *http.Transport {
	transport := srv.Client().Transport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchConn{Conn: c, mode: mode, wrote: wrote, closed: make(chan struct{})}, nil
	}
	return transport
}

// watchConn is a client connection that can tell the test of its writes,
// and stall them as on a full send buffer to a platform that stopped
// reading; Close ends a stalled write with an error, as closing a socket
// does.
type watchConn struct {
	net.Conn
	mode   *atomic.Int32
	wrote  chan<- struct{} // told of writes, without blocking
	closed chan struct{}
	once   sync.Once
}

func (w *watchConn) Write(p []byte) (int, error) {
	mode := w.mode.Load()
	if mode == writesPass {
		return w.Conn.Write(p)
	}
	if mode == writesTold {
		n, err := w.Conn.Write(p)
		w.tell()
		return n, err
	}
	w.tell()
	<-w.closed
	return 0, net.ErrClosed
}

func (w *watchConn) tell() {
	select {
	case w.wrote <- struct{}{}:
	default:
	}
}

func (w *watchConn) Close() error {
	w.once.Do(func() { close(w.closed) })
	return w.Conn.Close()
}

// TestMessagingCloseIsBounded: Close holds its caller for the close
// handshake at most messagingCloseGrace on the client's clock, whatever
// the platform does (over ws and wss), then tears the connection down; a
// platform that went away costs no wait at all.
func TestMessagingCloseIsBounded(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// silent: the platform stops reading after the greeting (so never
		// answers the close frame) and holds the connection open.
		silent bool
		// stall: the client's writes block from Close on, the close
		// frame's first (the platform's receive buffer is full).
		stall bool
		tls   bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		hold := make(chan struct{}) // the silent platform waits for it
		release := sync.OnceFunc(func() { close(hold) })
		defer release()
		seen := make(chan error, 1)    // what the platform reads after that
		handled := make(chan struct{}) // the platform's socket handler returned
		p := &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
			if !tc.silent {
				return // gone: the connection closes under the client
			}
			<-hold
			_, _, err := c.Read(context.Background())
			seen <- err
		})}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.ServeHTTP(w, r)
			if r.URL.Path == "/ws" {
				close(handled)
			}
		})
		var srv *httptest.Server
		if tc.tls {
			srv = httptest.NewTLSServer(h)
		} else {
			srv = httptest.NewServer(h)
		}
		defer srv.Close()
		var mode atomic.Int32
		wrote := make(chan struct{}, 1)
		transport := watchedTransport(srv, &mode, wrote)
		defer transport.CloseIdleConnections()
		clk := newStandingClock()
		c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
			HTTPClient: &http.Client{Transport: transport}, Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if m.Opening().Reply != "Hello." {
			t.Fatalf("opening %q", m.Opening().Reply)
		}
		if !tc.silent {
			<-handled // the platform is gone before Close begins
		}
		if tc.stall {
			mode.Store(writesStall)
		} else {
			mode.Store(writesTold)
		}
		// Before the idle connections close: a TLS one writes its alert.
		defer mode.Store(writesPass)
		closed := make(chan struct{})
		go func() {
			m.Close()
			close(closed)
		}()
		if !tc.silent {
			// Nothing to wait for: the handshake fails at once, and the
			// clock never moves.
			await(t, closed, "Close after the platform went away")
			if waited := clk.Now().Sub(fakeclock.Start); waited != 0 {
				t.Errorf("Close waited %s on the clock", waited)
			}
			return
		}
		select {
		case d := <-clk.asked:
			if d != messagingCloseGrace {
				t.Errorf("Close waits %s, want %s", d, messagingCloseGrace)
			}
		case <-closed:
			t.Fatal("Close returned without waiting on the client's clock: on the library's own timers")
		}
		// The close frame is out (or stuck in its write) before the
		// grace ends, so the handshake is under way when it does.
		select {
		case <-wrote:
		case <-closed:
			t.Fatal("Close returned before the close frame was written")
		}
		clk.pass()
		await(t, closed, "Close once the clock passed the grace")
		if waited := clk.Now().Sub(fakeclock.Start); waited != messagingCloseGrace {
			t.Errorf("the clock moved %s, want %s", waited, messagingCloseGrace)
		}
		// The connection is closed: the platform's next read ends (on
		// the close frame, or on the closed connection) instead of
		// waiting for a client that is still there.
		release()
		select {
		case err := <-seen:
			if err == nil {
				t.Error("the platform read a frame after Close")
			}
		case <-time.After(closeGuard):
			t.Fatal("the connection outlived Close")
		}
	}
	for _, tc := range []testCase{
		{name: "no answer to the close frame", silent: true},
		{name: "no answer to the close frame over TLS", silent: true, tls: true},
		{name: "the platform stopped reading", silent: true, stall: true},
		{name: "the platform stopped reading over TLS", silent: true, stall: true, tls: true},
		{name: "the platform went away"},
		{name: "the platform went away over TLS", tls: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingCloseCodes: a socket the platform closes with a status
// that refuses (policy, data, size, internal error, an application's
// own) ends the turn with the status and the reason, redacted and
// quoted, without a reconnect that would wait out the turn for an answer
// that is not coming; a drop, a restart or a going away is reconnected,
// and the answer the new socket brings is the turn's.
func TestMessagingCloseCodes(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		code websocket.StatusCode
		// bare closes with no reason; else the reason echoes the access
		// token, as a careless gateway might.
		bare bool
		// want is the turn's error, "" for a reconnect that answers.
		want string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var p *hostileMessaging
		p = &hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
			if p.handshakes.Load() > 1 {
				// The new socket brings the answer.
				for _, ev := range []string{
					`{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m2","text":"Answer."}}`,
					`{"id":"5","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`,
				} {
					if c.Write(ctx, websocket.MessageText, []byte(ev)) != nil {
						return
					}
				}
				c.Read(ctx)
				return
			}
			answerJoin(func(ctx context.Context, c *websocket.Conn) {
				if _, _, err := c.Read(ctx); err != nil { // the user's message
					return
				}
				reason := "refused " + plantedJWT
				if tc.bare {
					reason = ""
				}
				c.Close(tc.code, reason)
			})(ctx, c)
		}}
		srv := httptest.NewServer(p)
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		// Without the rule a refused turn would wait for this timeout.
		m := open(t, c, MessagingStart{TurnTimeout: 5 * time.Second})
		turn, err := m.Say(context.Background(), "hi")
		if tc.want == "" {
			if err != nil || turn.Reply != "Answer." || turn.Reconnects != 1 {
				t.Fatalf("reply %q, %d reconnects, error %v", turn.Reply, turn.Reconnects, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("no error: reply %q after %d reconnects", turn.Reply, turn.Reconnects)
		}
		var ne *NetworkError
		if got := err.Error(); got != tc.want || !errors.As(err, &ne) {
			t.Errorf("error %T\n%s\nwant\n%s", err, got, tc.want)
		}
		if n := p.handshakes.Load(); n != 1 {
			t.Errorf("%d handshakes, want 1: a refused socket was reconnected", n)
		}
		// Nor in what it wraps, which a caller may print alone.
		for e := err; e != nil; e = errors.Unwrap(e) {
			if s := fmt.Sprintf("%v %+v", e, e); strings.Contains(s, "PLANTED") {
				t.Errorf("a credential leaked: %s", s)
			}
		}
	}
	refused := func(code int) string {
		return fmt.Sprintf(`WS /ws: connection lost after the request was sent: the platform closed the socket with status %d: "refused eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.[REDACTED]"`, code)
	}
	for _, tc := range []testCase{
		{name: "policy violation", code: websocket.StatusPolicyViolation, want: refused(1008)},
		{name: "unsupported data", code: websocket.StatusUnsupportedData, want: refused(1003)},
		{name: "message too big", code: websocket.StatusMessageTooBig, want: refused(1009)},
		{name: "internal error", code: websocket.StatusInternalError, want: refused(1011)},
		{name: "an application's own status", code: 4401, want: refused(4401)},
		{name: "policy violation without a reason", code: websocket.StatusPolicyViolation, bare: true,
			want: "WS /ws: connection lost after the request was sent: the platform closed the socket with status 1008"},
		{name: "going away", code: websocket.StatusGoingAway},
		{name: "service restart", code: websocket.StatusServiceRestart},
		{name: "try again later", code: websocket.StatusTryAgainLater},
		{name: "bad gateway", code: websocket.StatusBadGateway},
		{name: "normal closure", code: websocket.StatusNormalClosure},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingTokenCutShortInErrors: the session step and the handshake
// that echo the access token into an error body, where the message (cut
// at maxMessage) or the kept body (cut at errorKeep) ends inside the
// token's signature. The token is masked before either is cut: the half
// of a signature left after a cut matches no redactor, and showed.
func TestMessagingTokenCutShortInErrors(t *testing.T) {
	t.Parallel()
	const sig = "SIGcutSHORT0123456789abcdefghijklmnop"
	// Claims long enough that the signature comes after the first
	// hundred bytes of the message, as in a real JWT.
	jwt := "eyJhbGciOiJSUzI1NiJ9." + strings.Repeat("eyJzdWIiOiJ4In0", 12) + "." + sig
	type testCase struct {
		name string
		step string // the path that answers 401 with the token
		// cut is where the message (maxMessage) or the kept body
		// (errorKeep) is cut: the signature straddles it.
		cut int
	}
	run := func(t *testing.T, tc testCase) {
		// body is {"message":"<pad><echo>"}, where echo ends with the
		// signature: pad puts the cut 10 bytes into it.
		body := func(echo string) string {
			head := `{"message":"`
			if tc.cut == maxMessage {
				head = "" // the message is cut, not the body
			}
			pad := tc.cut - len(head) - (len(echo) - len(sig)) - 10
			return `{"message":"` + strings.Repeat("x", pad) + echo + `"}`
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/v1/access-token":
				fmt.Fprintf(w, `{"access_token":%q}`, jwt)
			case tc.step:
				w.WriteHeader(http.StatusUnauthorized)
				echo := r.Header.Get("Authorization")
				if echo == "" {
					echo = r.URL.Query().Get("access_token")
				}
				fmt.Fprint(w, body(echo))
			case "/api/v1/sessions":
				fmt.Fprint(w, `{"session_id":"s-1"}`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
		err := openError(c)
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
			t.Fatalf("got %T %v, want a 401", err, err)
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), ae.Message, string(ae.Body)} {
			for n := len(sig); n >= 8; n-- {
				if strings.Contains(text, sig[:n]) {
					t.Fatalf("%q of the token's signature shows in %q", sig[:n], text[max(0, strings.Index(text, sig[:n])-40):])
				}
			}
		}
	}
	for _, tc := range []testCase{
		{name: "session step, message cut", step: "/api/v1/sessions", cut: maxMessage},
		{name: "session step, kept body cut", step: "/api/v1/sessions", cut: errorKeep},
		{name: "handshake, message cut", step: "/ws", cut: maxMessage},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingTokenWithControls: an access token that no header can
// carry is the access-token step's malformed answer, not a connection
// lost on the session step (net/http refuses to send the header), and
// the session step is not tried. So is a token longer than any header
// or request line carries, which the session would otherwise hold in
// its redactor at a few hundred bytes a byte (gigabytes for a token as
// long as a body may be).
func TestMessagingTokenWithControls(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, token, want string
		accepted          bool // the session step is tried with it
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var sessions atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/api/v1/access-token":
				fmt.Fprintf(w, `{"access_token":%s}`, tc.token)
			case "/api/v1/sessions":
				sessions.Add(1)
				fmt.Fprint(w, `{"session_id":"s-1"}`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer srv.Close()
		c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }})
		err := openError(c)
		if tc.accepted {
			if sessions.Load() != 1 {
				t.Errorf("the token refused: %v", err)
			}
			return
		}
		var re *ResponseError
		if !errors.As(err, &re) || re.Endpoint != epAccessToken.template || IsTransient(err) ||
			!strings.Contains(err.Error(), `POST /api/v1/access-token: 200: malformed response: the "access_token" `+cmp.Or(tc.want, "holds control characters")) {
			t.Fatalf("got %T %v, want the access-token step's malformed answer", err, err)
		}
		if strings.Contains(err.Error(), "PLANTED") || sessions.Load() != 0 {
			t.Errorf("%d session requests; error %q", sessions.Load(), err)
		}
	}
	for _, tc := range []testCase{
		{"a line break", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTEDsig\r\nX-Injected: 1"`, "", false},
		{"a NUL", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED\u0000sig0123456789"`, "", false},
		{"a unit separator", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED\u001fsig0123456789"`, "", false},
		{"a DEL", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED\u007fsig0123456789"`, "", false},
		{"an escape sequence", `"\u001b[31meyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTEDsig0123456789"`, "", false},
		{"longer than a header carries", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED` + strings.Repeat("s", maxAccessToken) + `"`,
			"is 16428 bytes long, more than the 16 KiB a token sent in a header and in the socket's URL can be", false},
		{"a byte longer than a header carries", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED` + strings.Repeat("s", maxAccessToken-43) + `"`,
			"is 16385 bytes long, more than the 16 KiB a token sent in a header and in the socket's URL can be", false},
		{"as long as a header carries", `"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED` + strings.Repeat("s", maxAccessToken-44) + `"`, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingDelayedFlag: the reference shows no delayed flag in
// Messaging events, and the simulator flags a holding message with
// payload.delayed (whole, or on a stream's final chunk). The client reads
// the flag into the turn's delayedResponse and onto the event, which the
// transcript shows ("delayed response"); lint keeps delayed: from checking it over
// messaging, since a platform that sends no flag cannot be told from an
// agent that did not delay (assert.NotOverMessaging).
func TestMessagingDelayedFlag(t *testing.T) {
	t.Parallel()
	const (
		joined = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
		stop   = `{"id":"9","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
	)
	for _, tc := range []struct {
		name   string
		frames []string
		want   bool
	}{
		{"a whole message flagged", []string{`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"One moment.","delayed":true}}`}, true},
		{"a stream's final chunk flagged", []string{`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","text":"One "}}`,
			`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","text":"moment.","final":true,"delayed":true}}`}, true},
		{"a whole message after its chunks flagged", []string{`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","text":"One moment."}}`,
			`{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m","text":"One moment.","delayed":true}}`}, true},
		{"flagged false", []string{`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"One moment.","delayed":false}}`}, false},
		{"no flag", []string{`{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"One moment."}}`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&hostileMessaging{socket: answer(append(append([]string{joined}, tc.frames...), stop)...)})
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep})
			m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
			o := m.Opening()
			x := o.Exchange(m.SessionID(), m.ConversationID(), "")
			r := x.Result
			if r.Response != "One moment." || r.DelayedResponse != tc.want {
				t.Errorf("reply %q delayed %t, want %q delayed %t", r.Response, r.DelayedResponse, "One moment.", tc.want)
			}
			// The flag is kept on the event too, which the JSON report
			// keeps and the transcript reads.
			flagged := false
			for _, e := range x.Messaging.Events {
				flagged = flagged || e.Delayed
			}
			if flagged != tc.want {
				t.Errorf("events %+v: one flagged delayed %t, want %t", x.Messaging.Events, flagged, tc.want)
			}
		})
	}
}

// TestMessagingAwaitEnd: a platform may turn its typing indicator off
// before it sends the session end. The turn is complete at the end of
// typing; AwaitEnd then takes the end into it, or returns once Settle
// passes without an event (on a fake clock, moved past the window once
// AwaitEnd waits on it: the platform sends nothing more) or the socket
// closes, with the turn as it was. Where the window is not to cut the
// wait, the clock stands still.
func TestMessagingAwaitEnd(t *testing.T) {
	t.Parallel()
	const (
		joined = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
		bye    = `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Goodbye."}}`
		stop   = `{"id":"3","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
		end    = `{"id":"4","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`
	)
	for _, tc := range []struct {
		name   string
		socket func(ctx context.Context, c *websocket.Conn)
		quiet  bool // the quiet window cuts the wait
		ended  bool
		// reply is the turn's once AwaitEnd returned, "Goodbye." when
		// empty; err AwaitEnd's.
		reply, err string
	}{
		{name: "the end after typing", socket: answer(joined, bye, stop, end), ended: true},
		{name: "no end, quiet", socket: answer(joined, bye, stop), quiet: true},
		// What the agent says before the end is the turn's, in its
		// reply too.
		{name: "a last word, then the end", socket: answer(joined, bye, stop, `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"See you."}}`, end),
			ended: true, reply: "Goodbye. See you."},
		{name: "a malformed event after typing", socket: answer(joined, bye, stop, `{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":"x"}`),
			err: "WS /ws: 101: malformed response: EVENT_TYPE_AGENT_MESSAGE: payload is a string, want an object"},
		{name: "no end, the socket closes", socket: func(ctx context.Context, c *websocket.Conn) {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
			for _, f := range []string{joined, bye, stop} {
				if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
					return
				}
			}
			c.Close(websocket.StatusNormalClosure, "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&hostileMessaging{socket: tc.socket})
			defer srv.Close()
			clk := newWindowClock()
			c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, clk)
			m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Second})
			o := m.Opening()
			if o.SessionEnded || o.CompletedBy != "typing" {
				t.Fatalf("the opening ended %t, completed by %q: want it complete at the end of typing", o.SessionEnded, o.CompletedBy)
			}
			var got *MessagingTurn
			var err error
			if tc.quiet {
				clk.cut(t, time.Second, func() { got, err = m.AwaitEnd(context.Background()) })
			} else {
				got, err = m.AwaitEnd(context.Background())
			}
			if got != o || fmt.Sprint(err) != cmp.Or(tc.err, "<nil>") {
				t.Fatalf("AwaitEnd: %v, turn %p, want the opening %p and error %s", err, got, o, cmp.Or(tc.err, "<nil>"))
			}
			if tc.err != "" {
				return
			}
			ended, _ := m.Ended()
			if want := cmp.Or(tc.reply, "Goodbye."); o.SessionEnded != tc.ended || ended != tc.ended || o.Reply != want {
				t.Errorf("turn ended %t, session ended %t, reply %q (events %v); want ended %t, reply %q", o.SessionEnded, ended, o.Reply, o.Types(), tc.ended, want)
			}
			if tc.ended && o.EndReason != "agent_ended" {
				t.Errorf("end reason %q", o.EndReason)
			}
		})
	}
}

// TestMessagingHandshake5xxRetried: a handshake answered 503 is retried
// after the policy's backoff, and RetryPolicy.MaxAttempts bounds the
// tries: the error is the last answer's, with its attempts. (Past the
// policy the platform answers 400, so a loop that never counts its tries
// ends on that answer instead of hanging.)
func TestMessagingHandshake5xxRetried(t *testing.T) {
	t.Parallel()
	p := &hostileMessaging{}
	p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
		status := http.StatusServiceUnavailable
		if p.handshakes.Load() > 3 {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		return true
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	slept := fakeclock.New()
	c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 3, Sleep: slept.Sleep}, newWindowClock())
	m, err := c.OpenMessaging(context.Background(), MessagingStart{})
	if m != nil {
		m.Close()
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Attempts != 3 || p.handshakes.Load() != 3 {
		t.Errorf("error %v after %d handshakes, want the third 503", err, p.handshakes.Load())
	}
	if slept.Now().Equal(fakeclock.Start) {
		t.Error("retried without a backoff")
	}
}

// TestMessagingHandshakeRequest: the handshake carries the session, its
// access token and the client's User-Agent, as every request does; and
// an HTTP client without a Transport of its own dials through the
// default one, as http.Client does.
func TestMessagingHandshakeRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{
		{name: "the client's"},
		{name: "an HTTP client without a Transport", hc: &http.Client{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type handshake struct {
				query url.Values
				agent string
			}
			got := make(chan handshake, 1)
			p := &hostileMessaging{
				handshake: func(_ http.ResponseWriter, r *http.Request) bool {
					got <- handshake{r.URL.Query(), r.UserAgent()}
					return false
				},
				socket: answerJoin(func(ctx context.Context, c *websocket.Conn) { c.Read(ctx) }),
			}
			srv := httptest.NewServer(p)
			defer srv.Close()
			c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector,
				MessagingHost: "example.com", UserAgent: "agenttest-probe/1", HTTPClient: tc.hc})
			if err != nil {
				t.Fatal(err)
			}
			open(t, c, MessagingStart{TurnTimeout: 5 * time.Second})
			h := <-got
			want := url.Values{"session_id": {"s-1"}, "access_token": {plantedJWT}}
			if h.query.Encode() != want.Encode() || h.agent != "agenttest-probe/1" {
				t.Errorf("handshake query %v, User-Agent %q; want %v, %q", h.query, h.agent, want, "agenttest-probe/1")
			}
		})
	}
}

// TestMessagingAwaitEndOutsideATurn: AwaitEnd waits on the last turn,
// the opening when the greeting came in the history batch (no join was
// sent); it waits for nothing on a session closed or a socket dropped
// (the next send reconnects), and gives up with the caller's context,
// saying so. The clock stands still: no quiet window cuts a wait, and a
// cancelled context tells a wait from none.
func TestMessagingAwaitEndOutsideATurn(t *testing.T) {
	t.Parallel()
	const (
		joined = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
		bye    = `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Goodbye."}}`
		stop   = `{"id":"3","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
	)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	start := func(t *testing.T, p *hostileMessaging) *MessagingSession {
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, newWindowClock())
		return open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Second})
	}
	t.Run("the greeting in the history", func(t *testing.T) {
		t.Parallel()
		m := start(t, &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return true
			}
			defer c.CloseNow()
			writeAll(r.Context(), c, `{"type":"EVENT_TYPE_EVENT_BATCH","payload":[`+joined+`,`+bye+`,`+stop+`]}`,
				`{"id":"4","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`)
			c.Read(r.Context())
			return true
		}})
		o := m.Opening()
		if got, err := m.AwaitEnd(context.Background()); got != o || err != nil || !o.SessionEnded || o.Request != nil {
			t.Errorf("AwaitEnd: %v, turn %p ended %t (request %s), want the opening %p ended", err, got, o.SessionEnded, o.Request, o)
		}
		if !o.Events[0].Replayed || o.Events[len(o.Events)-1].Replayed {
			t.Errorf("replayed %t then %t, want the batch's events replayed and the end not", o.Events[0].Replayed, o.Events[len(o.Events)-1].Replayed)
		}
	})
	t.Run("the last turn's", func(t *testing.T) {
		t.Parallel()
		m := start(t, &hostileMessaging{socket: turns([]string{joined, bye, stop},
			[]string{`{"id":"5","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Bye."}}`, `{"id":"6","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`,
				`{"id":"7","type":"EVENT_TYPE_SESSION_END","payload":{}}`})})
		turn := say(t, m, "bye")
		if got, err := m.AwaitEnd(context.Background()); got != turn || err != nil || !turn.SessionEnded || m.Opening().SessionEnded {
			t.Errorf("AwaitEnd: %v, turn %p ended %t, want the last turn %p ended", err, got, got.SessionEnded, turn)
		}
	})
	t.Run("closed", func(t *testing.T) {
		t.Parallel()
		m := start(t, &hostileMessaging{socket: answer(joined, bye, stop)})
		m.Close()
		if got, err := m.AwaitEnd(cancelled); got != m.Opening() || err != nil {
			t.Errorf("AwaitEnd after Close: %v, turn %p", err, got)
		}
	})
	t.Run("the caller's context ends", func(t *testing.T) {
		t.Parallel()
		m := start(t, &hostileMessaging{socket: answer(joined, bye, stop)})
		_, err := m.AwaitEnd(cancelled)
		if ne, ok := errors.AsType[*NetworkError](err); !ok || !errors.Is(err, context.Canceled) || ne.Endpoint != "/ws" || !IsMessaging(err) {
			t.Errorf("AwaitEnd with its context cancelled: %v", err)
		}
		if _, ok := MessagingTurnTimeout(err); ok {
			t.Errorf("the caller's context read as the turn's timeout: %v", err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		t.Parallel()
		p := &hostileMessaging{}
		p.socket = func(ctx context.Context, c *websocket.Conn) {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
			if p.handshakes.Load() == 1 {
				writeAll(ctx, c, joined, bye, stop)
				c.Close(websocket.StatusNormalClosure, "")
				return
			}
			for i := 5; writeAll(ctx, c, fmt.Sprintf(`{"id":"%d","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Back."}}`, i),
				fmt.Sprintf(`{"id":"%d","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`, i+1)); i += 2 {
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
		}
		m := start(t, p)
		if _, err := m.AwaitEnd(context.Background()); err != nil {
			t.Fatalf("AwaitEnd as the socket closes: %v", err)
		}
		if _, err := m.AwaitEnd(cancelled); err != nil {
			t.Errorf("AwaitEnd on a dropped socket waited: %v", err)
		}
		// The next send reconnects first; one that wrote to the
		// dropped socket would wait for an answer that is not coming.
		ctx, cancel := context.WithTimeout(context.Background(), closeGuard)
		defer cancel()
		if turn, err := m.Say(ctx, "again"); err != nil || turn.Reply != "Back." || turn.Reconnects != 1 {
			t.Errorf("after the drop: %v, reply %q after %d reconnects", err, turn.Reply, turn.Reconnects)
		}
		// Once, not at every send after it.
		if turn, err := m.Say(ctx, "and again"); err != nil || turn.Reply != "Back." || turn.Reconnects != 0 {
			t.Errorf("the turn after: %v, reply %q after %d reconnects", err, turn.Reply, turn.Reconnects)
		}
	})
}

// TestMessagingTokenMaskedInEveryForm: the access token is masked in
// what the platform sends back: a JWT's signature (the secret part, in
// every form of the token), an opaque token whole, a JWT whose signature
// is too short to tell from text whole; a token too short to tell from
// text is left as it is, since masking it would garble every report.
func TestMessagingTokenMaskedInEveryForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, token, echo, reply string }{
		{"a JWT's signature alone", plantedJWT, "PLANTEDsignature0123456789abcdef", secret.Mask},
		{"an opaque token with a dot", "PLANTED0head.PLANTED0tail", "PLANTED0head.PLANTED0tail", secret.Mask},
		{"a JWT with a short signature", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTED", secret.Mask},
		{"a short token", "PLANTED", "PLANTED", "PLANTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(&hostileMessaging{token: tc.token, socket: answer(
				`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":`+strconv.Quote(tc.echo)+`}}`, `{"type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`)})
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: time.Minute})
			if got := m.Opening().Reply; got != tc.reply {
				t.Errorf("the token %q echoed as %q reads %q, want %q", tc.token, tc.echo, got, tc.reply)
			}
		})
	}
}

// TestMessagingSessionAnswer: the session step's answer names the
// session (session_id, else sessionId); one that names none, or is no
// JSON, is the step's malformed answer and no socket is tried.
func TestMessagingSessionAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, want string }{
		{"no id", `{"id":"s-1"}`, `POST /api/v1/sessions: 200: malformed response: no "session_id" in the answer`},
		{"an empty id", `{"session_id":"","sessionId":""}`, `POST /api/v1/sessions: 200: malformed response: no "session_id" in the answer`},
		{"no JSON", `session s-1`, `POST /api/v1/sessions: 200: malformed response: `},
		{"the second member", `{"session_id":"","sessionId":"s-2"}`, `open messaging session s-2: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var handshakes atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/v1/access-token":
					fmt.Fprintf(w, `{"access_token":%q}`, plantedJWT)
				case "/api/v1/sessions":
					fmt.Fprint(w, tc.body)
				default:
					handshakes.Add(1)
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			err := openError(plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if named := strings.HasPrefix(tc.want, "open messaging session"); named != (handshakes.Load() > 0) {
				t.Errorf("%d handshakes with the answer %s", handshakes.Load(), tc.body)
			}
		})
	}
}
