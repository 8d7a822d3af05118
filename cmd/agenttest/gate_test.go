package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// wrapBuild serves the simulator's build host behind a handler that may
// answer a request itself (intercept returns true) or act before the
// simulator answers: a platform with a quirk, or a change at a chosen
// moment of a run. It returns the simulator's environment for a run,
// pointed at the wrapper.
func wrapBuild(t *testing.T, s *simtest.Sim, intercept func(w http.ResponseWriter, r *http.Request) bool) map[string]string {
	t.Helper()
	h := s.Server.BuildHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if intercept(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	env := simEnv(s)
	env["AGENTTEST_BUILD_URL"] = srv.URL
	return env
}

// buildHold fronts the simulator's build API (holdingBuild): once on, it
// holds every request until the client gives up on it, counting them, so
// no case still running can finish by itself, however slow the machine.
type buildHold struct {
	on   atomic.Bool
	held atomic.Int32
}

// holdingBuild is wrapBuild with a buildHold, off at first; the requests
// it holds are let go when the test ends, never keeping the server from
// closing.
func holdingBuild(t *testing.T, s *simtest.Sim) (map[string]string, *buildHold) {
	t.Helper()
	h := &buildHold{}
	release := make(chan struct{})
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if !h.on.Load() {
			return false
		}
		h.held.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	t.Cleanup(func() { close(release) }) // runs before wrapBuild's Close
	return env, h
}

// interruptAt interrupts c's run once its output holds mark, turning h
// on first: from then on the platform holds every call until the
// interruption cuts it off, so no case still running can finish.
func (h *buildHold) interruptAt(c *cli, mark string) {
	var once sync.Once
	c.stdout.notify = func(all string) {
		if strings.Contains(all, mark) {
			once.Do(func() {
				h.on.Store(true)
				c.sigs <- struct{}{}
			})
		}
	}
}

// isDeploymentRead reports whether r reads deployments/active.
func isDeploymentRead(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/deployments/active")
}

// jsonReport is what these tests read of a JSON report.
type jsonReport struct {
	Run struct {
		Status string `json:"status"`
	} `json:"run"`
	Deployments []struct {
		Agent, Env, ID, Note string
		AfterID              string `json:"after_id"`
		Changed, Verified    bool
	} `json:"deployments"`
}

func readJSONReport(t *testing.T, path string) jsonReport {
	t.Helper()
	return decodeFile[jsonReport](t, path)
}

// decodeFile reads the JSON file at path into a T.
func decodeFile[T any](t *testing.T, path string) T {
	t.Helper()
	var doc T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestRunRecordsDeployment: the deployment a run tested is in its first
// lines, in the JSON report and in the JUnit properties.
func TestRunRecordsDeployment(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	dep, err := s.Server.ActiveDeployment("restaurant", "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := newCLI(t, "testdata/pass", simEnv(s), "run", "--parallel", "1", "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "j.xml"))
	out := c.expect(t, exitOK)
	lines := strings.Split(out, "\n")
	if want := "deployment of restaurant in sandbox: " + dep.ID + " (version 1.2)"; len(lines) < 2 || lines[1] != want {
		t.Errorf("second line %q, want %q\n%s", lines[1], want, out)
	}
	doc := readJSONReport(t, filepath.Join(dir, "r.json"))
	if len(doc.Deployments) != 1 || doc.Deployments[0].ID != dep.ID || doc.Deployments[0].AfterID != dep.ID || !doc.Deployments[0].Verified {
		t.Errorf("JSON deployments %+v, want %s verified", doc.Deployments, dep.ID)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "j.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<property name="deployment.restaurant.sandbox" value="` + dep.ID + `">`, `<property name="deployment" value="` + dep.ID + `">`} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("JUnit lacks %s", want)
		}
	}
}

