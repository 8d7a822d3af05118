package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// accountAgent answers with what the turn's user input metadata says
// (input.KEY), and keeps it in the state.
const accountAgent = `id: account
name: Account lookup
start: Greeting
silence: Silence
fallback: Lookup
nodes:
  Greeting:
    say: Account desk.
  Silence:
    say: Still there?
  Lookup:
    set: {customer: "${input.customer_id}", tier: "${input.profile.tier}"}
    say: Customer ${input.customer_id} is ${input.profile.tier}.
`

// TestTurnMetadata: a turn's metadata: (YAML) or its "with the metadata:"
// table (Gherkin) reaches the agent as the turn's user input metadata, its
// values expanded as a say is, and a turn without it sends none. Before,
// a scenario could not send metadata at all.
func TestTurnMetadata(t *testing.T) {
	t.Parallel()
	def, diags := agent.Load("account.yaml", []byte(accountAgent))
	if diags.HasErrors() {
		t.Fatalf("load agent: %v", diags)
	}
	defs, err := agent.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, sim.Options{Seed: 1, Agents: append(defs, def)})
	fsys := fstest.MapFS{
		"meta.yaml": {Data: []byte(`suite: Metadata
agent: account
vars:
  cid: C-1042
scenarios:
  - name: nested metadata
    turns:
      - say: my account
        metadata:
          customer_id: ${cid}
          profile: {tier: gold, tags: [a, "${cid}"]}
          n: 3
        expect:
          response: "Customer C-1042 is gold."
          state: {customer: C-1042, tier: gold}
      - say: and now
        expect:
          response: "Customer  is ."
`)},
		"meta.feature": {Data: []byte(`@agent:account
Feature: Metadata
  Scenario: table
    When the user says "my account" with the metadata:
      | key         | value |
      | customer_id | C-7   |
    Then the agent says "Customer C-7 is ."
    And the state includes:
      | customer | C-7 |
    When the user says "again"
    Then the agent says "Customer  is ."
`)},
	}
	suites, ds := scenario.Load(fsys, []string{"meta.yaml", "meta.feature"})
	if len(ds) > 0 {
		// What lint says: the examples of the docs read clean.
		t.Fatalf("load: %v", ds)
	}
	opts := e.opts()
	opts.DefaultAgent = ""
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Files); n != 2 {
		t.Fatalf("%d files, want 2", n)
	}
	for _, f := range res.Files {
		for _, c := range f.Cases {
			if c.Status != result.Passed {
				t.Errorf("%s %s: %s%s", f.Path, c.Name, c.Status, describe(c))
			}
		}
	}
}

// TestTurnMetadataLoadErrors: metadata: is a turn's, with text keys
// (below the top level; a top-level one decodes as text); the
// session's creation takes none, so start: and the scenario refuse it at
// the key; a ${name} of a value is checked as a say's is.
func TestTurnMetadataLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, src, want string
	}{
		{"in start", "s.yaml", "agent: a\nstart:\n  metadata: {a: b}\nscenarios:\n  - name: n\n    turns: [{say: hi}]\n",
			`s.yaml:3:3: unknown key "metadata" in start`},
		{"in scenario", "s.yaml", "agent: a\nscenarios:\n  - name: n\n    metadata: {a: b}\n    turns: [{say: hi}]\n",
			`s.yaml:4:5: unknown key "metadata" in scenario`},
		{"not a mapping", "s.yaml", "agent: a\nscenarios:\n  - name: n\n    turns:\n      - say: hi\n        metadata: [a]\n",
			`s.yaml:6:19: metadata must be a mapping, not a list`},
		{"nested key not text", "s.yaml", "agent: a\nscenarios:\n  - name: n\n    turns:\n      - say: hi\n        metadata: {a: {1: x}}\n",
			`s.yaml:6:24: metadata: key 1 is not text`},
		{"unknown name", "s.yaml", "agent: a\nscenarios:\n  - name: n\n    turns:\n      - say: hi\n        metadata: {a: [\"${nope}\"]}\n",
			`s.yaml:6:25: unknown variable ${nope}`},
		{"feature unknown name", "s.feature", "@agent:a\nFeature: f\n  Scenario: s\n    When the user says \"hi\" with the metadata:\n      | a | ${nope} |\n",
			`s.feature:5:13: unknown variable ${nope}`},
		{"feature key twice", "s.feature", "@agent:a\nFeature: f\n  Scenario: s\n    When the user says \"hi\" with the metadata:\n      | a | x |\n      | a | y |\n",
			`s.feature:6:9: step "When the user says \"hi\" with the metadata:": metadata key "a" is written twice`},
		{"feature empty key", "s.feature", "@agent:a\nFeature: f\n  Scenario: s\n    When the user says \"hi\" with the metadata:\n      |  | x |\n",
			`metadata key is empty`},
		// A top-level key decodes as text: JSON can send it.
		{"top-level number key", "s.yaml", "agent: a\nscenarios:\n  - name: n\n    turns:\n      - say: hi\n        metadata: {1: x, a: {\"2\": y}}\n        expect: {response: hi}\n", ""},
		{"merge key inside", "s.yaml", "agent: a\nx-tier: &tier {tier: gold}\nscenarios:\n  - name: n\n    turns:\n      - say: hi\n        metadata: {profile: {<<: *tier, id: 1}}\n        expect: {response: hi}\n", ""},
		{"feature reference in key", "s.feature", "@agent:a\nFeature: f\n  Scenario: s\n    When the user says \"hi\" with the metadata:\n      | ${k} | x |\n",
			`metadata key "${k}": ${...} is not expanded in a key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := scenario.Load(fstest.MapFS{tc.file: {Data: []byte(tc.src)}}, []string{tc.file})
			got := fmt.Sprint(ds)
			if tc.want == "" {
				if len(ds) > 0 {
					t.Errorf("diagnostics:\n%s\nwant none", got)
				}
				return
			}
			if !ds.HasErrors() || !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant one with %s", got, tc.want)
			}
		})
	}
}
