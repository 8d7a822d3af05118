package scenario

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/steps"
)

// stepsOf returns the steps of a kind of a scenario's program, in order.
func stepsOf(sc *Scenario, k steps.Kind) []*steps.Step {
	var out []*steps.Step
	for _, st := range sc.Steps {
		if st.Kind == k {
			out = append(out, st)
		}
	}
	return out
}

// stepOf returns the first step of a kind, or nil.
func stepOf(sc *Scenario, k steps.Kind) *steps.Step {
	if all := stepsOf(sc, k); len(all) > 0 {
		return all[0]
	}
	return nil
}

// asWritten expands nothing: the checks as the loader built them.
func asWritten(s string) (string, error) { return s, nil }

// expectOf builds the checks of a Check step as written.
func expectOf(st *steps.Step) *assert.Expect {
	if st == nil || st.Expect == nil {
		return nil
	}
	e, err := st.Expect(asWritten)
	if err != nil {
		panic(err)
	}
	return e
}

// confirmOf builds the checks of the scenario's Confirm step, or nil.
func confirmOf(sc *Scenario) *assert.Confirm {
	st := stepOf(sc, steps.Confirm)
	if st == nil {
		return nil
	}
	c, err := st.Confirm(asWritten)
	if err != nil {
		panic(err)
	}
	return c
}
