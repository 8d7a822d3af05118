package main

// Limits of the platform: a large suite against a rate-limited simulator
// slows down instead of failing. The client paces each key (a 429 pauses it
// for its Retry-After and teaches the client the rate), a 429 is never an
// attempt, and only a case that would wait past the run's budget errors.
// The tests count what the server answered and never assert a duration:
// the simulator and the run share a fake clock, or the pauses are served by
// short sleeps.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// countingHandler counts the answers of a handler by status and the most
// requests it served at once.
type countingHandler struct {
	h                   http.Handler
	tooMany, total      atomic.Int64
	inFlight, maxFlight atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for {
		m := c.maxFlight.Load()
		if n <= m || c.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	rec := &statusRecorder{ResponseWriter: w}
	c.h.ServeHTTP(rec, r)
	c.total.Add(1)
	if rec.status == http.StatusTooManyRequests {
		c.tooMany.Add(1)
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// pacedJSON is what these tests read of the JSON report.
type pacedJSON struct {
	Run struct {
		Pacing *struct {
			Limited  int `json:"limited"`
			Accepted int `json:"accepted"`
		} `json:"pacing"`
	} `json:"run"`
	Files []struct {
		Cases []struct {
			Name         string  `json:"name"`
			Status       string  `json:"status"`
			RateLimited  int     `json:"rate_limited"`
			RateWaitedMS float64 `json:"rate_waited_ms"`
			Attempts     []struct {
				Error *struct {
					Kind    string `json:"kind"`
					Message string `json:"message"`
				} `json:"error"`
			} `json:"attempts"`
		} `json:"cases"`
	} `json:"files"`
}

// writeOneTurnSuite writes n scenarios of a greeting and one turn.
func writeOneTurnSuite(t *testing.T, dir string, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("suite: generated\nagent: restaurant\nscenarios:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: opening hours %d\n    greeting: {node: Greeting}\n    turns:\n      - say: when are you open?\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "large.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPaced(t *testing.T, path string) pacedJSON {
	t.Helper()
	var r pacedJSON
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// simBehind starts a simulator with opts behind two test servers, its
// build and runtime handlers wrapped by build and runtime (nil leaves one
// as it is: a test refuses or counts the requests it is about), and
// returns the environment of a run against it.
func simBehind(t *testing.T, opts sim.Options, build, runtime func(http.Handler) http.Handler) map[string]string {
	t.Helper()
	srv, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	bh, rh := srv.BuildHandler(), srv.RuntimeHandler()
	if build != nil {
		bh = build(bh)
	}
	if runtime != nil {
		rh = runtime(rh)
	}
	bs := httptest.NewServer(bh)
	rs := httptest.NewServer(rh)
	t.Cleanup(func() { bs.Close(); rs.Close(); srv.Close() })
	srv.SetURLs(bs.URL, rs.URL)
	info := srv.Info()
	return map[string]string{
		"AGENTTEST_BUILD_URL": info.BuildURL, "AGENTTEST_RUNTIME_URL": info.RuntimeURL, "AGENTTEST_ACCOUNT_ID": info.AccountID,
		"AGENTTEST_BUILD_KEY": info.BuildKey, "AGENTTEST_RUNTIME_KEY": info.RuntimeKey,
	}
}

// refusingFirst passes every request to h, counting them, but answers the
// first one to each path that match picks 429 with a Retry-After of 45s:
// past the 30s bounds of the calls the tests below are about, and within
// the 60s a per-minute limit may ask for.
func refusingFirst(h http.Handler, match func(*http.Request) bool) *countingHandler {
	var refused sync.Map
	return &countingHandler{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if match(r) {
			if _, again := refused.LoadOrStore(r.URL.Path, true); !again {
				w.Header().Set("Retry-After", "45")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		h.ServeHTTP(w, r)
	})}
}

// rateLimitedScenarios is the size of the generated suite, and
// rateLimitedParallel the workers sending it: far more than the
// simulator's 5 requests per second per key let through.
const (
	rateLimitedScenarios = 200
	rateLimitedParallel  = 64
)

func TestRateLimitedSuiteSlowsDownNotFails(t *testing.T) {
	// Parallel: the limit refills on the fake clock, which only the run's
	// waits move, so a harness slowed by the tests beside it meets the
	// same limit (it was serial when the limit ran on real time).
	t.Parallel()
	if testing.Short() {
		t.Skip("runs 200 scenarios")
	}
	// One fake clock for the simulator's rate limit and the run's waits:
	// honouring Retry-After moves it, and the limit refills without any
	// wall time passing.
	clk := fakeclock.New()
	// Each sleeper moves the fake clock, so it runs far faster than the
	// run: sessions must not idle out meanwhile.
	var build *countingHandler
	env := simBehind(t, sim.Options{Seed: 1, RatePerKey: 5, Now: clk.Now, ChatIdleTimeout: 24 * time.Hour},
		func(h http.Handler) http.Handler { build = &countingHandler{h: h}; return build }, nil)

	dir := t.TempDir()
	writeOneTurnSuite(t, dir, rateLimitedScenarios)
	jsonPath := filepath.Join(dir, "result.json")
	c := newCLI(t, dir, env, "run", "large.yaml", "--json", jsonPath, "--parallel", fmt.Sprint(rateLimitedParallel))
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitOK, tail(c.stdout.String(), 3000), c.stderr)
	}
	r := readPaced(t, jsonPath)
	passed, limitedCases := 0, 0
	for _, f := range r.Files {
		for _, cs := range f.Cases {
			if cs.Status == "passed" {
				passed++
			}
			if cs.RateLimited > 0 {
				limitedCases++
			}
		}
	}
	// No case errored, and none is flaky: waiting on a rate limit is
	// not a retry.
	if passed != rateLimitedScenarios {
		t.Errorf("%d of %d scenarios passed\n%s", passed, rateLimitedScenarios, tail(c.stdout.String(), 3000))
	}
	// The first wave of workers met the limit all at once (5 of the
	// simulator's burst, 32 requests in flight while the client learns).
	if limitedCases < 20 || build.tooMany.Load() == 0 {
		t.Errorf("%d cases met a 429 (%d answers 429): the test did not reach the limit", limitedCases, build.tooMany.Load())
	}
	p := r.Run.Pacing
	if p == nil || int64(p.Limited) != build.tooMany.Load() || int64(p.Accepted) != build.total.Load()-build.tooMany.Load() {
		t.Errorf("JSON pacing %+v, server answered %d of %d requests with 429", p, build.tooMany.Load(), build.total.Load())
	}
	if !regexp.MustCompile(`(?m)^paced at [0-9.]+ req/s by [0-9]+ rate limits; a scenario waited `).MatchString(c.stdout.String()) {
		t.Errorf("no pacing line in the summary:\n%s", tail(c.stdout.String(), 500))
	}
	if m := build.maxFlight.Load(); m > rateLimitedParallel {
		t.Errorf("%d requests at once, above --parallel %d", m, rateLimitedParallel)
	}
	t.Logf("%d requests, %d answered 429 (%d cases), at most %d at once", build.total.Load(), build.tooMany.Load(), limitedCases, build.maxFlight.Load())
}

func TestRateLimitWaitBudget(t *testing.T) {
	t.Parallel()
	// Every request is refused with Retry-After 1s, and each call waits
	// out its pauses within a budget of 3.5s, then errors at the 429
	// after which a fourth pause would pass it. The deployment read
	// before the first case errors that way at its fourth 429; each case
	// then starts in the pause that the 429 before it began, and errors
	// at its third. The run's clock is a fake one that only those pauses
	// move: on the real clock, the time a loaded machine takes between a
	// 429 and the next wait was charged too, and the error could say
	// "the next try could go in 999ms" instead of 1s.
	dir := t.TempDir()
	writeOneTurnSuite(t, dir, 2)
	jsonPath := filepath.Join(dir, "result.json")
	c := newCLI(t, dir, map[string]string{simFlagsEnv: "--error-429 1 --retry-after 1s"},
		"run", "large.yaml", "--json", jsonPath, "--parallel", "1", "--rate-wait", "3.5s", "--retries", "2")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	if code := c.run(t); code == exitOK {
		t.Fatalf("exit 0 although every request was refused\n%s", c.stdout)
	}
	r := readPaced(t, jsonPath)
	const msg = `rate limited: waited 3s for POST /v1/agents/restaurant/debug-chat (3 answers 429); ` +
		`the next try could go in 1s, past the wait budget of 3.5s per scenario (raise it with --rate-wait (AGENTTEST_RATE_WAIT) or the target's rate_wait)`
	for _, cs := range r.Files[0].Cases {
		// One attempt: --retries would only wait more.
		if cs.Status != "errored" || len(cs.Attempts) != 1 || cs.Attempts[0].Error == nil || cs.Attempts[0].Error.Kind != "rate_limited" {
			t.Errorf("%s: %s, %d attempts: %+v", cs.Name, cs.Status, len(cs.Attempts), cs.Attempts)
			continue
		}
		if got := cs.Attempts[0].Error.Message; got != msg || cs.RateLimited != 3 || cs.RateWaitedMS != 3000 {
			t.Errorf("%s: rate_limited %d, waited %vms: %s\nwant rate_limited 3, waited 3000ms: %s", cs.Name, cs.RateLimited, cs.RateWaitedMS, got, msg)
		}
	}
	if !strings.Contains(c.stdout.String(), "read failed: rate limited: waited 3s for GET /v1/agents/restaurant/deployments/active (4 answers 429); the next try could go in 1s") {
		t.Errorf("the console does not show the deployment read's error:\n%s", c.stdout)
	}
	if !strings.Contains(c.stdout.String(), msg) {
		t.Errorf("the console does not show the error:\n%s", c.stdout)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestRateLimitedRunLevelCalls: the run's own calls, the deployment reads
// before and after the cases and the alert gate's read of the firing
// alerts, wait on a rate limit as the scenarios' calls do, and the run's
// pacing counts their 429s. A Retry-After longer than what was left of
// the turn timeout (45s; a per-minute limit answers up to 60s) errored
// the gate (exit 4: a rate-limited platform failed the run) and left the
// deployments unread (a report the promotion gate then refuses), and
// neither 429 was in run.pacing.
func TestRateLimitedRunLevelCalls(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	// The first read of each run-level endpoint is refused.
	var build *countingHandler
	env := simBehind(t, sim.Options{Seed: 1, Now: clk.Now, ChatIdleTimeout: 24 * time.Hour}, func(h http.Handler) http.Handler {
		build = refusingFirst(h, func(r *http.Request) bool {
			return r.Method == http.MethodGet && (r.URL.Path == "/v1/alerts" || strings.HasSuffix(r.URL.Path, "/deployments/active"))
		})
		return build
	}, nil)

	dir := t.TempDir()
	writeOneTurnSuite(t, dir, 2)
	jsonPath := filepath.Join(dir, "result.json")
	c := newCLI(t, dir, env, "run", "large.yaml", "--gate-alerts", "--json", jsonPath)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	out := c.expect(t, exitOK, "\nalert gate passed\n", "\nstatus: passed\n")
	if strings.Contains(out, "read failed") {
		t.Errorf("a deployment read failed on a rate limit:\n%s", out)
	}
	if build.tooMany.Load() != 2 {
		t.Fatalf("the server answered %d requests 429, want 2", build.tooMany.Load())
	}
	r := readPaced(t, jsonPath)
	p := r.Run.Pacing
	if p == nil || int64(p.Limited) != build.tooMany.Load() || int64(p.Accepted) != build.total.Load()-build.tooMany.Load() {
		t.Errorf("JSON pacing %+v, server answered %d of %d requests with 429", p, build.tooMany.Load(), build.total.Load())
	}
}

// TestRateLimitedConfirmation: a read of the Conversations API (the
// runtime host, its own key and pacer) refused with a Retry-After longer
// than what is left of the confirmation's bound waits, as every call of
// a case does, and the case passes: the bound is how long the platform
// may take to record the conversation, not how long its rate limit may
// hold the read. The 429 ended the read at once and errored the case.
// The read after the wait finds no record yet (the platform records it
// a moment later): the poll goes on, as the wait is left out of the
// bound, where it stopped at the 30s of the bound that the wait had
// spent and the case failed on a conversation "not recorded within 30s".
func TestRateLimitedConfirmation(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var (
		reads   atomic.Int32
		runtime *countingHandler
	)
	env := simBehind(t, sim.Options{Seed: 1, Now: clk.Now, ChatIdleTimeout: 24 * time.Hour}, nil, func(h http.Handler) http.Handler {
		runtime = &countingHandler{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/") {
				switch reads.Add(1) {
				case 1:
					w.Header().Set("Retry-After", "45")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				case 2: // not recorded yet: the simulator's 404 for another id
					r = r.Clone(r.Context())
					r.URL.Path += "-not-yet"
				}
			}
			h.ServeHTTP(w, r)
		})}
		return runtime
	})

	dir := writeTree(t, map[string]string{"confirm.yaml": "suite: confirm\nagent: restaurant\nscenarios:\n" +
		"  - name: recorded as a web chat\n    turns:\n      - say: when are you open?\n    confirm: {conversation: {channel: WEBCHAT}}\n"})
	jsonPath := filepath.Join(dir, "result.json")
	c := newCLI(t, dir, env, "run", "confirm.yaml", "--json", jsonPath)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	c.expect(t, exitOK, "\nstatus: passed\n")
	if runtime.tooMany.Load() != 1 {
		t.Fatalf("the server answered %d requests 429, want 1", runtime.tooMany.Load())
	}
	r := readPaced(t, jsonPath)
	if cs := r.Files[0].Cases[0]; cs.Status != "passed" || cs.RateLimited != 1 || cs.RateWaitedMS != 45000 {
		t.Errorf("case %s, rate_limited %d, waited %vms; want passed, 1, 45000ms", cs.Status, cs.RateLimited, cs.RateWaitedMS)
	}
}

// TestRateLimitedWebhookRegistration: the registration of the run's
// webhook endpoint waits on a rate limit as the runner's calls do, and
// run.pacing counts its 429. A Retry-After longer than the turn timeout
// (which bounds each of its calls) failed the registration, and every
// scenario that confirms webhooks errored; once it waited, its 429 was
// missing from run.pacing. The deletion of the endpoint at exit waits
// too, where its bound of 5s left the endpoint registered.
func TestRateLimitedWebhookRegistration(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var build, runtime *countingHandler
	env := simBehind(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}}, func(h http.Handler) http.Handler {
		build = refusingFirst(h, func(r *http.Request) bool {
			return r.URL.Path == "/v1/webhooks/endpoints" || r.Method == http.MethodDelete
		})
		return build
	}, func(h http.Handler) http.Handler {
		runtime = &countingHandler{h: h}
		return runtime
	})

	dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
	jsonPath := filepath.Join(dir, "result.json")
	c := newCLI(t, dir, env, "run", "--webhook-listen", "127.0.0.1:0", "hooks.yaml", "--json", jsonPath)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	out := c.expect(t, exitOK, "\nstatus: passed\n")
	if strings.Contains(out, "could not be registered") || strings.Contains(out, "could not delete") || build.tooMany.Load() != 2 {
		t.Fatalf("%d answers 429:\n%s", build.tooMany.Load(), out)
	}
	// The endpoint is deleted after the report is written: the
	// platform answered two requests more than the report can count,
	// the deletion's 429 and the deletion.
	r := readPaced(t, jsonPath)
	took := build.total.Load() + runtime.total.Load() - 2
	if p := r.Run.Pacing; p == nil || p.Limited != 1 || int64(p.Accepted) != took-1 {
		t.Errorf("JSON pacing %+v; the platform answered 2 requests 429 and took %d, the last the deletion", p, took)
	}
	client, err := platform.New(platform.Config{BuildURL: env["AGENTTEST_BUILD_URL"], BuildKey: env["AGENTTEST_BUILD_KEY"]})
	if err != nil {
		t.Fatal(err)
	}
	if list, err := client.ListWebhooks(context.Background()); err != nil || len(list) != 0 {
		t.Errorf("endpoints after the run: %+v, %v", list, err)
	}
}

// TestRateWaitFlagOverTarget: --rate-wait wins over the target's
// rate_wait (flag > environment > agenttest.yaml): --rate-wait 0 errors a
// case at its first 429 however long the target would let it wait.
func TestRateWaitFlagOverTarget(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Faults: sim.Faults{Error429: 1, RetryAfter: time.Second}})
	dir := t.TempDir()
	writeOneTurnSuite(t, dir, 1)
	cfg := "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    build_key: ${env:BUILD_KEY}\n    rate_wait: 1m\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, dir, map[string]string{"BUILD_KEY": s.BuildKey}, "run", "large.yaml", "--rate-wait", "0")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	// The case's first call is held by the pause of the deployment
	// read's 429, and says so.
	c.expect(t, exitErrored, "greeting: rate_limited: rate limited: waited 0s for POST /v1/agents/restaurant/debug-chat (none of this scenario's calls was answered 429: "+
		"the platform answered 429 to GET /v1/agents/restaurant/deployments/active, sent with the same key, and every call of the key waits as it asked); the next try could go in 1s, past the wait budget of 0s per scenario")
}

