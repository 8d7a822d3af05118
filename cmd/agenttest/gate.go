package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agenttest/agenttest/internal/clock"
	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/gate"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/secret"
)

const gateUsage = `Usage: agenttest gate [flags] REPORT.json

Decides, right before a promotion, whether a JSON report (agenttest run
--json, or agenttest compare --json) still vouches for what is about to be
promoted. It passes (exit 0) only when all of these hold:

  - the report's run passed: not failed, errored, interrupted or empty
    (for a comparison: nothing regressed, and no scenario only on the
    candidate failed or errored there), and not on quarantined cases
    alone (for a comparison: it compared a scenario not quarantined);
  - the report holds together: its status is the one its cases give
    (for a comparison: its pairs and sides), and it records a deployment
    of every agent and environment its cases ran in;
  - its run started no longer ago than --max-age (a merged report's run
    starts with its earliest shard), and ended no more than 5m ahead of
    the gate's clock;
  - it tested the platform of the gate's target (build URL, workspace),
    and every agent in the target's environment; with --agent, it
    tested each agent named there, the agents the pipeline promotes,
    and the gate vouches for those alone (the checks below of another
    agent's deployment do not hold up theirs);
  - each agent it vouches for (every agent it records a deployment of,
    or those of --agent) had a case that gates: not every one
    quarantined, skipped or checking nothing of the agent (for a
    comparison: compared);
  - with --no-flaky, no case of an agent it vouches for passed only on
    a retry;
  - it tested the whole selection: not one shard (run --shard K/N), not
    a --rerun-failed run, not a merge --force of reports that are not
    every shard of one selection on one target, not a run narrowed by
    --tags, --name or FILE:LINE unless the gate's --tags and --name
    state that filter (for a comparison: neither the comparison nor its
    candidate report);
  - with --suite, it ran every scenario that a run of those paths
    selects now (by the gate's --tags and --name, skipped ones aside) of
    the agents promoted (--agent; without it, every agent): a case
    is matched to a scenario by its file, from the working directory,
    and its name (for a comparison: its candidate's cases);
  - for every agent and environment it tested, it recorded the active
    deployment before the first case and after the last, unchanged;
  - the deployment active now in each of those environments is the one
    it recorded.

Otherwise it refuses (exit 1) and says every reason. Its first lines say
what the report tested (its cases by status; for a comparison, its
scenarios by class too, and the baseline it compared with), the cases
that passed only on a retry and those that checked nothing, by name,
each deployment it checked, the paths the run was given, and with
--suite how many of its scenarios the report ran. It calls nothing
but GET {build_url}/v1/agents/{agentId}/deployments/active, once per
agent and environment. The target is chosen as for run: --target NAME
from agenttest.yaml (or its default_target), overridden field by field by
the AGENTTEST_* variables; with none, the embedded simulator (started
with --seed, as run starts it). Promoting stays the platform's own
command: run it right after the gate, with the deployment id the gate
printed.

Exit codes:
  0    the report vouches for the deployments active now: promote them
  1    refused: each reason is said (a platform that answers the read
       of a deployment with 404, or for another environment than
       asked, is one: no retry of the gate would read it)
  2    bad usage or configuration, a file that is not an agenttest JSON
       report, a --suite that does not load (as lint says), or the
       platform refused the build key
  4    the deployments active now could not be read (the platform or the
       network failed): nothing else was wrong; run the gate again
  130  interrupted (SIGINT/SIGTERM) before it decided
`

// gateOptions are the flags of `agenttest gate`.
type gateOptions struct {
	target, config string
	// maxAge is the oldest a report may be.
	maxAge time.Duration
	seed   int64
	sim    bool
	report string
	// agents are the agents the pipeline promotes: the report must
	// have tested each in the target's environment.
	agents []string
	// tags and name state the filter the pipeline's run selects by: a
	// report narrowed by another, or at FILE:LINE, is refused.
	tags, name string
	// noFlaky refuses a report in which a case of an agent promoted
	// passed only on a retry.
	noFlaky bool
	// suites are the suite paths the pipeline's run is given: a report
	// that did not run every scenario a run of them selects now (by
	// tags and name), of the agents promoted, is refused.
	suites []string
}

