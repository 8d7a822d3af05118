package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/steps"
)

func mustLoad(t *testing.T, src string) *Suite {
	t.Helper()
	s, ds := LoadFile("s.yaml", []byte(src))
	if ds.HasErrors() || s == nil {
		t.Fatalf("load failed:\n%s", renderDiags(ds))
	}
	return s
}

func TestExamplesExpansion(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `
vars: {party: "1", base: b}
scenarios:
  - name: books a table
    vars: {time: noon}
    examples:
      - {party: 2, time: 7pm}
      - {party: 4}
    turns:
      - say: "${party} at ${time} ${base}"
  - name: after
    turns: [{say: hi}]
`)
	type want struct {
		name string
		line int
		vars map[string]string
	}
	wants := []want{
		{"books a table [party=2 time=7pm]", 7, map[string]string{"party": "2", "time": "7pm", "base": "b"}},
		{"books a table [party=4]", 8, map[string]string{"party": "4", "time": "noon", "base": "b"}},
		{"after", 11, map[string]string{"party": "1", "base": "b"}},
	}
	if len(s.Scenarios) != len(wants) {
		t.Fatalf("got %d scenarios, want %d", len(s.Scenarios), len(wants))
	}
	for i, w := range wants {
		sc := s.Scenarios[i]
		if sc.Name != w.name || sc.Pos.Line != w.line || !reflect.DeepEqual(sc.Vars, w.vars) {
			t.Errorf("scenario %d = %q @%d %v, want %q @%d %v", i, sc.Name, sc.Pos.Line, sc.Vars, w.name, w.line, w.vars)
		}
	}
	// Expansions must not share mutable state.
	stepOf(s.Scenarios[0], steps.Say).Say = "changed"
	if stepOf(s.Scenarios[1], steps.Say).Say == "changed" {
		t.Error("examples expansions share turns")
	}
}

// TestMergedKeysYieldToWrittenOnes: a key written beside `<<:` replaces
// the merged one, as YAML's merge key says; the checks it replaces are
// not run as well, and the merged keys it does not replace are.
func TestMergedKeysYieldToWrittenOnes(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `
x-base: &base {state: {stage: done}, node: End}
scenarios:
  - name: a
    turns:
      - say: hi
        expect: {<<: *base, state: {party: "2"}}
`)
	e := expectOf(stepOf(s.Scenarios[0], steps.Check))
	var keys []string
	for _, c := range e.State {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"party"}) {
		t.Errorf("state checks %q, want only the written one, party", keys)
	}
	if e.Node == nil || e.Node.Exact == nil || *e.Node.Exact != "End" {
		t.Errorf("node check %+v, want the merged one, End", e.Node)
	}
}

