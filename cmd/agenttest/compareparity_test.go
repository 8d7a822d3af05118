package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestCompareConfirmTimeout: each side of a comparison waits for what a
// confirmation reads as run does, --confirm-timeout (or
// AGENTTEST_CONFIRM_TIMEOUT, or the config's run: confirm_timeout).
// Before, compare had no such flag and waited 30s whatever a platform
// that shows its records later needed, so a candidate that run passed
// with --confirm-timeout 2m errored in the comparison.
func TestCompareConfirmTimeout(t *testing.T) {
	t.Parallel()
	env := simBehind(t, sim.Options{Seed: 1}, nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"error_message":"conversation not found"}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	const suite = "suite: late\nagent: clinic\nscenarios:\n  - name: confirms\n    turns: [{say: I have chest pain}]\n    confirm: {conversation: {handoff: true}}\n"
	for _, tc := range []struct {
		name, config string
		args         []string
		env          map[string]string
		code         int
		want         string
	}{
		{name: "the default", code: exitErrored, want: "not recorded within the confirmation's wait of 30s"},
		{name: "the flag", args: []string{"--confirm-timeout", "2m"}, code: exitErrored, want: "not recorded within the confirmation's wait of 2m0s"},
		{name: "the variable", env: map[string]string{"AGENTTEST_CONFIRM_TIMEOUT": "75s"}, code: exitErrored, want: "not recorded within the confirmation's wait of 1m15s"},
		{name: "the config", config: "run:\n  confirm_timeout: 90s\n", code: exitErrored, want: "not recorded within the confirmation's wait of 1m30s"},
		{name: "the flag over the config", config: "run:\n  confirm_timeout: 90s\n", args: []string{"--confirm-timeout", "45s"}, code: exitErrored,
			want: "not recorded within the confirmation's wait of 45s"},
		{name: "not positive", args: []string{"--confirm-timeout", "0s"}, code: exitUsage, want: "--confirm-timeout must be positive, got 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"late.yaml": suite}
			if tc.config != "" {
				files["agenttest.yaml"] = tc.config
			}
			dir := writeTree(t, files)
			e := map[string]string{}
			for k, v := range env {
				e[k] = v
			}
			for k, v := range tc.env {
				e[k] = v
			}
			args := append([]string{"compare", "--baseline", "sandbox", "--candidate", "pre-release", "late.yaml"}, tc.args...)
			c := compareCLI(t, dir, e, args...)
			clk := fakeclock.New()
			c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
			out := c.expect(t, tc.code, tc.want)
			if tc.code == exitErrored && strings.Count(out, tc.want) != 2 {
				t.Errorf("want both sides to wait %q:\n%s", tc.want, out)
			}
		})
	}
}

// TestCompareWarnsAsRun: what run warns of before it runs, compare warns
// of before its sides run, from the same checks: SMS probes of several
// agents through one sms_connector_id, node names the served agent
// lacks (on the embedded simulator, --sim-agents), statistical flags
// that do nothing, and probes the statistical flags leave to one run.
// Before, compare said none of them: the first two were dropped unless
// the side was refused for something else.
func TestCompareWarnsAsRun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	probe := func(name, agent string) string {
		return "  - name: " + name + "\n    agent: " + agent + "\n" +
			`    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}` + "\n    confirm: {conversation: {channel: SMS}}\n"
	}
	target := "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL +
		"\n    account_id: " + s.AccountID + "\n    agent_id: clinic\n    build_key: ${env:BK}\n    runtime_key: ${env:RK}\n" +
		"    sms_connector_id: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + "\n" +
		"    probe_numbers: [\"+447700900002\"]\n"
	keys := map[string]string{"BK": s.BuildKey, "RK": s.RuntimeKey}
	sim := "default_target: t\ntargets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		args  []string
		want  []string
		// once is said once, the other side saying "the same as".
		once string
	}{
		{name: "a shared SMS connector",
			files: map[string]string{"suites/probes.yaml": "suite: probes\nscenarios:\n" + probe("clinic texts", "clinic") + probe("second texts", "restaurant"),
				"agenttest.yaml": target},
			env: keys,
			want: []string{"agenttest: --baseline sandbox:\n",
				`suites/probes.yaml:9:13: warning: SMS probe of agent restaurant, while the SMS probes of agent clinic (suites/probes.yaml:5:13) send the same sms_connector_id of target "t"`,
				"agenttest: --candidate pre-release: the same as --baseline sandbox\n"},
			once: "warning: SMS probe of agent restaurant"},
		{name: "a node the served agent lacks",
			files: map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": sim,
				"suites/s.yaml": "agent: bakery\nscenarios:\n  - name: a\n    turns:\n      - say: bread\n        expect: {node: Ordr}\n"},
			args: []string{"--sim-agents", "agents"},
			want: []string{`suites/s.yaml:6:18: warning: node "Ordr" is not a node of agent "bakery" as the embedded simulator serves it, so the check fails whatever the agent does (did you mean "Order"?)`,
				"agenttest: --candidate pre-release: the same as --baseline sandbox\n"},
			once: `warning: node "Ordr"`},
		{name: "a statistical flag that does nothing",
			files: map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": sim, "suites/s.yaml": bakerySuite("loaf")},
			args:  []string{"--sim-agents", "agents", "--pass-rate", "0.9"},
			want:  []string{"agenttest: warning: --pass-rate has no effect without --repeat or --confidence"},
			once:  "--pass-rate has no effect"},
		{name: "a probe run once",
			files: map[string]string{"suites/probes.yaml": "suite: probes\nscenarios:\n" + probe("clinic texts", "clinic")},
			args:  []string{"--repeat", "3"},
			want:  []string{`agenttest: note: --repeat not applied to 1 scenario with a probe, run once each`},
			once:  "agenttest: note: --repeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, tc.files)
			args := append([]string{"compare", "--baseline", "sandbox", "--candidate", "pre-release", "suites"}, tc.args...)
			c := compareCLI(t, dir, tc.env, args...)
			c.run(t)
			for _, w := range tc.want {
				if !strings.Contains(c.stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, c.stderr)
				}
			}
			if n := strings.Count(c.stderr.String(), tc.once); n != 1 {
				t.Errorf("%q said %d times, want once:\n%s", tc.once, n, c.stderr)
			}
			if !strings.Contains(c.stdout.String(), "comparing ") {
				t.Errorf("a warning refused the comparison:\nstdout:\n%s\nstderr:\n%s", c.stdout, c.stderr)
			}
		})
	}
}

