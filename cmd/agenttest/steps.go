package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/scenario"
)

const stepsUsage = `Usage: agenttest steps [WORD...]

Prints the steps feature files may use, grouped, with one example each and
what it does. The list is generated from the registered step definitions,
so it is always the one run and lint use.

Given words (agenttest steps handoff), prints only the steps whose example,
description or group contains every word, ignoring case. Exit 5 when no
step does.
`

func cmdSteps(_ context.Context, st *State, args []string) error {
	words, err := newFlags(st, "steps", stepsUsage).parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// agenttest steps | head is no failure.
	n, err := scenario.Steps().WriteMatching(st.Stdout, words)
	if err := consoleErr(0, err); err != nil {
		return err
	}
	if n == 0 {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = fmt.Sprintf("%q", w)
		}
		return &exitError{code: exitEmpty, msg: fmt.Sprintf("steps: no step contains %s; run 'agenttest steps' for all of them", strings.Join(quoted, " and "))}
	}
	return nil
}