// TestRunDeploymentChangedMidRun: a publish to sandbox while the run goes
// on (here when the second conversation opens) ends the run errored,
// exit 4, naming both deployments.
func TestRunDeploymentChangedMidRun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	before, err := s.Server.ActiveDeployment("restaurant", "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	var starts atomic.Int64
	var after atomic.Value
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/debug-chat") && starts.Add(1) == 2 {
			d, err := s.Server.Publish("restaurant", "")
			if err != nil {
				t.Error(err)
			}
			after.Store(d.ID)
		}
		return false
	})
	dir := t.TempDir()
	report, junitReport := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.xml")
	c := newCLI(t, "testdata/pass", env, "run", "--parallel", "1", "--json", report, "--junit", junitReport)
	code := c.run(t)
	out := c.stdout.String() + c.stderr.String()
	id, _ := after.Load().(string)
	want := "deployment of restaurant changed during the run: " + before.ID + " → " + id
	if code != exitErrored || id == "" || !strings.Contains(out, want) || !strings.Contains(out, "status: errored ("+want) {
		t.Fatalf("exit %d, want 4 and %q:\n%s", code, want, out)
	}
	doc := readJSONReport(t, report)
	if doc.Run.Status != "errored" || len(doc.Deployments) != 1 || !doc.Deployments[0].Changed || doc.Deployments[0].AfterID != id {
		t.Errorf("JSON %+v", doc)
	}
	// A CI server's test view shows JUnit's counts: not all green.
	xmlDoc, err := os.ReadFile(junitReport)
	if err != nil {
		t.Fatal(err)
	}
	if x := string(xmlDoc); !strings.Contains(x, `<testcase name="deployment of restaurant in sandbox unchanged" classname="run"`) ||
		!strings.Contains(x, `<error message="`+want+` (errored, not failed: the deployment changed under the run, not by the agent&#39;s doing; no verdict is tied to one deployment: run the tests again on the new one)" type="deployment_changed">`) || !strings.Contains(x, `failures="0" errors="1">`) {
		t.Errorf("JUnit does not count the change as an error:\n%s", x)
	}
	// The gate refuses that report, whatever is active now.
	g := newCLI(t, "testdata/pass", env, "gate", report)
	g.expect(t, exitFailed, "the run did not pass: its status is errored", want)
}

