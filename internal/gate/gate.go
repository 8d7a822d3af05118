// Package gate decides whether a report still vouches for what a pipeline
// is about to promote: `agenttest gate REPORT.json`, the step right before
// the platform's promote command. It is pure: the command reads the report
// and the deployments active now, and Check weighs them.
//
//	ev := gate.FromRun(path, rep.Result, rep.Status) // a report of agenttest run
//	active := map[gate.Key]gate.Active{...}          // read now, per agent and env
//	d := gate.Check(ev, gate.Options{Now: now, MaxAge: 24 * time.Hour}, active)
//	if !d.Passed() { ... d.Reasons ... }
//
// The gate passes only when every one of these holds: the run (or the
// comparison) passed, as its cases (a comparison's pairs and sides) say
// when its verdict is derived again, on cases not quarantined that check
// something of the agent, of every agent it vouches for (with NoFlaky,
// none of which passed only on a retry); it concluded no longer ago than MaxAge, and no
// more than MaxSkew ahead of Now; it ran
// against the same platform and environment as the gate's target, over
// its whole selection (not one shard, not a rerun of failures, not a
// merge --force of reports that are not every shard of one selection;
// for a comparison, neither its own nor its candidate's); it recorded deployment
// evidence for every agent and environment its cases ran in, unchanged
// during the run; and
// the deployment active now in each of those environments is the one it
// tested.
package gate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// Evidence is what the gate reads of a report.
type Evidence struct {
	// Path names the report in messages.
	Path string
	// What is what the report is the verdict of: "run" or "comparison".
	What string
	// Status is the report's verdict, as it states it; Passed is true
	// when that verdict lets a promotion go ahead.
	Status string
	Passed bool
	// Why says what a status other than passed means, for the reason.
	Why string
	// Started is when the run started, Concluded when it ended (its
	// start plus its duration). The report is as old as its oldest
	// result, so its age counts from Started: a merged report starts
	// with its earliest shard, and a shard left over from an earlier run
	// (a stale CI artifact) must not stay fresh by the others' end.
	Started, Concluded time.Time
	// Target is the platform the report's run talked to.
	Target result.Target
	// Deployments are the report's evidence.
	Deployments []*result.Deployment
	// Shard is set when the report is one shard's (run --shard K/N): it
	// tested a share of its selection, and only the merged report of
	// every shard vouches for the whole.
	Shard *result.Shard
	// Rerun is set when the report is of a --rerun-failed run, or is a
	// comparison whose sides ran with --rerun-failed: it tested an
	// earlier run's failures again, not the selection.
	Rerun *result.Rerun
	// ForcedMerge is set when the report is one agenttest merge --force
	// wrote of reports that were not every shard of one selection on one
	// target: it says what the merge overrode. The run is of no one
	// selection.
	ForcedMerge []string
	// Filter is set when --tags, --name or FILE:LINE arguments narrowed
	// the run (a comparison: the scenarios compared) to a subset of its
	// files' scenarios: it vouches for that subset alone, and only a gate
	// told the same filter (Options.Tags, Options.Name) accepts it.
	Filter *result.Filter
	// Candidate is set for a comparison whose candidate is a stored
	// report (a side of kind report): what the gate refuses of that
	// report alone, it refuses through the comparison too.
	Candidate *StoredRun
	// Cases counts the cases the report tested by status (for a
	// comparison, its candidate's); Pairs, for a comparison, counts its
	// pairs by class. They say what the evidence is the verdict of
	// (Tested), so that an empty or tiny selection shows in a CI log.
	Cases map[result.Status]int
	Pairs *compare.Counts
	// Baseline, for a comparison, says what its candidate was compared
	// with (compare.Side.Line): a reviewer reads whether that was live,
	// and how old, before a promotion the comparison vouches for.
	Baseline string
	// Quarantined counts the cases (a comparison: its candidate's) that
	// ran under a quarantine that holds: they do not gate the run,
	// whatever their outcome, and are not in Cases.
	Quarantined int
	// Stopped counts the cases a stop of the run left unrun (--fail-fast,
	// a refused key, ...: result.IsStopReason), which the run's summary
	// says as "not run (the run stopped)", not as skipped: they are not
	// in Cases.
	Stopped int
	// Gating counts what the verdict rests on: the cases that ran and
	// are under no quarantine (a comparison: its pairs under no
	// quarantine compared on both sides). A report whose every case is
	// quarantined passes its run, and vouches for nothing.
	Gating int
	// GatingOf counts Gating by the agent and environment of each case
	// (a comparison: of its candidate's): each deployment the gate
	// vouches for needs a case of its own that gates.
	GatingOf map[Key]int
	// Derived is the verdict the report's cases give (for a comparison,
	// its pairs and sides), derived again as the run derived it, with
	// what decided it (DerivedWhy). A report agenttest wrote states that
	// very verdict; one whose Status differs was edited, or written by
	// something else, and cannot vouch for anything. Empty when not
	// derived (an Evidence built by hand).
	Derived    result.RunStatus
	DerivedWhy string
	// Unrecorded lists, as "AGENT in ENV", the agents and environments
	// the report's cases ran in and of which it records no deployment:
	// a run records one for each, so its evidence was cut.
	Unrecorded []string
	// Unbased lists, as "FILE:LINE NAME", the scenarios of a comparison
	// that failed or errored on the candidate and are not on the
	// baseline: no baseline says live fails them too, so nothing tells
	// a known failure from a regression, and the comparison, which
	// regresses only what the baseline passed, passes over them.
	Unbased []string
	// Flaky names the cases (a comparison: its candidate's) that passed
	// only on a retry, not quarantined: a green that a failed or errored
	// attempt came before, which the gate lists, and refuses with
	// Options.NoFlaky.
	Flaky []Named
	// Unchecked names the cases that ran and check nothing of the agent
	// (result.Case.Unchecked; a comparison: its pairs compared whose
	// candidate's case is such, compare.Outcome.Unchecked), not
	// quarantined: they pass whenever the agent answers, so they are
	// listed and do not gate (not in Gating).
	Unchecked []Named
	// Paths are the suite paths the run (a comparison: its candidate's)
	// was given (result.Result.Paths), for the header; empty in a report
	// written before runs recorded them.
	Paths []string
	// Held are the cases the report holds (a comparison: its
	// candidate's), by file and name, which the gate matches to the
	// scenarios of the suite the pipeline means (Options.Suite).
	Held []Ref
}

