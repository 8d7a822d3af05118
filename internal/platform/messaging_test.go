package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// helpdeskAgent loads the simulator's test agent: ping answers pong,
// "human" hands off to tier2, "bye" ends.
func helpdeskAgent(t testing.TB) *agent.Definition {
	t.Helper()
	const path = "../sim/testdata/agents/helpdesk.yaml"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	def, diags := agent.Load(path, src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return def
}

// startMessagingSim serves the helpdesk agent; the clock is the returned
// one unless opts has its own.
func startMessagingSim(t testing.TB, opts sim.Options) (*simtest.Sim, *fakeclock.Clock) {
	t.Helper()
	clk := fakeclock.New()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.Agents == nil {
		opts.Agents = []*agent.Definition{helpdeskAgent(t)}
	}
	opts.TickInterval = time.Hour
	return simtest.Start(t, opts), clk
}

// messagingClient is a client of the simulator's messaging host for the
// helpdesk's sandbox connector.
func messagingClient(t testing.TB, s *simtest.Sim, p RetryPolicy) *Client {
	t.Helper()
	c, err := New(messagingConfig(s, p))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// messagingConfig is messagingClient's configuration.
func messagingConfig(s *simtest.Sim, p RetryPolicy) Config {
	return Config{
		BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID,
		BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey, Retry: p,
		MessagingURL:   s.MessagingURL,
		ConnectorToken: s.Info.MessagingConnectors["helpdesk"]["sandbox"],
		MessagingHost:  "www." + s.Info.MessagingHost,
	}
}

func open(t testing.TB, c *Client, st MessagingStart) *MessagingSession {
	t.Helper()
	m, err := c.OpenMessaging(context.Background(), st)
	if m != nil {
		t.Cleanup(func() { m.Close() })
	}
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return m
}

// openError opens a session that is expected to fail, closes whatever
// opened, and returns the error.
func openError(c *Client) error {
	m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
	if m != nil {
		m.Close()
	}
	return err
}

// plantedMessagingClient is a client of the Messaging API of a test's
// own server at url, with the planted connector token and retry.
func plantedMessagingClient(t testing.TB, url string, retry RetryPolicy) *Client {
	t.Helper()
	return clockedMessagingClient(t, url, retry, nil, nil)
}

// clockedMessagingClient is plantedMessagingClient with its Messaging
// timers (the settle window, the turn timeout) on a test's clock: now
// and after (Config.Now and Config.AfterFunc), the real clock when nil.
func clockedMessagingClient(t testing.TB, url string, retry RetryPolicy, now func() time.Time, after func(time.Duration, func()) func() bool) *Client {
	t.Helper()
	c, err := New(Config{BuildURL: url, MessagingURL: url, ConnectorToken: plantedConnector, MessagingHost: "example.com", Retry: retry,
		Now: now, AfterFunc: after})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func say(t testing.TB, m *MessagingSession, text string) *MessagingTurn {
	t.Helper()
	turn, err := m.Say(context.Background(), text)
	if err != nil {
		t.Fatalf("say %q: %v (events %v)", text, err, turn.Types())
	}
	return turn
}

func TestMessagingConversation(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming %v", streaming), func(t *testing.T) {
			t.Parallel()
			s, _ := startMessagingSim(t, sim.Options{})
			c := messagingClient(t, s, RetryPolicy{})
			// The simulator names the conversation the session's
			// conversation_id asks for.
			name := fmt.Sprintf("conv-streamed-%t", streaming)
			m := open(t, c, MessagingStart{Streaming: streaming, Custom: map[string]any{"suite": "web"}, ConversationID: name})
			o := m.Opening()
			if !m.Joined() || !o.Joined || o.Reply != "Help desk here, how can I help?" || o.CompletedBy != "typing" {
				t.Fatalf("opening: joined %v, reply %q, completed by %q, events %v", m.Joined(), o.Reply, o.CompletedBy, o.Types())
			}
			if len(o.Messages) != 1 || o.Messages[0].Streamed != streaming || !o.Messages[0].Complete {
				t.Errorf("greeting %+v", o.Messages)
			}
			for _, e := range o.Events {
				if e.Custom["suite"] != "web" {
					t.Errorf("%s does not echo the custom metadata: %v", e.Type, e.Custom)
				}
			}
			if m.ConversationID() != name || !strings.HasPrefix(m.SessionID(), "ses_") {
				t.Fatalf("ids: conversation %q, session %q", m.ConversationID(), m.SessionID())
			}
			for i := range 3 {
				turn, err := m.Send(context.Background(), MessagingMessage{Text: "ping", Custom: map[string]any{"turn": i}})
				if err != nil || turn.Reply != "pong" || turn.SessionEnded || len(turn.Errors()) > 0 {
					t.Fatalf("turn %d: %v %q %v", i, err, turn.Reply, turn.Types())
				}
				if turn.Events[0].Kind != EventEcho || turn.Events[0].Custom["turn"] != float64(i) || turn.Events[0].Custom["suite"] != "web" {
					t.Errorf("echo %+v", turn.Events[0])
				}
				if turn.Latency < 0 || turn.Started.IsZero() {
					t.Errorf("timing %v %v", turn.Started, turn.Latency)
				}
			}
			bye := say(t, m, "bye")
			if bye.Reply != "Goodbye!" || !bye.SessionEnded || bye.EndReason != "agent_ended" || bye.CompletedBy != "session_end" {
				t.Fatalf("goodbye: %q ended %v %q by %q", bye.Reply, bye.SessionEnded, bye.EndReason, bye.CompletedBy)
			}
			if _, err := m.Say(context.Background(), "hello?"); !errors.Is(err, ErrMessagingEnded) {
				t.Errorf("after the end: %v", err)
			}
			// The conversation, read back through the Conversations API.
			conv, err := c.GetConversation(context.Background(), "helpdesk", m.ConversationID())
			if err != nil {
				t.Fatal(err)
			}
			if conv.Channel != "WEBCHAT" || len(conv.Turns) != 5 || conv.InProgress {
				t.Errorf("conversation: channel %q, %d turns, in progress %v", conv.Channel, len(conv.Turns), conv.InProgress)
			}
			// Every event once, ids 1..n: nothing duplicated, nothing lost.
			for i, e := range m.Events() {
				if e.ID != strconv.Itoa(i+1) || e.Seq != int64(i+1) {
					t.Fatalf("event %d: id %q seq %d", i, e.ID, e.Seq)
				}
			}
		})
	}
}

