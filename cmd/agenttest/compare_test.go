package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// compareDoc is what these tests read of a comparison.
type compareDoc struct {
	Schema string `json:"schema"`
	Status string `json:"status"`
	Counts map[string]int
	Pairs  []struct {
		Name    string
		Class   string
		Changes []struct{ What, Diff string }
		Latency *struct {
			MedianShift float64 `json:"median_shift_ms"`
		}
	}
	Baseline, Candidate struct {
		Kind, Env   string
		Deployments []struct {
			Env, ID  string
			Verified bool
		}
	}
}

func readCompare(t *testing.T, path string) compareDoc {
	t.Helper()
	return decodeFile[compareDoc](t, path)
}

// wantCompare are the classes examples/compare shows between live (1.0)
// and pre-release (1.1) of the simulator's restaurant.
var wantCompare = map[string]string{
	"says the kitchen is nut-free":                    "regressed",
	"tells callers when the restaurant closes":        "fixed",
	"offers a booking when there is no reference yet": "changed",
	"books a table for two":                           "slower",
	"answers menu questions":                          "unchanged",
	"says goodbye and ends the conversation":          "unchanged",
}

func checkClasses(t *testing.T, doc compareDoc, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, p := range doc.Pairs {
		got[p.Name] = p.Class
	}
	for name, cl := range want {
		if got[name] != cl {
			t.Errorf("%s: %s, want %s", name, got[name], cl)
		}
	}
	if len(got) != len(want) {
		t.Errorf("pairs %v, want %d", got, len(want))
	}
}

// TestCompareEnvironments: live against pre-release on the embedded
// simulator finds one scenario of each kind, says what changed, records
// both sides' deployments, and exits 1 for the regression.
// compareCLI is newCLI for compare. A side on the embedded simulator
// runs on a fake clock of its own (State.SideClock), one case at a time
// unless env says otherwise: its latencies are then the simulator's
// think times exactly (the slower scenario of examples/compare moves its
// median by 200ms, 400ms on one of its two calls), not the machine's,
// which under the race detector was seen to stall an unchanged
// scenario's calls by 120ms. Sides on a configured target still measure
// real time, so the latency bar of slower and faster is 150ms unless env
// sets it, above such a stall.
func compareCLI(t *testing.T, dir string, env map[string]string, args ...string) *cli {
	t.Helper()
	withBar := map[string]string{"AGENTTEST_LATENCY_MIN_SHIFT": "150ms", "AGENTTEST_PARALLEL": "1"}
	maps.Copy(withBar, env)
	c := newCLI(t, dir, withBar, args...)
	c.st.SideClock = func() (func() time.Time, func(context.Context, time.Duration) error) {
		// From the real time on: the comparison's report records when
		// its sides ran, and the gate reads its age.
		clk := fakeclock.New()
		clk.Advance(time.Since(fakeclock.Start))
		return clk.Now, clk.Sleep
	}
	return c
}

func TestCompareEnvironments(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "compare.json")
	page := filepath.Join(t.TempDir(), "compare.html")
	c := compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live", "--json", out, "--html", page)
	text := c.expect(t, exitFailed,
		"REGRESSED examples/compare/restaurant.yaml:23 says the kitchen is nut-free",
		"reply: Every dish on the menu lists its allergens[-;-]{+, and+} gluten-free pasta is available[- and our kitchen is nut-free-].",
		"FIXED examples/compare/restaurant.yaml:30 tells callers when the restaurant closes",
		"trace (baseline): Fallback → Greeting", "trace (candidate): AnswerQuestion",
		"CHANGED examples/compare/restaurant.yaml:37 offers a booking when there is no reference yet",
		"SLOWER examples/compare/restaurant.yaml:44 books a table for two",
		"6 scenarios: 1 regressed, 1 fixed, 1 changed, 1 slower, 0 faster, 2 unchanged",
		"status: failed (1 scenario regressed)")
	doc := readCompare(t, out)
	// --html: the candidate's run, with the comparison as a section that
	// lists the regression with its reply diff.
	if b, err := os.ReadFile(page); err != nil {
		t.Errorf("no HTML report: %v", err)
	} else {
		html := string(b)
		for _, want := range []string{`<section id="compare"`, `<span class="badge cl-regressed">regressed</span> <b>says the kitchen is nut-free</b>`,
			`<del> and our kitchen is nut-free</del>`, `env pre-release`} {
			if !strings.Contains(html, want) {
				t.Errorf("the HTML report lacks %q", want)
			}
		}
	}
	if doc.Schema != "agenttest/compare/v1" || doc.Status != "failed" {
		t.Errorf("schema %s status %s", doc.Schema, doc.Status)
	}
	checkClasses(t, doc, wantCompare)
	for _, p := range doc.Pairs {
		if p.Class == "slower" && (p.Latency == nil || p.Latency.MedianShift != 200) {
			t.Errorf("%s: latency %+v, want the 400 ms of the candidate's party check in the median", p.Name, p.Latency)
		}
	}
	for _, s := range []struct {
		env  string
		deps []struct {
			Env, ID  string
			Verified bool
		}
	}{{"live", doc.Baseline.Deployments}, {"pre-release", doc.Candidate.Deployments}} {
		if len(s.deps) != 1 || s.deps[0].Env != s.env || !s.deps[0].Verified || !strings.Contains(text, "deployment of restaurant in "+s.env+": "+s.deps[0].ID) {
			t.Errorf("%s deployments %+v", s.env, s.deps)
		}
	}
}

