package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestSummaryAlertGate runs the nightly job's --gate-alerts against the
// simulator. The alert gate is a run-level check, not a scenario: the
// counts add up to the cases the first line announced and the gate has a
// line of its own; and a rule that fires fails the run (exit 1) with a
// status that names the rule and its metric instead of claiming the agent
// broke an expectation.
func TestSummaryAlertGate(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, TickInterval: 10 * time.Millisecond})
	env := simEnv(s)
	env["AGENTTEST_AGENT_ID"] = "clinic"
	dir := writeTree(t, map[string]string{"suites/greet.yaml": greetSuite + "  - name: greets again\n    turns:\n      - say: hello\n"})

	c := newCLI(t, dir, env, "run", "--gate-alerts", "suites")
	out := c.expect(t, exitOK, "running 2 cases against ", "\n2 passed, 0 failed, 0 skipped in ", "\nalert gate passed\nstatus: passed\n")
	if strings.Contains(out, "3 passed") {
		t.Errorf("the alert gate is counted as a case:\n%s", out)
	}

	fireOnAnyTraffic(t, s)
	c = newCLI(t, dir, env, "run", "--gate-alerts", "suites")
	out = c.expect(t, exitFailed, "running 2 cases against ", "\n2 passed, 0 failed, 0 skipped in ",
		"\nalert gate failed: 1 alert rule firing\n",
		`status: failed (1 alert rule firing, not a check of a scenario: alert firing (account-wide): rule "platform errors"`,
		"(api_errors counts the platform's own 5xx answers))\n")
	if strings.Contains(out, "the agent broke an expectation") {
		t.Errorf("a firing alert rule is worded as the agent's failure:\n%s", out)
	}
}

// TestSummaryPlatformDown runs against a closed port, as a nightly job
// does when the platform is down: the counts say how many cases the stop
// left unrun rather than "0 errored ... N skipped" over "status: errored",
// and every deployment left unread says so in one wording.
func TestSummaryPlatformDown(t *testing.T) {
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
	suite := func(agent string) string {
		return "suite: " + agent + "\nagent: " + agent + "\nscenarios:\n  - name: greets\n    turns:\n      - say: hello\n  - name: greets again\n    turns:\n      - say: hello\n"
	}
	dir := writeTree(t, map[string]string{"suites/a.yaml": suite("clinic"), "suites/b.yaml": suite("restaurant")})
	env := map[string]string{"AGENTTEST_BUILD_URL": "http://" + addr, "AGENTTEST_BUILD_KEY": "build-key-0123456789"}
	c := newCLI(t, dir, env, "run", "--gate-alerts", "suites")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	out := c.expect(t, exitErrored, "running 4 cases against ", "\n0 passed, 0 failed, 0 skipped in ",
		"\nalert gate not run: platform unreachable\n", "\nstatus: errored (")
	errored := strings.Count(out, "\nERROR ")
	notRun := 4 - errored
	counts := fmt.Sprintf("\n%d errored, %d not run (the run stopped), 0 flaky\n", errored, notRun)
	if errored == 0 {
		counts = fmt.Sprintf("\n%d not run (the run stopped), 0 flaky\n", notRun)
	}
	if !strings.Contains(out, counts) || !strings.Contains(out, fmt.Sprintf(": %d %s not run\n", notRun, plural(notRun, "case", "cases"))) {
		t.Errorf("counts do not say %q:\n%s", counts, out)
	}
	if strings.Contains(out, "0 errored") {
		t.Errorf("the counts say 0 errored over an errored run:\n%s", out)
	}
	notes := regexp.MustCompile(`note: no deployment evidence \([^)]*\): not read: [^;]*`).FindAllString(out, -1)
	if len(notes) != 1 || notes[0] != "note: no deployment evidence (clinic in sandbox, restaurant in sandbox): not read: the run stopped" {
		t.Errorf("deployment notes %q, want one, `not read: the run stopped`:\n%s", notes, out)
	}
}

