package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestGateFilteredRun: a run narrowed by --name, --tags or FILE:LINE
// tested a subset of its files' scenarios, and its report said nothing
// of it: the gate passed a one-case run of a suite of two ("gate:
// passed" over "tested 1 case: 1 passed"), as it passes the full run.
// The report now records the filter (filter: {tags, name, at,
// left_out}), and the gate refuses it unless its own --tags and --name
// state that very filter; a FILE:LINE selection it always refuses.
func TestGateFilteredRun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	run := func(report string, args ...string) {
		t.Helper()
		newCLI(t, "testdata/pass", simEnv(s), append([]string{"run", "--json", at(report)}, args...)...).expect(t, exitOK, "status: passed")
	}
	gate := func(code int, args ...string) string {
		t.Helper()
		out := newCLI(t, dir, simEnv(s), append([]string{"gate"}, args...)...).expect(t, code)
		if code != exitOK && strings.Contains(out, "gate: passed") {
			t.Errorf("gate %s passed:\n%s", strings.Join(args, " "), out)
		}
		return out
	}
	run("name.json", "--name", "says goodbye")
	run("tags.json", "--tags", "@smoke")
	run("line.json", "suites/booking.yaml:22")
	run("all.json")
	run("alltags.json", "--tags", "@smoke or not @smoke")

	type testCase struct {
		name string
		args []string
		code int
		want []string
	}
	for _, tc := range []testCase{
		{name: "--name, unstated", args: []string{at("name.json")}, code: exitFailed, want: []string{
			"\n  tested 1 case: 1 passed\n  selected with --name \"says goodbye\": 1 scenario of its files left out\n",
			"gate: the run selected its scenarios with --name \"says goodbye\", leaving out 1 scenario of its files, and the gate states no filter: it tested a subset, not the whole selection; gate a run of the whole selection, or state the filter the pipeline intends with gate --tags and --name\n"}},
		{name: "--name, stated", args: []string{"--name", "says goodbye", at("name.json")}, code: exitOK, want: []string{
			"selected with --name \"says goodbye\": 1 scenario of its files left out\n", "gate: passed"}},
		{name: "--name, another stated", args: []string{"--name", "says", at("name.json")}, code: exitFailed, want: []string{
			"leaving out 1 scenario of its files, and the gate states --name \"says\": it tested a subset"}},
		{name: "--tags, unstated", args: []string{at("tags.json")}, code: exitFailed, want: []string{
			"gate: the run selected its scenarios with --tags \"@smoke\", leaving out 1 scenario of its files, and the gate states no filter"}},
		{name: "--tags, stated with --name too", args: []string{"--tags", "@smoke", "--name", "books", at("tags.json")}, code: exitFailed, want: []string{
			"and the gate states --tags \"@smoke\" --name \"books\": it tested a subset"}},
		{name: "--tags, stated", args: []string{"--tags", "@smoke", at("tags.json")}, code: exitOK, want: []string{"gate: passed"}},
		// A line picks scenarios by where they are written today: no
		// pipeline's intent, whatever the gate states.
		{name: "FILE:LINE", args: []string{"--name", "says goodbye", at("line.json")}, code: exitFailed, want: []string{
			"gate: the run selected its scenarios with suites/booking.yaml:22, leaving out 1 scenario of its files, and the gate states --name \"says goodbye\""}},
		{name: "FILE:LINE, nothing stated", args: []string{at("line.json")}, code: exitFailed, want: []string{
			"gate: the run selected its scenarios with suites/booking.yaml:22, leaving out 1 scenario of its files, and the gate states no filter"}},
		// A filter that left nothing out tested every scenario of the
		// run's files: no subset, whatever the gate states.
		{name: "--tags leaving nothing out, unstated", args: []string{at("alltags.json")}, code: exitOK, want: []string{
			"selected with --tags \"@smoke or not @smoke\": 0 scenarios of its files left out\n", "gate: passed"}},
		// A stated filter asks for no subset: the whole selection passes.
		{name: "whole selection, a filter stated", args: []string{"--tags", "@smoke", at("all.json")}, code: exitOK, want: []string{"tested 2 cases: 2 passed\n  restaurant in sandbox", "gate: passed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := gate(tc.code, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	// The filter is read as the deployments are: a member named again,
	// ignoring case, makes it no report (jq would read the other name).
	twice := nameAgain(t, at("name.json"), `"Name": "", `, `"filter": {`)
	newCLI(t, dir, simEnv(s), "gate", "--name", "says goodbye", twice).expect(t, exitUsage,
		": not a JSON report: filter.name: the object names this member a second time")
	if doc := decodeFile[struct {
		Filter *struct {
			Tags, Name string
			At         []string
			LeftOut    int `json:"left_out"`
		}
	}](t, at("line.json")); doc.Filter == nil || len(doc.Filter.At) != 1 || doc.Filter.At[0] != "suites/booking.yaml:22" || doc.Filter.LeftOut != 1 {
		t.Errorf("line.json's filter: %+v", doc.Filter)
	}
	if doc := decodeFile[map[string]any](t, at("all.json")); doc["filter"] != nil {
		t.Errorf("a run of the whole selection records filter %v", doc["filter"])
	}
}

// TestGateFilteredShards: the merge of every shard of a run narrowed by
// --tags and --name is a run of that subset too, and the gate weighs it
// as such.
func TestGateFilteredShards(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	// Three scenarios, of which the filter selects two, one per shard.
	suites := filepath.Join(dir, "suites")
	if err := os.Mkdir(suites, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suites, "goodbye.yaml"), []byte(`suite: goodbyes
agent: restaurant
scenarios:
  - name: says goodbye
    tags: [smoke]
    turns: [{say: "thanks, bye", expect: {ended: true}}]
  - name: says goodbye again
    tags: [smoke]
    turns: [{say: "bye", expect: {ended: true}}]
  - name: says goodbye once more
    turns: [{say: "goodbye", expect: {ended: true}}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"1", "2"} {
		newCLI(t, dir, simEnv(s), "run", "suites", "--tags", "@smoke", "--name", "/./", "--shard", k+"/2", "--json", at(k+".json")).expect(t, exitOK)
	}
	newCLI(t, dir, simEnv(s), "merge", at("1.json"), at("2.json"), "--json", at("m.json")).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "gate", at("m.json")).expect(t, exitFailed,
		"gate: the run selected its scenarios with --tags \"@smoke\" --name \"/./\", leaving out 1 scenario of its files, and the gate states no filter")
	newCLI(t, dir, simEnv(s), "gate", "--tags", "@smoke", "--name", "/./", at("m.json")).expect(t, exitOK, "gate: passed")
}

// TestGateFilteredComparison: compare --name compares a subset, and a
// comparison whose candidate is the stored report of a filtered run
// vouches for no more than that report: before, the gate passed both.
func TestGateFilteredComparison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live",
		"--name", "offers a booking", "--json", at("named.json")).expect(t, exitOK, "status: passed")
	newCLI(t, repoRoot, preRelease, "gate", at("named.json")).expect(t, exitFailed,
		"\n  selected with --name \"offers a booking\": 5 scenarios of its files left out\n",
		"gate: the comparison selected its scenarios with --name \"offers a booking\", leaving out 5 scenarios of its files, and the gate states no filter: it tested a subset, not the whole selection; gate a comparison of the whole selection")
	newCLI(t, repoRoot, preRelease, "gate", "--name", "offers a booking", at("named.json")).expect(t, exitOK, "gate: passed")
	// Each side that ran records the filter, as its run report would.
	type side struct{ Filter *struct{ Name string } }
	if doc := decodeFile[struct{ Baseline, Candidate side }](t, at("named.json")); doc.Baseline.Filter == nil || doc.Candidate.Filter == nil || doc.Candidate.Filter.Name != "offers a booking" {
		t.Errorf("the sides' filters: %+v %+v", doc.Baseline.Filter, doc.Candidate.Filter)
	}

	// A baseline report of a filtered run holds only its subset: every
	// other scenario would be only on the candidate, never regressed.
	// Before, the comparison passed (5 on one side only) and so did the
	// gate. It is refused as a shard's report is, unless the comparison
	// selects the same scenarios (and records that filter).
	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "live", "--allow-live", "--name", "offers a booking", "--json", at("base.json")).expect(t, exitOK)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", at("base.json"), "--candidate", "pre-release", "examples/compare",
		"--json", at("c.json")).expect(t, exitUsage,
		"--baseline "+at("base.json")+" is the report of a run narrowed by --name \"offers a booking\" (5 scenarios of its files left out): it holds only those cases, and every other scenario would show as only on the candidate, never as regressed; compare with the report of a run of the whole selection, or select the same scenarios here")
	compareCLI(t, repoRoot, nil, "compare", "--baseline", at("base.json"), "--candidate", "pre-release", "examples/compare",
		"--name", "offers a booking", "--json", at("c.json")).expect(t, exitOK, "1 changed")
	newCLI(t, repoRoot, preRelease, "gate", "--name", "offers a booking", at("c.json")).expect(t, exitOK, "gate: passed")

	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "pre-release", "--name", "offers a booking", "--json", at("cand.json")).expect(t, exitOK)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", at("cand.json"), "examples/compare/restaurant.yaml", "--allow-live",
		"--name", "/a/", "--json", at("stored.json")).expect(t, exitOK)
	newCLI(t, repoRoot, preRelease, "gate", "--name", "/a/", at("stored.json")).expect(t, exitFailed,
		"gate: the comparison's candidate, report "+at("cand.json")+", selected its scenarios with --name \"offers a booking\", leaving out 5 scenarios of its files, and the gate states --name \"/a/\"")
	twice := nameAgain(t, at("stored.json"), `"Name": "x", `, `"candidate": {`, `"filter": {`)
	newCLI(t, repoRoot, preRelease, "gate", twice).expect(t, exitUsage, ": not a JSON report: candidate.filter.name: the object names this member a second time")
}

// TestGateOnlyOnCandidateFailed: a baseline report from before a
// scenario was written lacks it, and the comparison regresses only what
// the baseline passed: the candidate failing the new scenario passed the
// comparison ("1 only on the candidate; the candidate's 6 cases: 5
// passed, 1 failed") and the gate. Nothing says live fails it too, so
// the gate refuses, naming it.
func TestGateOnlyOnCandidateFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	suite, err := os.ReadFile(filepath.Join(repoRoot, "examples/compare/restaurant.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The suite before its nut-free scenario (which pre-release fails)
	// was written: the baseline's run.
	cut := strings.Index(string(suite), "  - name: says the kitchen is nut-free")
	next := strings.Index(string(suite), "  - name: tells callers when the restaurant closes")
	if cut < 0 || next < cut {
		t.Fatal("examples/compare/restaurant.yaml has moved on: update the test")
	}
	for _, v := range []struct{ dir, text string }{
		{"before", string(suite[:cut]) + string(suite[next:])},
		{"now", string(suite)},
	} {
		if err := os.MkdirAll(filepath.Join(dir, v.dir, "suites"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, v.dir, "suites", "restaurant.yaml"), []byte(v.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	newCLI(t, filepath.Join(dir, "before"), nil, "run", "suites", "--env", "live", "--allow-live", "--json", at("live.json")).expect(t, exitFailed)
	compareCLI(t, filepath.Join(dir, "now"), nil, "compare", "--baseline", at("live.json"), "--candidate", "pre-release", "suites",
		"--json", at("c.json")).expect(t, exitOK, "status: passed")
	out := newCLI(t, dir, preRelease, "gate", at("c.json")).expect(t, exitFailed,
		"the candidate's 6 cases: 5 passed, 1 failed\n",
		"gate: 1 scenario only on the candidate failed or errored there (suites/restaurant.yaml:23:5 says the kitchen is nut-free): the baseline did not run it, so nothing says live fails it too, and the comparison passed over it; compare with a baseline that runs every scenario of the candidate\n")
	if strings.Count(out, "only on the candidate failed") != 1 {
		t.Errorf("the reason is said more than once:\n%s", out)
	}
}
