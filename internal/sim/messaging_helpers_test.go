package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/coder/websocket"
)

// Names of the default brand's events (the simulator's choices).
const (
	evJoin    = "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN"
	evJoined  = "EVENT_TYPE_VENDOR_AGENT_JOINED"
	evMessage = "EVENT_TYPE_VENDOR_AGENT_MESSAGE"
	evChunk   = "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK"
	evTyping  = "EVENT_TYPE_VENDOR_AGENT_TYPING"
)

// readTimeout bounds one read from a socket: a safety net against a hung
// test, never a wait the test relies on.
const readTimeout = 10 * time.Second

// msgSim is a simulator serving the helpdesk agent, with a settable clock,
// and the messaging facts a client needs.
type msgSim struct {
	t     testing.TB
	s     *simtest.Sim
	clk   *fakeclock.Clock
	token string // the helpdesk's sandbox connector token
}

func startMessaging(t testing.TB, opts sim.Options) *msgSim {
	t.Helper()
	clk := fakeclock.New()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.Agents == nil {
		opts.Agents = []*agent.Definition{helpdesk(t)}
	}
	opts.TickInterval = time.Hour // tests call Tick
	s := simtest.Start(t, opts)
	return &msgSim{t: t, s: s, clk: clk, token: s.Info.MessagingConnectors["helpdesk"]["sandbox"]}
}

// post sends a request to the messaging host with the given headers and
// raw body.
func (m *msgSim) post(path string, hdr map[string]string, body string) response {
	m.t.Helper()
	req, err := http.NewRequest("POST", m.s.MessagingURL+path, strings.NewReader(body))
	if err != nil {
		m.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// jwt exchanges a connector token and host for an access token.
func (m *msgSim) jwt(token, host string) string {
	m.t.Helper()
	r := m.post("/api/v1/access-token", map[string]string{"X-Token": token, "X-Host": host, "Content-Type": "application/json"}, "{}")
	if r.status != 200 {
		m.t.Fatalf("access token: %d %s", r.status, r.body)
	}
	return r.json(m.t)["access_token"].(string)
}

// session creates a session with a fresh token and returns both.
func (m *msgSim) session(streaming bool) (id, jwt string) {
	m.t.Helper()
	jwt = m.jwt(m.token, sim.DefaultMessagingHost)
	body := `{"streaming_enabled":false}`
	if streaming {
		body = `{"streaming_enabled":true}`
	}
	r := m.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + jwt, "Content-Type": "application/json"}, body)
	if r.status != 200 {
		m.t.Fatalf("session: %d %s", r.status, r.body)
	}
	return r.json(m.t)["session_id"].(string), jwt
}

// dial opens the WebSocket; a refused handshake returns its response.
func (m *msgSim) dial(q url.Values) (*sock, response, error) {
	m.t.Helper()
	u := "ws" + strings.TrimPrefix(m.s.MessagingURL, "http") + "/ws?" + q.Encode()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		var r response
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			r = response{status: resp.StatusCode, header: resp.Header, body: b}
		}
		return nil, r, err
	}
	c.SetReadLimit(1 << 20)
	s := &sock{t: m.t, c: c}
	m.t.Cleanup(func() { c.CloseNow() })
	return s, response{status: resp.StatusCode}, nil
}