// Ref is a case of a report as the gate matches it to a scenario of the
// suite the pipeline means: its file as the report records it, its name
// (examples row included), and its status there.
type Ref struct {
	File, Name string
	Status     result.Status
}

// Named is a case the gate names, with the agent and environment it ran
// in: Line is "FILE:LINE:COL NAME", with what more the list says of it.
type Named struct {
	Key
	Line string
}

// StoredRun is the run of a stored report a comparison's side read.
type StoredRun struct {
	// Path is the report as the comparison names it.
	Path string
	// Shard and Rerun are that report's run's (nil for a run of its
	// whole selection).
	Shard       *result.Shard
	Rerun       *result.Rerun
	ForcedMerge []string
	Filter      *result.Filter
}

// Key names a deployment: an agent in an environment.
type Key struct{ Agent, Env string }

// Active is the deployment active now in an environment, as the command
// read it: its id, or the error of the read. NotServed marks a platform
// that answered 404; OtherEnv, one that answered with the deployment of
// another environment than asked (it ignores ?environment=; Err says
// which). Both are answers, not failed reads: reading again gets them
// again, so the gate refuses rather than asks to be run again.
type Active struct {
	ID        string
	Err       error
	NotServed bool
	OtherEnv  bool
}

// Options are the gate's settings.
type Options struct {
	// Now is the time the gate runs; MaxAge the oldest a report may be.
	Now    time.Time
	MaxAge time.Duration
	// Target is the platform the gate reads now. A report of another
	// platform (build URL, account) cannot vouch for it, nor a report of
	// another environment than Target.Env (when set): the environment
	// the pipeline promotes from.
	Target result.Target
	// Agents are the agents the pipeline promotes (gate --agent), as the
	// suites name them: a report that did not test one of them in
	// Target.Env vouches for the others, not for it. None: the gate
	// vouches for whatever agents the report tested.
	Agents []string
	// Tags and Name are the filter the pipeline's run selects its
	// scenarios by (gate --tags, --name), as the run was given them: a
	// report narrowed otherwise, or at FILE:LINE, is refused.
	Tags, Name string
	// NoFlaky refuses a report in which a case of an agent promoted
	// passed only on a retry (gate --no-flaky).
	NoFlaky bool
	// Suite, when set, is the suite the pipeline means (gate --suite): a
	// report that did not run each of its scenarios of the agents
	// promoted (every agent, without Agents) is refused.
	Suite *Suite
}

// Suite is the suite the pipeline means, as a run of it would select it
// now: the scenarios of its paths that the gate's Tags and Name keep,
// through the one selection run uses.
type Suite struct {
	// Paths are the paths as the gate was given them, for messages.
	Paths []string
	// Scenarios are the selected scenarios, in file and line order.
	Scenarios []Scenario
	// Same names a file, as a report records it or a scenario's Pos
	// names it, by one key, so that two spellings of one file
	// (./suites/a.yaml and suites/a.yaml, an absolute path) match; nil
	// takes the paths as they are.
	Same func(file string) string
}

// Scenario is a scenario of the Suite.
type Scenario struct {
	Pos  diag.Pos
	Name string
	// Agent is the agent a run of the gate's target gives it (the
	// scenario's, its suite's, else the target's agent id); empty when
	// none names one, and then asked for whatever agents are promoted.
	Agent string
	// Skipped: the scenario says skip: (or @skip), and a run does not
	// run it: the gate asks for it nowhere.
	Skipped bool
}

// MaxListed is the most scenarios a reason of the gate names one by one;
// it says how many more there are.
const MaxListed = 10

// Decision is the gate's verdict: the reasons it refuses (none: it
// passes), and per deployment one line of what it checked.
type Decision struct {
	Reasons []string
	// Checked has one line per deployment of the report.
	Checked []string
	// Unreadable is true when the only reasons are deployments that could
	// not be read now (the platform or the network failed): the gate
	// could not decide, and may be run again.
	Unreadable bool
	// Suite says, for the header, how much of the suite the pipeline
	// means (Options.Suite) the report ran, then what it did not run (a
	// heading, then the scenarios indented) and the cases it holds of no
	// scenario of the suite; empty without a Suite.
	Suite []string
}

// Passed reports whether the gate lets the promotion go ahead.
func (d Decision) Passed() bool { return len(d.Reasons) == 0 }

// Needed lists the deployments to read now: those the report has
// evidence of, of the agents promoted (o.Agents; all when none). The
// others are refused without a read, or not vouched for.
func Needed(ev Evidence, o Options) []Key {
	var out []Key
	for _, d := range ev.Deployments {
		if d != nil && d.Verified() && o.promotes(d.Agent) {
			out = append(out, Key{d.Agent, d.Env})
		}
	}
	return out
}

