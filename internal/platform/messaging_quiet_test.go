package platform

import (
	"context"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// Frames of an answer split by the typing indicator, and the events that
// may follow it.
const (
	qJoined   = `{"id":"1","type":"EVENT_TYPE_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`
	qFirst    = `{"id":"3","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Let me check."}}`
	qOff      = `{"id":"4","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
	qOn       = `{"id":"5","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":true}}`
	qSecond   = `{"id":"6","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your bill is £84.20."}}`
	qOffAgain = `{"id":"7","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`
	qEnd      = `{"id":"8","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`
	qOnFirst  = `{"id":"2","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":true}}`
)

// quietPlatform answers the join with the frames the test pushes, one
// batch at a time, over a real socket; the client's timers run on a
// windowClock, so a window passes only when the test moves the clock.
type quietPlatform struct {
	t     *testing.T
	clk   *windowClock
	push  chan []string
	done  chan struct{}
	turn  *MessagingTurn
	err   error
	m     *MessagingSession
	quiet time.Duration
}

// openQuiet opens a session with st against a platform that answers the
// join with what the test pushes; the opening runs on a goroutine of its
// own until the answer is complete (done).
func openQuiet(t *testing.T, st MessagingStart) *quietPlatform {
	t.Helper()
	p := &quietPlatform{t: t, clk: newWindowClock(), push: make(chan []string), done: make(chan struct{}), quiet: st.Quiet}
	srv := httptest.NewServer(&hostileMessaging{socket: func(ctx context.Context, c *websocket.Conn) {
		if _, _, err := c.Read(ctx); err != nil {
			return
		}
		for {
			select {
			case frames := <-p.push:
				for _, f := range frames {
					if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
						return
					}
				}
			case <-ctx.Done():
				return
			}
		}
	}})
	c := windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1, Sleep: fakeclock.New().Sleep}, p.clk)
	go func() {
		defer close(p.done)
		p.m, p.err = c.OpenMessaging(context.Background(), st)
		if p.m != nil {
			p.turn = p.m.Opening()
		}
	}()
	t.Cleanup(func() {
		// A call that failed to return is cut by its timers.
		p.clk.Advance(time.Hour)
		select {
		case <-p.done:
			if p.m != nil {
				p.m.Close()
			}
		case <-time.After(closeGuard):
			t.Error("the opening does not return")
		}
		srv.Close()
	})
	return p
}

// send has the platform write frames.
func (p *quietPlatform) send(frames ...string) {
	p.t.Helper()
	select {
	case p.push <- frames:
	case <-p.done:
		p.t.Fatalf("the opening returned (%v) before the platform sent %v", p.err, frames)
	case <-time.After(closeGuard):
		p.t.Fatalf("the platform could not send %v", frames)
	}
}

// sendAfter has the platform write frames once the opening returned.
func (p *quietPlatform) sendAfter(frames ...string) {
	p.t.Helper()
	select {
	case p.push <- frames:
	case <-time.After(closeGuard):
		p.t.Fatalf("the platform could not send %v", frames)
	}
}

// waitWindow waits until the client sets a window of d: it has taken
// the events sent so far, and waits for quiet.
func (p *quietPlatform) waitWindow(d time.Duration, what string) {
	p.t.Helper()
	waitSet(p.t, p.clk, d, p.done, "the opening", what)
}

// waitSet waits until the client sets a window of d on clk, failing t
// when the call under test (named call) ends first (done).
func waitSet(t *testing.T, clk *windowClock, d time.Duration, done <-chan struct{}, call, what string) {
	t.Helper()
	for {
		select {
		case got := <-clk.set:
			if got == d {
				return
			}
		case <-done:
			t.Fatalf("%s returned before it set the window of %s %s", call, d, what)
		case <-time.After(closeGuard):
			t.Fatalf("no window of %s %s within %s", d, what, closeGuard)
		}
	}
}

// firstMessage has the platform answer the join with one message and
// its typing indicator off, and waits until the client waits the quiet.
func (p *quietPlatform) firstMessage() {
	p.t.Helper()
	p.send(qJoined, qOnFirst, qFirst, qOff)
	p.waitWindow(p.quiet, "after the typing indicator went off")
}

// answered waits for the opening to return and checks its reply and
// what completed it.
func (p *quietPlatform) answered(wantReply, wantBy string) {
	p.t.Helper()
	await(p.t, p.done, "the answer")
	if p.err != nil {
		p.t.Fatal(p.err)
	}
	if p.turn.Reply != wantReply || p.turn.CompletedBy != wantBy {
		p.t.Errorf("reply %q completed by %q (events %v), want %q by %q", p.turn.Reply, p.turn.CompletedBy, p.turn.Types(), wantReply, wantBy)
	}
}

