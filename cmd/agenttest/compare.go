package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

const compareUsage = `Usage: agenttest compare --baseline SIDE --candidate SIDE [flags] [PATH...]

Shows how a candidate version of an agent differs from a baseline, for a
reviewer deciding a promotion: typically --baseline live --candidate
pre-release. Each SIDE is one of:

  ENV           an environment of the target (sandbox, pre-release, live):
                every selected scenario runs there, whatever env its suite
                names
  target:NAME   a target of agenttest.yaml, run as 'agenttest run --target
                NAME' would (its env, its keys; a suite's env: wins:
                warned of as in run, and refused for a live side that
                would test nothing in live)
  FILE.json     a JSON report of an earlier run (agenttest run --json); a
                baseline report of one shard (--shard), of a
                --rerun-failed run, of a merge --force, or of a run
                narrowed by --tags, --name or FILE:LINE other than this
                comparison's, is refused: it holds part of a selection

The sides that are not reports run the scenarios under PATH... (default
".", selected with --tags and --name) at the same time, in the same order
and with the same seed; a report side is cut to what they ran. Two
reports are compared whole: nothing runs, so PATH, --tags, --name and
--rerun-failed are refused. Cases are paired by file and name. Each pair
is one of:

  regressed   passed on the baseline, fails on the candidate
  fixed       failed on the baseline, passes on the candidate
  changed     the same verdict, but a reply, the node path, the handoff,
              the state written or the transcript's length differ (shown
              with a word diff of the replies and the path each side took)
  slower,     the same verdict and behaviour, but the median turn latency
  faster      moved by at least --latency-min-shift and
              --latency-min-ratio of the baseline's
  unchanged   none of these

A statistical scenario (repeat with a pass rate) compares its pass rates
with Fisher's exact test instead: a significantly lower rate regressed,
a higher one is fixed. Over all scenarios, Wilcoxon's signed-rank test of
the latency shifts says whether the candidate is slower or faster
overall. Scenarios that errored on a side are not compared.

The target of an ENV side is chosen as for run (--target, default_target,
AGENTTEST_* variables; with none, the embedded simulator). On the embedded
simulator each side gets a simulator of its own with the same seed, and
conversations are named alike on both sides, so that random draws (a
booking code) match, and alike from one comparison to the next: under
one --seed a comparison replays, each side drawing what 'agenttest run
--env' draws there. --sim-agents PATH serves your own agent definitions
there (each environment the version its definition gives it), to compare
versions of an agent before it is built. Comparing with live runs the
scenarios in live: like run, that needs --allow-live (or allow_live: true
on the target). Each side reads its deployments before and after, as run
does; a deployment that changes during a side's run errors the
comparison.

Each side runs its scenarios as run does: --parallel, --retries,
--turn-timeout and --confirm-timeout (or their keys in the config's run:
section) and the statistical flags apply to each, and what run warns of
before it starts (SMS probes of several agents through one
sms_connector_id, node names the agent served by the embedded simulator
lacks) is warned of for each side, once when both sides would say the
same. Each side's target gives its max_reply_bytes, rate and rate_wait.

With --rerun-failed REPORT the sides run only that report's failed and
errored cases, and those its run left unrun (interrupted or stopped
early); the comparison records it (rerun: {of, failed, unrun}) and
agenttest gate refuses it, as it refuses such a run's report.

--json FILE writes the comparison as JSON; --html FILE writes the
candidate's run as an HTML report (the one 'agenttest run --html' writes)
with the comparison as its last section (docs/reading-reports.md).

Exit codes:
  0    nothing regressed (with --fail-on-change: nothing changed either)
  1    a scenario regressed (or changed, with --fail-on-change); a
       quarantined scenario never fails the comparison
  2    bad usage, configuration, suite files, a side that is not an
       environment, a target or a JSON report, a baseline report of one
       shard, of a --rerun-failed run, of a merge --force or of a run
       narrowed by --tags, --name or FILE:LINE other than the
       comparison's, live without --allow-live, or the platform stopped
       a side as a configuration problem (a refused key or connector
       token, an unknown agent, no Messaging API at messaging_url)
  3    internal error, or a report that could not be written (a full
       disk)
  4    nothing regressed, but a scenario could not be compared (a side
       errored or stopped, or a side is the report of an interrupted
       run), or a deployment changed during a side's run
  5    nothing was compared: no scenario ran on both sides
  130  interrupted
`

