package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/coverage"
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
	"github.com/agenttest/agenttest/internal/webhook"
)

const runUsage = `Usage: agenttest run [flags] [PATH | FILE:LINE ...]

Runs the scenarios of the suite files under each PATH (default ".") against
a target and reports what the agent did. Flags may follow the paths. Paths
may be relative, ../ or absolute, and are shown as given.

To run less: FILE:LINE runs the scenario written at that line of FILE (the
line of an examples row runs that row), the form every result line prints,
or the scenario a line inside it belongs to (a failure's file:line:col);
--name TEXT runs the scenarios whose name contains TEXT, literally (write
--name /REGEX/ for a regular expression); --tags selects by tags; and
--rerun-failed REPORT.json runs again the cases that failed or errored in a
previous JSON report, and the cases its run left unrun when it was
interrupted or stopped early (--fail-fast, a platform that could not be
used); it says how many of each it reruns, and which of them cannot be
matched any more.

The target is --target NAME from agenttest.yaml (or its default_target),
overridden field by field by AGENTTEST_BUILD_URL, AGENTTEST_RUNTIME_URL,
AGENTTEST_MESSAGING_URL, AGENTTEST_MESSAGING_HOST, AGENTTEST_MESSAGING_QUIET,
AGENTTEST_ACCOUNT_ID, AGENTTEST_AGENT_ID, AGENTTEST_BUILD_KEY,
AGENTTEST_RUNTIME_KEY, AGENTTEST_CALL_TOKEN, AGENTTEST_CONNECTOR_TOKEN,
AGENTTEST_SMS_CONNECTOR_ID, AGENTTEST_BRAND and AGENTTEST_ENV. With no
target configured, or with --sim, the run uses the embedded platform
simulator and its example agents, and says so on its first line.
--sim-agents PATH serves your own agent definitions instead, a directory
of them or one file (docs/agent-definition.md): they are checked before
anything runs, and a broken one exits 2.

Precedence: flag > environment > agenttest.yaml > built-in default.

Statistical scenarios: --repeat, --pass-rate, --confidence and --margin
apply to every scenario that sets none of repeat, pass_rate and
confidence itself. With --confidence such a scenario runs fresh sessions
until a sequential test decides, with the stated probability of the right
verdict; one that reaches --repeat undecided is inconclusive and fails
(docs/writing-scenarios.md, "Agents whose answers vary"). Before the run,
a note on stderr says how many sessions the statistical scenarios may
open. A quarantined
scenario runs and is reported but does not change the exit code until its
quarantine lapses.

On SIGINT/SIGTERM the run stops starting cases and cancels the calls in
flight; finished cases keep their verdicts, the rest are reported as not
run, every report is still written, and the exit code is 130. A second
interrupt exits at once.

When the platform cannot be used at all (a host that never answered
cannot be connected to, it refuses a key or a connector token, it does
not know the agent, or no Messaging API answers at messaging_url) the
run stops at once: the cause is said once with
what to check, and the cases not run are reported with the reason.

The run reads the active deployment of each agent and environment before
its first case and after its last, and names it in its first lines and
its reports; a deployment that changed in between errors the run
(docs/promoting.md).

Report files (--junit, --json, --html, --cucumber) are checked before
anything is called and a report an earlier run left at their path is
removed; a path naming a file the run reads (a suite, a feature, the
config, the report of --rerun-failed or --coverage-from) is refused.
They are written when the run concludes. The JSON report holds
the node coverage of each agent: against its definition on the embedded
simulator, else against the nodes seen in this run and in the reports
given to --coverage-from. With --github, or when GITHUB_ACTIONS=true,
failures are also printed as GitHub Actions annotations (and a similar
check that passed near its threshold as a notice) and a summary is
appended to $GITHUB_STEP_SUMMARY.

--shard K/N runs the K-th of N shares of the selected scenarios, the same
on every machine; 'agenttest merge' combines the shards' JSON reports
into the report and the exit code of the whole run.

Exit codes:
  0    every selected scenario passed (flaky counts as passed; a
       quarantined one never changes the code)
  1    at least one check failed: the agent broke an expectation
       (an inconclusive statistical scenario counts as failed); or,
       with --gate-alerts, an alert rule fired, which the status names
  2    bad usage, configuration, suite files or report path: nothing run
       (also: the platform refused a key or connector token, does not
       know the agent, or no Messaging API answers at messaging_url)
  3    internal error, or a report that could not be written (a full
       disk)
  4    no check failed, but a case errored: the platform or the network
       kept the run from telling whether the agent is fine, or its
       scenario cannot be run as written (a configuration error, which
       the status line names: retrying will not help); or the
       deployment of an agent changed during the run
  5    nothing was tested: no scenario selected, or all skipped
       (--allow-empty makes it 0)
  130  interrupted
`

// scheduling are the flags of how scenarios run, shared by run and
// compare (per side): at most parallel at once, each retried up to
// retries times, each platform call bounded by turnTimeout.
type scheduling struct {
	parallel    int
	retries     int
	turnTimeout time.Duration
}

func (o *scheduling) register(f *flags, parallelUsage string) {
	f.intVar(&o.parallel, "parallel", "AGENTTEST_PARALLEL", runner.DefaultParallel, parallelUsage)
	f.intVar(&o.retries, "retries", "AGENTTEST_RETRIES", 0, "retry a failed or errored scenario up to `N` times from a fresh session (a pass on retry is flaky)")
	f.durationVar(&o.turnTimeout, "turn-timeout", "AGENTTEST_TURN_TIMEOUT", runner.DefaultTurnTimeout, "bound each platform call to `DURATION`")
}

