package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/steps"
)

// servedDefinitions finds the definition that serves each scenario on the
// embedded simulator: its agent's (or the target's), at the version its
// environment (or the target's) deploys. nil when the simulator serves
// no such agent.
type servedDefinitions struct {
	byID                     map[string]*agent.Definition
	defaultAgent, defaultEnv string
}

func newServedDefinitions(defs []*agent.Definition, defaultAgent, defaultEnv string) servedDefinitions {
	byID := make(map[string]*agent.Definition, len(defs))
	for _, d := range defs {
		byID[d.ID] = d
	}
	return servedDefinitions{byID: byID, defaultAgent: defaultAgent, defaultEnv: defaultEnv}
}

func (s servedDefinitions) of(sc *scenario.Scenario) (id string, d *agent.Definition) {
	id, env := sc.Agent, sc.Env
	if id == "" {
		id = s.defaultAgent
	}
	if env == "" {
		env = s.defaultEnv
	}
	d = s.byID[id]
	if d == nil {
		return id, nil
	}
	if v, ok := d.AtVersion(d.Deployed(env)); ok {
		d = v
	}
	return id, d
}

// unknownNodes warns, before a run on the embedded simulator, of each node
// name that a selected scenario's checks expect (node:, trace:, and the
// feature steps that build them) and that the definition serving its
// agent does not have: the simulator plays the designer's own definitions
// (--sim-agents), so a misspelt node is known before any call. Such a
// check fails whatever the agent does, and an exclusion (trace: excludes,
// not:) passes whatever it does, a check that can never fail. Names built
// with ${...} are left to the run, and so are skipped scenarios. One
// warning per place and name.
func unknownNodes(plan []*scenario.Suite, served servedDefinitions) diag.Diagnostics {
	var ds diag.Diagnostics
	type seenKey struct {
		pos  diag.Pos
		name string
	}
	seen := map[seenKey]bool{}
	keep := func(s string) (string, error) { return s, nil }
	for _, s := range plan {
		for _, sc := range s.Scenarios {
			id, d := served.of(sc)
			if d == nil || sc.Skip != "" {
				// A skipped scenario checks nothing: its node names
				// may wait for the flow it waits for.
				continue
			}
			nodes := d.NodeNames()
			warn := func(pos diag.Pos, name string, never bool, fold bool) {
				if strings.Contains(name, "${") || slices.ContainsFunc(nodes, func(n string) bool { return n == name || fold && strings.EqualFold(n, name) }) {
					return
				}
				k := seenKey{pos, name}
				if seen[k] {
					return
				}
				seen[k] = true
				what := "so the check fails whatever the agent does"
				if never {
					what = "so this exclusion passes whatever the agent does"
				}
				ds = ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: pos,
					Message: fmt.Sprintf("node %q is not a node of agent %q as the embedded simulator serves it, %s", name, id, what),
					Hint:    diag.DidYouMean(name, nodes)})
			}
			for _, st := range sc.Steps {
				if st.Kind != steps.Check || st.Expect == nil {
					continue
				}
				exp, err := st.Expect(keep)
				if err != nil {
					continue
				}
				if exp.Node != nil {
					nodeNames(exp.Node, false, false, warn)
				}
				if t := exp.Trace; t != nil {
					for _, part := range []struct {
						key   string
						names []string
					}{{"includes", t.Includes}, {"excludes", t.Excludes}, {"sequence", t.Sequence}, {"equals", t.Equals}} {
						for i, n := range part.names {
							pos := t.Parts.ItemPos(part.key, i)
							if pos.IsZero() {
								pos = t.Pos
							}
							warn(pos, n, part.key == "excludes", false)
						}
					}
				}
			}
		}
	}
	return ds
}

// nodeNames reports to warn the node names a matcher of the current node
// compares with: its exact values and items, in its any, all and not too
// (negated: a name under not is excluded).
func nodeNames(t *assert.Text, negated, fold bool, warn func(pos diag.Pos, name string, never, fold bool)) {
	fold = (fold || t.IgnoreCase) && !t.MatchCase
	for _, v := range []*string{t.Exact, t.Equals} {
		if v != nil {
			warn(t.Pos, strings.TrimSpace(*v), negated, fold)
		}
	}
	for _, v := range t.OneOf {
		warn(t.Pos, strings.TrimSpace(v), negated, fold)
	}
	for _, sub := range slices.Concat(t.Any, t.All) {
		nodeNames(sub, negated, fold, warn)
	}
	if t.Not != nil {
		nodeNames(t.Not, !negated, fold, warn)
	}
}