// TestMaxReplyBytesFlagOverTarget: --max-reply-bytes wins over the
// target's max_reply_bytes: a reply over the flag's bound errors its case
// though the target would take it.
func TestMaxReplyBytesFlagOverTarget(t *testing.T) {
	t.Parallel()
	def, diags := agent.Load("long.yaml", []byte("id: long\nstart: Hello\nnodes:\n  Hello:\n    say: "+strings.Repeat("la", 4096)+"\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := simtest.Start(t, sim.Options{Seed: 1, Agents: []*agent.Definition{def}})
	dir := writeTree(t, map[string]string{
		"agenttest.yaml": "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    build_key: ${env:BUILD_KEY}\n    max_reply_bytes: 1048576\n",
		"s.yaml":         "suite: s\nagent: long\nscenarios:\n  - name: sings\n    greeting: {response: {contains: la}}\n",
	})
	c := newCLI(t, dir, map[string]string{"BUILD_KEY": s.BuildKey}, "run", "s.yaml", "--max-reply-bytes", "4096")
	c.expect(t, exitErrored, "reply exceeds the limit of 4 KiB")
}

// TestRateLimitedGate: the promotion gate's read of the deployment active
// now waits on a rate limit as the run's own reads do. A Retry-After of
// 45s, past the 30s turn timeout that bounds the read, refused the
// promotion ("cannot read the deployment active now: ... 429", exit 4)
// where waiting would have worked: the read had no wait account, so its
// bound was a plain deadline, which the client's pause would outlast.
func TestRateLimitedGate(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var gating atomic.Bool
	var build *countingHandler
	env := simBehind(t, sim.Options{Seed: 1, Now: clk.Now, ChatIdleTimeout: 24 * time.Hour}, func(h http.Handler) http.Handler {
		build = refusingFirst(h, func(r *http.Request) bool {
			return gating.Load() && strings.HasSuffix(r.URL.Path, "/deployments/active")
		})
		return build
	}, nil)
	dir := t.TempDir()
	writeOneTurnSuite(t, dir, 1)
	report := filepath.Join(dir, "r.json")
	c := newCLI(t, dir, env, "run", "large.yaml", "--json", report)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	c.expect(t, exitOK, "\nstatus: passed\n")

	gating.Store(true)
	before := clk.Now()
	g := newCLI(t, dir, env, "gate", report)
	g.st.Now, g.st.Sleep = clk.Now, clk.Sleep
	g.expect(t, exitOK, "gate: passed")
	if build.tooMany.Load() != 1 {
		t.Errorf("the server answered %d requests 429, want 1", build.tooMany.Load())
	}
	if waited := clk.Now().Sub(before); waited < 45*time.Second {
		t.Errorf("the gate waited %s on the fake clock, want the Retry-After's 45s", waited)
	}
}

// TestRateLimitedWebhooksListen: agenttest webhooks listen registers its
// endpoint through calls bounded by the turn timeout (5s here, from the
// config file's run section), as run does, and waits out a Retry-After
// longer than that bound (10s: within the test's own 30s bound on the
// command). It exited 4 with the registration's 429 instead.
func TestRateLimitedWebhooksListen(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var refused atomic.Bool
	var build *countingHandler
	env := simBehind(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}}, func(h http.Handler) http.Handler {
		build = &countingHandler{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/webhooks/endpoints" && r.Method == http.MethodPost && refused.CompareAndSwap(false, true) {
				w.Header().Set("Retry-After", "10")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			h.ServeHTTP(w, r)
		})}
		return build
	}, nil)
	dir := writeTree(t, map[string]string{"agenttest.yaml": "run:\n  turn_timeout: 5s\n"})
	c := newCLI(t, dir, env, "webhooks", "listen", "--listen", "127.0.0.1:0")
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	done := startListener(c)
	waitFor(t, c.stdout, regexp.MustCompile(`listening on 127\.0\.0\.1:\d+; registered endpoint whe_\w+ `))
	stopListener(t, c, done)
	if build.tooMany.Load() != 1 {
		t.Errorf("the server answered %d requests 429, want 1", build.tooMany.Load())
	}
	if waited := clk.Now().Sub(fakeclock.Start); waited < 10*time.Second {
		t.Errorf("the registration waited %s on the fake clock, want the Retry-After's 10s", waited)
	}
}

