package main

// The signing secret of a webhook endpoint a command registers is known
// only once the platform answers the registration: no flag or variable
// gave it, so the redactors built at the start did not hold it. A
// platform that echoes it afterwards must not put it into any output.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/webhook"
)

// learntSecret is the signing secret learntSecretPlatform issues.
const learntSecret = "whsec_LEARNT-7d2a9c41e0b3f856"

// learntSecretPlatform registers every webhook endpoint with issued
// (learntSecret, unless a test gives a secret of its own), then echoes
// it: a debug-chat reply holds it in the form
// of keyForms its agent id names, a turn of the agent "error500" gets a
// 500 whose body holds every form, and so does the deletion of the
// endpoint when the command ends.
func learntSecretPlatform(t *testing.T, issued string) *httptest.Server {
	var every []string
	for _, form := range keyForms {
		every = append(every, form(issued))
	}
	all := strings.Join(every, " ")
	return registeringPlatform(t, issued, &endpointLog{}, func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case len(parts) == 3 && parts[1] == "webhook-endpoints" && r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error_message":"cannot delete the endpoint signed with %s"}`, all)
		case len(parts) >= 4 && parts[1] == "agents" && parts[3] == "debug-chat" && parts[2] == "error500":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error_message":"upstream refused %s"}`, all)
		case len(parts) >= 4 && parts[1] == "agents" && parts[3] == "debug-chat" && keyForms[parts[2]] != nil:
			echo := keyForms[parts[2]](issued)
			fmt.Fprintf(w, `{"conversationId":"conv-1","userInput":"","response":"signed with %s","metadata":{"currentNode":"%s","nodeTrace":["Greeting"],"state":{"k":"%s","%s":1}},"conversationEnded":false,"delayedResponse":false}`,
				echo, echo, echo, echo)
		default:
			http.NotFound(w, r)
		}
	})
}

// A run that registers its webhook endpoint (--webhook-listen) masks the
// secret the registration returned in every output, whatever form the
// platform echoes it in afterwards: replies, an error body, the failed
// deletion of the endpoint at exit.
func TestLearntWebhookSecretNeverShown(t *testing.T) {
	t.Parallel()
	srv := learntSecretPlatform(t, learntSecret)
	var suite strings.Builder
	suite.WriteString("suite: learnt\nscenarios:\n")
	for form := range keyForms {
		fmt.Fprintf(&suite, "  - {name: %s, agent: %s, turns: [{say: hi}], greeting: {response: nothing}}\n", form, form)
	}
	suite.WriteString("  - {name: error body, agent: error500, turns: [{say: hi}]}\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "learnt.yaml"), []byte(suite.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}
	c := newCLI(t, dir, env, "run", "-v", "--webhook-listen", "127.0.0.1:0", "learnt.yaml",
		"--junit", "junit.xml", "--json", "result.json", "--html", "report.html", "--cucumber", "cucumber.ndjson", "--github")
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
	}
	texts := reportTexts(t, c, dir)
	noKeyForm(t, "run", texts, secret.Forms(learntSecret))
	// The echoes were exercised: masks where they were, and the
	// deletion's failure reported.
	if !strings.Contains(texts["result.json"], secret.Mask) || !strings.Contains(texts["junit.xml"], secret.Mask) {
		t.Errorf("no %s in the reports: the echoes were not exercised", secret.Mask)
	}
	if !strings.Contains(texts["stderr"], "could not delete webhook endpoint whe_1") {
		t.Errorf("the failed deletion is not reported:\n%s", texts["stderr"])
	}
}

