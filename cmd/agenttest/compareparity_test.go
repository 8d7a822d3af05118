package main

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestCompareWarnsAsRun: what run warns of before it runs, compare warns
// of before its sides run, from the same checks: node names the served
// agent lacks (on the embedded simulator, --sim-agents), statistical
// flags that do nothing, and probes the statistical flags leave to one
// run (SMS probes of several agents through one sms_connector_id:
// TestSMSConnectorSharedByAgents). Before, compare said none of them.
func TestCompareWarnsAsRun(t *testing.T) {
	t.Parallel()
	sim := "default_target: t\ntargets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		args  []string
		want  []string
		// once is said once, the other side saying "the same as".
		once string
		// not is said by neither side.
		not string
	}{
		{name: "a node the served agent lacks",
			files: map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": sim,
				"suites/s.yaml": "agent: bakery\nscenarios:\n  - name: a\n    turns:\n      - say: bread\n        expect: {node: Ordr}\n"},
			args: []string{"--sim-agents", "agents"},
			want: []string{`suites/s.yaml:6:18: warning: node "Ordr" is not a node of agent "bakery" as the embedded simulator serves it, so the check fails whatever the agent does (did you mean "Order"?)`,
				"agenttest: --candidate pre-release: the same as --baseline sandbox\n"},
			once: `warning: node "Ordr"`},
		// Each side's warnings are of the version its environment
		// deploys, whatever env: the suite pins (an environment side
		// runs there): pre-release's adds the node sandbox's lacks.
		{name: "a node one side's version lacks",
			files: map[string]string{"agents/bakery.yaml": bakery + "version: \"1\"\nenvironments:\n  pre-release: \"2\"\nversions:\n  \"2\":\n    nodes:\n      Deliver: {say: On its way}\n",
				"agenttest.yaml": sim,
				"suites/s.yaml":  "agent: bakery\nenv: sandbox\nscenarios:\n  - name: a\n    turns:\n      - say: bread\n        expect: {node: Deliver}\n"},
			args: []string{"--sim-agents", "agents"},
			want: []string{"agenttest: --baseline sandbox:\n" + `suites/s.yaml:7:18: warning: node "Deliver" is not a node of agent "bakery" as the embedded simulator serves it`},
			once: `warning: node "Deliver"`, not: "--candidate pre-release"},
		{name: "a statistical flag that does nothing",
			files: map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": sim, "suites/s.yaml": bakerySuite("loaf")},
			args:  []string{"--sim-agents", "agents", "--pass-rate", "0.9"},
			want:  []string{"agenttest: warning: --pass-rate has no effect without --repeat or --confidence"},
			once:  "--pass-rate has no effect"},
		{name: "a probe run once",
			files: map[string]string{"suites/probes.yaml": "agent: clinic\nscenarios:\n  - name: texts\n" +
				`    probe: {sms: {to: "+447700900002", message: "Reply YES"}}` + "\n    confirm: {conversation: {channel: SMS}}\n"},
			args: []string{"--repeat", "3"},
			want: []string{`agenttest: note: --repeat not applied to 1 scenario with a probe, run once each`},
			once: "agenttest: note: --repeat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, tc.files)
			args := append([]string{"compare", "--baseline", "sandbox", "--candidate", "pre-release", "suites"}, tc.args...)
			c := compareCLI(t, dir, nil, args...)
			c.run(t)
			for _, w := range tc.want {
				if !strings.Contains(c.stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, c.stderr)
				}
			}
			if n := strings.Count(c.stderr.String(), tc.once); n != 1 {
				t.Errorf("%q said %d times, want once:\n%s", tc.once, n, c.stderr)
			}
			if tc.not != "" && strings.Contains(c.stderr.String(), tc.not) {
				t.Errorf("stderr says %q:\n%s", tc.not, c.stderr)
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
	placeRunFlags(t, "compare", shared, slices.Sorted(maps.Keys(notCompare)))
}
