package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/merge"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
)

const mergeUsage = `Usage: agenttest merge [flags] REPORT.json...

Combines the JSON reports of the shards of one run (agenttest run
--shard K/N --json FILE on N machines) into the result of the whole run:
every case with its verdict, in file order, the counts, statistics,
deployment evidence and node coverage computed again over all of them,
and the run's status. It prints the summary a single run would, writes
the reports asked for (every format run writes), and exits with the code
that run would have.

The JSON report of a run that was not sharded, given alone, is the whole
of its run: agenttest merge report.json --html report.html writes that
run's reports again, in any format.

The reports must be every shard of one selection (same paths, filters
and suite files) on one target, each once: reports of another selection
or target, a shard given twice or a shard missing are refused, naming
what differs (exit 2); so is a report whose shard no run deals (K
outside 1..N, N below 1: an edited report), as it is read, at the
member at fault. --force merges them anyway; the scenarios of a
missing shard have no verdict, so the merged run is then errored (exit 4)
unless a check failed. A report merged so records what --force overrode
(forced_merge in its JSON, kept when it is merged again), and agenttest
gate refuses it: it is the run of no one selection.

--cucumber reads the suite files the reports name, from the working
directory as the run did: each case's scenario must still be where the
report says (exit 2 otherwise).

Exit codes: as agenttest run (0 passed, 1 a check failed, 4 errors only,
5 nothing tested, 130 a shard, or the run, was interrupted), and 2 for
bad usage, a file that is not a JSON report, or reports that are not the
shards of one run.
`

// mergeOptions are the flags of `agenttest merge`.
type mergeOptions struct {
	junit, json, html string
	force             bool
	allowEmpty        bool
	verbose, noColor  bool
	// outputs: --cucumber, --github, --coverage-from. --cucumber is
	// registered here, without the environment variable run reads, like
	// merge's other report files.
	outputs
}

// mergeFlags registers merge's flags on a new flag set, parsing nothing
// (see commandFlags).
func mergeFlags(st *State, o *mergeOptions) *flags {
	f := newFlags(st, "merge", mergeUsage)
	f.fileVar(&o.junit, "junit", "", "write the merged JUnit XML report to `FILE`", withoutReport)
	f.fileVar(&o.json, "json", "", "write the merged JSON report to `FILE`", withoutReport)
	f.fileVar(&o.html, "html", "", "write the merged HTML report to `FILE`", withoutReport)
	f.fileVar(&o.cucumber, "cucumber", "", "write the merged Cucumber Messages (NDJSON) to `FILE`, for Cucumber's report tools (reads the suite files the reports name)", withoutReport)
	f.boolVar(&o.force, "force", "", "merge reports that are not the complete shards of one selection on one target")
	f.boolVar(&o.allowEmpty, "allow-empty", "AGENTTEST_ALLOW_EMPTY", "exit 0 instead of 5 when nothing was tested")
	f.boolVar(&o.verbose, "verbose", "", "also show the transcripts of passing scenarios")
	f.alias("v", "verbose", &o.verbose)
	f.boolVar(&o.noColor, "no-color", "", "never colour the output (NO_COLOR in the environment does the same)")
	o.outputs.register(f, false)
	return f
}

func cmdMerge(_ context.Context, st *State, args []string) error {
	o := &mergeOptions{}
	f := mergeFlags(st, o)
	paths, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	o.outputs.parsed(f)
	defer o.outputs.guardCommands(st)()
	problems := append([]string(nil), f.problems...)
	if len(paths) == 0 {
		problems = append(problems, "name the JSON reports of the shards (agenttest run --shard K/N --json FILE)")
	}
	files := map[string]string{"--junit": o.junit, "--json": o.json, "--html": o.html, "--cucumber": o.cucumber}
	problems = append(problems, sameReportFile(files)...)
	usage := len(problems) // the rest are the files' own
	var inputs []merge.Input
	u := coverage.Universe{}
	// merge has no target: the workspace's keys (the environment's, and
	// those in the variables agenttest.yaml names) are those it masks,
	// in the reports as they are read, before anything is written or
	// cut.
	red := workspaceKeys(st, "")
	for _, p := range paths {
		rep, err := readMaskedReport(st, p, red)
		if err != nil {
			problems = append(problems, inFile(p, err)) // masked as merge ends: maskMessage
			continue
		}
		inputs = append(inputs, merge.Input{Name: p, Result: rep.Result})
		// The universe each shard measured its coverage against (the
		// simulator's definitions survive in the reports' sections).
		u.Merge(coverage.FromReport(rep.Coverage))
	}
	if usage > 0 {
		return usageProblems("merge", problems...)
	}
	if len(problems) > 0 {
		return fileProblems("merge", problems...)
	}
	res, bad := merge.Shards(inputs, merge.Options{Force: o.force})
	if len(bad) > 0 {
		if !o.force {
			bad = append(bad, "merge them anyway with --force")
		}
		return fileProblems("merge", bad...)
	}
	if err := o.outputs.readCoverageFrom(st, "merge", red); err != nil {
		return err
	}
	o.outputs.universe.Merge(u)
	for _, in := range inputs {
		o.outputs.universe.Merge(coverage.Observed(in.Result))
	}
	if err := o.outputs.readDocsOf(st, res, "merge"); err != nil {
		return err
	}
	var reads []input
	for _, p := range paths {
		reads = append(reads, input{"merge", p})
	}
	for _, p := range o.coverageFrom {
		reads = append(reads, input{"--coverage-from", p})
	}
	if err := prepareFiles(st, "merge", files, reads...); err != nil {
		return err
	}

	human := report.NewHuman(st.Stdout, report.HumanOptions{Color: useColor(st, o.noColor), Verbose: o.verbose, Now: st.Now})
	replay(human, res)
	if res.Stop != nil && res.Stop.Kind == merge.StopMissingShards {
		fmt.Fprintf(st.Stderr, "agenttest: merge: %s\n", res.Stop.Cause)
	}
	for _, f := range res.ForcedMerge {
		fmt.Fprintf(st.Stderr, "agenttest: merge: merged with --force: %s (agenttest gate refuses the merged report)\n", f)
	}
	return concludeResult(st, human, res, reportFiles{junit: o.junit, json: o.json, html: o.html}, &o.outputs, o.allowEmpty)
}

// replay feeds a finished result to a progress view, as the runner would
// have case by case: the console summary of a run that ran elsewhere.
func replay(v result.Observer, res *result.Result) {
	var cases []*result.Case
	for _, c := range res.Scenarios() {
		cases = append(cases, c)
	}
	target := res.Target
	target.Envs = result.CountEnvs(cases)
	v.RunStarted(len(cases), target)
	for _, f := range res.Files {
		for _, c := range f.Cases {
			v.CaseFinished(f, c)
		}
	}
	v.RunFinished(res)
}
