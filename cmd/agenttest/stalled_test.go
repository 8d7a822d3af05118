package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// webhookSuite confirms a webhook, so the run registers its endpoint.
const webhookSuite = `suite: webhooks
agent: clinic
scenarios:
  - name: completes
    turns:
      - say: I have chest pain
    confirm: {webhooks: [conversation.completed]}
`

// plainTarget is a target from AGENTTEST_* variables on the platform at
// url (build and runtime alike), over plain HTTP.
func plainTarget(url string) map[string]string {
	return map[string]string{"AGENTTEST_BUILD_URL": url, "AGENTTEST_RUNTIME_URL": url, "AGENTTEST_ALLOW_HTTP": "true",
		"AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_RUNTIME_KEY": "runtime-key-0123456789", "AGENTTEST_ACCOUNT_ID": "acc"}
}

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
	dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
	c := newCLI(t, dir, plainTarget(hs.URL), "run", "--webhook-listen", "127.0.0.1:0", "--turn-timeout", "200ms", "hooks.yaml")
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

// TestInterruptDuringWebhookRegistration: an interrupt while the run's
// webhook endpoint is being registered (a platform slow to answer) is the
// user's, not the platform's: the run concludes as interrupted, exit 130,
// without saying the endpoint could not be registered and that the run
// goes on.
func TestInterruptDuringWebhookRegistration(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 8)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		asked <- struct{}{}
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)
	dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
	c := newCLI(t, dir, plainTarget(hs.URL), "run", "--webhook-listen", "127.0.0.1:0", "--junit", "junit.xml", "hooks.yaml")
	go func() {
		<-asked // the registration's first call
		c.sigs <- struct{}{}
	}()
	out := c.expect(t, exitInterrupted, "agenttest: interrupted: stopping the run and writing reports", "PENDING hooks.yaml:4 completes (not run: run interrupted)")
	if strings.Contains(out, "could not be registered") {
		t.Errorf("the interrupt is reported as the platform's:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "junit.xml")); err != nil {
		t.Errorf("no JUnit report: %v", err)
	}
}
