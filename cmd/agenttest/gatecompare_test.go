package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// The gate vouches through a comparison for no more than it vouches for
// through a run report: these tests close the comparison's path.

// preRelease is the environment of a gate whose target promotes from
// pre-release, the candidate of these comparisons.
var preRelease = map[string]string{"AGENTTEST_ENV": "pre-release"}

// TestGateRefusesRerunComparison: compare --rerun-failed re-tests only an
// earlier run's failures; its comparison says so (rerun: {of, failed},
// on each side that ran, too) and the gate refuses it as it refuses a
// --rerun-failed run's report. Before, the comparison carried no mark
// and the gate passed it. The same scenario compared as a selection of
// its own passes, so the refusal is the rerun's.
func TestGateRefusesRerunComparison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	live, rerun, named := filepath.Join(dir, "live.json"), filepath.Join(dir, "rerun.json"), filepath.Join(dir, "named.json")
	// live (1.0) fails the one scenario pre-release (1.1) fixes.
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "live", "--allow-live", "--json", live).expect(t, exitFailed)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "--allow-live",
		"--rerun-failed", live, "--json", rerun).
		expect(t, exitOK, "comparing 1 scenario", "1 fixed", "a rerun of the 1 case that failed or errored in "+live)
	doc := readCompareRerun(t, rerun)
	if doc.Rerun == nil || doc.Rerun.Of != live || doc.Rerun.Failed != 1 {
		t.Errorf("comparison's rerun %+v, want of %s, 1 failed", doc.Rerun, live)
	}
	if doc.Candidate.Rerun == nil || doc.Baseline.Rerun == nil {
		t.Errorf("sides' rerun %+v %+v, want both set", doc.Baseline.Rerun, doc.Candidate.Rerun)
	}
	newCLI(t, repoRoot, preRelease, "gate", rerun).expect(t, exitFailed,
		"compared 1 scenario: 1 fixed; the candidate's 1 case: 1 passed",
		"gate: the comparison reruns the 1 case that failed or errored in "+live+": it compared those again, not the whole selection")
	// The rerun a comparison states, and its candidate's, are read as
	// its deployments are: a member named again, ignoring case, makes
	// it no report the gate weighs (exit 2), whatever it says.
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{`"rerun": {`}, "rerun.failed"},
		{[]string{`"candidate": {`, `"rerun": {`}, "candidate.rerun.failed"},
	} {
		newCLI(t, repoRoot, preRelease, "gate", nameAgain(t, rerun, `"Failed": 0, `, tc.path...)).expect(t, exitUsage,
			": not a JSON report: "+tc.want+": the object names this member a second time")
	}

	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
		"--name", "tells callers when the restaurant closes", "--json", named).expect(t, exitOK, "1 fixed")
	if doc := readCompareRerun(t, named); doc.Rerun != nil || doc.Candidate.Rerun != nil {
		t.Errorf("a comparison without --rerun-failed says rerun %+v", doc.Rerun)
	}
	newCLI(t, repoRoot, preRelease, "gate", "--name", "tells callers when the restaurant closes", named).expect(t, exitOK, "gate: passed")
}

// compareRerunDoc is what these tests read of a comparison's selection.
type compareRerunDoc struct {
	Rerun *struct {
		Of     string
		Failed int
	}
	Baseline, Candidate struct {
		Rerun *struct{ Of string }
		Shard *struct{ Index, Total int }
	}
}

func readCompareRerun(t *testing.T, path string) compareRerunDoc {
	t.Helper()
	return decodeFile[compareRerunDoc](t, path)
}