// TestCompareStoredBaseline: a JSON report of live, written earlier, is
// the baseline; the candidate runs now. Two reports compare without
// running anything.
func TestCompareStoredBaseline(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live, pre, out := filepath.Join(dir, "live.json"), filepath.Join(dir, "pre.json"), filepath.Join(dir, "compare.json")
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "live", "--allow-live", "--json", live).expect(t, exitFailed)
	idleBaseline(t, live)
	c := compareCLI(t, repoRoot, nil, "compare", "--baseline", live, "--candidate", "pre-release", "examples/compare", "--json", out)
	c.expect(t, exitFailed, "baseline report "+live+" with candidate pre-release", "status: failed (1 scenario regressed)")
	doc := readCompare(t, out)
	if doc.Baseline.Kind != "report" || doc.Baseline.Env != "live" || len(doc.Baseline.Deployments) != 1 || doc.Baseline.Deployments[0].Env != "live" {
		t.Errorf("baseline %+v", doc.Baseline)
	}
	checkClasses(t, doc, wantCompare)

	// Two reports: nothing runs. The candidate's conversations were
	// named by the simulator this time, so its booking code differs.
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "pre-release", "--json", pre).expect(t, exitFailed)
	both := compareCLI(t, repoRoot, nil, "compare", "--baseline", live, "--candidate", pre)
	text := both.expect(t, exitFailed, "REGRESSED", "FIXED", "status: failed (1 scenario regressed)")
	if strings.Contains(text, "comparing") {
		t.Errorf("two reports ran something:\n%s", text)
	}

	// A report written from another directory names its suites by other
	// paths: nothing pairs, and the comparison says why it is empty.
	// (--junit: the examples' config would write its JUnit file into the
	// source tree.)
	other := filepath.Join(dir, "other.json")
	newCLI(t, filepath.Join(repoRoot, "examples"), nil, "run", "--sim", "compare", "--env", "live", "--allow-live",
		"--json", other, "--junit", filepath.Join(dir, "other.xml")).expect(t, exitFailed)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", other, "--candidate", "pre-release", "examples/compare").expect(t, exitEmpty,
		"agenttest: compare: --baseline "+other+" holds 6 cases, none of them a file and name the candidate ran: cases pair by the suite path",
		"status: empty (nothing was compared: no scenario ran on both sides)")
	compareCLI(t, repoRoot, nil, "compare", "--baseline", other, "--candidate", pre).expect(t, exitEmpty,
		"status: empty (nothing was compared: no scenario ran on both sides (none of the baseline's 6 has a file and name of the candidate's 6: were they run from different directories?))")

	// A selection of nothing is said as such, not as a report that pairs
	// nothing.
	if text := compareCLI(t, repoRoot, nil, "compare", "--baseline", live, "--candidate", "pre-release", "examples/compare", "--name", "no such scenario").
		expect(t, exitEmpty, "agenttest: nothing to compare: "); strings.Contains(text, "none of them") {
		t.Errorf("an empty selection blames the report:\n%s", text)
	}

	// A selection chooses what a side runs: with two reports nothing
	// runs, and it was ignored, every case of both compared (exit 0 or
	// 1 on cases it left out).
	const why = "selects the scenarios a side runs, and both sides are reports"
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{nil, []string{"--name", "hours"}, []string{"compare: --name " + why}},
		{nil, []string{"examples/compare"}, []string{"compare: a PATH " + why}},
		{map[string]string{"AGENTTEST_TAGS": "@smoke"}, []string{"--rerun-failed", pre},
			[]string{"compare: --tags " + why, "(set by AGENTTEST_TAGS)", "compare: --rerun-failed " + why}},
	} {
		c := compareCLI(t, repoRoot, tc.env, append([]string{"compare", "--baseline", live, "--candidate", pre}, tc.args...)...)
		if text := c.expect(t, exitUsage, tc.want...); strings.Contains(text, "REGRESSED") {
			t.Errorf("%v compared:\n%s", tc.args, text)
		}
	}
}