// promotes reports whether the gate vouches for agent: one of Agents, or
// any agent when Agents names none.
func (o Options) promotes(agent string) bool {
	return len(o.Agents) == 0 || slices.Contains(o.Agents, agent)
}

// Check weighs a report against the deployments active now.
func Check(ev Evidence, o Options, active map[Key]Active) Decision {
	var d Decision
	refuse := func(format string, args ...any) { d.Reasons = append(d.Reasons, fmt.Sprintf(format, args...)) }
	if !ev.Passed {
		why := ""
		if ev.Why != "" {
			why = ": " + ev.Why
		}
		refuse("the %s did not pass: its status is %s%s", ev.What, ev.Status, why)
	}
	if ev.Derived != "" && string(ev.Derived) != ev.Status {
		why := ""
		if ev.DerivedWhy != "" {
			why = " (" + ev.DerivedWhy + ")"
		}
		of := "cases"
		if ev.What == whatComparison {
			of = "pairs and sides"
		}
		refuse("the report says its %s %s, but its %s say %s%s: the status does not follow from the report (an edited report, or one another tool wrote); run the tests again",
			ev.What, ev.Status, of, ev.Derived, why)
	}
	if n := len(ev.Unbased); n > 0 {
		refuse("%d %s only on the candidate failed or errored there (%s): the baseline did not run %s, so nothing says live fails %s too, and the comparison passed over %s; compare with a baseline that runs every scenario of the candidate",
			n, plural(n, "scenario", "scenarios"), strings.Join(ev.Unbased, "; "), plural(n, "it", "them"), plural(n, "it", "them"), plural(n, "it", "them"))
	}
	for _, u := range ev.Unrecorded {
		refuse("%s: cases ran there, but the report records no deployment of it (a run records one for every agent and environment its cases talk to): an edited report; run the tests again", u)
	}
	// ahead is measured from the gate's clock: Sub saturates, and the
	// negation of the most negative duration (an end in year 9999, from
	// now) is itself, which once made such a report fresh.
	switch ahead := ev.Concluded.Sub(o.Now); {
	case ev.Started.IsZero() || ev.Concluded.IsZero():
		refuse("the report does not say when its run ended")
	case o.Now.Sub(ev.Started) > o.MaxAge:
		refuse("the report's oldest results are %s old (its run started %s and ended %s), older than --max-age %s: run the tests again",
			roundAge(o.Now.Sub(ev.Started)), ev.Started.UTC().Format(time.RFC3339), ev.Concluded.UTC().Format(time.RFC3339), o.MaxAge)
	case ahead > MaxSkew:
		refuse("the report's run ended %s, %s after the gate's clock (more than the %s two clocks may differ): its age cannot be told, and a date ahead would keep it fresh; check the clock of the machine that ran it, and run the tests again",
			ev.Concluded.UTC().Format(time.RFC3339), roundAge(ahead), MaxSkew)
	}
	if p := platformMismatch(ev.Target, o.Target); p != "" {
		refuse("%s", p)
	}
	if sh := ev.Shard; sh != nil && sh.Total > 1 {
		refuse("the report is shard %d of %d: it tested its share of the selection's %d scenarios, not all of them; gate the report agenttest merge writes of every shard", sh.Index, sh.Total, sh.Selected)
	}
	if rr := ev.Rerun; rr != nil {
		if ev.What == whatComparison {
			refuse("the comparison reruns %s: it compared those again, not the whole selection; gate a comparison of the whole selection", rr.Cases(rr.Of))
		} else {
			refuse("the report reruns %s: it tested those again, not the whole selection; gate the report of a full run", rr.Cases(rr.Of))
		}
	}
	if f := ev.ForcedMerge; len(f) > 0 {
		refuse("the report was merged with --force of reports that are not every shard of one selection on one target (%s): it vouches for no one selection; gate the report agenttest merge writes, without --force, of every shard of one run", strings.Join(f, "; "))
	}
	if why := o.unstatedFilter(ev.Filter); why != "" {
		refuse("the %s %s; gate a %s of the whole selection, or state the filter the pipeline intends with gate --tags and --name", ev.What, why, ev.What)
	}
	if c := ev.Candidate; c != nil {
		if why := o.unstatedFilter(c.Filter); why != "" {
			refuse("the comparison's candidate, report %s, %s; compare with the report of a run of the whole selection, or state the filter the pipeline intends with gate --tags and --name", c.Path, why)
		}
		if sh := c.Shard; sh != nil && sh.Total > 1 {
			refuse("the comparison's candidate, report %s, is shard %d of %d: it tested its share of the selection's %d scenarios, not all of them; compare with the report agenttest merge writes of every shard", c.Path, sh.Index, sh.Total, sh.Selected)
		}
		if rr := c.Rerun; rr != nil {
			refuse("the comparison's candidate, report %s, reruns %s: it tested those again, not the whole selection; compare with the report of a full run", c.Path, rr.Cases(rr.Of))
		}
		if f := c.ForcedMerge; len(f) > 0 {
			refuse("the comparison's candidate, report %s, was merged with --force of reports that are not every shard of one selection on one target (%s); compare with the report agenttest merge writes, without --force, of every shard of one run", c.Path, strings.Join(f, "; "))
		}
	}
	if o.NoFlaky {
		var lines []string
		for _, f := range ev.Flaky {
			if o.promotes(f.Agent) {
				lines = append(lines, f.Line)
			}
		}
		if n := len(lines); n > 0 {
			refuse("%d %s passed only on a retry (--no-flaky): %s; run the tests again, or gate without --no-flaky",
				n, plural(n, "case", "cases"), strings.Join(lines, "; "))
		}
	}
	if o.Suite != nil {
		var why string
		d.Suite, why = o.Suite.weigh(ev, o)
		if why != "" {
			refuse("%s", why)
		}
	}
	if ev.Passed && ev.Gating == 0 {
		refuse("%s", ev.nothingGated())
	}
	switch {
	case len(ev.Deployments) > 0:
	case ev.What == whatComparison:
		refuse("the comparison records no deployment of its candidate: a candidate report written before agenttest recorded deployments, or a candidate that tested no agent; compare again with a candidate run that records them")
	default:
		refuse("the report records no deployment: it was written before agenttest recorded deployments, or by a run that tested no agent; run the tests again")
	}
	unreadable, other := 0, len(d.Reasons)
	for _, dep := range ev.Deployments {
		if dep == nil {
			continue
		}
		what := dep.Agent + " in " + dep.Env
		if !o.promotes(dep.Agent) {
			// --agent names the agents promoted: another's deployment,
			// replaced or unreadable now, does not hold up theirs. A
			// change during the run still errored the run itself.
			d.Checked = append(d.Checked, what+": tested "+cmp.Or(dep.ID, "no deployment")+", not promoted (--agent): not checked now")
			continue
		}
		switch {
		case dep.Changed():
			refuse("%s", dep.ChangeMessage())
			d.Checked = append(d.Checked, what+": changed during the run ("+dep.ID+" → "+dep.After+")")
			continue
		case dep.ID == "":
			refuse("%s: the report holds no deployment evidence: %s", what, dep.Note)
			d.Checked = append(d.Checked, what+": no evidence")
			continue
		case !dep.Verified():
			refuse("%s: deployment %s was not confirmed after the run's last case (%s)", what, dep.ID, dep.Note)
			d.Checked = append(d.Checked, what+": tested "+dep.ID+", not confirmed after the run")
			continue
		}
		a, ok := active[Key{dep.Agent, dep.Env}]
		switch {
		case !ok:
			refuse("%s: the deployment active now was not read", what)
		case a.NotServed:
			refuse("%s: the platform answers 404 to GET /v1/agents/{agentId}/deployments/active now (it does not serve the endpoint, or does not know the agent): nothing ties the report to what would be promoted", what)
		case a.OtherEnv:
			refuse("%s: the platform answers for another environment now: %v: nothing ties the report to the %s deployment that would be promoted, and no retry of the gate would",
				what, a.Err, dep.Env)
			d.Checked = append(d.Checked, what+": tested "+dep.ID+", active now unknown (the platform answered for another environment)")
			continue
		case a.Err != nil:
			unreadable++
			refuse("%s: cannot read the deployment active now: %v", what, a.Err)
			d.Checked = append(d.Checked, what+": tested "+dep.ID+", active now unknown")
			continue
		case a.ID != dep.ID:
			refuse("%s: the report tested deployment %s, but %s is active now: test the deployment you promote", what, dep.ID, a.ID)
			d.Checked = append(d.Checked, what+": tested "+dep.ID+", active now "+a.ID)
			continue
		}
		d.Checked = append(d.Checked, what+": tested "+dep.ID+", active now "+a.ID)
	}
	// A suite's env: wins over the target's: a report of a pre-release
	// target whose suites say env: sandbox tested sandbox, and the
	// pre-release deployment it would promote was never tested. Other
	// environments a report also tested are checked as above.
	if env := o.Target.Env; env != "" {
		tested := map[string][]string{}
		var agents []string
		for _, dep := range ev.Deployments {
			if dep == nil || !o.promotes(dep.Agent) {
				continue
			}
			if _, seen := tested[dep.Agent]; !seen {
				agents = append(agents, dep.Agent)
			}
			tested[dep.Agent] = append(tested[dep.Agent], dep.Env)
		}
		for _, agent := range agents {
			if !slices.Contains(tested[agent], env) {
				refuse("%s: the report tested %s, not %s, the environment of the gate's target %q: test the environment you promote from (a suite's env: wins over the target's)",
					agent, strings.Join(tested[agent], ", "), env, o.Target.Name)
			}
		}
	}
	if len(o.Agents) == 0 && ev.Gating > 0 {
		// Without --agent the gate vouches for every deployment the
		// report records: each needs a case of its own that gates.
		seen := map[Key]bool{}
		for _, dep := range ev.Deployments {
			if dep == nil {
				continue
			}
			k := Key{dep.Agent, dep.Env}
			if seen[k] || ev.GatingOf[k] > 0 {
				continue
			}
			seen[k] = true
			if ev.uncheckedOf(dep.Agent, dep.Env) {
				refuse("%s in %s: every case of it that ran checked nothing or is quarantined: a case that checks nothing passes whatever the agent answers, and the gate would vouch for its deployment all the same: add expectations to its scenarios, or name the agents promoted with --agent",
					dep.Agent, dep.Env)
				continue
			}
			refuse("%s in %s: no case of it gates (each is quarantined, skipped or not compared), and the gate would vouch for its deployment all the same: test it, or name the agents promoted with --agent",
				dep.Agent, dep.Env)
		}
	}
	for _, agent := range o.Agents {
		switch {
		case !testedIn(ev.Deployments, agent, o.Target.Env):
			refuse("%s: the report did not test it%s (it tested %s): it cannot vouch for the agent promoted; gate a report of a run of its suites",
				agent, inEnv(o.Target.Env), testedList(ev.Deployments))
		case ev.Gating > 0 && gatingOf(ev.GatingOf, agent, o.Target.Env) == 0 && ev.uncheckedOf(agent, o.Target.Env):
			refuse("%s: every case of it the report tested%s checked nothing or is quarantined: a case that checks nothing passes whatever the agent answers, so the report vouches for the other agents, not for the agent promoted",
				agent, inEnv(o.Target.Env))
		case ev.Gating > 0 && gatingOf(ev.GatingOf, agent, o.Target.Env) == 0:
			// Its deployment was read, but every case of it that ran is
			// quarantined: the others' cases vouch for them, not for it.
			refuse("%s: every case of it the report tested%s is quarantined: a quarantined case never gates, so the report vouches for the other agents, not for the agent promoted",
				agent, inEnv(o.Target.Env))
		}
	}
	other = len(d.Reasons) - unreadable
	d.Unreadable = unreadable > 0 && other == 0
	return d
}

