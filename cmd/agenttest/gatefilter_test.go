package main

import (
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
// --name is a run of that subset too, and the gate weighs it as such.
func TestGateFilteredShards(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	for _, k := range []string{"1", "2"} {
		newCLI(t, "testdata/pass", simEnv(s), "run", "--tags", "@booking", "--name", "/./", "--shard", k+"/2", "--json", at(k+".json")).expect(t, exitOK)
	}
	newCLI(t, dir, simEnv(s), "merge", at("1.json"), at("2.json"), "--json", at("m.json")).expect(t, exitOK)
	newCLI(t, dir, simEnv(s), "gate", at("m.json")).expect(t, exitFailed,
		"gate: the run selected its scenarios with --tags \"@booking\" --name \"/./\", leaving out 0 scenarios of its files, and the gate states no filter")
	newCLI(t, dir, simEnv(s), "gate", "--tags", "@booking", "--name", "/./", at("m.json")).expect(t, exitOK, "gate: passed")
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

	newCLI(t, repoRoot, nil, "run", "examples/compare", "--env", "pre-release", "--name", "offers a booking", "--json", at("cand.json")).expect(t, exitOK)
	compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", at("cand.json"), "examples/compare/restaurant.yaml", "--allow-live",
		"--name", "/a/", "--json", at("stored.json")).expect(t, exitOK)
	newCLI(t, repoRoot, preRelease, "gate", "--name", "/a/", at("stored.json")).expect(t, exitFailed,
		"gate: the comparison's candidate, report "+at("cand.json")+", selected its scenarios with --name \"offers a booking\", leaving out 5 scenarios of its files, and the gate states --name \"/a/\"")
}