// TestMessagingQuiet: with MessagingStart.Quiet, an answer whose typing
// indicator went off is complete only after that much quiet: a message
// within it joins the answer (its typing indicator going off again
// starts the wait again), a typing indicator that comes on again holds
// the wait for as long as it is on, and a session end completes the
// answer at once. Without it (the default), the answer is complete when
// the indicator goes off, and what follows is the next turn's. The
// clock moves 0.9 of the window, then the rest: a wait that was not
// restarted or held would complete the answer at the first move.
func TestMessagingQuiet(t *testing.T) {
	t.Parallel()
	const quiet = time.Second
	st := MessagingStart{TurnTimeout: time.Minute, Quiet: quiet}
	both := "Let me check. Your bill is £84.20."

	t.Run("a second message within the quiet", func(t *testing.T) {
		t.Parallel()
		p := openQuiet(t, st)
		p.firstMessage()
		p.clk.Advance(quiet * 9 / 10)
		p.send(qOn, qSecond, qOffAgain)
		p.waitWindow(quiet, "after it went off again")
		p.clk.Advance(quiet * 9 / 10)
		p.clk.Advance(quiet / 10)
		p.answered(both, "quiet")
	})
	t.Run("the typing indicator on again holds the quiet", func(t *testing.T) {
		t.Parallel()
		p := openQuiet(t, st)
		p.firstMessage()
		p.clk.Advance(quiet * 9 / 10)
		for len(p.clk.nows) > 0 {
			<-p.clk.nows
		}
		p.send(qOn)
		// The client reads the clock as it takes the event, before it
		// reads the indicator: past this, the window's firing finds
		// the indicator on.
		select {
		case <-p.clk.nows:
		case <-p.done:
			t.Fatalf("the opening returned (%v) before it took the typing indicator", p.err)
		case <-time.After(closeGuard):
			t.Fatal("the client did not take the typing indicator")
		}
		p.clk.Advance(10 * quiet)
		p.send(qSecond, qOffAgain)
		p.waitWindow(quiet, "after it went off again")
		p.clk.Advance(quiet)
		p.answered(both, "quiet")
	})
	t.Run("a session end within the quiet", func(t *testing.T) {
		t.Parallel()
		p := openQuiet(t, st)
		p.firstMessage()
		p.send(qEnd)
		p.answered("Let me check.", "session_end")
		if !p.turn.SessionEnded {
			t.Error("the session end is not the answer's")
		}
	})
	t.Run("the turn's time runs out within the quiet", func(t *testing.T) {
		t.Parallel()
		p := openQuiet(t, MessagingStart{TurnTimeout: quiet / 2, Quiet: quiet})
		p.firstMessage()
		p.clk.Advance(quiet / 2)
		await(t, p.done, "the timeout")
		want := "an answer came and the agent's typing indicator went off, but the 1s of quiet without a new event that then completes it had not passed"
		if got := MessagingAwaited(p.err); got != want {
			t.Errorf("awaited %q (%v), want %q", got, p.err, want)
		}
	})
	t.Run("without a quiet the answer ends with the indicator", func(t *testing.T) {
		t.Parallel()
		p := openQuiet(t, MessagingStart{TurnTimeout: time.Minute})
		p.send(qJoined, qOnFirst, qFirst, qOff)
		p.answered("Let me check.", "typing")
	})
}

