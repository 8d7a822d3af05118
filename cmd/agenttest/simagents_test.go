package main

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/coverage"
)

// bakery is a conversation designer's own agent: three nodes, of which a
// suite ordering bread visits two.
const bakery = "id: bakery\nstart: Hello\nintents:\n  order:\n    patterns: ['\\bbread\\b']\nroutes:\n  - intent: order\n    goto: Order\n" +
	"nodes:\n  Hello: {say: Welcome to the bakery}\n  Order: {say: One loaf coming up}\n  Closed: {say: We are closed}\n"

// bakerySuite orders bread and expects the reply in want.
func bakerySuite(want string) string {
	return "agent: bakery\nscenarios:\n  - name: orders bread\n    greeting: {response: {contains: Welcome}}\n" +
		"    turns:\n      - say: some bread please\n        expect: {response: {contains: " + want + "}}\n"
}

// TestRunWithSimAgents: `run --sim-agents PATH` (or AGENTTEST_SIM_AGENTS)
// serves the definitions of PATH, a directory or one file, on the
// embedded simulator in place of the examples, whatever target is
// configured (it implies --sim), and tests the suite against them over
// HTTP: it passes when the agent does what the suite says and fails when
// it does not. The first line says why the
// simulator is used and which agents it serves, and the JSON report's
// coverage counts the nodes of the user's definition.
func TestRunWithSimAgents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   map[string]string
		args  []string
		reply string
		code  int
		first string
	}{
		{"a directory, passing", nil, []string{"--sim-agents", "agents/"}, "loaf", exitOK,
			"agenttest: --sim-agents agents/; using the embedded simulator (agents: bakery)"},
		{"a directory, failing", nil, []string{"--sim-agents", "agents"}, "cake", exitFailed,
			"agenttest: --sim-agents agents; using the embedded simulator (agents: bakery)"},
		{"one file", nil, []string{"--sim-agents", "agents/bakery.yaml"}, "loaf", exitOK,
			"agenttest: --sim-agents agents/bakery.yaml; using the embedded simulator (agents: bakery)"},
		{"the variable", map[string]string{"AGENTTEST_SIM_AGENTS": "agents"}, nil, "loaf", exitOK,
			"agenttest: AGENTTEST_SIM_AGENTS=agents; using the embedded simulator (agents: bakery)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A default target too: --sim-agents implies --sim.
			dir := writeTree(t, map[string]string{"agents/bakery.yaml": bakery, "suites/s.yaml": bakerySuite(tc.reply),
				"agenttest.yaml": "default_target: t\ntargets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"})
			args := append([]string{"run", "suites", "--json", "r.json"}, tc.args...)
			out := newCLI(t, dir, tc.env, args...).expect(t, tc.code)
			if got := firstLine(out); got != tc.first {
				t.Errorf("first line %q, want %q", got, tc.first)
			}
			cov := readDoc(t, filepath.Join(dir, "r.json")).Coverage
			if a := cov.Agent("bakery"); a == nil || a.Source != coverage.SourceDefinition || a.NodesTotal != 3 || !slices.Equal(a.Unvisited, []string{"Closed"}) {
				t.Errorf("bakery = %+v, want the 3 nodes of its definition, Closed unvisited", a)
			}
		})
	}
}