func (o *scheduling) problems() []string {
	var problems []string
	if o.parallel < 1 {
		problems = append(problems, fmt.Sprintf("--parallel must be at least 1, got %d", o.parallel))
	}
	if o.retries < 0 {
		problems = append(problems, fmt.Sprintf("--retries must not be negative, got %d", o.retries))
	}
	if o.turnTimeout <= 0 {
		problems = append(problems, fmt.Sprintf("--turn-timeout must be positive, got %s", o.turnTimeout))
	}
	return problems
}

// applyConfig takes the config's run section where the command line and
// the environment left a flag unset.
func (o *scheduling) applyConfig(f *config.File, fl *flags) {
	if f == nil {
		return
	}
	r := f.Run
	if r.Parallel != nil && !fl.isSet("parallel") {
		o.parallel = *r.Parallel
	}
	if r.Retries != nil && !fl.isSet("retries") {
		o.retries = *r.Retries
	}
	if r.TurnTimeout != nil && !fl.isSet("turn-timeout") {
		o.turnTimeout = *r.TurnTimeout
	}
}

// runOptions are the flags of `agenttest run`.
type runOptions struct {
	// paths are the suite files and directories, as FS paths.
	paths []string
	// target names a target of the config file; config is the file.
	target string
	config string
	// env is the clientEnv for suites that name none.
	env string
	// scheduling: --parallel, --retries, --turn-timeout.
	scheduling
	// maxReplyBytes bounds a debug-chat reply (--max-reply-bytes).
	maxReplyBytes int64
	// selection chooses the scenarios: --tags, --name, --rerun-failed and
	// FILE:LINE arguments.
	selection
	// pathsGiven is true when PATH arguments were given.
	pathsGiven bool
	// rate caps the requests per second per key (--rate, parsed into
	// rateCap by Validate); rateWait bounds a case's waiting on rate
	// limits (--rate-wait).
	rate     string
	rateCap  float64
	rateWait time.Duration
	// junit and json are report files written at the end of the run.
	junit    string
	json     string
	html     string
	failFast bool
	// allowEmpty makes a run that tested nothing exit 0 instead of 5.
	allowEmpty bool
	seed       int64
	// sim forces the embedded simulator.
	sim bool
	// simAgents is the directory or file of the agent definitions the
	// embedded simulator serves in place of its examples (--sim-agents,
	// which implies --sim); simAgentsFrom says what gave it, for the
	// run's first line and its refusals.
	simAgents     string
	simAgentsFrom string
	verbose       bool
	noColor       bool
	// confirmOptions: webhook receiver, alert gate, live safety.
	confirmOptions
	// statsOptions: --repeat, --pass-rate, --confidence, --margin.
	statsOptions
	// outputs: --cucumber, --github, --coverage-from.
	outputs

	// problems found while parsing (bad environment defaults, paths).
	problems []string
}

func parseRunOptions(st *State, args []string) (*runOptions, *flags, error) {
	o := &runOptions{}
	f := runFlags(st, o)
	pos, err := f.parse(args)
	if err != nil {
		return nil, nil, err
	}
	o.problems = append(o.problems, f.problems...)
	o.pathsGiven = len(pos) > 0
	o.outputs.parsed(f)
	o.statsOptions.parsed(f)
	paths, bad := o.selection.args(st, pos)
	o.problems = append(o.problems, bad...)
	o.paths = suitePaths(paths)
	if o.sim && o.target != "" {
		o.problems = append(o.problems, "--sim and --target exclude each other: --sim uses the embedded simulator")
	}
	if o.simAgents != "" {
		o.sim = true
		o.simAgentsFrom = simAgentsFrom(f, o.simAgents, o.target, &o.problems)
	}
	return o, f, nil
}

// runFlags registers run's flags on a new flag set, parsing nothing: run
// parses them, and another command's parse names run when it meets one
// of them (agenttest list --target).
func runFlags(st *State, o *runOptions) *flags {
	f := newFlags(st, "run", runUsage)
	f.stringVar(&o.target, "target", "AGENTTEST_TARGET", "", "target `NAME` from the config file (default: its default_target)")
	f.fileVar(&o.config, "config", "AGENTTEST_CONFIG", "config `FILE` (default: ./agenttest.yaml when present)", withoutConfig)
	f.enumVar(&o.env, "env", reply.Envs, "run in the environment `ENV` (the platform's clientEnv) the suites that set no env: (default: AGENTTEST_ENV, else the target's env, else sandbox)")
	o.scheduling.register(f, "run at most `N` scenarios at once")
	f.int64Var(&o.maxReplyBytes, "max-reply-bytes", envMaxReplyBytes, platform.DefaultMaxReplyBytes, "refuse a debug-chat reply over `BYTES`, counted after decompression (the target's max_reply_bytes, if set, comes before the default)")
	o.selection.register(f, "run")
	o.selection.registerShard(f, "run")
	f.stringVar(&o.rate, "rate", envRate, "", "send at most `N` requests per second with each key, e.g. 20 or 0.5 (when not given: the target's rate; without either, the pace is learnt from the platform's 429s)")
	f.durationVar(&o.rateWait, "rate-wait", envRateWait, platform.DefaultRateWait, "let a scenario wait at most `DURATION` in all on rate limits before it errors; 0 errors it at its first 429 (when not given: the target's rate_wait)")
	f.fileVar(&o.junit, "junit", "AGENTTEST_JUNIT", "write a JUnit XML report to `FILE`", withoutRunReport("junit"))
	f.fileVar(&o.json, "json", "AGENTTEST_JSON", "write a JSON report to `FILE`", withoutRunReport("json"))
	f.fileVar(&o.html, "html", "AGENTTEST_HTML", "write a self-contained HTML report to `FILE` (docs/reading-reports.md)", withoutRunReport("html"))
	f.boolVar(&o.failFast, "fail-fast", "AGENTTEST_FAIL_FAST", "stop starting scenarios after the first failure or error")
	f.boolVar(&o.allowEmpty, "allow-empty", "AGENTTEST_ALLOW_EMPTY", "exit 0 instead of 5 when nothing is tested (no scenario selected, or every selected one skipped)")
	f.int64Var(&o.seed, "seed", "AGENTTEST_SEED", 0, "seed `N` of the embedded simulator and of retry jitter")
	f.boolVar(&o.sim, "sim", "AGENTTEST_SIM", "use the embedded simulator whatever target is configured")
	f.fileVar(&o.simAgents, "sim-agents", envSimAgents, "serve the agent definitions of `PATH`, a directory or one file, on the embedded simulator in place of its examples (implies --sim)", withoutAgents)
	f.boolVar(&o.verbose, "verbose", "", "also show the transcripts of passing scenarios")
	f.alias("v", "verbose", &o.verbose)
	f.boolVar(&o.noColor, "no-color", "", "never colour the output (NO_COLOR in the environment does the same)")
	o.confirmOptions.register(f)
	o.statsOptions.register(f)
	o.outputs.register(f, true)
	return f
}

