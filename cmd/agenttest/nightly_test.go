package main

import (
	"bytes"
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

// liveTarget is the nightly job's target as examples/agenttest.yaml
// writes it, its hosts and keys from the simulator's variables.
const liveTarget = "targets:\n  live:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    env: live\n    allow_live: true\n" +
	"    probe_numbers: [\"+44 7700 900001\"]\n  sandbox:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    env: sandbox\n"

// TestNightlyEnvPins runs the nightly job's command against the
// simulator with suites that pin an environment. A suite's env: wins over
// the target's, so `run suites --target live` over suites that all say
// `env: sandbox` tested sandbox and passed, exit 0, every night: it is
// refused now (exit 2, at each file), and a partial pin is a warning.
func TestNightlyEnvPins(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	suite := func(env string) string {
		head := "suite: greet\nagent: clinic\n"
		if env != "" {
			head += "env: " + env + "\n"
		}
		return head + "scenarios:\n  - name: greets\n    turns:\n      - say: hello\n        expect: {ended: false}\n  - name: greets again\n    turns:\n      - say: hello\n        expect: {ended: false}\n"
	}
	type testCase struct {
		name   string
		files  map[string]string
		args   []string
		code   int
		want   []string
		absent []string
		// envs are the environments the JSON report's deployments name
		// when the run ran.
		envs []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		files := map[string]string{"agenttest.yaml": liveTarget}
		maps.Copy(files, tc.files)
		dir := writeTree(t, files)
		env := simEnv(s)
		c := newCLI(t, dir, env, append(append([]string{"run"}, tc.args...), "--json", "out/r.json", "suites")...)
		out := c.expect(t, tc.code, tc.want...)
		for _, a := range tc.absent {
			if strings.Contains(out, a) {
				t.Errorf("output has %q:\n%s", a, out)
			}
		}
		data, err := os.ReadFile(filepath.Join(dir, "out/r.json"))
		if tc.envs == nil {
			if err == nil {
				t.Errorf("a refused run wrote a report")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Deployments []struct{ Env string } `json:"deployments"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var envs []string
		for _, d := range doc.Deployments {
			envs = append(envs, d.Env)
		}
		if strings.Join(envs, ",") != strings.Join(tc.envs, ",") {
			t.Errorf("deployments tested in %v, want %v", envs, tc.envs)
		}
	}
	for _, tc := range []testCase{
		{
			name:  "every suite pins sandbox, the job asks for live",
			files: map[string]string{"suites/a.yaml": suite("sandbox"), "suites/b.yaml": suite("sandbox")},
			args:  []string{"--target", "live", "--allow-live"},
			code:  exitUsage,
			want: []string{
				`suites/a.yaml:5:5: 2 selected scenarios of this file run in sandbox, not in live, the environment of target "live" (set by target "live" env (agenttest.yaml:4:10))`,
				"suites/b.yaml:5:5:", "no selected scenario runs in live, so the run would test nothing there and pass",
			},
		},
		{
			name:  "a scenario pins sandbox, the others run in live",
			files: map[string]string{"suites/a.yaml": suite("sandbox"), "suites/b.yaml": suite("")},
			args:  []string{"--target", "live", "--allow-live"},
			code:  exitOK,
			// The headline names both environments, not the target's alone.
			want: []string{"suites/a.yaml:5:5: warning: 2 selected scenarios of this file run in sandbox, not in live",
				"running 4 cases against live (", ", envs live (2), sandbox (2))\n"},
			envs: []string{"sandbox", "live"},
		},
		{
			name:  "--env live over a suite that pins sandbox",
			files: map[string]string{"suites/a.yaml": suite("sandbox")},
			args:  []string{"--target", "sandbox", "--env", "live", "--allow-live"},
			code:  exitUsage,
			want:  []string{"(set by --env)"},
		},
		{
			name:   "no suite pins: live is tested",
			files:  map[string]string{"suites/a.yaml": suite("")},
			args:   []string{"--target", "live", "--allow-live"},
			code:   exitOK,
			want:   []string{", env live)\n"},
			absent: []string{"warning"},
			envs:   []string{"live"},
		},
		{
			name:   "another environment than live is only warned of",
			files:  map[string]string{"suites/a.yaml": suite("pre-release")},
			args:   []string{"--target", "sandbox"},
			code:   exitOK,
			want:   []string{"warning: 2 selected scenarios of this file run in pre-release, not in sandbox", ", env pre-release)\n"},
			absent: []string{"env sandbox"},
			envs:   []string{"pre-release"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRunStatsSkipProbes: the run's statistical flags (a nightly job's
// --confidence 0.95 --pass-rate 0.9) made every scenario statistical,
// probes included: 26 or more real calls to a probe number a night, for a
// scenario written to place one. A scenario with a probe now runs once
// unless it sets repeat itself, the run says so, and the other scenarios
// still repeat.
func TestRunStatsSkipProbes(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Outbound: sim.OutboundOptions{Queued: 10 * time.Millisecond, Calling: 10 * time.Millisecond}})
	dir := writeTree(t, map[string]string{
		"agenttest.yaml": liveTarget,
		"suites/nightly.yaml": "suite: nightly\nagent: clinic\nscenarios:\n" +
			"  - name: greets\n    turns:\n      - say: hello\n" +
			"  - name: reminder call\n    probe: {outbound_call: {to: \"+447700900001\"}, within: 10s}\n" +
			"  - name: reminder call, twice on purpose\n    repeat: 2\n    probe: {outbound_call: {to: \"+447700900001\"}, within: 10s}\n",
	})
	c := newCLI(t, dir, simEnv(s), "run", "--target", "live", "--allow-live", "--repeat", "3", "--json", "out/r.json", "suites")
	c.expect(t, exitOK, `agenttest: note: --repeat not applied to 1 scenario with a probe, run once each`, `suites/nightly.yaml:7:5 "reminder call"`)
	data, err := os.ReadFile(filepath.Join(dir, "out/r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Cases []struct {
				Name   string
				Repeat *struct{ Runs int } `json:"repeat"`
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, c := range doc.Files[0].Cases {
		runs[c.Name] = 1
		if c.Repeat != nil {
			runs[c.Name] = c.Repeat.Runs
		}
	}
	if runs["greets"] != 3 || runs["reminder call"] != 1 || runs["reminder call, twice on purpose"] != 2 {
		t.Errorf("runs per scenario %v; want greets 3, reminder call 1, twice on purpose 2", runs)
	}
	calls := s.Server.Store().Select("clinic", func(c *sim.Conversation) bool { return c.Channel == "VOICE-SIP" })
	if len(calls) != 3 {
		t.Errorf("the platform received %d calls, want 3 (1 + 2)", len(calls))
	}
}

// nightlySuite is a nightly suite over the clinic: a greeting that always
// passes and a request the agent routes right half of the time
// (docs/agent-definition.md, "Probabilistic replies and moves").
const nightlySuite = "suite: nightly\nagent: clinic\nscenarios:\n" +
	"  - name: greets\n    turns:\n      - say: hello\n" +
	"  - name: renews a prescription\n    turns:\n      - say: I need a repeat prescription\n        expect: {node: RepeatPrescription}\n"

// TestNightlyHistory runs three nights of the nightly job against the
// simulator, a day apart on a fake clock, and reads them back with
// agenttest history: a night where the agent's answers varied (its
// repeated runs both passed and failed), a night where the platform was
// down, and a night where a retry hid a wrong answer. The history says
// which environment each night tested, why a night could not judge the
// agent, which scenario went both ways within a night, and marks the pass
// a retry bought; before, a report line held only its status, a pass on
// retry was a ✓ like any other, and nothing set the platform's nights
// apart from the agent's.
func TestNightlyHistory(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	down := platformtest.ClosedAddr(t)
	dir := writeTree(t, map[string]string{"agenttest.yaml": liveTarget, "suites/nightly.yaml": nightlySuite})
	clk := fakeclock.New()
	night := func(env map[string]string, report string, code int, args ...string) {
		t.Helper()
		clk.Advance(24 * time.Hour)
		c := newCLI(t, dir, env, append([]string{"run", "suites", "--target", "live", "--allow-live", "--parallel", "1", "--json", report}, args...)...)
		c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
		c.expect(t, code)
	}
	// Newest first, as a glob of dated names need not sort: history
	// orders them by their starts.
	night(simEnv(s), "a.json", exitFailed, "--repeat", "8")
	dead := simEnv(s)
	dead["AGENTTEST_BUILD_URL"] = "http://" + down
	night(dead, "b.json", exitErrored)
	night(simEnv(s), "c.json", exitOK, "--retries", "4")

	h := newCLI(t, dir, nil, "history", "c.json", "b.json", "a.json")
	out := h.expect(t, exitOK,
		"failed  in live: 1 passed, 1 failed\n",
		"errored  in live: 2 not run (stopped: platform unreachable at "+down+")\n",
		"passed  in live: 1 passed, 1 flaky\n",
		"~ passed on a retry after failing",
		"passed and failed in one run: the agent's answers vary (1):\n  suites/nightly.yaml: renews a prescription: in reports 1, 3;",
		"kept from a verdict on the agent (the platform, the network or the run, not the agent): 1 of 3 reports: 2\n",
	)
	// The verdict strips: the pass a retry bought is not a clean pass.
	for name, want := range map[string]string{"greets": "✓·✓", "renews a prescription": "✗·~"} {
		if !strings.Contains(out, want+"  ") || !regexp.MustCompile(regexp.QuoteMeta(want)+` +\d+ +suites/nightly.yaml: `+name+"\n").MatchString(out) {
			t.Errorf("the row of %s lacks the verdicts %s:\n%s", name, want, out)
		}
	}
	if strings.Contains(out, "greets: in report") {
		t.Errorf("a scenario that always passed is listed as varying:\n%s", out)
	}
	h = newCLI(t, dir, nil, "history", "--json", "a.json", "b.json", "c.json")
	h.expect(t, exitOK)
	var doc struct {
		Reports []struct {
			Envs   []string
			Causes []string
			Counts struct {
				NotRun int `json:"not_run"`
			}
		}
		Scenarios []struct {
			Name     string
			Retried  []bool
			Mixed    []bool
			Unsteady bool
		}
		Kept []int
	}
	if err := json.Unmarshal([]byte(h.stdout.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Reports) != 3 || doc.Reports[1].Counts.NotRun != 2 || len(doc.Reports[1].Causes) != 1 || doc.Reports[0].Envs[0] != "live" ||
		len(doc.Kept) != 1 || doc.Kept[0] != 1 || !doc.Scenarios[1].Unsteady || doc.Scenarios[0].Unsteady ||
		fmt.Sprint(doc.Scenarios[1].Retried) != "[false false true]" || fmt.Sprint(doc.Scenarios[1].Mixed) != "[true false true]" {
		t.Errorf("history --json:\n%s", h.stdout)
	}
}

// TestNightlyRegressionNamesDeployments runs two nights of the nightly
// job against the simulator with a release promoted to live between them
// (restaurant 1.0 → 1.1, whose reply to a reference asked before any
// booking is reworded), and reads them back: the history's regression
// names the deployment of each night, so the morning's reader sees that
// a release broke it. Before, the line named the two reports alone.
func TestNightlyRegressionNamesDeployments(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	suite := "suite: nightly\nagent: restaurant\nscenarios:\n" +
		"  - name: asks to book before a reference\n    turns:\n      - say: what was my reference?\n" +
		"        expect: {response: {contains: 'Would you like to book a table?'}}\n"
	dir := writeTree(t, map[string]string{"agenttest.yaml": liveTarget, "suites/nightly.yaml": suite})
	clk := fakeclock.New()
	night := func(report string, code int) {
		t.Helper()
		clk.Advance(24 * time.Hour)
		c := newCLI(t, dir, simEnv(s), "run", "suites", "--target", "live", "--allow-live", "--json", report)
		c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
		c.expect(t, code)
	}
	night("1.json", exitOK)
	var live sim.Deployment
	for _, step := range []func() (sim.Deployment, error){
		func() (sim.Deployment, error) { return s.Server.Publish("restaurant", "1.1") },
		func() (sim.Deployment, error) { return s.Server.Promote("restaurant", "pre-release", "") },
		func() (sim.Deployment, error) { return s.Server.Promote("restaurant", "live", "") },
	} {
		var err error
		if live, err = step(); err != nil {
			t.Fatal(err)
		}
	}
	night("2.json", exitFailed)
	var first struct {
		Deployments []struct{ ID string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "1.json"))
	if err != nil || json.Unmarshal(b, &first) != nil || len(first.Deployments) != 1 {
		t.Fatalf("night 1's report: %v\n%s", err, b)
	}
	h := newCLI(t, dir, nil, "history", "2.json", "1.json")
	h.expect(t, exitOK, "went from passing to failing (1):\n  suites/nightly.yaml: asks to book before a reference: passed in report 1, failed in report 2; "+
		"deployment of restaurant in live "+first.Deployments[0].ID+" (version 1.0) → "+live.ID+" (version 1.1) (redeployed)\n")
}

// TestNightlyHistoryLeavesOutUnreadable: a report of the nightly cache
// that cannot be read (cut short by a copy to a full disk, emptied) is
// named at its file:line:col and left out, and the history of the other
// nights is printed all the same, exit 2. Before, one bad file among a
// month of nights printed no history at all, every night until it aged
// out of the cache, and the job's summary was empty.
// TestNightlyHistoryNamesDropped runs three nights of the nightly job
// against the simulator, a day apart on a fake clock: every scenario;
// tags that select nothing (exit 5); and the suite after one scenario was
// renamed and another removed. The third night passes, "in live: 1
// passed" where the first read "2 passed", and its strip shows · for the
// two it no longer tested as for a night the platform was down: history
// now names them against the last night that tested anything, and the
// new name beside them.
func TestNightlyHistoryNamesDropped(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	both := "suite: nightly\nagent: clinic\nscenarios:\n  - name: greets\n    turns:\n      - say: hello\n" +
		"  - name: says goodbye\n    turns:\n      - say: goodbye\n"
	dir := writeTree(t, map[string]string{"agenttest.yaml": liveTarget, "suites/nightly.yaml": both})
	clk := fakeclock.New()
	night := func(report string, code int, args ...string) {
		t.Helper()
		clk.Advance(24 * time.Hour)
		c := newCLI(t, dir, simEnv(s), append([]string{"run", "suites", "--target", "live", "--allow-live", "--json", report}, args...)...)
		c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
		c.expect(t, code)
	}
	night("n/1.json", exitOK)
	night("n/2.json", exitEmpty, "--tags", "@smoke")
	renamed := "suite: nightly\nagent: clinic\nscenarios:\n  - name: greets the caller\n    turns:\n      - say: hello\n"
	if err := os.WriteFile(filepath.Join(dir, "suites/nightly.yaml"), []byte(renamed), 0o644); err != nil {
		t.Fatal(err)
	}
	night("n/3.json", exitOK)

	h := newCLI(t, dir, nil, "history", "n/1.json", "n/2.json", "n/3.json")
	h.expect(t, exitOK,
		"passed  in live: 1 passed\n",
		"not in the newest report (3), though in report 1: removed, renamed or no longer selected, so not tested (2):\n"+
			"  suites/nightly.yaml: greets\n  suites/nightly.yaml: says goodbye\n"+
			"in the newest report (3), not in report 1: new, or a new name of one above (1):\n"+
			"  suites/nightly.yaml: greets the caller\n")
	j := newCLI(t, dir, nil, "history", "--json", "n/1.json", "n/2.json", "n/3.json")
	out := j.expect(t, exitOK)
	var doc struct {
		Unlisted struct {
			Since          int
			Dropped, Added []struct{ File, Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if u := doc.Unlisted; u.Since != 0 || len(u.Dropped) != 2 || u.Dropped[1].Name != "says goodbye" || len(u.Added) != 1 || u.Added[0].Name != "greets the caller" {
		t.Errorf("--json unlisted = %+v", u)
	}
	// The empty night, newest, compares with nothing: its status says
	// it tested nothing.
	e := newCLI(t, dir, nil, "history", "n/1.json", "n/2.json")
	if out := e.expect(t, exitOK, "empty  in live"); strings.Contains(out, "not in the newest report") {
		t.Errorf("an empty newest night lists what it dropped:\n%s", out)
	}
}

// TestGateLiveTargetBuildKeyOnly gates a nightly report on the target
// the nightly job runs, as examples/agenttest.yaml writes it: its
// webhook URL, SMS connector id and probe numbers come from variables a
// run needs and the gate never reads. The gate held the job to them
// (exit 2: "webhook_url refers to WEBHOOK_PUBLIC_URL, which is not set"),
// where the example promises that the gate, which uses the build key
// alone, needs none of the target's other variables.
func TestGateLiveTargetBuildKeyOnly(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	const target = "targets:\n  live:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    env: live\n    allow_live: true\n" +
		"    probe_numbers: [\"${env:PROBE_NUMBER}\"]\n    sms_connector_id: ${env:LIVE_SMS_CONNECTOR_ID}\n" +
		"    sms_connector_ids: {clinic: {live: \"${env:CLINIC_SMS}\"}}\n" +
		"    webhook_listen: ${env:WEBHOOK_LISTEN}\n    webhook_url: ${env:WEBHOOK_PUBLIC_URL}\n"
	greets := "suite: nightly\nagent: clinic\nscenarios:\n  - name: greets\n    greeting:\n      response: {contains: Riverside Clinic}\n"
	dir := writeTree(t, map[string]string{"agenttest.yaml": target, "suites/nightly.yaml": greets})
	night := simEnv(s)
	maps.Copy(night, map[string]string{"PROBE_NUMBER": "+44 7700 900001", "LIVE_SMS_CONNECTOR_ID": "sms-live-0001", "CLINIC_SMS": "sms-live-0002",
		"WEBHOOK_LISTEN": "127.0.0.1:0", "WEBHOOK_PUBLIC_URL": "https://hooks.example.com/agenttest"})
	newCLI(t, dir, night, "run", "suites", "--target", "live", "--allow-live", "--json", "nightly.json").expect(t, exitOK)
	gate := map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_ACCOUNT_ID": s.AccountID, "AGENTTEST_BUILD_KEY": s.BuildKey}
	newCLI(t, dir, gate, "gate", "--target", "live", "nightly.json").expect(t, exitOK, "gate: passed")
	// A value that is set is still checked: a setting that holds a key
	// is refused whatever the command (the file's variable, or the
	// AGENTTEST_ one that overrides it).
	for _, v := range []string{"WEBHOOK_PUBLIC_URL", "AGENTTEST_WEBHOOK_URL"} {
		leaky := maps.Clone(gate)
		leaky[v] = "https://hooks.example.com/?k=" + s.BuildKey
		newCLI(t, dir, leaky, "gate", "--target", "live", "nightly.json").expect(t, exitUsage, "holds the build_key")
	}
	// A variable the gate reads is still required.
	delete(gate, "AGENTTEST_BUILD_URL")
	newCLI(t, dir, gate, "gate", "--target", "live", "nightly.json").expect(t, exitUsage, "build_url refers to AGENTTEST_BUILD_URL, which is not set")
}

func TestNightlyHistoryLeavesOutUnreadable(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	dir := writeTree(t, map[string]string{"agenttest.yaml": liveTarget, "suites/nightly.yaml": nightlySuite})
	clk := fakeclock.New()
	for _, report := range []string{"n/1.json", "n/2.json"} {
		clk.Advance(24 * time.Hour)
		c := newCLI(t, dir, simEnv(s), "run", "suites", "--target", "live", "--allow-live", "--name", "greets", "--json", report)
		c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
		c.expect(t, exitOK)
	}
	whole, err := os.ReadFile(filepath.Join(dir, "n/2.json"))
	if err != nil {
		t.Fatal(err)
	}
	cut := whole[:bytes.Index(whole, []byte(`"files"`))+len(`"files": [`)]
	line := bytes.Count(cut, []byte("\n")) + 1
	col := len(cut) - bytes.LastIndexByte(cut, '\n')
	for name, data := range map[string][]byte{"n/0.json": cut, "n/3.json": nil} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, asJSON := range []bool{false, true} {
		// n/2.json twice: a run given twice is one report of the history.
		args := []string{"history", "n/0.json", "n/1.json", "n/2.json", "n/3.json", "n/2.json"}
		want := "2 reports, oldest first:\n  1  n/1.json  "
		if asJSON {
			args = append(args, "--json")
			want = `"path": "n/2.json"`
		}
		c := newCLI(t, dir, nil, args...)
		c.expect(t, exitUsage)
		if !strings.Contains(c.stdout.String(), want) {
			t.Errorf("%s: stdout lacks the history of the two nights read (%q):\n%s", args, want, c.stdout)
		}
		wantErr := fmt.Sprintf("agenttest: history: n/0.json:%d:%d: not a JSON report: the file ends inside a JSON value (cut short?)\n", line, col) +
			"agenttest: history: n/3.json: not a JSON report: the file is empty\n" +
			"agenttest: history: 2 files left out: the history printed is of the other 2 reports\n"
		// A file's content is no matter of usage: the job's summary,
		// where these lines land, gets no pointer to the help.
		if !strings.HasSuffix(c.stderr.String(), wantErr) {
			t.Errorf("%s: stderr:\n%s\nwant it to end with:\n%s", args, c.stderr, wantErr)
		}
	}
	// With nothing read there is no history to print.
	c := newCLI(t, dir, nil, "history", "n/0.json", "n/3.json")
	c.expect(t, exitUsage, "n/0.json:", "n/3.json:")
	if c.stdout.String() != "" || strings.Contains(c.stderr.String(), "left out") || strings.Contains(c.stderr.String(), "agenttest help") {
		t.Errorf("history of unreadable reports alone:\nstdout:\n%s\nstderr:\n%s", c.stdout, c.stderr)
	}
}