// TestRunWithoutDeploymentEndpoint: a platform that does not serve
// deployments/active (404 on that path only) runs as before, says so once,
// and its report cannot pass the gate.
func TestRunWithoutDeploymentEndpoint(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if isDeploymentRead(r) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"no such route"}`)
			return true
		}
		return false
	})
	report := filepath.Join(t.TempDir(), "r.json")
	c := newCLI(t, "testdata/pass", env, "run", "--json", report)
	out := c.expect(t, exitOK, "status: passed")
	if n := strings.Count(out, "answered 404 to GET /v1/agents/{agentId}/deployments/active (it does not serve the endpoint"); n != 1 {
		t.Errorf("the missing endpoint is said %d times, want once:\n%s", n, out)
	}
	doc := readJSONReport(t, report)
	if doc.Run.Status != "passed" || len(doc.Deployments) != 1 || doc.Deployments[0].ID != "" || !strings.Contains(doc.Deployments[0].Note, "404") {
		t.Errorf("JSON %+v", doc)
	}
	g := newCLI(t, "testdata/pass", env, "gate", report)
	g.expect(t, exitFailed, "restaurant in sandbox: the report holds no deployment evidence")
}

// TestGate: the gate passes a fresh green report of the deployment active
// now, and refuses every other with its reason.
func TestGate(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// suite and args make the report; edit changes it afterwards;
		// before runs before the gate.
		suite  string
		args   []string
		edit   func(doc map[string]any)
		before func(s *simtest.Sim)
		// later is how long after the run the gate runs; gateArgs its
		// flags; intercept answers the gate's reads.
		later     time.Duration
		gateArgs  []string
		gateEnv   map[string]string
		intercept func(w http.ResponseWriter, r *http.Request) bool
		code      int
		want      []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		s := simtest.Start(t, sim.Options{Seed: 2})
		dir := t.TempDir()
		report := filepath.Join(dir, "r.json")
		suite := tc.suite
		if suite == "" {
			suite = "testdata/pass"
		}
		c := newCLI(t, suite, simEnv(s), append([]string{"run", "--json", report}, tc.args...)...)
		c.run(t)
		if tc.edit != nil {
			editReport(t, report, tc.edit)
		}
		if tc.before != nil {
			tc.before(s)
		}
		env := simEnv(s)
		if tc.intercept != nil {
			// The gate reads through the wrapper; the report says it
			// tested the wrapper's URL, so only the answers differ.
			env = wrapBuild(t, s, tc.intercept)
			editReport(t, report, func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = env["AGENTTEST_BUILD_URL"] })
		}
		maps.Copy(env, tc.gateEnv)
		g := newCLI(t, dir, env, append([]string{"gate", report}, tc.gateArgs...)...)
		g.st.Now = func() time.Time { return time.Now().Add(tc.later) }
		g.expect(t, tc.code, tc.want...)
	}
	for _, tc := range []testCase{
		{name: "fresh and green", code: exitOK, want: []string{"gate: passed", "run passed, ended ", "ago)\n  tested 2 cases: 2 passed\n  restaurant in sandbox: tested dep-"}},
		{name: "stale", later: 25 * time.Hour, code: exitFailed, want: []string{"older than --max-age 24h0m0s"}},
		{name: "stale but within --max-age", later: 25 * time.Hour, gateArgs: []string{"--max-age", "48h"}, code: exitOK},
		{name: "failed", suite: "testdata/fail", code: exitFailed, want: []string{"the run did not pass: its status is failed: a check failed", "\n  tested 2 cases: 1 passed, 1 failed\n"}},
		// A quarantined case does not gate the run, and the header says
		// so rather than count its failure beside a passing verdict:
		// before, "tested 2 cases: 1 passed, 1 failed" then "gate: passed".
		{name: "a quarantined failure", suite: "testdata/quarantined", code: exitOK,
			want: []string{"\n  tested 2 cases: 1 passed, 1 quarantined (not gating)\n", "gate: passed"}},
		// A run of quarantined cases alone passes (exit 0: they ran),
		// failing or not, and tested nothing that gates: before, "gate:
		// passed" over "tested 1 case: 1 quarantined (not gating)".
		{name: "every case quarantined", suite: "testdata/quarantined", args: []string{"--name", "opens on Sundays"}, code: exitFailed,
			want: []string{"\n  tested 1 case: 1 quarantined (not gating)\n", "gate: refused\n",
				"gate: every case the run tested is quarantined (1): a quarantined case never gates a run, whatever its outcome, so the report vouches for nothing"}},
		{name: "empty", args: []string{"--name", "no such scenario", "--allow-empty"}, code: exitFailed,
			want: []string{"its status is empty: nothing was tested", "the report records no deployment", "\n  tested no case\n"}},
		{name: "replaced", before: func(s *simtest.Sim) { s.Server.Publish("restaurant", "") }, code: exitFailed,
			want: []string{"restaurant in sandbox: the report tested deployment dep-", "is active now: test the deployment you promote"}},
		{name: "a shard's report", args: []string{"--shard", "1/2"}, code: exitFailed,
			want: []string{"the report is shard 1 of 2: it tested its share of the selection's 2 scenarios, not all of them"}},
		{name: "a sandbox report gated for pre-release", gateEnv: map[string]string{"AGENTTEST_ENV": "pre-release"}, code: exitFailed,
			want: []string{`restaurant: the report tested sandbox, not pre-release, the environment of the gate's target "env"`}},
		{name: "a pre-release report gated for pre-release", args: []string{"--env", "pre-release"},
			gateEnv: map[string]string{"AGENTTEST_ENV": "pre-release"}, code: exitOK, want: []string{"restaurant in pre-release: tested dep-"}},
		{name: "another environment replaced", before: func(s *simtest.Sim) { s.Server.Promote("restaurant", "pre-release", "") }, code: exitOK},
		{name: "written before deployments were recorded", edit: func(doc map[string]any) { delete(doc, "deployments") }, code: exitFailed,
			want: []string{"the report records no deployment: it was written before agenttest recorded deployments"}},
		// The client calls https://b/ as https://b: one platform, not
		// "the report tested the platform at http://127.0.0.1:1/, the
		// gate's target is http://127.0.0.1:1".
		{name: "the platform written with a trailing slash", edit: func(doc map[string]any) {
			tgt := doc["target"].(map[string]any)
			tgt["build_url"] = strings.Replace(tgt["build_url"].(string), "http://", "HTTP://", 1) + "/"
		}, code: exitOK, want: []string{"gate: passed"}},
		{name: "another platform", edit: func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = "https://build.eu.example.com" },
			code: exitFailed, want: []string{"the report tested the platform at https://build.eu.example.com"}},
		// A report states the verdict of its cases and the deployment of
		// each agent they ran: one edited to say otherwise vouches for
		// nothing, and one from ahead of the gate's clock would stay
		// fresh until that date.
		{name: "a failed run edited to say passed", suite: "testdata/fail", edit: func(doc map[string]any) { doc["run"].(map[string]any)["status"] = "passed" },
			code: exitFailed, want: []string{"the report says its run passed, but its cases say failed (a check failed)", "\n  tested 2 cases: 1 passed, 1 failed\n"}},
		{name: "a deployment taken out", edit: func(doc map[string]any) { doc["deployments"] = []any{} }, code: exitFailed,
			want: []string{"the report records no deployment", "restaurant in sandbox: cases ran there, but the report records no deployment of it"}},
		{name: "from the future", later: -time.Hour, code: exitFailed,
			want: []string{" ahead of this clock)\n", " after the gate's clock (more than the 5m0s two clocks may differ)"}},
		// Further ahead than a time.Duration reaches: it passed, "ended
		// 9999-12-31T23:59:59Z (-2562047h47m16.854775808s ahead of this
		// clock)".
		{name: "from the far future", edit: func(doc map[string]any) { doc["run"].(map[string]any)["started"] = "9999-12-31T23:59:59Z" },
			code: exitFailed, want: []string{"ended 9999-12-31T23:59:59Z (2562047h47m16.854775807s ahead of this clock)\n",
				"the report's run ended 9999-12-31T23:59:59Z, 2562047h47m0s after the gate's clock"}},
		{name: "not a report", edit: func(doc map[string]any) { doc["schema"] = "something/else" }, code: exitUsage,
			want: []string{"not an agenttest JSON report"}},
		{name: "the platform fails now", code: exitErrored, want: []string{"cannot read the deployment active now"},
			intercept: func(w http.ResponseWriter, r *http.Request) bool {
				if isDeploymentRead(r) {
					w.WriteHeader(http.StatusInternalServerError)
					return true
				}
				return false
			}},
		// A platform that answers 404 does not serve the read, or no
		// longer knows the agent (deleted since the run): no retry of
		// the gate (exit 4) can tie the report to what is promoted, and
		// the reason says both.
		{name: "the platform does not serve deployments now", code: exitFailed,
			want: []string{"gate: restaurant in sandbox: the platform answers 404 to GET /v1/agents/{agentId}/deployments/active now (it does not serve the endpoint, or does not know the agent)"},
			intercept: func(w http.ResponseWriter, r *http.Request) bool {
				if isDeploymentRead(r) {
					w.WriteHeader(http.StatusNotFound)
					return true
				}
				return false
			}},
		// A platform that ignores ?environment= answers with its sandbox
		// deployment when asked for pre-release: an answer, which every
		// retry gets again, so a refusal with the reason, as for a 404.
		// Before, "cannot read the deployment active now" and exit 4,
		// whose "run the gate again" no run of the gate could satisfy.
		{name: "the platform ignores ?environment= now", args: []string{"--env", "pre-release"},
			gateEnv: map[string]string{"AGENTTEST_ENV": "pre-release"}, code: exitFailed,
			want: []string{"restaurant in pre-release: tested dep-", ", active now unknown (the platform answered for another environment)\n  paths the run was given: .\ngate: refused\n",
				"gate: restaurant in pre-release: the platform answers for another environment now: asked for the active pre-release deployment, the platform answered with its sandbox deployment dep-sandbox (it may not support ?environment=): nothing ties the report to the pre-release deployment that would be promoted, and no retry of the gate would"},
			intercept: func(w http.ResponseWriter, r *http.Request) bool {
				if isDeploymentRead(r) && r.URL.Query().Get("environment") != "" {
					io.WriteString(w, `{"id": "dep-sandbox", "environment": "sandbox"}`)
					return true
				}
				return false
			}},
		// --agent names the agent the pipeline promotes: a report of
		// another agent's suites vouches for that agent only. Before,
		// "gate: passed" over the clinic's deployment in the job that
		// promotes the restaurant.
		{name: "the agent promoted", gateArgs: []string{"--agent", "restaurant"}, code: exitOK, want: []string{"gate: passed"}},
		{name: "another agent promoted", gateArgs: []string{"--agent", "clinic"}, code: exitFailed,
			want: []string{"restaurant in sandbox: tested dep-", "gate: refused\n",
				"gate: clinic: the report did not test it in sandbox (it tested restaurant in sandbox): it cannot vouch for the agent promoted"}},
		{name: "another agent promoted, by its variable", gateEnv: map[string]string{"AGENTTEST_GATE_AGENT": "restaurant,clinic"}, code: exitFailed,
			want: []string{"gate: clinic: the report did not test it in sandbox"}},
		// Without --agent the gate vouches for every deployment the
		// report records: the clinic's was read for a quarantined case
		// alone. Before, "clinic in sandbox: tested dep-..." and "gate:
		// passed".
		{name: "an agent no case gated", suite: "testdata/quarantinedagent", code: exitFailed,
			want: []string{"\n  tested 2 cases: 1 passed, 1 quarantined (not gating)\n", "gate: refused\n",
				"gate: clinic in sandbox: no case of it gates (each is quarantined, skipped or not compared), and the gate would vouch for its deployment all the same: test it, or name the agents promoted with --agent"}},
		{name: "an agent no case gated, not promoted", suite: "testdata/quarantinedagent", gateArgs: []string{"--agent", "restaurant"}, code: exitOK,
			want: []string{"gate: passed"}},
		// --agent: a publish of another agent since the run does not
		// hold up the one promoted (before, "clinic in sandbox: the
		// report tested deployment dep-..., but dep-... is active now"
		// refused the restaurant's promotion); of the one promoted, it
		// does.
		{name: "the agent promoted, another republished", suite: "testdata/quarantinedagent", gateArgs: []string{"--agent", "restaurant"},
			before: func(s *simtest.Sim) { s.Server.Publish("clinic", "") }, code: exitOK,
			want: []string{", not promoted (--agent): not checked now\n", "restaurant in sandbox: tested dep-", "gate: passed"}},
		{name: "the agent promoted republished", suite: "testdata/quarantinedagent", gateArgs: []string{"--agent", "restaurant"},
			before: func(s *simtest.Sim) { s.Server.Publish("restaurant", "") }, code: exitFailed,
			want: []string{"gate: restaurant in sandbox: the report tested deployment dep-"}},
		{name: "an agent no case gated, promoted", suite: "testdata/quarantinedagent", gateArgs: []string{"--agent", "clinic"}, code: exitFailed,
			want: []string{"gate: clinic: every case of it the report tested in sandbox is quarantined"}},
		// A target the gate cannot resolve gates against nothing.
		{name: "an unknown target", gateArgs: []string{"--target", "nosuch"}, code: exitUsage, want: []string{`unknown target "nosuch"`}},
		// Said as run says it: the host, and the variable that holds the
		// key. Before, "check the build_key of target ... (or
		// AGENTTEST_BUILD_KEY)", whatever variable held it.
		{name: "the key is refused now", code: exitUsage, want: []string{"gate: the platform at 127.0.0.1:", " refused the build key: GET /v1/agents/restaurant/deployments/active: 401", "; check AGENTTEST_BUILD_KEY"},
			intercept: func(w http.ResponseWriter, r *http.Request) bool {
				w.WriteHeader(http.StatusUnauthorized)
				return true
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestGateMergedStaleShard: a merged report is as old as its oldest
// shard. A shard's report left over from an earlier run (a stale CI
// artifact) merges with today's shards, since it is of the same selection
// and target, and the merged run ends with today's: the gate still
// refuses it by the shard's age.
func TestGateMergedStaleShard(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	shard := func(k int, ago time.Duration) string {
		report := filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
		c := newCLI(t, "testdata/pass", simEnv(s), "run", "--shard", fmt.Sprintf("%d/2", k), "--json", report)
		c.st.Now = func() time.Time { return time.Now().Add(-ago) }
		c.expect(t, exitOK, "status: passed")
		return report
	}
	merged := filepath.Join(dir, "merged.json")
	stale, fresh := shard(1, 72*time.Hour), shard(2, 0)
	newCLI(t, dir, simEnv(s), "merge", stale, fresh, "--json", merged).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "gate", merged).expect(t, exitFailed, "the report's oldest results are 72h0m", "older than --max-age 24h0m0s")
	newCLI(t, dir, simEnv(s), "gate", "--max-age", "96h", merged).expect(t, exitOK, "gate: passed")
	// A shard that does not say when it ran (its run.started cut) is
	// refused alone; merged, it made the run as young as the others.
	editReport(t, stale, func(doc map[string]any) { delete(doc["run"].(map[string]any), "started") })
	newCLI(t, dir, simEnv(s), "gate", stale).expect(t, exitFailed, "the report does not say when its run ended")
	newCLI(t, dir, simEnv(s), "merge", stale, fresh, "--json", merged).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "gate", "--max-age", "96h", merged).expect(t, exitFailed, "the report does not say when its run ended")
}