// simAgentsFrom is what gave a command its --sim-agents path (the flag or
// its variable), for the first line and the messages of a run on the
// definitions; a --target beside it is a problem, since --sim-agents
// implies the embedded simulator.
func simAgentsFrom(f *flags, path, target string, problems *[]string) string {
	if target != "" {
		*problems = append(*problems, "--sim-agents and --target exclude each other: --sim-agents serves its agents on the embedded simulator")
	}
	if !f.onCommandLine("sim-agents") {
		return envSimAgents + "=" + path
	}
	return "--sim-agents " + path
}

// Validate checks the options together and returns every problem at once.
func (o *runOptions) Validate() error {
	problems := append([]string(nil), o.problems...)
	bad, _ := o.statsOptions.check()
	problems = append(problems, bad...)
	problems = append(problems, o.scheduling.problems()...)
	if o.rate != "" {
		r, err := config.ParseRate(o.rate)
		if err != nil {
			problems = append(problems, "--rate: "+err.Error())
		}
		o.rateCap = r
	}
	if o.rateWait < 0 {
		problems = append(problems, fmt.Sprintf("--rate-wait must not be negative, got %s", o.rateWait))
	}
	if o.maxReplyBytes < config.MinReplyBytes {
		problems = append(problems, fmt.Sprintf("--max-reply-bytes must be at least %d, got %d", config.MinReplyBytes, o.maxReplyBytes))
	}
	problems = append(problems, o.selection.validate()...)
	problems = append(problems, o.confirmOptions.problems()...)
	problems = append(problems, sameReportFile(map[string]string{"--junit": o.junit, "--json": o.json, "--html": o.html, "--cucumber": o.cucumber})...)
	if len(problems) > 0 {
		return usageProblems("run", problems...)
	}
	return nil
}

// applyConfig fills the options the command line and the environment left
// unset from the config file's run section.
func (o *runOptions) applyConfig(f *config.File, fl *flags) {
	if f == nil {
		return
	}
	r := f.Run
	o.scheduling.applyConfig(f, fl)
	if r.JUnit != "" && !fl.isSet("junit") {
		o.junit = r.JUnit
	}
	if r.JSON != "" && !fl.isSet("json") {
		o.json = r.JSON
	}
	if r.HTML != "" && !fl.isSet("html") {
		o.html = r.HTML
	}
}

// reportSources maps each report path, after applyConfig, to where it
// came from: its flag (or variable), or the key of the config file's run
// section.
func (o *runOptions) reportSources(cfg *config.File, fl *flags) map[string]string {
	m := map[string]string{"--cucumber": o.cucumber}
	for _, r := range []struct{ name, path string }{{"junit", o.junit}, {"json", o.json}, {"html", o.html}} {
		label := "--" + r.name
		if cfg != nil && !fl.isSet(r.name) {
			label = fmt.Sprintf("run.%s of %s", r.name, cfg.Path)
		}
		m[label] = r.path
	}
	return m
}

