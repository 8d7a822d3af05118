package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

const listUsage = `Usage: agenttest list [flags] [PATH...]

Lists the scenarios under each PATH (default ".") that a run with the same
--tags and --name would run, one per line:

  file:line  name  @tag @tag

Nothing is called. Invalid suite files are reported as by lint (exit 2).
`

// parseSelection reads --tags and --name into the one Selection run and
// list use, returning every problem.
func parseSelection(tags, name string) (scenario.Selection, []string) {
	var sel scenario.Selection
	var problems []string
	if tags != "" {
		expr, err := scenario.ParseTagExpr(tags)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--tags %q: %v", tags, err))
		} else {
			sel.Tags = &expr
		}
	}
	if name != "" {
		re, err := regexp.Compile(name)
		if err != nil {
			problems = append(problems, fmt.Sprintf("--name %q is not a regular expression: %v", name, err))
		} else {
			sel.Name = re
		}
	}
	return sel, problems
}

func cmdList(_ context.Context, st *State, args []string) error {
	var tags, name string
	var verbose bool
	f := newFlags(st, "list", listUsage)
	f.stringVar(&tags, "tags", "AGENTTEST_TAGS", "", "list scenarios whose tags match `EXPR`, e.g. '@smoke && ~@slow'")
	f.stringVar(&name, "name", "AGENTTEST_NAME", "", "list scenarios whose name matches `REGEX`")
	f.boolVar(&verbose, "verbose", "", "also list, on stderr, the YAML files passed over as not suites")
	f.alias("v", "verbose", &verbose)
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	paths := suitePaths(pos)
	problems := append([]string(nil), f.problems...)
	sel, bad := parseSelection(tags, name)
	problems = append(problems, bad...)
	if len(problems) > 0 {
		return usageProblems("list", problems...)
	}
	suites, skipped, err := loadSuites(st, st.Stderr, paths, false)
	if err != nil {
		return err
	}
	if verbose {
		writeSkipped(st.Stderr, skipped)
	}
	var b strings.Builder
	for _, file := range runner.Plan(suites, runner.Options{Select: sel}) {
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
