package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

const listUsage = `Usage: agenttest list [flags] [PATH | FILE:LINE ...]

Lists the scenarios under each PATH (default ".") that a run with the same
PATHs (FILE:LINE included), --tags, --name, --rerun-failed and --shard
would run, one per line:

  file:line  name  @tag @tag

Nothing is called. Invalid suite files are reported as by lint (exit 2).
`

func cmdList(_ context.Context, st *State, args []string) error {
	var s selection
	var verbose bool
	f := newFlags(st, "list", listUsage)
	s.register(f, "list")
	s.registerShard(f, "list")
	f.boolVar(&verbose, "verbose", "", "also list, on stderr, the YAML files passed over as not suites")
	f.alias("v", "verbose", &verbose)
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	paths, problems := s.args(st, pos)
	problems = append(problems, f.problems...)
	problems = append(problems, s.validate()...)
	if len(problems) > 0 {
		return usageProblems("list", problems...)
	}
	suites, skipped, err := s.load(st, st.Stderr, paths, len(pos) > 0)
	if err != nil {
		return err
	}
	s.printNotes(st.Stderr)
	if verbose {
		writeSkipped(st.Stderr, skipped)
	}
	var b strings.Builder
	for _, file := range runner.Plan(s.deal(scenario.Select(suites, s.sel)), runner.Options{}) {
		for _, c := range file.Cases {
			fmt.Fprintf(&b, "%s:%d  %s", c.Pos.File, c.Pos.Line, c.Name)
			if len(c.Tags) > 0 {
				b.WriteString("  @" + strings.Join(c.Tags, " @"))
			}
			b.WriteString("\n")
		}
	}
	_, err = fmt.Fprint(st.Stdout, b.String())
	return err
}
