package platform

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// TestMessagingAwaited: a turn whose context ends says what it was still
// waiting for, read from the events it took, since the transcript of an
// answer whose typing indicator stayed on shows an answer, and that of a
// stream that never ended shows some of its words: "turn timeout
// exceeded" alone sent the reader to look at an agent that answered.
func TestMessagingAwaited(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// join: the turn is the join request's; joined: the agent
		// joined before it.
		join, joined bool
		frames       []string
		want         string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		m := newMessagingSession(plantedMessagingClient(t, "http://127.0.0.1:1", RetryPolicy{}), MessagingStart{})
		m.joined = tc.joined
		turn := &MessagingTurn{}
		st := &turnState{turn: turn, clientID: "c1", typ: m.events.UserMessage}
		if tc.join {
			st.typ = m.events.Join
		}
		for _, f := range tc.frames {
			if err := m.accept([]byte(f), turn, st); err != nil {
				t.Fatalf("frame %s: %v", f, err)
			}
		}
		if st.done() {
			t.Fatalf("the turn is complete (%s): no timeout to explain", turn.CompletedBy)
		}
		if got := m.awaited(turn, st); got != tc.want {
			t.Errorf("awaited\n%s\nwant\n%s", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "nothing came", joined: true, want: "no answer to the user message"},
		{name: "only the echo came", joined: true,
			frames: []string{`{"id":"1","type":"EVENT_TYPE_USER_MESSAGE","payload":{"text":"hi"},"metadata":{"custom":{"agenttest_id":"c1"}}}`},
			want:   "no answer to the user message"},
		{name: "the agent is typing", joined: true,
			frames: []string{`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":true}}`},
			want:   "no answer to the user message: the agent's typing indicator stayed on"},
		{name: "an answer, typing still on", joined: true,
			frames: []string{
				`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":true}}`,
				`{"id":"2","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Noted."}}`,
			},
			want: "an answer came, but the agent's typing indicator stayed on, and an answer is complete when it goes off"},
		{name: "an error system message, typing still on", joined: true,
			frames: []string{
				`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":true}}`,
				`{"id":"2","type":"EVENT_TYPE_SYSTEM_MESSAGE","payload":{"level":"SYSTEM_MESSAGE_LEVEL_ERROR","text":"Error: Unable to retrieve session"}}`,
			},
			want: "an answer came, but the agent's typing indicator stayed on, and an answer is complete when it goes off"},
		{name: "an answer, typing off, before the quiet", joined: true,
			frames: []string{
				`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":true}}`,
				`{"id":"2","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":false}}`,
				`{"id":"3","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE","payload":{"message_id":"m1","text":"Noted."}}`,
			},
			want: "an answer came, and no event completed it within the 300ms of quiet that completes one without a typing indicator"},
		{name: "a stream without its end", joined: true,
			frames: []string{
				`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_TYPING","payload":{"typing":true}}`,
				`{"id":"2","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"Your balance "}}`,
				`{"id":"3","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"is "}}`,
			},
			want: `the stream of message "m1" never completed (no final chunk, stream end or whole message)`},
		{name: "a stream without its end after a whole message", joined: true,
			frames: []string{
				`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE","payload":{"message_id":"m1","text":"One moment."}}`,
				`{"id":"2","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m2","text":"Your balance "}}`,
			},
			want: `the stream of message "m2" never completed (no final chunk, stream end or whole message)`},
		{name: "the agent never joins", join: true, want: "no answer to the join request: the agent did not join"},
		{name: "the agent joins without a word", join: true,
			frames: []string{`{"id":"1","type":"EVENT_TYPE_VENDOR_AGENT_JOINED","payload":{"conversation_id":"c-1"}}`},
			want:   "no answer to the join request"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMessagingNoHistoryBatch: a platform that opens the socket and then
// waits for the client, which waits for the history batch before it sends
// the join (rule 1), times the opening out saying so; before, the greeting
// read "(no message)" and the error only "turn timeout exceeded", as of an
// agent that never greeted, though the join was never sent.
func TestMessagingNoHistoryBatch(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	sent := make(chan string, 1)
	srv := httptest.NewServer(&hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return true
		}
		defer c.CloseNow()
		ctx := r.Context()
		go func() {
			// A Ping needs a reader for its pong; the client sends
			// nothing, or the join too early.
			_, data, err := c.Read(ctx)
			if err == nil {
				sent <- string(data)
			}
		}()
		// The pong comes from the client's reader, started once the
		// handshake is done: the client now waits for the batch alone.
		if c.Ping(ctx) != nil {
			return true
		}
		clk.Advance(6 * time.Second)
		<-ctx.Done()
		return true
	}})
	defer srv.Close()
	c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
		AllowHTTP: true, Now: clk.Now, AfterFunc: clk.AfterFunc, Retry: RetryPolicy{MaxAttempts: 1, Sleep: clk.Sleep}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
	if m != nil {
		m.Close()
	}
	want := "no history batch after the handshake, which the client waits for before it sends anything"
	if limit, ok := MessagingTurnTimeout(err); !ok || limit != 5*time.Second || MessagingAwaited(err) != want {
		t.Fatalf("error %v: want the turn's 5s timeout, awaiting %q", err, want)
	}
	var ne *NetworkError
	if !errors.As(err, &ne) || ne.Path != "/ws" || !strings.HasSuffix(err.Error(), "WS /ws: no complete answer within 5s ("+want+"): context deadline exceeded") {
		t.Errorf("error %q: want the socket's timeout, with what it awaited", err)
	}
	select {
	case frame := <-sent:
		t.Errorf("the client sent %s before the history batch", frame)
	default:
	}
}