// TestCompareRunsAsRun: each side of a comparison runs its scenarios as
// `agenttest run` does, so each flag of run about how a scenario runs
// or is judged is a flag of compare too, or is placed here with why a
// comparison has no use for it. A flag added to run must be placed here.
func TestCompareRunsAsRun(t *testing.T) {
	t.Parallel()
	shared := []string{"--allow-live", "--confidence", "--config", "--confirm-timeout", "--html", "--json", "--margin", "--name",
		"--no-color", "--parallel", "--pass-rate", "--repeat", "--rerun-failed", "--retries", "--seed", "--sim", "--sim-agents",
		"--tags", "--target", "--turn-timeout", "-v, --verbose"}
	notCompare := map[string]string{
		"--env":             "each side names its environment (--baseline ENV, --candidate ENV)",
		"--fail-fast":       "a comparison needs every scenario of both sides",
		"--shard":           "a comparison pairs whole selections; a shard's report is refused as a baseline",
		"--allow-empty":     "nothing compared exits 5, a comparison's own code",
		"--junit":           "a run's report; compare writes its own --json and --html",
		"--cucumber":        "a run's report; compare writes its own --json and --html",
		"--github":          "a run's outputs; compare's text is its report",
		"--coverage-from":   "node coverage is a run's report",
		"--gate-alerts":     "alerts are the platform's, not a side's: agenttest gate reads them",
		"--webhook-listen":  "compare starts no webhook receiver, and says so in such a scenario's error",
		"--webhook-url":     "compare starts no webhook receiver",
		"--webhook-secret":  "compare starts no webhook receiver",
		"--max-reply-bytes": "each side's target's max_reply_bytes",
		"--rate":            "each side's target's rate",
		"--rate-wait":       "each side's target's rate_wait",
	}
	flagsOf := func(cmd string) []string {
		c := newCLI(t, "testdata/pass", nil, cmd, "--help")
		c.expect(t, exitOK)
		var out []string
		for line := range strings.SplitSeq(c.stdout.String(), "\n") {
			if strings.HasPrefix(line, "  -") {
				name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
				if name == "-v," {
					name = "-v, --verbose"
				}
				out = append(out, name)
			}
		}
		return out
	}
	compare := flagsOf("compare")
	for _, f := range flagsOf("run") {
		switch {
		case slices.Contains(shared, f):
			if !slices.Contains(compare, f) {
				t.Errorf("run has %s, compare does not", f)
			}
		case notCompare[f] != "":
			if slices.Contains(compare, f) {
				t.Errorf("compare has %s, placed here as a flag it has no use for: %s", f, notCompare[f])
			}
		default:
			t.Errorf("run's %s is new: say whether compare needs it", f)
		}
	}
}
