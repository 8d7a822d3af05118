package main

// Limits of the platform: a large suite against a rate-limited simulator
// slows down instead of failing. The client caps its requests per host
// and waits out each 429's Retry-After, so every scenario passes; the test
// counts the 429s the server sent and never asserts a duration.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
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

// rateLimitedScenarios is the size of the generated suite.
const rateLimitedScenarios = 400

func TestRateLimitedSuiteSlowsDownNotFails(t *testing.T) {
	// Not parallel: the harness must be able to outrun the limit.
	if testing.Short() {
		t.Skip("runs 400 scenarios")
	}
	// One fake clock for the simulator's rate limit and the run's waits:
	// honouring Retry-After moves it, and the limit refills without any
	// wall time passing.
	clk := fakeclock.New()
	srv, err := sim.New(sim.Options{Seed: 1, RatePerKey: 200, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	build := &countingHandler{h: srv.BuildHandler()}
	bs := httptest.NewServer(build)
	rs := httptest.NewServer(srv.RuntimeHandler())
	t.Cleanup(func() { bs.Close(); rs.Close(); srv.Close() })
	srv.SetURLs(bs.URL, rs.URL)
	info := srv.Info()

	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("suite: generated\nagent: restaurant\nscenarios:\n")
	for i := range rateLimitedScenarios {
		fmt.Fprintf(&b, "  - name: opening hours %d\n    greeting: {node: Greeting}\n    turns:\n      - say: when are you open?\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "large.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "result.json")
	env := map[string]string{
		"AGENTTEST_BUILD_URL": info.BuildURL, "AGENTTEST_RUNTIME_URL": info.RuntimeURL, "AGENTTEST_ACCOUNT_ID": info.AccountID,
		"AGENTTEST_BUILD_KEY": info.BuildKey, "AGENTTEST_RUNTIME_KEY": info.RuntimeKey,
	}
	c := newCLI(t, dir, env, "run", "large.yaml", "--json", jsonPath)
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, exitOK, tail(c.stdout.String(), 3000), c.stderr)
	}
	var r drillJSON
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, f := range r.Files {
		for _, cs := range f.Cases {
			if cs.Status == "passed" {
				passed++
			}
		}
	}
	if passed != rateLimitedScenarios {
		t.Errorf("%d of %d scenarios passed", passed, rateLimitedScenarios)
	}
	if build.tooMany.Load() == 0 {
		t.Errorf("the simulator never answered 429: the test did not reach the limit (%d requests)", build.total.Load())
	}
	if m := build.maxFlight.Load(); m > 64 {
		t.Errorf("%d requests at once, above the default per-host cap of 64", m)
	}
	t.Logf("%d requests, %d answered 429, at most %d at once", build.total.Load(), build.tooMany.Load(), build.maxFlight.Load())
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
