package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/agenttest/agenttest/internal/clock"
)

// altPlatform is another implementation of the Messaging API written from
// the same reference, making the other plausible choices: numeric ids,
// a batch whose payload is the list, no echoes and no typing indicator,
// streamed deltas closed by a _DONE event, other payload members. The
// client must work with it as it does with the simulator.
type altPlatform struct {
	t       *testing.T
	planted string // echoed into every frame and error
	mode    string // "" or "leak": error bodies echo the credentials
	joins   atomic.Int32
	// heard, when set, is told of each "silent" read (the message it
	// never answers); the platform then waits on goOn and sends an event
	// that answers nothing.
	heard, goOn chan struct{}
}

func (p *altPlatform) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	leak := r.Header.Get("X-Token") + " " + r.Header.Get("Authorization") + " " + r.URL.Query().Get("access_token")
	switch r.URL.Path {
	case "/api/v1/access-token":
		fmt.Fprintf(w, `{"token":%q}`, p.planted)
	case "/api/v1/sessions":
		if p.mode == "leak" {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, `{"message":"upstream refused %s"}`, leak)
			return
		}
		fmt.Fprint(w, `{"sessionId":"alt-1"}`)
	case "/ws":
		if p.mode == "leak-ws" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, "bad credentials: %s", leak)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		p.serve(c, leak)
	default:
		http.NotFound(w, r)
	}
}

