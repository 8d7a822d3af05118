package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/agenttest/agenttest/internal/diag"
)

const topUsage = `agenttest regression-tests conversational agents hosted on the agent platform.

Usage:
  agenttest <command> [flags] [arguments]

Commands:
  run      run the scenarios under PATH... against a target
           (with no target configured: the embedded simulator)
  lint     check suite files and agenttest.yaml without calling anything
  list     list the scenarios a run with the same paths and
           selection flags would run, calling nothing
  sim      serve the platform simulator
  steps    print the steps feature files may use, with examples
           (steps WORD...: only those containing every word)
  webhooks receive, verify and print the platform's webhook events
           (webhooks listen)
  history  per scenario across earlier JSON reports: runs, pass rate,
           verdict flips, what did worse in the newer reports, and
           what went from passing to failing
  coverage node coverage of JSON reports: per agent, the nodes and
           transitions visited and the nodes never visited
  merge    combine the JSON reports of the shards of a run (--shard K/N)
           into the reports and the exit code of the whole run; given
           one run's JSON report, write it again in other formats
  compare  how a candidate differs from a baseline (pre-release against
           live): regressed, fixed, changed, slower and faster scenarios
  gate     before a promotion: does a JSON report still vouch for the
           deployments active now (passed, fresh, same deployment)
  version  print the version
  help     show the help of a command

Run 'agenttest help <command>' for its flags. Configuration, targets and
environment variables: docs/configuration.md; gate and compare have exit
codes of their own (agenttest help gate, agenttest help compare).

Exit codes:
  0    every selected scenario passed (flaky counts as passed; a
       quarantined one never changes the code)
  1    at least one check failed: the agent broke an expectation
       (errors may also be present; an inconclusive statistical
       scenario counts as failed); or, with --gate-alerts, an alert
       rule fired, which the status names
  2    bad usage, configuration, suite files or report path (nothing run),
       or the platform refused a key or connector token, does not know the
       agent, or no Messaging API answers at messaging_url
  3    internal error, or a report that could not be written (a full
       disk)
  4    no check failed, but a case errored: the platform or the network
       kept the run from telling whether the agent is fine, or its
       scenario cannot be run as written (a configuration error, which
       the status line names: retrying will not help); or the
       deployment of an agent changed during the run
  5    nothing was tested: no scenario selected, or every selected one
       skipped (--allow-empty makes it 0); for steps WORD..., no step
       contains every word
  130  interrupted (SIGINT/SIGTERM); reports are still written
`

// commands are the subcommands, for did-you-mean.
var commands = []string{"run", "lint", "list", "sim", "steps", "webhooks", "history", "coverage", "merge", "compare", "gate", "version", "help"}

// run is the whole program: it dispatches a subcommand and returns an error
// carrying the exit code. Interrupts on st.Signals cancel ctx once; a
// second one exits at once through st.Exit.
func run(ctx context.Context, st *State) (err error) {
	defer func() { err = guardMessage(st, maskMessage(st, err)) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	what := "stopping"
	if len(st.Args) > 0 && st.Args[0] == "run" {
		what = "stopping the run and writing reports"
	}
	intr := watchInterrupts(st, cancel, what)
	defer intr.stop()

	if len(st.Args) == 0 {
		io.WriteString(st.Stderr, topUsage)
		return &exitError{code: exitUsage, msg: "no command given", hint: helpHint("")}
	}
	cmd, args := st.Args[0], st.Args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, st, args)
	case "lint":
		return cmdLint(ctx, st, args)
	case "list":
		return cmdList(ctx, st, args)
	case "sim":
		return runSim(ctx, st, args)
	case "steps":
		return cmdSteps(ctx, st, args)
	case "webhooks":
		return cmdWebhooks(ctx, st, args)
	case "history":
		return cmdHistory(ctx, st, args)
	case "coverage":
		return cmdCoverage(ctx, st, args)
	case "merge":
		return cmdMerge(ctx, st, args)
	case "gate":
		return cmdGate(ctx, st, args)
	case "compare":
		return cmdCompare(ctx, st, args)
	case "version", "--version", "-version":
		return cmdVersion(ctx, st, args)
	case "help", "-h", "-help", "--help":
		return cmdHelp(ctx, st, args)
	default:
		if strings.HasPrefix(cmd, "-") && len(cmd) > 1 {
			return flagBeforeCommand(cmd, args)
		}
		msg := fmt.Sprintf("unknown command %q", cmd)
		if s := diag.Suggest(cmd, commands); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return &exitError{code: exitUsage, msg: msg, hint: helpHint("")}
	}
}