// TestCompareRepeatedScenario: the runs of a repeated scenario get a
// conversation name each on the embedded simulator, on both sides and
// from a stored report's runs alike; with one name for every run the
// simulator answered 409 from the second run on, and the scenario was
// not compared.
func TestCompareRepeatedScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := "suite: repeated\nagent: restaurant\nscenarios:\n  - name: greets every time\n    repeat: 3\n    pass_rate: 1\n" +
		"    greeting: {response: {contains: Welcome}}\n    turns:\n      - say: what's on the menu?\n        expect: {response: {contains: menu, ignore_case: true}}\n"
	if err := os.WriteFile(filepath.Join(dir, "rep.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	compareCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "rep.yaml").
		expect(t, exitOK, "1 scenario: 0 regressed, 0 fixed, 0 changed, 0 slower, 0 faster, 1 unchanged", "status: passed")
	newCLI(t, dir, nil, "run", "rep.yaml", "--json", "sandbox.json").expect(t, exitOK)
	// The stored run measured real time, the candidate its fake clock's
	// zero think time: a stall of the loaded machine over the bar made the
	// scenario faster instead of unchanged.
	idleBaseline(t, filepath.Join(dir, "sandbox.json"))
	compareCLI(t, dir, nil, "compare", "--baseline", "sandbox.json", "--candidate", "pre-release", "rep.yaml").
		expect(t, exitOK, "1 unchanged", "status: passed")
}

// TestCompareWebChatDrawsAlike: a web-chat booking compared with a stored
// report draws the booking reference the report's run drew, however its
// conversation's turn to join came. The report's run joined the three
// sessions in file order; the candidate runs the file reversed. The
// simulator named a Messaging conversation by the order of the joins
// server-wide, so that the first and last bookings swapped references
// and came out CHANGED; compare now names each one after the report's,
// over Messaging as over debug chat.
func TestCompareWebChatDrawsAlike(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scenarios := make([]string, 3)
	for i := range scenarios {
		scenarios[i] = fmt.Sprintf("  - name: books for %d\n    streaming: %v\n    turns:\n      - say: I'd like to book a table\n"+
			"      - say: %d people at 7pm\n        expect: {response: {contains: reference}}\n", i+2, i == 1, i+2)
	}
	write := func(order ...int) {
		var src strings.Builder
		src.WriteString("suite: web chat\nagent: restaurant\nvia: messaging\nscenarios:\n")
		for _, i := range order {
			src.WriteString(scenarios[i])
		}
		if err := os.WriteFile(filepath.Join(dir, "webchat.yaml"), []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 1, 2)
	newCLI(t, dir, map[string]string{"AGENTTEST_PARALLEL": "1"}, "run", "webchat.yaml", "--json", "base.json").expect(t, exitOK)
	write(2, 1, 0)
	// The draws are compared here, not the latencies: the report's run
	// measured real time, and a turn a loaded machine stalled by 400ms
	// came out faster on the candidate's fake clock. A bar of an hour
	// leaves latency out of the verdict.
	compareCLI(t, dir, map[string]string{"AGENTTEST_LATENCY_MIN_SHIFT": "1h"}, "compare", "--baseline", "base.json", "--candidate", "sandbox", "--fail-on-change", "webchat.yaml").
		expect(t, exitOK, "3 scenarios: 0 regressed, 0 fixed, 0 changed, 0 slower, 0 faster, 3 unchanged", "status: passed")
}

// idleBaseline sets every turn latency in the stored report at path to
// zero, as an idle machine would have recorded the live agent (it has no
// think time). The baseline run measured real time: a loaded machine
// stalled its booking turns so that the candidate's 400ms check moved
// the median by under the bar, and "books a table for two" came out
// unchanged (2 runs in 12 under load). Against a zero baseline the
// candidate's real sleep alone proves the slowdown.
func idleBaseline(t *testing.T, path string) {
	t.Helper()
	setLatencies(t, path, path, 0)
}

// setLatencies writes the stored report at from to path with every turn
// latency set to ms.
func setLatencies(t *testing.T, from, path string, ms int) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	latency := regexp.MustCompile(`"latency_ms":\s*[0-9.eE+-]+`)
	if !latency.Match(b) {
		t.Fatalf("%s records no latency_ms", path)
	}
	if err := os.WriteFile(path, latency.ReplaceAll(b, fmt.Appendf(nil, `"latency_ms": %d`, ms)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// compareTargets starts a simulator and a directory with
// examples/compare under compare/ and an agenttest.yaml of two targets
// of it, by ${env:SIM_URL} and ${env:SIM_KEY}: prod in live (allowed),
// rc in pre-release and plain in no env of its own. tweaks change the simulator's options.
func compareTargets(t *testing.T, tweaks ...func(*sim.Options)) (*simtest.Sim, string) {
	t.Helper()
	opts := sim.Options{Seed: 5}
	for _, tw := range tweaks {
		tw(&opts)
	}
	s := simtest.Start(t, opts)
	dir := t.TempDir()
	copyTree(t, filepath.Join(repoRoot, "examples/compare"), filepath.Join(dir, "compare"))
	target := func(name, env, extra string) string {
		if env != "" {
			env = "    env: " + env + "\n"
		}
		return "  " + name + ":\n    build_url: ${env:SIM_URL}\n    account_id: " + s.AccountID + "\n    agent_id: restaurant\n" + env +
			"    build_key: ${env:SIM_KEY}\n" + extra
	}
	cfg := "targets:\n" + target("prod", "live", "    allow_live: true\n") + target("rc", "pre-release", "") + target("plain", "", "")
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestCompareTargets: target:NAME sides run as run --target would, in
// their own env even when AGENTTEST_ENV names another.
func TestCompareTargets(t *testing.T) {
	t.Parallel()
	s, dir := compareTargets(t)
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey, "AGENTTEST_ENV": "sandbox"}
	out := filepath.Join(dir, "c.json")
	c := compareCLI(t, dir, env, "compare", "--baseline", "target:prod", "--candidate", "target:rc", "compare", "--json", out)
	c.expect(t, exitFailed, "baseline target:prod (target prod, env live)", "candidate target:rc (target rc, env pre-release)")
	doc := readCompare(t, out)
	got := map[string]string{}
	for _, p := range doc.Pairs {
		got[p.Name] = p.Class
	}
	if got["says the kitchen is nut-free"] != "regressed" || got["tells callers when the restaurant closes"] != "fixed" {
		t.Errorf("classes %v", got)
	}
}

// TestCompareLatencyBars: a scenario is slower only when its median
// latency moved by --latency-min-shift and by --latency-min-ratio of the
// baseline's: 1000ms to 1200ms is under the default ratio (25%), over a
// ratio of 10%, and under a shift of 400ms. A report whose cases name no
// file (their file's path stands for it) pairs with a side that runs.
func TestCompareLatencyBars(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run, base, cand := filepath.Join(dir, "run.json"), filepath.Join(dir, "base.json"), filepath.Join(dir, "cand.json")
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--name", "menu", "--json", run).expect(t, exitOK)
	setLatencies(t, run, base, 1000)
	setLatencies(t, run, cand, 1200)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "0 slower, 0 faster, 1 unchanged"},
		{[]string{"--latency-min-ratio", "10%"}, "1 slower, 0 faster, 0 unchanged"},
		{[]string{"--latency-min-ratio", "10%", "--latency-min-shift", "400ms"}, "0 slower, 0 faster, 1 unchanged"},
	} {
		newCLI(t, repoRoot, nil, append([]string{"compare", "--baseline", base, "--candidate", cand}, tc.args...)...).expect(t, exitOK, tc.want)
	}
	b, err := os.ReadFile(base)
	if err != nil || !strings.Contains(string(b), `"pos": {`+"\n"+`            "file": "examples/compare/restaurant.yaml",`) {
		t.Fatalf("base.json: %v\n%s", err, b)
	}
	os.WriteFile(base, []byte(strings.ReplaceAll(string(b), `"file": "examples/compare/restaurant.yaml",`, "")), 0o644)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", base, "--candidate", "sandbox", "examples/compare", "--name", "menu").expect(t, exitOK, "0 regressed, 0 fixed, 0 changed, 0 slower, 1 faster")
}

// TestCompareEnvironmentsOverridePins: an environment side runs every
// scenario in its environment, whatever env its suite or the scenario
// pins, where both sides would run the pinned one and compare nothing.
func TestCompareEnvironmentsOverridePins(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"pinned.yaml": "suite: pinned\nagent: restaurant\nenv: live\nscenarios:\n" +
		"  - name: pinned by its suite\n    greeting: {response: {contains: Welcome}}\n" +
		"  - name: pinned itself\n    env: live\n    greeting: {response: {contains: Welcome}}\n"})
	out := compareCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", ".").
		expect(t, exitOK, "deployment of restaurant in sandbox: ", "deployment of restaurant in pre-release: ", "2 unchanged")
	if strings.Contains(out, " in live") {
		t.Errorf("a side ran in the pinned env:\n%s", out)
	}
}

