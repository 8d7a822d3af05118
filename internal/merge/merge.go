// Package merge combines the results of the shards of one run (`agenttest
// run --shard K/N` on N machines) into the result of the whole run, as if
// one machine had run the selection: its files and cases in file order,
// its counts, statistics, deployment evidence and verdict derived again
// from the cases. It is a pure function of the shards' results:
//
//	merged, problems := merge.Shards(shards, merge.Options{})
//	if len(problems) > 0 { ... refuse, or retry with Force }
//
// The report of an unsharded run, given alone, is the complete set of
// one: it merges into the same run, so that its reports can be written
// again in other formats (`agenttest merge report.json --html
// report.html`).
//
// Shards must prove they belong together: each records its shard K/N and
// the fingerprint of the selection it was dealt from (result.Shard), and
// the target it ran against. Reports of other selections, of other
// targets, a shard given twice and a shard missing are problems; with
// Force they are merged anyway, and a missing shard makes the merged run
// errored (Stop kind StopMissingShards), since its scenarios have no
// verdict.
package merge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// StopMissingShards is the kind of the Stop of a run merged without all
// its shards (Options.Force): the run cannot pass, since the scenarios of
// the missing shards have no verdict.
const StopMissingShards = "missing-shards"

// Options change what Shards accepts.
type Options struct {
	// Force merges reports that are not shards of one selection on one
	// target, or that lack shards.
	Force bool
}

// Input is one report to merge: its name (the file, for messages) and
// its result.
type Input struct {
	Name   string
	Result *result.Result
}

// Shards merges the results of shards. It returns the merged result and
// every problem that makes the inputs not the complete set of shards of
// one selection on one target; with problems and without Force the
// result is nil, and so it is with Force when an input has no Result.
func Shards(in []Input, opt Options) (*result.Result, []string) {
	if len(in) == 0 {
		return nil, []string{"no report to merge"}
	}
	problems, missing := check(in)
	// Force merges what is there: a nil result has nothing to merge.
	if len(problems) > 0 && (!opt.Force || slices.ContainsFunc(in, func(s Input) bool { return s.Result == nil })) {
		return nil, problems
	}
	// Shard order first (the order the selection was dealt in), then the
	// order given, so the merge does not depend on how files were named.
	ordered := slices.Clone(in)
	slices.SortStableFunc(ordered, func(a, b Input) int { return cmp.Compare(shardIndex(a), shardIndex(b)) })
	out := &result.Result{Target: ordered[0].Result.Target, Files: []*result.File{}}
	files := map[string]*result.File{}
	var end time.Time
	undated := false
	for _, s := range ordered {
		r := s.Result
		undated = undated || r.Started.IsZero()
		if !r.Started.IsZero() && (out.Started.IsZero() || r.Started.Before(out.Started)) {
			out.Started = r.Started
		}
		if e := r.Started.Add(r.Duration); e.After(end) {
			end = e
		}
		out.Interrupted = out.Interrupted || r.Interrupted
		out.Stop = worseStop(out.Stop, r.Stop)
		out.Pacing = addPacing(out.Pacing, r.Pacing)
		for _, f := range r.Files {
			if f == nil {
				continue
			}
			mf := files[f.Path]
			if mf == nil {
				mf = &result.File{Path: f.Path, Suite: f.Suite}
				files[f.Path] = mf
				out.Files = append(out.Files, mf)
			}
			mf.Cases = append(mf.Cases, f.Cases...)
		}
	}
	if undated {
		// A run agenttest writes says when it started: a shard that does
		// not (cut, or foreign) may be of any age, and so is the merged
		// run. Dated by the others, it would be as young as they are, and
		// the gate's --max-age would pass what it refuses alone.
		out.Started = time.Time{}
	}
	if !out.Started.IsZero() && end.After(out.Started) {
		out.Duration = end.Sub(out.Started)
	}
	// Files in path order, cases in the order they are written: the order
	// of the selection the shards were dealt from. One report has nothing
	// to interleave and keeps the order its run wrote.
	if len(ordered) > 1 {
		slices.SortStableFunc(out.Files, func(a, b *result.File) int { return cmp.Compare(a.Path, b.Path) })
		for _, f := range out.Files {
			slices.SortStableFunc(f.Cases, func(a, b *result.Case) int {
				return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col), cmp.Compare(a.Name, b.Name))
			})
		}
	}
	out.Deployments = mergeDeployments(ordered)
	out.Checks = mergeChecks(ordered)
	// Shards of a --rerun-failed run stay a rerun once merged: the gate
	// must not take them for the whole selection.
	for _, s := range ordered {
		if s.Result.Rerun != nil {
			out.Rerun = s.Result.Rerun
			break
		}
	}
	// Shards of a run narrowed by --tags, --name or FILE:LINE stay a
	// run of that subset once merged, for the gate to weigh.
	for _, s := range ordered {
		if s.Result.Filter != nil {
			out.Filter = s.Result.Filter
			break
		}
	}
	// Shards of one selection were given the same paths; a forced merge
	// of others' keeps each path once, in the order the reports give.
	for _, s := range ordered {
		for _, p := range s.Result.Paths {
			if !slices.Contains(out.Paths, p) {
				out.Paths = append(out.Paths, p)
			}
		}
	}
	// A forced merge says what it overrode, and so does any merge of a
	// forced merge's report: `agenttest gate` refuses it, for it is the
	// run of no one selection.
	for _, s := range ordered {
		out.ForcedMerge = append(out.ForcedMerge, s.Result.ForcedMerge...)
	}
	out.ForcedMerge = append(out.ForcedMerge, problems...)
	if len(missing) > 0 {
		out.Stop = &result.Stop{Kind: StopMissingShards, Reason: "not run: shard " + strings.Join(missing, ", ") + " missing",
			Cause: fmt.Sprintf("merged without shard %s: their scenarios have no verdict", strings.Join(missing, ", "))}
	}
	return out, nil
}

