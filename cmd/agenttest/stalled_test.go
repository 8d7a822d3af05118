package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
//
// Each call of the registration is bounded, not only the first: a
// platform that lists its endpoints and then stalls on the call that
// registers one (none listed), replaces one listed at the run's URL whose
// secret the run does not know, or re-enables one whose secret it does
// (--webhook-secret) is the same stall.
func TestWebhookRegistrationStalled(t *testing.T) {
	t.Parallel()
	stalls := stallingServer(t, func() {})
	listsThenStalls := func(list string) *httptest.Server {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				io.WriteString(w, list)
				return
			}
			stalls.Config.Handler.ServeHTTP(w, r)
		}))
		t.Cleanup(hs.Close)
		return hs
	}
	const public = "https://hooks.example.test/agenttest"
	listed := listsThenStalls(`{"endpoints": [{"id": "whe_old", "url": "` + public + `", "events": ["conversation.completed"], "enabled": false}]}`)
	for _, tc := range []struct {
		name  string
		hs    *httptest.Server
		flags []string
	}{
		{"every call", stalls, nil},
		{"the registration", listsThenStalls(`{"endpoints": []}`), nil},
		{"the replacement", listed, []string{"--webhook-url", public}},
		{"the update", listed, []string{"--webhook-url", public, "--webhook-secret", "whsec_known-0123456789abcdef"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
			c := newCLI(t, dir, plainTarget(tc.hs.URL), append([]string{"run", "--webhook-listen", "127.0.0.1:0", "--turn-timeout", "200ms", "hooks.yaml"}, tc.flags...)...)
			code, out := runUnlessStalled(c)
			if code != exitErrored {
				t.Fatalf("exit %d, want %d\n%s", code, exitErrored, out)
			}
			for _, want := range []string{"the run's webhook endpoint could not be registered: ", "turn timeout of 200ms exceeded"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// stallingServer takes every request and never answers it, calling
// onRequest once it has read each request's body: the server notices
// that the client went away only after that.
func stallingServer(t *testing.T, onRequest func()) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		onRequest()
		<-r.Context().Done()
	}))
	t.Cleanup(hs.Close)
	return hs
}

// runUnlessStalled runs c with a deadline far above what it needs:
// without a bound on its calls, the deadline is what ends it, as an
// interrupt (exit 130).
func runUnlessStalled(c *cli) (code int, out string) {
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	code = exitCode(run(ctx, c.st), c.stderr)
	return code, c.stdout.String() + c.stderr.String()
}

// TestWebhooksListenStalled: webhooks listen registers its endpoint as a
// run does, each call bounded by the config's turn timeout: on a
// platform that never answers it says it could not register, exit 4.
// Before, it waited for ever without a word.
func TestWebhooksListenStalled(t *testing.T) {
	t.Parallel()
	hs := stallingServer(t, func() {})
	dir := writeTree(t, map[string]string{"agenttest.yaml": "run:\n  turn_timeout: 200ms\n"})
	code, out := runUnlessStalled(newCLI(t, dir, plainTarget(hs.URL), "webhooks", "listen", "--listen", "127.0.0.1:0"))
	if code != exitErrored {
		t.Fatalf("exit %d, want %d\n%s", code, exitErrored, out)
	}
	if want := "webhooks listen: register http://127.0.0.1:"; !strings.Contains(out, want) || !strings.Contains(out, "(turn timeout of 200ms exceeded)") {
		t.Errorf("output lacks %q and the timeout:\n%s", want, out)
	}
}

// TestInterruptDuringWebhookRegistration: an interrupt while the run's
// webhook endpoint is being registered (a platform slow to answer) is the
// user's, not the platform's: the run concludes as interrupted, exit 130,
// without saying the endpoint could not be registered and that the run
// goes on. The JSON report's file, none of whose cases started, is
// pending, not skipped: nothing in it was skipped on purpose.
func TestInterruptDuringWebhookRegistration(t *testing.T) {
	t.Parallel()
	asked := make(chan struct{}, 8)
	hs := stallingServer(t, func() { asked <- struct{}{} })
	dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
	c := newCLI(t, dir, plainTarget(hs.URL), "run", "--webhook-listen", "127.0.0.1:0", "--junit", "junit.xml", "--json", "result.json", "hooks.yaml")
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
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc drillJSON
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Files) != 1 {
		t.Fatalf("JSON report: %v, %d files", err, len(doc.Files))
	}
	if f := doc.Files[0]; f.Status != "pending" {
		t.Errorf("file %s is %q, want pending", f.Path, f.Status)
	}
}
