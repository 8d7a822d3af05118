package platform

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
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

	"github.com/agenttest/agenttest/internal/reply"
)

const (
	redirectBuildKey   = "bk-REDIRECT-build-0123456789"
	redirectRuntimeKey = "rk-REDIRECT-runtime-0123456789"
)

// elsewhere is the host a hostile platform redirects to: it records every
// request and every credential it receives.
type elsewhere struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string // "METHOD path key=... body=..."
}

func startElsewhere(t *testing.T, listen string, tls bool) *elsewhere {
	t.Helper()
	e := &elsewhere{}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", listen, err)
	}
	e.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got = append(e.got, r.Method+" "+r.URL.Path+" key="+r.Header.Get("X-Api-Key")+r.Header.Get("X-Vendor-Auth-Token")+" body="+string(body))
		e.mu.Unlock()
		w.Write([]byte(`{"conversationId":"stolen","userInput":"","response":"ok","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	}))
	e.srv.Listener.Close()
	e.srv.Listener = ln
	if tls {
		e.srv.StartTLS()
	} else {
		e.srv.Start()
	}
	t.Cleanup(e.srv.Close)
	return e
}

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// redirecting is a platform that answers every request with status and a
// Location on to, keeping the path.
func redirecting(t *testing.T, status int, to string, tls bool) *httptest.Server {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", to+r.URL.Path+"?token="+r.Header.Get("X-Api-Key"))
		w.WriteHeader(status)
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv
}

func redirectClient(t *testing.T, platformURL string, hc *http.Client) *Client {
	t.Helper()
	c, err := New(Config{BuildURL: platformURL, RuntimeURL: platformURL, AccountID: "ws-abcd1234",
		BuildKey: redirectBuildKey, RuntimeKey: redirectRuntimeKey, HTTPClient: hc,
		Retry: RetryPolicy{MaxAttempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// redirectCalls are calls of every group, so one policy is seen to hold
// for all of them.
var redirectCalls = []struct {
	name, want string
	// setting is the URL setting the refusal tells to fix.
	setting string
	call    func(ctx context.Context, c *Client) error
}{
	{"start chat", "POST /v1/agents/a1/debug-chat", "build_url", func(ctx context.Context, c *Client) error {
		_, err := c.StartChat(ctx, "a1", ChatStart{ClientEnv: "sandbox"})
		return err
	}},
	{"turn", "POST /v1/agents/a1/debug-chat/c1", "build_url", func(ctx context.Context, c *Client) error {
		_, err := c.SendTurn(ctx, "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "my card is 4111"})
		return err
	}},
	{"conversation", "GET /v3/ws-abcd1234/a1/conversations/c1", "runtime_url", func(ctx context.Context, c *Client) error {
		_, err := c.GetConversation(ctx, "a1", "c1")
		return err
	}},
	{"alerts", "GET /v1/alerts", "build_url", func(ctx context.Context, c *Client) error {
		_, err := c.FiringAlerts(ctx)
		return err
	}},
	{"webhook registration", "POST /v1/webhooks/endpoints", "build_url", func(ctx context.Context, c *Client) error {
		_, err := c.RegisterWebhook(ctx, WebhookRegistration{URL: "https://example.com/hook", Events: []string{reply.EventConversationCompleted}})
		return err
	}},
	{"outbound call", "POST /v1/outbound-calling", "runtime_url", func(ctx context.Context, c *Client) error {
		_, err := c.PlaceCall(ctx, CallRequest{To: "+447700900001"})
		return err
	}},
}

// Redirects that leave the configured origin carry the key nowhere and
// end every kind of call with a RedirectError that names the redirect.
func TestRedirectsToAnotherOriginAreRefused(t *testing.T) {
	t.Parallel()
	otherPort := startElsewhere(t, "127.0.0.1:0", false)
	otherHost := startElsewhere(t, "127.0.0.2:0", false)
	plainSameHost := startElsewhere(t, "127.0.0.1:0", false)
	type testCase struct {
		name   string
		status int
		to     *elsewhere
		tls    bool // the platform is https; the target plain http
	}
	var cases []testCase
	for _, status := range []int{301, 302, 303, 307, 308} {
		cases = append(cases,
			testCase{"another port", status, otherPort, false},
			testCase{"another loopback address", status, otherHost, false},
			testCase{"https to http", status, plainSameHost, true},
		)
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status)+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			plat := redirecting(t, tc.status, tc.to.srv.URL, tc.tls)
			var hc *http.Client
			if tc.tls {
				hc = plat.Client()
			}
			c := redirectClient(t, plat.URL, hc)
			for _, call := range redirectCalls {
				err := call.call(context.Background(), c)
				if _, ok := errors.AsType[*RedirectError](err); !ok {
					t.Fatalf("%s: got %v, want a RedirectError", call.name, err)
				}
				msg := err.Error()
				for _, want := range []string{call.want + ": " + strconv.Itoa(tc.status) + " redirect to", "refused: it leads away from", "Fix " + call.setting} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: %q does not say %q", call.name, msg, want)
					}
				}
				if strings.Contains(msg, "REDIRECT-") {
					t.Errorf("%s: the key is in the message: %s", call.name, msg)
				}
				if IsTransient(err) {
					t.Errorf("%s: a refused redirect must not be retried", call.name)
				}
			}
			for _, got := range tc.to.requests() {
				if strings.Contains(got, "REDIRECT-") || strings.Contains(got, "4111") {
					t.Fatalf("the other host received %s", got)
				}
			}
		})
	}
}

// Same-origin redirects are followed when they keep the method: 307 and
// 308 re-send a POST with its body, 301/302/303 are followed for GETs
// only, and a POST answered 301/302/303 is refused (it would become a
// GET).
func TestSameOriginRedirects(t *testing.T) {
	t.Parallel()
	type seen struct{ method, path, body, key string }
	var mu sync.Mutex
	var got []seen
	mux := http.NewServeMux()
	mux.HandleFunc("/moved/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, string(body), r.Header.Get("X-Api-Key")})
		mu.Unlock()
		if strings.Contains(r.URL.Path, "/conversations/") {
			w.Write([]byte(`{"id":"c1","account_id":"ws-abcd1234","project_id":"a1","variant_id":"","variant_name":"","environment":"sandbox","started_at":"2026-03-01T12:00:00Z","channel":"WEBCHAT","from_number":"","to_number":"","in_progress":false,"num_turns":0,"total_duration":0,"vendor_duration":0,"handoff":false,"handoff_reason":"","num_silences":0,"num_ood":0,"metrics":{},"state":{},"turns":[]}`))
			return
		}
		w.Write([]byte(`{"conversationId":"c1","userInput":"","response":"ok","metadata":{},"conversationEnded":false,"delayedResponse":false}`))
	})
	var status int
	var smu sync.Mutex
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		smu.Lock()
		st := status
		smu.Unlock()
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", st)
			return
		}
		if n, ok := strings.CutPrefix(r.URL.Path, "/hop/"); ok {
			// A chain of n more redirects, then an answer.
			if n == "0" {
				w.Write([]byte(`[]`))
				return
			}
			i, _ := strconv.Atoi(n)
			http.Redirect(w, r, "/hop/"+strconv.Itoa(i-1), st)
			return
		}
		http.Redirect(w, r, "/moved"+r.URL.Path, st)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := redirectClient(t, srv.URL, nil)
	set := func(s int) { smu.Lock(); status = s; smu.Unlock() }

	for _, st := range []int{307, 308} {
		set(st)
		got = nil
		ex, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hello"})
		if err != nil || ex.Result.Response != "ok" {
			t.Fatalf("%d: %v", st, err)
		}
		if len(got) != 1 || got[0].method != "POST" || !strings.Contains(got[0].body, `"message":"hello"`) || got[0].key != redirectBuildKey {
			t.Errorf("%d: the moved endpoint saw %+v, want the POST with its body and key", st, got)
		}
	}
	for _, st := range []int{301, 302, 303} {
		set(st)
		got = nil
		if _, err := c.GetConversation(context.Background(), "a1", "c1"); err != nil {
			t.Errorf("%d GET: %v", st, err)
		}
		_, err := c.SendTurn(context.Background(), "a1", "c1", ChatTurn{ClientEnv: "sandbox", Message: "hello"})
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "would turn the POST into a GET") {
			t.Errorf("%d POST: got %v, want it refused", st, err)
		}
		for _, g := range got {
			if g.method != "GET" || !strings.Contains(g.path, "/conversations/") {
				t.Errorf("%d: the moved endpoint saw %+v", st, g)
			}
		}
	}
	set(307)
	_, err := c.do(context.Background(), &call{ep: epAlertsFiring, path: "/loop"})
	if err == nil || !strings.Contains(err.Error(), "more than 5 redirects") {
		t.Errorf("loop: %v", err)
	}
	// Five redirects are followed, not six.
	res, err := c.do(context.Background(), &call{ep: epAlertsFiring, path: "/hop/5"})
	if err != nil {
		t.Errorf("5 redirects: %v", err)
	} else {
		res.release()
	}
	if _, err := c.do(context.Background(), &call{ep: epAlertsFiring, path: "/hop/6"}); err == nil || !strings.Contains(err.Error(), "more than 5 redirects") {
		t.Errorf("6 redirects: %v", err)
	}
}

// The policy holds on the caller's own http.Client, which is left as it
// was.
func TestRedirectPolicyHoldsOnAGivenClient(t *testing.T) {
	t.Parallel()
	other := startElsewhere(t, "127.0.0.1:0", false)
	plat := redirecting(t, 307, other.srv.URL, false)
	own := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	c := redirectClient(t, plat.URL, own)
	_, err := c.StartChat(context.Background(), "a1", ChatStart{ClientEnv: "sandbox"})
	var re *RedirectError
	if !errors.As(err, &re) || len(other.requests()) != 0 {
		t.Fatalf("got %v; the other host saw %v", err, other.requests())
	}
	if own.CheckRedirect == nil {
		t.Errorf("the caller's client was changed")
	}
}

// TestRedirectedNotFoundIsNoAbsence: a read that a same-origin redirect
// sends to a path that answers 404. That 404 is of the path it was sent
// to, not of the record asked for: IsNotFound is false (a confirmation
// took it for "not recorded yet", waited, and then blamed the agent), and
// the error names both paths.
func TestRedirectedNotFoundIsNoAbsence(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gone":
			http.NotFound(w, r)
		case "/v3/ws-abcd1234/a1/conversations/c2":
			http.NotFound(w, r) // the record is absent, as said by its own path
		default:
			http.Redirect(w, r, "/gone", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	c := redirectClient(t, srv.URL, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		call       func() error
	}{
		{"conversation", "GET /v3/ws-abcd1234/a1/conversations/c1: 404", func() error {
			_, err := c.GetConversation(ctx, "a1", "c1")
			return err
		}},
		{"handoff state", "GET /v1/ws-abcd1234/a1/handoff_state: 404", func() error {
			_, err := c.HandoffState(ctx, "a1", "c1", "")
			return err
		}},
	} {
		err := tc.call()
		if err == nil || IsNotFound(err) {
			t.Errorf("%s: got %v, IsNotFound %v; want an error that is no absence", tc.name, err, IsNotFound(err))
			continue
		}
		for _, w := range []string{tc.want, "answered by /gone, which a redirect led to"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
	}
	if _, err := c.GetConversation(ctx, "a1", "c2"); !IsNotFound(err) || strings.Contains(err.Error(), "redirect") {
		t.Errorf("a 404 of the path itself: %v, want it IsNotFound", err)
	}
}

// sniffing serves TLS and plain HTTP on one port, as a hostile platform
// may: a connection that does not open with a TLS handshake is read as
// plain HTTP, its credentials recorded and answered with a turn result.
type sniffing struct {
	net.Listener
	mu    sync.Mutex
	plain []string // the X-Api-Key of each plain request
}

func (l *sniffing) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		br := bufio.NewReader(conn)
		if b, err := br.Peek(1); err == nil && b[0] == 0x16 { // a TLS handshake record
			return &peeked{conn, br}, nil
		}
		go l.servePlain(conn, br)
	}
}

func (l *sniffing) servePlain(conn net.Conn, br *bufio.Reader) {
	defer conn.Close()
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.plain = append(l.plain, req.Header.Get("X-Api-Key"))
	l.mu.Unlock()
	body := `{"conversationId":"stolen","userInput":"","response":"ok","metadata":{},"conversationEnded":false,"delayedResponse":false}`
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

func (l *sniffing) plainKeys() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.plain...)
}

// peeked is a connection whose first bytes a bufio.Reader holds.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

// TestRedirectAwayOnTheSamePort: a redirect that changes only the scheme
// or only the host, keeping the port, leaves the origin as surely as one
// to another port. Each part of the origin is checked on its own: the
// other cases change the port too. The https platform also answers plain
// http on its port, so a key that followed the redirect would cross the
// network in clear text and be answered as if nothing were wrong.
func TestRedirectAwayOnTheSamePort(t *testing.T) {
	t.Parallel()
	t.Run("https to http", func(t *testing.T) {
		t.Parallel()
		plat := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "http://"+r.Host+r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}))
		sniff := &sniffing{Listener: plat.Listener}
		plat.Listener = sniff
		plat.StartTLS()
		t.Cleanup(plat.Close)
		c := redirectClient(t, plat.URL, plat.Client())
		_, err := c.StartChat(context.Background(), "a1", ChatStart{ClientEnv: "sandbox"})
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "leads away from "+plat.URL) {
			t.Errorf("got %v, want the redirect refused", err)
		}
		if got := sniff.plainKeys(); len(got) != 0 {
			t.Errorf("the platform's port received plain http requests with keys %q", got)
		}
	})
	t.Run("another host", func(t *testing.T) {
		t.Parallel()
		var to atomic.Value // the other host's URL, known once it listens
		plat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Credentials of the platform's own in the Location are
			// masked in the message too.
			w.Header().Set("Location", strings.Replace(to.Load().(string), "//", "//user:hunter2-pass@", 1)+r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}))
		t.Cleanup(plat.Close)
		_, port, _ := net.SplitHostPort(plat.Listener.Addr().String())
		other := startElsewhere(t, "127.0.0.2:"+port, false)
		to.Store(other.srv.URL)
		c := redirectClient(t, plat.URL, nil)
		_, err := c.StartChat(context.Background(), "a1", ChatStart{ClientEnv: "sandbox"})
		var re *RedirectError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "leads away from "+plat.URL) {
			t.Errorf("got %v, want the redirect refused", err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the Location's password is in the message: %v", err)
		}
		if got := other.requests(); len(got) != 0 {
			t.Errorf("the other host received %q", got)
		}
	})
}

// TestSameOrigin: the origin is the scheme, the host and the port, the
// default port of the scheme filled in, compared without regard to case.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://build.example.com", "https://build.example.com:443/v1", true},
		{"http://build.example.com/x", "http://build.example.com:80", true},
		{"HTTPS://Build.Example.com", "https://build.example.com", true},
		{"https://build.example.com", "https://build.example.com:80", false},
		{"https://build.example.com", "http://build.example.com:443", false},
		{"http://build.example.com", "https://build.example.com:80", false},
		{"https://build.example.com", "https://build.example.com:8443", false},
		{"https://build.example.com", "https://evil.example.com", false},
		{"https://build.example.com", "https://build.example.com.evil.test", false},
		{"https://127.0.0.1:8443", "https://127.0.0.2:8443", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := SameOrigin(a, b); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := SameOrigin(b, a); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

// A recording kept in an object store: the audio call's redirect to
// another origin is followed with no credentials (nor the Referer that
// names the conversation), over https or the call's own scheme; one
// down to plain http is refused as any other call's.
func TestRecordingRedirectToStorage(t *testing.T) {
	t.Parallel()
	type storage struct {
		srv *httptest.Server
		mu  sync.Mutex
		got []http.Header
	}
	start := func(tls bool) *storage {
		s := &storage{}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.got = append(s.got, r.Header.Clone())
			s.mu.Unlock()
			w.Header().Set("Content-Type", "audio/wav")
			io.WriteString(w, "RIFF$\x00\x00\x00WAVE")
		})
		if tls {
			s.srv = httptest.NewTLSServer(h)
		} else {
			s.srv = httptest.NewServer(h)
		}
		t.Cleanup(s.srv.Close)
		return s
	}
	for _, tc := range []struct {
		name                string
		platTLS, storageTLS bool
		keyInURL            bool
		follows             bool
	}{
		{"http to http", false, false, false, true},
		{"https to https", true, true, false, true},
		{"http to https", false, true, false, true},
		{"https to http", true, false, false, false},
		{"a URL that holds the key", false, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := start(tc.storageTLS)
			var plat *httptest.Server
			switch h := http.RedirectHandler(st.srv.URL+"/rec.wav?X-Amz-Signature=0123abcd", http.StatusFound); {
			case tc.keyInURL:
				plat = redirecting(t, http.StatusFound, st.srv.URL, tc.platTLS) // ?token=<the key>
			case tc.platTLS:
				plat = httptest.NewTLSServer(h)
			default:
				plat = httptest.NewServer(h)
			}
			t.Cleanup(plat.Close)
			var hc *http.Client
			switch {
			case tc.platTLS:
				hc = plat.Client() // httptest's one certificate: the store's too
			case tc.storageTLS:
				hc = st.srv.Client()
			}
			c := redirectClient(t, plat.URL, hc)
			body, _, err := c.ConversationAudio(context.Background(), "a1", "c1")
			if !tc.follows {
				if _, ok := errors.AsType[*RedirectError](err); !ok || len(st.got) != 0 {
					t.Fatalf("got %v and %d requests at the store, want a RedirectError and none", err, len(st.got))
				}
				return
			}
			if err != nil || string(body) != "RIFF$\x00\x00\x00WAVE" {
				t.Fatalf("audio %q, %v", body, err)
			}
			if len(st.got) != 1 {
				t.Fatalf("%d requests at the store", len(st.got))
			}
			for k := range st.got[0] {
				if k != "Accept" && k != "User-Agent" && k != "Accept-Encoding" {
					t.Errorf("the store got header %s: %q", k, st.got[0].Get(k))
				}
			}
			// Any other call is refused the same redirect.
			if _, err := c.GetConversation(context.Background(), "a1", "c1"); !errors.As(err, new(*RedirectError)) || len(st.got) != 1 {
				t.Errorf("a conversation read: %v, %d requests at the store; want a RedirectError and none more", err, len(st.got))
			}
		})
	}
}