// TestGateMergedShardWithoutEvidence: a shard's report whose deployments
// were cut (or that an agenttest recording none wrote) is refused by the
// gate alone; merged with a shard that recorded the deployment, it
// passed, though nothing said what its cases talked to. The merged
// evidence is now unconfirmed, naming the shard.
func TestGateMergedShardWithoutEvidence(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for k := 1; k <= 2; k++ {
		newCLI(t, "testdata/pass", simEnv(s), "run", "--shard", fmt.Sprintf("%d/2", k), "--json", at(fmt.Sprintf("%d.json", k))).expect(t, exitOK, "status: passed")
	}
	editReport(t, at("2.json"), func(doc map[string]any) { doc["deployments"] = []any{} })
	newCLI(t, dir, simEnv(s), "gate", at("2.json")).expect(t, exitFailed, "restaurant in sandbox: cases ran there, but the report records no deployment of it")
	newCLI(t, dir, simEnv(s), "merge", at("1.json"), at("2.json"), "--json", at("m.json")).expect(t, exitOK)
	out := newCLI(t, dir, simEnv(s), "gate", at("m.json")).expect(t, exitFailed,
		"restaurant in sandbox: tested dep-", ", not confirmed after the run\n",
		"was not confirmed after the run's last case ("+at("2.json")+": its cases ran there, but it records no deployment of it)")
	if strings.Contains(out, "gate: passed") {
		t.Errorf("the gate passed a merge of a shard without evidence:\n%s", out)
	}
}

