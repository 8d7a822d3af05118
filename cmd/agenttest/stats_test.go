package main

// End-to-end tests of statistical scenarios, quarantine and history
// against the embedded simulator's probabilistic clinic agent
// (examples/agents/clinic.yaml): 95% right about the opening hours, 85%
// about test results, 50% about repeat prescriptions. A fixed seed replays
// the simulator's outcomes exactly (at any --parallel: TestSeedReplaysVerdicts;
// runs are sequential by default here all the same); the assertions hold
// for any seed with high probability, and the exact counts are only logged.

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/stats"
)

const statsTree = "cmd/agenttest/testdata/stats"

// statsCase is the part of a JSON report case these tests read.
type statsCase struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Quarantine *struct {
		Until  string `json:"until"`
		Lapsed bool   `json:"lapsed"`
	} `json:"quarantine"`
	Repeat *struct {
		Procedure  string  `json:"procedure"`
		Decision   string  `json:"decision"`
		Runs       int     `json:"runs"`
		Passed     int     `json:"passed"`
		Failed     int     `json:"failed"`
		Errored    int     `json:"errored"`
		Limit      int     `json:"limit"`
		Needed     int     `json:"needed"`
		PassRate   float64 `json:"pass_rate"`
		Margin     float64 `json:"margin"`
		Confidence float64 `json:"confidence"`
		Interval   struct {
			Lower, Upper, Level float64
		} `json:"interval"`
	} `json:"repeat"`
	Attempts []struct {
		Run    int    `json:"run"`
		Status string `json:"status"`
	} `json:"attempts"`
}

// statsRun is one run of agenttest with its reports.
type statsRun struct {
	code           int
	stdout, stderr string
	cases          []statsCase
	counts         map[string]int
	junit          statsJUnit
	// status is the JSON report's run.status.
	status string
}

