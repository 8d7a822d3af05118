package compare

import (
	"fmt"
	"path"
	"strings"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
)

// Build pairs the cases of both sides and classifies each pair:
//
//   - A scenario on one side only is OnlyBaseline or OnlyCandidate.
//   - One that errored or did not run on a side is NotCompared: nothing
//     is known of the agent there.
//   - A statistical scenario (one repeated with a pass rate) compares its
//     pass rates with Fisher's exact test: significantly lower at Alpha
//     is Regressed, higher Fixed; a verdict that flipped without a
//     significant difference is Changed (the runs say too little).
//   - Any other scenario: passed → failed is Regressed, failed → passed
//     Fixed; with the same verdict, a difference in the transcripts
//     (replies, node path, handoff, state written, length) is Changed.
//   - With the same verdict and behaviour, a median turn latency that
//     moved by at least MinShiftMS and MinRatio of the baseline's is
//     Slower or Faster; anything else is Unchanged.
//
// Build never calls anything; the results may come from runs or from
// reports. The comparison's status follows (see Comparison.Status).
func Build(baseline, candidate Input, opts Options) *Comparison {
	c := &Comparison{Options: opts, Baseline: sideOf(baseline), Candidate: sideOf(candidate), Pairs: []*Pair{}}
	type entry struct {
		file string
		c    *result.Case
	}
	var base []entry
	index := map[[2]string][]int{}
	for _, f := range files(baseline.Result) {
		for _, bc := range f.Cases {
			if bc == nil {
				continue
			}
			k := [2]string{caseFile(f, bc), bc.Name}
			index[k] = append(index[k], len(base))
			base = append(base, entry{k[0], bc})
		}
	}
	used := make([]bool, len(base))
	for _, f := range files(candidate.Result) {
		for _, cc := range f.Cases {
			if cc == nil {
				continue
			}
			k := [2]string{caseFile(f, cc), cc.Name}
			p := &Pair{File: k[0], Name: cc.Name, Pos: cc.Pos, Candidate: outcomeOf(cc), Quarantined: cc.Quarantined()}
			if q := index[k]; len(q) > 0 {
				// A name twice in a file pairs in order of appearance.
				i := q[0]
				index[k] = q[1:]
				used[i] = true
				p.Baseline = outcomeOf(base[i].c)
				c.weigh(p, base[i].c, cc)
			} else {
				p.Class, p.Note = OnlyCandidate, "not in the baseline"
			}
			c.Pairs = append(c.Pairs, p)
		}
	}
	for i, e := range base {
		if !used[i] {
			c.Pairs = append(c.Pairs, &Pair{File: e.file, Name: e.c.Name, Pos: e.c.Pos, Baseline: outcomeOf(e.c),
				Class: OnlyBaseline, Note: "not in the candidate", Changes: []Change{}})
		}
	}
	for _, p := range c.Pairs {
		if p.Changes == nil {
			p.Changes = []Change{}
		}
	}
	c.Counts = CountPairs(c.Pairs)
	c.Latency = overallLatency(c.Pairs, opts)
	c.Status, c.Why = c.Verdict()
	return c
}

// files returns r's files, none for a nil result.
func files(r *result.Result) []*result.File {
	if r == nil {
		return nil
	}
	return r.Files
}

// caseFile is the file a case is paired by: where it is written, else its
// file's path, cleaned, so "./suites/a.yaml" pairs with "suites/a.yaml".
func caseFile(f *result.File, c *result.Case) string {
	p := c.Pos.File
	if p == "" && f != nil {
		p = f.Path
	}
	return path.Clean(strings.ReplaceAll(p, "\\", "/"))
}

func sideOf(in Input) Side {
	s := Side{Spec: in.Spec, Kind: in.Kind, Env: in.Env, Report: in.Report, Deployments: []*result.Deployment{}}
	if r := in.Result; r != nil {
		s.Target = r.Target
		s.Run = SideRun{Started: r.Started, DurationMS: ms(r.Duration), Status: in.Status, Interrupted: r.Interrupted, Stop: r.Stop}
		s.Shard, s.Rerun, s.ForcedMerge, s.Filter, s.Paths = r.Shard, r.Rerun, r.ForcedMerge, r.Filter, r.Paths
		for _, d := range r.Deployments {
			if d != nil {
				s.Deployments = append(s.Deployments, d)
			}
		}
	}
	return s
}

// verdictOf is what a case's status says of the agent.
func verdictOf(s result.Status) string {
	switch s {
	case result.Passed, result.Flaky:
		return VerdictPassed
	case result.Failed:
		return VerdictFailed
	case result.Errored:
		return VerdictErrored
	}
	return VerdictNotRun
}

