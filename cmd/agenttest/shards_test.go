package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/report"
)

// shardPaths is the selection of the shard tests through the CLI (the
// scenario package deals the whole repository): passing and failing
// scenarios, YAML and a feature with an outline, over debug chat and
// Messaging.
var shardPaths = []string{"examples/compare", "examples/features/restaurant.feature", "examples-failing/restaurant.yaml"}

// readDoc reads a JSON report written by a test run.
func readDoc(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.ReadJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verdicts maps file:name to status.
func verdicts(rep *report.Report) map[string]string {
	out := map[string]string{}
	for _, f := range rep.Result.Files {
		for _, c := range f.Cases {
			out[f.Path+":"+c.Name] = c.Status.String()
		}
	}
	return out
}

// The shards of `list --shard K/N` partition what `list` lists, for N in
// 1..5, within one scenario of each other.
func TestListShardsPartition(t *testing.T) {
	t.Parallel()
	listed := func(args ...string) []string {
		c := newCLI(t, repoRoot, examplesEnv(), append([]string{"list"}, append(shardPaths, args...)...)...)
		c.expect(t, exitOK)
		return strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
	}
	all := listed()
	for n := 1; n <= 5; n++ {
		var got []string
		var sizes []int
		for k := 1; k <= n; k++ {
			share := listed("--shard", fmt.Sprintf("%d/%d", k, n))
			sizes = append(sizes, len(share))
			got = append(got, share...)
		}
		slices.Sort(got)
		want := slices.Clone(all)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("N=%d: the shards list %d scenarios, list lists %d (or others)", n, len(got), len(want))
		}
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Errorf("N=%d: sizes %v", n, sizes)
		}
	}
	c := newCLI(t, repoRoot, examplesEnv(), "list", "examples", "--shard", "4/3")
	c.expect(t, exitUsage, "--shard")
}

