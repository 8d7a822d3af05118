// Package history reads earlier JSON reports of agenttest run (ordered
// by their runs' starts) and says, per scenario, how it has been doing: its runs, its pass
// rate with an interval, its verdict in each report, how often the
// verdict flipped, whether it did worse in the newer half of the reports
// than in the older, and whether it went from passing to failing.
//
//	var reports []*history.Report
//	for _, p := range paths {
//		r, err := history.Read(p, file) // a report.SchemaV1 document
//		...
//		reports = append(reports, r)
//	}
//	h := history.Build(reports)
//	history.WriteText(os.Stdout, h)
//
// Scenarios are matched across reports by file and name, not by line: a
// scenario keeps its history when lines are added above it, and an edited
// name starts a new one.
package history

import (
	"slices"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
)

// Level is the confidence of the pass-rate interval: both bounds hold
// together at Level, so each is a one-sided bound at (1 + Level) / 2.
const Level = 0.95

// Verdict is a scenario's verdict in one report, as it gates a run.
type Verdict string

// Verdicts. A report in which the scenario does not appear, or did not run
// (skipped, interrupted), has VerdictNone.
const (
	VerdictNone         Verdict = ""
	VerdictPassed       Verdict = "passed"
	VerdictFlaky        Verdict = "flaky"
	VerdictFailed       Verdict = "failed"
	VerdictInconclusive Verdict = "inconclusive"
	VerdictErrored      Verdict = "errored"
)

// side is what a verdict says about the agent: +1 it passed, -1 it failed,
// 0 nothing (errored, not run).
func (v Verdict) side() int {
	switch v {
	case VerdictPassed, VerdictFlaky:
		return 1
	case VerdictFailed, VerdictInconclusive:
		return -1
	}
	return 0
}

// Report is what history reads of one JSON report.
type Report struct {
	// Path is the file as given.
	Path string
	// Started is the run's start, as written (RFC 3339), and Status its
	// verdict.
	Started string
	Status  string
	// Envs are the environments its cases ran in (of its deployments,
	// else its target's): a nightly job against live that tested sandbox
	// shows it here.
	Envs []string
	// Target is the target its run ran against: History.Targets groups
	// the reports by it.
	Target result.Target
	// Counts are its cases by verdict.
	Counts Counts
	// Causes say why the run could not give every case a verdict about
	// the agent, beyond its errored cases: a stop (a platform that could
	// not be used, a refused key, --fail-fast), a deployment that changed
	// during the run, an interruption.
	Causes []string
	// Changed is set when a deployment changed during the run: its
	// verdicts are about two deployments, and no one can say which case
	// tested which (result.Result.RunStatus), so they are no claim about
	// the agent: not a pass or a failure to flip or regress on, and not
	// an answer that varied.
	Changed bool
	// Deployments are the deployments its run tested, one per agent and
	// environment, as read before the agent's first case; none when the
	// report records none (a report of the embedded simulator has them
	// too).
	Deployments []Deployment
	Cases       []Case
	// Run identifies the run the report is of (set by Read): its start,
	// target and shard, or the file's content when it records no start.
	// Two reports with one Run are the same run (a copy such as
	// latest.json beside the dated reports, or a file given twice), which
	// Build counts once. Empty identifies nothing.
	Run string
}

// Counts are a report's cases by verdict (its counts; inconclusive
// cases are counted among the failed ones too). NotRun are the ones an
// interruption or the run's stop left unrun; Skipped the ones skipped on
// purpose (skip:, @skip), which the run did not mean to run.
// Quarantined are the ones a quarantine kept from gating, whatever their
// verdict: the report counts them apart from the others.
type Counts struct {
	Passed, Flaky, Failed, Inconclusive, Errored, NotRun, Skipped, Quarantined int
}

// Deployment is a deployment a report's run tested: the agent, the
// environment, the deployment's id and, when the platform said, its
// version.
type Deployment struct{ Agent, Env, ID, Version string }

// deployment is the deployment of agent in env the report's run tested,
// or nil when it records none. An empty env matches the agent's only
// deployment: a case of a report from before cases named theirs.
func (r *Report) deployment(agent, env string) *Deployment {
	var found *Deployment
	for i, d := range r.Deployments {
		if d.Agent != agent || d.ID == "" || env != "" && d.Env != env {
			continue
		}
		if found != nil {
			return nil
		}
		found = &r.Deployments[i]
	}
	return found
}