func outcomeOf(c *result.Case) *Outcome {
	o := &Outcome{Status: c.Status, Verdict: verdictOf(c.Status), ConversationID: c.ConversationID(), Agent: c.Agent, Env: c.Env, Unchecked: c.Unchecked}
	if a := compared(c); a != nil {
		for _, f := range a.Failures {
			o.Failures = append(o.Failures, f.Message)
		}
		if a.Error != nil {
			o.Error = a.Error.Message
		}
	}
	return o
}

// compared is the attempt whose transcript stands for the case: the one
// that decided the verdict. That is the last one, but for a failed case
// whose retry then errored (runner's failedEarlier): its failed attempt
// holds the broken expectations, and the errored one only the platform's
// error and a cut transcript.
func compared(c *result.Case) *result.Attempt {
	if c.Status == result.Failed {
		return c.Deciding()
	}
	return c.Last()
}

// statistical reports whether a case was repeated with a pass rate.
func statistical(c *result.Case) bool { return c.Repeat != nil && c.Repeat.Runs > 0 }

// weigh classifies a pair present on both sides.
func (c *Comparison) weigh(p *Pair, bc, cc *result.Case) {
	bv, cv := verdictOf(bc.Status), verdictOf(cc.Status)
	switch {
	case bv == VerdictErrored || bv == VerdictNotRun || cv == VerdictErrored || cv == VerdictNotRun:
		p.Class, p.Note = NotCompared, notCompared(bc, cc)
		return
	}
	p.scenarioLatency(bc, cc, c.Options)
	if statistical(bc) || statistical(cc) {
		c.weighRates(p, bc, cc, bv, cv)
		return
	}
	p.Changes = transcriptChanges(compared(bc), compared(cc))
	switch {
	case bv == VerdictPassed && cv == VerdictFailed:
		p.Class = Regressed
	case bv == VerdictFailed && cv == VerdictPassed:
		p.Class = Fixed
	case len(p.Changes) > 0:
		p.Class = Changed
	default:
		p.Class = latencyClass(p.Latency)
	}
}

// weighRates classifies a statistical scenario by its pass rates.
func (c *Comparison) weighRates(p *Pair, bc, cc *result.Case, bv, cv string) {
	r := &Rates{Test: "fisher-exact"}
	r.BaselinePassed, r.BaselineRuns = passes(bc)
	r.CandidatePassed, r.CandidateRuns = passes(cc)
	r.P = stats.FisherExact(r.BaselinePassed, r.BaselineRuns, r.CandidatePassed, r.CandidateRuns)
	p.Rates = r
	significant := r.P < c.Options.Alpha
	switch {
	case significant && r.CandidateRate() < r.BaselineRate():
		p.Class = Regressed
	case significant && r.CandidateRate() > r.BaselineRate():
		p.Class = Fixed
	case bv != cv:
		p.Class = Changed
		p.Changes = []Change{{What: ChangeVerdict, Pos: p.Pos, Baseline: fmt.Sprintf("%s (%s)", bv, rateText(r.BaselinePassed, r.BaselineRuns)),
			Candidate: fmt.Sprintf("%s (%s)", cv, rateText(r.CandidatePassed, r.CandidateRuns))}}
		p.Note = fmt.Sprintf("the verdict flipped, but the pass rates do not differ significantly (Fisher's exact test, p = %.3g)", r.P)
	default:
		p.Class = latencyClass(p.Latency)
	}
}

// passes counts a case's passing runs and its runs that are evidence
// (errored runs left out): the repeat's tally, else its attempts'.
func passes(c *result.Case) (passed, runs int) {
	if rp := c.Repeat; rp != nil {
		return rp.Passed, rp.Passed + rp.Failed
	}
	switch verdictOf(c.Status) {
	case VerdictPassed:
		return 1, 1
	case VerdictFailed:
		return 0, 1
	}
	return 0, 0
}

func rateText(passed, runs int) string {
	return fmt.Sprintf("%d of %d passed, %.0f%%", passed, runs, 100*rate(passed, runs))
}

