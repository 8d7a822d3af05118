package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/webhook"
)

const runUsage = `Usage: agenttest run [flags] [PATH...]

Runs the scenarios of the suite files under each PATH (default ".") against
a target and reports what the agent did. Flags may follow the paths.

The target is --target NAME from agenttest.yaml (or its default_target),
overridden field by field by AGENTTEST_BUILD_URL, AGENTTEST_RUNTIME_URL,
AGENTTEST_MESSAGING_URL, AGENTTEST_ACCOUNT_ID, AGENTTEST_AGENT_ID,
AGENTTEST_BUILD_KEY, AGENTTEST_RUNTIME_KEY and AGENTTEST_ENV. With no target
configured, or with --sim, the run uses the embedded platform simulator and
its example agents, and says so on its first line.

Precedence: flag > environment > agenttest.yaml > built-in default.

On SIGINT/SIGTERM the run stops starting cases and cancels the calls in
flight; finished cases keep their verdicts, the rest are reported as not
run, every report is still written, and the exit code is 130. A second
interrupt exits at once.

Exit codes: 0 all passed, 1 a scenario failed or errored, 2 bad usage,
configuration or suite files (nothing run), 3 internal error, 130 interrupted.
`

// runOptions are the flags of `agenttest run`.
type runOptions struct {
	// paths are the suite files and directories, as FS paths.
	paths []string
	// target names a target of the config file; config is the file.
	target string
	config string
	// env is the clientEnv for suites that name none.
	env         string
	parallel    int
	retries     int
	turnTimeout time.Duration
	// maxReplyBytes bounds a debug-chat reply (--max-reply-bytes).
	maxReplyBytes int64
	// rate caps the requests per second per key (--rate, parsed into
	// rateCap by Validate); rateWait bounds a case's waiting on rate
	// limits (--rate-wait).
	rate     string
	rateCap  float64
	rateWait time.Duration
	// tags and name filter scenarios; sel is their parsed form, set by
	// Validate.
	tags string
	name string
	sel  scenario.Selection
	// junit and json are report files written at the end of the run.
	junit    string
	json     string
	failFast bool
	seed     int64
	// sim forces the embedded simulator.
	sim     bool
	verbose bool
	noColor bool
	// confirmOptions: webhook receiver, alert gate, live safety.
	confirmOptions

	// problems found while parsing (bad environment defaults, paths).
	problems []string
}

func parseRunOptions(st *State, args []string) (*runOptions, *flags, error) {
	o := &runOptions{}
	f := newFlags(st, "run", runUsage)
	f.stringVar(&o.target, "target", "AGENTTEST_TARGET", "", "target `NAME` from the config file (default: its default_target)")
	f.stringVar(&o.config, "config", "AGENTTEST_CONFIG", "", "config `FILE` (default: ./agenttest.yaml when present)")
	f.enumVar(&o.env, "env", reply.Envs, "clientEnv `ENV` for suites that set none (default: AGENTTEST_ENV, else the target's env, else sandbox)")
	f.intVar(&o.parallel, "parallel", "AGENTTEST_PARALLEL", runner.DefaultParallel, "run at most `N` scenarios at once")
	f.intVar(&o.retries, "retries", "AGENTTEST_RETRIES", 0, "retry a failed or errored scenario up to `N` times from a fresh session (a pass on retry is flaky)")
	f.durationVar(&o.turnTimeout, "turn-timeout", "AGENTTEST_TURN_TIMEOUT", runner.DefaultTurnTimeout, "bound each platform call to `DURATION`")
	f.int64Var(&o.maxReplyBytes, "max-reply-bytes", envMaxReplyBytes, platform.DefaultMaxReplyBytes, "refuse a debug-chat reply over `BYTES`, counted after decompression (when not given: the target's max_reply_bytes)")
	f.stringVar(&o.rate, "rate", envRate, "", "send at most `N` requests per second with each key, e.g. 20 or 0.5 (when not given: the target's rate; without either, the pace is learnt from the platform's 429s)")
	f.durationVar(&o.rateWait, "rate-wait", envRateWait, platform.DefaultRateWait, "let a scenario wait at most `DURATION` in all on rate limits before it errors; 0 errors it at its first 429 (when not given: the target's rate_wait)")
	f.stringVar(&o.tags, "tags", "AGENTTEST_TAGS", "", "run scenarios whose tags match `EXPR`, e.g. '@smoke && ~@slow'")
	f.stringVar(&o.name, "name", "AGENTTEST_NAME", "", "run scenarios whose name matches `REGEX`")
	f.stringVar(&o.junit, "junit", "AGENTTEST_JUNIT", "", "write a JUnit XML report to `FILE`")
	f.stringVar(&o.json, "json", "AGENTTEST_JSON", "", "write a JSON report to `FILE`")
	f.boolVar(&o.failFast, "fail-fast", "AGENTTEST_FAIL_FAST", "stop starting scenarios after the first failure or error")
	f.int64Var(&o.seed, "seed", "AGENTTEST_SEED", 0, "seed `N` of the embedded simulator and of retry jitter")
	f.boolVar(&o.sim, "sim", "AGENTTEST_SIM", "use the embedded simulator whatever target is configured")
	f.boolVar(&o.verbose, "verbose", "", "also show the transcripts of passing scenarios")
	f.alias("v", "verbose", &o.verbose)
	f.boolVar(&o.noColor, "no-color", "", "never colour the output (NO_COLOR in the environment does the same)")
	o.confirmOptions.register(f)
	pos, err := f.parse(args)
	if err != nil {
		return nil, nil, err
	}
	o.problems = append(o.problems, f.problems...)
	var bad []string
	o.paths, bad = suitePaths(st, pos)
	o.problems = append(o.problems, bad...)
	if o.sim && o.target != "" {
		o.problems = append(o.problems, "--sim and --target exclude each other: --sim uses the embedded simulator")
	}
	return o, f, nil
}

