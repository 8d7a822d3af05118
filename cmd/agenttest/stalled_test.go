package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestWebhookRegistrationStalled: a platform that takes every request and
// never answers. The registration of the run's webhook endpoint is a
// platform call like any other, bounded by --turn-timeout: the run says
// it could not register, goes on, and its case errors on the same stall,
// exit 4. Before, the registration waited for ever, and only an interrupt
// ended the run, which then tested nothing.
func TestWebhookRegistrationStalled(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The body read first: the server notices that the client went
		// away only after it.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)
	dir := writeTree(t, map[string]string{"hooks.yaml": `suite: webhooks
agent: clinic
scenarios:
  - name: completes
    turns:
      - say: I have chest pain
    confirm: {webhooks: [conversation.completed]}
`})
	env := map[string]string{"AGENTTEST_BUILD_URL": hs.URL, "AGENTTEST_RUNTIME_URL": hs.URL, "AGENTTEST_ALLOW_HTTP": "true",
		"AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_RUNTIME_KEY": "runtime-key-0123456789", "AGENTTEST_ACCOUNT_ID": "acc"}
	c := newCLI(t, dir, env, "run", "--webhook-listen", "127.0.0.1:0", "--turn-timeout", "200ms", "hooks.yaml")
	// Far above what the run needs; without a bound on the registration
	// this deadline is what ends it, as an interrupt.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := exitCode(run(ctx, c.st), c.stderr)
	out := c.stdout.String() + c.stderr.String()
	if code != exitErrored {
		t.Fatalf("exit %d, want %d\n%s", code, exitErrored, out)
	}
	for _, want := range []string{"the run's webhook endpoint could not be registered: ", "turn timeout of 200ms exceeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
