package platform

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEndpointCredentials: each group of calls sends its own credential,
// and a 401 names the one to check, on a server that refuses them all.
func TestEndpointCredentials(t *testing.T) {
	t.Parallel()
	c, rec := serveRecorded(t, http.StatusUnauthorized, "", func(r *http.Request) string { return r.Header.Get("x-api-key") })
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		call       func() error
		credential string
		// header is the credential as sent.
		header string
	}{
		{"list", func() error { _, err := c.ListConversations(ctx, "p", ListQuery{}); return err }, CredentialRuntimeKey, "rk-secret-runtime"},
		{"v1 list", func() error { _, err := c.ListConversationsV1(ctx, "p", ListQuery{}); return err }, CredentialRuntimeKey, "rk-secret-runtime"},
		{"conversation", func() error { _, err := c.GetConversation(ctx, "p", "c1"); return err }, CredentialRuntimeKey, "rk-secret-runtime"},
		{"audio", func() error { _, _, err := c.ConversationAudio(ctx, "p", "c1"); return err }, CredentialRuntimeKey, "rk-secret-runtime"},
		{"handoff", func() error { _, err := c.HandoffState(ctx, "p", "c1", ""); return err }, CredentialRuntimeKey, "rk-secret-runtime"},
		{"deployment", func() error { _, err := c.ActiveDeployment(ctx, "a", ""); return err }, CredentialBuildKey, "bk-secret-build"},
		{"alerts", func() error { _, err := c.FiringAlerts(ctx); return err }, CredentialBuildKey, "bk-secret-build"},
		{"webhooks", func() error { _, err := c.ListWebhooks(ctx); return err }, CredentialBuildKey, "bk-secret-build"},
	} {
		err := tc.call()
		got := rec.take()
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || ae.Credential != tc.credential || got != tc.header {
			t.Errorf("%s: %v (credential %q, sent %q); want a 401 naming the %s, sent as x-api-key %s", tc.name, err, credentialIn(ae), got, tc.credential, tc.header)
		}
	}
}

// requestLog keeps what its server takes of each request, until read.
type requestLog struct {
	mu   sync.Mutex
	seen []string
}

// serveRecorded starts a server that answers every request with status
// and body, and a client of it that tries once; the log keeps what
// take reads of each request.
func serveRecorded(t *testing.T, status int, body string, take func(*http.Request) string) (*Client, *requestLog) {
	t.Helper()
	rec := &requestLog{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, take(r))
		rec.mu.Unlock()
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1}), rec
}

// take returns what was kept since the last take, one request's after
// another's with a space between, and forgets it.
func (r *requestLog) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.Join(r.seen, " ")
	r.seen = nil
	return s
}

func credentialIn(ae *APIError) string {
	if ae == nil {
		return ""
	}
	return ae.Credential
}

// TestPathSegments: an id is one segment of the path whatever it holds;
// "." and ".." are escaped, since servers and proxies resolve them and
// the call would reach another resource.
func TestPathSegments(t *testing.T) {
	t.Parallel()
	c, rec := serveRecorded(t, http.StatusNotFound, "", func(r *http.Request) string { return r.RequestURI })
	for _, tc := range []struct{ id, want string }{
		{".", "/v3/ws-abcd1234/p/conversations/%2E"},
		{"..", "/v3/ws-abcd1234/p/conversations/%2E%2E"},
		{"a/b?c", "/v3/ws-abcd1234/p/conversations/a%2Fb%3Fc"},
		{"...", "/v3/ws-abcd1234/p/conversations/..."},
	} {
		_, err := c.GetConversation(context.Background(), "p", tc.id)
		got := rec.take()
		if !IsNotFound(err) || got != tc.want {
			t.Errorf("conversation %q: requested %q, %v; want %q", tc.id, got, err, tc.want)
		}
	}
}

// TestRetryClasses: a read answered 503 is read again; a call that
// creates something (a call, an SMS, a rule, an endpoint) is not sent
// again after a 503, since the platform may have made it.
func TestRetryClasses(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		hits = map[string]int{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		n := hits[r.URL.Path]
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"id":"dep-1","call_sid":"OUT-1","status":"queued"}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, RuntimeURL: srv.URL, AccountID: "ws-abcd1234", BuildKey: "bk-secret-build", RuntimeKey: "rk-secret-runtime",
		Retry: RetryPolicy{MaxAttempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		path  string
		call  func() error
		sends int
	}{
		{"/v1/agents/a/deployments/active", func() error { _, err := c.ActiveDeployment(ctx, "a", ""); return err }, 2},
		{"/v3/ws-abcd1234/p/conversations/c1/audio", func() error { _, _, err := c.ConversationAudio(ctx, "p", "c1"); return err }, 2},
		{"/v1/outbound-calling/OUT-1/status", func() error { _, err := c.CallStatus(ctx, "OUT-1"); return err }, 2},
		{"/v1/outbound-calling", func() error { _, err := c.PlaceCall(ctx, CallRequest{To: "+447700900001"}); return err }, 1},
		{"/v1/outbound-sms", func() error {
			_, err := c.SendSMS(ctx, SMSRequest{To: "+447700900002", Message: "hi", ConnectorID: "CONN-1"})
			return err
		}, 1},
		{"/v1/alert-rules", func() error { _, err := c.CreateAlertRule(ctx, AlertRuleRequest{Metric: "api_errors"}); return err }, 1},
		{"/v1/webhooks/endpoints", func() error {
			_, err := c.RegisterWebhook(ctx, WebhookRegistration{URL: "https://example.com/h", Events: []string{"x"}})
			return err
		}, 1},
	} {
		err := tc.call()
		mu.Lock()
		n := hits[tc.path]
		mu.Unlock()
		if n != tc.sends || (tc.sends == 1) != IsTransient(err) || tc.sends == 2 && err != nil {
			t.Errorf("%s: sent %d times, %v; want %d", tc.path, n, err, tc.sends)
		}
	}
}
