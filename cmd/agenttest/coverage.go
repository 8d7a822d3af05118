package main

import (
	"context"
	"errors"

	"github.com/agenttest/agenttest/internal/coverage"
)

const coverageUsage = `Usage: agenttest coverage [flags] REPORT.json...

Prints the node coverage of the runs of JSON reports (agenttest run --json
FILE), taken together: per agent, the nodes its conversations visited
(from the node traces of every turn of every attempt), the transitions
from node to node they took, the turns that reached each, and the nodes
never visited.

Every node means: for an agent of the embedded simulator, the nodes of
its definition (recorded in the reports' coverage sections); for a real
platform, which does not list an agent's nodes, every node seen in the
reports given. Give earlier reports with --coverage-from to see what the
latest run stopped reaching: their nodes count as nodes of the agent,
their visits do not.

Exit codes: 0 printed, 2 bad usage or a file that is not a JSON report.
`

// coverageFlags registers coverage's flags on a new flag set, parsing
// nothing (see commandFlags).
func coverageFlags(st *State, asJSON *bool, o *outputs) *flags {
	f := newFlags(st, "coverage", coverageUsage)
	f.boolVar(asJSON, "json", "", "print the coverage as JSON (schema "+coverage.SchemaV1+")")
	f.listVar(&o.coverageFrom, "coverage-from", "AGENTTEST_COVERAGE_FROM", "measure against the nodes seen in earlier JSON `REPORTS` too, without counting their visits (repeat the flag or separate with commas)")
	return f
}

func cmdCoverage(_ context.Context, st *State, args []string) error {
	var asJSON bool
	var o outputs
	f := coverageFlags(st, &asJSON, &o)
	paths, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	problems := append([]string(nil), f.problems...)
	if len(paths) == 0 {
		problems = append(problems, "name at least one JSON report")
	}
	usage := len(problems) // the rest are the files' own
	// One report in memory at a time: the reports were all held
	// together, and five nightly reports of 20,000 scenarios (82 MB
	// each) peaked at 1.3 GB. What one leaves is collected before the
	// next is read, so the heap does not grow to hold two.
	u := coverage.Universe{}
	tally := coverage.NewTally()
	// A report agenttest wrote holds no key, but one edited, or written
	// elsewhere, may: in a node's or an agent's name, which the coverage
	// prints. The workspace's keys are masked in what is read, as merge
	// and history mask them (and in the error the command ends with, a
	// problem's quote of the file: maskMessage).
	red := workspaceKeys(st, "")
	for i, p := range paths {
		rep, err := readMaskedReport(st, p, red)
		if err != nil {
			problems = append(problems, inFile(p, err))
			continue
		}
		u.Merge(coverage.FromReport(rep.Coverage))
		u.Merge(coverage.Observed(rep.Result))
		tally.Add(rep.Result)
		if rep = nil; i < len(paths)-1 && st.CollectGarbage != nil {
			st.CollectGarbage()
		}
	}
	if usage > 0 {
		return usageProblems("coverage", problems...)
	}
	if len(problems) > 0 {
		return fileProblems("coverage", problems...)
	}
	if err := o.readCoverageFrom(st, "coverage", red); err != nil {
		return err
	}
	u.Merge(o.universe)
	rep := tally.Report(u)
	// A reader of the console that went away (| head) has read what it
	// wanted: no failure of the command.
	if asJSON {
		return consoleErr(0, coverage.WriteJSON(st.Stdout, rep))
	}
	return consoleErr(0, coverage.WriteText(st.Stdout, rep))
}