func TestMessagingSystemMessagesAreData(t *testing.T) {
	t.Parallel()
	s, _ := startMessagingSim(t, sim.Options{Faults: sim.Faults{ReplyFailure: 1}})
	c := messagingClient(t, s, RetryPolicy{})
	m := open(t, c, MessagingStart{})
	turn := say(t, m, "ping")
	if errs := turn.Errors(); len(errs) != 1 || errs[0].Text != sim.SysReplyFailed || errs[0].Level != sim.LevelError || turn.Reply != "" {
		t.Fatalf("turn: %+v reply %q", turn.System, turn.Reply)
	}

	s, _ = startMessagingSim(t, sim.Options{Faults: sim.Faults{ReplyFailure: 1}})
	c = messagingClient(t, s, RetryPolicy{})
	m = open(t, c, MessagingStart{Streaming: true})
	turn = say(t, m, "tell me something long about the weather on the moon")
	if errs := turn.Errors(); len(errs) != 1 || errs[0].Text != sim.SysStreamFailed {
		t.Fatalf("streamed: %+v", turn.System)
	}
	if turn.Reply != "" || len(turn.Messages) != 1 || turn.Messages[0].Complete || turn.Messages[0].Text == "" {
		t.Errorf("an interrupted stream: reply %q, messages %+v", turn.Reply, turn.Messages)
	}

	// A join that fails is data too; the join may be sent again.
	s, _ = startMessagingSim(t, sim.Options{Faults: sim.Faults{JoinFailure: 1}})
	c = messagingClient(t, s, RetryPolicy{})
	m = open(t, c, MessagingStart{})
	if m.Joined() || len(m.Opening().Errors()) != 1 || m.Opening().Errors()[0].Text != sim.SysStartFailed {
		t.Fatalf("failed join: %+v", m.Opening().System)
	}
	if turn, err := m.Join(context.Background()); err != nil || len(turn.Errors()) != 1 {
		t.Errorf("join again: %v", err)
	}
}