// Case is one scenario's outcome in a report.
type Case struct {
	File, Name string
	// Agent and Env are the agent and environment it ran against, as the
	// report names them ("" when it does not: a run-level check).
	Agent, Env string
	Verdict    Verdict
	// Quarantined: a quarantine held, so the verdict did not gate.
	Quarantined bool
	// Passed, Failed and Errored count its runs: the repeat's for a
	// repeated scenario, the attempts' otherwise.
	Passed, Failed, Errored int
	// MatcherKeys are its similar matchers that scored, Scores their
	// scores (one each, in order): none in a report written before
	// scores were kept.
	MatcherKeys []MatcherKey
	Scores      []Scored
}

// Tally counts a scenario's runs in one report.
type Tally struct{ Passed, Failed, Errored int }

// Key identifies a scenario across reports.
type Key struct{ File, Name string }

// History is every scenario's record over the reports, in the order the
// scenarios first appear.
type History struct {
	Reports   []*Report
	Scenarios []*Scenario
	// Same lists the reports Build left out because they are of a run
	// another report already is (Report.Run): each entry holds the
	// report counted, then those that were the same run, as given.
	Same [][]*Report
	// Undated is the first report, as given, that records no start (nil
	// when each does): the reports are then in the order given, not
	// oldest first, and the views say so.
	Undated *Report
}

// Scenario is one scenario's record.
type Scenario struct {
	Key
	// Verdicts has one entry per report, VerdictNone where it did not run;
	// Quarantined likewise.
	Verdicts    []Verdict
	Quarantined []bool
	// Retried is set where it passed only after a failed attempt: a
	// retry hid a wrong answer of the agent. A pass after errored
	// attempts alone is not: the agent passed whenever it was tested.
	Retried []bool
	// Mixed is set where its runs both passed and failed within the
	// report: under one deployment, the same scenario went both ways (a
	// retry, or a repeat's runs). Retried is one case of it.
	Mixed []bool
	// Passed, Failed and Errored sum its runs over the reports; ByReport
	// has them report by report, nil where it is not in the report, so
	// that a night its answers varied says how much.
	Passed, Failed, Errored int
	ByReport                []*Tally
	// Lower and Upper bound its pass rate, together at Level
	// (Clopper–Pearson over the pooled runs that are evidence); 0 and 1
	// without any.
	Lower, Upper float64
	// Flips counts the changes between passing and failing from one
	// report where it passed or failed to the next (reports of a changed
	// deployment aside: Report.Changed).
	Flips int
	// Regressed is set when it went from passing to failing: its latest
	// verdict fails and an earlier one passed (errors, reports where it
	// did not run and reports of a changed deployment aside). PassedIn is
	// the last report where it passed, FailedIn the first where it failed
	// after that.
	Regressed          bool
	PassedIn, FailedIn int
	// PassedOn and FailedOn are, for a scenario that Regressed, the
	// deployments it was tested on in the reports PassedIn and FailedIn
	// (nil where a report records none). One id in both says the agent
	// was not redeployed between the two runs: what changed is its
	// answers, its data or the platform, not its version.
	PassedOn, FailedOn *Deployment
	// Older and Newer count its verdicts in the older and the newer half
	// of the reports (History.Halves), reports of a changed deployment
	// aside. Worse is set when the newer half is worse: a larger share of
	// its verdicts there failed, or as large a share failed and a larger
	// one passed only on a retry. A scenario still passing, more and more
	// often only on a retry, shows here before it fails.
	Older, Newer Trend
	Worse        bool
	// Matchers are its similar matchers' scores over the reports, in
	// the order they were first scored: none when no report kept any.
	Matchers []*Matcher
}

// Trend counts a scenario's verdicts in some reports: clean passes,
// passes only on a retry after failing (Scenario.Retried), and failures
// (inconclusive ones too). Errored verdicts and reports it did not run in
// are not counted.
type Trend struct{ Passed, Retried, Failed int }

// judged is the number of verdicts counted.
func (t Trend) judged() int { return t.Passed + t.Retried + t.Failed }

// worseThan reports whether t's shares are worse than o's (see
// Scenario.Worse). Shares are compared without division (t.Failed/n
// against o.Failed/m as t.Failed*m against o.Failed*n), so either
// without verdicts is never worse: both products are 0.
func (t Trend) worseThan(o Trend) bool {
	n, m := t.judged(), o.judged()
	if f, g := t.Failed*m, o.Failed*n; f != g {
		return f > g
	}
	return t.Retried*m > o.Retried*n
}

// Halves are the indexes of the older and the newer half of the
// reports, oldest first; of an odd number, the middle report is in
// neither, so that both halves span as many reports.
func (h *History) Halves() (older, newer []int) {
	n := len(h.Reports)
	for i := range n / 2 {
		older = append(older, i)
		newer = append(newer, n-n/2+i)
	}
	return older, newer
}