func shardIndex(in Input) int {
	if sh := in.Result.Shard; sh != nil {
		return sh.Index
	}
	return 0
}

// check returns the problems of the inputs as a set of shards, and the
// shards missing from it (as K/N). A report whose shard is none a run
// deals (result.Shard.Check), or of another number of shards than the
// first, is no shard of the set: it neither fills a place nor takes one.
func check(in []Input) (problems, missing []string) {
	first := in[0]
	if len(in) == 1 && first.Result != nil && first.Result.Shard == nil {
		// The report of a run that was not sharded is the whole of its
		// run: merging it alone writes that run's reports again, in
		// other formats.
		return nil, nil
	}
	var total int
	// target is the first result's, selection and ref those of the first
	// shard, which the others are measured against: the first report
	// given may be no shard's.
	var target *Input
	var selection, ref string
	// refRerun is the --rerun-failed of ref's run, nil for a full run.
	var refRerun *result.Rerun
	var refIndex int
	seen := map[int]string{}
	for _, s := range in {
		if s.Result == nil {
			problems = append(problems, s.Name+": no result")
			continue
		}
		if target == nil {
			target = &s
		}
		sh := s.Result.Shard
		if sh == nil {
			problems = append(problems, s.Name+": not a shard's report (run with --shard K/N)")
			continue
		}
		if why := target.Result.Target.Diff(s.Result.Target); why != "" {
			problems = append(problems, fmt.Sprintf("%s ran against another target than %s: %s", s.Name, target.Name, why))
		}
		if field, err := sh.Check(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: shard.%s: %v", s.Name, field, err))
			continue
		}
		if total == 0 {
			total, selection, ref, refRerun, refIndex = sh.Total, sh.Selection, s.Name, s.Result.Rerun, sh.Index
		}
		if sh.Total != total {
			problems = append(problems, fmt.Sprintf("%s is shard %d/%d, but %s is of %d shards", s.Name, sh.Index, sh.Total, ref, total))
			continue
		}
		if sh.Selection != selection {
			// A shard run again with --rerun-failed (an interrupted
			// one, say) is dealt from the cases it reruns: its
			// fingerprint differs for that reason, not the paths'.
			why := rerunDiff(s.Name, sh.Index, s.Result.Rerun, ref, refIndex, refRerun, total)
			if why == "" {
				why = fmt.Sprintf("%s ran another selection than %s (other paths, --tags, --name or suite files): %s, not %s",
					s.Name, ref, short(sh.Selection), short(selection))
			}
			problems = append(problems, why)
		}
		if other, dup := seen[sh.Index]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s are both shard %d/%d", other, s.Name, sh.Index, sh.Total))
		}
		seen[sh.Index] = s.Name
	}
	for k := 1; k <= total; k++ {
		if _, ok := seen[k]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", k, total))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("shard %s missing: every shard's report is needed for the run's verdict", strings.Join(missing, ", ")))
	}
	return problems, missing
}

