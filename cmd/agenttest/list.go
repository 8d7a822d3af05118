package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

const listUsage = `Usage: agenttest list [flags] [PATH | FILE:LINE ...]

Lists the scenarios under each PATH (default ".") that a run with the same
PATHs (FILE:LINE included), --tags, --name, --rerun-failed and --shard
would run, one per line:

  file:line  name  @tag @tag

Nothing is called. Invalid suite files are reported as by lint (exit 2).
When no scenario is selected, it says why on stderr and exits 5, as run
would (--allow-empty makes it 0); a shard that the selection leaves
empty is not an error.
`

// listOptions are the flags of list.
type listOptions struct {
	selection
	verbose, allowEmpty bool
}

// listFlags registers list's flags on a new flag set, parsing nothing
// (see commandFlags).
func listFlags(st *State, o *listOptions) *flags {
	f := newFlags(st, "list", listUsage)
	o.register(f, "list")
	o.registerShard(f, "list")
	f.boolVar(&o.verbose, "verbose", "", "also list, on stderr, the YAML files passed over as not suites")
	f.boolVar(&o.allowEmpty, "allow-empty", "AGENTTEST_ALLOW_EMPTY", "exit 0 instead of 5 when no scenario is selected")
	f.alias("v", "verbose", &o.verbose)
	return f
}

func cmdList(_ context.Context, st *State, args []string) error {
	o := &listOptions{}
	f := listFlags(st, o)
	s := &o.selection
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
		return f.attribute(usageProblems("list", problems...))
	}
	suites, skipped, err := s.load(st, keysConfig(st, ""), st.Stderr, paths, len(pos) > 0)
	if err != nil {
		return err
	}
	s.printNotes(st.Stderr)
	if o.verbose {
		writeSkipped(st.Stderr, skipped)
	}
	var b strings.Builder
	n := 0
	for _, file := range runner.Plan(s.deal(scenario.Select(suites, s.sel)), runner.Options{}) {
		n += len(file.Cases)
		for _, c := range file.Cases {
			// A name a suite chose stays on its line, and cannot drive
			// the terminal (escape.Line), as run shows it.
			fmt.Fprintf(&b, "%s:%d  %s", escape.Line(c.Pos.File), c.Pos.Line, escape.Line(c.Name))
			if len(c.Tags) > 0 {
				b.WriteString(escape.Line("  @" + strings.Join(c.Tags, " @")))
			}
			b.WriteString("\n")
		}
	}
	// A reader that went away (| head) does not change what the
	// selection is: the exit code still says whether it is empty.
	if err := consoleErr(fmt.Fprint(st.Stdout, b.String())); err != nil {
		return err
	}
	switch {
	case n > 0:
	case s.selected > 0:
		// The other shards list the selection, as run's would test it.
		fmt.Fprintf(st.Stderr, "agenttest: %s\n", s.emptyShard())
	default:
		// What run would say and do: a typo in a tag must not read as
		// an empty list that is fine.
		why := "nothing to list: " + s.emptyReason(suites, suitePaths(paths), len(pos) > 0)
		if !o.allowEmpty {
			return &exitError{code: exitEmpty, msg: why}
		}
		fmt.Fprintf(st.Stderr, "agenttest: %s\n", why)
	}
	return nil
}

// keysConfig is the config file named (a --config), else the one run
// would read (AGENTTEST_CONFIG, else ./agenttest.yaml when present), for
// the key variables it names only: list calls nothing, but refuses a
// --name, --tags or scenario name holding one of their keys, which it
// would print, as run does, and the commands that read reports mask
// them (workspaceKeys). A file that cannot be read or has errors is
// run's and lint's to report: the command learns what keys it can from
// it (none from one it cannot read), and goes on.
func keysConfig(st *State, name string) *config.File {
	cfg, _, _ := readConfig(st, cmp.Or(name, st.Getenv("AGENTTEST_CONFIG")))
	return cfg
}