// TestGateForcedMerge: merge --force of shards of two selections (the
// merge refuses them and suggests --force) wrote a passing report with
// nothing to tell it from the report of one whole selection, and the gate
// passed it, though half of each selection went untested. The merged
// report now says what --force overrode, and the gate refuses it.
func TestGateForcedMerge(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	newCLI(t, "testdata/pass", simEnv(s), "run", "--shard", "1/2", "--json", at("1.json")).expect(t, exitOK, "status: passed")
	newCLI(t, "testdata/pass", simEnv(s), "run", "--shard", "2/2", "--name", "says goodbye", "--json", at("2.json")).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "merge", at("1.json"), at("2.json"), "--json", at("m.json")).expect(t, exitUsage,
		"ran another selection than", "merge them anyway with --force")
	newCLI(t, dir, simEnv(s), "merge", "--force", at("1.json"), at("2.json"), "--json", at("m.json")).expect(t, exitOK, "status: passed",
		"agenttest: merge: merged with --force: "+at("2.json")+" ran another selection than "+at("1.json")+" (other paths", "(agenttest gate refuses the merged report)\n")
	if doc := readJSONReport(t, at("m.json")); doc.Run.Status != "passed" {
		t.Fatalf("merged status %s", doc.Run.Status)
	}
	want := "gate: the report was merged with --force of reports that are not every shard of one selection on one target (" + at("2.json") + " ran another selection than " + at("1.json")
	out := newCLI(t, dir, simEnv(s), "gate", at("m.json")).expect(t, exitFailed, want, "it vouches for no one selection")
	if strings.Contains(out, "gate: passed") {
		t.Errorf("the gate passed a forced merge:\n%s", out)
	}
	// Merged again, alone, it is still what --force made it.
	newCLI(t, dir, simEnv(s), "merge", at("m.json"), "--json", at("again.json")).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "gate", at("again.json")).expect(t, exitFailed, want)
}