// TestGateRateWaitHint: a read of agenttest gate refused with a
// Retry-After past the wait budget (the target's rate_wait, 1s here)
// says so and how to raise the budget with what the gate reads: the
// target's rate_wait. It named --rate-wait and AGENTTEST_RATE_WAIT, which
// the gate neither has nor reads.
func TestGateRateWaitHint(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	var gating atomic.Bool
	env := simBehind(t, sim.Options{Seed: 1, Now: clk.Now, ChatIdleTimeout: 24 * time.Hour}, func(h http.Handler) http.Handler {
		return refusingFirst(h, func(r *http.Request) bool {
			return gating.Load() && strings.HasSuffix(r.URL.Path, "/deployments/active")
		})
	}, nil)
	cfg := "default_target: t\ntargets:\n  t:\n    build_url: " + env["AGENTTEST_BUILD_URL"] + "\n    build_key: ${env:BUILD_KEY}\n    rate_wait: 1s\n"
	dir := writeTree(t, map[string]string{"agenttest.yaml": cfg})
	writeOneTurnSuite(t, dir, 1)
	vars := map[string]string{"BUILD_KEY": env["AGENTTEST_BUILD_KEY"]}
	report := filepath.Join(dir, "r.json")
	c := newCLI(t, dir, vars, "run", "large.yaml", "--json", report)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	c.expect(t, exitOK, "\nstatus: passed\n")

	gating.Store(true)
	g := newCLI(t, dir, vars, "gate", report)
	g.st.Now, g.st.Sleep = clk.Now, clk.Sleep
	out := g.expect(t, exitErrored, "cannot read the deployment active now: rate limited: waited 0s for GET /v1/agents/restaurant/deployments/active (1 answer 429); the next try could go in 45s, past the wait budget of 1s per scenario (raise it with the target's rate_wait)")
	if strings.Contains(out, "--rate-wait") || strings.Contains(out, "AGENTTEST_RATE_WAIT") {
		t.Errorf("the gate names a flag or variable it does not read:\n%s", out)
	}
}