// TestMessagingCallerEnds: a wait that its caller's context ends (the
// runner's turn or scenario timeout, an interrupt) says what it waited
// for too, and is no timeout of the client's own.
func TestMessagingCallerEnds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&hostileMessaging{socket: answerJoin(func(ctx context.Context, c *websocket.Conn) {
		c.Read(ctx) // the greeting said, nothing more comes
	})})
	defer srv.Close()
	c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
	m := open(t, c, MessagingStart{TurnTimeout: time.Hour, Settle: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.AwaitEnd(ctx)
	want := "no session end after the answer"
	if _, own := MessagingTurnTimeout(err); own || MessagingAwaited(err) != want || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v (the client's own timeout %t): want the caller's end, awaiting %q", err, own, want)
	}
}

// TestMessagingFloodIsShed: a turn the platform floods past its bounds
// keeps its first floodKept events, and the messages they began, and
// counts the rest: the case errors, and its result lives until the run's
// end, so keeping every event let a platform that floods each session
// (20 scenarios: 1 GB of memory, a 567 MB JSON report) exhaust memory
// before any report was written. The client's timers are on a clock
// that never moves: a turn of whole messages without a typing indicator
// completes after the settle window of quiet, and on the real clock a
// loaded machine (go test -race ./..., 2 cores) let 300ms pass between
// two frames of the flood, so the turn completed before the flood was
// shed, and the test failed on a client that did shed it.
func TestMessagingFloodIsShed(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name  string
		frame string
		// reply is the turn's reply, in words.
		reply int
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		srv := httptest.NewServer(&hostileMessaging{socket: flood([]byte(tc.frame))})
		defer srv.Close()
		clk := fakeclock.New()
		c := clockedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}, clk.Now, clk.AfterFunc)
		c.msgLimits = messagingLimits{turnFrames: 3000}
		// The guard: a client that stopped shedding the flood would
		// take it until the turn timeout, on a clock nothing moves, and
		// hang until go test's -timeout. A deadline far past any run's
		// time fails it, with the cause, instead; it bounds no check.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		m, err := c.OpenMessaging(ctx, MessagingStart{TurnTimeout: time.Minute})
		if m != nil {
			m.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "the platform floods the session") {
			if ctx.Err() != nil {
				t.Fatalf("the flood was not shed: the opening turn still took frames after a minute (%v)", err)
			}
			t.Fatalf("error %v, want the flood", err)
		}
		if m == nil {
			t.Fatalf("no session: %v", err)
		}
		turn := m.Opening()
		// The history batch is the first of the 3000 frames taken.
		if len(turn.Events) != floodKept || turn.Flooded != 2999-floodKept || cap(turn.Events) >= 2*floodKept {
			t.Errorf("%d events kept (room for %d), %d let go; want %d, and %d", len(turn.Events), cap(turn.Events), turn.Flooded, floodKept, 2999-floodKept)
		}
		if n := len(strings.Fields(turn.Reply)); n != tc.reply {
			t.Errorf("a reply of %d words, want %d", n, tc.reply)
		}
		exch := turn.Exchange(m.SessionID(), m.ConversationID(), "")
		if exch.Messaging.Flooded != turn.Flooded || len(exch.Messaging.Events) != floodKept {
			t.Errorf("the exchange has %d events and %d flooded", len(exch.Messaging.Events), exch.Messaging.Flooded)
		}
	}
	for _, tc := range []testCase{
		{name: "a typing indicator in a loop", frame: `{"type":"EVENT_TYPE_AGENT_TYPING","payload":{"typing":true}}`},
		{name: "a stream without its end", frame: `{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m1","text":"blah "}}`},
		// Each message is complete, and the typing indicator stays on.
		{name: "whole messages", frame: `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`, reply: floodKept},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