func TestMessagingHandoffEvents(t *testing.T) {
	t.Parallel()
	s, _ := startMessagingSim(t, sim.Options{})
	c := messagingClient(t, s, RetryPolicy{})
	m := open(t, c, MessagingStart{})
	turn := say(t, m, "a human please")
	h := turn.Handoff
	if h == nil || h.Destination != "tier2" || !h.Joined || h.LiveAgent != sim.DefaultLiveAgentName {
		t.Fatalf("handoff %+v in %v", h, turn.Types())
	}
	if len(turn.Messages) != 2 || turn.Messages[1].From != "live_agent" || !strings.HasPrefix(turn.Reply, "Transferring you to a person now. Hi, this is Sam") {
		t.Errorf("messages %+v", turn.Messages)
	}
	if turn = say(t, m, "bye"); !turn.SessionEnded || turn.EndReason != "live_agent_ended" {
		t.Errorf("end %v %q", turn.SessionEnded, turn.EndReason)
	}

	s, _ = startMessagingSim(t, sim.Options{Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}})
	c = messagingClient(t, s, RetryPolicy{})
	m = open(t, c, MessagingStart{})
	turn = say(t, m, "a human please")
	if errs := turn.Errors(); len(errs) != 1 || errs[0].Text != sim.SysNoLiveAgent || !turn.SessionEnded || turn.EndReason != "handoff_failed" {
		t.Fatalf("no live agent: %+v %v %q", turn.System, turn.SessionEnded, turn.EndReason)
	}

	s, _ = startMessagingSim(t, sim.Options{})
	c = messagingClient(t, s, RetryPolicy{})
	m = open(t, c, MessagingStart{})
	turn, err := m.RequestLiveAgent(context.Background(), "wants a person")
	if err != nil || turn.Handoff == nil || turn.Handoff.Destination != "live_agent" || turn.Handoff.Reason != "wants a person" {
		t.Fatalf("requested handoff: %v %+v", err, turn.Handoff)
	}
	if turn, err = m.End(context.Background()); err != nil || !turn.SessionEnded || turn.EndReason != "user_ended" {
		t.Fatalf("end: %v %+v", err, turn)
	}
}

// TestMessagingReconnect drops the socket during every join and message
// (at points drawn from the seed: before the event arrives, after part of
// the answer, after all of it). Each conversation must match the one
// without drops: no duplicate join, no duplicate or missing event.
func TestMessagingReconnect(t *testing.T) {
	t.Parallel()
	script := []string{"ping", "what is this", "ping", "ping", "bye"}
	run := func(t *testing.T, seed int64, drop float64, streaming bool) ([]string, *MessagingSession, *simtest.Sim) {
		s, _ := startMessagingSim(t, sim.Options{Seed: seed, Faults: sim.Faults{SocketDrop: drop}})
		c := messagingClient(t, s, RetryPolicy{})
		m := open(t, c, MessagingStart{Streaming: streaming, MaxReconnects: 8})
		replies := []string{m.Opening().Reply}
		for _, text := range script {
			replies = append(replies, say(t, m, text).Reply)
		}
		return replies, m, s
	}
	for seed := int64(1); seed <= 6; seed++ {
		for _, streaming := range []bool{false, true} {
			t.Run(fmt.Sprintf("seed %d streaming %v", seed, streaming), func(t *testing.T) {
				t.Parallel()
				want, _, _ := run(t, seed, 0, streaming)
				got, m, s := run(t, seed, 1, streaming)
				if !slices.Equal(got, want) {
					t.Errorf("replies with drops %q, without %q", got, want)
				}
				st := s.Server.MessagingStats()
				if st.DuplicateJoins != 0 || st.DroppedSockets < int64(len(script)) || m.Reconnects() < len(script) {
					t.Errorf("stats %+v, reconnects %d", st, m.Reconnects())
				}
				for i, e := range m.Events() {
					if e.ID != strconv.Itoa(i+1) {
						t.Fatalf("event %d has id %s: duplicated or lost", i, e.ID)
					}
				}
				if ended, reason := m.Ended(); !ended || reason != "agent_ended" {
					t.Errorf("ended %v %q", ended, reason)
				}
			})
		}
	}
}