// TestSummaryInterruptedRepeat interrupts a statistical scenario (the
// nightly job's --repeat) after it made 12 runs, all passed: the reports
// say what it did (12 runs made, interrupted before a verdict), not that
// it did not run. The 13th session is held until the interruption cuts
// it off, so exactly 12 runs finish, however slow the machine.
func TestSummaryInterruptedRepeat(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	var starts atomic.Int32
	sigs := make(chan struct{}, 1)
	release := make(chan struct{})
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/debug-chat") || starts.Add(1) <= 12 {
			return false
		}
		sigs <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	t.Cleanup(func() { close(release) })
	dir := writeTree(t, map[string]string{"suites/greet.yaml": greetSuite})
	c := newCLI(t, dir, env, "run", "--repeat", "40", "--pass-rate", "0.9", "--parallel", "1", "--json", "out/r.json", "--junit", "out/junit.xml", "suites")
	c.st.Signals = sigs
	out := c.expect(t, exitInterrupted,
		"PENDING suites/greet.yaml:4 greets (interrupted before a verdict: 12 runs made of 40, 12 passed, 0 failed)",
		"run interrupted: 1 repeated case cut off before a verdict\n")
	if strings.Contains(out, "not run: run interrupted") {
		t.Errorf("the console says a scenario that made 12 runs did not run:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out/r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Cases []struct {
				Status     string `json:"status"`
				SkipReason string `json:"skip_reason"`
				Repeat     struct {
					Decision string `json:"decision"`
					Runs     int    `json:"runs"`
					Passed   int    `json:"passed"`
				} `json:"repeat"`
			} `json:"cases"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) != 1 || len(doc.Files[0].Cases) != 1 {
		t.Fatalf("JSON files %+v", doc.Files)
	}
	if cs := doc.Files[0].Cases[0]; cs.Status != "pending" || cs.SkipReason != "interrupted before a verdict" ||
		cs.Repeat.Decision != "interrupted" || cs.Repeat.Runs != 12 || cs.Repeat.Passed != 12 {
		t.Errorf("JSON case %+v, want pending, interrupted before a verdict after 12 runs passed", cs)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "out/junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `<skipped message="interrupted before a verdict: 12 runs made of 40, 12 passed, 0 failed">`; !strings.Contains(string(junit), want) {
		t.Errorf("JUnit lacks %s:\n%s", want, junit)
	}
}

// TestMergeAlertGate: shards run with --gate-alerts against a platform
// whose account-wide rule fires each read the alerts; merged, the run
// reads like the unsharded run: one alert gate, failed by one rule, in
// the console, the counts and the status.
func TestMergeAlertGate(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, TickInterval: 10 * time.Millisecond})
	env := simEnv(s)
	env["AGENTTEST_AGENT_ID"] = "clinic"
	var scenarios strings.Builder
	for i := range 6 {
		fmt.Fprintf(&scenarios, "  - name: greets %d\n    turns:\n      - say: hello\n", i)
	}
	dir := writeTree(t, map[string]string{"suites/greet.yaml": "suite: greet\nagent: clinic\nscenarios:\n" + scenarios.String()})
	fireOnAnyTraffic(t, s)
	for _, args := range [][]string{{"--json", "whole.json"}, {"--shard", "1/3", "--json", "s1.json"}, {"--shard", "2/3", "--json", "s2.json"}, {"--shard", "3/3", "--json", "s3.json"}} {
		c := newCLI(t, dir, env, append([]string{"run", "--gate-alerts", "suites"}, args...)...)
		if code := c.run(t); code != exitFailed {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, exitFailed, c.stdout, c.stderr)
		}
	}
	c := newCLI(t, dir, env, "merge", "s3.json", "s1.json", "s2.json", "--json", "merged.json")
	out := c.expect(t, exitFailed, "\n6 passed, 0 failed, 0 skipped in ", "\nalert gate failed: 1 alert rule firing\n",
		`status: failed (1 alert rule firing, not a check of a scenario: alert firing (account-wide): rule "platform errors"`)
	if n := strings.Count(out, "alert gate failed"); n != 1 {
		t.Errorf("the alert gate is printed %d times:\n%s", n, out)
	}
	whole, merged := readDoc(t, filepath.Join(dir, "whole.json")), readDoc(t, filepath.Join(dir, "merged.json"))
	if got, want := report.Summarize(merged.Result), report.Summarize(whole.Result); got.Total != want.Total || got.Checks != 1 || want.Checks != 1 || got.Failed != want.Failed {
		t.Errorf("merged counts %+v, unsharded %+v", got, want)
	}
	gate := merged.Result.Checks[0]
	if a := gate.Last(); gate.Status != result.Failed || a == nil || len(a.Failures) != 1 || len(a.Confirmations) != 3 {
		t.Fatalf("merged alert gate %+v", gate)
	}
	for i, cf := range gate.Last().Confirmations {
		if want := fmt.Sprintf("shard %d/3: ", i+1); !strings.HasPrefix(cf.Summary, want) {
			t.Errorf("reading %d %q, want it to name %s", i, cf.Summary, want)
		}
	}
}

// fireOnAnyTraffic creates an account-wide alert rule on the simulator s
// that fires on any traffic: api_errors counts the platform's own 5xx
// answers, and a threshold of 0 needs none, so there is no fault to wait
// for.
func fireOnAnyTraffic(t *testing.T, s *simtest.Sim) {
	t.Helper()
	client, err := platform.New(platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateAlertRule(context.Background(), platform.AlertRuleRequest{
		Name: "platform errors", Metric: "api_errors", Operator: ">=", ThresholdValue: 0, WindowDuration: "5m"}); err != nil {
		t.Fatal(err)
	}
}
