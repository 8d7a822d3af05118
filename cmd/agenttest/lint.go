package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
)

const lintUsage = `Usage: agenttest lint [flags] [PATH...]

Checks every suite file under each PATH (default ".") and the config file
(--config, else ./agenttest.yaml when present) without calling anything.
A PATH that names agenttest.yaml is checked as the config file. Every
problem of every file is printed as file:line:col: message, with the
offending line (at most 50 per file, then how many more). A suite may not
read a variable that holds an API key (${env:AGENTTEST_BUILD_KEY}, or one
a key setting of the config file names).

In a directory, a YAML file is a suite when its top level has scenarios:
(or a near miss of it) or only suite keys; a YAML file that does not parse
or is empty is an error. Other YAML files (CI jobs, agent definitions,
agenttest.yaml, even one that does not parse: lint reports it as the
config file) are passed over; -v lists them.

With --sim-agents PATH (AGENTTEST_SIM_AGENTS), the agent definitions a
run would serve on the embedded simulator, lint also warns of node names
the checks expect that the agent's definition lacks (node:, trace:, the
node steps of a feature), as such a run does. A scenario without agent:
is held to the definition when PATH holds only one.

Exit 2 when there is any error; 5 when there is nothing to test (no
scenario under the paths), as for 'agenttest run' (--allow-empty makes it
0); 0 otherwise (warnings do not fail).
`

// lintOptions are the flags of lint.
type lintOptions struct {
	config, simAgents            string
	noColor, allowEmpty, verbose bool
}

// lintFlags registers lint's flags on a new flag set, parsing nothing
// (see commandFlags).
func lintFlags(st *State, o *lintOptions) *flags {
	f := newFlags(st, "lint", lintUsage)
	f.fileVar(&o.config, "config", "AGENTTEST_CONFIG", "config `FILE` (default: ./agenttest.yaml when present)", withoutConfig)
	f.stringVar(&o.simAgents, "sim-agents", envSimAgents, "", "hold the node names of the checks to the agent definitions of `PATH`, a directory or one file")
	f.boolVar(&o.noColor, "no-color", "", "never colour the output")
	f.boolVar(&o.allowEmpty, "allow-empty", "AGENTTEST_ALLOW_EMPTY", "exit 0 instead of 5 when there is no scenario to test")
	f.boolVar(&o.verbose, "verbose", "", "also list the YAML files passed over as not suites")
	f.alias("v", "verbose", &o.verbose)
	return f
}

func cmdLint(_ context.Context, st *State, args []string) error {
	o := &lintOptions{}
	f := lintFlags(st, o)
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(f.problems) > 0 {
		return usageProblems("lint", f.problems...)
	}
	// A config file named as a PATH is linted as the config file.
	var configs, suiteArgs []string
	for _, a := range pos {
		if isConfigName(a) {
			configs = append(configs, argPath(a))
		} else {
			suiteArgs = append(suiteArgs, a)
		}
	}
	if o.config != "" || len(configs) == 0 {
		configs = append([]string{o.config}, configs...)
	}

	var diags diag.Diagnostics
	var cfg *config.File
	for _, name := range configs {
		c, ds, err := readConfig(st, name)
		if err != nil {
			return err
		}
		diags = append(diags, ds...)
		if cfg == nil {
			cfg = c
		}
	}
	var loaded scenario.Loaded
	onlyConfig := len(pos) > 0 && len(suiteArgs) == 0
	if !onlyConfig {
		loaded = scenario.LoadAll(st.FS, suitePaths(suiteArgs))
		oneFileEach(st, &loaded)
	}
	diags = append(diags, loaded.Diags...)
	if o.simAgents != "" && !onlyConfig {
		defs, err := loadSimAgents(st, "lint: --sim-agents", o.simAgents)
		if err != nil {
			return err
		}
		defaultAgent := ""
		if len(defs) == 1 {
			defaultAgent = defs[0].ID
		}
		diags = append(diags, unknownNodes(loaded.Suites, newServedDefinitions(defs, defaultAgent, runner.DefaultEnv))...)
	}
	diags = append(diags, keyReferences(loaded.Suites, cfg)...)
	diags = append(diags, keysInNames(st, loaded.Suites, cfg)...)
	if st.Now != nil {
		diags = append(diags, lapsedQuarantines(loaded.Suites, st.Now())...)
	}
	diags.Sort()
	if o.verbose {
		writeSkipped(st.Stdout, loaded.Skipped)
	}
	color := useColor(st, o.noColor)
	if len(diags) > 0 {
		sources{st: st, cfg: cfg}.write(st.Stdout, diags, color)
	}
	if diags.HasErrors() {
		return reported(exitUsage)
	}
	if onlyConfig {
		if len(diags) == 0 {
			fmt.Fprintf(st.Stdout, "%s: no problems\n", strings.Join(configs, ", "))
		}
		return nil
	}
	// Lint takes no filter; it counts through the one selection run
	// uses.
	suites := loaded.Suites
	n := scenario.Count(scenario.Select(suites, scenario.Selection{}))
	if len(diags) == 0 {
		fmt.Fprintf(st.Stdout, "%d %s, %d %s: no problems\n", len(suites), plural(len(suites), "suite file", "suite files"), n, plural(n, "scenario", "scenarios"))
	}
	if n == 0 && !o.allowEmpty {
		// What run would say, in its words: a gate never goes green on
		// nothing, and a file the loader passed over as no suite (no
		// scenarios: key) is the newcomer's usual cause.
		return &exitError{code: exitEmpty, msg: "nothing to test: " + (&selection{}).emptyReason(suites, suitePaths(suiteArgs), true)}
	}
	return nil
}

// isConfigName says whether a command-line path names a config file
// (agenttest.yaml or agenttest.yml, in any directory).
func isConfigName(p string) bool {
	switch path.Base(argPath(p)) {
	case "agenttest.yaml", "agenttest.yml":
		return true
	}
	return false
}

// writeSkipped lists the YAML files a walk passed over, for -v.
func writeSkipped(w io.Writer, skipped []scenario.Skipped) {
	var b strings.Builder
	for _, s := range skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.Path, s.Why)
	}
	io.WriteString(w, b.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