// compareOptions are the flags of `agenttest compare`.
type compareOptions struct {
	baseline, candidate string
	target, config      string
	paths               []string
	pathsGiven          bool
	selection
	scheduling
	// confirmWait: --confirm-timeout, as for run.
	confirmWait
	seed           int64
	json           string
	html           string
	failOnChange   bool
	allowLive, sim bool
	// simAgents is the directory or file of the agent definitions each
	// side's embedded simulator serves (--sim-agents, which implies
	// --sim); simAgentsFrom says what gave it, as for run.
	simAgents, simAgentsFrom string
	verbose, noColor         bool
	minShift                 time.Duration
	minRatio                 float64
	statsOptions
	problems []string
	// flags are the parsed flags, for the config defaults.
	flags *flags
}

// compareFlags registers compare's flags on a new flag set, parsing
// nothing (see commandFlags).
func compareFlags(st *State, o *compareOptions) *flags {
	f := newFlags(st, "compare", compareUsage)
	f.stringVar(&o.baseline, "baseline", "AGENTTEST_BASELINE", "", "the baseline `SIDE`: an environment (live), target:NAME or a JSON report")
	f.stringVar(&o.candidate, "candidate", "AGENTTEST_CANDIDATE", "", "the candidate `SIDE`: an environment (pre-release), target:NAME or a JSON report")
	f.stringVar(&o.target, "target", "AGENTTEST_TARGET", "", "target `NAME` of the environment sides (default: the config's default_target)")
	f.fileVar(&o.config, "config", "AGENTTEST_CONFIG", "config `FILE` (default: ./agenttest.yaml when present)", withoutConfig)
	o.scheduling.register(f, "run at most `N` scenarios at once on each side")
	o.selection.register(f, "compare")
	o.confirmWait.register(f)
	f.fileVar(&o.json, "json", "AGENTTEST_COMPARE_JSON", "write the comparison as JSON ("+compare.SchemaV1+") to `FILE`", withoutReport)
	f.fileVar(&o.html, "html", "AGENTTEST_COMPARE_HTML", "write the candidate's run as an HTML report with the comparison to `FILE`", withoutReport)
	f.boolVar(&o.failOnChange, "fail-on-change", "AGENTTEST_FAIL_ON_CHANGE", "exit 1 when a scenario changed, as when one regressed")
	f.durationVar(&o.minShift, "latency-min-shift", "AGENTTEST_LATENCY_MIN_SHIFT", compare.DefaultMinShift, "a scenario is slower or faster only when its median turn latency moved by at least `DURATION` and by --latency-min-ratio")
	f.shareVar(&o.minRatio, "latency-min-ratio", "AGENTTEST_LATENCY_MIN_RATIO", "a scenario is slower or faster only when its median turn latency moved by at least this `SHARE` of the baseline's median and by --latency-min-shift, e.g. 0.25 or 25%; 0.25 when not given")
	f.int64Var(&o.seed, "seed", "AGENTTEST_SEED", 0, "seed `N` of the embedded simulators and of retry jitter")
	f.boolVar(&o.allowLive, "allow-live", "AGENTTEST_ALLOW_LIVE", "allow a side to run in the live environment")
	f.boolVar(&o.sim, "sim", "AGENTTEST_SIM", "run the environment sides on the embedded simulator whatever target is configured")
	f.fileVar(&o.simAgents, "sim-agents", envSimAgents, "serve the agent definitions of `PATH`, a directory or one file, on the embedded simulators in place of their examples (implies --sim)", withoutAgents)
	f.boolVar(&o.verbose, "verbose", "", "also list the unchanged scenarios, with their latencies")
	f.alias("v", "verbose", &o.verbose)
	f.boolVar(&o.noColor, "no-color", "", "never colour the output (NO_COLOR in the environment does the same)")
	o.statsOptions.register(f)
	return f
}

func parseCompareOptions(st *State, args []string) (*compareOptions, error) {
	o := &compareOptions{}
	f := compareFlags(st, o)
	pos, err := f.parse(args)
	if err != nil {
		return nil, err
	}
	if !f.isSet("latency-min-ratio") {
		o.minRatio = compare.DefaultMinRatio
	}
	o.statsOptions.parsed(f)
	o.problems = append(o.problems, f.problems...)
	o.pathsGiven = len(pos) > 0
	paths, bad := o.selection.args(st, pos)
	o.problems = append(o.problems, bad...)
	o.paths = suitePaths(paths)
	o.flags = f
	if o.simAgents != "" {
		o.sim = true
		o.simAgentsFrom = simAgentsFrom(f, o.simAgents, o.target, &o.problems)
	}
	return o, nil
}