// TestGateComparisonOfStoredCandidate: a comparison whose candidate is a
// stored report vouches for no more than that report: a shard's report
// and a --rerun-failed run's report are refused through a comparison as
// they are alone (before, both comparisons passed the gate), and a
// report without deployment evidence is refused with the comparison's
// words. compare warns of each while it compares. A baseline report of
// a shard or a rerun is refused by compare itself (exit 2): every other
// scenario would show as only on the candidate, never as regressed.
func TestGateComparisonOfStoredCandidate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	run := func(code int, args ...string) {
		t.Helper()
		newCLI(t, repoRoot, nil, append([]string{"run", "examples/compare"}, args...)...).expect(t, code)
	}
	two := "/offers a booking|answers menu/"
	run(exitFailed, "--env", "live", "--allow-live", "--json", at("live.json"))
	run(exitOK, "--env", "pre-release", "--name", two, "--shard", "1/2", "--json", at("shard.json"))
	// The rerun runs the files live.json names: no path.
	newCLI(t, repoRoot, nil, "run", "--env", "pre-release", "--rerun-failed", at("live.json"), "--json", at("rerun.json")).expect(t, exitOK)
	run(exitOK, "--env", "pre-release", "--name", "offers a booking", "--json", at("bare.json"))
	editReport(t, at("bare.json"), func(doc map[string]any) { delete(doc, "deployments") })
	// Shard 1/2 of two scenarios, and shard 2/2 of another selection:
	// merged with --force, of no one selection.
	run(exitOK, "--env", "pre-release", "--name", "/offers a booking|answers menu|closes/", "--shard", "2/2", "--json", at("other.json"))
	newCLI(t, repoRoot, nil, "merge", "--force", at("shard.json"), at("other.json"), "--json", at("forced.json")).expect(t, exitOK)
	forced := "a report agenttest merge --force wrote of reports that are not every shard of one selection on one target (" + at("other.json") + " ran another selection than " + at("shard.json")

	type testCase struct {
		name, candidate, filter string
		warn, refuse            string
	}
	for _, tc := range []testCase{
		{name: "a shard's report", candidate: "shard.json", filter: two,
			warn:   "--candidate " + at("shard.json") + " is the report of shard 1 of 2 of a selection of 2 scenarios (run --shard): the comparison covers only those cases, and agenttest gate refuses it",
			refuse: "gate: the comparison's candidate, report " + at("shard.json") + ", is shard 1 of 2: it tested its share of the selection's 2 scenarios, not all of them"},
		{name: "a rerun's report", candidate: "rerun.json", filter: "closes",
			warn:   "--candidate " + at("rerun.json") + " is the report of a --rerun-failed run, of the 1 case that failed or errored in " + at("live.json"),
			refuse: "gate: the comparison's candidate, report " + at("rerun.json") + ", reruns the 1 case that failed or errored in " + at("live.json") + ": it tested those again"},
		{name: "a forced merge's report", candidate: "forced.json", filter: two,
			warn:   "--candidate " + at("forced.json") + " is " + forced,
			refuse: "gate: the comparison's candidate, report " + at("forced.json") + ", was merged with --force of reports that are not every shard of one selection on one target (" + at("other.json") + " ran another selection"},
		{name: "a report without deployments", candidate: "bare.json", filter: "offers a booking",
			warn:   "--candidate " + at("bare.json") + " records no deployment",
			refuse: "gate: the comparison records no deployment of its candidate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "c.json")
			compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", at(tc.candidate), "examples/compare", "--allow-live",
				"--name", tc.filter, "--json", out).expect(t, exitOK, "status: passed", tc.warn)
			newCLI(t, repoRoot, preRelease, "gate", out).expect(t, exitFailed, tc.refuse)
		})
	}
	for _, tc := range []struct{ baseline, want string }{
		{"shard.json", "--baseline " + at("shard.json") + " is the report of shard 1 of 2 of a selection of 2 scenarios (run --shard): it holds only those cases, and every other scenario would show as only on the candidate, never as regressed; compare with the report agenttest merge writes of every shard"},
		{"rerun.json", "--baseline " + at("rerun.json") + " is the report of a --rerun-failed run, of the 1 case that failed or errored in " + at("live.json") + ": it holds only those cases"},
		{"forced.json", "--baseline " + at("forced.json") + " is " + forced},
	} {
		t.Run("baseline "+tc.baseline, func(t *testing.T) {
			t.Parallel()
			c := compareCLI(t, repoRoot, nil, "compare", "--baseline", at(tc.baseline), "--candidate", "pre-release", "examples/compare")
			if out := c.expect(t, exitUsage, tc.want); strings.Contains(out, "comparing") {
				t.Errorf("compare ran sides before refusing its baseline:\n%s", out)
			}
		})
	}
}