// TestRunWithSimAgentsRefused: a broken definition is told at file:line:col
// with its source line and a caret, before anything runs (a suite with
// nothing selected included), and exits 2; a suite's agent the
// definitions do not define is refused naming those they do; and
// --sim-agents excludes --target as --sim does.
func TestRunWithSimAgentsRefused(t *testing.T) {
	t.Parallel()
	broken := "id: bad\nstart: A\nnodes:\n  A:\n    sya: hello\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		args  []string
		want  []string
	}{
		{"a broken definition", map[string]string{"agents/bad.yaml": broken, "suites/s.yaml": bakerySuite("loaf")},
			nil, []string{"run", "--sim-agents", "agents", "suites"},
			[]string{"agents/bad.yaml:5:5: unknown key \"sya\" in node A (did you mean \"say\"?)\n 5 |     sya: hello\n   |     ^\n", "run: --sim-agents agents: invalid agent definitions in agents"}},
		{"a broken file, nothing selected", map[string]string{"bad.yaml": broken, "suites/s.yaml": bakerySuite("loaf")},
			nil, []string{"run", "--sim-agents", "bad.yaml", "--tags", "none", "suites"},
			[]string{"bad.yaml:5:5: unknown key \"sya\""}},
		{"no definitions", map[string]string{"agents/notes.txt": "", "suites/s.yaml": bakerySuite("loaf")},
			nil, []string{"run", "--sim-agents", "agents", "suites"},
			[]string{"run: --sim-agents agents: no agent definitions (*.yaml) in agents"}},
		{"an agent not defined", map[string]string{"agents/bakery.yaml": bakery, "suites/s.yaml": "agent: restaurant\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n"},
			nil, []string{"run", "--sim-agents", "agents", "suites"},
			[]string{`suites/s.yaml:1:8: the embedded simulator does not serve agent "restaurant" (it serves bakery, the agents of --sim-agents agents: check the id: of the definition meant)`}},
		{"with --target", map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": "targets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"},
			nil, []string{"run", "--sim-agents", "agents", "--target", "t"},
			[]string{"--sim-agents and --target exclude each other"}},
		{"with AGENTTEST_TARGET", map[string]string{"agents/bakery.yaml": bakery},
			map[string]string{"AGENTTEST_TARGET": "t"}, []string{"run", "--sim-agents", "agents"},
			[]string{"--sim-agents and --target exclude each other", "AGENTTEST_TARGET"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, tc.files)
			out := newCLI(t, dir, tc.env, tc.args...).expect(t, exitUsage, tc.want...)
			if strings.Contains(out, "running ") || strings.Contains(out, "PASS") || strings.Contains(out, "FAIL") {
				t.Errorf("cases ran:\n%s", out)
			}
		})
	}
}

// TestCompareWithSimAgents: `compare --sim-agents PATH` (or
// AGENTTEST_SIM_AGENTS) compares two versions of a designer's own agent,
// each environment served by the embedded simulator as its definition
// says: a version that now gets the order wrong half the time regresses,
// by its wording and by Fisher's test of a statistical scenario's pass
// rates. Before, compare had no such flag, and the embedded simulator
// served only its examples, whose error told the user to use run.
func TestCompareWithSimAgents(t *testing.T) {
	t.Parallel()
	versioned := bakery + "version: \"1\"\nenvironments:\n  pre-release: \"2\"\nversions:\n  \"2\":\n    nodes:\n" +
		"      Order:\n        say:\n          - {text: One loaf coming up, weight: 1}\n          - {text: One baguette coming up, weight: 1}\n"
	statistical := "agent: bakery\nscenarios:\n  - name: orders bread on most calls\n    pass_rate: 0.9\n    confidence: 0.95\n" +
		"    turns:\n      - say: some bread please\n        expect: {response: {contains: loaf}}\n"
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"the flag", nil, []string{"--sim-agents", "agents"}},
		{"the variable", map[string]string{"AGENTTEST_SIM_AGENTS": "agents"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"agents/bakery.yaml": versioned, "suites/stat.yaml": statistical,
				"agenttest.yaml": "default_target: t\ntargets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"})
			args := append([]string{"compare", "--baseline", "sandbox", "--candidate", "pre-release", "suites"}, tc.args...)
			out := compareCLI(t, dir, tc.env, args...).expect(t, exitFailed,
				"deployment of bakery in sandbox: ", "(version 1)", "deployment of bakery in pre-release: ", "(version 2)",
				"REGRESSED suites/stat.yaml:3 orders bread on most calls", "(Fisher's exact test, p = ",
				"status: failed (1 scenario regressed)")
			if strings.Contains(out, "does not serve agent") {
				t.Errorf("the definitions were not served:\n%s", out)
			}
		})
	}
	refused := []struct {
		name  string
		files map[string]string
		args  []string
		want  []string
	}{
		{"a broken definition", map[string]string{"agents/bad.yaml": "id: bad\nstart: A\nnodes:\n  A:\n    sya: hello\n", "suites/s.yaml": bakerySuite("loaf")},
			[]string{"--sim-agents", "agents", "suites"},
			[]string{"agents/bad.yaml:5:5: unknown key \"sya\" in node A", "compare: --sim-agents agents: invalid agent definitions in agents"}},
		{"with --target", map[string]string{"agents/bakery.yaml": bakery, "agenttest.yaml": "targets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n"},
			[]string{"--sim-agents", "agents", "--target", "t"},
			[]string{"--sim-agents and --target exclude each other"}},
		{"an agent not defined", map[string]string{"agents/bakery.yaml": bakery, "suites/s.yaml": "agent: restaurant\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n"},
			[]string{"--sim-agents", "agents", "suites"},
			[]string{`suites/s.yaml:1:8: the embedded simulator does not serve agent "restaurant" (it serves bakery, the agents of --sim-agents agents: check the id: of the definition meant)`}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, tc.files)
			args := append([]string{"compare", "--baseline", "sandbox", "--candidate", "pre-release"}, tc.args...)
			out := newCLI(t, dir, nil, args...).expect(t, exitUsage, tc.want...)
			if strings.Contains(out, "comparing ") || strings.Contains(out, "--sim and --target") {
				t.Errorf("compared, or said the --sim conflict too:\n%s", out)
			}
		})
	}
}