// TestCompareRetries: --retries reaches both sides, and a case that
// passed only on a retry counts as passed in a side's line, as in a run.
// The clinic routes half the repeat prescriptions wrongly; at seed 4,
// with the comparison's clock fixed (its conversation names come from
// it), both sides pass on a retry.
func TestCompareRetries(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"c.yaml": "suite: retried\nagent: clinic\nscenarios:\n  - name: renews\n" +
		"    turns:\n      - say: I need a repeat prescription\n        expect: {node: RepeatPrescription}\n"})
	c := compareCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", ".", "--seed", "4", "--retries", "3", "--json", "c.json")
	c.st.Now = fakeclock.New().Now
	c.expect(t, exitOK, "\nbaseline sandbox: 1 passed, 0 failed,", "\ncandidate pre-release: 1 passed, 0 failed,")
	if b, err := os.ReadFile(filepath.Join(dir, "c.json")); err != nil || strings.Count(string(b), `"flaky"`) != 2 {
		t.Errorf("both sides' case should be flaky: %v\n%s", err, b)
	}
}

// TestCompareSeedReplays: on the embedded simulator a comparison under
// one --seed draws what the last one under it drew, and what `run --env`
// draws there: a statistical scenario's runs, and so its rates and
// Fisher's p, replay. Before, the conversations were named after the
// comparison's start time, so every comparison drew anew whatever its
// seed, and none matched the run a designer had just read.
func TestCompareSeedReplays(t *testing.T) {
	t.Parallel()
	const suite = "cmd/agenttest/testdata/stats/suites/broken.yaml"
	type rates struct {
		BaselinePassed  int `json:"baseline_passed"`
		BaselineRuns    int `json:"baseline_runs"`
		CandidatePassed int `json:"candidate_passed"`
		CandidateRuns   int `json:"candidate_runs"`
	}
	dir := t.TempDir()
	compared := func(name string) rates {
		out := filepath.Join(dir, name)
		c := compareCLI(t, repoRoot, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", suite, "--seed", "3", "--json", out)
		if code := c.run(t); code != exitOK && code != exitFailed {
			t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
		}
		var doc struct {
			Pairs []struct {
				Rates *rates `json:"rates"`
			} `json:"pairs"`
		}
		if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &doc) != nil || len(doc.Pairs) != 1 || doc.Pairs[0].Rates == nil {
			t.Fatalf("comparison %s: %v", out, err)
		}
		return *doc.Pairs[0].Rates
	}
	first, again := compared("1.json"), compared("2.json")
	if first != again {
		t.Errorf("the same seed drew otherwise: %+v, then %+v", first, again)
	}
	r := runStats(t, nil, time.Time{}, suite, "--env", "sandbox", "--seed", "3").only(t)
	if r.Repeat.Passed != first.BaselinePassed || r.Repeat.Runs != first.BaselineRuns {
		t.Errorf("run --env sandbox passed %d of %d runs; the comparison's sandbox side %d of %d", r.Repeat.Passed, r.Repeat.Runs, first.BaselinePassed, first.BaselineRuns)
	}
}