// Validate checks the options together and returns every problem at once.
func (o *compareOptions) Validate() error {
	problems := append([]string(nil), o.problems...)
	bad, _ := o.statsOptions.check()
	problems = append(problems, bad...)
	for _, s := range []struct{ flag, v string }{{"--baseline", o.baseline}, {"--candidate", o.candidate}} {
		if s.v == "" {
			problems = append(problems, s.flag+" is required: an environment ("+strings.Join(reply.Envs, ", ")+"), target:NAME or a JSON report")
		}
		if strings.TrimSpace(s.v) == "target:" {
			// "target:$TARGET" with the variable unset: without a name the
			// side would run the default target, not the one meant.
			problems = append(problems, s.flag+" "+s.v+" names no target: write target:NAME, with NAME a target of the config file")
		}
	}
	if o.baseline != "" && o.baseline == o.candidate {
		problems = append(problems, fmt.Sprintf("--baseline and --candidate are both %s: compare two different sides", o.baseline))
	}
	problems = append(problems, o.scheduling.problems()...)
	problems = append(problems, o.confirmWait.problems()...)
	if o.minShift < 0 {
		problems = append(problems, fmt.Sprintf("--latency-min-shift must not be negative, got %s", o.minShift))
	}
	if o.minRatio < 0 || o.minRatio > 10 {
		problems = append(problems, fmt.Sprintf("--latency-min-ratio must be between 0 and 10, got %v", o.minRatio))
	}
	if o.sim && o.target != "" && o.simAgents == "" {
		problems = append(problems, "--sim and --target exclude each other: --sim uses the embedded simulator")
	}
	problems = append(problems, o.selection.validate()...)
	problems = append(problems, o.selectsNothing()...)
	problems = append(problems, sameReportFile(map[string]string{"--json": o.json, "--html": o.html})...)
	if len(problems) > 0 {
		return usageProblems("compare", problems...)
	}
	return nil
}

// selectsNothing refuses a selection when both sides are reports: it
// chooses the scenarios to run, and nothing runs, so every case of both
// reports would be compared, the comparison passing or failing on cases
// the selection left out. (With one report side, the report is cut to
// what the running side selected.)
func (o *compareOptions) selectsNothing() []string {
	if parseSide("baseline", o.baseline).kind != compare.KindReport || parseSide("candidate", o.candidate).kind != compare.KindReport {
		return nil
	}
	const why = "selects the scenarios a side runs, and both sides are reports: nothing runs, and every case of both would be compared; leave it out to compare the reports whole, or make a side an environment or target:NAME"
	var problems []string
	if o.pathsGiven {
		problems = append(problems, "a PATH "+why)
	}
	for _, f := range []string{"tags", "name", "rerun-failed"} {
		if o.flags.isSet(f) {
			problems = append(problems, "--"+f+" "+why)
		}
	}
	return problems
}

// sideSpec is a side as named on the command line.
type sideSpec struct {
	// label is "baseline" or "candidate"; spec the value given.
	label, spec string
	kind        string
	// env is the environment of an environment side; target the name of
	// a target side; report the path of a report side.
	env, target, report string
}

// parseSide reads --baseline or --candidate: an environment name,
// target:NAME, or else the path of a JSON report.
func parseSide(label, spec string) sideSpec {
	s := sideSpec{label: label, spec: spec}
	switch name, isTarget := strings.CutPrefix(spec, "target:"); {
	case isTarget:
		s.kind, s.target = compare.KindTarget, name
	case reply.ValidEnv(spec):
		s.kind, s.env = compare.KindEnvironment, spec
	default:
		s.kind, s.report = compare.KindReport, spec
	}
	return s
}

// side is a side being compared: its spec, and what it ran or read.
type side struct {
	sideSpec
	tgt   *config.Target
	res   *result.Result
	state result.RunStatus
	// st is the State the side runs with: the command's, or one with the
	// side's own clock (State.SideClock).
	st *State
	// warnings are said of the side's plan on its embedded simulator
	// before it runs (unknownNodes).
	warnings diag.Diagnostics
}