// Validate checks the options together and returns every problem at once.
func (o *runOptions) Validate() error {
	problems := append([]string(nil), o.problems...)
	if o.parallel < 1 {
		problems = append(problems, fmt.Sprintf("--parallel must be at least 1, got %d", o.parallel))
	}
	if o.retries < 0 {
		problems = append(problems, fmt.Sprintf("--retries must not be negative, got %d", o.retries))
	}
	if o.turnTimeout <= 0 {
		problems = append(problems, fmt.Sprintf("--turn-timeout must be positive, got %s", o.turnTimeout))
	}
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
	sel, bad := parseSelection(o.tags, o.name)
	o.sel = sel
	problems = append(problems, bad...)
	problems = append(problems, o.confirmOptions.problems()...)
	if o.junit != "" && o.junit == o.json {
		problems = append(problems, fmt.Sprintf("--junit and --json both write %s", o.junit))
	}
	if len(problems) > 0 {
		return usageErrorf("run: %s\nRun 'agenttest help run' for usage.", strings.Join(problems, "\nrun: "))
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
	if r.Parallel != nil && !fl.isSet("parallel") {
		o.parallel = *r.Parallel
	}
	if r.Retries != nil && !fl.isSet("retries") {
		o.retries = *r.Retries
	}
	if r.TurnTimeout != nil && !fl.isSet("turn-timeout") {
		o.turnTimeout = *r.TurnTimeout
	}
	if r.JUnit != "" && !fl.isSet("junit") {
		o.junit = r.JUnit
	}
	if r.JSON != "" && !fl.isSet("json") {
		o.json = r.JSON
	}
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
		return err
	}
	cfg, err := loadConfig(st, st.Stderr, o.config, false)
	if err != nil {
		return err
	}
	o.applyConfig(cfg, fl)

	tgt, diags := config.Resolve(cfg, config.Selection{
		Target: o.target, Env: o.env, Sim: o.sim, Getenv: st.LookupEnv,
		Needs: config.Needs{Build: true},
	})
	if len(diags) > 0 {
		// Warnings too: allow_http is said on every run.
		report.WriteDiagnostics(st.Stderr, diags, sources{st: st, cfg: cfg}.read, false)
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
	suites, _, err := loadSuites(st, st.Stderr, o.paths, false)
	if err != nil {
		return err
	}
	if d := keyReferences(suites, cfg); d.HasErrors() {
		report.WriteDiagnostics(st.Stderr, d, sources{st: st, cfg: cfg}.read, false)
		return reported(exitUsage)
	}
	if len(suites) == 0 {
		// A wrong path in CI must not pass silently as "0 passed".
		return usageErrorf("run: no suite files under %s (a suite is a YAML file with a scenarios: key)", strings.Join(o.paths, ", "))
	}

	// The plan: the selected scenarios, which the checks before the run,
	// the webhook receiver and the runner all work from.
	plan := scenario.Select(suites, o.sel)
	if d := liveSafety(plan, o, tgt); d.HasErrors() {
		report.WriteDiagnostics(st.Stderr, d, sources{st: st, cfg: cfg}.read, false)
		return reported(exitUsage)
	}
	var embedded *embeddedSim
	if tgt.Embedded {
		sim, err := startSimulator(st, o.seed, embeddedTweaks)
		if err != nil {
			return fmt.Errorf("start the embedded simulator: %w", err)
		}
		defer sim.stop()
		sim.fill(tgt)
		embedded = sim
		fmt.Fprintln(st.Stdout, embeddedLine(tgt, sim, cfg))
	}
	if d := missingAgents(suites, tgt); d.HasErrors() {
		report.WriteDiagnostics(st.Stderr, d, sources{st: st}.read, false)
		return reported(exitUsage)
	}

	red, err := keyRedactor(tgt)
	if err != nil {
		return err
	}
	// A safety net for the console only: every value is masked before it
	// is stored, and the human view writes whole lines.
	stdout := red.Writer(st.Stdout)
	events := webhookEvents(plan)
	receiver := o.webhookListen != "" || (tgt.Embedded && len(events) > 0)
	o.parallel = fitParallel(st, o.parallel, receiver, tgt.Embedded)
	// Our own transport, so its connections are closed when the run ends:
	// a dialled but never used connection would hold up the embedded
	// simulator's graceful shutdown (net/http waits 5s for those).
	// The per-host limit follows --parallel: at the default of 64 a run at
	// --parallel 100 would be capped silently, its extra scenarios waiting
	// on the client's semaphore instead of the platform.
	maxPerHost := max(platform.DefaultMaxPerHost, o.parallel)
	defer tuneGC(st, plan)()
	transport := platform.NewTransport(maxPerHost)
	defer transport.CloseIdleConnections()
	client, err := platform.New(platform.Config{
		BuildURL: tgt.BuildURL, RuntimeURL: tgt.RuntimeURL, AccountID: tgt.AccountID,
		BuildKey: tgt.BuildKey.Reveal(), RuntimeKey: tgt.RuntimeKey.Reveal(), Now: st.Now,
		MaxPerHost: maxPerHost, AllowHTTP: tgt.AllowHTTP,
		MaxReplyBytes: o.maxReplyBytes, MaxReplyHint: maxReplyHint,
		Rate: o.rateCap, RateWait: clientRateWait(o.rateWait), RateWaitHint: rateWaitHint,
		Retry:      platform.RetryPolicy{Sleep: st.Sleep},
		HTTPClient: &http.Client{Transport: transport},
	})
	if err != nil {
		return usageErrorf("target %s: %s", tgt.Name, red.String(err.Error()))
	}

	rcv, err := startReceiver(ctx, st, &o.confirmOptions, tgt, client, events)
	if err != nil {
		return err
	}
	if rcv != nil {
		defer rcv.stop()
	}

	human := report.NewHuman(stdout, report.HumanOptions{
		TTY: st.StdoutTTY, Color: useColor(st, o.noColor), Verbose: o.verbose, Now: st.Now,
	})
	ropts := runner.Options{
		Channel:      runner.DebugChat(client),
		Parallel:     o.parallel,
		Retries:      o.retries,
		TurnTimeout:  o.turnTimeout,
		FailFast:     o.failFast,
		DefaultAgent: tgt.AgentID,
		DefaultEnv:   tgt.Env,
		Observer:     human,
		Getenv:       st.LookupEnv,
		Now:          st.Now,
		Sleep:        st.Sleep,
		Seed:         o.seed,
		Target:       runnerTarget(tgt),
		Redactor:     client.Redactor(),
	}
	confirmRunOptions(&ropts, &o.confirmOptions, tgt, client, rcv, embedded)
	res, err := runner.Run(ctx, plan, ropts)
	if err != nil {
		return fmt.Errorf("run: %s", red.String(err.Error()))
	}
	var errs []error
	if err := human.Err(); err != nil {
		errs = append(errs, err)
	}
	if o.junit != "" {
		errs = append(errs, writeReport(st, o.junit, func(w io.Writer) error { return report.WriteJUnit(w, res) }))
	}
	if o.json != "" {
		errs = append(errs, writeReport(st, o.json, func(w io.Writer) error { return report.WriteJSON(w, res) }))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	switch {
	case interrupted(ctx):
		return reported(exitInterrupted)
	case !passed(res):
		return reported(exitFailed)
	}
	return nil
}

// passed says whether every case passed (flaky counts as passing); pending
// or skipped cases left by --fail-fast or an interruption do not pass the
// run, since the suite did not say everything is fine.
func passed(r *result.Result) bool {
	if r.Interrupted {
		return false
	}
	for _, c := range r.Checks {
		if c.Status == result.Failed || c.Status == result.Errored {
			return false
		}
	}
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if c.Status == result.Failed || c.Status == result.Errored {
				return false
			}
		}
	}
	return true
}

