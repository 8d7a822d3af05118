package main

import (
	"context"
	"errors"

	"github.com/agenttest/agenttest/internal/scenario"
)

const stepsUsage = `Usage: agenttest steps

Prints the steps feature files may use, grouped, with one example each and
what it does. The list is generated from the registered step definitions,
so it is always the one run and lint use.
`

func cmdSteps(_ context.Context, st *State, args []string) error {
	f := newFlags(st, "steps", stepsUsage)
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageProblems("steps", "takes no arguments")
	}
	return scenario.Steps().Write(st.Stdout)
}