func TestMessagingDroppedBetweenTurns(t *testing.T) {
	t.Parallel()
	s, clk := startMessagingSim(t, sim.Options{})
	c := messagingClient(t, s, RetryPolicy{})
	m := open(t, c, MessagingStart{})
	say(t, m, "ping")
	// The session expires while nobody talks: SESSION_END arrives between
	// turns, and the next turn says the session ended.
	clk.Advance(sim.DefaultSessionExpiry + time.Second)
	s.Server.Tick()
	// Whether the end arrives before the message is sent or while the
	// client waits, the turn ends with it.
	turn, err := m.Say(context.Background(), "ping")
	if err != nil && !errors.Is(err, ErrMessagingEnded) || !turn.SessionEnded || turn.EndReason != "expired" {
		t.Fatalf("after expiry: %v, %v", err, turn.Types())
	}
	if _, err := m.Say(context.Background(), "ping"); !errors.Is(err, ErrMessagingEnded) {
		t.Fatalf("then: %v", err)
	}
	// A reconnect to an expired session is the handshake's 404.
	m.frames, m.dropped, m.ended = newFrameQueue(0), nil, false
	err = m.reconnect(context.Background(), &MessagingTurn{}, errors.New("gone"), nil)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Message != "session not found" || ae.Endpoint != "/ws" {
		t.Fatalf("reconnect: %v", err)
	}
}

func TestMessagingHTTPErrors(t *testing.T) {
	t.Parallel()
	s, _ := startMessagingSim(t, sim.Options{})
	base := Config{BuildURL: s.BuildURL, MessagingURL: s.MessagingURL, Retry: RetryPolicy{MaxAttempts: 1}}
	for _, tc := range []struct {
		name          string
		token, host   string
		status        int
		message, path string
	}{
		{"unknown connector", "ct_0123456789abcdef", sim.DefaultMessagingHost, 401, "Connector token does not exist", "/api/v1/access-token"},
		{"wrong host", s.Info.MessagingConnectors["helpdesk"]["live"], "example.org", 401, "Failed to validate connector", "/api/v1/access-token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.ConnectorToken, cfg.MessagingHost = tc.token, tc.host
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.OpenMessaging(context.Background(), MessagingStart{})
			var ae *APIError
			if m != nil || !errors.As(err, &ae) || ae.Status != tc.status || ae.Message != tc.message || ae.Endpoint != tc.path {
				t.Fatalf("got %v (%#v)", err, ae)
			}
			if strings.Contains(err.Error(), tc.token) {
				t.Errorf("the connector token leaked: %v", err)
			}
			if !IsAuth(err) || !IsMessaging(err) {
				t.Error("not an auth error of the Messaging API")
			}
		})
	}
	t.Run("not configured", func(t *testing.T) {
		c, _ := New(Config{BuildURL: s.BuildURL})
		_, err := c.OpenMessaging(context.Background(), MessagingStart{})
		if err == nil || !strings.Contains(err.Error(), "messaging URL is not configured") || !strings.Contains(err.Error(), "connector token") || !strings.Contains(err.Error(), "messaging host") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("bad URLs", func(t *testing.T) {
		_, err := New(Config{BuildURL: s.BuildURL, MessagingURL: "ftp://x", MessagingSocketURL: "wss://h/ws?token=1"})
		if err == nil || !strings.Contains(err.Error(), "messaging URL") || !strings.Contains(err.Error(), "socket URL") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("handshake 429 is retried after Retry-After", func(t *testing.T) {
		s, clk := startMessagingSim(t, sim.Options{Messaging: sim.MessagingOptions{HandshakeRate: 0.5, HandshakeBurst: 1}})
		var waits []time.Duration
		cfg := messagingConfig(s, RetryPolicy{MaxAttempts: 1,
			Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); clk.Advance(d); return nil }})
		// The pause runs on the client's clock, the server's: a 429 is
		// no attempt, and is waited out with retries off.
		cfg.Now = clk.Now
		c, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := open(t, c, MessagingStart{})
		// The second handshake of the session is over the limit: the
		// client waits the server's Retry-After (2 s) on the server clock.
		m.conn.CloseNow()
		if turn := say(t, m, "ping"); turn.Reply != "pong" || turn.Reconnects != 1 {
			t.Fatalf("turn %q after %d reconnects", turn.Reply, turn.Reconnects)
		}
		if !slices.Equal(waits, []time.Duration{2 * time.Second}) {
			t.Errorf("waits %v", waits)
		}
	})
	t.Run("session 500 retried", func(t *testing.T) {
		// Error500 on every request, one attempt: the token step fails
		// with the reference's text.
		s, _ := startMessagingSim(t, sim.Options{Faults: sim.Faults{Error500: 1}})
		c := messagingClient(t, s, RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }})
		_, err := c.OpenMessaging(context.Background(), MessagingStart{})
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 500 || ae.Message != "Failed to create access token" || ae.Attempts != 2 || !IsTransient(err) {
			t.Fatalf("got %v", err)
		}
	})
}