// Worse are the scenarios whose newer half of the reports is worse than
// the older (Scenario.Worse), in order.
func (h *History) Worse() []*Scenario {
	var out []*Scenario
	for _, s := range h.Scenarios {
		if s.Worse {
			out = append(out, s)
		}
	}
	return out
}

// Unsteady reports whether its runs both passed and failed within one
// report (Mixed): the agent's answers vary, whatever the verdict (a retry
// or a pass rate may have let it pass). A scenario that passed one night
// and failed the next is not unsteady by that alone: the agent may have
// changed in between. Errored runs say nothing of the agent.
func (s *Scenario) Unsteady() bool { return slices.Contains(s.Mixed, true) }

// Runs is the number of its runs, errored ones included.
func (s *Scenario) Runs() int { return s.Passed + s.Failed + s.Errored }

// Rate is its pass rate over the runs that are evidence, and whether there
// are any.
func (s *Scenario) Rate() (float64, bool) {
	n := s.Passed + s.Failed
	if n == 0 {
		return 0, false
	}
	return float64(s.Passed) / float64(n), true
}

// Build gathers the reports into each scenario's record, oldest first:
// in the order of their runs' starts when every report says when it
// started (a glob such as reports/*.json need not sort by time), else as
// given (History.Undated names a report without a start). A run given
// twice (reports with one Run) counts once, as the first of them given;
// History.Same lists the others, since counting its runs twice would
// make pass rates look surer than they are.
func Build(reports []*Report) *History {
	reports, same := distinct(reports)
	reports, undated := byStart(reports)
	h := &History{Reports: reports, Same: same, Undated: undated}
	index := map[Key]*Scenario{}
	// on is the deployment a scenario was tested on in a report.
	type on struct {
		report int
		d      *Deployment
	}
	deployed := map[*Scenario][]on{}
	for i, r := range reports {
		for _, c := range r.Cases {
			k := Key{File: c.File, Name: c.Name}
			s := index[k]
			if s == nil {
				s = &Scenario{Key: k, Verdicts: make([]Verdict, len(reports)), Quarantined: make([]bool, len(reports)), Retried: make([]bool, len(reports)), Mixed: make([]bool, len(reports)),
					ByReport: make([]*Tally, len(reports))}
				index[k] = s
				h.Scenarios = append(h.Scenarios, s)
			}
			// A name twice in one file (examples rows make distinct
			// names) keeps the worse verdict.
			if s.Verdicts[i] == VerdictNone || c.Verdict.side() < s.Verdicts[i].side() {
				s.Verdicts[i] = c.Verdict
			}
			s.Quarantined[i] = s.Quarantined[i] || c.Quarantined
			s.Retried[i] = s.Retried[i] || !r.Changed && c.Verdict == VerdictFlaky && c.Failed > 0
			s.Mixed[i] = s.Mixed[i] || !r.Changed && c.Passed > 0 && c.Failed > 0
			s.Passed += c.Passed
			s.Failed += c.Failed
			s.Errored += c.Errored
			if s.ByReport[i] == nil {
				s.ByReport[i] = &Tally{}
			}
			t := s.ByReport[i]
			t.Passed, t.Failed, t.Errored = t.Passed+c.Passed, t.Failed+c.Failed, t.Errored+c.Errored
			s.addScores(c, i, len(reports))
			if d := r.deployment(c.Agent, c.Env); d != nil {
				deployed[s] = append(deployed[s], on{i, d})
			}
		}
	}
	older, newer := h.Halves()
	for _, s := range h.Scenarios {
		s.Older, s.Newer = s.trend(reports, older), s.trend(reports, newer)
		s.Worse = s.Newer.worseThan(s.Older)
		for _, m := range s.Matchers {
			m.trend(reports, older, newer)
		}
		s.Lower, s.Upper = 0, 1
		if n := s.Passed + s.Failed; n > 0 {
			s.Lower, s.Upper = stats.Binomial(s.Passed, n, 1-(1-Level)/2)
		}
		// last is the side of the latest verdict that passed or failed;
		// passedAt the latest passing report, failedAt the first failing
		// one after it.
		last, passedAt, failedAt := 0, -1, -1
		for i, v := range s.Verdicts {
			side := v.side()
			switch {
			case side == 0 || reports[i].Changed:
				continue
			case last != 0 && side != last:
				s.Flips++
			}
			switch {
			case side > 0:
				passedAt, failedAt = i, -1
			case failedAt < 0:
				failedAt = i
			}
			last = side
		}
		if last < 0 && passedAt >= 0 {
			s.Regressed, s.PassedIn, s.FailedIn = true, passedAt, failedAt
			for _, o := range deployed[s] {
				switch o.report {
				case passedAt:
					s.PassedOn = o.d
				case failedAt:
					s.FailedOn = o.d
				}
			}
		}
	}
	return h
}