func cmdRun(ctx context.Context, st *State, args []string) error {
	o, fl, err := parseRunOptions(st, args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return fl.attribute(err)
	}
	defer o.outputs.guardCommands(st)()
	var simAgents []*agent.Definition
	if o.simAgents != "" {
		// Before anything else: a broken definition is the first thing
		// to fix, whatever the run would select.
		if simAgents, err = loadSimAgents(st, "run: "+o.simAgentsFrom, o.simAgents); err != nil {
			return err
		}
	}
	if _, warnings := o.statsOptions.check(); len(warnings) > 0 {
		fmt.Fprintln(st.Stderr, strings.Join(warnings, "\n"))
	}
	cfg, err := loadConfig(st, st.Stderr, fl, o.config, false)
	if err != nil {
		return err
	}
	o.applyConfig(cfg, fl)
	if problems := sameReportFile(o.reportSources(cfg, fl)); len(problems) > 0 {
		// Validate saw the flags alone; the config's run section may
		// name the same file for two reports, of which one would be lost.
		return usageProblems("run", problems...)
	}

	tgt, diags := config.Resolve(cfg, config.Selection{
		Target: o.target, TargetFrom: fl.setBy("target"), Env: o.env, Sim: o.sim, Getenv: st.LookupEnv,
		Needs: config.Needs{Build: true},
	})
	if len(diags) > 0 {
		// Warnings too: allow_http is said on every run.
		sources{st: st, cfg: cfg}.write(st.Stderr, diags, false)
	}
	if diags.HasErrors() {
		return reported(exitUsage)
	}
	o.confirmOptions.applyConfig(cfg, fl, tgt)
	if tgt.MaxReplyBytes > 0 && !fl.isSet("max-reply-bytes") {
		o.maxReplyBytes = tgt.MaxReplyBytes
	}
	if tgt.Rate > 0 && !fl.isSet("rate") {
		o.rateCap = tgt.Rate
	}
	if tgt.RateWait != nil && !fl.isSet("rate-wait") {
		o.rateWait = *tgt.RateWait
	}
	mo, err := messagingOptions(tgt, o.turnTimeout)
	if err != nil {
		return err
	}
	if err := prepareReports(st, o, cfgPath(cfg)); err != nil {
		return err
	}
	// The plan: the selected scenarios, which the checks before the run,
	// the webhook receiver and the runner all work from.
	gc := tuneGC(st)
	defer gc.restore()
	suites, plan, err := o.selection.plan(st, cfg, o.paths, o.pathsGiven)
	if err != nil {
		return err
	}
	if d := liveSafety(plan, o.allowLive, tgt); d.HasErrors() {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		return reported(exitUsage)
	}
	if note := o.statsOptions.probeNote(plan); note != "" {
		fmt.Fprintln(st.Stderr, note)
	}
	if note := o.statsOptions.costNote(plan); note != "" {
		fmt.Fprintln(st.Stderr, note)
	}
	if d := unsetEnv(plan, st.LookupEnv); d.HasErrors() {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		return reported(exitUsage)
	}
	if d := envPins(plan, tgt); len(d) > 0 {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		if d.HasErrors() {
			return reported(exitUsage)
		}
	}
	if err := o.outputs.readCoverageFrom(st, "run", knownKeys(st, cfg)); err != nil {
		return err
	}
	if err := o.outputs.readDocs(st, plan); err != nil {
		return err
	}
	if len(plan) == 0 && o.selected > 0 {
		// A shard of a selection smaller than the number of shards: the
		// other shards test it, and the merge counts them all.
		fmt.Fprintf(st.Stderr, "agenttest: %s\n", o.emptyShard())
		o.allowEmpty = true
	}
	if len(plan) == 0 {
		// Nothing to call: the run concludes at once, saying why, with
		// reports that say "empty". A wrong path or a tag typo in CI
		// must not pass as "0 passed".
		if o.selected == 0 {
			fmt.Fprintf(st.Stderr, "agenttest: nothing to test: %s\n", o.emptyReason(suites, o.paths, o.pathsGiven))
		}
		human := newHuman(st, o, st.Stdout)
		res := &result.Result{Started: now(st), Target: runnerTarget(tgt, o.seed), Files: []*result.File{}, Shard: o.shardResult(), Rerun: o.rerunResult(), Filter: o.filterResult(), Paths: o.loaded}
		human.RunStarted(0, res.Target)
		human.RunFinished(res)
		return conclude(st, o, human, res)
	}
	if tgt.Embedded {
		tweaks := []func(*sim.Options){embeddedTweaks}
		if simAgents != nil {
			tweaks = append(tweaks, servedAgents(simAgents))
			tgt.SimAgents = o.simAgentsFrom
		}
		sim, err := startSimulator(st, o.seed, tweaks...)
		if err != nil {
			return fmt.Errorf("start the embedded simulator: %w", err)
		}
		defer sim.stop()
		sim.fill(tgt)
		served := newServedDefinitions(sim.agents, tgt.AgentID, cmp.Or(tgt.Env, runner.DefaultEnv))
		o.outputs.addDefinitions(served, plan)
		if d := unknownNodes(plan, served); len(d) > 0 {
			sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		}
		fmt.Fprintln(st.Stdout, embeddedLine(tgt, sim, cfg))
	}
	if d := slices.Concat(targetProblems(plan, tgt), missingWebhookReceiver(plan, tgt, o.webhookListen)); len(d) > 0 {
		sources{st: st, cfg: cfg}.write(st.Stderr, d, false)
		if d.HasErrors() {
			return reported(exitUsage)
		}
	}

	red, err := commandRedactor(st, cfg, tgt, o.webhookSecret, o.webhookURL)
	if err != nil {
		return err
	}
	o.outputs.mask = red
	// A safety net for the console only: every value is masked before it
	// is stored, and the human view writes whole lines.
	human := newHuman(st, o, red.Writer(st.Stdout))
	events := webhookEvents(plan)
	receiver := o.webhookListen != "" || (tgt.Embedded && len(events) > 0)
	o.parallel = fitParallel(st, o.parallel, connsPerCase(tgt.Embedded, len(messagingScenarios(plan)) > 0), receiver)
	// The per-host limit follows --parallel: at the default of 64 a run at
	// --parallel 100 would be capped silently, its extra scenarios waiting
	// on the client's semaphore instead of the platform.
	maxPerHost := max(platform.DefaultMaxPerHost, o.parallel)
	gc.run(plan)
	pcfg, client, closeClient, err := newClient(st, tgt, red, clientLimits{
		maxPerHost: maxPerHost, maxReplyBytes: o.maxReplyBytes, rate: o.rateCap, rateWait: o.rateWait, rateWaitHint: rateWaitHint,
	})
	if err != nil {
		return err
	}
	defer closeClient()

	rcv, err := startReceiver(ctx, st, &o.confirmOptions, tgt, client, red, events, o.turnTimeout)
	if err != nil {
		return err
	}
	if rcv != nil {
		defer rcv.stop()
	}

	ropts := runner.Options{
		Channel:      runner.DebugChat(client),
		Messaging:    messagingChannel(pcfg, tgt, mo),
		Deployments:  client,
		Parallel:     o.parallel,
		Retries:      o.retries,
		TurnTimeout:  o.turnTimeout,
		FailFast:     o.failFast,
		DefaultAgent: tgt.AgentID,
		DefaultEnv:   tgt.Env,
		Observer:     gc.observe(human),
		Getenv:       st.LookupEnv,
		Now:          st.Now,
		AfterFunc:    st.AfterFunc,
		Sleep:        st.Sleep,
		Seed:         o.seed,
		Target:       runnerTarget(tgt, o.seed),
		Redactor:     red,
		Stats:        o.statsOptions.stats(),
		VerdictsOnly: o.verdictsOnly(st),
	}
	if tgt.Embedded {
		// The simulator draws a conversation's replies from the seed and
		// the conversation's name; named by scenario, run and attempt, a
		// scenario meets the same replies under the same seed whatever
		// --parallel, the order its runs reach the simulator in, or the
		// scenarios selected beside it, so a statistical verdict replays.
		ropts.ConversationIDs = conversationIDs(nil)
	}
	confirmRunOptions(&ropts, &o.confirmOptions, tgt, client, rcv)
	res, err := runner.Run(ctx, plan, ropts)
	if err != nil {
		return fmt.Errorf("run: %s", red.String(err.Error()))
	}
	res.Shard, res.Rerun, res.Filter, res.Paths = o.shardResult(), o.rerunResult(), o.filterResult(), o.loaded
	if res.Stop != nil && res.Stop.Kind != result.StopFailFast {
		// The cause, once, with what to check; the cases not run are in
		// the summary and the reports.
		fmt.Fprintf(st.Stderr, "agenttest: %s\n", red.String(stopMessage(res.Stop, tgt)))
	}
	return conclude(st, o, human, res)
}