func cmdCompare(ctx context.Context, st *State, args []string) error {
	o, err := parseCompareOptions(st, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return o.flags.attribute(err)
	}
	if _, warnings := o.statsOptions.check(); len(warnings) > 0 {
		// As run says them: the settings run every side's scenarios.
		fmt.Fprintln(st.Stderr, strings.Join(warnings, "\n"))
	}
	defer guardInGitHubActions(st)()
	sides := []*side{{sideSpec: parseSide("baseline", o.baseline)}, {sideSpec: parseSide("candidate", o.candidate)}}
	inputs := []input{{"--config", o.config}, {"--rerun-failed", o.rerunFailed}}
	for _, s := range sides {
		inputs = append(inputs, input{"--" + s.label, s.report})
	}
	if err := prepareFiles(st, "compare", map[string]string{"--json": o.json, "--html": o.html}, inputs...); err != nil {
		return err
	}
	started := now(st)
	var problems []string
	// A report side is anyone's text: the workspace's keys are masked in
	// it as it is read (and in the problems that quote it as the command
	// ends: maskMessage).
	keys := workspaceKeys(st, o.config)
	for _, s := range sides {
		if s.kind != compare.KindReport {
			continue
		}
		if err := s.read(st, keys); err != nil {
			problems = append(problems, err.Error())
		}
	}
	// The scenarios the candidate holds are what the running sides
	// select, or those of its report (only a report side has a result
	// yet): a baseline narrowed alike holds them all.
	own := o.filterResult()
	if c := sides[1]; c.res != nil {
		own = c.res.Filter
	}
	for _, s := range sides {
		if s.kind != compare.KindReport {
			continue
		}
		part, hint := s.partial(own)
		switch {
		case part == "":
		case s.label == "baseline":
			// Against part of a selection, every other scenario is only
			// on the candidate, never regressed: the comparison would
			// pass having compared nothing of them.
			problems = append(problems, fmt.Sprintf("--baseline %s is %s: it holds only those cases, and every other scenario would show as only on the candidate, never as regressed; %s", s.spec, part, hint))
		default:
			fmt.Fprintf(st.Stderr, "agenttest: compare: --candidate %s is %s: the comparison covers only those cases, and agenttest gate refuses it; %s\n", s.spec, part, hint)
		}
		if s.label == "candidate" && s.res != nil && len(s.res.Deployments) == 0 {
			fmt.Fprintf(st.Stderr, "agenttest: compare: --candidate %s records no deployment (written before agenttest recorded deployments, or by a run that tested no agent): agenttest gate refuses the comparison\n", s.spec)
		}
	}
	if len(problems) > 0 {
		return usageProblems("compare", problems...)
	}
	if running := runningSides(sides); len(running) > 0 {
		if err := o.runSides(ctx, st, sides); err != nil {
			return err
		}
		// A report holds every scenario of its run; compare the ones
		// selected now.
		for _, s := range sides {
			if s.kind != compare.KindReport {
				continue
			}
			held := scenarioCount(s.res)
			s.res = selectedOnly(s.res, running[0].res)
			if ran := scenarioCount(running[0].res); held > 0 && ran > 0 && scenarioCount(s.res) == 0 {
				// Nothing will pair, and "nothing was compared" alone
				// does not say why: most often the paths.
				fmt.Fprintf(st.Stderr, "agenttest: compare: --%s %s holds %d %s, none of them a file and name the %s ran: cases pair by the suite path the run was given and the scenario's name, so a report written from another directory (suites/x.yaml against ./x.yaml) pairs nothing\n",
					s.label, s.spec, held, plural(held, "case", "cases"), running[0].label)
			}
		}
	}
	c := compare.Build(sides[0].input(), sides[1].input(), compare.Options{
		MinShiftMS: float64(o.minShift) / float64(time.Millisecond), MinRatio: o.minRatio,
		Alpha: compare.DefaultAlpha, FailOnChange: o.failOnChange,
	})
	c.Started, c.DurationMS = started, float64(now(st).Sub(started))/float64(time.Millisecond)
	if len(runningSides(sides)) > 0 {
		// What the sides ran is what --rerun-failed selected: say so,
		// as run's report does, for the gate to refuse it.
		c.Rerun = o.rerunResult()
	}
	// A filter narrows both sides, a report side being cut to what the
	// running side selected: the comparison is of that subset.
	c.Filter = o.filterResult()

	var out bytes.Buffer
	if err := compare.WriteText(&out, c, compare.TextOptions{Color: useColor(st, o.noColor) && st.StdoutTTY, Verbose: o.verbose}); err != nil {
		return err
	}
	red := sidesRedactor(st, sides)
	// A console whose reader went away (| head) is no failure of the
	// comparison: its reports and exit code stand, as a run's do.
	console := consoleErr(red.Writer(st.Stdout).Write(out.Bytes()))
	// The files are masked as the console is: a stored report is anyone's
	// text, and a side's key in it would reach them.
	if o.json != "" {
		if err := writeReport(st, o.json, masked(red.JSON, func(w io.Writer) error { return compare.WriteJSON(w, c) })); err != nil {
			return err
		}
	}
	if cand := sides[1].res; o.html != "" && cand != nil {
		if err := writeReport(st, o.html, masked(red.Bytes, func(w io.Writer) error {
			return report.WriteHTML(w, cand, report.HTMLOptions{Generated: now(st), Compare: c})
		})); err != nil {
			return err
		}
	}
	// Why a side stopped, with what to check, as run says it: the
	// status line names only the kind (platform unreachable). Each
	// side's: two targets may both refuse what they were given.
	refused := false
	for _, s := range runningSides(sides) {
		if stop := s.res.Stop; stop != nil && stop.Kind != result.StopFailFast && !s.res.Interrupted {
			fmt.Fprintf(st.Stderr, "agenttest: %s: %s\n", s.label, red.String(stopMessage(stop, s.tgt)))
			refused = refused || stop.Config
		}
	}
	if console != nil {
		return console
	}
	if refused {
		return reported(exitUsage)
	}
	switch c.Status {
	case result.RunFailed:
		return reported(exitFailed)
	case result.RunErrored:
		return reported(exitErrored)
	case result.RunInterrupted:
		return reported(exitInterrupted)
	case result.RunEmpty:
		return reported(exitEmpty)
	}
	return nil
}