// notCompared says which side kept a pair from being compared.
func notCompared(bc, cc *result.Case) string {
	var parts []string
	for _, s := range []struct {
		side string
		c    *result.Case
	}{{"baseline", bc}, {"candidate", cc}} {
		switch verdictOf(s.c.Status) {
		case VerdictErrored:
			msg := "errored"
			// The error that decided it: an errored repeat's last
			// run may have failed, and its cause is an earlier run's.
			if a := s.c.Deciding(); a != nil && a.Error != nil {
				msg += ": " + firstLine(a.Error.Message)
			}
			parts = append(parts, s.side+" "+msg)
		case VerdictNotRun:
			msg := "not run"
			if s.c.SkipReason != "" {
				msg = s.c.SkipReason
			}
			parts = append(parts, s.side+" "+msg)
		}
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Verdict is the comparison's status and what decided it, derived from
// its sides and pairs: Build sets Status and Why from it, and `agenttest
// gate` derives it again from a comparison read back, to refuse one whose
// stated status its pairs do not give. It counts the pairs itself
// (CountPairs), never taking the Counts a file states beside them, which
// an edit may have changed alone. The order mirrors
// result.RunStatus: an interruption, then a deployment that changed
// during a side's run (no one can say what was compared), then a
// regression, then what kept pairs from being compared.
func (c *Comparison) Verdict() (result.RunStatus, string) {
	var changed []string
	for _, s := range []Side{c.Baseline, c.Candidate} {
		for _, d := range s.Deployments {
			if d != nil && d.Changed() {
				changed = append(changed, d.ChangeMessage()+" ("+s.Spec+")")
			}
		}
	}
	gating := func(cl Class) (n int) {
		for _, p := range c.Pairs {
			if p != nil && p.Class == cl && !p.Quarantined {
				n++
			}
		}
		return n
	}
	stopped := ""
	for _, s := range []struct {
		name string
		side Side
	}{{"baseline", c.Baseline}, {"candidate", c.Candidate}} {
		if st := s.side.Run.Stop; st != nil && st.Kind != result.StopFailFast && stopped == "" {
			stopped = fmt.Sprintf("the %s run stopped: %s", s.name, st.Reason)
		}
		// A stored report of an interrupted run is a side that stopped
		// early, read whole: the comparison itself was not interrupted
		// (exit 130), and running it again gives the same verdict.
		if s.side.Kind == KindReport && s.side.Run.Interrupted && stopped == "" {
			stopped = fmt.Sprintf("the %s report's run (%s) was interrupted: the cases it left unrun were not compared", s.name, s.side.Report)
		}
	}
	counts := CountPairs(c.Pairs)
	compared := counts.Compared()
	switch {
	case ranInterrupted(c.Baseline) || ranInterrupted(c.Candidate):
		return result.RunInterrupted, "a side was interrupted before every case finished"
	case len(changed) > 0:
		return result.RunErrored, strings.Join(changed, "; ")
	case gating(Regressed) > 0:
		n := gating(Regressed)
		return result.RunFailed, fmt.Sprintf("%d %s regressed", n, plural(n, "scenario", "scenarios"))
	case c.Options.FailOnChange && gating(Changed) > 0:
		n := gating(Changed)
		return result.RunFailed, fmt.Sprintf("%d %s changed (--fail-on-change)", n, plural(n, "scenario", "scenarios"))
	case stopped != "":
		return result.RunErrored, stopped
	case counts.NotCompared > 0 && hasErrored(c.Pairs):
		n := counts.NotCompared
		return result.RunErrored, fmt.Sprintf("%d %s could not be compared: a side errored", n, plural(n, "scenario", "scenarios"))
	case compared == 0 && counts.OnlyBaseline > 0 && counts.OnlyCandidate > 0:
		// Both sides ran scenarios and none paired: most often their
		// reports name the same suites by other paths.
		return result.RunEmpty, fmt.Sprintf("nothing was compared: no scenario ran on both sides (none of the baseline's %d has a file and name of the candidate's %d: were they run from different directories?)",
			counts.OnlyBaseline, counts.OnlyCandidate)
	case compared == 0:
		return result.RunEmpty, "nothing was compared: no scenario ran on both sides"
	}
	return result.RunPassed, "nothing regressed"
}

// ranInterrupted reports whether s ran in this comparison and was
// interrupted: a stored report's interrupted run is a side that stopped.
func ranInterrupted(s Side) bool { return s.Kind != KindReport && s.Run.Interrupted }

// hasErrored reports whether a pair was left uncompared by an error (not
// by a scenario skipped on purpose on both sides).
func hasErrored(pairs []*Pair) bool {
	for _, p := range pairs {
		if p == nil || p.Class != NotCompared || p.Quarantined {
			continue
		}
		for _, o := range []*Outcome{p.Baseline, p.Candidate} {
			if o != nil && (o.Verdict == VerdictErrored || o.Status == result.Pending) {
				return true
			}
		}
	}
	return false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