// trend counts its verdicts in the reports of the indexes idx.
func (s *Scenario) trend(reports []*Report, idx []int) Trend {
	var t Trend
	for _, i := range idx {
		switch side := s.Verdicts[i].side(); {
		case side == 0 || reports[i].Changed:
		case side < 0:
			t.Failed++
		case s.Retried[i]:
			t.Retried++
		default:
			t.Passed++
		}
	}
	return t
}

// Regressions are the scenarios that went from passing to failing, in
// order.
func (h *History) Regressions() []*Scenario {
	var out []*Scenario
	for _, s := range h.Scenarios {
		if s.Regressed {
			out = append(out, s)
		}
	}
	return out
}

// Unlisted says what the newest report no longer tested: since is the
// latest report before it that holds cases, dropped the scenarios that
// report holds and the newest does not (not even skipped or left unrun:
// removed, renamed, or no longer selected by the run's tags or names),
// added those the newest holds and it does not (new, or the new name of
// a renamed one). A nightly job's verdict strip shows such a scenario as
// · beside the · of a night the platform kept from running it; only this
// says that the newest night stopped testing it. since is -1, and both
// lists empty, when the newest report holds no case (its status, empty
// or stopped, says it tested nothing) or no earlier report does.
func (h *History) Unlisted() (since int, dropped, added []*Scenario) {
	n := len(h.Reports)
	if n == 0 || len(h.Reports[n-1].Cases) == 0 {
		return -1, nil, nil
	}
	since = n - 2
	for since >= 0 && len(h.Reports[since].Cases) == 0 {
		since--
	}
	if since < 0 {
		return -1, nil, nil
	}
	for _, s := range h.Scenarios {
		switch was, is := s.ByReport[since] != nil, s.ByReport[n-1] != nil; {
		case was && !is:
			dropped = append(dropped, s)
		case is && !was:
			added = append(added, s)
		}
	}
	return since, dropped, added
}

// Unsteady are the scenarios whose runs both passed and failed within a
// report, in order.
func (h *History) Unsteady() []*Scenario {
	var out []*Scenario
	for _, s := range h.Scenarios {
		if s.Unsteady() {
			out = append(out, s)
		}
	}
	return out
}

// Kept lists the indexes of the reports whose run could not say whether
// the agent is fine (status errored: errored cases, a platform that could
// not be used, a deployment that changed during the run) or was
// interrupted: the platform's or the network's nights, not the agent's.
func (h *History) Kept() []int {
	var out []int
	for i, r := range h.Reports {
		if r.Status == "errored" || r.Status == "interrupted" {
			out = append(out, i)
		}
	}
	return out
}

// Targets groups the reports by the target they tested: each group
// holds the indexes of the reports of one target, in order, the groups
// in the order their first reports come. Reports are of one target when
// result.Target.Diff finds none between them (the name, account,
// environment and platform merge holds shards to). The agents a report
// tested do not count: a suite added for another agent changes what runs,
// not where. More than one group is a history of more than one target:
// each scenario's record folds them together, and a flip may be the
// targets', not the agent's.
func (h *History) Targets() [][]int {
	var groups [][]int
	for i, r := range h.Reports {
		g := slices.IndexFunc(groups, func(g []int) bool { return h.Reports[g[0]].Target.Diff(r.Target) == "" })
		if g < 0 {
			groups = append(groups, []int{i})
			continue
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// distinct returns the reports without those of a run an earlier one
// is of, and the groups of reports of one run, in the order given.
func distinct(reports []*Report) (kept []*Report, same [][]*Report) {
	first := map[string]int{}
	group := map[string]int{}
	for _, r := range reports {
		if r.Run == "" {
			kept = append(kept, r)
			continue
		}
		i, seen := first[r.Run]
		if !seen {
			first[r.Run] = len(kept)
			kept = append(kept, r)
			continue
		}
		g, ok := group[r.Run]
		if !ok {
			g = len(same)
			group[r.Run] = g
			same = append(same, []*Report{kept[i]})
		}
		same[g] = append(same[g], r)
	}
	return kept, same
}

// byStart returns the reports ordered by their runs' starts, the earliest
// first and ties as given; when a start is missing (or, in a Report not
// made by Read, does not parse), the reports as given and the first
// report without one.
func byStart(reports []*Report) ([]*Report, *Report) {
	starts := make(map[*Report]time.Time, len(reports))
	for _, r := range reports {
		t, err := result.ParseTime(r.Started)
		if err != nil || t.IsZero() {
			return reports, r
		}
		starts[r] = t
	}
	sorted := slices.Clone(reports)
	slices.SortStableFunc(sorted, func(a, b *Report) int { return starts[a].Compare(starts[b]) })
	return sorted, nil
}
