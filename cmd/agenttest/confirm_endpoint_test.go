package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestRunRemovesOnlyTheEndpointItRegistered: a run removes at its exit
// the webhook endpoint it registered, also when it was given a
// --webhook-secret for a URL that had no endpoint (the secret it got is
// another), and keeps an endpoint it reused with the secret it was given:
// that one is the user's, and the next run reuses it too.
func TestRunRemovesOnlyTheEndpointItRegistered(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// existing registers an endpoint for the URL before the run, and
		// gives the run its secret; otherwise the run gets secret.
		existing bool
		secret   string
		kept     bool
	}
	run := func(t *testing.T, tc testCase) {
		s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
		client, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		addr := platformtest.FreeAddr(t)
		url := "http://" + addr + "/"
		secret := tc.secret
		if tc.existing {
			ep, err := client.RegisterWebhook(ctx, platform.WebhookRegistration{URL: url, Events: []string{"conversation.completed"}})
			if err != nil {
				t.Fatal(err)
			}
			secret = ep.SigningSecret
		}
		dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
		c := newCLI(t, dir, simEnv(s), "run", "--webhook-listen", addr, "--webhook-url", url, "--webhook-secret", secret, "hooks.yaml")
		out := c.expect(t, exitOK, "\nstatus: passed\n")
		if strings.Contains(out, secret) {
			t.Errorf("the output shows the webhook secret:\n%s", out)
		}
		list, err := client.ListWebhooks(ctx)
		if err != nil || len(list) != map[bool]int{false: 0, true: 1}[tc.kept] {
			t.Errorf("endpoints after the run: %+v, %v; want kept: %t", list, err, tc.kept)
		}
	}
	for _, tc := range []testCase{
		{name: "a secret for a URL with no endpoint", secret: "whsec_not_of_any_endpoint_0123456789"},
		{name: "the secret of the URL's endpoint", existing: true, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestRunWebhookListenRefused: a run whose receiver cannot listen, or
// listens beyond loopback with no public URL to register, stops before
// anything runs saying so: the platform would deliver nowhere, and
// every scenario that confirms webhooks would fail or error for it.
func TestRunWebhookListenRefused(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	for _, tc := range []struct{ listen, want string }{
		{listen: platformtest.ClosedAddr(t) + "x", want: "run: --webhook-listen: "},
		{listen: "0.0.0.0:0", want: "run: --webhook-url is required when --webhook-listen is not a loopback address"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
			c := newCLI(t, dir, simEnv(s), "run", "--webhook-listen", tc.listen, "hooks.yaml")
			out := c.expect(t, exitUsage, tc.want)
			if strings.Contains(out, "running ") {
				t.Errorf("something ran:\n%s", out)
			}
		})
	}
}

// TestWebhookURLProblems: --webhook-url must be an absolute http(s) URL,
// and the refusal does not show the URL's password.
func TestWebhookURLProblems(t *testing.T) {
	t.Parallel()
	for url, refused := range map[string]bool{
		"https://hooks.example.com/agenttest": false,
		"http://127.0.0.1:8080/":              false,
		"https://":                            true,
		"ftp://hooks.example.com/":            true,
		"hooks.example.com/agenttest":         true,
		"https://user:hunter2-password@/":     true,
	} {
		c := confirmOptions{webhookURL: url, confirmWait: confirmWait{confirmTimeout: runner.DefaultConfirmTimeout}}
		got := strings.Join(c.problems(), "\n")
		if (got != "") != refused || (refused && !strings.Contains(got, "must be an absolute http(s) URL")) || strings.Contains(got, "hunter2") {
			t.Errorf("%s: problems %q, want refused: %t, no password", url, got, refused)
		}
	}
}

// TestWebhookEndpointIDOfNoUse: an endpoint id the platform answers with
// that does not match the reference's ^whe_[A-Za-z0-9]+$, or that holds
// a key (masked with the rest of the answer, it no longer matches), is
// the platform's malformed answer: run says its endpoint could not be
// registered and its webhook scenario errors (exit 4), webhooks listen
// exits 4, and neither shows the key nor sends the id back. Before, the
// id reached the deletion or update, whose check of it made an internal
// error (exit 3) before any case ran.
func TestWebhookEndpointIDOfNoUse(t *testing.T) {
	t.Parallel()
	// An id of letters and digits holding the key matches the pattern
	// until the key in it is masked.
	const key = "buildkey0123456789abcdef"
	const public = "https://hooks.example.test/agenttest"
	type testCase struct {
		name string
		// listed is the id of the endpoint the list holds at the run's
		// URL (none when empty), registered the id the registration
		// answers with.
		listed, registered string
		want               string
	}
	run := func(t *testing.T, tc testCase, args ...string) {
		var mu sync.Mutex
		var sent []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch {
			case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
				list := `{"endpoints":[]}`
				if tc.listed != "" {
					list = fmt.Sprintf(`{"endpoints":[{"id":%q,"url":%q,"events":["conversation.completed"]}]}`, tc.listed, public)
				}
				fmt.Fprint(w, list)
			case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
				w.WriteHeader(http.StatusCreated)
				fmt.Fprintf(w, `{"id":%q,"url":%q,"events":["conversation.completed"],"signing_secret":%q}`, tc.registered, public, learntSecret)
			case strings.HasPrefix(r.URL.Path, "/v1/webhook-endpoints/"):
				mu.Lock()
				sent = append(sent, r.Method+" "+r.URL.Path)
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			case strings.Contains(r.URL.Path, "/debug-chat"):
				fmt.Fprint(w, `{"conversationId":"conv-1","userInput":"","response":"hello","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{}},"conversationEnded":false,"delayedResponse":false}`)
			default:
				http.NotFound(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		env := plainTarget(srv.URL)
		env["AGENTTEST_BUILD_KEY"] = key
		c := newCLI(t, writeTree(t, map[string]string{"hooks.yaml": webhookSuite}), env, args...)
		// The scenario's confirmation first waits for its record, which
		// this platform never has: its 30s pass on a fake clock.
		clk := fakeclock.New()
		c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		out := c.expect(t, exitErrored, tc.want)
		if strings.Contains(out, key) || strings.Contains(out, "internal error") {
			t.Errorf("the output shows the key, or calls it an internal error:\n%s", out)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(sent) > 0 {
			t.Errorf("the id was sent back: %q", sent)
		}
	}
	for _, tc := range []testCase{
		{name: "listed, holding a key", listed: "whe_" + key, registered: "whe_new",
			want: `GET /v1/webhooks/endpoints: 200: malformed response: endpoint 1 of 1: endpoint id "whe_[REDACTED]" does not match ^whe_[A-Za-z0-9]+$`},
		{name: "listed, malformed", listed: "whe_bad-id", registered: "whe_new",
			want: `malformed response: endpoint 1 of 1: endpoint id "whe_bad-id" does not match`},
		{name: "registered, holding a key", registered: "whe_" + key,
			want: `POST /v1/webhooks/endpoints: 201: malformed response: endpoint id "whe_[REDACTED]" does not match`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc, "run", "--webhook-listen", "127.0.0.1:0", "--webhook-url", public, "hooks.yaml")
			run(t, tc, "webhooks", "listen", "--listen", "127.0.0.1:0", "--url", public)
		})
	}
}

// TestWebhookURLPasswordNeverShown: the public URL of the receiver may
// carry credentials for a proxy in front of it, a key, or a secret in
// its query that the receiver checks (?token=). What run and
// webhooks listen say of it (a failed registration, which run also puts
// into its reports; the line webhooks listen starts with) shows them
// masked, as every message about a URL does. Before, a registration the
// platform failed printed the password on the console and in every
// report.
func TestWebhookURLPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const password = "hunter2-proxy-password"
	const public = "https://agent:" + password + "@hooks.example.test/agenttest"
	const shown = "https://agent:xxxxx@hooks.example.test/agenttest"
	// A key in it is masked as the target's keys are everywhere.
	key := plainTarget("")["AGENTTEST_BUILD_KEY"]
	// It fails the registration, echoing what it was sent (the URL with
	// its password, which only the redactor can tell in the platform's
	// words), and serves the rest of the scenario, so that its
	// confirmation reaches the webhook and says why it errors.
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost:
			var reg struct{ URL string }
			_ = json.NewDecoder(r.Body).Decode(&reg)
			w.WriteHeader(http.StatusInternalServerError)
			msg, _ := json.Marshal("cannot reach " + strings.TrimPrefix(reg.URL, "https://"))
			fmt.Fprintf(w, `{"error":{"code":"UNREACHABLE","message":%s}}`, msg)
		case r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodGet:
			fmt.Fprint(w, `{"endpoints":[]}`)
		case strings.Contains(r.URL.Path, "/debug-chat"):
			fmt.Fprint(w, `{"conversationId":"conv-1","userInput":"","response":"hello","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{}},"conversationEnded":false,"delayedResponse":false}`)
		case r.URL.Path == "/v3/acc/clinic/conversations/conv-1":
			fmt.Fprint(w, `{"id":"conv-1","account_id":"acc","project_id":"clinic","environment":"sandbox","channel":"WEBCHAT","started_at":"2026-03-01T12:00:00.000Z","in_progress":false,"num_turns":1}`)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(failing.Close)

	// A receiver that checks a secret of its query: the values of the
	// parameters named as credentials are masked, the rest shown.
	const token, sig = "qtok-PLANTED-0123456789", "qsig-PLANTED-abcdef012345"
	const queryPublic = "https://hooks.example.test/agenttest?team=ops&token=" + token + "&X-Hook-Sig=" + sig
	const queryShown = "https://hooks.example.test/agenttest?team=ops&token=xxxxx&X-Hook-Sig=xxxxx"
	for _, u := range []struct {
		public, shown string
		secrets       []string
	}{
		{public, shown, []string{password}},
		{"https://hooks.example.test/" + key, "https://hooks.example.test/[REDACTED]", []string{key}},
		{queryPublic, queryShown, []string{token, sig}},
	} {
		for _, args := range [][]string{
			{"run", "--webhook-listen", "127.0.0.1:0", "--webhook-url", u.public,
				"--json", "result.json", "--junit", "junit.xml", "--html", "report.html", "--cucumber", "cucumber.ndjson", "hooks.yaml"},
			{"webhooks", "listen", "--listen", "127.0.0.1:0", "--url", u.public},
		} {
			dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
			c := newCLI(t, dir, plainTarget(failing.URL), args...)
			clk := fakeclock.New()
			c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
			c.expect(t, exitErrored)
			texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
			if args[0] == "run" {
				texts = reportTexts(t, c, dir)
			}
			if !strings.Contains(texts["stderr"], "register webhook "+u.shown+": POST /v1/webhooks/endpoints: 500") {
				t.Errorf("%v: the failed registration does not name the URL masked (%s):\n%s", args[0], u.shown, texts["stderr"])
			}
			if args[0] == "run" && !strings.Contains(texts["result.json"], "could not be registered") {
				t.Errorf("the report does not say why the webhook confirmation errored:\n%s", texts["result.json"])
			}
			for name, text := range texts {
				for _, secret := range u.secrets {
					if strings.Contains(text, secret) {
						t.Errorf("%v: %s shows %s:\n%s", args[0], name, secret, text)
					}
				}
			}
		}
	}

	// The line webhooks listen starts with, once it registered.
	for _, u := range []struct {
		public, shown string
		secrets       []string
	}{
		{public, shown, []string{password}},
		{queryPublic, queryShown, []string{token, sig}},
	} {
		srv := registeringPlatform(t, learntSecret, &endpointLog{}, http.NotFound)
		c := newCLI(t, t.TempDir(), plainTarget(srv.URL), "webhooks", "listen", "--listen", "127.0.0.1:0", "--url", u.public)
		done := startListener(c)
		waitFor(t, c.stdout, regexp.MustCompile(`registered endpoint whe_1 for `+regexp.QuoteMeta(u.shown)+` `))
		stopListener(t, c, done)
		out := c.stdout.String() + c.stderr.String()
		for _, secret := range u.secrets {
			if strings.Contains(out, secret) {
				t.Errorf("webhooks listen shows %s of the URL:\n%s", secret, out)
			}
		}
	}
}

// TestWebhookEventsSubscribedOnce: the run's endpoint subscribes to the
// events its scenarios confirm, each once, in the order they first
// appear, however many scenarios confirm it.
func TestWebhookEventsSubscribedOnce(t *testing.T) {
	t.Parallel()
	var log endpointLog
	srv := endpointPlatform(t, http.StatusNoContent, &log)
	suite := "suite: hooks\nagent: clinic\nscenarios:\n" +
		"  - name: a\n    turns: [{say: hi}]\n    confirm: {webhooks: [conversation.completed]}\n" +
		"  - name: b\n    turns: [{say: hi}]\n    confirm: {webhooks: [handoff.created, conversation.completed]}\n"
	c := newCLI(t, writeTree(t, map[string]string{"hooks.yaml": suite}), map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": plantedBuildKey},
		"run", "--webhook-listen", "127.0.0.1:0", "hooks.yaml")
	// The confirmations wait for records this platform never has: their
	// bound passes on a fake clock.
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
	c.run(t)
	got, _ := log.events.Load().([]string)
	if want := []string{"conversation.completed", "handoff.created"}; !slices.Equal(got, want) {
		t.Errorf("registered events %q, want %q\n%s%s", got, want, c.stdout, c.stderr)
	}
}

// TestWebhookRegistrationRedirected: a platform that redirects the
// registration's calls elsewhere (where the build key is not sent) is the
// platform's error, as any answer the client cannot use: webhooks listen
// exits 4, not 3.
func TestWebhookRegistrationRedirected(t *testing.T) {
	t.Parallel()
	elsewhere := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(elsewhere.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	c := newCLI(t, t.TempDir(), plainTarget(srv.URL), "webhooks", "listen", "--listen", "127.0.0.1:0")
	c.expect(t, exitErrored, "webhooks listen: register http://127.0.0.1:", "307 redirect to")
}

// TestRunUnknownWebhookEventRefused: the run's endpoint subscribes to the
// events every selected scenario confirms. A platform that refuses an
// event the reference does not name (allowed, with a warning) refused the
// whole registration, and every scenario that confirms webhooks errored,
// those awaiting handoff.created too. The endpoint is registered for the
// events the reference names, and only the scenario awaiting the refused
// event errors, saying so.
func TestRunUnknownWebhookEventRefused(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"u.yaml": `suite: u
agent: clinic
scenarios:
  - name: known event
    turns: [{say: I have chest pain}]
    confirm: {webhooks: [handoff.created]}
  - name: unknown event
    turns: [{say: I have chest pain}]
    confirm: {webhooks: [call.transferred]}
`})
	out := newCLI(t, dir, nil, "run", "--json", "r.json", "u.yaml").expect(t, exitErrored,
		`the run's webhook endpoint could not be registered for call.transferred: `,
		`400: validation failed: events: unknown event "call.transferred"`)
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, c := range reportCases(t, b) {
		status[c.Name] = c.Status
	}
	if status["known event"] != "passed" || status["unknown event"] != "errored" {
		t.Errorf("statuses %v, want the known event passed, the unknown errored\n%s", status, out)
	}
}

