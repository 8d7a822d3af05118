package platformtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// Frame is one frame a hostile Messaging platform sends: a text frame,
// or a binary one; or, with Close, the normal closure of the socket.
type Frame struct {
	Data   string
	Binary bool
	Close  bool
}

// Texts are text frames.
func Texts(data ...string) []Frame {
	out := make([]Frame, len(data))
	for i, d := range data {
		out[i] = Frame{Data: d}
	}
	return out
}

// Messaging is an in-process Messaging API written to misbehave: its
// HTTP steps accept any connector token and host (the access token is
// JWT, the session s-1), and its socket sends an empty history batch,
// then answers the n-th client event it reads (the join is 1) with the
// frames Answer returns for it. Tests of the harness's verdicts use it as
// a platform written by someone else, over a real WebSocket.
type Messaging struct {
	// URL is the messaging_url (http://127.0.0.1:port).
	URL string
	// Host is the messaging_host it accepts (any).
	Host string

	mu       sync.Mutex
	sessions []string
}

// Sessions are the bodies of the session-create calls it received, in
// order (the client's streaming_enabled is there).
func (m *Messaging) Sessions() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.sessions)
}

// MessagingJWT is the access token Messaging issues: a credential, which
// a test may plant in the frames to prove it never shows.
const MessagingJWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJob3N0aWxlIn0.HOSTILEsignature0123456789abcdefABCDEF"

// StartMessaging starts a hostile Messaging API; answer gives the frames
// that answer the n-th client event (raw, as the client sent it).
func StartMessaging(t testing.TB, answer func(n int, event []byte) []Frame) *Messaging {
	t.Helper()
	return StartMessagingWith(t, Texts(`{"id":"batch","type":"EVENT_TYPE_EVENT_BATCH","payload":{"events":[]}}`), answer)
}

// StartMessagingWith is StartMessaging whose socket sends opening, not an
// empty history batch, as soon as it opens, before it reads any client
// event: a history batch that holds the agent's join (a platform that
// joins the agent itself), and what follows it unasked.
func StartMessagingWith(t testing.TB, opening []Frame, answer func(n int, event []byte) []Frame) *Messaging {
	t.Helper()
	m := &Messaging{Host: "webchat.example.com"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/access-token":
			fmt.Fprintf(w, `{"access_token":%q}`, MessagingJWT)
		case "/api/v1/sessions":
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
			m.mu.Lock()
			m.sessions = append(m.sessions, string(body))
			m.mu.Unlock()
			fmt.Fprint(w, `{"session_id":"s-1"}`)
		case "/ws":
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			playMessaging(r.Context(), c, opening, answer)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m.URL = srv.URL
	return m
}

// playMessaging sends the opening frames (the history batch first), then
// answers each client event until the client goes.
func playMessaging(ctx context.Context, c *websocket.Conn, opening []Frame, answer func(int, []byte) []Frame) {
	if !playFrames(ctx, c, opening) {
		return
	}
	for n := 1; ; n++ {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		if !playFrames(ctx, c, answer(n, data)) {
			return
		}
	}
}

// playFrames writes frames; false when the socket is closed or gone.
func playFrames(ctx context.Context, c *websocket.Conn, frames []Frame) bool {
	for _, f := range frames {
		if f.Close {
			_ = c.Close(websocket.StatusNormalClosure, "")
			return false
		}
		typ := websocket.MessageText
		if f.Binary {
			typ = websocket.MessageBinary
		}
		if c.Write(ctx, typ, []byte(f.Data)) != nil {
			return false
		}
	}
	return true
}

// Echo is the frame of a platform that logs a client event back to the
// socket, as the reference's platforms do (received events carry
// metadata.custom, which echoes the client's): the event's type, payload
// and metadata, with the id echo-n for the n-th client event.
func Echo(n int, event []byte) Frame {
	var e map[string]any
	if json.Unmarshal(event, &e) != nil {
		e = map[string]any{}
	}
	e["id"] = fmt.Sprintf("echo-%d", n)
	b, _ := json.Marshal(e)
	return Frame{Data: string(b)}
}