// TestSimAgentsFile: `sim --agents` serves one definition file as it
// serves a directory.
func TestSimAgentsFile(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"bakery.yaml": bakery, "other.yaml": strings.Replace(bakery, "id: bakery", "id: other", 1)})
	var info struct {
		AgentIDs []string `json:"agent_ids"`
	}
	path := filepath.Join(dir, "bakery.yaml")
	if out := startSim(t, "--agents", path); json.Unmarshal([]byte(out), &info) != nil || !slices.Equal(info.AgentIDs, []string{"bakery"}) {
		t.Errorf("sim --agents %s serves %q", path, out)
	}
}

// TestRunNamesTheNodeATraceCheckMeant: a node trace check that names a
// node the agent's trace lacks, written with a typo or in another case
// (`order` for `Order`), fails naming the node of the trace the designer
// likely meant, as a misspelt state key or metric does, in a YAML suite
// and a feature alike, over HTTP against the designer's own agent; a
// node that is far from every node of the trace gets no guess.
func TestRunNamesTheNodeATraceCheckMeant(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/s.yaml": "agent: bakery\nscenarios:\n  - name: orders bread\n    turns:\n      - say: some bread please\n" +
			"        expect: {trace: {includes: [Ordr, Closed], sequence: [Order, order]}}\n",
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread\n    When the user says \"some bread please\"\n" +
			"    Then the node trace includes \"order\"\n"})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/s.yaml:6:37: turn 1: node trace is missing Ordr (did you mean \"Order\"?)\n",
		"suites/s.yaml:6:43: turn 1: node trace is missing Closed\n",
		"suites/s.yaml:6:70: turn 1: node trace is missing order (did you mean \"Order\"?)\n",
		"suites/f.feature:6:5: Then the node trace includes \"order\": node trace is missing order (did you mean \"Order\"?)\n")
	if strings.Contains(out, "missing Closed (") {
		t.Errorf("a node far from the trace's got a guess:\n%s", out)
	}
}