// Three shards of a run, merged, give the counts, verdicts, exit code and
// coverage of the same run unsharded; merge refuses what is not the
// complete set of shards of one selection on one target.
func TestMergeShards(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(out string, extra ...string) int {
		// --gate-alerts: each shard reads the alerts, and the merged run
		// has one alert gate, as the unsharded run has.
		args := append(append([]string{"run"}, shardPaths...), append(extra, "--gate-alerts", "--json", filepath.Join(dir, out), "--seed", "7")...)
		c := newCLI(t, repoRoot, examplesEnv(), args...)
		code := c.run(t)
		if _, err := os.Stat(filepath.Join(dir, out)); err != nil {
			t.Fatalf("%v: no report (exit %d)\n%s%s", args, code, c.stdout, c.stderr)
		}
		return code
	}
	// The unsharded run and the three shards, at once, each with its own
	// embedded simulator.
	codes := make([]int, 5)
	var wg sync.WaitGroup
	for i, args := range [][]string{nil, {"--shard", "1/3"}, {"--shard", "2/3"}, {"--shard", "3/3"}, {"--shard", "2/3", "--name", "books"}} {
		wg.Go(func() { codes[i] = run(fmt.Sprintf("r%d.json", i), args...) })
	}
	wg.Wait()
	if codes[0] != exitFailed {
		t.Fatalf("unsharded run exit %d, want %d", codes[0], exitFailed)
	}
	whole := readDoc(t, filepath.Join(dir, "r0.json"))
	shard := func(i int) string { return filepath.Join(dir, fmt.Sprintf("r%d.json", i)) }

	merge := func(code int, args ...string) *cli {
		c := newCLI(t, repoRoot, examplesEnv(), append([]string{"merge"}, args...)...)
		c.expect(t, code)
		return c
	}
	out := filepath.Join(dir, "merged.json")
	c := merge(exitFailed, shard(3), shard(1), shard(2), "--json", out, "--junit", filepath.Join(dir, "merged.xml"))
	merged := readDoc(t, out)
	if got, want := report.Summarize(merged.Result), report.Summarize(whole.Result); got.Total != want.Total || got.Passed != want.Passed ||
		got.Failed != want.Failed || got.Errored != want.Errored || got.Skipped != want.Skipped || got.Flaky != want.Flaky || got.Checks != want.Checks {
		t.Errorf("merged counts %+v, unsharded %+v", got, want)
	}
	if got, want := merged.Result.Checks, whole.Result.Checks; len(got) != 1 || len(want) != 1 || got[0].Name != want[0].Name ||
		got[0].Status != want[0].Status || got[0].Agent != want[0].Agent {
		t.Errorf("merged checks %+v, unsharded %+v: want one alert gate", got, want)
	}
	if got, want := verdicts(merged), verdicts(whole); !maps.Equal(got, want) {
		t.Errorf("merged verdicts differ from the unsharded run's:\n%v\n%v", got, want)
	}
	if merged.Status != whole.Status || merged.Result.Shard != nil {
		t.Errorf("merged status %s (shard %+v), unsharded %s", merged.Status, merged.Result.Shard, whole.Status)
	}
	if !strings.Contains(c.stdout.String(), "status: failed") {
		t.Errorf("merge prints no summary:\n%s", c.stdout)
	}
	if n := strings.Count(c.stdout.String(), "alert gate passed"); n != 1 {
		t.Errorf("merge prints the alert gate %d times:\n%s", n, c.stdout)
	}
	// Coverage computed again over every shard: the restaurant's nodes
	// (a deterministic agent) are those of the unsharded run.
	visited := func(rep *report.Report) []string {
		a := rep.Coverage.Agent("restaurant")
		if a == nil || a.Source != coverage.SourceDefinition {
			t.Fatalf("no coverage of restaurant from its definition: %+v", a)
		}
		var out []string
		for _, n := range a.Nodes {
			if n.Turns > 0 {
				out = append(out, n.Name)
			}
		}
		return out
	}
	if got, want := visited(merged), visited(whole); !slices.Equal(got, want) {
		t.Errorf("merged coverage visits %v, unsharded %v", got, want)
	}

	// What is not the shards of one run is refused, naming why.
	merge(exitUsage, shard(1), shard(3), "--json", filepath.Join(dir, "x.json"))
	if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
		t.Error("a refused merge wrote its report")
	}
	// Shard 2/3 run again with --rerun-failed of the whole run's report,
	// as a CI engineer replaces an interrupted shard.
	rerun := filepath.Join(dir, "rerun-2.json")
	run("rerun-2.json", "--shard", "2/3", "--rerun-failed", shard(0))
	t.Run("refused", func(t *testing.T) {
		other := filepath.Join(dir, "other-target.json")
		b, _ := os.ReadFile(shard(2))
		os.WriteFile(other, []byte(strings.Replace(string(b), `"name": "sim"`, `"name": "staging"`, 1)), 0o644)
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"missing", []string{shard(1), shard(3)}, "shard 2/3 missing"},
			{"twice", []string{shard(1), shard(2), shard(2), shard(3)}, "are both shard 2/3"},
			{"other selection", []string{shard(1), shard(4), shard(3)}, "ran another selection"},
			{"other target", []string{shard(1), other, shard(3)}, "ran against another target"},
			{"not a shard", []string{shard(0), shard(1)}, "not a shard's report"},
			{"a rerun's shard", []string{shard(1), rerun, shard(3)}, rerun + " is a shard of a --rerun-failed " + shard(0) + " run, dealt from the cases it reran, " +
				shard(1) + " a shard of the selection: to replace shard 2/3, run it again with --shard 2/3 and no --rerun-failed\n"},
			// Given first, the rerun's shard is still the one named.
			{"a rerun's shard first", []string{rerun, shard(1), shard(3)}, rerun + " is a shard of a --rerun-failed " + shard(0) + " run, dealt from the cases it reran, " +
				shard(1) + " a shard of the selection: to replace shard 2/3"},
		} {
			c := merge(exitUsage, tc.args...)
			if !strings.Contains(c.stderr.String(), tc.want) || !strings.Contains(c.stderr.String(), "--force") {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, tc.want, c.stderr)
			}
		}
		// A shard number no run deals, edited into shard 2/3's report,
		// is refused as the report is read, at the member at fault, and
		// --force does not merge it. Before, "3/3" said shard 2/3 was
		// missing, and a shard of "0" shards merged alone, as the whole
		// run (exit 0).
		b, _ = os.ReadFile(shard(2))
		const number = "\"index\": 2,\n    \"total\": 3,"
		if !strings.Contains(string(b), number) {
			t.Fatalf("shard 2/3's report has no %q", number)
		}
		for _, tc := range []struct{ name, kn, want string }{
			{"K past N", `"index": 4, "total": 3,`, ":14: not a JSON report: shard.index: shard 4 of 3: want 1 <= index <= total"},
			{"K 0", `"index": 0, "total": 3,`, ":14: not a JSON report: shard.index: shard 0 of 3: want 1 <= index <= total"},
			{"K negative", `"index": -2, "total": 3,`, ":14: not a JSON report: shard.index: shard -2 of 3: want 1 <= index <= total"},
			{"N 0", `"index": 2, "total": 0,`, ":26: not a JSON report: shard.total: 0 shards: a selection is dealt into 1 or more"},
		} {
			edited := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			os.WriteFile(edited, []byte(strings.Replace(string(b), number, tc.kn, 1)), 0o644)
			for _, args := range [][]string{{edited}, {shard(1), edited, shard(3), "--force"}} {
				c := merge(exitUsage, args...)
				if want := "agenttest: merge: " + edited + ":32" + tc.want + "\n"; !strings.Contains(c.stderr.String(), want) {
					t.Errorf("%s: %v: stderr lacks %q:\n%s", tc.name, args, want, c.stderr)
				}
			}
		}
	})
	// --force merges a run with a shard missing: its verdict cannot be
	// passed, and the report says why.
	forced := filepath.Join(dir, "forced.json")
	c = merge(exitFailed, shard(1), shard(3), "--force", "--json", forced)
	if want := "agenttest: merge: merged without shard 2/3: their scenarios have no verdict\n"; !strings.Contains(c.stderr.String(), want) {
		t.Errorf("a forced merge without a shard does not say so:\n%s", c.stderr)
	}
	if st := readDoc(t, forced).Result.Stop; st == nil || st.Kind != "missing-shards" || !strings.Contains(st.Reason, "2/3") {
		t.Errorf("forced merge stop = %+v", st)
	}
	// Its missing shard's cases are not in it: --rerun-failed cannot name
	// them, so it says they were not run and how to run them.
	listed := newCLI(t, repoRoot, examplesEnv(), append([]string{"list", "--rerun-failed", forced}, shardPaths...)...)
	listed.expect(t, exitOK)
	if want := "agenttest: --rerun-failed " + forced + ": the report was merged without every shard, and the cases of the missing ones are not in it (shard 2/3 missing): run them with --shard K/N"; !strings.Contains(listed.stderr.String(), want) {
		t.Errorf("list --rerun-failed of a forced merge does not say what it lacks:\n%s", listed.stderr)
	}
}