// weigh says how much of the suite the report ran, for the header, and
// why it is refused, or "": a scenario of the suite of an agent promoted
// that a run would run (not skipped) and that the report did not run,
// whether it holds no case of it (a run of other paths, of an older
// checkout, or of a suite that gained scenarios since) or holds it unrun
// (skipped, not run). A case is matched to a scenario by its file (Same)
// and name, not its line: a scenario that moved keeps its name, and a
// line says nothing of which scenario a report ran. The cases the report
// holds of no scenario of the suite (renamed or removed since, of other
// paths, outside the gate's filter) are said and not weighed: the
// verdict of the run counted them already, and they take nothing from
// the scenarios the suite holds.
func (s *Suite) weigh(ev Evidence, o Options) (lines []string, why string) {
	same := s.Same
	if same == nil {
		same = func(file string) string { return file }
	}
	type ref struct{ file, name string }
	held := map[ref]result.Status{}
	for _, h := range ev.Held {
		k := ref{same(h.File), h.Name}
		held[k] = max(held[k], h.Status)
	}
	ofSuite := map[ref]bool{}
	var missing []string
	want := 0
	for _, sc := range s.Scenarios {
		k := ref{same(sc.Pos.File), sc.Name}
		ofSuite[k] = true
		if sc.Skipped || sc.Agent != "" && !o.promotes(sc.Agent) {
			continue
		}
		want++
		switch st, ok := held[k]; {
		case !ok:
			missing = append(missing, fmt.Sprintf("%s %s", sc.Pos, sc.Name))
		case !st.Ran():
			missing = append(missing, fmt.Sprintf("%s %s (%s in the report)", sc.Pos, sc.Name, unrun(st)))
		}
	}
	other := 0
	for k := range held {
		if !ofSuite[k] {
			other++
		}
	}
	suite := "--suite " + strings.Join(s.Paths, " ")
	of := ""
	if len(o.Agents) > 0 {
		of = " of " + strings.Join(o.Agents, ", ")
	}
	if want == 0 {
		return []string{fmt.Sprintf("%s: no scenario%s that a run would run", suite, of)},
			fmt.Sprintf("%s selects no scenario%s that a run would run (with the gate's --tags and --name; skipped ones are not run): nothing holds the report to the suite; check --suite, --agent, --tags and --name", suite, of)
	}
	n := len(missing)
	lines = []string{fmt.Sprintf("%s: the report ran %d of its %d %s%s", suite, want-n, want, plural(want, "scenario", "scenarios"), of)}
	if n > 0 {
		lines = append(lines, "not run by the report:")
		for _, m := range listed(missing) {
			lines = append(lines, "  "+m)
		}
	}
	if other > 0 {
		lines = append(lines, fmt.Sprintf("%d %s of the report of no scenario %s selects (renamed or removed since, of other paths, or outside the gate's --tags and --name): not weighed",
			other, plural(other, "case", "cases"), suite))
	}
	if n > 0 {
		who := "the report"
		if ev.What == whatComparison {
			who = "the comparison's candidate"
		}
		why = fmt.Sprintf("%s did not run %d of the %d %s%s that %s selects: %s; a run of other paths, of an older checkout, or of a suite that has gained scenarios since vouches for none of them: run the tests of the suite as it is now, and gate that report",
			who, n, want, plural(want, "scenario", "scenarios"), of, suite, strings.Join(listed(missing), "; "))
	}
	return lines, why
}

