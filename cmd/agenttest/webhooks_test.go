package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/actionstest"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"github.com/agenttest/agenttest/internal/webhook"
)

// waitFor waits until what b holds matches re, checking again at each
// write to b, and returns the match; it fails the test after hangBound.
func waitFor(t *testing.T, b *syncBuffer, re *regexp.Regexp) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	out, err := b.await(ctx, re.MatchString)
	if err != nil {
		t.Fatalf("output never matched %s:\n%s", re, out)
	}
	return re.FindStringSubmatch(out)
}

func TestWebhooksListen(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{
		Seed:         4,
		TickInterval: 10 * time.Millisecond,
		Outbound:     sim.OutboundOptions{Queued: time.Millisecond, Calling: time.Millisecond},
		Webhooks:     sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 1},
	})
	c := newCLI(t, "testdata/pass", simEnv(s), "webhooks", "listen", "--listen", "127.0.0.1:0")
	done := startListener(c)
	m := waitFor(t, c.stdout, regexp.MustCompile(`listening on (127\.0\.0\.1:\d+); registered endpoint (whe_\w+) for (\S+) `))
	addr, id := m[1], m[2]

	client, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := client.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("endpoints = %+v, %v; want %s", list, err, id)
	}

	// A completed outbound call is delivered, verified and printed.
	call, err := client.PlaceCall(ctx, platform.CallRequest{To: "+447700900001", AgentID: s.AgentIDs[0], Env: "sandbox"})
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's clock ends the call; the conversation it created is
	// the one of the completion printed, and the only one the
	// simulator's webhooks report.
	conv := waitFor(t, c.stdout, regexp.MustCompile(`(?m)^\S+Z conversation\.completed conversation=(\S+) env=sandbox \{.*"channel":"VOICE-SIP"`))[1]
	if st, err := client.CallStatus(ctx, call.SID); err != nil || st.ConversationID != conv {
		t.Fatalf("call %s: %+v, %v; want the conversation printed, %s", call.SID, st, err, conv)
	}

	// A forged delivery is refused and printed with the reason, its text
	// quoted: the terminal escape, the line break and the fake verified
	// line it carries stay inside one quoted field.
	forged := `{"id":"evt_forged","type":"handoff.created\u001b[2J\n2026-01-01T00:00:00Z conversation.completed conversation=c1 env=live","data":{"conversation_id":"c-forged","environment":"live"}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(forged))
	req.Header.Set("X-Vendor-Signature", strings.Repeat("ab", 32))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged delivery answered %d, want 401", resp.StatusCode)
	}
	waitFor(t, c.stdout, regexp.MustCompile(`REJECTED "signature mismatch: .*" \(type="handoff\.created\\x1b\[2J\\n2026-01-01T00:00:00Z conversation\.completed conversation=c1 env=live" conversation="c-forged", unverified\)`))
	if out := c.stdout.String(); strings.ContainsAny(out, "\x1b") || regexp.MustCompile(`(?m)^2026-01-01T00:00:00Z`).MatchString(out) {
		t.Errorf("the forged delivery's text reached the terminal raw:\n%q", out)
	}

	stopListener(t, c, done)
	// The endpoint it registered is gone.
	if list, err := client.ListWebhooks(ctx); err != nil || len(list) != 0 {
		t.Errorf("endpoints after stop = %+v, %v; want none", list, err)
	}
}

// TestWebhooksNoSubcommand: agenttest webhooks alone names its
// subcommands in a line, as go mod and git remote do, not the whole help
// of listen, and exits 2.
func TestWebhooksNoSubcommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "testdata/pass", nil, "webhooks")
	c.expect(t, exitUsage)
	const want = "agenttest: webhooks: no subcommand given (subcommands: listen, which receives, verifies and prints the platform's webhook events)\n" +
		"Run 'agenttest help webhooks' for usage.\n"
	if got := c.stderr.String(); got != want {
		t.Errorf("stderr\n got %q\nwant %q", got, want)
	}
	if got := c.stdout.String(); got != "" {
		t.Errorf("stdout %q, want none", got)
	}
}

func TestWebhooksListenUsage(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		args []string
		env  map[string]string
		want string
	}
	run := func(t *testing.T, tc testCase) {
		c := newCLI(t, "testdata/pass", tc.env, tc.args...)
		if code := c.run(t); code != exitUsage {
			t.Fatalf("exit %d, want %d: %s", code, exitUsage, c.stderr)
		}
		if !strings.Contains(c.stderr.String(), tc.want) {
			t.Errorf("stderr does not say %q:\n%s", tc.want, c.stderr)
		}
	}
	for _, tc := range []testCase{
		{name: "unknown subcommand", args: []string{"webhooks", "serve"}, want: `webhooks: unknown subcommand "serve" (want listen)` + "\n"},
		{name: "misspelt subcommand", args: []string{"webhooks", "listn"}, want: `webhooks: unknown subcommand "listn" (did you mean listen?)` + "\n"},
		{name: "a flag before the subcommand", args: []string{"webhooks", "--listen=:0", "--url", "https://h.example/"},
			want: "webhooks: --listen comes before the subcommand: flags follow it (agenttest webhooks listen --listen=:0 ...)\n"},
		{name: "a lone dash is no flag", args: []string{"webhooks", "-"}, want: `webhooks: unknown subcommand "-" (want listen)` + "\n"},
		{name: "unknown event", args: []string{"webhooks", "listen", "--events", "conversation.complete"}, want: `unknown event "conversation.complete"`},
		{name: "no event", args: []string{"webhooks", "listen", "--events", " , "}, want: "--events names no event"},
		{name: "bad url", args: []string{"webhooks", "listen", "--url", "hook"}, want: `--url "hook" must be an absolute http(s) URL`},
		{name: "url without host", args: []string{"webhooks", "listen", "--url", "https:hook"}, want: `--url "https:hook" must be an absolute http(s) URL`},
		{name: "no target", args: []string{"webhooks", "listen"}, want: "no target configured"},
		{name: "public listen without url", args: []string{"webhooks", "listen", "--listen", "0.0.0.0:0"},
			env: map[string]string{"AGENTTEST_BUILD_URL": "http://127.0.0.1:9", "AGENTTEST_BUILD_KEY": "bk-catalogue-0123"}, want: "--url is required"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestWebhookRegistrationFails: the run's receiver registers its endpoint
// with a POST the client does not re-send after a 500. A few 500s are
// retried (the drills' seed 4 used to exit 3 here); 500s that outlast the
// retries are the platform's error: the run goes on, says why once, the
// scenarios that confirm webhooks error (never fail), the others run, and
// the exit code is 4, never 3. So are 429s that outlast the run's wait
// budget (they were an internal error, exit 3, and the run never ran).
func TestWebhookRegistrationFails(t *testing.T) {
	t.Parallel()
	const suite = `suite: webhooks