// masked renders whole, then writes what mask leaves: a key split
// between two writes of a renderer would pass a streaming redactor.
func masked(mask func([]byte) []byte, render func(io.Writer) error) func(io.Writer) error {
	return func(w io.Writer) error {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			return err
		}
		_, err := w.Write(mask(b.Bytes()))
		return err
	}
}

// runningSides are the sides that are not reports.
func runningSides(sides []*side) []*side {
	var out []*side
	for _, s := range sides {
		if s.kind != compare.KindReport {
			out = append(out, s)
		}
	}
	return out
}

// read reads a report side, with red's keys masked in its values.
func (s *side) read(st *State, red *secret.Redactor) error {
	rep, err := readMaskedReport(st, s.report, red)
	if errors.Is(err, fs.ErrNotExist) && !strings.HasSuffix(s.report, ".json") {
		return fmt.Errorf("--%s %s: not an environment (%s), target:NAME or a JSON report", s.label, s.spec, strings.Join(reply.Envs, ", "))
	}
	if err != nil {
		return fmt.Errorf("--%s %s", s.label, inFile(s.spec, err))
	}
	s.res, s.state = rep.Result, rep.Status
	return nil
}

// partial says what part of a selection a report side's run tested, with
// what to compare instead; "" for a run of its whole selection, or of the
// filter the comparison selects by (own), which the comparison records.
func (s *side) partial(own *result.Filter) (part, hint string) {
	if s.res == nil {
		return "", ""
	}
	if sh := s.res.Shard; sh != nil && sh.Total > 1 {
		return fmt.Sprintf("the report of shard %d of %d of a selection of %d scenarios (run --shard)", sh.Index, sh.Total, sh.Selected),
			"compare with the report agenttest merge writes of every shard"
	}
	if rr := s.res.Rerun; rr != nil {
		return fmt.Sprintf("the report of a --rerun-failed run, of %s", rr.Cases(rr.Of)),
			"compare with the report of a full run"
	}
	if f := s.res.ForcedMerge; len(f) > 0 {
		return fmt.Sprintf("a report agenttest merge --force wrote of reports that are not every shard of one selection on one target (%s)", strings.Join(f, "; ")),
			"compare with the report agenttest merge writes, without --force, of every shard of one run"
	}
	if f := s.res.Filter; f != nil && !f.Same(own) {
		return fmt.Sprintf("the report of a run narrowed by %s (%d %s of its files left out)", f.String(), f.LeftOut, plural(f.LeftOut, "scenario", "scenarios")),
			"compare with the report of a run of the whole selection, or select the same scenarios here"
	}
	return "", ""
}

// input is the side as compare.Build takes it.
func (s *side) input() compare.Input {
	in := compare.Input{Spec: s.spec, Kind: s.kind, Env: s.env, Report: s.report, Result: s.res, Status: s.state}
	if s.tgt != nil && in.Env == "" {
		in.Env = cmpOrDefault(s.tgt.Env)
	}
	if s.kind == compare.KindReport && s.res != nil {
		in.Env = s.res.Target.Env
	}
	return in
}

func cmpOrDefault(env string) string {
	if env == "" {
		return runner.DefaultEnv
	}
	return env
}

// sidesRedactor masks the keys of every side's target in the console
// and the reports, and the keys the environment holds (envKeys), as
// history and merge mask the reports they read: a stored report side is
// anyone's text, and a comparison of two reports has no target. (A
// report side's values are masked as they are read, with the keys of
// the variables the config file names too: workspaceKeys.)
func sidesRedactor(st *State, sides []*side) *secret.Redactor {
	keys := envKeys(st, nil)
	for _, s := range sides {
		if s.tgt != nil {
			keys = append(keys, s.tgt.Secrets()...)
		}
	}
	r, err := secret.New(keys...)
	if err != nil {
		r, _ = secret.New()
	}
	return r
}