// TestMessagingCloseIsANormalClosure: against the simulator, which answers
// the close handshake, Close sends a normal closure the server sees and
// returns on the answer, without the grace passing on the client's clock.
func TestMessagingCloseIsANormalClosure(t *testing.T) {
	t.Parallel()
	s, _ := startMessagingSim(t, sim.Options{})
	// The simulator's messaging host, fronted to tell when a socket's
	// handler returned (its counters are final then).
	handled := make(chan struct{}, 1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Server.MessagingHandler().ServeHTTP(w, r)
		if r.URL.Path == "/ws" {
			handled <- struct{}{}
		}
	}))
	defer front.Close()
	fronted := *s
	fronted.MessagingURL = front.URL
	clk := newStandingClock()
	m := open(t, messagingClient(t, &fronted, RetryPolicy{Sleep: clk.Sleep}), MessagingStart{})
	say(t, m, "ping")
	closed := make(chan struct{})
	go func() {
		m.Close()
		close(closed)
	}()
	await(t, closed, "Close against a platform that answers")
	select {
	case d := <-clk.asked:
		if d != messagingCloseGrace {
			t.Errorf("Close waits %s, want %s", d, messagingCloseGrace)
		}
	default:
		t.Error("Close did not wait on the client's clock")
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited != 0 {
		t.Errorf("the grace passed (%s): the handshake did not end it", waited)
	}
	await(t, handled, "the simulator's socket handler")
	if st := s.Server.MessagingStats(); st.NormalClosures != 1 || st.OpenSockets != 0 {
		t.Errorf("%d normal closures, %d open sockets; want 1 and 0", st.NormalClosures, st.OpenSockets)
	}
}

// TestMessagingMisrouted: the reference gives a 404 only to the socket's
// handshake (a session gone); a 404 of the access-token or the session
// step says no Messaging API answers at the address (a request to the
// wrong host family is answered 404), which IsMessagingMisrouted tells
// apart.
func TestMessagingMisrouted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		notFound string // the path answered status
		status   int
		want     bool
	}{
		{"/api/v1/access-token", http.StatusNotFound, true},
		{"/api/v1/sessions", http.StatusNotFound, true},
		{"/ws", http.StatusNotFound, false},
		// Another status of the step is not about the address.
		{"/api/v1/access-token", http.StatusBadRequest, false},
	} {
		t.Run(fmt.Sprint(tc.notFound, tc.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == tc.notFound:
					http.Error(w, `{"error":"refused"}`, tc.status)
				case r.URL.Path == "/api/v1/access-token":
					fmt.Fprint(w, `{"access_token":"eyJhbGciOiJIUzI1NiJ9.e30.c2ln"}`)
				case r.URL.Path == "/api/v1/sessions":
					fmt.Fprint(w, `{"session_id":"s-1"}`)
				default:
					http.Error(w, "unexpected", http.StatusTeapot)
				}
			}))
			defer srv.Close()
			c := plantedMessagingClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
			if m != nil {
				m.Close()
			}
			if _, ok := errors.AsType[*APIError](err); !ok || !IsMessaging(err) {
				t.Fatalf("error %v, want a Messaging API error", err)
			}
			if got := IsMessagingMisrouted(err); got != tc.want {
				t.Errorf("IsMessagingMisrouted(%v) = %v, want %v", err, got, tc.want)
			}
		})
	}
}