// defaultMaxAge is the oldest report the gate accepts by default: a
// nightly pipeline's, not last week's.
const defaultMaxAge = 24 * time.Hour

// gateFlags registers gate's flags on a new flag set, parsing nothing
// (see commandFlags).
func gateFlags(st *State, o *gateOptions) *flags {
	f := newFlags(st, "gate", gateUsage)
	f.stringVar(&o.target, "target", "AGENTTEST_TARGET", "", "target `NAME` from the config file (default: its default_target)")
	f.fileVar(&o.config, "config", "AGENTTEST_CONFIG", "config `FILE` (default: ./agenttest.yaml when present)", withoutConfig)
	f.durationVar(&o.maxAge, "max-age", "AGENTTEST_MAX_AGE", defaultMaxAge, "refuse a report whose run started more than `DURATION` ago")
	f.int64Var(&o.seed, "seed", "AGENTTEST_SEED", 0, "seed `N` of the embedded simulator (the run's --seed)")
	f.boolVar(&o.sim, "sim", "AGENTTEST_SIM", "use the embedded simulator whatever target is configured")
	f.listVar(&o.agents, "agent", "AGENTTEST_GATE_AGENT", "the agents the pipeline promotes, `IDS` as the suites name them (repeat the flag or separate with commas): refuse a report that did not test each in the target's environment")
	f.tagsVar(&o.tags, "tags", "AGENTTEST_TAGS", "the `EXPR` the pipeline's run selects scenarios by, exactly as run was given it: a report narrowed by --tags, --name or FILE:LINE is refused unless these state its filter")
	f.stringVar(&o.name, "name", "AGENTTEST_NAME", "", "the `TEXT` of run --name the pipeline's run selects scenarios by (see --tags)")
	f.listVar(&o.suites, "suite", "AGENTTEST_GATE_SUITE", "the suite `PATHS` the pipeline's run is given, as run is given them (repeat the flag or separate with commas): refuse a report that did not run every scenario a run of them selects now (by --tags and --name, skipped ones aside) of the agents promoted")
	f.boolVar(&o.noFlaky, "no-flaky", "AGENTTEST_GATE_NO_FLAKY", "refuse a report in which a case of an agent promoted passed only on a retry (flaky)")
	return f
}

