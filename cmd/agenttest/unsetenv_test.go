package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// TestUnsetEnvRefusedBeforeTheRun: a ${env:NAME} a selected scenario
// would expand while NAME is unset is refused before the run (exit 2), at
// the reference, with its source line and a caret, once per place,
// whatever kind of value holds it; nothing runs and no report is
// written. At run time each scenario errored (exit 4) after it opened a
// session.
func TestUnsetEnvRefusedBeforeTheRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"a say", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: a\n    turns: [{say: \"table for ${env:AT_PARTY}\"}]\n",
			[]string{`s.yaml:4:30: environment variable AT_PARTY is not set (referenced as ${env:AT_PARTY}): scenario "a" would expand it and error`,
				"\n 4 |     turns: [{say: \"table for ${env:AT_PARTY}\"}]\n   |                              ^\n",
				"set AT_PARTY in the environment of agenttest run"}},
		{"a matcher, a capture pattern and a start parameter", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: a\n    start: {channel: \"${env:AT_CHANNEL}\"}\n    turns:\n      - say: hi\n        expect: {response: {contains: \"${env:AT_WORD}\"}}\n        capture: {n: {response: \"(${env:AT_RE})\"}}\n",
			[]string{`s.yaml:4:23: environment variable AT_CHANNEL is not set`, `s.yaml:7:40: environment variable AT_WORD is not set`, `s.yaml:8:35: environment variable AT_RE is not set`}},
		{"a var some text uses, once for two scenarios", "s.yaml",
			"agent: restaurant\nvars: {party: \"${env:AT_PARTY}\"}\nscenarios:\n  - name: a\n    turns: [{say: \"${party}\"}]\n  - name: b\n    turns: [{say: \"${party} people\"}]\n",
			[]string{`s.yaml:2:16: environment variable AT_PARTY is not set (referenced as ${env:AT_PARTY}): 2 selected scenarios ("a" first) would expand it and error`}},
		{"an unused var of a scenario that expands another", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: a\n    vars: {unused: \"${env:AT_UNUSED}\", party: \"2\"}\n    turns: [{say: \"${party}\"}]\n",
			[]string{`s.yaml:4:21: environment variable AT_UNUSED is not set`}},
		{"an examples row", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: a\n    examples: [{p: \"${env:AT_PARTY}\"}, {p: \"2\"}]\n    turns: [{say: \"${p}\"}]\n",
			[]string{`s.yaml:4:21: environment variable AT_PARTY is not set (referenced as ${env:AT_PARTY}): scenario "a [p=${env:AT_PARTY}]" would expand it`}},
		{"a feature's say and check", "f.feature",
			"@agent:restaurant\nFeature: f\n  Scenario: a\n    When the user says \"table for ${env:AT_PARTY}\"\n    Then the agent's reply contains \"${env:AT_WORD}\"\n",
			[]string{`f.feature:4:35: environment variable AT_PARTY is not set (referenced as ${env:AT_PARTY}): scenario "a" would expand it and error`,
				"\n 4 |     When the user says \"table for ${env:AT_PARTY}\"\n   |                                   ^\n",
				`f.feature:5:38: environment variable AT_WORD is not set`}},
		{"a feature's examples row used by a step", "f.feature",
			"@agent:restaurant\nFeature: f\n  Scenario Outline: a\n    When the user says \"${p}\"\n    Examples:\n      | p                |\n      | ${env:AT_PARTY} |\n      | 2                |\n",
			[]string{`f.feature:7:9: environment variable AT_PARTY is not set`}},
		{"a feature's Examples value put in a step by its <column>, and the step's own", "f.feature",
			"@agent:restaurant\nFeature: f\n  Scenario Outline: a\n    When the user says \"<p> ${env:AT_WORD}\"\n    Examples:\n      | p               |\n      | ${env:AT_PARTY} |\n",
			[]string{`f.feature:4:29: environment variable AT_WORD is not set`, `f.feature:7:9: environment variable AT_PARTY is not set`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{tc.file: tc.src})
			out := newCLI(t, dir, nil, "run", "-v", "--json", "out.json", "--junit", "out.xml", tc.file).expect(t, exitUsage, tc.want...)
			refs := 0
			for _, w := range tc.want {
				if strings.Contains(w, "is not set") {
					refs++
				}
			}
			if n := strings.Count(out, "is not set"); n != refs {
				t.Errorf("%d refusals, want %d:\n%s", n, refs, out)
			}
			nothingRan(t, dir, out)
			if strings.Contains(out, "embedded simulator") {
				t.Errorf("the simulator started:\n%s", out)
			}
		})
	}
}

// TestUnsetEnvNotExpandedNotRefused: a reference no selected scenario
// would expand is no reason to refuse the run, which runs and passes on
// the embedded simulator: one in a scenario the selection leaves out, in
// another examples row than the one selected, in a skipped scenario, in
// a var of a scenario that expands no ${...} (the runner resolves the
// vars at the first such text), or in a name; and a variable set to ""
// is set.
func TestUnsetEnvNotExpandedNotRefused(t *testing.T) {
	t.Parallel()
	const twoScenarios = "agent: restaurant\nscenarios:\n  - name: runs\n    turns: [{say: hi}]\n  - name: left out\n    turns: [{say: \"${env:AT_UNSET}\"}]\n"
	const outline = "@agent:restaurant\nFeature: f\n  Scenario Outline: a\n    When the user says \"<p>\"\n    Examples:\n      | p              |\n      | 2              |\n      | ${env:AT_UNSET} |\n"
	for _, tc := range []struct {
		name, file, src string
		env             map[string]string
		args            []string
	}{
		{"an unselected scenario, by name", "s.yaml", twoScenarios, nil, []string{"--name", "runs"}},
		{"an unselected scenario, by line", "s.yaml", twoScenarios, nil, []string{"s.yaml:3"}},
		{"another examples row", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: a\n    examples:\n      - {p: \"2\"}\n      - {p: \"${env:AT_UNSET}\"}\n    turns: [{say: \"${p}\"}]\n",
			nil, []string{"s.yaml:5"}},
		{"another Examples row of a feature", "f.feature", outline, nil, []string{"f.feature:7"}},
		{"a skipped scenario", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: runs\n    turns: [{say: hi}]\n  - name: skipped\n    skip: not yet\n    turns: [{say: \"${env:AT_UNSET}\"}]\n", nil, nil},
		{"a var of a scenario that expands nothing", "s.yaml",
			"agent: restaurant\nvars: {token: \"${env:AT_UNSET}\"}\nscenarios:\n  - name: runs\n    turns: [{say: hi}]\n", nil, nil},
		{"a name", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: \"runs ${env:AT_UNSET}\"\n    turns: [{say: hi}]\n", nil, nil},
		{"set to an empty value", "s.yaml",
			"agent: restaurant\nscenarios:\n  - name: runs\n    turns: [{say: \"hi${env:AT_EMPTY}\"}]\n", map[string]string{"AT_EMPTY": ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{tc.file: tc.src})
			args := append([]string{"run"}, tc.args...)
			if len(tc.args) == 0 {
				args = append(args, tc.file)
			}
			out := newCLI(t, dir, tc.env, args...).expect(t, exitOK, "1 passed")
			if strings.Contains(out, "is not set") {
				t.Errorf("refused a reference the run does not expand:\n%s", out)
			}
		})
	}
}

// TestUnsetEnvCallsNothing: refused, the run makes no call to the
// platform (a proxy in front of the simulator counts them); with the
// variable set, the same suite runs and passes through it.
func TestUnsetEnvCallsNothing(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	var calls atomic.Int32
	env := wrapBuild(t, s, func(http.ResponseWriter, *http.Request) bool {
		calls.Add(1)
		return false
	})
	dir := writeTree(t, map[string]string{"s.yaml": "agent: restaurant\nscenarios:\n  - name: a\n    turns: [{say: \"${env:AT_GREETING}\"}]\n  - name: b\n    turns: [{say: hi}]\n"})
	newCLI(t, dir, env, "run", "s.yaml").expect(t, exitUsage, "s.yaml:4:20: environment variable AT_GREETING is not set")
	if n := calls.Load(); n != 0 {
		t.Fatalf("refused, the run made %d calls to the platform", n)
	}
	env["AT_GREETING"] = "hello"
	newCLI(t, dir, env, "run", "s.yaml").expect(t, exitOK, "2 passed")
	if calls.Load() == 0 {
		t.Fatal("the proxy counted no call of the run that passed")
	}
}

// TestCompareRefusesUnsetEnv: compare's sides expand the suites' references
// as run does, and are refused as run is, once for both, before either
// starts.
func TestCompareRefusesUnsetEnv(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"s.yaml": "agent: restaurant\nscenarios:\n  - name: a\n    turns: [{say: \"${env:AT_GREETING}\"}]\n"})
	out := newCLI(t, dir, nil, "compare", "--baseline", "sandbox", "--candidate", "pre-release", "s.yaml").expect(t, exitUsage,
		"s.yaml:4:20: environment variable AT_GREETING is not set")
	if n := strings.Count(out, "is not set"); n != 1 || strings.Contains(out, "embedded simulator") {
		t.Errorf("%d refusals, want 1, and no side started:\n%s", n, out)
	}
}