// listed is lines cut to MaxListed, the last saying how many more there
// are.
func listed(lines []string) []string {
	if len(lines) <= MaxListed {
		return lines
	}
	return append(slices.Clip(lines[:MaxListed]), fmt.Sprintf("and %d more", len(lines)-MaxListed))
}

// unrun names the status of a case the report holds and did not run.
func unrun(st result.Status) string {
	if st == result.Pending {
		return "not run"
	}
	return st.String()
}

// Given says what suite paths the run (a comparison: its candidate's)
// was given, for the header, or "" for a report that does not record
// them.
func (ev Evidence) Given() string {
	if len(ev.Paths) == 0 {
		return ""
	}
	who := "the run"
	if ev.What == whatComparison {
		who = "the candidate's run"
	}
	return "paths " + who + " was given: " + strings.Join(ev.Paths, " ")
}

// unstatedFilter says how f narrowed a run to a subset the gate was not
// told the pipeline intends (Options.Tags, Options.Name), or "" when f is
// nil, is exactly that filter, or by --tags and --name left none of the
// files' scenarios out (the run tested all of them, whatever the gate
// states). A FILE:LINE selection is never a pipeline's: it picks
// scenarios by where they are written today.
func (o Options) unstatedFilter(f *result.Filter) string {
	if f == nil || (len(f.At) == 0 && (f.LeftOut == 0 || f.Tags == o.Tags && f.Name == o.Name)) {
		return ""
	}
	stated := "the gate states no filter"
	if g := (&result.Filter{Tags: o.Tags, Name: o.Name}).String(); g != "" {
		stated = "the gate states " + g
	}
	return fmt.Sprintf("selected its scenarios with %s, leaving out %d %s of its files, and %s: it tested a subset, not the whole selection",
		f.String(), f.LeftOut, plural(f.LeftOut, "scenario", "scenarios"), stated)
}