func cmdGate(ctx context.Context, st *State, args []string) error {
	o := &gateOptions{}
	f := gateFlags(st, o)
	pos, err := f.parse(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	problems := append([]string(nil), f.problems...)
	switch {
	case len(pos) == 0:
		problems = append(problems, "name the JSON report to gate on")
	case len(pos) > 1:
		problems = append(problems, fmt.Sprintf("one report at a time, got %d: %s", len(pos), strings.Join(pos, " ")))
	default:
		o.report = pos[0]
	}
	if o.maxAge <= 0 {
		problems = append(problems, fmt.Sprintf("--max-age must be positive, got %s", o.maxAge))
	}
	if o.sim && o.target != "" {
		problems = append(problems, "--sim and --target exclude each other: --sim uses the embedded simulator")
	}
	// With --suite, --tags and --name select its scenarios as run's do,
	// and are read as run reads them.
	sel := &selection{cmd: "gate", flags: f, tags: o.tags, name: o.name}
	if len(o.suites) > 0 {
		problems = append(problems, sel.validate()...)
	}
	if len(problems) > 0 {
		return f.attribute(usageProblems("gate", problems...))
	}
	defer guardInGitHubActions(st)()
	ev, err := readEvidence(st, o.report)
	if err != nil {
		// The problem may quote the report (a status, a schema), which
		// anyone may have edited: the error is masked as it ends the
		// command, with the keys of the config file --config names
		// (maskMessage), though the gate has not read it yet.
		return err
	}

	cfg, err := loadConfig(st, st.Stderr, f, o.config, false)
	if err != nil {
		return err
	}
	tgt, diags := config.Resolve(cfg, config.Selection{Target: o.target, TargetFrom: f.setBy("target"), Sim: o.sim, Getenv: st.LookupEnv, Needs: config.Needs{Build: true, BuildKeyOnly: true}})
	if len(diags) > 0 {
		sources{st: st, cfg: cfg}.write(st.Stderr, diags, false)
	}
	if diags.HasErrors() {
		return reported(exitUsage)
	}
	var suite *gate.Suite
	if len(o.suites) > 0 {
		if suite, err = gateSuite(st, cfg, sel, suitePaths(o.suites), tgt); err != nil {
			return err
		}
	}
	if tgt.Embedded {
		sim, err := startSimulator(st, o.seed)
		if err != nil {
			return fmt.Errorf("start the embedded simulator: %w", err)
		}
		defer sim.stop()
		sim.fill(tgt)
	}
	red, err := commandRedactor(st, cfg, tgt, "", "")
	if err != nil {
		return err
	}
	_, client, closeClient, err := newClient(st, tgt, red, targetLimits(tgt, platform.DefaultMaxPerHost))
	if err != nil {
		return err
	}
	defer closeClient()

	// The environment the pipeline promotes from is the target's, as a
	// run of the target would test it: sandbox when it names none.
	// The gate compares platforms: a seed names none.
	gt := runnerTarget(tgt, 0)
	gt.Env = cmp.Or(gt.Env, runner.DefaultEnv)
	gopts := gate.Options{Now: now(st), MaxAge: o.maxAge, Target: gt, Agents: o.agents, Tags: o.tags, Name: o.name, NoFlaky: o.noFlaky, Suite: suite}
	active, refused := readActive(ctx, client, gate.Needed(ev, gopts), configTurnTimeout(cfg), st.Now, st.AfterFunc)
	if ctx.Err() != nil {
		// Interrupted while reading: the reads it cut short are no
		// platform failure to try again after (exit 4), and the gate
		// decided nothing.
		return &exitError{code: exitInterrupted, msg: "gate: interrupted before the deployments active now were read: nothing was decided"}
	}
	if refused != nil {
		// Said as run says it, naming the variable that holds the key
		// (the promotion job's secret), never the key.
		msg := red.String(refused.Error())
		if stop := runner.PlatformStop(refused, msg); stop != nil {
			msg = stopMessage(stop, tgt)
		}
		return usageErrorf("gate: %s", red.String(msg))
	}
	d := gate.Check(ev, gopts, active)
	// The lines quote the report (a file anyone may have edited) and the
	// platform's answers: printable, as the problems are.
	var out bytes.Buffer
	head := fmt.Sprintf("%s: %s %s", o.report, ev.What, ev.Status)
	if !ev.Concluded.IsZero() {
		// Each way from its own side: Sub saturates, and the negation of
		// the most negative duration is itself.
		if ago := now(st).Sub(ev.Concluded).Round(time.Second); ago >= 0 {
			head += fmt.Sprintf(", ended %s (%s ago)", ev.Concluded.UTC().Format(time.RFC3339), ago)
		} else {
			head += fmt.Sprintf(", ended %s (%s ahead of this clock)", ev.Concluded.UTC().Format(time.RFC3339), ev.Concluded.Sub(now(st)).Round(time.Second))
		}
	}
	// A report agenttest wrote holds no key, but one edited may: the
	// lines that quote it are masked as the problems are.
	out.WriteString(escape.Controls(red.String(head), "\t") + "\n")
	out.WriteString("  " + escape.Controls(red.String(ev.Tested()), "\t") + "\n")
	if sel := ev.Selected(); sel != "" {
		out.WriteString("  " + escape.Controls(red.String(sel), "\t") + "\n")
	}
	// A green that rests on a retry, or on a case that checks nothing,
	// is named: a count alone does not say which agent it was.
	writeNamed(&out, red, "flaky, passed only on a retry:", ev.Flaky)
	writeNamed(&out, red, "checked nothing (passed whenever the agent answered):", ev.Unchecked)
	if ev.Baseline != "" {
		out.WriteString("  against the baseline " + escape.Controls(red.String(ev.Baseline), "\t") + "\n")
	}
	for _, line := range d.Checked {
		out.WriteString("  " + escape.Controls(red.String(line), "\t") + "\n")
	}
	if given := ev.Given(); given != "" {
		out.WriteString("  " + escape.Controls(red.String(given), "\t") + "\n")
	}
	for _, line := range d.Suite {
		out.WriteString("  " + escape.Controls(red.String(line), "\t") + "\n")
	}
	if tgt.Embedded {
		// A promotion job whose target was left unset gates a report
		// of the embedded simulator on the simulator: say so before a
		// "passed" that vouches for no platform's deployment.
		why := ", as no platform is configured (--target, or AGENTTEST_BUILD_URL)"
		if o.sim {
			why = " (--sim)"
		}
		out.WriteString("  on the embedded simulator" + why + ": its deployments are no platform's\n")
	}
	// A reader of the console that went away (| head) does not change
	// the verdict: the exit code is what the promote step acts on.
	if d.Passed() {
		out.WriteString("gate: passed: the report vouches for the deployments active now\n")
		return consoleErr(st.Stdout.Write(out.Bytes()))
	}
	out.WriteString("gate: refused\n")
	if err := consoleErr(st.Stdout.Write(out.Bytes())); err != nil {
		return err
	}
	lines := make([]string, len(d.Reasons))
	for i, r := range d.Reasons {
		lines[i] = "gate: " + red.String(r)
	}
	code := exitFailed
	if d.Unreadable {
		code = exitErrored
	}
	return &exitError{code: code, msg: strings.Join(lines, "\n")}
}

// gateSuite loads the suite the pipeline means (--suite) as run loads it
// (diagnostics printed, exit 2 on errors) and selects its scenarios by
// the gate's --tags and --name through run's one selection: what a run of
// paths would run now, each with the agent a run of the gate's target
// gives it. Report files and scenarios are matched by where they are
// from the working directory, as --rerun-failed matches them.
func gateSuite(st *State, cfg *config.File, sel *selection, paths []string, tgt *config.Target) (*gate.Suite, error) {
	_, plan, err := sel.plan(st, cfg, paths, true)
	if err != nil {
		return nil, err
	}
	skip := map[diag.Pos]bool{}
	for _, su := range plan {
		for _, sc := range su.Scenarios {
			skip[sc.Pos] = sc.Skip != ""
		}
	}
	out := &gate.Suite{Paths: paths, Same: func(file string) string { return absArg(st, file) }}
	for _, file := range runner.Plan(plan, runner.Options{DefaultAgent: tgt.AgentID}) {
		for _, c := range file.Cases {
			out.Scenarios = append(out.Scenarios, gate.Scenario{Pos: c.Pos, Name: c.Name, Agent: c.Agent, Skipped: skip[c.Pos]})
		}
	}
	return out, nil
}

// writeNamed writes the cases the gate names under head, one a line,
// escaped and masked as the other lines quoting the report are; nothing
// when there are none.
func writeNamed(out *bytes.Buffer, red *secret.Redactor, head string, cases []gate.Named) {
	if len(cases) == 0 {
		return
	}
	out.WriteString("  " + head + "\n")
	for _, c := range cases {
		out.WriteString("    " + escape.Controls(red.String(c.Line), "\t") + "\n")
	}
}

// readEvidence reads the report the gate weighs: a report of run, or a
// comparison, which vouches for its candidate. A file that is neither is
// a usage error.
func readEvidence(st *State, path string) (gate.Evidence, error) {
	data, err := readArg(st, path)
	if err != nil {
		return gate.Evidence{}, usageProblems("gate", fmt.Sprintf("%s: %v", path, err))
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &head) == nil && head.Schema == compare.SchemaV1 {
		c, err := decodeJSON(data, compare.ReadJSON)
		if err == nil {
			err = sameMember(data)
		}
		if err != nil {
			return gate.Evidence{}, fileProblems("gate", inFile(path, err))
		}
		return gate.FromComparison(path, c), nil
	}
	rep, err := decodeJSON(data, report.ReadJSON)
	if err == nil {
		err = sameMember(data)
	}
	if err != nil {
		return gate.Evidence{}, fileProblems("gate", inFile(path, err))
	}
	return gate.FromRun(path, rep.Result, rep.Status), nil
}

// gatedMembers are the objects of a report (or a comparison) whose
// members the gate's verdict rests on and a pipeline reads after it: the
// document, its run, target, shard and rerun, and each deployment (of a
// comparison, its candidate's), whose id the promote step takes with
// another tool (jq, docs/promoting.md).
var gatedMembers = [][]any{
	{}, {"run"}, {"target"}, {"shard"}, {"rerun"}, {"filter"}, {"deployments", jsonkind.AnyIndex},
	{"candidate"}, {"candidate", "run"}, {"candidate", "target"}, {"candidate", "shard"}, {"candidate", "rerun"}, {"candidate", "filter"},
	{"candidate", "deployments", jsonkind.AnyIndex},
}

// sameMember refuses a report that names a member twice in one of the
// objects the gate weighs (names compared ignoring case, as agenttest
// reads them): agenttest would read one value, and jq, which the promote
// step uses to take the deployment id, the other, so the gate would
// vouch for a deployment that is not the one promoted.
func sameMember(data []byte) error {
	return jsonProblem(data, jsonkind.SameMember(data, gatedMembers...))
}

// configTurnTimeout is the turn timeout of the config file's run section,
// or the runner's default: the bound of each call of a command that has
// no --turn-timeout of its own (gate, webhooks listen).
func configTurnTimeout(cfg *config.File) time.Duration {
	if cfg != nil && cfg.Run.TurnTimeout != nil {
		return *cfg.Run.TurnTimeout
	}
	return runner.DefaultTurnTimeout
}

// readActive reads the deployments active now, a few at once. A refused
// key is returned apart: it is a configuration problem (exit 2), not a
// verdict on the report. Each read is bounded by timeout (the config's
// run turn_timeout), as a run bounds each of its calls: a platform that
// takes the request and never answers would otherwise hold the promote
// step until an interrupt or the CI job's own timeout ended it.
func readActive(ctx context.Context, client *platform.Client, keys []gate.Key, timeout time.Duration, now func() time.Time, after clock.AfterFunc) (map[gate.Key]gate.Active, error) {
	out := make(map[gate.Key]gate.Active, len(keys))
	var (
		mu      sync.Mutex
		refused error
		g       errgroup.Group
	)
	g.SetLimit(8)
	for _, k := range keys {
		g.Go(func() error {
			dep, err := runner.Bounded(ctx, timeout, now, after, func(ctx context.Context) (*platform.Deployment, error) {
				return client.ActiveDeployment(ctx, k.Agent, k.Env)
			})
			_, otherEnv := errors.AsType[*platform.EnvironmentMismatchError](err)
			a := gate.Active{Err: err, NotServed: platform.IsNotFound(err), OtherEnv: otherEnv}
			if dep != nil {
				a.ID = dep.ID
			}
			mu.Lock()
			defer mu.Unlock()
			if platform.IsAuth(err) && refused == nil {
				refused = err
			}
			out[k] = a
			return nil
		})
	}
	_ = g.Wait() // the reads return nil: a failure is the key's Active
	return out, refused
}