// TestMessagingQuietAndSettle: the quiet that completes an answer on a
// platform without a typing indicator is Settle, or Quiet when longer; a
// Quiet shorter than Settle is the wait after the indicator went off.
func TestMessagingQuietAndSettle(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name          string
		quiet, settle time.Duration
		frames        []string
		window        time.Duration
		by            string
	}
	run := func(t *testing.T, tc testCase) {
		p := openQuiet(t, MessagingStart{TurnTimeout: time.Minute, Quiet: tc.quiet, Settle: tc.settle})
		p.send(tc.frames...)
		p.waitWindow(tc.window, "after the answer")
		p.clk.Advance(tc.window)
		p.answered("Let me check.", tc.by)
	}
	noTyping := []string{qJoined, qFirst}
	typing := []string{qJoined, qOnFirst, qFirst, qOff}
	for _, tc := range []testCase{
		{name: "no indicator, quiet longer", quiet: time.Second, frames: noTyping, window: time.Second, by: "settle"},
		{name: "no indicator, quiet shorter", quiet: 100 * time.Millisecond, frames: noTyping, window: DefaultMessagingSettle, by: "settle"},
		{name: "no indicator, settle set longer", quiet: time.Second, settle: 2 * time.Second, frames: noTyping, window: 2 * time.Second, by: "settle"},
		{name: "indicator, quiet shorter than settle", quiet: 100 * time.Millisecond, frames: typing, window: 100 * time.Millisecond, by: "quiet"},
		// The indicator went off before the answer: no sign of the
		// agent typing comes after it, as on a platform without one.
		{name: "indicator off before the answer", quiet: 100 * time.Millisecond, frames: []string{qJoined, qOnFirst, qOff, qFirst}, window: DefaultMessagingSettle, by: "settle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestMessagingQuietAwaitEnd: AwaitEnd, which gives a session end the
// quiet that completes an answer without a typing indicator to arrive,
// waits the longer Quiet too, from each event that comes.
func TestMessagingQuietAwaitEnd(t *testing.T) {
	t.Parallel()
	const quiet = time.Second
	p := openQuiet(t, MessagingStart{TurnTimeout: time.Minute, Quiet: quiet})
	p.firstMessage()
	p.clk.Advance(quiet)
	p.answered("Let me check.", "quiet")
	done := make(chan struct{})
	var turn *MessagingTurn
	var err error
	go func() {
		defer close(done)
		turn, err = p.m.AwaitEnd(context.Background())
	}()
	waitSet(t, p.clk, quiet, done, "AwaitEnd", "for the end")
	p.sendAfter(qOn)
	waitSet(t, p.clk, quiet, done, "AwaitEnd", "after an event")
	p.sendAfter(qEnd)
	await(t, done, "AwaitEnd")
	if err != nil || !turn.SessionEnded {
		t.Errorf("AwaitEnd: %v, ended %v", err, turn.SessionEnded)
	}
}

// TestQuietIsNoQueuedFrame: a window of quiet that fires while a frame
// the reader took waits in the session's queue was not quiet, and the
// frame is taken. The frame came before the session's goroutine got to
// the firing, as on a loaded machine; before, select chose at random
// between the two, so a turn completed without its second message half
// the time (the message then the next turn's), and AwaitEnd returned
// without the session end. The clock holds the window's first setting
// until the frame is queued, then fires it at once, as does every
// setting after: twenty sessions of each, and a random choice passes
// them all once in a million.
func TestQuietIsNoQueuedFrame(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		frames []string
		// wait plays the wait under test on the opened session, the
		// window armed when arm is called.
		wait func(t *testing.T, m *MessagingSession, arm func()) *MessagingTurn
		want func(turn *MessagingTurn) bool
	}
	run := func(t *testing.T, tc testCase) {
		srv := httptest.NewServer(&hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
			if _, _, err := c.Read(ctx); err != nil { // the user's message
				return
			}
			for _, f := range tc.frames {
				if c.Write(ctx, websocket.MessageText, []byte(f)) != nil {
					return
				}
			}
			c.Read(ctx)
		})})
		defer srv.Close()
		clk := fakeclock.New()
		var (
			m     *MessagingSession
			armed atomic.Bool
			sets  int // settings of the armed window, all on the session's goroutine
		)
		after := func(d time.Duration, f func()) (stop func() bool) {
			if !armed.Load() || d != DefaultMessagingSettle {
				return clk.AfterFunc(d, f)
			}
			if sets++; sets == 1 {
				for len(m.frames.ch) == 0 {
					runtime.Gosched()
				}
			}
			f()
			return func() bool { return false }
		}
		c := clockedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}, clk.Now, after)
		m = open(t, c, MessagingStart{TurnTimeout: time.Minute})
		if turn := tc.wait(t, m, func() { armed.Store(true) }); !tc.want(turn) {
			t.Fatalf("completed by %q with events %v", turn.CompletedBy, turn.Types())
		}
	}
	for _, tc := range []testCase{
		{
			name: "a turn's settle window",
			frames: []string{
				`{"id":"11","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Let me check."}}`,
				`{"id":"12","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Your bill is £84.20."}}`,
			},
			wait: func(t *testing.T, m *MessagingSession, arm func()) *MessagingTurn {
				arm()
				return say(t, m, "What is my bill?")
			},
			want: func(turn *MessagingTurn) bool { return len(turn.Messages) == 2 && turn.CompletedBy == "settle" },
		},
		{
			name: "AwaitEnd's quiet",
			frames: []string{
				`{"id":"11","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":true}}`,
				`{"id":"12","type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Goodbye."}}`,
				`{"id":"13","type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":false}}`,
				`{"id":"14","type":"EVENT_TYPE_SESSION_END","payload":{"reason":"agent_ended"}}`,
			},
			wait: func(t *testing.T, m *MessagingSession, arm func()) *MessagingTurn {
				say(t, m, "What is my bill?")
				arm()
				turn, err := m.AwaitEnd(context.Background())
				if err != nil {
					t.Fatalf("AwaitEnd: %v", err)
				}
				return turn
			},
			want: func(turn *MessagingTurn) bool { return turn.SessionEnded },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for range 20 {
				run(t, tc)
			}
		})
	}
}