// TestRunPointsAtTheTableRowThatFailed: a feature's table of state keys
// or of record fields is one check per row, as a YAML state: or
// confirm: conversation: mapping is one per key, so a row that fails is
// reported at its own line (its first cell), naming the step, over HTTP
// against the simulator; the rows that hold are not reported. A node
// trace table fails at the row of the node that broke the sequence.
func TestRunPointsAtTheTableRowThatFailed(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread\n    When the user says \"some bread please\"\n" +
			"    Then the state includes:\n      | key         | value   |\n      | channel     | WEBCHAT |\n      | environment | live    |\n" +
			"    And the conversation record shows:\n      | channel   | WEBCHAT |\n      | num_turns | 7       |\n"})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/f.feature:9:9: Then the state includes: state \"environment\" is not the expected value\n")
	if strings.Contains(out, "suites/f.feature:6:5:") || strings.Contains(out, "suites/f.feature:8:") {
		t.Errorf("a row that holds, or the step as a whole, was reported:\n%s", out)
	}
	dir = writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread\n    When the user says \"some bread please\"\n" +
			"    Then the conversation record shows:\n      | channel   | WEBCHAT |\n      | num_turns | 7       |\n"})
	newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/f.feature:8:9: Then the conversation record shows: conversation num_turns is 2, expected 7\n")
	// A node trace table is one sequence: the row of the node missing
	// or out of order is the one reported, as is its warning.
	dir = writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread\n    When the user says \"some bread please\"\n" +
			"    Then the node trace passes through:\n      | node  |\n      | Order |\n      | Ordr  |\n"})
	out = newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/f.feature:9:9: warning: node \"Ordr\" is not a node of agent \"bakery\"",
		"suites/f.feature:9:9: Then the node trace passes through: node trace is missing Ordr (did you mean \"Order\"?)\n")
	if strings.Contains(out, "suites/f.feature:6:5:") {
		t.Errorf("the step as a whole was reported:\n%s", out)
	}
}

// TestRunWarnsOfNodesTheAgentLacks: on the embedded simulator the node
// names of a selected scenario's checks are held to the definition that
// serves its agent before any call: a name it lacks is warned of at the
// check, with the node likely meant, as a check that fails whatever the
// agent does, or, excluded, one that passes whatever it does. Names it
// has (in another case where the matcher ignores case), names built from
// ${...}, patterns and skipped scenarios are not; an examples row does not
// repeat a warning. The run goes on and the checks fail over HTTP.
func TestRunWarnsOfNodesTheAgentLacks(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/s.yaml": "agent: bakery\nscenarios:\n  - name: orders bread\n    examples: [{n: Order}, {n: Hello}]\n    turns:\n      - say: some bread please\n" +
			"        expect:\n          node: Ordr\n          trace: {excludes: [Closd, Closed], sequence: [Hello, order], includes: [\"${n}\"]}\n" +
			"      - say: more bread\n        expect:\n          node: {not: {any: [{one_of: [Clsed]}, {matches: '^Ord'}, {equals: order, ignore_case: true}]}}\n" +
			"      - say: bread again\n        expect:\n          node: {ignore_case: true, any: [{equals: hello, ignore_case: false}, ORDER]}\n" +
			"  - name: skipped\n    skip: no flow yet\n    turns:\n      - say: cancel\n        expect: {node: Cancel}\n",
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread in a feature\n    When the user says \"some bread please\"\n" +
			"    Then the node trace does not include \"Closd\"\n    And the current node is \"Ordr\"\n"})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/s.yaml:15:43: warning: node \"hello\" is not a node of agent \"bakery\" as the embedded simulator serves it, so the check fails whatever the agent does (did you mean \"Hello\"?)\n",
		"suites/f.feature:6:5: warning: node \"Closd\" is not a node of agent \"bakery\" as the embedded simulator serves it, so this exclusion passes",
		"suites/s.yaml:8:11: warning: node \"Ordr\" is not a node of agent \"bakery\" as the embedded simulator serves it, so the check fails whatever the agent does (did you mean \"Order\"?)\n",
		"suites/s.yaml:9:30: warning: node \"Closd\" is not a node of agent \"bakery\" as the embedded simulator serves it, so this exclusion passes whatever the agent does (did you mean \"Closed\"?)\n",
		"suites/s.yaml:9:64: warning: node \"order\" is not a node of agent \"bakery\" as the embedded simulator serves it, so the check fails whatever the agent does (did you mean \"Order\"?)\n",
		"suites/s.yaml:12:30: warning: node \"Clsed\" is not a node of agent \"bakery\" as the embedded simulator serves it, so this exclusion passes whatever the agent does (did you mean \"Closed\"?)\n",
		"suites/f.feature:7:5: warning: node \"Ordr\" is not a node of agent \"bakery\"",
		"FAIL suites/s.yaml:4 orders bread [n=Order]", "FAIL suites/f.feature:4 orders bread in a feature")
	if n := strings.Count(out, "is not a node"); n != 7 {
		t.Errorf("%d warnings of nodes, want 7:\n%s", n, out)
	}
	// The examples name only nodes their agents have.
	if _, c, _ := runExamples(t); strings.Contains(c.stderr.String(), "is not a node") {
		t.Errorf("an example names a node its agent lacks:\n%s", c.stderr)
	}
}