// TestCompareMasksKeysOfStoredReports: a stored report is anyone's text;
// the key of a side's target in it is masked on the console and in every
// file the comparison writes, as a run masks it.
func TestCompareMasksKeysOfStoredReports(t *testing.T) {
	t.Parallel()
	s, dir := compareTargets(t)
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey}
	newCLI(t, dir, env, "run", "--target", "prod", "compare", "--name", "menu", "--json", "run.json").expect(t, exitOK)
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || !strings.Contains(string(b), "a daily risotto") {
		t.Fatalf("run.json: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "base.json"), []byte(strings.ReplaceAll(string(b), "a daily risotto", s.BuildKey)), 0o644)
	c := compareCLI(t, dir, env, "compare", "--baseline", "base.json", "--candidate", "target:prod", "compare", "--name", "menu", "--json", "c.json", "--html", "c.html")
	out := c.expect(t, exitOK, "CHANGED", "[REDACTED]")
	if strings.Contains(out, s.BuildKey) {
		t.Errorf("the console shows the key:\n%s", out)
	}
	for _, name := range []string{"c.json", "c.html"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || strings.Contains(string(b), s.BuildKey) {
			t.Errorf("%s shows the key (%v)", name, err)
		}
	}
}

// TestCompareTargetWithoutEnv: a target side whose target names no env
// runs in the default one, and both its headers say which.
func TestCompareTargetWithoutEnv(t *testing.T) {
	t.Parallel()
	s, dir := compareTargets(t)
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey}
	c := compareCLI(t, dir, env, "compare", "--baseline", "target:plain", "--candidate", "target:rc", "compare", "--name", "menu")
	c.expect(t, exitOK, "comparing 1 scenario: baseline target:plain (target plain, env sandbox) with candidate",
		"\nbaseline  target:plain (target plain, env sandbox): run passed")
}