// webhooks listen masks the secret it registered its endpoint with in the
// events it prints, in the deliveries it rejects and in the failure to
// delete the endpoint when it stops.
func TestWebhooksListenMasksLearntSecret(t *testing.T) {
	t.Parallel()
	srv := learntSecretPlatform(t, learntSecret)
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}
	c := newCLI(t, t.TempDir(), env, "webhooks", "listen", "--listen", "127.0.0.1:0")
	done := startListener(c)
	addr := waitFor(t, c.stdout, regexp.MustCompile(`listening on (127\.0\.0\.1:\d+); registered`))[1]

	// The data holds the secret raw, as base64, and as \u escapes that
	// survive decoding (escaped twice on the wire).
	twice := strings.ReplaceAll(keyForms["json"](learntSecret), `\`, `\\`)
	b64 := base64.StdEncoding.EncodeToString([]byte(learntSecret))
	deliver := func(signature, body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		req.Header.Set("X-Vendor-Signature", signature)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	signed := `{"id":"evt_1","type":"handoff.created","data":{"conversation_id":"c-signed","raw":"` + learntSecret + `","b64":"` + b64 + `","esc":"` + twice + `"}}`
	deliver(webhook.Sign(learntSecret, []byte(signed)), signed)
	waitFor(t, c.stdout, regexp.MustCompile(`handoff\.created conversation=c-signed `))
	forged := `{"id":"evt_2","type":"` + learntSecret + `","data":{"conversation_id":"c-forged ` + b64 + `"}}`
	deliver(strings.Repeat("ab", 32), forged)
	waitFor(t, c.stdout, regexp.MustCompile(`REJECTED `))
	stopListener(t, c, done)

	texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
	forms := secret.Forms(learntSecret)
	for name, text := range texts {
		if f := keyIn(text, forms); f != "" {
			t.Errorf("%s holds the secret as %q:\n%s", name, f, text)
		}
	}
	if n := strings.Count(texts["stdout"], secret.Mask); n < 4 {
		t.Errorf("stdout shows %s %d times, want 4 or more: the echoes were not exercised\n%s", secret.Mask, n, texts["stdout"])
	}
	if !strings.Contains(texts["stderr"], "could not delete webhook endpoint whe_1") {
		t.Errorf("the failed deletion is not reported:\n%s", texts["stderr"])
	}
}

// A signing secret too short to be masked is not kept: the endpoint is
// deleted, run goes on with the scenarios that confirm webhooks erroring
// (its one scenario errors anyway), and webhooks listen stops with exit
// 4. Neither shows the secret in what it says of it.
func TestShortIssuedSigningSecretRefused(t *testing.T) {
	t.Parallel()
	const short = "whsec_7d2a"
	srv := learntSecretPlatform(t, short)
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("suite: s\nscenarios:\n  - {name: s, agent: error500, turns: [{say: hi}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const why = "is of no use: the signing secret the platform issued for the webhook endpoint is 10 characters long"
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "--webhook-listen", "127.0.0.1:0", "s.yaml"}, exitErrored},
		{[]string{"webhooks", "listen", "--listen", "127.0.0.1:0"}, exitErrored},
	} {
		c := newCLI(t, dir, env, tc.args...)
		if code := c.run(t); code != tc.code {
			t.Fatalf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, c.stdout, c.stderr)
		}
		// The platform's own echo of the secret, in its answer to the
		// deletion, cannot be masked: only what agenttest says is
		// checked.
		stderr := c.stderr.String()
		if !strings.Contains(stderr, "could not delete webhook endpoint whe_1") {
			t.Errorf("%v: the endpoint was not deleted:\n%s", tc.args, stderr)
		}
		line := regexp.MustCompile(`(?m)^agenttest: .*is of no use.*$`).FindString(stderr)
		if !strings.Contains(line, why) || strings.Contains(line, short) {
			t.Errorf("%v: stderr does not say %q, or shows the secret:\n%s", tc.args, why, stderr)
		}
	}
}

// endpointLog is what registeringPlatform saw (the URL and events the
// run's endpoint was registered with) and endpointPlatform (its
// deletion).
type endpointLog struct {
	url     atomic.Value
	events  atomic.Value // []string
	deleted atomic.Bool
}

// registeringPlatform registers the run's webhook endpoint (whe_1) with
// the signing secret issued, noting its URL in log, and hands every other
// request to rest.
func registeringPlatform(t *testing.T, issued string, log *endpointLog, rest http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
			fmt.Fprint(w, `{"endpoints":[]}`)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
			var reg struct {
				URL    string   `json:"url"`
				Events []string `json:"events"`
			}
			json.NewDecoder(r.Body).Decode(&reg)
			log.url.Store(reg.URL)
			log.events.Store(reg.Events)
			json.NewEncoder(w).Encode(map[string]any{"id": "whe_1", "url": reg.URL, "events": reg.Events, "signing_secret": issued})
		default:
			rest(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// endpointPlatform registers the run's webhook endpoint, answers its
// deletion at exit with deleteStatus and every debug-chat turn with a
// greeting.
func endpointPlatform(t *testing.T, deleteStatus int, log *endpointLog) *httptest.Server {
	return registeringPlatform(t, learntSecret, log, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/webhook-endpoints/whe_1" && r.Method == http.MethodDelete:
			log.deleted.Store(true)
			w.WriteHeader(deleteStatus)
			fmt.Fprint(w, `{"error_message":"webhook endpoint not found"}`)
		case strings.Contains(r.URL.Path, "/debug-chat"):
			fmt.Fprint(w, `{"conversationId":"conv-1","userInput":"","response":"hello","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{}},"conversationEnded":false,"delayedResponse":false}`)
		default:
			http.NotFound(w, r)
		}
	})
}