// testedIn reports whether deps record agent in env (any environment
// when env is empty).
func testedIn(deps []*result.Deployment, agent, env string) bool {
	return slices.ContainsFunc(deps, func(d *result.Deployment) bool {
		return d != nil && d.Agent == agent && (env == "" || d.Env == env)
	})
}

// gatingOf sums the gating cases of agent in env (any environment when
// env is empty).
func gatingOf(of map[Key]int, agent, env string) int {
	n := 0
	for k, v := range of {
		if k.Agent == agent && (env == "" || k.Env == env) {
			n += v
		}
	}
	return n
}

// gates counts a case that ran (a comparison: a pair compared), not
// quarantined, of k, as gating, or names it when it checked nothing: it
// passes whenever the agent answers, and tests nothing of it.
func (ev *Evidence) gates(k Key, line string, unchecked bool) {
	if unchecked {
		ev.Unchecked = append(ev.Unchecked, Named{k, line})
		return
	}
	ev.Gating++
	ev.GatingOf[k]++
}

// uncheckedOf reports whether a case of agent in env (any environment
// when env is empty) ran and checked nothing.
func (ev Evidence) uncheckedOf(agent, env string) bool {
	return slices.ContainsFunc(ev.Unchecked, func(u Named) bool {
		return u.Agent == agent && (env == "" || u.Env == env)
	})
}

// inEnv is " in ENV", or "" when env is empty.
func inEnv(env string) string {
	if env == "" {
		return ""
	}
	return " in " + env
}

// testedList lists the agents and environments deps record, "clinic in
// sandbox, billing in live", or "no agent".
func testedList(deps []*result.Deployment) string {
	var out []string
	for _, d := range deps {
		if d != nil {
			out = append(out, d.Agent+" in "+d.Env)
		}
	}
	if len(out) == 0 {
		return "no agent"
	}
	return strings.Join(out, ", ")
}

// platformMismatch says why a report of target cannot vouch for the
// gate's target, or "". The embedded simulator vouches only for itself.
func platformMismatch(report, gate result.Target) string {
	switch {
	case report.Embedded != gate.Embedded:
		name := map[bool]string{true: "the embedded simulator", false: "a configured platform"}
		return fmt.Sprintf("the report tested %s, the gate's target is %s", name[report.Embedded], name[gate.Embedded])
	case report.Embedded:
		return ""
	case report.BuildURL != "" && gate.BuildURL != "" && !result.SameURL(report.BuildURL, gate.BuildURL):
		return fmt.Sprintf("the report tested the platform at %s, the gate's target %q is %s", report.BuildURL, gate.Name, gate.BuildURL)
	case report.AccountID != "" && gate.AccountID != "" && report.AccountID != gate.AccountID:
		return fmt.Sprintf("the report tested workspace %s, the gate's target %q is workspace %s", report.AccountID, gate.Name, gate.AccountID)
	}
	return ""
}

// roundAge renders an age to the minute (to the second below one).
func roundAge(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}

// MaxSkew is how far ahead of the gate's clock a report's run may have
// ended: the clocks of the machine that ran the tests and the gate's may
// differ by that much. A report further ahead is refused: its age cannot
// be told, and --max-age would hold it fresh until that date has passed.
const MaxSkew = 5 * time.Minute

// What the evidence is the verdict of (Evidence.What).
const (
	whatRun        = "run"
	whatComparison = "comparison"
)

// nothingGated says why a report that passed with nothing that gates
// (Gating 0) vouches for nothing: a run of quarantined cases alone passes,
// as a quarantine never changes a run's verdict, and says nothing of the
// deployment it would promote.
func (ev Evidence) nothingGated() string {
	if n := len(ev.Unchecked); n > 0 && ev.What == whatComparison {
		return fmt.Sprintf("every scenario the comparison compared checked nothing on the candidate or is quarantined (%d checked nothing, %d quarantined): a case that checks nothing passes whatever the agent answers, so the comparison vouches for nothing; add expectations to the scenarios",
			n, ev.Quarantined)
	}
	if ev.What == whatComparison {
		if ev.Quarantined > 0 {
			return fmt.Sprintf("every scenario the comparison compared is quarantined (%d of the candidate's cases): a quarantine never fails a comparison, so it vouches for nothing; compare scenarios that are not quarantined", ev.Quarantined)
		}
		return "the comparison compared no scenario: it vouches for nothing"
	}
	if n := len(ev.Unchecked); n > 0 {
		return fmt.Sprintf("every case the run tested checked nothing or is quarantined (%d checked nothing, %d quarantined): a case that checks nothing passes whatever the agent answers, so the report vouches for nothing; add expectations to the scenarios",
			n, ev.Quarantined)
	}
	if ev.Quarantined > 0 {
		return fmt.Sprintf("every case the run tested is quarantined (%d): a quarantined case never gates a run, whatever its outcome, so the report vouches for nothing; gate a run of cases that are not quarantined", ev.Quarantined)
	}
	return "the run tested no case: the report vouches for nothing"
}