// verdictsOnly says whether the run reads nothing of a passing case but
// its verdict once the console has shown it finish: no report file
// (--junit, --json, --html, --cucumber) and no GitHub outputs. The
// runner then drops the transcripts of passing cases as they finish
// (runner.Options.VerdictsOnly); -v prints them before that.
func (o *runOptions) verdictsOnly(st *State) bool {
	return o.junit == "" && o.json == "" && o.html == "" && o.outputs.cucumber == "" && !o.outputs.githubOn(st)
}

// clientLimits are the bounds a command puts on its platform client.
type clientLimits struct {
	maxPerHost    int
	maxReplyBytes int64
	// rate caps the requests per second per key (0: the pace is learnt
	// from the platform's 429s); rateWait bounds a case's waiting on rate
	// limits (0: it errors at its first 429).
	rate     float64
	rateWait time.Duration
	// rateWaitHint says how to raise rateWait with what the command
	// reads: run's flag, else the target's key alone.
	rateWaitHint string
}

// targetLimits are a target's own limits (max_reply_bytes, rate,
// rate_wait, else the defaults), for the commands without the flags that
// override them (compare, gate): their hint names the target's key, not
// a flag they do not have.
func targetLimits(tgt *config.Target, maxPerHost int) clientLimits {
	l := clientLimits{maxPerHost: maxPerHost, maxReplyBytes: platform.DefaultMaxReplyBytes, rate: tgt.Rate, rateWait: platform.DefaultRateWait,
		rateWaitHint: targetRateWaitHint}
	if tgt.MaxReplyBytes > 0 {
		l.maxReplyBytes = tgt.MaxReplyBytes
	}
	if tgt.RateWait != nil {
		l.rateWait = *tgt.RateWait
	}
	return l
}

// newClient is the platform client of a target, on a transport of its
// own whose connections are closed by the returned func when the command
// ends: a dialled but never used connection would hold up the embedded
// simulator's graceful shutdown (net/http waits 5s for those). It returns
// the client's Config too, for the Messaging clients built from it. It
// masks what the command's redactor does (commandRedactor), the secrets
// it learns later too.
func newClient(st *State, tgt *config.Target, red *secret.Redactor, l clientLimits) (platform.Config, *platform.Client, func(), error) {
	transport := platform.NewTransport(l.maxPerHost)
	pcfg := platform.Config{
		BuildURL: tgt.BuildURL, RuntimeURL: tgt.RuntimeURL, AccountID: tgt.AccountID,
		BuildKey: tgt.BuildKey.Reveal(), RuntimeKey: tgt.RuntimeKey.Reveal(), CallToken: tgt.CallToken.Reveal(), Redactor: red, Now: st.Now, AfterFunc: st.AfterFunc,
		MaxPerHost: l.maxPerHost, AllowHTTP: tgt.AllowHTTP, Brand: tgt.Brand,
		MaxReplyBytes: l.maxReplyBytes, MaxReplyHint: maxReplyHint,
		Rate: l.rate, RateWait: clientRateWait(l.rateWait), RateWaitHint: l.rateWaitHint,
		Retry:      platform.RetryPolicy{Sleep: st.Sleep},
		HTTPClient: &http.Client{Transport: transport},
	}
	client, err := platform.New(pcfg)
	if err != nil {
		transport.CloseIdleConnections()
		return pcfg, nil, nil, usageErrorf("target %s: %s", tgt.Name, red.String(err.Error()))
	}
	return pcfg, client, transport.CloseIdleConnections, nil
}