// An endpoint already gone when the run deletes it at exit (a 404: the
// platform expired it, or someone removed it) is what the deletion
// wanted: the run says nothing of it, and passes.
func TestWebhookEndpointGoneAtExit(t *testing.T) {
	t.Parallel()
	var log endpointLog
	srv := endpointPlatform(t, http.StatusNotFound, &log)
	dir := writeTree(t, map[string]string{"greet.yaml": greetSuite})
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}, "run", "--webhook-listen", "127.0.0.1:0", "greet.yaml")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitOK, c.stdout, c.stderr)
	}
	if !log.deleted.Load() {
		t.Fatalf("the endpoint was not deleted at exit\n%s", c.stderr)
	}
	if strings.Contains(c.stderr.String(), "could not delete") {
		t.Errorf("a deletion that found the endpoint gone is reported:\n%s", c.stderr)
	}
}

// The target's webhook_url is the URL the run registers (the public one
// the platform reaches its loopback receiver through), and --webhook-url
// wins over it.
func TestTargetWebhookURL(t *testing.T) {
	t.Parallel()
	var log endpointLog
	srv := endpointPlatform(t, http.StatusNoContent, &log)
	dir := writeTree(t, map[string]string{"greet.yaml": greetSuite, "agenttest.yaml": "targets:\n  remote:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n" +
		"    webhook_listen: 127.0.0.1:0\n    webhook_url: https://hooks.example.test/from-target\n"})
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "https://hooks.example.test/from-target"},
		{[]string{"--webhook-url", "https://hooks.example.test/from-flag"}, "https://hooks.example.test/from-flag"},
	} {
		c := newCLI(t, dir, env, append(append([]string{"run", "--target", "remote"}, tc.flags...), "greet.yaml")...)
		if code := c.run(t); code != exitOK {
			t.Fatalf("%q: exit %d, want %d\n%s%s", tc.flags, code, exitOK, c.stdout, c.stderr)
		}
		if got := log.url.Load(); got != tc.want {
			t.Errorf("%q: registered %v, want %s", tc.flags, got, tc.want)
		}
	}
}

// webhooks listen masks the signing secret given with --secret before it
// has learnt it from a registration: the platform knows the secret of the
// endpoint it holds, and its refusal to list them reaches stderr.
func TestWebhooksListenMasksGivenSecret(t *testing.T) {
	t.Parallel()
	const given = "whsec_GIVEN-3b8e51f0a9c2d746"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message": "endpoint with signing secret %s belongs to another workspace"}`, given)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey}
	c := newCLI(t, t.TempDir(), env, "webhooks", "listen", "--listen", "127.0.0.1:0", "--secret", given)
	if code := c.run(t); code != exitErrored {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitErrored, c.stdout, c.stderr)
	}
	for name, text := range map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()} {
		if f := keyIn(text, secret.Forms(given)); f != "" {
			t.Errorf("%s holds the secret as %q:\n%s", name, f, text)
		}
	}
	if !strings.Contains(c.stderr.String(), "belongs to another workspace") {
		t.Errorf("stderr does not show the platform's refusal:\n%s", c.stderr)
	}
}