// runSides loads the suites once and runs them on every side that is not a
// report, all at once.
func (o *compareOptions) runSides(ctx context.Context, st *State, all []*side) error {
	sides := runningSides(all)
	var served []*agent.Definition
	if o.simAgents != "" {
		// Before anything else, as for run: a broken definition is the
		// first thing to fix.
		var err error
		if served, err = loadSimAgents(st, "compare: "+o.simAgentsFrom, o.simAgents); err != nil {
			return err
		}
	}
	var stored *result.Result
	for _, s := range all {
		if s.kind == compare.KindReport {
			stored = s.res
		}
	}
	cfg, err := loadConfig(st, st.Stderr, o.flags, o.config, false)
	if err != nil {
		return err
	}
	o.scheduling.applyConfig(cfg, o.flags)
	o.confirmWait.applyConfig(cfg, o.flags)
	suites, plan, err := o.selection.plan(st, cfg, o.paths, o.pathsGiven)
	if err != nil {
		return err
	}
	if len(plan) == 0 {
		fmt.Fprintf(st.Stderr, "agenttest: nothing to compare: %s\n", o.selection.emptyReason(suites, o.paths, o.pathsGiven))
	}
	if note := o.statsOptions.probeNote(plan); note != "" {
		fmt.Fprintln(st.Stderr, note)
	}
	var diags []string
	said := map[string]bool{}
	for _, s := range sides {
		sel := config.Selection{Target: o.target, TargetFrom: o.flags.setBy("target"), Env: s.env, Sim: o.sim, Getenv: st.LookupEnv, Needs: config.Needs{Build: true}}
		if s.kind == compare.KindTarget {
			// The target as it is: AGENTTEST_ENV, which a CI job may
			// set for its runs, must not make both targets one env.
			sel = config.Selection{Target: s.target, Getenv: hiding(st.LookupEnv, config.EnvEnv), Needs: config.Needs{Build: true}}
		}
		tgt, d := config.Resolve(cfg, sel)
		if len(d) > 0 {
			// Two environment sides resolve one target: its problems
			// are said once.
			var b bytes.Buffer
			sources{st: st, cfg: cfg}.write(&b, d, false)
			if !said[b.String()] {
				said[b.String()] = true
				st.Stderr.Write(b.Bytes())
			}
		}
		if d.HasErrors() {
			diags = append(diags, s.label)
			continue
		}
		s.tgt = tgt
		if s.kind == compare.KindEnvironment {
			s.tgt.Env = s.env
		}
		allow := o.allowLive || tgt.AllowLive
		if s.kind == compare.KindEnvironment && s.env == "live" && !allow {
			fmt.Fprintf(st.Stderr, "agenttest: compare: --%s live runs the scenarios in the live environment without --allow-live (pass --allow-live, or set allow_live: true on the target, to test in live on purpose)\n", s.label)
			diags = append(diags, s.label)
			continue
		}
		if s.kind == compare.KindEnvironment {
			// The side's environment is the one named, said above; the
			// rest (probe numbers) as for run.
			allow = true
		}
		if d := liveSafety(s.plan(plan), allow, tgt); d.HasErrors() {
			fmt.Fprintf(st.Stderr, "agenttest: --%s %s:\n", s.label, s.spec)
			sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
			diags = append(diags, s.label)
		}
		if s.kind == compare.KindTarget {
			// run's rule: warned of, refused when a live side would
			// test nothing in live.
			if d := envPins(s.plan(plan), tgt); len(d) > 0 {
				fmt.Fprintf(st.Stderr, "agenttest: --%s %s:\n", s.label, s.spec)
				sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
				if d.HasErrors() {
					diags = append(diags, s.label)
				}
			}
		}
	}
	// Every side expands the same references.
	if d := unsetEnv(plan, st.LookupEnv); d.HasErrors() {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		diags = append(diags, "env")
	}
	if len(diags) > 0 {
		return reported(exitUsage)
	}

	// Each side on its own simulator when embedded: the same seed, the
	// same conversation names, the same draws; against a stored report,
	// the names its conversations had.
	var ids func(c *result.Case, a *result.Attempt) string
	for _, s := range sides {
		s.st = st
		if !s.tgt.Embedded {
			continue
		}
		tweaks := []func(*sim.Options){embeddedTweaks}
		if served != nil {
			tweaks = append(tweaks, servedAgents(served))
			s.tgt.SimAgents = o.simAgentsFrom
		}
		if st.SideClock != nil {
			now, sleep := st.SideClock()
			// The runner and the client pause on the side's clock too:
			// a bound they keep on its Now passes only as they pause.
			own := *st
			own.Now, own.Sleep = now, sleep
			s.st = &own
			tweaks = append(tweaks, func(o *sim.Options) {
				o.Now = now
				o.Sleep = func(ctx context.Context, d time.Duration) { _ = sleep(ctx, d) }
			})
		}
		es, err := startSimulator(st, o.seed, tweaks...)
		if err != nil {
			return fmt.Errorf("start the embedded simulator: %w", err)
		}
		defer es.stop()
		es.fill(s.tgt)
		if s.kind == compare.KindEnvironment {
			s.tgt.Env = s.env
		}
		ids = conversationIDs(stored)
		// As run warns: the node names the side's checks expect that
		// its agents, at the version its environment deploys, lack.
		s.warnings = unknownNodes(s.plan(plan), newServedDefinitions(es.agents, s.tgt.AgentID, cmpOrDefault(s.tgt.Env)))
	}
	// What the scenarios need that a side's target does not give, for
	// every side before either starts: a side refused after the other
	// started would leave that one running, its simulator and client
	// closed under it. Its warnings are said as run says them.
	// Two sides of one embedded simulator share its agents: what their
	// scenarios name wrong is said once.
	saidBy := map[string]string{}
	for _, s := range sides {
		d := slices.Concat(s.warnings, targetProblems(s.plan(plan), s.tgt))
		if len(d) == 0 {
			continue
		}
		var b strings.Builder
		sources{st: st, cfg: cfg}.write(&b, d, false)
		if earlier, ok := saidBy[b.String()]; ok {
			fmt.Fprintf(st.Stderr, "agenttest: --%s %s: the same as %s\n", s.label, s.spec, earlier)
		} else {
			saidBy[b.String()] = fmt.Sprintf("--%s %s", s.label, s.spec)
			fmt.Fprintf(st.Stderr, "agenttest: --%s %s:\n%s", s.label, s.spec, b.String())
		}
		if d.HasErrors() {
			diags = append(diags, s.label)
		}
	}
	if len(diags) > 0 {
		return reported(exitUsage)
	}
	// The sides run at once, each at --parallel: a scenario holds the
	// connections of every side.
	var perCase uint64
	for _, s := range sides {
		perCase += connsPerCase(s.tgt.Embedded, len(messagingScenarios(s.plan(plan))) > 0)
	}
	o.parallel = fitParallel(st, o.parallel, perCase, false)
	ropts := make([]runner.Options, len(sides))
	for i, s := range sides {
		ro, done, err := o.sideOptions(s.st, cfg, s.tgt, ids)
		if err != nil {
			return err
		}
		defer done()
		ropts[i] = ro
	}
	header := make([]string, len(all))
	for i, s := range all {
		switch {
		case s.tgt == nil:
			header[i] = fmt.Sprintf("%s report %s", s.label, s.report)
		case s.tgt.Embedded:
			header[i] = fmt.Sprintf("%s %s (the embedded simulator, env %s)", s.label, s.spec, cmpOrDefault(s.tgt.Env))
		default:
			header[i] = fmt.Sprintf("%s %s (target %s, env %s)", s.label, s.spec, s.tgt.Name, cmpOrDefault(s.tgt.Env))
		}
	}
	n := 0
	for _, f := range runner.Plan(plan, runner.Options{}) {
		n += len(f.Cases)
	}
	fmt.Fprintf(st.Stdout, "comparing %d %s: %s\n", n, plural(n, "scenario", "scenarios"), strings.Join(header, " with "))

	var g errgroup.Group
	for i, s := range sides {
		g.Go(func() error {
			res, err := runner.Run(ctx, s.plan(plan), ropts[i])
			if err != nil {
				return fmt.Errorf("%s: run: %w", s.label, err)
			}
			res.Rerun, res.Filter, res.Paths = o.rerunResult(), o.filterResult(), o.loaded
			s.res, s.state = res, res.RunStatus()
			sum := report.Summarize(res)
			fmt.Fprintf(st.Stdout, "%s %s: %d passed, %d failed, %d errored, %d skipped in %s: %s\n", s.label, s.spec,
				sum.Passed+sum.Flaky, sum.Failed, sum.Errored, sum.Skipped, res.Duration.Round(time.Millisecond), s.state)
			return nil
		})
	}
	return g.Wait()
}