// FromRun is the evidence of a report of `agenttest run`.
func FromRun(path string, r *result.Result, status result.RunStatus) Evidence {
	ev := Evidence{Path: path, What: whatRun, Status: string(status), Passed: status == result.RunPassed,
		Target: r.Target, Deployments: r.Deployments, Shard: r.Shard, Rerun: r.Rerun, ForcedMerge: r.ForcedMerge, Filter: r.Filter, Cases: map[result.Status]int{},
		GatingOf: map[Key]int{}, Paths: r.Paths}
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if c != nil {
				ev.Held = append(ev.Held, Ref{File: cmp.Or(c.Pos.File, f.Path), Name: c.Name, Status: c.Status})
			}
			switch {
			case c == nil:
			case c.QuarantineHeld():
				ev.Quarantined++
			case c.Status == result.Skipped && result.IsStopReason(c.SkipReason):
				ev.Stopped++
			default:
				k := Key{c.Agent, c.Env}
				ev.Cases[c.Status]++
				if c.Status == result.Flaky {
					ev.Flaky = append(ev.Flaky, Named{k, fmt.Sprintf("%s %s (%s)", c.Pos, c.Name, c.FlakyNote())})
				}
				if c.Status.Ran() {
					ev.gates(k, fmt.Sprintf("%s %s", c.Pos, c.Name), c.Unchecked)
				}
			}
		}
	}
	if !r.Started.IsZero() {
		ev.Started, ev.Concluded = r.Started, r.Started.Add(r.Duration)
	}
	ev.Why = runWhy(r, status)
	ev.Derived = r.RunStatus()
	ev.DerivedWhy = runWhy(r, ev.Derived)
	var ran []Key
	for _, c := range r.Scenarios() {
		if talked(c.Status, c.Agent) {
			ran = append(ran, Key{c.Agent, c.Env})
		}
	}
	ev.Unrecorded = unrecorded(ran, r.Deployments)
	return ev
}

// runWhy says what a run's status other than passed means.
func runWhy(r *result.Result, status result.RunStatus) string {
	switch status {
	case result.RunFailed:
		if why := inconclusiveWhy(r); why != "" {
			return why
		}
		return "a check failed"
	case result.RunErrored:
		if len(r.DeploymentChanges()) > 0 {
			return "a deployment changed during the run"
		}
		if st := r.Stop; st != nil && st.Config {
			return "it stopped on a configuration problem: " + st.Why()
		}
		// A configuration error is named apart: the job failed on the
		// suite as written, and running the tests again cannot help.
		n, config := r.ErroredScenarios()
		switch {
		case config > 0 && config == n:
			return fmt.Sprintf("%d errored %s cannot be run as written (a configuration error)", n, plural(n, "case", "cases"))
		case config > 0:
			return fmt.Sprintf("%d errored %s cannot be run as written (a configuration error), and the platform or the network kept %d from a verdict",
				config, plural(config, "case", "cases"), n-config)
		}
		return "the platform or the network kept it from a verdict"
	case result.RunInterrupted:
		return "it was interrupted before every case finished"
	case result.RunEmpty:
		return "nothing was tested"
	}
	return ""
}

// inconclusiveWhy says why a failed run failed when every case that
// failed it is a statistical case that ended inconclusive, or "": what
// is wanted then is more runs, not a fix of the agent. A failed alert
// rule's check is no statistical case.
func inconclusiveWhy(r *result.Result) string {
	names, broke := r.InconclusiveFailed()
	for _, c := range r.Checks {
		if c != nil && c.Gate() == result.Failed {
			broke++
		}
	}
	if broke > 0 {
		return ""
	}
	return result.InconclusiveWhy(names)
}

// unrecorded lists the agents and environments ("AGENT in ENV") that
// cases ran in (ran: those of the cases passed, flaky, failed or errored,
// in case order) and that deps, the deployments recorded beside them,
// hold none of. A run reads the deployment of every agent and
// environment its cases talk to, and records it, read or not (with a
// Note when not): one missing was cut from the report (a run's, or a
// comparison's candidate side).
func unrecorded(ran []Key, deps []*result.Deployment) []string {
	var out []string
	seen := map[Key]bool{}
	for _, k := range ran {
		if seen[k] {
			continue
		}
		seen[k] = true
		if k.Agent == "" || k.Env == "" || result.DeploymentIn(deps, k.Agent, k.Env) == nil {
			out = append(out, cmp.Or(k.Agent, "no agent")+" in "+cmp.Or(k.Env, "no environment"))
		}
	}
	return out
}

// talked reports whether a case of status st and agent talked to an
// agent: it ran, and did not error for want of one (a scenario with no
// agent errors before any call). A run records the agent and environment
// of every such case; one without either was edited, and ties the report
// to no deployment.
func talked(st result.Status, agent string) bool {
	return st.Ran() && (agent != "" || st != result.Errored)
}