// statsJUnit is the part of the JUnit report these tests read.
type statsJUnit struct {
	Suites []struct {
		Cases []struct {
			Name       string `xml:"name,attr"`
			Properties []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Failure *struct {
				Type string `xml:"type,attr"`
			} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// runStats runs agenttest in-process from the repository root, one run
// at a time unless args say --parallel, with a JSON and a JUnit report;
// now, when set, is the run's clock.
func runStats(t *testing.T, env map[string]string, now time.Time, args ...string) statsRun {
	t.Helper()
	out := t.TempDir()
	jsonPath, junitPath := filepath.Join(out, "r.json"), filepath.Join(out, "r.xml")
	e := examplesEnv()
	maps.Copy(e, env)
	// --parallel 1 first: a --parallel among args, later, wins.
	c := newCLI(t, repoRoot, e, append(append([]string{"run", "--parallel", "1"}, args...), "--json", jsonPath, "--junit", junitPath)...)
	if !now.IsZero() {
		c.st.Now = func() time.Time { return now }
	}
	r := statsRun{code: c.run(t)}
	r.stdout, r.stderr = c.stdout.String(), c.stderr.String()
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("no JSON report (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	var doc struct {
		Run struct {
			Status string `json:"status"`
		} `json:"run"`
		Counts map[string]int `json:"counts"`
		Files  []struct {
			Cases []statsCase `json:"cases"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r.counts, r.status = doc.Counts, doc.Run.Status
	for _, f := range doc.Files {
		r.cases = append(r.cases, f.Cases...)
	}
	x, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(x, &r.junit); err != nil {
		t.Fatal(err)
	}
	return r
}

// only returns the one case of a run.
func (r statsRun) only(t *testing.T) statsCase {
	t.Helper()
	if len(r.cases) != 1 || r.cases[0].Repeat == nil {
		t.Fatalf("want one repeated case, got %+v\n%s%s", r.cases, r.stdout, r.stderr)
	}
	return r.cases[0]
}

// checkEvidence checks what every statistical case must satisfy: the
// counts add up, the errored runs are in none of them, and the verdict is
// the sequential test's on the passes and failures alone, reached at the
// last counted run.
func checkEvidence(t *testing.T, c statsCase) {
	t.Helper()
	r := c.Repeat
	if r.Procedure != "sprt" || r.Passed+r.Failed+r.Errored != r.Runs || r.Passed+r.Failed > r.Limit {
		t.Fatalf("repeat %+v", r)
	}
	passed, failed, errored, runs := 0, 0, 0, 0
	for _, a := range c.Attempts {
		runs = max(runs, a.Run)
	}
	last := make([]string, runs+1)
	for _, a := range c.Attempts {
		last[a.Run] = a.Status
	}
	for _, st := range last[1:] {
		switch st {
		case "passed", "flaky":
			passed++
		case "failed":
			failed++
		default:
			errored++
		}
	}
	if passed != r.Passed || failed != r.Failed || errored != r.Errored {
		t.Errorf("attempts show %d passed, %d failed, %d errored runs; the repeat says %d, %d, %d", passed, failed, errored, r.Passed, r.Failed, r.Errored)
	}
	d := stats.Design{PassRate: r.PassRate, Margin: r.Margin, Confidence: r.Confidence}
	want := map[string]stats.Decision{"passed": stats.Pass, "failed": stats.Fail, "inconclusive": stats.Continue}[r.Decision]
	if got := d.Decide(r.Passed, r.Failed); r.Decision != "errored" && got != want {
		t.Errorf("decision %s, but the test on %d passes and %d failures says %s", r.Decision, r.Passed, r.Failed, got)
	}
	if r.Interval.Lower != d.Lower(r.Passed, r.Failed) || r.Interval.Level != r.Confidence {
		t.Errorf("interval %+v, want the lower bound of %d/%d at %v", r.Interval, r.Passed, r.Failed+r.Passed, r.Confidence)
	}
}

func TestStatisticalVerdicts(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name     string
		file     string
		env      map[string]string
		code     int
		status   string
		decision string
		// console must appear in the output.
		console []string
		check   func(t *testing.T, r statsRun, c statsCase)
	}
	cases := []testCase{
		{name: "a healthy agent passes", file: "suites/healthy.yaml", code: exitOK, status: "passed", decision: "passed",
			console: []string{"PASS " + statsTree + "/suites/healthy.yaml:6 tells callers the opening hours (passed ", "at 95% (needs 0.9 − 0.1)"},
			check: func(t *testing.T, r statsRun, c statsCase) {
				if c.Repeat.Interval.Lower < 0.8 {
					t.Errorf("passed with a lower bound of %v below 0.8", c.Repeat.Interval.Lower)
				}
				props := map[string]string{}
				for _, p := range r.junit.Suites[0].Cases[0].Properties {
					props[p.Name] = p.Value
				}
				if props["repeat.decision"] != "passed" || props["repeat.procedure"] != "sprt" || props["repeat.runs"] == "" {
					t.Errorf("JUnit properties %v", props)
				}
			}},
		{name: "a broken agent fails early", file: "suites/broken.yaml", code: exitFailed, status: "failed", decision: "failed",
			console: []string{"FAIL " + statsTree + "/suites/broken.yaml:5 renews a repeat prescription (passed ", "(needs 0.9)", "runs: ", "failed:"},
			check: func(t *testing.T, r statsRun, c statsCase) {
				// At a true rate of 0.5 the test takes 11.6 runs on
				// average, 21 at the 95th percentile (BENCHMARKS.md).
				if c.Repeat.Runs > 40 {
					t.Errorf("took %d runs to fail a 50%% agent", c.Repeat.Runs)
				}
			}},
		{name: "a borderline agent ends inconclusive", file: "suites/borderline.yaml", code: exitFailed, status: "failed", decision: "inconclusive",
			console: []string{"INCONCLUSIVE " + statsTree + "/suites/borderline.yaml:7 reads back test results (inconclusive: passed ", "of 20 runs, the most repeat allows",
				"warning: repeat: 20 is too few"},
			check: func(t *testing.T, r statsRun, c statsCase) {
				if c.Repeat.Runs != 20 || c.Repeat.Needed != 282 {
					t.Errorf("runs %d, needed %d", c.Repeat.Runs, c.Repeat.Needed)
				}
				if f := r.junit.Suites[0].Cases[0].Failure; f == nil || f.Type != "inconclusive" {
					t.Errorf("JUnit failure of an inconclusive case: %+v", f)
				}
			}},
		{name: "errored runs are excluded", file: "suites/healthy.yaml", env: map[string]string{simFlagsEnv: "--chat-timeout=0.1"},
			code: exitOK, status: "passed", decision: "passed",
			console: []string{"more errored, not counted)"},
			check: func(t *testing.T, r statsRun, c statsCase) {
				if c.Repeat.Errored == 0 {
					t.Errorf("no errored run under 10%% chat timeouts")
				}
			}},
		{name: "more than a third errored errors the case", file: "suites/healthy.yaml", env: map[string]string{simFlagsEnv: "--chat-timeout=0.6"},
			code: exitErrored, status: "errored", decision: "errored",
			console: []string{"ERROR " + statsTree + "/suites/healthy.yaml:6", "runs errored, more than a third"},
			check: func(t *testing.T, r statsRun, c statsCase) {
				if 3*c.Repeat.Errored <= c.Repeat.Runs {
					t.Errorf("errored with %d of %d runs errored", c.Repeat.Errored, c.Repeat.Runs)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runStats(t, tc.env, time.Time{}, statsTree+"/"+tc.file, "--seed", "7")
			c := r.only(t)
			if r.code != tc.code || c.Status != tc.status || c.Repeat.Decision != tc.decision {
				t.Fatalf("exit %d, %s (%s); want exit %d, %s (%s)\n%s%s", r.code, c.Status, c.Repeat.Decision, tc.code, tc.status, tc.decision, r.stdout, r.stderr)
			}
			checkEvidence(t, c)
			out := r.stdout + r.stderr
			for _, want := range tc.console {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if tc.check != nil {
				tc.check(t, r, c)
			}
			t.Logf("%s: %d runs (%d passed, %d failed, %d errored), interval [%.3f, %.3f]", tc.name, c.Repeat.Runs,
				c.Repeat.Passed, c.Repeat.Failed, c.Repeat.Errored, c.Repeat.Interval.Lower, c.Repeat.Interval.Upper)
		})
	}
}

// TestSeedReplaysVerdicts: under one seed a statistical scenario on the
// embedded simulator meets the same replies, run by run, whatever
// --parallel and whatever else the run selects, so a verdict seen once
// (a nightly rehearsal's, a red build's) replays. Before, the simulator
// drew from the order conversations reached it: the scenarios run
// before took other draws, and so did concurrent runs.
func TestSeedReplaysVerdicts(t *testing.T) {
	t.Parallel()
	const name = "renews a repeat prescription"
	type testCase struct {
		name string
		args []string
	}
	cases := []testCase{
		{name: "alone, one at a time", args: []string{statsTree + "/suites/broken.yaml"}},
		{name: "alone, in parallel", args: []string{statsTree + "/suites/broken.yaml", "--parallel", "8"}},
		{name: "after other scenarios, one at a time", args: []string{statsTree + "/suites"}},
		{name: "beside other scenarios, in parallel", args: []string{statsTree + "/suites", "--parallel", "8"}},
	}
	// strip is the case's counts and its runs' verdicts in start order.
	strip := func(r statsRun) string {
		for _, c := range r.cases {
			if c.Name != name || c.Repeat == nil {
				continue
			}
			runs := make([]string, c.Repeat.Runs)
			for _, a := range c.Attempts {
				runs[a.Run-1] = a.Status[:1]
			}
			return fmt.Sprintf("%s %d/%d %s", c.Repeat.Decision, c.Repeat.Passed, c.Repeat.Runs, strings.Join(runs, ""))
		}
		t.Fatalf("no repeated case %q:\n%s", name, r.stdout)
		return ""
	}
	want := ""
	for _, tc := range cases {
		got := strip(runStats(t, nil, time.Time{}, append(tc.args, "--seed", "7")...))
		if want == "" {
			want = got
			t.Logf("%s: %s", tc.name, got)
			continue
		}
		if got != want {
			t.Errorf("%s: %s; %s: %s", tc.name, got, cases[0].name, want)
		}
	}
}

// TestStatsFlags: --confidence and --pass-rate make a scenario that sets
// nothing statistical; a --repeat too small for them is warned of.
func TestStatsFlags(t *testing.T) {
	t.Parallel()
	r := runStats(t, nil, time.Time{}, statsTree+"/plain", "--confidence", "95%", "--pass-rate", "0.9", "--seed", "7")
	c := r.only(t)
	if r.code != exitOK || c.Repeat.Decision != "passed" || c.Repeat.Limit != 282 {
		t.Fatalf("exit %d, repeat %+v\n%s%s", r.code, c.Repeat, r.stdout, r.stderr)
	}
	checkEvidence(t, c)
	r = runStats(t, nil, time.Time{}, statsTree+"/plain", "--confidence", "0.95", "--pass-rate", "0.9", "--repeat", "40", "--seed", "7")
	if !strings.Contains(r.stderr, "agenttest: warning: --repeat 40 is too few for pass rate 0.9, margin 0.1 at 95% confidence") ||
		!strings.Contains(r.stderr, " (leave --repeat out: the default allows 282 runs") {
		t.Errorf("no warning of a small --repeat:\n%s", r.stderr)
	}
	bad := newCLI(t, repoRoot, nil, "run", statsTree+"/plain", "--confidence", "1.5")
	if code := bad.run(t); code != exitUsage || !strings.Contains(bad.stderr.String(), "--confidence must be above 0.5 and below 1, not 1.5") {
		t.Errorf("exit %d:\n%s", code, bad.stderr)
	}
	bad = newCLI(t, repoRoot, nil, "run", statsTree+"/plain", "--margin", "x")
	if code := bad.run(t); code != exitUsage || !strings.Contains(bad.stderr.String(), `agenttest: run: --margin "x": not a number above 0 such as 0.9 or 90%`) {
		t.Errorf("exit %d:\n%s", code, bad.stderr)
	}
}

// TestQuarantine: a quarantined failing scenario leaves the run green, is
// reported with its real outcome, and gates again once its quarantine has
// lapsed, which the run and lint say.
func TestQuarantine(t *testing.T) {
	t.Parallel()
	holds := runStats(t, nil, time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), statsTree+"/quarantine")
	if holds.code != exitOK {
		t.Fatalf("exit %d with a quarantined failure\n%s", holds.code, holds.stdout)
	}
	q := holds.cases[0]
	if q.Status != "failed" || q.Quarantine == nil || q.Quarantine.Lapsed || holds.counts["quarantined"] != 1 || holds.counts["failed"] != 0 {
		t.Errorf("quarantined case %+v, counts %v", q, holds.counts)
	}
	if jc := holds.junit.Suites[0].Cases[0]; jc.Failure != nil || jc.Skipped == nil {
		t.Errorf("quarantined case fails the JUnit report")
	}
	for _, want := range []string{"FAIL " + statsTree + "/quarantine/failing.yaml:6 says the clinic opens on Sundays (quarantined until 2026-12-31, @clinic-team",
		"quarantined, not gating the run:", "1 quarantined"} {
		if !strings.Contains(holds.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, holds.stdout)
		}
	}

	// Every selected scenario quarantined: it ran, so the run tested
	// something; it passed (exit 0), not "nothing was tested" (exit 5).
	only := runStats(t, nil, time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), statsTree+"/quarantine", "--name", "opens on Sundays")
	if only.code != exitOK || only.status != "passed" || !strings.Contains(only.stdout, "status: passed (1 quarantined case not gating the run)") {
		t.Errorf("only a quarantined failure: exit %d\n%s", only.code, only.stdout)
	}

	lapsed := runStats(t, nil, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), statsTree+"/quarantine")
	if lapsed.code != exitFailed || !lapsed.cases[0].Quarantine.Lapsed || lapsed.counts["failed"] != 1 {
		t.Fatalf("exit %d after the quarantine lapsed, counts %v\n%s", lapsed.code, lapsed.counts, lapsed.stdout)
	}
	for _, want := range []string{"quarantine lapsed after 2026-12-31: gates again", "quarantine lapsed, gating again:\n  " + statsTree + "/quarantine/failing.yaml:6 says the clinic opens on Sundays"} {
		if !strings.Contains(lapsed.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, lapsed.stdout)
		}
	}
	c := newCLI(t, repoRoot, nil, "lint", statsTree+"/quarantine")
	c.st.Now = func() time.Time { return time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC) }
	if code := c.run(t); code != exitOK || strings.Contains(c.stdout.String(), "lapsed") {
		t.Errorf("lint before the quarantine lapsed: exit %d:\n%s", code, c.stdout)
	}
	c = newCLI(t, repoRoot, nil, "lint", statsTree+"/quarantine")
	c.st.Now = func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }
	// A warning is a problem said: not "no problems".
	if code := c.run(t); code != exitOK || !strings.Contains(c.stdout.String(), `warning: quarantine of "says the clinic opens on Sundays" lapsed after 2026-12-31, its last day`) ||
		strings.Contains(c.stdout.String(), "no problems") {
		t.Errorf("lint exit %d:\n%s", code, c.stdout)
	}
}

// TestHistoryOfRealReports runs the release comparison suite and the
// healthy statistical scenario in the sandbox and then, twice, against the
// pre-release version of the agent (which dropped the nut-free note), and
// reads the three reports back.
func TestHistoryOfRealReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, env := range []string{"sandbox", "pre-release", "pre-release"} {
		name := filepath.Join(dir, []string{"r1.json", "r2.json", "r3.json"}[i])
		c := newCLI(t, repoRoot, examplesEnv(), "run", "examples/compare", statsTree+"/suites/healthy.yaml",
			"--name", "/nut-free|closes|opening hours/", "--env", env, "--seed", itoa(i+1), "--json", name)
		if code := c.run(t); code != exitOK && code != exitFailed {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, c.stdout, c.stderr)
		}
	}
	h := newCLI(t, dir, nil, "history", "r1.json", "r2.json", "r3.json")
	if code := h.run(t); code != exitOK {
		t.Fatalf("history exit %d: %s", code, h.stderr)
	}
	out := h.stdout.String()
	for _, want := range []string{
		"3 reports, oldest first:\n  1  r1.json  ",
		"went from passing to failing (1):\n  examples/compare/restaurant.yaml: says the kitchen is nut-free: passed in report 1, failed in report 2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	// The row of a scenario: runs, rate, interval, verdicts, flips.
	row := func(scenario string) []string {
		for l := range strings.SplitSeq(out, "\n") {
			if before, ok := strings.CutSuffix(l, scenario); ok {
				return strings.Fields(before)
			}
		}
		t.Errorf("no row for %s:\n%s", scenario, out)
		return make([]string, 5)
	}
	if got := row("examples/compare/restaurant.yaml: says the kitchen is nut-free"); strings.Join(got, " ") != "3 0.33 0.00–0.91 ✓✗✗ 1" {
		t.Errorf("nut-free row %q", got)
	}
	if got := row(statsTree + "/suites/healthy.yaml: tells callers the opening hours"); got[3] != "✓✓✓" || got[4] != "0" {
		t.Errorf("statistical row %q", got)
	}

	h = newCLI(t, dir, nil, "history", "--json", "r1.json", "r2.json", "r3.json")
	if code := h.run(t); code != exitOK {
		t.Fatalf("history --json exit %d: %s", code, h.stderr)
	}
	var doc struct {
		Schema    string `json:"schema"`
		Scenarios []struct {
			File, Name           string
			Runs, Passed, Failed int
			PassRate             *float64  `json:"pass_rate"`
			Verdicts             []*string `json:"verdicts"`
			Flips                int
			Regressed            bool
			Interval             struct{ Lower, Upper float64 }
		} `json:"scenarios"`
		Regressed []struct {
			Name               string
			PassedIn, FailedIn int `json:"-"`
		} `json:"regressed"`
	}
	if err := json.Unmarshal([]byte(h.stdout.String()), &doc); err != nil {
		t.Fatalf("history --json: %v\n%s", err, h.stdout)
	}
	if doc.Schema != "agenttest/history/v1" || len(doc.Regressed) != 1 || doc.Regressed[0].Name != "says the kitchen is nut-free" {
		t.Errorf("history --json: %s", h.stdout)
	}
	for _, s := range doc.Scenarios {
		if s.Name != "tells callers the opening hours" {
			continue
		}
		// The three sequential runs pooled: dozens of runs, a rate near
		// 0.95 and an interval around it.
		if s.Runs < 60 || s.PassRate == nil || *s.PassRate < 0.85 || s.Interval.Lower > *s.PassRate || s.Interval.Upper < *s.PassRate || s.Flips != 0 {
			t.Errorf("pooled statistical scenario: %+v", s)
		}
	}

	// A copy of the latest report beside the others (latest.json), and
	// reports given twice: each run counts once, as without them, with
	// a note naming the files that were the same run.
	b3, err := os.ReadFile(filepath.Join(dir, "r3.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "latest.json"), b3, 0o644); err != nil {
		t.Fatal(err)
	}
	var started struct {
		Run struct{ Started string }
	}
	if err := json.Unmarshal(b3, &started); err != nil || started.Run.Started == "" {
		t.Fatalf("r3.json: no start (%v)", err)
	}
	twice := newCLI(t, dir, nil, "history", "r1.json", "r2.json", "r3.json", "latest.json", "r1.json", "r3.json")
	if code := twice.run(t); code != exitOK || twice.stdout.String() != out {
		t.Errorf("history of a run given twice: exit %d, output differs from once:\n%s\nwant:\n%s", code, twice.stdout, out)
	}
	for _, want := range []string{
		"agenttest: history: latest.json and r3.json are the same run as r3.json (started " + started.Run.Started + "): counted once\n",
		"agenttest: history: r1.json is the same run as r1.json (started ",
	} {
		if !strings.Contains(twice.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, twice.stderr)
		}
	}
	if h := newCLI(t, dir, nil, "history", "r1.json", "r2.json", "r3.json"); h.run(t) != exitOK || h.stderr.String() != "" {
		t.Errorf("history of distinct runs notes: %s", h.stderr)
	}
	// The note is of anyone's text: a file name with a terminal escape
	// in it reaches stderr escaped.
	os.WriteFile(filepath.Join(dir, "hostile\x1b[2J.json"), b3, 0o644)
	esc := newCLI(t, dir, nil, "history", "r3.json", "hostile\x1b[2J.json")
	if code := esc.run(t); code != exitOK || strings.Contains(esc.stderr.String(), "\x1b") || !strings.Contains(esc.stderr.String(), `hostile\x1b[2J.json is the same run as r3.json`) {
		t.Errorf("history of a hostile report given twice: exit %d: %q", code, esc.stderr)
	}
	// A start with a terminal escape in it is no time: the report is
	// refused, as gate and merge refuse it, and the message escaped.
	hostile := strings.Replace(string(b3), `"started": "`, `"started": "\u001b[2J`, 1)
	os.WriteFile(filepath.Join(dir, "hostile.json"), []byte(hostile), 0o644)
	esc = newCLI(t, dir, nil, "history", "hostile.json")
	if code := esc.run(t); code != exitUsage || strings.Contains(esc.stderr.String(), "\x1b") ||
		!strings.Contains(esc.stderr.String(), `agenttest: history: hostile.json:4:16: not a JSON report: run.started: "\x1b[2J`) {
		t.Errorf("history of a report whose start is no time: exit %d: %q", code, esc.stderr)
	}

	bad := newCLI(t, dir, nil, "history", "r1.json", "missing.json")
	os.WriteFile(filepath.Join(dir, "junk.json"), []byte(`{"schema": "x"}`), 0o644)
	bad2 := newCLI(t, dir, nil, "history", "junk.json")
	if code := bad.run(t); code != exitUsage || !strings.Contains(bad.stderr.String(), "agenttest: history: missing.json: open: no such file or directory") {
		t.Errorf("missing report: exit %d: %s", code, bad.stderr)
	}
	// Reports anywhere, as for every command: ../ and absolute paths,
	// shown as given.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	far := newCLI(t, sub, nil, "history", "../r1.json", filepath.Join(dir, "r2.json"))
	if code := far.run(t); code != exitOK || !strings.Contains(far.stdout.String(), "says the kitchen is nut-free") {
		t.Errorf("history of reports outside the working directory: exit %d: %s%s", code, far.stdout, far.stderr)
	}
	if code := bad2.run(t); code != exitUsage || !strings.Contains(bad2.stderr.String(), `agenttest: history: junk.json: not an agenttest JSON report (schema "x", want "agenttest/result/v1")`) {
		t.Errorf("wrong schema: exit %d: %s", code, bad2.stderr)
	}
}