// plan is the plan as the side runs it: an environment side runs every
// scenario in its environment, whatever env its suite or scenario names
// (or both sides would run the pinned one, and compare nothing).
func (s *side) plan(plan []*scenario.Suite) []*scenario.Suite {
	if s.kind != compare.KindEnvironment {
		return plan
	}
	out := make([]*scenario.Suite, len(plan))
	for i, su := range plan {
		cp := *su
		cp.Env = s.env
		cp.Scenarios = make([]*scenario.Scenario, len(su.Scenarios))
		for j, sc := range su.Scenarios {
			c := *sc
			c.Env = s.env
			cp.Scenarios[j] = &c
		}
		out[i] = &cp
	}
	return out
}

// sideOptions are the runner's options for one side: a client of its
// own, its deployments read, no webhook receiver or alert gate.
func (o *compareOptions) sideOptions(st *State, cfg *config.File, tgt *config.Target, ids func(*result.Case, *result.Attempt) string) (runner.Options, func(), error) {
	red, err := commandRedactor(st, cfg, tgt, "", "")
	if err != nil {
		return runner.Options{}, nil, err
	}
	mo, err := messagingOptions(tgt, o.turnTimeout)
	if err != nil {
		return runner.Options{}, nil, err
	}
	maxPerHost := max(platform.DefaultMaxPerHost, o.parallel)
	pcfg, client, done, err := newClient(st, tgt, red, targetLimits(tgt, maxPerHost))
	if err != nil {
		return runner.Options{}, nil, err
	}
	ropts := runner.Options{
		Channel:        runner.DebugChat(client),
		Messaging:      messagingChannel(pcfg, tgt, mo),
		Deployments:    client,
		Records:        client,
		ConfirmTimeout: o.confirmTimeout,
		Parallel:       o.parallel,
		Retries:        o.retries,
		TurnTimeout:    o.turnTimeout,
		DefaultAgent:   tgt.AgentID,
		DefaultEnv:     tgt.Env,
		Getenv:         st.LookupEnv,
		Now:            st.Now,
		Sleep:          st.Sleep,
		Seed:           o.seed,
		Target:         runnerTarget(tgt, o.seed),
		Redactor:       red,
		Stats:          o.statsOptions.stats(),
		AllowNumber:    tgt.AllowsNumber,
		Connector:      tgt.SMSConnector,
		NoWebhooks:     "agenttest compare starts none, not even on the embedded simulator; leave such scenarios out with --tags",
	}
	if tgt.Embedded {
		ropts.ConversationIDs = ids
	}
	return ropts, done, nil
}