// TestRunDiffsAnExpectationOverLinesByWords: an exact reply written over
// several lines (a feature's DocString, a YAML literal block) against a
// reply on one line shares no line with it, and its diff is word by word
// with the line break that became a space written \n, in both formats,
// over HTTP against the simulator: not every line removed and the reply
// added, which would hide that the words are right.
func TestRunDiffsAnExpectationOverLinesByWords(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"agents/bakery.yaml": bakery,
		"suites/s.yaml": "agent: bakery\nscenarios:\n  - name: orders bread\n    turns:\n      - say: some bread please\n" +
			"        expect:\n          response: |\n            One loaf\n            coming up.\n",
		"suites/f.feature": "@agent:bakery\nFeature: f\n\n  Scenario: orders bread in a feature\n    When the user says \"some bread please\"\n" +
			"    Then the agent says:\n      \"\"\"\n      One loaf\n      coming up.\n      \"\"\"\n"})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents").expect(t, exitFailed,
		"suites/s.yaml:7:11: turn 1: reply is not the expected text\n",
		"suites/f.feature:6:5: Then the agent says: reply is not the expected text\n")
	if n := strings.Count(out, "      diff:     One loaf[-\\n-]{+ +}coming up[-.-]\n"); n != 2 {
		t.Errorf("%d word diffs of the lines, want 2:\n%s", n, out)
	}
}

// TestLintWarnsOfNodesTheAgentLacks: lint --sim-agents holds the node
// names of the checks to the definitions as such a run does, calling
// nothing and exiting 0 on warnings; a scenario without agent: is held to
// the one definition given, and to none of several.
func TestLintWarnsOfNodesTheAgentLacks(t *testing.T) {
	t.Parallel()
	other := strings.ReplaceAll(bakery, "id: bakery", "id: other")
	for _, tc := range []struct {
		name   string
		agents map[string]string
		warns  int
	}{
		{"one definition", map[string]string{"agents/bakery.yaml": bakery}, 2},
		{"two definitions", map[string]string{"agents/bakery.yaml": bakery, "agents/other.yaml": other}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{
				"suites/s.yaml":  "agent: bakery\nscenarios:\n  - name: a\n    turns:\n      - say: bread\n        expect: {node: Ordr}\n",
				"suites/n.yaml":  "scenarios:\n  - name: b\n    turns:\n      - say: bread\n        expect: {trace: {excludes: [Closd]}}\n",
				"agenttest.yaml": "default_target: t\ntargets:\n  t: {build_url: https://b.example, runtime_url: https://r.example}\n",
			}
			maps.Copy(files, tc.agents)
			out := newCLI(t, writeTree(t, files), nil, "lint", "suites", "--sim-agents", "agents").expect(t, exitOK,
				"suites/s.yaml:6:18: warning: node \"Ordr\" is not a node of agent \"bakery\"")
			if n := strings.Count(out, "is not a node"); n != tc.warns {
				t.Errorf("%d warnings of nodes, want %d:\n%s", n, tc.warns, out)
			}
		})
	}
}
