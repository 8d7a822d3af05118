package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/scenario"
)

const lintUsage = `Usage: agenttest lint [flags] [PATH...]

Checks every suite file under each PATH (default ".") and the config file
(--config, else ./agenttest.yaml when present) without calling anything.
Every problem of every file is printed as file:line:col: message, with the
offending line (at most 50 per file, then how many more). A suite may not
read a variable that holds an API key (${env:AGENTTEST_BUILD_KEY}, or one
a key setting of the config file names). Exit 2 when there is any error;
5 when there is nothing to test (no scenario under the paths), as for
'agenttest run' (--allow-empty makes it 0); 0 otherwise (warnings do not
fail).
`

func cmdLint(_ context.Context, st *State, args []string) error {
	var cfgName string
	var noColor, allowEmpty bool
	f := newFlags(st, "lint", lintUsage)
	f.stringVar(&cfgName, "config", "AGENTTEST_CONFIG", "", "config `FILE` (default: ./agenttest.yaml when present)")
	f.boolVar(&noColor, "no-color", "", "never colour the output")
	f.boolVar(&allowEmpty, "allow-empty", "AGENTTEST_ALLOW_EMPTY", "exit 0 instead of 5 when there is no scenario to test")
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	paths, problems := suitePaths(st, pos)
	problems = append(problems, f.problems...)
	if len(problems) > 0 {
		return usageProblems("lint", problems...)
	}

	var diags diag.Diagnostics
	var cfg *config.File
	explicit := cfgName != ""
	if !explicit {
		cfgName = config.DefaultPath
	}
	p, err := fsPath(st, cfgName)
	if err != nil {
		return usageErrorf("--config: %v", err)
	}
	src, err := fs.ReadFile(st.FS, p)
	switch {
	case err == nil:
		var ds diag.Diagnostics
		cfg, ds = config.Load(p, src)
		diags = append(diags, ds...)
	case explicit || !errors.Is(err, fs.ErrNotExist):
		return usageErrorf("read config file %s: %v", cfgName, err)
	}

	suites, ds := scenario.Load(st.FS, paths)
	diags = append(diags, ds...)
	diags = append(diags, keyReferences(suites, cfg)...)
	diags.Sort()
	color := useColor(st, noColor)
	if len(diags) > 0 {
		report.WriteDiagnostics(st.Stdout, diags, sources{st: st, cfg: cfg}.read, color)
	}
	if diags.HasErrors() {
		return reported(exitUsage)
	}
	// Lint takes no filter yet; it counts through the one selection, where
	// a filter of lint would apply.
	n := len(scenarios(scenario.Select(suites, scenario.Selection{})))
	if len(diags) == 0 {
		fmt.Fprintf(st.Stdout, "%d %s, %d %s: no problems\n", len(suites), plural(len(suites), "suite file", "suite files"), n, plural(n, "scenario", "scenarios"))
	}
	if n == 0 && !allowEmpty {
		// What run would say: a gate never goes green on nothing.
		return &exitError{code: exitEmpty, msg: fmt.Sprintf("nothing to test: no scenario under %s", strings.Join(paths, ", "))}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
