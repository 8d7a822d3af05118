package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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
}

func (p *hostileMessaging) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/v1/access-token":
		fmt.Fprintf(w, `{"token":%q}`, plantedJWT)
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
		c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
			Retry: RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}})
		if err != nil {
			t.Fatal(err)
		}
		c.msgLimits = tc.limits
		// Without the bounds the turn would wait for its timeout.
		m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
		if m != nil {
			m.Close()
		}
		if err == nil {
			t.Fatal("no error")
		}
		if got := strings.TrimPrefix(err.Error(), "open messaging session s-1: "); got != tc.want {
			t.Errorf("error\n%s\nwant\n%s", got, tc.want)
		}
		if IsTransient(err) {
			t.Errorf("a transient error: %v", err)
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
		{
			name: "a handshake answered 200",
			p: &hostileMessaging{handshake: func(w http.ResponseWriter, r *http.Request) bool {
				fmt.Fprintf(w, `{"ok":true,"query":%q}`, r.URL.RawQuery)
				return true
			}},
			want: "GET /ws: 200: malformed response: the handshake was answered 200, not 101 Switching Protocols: no WebSocket there", handshakes: 1,
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
	for _, step := range []string{"/api/v1/access-token", "/api/v1/sessions", "/ws"} {
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
			c, err := New(Config{BuildURL: srv.URL, MessagingURL: srv.URL, ConnectorToken: plantedConnector, MessagingHost: "example.com",
				Retry: RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := c.OpenMessaging(context.Background(), MessagingStart{TurnTimeout: 5 * time.Second})
			if m != nil {
				m.Close()
			}
			var re *RedirectError
			if !errors.As(err, &re) || re.Status != http.StatusTemporaryRedirect || re.Setting != "messaging_url" ||
				!strings.HasPrefix(re.Location, rec.srv.URL+step) || IsTransient(err) {
				t.Fatalf("got %T %v", err, err)
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
