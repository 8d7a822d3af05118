package platformtest

import (
	"bytes"
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
	gone     chan struct{}
}

// Gone receives once for each socket the platform no longer serves: the
// client closed it or went away.
func (m *Messaging) Gone() <-chan struct{} { return m.gone }

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
	return StartMessagingWith(t, []Frame{Batch("batch")}, answer)
}

// StartMessagingWith is StartMessaging whose socket sends opening, not an
// empty history batch, as soon as it opens, before it reads any client
// event: a history batch that holds the agent's join (a platform that
// joins the agent itself), and what follows it unasked.
func StartMessagingWith(t testing.TB, opening []Frame, answer func(n int, event []byte) []Frame) *Messaging {
	t.Helper()
	m := &Messaging{Host: "webchat.example.com", gone: make(chan struct{}, 64)}
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
			select {
			case m.gone <- struct{}{}:
			default:
			}
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

// The events of a platform that says what it means, in the unbranded
// names (EVENT_TYPE_AGENT_*) and the members the simulator uses, each
// {id, type, payload} as the reference shows events. A test writes a
// frame out by hand only when the frame itself is what it tests: one
// malformed or hostile on purpose (not UTF-8, another conversation's, a
// member of the wrong JSON type, a batch of another shape).

// Event is the event {"id", "type", "payload"}, the payload's members
// given as name, value pairs, in order; an empty id is left out. The
// values are JSON-encoded as they are, without HTML escapes, so the
// frame is what a test would write by hand.
func Event(id, typ string, members ...any) Frame {
	if len(members)%2 != 0 {
		panic(fmt.Sprintf("platformtest.Event %s: members %q are not name, value pairs", typ, members))
	}
	var b bytes.Buffer
	b.WriteByte('{')
	if id != "" {
		b.WriteString(`"id":`)
		writeJSON(&b, id)
		b.WriteByte(',')
	}
	b.WriteString(`"type":`)
	writeJSON(&b, typ)
	b.WriteString(`,"payload":{`)
	for i := 0; i < len(members); i += 2 {
		name, ok := members[i].(string)
		if !ok {
			panic(fmt.Sprintf("platformtest.Event %s: member name %v is not a string", typ, members[i]))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, name)
		b.WriteByte(':')
		writeJSON(&b, members[i+1])
	}
	b.WriteString("}}")
	return Frame{Data: b.String()}
}

// writeJSON appends v's JSON to b.
func writeJSON(b *bytes.Buffer, v any) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(fmt.Sprintf("platformtest.Event: %v", err))
	}
	b.Truncate(b.Len() - 1) // Encode's newline
}

// Joined is the agent's joined event, naming conversation in
// conversation_id ("" names none).
func Joined(id, conversation string) Frame {
	if conversation == "" {
		return Event(id, "EVENT_TYPE_AGENT_JOINED")
	}
	return Event(id, "EVENT_TYPE_AGENT_JOINED", "conversation_id", conversation)
}

// Message is an agent's message sent whole; messageID "" leaves its
// message_id out.
func Message(id, messageID, text string) Frame {
	if messageID == "" {
		return Event(id, "EVENT_TYPE_AGENT_MESSAGE", "text", text)
	}
	return Event(id, "EVENT_TYPE_AGENT_MESSAGE", "message_id", messageID, "text", text)
}

// Chunk is a chunk of the streamed message messageID, its text in delta;
// final marks the stream's last chunk.
func Chunk(id, messageID, delta string, final bool) Frame {
	if final {
		return Event(id, "EVENT_TYPE_AGENT_MESSAGE_CHUNK", "message_id", messageID, "delta", delta, "final", true)
	}
	return Event(id, "EVENT_TYPE_AGENT_MESSAGE_CHUNK", "message_id", messageID, "delta", delta)
}

// StreamEnd ends the streamed message messageID, with text ("" for
// none).
func StreamEnd(id, messageID, text string) Frame {
	if text == "" {
		return Event(id, "EVENT_TYPE_AGENT_MESSAGE_END", "message_id", messageID)
	}
	return Event(id, "EVENT_TYPE_AGENT_MESSAGE_END", "message_id", messageID, "text", text)
}

// TypingStop is the end of the agent's typing indicator.
func TypingStop(id string) Frame { return Event(id, "EVENT_TYPE_AGENT_TYPING_STOP") }

// SessionEnd ends the session for reason ("" gives none).
func SessionEnd(id, reason string) Frame {
	if reason == "" {
		return Event(id, "EVENT_TYPE_SESSION_END")
	}
	return Event(id, "EVENT_TYPE_SESSION_END", "reason", reason)
}

// System is a system message of level (SYSTEM_MESSAGE_LEVEL_*).
func System(id, level, message string) Frame {
	return Event(id, "EVENT_TYPE_SYSTEM_MESSAGE", "level", level, "message", message)
}

// Batch is a history batch that holds events, in payload.events.
func Batch(id string, events ...Frame) Frame {
	raw := make([]json.RawMessage, len(events))
	for i, e := range events {
		raw[i] = json.RawMessage(e.Data)
	}
	return Event(id, "EVENT_TYPE_EVENT_BATCH", "events", raw)
}