agent: clinic
scenarios:
  - name: books and is confirmed by webhook
    turns:
      - say: I'd like to book an appointment on Tuesday at 10am
      - say: thanks, that's all
        expect: {ended: true}
    confirm: {webhooks: [conversation.completed]}
  - name: greets
    greeting: {response: {contains: Riverside}}
`
	for _, tc := range []struct {
		name  string
		fails int64
		// limited: every call to the webhook endpoints is answered 429.
		limited bool
		code    int
		want    []string
	}{
		{name: "a few 500s are retried", fails: 2, code: exitOK, want: []string{"PASS hooks.yaml:4 books and is confirmed by webhook"}},
		{name: "500s that outlast the retries", fails: 1 << 30, code: exitErrored, want: []string{
			"could not be registered: ", "500", "gave up after 5 registrations", "the scenarios that confirm webhooks will error",
			"ERROR hooks.yaml:4 books and is confirmed by webhook",
			"confirm: webhooks: the run's webhook endpoint could not be registered: register webhook http://127.0.0.1:",
			"PASS hooks.yaml:10 greets"}},
		{name: "429s past the wait budget", limited: true, code: exitErrored, want: []string{
			"could not be registered: ", "rate limited: waited ", "GET /v1/webhooks/endpoints", "the scenarios that confirm webhooks will error",
			"ERROR hooks.yaml:4 books and is confirmed by webhook", "PASS hooks.yaml:10 greets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := simtest.Start(t, sim.Options{Seed: 1, TickInterval: 10 * time.Millisecond,
				Webhooks: sim.WebhookOptions{AllowInsecure: true}})
			target, err := url.Parse(s.BuildURL)
			if err != nil {
				t.Fatal(err)
			}
			var posts atomic.Int64
			proxy := httputil.NewSingleHostReverseProxy(target)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.limited && strings.Contains(r.URL.Path, "/webhook") {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				if r.Method == http.MethodPost && r.URL.Path == "/v1/webhooks/endpoints" && posts.Add(1) <= tc.fails {
					w.WriteHeader(http.StatusInternalServerError)
					w.Write([]byte(`{"message": "injected internal error"}`))
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			env := simEnv(s)
			env["AGENTTEST_BUILD_URL"] = front.URL
			dir := writeTree(t, map[string]string{"hooks.yaml": suite})
			newCLI(t, dir, env, "run", "--webhook-listen", "127.0.0.1:0", "--rate-wait", "3s", "hooks.yaml").expect(t, tc.code, tc.want...)
			// The endpoint registered in the end was removed with the run.
			client, err := platform.New(platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey})
			if err != nil {
				t.Fatal(err)
			}
			if list, err := client.ListWebhooks(context.Background()); err != nil || len(list) != 0 {
				t.Errorf("endpoints after the run: %+v, %v", list, err)
			}
		})
	}
}

// TestWebhooksListenEscapesEventData: a verified event's data is the
// platform's text, which may carry what a caller said: a bidirectional
// override, a C1 control (CSI) or DEL in it is printed as Go escapes it,
// never raw, as everything else a server chose is. JSON encoding escapes
// only the C0 controls. The front server passes everything to the
// simulator and keeps the signing secret of the registration it relays,
// so the test can sign a delivery of its own. In GitHub Actions, whose
// runner obeys `##[error]` anywhere in a line, the command stops the
// runner's workflow commands while it prints.
func TestWebhooksListenEscapesEventData(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 4, Webhooks: sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 1}})
	target, err := url.Parse(s.BuildURL)
	if err != nil {
		t.Fatal(err)
	}
	secrets := make(chan string, 1)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(res *http.Response) error {
		if res.Request.Method != http.MethodPost || res.Request.URL.Path != "/v1/webhooks/endpoints" {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		var ep struct {
			Secret string `json:"signing_secret"`
		}
		if json.Unmarshal(body, &ep) == nil && ep.Secret != "" {
			secrets <- ep.Secret
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	env := simEnv(s)
	env["AGENTTEST_BUILD_URL"] = front.URL
	env["GITHUB_ACTIONS"] = "true"
	c := newCLI(t, "testdata/pass", env, "webhooks", "listen", "--listen", "127.0.0.1:0")
	// An event line is dated by the command's clock, in UTC.
	c.st.Now = func() time.Time { return time.Date(2026, 3, 1, 13, 0, 0, 0, time.FixedZone("CET", 3600)) }
	done := startListener(c)
	addr := waitFor(t, c.stdout, regexp.MustCompile(`listening on (127\.0\.0\.1:\d+); registered`))[1]
	secret := <-secrets

	// deliver posts a delivery signed with the registration's secret.
	deliver := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
		req.Header.Set("X-Vendor-Signature", webhook.Sign(secret, []byte(body)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("the signed delivery answered %d, want 204", resp.StatusCode)
		}
	}
	deliver(`{"id":"evt_text","type":"handoff.created","data":{"conversation_id":"c-text","handoff_reason":"caller said: \u202eevil\u202c \u009b2J \u007f \u2066x\u2069"}}`)
	waitFor(t, c.stdout, regexp.MustCompile(`(?m)^2026-03-01T12:00:00Z handoff\.created conversation=c-text \{"conversation_id":"c-text","handoff_reason":"caller said: \\u202eevil\\u202c \\u009b2J \\x7f \\u2066x\\u2069"\}$`))
	// So are its type, conversation id and environment, quoted whole
	// when not plain: a space in one would forge a field.
	deliver(`{"id":"evt_fields","type":"handoff.created\u001b[2J","data":{"conversation_id":"c1 env=sandbox","environment":"live\u202e"}}`)
	waitFor(t, c.stdout, regexp.MustCompile(`(?m)^\S+Z `+regexp.QuoteMeta(`"handoff.created\x1b[2J" conversation="c1 env=sandbox" env="live\u202e" {`)))
	if out := c.stdout.String(); strings.ContainsAny(out, "\u202e\u202c\u009b\u007f\u2066\u2069\x1b") {
		t.Errorf("the event's text reached the terminal raw:\n%q", out)
	}
	deliver(`{"id":"evt_cmd","type":"handoff.created","data":{"conversation_id":"c-cmd","handoff_reason":"##[error]forged by the caller"}}`)
	waitFor(t, c.stdout, regexp.MustCompile(`forged by the caller`))

	stopListener(t, c, done)
	for _, cmd := range actionstest.Obeyed(c.stdout.String() + c.stderr.String()) {
		if !strings.HasPrefix(cmd, "::stop-commands::agenttest-") {
			t.Errorf("the runner obeys the platform's command %q", cmd)
		}
	}
}

// startListener runs c, a webhooks listen command, in the background,
// and reports its exit code on the channel it returns.
func startListener(c *cli) <-chan int {
	done := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangBound)
		defer cancel()
		done <- exitCode(run(ctx, c.st), c.stderr)
	}()
	return done
}