// editReport changes a JSON report in place.
func editReport(t *testing.T, report string, edit func(doc map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(report, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGateNeedsOnlyTheBuildKey: the gate reads deployments and nothing
// else, so a promotion job that holds only the build key passes it even
// though the target also names a runtime key and connectors
// (examples/ci/promote-*.yml give the gate step SANDBOX_BUILD_KEY alone).
// The build key itself is still required.
func TestGateNeedsOnlyTheBuildKey(t *testing.T) {
	t.Parallel()
	s, dir, report := passedReport(t)
	cfg := "targets:\n  sandbox:\n" +
		"    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL + "\n    account_id: " + s.AccountID + "\n" +
		"    build_key: ${env:SANDBOX_BUILD_KEY}\n    runtime_key: ${env:SANDBOX_RUNTIME_KEY}\n" +
		"    connector_token: ${env:RESTAURANT_WEBCHAT}\n    connectors:\n      clinic: ${env:CLINIC_WEBCHAT}\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newCLI(t, dir, map[string]string{"SANDBOX_BUILD_KEY": s.BuildKey}, "gate", report, "--target", "sandbox")
	g.expect(t, exitOK, "gate: passed")
	g = newCLI(t, dir, map[string]string{}, "gate", report, "--target", "sandbox")
	g.expect(t, exitUsage, `build_key refers to SANDBOX_BUILD_KEY, which is not set`)
	// A key the platform refuses is named by the variable that holds it,
	// the promotion job's secret to fix.
	g = newCLI(t, dir, map[string]string{"SANDBOX_BUILD_KEY": "not-the-build-key-0001"}, "gate", report, "--target", "sandbox")
	g.expect(t, exitUsage, ` refused the build key: `, `; check SANDBOX_BUILD_KEY, which holds the build_key of target "sandbox"`)
}

// TestGateWarnsOfClearTextKey: a target whose build_url is plain http
// to a host that is not loopback, accepted with allow_http: true, has the
// gate say the build key travels in clear text, as run says it, though
// the gate passes: the warning is no error, and the gate sends the key.
func TestGateWarnsOfClearTextKey(t *testing.T) {
	t.Parallel()
	s, dir, report := passedReport(t)
	// 0.0.0.0 reaches this machine's listeners but is no loopback
	// address, so the URL is one allow_http must accept.
	buildURL := strings.Replace(s.BuildURL, "127.0.0.1", "0.0.0.0", 1)
	if buildURL == s.BuildURL {
		t.Fatalf("the simulator's build URL %s is not on 127.0.0.1", s.BuildURL)
	}
	cfg := "targets:\n  sandbox:\n    build_url: " + buildURL + "\n    account_id: " + s.AccountID +
		"\n    build_key: ${env:SANDBOX_BUILD_KEY}\n    allow_http: true\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	editReport(t, report, func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = buildURL })
	newCLI(t, dir, map[string]string{"SANDBOX_BUILD_KEY": s.BuildKey}, "gate", report, "--target", "sandbox").expect(t, exitOK,
		"gate: passed", "allow_http is set, so the API key travels in clear text to 0.0.0.0")
}

// TestGateHostileText: the gate quotes its report (a file anyone may have
// edited) and the platform's error bodies; their escape sequences and
// carriage returns are printed escaped, on stdout and stderr alike,
// never obeyed by the terminal.
func TestGateHostileText(t *testing.T) {
	t.Parallel()
	s, dir, report := passedReport(t)
	const forged = "dep-\x1b[2J\x1b]0;owned\x07\rgate: passed"
	editReport(t, report, func(doc map[string]any) {
		d := doc["deployments"].([]any)[0].(map[string]any)
		d["id"], d["after_id"] = forged, forged
	})
	g := newCLI(t, dir, simEnv(s), "gate", report)
	out := g.expect(t, exitFailed, `tested dep-\x1b[2J\x1b]0;owned\a\rgate: passed, active now dep-`,
		`agenttest: gate: restaurant in sandbox: the report tested deployment dep-\x1b[2J\x1b]0;owned\a\rgate: passed, but dep-`)
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("a control character reached the output:\n%q", out)
	}
	// The report's name heads the verdict: a CI artifact's name is text
	// anyone who can upload one chose.
	named := filepath.Join(dir, "r\x1b[2J\rgate: passed.json")
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(named, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out = newCLI(t, dir, simEnv(s), "gate", named).expect(t, exitFailed, `r\x1b[2J\rgate: passed.json: run passed`)
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Errorf("a control character of the report's name reached the output:\n%q", out)
	}
}

// passedReport starts a simulator and writes the JSON report of a passing
// run against it into a new directory.
func passedReport(t *testing.T) (s *simtest.Sim, dir, report string) {
	t.Helper()
	s = simtest.Start(t, sim.Options{Seed: 2})
	dir = t.TempDir()
	report = filepath.Join(dir, "r.json")
	newCLI(t, "testdata/pass", simEnv(s), "run", "--json", report).expect(t, exitOK)
	return s, dir, report
}

// gateOnStalledReads is a passing run's report, in dir, of a target whose
// build host takes every read of an active deployment and never answers
// it, calling onRead as each arrives; env reaches that host.
func gateOnStalledReads(t *testing.T, onRead func()) (dir, report string, env map[string]string) {
	t.Helper()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir = t.TempDir()
	report = filepath.Join(dir, "r.json")
	if code := newCLI(t, "testdata/pass", simEnv(s), "run", "--json", report).run(t); code != exitOK {
		t.Fatalf("run: exit %d", code)
	}
	env = wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if !isDeploymentRead(r) {
			return false
		}
		onRead()
		<-r.Context().Done()
		return true
	})
	editReport(t, report, func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = env["AGENTTEST_BUILD_URL"] })
	return dir, report, env
}