// A shard of a selection smaller than the number of shards has nothing
// to run: it passes, and its report says which shard it was.
func TestEmptyShard(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.json")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples/compare", "--shard", "9/9", "--json", out)
	c.expect(t, exitOK, "shard 9/9 has no scenario")
	if sh := readDoc(t, out).Result.Shard; sh == nil || sh.Index != 9 || sh.Selected == 0 {
		t.Errorf("shard = %+v", sh)
	}
}

// For a real platform the coverage of `agenttest coverage` is measured
// against the nodes seen in the reports: a report that reached a node
// the others did not makes it unvisited in them.
func TestCoverageCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	turn := func(i int, nodes ...string) string {
		b, _ := json.Marshal(nodes)
		return fmt.Sprintf(`{"index":%d,"pos":{},"say":"","metadata":{"nodeTrace":%s},"latency_ms":1}`, i, b)
	}
	doc := func(turns ...string) string {
		return `{"schema":"agenttest/result/v1","run":{"status":"passed"},"target":{"name":"live"},"files":[{"path":"a.yaml","suite":"a","cases":[` +
			`{"name":"books","pos":{"file":"a.yaml","line":3},"status":"passed","agent":"bot","attempts":[{"number":1,"status":"passed","turns":[` +
			strings.Join(turns, ",") + `]}]}]}]}`
	}
	old := write("old.json", doc(turn(0, "Start"), turn(1, "Ask", "Confirm")))
	now := write("now.json", doc(turn(0, "Start"), turn(1, "Ask")))

	// A collection between two reports frees the first before the
	// second is read; after the last there is nothing to free.
	c := newCLI(t, ".", nil, "coverage", now, old)
	collections := 0
	c.st.CollectGarbage = func() { collections++ }
	c.expect(t, exitOK, "bot: 3 of 3 nodes visited", "Ask → Confirm")
	if collections != 1 {
		t.Errorf("%d collections for two reports, want 1", collections)
	}
	c = newCLI(t, ".", nil, "coverage", now, "--coverage-from", old)
	c.expect(t, exitOK, "bot: 2 of 3 nodes visited (67%)", "never visited: Confirm")
	c = newCLI(t, ".", nil, "coverage", "--json", now)
	c.expect(t, exitOK)
	var rep struct {
		Schema string
		coverage.Report
	}
	if err := json.Unmarshal([]byte(c.stdout.String()), &rep); err != nil || rep.Schema != coverage.SchemaV1 {
		t.Fatalf("coverage --json: %v\n%s", err, c.stdout)
	}
	if a := rep.Agent("bot"); a == nil || a.Source != coverage.SourceObserved || len(a.Unvisited) != 0 || a.NodesTotal != 2 {
		t.Errorf("bot = %+v", a)
	}

	// Taken together, whatever the order: the later report's visits do
	// not replace the earlier one's.
	c = newCLI(t, ".", nil, "coverage", old, now)
	c.expect(t, exitOK, "bot: 3 of 3 nodes visited", "Ask → Confirm")

	// merge (like run) completes the coverage of the report it writes
	// from --coverage-from: the nodes each report's traces name and the
	// nodes its coverage section lists, visited there or not.
	listed := write("listed.json", strings.TrimSuffix(doc(turn(0, "Start")), "}")+
		`,"coverage":{"agents":[{"agent":"bot","source":"observed","nodes":[{"name":"Start","turns":1},{"name":"Cancel"}]}]}}`)
	newCLI(t, ".", nil, "coverage", listed).expect(t, exitOK, "bot: 1 of 2 nodes visited", "never visited: Cancel")
	c = newCLI(t, dir, nil, "merge", now, "--coverage-from", old+","+listed, "--json", "merged.json")
	c.expect(t, exitOK)
	var merged struct{ Coverage coverage.Report }
	if data, err := os.ReadFile(filepath.Join(dir, "merged.json")); err != nil || json.Unmarshal(data, &merged) != nil {
		t.Fatalf("merged.json: %v\n%s", err, data)
	}
	if a := merged.Coverage.Agent("bot"); a == nil || a.NodesTotal != 4 || !slices.Equal(a.Unvisited, []string{"Cancel", "Confirm"}) {
		t.Errorf("merge --coverage-from: bot = %+v, want 4 nodes, Cancel and Confirm unvisited", a)
	}

	c = newCLI(t, ".", nil, "coverage", "not-there.json")
	c.expect(t, exitUsage, "not-there.json")
	// An earlier report that cannot be read is no earlier report: the
	// nodes it would have added would be missing from "never visited".
	c = newCLI(t, dir, nil, "coverage", "now.json", "--coverage-from", "gone.json")
	c.expect(t, exitUsage, "gone.json")
}