// TestCompareExitCodes: 0 when nothing regressed, 1 for a regression or
// (on demand) a change, 5 when nothing was compared, 2 for bad usage.
func TestCompareExitCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"a change alone", []string{"--name", "offers a booking"}, exitOK, []string{"1 changed", "status: passed (nothing regressed)"}},
		{"a change with --fail-on-change", []string{"--name", "offers a booking", "--fail-on-change"}, exitFailed,
			[]string{"status: failed (1 scenario changed (--fail-on-change))"}},
		{"a fix alone", []string{"--name", "closes"}, exitOK, []string{"1 fixed"}},
		{"--repeat runs each scenario that many times", []string{"--name", "answers menu", "--repeat", "2", "-v"}, exitOK, []string{"pass rate 2 of 2 passed, 100% → 2 of 2 passed, 100%"}},
		{"-v lists the unchanged", []string{"--name", "answers menu", "-v"}, exitOK, []string{"UNCHANGED examples/compare/restaurant.yaml:51 answers menu questions\n    latency: median"}},
		{"nothing selected", []string{"--name", "no such scenario"}, exitEmpty, []string{"nothing to compare", "status: empty"}},
		{"live needs --allow-live", []string{"--allow-live=false"}, exitUsage, []string{"--baseline live runs the scenarios in the live environment without --allow-live"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live"}, tc.args...)
			compareCLI(t, repoRoot, nil, args...).expect(t, tc.code, tc.want...)
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
		// absent is a refusal the arguments do not earn.
		absent string
	}{
		{"no candidate", []string{"--baseline", "live"}, "compare: --candidate is required", ""},
		{"no side at all", nil, "compare: --baseline is required", "are both"},
		{"the same side twice", []string{"--baseline", "live", "--candidate", "live"}, "--baseline and --candidate are both live", ""},
		{"neither an environment nor a report", []string{"--baseline", "staging", "--candidate", "live"}, "--baseline staging: not an environment (sandbox, pre-release, live), target:NAME or a JSON report", ""},
		{"a report that is not there", []string{"--baseline", "nothere.json", "--candidate", "live"}, "compare: --baseline nothere.json: open: no such file or directory", "not an environment"},
		{"not a report", []string{"--baseline", "examples/agenttest.yaml.json", "--candidate", "live"}, "--baseline examples/agenttest.yaml.json", ""},
		// target:$TARGET with the variable unset ran the default target.
		{"target: without a name", []string{"--baseline", "live", "--candidate", "target:"}, "--candidate target: names no target: write target:NAME", ""},
		{"a zero latency shift is a bar", []string{"--baseline", "live", "--latency-min-shift", "0s"}, "--candidate is required", "--latency-min-shift"},
		{"a latency ratio of 10 is a bar", []string{"--baseline", "live", "--latency-min-ratio", "10"}, "--candidate is required", "--latency-min-ratio"},
		{"a latency ratio above 10", []string{"--baseline", "live", "--candidate", "pre-release", "--latency-min-ratio", "10.5"}, "--latency-min-ratio must be between 0 and 10, got 10.5", ""},
		{"--json and --html to one file", []string{"--baseline", "live", "--candidate", "pre-release", "--json", "none/c.out", "--html", "./none/c.out"}, "--html and --json both write none/c.out", ""},
		{"a side's scheduling", []string{"--baseline", "live", "--candidate", "pre-release", "--retries", "-1"}, "compare: --retries must not be negative, got -1", ""},
		{"--sim with --target", []string{"--baseline", "live", "--candidate", "pre-release", "--sim", "--target", "staging"}, "compare: --sim and --target exclude each other", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := newCLI(t, repoRoot, nil, append([]string{"compare"}, tc.args...)...).expect(t, exitUsage, tc.want)
			if tc.absent != "" && strings.Contains(out, tc.absent) {
				t.Errorf("output says %q:\n%s", tc.absent, out)
			}
		})
	}
}

