package main

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// gateSuiteFiles are the suites the gate's --suite tests write: two
// scenarios of the restaurant (one tagged), one skipped, and one of the
// clinic.
var gateSuiteFiles = map[string]string{
	"suites/restaurant.yaml": `suite: restaurant
agent: restaurant
scenarios:
  - name: says goodbye
    tags: [smoke]
    turns:
      - say: thanks, bye
        expect: {ended: true}
  - name: says goodbye again
    turns:
      - say: bye
        expect: {ended: true}
  - name: shows the menu
    skip: the menu is not written yet
    turns:
      - say: menu
        expect: {ended: true}
`,
	"suites/clinic.yaml": `suite: clinic
agent: clinic
scenarios:
  - name: greets
    greeting: {response: {contains: Riverside Clinic}}
`,
}

// edited is files (path: text) with the edits given (path: text
// replacing or adding a file; "" removes it).
func edited(files, edits map[string]string) map[string]string {
	out := maps.Clone(files)
	for name, text := range edits {
		out[name] = text
		if text == "" {
			delete(out, name)
		}
	}
	return out
}

// TestGateSuite: the gate did not weigh the paths a run was given. A run
// of suites/restaurant.yaml where the pipeline means suites, a report of
// an older checkout, or of a suite that has gained a scenario since, all
// passed it as if the whole suite was tested ("gate: passed" over
// "tested 2 cases: 2 passed"). gate --suite PATH loads the suite as run
// does, selects its scenarios by the gate's --tags and --name, and
// refuses a report that did not run each (skipped ones aside) of the
// agents promoted, naming each by FILE:LINE:COL and name. The report
// records the paths its run was given, which the gate's header names.
func TestGateSuite(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := writeTree(t, gateSuiteFiles)
	at := func(name string) string { return filepath.Join(dir, name) }
	run := func(report string, args ...string) {
		t.Helper()
		newCLI(t, dir, simEnv(s), append([]string{"run", "--json", at(report)}, args...)...).expect(t, exitOK, "status: passed")
	}
	run("all.json", "suites")
	run("one.json", "suites/restaurant.yaml")
	run("smoke.json", "suites", "--tags", "@smoke")
	run("nopath.json")
	// An empty selection records its paths too.
	newCLI(t, dir, simEnv(s), "run", "suites/clinic.yaml", "--tags", "@none", "--allow-empty", "--json", at("empty.json")).expect(t, exitOK)
	for _, k := range []string{"1", "2"} {
		newCLI(t, dir, simEnv(s), "run", "./suites/", "--shard", k+"/2", "--json", at(k+".json")).expect(t, exitOK)
	}
	newCLI(t, dir, simEnv(s), "merge", at("1.json"), at("2.json"), "--json", at("merged.json")).expect(t, exitOK)

	restaurant := gateSuiteFiles["suites/restaurant.yaml"]
	// The suite has gained a scenario since the run, and the one
	// skipped then is no longer skipped: a report of the checkout before.
	gained := writeTree(t, edited(gateSuiteFiles, map[string]string{"suites/restaurant.yaml": strings.Replace(restaurant,
		"    skip: the menu is not written yet\n", "", 1) + `  - name: says the kitchen is nut-free
    turns: [{say: "is the kitchen nut-free?", expect: {response: {contains: nut}}}]
`}))
	// Lines moved, names kept: the same scenarios.
	moved := writeTree(t, edited(gateSuiteFiles, map[string]string{"suites/restaurant.yaml": "# The restaurant's scenarios.\n\n" + restaurant}))
	// The file renamed: its scenarios are another file's now.
	renamed := writeTree(t, edited(gateSuiteFiles, map[string]string{"suites/restaurant.yaml": "", "suites/dining.yaml": restaurant}))
	// A scenario that names no agent talks to the target's.
	anon := writeTree(t, edited(gateSuiteFiles, map[string]string{"suites/anon.yaml": `suite: anon
scenarios:
  - name: waves
    turns: [{say: "bye", expect: {ended: true}}]
`}))
	// A report written before runs recorded their paths.
	old, err := os.ReadFile(at("all.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("old.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	editReport(t, at("old.json"), func(doc map[string]any) { delete(doc, "paths") })
	broken := writeTree(t, edited(gateSuiteFiles, map[string]string{"suites/clinic.yaml": "suite: clinic\nscenarios:\n  - name: greets\n    greting: {}\n"}))

	type testCase struct {
		name string
		args []string
		// dir is the checkout the gate runs in (default: the one the
		// reports were run in); env adds to the simulator's variables.
		dir string
		env map[string]string
		// code is the gate's exit code; the output holds each of want,
		// and none of reject.
		code         int
		want, reject []string
	}
	for _, tc := range []testCase{
		{name: "the whole suite", args: []string{"--suite", "suites", at("all.json")}, code: exitOK, want: []string{
			"  paths the run was given: suites\n  --suite suites: the report ran 3 of its 3 scenarios\n", "gate: passed"}},
		{name: "the whole suite, spelt otherwise", args: []string{"--suite", "./suites/clinic.yaml,suites/restaurant.yaml", at("all.json")}, code: exitOK, want: []string{
			"  --suite suites/clinic.yaml suites/restaurant.yaml: the report ran 3 of its 3 scenarios\n", "gate: passed"}},
		{name: "the suite by its absolute path", args: []string{"--suite", at("suites"), at("all.json")}, code: exitOK, want: []string{
			"the report ran 3 of its 3 scenarios\n", "gate: passed"}},
		{name: "a report that records no paths", args: []string{"--suite", "suites", at("old.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 3 of its 3 scenarios\n", "gate: passed"}, reject: []string{"paths the run was given", "\n  \n"}},
		{name: "no agent named: the target's", dir: anon, env: map[string]string{"AGENTTEST_AGENT_ID": "restaurant"}, args: []string{"--suite", "suites", "--agent", "clinic", at("all.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 1 of its 1 scenario of clinic\n", "gate: passed"}},
		{name: "no agent named: the target's, promoted", dir: anon, env: map[string]string{"AGENTTEST_AGENT_ID": "restaurant"}, args: []string{"--suite", "suites", "--agent", "restaurant", at("all.json")}, code: exitFailed, want: []string{
			"gate: the report did not run 1 of the 3 scenarios of restaurant that --suite suites selects: suites/anon.yaml:3:5 waves;"}},
		{name: "no path given to run", args: []string{"--suite", "suites", at("nopath.json")}, code: exitOK, want: []string{
			"  paths the run was given: .\n", "gate: passed"}},
		{name: "one file of the suite", args: []string{"--suite", "suites", at("one.json")}, code: exitFailed, want: []string{
			"  paths the run was given: suites/restaurant.yaml\n  --suite suites: the report ran 2 of its 3 scenarios\n  not run by the report:\n    suites/clinic.yaml:4:5 greets\ngate: refused\n",
			"gate: the report did not run 1 of the 3 scenarios that --suite suites selects: suites/clinic.yaml:4:5 greets; a run of other paths, of an older checkout, or of a suite that has gained scenarios since vouches for none of them: run the tests of the suite as it is now, and gate that report\n"}},
		{name: "one file, by the variable", env: map[string]string{"AGENTTEST_GATE_SUITE": "suites"}, args: []string{at("one.json")}, code: exitFailed, want: []string{
			"gate: the report did not run 1 of the 3 scenarios that --suite suites selects: suites/clinic.yaml:4:5 greets;"}},
		{name: "one file, its agent promoted", args: []string{"--suite", "suites", "--agent", "restaurant", at("one.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 2 of its 2 scenarios of restaurant\n", "gate: passed"}},
		{name: "one file, the other agent promoted", args: []string{"--suite", "suites", "--agent", "clinic", at("one.json")}, code: exitFailed, want: []string{
			"gate: the report did not run 1 of the 1 scenario of clinic that --suite suites selects: suites/clinic.yaml:4:5 greets;"}},
		{name: "no scenario of the agent promoted", args: []string{"--suite", "suites/clinic.yaml", "--agent", "restaurant", at("one.json")}, code: exitFailed, want: []string{
			"  --suite suites/clinic.yaml: no scenario of restaurant that a run would run\n",
			"gate: --suite suites/clinic.yaml selects no scenario of restaurant that a run would run (with the gate's --tags and --name; skipped ones are not run): nothing holds the report to the suite; check --suite, --agent, --tags and --name\n"}},
		{name: "the filter stated selects", args: []string{"--suite", "suites", "--tags", "@smoke", at("smoke.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 1 of its 1 scenario\n", "gate: passed"}},
		{name: "a filter stated, the whole suite run", args: []string{"--suite", "suites", "--tags", "@smoke", at("all.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 1 of its 1 scenario\n  3 cases of the report of no scenario --suite suites selects (renamed or removed since, of other paths, or outside the gate's --tags and --name): not weighed\n", "gate: passed"}},
		{name: "the shards merged", args: []string{"--suite", "suites", at("merged.json")}, code: exitOK, want: []string{
			"  paths the run was given: suites\n  --suite suites: the report ran 3 of its 3 scenarios\n", "gate: passed"}},
		{name: "one shard", args: []string{"--suite", "suites", at("1.json")}, code: exitFailed, want: []string{
			"gate: the report did not run 1 of the 3 scenarios that --suite suites selects: suites/restaurant.yaml:4:5 says goodbye;"}},
		{name: "a suite that gained scenarios", dir: gained, args: []string{"--suite", "suites", at("all.json")}, code: exitFailed, want: []string{
			"  --suite suites: the report ran 3 of its 5 scenarios\n  not run by the report:\n    suites/restaurant.yaml:13:5 shows the menu (skipped in the report)\n    suites/restaurant.yaml:17:5 says the kitchen is nut-free\n",
			"gate: the report did not run 2 of the 5 scenarios that --suite suites selects: suites/restaurant.yaml:13:5 shows the menu (skipped in the report); suites/restaurant.yaml:17:5 says the kitchen is nut-free;"}},
		{name: "lines moved", dir: moved, args: []string{"--suite", "suites", at("all.json")}, code: exitOK, want: []string{
			"  --suite suites: the report ran 3 of its 3 scenarios\n", "gate: passed"}},
		{name: "a file renamed", dir: renamed, args: []string{"--suite", "suites", at("all.json")}, code: exitFailed, want: []string{
			"  --suite suites: the report ran 1 of its 3 scenarios\n  not run by the report:\n    suites/dining.yaml:4:5 says goodbye\n    suites/dining.yaml:9:5 says goodbye again\n  3 cases of the report of no scenario --suite suites selects",
			"gate: the report did not run 2 of the 3 scenarios that --suite suites selects:"}},
		{name: "a suite that does not load", dir: broken, args: []string{"--suite", "suites", at("all.json")}, code: exitUsage, want: []string{
			"suites/clinic.yaml:4:5: "}},
		{name: "a path that is not there", args: []string{"--suite", "suits", at("all.json")}, code: exitUsage, want: []string{"suits"}},
		{name: "a --tags that does not parse", args: []string{"--suite", "suites", "--tags", "@smoke &&", at("all.json")}, code: exitUsage, want: []string{"--tags \"@smoke &&\": "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := simEnv(s)
			maps.Copy(env, tc.env)
			out := newCLI(t, cmp.Or(tc.dir, dir), env, append([]string{"gate"}, tc.args...)...).expect(t, tc.code, tc.want...)
			if tc.code != exitOK && strings.Contains(out, "gate: passed") {
				t.Errorf("passed:\n%s", out)
			}
			for _, r := range tc.reject {
				if strings.Contains(out, r) {
					t.Errorf("output holds %q:\n%s", r, out)
				}
			}
		})
	}
	// A scenario run several times with a pass rate is one case, which
	// its scenario matches.
	repeated := writeTree(t, map[string]string{"suites/r.yaml": `suite: repeated
agent: restaurant
scenarios:
  - name: says goodbye each time
    repeat: 3
    pass_rate: 100%
    turns:
      - say: bye
        expect: {ended: true}
`})
	newCLI(t, repeated, simEnv(s), "run", "suites", "--json", filepath.Join(repeated, "r.json")).expect(t, exitOK)
	newCLI(t, repeated, simEnv(s), "gate", "--suite", "suites", filepath.Join(repeated, "r.json")).expect(t, exitOK,
		"  --suite suites: the report ran 1 of its 1 scenario\n", "gate: passed")
	for report, want := range map[string][]string{"all.json": {"suites"}, "one.json": {"suites/restaurant.yaml"}, "nopath.json": {"."}, "merged.json": {"suites"}, "empty.json": {"suites/clinic.yaml"}} {
		if got := decodeFile[struct{ Paths []string }](t, at(report)).Paths; !slices.Equal(got, want) {
			t.Errorf("%s records paths %q, want %q", report, got, want)
		}
	}
}

// TestGateSuiteComparison: a comparison vouches for its candidate, and
// with --suite the gate holds the candidate's cases to the suite; its
// JSON records the paths each side's run was given.
func TestGateSuiteComparison(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, gateSuiteFiles)
	at := func(name string) string { return filepath.Join(dir, name) }
	compareCLI(t, dir, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "suites/restaurant.yaml", "--allow-live", "--json", at("c.json")).expect(t, exitOK)
	newCLI(t, dir, preRelease, "gate", "--suite", "suites/restaurant.yaml", at("c.json")).expect(t, exitOK,
		"  paths the candidate's run was given: suites/restaurant.yaml\n  --suite suites/restaurant.yaml: the report ran 2 of its 2 scenarios\n", "gate: passed")
	newCLI(t, dir, preRelease, "gate", "--suite", "suites", at("c.json")).expect(t, exitFailed,
		"gate: the comparison's candidate did not run 1 of the 3 scenarios that --suite suites selects: suites/clinic.yaml:4:5 greets;")
	type side struct{ Paths []string }
	if doc := decodeFile[struct{ Baseline, Candidate side }](t, at("c.json")); !slices.Equal(doc.Candidate.Paths, []string{"suites/restaurant.yaml"}) || !slices.Equal(doc.Baseline.Paths, []string{"suites/restaurant.yaml"}) {
		t.Errorf("the sides' paths: %q %q", doc.Baseline.Paths, doc.Candidate.Paths)
	}
}