// FromComparison is the evidence of a comparison (agenttest compare
// --json): it passed when nothing regressed, and it vouches for the
// candidate: its platform and its deployments, as of the end of its run.
// A candidate that is a stored report brings that report's shard and
// rerun; the comparison's own --rerun-failed is its Rerun.
func FromComparison(path string, c *compare.Comparison) Evidence {
	cand := c.Candidate
	// The pairs by class as the pairs give them, not as the file states
	// them beside: the verdict (Verdict) counts them so too.
	pairs := compare.CountPairs(c.Pairs)
	ev := Evidence{Path: path, What: whatComparison, Status: string(c.Status), Passed: c.Status == result.RunPassed, Why: c.Why,
		Target: cand.Target, Deployments: cand.Deployments, Rerun: c.Rerun, Filter: c.Filter, Cases: map[result.Status]int{}, Pairs: &pairs,
		Baseline: c.Baseline.Line(), Paths: cand.Paths}
	if c.Status == result.RunPassed {
		ev.Why = ""
	}
	ev.Derived, ev.DerivedWhy = c.Verdict()
	// The candidate's cases: which talked to a deployment, by status
	// (those under a quarantine that holds apart), and which gate.
	ev.GatingOf = map[Key]int{}
	var ran []Key
	for _, p := range c.Pairs {
		if p == nil || p.Candidate == nil {
			continue
		}
		cc := p.Candidate
		ev.Held = append(ev.Held, Ref{File: p.File, Name: p.Name, Status: cc.Status})
		k := Key{cc.Agent, cc.Env}
		if talked(cc.Status, cc.Agent) {
			ran = append(ran, k)
		}
		if p.Quarantined && cc.Status.Ran() {
			ev.Quarantined++
		} else {
			ev.Cases[cc.Status]++
		}
		if !p.Quarantined && cc.Status == result.Flaky {
			ev.Flaky = append(ev.Flaky, Named{k, fmt.Sprintf("%s %s", p.Pos, p.Name)})
		}
		if !p.Quarantined && p.Class == compare.OnlyCandidate && cc.Status >= result.Failed {
			ev.Unbased = append(ev.Unbased, fmt.Sprintf("%s %s", p.Pos, p.Name))
		}
		if !p.Quarantined && p.Class.Compared() {
			ev.gates(k, fmt.Sprintf("%s %s", p.Pos, p.Name), cc.Unchecked)
		}
	}
	ev.Unrecorded = unrecorded(ran, cand.Deployments)
	if !cand.Run.Started.IsZero() {
		ev.Started = cand.Run.Started
		ev.Concluded = cand.Run.Started.Add(time.Duration(cand.Run.DurationMS * float64(time.Millisecond)))
	}
	if cand.Kind == compare.KindReport && (cand.Shard != nil || cand.Rerun != nil || len(cand.ForcedMerge) > 0 || cand.Filter != nil) {
		ev.Candidate = &StoredRun{Path: cmp.Or(cand.Report, cand.Spec), Shard: cand.Shard, Rerun: cand.Rerun, ForcedMerge: cand.ForcedMerge, Filter: cand.Filter}
	}
	return ev
}

// Tested says what the evidence tested, for the gate's header: its
// cases by status (a comparison: its pairs by class, then its
// candidate's cases), so that a reader of a CI log sees at once that the
// report is not of an empty or tiny selection.
func (ev Evidence) Tested() string {
	cases := tally(ev.Cases, ev.Stopped, ev.Quarantined)
	if ev.Pairs == nil {
		return "tested " + cases
	}
	n := *ev.Pairs
	var parts []string
	for _, cl := range compare.Classes {
		if k := n.Of(cl); k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, classLabel[cl]))
		}
	}
	out := fmt.Sprintf("compared %d %s", n.Total, plural(n.Total, "scenario", "scenarios"))
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, ", ")
	}
	return out + "; the candidate's " + cases
}

// Selected says what filter narrowed the run (a comparison: the
// scenarios compared), for the gate's header, or "" for a run of the
// whole selection: a subset the gate passes, as stated, still shows.
func (ev Evidence) Selected() string {
	f := ev.Filter
	if f == nil {
		return ""
	}
	return fmt.Sprintf("selected with %s: %d %s of its files left out", f.String(), f.LeftOut, plural(f.LeftOut, "scenario", "scenarios"))
}

// classLabel is how Tested names a class.
var classLabel = map[compare.Class]string{
	compare.Regressed: "regressed", compare.Fixed: "fixed", compare.Changed: "changed", compare.Slower: "slower",
	compare.Faster: "faster", compare.Unchanged: "unchanged", compare.NotCompared: "not compared",
	compare.OnlyBaseline: "only on the baseline", compare.OnlyCandidate: "only on the candidate",
}

// statusOrder is the order Tested lists statuses in: the verdicts, then
// what was not run.
var statusOrder = []result.Status{result.Passed, result.Flaky, result.Failed, result.Errored, result.Skipped, result.Pending}

// tally renders cases by status, then those a stop left unrun and those
// under quarantine: "6 cases: 4 passed, 1 flaky, 1 quarantined (not
// gating)", "5 cases: 2 passed, 1 failed, 2 not run (the run stopped)",
// as the run's summary says them.
func tally(cases map[result.Status]int, stopped, quarantined int) string {
	total := 0
	var parts []string
	for _, s := range statusOrder {
		if k := cases[s]; k > 0 {
			total += k
			name := s.String()
			if s == result.Pending {
				name = "not run"
			}
			parts = append(parts, fmt.Sprintf("%d %s", k, name))
		}
	}
	if stopped > 0 {
		total += stopped
		parts = append(parts, fmt.Sprintf("%d not run (the run stopped)", stopped))
	}
	if quarantined > 0 {
		total += quarantined
		parts = append(parts, fmt.Sprintf("%d quarantined (not gating)", quarantined))
	}
	if total == 0 {
		return "no case"
	}
	return fmt.Sprintf("%d %s: %s", total, plural(total, "case", "cases"), strings.Join(parts, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