// TestGateComparison: a comparison vouches for its candidate: the gate
// passes one where nothing regressed while the candidate's deployment is
// still active, and refuses one with a regression.
func TestGateComparison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ok, bad := filepath.Join(dir, "ok.json"), filepath.Join(dir, "bad.json")
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
		"--name", "offers a booking", "--json", ok).expect(t, exitOK)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
		"--name", "nut-free", "--json", bad).expect(t, exitFailed)
	// The embedded simulator makes the same deployment ids under the
	// same seed: the gate's simulator serves what the comparison ran on.
	// The gate's target is in the candidate's environment, as a pipeline
	// that promotes from pre-release gates with its pre-release target.
	pre := map[string]string{"AGENTTEST_ENV": "pre-release"}
	newCLI(t, repoRoot, pre, "gate", "--name", "offers a booking", ok).expect(t, exitOK, "comparison passed", "\n  compared 1 scenario: 1 changed; the candidate's 1 case: 1 passed\n",
		"restaurant in pre-release: tested dep-", "gate: passed")
	newCLI(t, repoRoot, pre, "gate", bad).expect(t, exitFailed, "gate: the comparison did not pass: its status is failed: 1 scenario regressed")
	newCLI(t, repoRoot, pre, "gate", ok, "--seed", "9").expect(t, exitFailed, "restaurant in pre-release: the report tested deployment dep-")
	newCLI(t, repoRoot, nil, "gate", ok).expect(t, exitFailed, `restaurant: the report tested pre-release, not sandbox, the environment of the gate's target "sim"`)
}

// TestCompareProbes: a probe runs on both sides of a comparison as in a
// run. An SMS probe needs its agent's connector, which compare did not
// give the runner: every SMS probe errored on both sides. An outbound
// call is queued and rings for seconds on its simulator's clock, which on
// a side's own clock (State.SideClock) moves only when something sleeps
// on it: the runner's pauses between reads of the call's status did not,
// so the call never got past "queued" and the probe failed on both sides,
// after its within: of real time.
func TestCompareProbes(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"probes.yaml": `suite: probes
agent: clinic
scenarios:
  - name: a reminder SMS opens a conversation
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}
    confirm: {conversation: {in_progress: true}}
  - name: a reminder call gets through
    probe: {outbound_call: {to: "+447700900001"}, expect_status: success, within: 10s}
`})
	out := filepath.Join(dir, "c.json")
	compareCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", ".", "--json", out).
		expect(t, exitOK, "baseline sandbox: 2 passed,", "candidate pre-release: 2 passed,", "2 unchanged")
	doc := readCompare(t, out)
	if len(doc.Pairs) != 2 || doc.Pairs[0].Class != "unchanged" || doc.Pairs[1].Class != "unchanged" {
		t.Errorf("pairs %+v, want both probes unchanged", doc.Pairs)
	}
}