// flagBeforeCommand is the error of a flag written before the command
// (agenttest --sim run suites): flags belong to a command and follow it,
// so it says where to move the flag rather than taking it for a
// misspelt command (--sim is not the command sim).
func flagBeforeCommand(flag string, args []string) error {
	name, _, _ := strings.Cut(flag, "=")
	for _, a := range args {
		if slices.Contains(commands, a) {
			return &exitError{code: exitUsage,
				msg:  fmt.Sprintf("%s comes before the command: flags follow it (agenttest %s %s ...)", name, a, flag),
				hint: helpHint(a)}
		}
	}
	return &exitError{code: exitUsage,
		msg:  fmt.Sprintf("%s is a flag, not a command: flags follow the command (agenttest COMMAND %s ...)", name, flag),
		hint: helpHint("")}
}

func cmdHelp(ctx context.Context, st *State, args []string) error {
	if len(args) == 0 {
		io.WriteString(st.Stdout, topUsage)
		return nil
	}
	switch args[0] {
	case "run", "lint", "list", "sim", "steps", "webhooks", "history", "coverage", "merge", "gate", "compare", "version":
		err := run(ctx, &State{Args: []string{args[0], "--help"}, Env: map[string]string{}, Stdout: st.Stdout, Stderr: st.Stderr, Dir: st.Dir, FS: st.FS, Now: st.Now})
		return err
	case "help", "-h", "-help", "--help":
		io.WriteString(st.Stdout, topUsage)
		return nil
	}
	msg := fmt.Sprintf("help: unknown command %q", args[0])
	if s := diag.Suggest(args[0], commands); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return &exitError{code: exitUsage, msg: msg, hint: helpHint("")}
}

const versionUsage = `Usage: agenttest version [--json]

Prints the version of agenttest and of the Go toolchain that built it.
With --json, one JSON object for scripts that record what tested an
agent: {"version": "v1.2.0", "go": "go1.25.0", "revision": "..."},
revision (the commit built, when the build recorded one) left out
when unknown.
`

// versionInfo is what version prints; its JSON keys are a contract.
type versionInfo struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
}

// versionFlags registers version's flags on a new flag set, parsing
// nothing (see commandFlags).
func versionFlags(st *State, asJSON *bool) *flags {
	f := newFlags(st, "version", versionUsage)
	f.boolVar(asJSON, "json", "", "print the version as one JSON object")
	return f
}

// cmdVersion prints the version. Like every other command it refuses a
// flag it does not have and an argument, rather than print the version
// to a script that asked for something else.
func cmdVersion(_ context.Context, st *State, args []string) error {
	var asJSON bool
	pos, err := versionFlags(st, &asJSON).parse(args)
	switch {
	case errors.Is(err, errHelp):
		return nil
	case err != nil:
		return err
	case len(pos) > 0:
		return usageProblems("version", "takes no arguments")
	}
	if asJSON {
		b, err := json.Marshal(buildVersion())
		if err != nil {
			return fmt.Errorf("version: %w", err)
		}
		fmt.Fprintf(st.Stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(st.Stdout, "agenttest %s\n", version())
	return nil
}

// version is the version line's words after "agenttest": "(devel)
// go1.25.0".
func version() string {
	v := buildVersion()
	return v.Version + " " + v.Go
}

// buildVersion is the module version stamped by the Go toolchain,
// "(devel)" in a work tree, with the toolchain and the commit built.
func buildVersion() versionInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versionInfo{Version: "(unknown)", Go: runtime.Version()}
	}
	return versionOf(info)
}

// versionOf reads what version prints from the build's information.
func versionOf(info *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: cmp.Or(info.Main.Version, "(devel)"), Go: info.GoVersion}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v.Revision = s.Value
		}
	}
	return v
}

// interrupts tracks SIGINT/SIGTERM for one run: the first cancels the
// context (the runner stops, reports are still written, exit 130); the
// second exits at once.
type interrupts struct {
	fired atomic.Bool
	done  chan struct{}
}

func watchInterrupts(st *State, cancel context.CancelFunc, what string) *interrupts {
	in := &interrupts{done: make(chan struct{})}
	if st.Signals == nil {
		return in
	}
	go func() {
		for {
			// An interrupt already pending wins over the end of the run:
			// a second one that came while the first was being handled
			// must exit at once, not be lost because the run finished
			// first (select picks at random between ready cases).
			select {
			case <-st.Signals:
			default:
				select {
				case <-in.done:
					return
				case <-st.Signals:
				}
			}
			if in.fired.CompareAndSwap(false, true) {
				fmt.Fprintf(st.Stderr, "agenttest: interrupted: %s (interrupt again to exit at once)\n", what)
				cancel()
				continue
			}
			fmt.Fprintln(st.Stderr, "agenttest: interrupted again: exiting without waiting")
			if st.Exit != nil {
				st.Exit(exitInterrupted)
			}
			return
		}
	}()
	return in
}

func (in *interrupts) stop() { close(in.done) }