func TestInheritance(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `
agent: a
env: sandbox
tags: [suite, shared]
start: {channel: WEBCHAT, variant: v1, integration_attributes: {x: "1", y: "2"}}
vars: {a: "1", b: "2"}
scenarios:
  - name: overrides
    agent: b
    env: live
    tags: ["@shared", own]
    start: {variant: v2, integration_attributes: {y: "3"}}
    vars: {b: "3"}
    turns: [{say: hi}]
  - name: inherits
    turns: [{say: hi}]
`)
	o, in := s.Scenarios[0], s.Scenarios[1]
	checks := []struct {
		name      string
		got, want any
	}{
		{"agent override", o.Agent, "b"},
		{"env override", o.Env, "live"},
		{"tags merged", o.Tags, []string{"suite", "shared", "own"}},
		{"channel inherited", o.Start.Channel, "WEBCHAT"},
		{"variant override", o.Start.Variant, "v2"},
		{"attributes merged", o.Start.IntegrationAttributes, map[string]string{"x": "1", "y": "3"}},
		{"vars merged", o.Vars, map[string]string{"a": "1", "b": "3"}},
		{"agent inherited", in.Agent, "a"},
		{"env inherited", in.Env, "sandbox"},
		{"tags inherited", in.Tags, []string{"suite", "shared"}},
		{"start inherited", in.Start.Variant, "v1"},
		{"vars inherited", in.Vars, map[string]string{"a": "1", "b": "2"}},
		{"suite vars untouched", s.Vars, map[string]string{"a": "1", "b": "2"}},
		{"stats unset", in.Stats.IsZero(), true},
		{"stats default to one run", in.Stats.Resolve(), Stats{Repeat: 1, PassRate: 1}},
		{"retries unset", in.Retries == nil, true},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestLoadsCleanly lists forms that must load without any diagnostic.
func TestLoadsCleanly(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		src  string
	}
	run := func(t *testing.T, tc testCase) {
		s, ds := LoadFile("s.yaml", []byte(tc.src))
		if len(ds) > 0 || s == nil {
			t.Fatalf("unexpected diagnostics:\n%s", renderDiags(ds))
		}
	}
	testCases := []testCase{
		{"regex with a var that compiles", "vars: {x: a}\nscenarios: [{name: a, turns: [{say: hi, expect: {response: {matches: '^${x}\\.(\\d+)$'}}}]}]\n"},
		{"env refs are checked at run time", "scenarios: [{name: a, turns: [{say: \"${env:TOKEN}\", expect: {ended: false}}]}]\n"},
		{"escaped reference", "scenarios: [{name: a, turns: [{say: \"$${literal}\", expect: {ended: false}}]}]\n"},
		{"capture used by a later turn", "scenarios: [{name: a, turns: [{say: hi, capture: {r: {response: x}}}, {say: \"${r}\"}]}]\n"},
		{"suite start uses example column", "start: {variant: \"${v}\"}\nscenarios: [{name: a, examples: [{v: x}], turns: [{say: hi, expect: {ended: false}}]}]\n"},
		{"greeting only", "scenarios: [{name: a, greeting: {response: hi}}]\n"},
		{"crlf line endings", "scenarios:\r\n  - name: a\r\n    turns: [{say: hi, expect: {ended: false}}]\r\n"},
		{"comments only around", "# c\nscenarios: # c\n  - name: a # c\n    turns: [{say: hi, expect: {ended: false}}] # c\n"},
		{"byte order mark", "\ufeffscenarios: [{name: a, turns: [{say: hi, expect: {ended: false}}]}]\n"},
		{"alias to a matcher", "x-polite: &polite {not_contains: sorry}\nscenarios: [{name: a, turns: [{say: hi, expect: {response: *polite}}]}]\n"},
		{"values nested to the bound", anchorChain(maxDepth - 8)},
		{"every run must pass", "scenarios: [{name: a, repeat: 5, pass_rate: 1, turns: [{say: hi, expect: {ended: false}}]}]\n"},
		{"similarity just below 1 (1 itself loads with a warning: testdata/valid/warnings.yaml)", "scenarios: [{name: a, turns: [{say: hi, expect: {response: {similar: {to: hi, min: 0.99}}}}]}]\n"},
		{"explicit document markers", "---\nscenarios: [{name: a, turns: [{say: hi, expect: {ended: false}}]}]\n...\n"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestScalarsAsText(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `
scenarios:
  - name: a
    turns:
      - say: 42
        expect:
          state: {n: 4, f: 1.50, b: True, s: "x"}
`)
	say := stepOf(s.Scenarios[0], steps.Say)
	if say.Say != "42" {
		t.Errorf("say = %q", say.Say)
	}
	want := map[string]string{"n": "4", "f": "1.50", "b": "true", "s": "x"}
	for _, c := range expectOf(stepOf(s.Scenarios[0], steps.Check)).State {
		if got := *c.Match.Exact; got != want[c.Key] {
			t.Errorf("state.%s = %q, want %q", c.Key, got, want[c.Key])
		}
	}
}

// TestLargeExamplesTable guards the complexity budget: a big data-driven
// suite with a shared anchor must load.
func TestLargeExamplesTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("x-ok: &ok {not_contains: error}\nscenarios:\n  - name: big\n    examples:\n")
	for i := range 300 {
		fmt.Fprintf(&b, "      - {n: %d}\n", i)
	}
	b.WriteString("    turns:\n")
	for range 30 {
		b.WriteString("      - say: \"${n}\"\n        expect: {response: *ok, state: {n: \"${n}\"}}\n")
	}
	s := mustLoad(t, b.String())
	if len(s.Scenarios) != 300 || len(stepsOf(s.Scenarios[299], steps.Say)) != 30 {
		t.Errorf("got %d scenarios", len(s.Scenarios))
	}
}

// An examples value may hold what a name may not (badName): the name's
// suffix quotes it, so the row's name stays one line of text.
func TestExamplesSuffixQuotesControls(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `
scenarios:
  - name: n
    examples: [{x: "a\ab"}, {x: "a\nb"}, {x: "a\u0085b"}, {x: "a\u202eb"}]
    turns: [{say: "${x}"}]
`)
	var got []string
	for _, sc := range s.Scenarios {
		got = append(got, sc.Name)
	}
	want := []string{`n [x="a\ab"]`, `n [x="a\nb"]`, `n [x="a\u0085b"]`, "n [x=a\u202eb]"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
}