// conversationIDs names a case's conversations on the embedded
// simulator, whose random draws are seeded by the conversation's name:
// `conv-` and a hash of the scenario, the run of a repeated scenario and
// the attempt (unique within a run and within a side of a comparison,
// each on a simulator of its own; alike on both sides, and alike from
// one run or comparison to the next, so that one --seed replays them and
// `agenttest run --env E` draws what a comparison's side in E draws), or,
// when the other side is a stored report, the name the report's
// conversation had, so that a simulator started with the seed of that
// run draws what it drew.
func conversationIDs(stored *result.Result) func(c *result.Case, a *result.Attempt) string {
	type key struct {
		file, name string
		run        int
	}
	names := map[key][]string{}
	if stored != nil {
		for _, f := range stored.Files {
			for _, c := range f.Cases {
				for _, a := range c.Attempts {
					k := key{argPath(c.Pos.File), c.Name, a.Run}
					names[k] = append(names[k], a.ConversationID)
				}
			}
		}
	}
	return func(c *result.Case, a *result.Attempt) string {
		// A run's attempts are numbered from 1 until they are merged into
		// the case, as they are in the stored report within their run.
		if ns := names[key{argPath(c.Pos.File), c.Name, a.Run}]; a.Number <= len(ns) && ns[a.Number-1] != "" {
			return ns[a.Number-1]
		}
		// SHA-256, not FNV: the names of one scenario's runs differ only
		// in their last bytes, which FNV leaves differing in few bits;
		// the simulator seeds each conversation's draws from its name,
		// and the runs' independence should not rest on how well it
		// mixes them.
		h := sha256.New()
		fmt.Fprintf(h, "\x00%s\x00%s\x00%d", c.Pos.File, c.Name, a.Number)
		if a.Run > 0 {
			fmt.Fprintf(h, "\x00run %d", a.Run)
		}
		return fmt.Sprintf("conv-%x", h.Sum(nil)[:8])
	}
}

// hiding is getenv without the variable name.
func hiding(getenv func(string) (string, bool), name string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if k == name {
			return "", false
		}
		return getenv(k)
	}
}

// scenarioCount is the number of scenarios r holds.
func scenarioCount(r *result.Result) int {
	if r == nil {
		return 0
	}
	n := 0
	for range r.Scenarios() {
		n++
	}
	return n
}

// selectedOnly keeps of a report's result the cases the other side ran
// (by file and name): a report holds its whole run, the comparison the
// scenarios selected now.
func selectedOnly(rep, ran *result.Result) *result.Result {
	if rep == nil || ran == nil {
		return rep
	}
	keep := map[[2]string]bool{}
	for _, f := range ran.Files {
		for _, c := range f.Cases {
			keep[[2]string{argPath(c.Pos.File), c.Name}] = true
		}
	}
	out := *rep
	out.Files = nil
	for _, f := range rep.Files {
		cf := *f
		cf.Cases = nil
		for _, c := range f.Cases {
			file := c.Pos.File
			if file == "" {
				file = f.Path
			}
			if keep[[2]string{argPath(file), c.Name}] {
				cf.Cases = append(cf.Cases, c)
			}
		}
		if len(cf.Cases) > 0 {
			out.Files = append(out.Files, &cf)
		}
	}
	return &out
}
