package main

import (
	"context"

	"github.com/agenttest/agenttest/internal/scenario"
)

const stepsUsage = `Usage: agenttest steps

Prints the steps feature files may use, grouped, with one example each and
what it does. The list is generated from the registered step definitions,
so it is always the one run and lint use.
`

func cmdSteps(_ context.Context, st *State, args []string) error {
	if ok, err := parseBare(st, "steps", stepsUsage, args); !ok {
		return err
	}
	// agenttest steps | head is no failure.
	return consoleErr(0, scenario.Steps().Write(st.Stdout))
}