// newHuman is the console view of a run.
func newHuman(st *State, o *runOptions, w io.Writer) *report.Human {
	return report.NewHuman(w, report.HumanOptions{
		TTY: st.StdoutTTY, Color: useColor(st, o.noColor), Verbose: o.verbose, Now: st.Now,
	})
}

// conclude writes the reports of a finished run and returns its exit
// code (runExit) as an error for main.
func conclude(st *State, o *runOptions, human *report.Human, res *result.Result) error {
	return concludeResult(st, human, res, reportFiles{junit: o.junit, json: o.json, html: o.html}, &o.outputs, o.allowEmpty)
}

// consoleErr is the error of a write to the console (its count aside)
// that fails the command: none when the reader went away (agenttest ...
// | head), which leaves the reports and the exit code to stand.
func consoleErr(_ int, err error) error {
	if errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// reportFiles are the report files a command writes at the end
// (--junit, --json, --html); "" is none.
type reportFiles struct{ junit, json, html string }

// concludeResult writes the reports of a finished result (run's, or
// merge's of its shards): the files, then the outputs' own (Cucumber,
// GitHub). It returns every error of writing, else the result's exit code
// (runExit) as an error for main.
func concludeResult(st *State, human *report.Human, res *result.Result, files reportFiles, out *outputs, allowEmpty bool) error {
	var errs []error
	// A console whose reader went away (| head) is no failure of the run:
	// its reports and exit code stand.
	if err := consoleErr(0, human.Err()); err != nil {
		errs = append(errs, err)
	}
	if files.junit != "" {
		errs = append(errs, writeReport(st, files.junit, func(w io.Writer) error { return report.WriteJUnit(w, res) }))
	}
	var cov *coverage.Report
	if files.json != "" || files.html != "" {
		cov = out.coverageOf(res)
	}
	if files.json != "" {
		errs = append(errs, writeReport(st, files.json, func(w io.Writer) error {
			return report.WriteJSON(w, res, report.JSONOptions{Coverage: cov})
		}))
	}
	if files.html != "" {
		errs = append(errs, writeReport(st, files.html, func(w io.Writer) error {
			return report.WriteHTML(w, res, report.HTMLOptions{Generated: now(st), Coverage: cov})
		}))
	}
	errs = append(errs, out.write(st, res)...)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if code := runExit(res, allowEmpty); code != exitOK {
		return reported(code)
	}
	return nil
}

// runExit is the exit code of a run that concluded: the one mapping from
// a run's outcome to the table of errors.go. It follows the run's status
// (result.RunStatus), which the console's last line and both reports
// state, except that a stop on a configuration problem (the platform
// refused the key or does not know the agent) exits 2 like every other
// configuration problem.
func runExit(r *result.Result, allowEmpty bool) int {
	status := r.RunStatus()
	if status != result.RunInterrupted && r.Stop != nil && r.Stop.Config {
		return exitUsage
	}
	switch status {
	case result.RunInterrupted:
		return exitInterrupted
	case result.RunFailed:
		return exitFailed
	case result.RunErrored:
		return exitErrored
	case result.RunEmpty:
		if allowEmpty {
			return exitOK
		}
		return exitEmpty
	}
	return exitOK
}

// prepareReports checks the report paths of the run before anything is
// called, removing the reports an earlier run left there
// (State.PrepareReport): an unusable path is a usage error (exit 2),
// found before the run rather than after it.
func prepareReports(st *State, o *runOptions, cfgPath string) error {
	inputs := []input{{"--config", cfgPath}, {"--rerun-failed", o.rerunFailed}}
	for _, p := range o.coverageFrom {
		inputs = append(inputs, input{"--coverage-from", p})
	}
	return prepareFiles(st, "run", map[string]string{"--junit": o.junit, "--json": o.json, "--html": o.html, "--cucumber": o.cucumber}, inputs...)
}

// prepareFiles checks the report paths of a command (flag to path, empty
// when not given) before anything is called or written. A path that
// names one of the command's inputs is refused before any report is
// removed.
func prepareFiles(st *State, cmd string, files map[string]string, inputs ...input) error {
	if problems := overwrittenInputs(st, files, inputs); len(problems) > 0 {
		return usageProblems(cmd, problems...)
	}
	if st.PrepareReport == nil {
		return nil
	}
	var problems []string
	for _, flag := range reportFlags {
		if path := files[flag]; path != "" {
			if path == "-" {
				problems = append(problems, flag+" -: a report is written to a file, not to standard output (the console is there): name a file, ./- for one named -")
				continue
			}
			if err := st.PrepareReport(path); err != nil {
				if errors.Is(err, errReportIsDir) {
					err = fmt.Errorf("%w, e.g. %s", err, filepath.Join(path, reportExample[flag]))
				}
				problems = append(problems, fmt.Sprintf("%s %s: %v", flag, path, err))
			}
		}
	}
	if len(problems) > 0 {
		return usageProblems(cmd, problems...)
	}
	return nil
}

// sameReportFile refuses two report flags naming one file: the second
// report would overwrite the first. flags maps each flag to its path.
func sameReportFile(flags map[string]string) []string {
	byPath := map[string][]string{}
	for flag, path := range flags {
		if path != "" {
			byPath[argPath(path)] = append(byPath[argPath(path)], flag)
		}
	}
	var problems []string
	for path, fl := range byPath {
		if len(fl) > 1 {
			sort.Strings(fl)
			verb := "both write"
			if len(fl) > 2 {
				verb = "all write"
			}
			problems = append(problems, fmt.Sprintf("%s %s %s", strings.Join(fl, " and "), verb, path))
		}
	}
	sort.Strings(problems)
	return problems
}

// now reads the State's clock.
func now(st *State) time.Time {
	if st.Now == nil {
		return time.Now()
	}
	return st.Now()
}

// writeReport streams a report into its file. A run of 20,000 scenarios
// makes a JSON report of hundreds of megabytes: rendering it into memory
// first would hold it (and its growth) whole. The file appears only when
// the report is complete (State.CreateFile). Keys were masked in the
// values of the result, so the report's own structure is never filtered.
func writeReport(st *State, name string, render func(io.Writer) error) error {
	f, err := st.CreateFile(name)
	if err != nil {
		return outputErrorf("write report %s: %w", name, err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := render(bw); err != nil {
		f.Abort()
		if pe, ok := errors.AsType[*fs.PathError](err); ok {
			// The file refused the bytes (a full disk): say that, once.
			return outputErrorf("write report %s: %w", name, pe.Err)
		}
		return fmt.Errorf("render report %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return outputErrorf("write report %s: %w", name, unwrapPath(err))
	}
	if err := f.Commit(); err != nil {
		return outputErrorf("write report %s: %w", name, unwrapPath(err))
	}
	return nil
}

// runnerTarget is the target as the reports name it; on the embedded
// simulator with its seed, which replays the simulator's draws.
func runnerTarget(t *config.Target, seed int64) result.Target {
	rt := result.Target{
		Name: t.Name, BuildURL: t.BuildURL, RuntimeURL: t.RuntimeURL,
		AccountID: t.AccountID, Env: t.Env, Embedded: t.Embedded,
	}
	if t.Embedded {
		rt.Seed = seed
	}
	return rt
}

// targetProblems reports, before anything runs, what the scenarios of a
// plan need that the target does not give: an agent, one the embedded
// simulator serves, Messaging settings and connectors, an SMS connector.
func targetProblems(plan []*scenario.Suite, t *config.Target) diag.Diagnostics {
	return slices.Concat(missingAgents(plan, t), unservedAgents(plan, t), missingConnectors(plan, t), missingSMSConnector(plan, t))
}

// missingAgents reports scenarios that name no agent when the target has
// no default agent either: nothing could be run for them.
func missingAgents(suites []*scenario.Suite, t *config.Target) diag.Diagnostics {
	var ds diag.Diagnostics
	if t.AgentID != "" {
		return nil
	}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if sc.Agent == "" {
				ds = ds.Append(diag.Diagnostic{Pos: sc.Pos,
					Message: fmt.Sprintf("scenario %q names no agent and target %q has no agent_id", sc.Name, t.Name),
					Hint:    "add agent: to the suite, agent_id to the target, or set AGENTTEST_AGENT_ID"})
			}
		}
	}
	return ds
}

// unservedAgents reports, before anything runs, the scenarios of a run on
// the embedded simulator whose agent it does not serve, at the place the
// agent is written, once for each place (a suite's agent: is one mistake,
// whatever the number of its scenarios). Met at run time, a debug chat
// stopped the run after other cases had run, naming one agent, and a
// probe errored its case as the platform's fault (exit 4, "set
// sms_connector_id on the target", a target the run does not have).
func unservedAgents(suites []*scenario.Suite, t *config.Target) diag.Diagnostics {
	if len(t.Agents) == 0 {
		// Only the embedded simulator's agents are known.
		return nil
	}
	var ds diag.Diagnostics
	seen := map[diag.Pos]bool{}
	for _, sc := range scenarios(suites) {
		agent, _ := agentEnv(sc, t)
		if slices.Contains(t.Agents, agent) {
			continue
		}
		// Never the target's agent (AgentPos zero): the simulator's
		// default is its own first agent.
		if !seen[sc.AgentPos] {
			seen[sc.AgentPos] = true
			ds = ds.Append(diag.Diagnostic{Pos: sc.AgentPos, Message: unservedAgent(agent, t.Agents, t.SimAgents)})
		}
	}
	return ds
}

// The collector's targets of large runs (tuneGC): GOGC for a run of
// more than largeRun scenarios, and for one of more than hugeRun (and
// while loading).
const (
	largeRun     = 1000
	largeRunGOGC = 50
	hugeRun      = 50000
	hugeRunGOGC  = 25
)

// tuneGC lowers the garbage collector's headroom for a run of more than
// largeRun scenarios. Such a run holds every transcript (the bodies of
// its replies) until its reports are written, so its heap is mostly live
// data, and the default GOGC=100 lets the heap grow to twice
// that before collecting. GOGC=50 (1.5 times the live data) keeps 20,000
// scenarios near 230 MB; past hugeRun the headroom itself is a hundred
// megabytes and more, and 100,000 one-turn scenarios peaked at 395–428 MB
// with it, 359–382 MB with GOGC=30 and 340–342 MB with GOGC=25
// (BENCHMARKS.md, section 6). Less headroom costs more collector work per
// allocation, in proportion to the run, unlike a fixed memory limit, whose
// collector runs continuously once the live heap reaches it. GOGC or
// GOMEMLIMIT in the environment leave the collector to the user.
//
// It is called before the scenarios are loaded, whose number is not known
// yet: loading runs at the lowest target (hugeRunGOGC), since a large
// suite's parse holds every program and its files' YAML trees at once
// (at GOGC=100 the load alone took 100,000 scenarios past 360 MB); run
// then collects what loading left and sets the run's own target, and
// restore the one before.
func tuneGC(st *State) *gcTuning {
	_, gogc := st.LookupEnv("GOGC")
	_, limit := st.LookupEnv("GOMEMLIMIT")
	if gogc || limit || st.SetGCPercent == nil {
		return &gcTuning{}
	}
	return &gcTuning{set: st.SetGCPercent, collect: st.CollectGarbage, old: st.SetGCPercent(hugeRunGOGC)}
}

// gcTuning is the collector's target set by tuneGC; set is nil when it
// leaves the collector alone. collect, when set, runs a collection.
type gcTuning struct {
	set     func(int) int
	collect func()
	old     int
	// raise counts down the cases of a large run that are still to
	// finish before its target goes up from hugeRunGOGC to largeRunGOGC
	// (see run); zero when there is nothing to raise.
	raise atomic.Int64
}

// run sets the target of a run of the scenarios of suites, after a
// collection: the heap the run starts from is then what the plan keeps.
// Loading leaves the YAML trees of its files behind as garbage (a file of
// 1,000 scenarios parses to about 16 MB of nodes, for 6 MB of programs),
// and without the collection the run's target would be computed from the
// last one during loading, which counted the last file's tree as live: at
// 10,000 scenarios the heap then grew to 1.5 times 70 MB before the run's
// first collection, where it now starts from the 60 MB of programs
// (BENCHMARKS.md, "agenttest vs Botium").
//
// A run of more than largeRun scenarios starts at
// hugeRunGOGC and goes up to largeRunGOGC once a third of its cases have
// finished (observe). Its heap starts as the programs of every scenario,
// freed as the cases finish, and GOGC=50 on them alone let 10,000 booking
// scenarios grow the heap by 25 MB before the first case was done; by a
// third of the run a third of the programs are gone, and the lower target
// has cost the collector a third of the run at most.
func (g *gcTuning) run(suites []*scenario.Suite) {
	if g.set == nil {
		return
	}
	n := scenario.Count(suites)
	if g.collect != nil {
		g.collect()
	}
	switch {
	case n > hugeRun:
		g.set(hugeRunGOGC)
	case n > largeRun:
		g.set(hugeRunGOGC)
		g.raise.Store(int64(n / 3))
	default:
		g.set(g.old)
	}
}

// observe returns the observer of a run set up by run: the console,
// counting the finished cases when the target is to be raised.
func (g *gcTuning) observe(human *report.Human) result.Observer {
	if g.raise.Load() <= 0 {
		return human
	}
	return &gcObserver{Human: human, gc: g}
}

// gcObserver is the console of a run whose collector target goes up
// after a third of its cases (gcTuning.run).
type gcObserver struct {
	*report.Human
	gc *gcTuning
}

// CaseFinished shows the case and counts it.
func (o *gcObserver) CaseFinished(f *result.File, c *result.Case) {
	o.Human.CaseFinished(f, c)
	if o.gc.raise.Add(-1) == 0 {
		o.gc.set(largeRunGOGC)
	}
}

// restore sets the target back to what it was before tuneGC.
func (g *gcTuning) restore() {
	if g.set != nil {
		g.set(g.old)
	}
}

// envSimAgents is the variable of --sim-agents.
const envSimAgents = "AGENTTEST_SIM_AGENTS"

// envMaxReplyBytes is the variable of --max-reply-bytes.
const envMaxReplyBytes = "AGENTTEST_MAX_REPLY_BYTES"

// The variables of --rate and --rate-wait.
const (
	envRate     = "AGENTTEST_RATE"
	envRateWait = "AGENTTEST_RATE_WAIT"
)

// rateWaitHint ends the error of a case that waited its budget out;
// targetRateWaitHint that of a command without --rate-wait.
const (
	rateWaitHint       = "raise it with --rate-wait (" + envRateWait + ") or the target's rate_wait"
	targetRateWaitHint = "raise it with the target's rate_wait"
)

// clientRateWait maps --rate-wait to platform.Config.RateWait, where 0
// means the default and a negative value no waiting.
func clientRateWait(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// maxReplyHint ends the error of a reply over the limit: both ways to
// raise it.
const maxReplyHint = "raise it with --max-reply-bytes (" + envMaxReplyBytes + ") or the target's max_reply_bytes"

// Open files a run needs besides its scenarios: standard streams, report
// files, listeners, the runtime's own (fdReserve), and the webhook
// receiver's connections when one runs.
const fdReserve = 64

// connsPerCase is how many connections one running scenario may hold:
// one to each of the two hosts (and a WebSocket to the messaging host
// when scenarios run over messaging), and, on the embedded simulator,
// the other end of each in the same process.
func connsPerCase(embedded, messaging bool) uint64 {
	n := uint64(2)
	if messaging {
		n = 3
	}
	if embedded {
		n *= 2
	}
	return n
}

// fitParallel lowers parallel to what the open-file limit allows, and says
// so once: past the limit, connections fail with "too many open files"
// and cases error for no fault of the agent. perCase is what one running
// scenario may hold (connsPerCase, summed over a comparison's sides,
// which run at once).
func fitParallel(st *State, parallel int, perCase uint64, receiver bool) int {
	if st.OpenFileLimit == nil {
		return parallel
	}
	limit, err := st.OpenFileLimit()
	if err != nil || limit == 0 {
		return parallel
	}
	reserve := uint64(fdReserve)
	if receiver {
		reserve += webhook.DefaultMaxConns
	}
	fit := 1
	if limit > reserve+perCase {
		fit = int((limit - reserve) / perCase)
	}
	if parallel <= fit {
		return parallel
	}
	fmt.Fprintf(st.Stderr, "agenttest: --parallel %d lowered to %d: the open-file limit is %d (ulimit -n) and each scenario may hold %d connections; raise the limit to run more at once\n",
		parallel, fit, limit, perCase)
	return fit
}
