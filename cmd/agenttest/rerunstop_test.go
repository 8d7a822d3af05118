package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// passingSuite has four scenarios that pass on the simulator, each one
// call: a run stopped in it has nothing failed to rerun.
const passingSuite = `suite: passing
agent: restaurant
scenarios:
  - name: welcomes one
    greeting: {response: {contains: Welcome}}
  - name: welcomes two
    greeting: {response: {contains: Welcome}}
  - name: welcomes three
    greeting: {response: {contains: Welcome}}
  - name: welcomes four
    greeting: {response: {contains: Welcome}}
`

// rerunOf is what a JSON report says a --rerun-failed run of it must
// run again: its failed and errored cases, the cases its run left unrun
// (file and name), and the skip reasons of those.
type rerunOf struct {
	failed, unrun []string
	reasons       []string
	res           *result.Result
}

// readRerunOf reads the report at path.
func readRerunOf(t *testing.T, path string) rerunOf {
	t.Helper()
	rep := readDoc(t, path)
	out := rerunOf{res: rep.Result}
	for _, file := range rep.Result.Files {
		for _, c := range file.Cases {
			id := file.Path + " " + c.Name
			switch c.Status {
			case result.Failed, result.Errored:
				out.failed = append(out.failed, id)
			case result.Pending, result.Skipped:
				out.unrun = append(out.unrun, id)
				if r := strings.TrimPrefix(c.SkipReason, "not run: "); !slices.Contains(out.reasons, r) {
					out.reasons = append(out.reasons, r)
				}
			}
		}
	}
	return out
}

// all is every case the report holds, by file and name, sorted.
func (r rerunOf) all() []string {
	var ids []string
	for _, f := range r.res.Files {
		for _, c := range f.Cases {
			ids = append(ids, f.Path+" "+c.Name)
		}
	}
	slices.Sort(ids)
	return ids
}

// checkRerun runs `run --rerun-failed first` in dir with env, writing
// again, and checks that it ran exactly the failed, errored and unrun
// cases of first, says how many of each on stderr, and records them in
// its report's rerun. It returns what the rerun's report says to rerun.
func checkRerun(t *testing.T, dir string, env map[string]string, first, again string, code int, extra ...string) rerunOf {
	t.Helper()
	before := readRerunOf(t, filepath.Join(dir, first))
	if len(before.unrun) == 0 {
		t.Fatalf("%s: the run left no case unrun; the test tests nothing", first)
	}
	args := append([]string{"run", "--rerun-failed", first, "--json", again}, extra...)
	c := newCLI(t, dir, env, args...)
	if got := c.run(t); got != code {
		t.Fatalf("rerun of %s: exit %d, want %d\n%s%s", first, got, code, c.stdout, c.stderr)
	}
	want := slices.Sorted(slices.Values(slices.Concat(before.failed, before.unrun)))
	after := readRerunOf(t, filepath.Join(dir, again))
	if got := after.all(); !slices.Equal(got, want) {
		t.Errorf("rerun of %s ran\n%q\nwant its failed, errored and unrun cases\n%q\n%s", first, got, want, c.stdout)
	}
	if rr := after.res.Rerun; rr == nil || rr.Of != first || rr.Failed != len(before.failed) || rr.Unrun != len(before.unrun) {
		t.Errorf("rerun's report says rerun %+v, want of %s, %d failed, %d unrun", rr, first, len(before.failed), len(before.unrun))
	}
	unrun := fmt.Sprintf("%d %s its run left unrun (%s)", len(before.unrun), plural(len(before.unrun), "case", "cases"), strings.Join(before.reasons, ", "))
	say := "agenttest: --rerun-failed " + first + ": rerunning " + unrun + "\n"
	if n := len(before.failed); n > 0 {
		say = fmt.Sprintf("agenttest: --rerun-failed %s: rerunning %d failed or errored %s and %s\n", first, n, plural(n, "case", "cases"), unrun)
	}
	if !strings.Contains(c.stderr.String(), say) {
		t.Errorf("stderr does not say %q:\n%s", say, c.stderr)
	}
	return after
}