// rerunDiff says why shards a and b (their names, indexes and reruns)
// are not of one run when one or both ran with --rerun-failed, which
// deals the cases it reruns rather than the selection; "" when they
// rerun nothing, or the same report.
func rerunDiff(a string, aIndex int, aRerun *result.Rerun, b string, bIndex int, bRerun *result.Rerun, total int) string {
	switch {
	case aRerun == nil && bRerun == nil:
		return ""
	case aRerun == nil:
		a, aIndex, aRerun, b = b, bIndex, bRerun, a
	case bRerun != nil:
		if aRerun.Of == bRerun.Of {
			return ""
		}
		return fmt.Sprintf("%s reran the cases of %s, %s those of %s (--rerun-failed): merge the shards of one run", a, aRerun.Of, b, bRerun.Of)
	}
	return fmt.Sprintf("%s is a shard of a --rerun-failed %s run, dealt from the cases it reran, %s a shard of the selection: to replace shard %d/%d, run it again with --shard %d/%d and no --rerun-failed",
		a, aRerun.Of, b, aIndex, total, aIndex, total)
}

// short shortens a fingerprint for messages.
func short(fp string) string {
	if len(fp) > 19 {
		return fp[:19]
	}
	return fp
}

// worseStop keeps the stop that says most about the run: one on a
// configuration problem, then any platform stop, then --fail-fast.
func worseStop(a, b *result.Stop) *result.Stop {
	rank := func(s *result.Stop) int {
		switch {
		case s == nil:
			return 0
		case s.Config:
			return 3
		case s.Kind != result.StopFailFast:
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func addPacing(a, b *result.Pacing) *result.Pacing {
	if b == nil {
		return a
	}
	if a == nil {
		cp := *b
		return &cp
	}
	return &result.Pacing{Limited: a.Limited + b.Limited, Accepted: a.Accepted + b.Accepted,
		Waited: a.Waited + b.Waited, MaxWaited: max(a.MaxWaited, b.MaxWaited)}
}

// mergeDeployments joins the deployment evidence of the shards per agent
// and environment: the deployment read first (before the earliest
// shard's cases) and the one read last (after the latest shard's). When
// the shards met different deployments, the merged evidence shows the
// change (after is the last deployment read that differs from the
// first), and the merged run errors as a single run whose deployment
// changed would: its verdicts are about two deployments. When a shard's
// evidence is incomplete (a read failed, Note says why), the merged
// evidence is not confirmed after the run either, with that shard's note,
// as the shard's own report is not: `agenttest gate` refuses both. So is
// it when a shard records no deployment of an agent and environment its
// cases ran in.
func mergeDeployments(in []Input) []*result.Deployment {
	type key struct{ agent, env string }
	type read struct {
		id, version string
		at          time.Time
	}
	var order []key
	reads := map[key][]read{}
	notes := map[key]string{}
	// gaps holds, per key, why a shard's evidence is incomplete (a read
	// before its first case or after its last that failed): the whole
	// run's is then incomplete too, whatever the other shards read.
	gaps := map[key]string{}
	for _, s := range in {
		for _, d := range s.Result.Deployments {
			if d == nil {
				continue
			}
			k := key{d.Agent, d.Env}
			if _, ok := reads[k]; !ok {
				order = append(order, k)
				reads[k] = nil
			}
			if (d.ID == "" || d.After == "") && gaps[k] == "" {
				gaps[k] = cmp.Or(d.Note, "not read")
				if len(in) > 1 {
					gaps[k] = s.Name + ": " + gaps[k]
				}
			}
			if d.ID != "" {
				reads[k] = append(reads[k], read{d.ID, d.Version, d.ReadAt})
			}
			if d.After != "" {
				reads[k] = append(reads[k], read{d.After, d.AfterVersion, d.AfterReadAt})
			}
			if notes[k] == "" {
				notes[k] = d.Note
			}
		}
		// A run records the deployment of every agent and environment its
		// cases ran in, read or not: a shard that records none of one was
		// cut, or written before deployments were recorded. The gate
		// refuses it alone, and the other shards' reads say nothing of
		// what its cases talked to.
		for _, c := range s.Result.Scenarios() {
			if !c.Status.Ran() || c.Agent == "" || c.Env == "" || result.DeploymentIn(s.Result.Deployments, c.Agent, c.Env) != nil {
				continue
			}
			if k := (key{c.Agent, c.Env}); gaps[k] == "" {
				gaps[k] = s.Name + ": its cases ran there, but it records no deployment of it"
			}
		}
	}
	out := make([]*result.Deployment, 0, len(order))
	for _, k := range order {
		d := &result.Deployment{Agent: k.agent, Env: k.env, Note: notes[k]}
		rs := reads[k]
		slices.SortStableFunc(rs, func(a, b read) int { return a.at.Compare(b.at) })
		if len(rs) > 0 {
			d.ID, d.Version, d.ReadAt = rs[0].id, rs[0].version, rs[0].at
		}
		if len(rs) > 1 {
			last := rs[len(rs)-1]
			for _, r := range rs[1:] {
				if r.id != d.ID {
					last = r
				}
			}
			d.After, d.AfterVersion, d.AfterReadAt = last.id, last.version, last.at
		}
		if gap := gaps[k]; gap != "" && !d.Changed() {
			// A shard could not confirm the deployment after its last
			// case (or read none before its first): another shard's
			// reads say nothing of what that shard's cases talked to,
			// so the merged run's evidence is not confirmed either.
			d.After, d.AfterVersion, d.AfterReadAt = "", "", time.Time{}
			d.Note = gap
		}
		out = append(out, d)
	}
	return out
}

// mergeChecks joins the run-level checks of the shards (the alert gate of
// each shard run with --gate-alerts) into one check per name, as an
// unsharded run has one: its status is the one that says most about the
// run (a firing rule, then a failed read, then an interrupted or
// skipped gate, then a pass), the agents are every shard's, and its one
// attempt keeps every shard's reading: each firing rule once, and each
// shard's read of the alerts naming the shard. A check only one shard
// has (or the checks of a report merged alone) is kept as it is.
func mergeChecks(in []Input) []*result.Case {
	var names []string
	byName := map[string][]*result.Case{}
	shardOf := map[*result.Case]string{}
	for _, s := range in {
		for _, c := range s.Result.Checks {
			if c == nil {
				continue
			}
			if _, ok := byName[c.Name]; !ok {
				names = append(names, c.Name)
			}
			byName[c.Name] = append(byName[c.Name], c)
			shardOf[c] = shardName(s)
		}
	}
	if len(names) == 0 {
		return nil
	}
	out := make([]*result.Case, 0, len(names))
	for _, name := range names {
		cs := byName[name]
		if len(cs) == 1 {
			out = append(out, cs[0])
			continue
		}
		out = append(out, joinCheck(cs, shardOf))
	}
	return out
}

// shardName names a shard's report in merged messages: "shard K/N", or
// its file when it is no shard's (Force).
func shardName(s Input) string {
	if sh := s.Result.Shard; sh != nil {
		return fmt.Sprintf("shard %d/%d", sh.Index, sh.Total)
	}
	return s.Name
}

// checkRank orders check statuses by what they say about the run: a
// failure (a rule fired) decides it as it decides the exit code, then an
// error, an interrupted gate, a skipped one, and a pass.
func checkRank(s result.Status) int {
	switch s {
	case result.Failed:
		return 5
	case result.Errored:
		return 4
	case result.Pending:
		return 3
	case result.Skipped:
		return 2
	case result.Flaky:
		return 1
	}
	return 0
}

func joinCheck(cs []*result.Case, shardOf map[*result.Case]string) *result.Case {
	worst := cs[0]
	for _, c := range cs[1:] {
		if checkRank(c.Status) > checkRank(worst.Status) {
			worst = c
		}
	}
	m := &result.Case{Name: worst.Name, Pos: worst.Pos, Tags: worst.Tags, Status: worst.Status, SkipReason: worst.SkipReason}
	var agents []string
	var a *result.Attempt
	var readAt []time.Time // of a.Failures
	for _, c := range cs {
		for ag := range strings.SplitSeq(c.Agent, ",") {
			if ag != "" && !slices.Contains(agents, ag) {
				agents = append(agents, ag)
			}
		}
		m.Env = cmp.Or(m.Env, c.Env)
		m.Duration = max(m.Duration, c.Duration)
		m.RateLimited += c.RateLimited
		m.RateWaited += c.RateWaited
		last := c.Last()
		if last == nil {
			continue
		}
		if a == nil {
			a = &result.Attempt{Number: 1, Status: m.Status, Started: last.Started}
			if worst.Last() != nil {
				a.Status = worst.Last().Status
			}
		}
		if last.Started.Before(a.Started) {
			a.Started = last.Started
		}
		a.Duration = max(a.Duration, last.Duration)
		a.Turns = append(a.Turns, last.Turns...)
		for _, f := range last.Failures {
			k := ruleOf(f)
			i := slices.IndexFunc(a.Failures, func(g assert.Failure) bool { return ruleOf(g) == k })
			switch {
			case i < 0:
				a.Failures = append(a.Failures, f)
				readAt = append(readAt, last.Started)
			case last.Started.After(readAt[i]):
				// The same rule seen by shards that read at
				// different times: the latest reading, as the
				// one read of an unsharded run, after its cases.
				a.Failures[i], readAt[i] = f, last.Started
			}
		}
		who := shardOf[c]
		for _, cf := range last.Confirmations {
			cp := *cf
			cp.Summary = who + ": " + cp.Summary
			a.Confirmations = append(a.Confirmations, &cp)
		}
		if e := last.Error; e != nil {
			cp := *e
			cp.Message = who + ": " + cp.Message
			if c == worst {
				a.Error = &cp
			} else {
				// The read this shard could not make is part of the
				// merged reading, though another shard's decides.
				a.Confirmations = append(a.Confirmations, &result.Confirmation{Kind: result.ConfirmAlerts, Subject: "GET /v1/alerts", Summary: cp.Message})
			}
		}
	}
	slices.Sort(agents)
	m.Agent = strings.Join(agents, ",")
	if a != nil {
		m.Attempts = []*result.Attempt{a}
	}
	return m
}

// ruleOf identifies the rule a failure of the alert gate is about, apart
// from the value it fired at (internal/runner gate.go writes it at the end
// of the message, ", value V", and as the actual, "firing at V"), so that
// a rule every shard saw firing is one rule of the merged run.
func ruleOf(f assert.Failure) assert.Failure {
	if v, ok := strings.CutPrefix(f.Actual, "firing at "); ok {
		f.Message = strings.TrimSuffix(f.Message, ", value "+v)
	}
	f.Actual = ""
	return f
}
