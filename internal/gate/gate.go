// Package gate decides whether a report still vouches for what a pipeline
// is about to promote: `agenttest gate REPORT.json`, the step right before
// the platform's promote command. It is pure: the command reads the report
// and the deployments active now, and Check weighs them.
//
//	ev := gate.FromRun(path, rep)               // a report of agenttest run
//	active := map[gate.Key]gate.Active{...}      // read now, per agent and env
//	d := gate.Check(ev, gate.Options{Now: now, MaxAge: 24 * time.Hour}, active)
//	if !d.Passed() { ... d.Reasons ... }
//
// The gate passes only when every one of these holds: the run (or the
// comparison) passed; it concluded no longer ago than MaxAge; it ran
// against the same platform and environment as the gate's target, over
// its whole selection (not one shard); it recorded deployment
// evidence for every agent and environment, unchanged during the run; and
// the deployment active now in each of those environments is the one it
// tested.
package gate

import (
	"fmt"
	"slices"
	"strings"
	"time"

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
	// Concluded is when the run ended (its start plus its duration).
	Concluded time.Time
	// Target is the platform the report's run talked to.
	Target result.Target
	// Deployments are the report's evidence.
	Deployments []*result.Deployment
	// Shard is set when the report is one shard's (run --shard K/N): it
	// tested a share of its selection, and only the merged report of
	// every shard vouches for the whole.
	Shard *result.Shard
	// Rerun is set when the report is of a --rerun-failed run: it tested
	// an earlier run's failures again, not the selection.
	Rerun *result.Rerun
}

// Key names a deployment: an agent in an environment.
type Key struct{ Agent, Env string }

// Active is the deployment active now in an environment, as the command
// read it: its id, or the error of the read. NotServed marks a platform
// that answered 404.
type Active struct {
	ID        string
	Err       error
	NotServed bool
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
}

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
}

// Passed reports whether the gate lets the promotion go ahead.
func (d Decision) Passed() bool { return len(d.Reasons) == 0 }

// Needed lists the deployments to read now: those the report has
// evidence of. The others are refused without a read.
func Needed(ev Evidence) []Key {
	var out []Key
	for _, d := range ev.Deployments {
		if d != nil && d.Verified() {
			out = append(out, Key{d.Agent, d.Env})
		}
	}
	return out
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
	switch age := o.Now.Sub(ev.Concluded); {
	case ev.Concluded.IsZero():
		refuse("the report does not say when its run ended")
	case age > o.MaxAge:
		refuse("the report is %s old (its run ended %s), older than --max-age %s: run the tests again", roundAge(age),
			ev.Concluded.UTC().Format(time.RFC3339), o.MaxAge)
	}
	if p := platformMismatch(ev.Target, o.Target); p != "" {
		refuse("%s", p)
	}
	if sh := ev.Shard; sh != nil && sh.Total > 1 {
		refuse("the report is shard %d of %d: it tested its share of the selection's %d scenarios, not all of them; gate the report agenttest merge writes of every shard", sh.Index, sh.Total, sh.Selected)
	}
	if rr := ev.Rerun; rr != nil {
		refuse("the report reruns the failed and errored cases of %s (%d): it tested those again, not the whole selection; gate the report of a full run", rr.Of, rr.Failed)
	}
	if len(ev.Deployments) == 0 {
		refuse("the report records no deployment: it was written before agenttest recorded deployments, or by a run that tested no agent; run the tests again")
	}
	unreadable, other := 0, len(d.Reasons)
	for _, dep := range ev.Deployments {
		if dep == nil {
			continue
		}
		what := dep.Agent + " in " + dep.Env
		switch {
		case dep.Changed():
			refuse("%s", dep.ChangeMessage())
			d.Checked = append(d.Checked, what+": changed during the run ("+dep.ID+" → "+dep.After+")")
			continue
		case dep.ID == "":
			refuse("%s: the report holds no deployment evidence (%s)", what, dep.Note)
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
			refuse("%s: the platform does not serve GET /v1/agents/{agentId}/deployments/active now: nothing ties the report to what would be promoted", what)
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
			if dep == nil {
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
	other = len(d.Reasons) - unreadable
	d.Unreadable = unreadable > 0 && other == 0
	return d
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
	case report.BuildURL != "" && gate.BuildURL != "" && report.BuildURL != gate.BuildURL:
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

// FromRun is the evidence of a report of `agenttest run`.
func FromRun(path string, r *result.Result, status result.RunStatus) Evidence {
	ev := Evidence{Path: path, What: "run", Status: string(status), Passed: status == result.RunPassed,
		Target: r.Target, Deployments: r.Deployments, Shard: r.Shard, Rerun: r.Rerun}
	if !r.Started.IsZero() {
		ev.Concluded = r.Started.Add(r.Duration)
	}
	switch status {
	case result.RunFailed:
		ev.Why = "a check failed"
	case result.RunErrored:
		ev.Why = "the platform or the network kept it from a verdict"
		if len(r.DeploymentChanges()) > 0 {
			ev.Why = "a deployment changed during the run"
		}
	case result.RunInterrupted:
		ev.Why = "it was interrupted before every case finished"
	case result.RunEmpty:
		ev.Why = "nothing was tested"
	}
	return ev
}

// FromComparison is the evidence of a comparison (agenttest compare
// --json): it passed when nothing regressed, and it vouches for the
// candidate: its platform and its deployments, as of the end of its run.
func FromComparison(path string, status result.RunStatus, why string, candidate result.Target, started time.Time, duration time.Duration, deployments []*result.Deployment) Evidence {
	ev := Evidence{Path: path, What: "comparison", Status: string(status), Passed: status == result.RunPassed, Why: why,
		Target: candidate, Deployments: deployments}
	if status == result.RunPassed {
		ev.Why = ""
	}
	if !started.IsZero() {
		ev.Concluded = started.Add(duration)
	}
	return ev
}