// TestGateInterrupted: a gate interrupted while it reads the deployments
// active now exits 130, as every command does, where the reads it cut
// short made it exit 4 ("could not be read": run the gate again).
func TestGateInterrupted(t *testing.T) {
	t.Parallel()
	sigs := make(chan struct{}, 1)
	dir, report, env := gateOnStalledReads(t, func() {
		select { // one interrupt; another read waits for it to cut it off
		case sigs <- struct{}{}:
		default:
		}
	})
	g := newCLI(t, dir, env, "gate", report)
	g.st.Signals = sigs
	out := g.expect(t, exitInterrupted, "gate: interrupted before the deployments active now were read: nothing was decided")
	if strings.Contains(out, "gate: passed") || strings.Contains(out, "gate: refused") {
		t.Errorf("an interrupted gate decided:\n%s", out)
	}
}

// TestGateReadStalled: a platform that takes the read of a deployment and
// never answers. Each read is bounded by the turn timeout of the config's
// run section, as every call of a run is: the gate says it could not read
// the deployment. Before, it waited for ever, holding the promote step
// until an interrupt or the CI job's timeout ended it.
func TestGateReadStalled(t *testing.T) {
	t.Parallel()
	dir, report, env := gateOnStalledReads(t, func() {})
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte("run:\n  turn_timeout: 200ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runUnlessStalled(newCLI(t, dir, env, "gate", report))
	if code != exitErrored {
		t.Fatalf("exit %d, want %d\n%s", code, exitErrored, out)
	}
	want := "gate: restaurant in sandbox: cannot read the deployment active now: GET /v1/agents/restaurant/deployments/active: context deadline exceeded (turn timeout of 200ms exceeded)"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestGateShowsNoKey: the gate prints what the platform answers now and
// what its report says. A platform that echoes the build key as the id
// of the deployment active now, or a report (a file anyone may have
// written) that holds it as the id it tested, has it masked in the line
// the gate checked and in its reason, whatever form it takes.
func TestGateShowsNoKey(t *testing.T) {
	t.Parallel()
	s, dir, report := passedReport(t)
	forms := secret.Forms(s.BuildKey)
	t.Run("in the report", func(t *testing.T) {
		written := filepath.Join(t.TempDir(), "r.json")
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(written, b, 0o644); err != nil {
			t.Fatal(err)
		}
		editReport(t, written, func(doc map[string]any) {
			d := doc["deployments"].([]any)[0].(map[string]any)
			d["id"], d["after_id"] = "dep-"+s.BuildKey, "dep-"+s.BuildKey
		})
		out := newCLI(t, dir, simEnv(s), "gate", written).expect(t, exitFailed,
			"restaurant in sandbox: tested dep-"+secret.Mask+", active now dep-", "the report tested deployment dep-"+secret.Mask+", but dep-")
		if f := keyIn(out, forms); f != "" {
			t.Errorf("the gate shows the build key as %q:\n%s", f, out)
		}
	})
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if !isDeploymentRead(r) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"id": "dep-" + s.BuildKey, "environment": "sandbox"})
		return true
	})
	editReport(t, report, func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = env["AGENTTEST_BUILD_URL"] })
	out := newCLI(t, dir, env, "gate", report).expect(t, exitFailed,
		", active now dep-"+secret.Mask+"\n", "is active now: test the deployment you promote")
	if f := keyIn(out, forms); f != "" {
		t.Errorf("the gate shows the build key as %q:\n%s", f, out)
	}
	// The signing secret of a webhook endpoint in the job's environment
	// (AGENTTEST_WEBHOOK_SECRET), which the platform knows and may echo,
	// is masked as a key is, though the gate takes no webhook flag.
	echoing := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if !isDeploymentRead(r) {
			return false
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"id": "dep-" + plantedWebhookSecret, "environment": "sandbox"})
		return true
	})
	echoing["AGENTTEST_WEBHOOK_SECRET"] = plantedWebhookSecret
	editReport(t, report, func(doc map[string]any) { doc["target"].(map[string]any)["build_url"] = echoing["AGENTTEST_BUILD_URL"] })
	out = newCLI(t, dir, echoing, "gate", report).expect(t, exitFailed, ", active now dep-"+secret.Mask+"\n")
	if f := keyIn(out, secret.Forms(plantedWebhookSecret)); f != "" {
		t.Errorf("the gate shows the webhook signing secret as %q:\n%s", f, out)
	}
	// A report naming an agent by the key puts it in the path of the
	// read the platform refuses, which the refusal quotes.
	refusing := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusUnauthorized)
		return true
	})
	editReport(t, report, func(doc map[string]any) {
		doc["target"].(map[string]any)["build_url"] = refusing["AGENTTEST_BUILD_URL"]
		doc["deployments"].([]any)[0].(map[string]any)["agent"] = "agent-" + s.BuildKey
	})
	out = newCLI(t, dir, refusing, "gate", report).expect(t, exitUsage, " refused the build key: GET /v1/agents/agent-"+secret.Mask+"/deployments/active: 401")
	if f := keyIn(out, forms); f != "" {
		t.Errorf("the gate shows the build key as %q:\n%s", f, out)
	}
}
