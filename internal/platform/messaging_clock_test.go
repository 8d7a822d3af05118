package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// windowClock is a fake clock for the Messaging client's timers
// (Config.AfterFunc) that tells the test the length of each timer the
// client sets, so the test moves the clock past a window once the client
// waits on it: a window closes then, and never on its own. It counts
// the timers that fired, and tells of its readings too (nows, if it has
// room): the client reads the clock for each event it takes.
type windowClock struct {
	*fakeclock.Clock
	set   chan time.Duration
	fired atomic.Int64
	nows  chan struct{}
}

func newWindowClock() *windowClock {
	return &windowClock{Clock: fakeclock.New(), set: make(chan time.Duration, 1024), nows: make(chan struct{}, 1)}
}

func (c *windowClock) Now() time.Time {
	select {
	case c.nows <- struct{}{}:
	default:
	}
	return c.Clock.Now()
}

func (c *windowClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	stop = c.Clock.AfterFunc(d, func() {
		c.fired.Add(1)
		f()
	})
	c.set <- d
	return stop
}

// windowedClient is a client of a test platform at url whose Messaging
// timers run on clk.
func windowedClient(t testing.TB, url string, retry RetryPolicy, clk *windowClock) *Client {
	t.Helper()
	return clockedMessagingClient(t, url, retry, clk.Now, clk.AfterFunc)
}

