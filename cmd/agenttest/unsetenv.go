package main

import (
	"fmt"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
)

// unsetEnv refuses, before anything is called, the ${env:NAME} references
// the selected scenarios would expand while NAME is unset, once for each
// place: met in the run, each would error its scenario (exit 4) after it
// opened a session, and a CI job that forgot a secret spent its quota to
// learn it. A reference the run would not expand (an unselected or
// skipped scenario, another examples row, a var of a scenario that
// expands no ${...}) is no reason to refuse: Scenario.EnvRefs lists only
// those it would. A variable set to "" is set.
func unsetEnv(suites []*scenario.Suite, lookup func(string) (string, bool)) diag.Diagnostics {
	var ds diag.Diagnostics
	index := map[scenario.EnvRef]int{}
	// users counts the scenarios that expand each reference, first names
	// the first of them.
	var users []int
	var first []string
	for _, sc := range scenarios(suites) {
		if sc.Skip != "" {
			continue
		}
		for _, ref := range sc.EnvRefs {
			if _, set := lookup(ref.Name); set {
				continue
			}
			if i, ok := index[ref]; ok {
				users[i]++
				continue
			}
			index[ref] = len(ds)
			users, first = append(users, 1), append(first, sc.Name)
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Pos: ref.Pos,
				Hint: fmt.Sprintf("set %s in the environment of agenttest run (export %s=..., or pass the secret to the CI job's env); a variable set to an empty value counts as set", ref.Name, ref.Name)})
		}
	}
	for ref, i := range index {
		who := fmt.Sprintf("scenario %q", first[i])
		if users[i] > 1 {
			who = fmt.Sprintf("%d selected scenarios (%q first)", users[i], first[i])
		}
		ds[i].Message = fmt.Sprintf("environment variable %s is not set (referenced as ${env:%s}): %s would expand it and error", ref.Name, ref.Name, who)
	}
	ds.Sort()
	return ds
}