// TestCompareTargetsPinnedEnvironment: a suite that says env: sandbox
// runs in sandbox on a target side, whatever the target's env, as in run.
// compare says so before it runs, for each target side, with run's rule
// (envPins): a warning, and the gate of the candidate's target refuses
// the comparison; a live side that would test nothing in live is
// refused before anything runs (before, nothing was said and both sides
// tested sandbox).
func TestCompareTargetsPinnedEnvironment(t *testing.T) {
	t.Parallel()
	// The candidate, target rc, runs on the test's simulator, which
	// thinks on a fake clock that side's client reads too, as a side on
	// the embedded simulator does (compareCLI): its latencies are the
	// think times, not a loaded machine's stalls, which made the scenario
	// "1 slower" (445ms against the baseline's 0 under -parallel 32).
	clk := fakeclock.New()
	clk.Advance(time.Since(fakeclock.Start))
	s, dir := pinnedTargets(t, func(o *sim.Options) {
		o.Now = clk.Now
		o.Sleep = func(ctx context.Context, d time.Duration) { _ = clk.Sleep(ctx, d) }
	})
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey}
	out := filepath.Join(dir, "c.json")
	c := compareCLI(t, dir, env, "compare", "--baseline", "sandbox", "--candidate", "target:rc", "compare", "--name", "menu", "--json", out)
	c.st.Now = clk.Now
	c.st.Stderr = c.st.Stdout // one stream, to see what comes first
	text := c.expect(t, exitOK,
		"agenttest: --candidate target:rc:\ncompare/restaurant.yaml:52:5: warning: scenario \"answers menu questions\" runs in sandbox, not in pre-release, the environment of target \"rc\" (set by target \"rc\" env (agenttest.yaml:13:10)): a suite's or scenario's env: (or an @env: tag) wins over the target's",
		"1 unchanged")
	// Said before the sides run.
	if w, r := strings.Index(text, "warning:"), strings.Index(text, "comparing 1 scenario"); w < 0 || r < w {
		t.Errorf("the warnings do not precede the run:\n%s", text)
	}
	doc := readCompare(t, out)
	if len(doc.Candidate.Deployments) != 1 || doc.Candidate.Deployments[0].Env != "sandbox" {
		t.Errorf("candidate deployments %+v, want sandbox's", doc.Candidate.Deployments)
	}
	newCLI(t, dir, env, "gate", out, "--target", "rc").expect(t, exitFailed, `restaurant: the report tested sandbox, not pre-release, the environment of the gate's target "rc"`)

	// A live side whose every scenario runs in sandbox tests nothing in
	// live: refused, as run refuses it, before anything runs.
	c = compareCLI(t, dir, env, "compare", "--baseline", "target:prod", "--candidate", "target:rc", "compare", "--name", "menu")
	text = c.expect(t, exitUsage, "agenttest: --baseline target:prod:\ncompare/restaurant.yaml:52:5: scenario \"answers menu questions\" runs in sandbox, not in live",
		"no selected scenario runs in live")
	if strings.Contains(text, "comparing") {
		t.Errorf("a side refused, yet the comparison ran:\n%s", text)
	}
}