// cut runs call on a goroutine of its own, waits until it sets a timer of
// d (the window under test), moves the clock past that timer, and waits
// for call to return. It fails t when call returns before it set the
// window, or does not return once the window passed: call is cut by the
// window and nothing else. Timers set before cut are forgotten.
func (c *windowClock) cut(t *testing.T, d time.Duration, call func()) {
	t.Helper()
	for len(c.set) > 0 {
		<-c.set
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	for {
		select {
		case got := <-c.set:
			if got != d {
				continue
			}
			c.Advance(d)
			await(t, done, "the call once its window of "+d.String()+" passed")
			return
		case <-done:
			t.Fatalf("the call returned before it set a window of %s", d)
		case <-time.After(closeGuard):
			t.Fatalf("no window of %s set within %s", d, closeGuard)
		}
	}
}

// TestQuietTimer: a quiet window fires once its time passed on the
// client's timers, and a firing from before the last reset or stop is
// never received, on the real clock as on Config.AfterFunc.
func TestQuietTimer(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	c := &Client{cfg: Config{AfterFunc: clk.AfterFunc}, now: clk.Now}
	var q quietTimer
	if q.C() != nil {
		t.Fatal("a timer not set has a channel")
	}
	fired := func() bool {
		select {
		case <-q.C():
			return true
		default:
			return false
		}
	}
	c.setQuiet(&q, time.Second)
	clk.Advance(999 * time.Millisecond)
	if fired() {
		t.Fatal("fired before its time")
	}
	c.setQuiet(&q, time.Second) // a new frame: the window starts again
	clk.Advance(999 * time.Millisecond)
	if fired() {
		t.Fatal("a reset window fired on its old time")
	}
	clk.Advance(time.Millisecond)
	if !fired() {
		t.Fatal("did not fire once its time passed")
	}
	c.setQuiet(&q, time.Second)
	clk.Advance(time.Second) // fired, not received
	c.setQuiet(&q, time.Second)
	if fired() {
		t.Fatal("a firing from before the reset was received")
	}
	q.Stop()
	clk.Advance(time.Hour)
	if fired() {
		t.Fatal("a stopped timer fired")
	}

	// A firing already on its way when the timer is reset (its stop
	// came too late) is not received either.
	var late []func()
	manual := &Client{cfg: Config{AfterFunc: func(_ time.Duration, f func()) func() bool {
		late = append(late, f)
		return func() bool { return false }
	}}, now: clk.Now}
	var s quietTimer
	manual.setQuiet(&s, time.Second)
	manual.setQuiet(&s, time.Second)
	late[0]()
	select {
	case <-s.C():
		t.Fatal("a firing of the setting before the reset was received")
	default:
	}
	late[1]()
	select {
	case <-s.C():
	default:
		t.Fatal("the firing of the current setting was not received")
	}

	onReal := &Client{now: time.Now}
	var r quietTimer
	onReal.setQuiet(&r, time.Hour)
	if r.real == nil || r.fake != nil {
		t.Fatal("without Config.AfterFunc, not a real timer")
	}
	r.Stop()
}

// TestMessagingQuietRestarts: an event that arrives within a window of
// quiet (the settle window of a turn, AwaitEnd's) starts the window
// again, so the turn takes it, and the window then passes in full from
// it. The clock moves 0.9 of the window before the event and 0.9 after
// it: a window that did not start again would cut the turn before the
// event, or at the first move after it.
func TestMessagingQuietRestarts(t *testing.T) {
	t.Parallel()
	const (
		window = time.Second
		joined = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
		first  = `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"One moment."}}`
		stop   = `{"id":"3","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
		second = `{"id":"4","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Here it is."}}`
	)
	type testCase struct {
		name   string
		before []string // the frames that answer the join
		await  bool     // AwaitEnd's window, after the opening; else the opening's settle window
	}
	run := func(t *testing.T, tc testCase) {
		more := make(chan struct{})
		release := sync.OnceFunc(func() { close(more) })
		srv := httptest.NewServer(&hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
			for _, f := range tc.before {
				if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
					return
				}
			}
			select {
			case <-more:
			case <-ctx.Done():
				return
			}
			if c.Write(ctx, websocket.MessageText, []byte(second)) != nil {
				return
			}
			c.Read(ctx)
		}})
		defer srv.Close()
		clk := newWindowClock()
		c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, clk)
		st := MessagingStart{TurnTimeout: time.Minute, Settle: window}

		var m *MessagingSession
		var turn *MessagingTurn
		var err error
		call := func() {
			m, err = c.OpenMessaging(context.Background(), st)
			if m != nil {
				turn = m.Opening()
			}
		}
		if tc.await {
			m = open(t, c, st)
			if o := m.Opening(); o.CompletedBy != "typing" {
				t.Fatalf("the opening completed by %q, want typing", o.CompletedBy)
			}
			call = func() { turn, err = m.AwaitEnd(context.Background()) }
		}
		for len(clk.set) > 0 {
			<-clk.set
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			call()
		}()
		defer func() {
			// A call that failed to return is cut by its timers.
			release()
			clk.Advance(time.Hour)
			select {
			case <-done:
				if m != nil {
					m.Close()
				}
			case <-time.After(closeGuard):
				t.Error("the call does not return")
			}
		}()
		waitSet(t, clk, window, done, "the call", "after the answer")
		clk.Advance(window * 9 / 10)
		release()
		waitSet(t, clk, window, done, "the call", "after the second message")
		clk.Advance(window * 9 / 10)
		clk.Advance(window / 10)
		await(t, done, "the wait once the window passed after the second message")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(turn.Messages); n != 2 || turn.Messages[1].Text != "Here it is." {
			t.Errorf("the turn holds %d messages (events %v), want the second one too", n, turn.Types())
		}
	}
	for _, tc := range []testCase{
		{name: "settle", before: []string{joined, first}},
		{name: "AwaitEnd", before: []string{joined, first, stop}, await: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestMessagingTimeoutWhileOnTheSocket: a turn's time that runs out
// while the client is busy on the socket rather than waiting for the
// answer (writing the message to a platform that stopped reading,
// reopening a dropped socket whose handshake or history batch the
// platform holds) is the turn's timeout, as when it runs out waiting: a
// transient *NetworkError that names the turn timeout, not a connection
// lost (the handshake's own error when its context ends) nor a bare
// context error.
func TestMessagingTimeoutWhileOnTheSocket(t *testing.T) {
	t.Parallel()
	const turnTimeout = 5 * time.Second
	type testCase struct {
		name string
		// stall stalls the client's writes once the opening is done.
		stall bool
		// reopen plays the second handshake: it holds the socket until
		// the client goes, and tells the test once it is under way.
		reopen func(w http.ResponseWriter, r *http.Request, held chan<- struct{})
	}
	run := func(t *testing.T, tc testCase) {
		held := make(chan struct{}, 1)
		p := &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
			if tc.stall {
				<-ctx.Done() // reads nothing
				return
			}
			c.Read(ctx) // the message, then the socket drops without a close frame
		})}
		p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
			if p.handshakes.Load() == 1 {
				return false
			}
			tc.reopen(w, r, held)
			return true
		}
		srv := httptest.NewServer(p)
		defer srv.Close()
		var mode atomic.Int32
		wrote := make(chan struct{}, 1)
		transport := watchedTransport(srv, &mode, wrote)
		defer transport.CloseIdleConnections()
		clk := newWindowClock()
		c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
			HTTPClient: &http.Client{Transport: transport}, Retry: RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep},
			Now: clk.Now, AfterFunc: clk.AfterFunc})
		if err != nil {
			t.Fatal(err)
		}
		m := open(t, c, MessagingStart{TurnTimeout: turnTimeout})
		if tc.stall {
			mode.Store(writesStall)
			defer mode.Store(writesPass)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, err = m.Say(context.Background(), "What is my balance?")
		}()
		if tc.stall {
			<-wrote
		} else {
			<-held
		}
		clk.Advance(turnTimeout)
		await(t, done, "the turn once its time ran out")
		var ne *NetworkError
		if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) || !IsTransient(err) ||
			!strings.HasPrefix(err.Error(), "WS /ws: no complete answer within 5s") {
			t.Errorf("error %q (%T), want the turn's timeout: a transient *NetworkError of WS /ws, no complete answer within 5s", err, err)
		}
		if d, ok := MessagingTurnTimeout(err); !ok || d != turnTimeout {
			t.Errorf("MessagingTurnTimeout(%v) = %s, %v; want %s, true", err, d, ok, turnTimeout)
		}
	}
	for _, tc := range []testCase{
		{name: "writing the message to a platform that stopped reading", stall: true},
		{name: "reopening the socket: the handshake held", reopen: func(w http.ResponseWriter, r *http.Request, held chan<- struct{}) {
			held <- struct{}{}
			<-r.Context().Done()
		}},
		{name: "reopening the socket: the history batch held", reopen: func(w http.ResponseWriter, r *http.Request, held chan<- struct{}) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			read := make(chan struct{})
			go func() {
				defer close(read)
				c.Read(r.Context()) // and the pong below
			}()
			// A pong comes from the client's reader, which runs once
			// the handshake is over: the client waits for the batch.
			if c.Ping(r.Context()) == nil {
				held <- struct{}{}
			}
			<-read
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestMessagingTurnTimeoutLeavesOutRateLimitWaits: the Retry-After a
// reconnect's handshake waits out is granted to the turn once: the turn
// times out when its own time and that wait have passed, never before
// (the wait is no slowness of the platform) and never later (a grant
// counted again at each firing would hold a silent platform's turn
// forever).
func TestMessagingTurnTimeoutLeavesOutRateLimitWaits(t *testing.T) {
	t.Parallel()
	const turnTimeout, retryAfter = 5 * time.Second, 20 * time.Second
	held := make(chan struct{}, 1)
	p := &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
		c.Read(ctx) // the message, then the socket drops without a close frame
	})}
	p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
		switch p.handshakes.Load() {
		case 1:
			return false
		case 2:
			w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter.Seconds())))
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			held <- struct{}{}
			<-r.Context().Done()
		}
		return true
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	clk := newWindowClock()
	// The Retry-After is waited on a clock of its own: clk moves only
	// when the test moves it.
	c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, clk)
	m := open(t, c, MessagingStart{TurnTimeout: turnTimeout, Settle: time.Hour})
	done := make(chan struct{})
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	// A turn that never ends is cut before the server closes.
	defer func() {
		cancel()
		<-done
	}()
	go func() {
		defer close(done)
		_, err = m.Say(ctx, "What is my balance?")
	}()
	<-held
	for len(clk.set) > 0 {
		<-clk.set
	}
	clk.Advance(turnTimeout)
	// Both timers of the turn (its own, and the reconnect's) grant the
	// wait.
	for range 2 {
		select {
		case d := <-clk.set:
			if d != retryAfter {
				t.Fatalf("a timer of %s set once the turn's time passed, want the grant of %s", d, retryAfter)
			}
		case <-done:
			t.Fatalf("the turn ended within its time and the wait: %v", err)
		}
	}
	clk.Advance(retryAfter)
	await(t, done, "the turn once its time and the wait passed")
	if d, ok := MessagingTurnTimeout(err); !ok || d != turnTimeout {
		t.Errorf("error %v: want the turn's timeout of %s", err, turnTimeout)
	}
}

// TestMessagingTurnTimeoutGrantsATurnItsOwnWaits: a turn's timeout leaves
// out the rate-limit waits charged to the case's account during the turn,
// not those before it. The opening's handshake waits out a Retry-After of
// 20s, charged to the account the turn is said with too; the platform
// never answers the turn, which times out once its own 5s passed.
func TestMessagingTurnTimeoutGrantsATurnItsOwnWaits(t *testing.T) {
	t.Parallel()
	const turnTimeout = 5 * time.Second
	p := &hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
		c.Read(ctx) // the message, never answered
		<-ctx.Done()
	})}
	p.handshake = func(w http.ResponseWriter, r *http.Request) bool {
		if p.handshakes.Load() > 1 {
			return false
		}
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	clk := newWindowClock()
	c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}, clk)
	acct := NewRateAccount()
	ctx := WithRateAccount(context.Background(), acct)
	m, err := c.OpenMessaging(ctx, MessagingStart{TurnTimeout: turnTimeout, Settle: time.Hour})
	if m != nil {
		defer m.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if w := acct.Waited(clk.Now()); w != 20*time.Second {
		t.Fatalf("the opening waited %s, want the Retry-After's 20s", w)
	}
	clk.cut(t, turnTimeout, func() { _, err = m.Say(ctx, "What is my balance?") })
	if d, ok := MessagingTurnTimeout(err); !ok || d != turnTimeout {
		t.Errorf("error %v: want the turn's timeout of %s", err, turnTimeout)
	}
}

// TestMessagingLatency: a turn's latency runs from its send to the
// event that answered it, on the client's clock, whatever completes the
// answer after that: the end of typing, the settle window (whose wait is
// left out), or a session end, which is its own answer. The platform answers once the test moved the clock a
// second past the send.
func TestMessagingLatency(t *testing.T) {
	t.Parallel()
	const settle = 30 * time.Second
	for _, tc := range []struct {
		name   string
		answer []string
		by     string
		reply  string
	}{
		{"typing", []string{hello, typingStop}, "typing", "Hello."},
		{"settle", []string{hello}, "settle", "Hello."},
		{"session end", []string{`{"id":"7","type":"EVENT_TYPE_SESSION_END","payload":{}}`}, "session_end", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			heard, goOn := make(chan struct{}), make(chan struct{})
			srv := httptest.NewServer(&hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
				if _, _, err := c.Read(ctx); err != nil || !writeAll(ctx, c, joinedC1, `{"id":"2","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hi."}}`,
					`{"id":"3","type":"EVENT_TYPE_AGENT_TYPING_STOP","payload":{}}`) {
					return
				}
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
				close(heard)
				select {
				case <-goOn:
				case <-ctx.Done():
					return
				}
				if writeAll(ctx, c, tc.answer...) {
					c.Read(ctx)
				}
			}})
			defer srv.Close()
			clk := newWindowClock()
			c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, clk)
			m := open(t, c, MessagingStart{TurnTimeout: time.Minute, Settle: settle})
			go func() {
				<-heard
				clk.Advance(time.Second)
				close(goOn)
			}()
			var turn *MessagingTurn
			var err error
			say := func() { turn, err = m.Say(context.Background(), "hi") }
			if tc.by == "settle" {
				clk.cut(t, settle, say)
			} else {
				say()
			}
			if err != nil || turn.Reply != tc.reply || turn.CompletedBy != tc.by || turn.Latency != time.Second {
				t.Errorf("%v: reply %q completed by %q after %s; want %q by %s after 1s", err, turn.Reply, turn.CompletedBy, turn.Latency, tc.reply, tc.by)
			}
		})
	}
}