// stopListener interrupts the webhooks listen command of c, which
// reports its exit code on done, and waits for it to exit 0.
func stopListener(t *testing.T, c *cli, done <-chan int) {
	t.Helper()
	c.sigs <- struct{}{}
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, c.stderr)
		}
	case <-time.After(hangBound):
		t.Fatal("listener did not stop on interrupt")
	}
}

// TestWebhooksListenKeepsAReusedEndpoint: with --secret, an endpoint
// already registered for --url is reused, said so, and left registered at
// exit (it is the fixed receiver's, not this command's); when none is
// registered, the endpoint the command registers in its place is its own,
// said so, and deleted at exit, though --secret was given.
func TestWebhooksListenKeepsAReusedEndpoint(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 4, Webhooks: sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 1}})
	client, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const fixed = "http://127.0.0.1:1/fixed"
	ep, err := client.RegisterWebhook(ctx, platform.WebhookRegistration{URL: fixed, Description: "fixed receiver", Events: webhook.DefaultEvents})
	if err != nil {
		t.Fatal(err)
	}
	listen := func(url, secret, want string) {
		t.Helper()
		c := newCLI(t, "testdata/pass", simEnv(s), "webhooks", "listen", "--listen", "127.0.0.1:0", "--url", url, "--secret", secret)
		done := startListener(c)
		waitFor(t, c.stdout, regexp.MustCompile(want))
		stopListener(t, c, done)
	}
	listen(fixed, ep.SigningSecret, `; reusing endpoint `+ep.ID+` for `+regexp.QuoteMeta(fixed)+` `)
	if list, err := client.ListWebhooks(ctx); err != nil || len(list) != 1 || list[0].ID != ep.ID {
		t.Fatalf("endpoints after stop = %+v, %v; want the reused %s kept", list, err, ep.ID)
	}

	const other = "http://127.0.0.1:1/other"
	listen(other, ep.SigningSecret, `; registered endpoint whe_\w+ for `+regexp.QuoteMeta(other)+` `)
	if list, err := client.ListWebhooks(ctx); err != nil || len(list) != 1 || list[0].ID != ep.ID {
		t.Errorf("endpoints after stop = %+v, %v; want only %s, the one registered for %s deleted", list, err, ep.ID, other)
	}
}