// TestCompareTargetLacksAgent: a side whose target cannot run the
// scenarios (here no agent: the suite names none and target rc has no
// agent_id) is refused, with the side named, before either side runs:
// the check came after the baseline had started, which went on running
// while the command returned and closed its client under it.
func TestCompareTargetLacksAgent(t *testing.T) {
	t.Parallel()
	s, dir := compareTargets(t)
	suite := filepath.Join(dir, "compare", "restaurant.yaml")
	b, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suite, []byte(strings.Replace(string(b), "agent: restaurant\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agenttest.yaml")
	b, err = os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// prod keeps its agent_id; rc loses its own.
	i := strings.Index(string(b), "  rc:\n")
	i += strings.Index(string(b[i:]), "    agent_id: restaurant\n")
	if err := os.WriteFile(cfg, append(b[:i:i], b[i+len("    agent_id: restaurant\n"):]...), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey}
	c := compareCLI(t, dir, env, "compare", "--baseline", "target:prod", "--candidate", "target:rc", "compare")
	text := c.expect(t, exitUsage, "agenttest: --candidate target:rc:\ncompare/restaurant.yaml:", `names no agent and target "rc" has no agent_id`)
	if strings.Contains(text, "comparing") || strings.Contains(text, "baseline target:prod:") {
		t.Errorf("a side refused, yet the comparison ran:\n%s", text)
	}
}

// pinnedTargets is compareTargets with the example suite pinned to
// sandbox (env: sandbox).
func pinnedTargets(t *testing.T, tweaks ...func(*sim.Options)) (*simtest.Sim, string) {
	t.Helper()
	s, dir := compareTargets(t, tweaks...)
	suite := filepath.Join(dir, "compare", "restaurant.yaml")
	b, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suite, []byte(strings.Replace(string(b), "agent: restaurant\n", "agent: restaurant\nenv: sandbox\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// TestRunWarnsOfPinnedEnvironments: run --target rc (env pre-release)
// over a suite that says env: sandbox tests sandbox, as documented (a
// suite's env wins); run says so once for the file, at its first
// scenario, before anything runs, and goes on (TestNightlyEnvPins has
// the refusal for live). Without an env chosen by the user, the suites'
// own env: is how a project spreads its scenarios, and nothing is said.
func TestRunWarnsOfPinnedEnvironments(t *testing.T) {
	t.Parallel()
	s, dir := pinnedTargets(t)
	env := map[string]string{"SIM_URL": s.BuildURL, "SIM_KEY": s.BuildKey}
	c := newCLI(t, dir, env, "run", "--target", "rc", "compare")
	c.st.Stderr = c.st.Stdout // one stream, to see what comes first
	text := c.expect(t, exitOK,
		"compare/restaurant.yaml:24:5: warning: 6 selected scenarios of this file run in sandbox, not in pre-release, the environment of target \"rc\"",
		"remove env: from the suite and its scenarios to test them in pre-release",
		"deployment of restaurant in sandbox")
	if strings.Count(text, "warning:") != 1 {
		t.Errorf("want one warning for the six scenarios:\n%s", text)
	}
	if w, r := strings.Index(text, "warning:"), strings.Index(text, "running 6 cases"); w < 0 || r < w {
		t.Errorf("the warning does not precede the run:\n%s", text)
	}
	// Asked for sandbox, the environment they are pinned to: they run
	// where the job asked, nothing to say.
	if text := newCLI(t, dir, env, "run", "--target", "rc", "--env", "sandbox", "compare").expect(t, exitOK, "running 6 cases"); strings.Contains(text, "warning:") {
		t.Errorf("scenarios pinned to the environment asked for warn:\n%s", text)
	}
	// The same run without the target's env chosen: nothing to say.
	cfg := filepath.Join(dir, "agenttest.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), "    env: pre-release\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if text := newCLI(t, dir, env, "run", "--target", "rc", "compare").expect(t, exitOK); strings.Contains(text, "warning:") {
		t.Errorf("a target without env warns:\n%s", text)
	}
}

// TestGateRefusesAMemberNamedTwice: a report whose deployment names its
// id twice, once as "id" and once in another case ("Id"), reads as two
// deployments: agenttest takes the last of names equal ignoring case
// (encoding/json), jq takes "id". The gate vouched for the one it read,
// active now, while the promote step of docs/promoting.md, `jq -r
// '.deployments[] | select(.env == "sandbox") | .id'`, took the other:
// a deployment never tested. It refuses such a report (exit 2, at the
// second name), of a run and of a comparison alike, and still passes
// the report as written.
func TestGateRefusesAMemberNamedTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// twice writes report with the first deployment id after marker
	// given first as dep-never-tested, then as it was, under "Id".
	twice := func(t *testing.T, report, marker string) string {
		t.Helper()
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		from := strings.Index(doc, marker)
		i := strings.Index(doc[from:], `"id": "dep-`)
		if from < 0 || i < 0 {
			t.Fatalf("no deployment id after %q in %s", marker, doc)
		}
		i += from
		out := filepath.Join(t.TempDir(), "twice.json")
		doc = doc[:i] + `"id": "dep-never-tested", "Id"` + doc[i+len(`"id"`):]
		if err := os.WriteFile(out, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("a run's report", func(t *testing.T) {
		t.Parallel()
		s, dir, report := passedReport(t)
		newCLI(t, dir, simEnv(s), "gate", report).expect(t, exitOK, "gate: passed")
		out := newCLI(t, dir, simEnv(s), "gate", twice(t, report, `"deployments"`)).expect(t, exitUsage,
			"twice.json:20:", `: not a JSON report: deployments[0].Id: the object names this member a second time (names compared ignoring case, as agenttest reads them): readers of the document disagree on which value it holds`)
		if strings.Contains(out, "gate: passed") {
			t.Errorf("the gate passed a report naming a deployment's id twice:\n%s", out)
		}
	})
	// The run, target and shard a report states, as much as its
	// deployments: a member named again, ignoring case, after its
	// object opens.
	t.Run("a run's other objects", func(t *testing.T) {
		t.Parallel()
		s, dir, report := passedReport(t)
		sharded := filepath.Join(dir, "shard.json")
		newCLI(t, "testdata/pass", simEnv(s), "run", "--shard", "1/2", "--json", sharded).expect(t, exitOK)
		for _, tc := range []struct{ report, object, again, want string }{
			{report, `"run": {`, `"Status": "failed", `, "run.status"},
			{report, `"target": {`, `"Build_URL": "https://build.eu.example.com", `, "target.build_url"},
			{sharded, `"shard": {`, `"Total": 1, `, "shard.total"},
		} {
			twice := nameAgain(t, tc.report, tc.again, tc.object)
			out := newCLI(t, dir, simEnv(s), "gate", twice).expect(t, exitUsage, ": not a JSON report: "+tc.want+": the object names this member a second time")
			if strings.Contains(out, "gate: passed") {
				t.Errorf("the gate passed a report naming %s twice:\n%s", tc.want, out)
			}
		}
	})
	t.Run("a comparison", func(t *testing.T) {
		t.Parallel()
		report := filepath.Join(dir, "c.json")
		compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
			"--name", "offers a booking", "--json", report).expect(t, exitOK, "status: passed")
		newCLI(t, repoRoot, preRelease, "gate", "--name", "offers a booking", report).expect(t, exitOK, "gate: passed")
		out := newCLI(t, repoRoot, preRelease, "gate", twice(t, report, `"candidate": {`)).expect(t, exitUsage,
			": not a JSON report: candidate.deployments[0].Id: the object names this member a second time")
		if strings.Contains(out, "gate: passed") {
			t.Errorf("the gate passed a comparison naming a deployment's id twice:\n%s", out)
		}
		out = newCLI(t, repoRoot, preRelease, "gate", nameAgain(t, report, `"Build_URL": "https://build.eu.example.com", `, `"candidate": {`, `"target": {`)).expect(t, exitUsage,
			": not a JSON report: candidate.target.build_url: the object names this member a second time")
		if strings.Contains(out, "gate: passed") {
			t.Errorf("the gate passed a comparison naming its candidate's target twice:\n%s", out)
		}
	})
}

// nameAgain writes a copy of report with again (`"Member": value, `)
// right after an object opens, the first of path after the first of
// the path before it: a member the report names later, named again
// ignoring case.
func nameAgain(t *testing.T, report, again string, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for _, object := range path {
		j := strings.Index(string(b[i:]), object)
		if j < 0 {
			t.Fatalf("no %s after offset %d in %s", object, i, b)
		}
		i += j + len(object)
	}
	out := filepath.Join(t.TempDir(), "twice.json")
	if err := os.WriteFile(out, []byte(string(b[:i])+again+string(b[i:])), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGateComparisonCountsFollowPairs: the status a comparison's pairs
// give is derived from the pairs themselves, not from the counts the
// file states beside them. A comparison that compared nothing (every
// scenario on one side only: status empty) edited to say passed, with
// its counts edited to say two scenarios unchanged, was passed by the
// gate, whose verdict counted the stated counts, and whose log said
// "compared 2 scenarios: 2 unchanged".
func TestGateComparisonCountsFollowPairs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, out := filepath.Join(dir, "base.json"), filepath.Join(dir, "c.json")
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "pre-release", "--name", "offers a booking", "--json", base).expect(t, exitOK)
	// A baseline narrowed otherwise than the comparison is refused
	// (TestGateFilteredComparison); as a report of an agenttest that did
	// not record its filter, it holds no scenario the candidate runs.
	editReport(t, base, func(doc map[string]any) { delete(doc, "filter") })
	compareCLI(t, repoRoot, nil, "compare", "--baseline", base, "--candidate", "pre-release", "examples/compare",
		"--name", "answers menu", "--json", out).expect(t, exitEmpty, "status: empty")
	// The baseline report says the environment it tested: a baseline of
	// sandbox, or of another target, shows where live was meant.
	newCLI(t, repoRoot, preRelease, "gate", out).expect(t, exitFailed, "gate: the comparison did not pass: its status is empty",
		"\n  against the baseline report "+base+" (target sim, env pre-release): run passed, started ")
	editReport(t, out, func(doc map[string]any) {
		doc["status"], doc["why"] = "passed", "nothing regressed"
		doc["counts"] = map[string]any{"total": 2, "unchanged": 2}
	})
	g := newCLI(t, repoRoot, preRelease, "gate", "--name", "answers menu", out)
	got := g.expect(t, exitFailed, "compared 1 scenario: 1 only on the candidate; the candidate's 1 case: 1 passed\n",
		"gate: the report says its comparison passed, but its pairs and sides say empty (nothing was compared: no scenario ran on both sides)")
	if strings.Contains(got, "unchanged") {
		t.Errorf("the gate's log repeats the counts the file states over its pairs:\n%s", got)
	}
}

// TestGateComparisonQuarantined: a candidate's case under quarantine is
// said as such in the gate's log, not as a failure beside "gate:
// passed" (before: "the candidate's 2 cases: 1 passed, 1 failed"). A
// comparison of quarantined scenarios alone passes, as nothing gating
// regressed, and compared nothing that gates: the gate refuses it
// (before: "gate: passed").
func TestGateComparisonQuarantined(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "c.json")
	compareCLI(t, "testdata", nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "quarantined",
		"--json", out).expect(t, exitOK)
	// It says what the candidate was compared with: a reviewer reads
	// whether that was live, and how old, before the promotion.
	newCLI(t, "testdata", preRelease, "gate", out).expect(t, exitOK,
		"; the candidate's 2 cases: 1 passed, 1 quarantined (not gating)\n  against the baseline sandbox (target sim, env sandbox): run passed, started ", "gate: passed")

	compareCLI(t, "testdata", nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "quarantined",
		"--name", "opens on Sundays", "--json", out).expect(t, exitOK, "status: passed")
	newCLI(t, "testdata", preRelease, "gate", "--name", "opens on Sundays", out).expect(t, exitFailed,
		"compared 1 scenario: 1 unchanged; the candidate's 1 case: 1 quarantined (not gating)\n", "gate: refused\n",
		"gate: every scenario the comparison compared is quarantined (1 of the candidate's cases): a quarantine never fails a comparison, so it vouches for nothing")
}

// TestCompareInterruptedReport: a stored report of an interrupted run is
// a side that stopped early. The comparison that reads it is not
// interrupted: before, it said "status: interrupted (a side was
// interrupted before every case finished)" and exited 130, the code of a
// signal, which no rerun of the job would change.
func TestCompareInterruptedReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, out := filepath.Join(dir, "base.json"), filepath.Join(dir, "c.json")
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--json", base).expect(t, exitOK)
	editReport(t, base, func(doc map[string]any) {
		run := doc["run"].(map[string]any)
		run["interrupted"], run["status"] = true, "interrupted"
		c := doc["files"].([]any)[0].(map[string]any)["cases"].([]any)[0].(map[string]any)
		c["status"], c["skip_reason"] = "pending", "not run: run interrupted"
	})
	compareCLI(t, repoRoot, nil, "compare", "--baseline", base, "--candidate", "pre-release", "examples/compare", "--json", out).expect(t, exitErrored,
		"status: errored (the baseline report's run ("+base+") was interrupted: the cases it left unrun were not compared)\n")
	newCLI(t, repoRoot, preRelease, "gate", out).expect(t, exitFailed, "gate: the comparison did not pass: its status is errored")
}

// TestGateSaysEmbedded: a gate with no platform configured gates on the
// embedded simulator, and says so before its verdict: before, a
// promotion job whose target was left unset printed "gate: passed" over
// the simulator's deployments with nothing to tell them from a
// platform's.
func TestGateSaysEmbedded(t *testing.T) {
	t.Parallel()
	report := filepath.Join(t.TempDir(), "r.json")
	newCLI(t, "testdata/pass", nil, "run", "--json", report).expect(t, exitOK)
	newCLI(t, "testdata/pass", nil, "gate", report).expect(t, exitOK,
		"\n  on the embedded simulator, as no platform is configured (--target, or AGENTTEST_BUILD_URL): its deployments are no platform's\ngate: passed")
}

// TestGateHeaderShowsNoKey: the gate's header quotes a comparison's
// report, a file anyone may have edited: a key the environment holds,
// written into its status, its baseline's spec or target, shows
// in none of its forms. Before, the header and the baseline line showed
// it as written.
func TestGateHeaderShowsNoKey(t *testing.T) {
	t.Parallel()
	const key = "sk-live-PLANTED+key/0123é"
	dir := t.TempDir()
	report := filepath.Join(dir, "c.json")
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
		"--name", "tells callers when the restaurant closes", "--json", report).expect(t, exitOK, "1 fixed")
	editReport(t, report, func(doc map[string]any) {
		b := doc["baseline"].(map[string]any)
		b["spec"] = key + "\x1b[2J"
		b["target"].(map[string]any)["name"] = key
	})
	env := map[string]string{"AGENTTEST_ENV": "pre-release", "AGENTTEST_BUILD_KEY": key}
	out := newCLI(t, repoRoot, env, "gate", "--name", "tells callers when the restaurant closes", report).expect(t, exitOK, "against the baseline [REDACTED]", "(target [REDACTED], env live)", "gate: passed")
	// The status heads the verdict as the report states it.
	editReport(t, report, func(doc map[string]any) { doc["status"] = key })
	out += newCLI(t, repoRoot, env, "gate", report).expect(t, exitFailed, "c.json: comparison [REDACTED], ended", "its status is [REDACTED]")
	for _, form := range secret.Forms(key) {
		if strings.Contains(out, form) {
			t.Errorf("the gate's output holds %q:\n%s", form, out)
		}
	}
}