// serve plays the alternative dialect.
func (p *altPlatform) serve(c *websocket.Conn, leak string) {
	ctx := context.Background()
	id := 0
	send := func(typ string, payload any) {
		id++
		b, _ := json.Marshal(map[string]any{"id": id, "type": typ, "payload": payload, "timestamp": "2026-03-01T12:00:00Z"})
		c.Write(ctx, websocket.MessageText, b)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"id":"h","type":"EVENT_TYPE_EVENT_BATCH","payload":[]}`))
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var ev struct {
			Type    string `json:"type"`
			Payload struct {
				Text string `json:"text"`
			} `json:"payload"`
		}
		json.Unmarshal(data, &ev)
		if p.heard != nil && ev.Payload.Text == "silent" {
			p.heard <- struct{}{}
			<-p.goOn
			send("EVENT_TYPE_READ_RECEIPT", map[string]any{})
		}
		switch text := ev.Payload.Text; {
		case ev.Type == "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN":
			p.joins.Add(1)
			send("EVENT_TYPE_VENDOR_AGENT_JOINED", map[string]any{"conversationId": "alt-conv"})
			send("EVENT_TYPE_VENDOR_AGENT_MESSAGE_DELTA", map[string]any{"messageId": "m1", "delta": "Hello, "})
			send("EVENT_TYPE_VENDOR_AGENT_MESSAGE_DELTA", map[string]any{"messageId": "m1", "delta": "how can I help?"})
			send("EVENT_TYPE_VENDOR_AGENT_MESSAGE_DONE", map[string]any{"messageId": "m1"})
		case text == "fail":
			send("EVENT_TYPE_SYSTEM_MESSAGE", map[string]any{"severity": "ERROR", "text": "nope"})
		case text == "leak":
			send("EVENT_TYPE_AGENT_MESSAGE", map[string]any{"content": "your credentials: " + leak})
		case text == "malformed":
			c.Write(ctx, websocket.MessageText, []byte(`{"type":`))
		case text == "silent":
			// Never answers: the turn times out.
		case text == "bye":
			send("EVENT_TYPE_AGENT_MESSAGE", map[string]any{"content": "Bye."})
			send("EVENT_TYPE_SESSION_ENDED", map[string]any{"cause": "done"})
		default:
			send("EVENT_TYPE_AGENT_MESSAGE", map[string]any{"content": "echo: " + text})
		}
	}
}

const (
	plantedConnector = "ct_PLANTED_connector_0123456789"
	plantedJWT       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.PLANTEDsignature0123456789abcdef"
)

func altClient(t *testing.T, p *altPlatform) *Client {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
}

// altWindowed is a client of p whose Messaging timers run on clk.
func altWindowed(t *testing.T, p *altPlatform, clk *windowClock) *Client {
	t.Helper()
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return windowedClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}, clk)
}

// openSettled opens a session on a platform without typing indicators,
// whose opening completes when the settle window passes on clk.
func openSettled(t *testing.T, c *Client, clk *windowClock, st MessagingStart) *MessagingSession {
	t.Helper()
	var m *MessagingSession
	var err error
	clk.cut(t, st.Settle, func() { m, err = c.OpenMessaging(context.Background(), st) })
	if m != nil {
		t.Cleanup(func() { m.Close() })
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return m
}

// saySettled says text, whose answer completes when the settle window
// passes on clk.
func saySettled(t *testing.T, m *MessagingSession, clk *windowClock, text string) *MessagingTurn {
	t.Helper()
	var turn *MessagingTurn
	var err error
	clk.cut(t, m.start.Settle, func() { turn, err = m.Say(context.Background(), text) })
	if err != nil {
		t.Fatalf("say %q: %v (events %v)", text, err, turn.Types())
	}
	return turn
}

// TestMessagingOtherImplementation: the client works with another
// dialect of the reference. Without typing indicators, each answer is
// complete once the settle window passes after it (on a fake clock,
// moved once the client waits on the window), and a platform that never
// answers fails the turn once its own TurnTimeout passed.
func TestMessagingOtherImplementation(t *testing.T) {
	t.Parallel()
	p := &altPlatform{t: t, planted: plantedJWT, heard: make(chan struct{}), goOn: make(chan struct{})}
	clk := newWindowClock()
	c := altWindowed(t, p, clk)
	m := openSettled(t, c, clk, MessagingStart{Settle: 40 * time.Millisecond, TurnTimeout: 400 * time.Millisecond})
	o := m.Opening()
	if !m.Joined() || o.Reply != "Hello, how can I help?" || o.CompletedBy != "settle" || m.ConversationID() != "alt-conv" {
		t.Fatalf("opening: joined %v reply %q by %q conversation %q (%v)", m.Joined(), o.Reply, o.CompletedBy, m.ConversationID(), o.Types())
	}
	if m.SessionID() != "alt-1" || o.Events[0].Seq != 1 || !o.Messages[0].Streamed {
		t.Errorf("session %q, events %+v", m.SessionID(), o.Events)
	}
	if turn := saySettled(t, m, clk, "hi"); turn.Reply != "echo: hi" || turn.CompletedBy != "settle" {
		t.Errorf("reply %q by %q", turn.Reply, turn.CompletedBy)
	}
	turn := saySettled(t, m, clk, "fail")
	if errs := turn.Errors(); len(errs) != 1 || errs[0].Text != "nope" {
		t.Errorf("system %+v", turn.System)
	}
	turn = saySettled(t, m, clk, "leak")
	for _, s := range []string{turn.Reply, string(turn.Events[0].Raw), string(turn.Events[0].Payload), string(turn.Request)} {
		if strings.Contains(s, "PLANTED") {
			t.Errorf("a credential reached the turn: %s", s)
		}
	}
	if !strings.Contains(turn.Reply, "[REDACTED]") {
		t.Errorf("reply %q", turn.Reply)
	}
	// A platform that never answers: the clock moves once the client
	// waits for the answer (it took an event sent after the platform read
	// the message: its write of the message is over, which a bound that
	// ends during it would cut by closing the socket), so the turn is cut
	// while it waits, once d passed and not before.
	silent := func(ctx context.Context, d time.Duration) (turn *MessagingTurn, err error) {
		t.Helper()
		done := make(chan struct{})
		go func() {
			defer close(done)
			turn, err = m.Say(ctx, "silent")
		}()
		select {
		case <-p.heard:
		case <-time.After(closeGuard):
			t.Fatalf("the platform did not read the message within %s", closeGuard)
		}
		for len(clk.nows) > 0 {
			<-clk.nows
		}
		p.goOn <- struct{}{}
		select {
		case <-clk.nows: // the client's time of the event
		case <-time.After(closeGuard):
			t.Fatalf("the client did not take the event within %s", closeGuard)
		}
		fired := clk.fired.Load()
		clk.Advance(d - time.Millisecond)
		if clk.fired.Load() != fired {
			t.Fatalf("a bound of the turn passed before %s", d)
		}
		clk.Advance(time.Millisecond)
		await(t, done, "the silent turn once "+d.String()+" passed")
		return turn, err
	}
	turn, err := silent(context.Background(), 400*time.Millisecond)
	var ne *NetworkError
	if !errors.As(err, &ne) || !errors.Is(err, context.DeadlineExceeded) || !IsTransient(err) || !strings.HasPrefix(err.Error(), "WS /ws: no complete answer within 400ms") {
		// The timeout is the turn's own: MessagingStart.TurnTimeout.
		t.Errorf("silent platform: %v", err)
	}
	if d, ok := MessagingTurnTimeout(err); !ok || d != 400*time.Millisecond {
		t.Errorf("MessagingTurnTimeout(%v) = %s, %v; want 400ms, true", err, d, ok)
	}
	if turn.Request == nil {
		t.Error("a timed-out turn lost its request")
	}
	// The caller's own deadline, before the turn's, says so: a bound
	// on the same clock.
	ctx, cancel := clock.WithTimeoutCause(context.Background(), 100*time.Millisecond, nil, c.cfg.AfterFunc)
	defer cancel()
	if _, err := silent(ctx, 100*time.Millisecond); err == nil || strings.Contains(err.Error(), "within") || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller deadline: %v", err)
	}
	// The clock stands still: the end completes the turn.
	if turn := say(t, m, "bye"); !turn.SessionEnded || turn.EndReason != "done" {
		t.Errorf("end %v %q", turn.SessionEnded, turn.EndReason)
	}
	if n := p.joins.Load(); n != 1 {
		t.Errorf("%d joins", n)
	}
}

func TestMessagingMalformedFrame(t *testing.T) {
	t.Parallel()
	p := &altPlatform{t: t, planted: plantedJWT}
	clk := newWindowClock()
	m := openSettled(t, altWindowed(t, p, clk), clk, MessagingStart{Settle: 40 * time.Millisecond})
	_, err := m.Say(context.Background(), "malformed")
	var re *ResponseError
	if !errors.As(err, &re) || re.Method != "WS" || re.Endpoint != "/ws" || IsTransient(err) {
		t.Fatalf("got %v", err)
	}
}

func TestMessagingSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	var texts []string
	collect := func(err error) {
		if err == nil {
			t.Error("no error")
			return
		}
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		if ae, ok := errors.AsType[*APIError](err); ok {
			texts = append(texts, string(ae.Body), ae.Message, ae.Code)
		}
		if re, ok := errors.AsType[*ResponseError](err); ok {
			texts = append(texts, string(re.Body))
		}
	}
	for _, mode := range []string{"leak", "leak-ws"} {
		p := &altPlatform{t: t, planted: plantedJWT, mode: mode}
		m, err := altClient(t, p).OpenMessaging(context.Background(), MessagingStart{})
		if m != nil {
			m.Close()
		}
		collect(err)
	}
	// A dial that fails quotes the URL, whose query holds the token.
	p := &altPlatform{t: t, planted: plantedJWT}
	srv := httptest.NewServer(p)
	defer srv.Close()
	c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, MessagingSocketURL: "ws://127.0.0.1:1/ws",
		ConnectorToken: plantedConnector, MessagingHost: "example.com", Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.OpenMessaging(context.Background(), MessagingStart{})
	collect(err)
	// An access-token answer without a token: its body is withheld.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"acess_tokn":%q}`, plantedJWT)
	}))
	defer bad.Close()
	c, _ = New(Config{BuildURL: bad.URL, MessagingURL: bad.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com"})
	_, err = c.OpenMessaging(context.Background(), MessagingStart{})
	collect(err)

	if len(texts) < 12 {
		t.Fatalf("only %d texts", len(texts))
	}
	for _, s := range texts {
		if strings.Contains(s, "PLANTED") {
			t.Errorf("secret leaked: %s", s)
		}
	}
}