// TestCompareWebhookConfirmation: a comparison starts no webhook receiver,
// so a scenario that confirms webhooks is not compared, and its error
// says so. It said to run with --webhook-listen, a flag compare does not
// have, "automatic with the embedded simulator", which compared on the
// embedded simulator here.
func TestCompareWebhookConfirmation(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"webhooks.yaml": `suite: webhooks
agent: clinic
scenarios:
  - name: a booking is announced
    turns:
      - say: I'd like to book an appointment on Tuesday at 10am
    confirm: {webhooks: [conversation.completed]}
`})
	out := compareCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", ".").expect(t, exitErrored,
		"NOT-COMPARED webhooks.yaml:4 a booking is announced",
		"baseline errored: confirm: webhooks needs a webhook receiver, and none runs: agenttest compare starts none, not even on the embedded simulator; leave such scenarios out with --tags")
	if strings.Contains(out, "--webhook-listen") || strings.Contains(out, "automatic") {
		t.Errorf("the error names what compare does not do:\n%s", out)
	}
}

// TestCompareSaysTargetProblemsOnce: two environment sides resolve one
// target, and what is wrong with it is said once, not once per side
// ("1 error" twice read as two).
func TestCompareSaysTargetProblemsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := "default_target: x\ntargets:\n  x:\n    build_url: http://127.0.0.1:1\n    account_id: acc\n    agent_id: restaurant\n    build_key: ${env:NO_SUCH_KEY_VAR}\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	copyTree(t, filepath.Join(repoRoot, "examples/compare"), filepath.Join(dir, "compare"))
	out := newCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "compare").
		expect(t, exitUsage, "agenttest.yaml:7:16: target \"x\": build_key refers to NO_SUCH_KEY_VAR, which is not set")
	if n := strings.Count(out, "NO_SUCH_KEY_VAR, which is not set"); n != 1 {
		t.Errorf("the problem is said %d times, want once:\n%s", n, out)
	}
}

// TestCompareBothSidesRefused: when both targets refuse the key, each
// side says so, where the candidate's was left unsaid behind the
// baseline's.
func TestCompareBothSidesRefused(t *testing.T) {
	t.Parallel()
	s, dir := compareTargets(t)
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey + "-wrong"}
	c := compareCLI(t, dir, env, "compare", "--baseline", "target:prod", "--candidate", "target:rc", "compare", "--name", "menu")
	out := c.expect(t, exitUsage, "agenttest: baseline: the platform at", "agenttest: candidate: the platform at")
	if strings.Contains(out, s.BuildKey) {
		t.Errorf("the key shows:\n%s", out)
	}
}

// TestCompareSaysWhySideStopped: a side that stopped (the platform
// unreachable) says why, with the host, the endpoint and what to check,
// as run says it; the comparison said only "platform unreachable".
func TestCompareSaysWhySideStopped(t *testing.T) {
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
	dir := t.TempDir()
	copyTree(t, filepath.Join(repoRoot, "examples/compare"), filepath.Join(dir, "compare"))
	env := map[string]string{"AGENTTEST_BUILD_URL": "http://" + addr, "AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_AGENT_ID": "restaurant"}
	c := newCLI(t, dir, env, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "compare", "--name", "menu")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	cause := "the platform at " + addr + " is unreachable: read the active deployment: GET /v1/agents/restaurant/deployments/active: connection failed"
	c.expect(t, exitErrored, "agenttest: baseline: "+cause, "agenttest: candidate: "+cause, "check AGENTTEST_BUILD_URL")
}

// TestCompareInterrupted: a comparison interrupted before its sides ran
// (its context cancelled, as a signal cancels it) exits 130, and does
// not say the interruption again per side as the reason a side stopped.
func TestCompareInterrupted(t *testing.T) {
	t.Parallel()
	c := compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live", "--name", "answers menu")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := exitCode(run(ctx, c.st), c.stderr)
	out := c.stdout.String() + c.stderr.String()
	if code != exitInterrupted || !strings.Contains(out, "status: interrupted") {
		t.Errorf("exit %d, want %d with status interrupted:\n%s", code, exitInterrupted, out)
	}
	for _, side := range []string{"baseline", "candidate"} {
		if strings.Contains(out, "agenttest: "+side+":") {
			t.Errorf("the %s says why it stopped:\n%s", side, out)
		}
	}
}