// TestHistoryAndCoverageNeedAReport: without a report there is nothing to
// read; an empty history or coverage printed with exit 0 would pass for
// a nightly job's clean record.
func TestHistoryAndCoverageNeedAReport(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"history", "coverage"} {
		c := newCLI(t, ".", nil, cmd)
		if out := c.expect(t, exitUsage); out != "agenttest: "+cmd+": name at least one JSON report\nRun 'agenttest help "+cmd+"' for usage.\n" {
			t.Errorf("%s without a report:\n%s", cmd, out)
		}
	}
}

// TestJUnitSaysPartOfARun: the JUnit of a shard, of a --rerun-failed run
// and of a merge --force says so in its <testsuites> properties, as the
// JSON does: a CI server shown a shard's JUnit as the run's showed a
// green part of it, with nothing in the file to tell.
func TestJUnitSaysPartOfARun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	junitOf := func(name string) string {
		b, err := os.ReadFile(path(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	newCLI(t, "testdata/fail", nil, "run", "--json", path("r.json"), "--junit", path("r.xml")).expect(t, exitFailed)
	newCLI(t, "testdata/fail", nil, "run", "--shard", "1/2", "--json", path("s1.json"), "--junit", path("s1.xml")).run(t)
	newCLI(t, "testdata/fail", nil, "run", "--rerun-failed", path("r.json"), "--junit", path("rr.xml")).run(t)
	newCLI(t, "testdata/fail", nil, "merge", path("s1.json"), "--force", "--junit", path("f.xml")).run(t)
	for name, want := range map[string]string{
		"s1.xml": `<property name="shard" value="1/2 of 2 scenarios"></property>`,
		"rr.xml": `<property name="rerun" value="the 1 case that failed or errored in ` + path("r.json") + `"></property>`,
		"f.xml":  `<property name="forced_merge" value="shard 2/2 missing: every shard&#39;s report is needed for the run&#39;s verdict"></property>`,
	} {
		if got := junitOf(name); !strings.Contains(got, want) {
			t.Errorf("%s lacks %s:\n%s", name, want, got[:min(len(got), 600)])
		}
	}
	if got := junitOf("r.xml"); strings.Contains(got, `name="shard"`) || strings.Contains(got, `name="rerun"`) || strings.Contains(got, `name="forced_merge"`) {
		t.Errorf("the whole run's JUnit says it is part of one:\n%s", got)
	}
}