// connect dials a session and reads its history batch.
func (m *msgSim) connect(id, jwt, cursor string) (*sock, []event) {
	m.t.Helper()
	q := url.Values{"session_id": {id}, "access_token": {jwt}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	s, r, err := m.dial(q)
	if err != nil {
		m.t.Fatalf("dial: %v (%d %s)", err, r.status, r.body)
	}
	b := s.next()
	if b.Type != sim.EvEventBatch {
		m.t.Fatalf("first event %s, want the history batch", b.Type)
	}
	return s, b.batch(m.t)
}

// joined opens a new session, connects and joins; it returns the socket
// and the join's answer.
func (m *msgSim) joined(streaming bool) (*sock, string, string, []event) {
	m.t.Helper()
	id, jwt := m.session(streaming)
	s, hist := m.connect(id, jwt, "")
	if len(hist) != 0 {
		m.t.Fatalf("new session has history: %v", hist)
	}
	s.send(evJoin, map[string]any{}, nil)
	return s, id, jwt, s.answer()
}

// named opens a session whose conversation is named by the session call
// (conversation_id), connects and joins; it returns the socket and the
// join's answer.
func (m *msgSim) named(name string) (*sock, string, string, []event) {
	m.t.Helper()
	jwt := m.jwt(m.token, sim.DefaultMessagingHost)
	body, _ := json.Marshal(map[string]string{"conversation_id": name})
	r := m.post("/api/v1/sessions", map[string]string{"Authorization": "Bearer " + jwt, "Content-Type": "application/json"}, string(body))
	if r.status != 200 {
		m.t.Fatalf("session %s: %d %s", name, r.status, r.body)
	}
	id := r.json(m.t)["session_id"].(string)
	s, _ := m.connect(id, jwt, "")
	s.send(evJoin, map[string]any{}, nil)
	return s, id, jwt, s.answer()
}

// event is a received event.
type event struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Payload   map[string]any `json:"payload"`
	Metadata  map[string]any `json:"metadata"`
	raw       []byte
}

func (e event) str(k string) string { s, _ := e.Payload[k].(string); return s }

// batch decodes the events of a history batch.
func (e event) batch(t testing.TB) []event {
	t.Helper()
	var b struct {
		Payload struct {
			Events []json.RawMessage `json:"events"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(e.raw, &b); err != nil {
		t.Fatalf("batch: %v: %s", err, e.raw)
	}
	out := []event{}
	for _, r := range b.Payload.Events {
		out = append(out, decodeEvent(t, r))
	}
	return out
}

func decodeEvent(t testing.TB, raw []byte) event {
	t.Helper()
	var e event
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("event: %v: %s", err, raw)
	}
	e.raw = bytes.Clone(raw)
	return e
}

// sock is a raw WebSocket to the simulator.
type sock struct {
	t testing.TB
	c *websocket.Conn
}

func (s *sock) send(typ string, payload any, custom map[string]any) {
	s.t.Helper()
	ev := map[string]any{"type": typ, "payload": payload}
	if custom != nil {
		ev["metadata"] = map[string]any{"custom": custom}
	}
	b, _ := json.Marshal(ev)
	s.sendRaw(websocket.MessageText, string(b))
}

func (s *sock) say(text string) []event {
	s.t.Helper()
	s.send(sim.EvUserMessage, map[string]any{"text": text}, nil)
	return s.answer()
}

func (s *sock) sendRaw(typ websocket.MessageType, data string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := s.c.Write(ctx, typ, []byte(data)); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// read returns the next event or the read error.
func (s *sock) read() (event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	_, b, err := s.c.Read(ctx)
	if err != nil {
		return event{}, err
	}
	return decodeEvent(s.t, b), nil
}

func (s *sock) next() event {
	s.t.Helper()
	e, err := s.read()
	if err != nil {
		s.t.Fatalf("read: %v", err)
	}
	return e
}

// answer reads up to the end of an answer: the typing indicator's end or
// SESSION_END.
func (s *sock) answer() []event {
	s.t.Helper()
	var out []event
	for {
		e := s.next()
		out = append(out, e)
		if e.Type == sim.EvSessionEnd || e.Type == evTyping && e.Payload["typing"] == false {
			return out
		}
	}
}

// closedWith reads until the socket closes and returns the close status
// (-1 for a close without a close frame).
func (s *sock) closedWith() websocket.StatusCode {
	s.t.Helper()
	for {
		_, err := s.read()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				s.t.Fatal("socket still open")
			}
			return websocket.CloseStatus(err)
		}
	}
}

// types lists the event types.
func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// find returns the first event of a type.
func find(evs []event, typ string) (event, bool) {
	for _, e := range evs {
		if e.Type == typ {
			return e, true
		}
	}
	return event{}, false
}

// systemTexts lists the messages of the system events.
func systemTexts(evs []event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == sim.EvSystemMessage {
			if e.str("level") != sim.LevelError {
				out = append(out, "level "+e.str("level"))
			}
			out = append(out, e.str("message"))
		}
	}
	return out
}

// replyText joins the agent's whole messages and chunks.
func replyText(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		switch e.Type {
		case evMessage, evChunk, sim.EvLiveAgentMessage:
			b.WriteString(e.str("text"))
		}
	}
	return b.String()
}