// TestRerunFailedRunsWhatTheStopLeftUnrun: a run that stopped early (an
// interruption, --fail-fast, a refused key, a platform it could not
// reach) leaves cases without a verdict; --rerun-failed of its report
// runs them with its failures, so that "run again what did not pass"
// leaves no case untested. Before, only the failed and errored cases ran
// again, and a stopped run whose cases passed until the stop had
// "nothing to run again" (exit 5).
func TestRerunFailedRunsWhatTheStopLeftUnrun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	type testCase struct {
		name  string
		suite string
		// first runs the first run in dir, writing first.json, and
		// returns the environment in which the platform is fine again.
		first func(t *testing.T, dir string) map[string]string
		// code is the exit code of the rerun, once the platform is fine.
		code int
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		dir := writeTree(t, map[string]string{"suites/s.yaml": tc.suite})
		env := tc.first(t, dir)
		checkRerun(t, dir, env, "first.json", "again.json", tc.code)
	}
	for _, tc := range []testCase{
		{
			name:  "fail-fast",
			suite: rerunSuite,
			first: func(t *testing.T, dir string) map[string]string {
				newCLI(t, dir, simEnv(s), "run", "suites", "--fail-fast", "--parallel", "1", "--json", "first.json").
					expect(t, exitFailed, "not run: --fail-fast")
				return simEnv(s)
			},
			code: exitFailed,
		},
		{
			// Every case that ran passed: there is no failure to rerun,
			// only the cases the interruption left.
			name:  "interrupted",
			suite: passingSuite,
			first: func(t *testing.T, dir string) map[string]string {
				env, hold := holdingBuild(t, s)
				c := newCLI(t, dir, env, "run", "suites", "--parallel", "1", "--json", "first.json")
				hold.interruptAt(c, "PASS ")
				c.expect(t, exitInterrupted, "PASS ")
				hold.on.Store(false)
				return env
			},
			code: exitOK,
		},
		{
			// The key is refused before any case runs: every case is
			// unrun, and the rerun with the right key tests them all.
			name:  "credentials refused",
			suite: passingSuite,
			first: func(t *testing.T, dir string) map[string]string {
				bad := simEnv(s)
				bad["AGENTTEST_BUILD_KEY"] = "not-the-build-key-0123"
				newCLI(t, dir, bad, "run", "suites", "--parallel", "1", "--json", "first.json").
					expect(t, exitUsage, "not run: credentials refused")
				return simEnv(s)
			},
			code: exitOK,
		},
		{
			name:  "platform unreachable",
			suite: passingSuite,
			first: func(t *testing.T, dir string) map[string]string {
				down := simEnv(s)
				down["AGENTTEST_BUILD_URL"] = "http://" + platformtest.ClosedAddr(t)
				c := newCLI(t, dir, down, "run", "suites", "--json", "first.json")
				clk := fakeclock.New()
				c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
				c.expect(t, exitErrored, "not run: platform unreachable")
				return simEnv(s)
			},
			code: exitOK,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRerunOfAStoppedRerun: a rerun is a run like any other: one that
// --fail-fast stopped leaves cases unrun, and a rerun of its report runs
// them with its failure. Its report is still a rerun, which the gate
// refuses, naming the unrun cases it ran again.
func TestRerunOfAStoppedRerun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	env := simEnv(s)
	dir := writeTree(t, map[string]string{"suites/s.yaml": rerunSuite})
	newCLI(t, dir, env, "run", "suites", "--fail-fast", "--parallel", "1", "--json", "first.json").expect(t, exitFailed)
	second := checkRerun(t, dir, env, "first.json", "second.json", exitFailed, "--fail-fast", "--parallel", "1")
	if len(second.unrun) == 0 {
		t.Fatalf("the rerun under --fail-fast left no case unrun:\n%q", second.all())
	}
	third := checkRerun(t, dir, env, "second.json", "third.json", exitFailed)
	first := readRerunOf(t, filepath.Join(dir, "first.json"))
	if got, want := third.all(), slices.Sorted(slices.Values(slices.Concat(first.failed, first.unrun))); !slices.Equal(got, want) {
		t.Errorf("the rerun of the rerun ran\n%q\nwant every case the first run did not pass\n%q", got, want)
	}
	rr := third.res.Rerun
	newCLI(t, dir, env, "gate", "third.json").expect(t, exitFailed,
		"gate: the report reruns "+rr.Cases("second.json")+": it tested those again, not the whole selection")
}