// TestRunUnknownWebhookEventOn5xx: only a refusal of what was asked (400,
// 422) has the endpoint registered again for the events the reference
// names. A registration that failed on the platform's side (500s past the
// retries) is not made again with other events: it would fail the same
// way, with as many calls again.
func TestRunUnknownWebhookEventOn5xx(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	posts := 0
	// The list is empty, and every other call a 500.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/webhooks/endpoints" || r.Method != http.MethodGet {
			mu.Lock()
			posts += map[bool]int{true: 1}[r.URL.Path == "/v1/webhooks/endpoints"]
			mu.Unlock()
			http.Error(w, `{"error_message":"boom"}`, http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, `{"endpoints":[]}`)
	}))
	t.Cleanup(srv.Close)
	dir := writeTree(t, map[string]string{"u.yaml": `suite: u
agent: clinic
scenarios:
  - name: unknown event
    turns: [{say: hi}]
    confirm: {webhooks: [handoff.created, call.transferred]}
`})
	c := newCLI(t, dir, plainTarget(srv.URL), "run", "--webhook-listen", "127.0.0.1:0", "u.yaml")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	c.expect(t, exitErrored, "the run's webhook endpoint could not be registered: ", "(gave up after 5 registrations)")
	mu.Lock()
	defer mu.Unlock()
	if posts != 5 {
		t.Errorf("%d registrations, want the 5 of the retry policy", posts)
	}
}