// webhooks listen verifies the signature header of the target's brand:
// when --brand does not say, as agenttest run does.
func TestWebhooksListenTargetBrand(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 4, Brand: "Acme", TickInterval: 10 * time.Millisecond,
		Outbound: sim.OutboundOptions{Queued: time.Millisecond, Calling: time.Millisecond},
		Webhooks: sim.WebhookOptions{AllowInsecure: true, MaxAttempts: 1}})
	dir := writeTree(t, map[string]string{"agenttest.yaml": "default_target: acme\ntargets:\n  acme:\n    build_url: " + s.BuildURL +
		"\n    account_id: " + s.AccountID + "\n    brand: Acme\n    build_key: ${env:K}\n"})
	c := newCLI(t, dir, map[string]string{"K": s.BuildKey}, "webhooks", "listen", "--listen", "127.0.0.1:0")
	done := startListener(c)
	waitFor(t, c.stdout, regexp.MustCompile(`listening on 127\.0\.0\.1:\d+; registered endpoint whe_\w+`))
	client, err := platform.New(platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey, Brand: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.PlaceCall(context.Background(), platform.CallRequest{To: "+447700900001", AgentID: s.AgentIDs[0], Env: "sandbox"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c.stdout, regexp.MustCompile(`(?m)^\S+Z conversation\.completed conversation=\S+ env=sandbox`))
	stopListener(t, c, done)
	if out := c.stdout.String(); strings.Contains(out, "REJECTED") {
		t.Errorf("a delivery of the platform was refused:\n%s", out)
	}
}