// writeReport streams a report into its file. A run of 20,000 scenarios
// makes a JSON report of hundreds of megabytes: rendering it into memory
// first would hold it (and its growth) whole. The file appears only when
// the report is complete (State.CreateFile). Keys were masked in the
// values of the result, so the report's own structure is never filtered.
func writeReport(st *State, name string, render func(io.Writer) error) error {
	f, err := st.CreateFile(name)
	if err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := render(bw); err != nil {
		f.Abort()
		return fmt.Errorf("render report %s: %w", name, err)
	}
	if err := bw.Flush(); err != nil {
		f.Abort()
		return fmt.Errorf("write report %s: %w", name, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("write report %s: %w", name, err)
	}
	return nil
}

func runnerTarget(t *config.Target) result.Target {
	return result.Target{
		Name: t.Name, BuildURL: t.BuildURL, RuntimeURL: t.RuntimeURL,
		AccountID: t.AccountID, Env: t.Env, Embedded: t.Embedded,
	}
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

// largeRunGOGC is the collector's target of a large run (tuneGC).
const largeRunGOGC = 50

// tuneGC lowers the garbage collector's headroom for a run large enough
// that the runner keeps it lean (runner.DefaultLeanAbove), and returns
// the function that restores it. Such a run holds every transcript until
// its reports are written, so its heap is mostly live data, and the
// default GOGC=100 lets the heap grow to twice that before collecting:
// 100,000 one-turn scenarios would peak near 500 MB instead of 400. Half
// the headroom costs more collector work per allocation, in proportion to
// the run, unlike a fixed memory limit, whose collector runs continuously
// once the live heap reaches it. GOGC or GOMEMLIMIT in the environment
// leave the collector to the user.
func tuneGC(st *State, suites []*scenario.Suite) (restore func()) {
	n := 0
	for _, s := range suites {
		n += len(s.Scenarios)
	}
	_, gogc := st.LookupEnv("GOGC")
	_, limit := st.LookupEnv("GOMEMLIMIT")
	if n <= runner.DefaultLeanAbove || gogc || limit {
		return func() {}
	}
	old := debug.SetGCPercent(largeRunGOGC)
	return func() { debug.SetGCPercent(old) }
}

// envMaxReplyBytes is the variable of --max-reply-bytes.
const envMaxReplyBytes = "AGENTTEST_MAX_REPLY_BYTES"

// The variables of --rate and --rate-wait.
const (
	envRate     = "AGENTTEST_RATE"
	envRateWait = "AGENTTEST_RATE_WAIT"
)

// rateWaitHint ends the error of a case that waited its budget out.
const rateWaitHint = "raise it with --rate-wait (" + envRateWait + ") or the target's rate_wait"

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

// fitParallel lowers parallel to what the open-file limit allows, and says
// so once: past the limit, connections fail with "too many open files"
// and cases error for no fault of the agent. Each running scenario may
// hold a connection to each of the two hosts, and the embedded simulator
// holds the other end of each in the same process.
func fitParallel(st *State, parallel int, receiver, embedded bool) int {
	if st.OpenFileLimit == nil {
		return parallel
	}
	limit, err := st.OpenFileLimit()
	if err != nil || limit == 0 {
		return parallel
	}
	perCase := uint64(2)
	if embedded {
		perCase *= 2
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
