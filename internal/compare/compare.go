// Package compare says how a candidate version of an agent differs from a
// baseline (typically pre-release against live): which scenarios
// regressed (passed on the baseline, fail on the candidate), which were
// fixed, which behave differently while keeping their verdict, and which
// got slower or faster. It is pure: both sides arrive as results (of runs,
// or of JSON reports read back), and Build pairs and weighs them.
//
//	c := compare.Build(
//		compare.Input{Spec: "live", Kind: compare.KindEnvironment, Result: liveRes, Status: liveRes.RunStatus()},
//		compare.Input{Spec: "pre-release", Kind: compare.KindEnvironment, Result: preRes, Status: preRes.RunStatus()},
//		compare.DefaultOptions())
//	compare.WriteText(os.Stdout, c, compare.TextOptions{})
//	compare.WriteJSON(file, c) // SchemaV1, read back by ReadJSON
//	os.Exit(map[result.RunStatus]int{...}[c.Status])
//
// Cases are paired by file and name (the file as the report names it,
// cleaned), not by line: editing a suite above a scenario does not break
// its pair. Each pair gets one Class (regressed, fixed, changed, slower,
// faster, unchanged, or why it was not compared); the classes partition
// the pairs, so their counts add up.
//
// How each class is decided, and why the thresholds and tests are what
// they are, is documented with Build and in docs/promoting.md.
package compare

import (
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// Kinds of Side: what a side of the comparison names.
const (
	// KindEnvironment: an environment of the target (live), run now.
	KindEnvironment = "environment"
	// KindTarget: a target of agenttest.yaml (target:NAME), run now.
	KindTarget = "target"
	// KindReport: a JSON report of an earlier run, read back.
	KindReport = "report"
)

// Class is what a pair says about the candidate.
type Class string

// The classes, in the order reports list them.
const (
	// Regressed: passed on the baseline, fails on the candidate; for a
	// statistical scenario, a pass rate significantly lower.
	Regressed Class = "regressed"
	// Fixed: failed on the baseline, passes on the candidate; for a
	// statistical scenario, a pass rate significantly higher.
	Fixed Class = "fixed"
	// Changed: the same verdict, but the transcript differs: a reply, the
	// node path, the handoff, the state written, or its length; for a
	// statistical scenario, a verdict that flipped without a significant
	// difference in pass rates.
	Changed Class = "changed"
	// Slower and Faster: the same verdict and behaviour, but the median
	// turn latency moved beyond the thresholds (Options).
	Slower Class = "slower"
	Faster Class = "faster"
	// Unchanged: the same verdict, behaviour and latency.
	Unchanged Class = "unchanged"
	// NotCompared: a side errored or did not run the scenario (Note says
	// which and why): nothing can be said.
	NotCompared Class = "not-compared"
	// OnlyBaseline and OnlyCandidate: the scenario exists on one side
	// only (a report of another version of the suite).
	OnlyBaseline  Class = "only-baseline"
	OnlyCandidate Class = "only-candidate"
)

// Classes lists every class in report order.
var Classes = []Class{Regressed, Fixed, Changed, Slower, Faster, Unchanged, NotCompared, OnlyBaseline, OnlyCandidate}

// Compared reports whether a pair of class cl was compared: run on both
// sides, with a verdict on each.
func (cl Class) Compared() bool {
	switch cl {
	case Regressed, Fixed, Changed, Slower, Faster, Unchanged:
		return true
	}
	return false
}

// Options are the thresholds of a comparison.
type Options struct {
	// MinShiftMS and MinRatio: a scenario is slower (or faster) only when
	// its median turn latency moved by at least MinShiftMS milliseconds
	// and by at least MinRatio of the baseline's median. Both must hold:
	// a 3 ms agent that takes 6 ms has doubled but nobody waits, and a
	// 4 s agent 150 ms slower is within its noise.
	MinShiftMS float64 `json:"latency_min_shift_ms"`
	MinRatio   float64 `json:"latency_min_ratio"`
	// Alpha is the significance level of the tests: the two-proportion
	// test of statistical scenarios and the signed-rank test of the
	// overall latency.
	Alpha float64 `json:"alpha"`
	// FailOnChange makes a changed scenario fail the comparison like a
	// regression.
	FailOnChange bool `json:"fail_on_change"`
}

// Defaults of Options.
const (
	DefaultMinShift = 100 * time.Millisecond
	DefaultMinRatio = 0.25
	DefaultAlpha    = 0.05
)

// DefaultOptions are the thresholds `agenttest compare` uses unless told
// otherwise.
func DefaultOptions() Options {
	return Options{MinShiftMS: ms(DefaultMinShift), MinRatio: DefaultMinRatio, Alpha: DefaultAlpha}
}

// Input is one side as Build takes it.
type Input struct {
	// Spec is the side as given (live, target:pre, reports/live.json);
	// Kind one of the Kind* constants; Env the environment it ran in;
	// Report the report's path for KindReport.
	Spec, Kind, Env, Report string
	// Result is the side's run (read back for a report), and Status the
	// verdict it states.
	Result *result.Result
	Status result.RunStatus
}

// Comparison is the whole outcome: both sides, every pair, the overall
// latency, and the verdict.
type Comparison struct {
	// Started is when the comparison began; DurationMS how long it took.
	Started    time.Time `json:"started"`
	DurationMS float64   `json:"duration_ms"`
	// Status is the verdict, in the vocabulary of a run (result.RunStatus):
	// passed, failed (something regressed, or changed under
	// FailOnChange), errored (a side could not be compared, or its
	// deployment changed during its run), interrupted, or empty (nothing
	// was compared). Why says what decided it.
	Status result.RunStatus `json:"status"`
	Why    string           `json:"why,omitempty"`
	// Options are the thresholds used.
	Options Options `json:"options"`
	// Rerun is set when the sides that ran selected with --rerun-failed:
	// they tested an earlier run's failed and errored cases again, not
	// the selection, and `agenttest gate` refuses the comparison as it
	// refuses such a run's report.
	Rerun *result.Rerun `json:"rerun,omitempty"`
	// Filter is set when --tags, --name or FILE:LINE arguments narrowed
	// the scenarios compared (result.Result.Filter): `agenttest gate`
	// refuses the comparison unless told the pipeline intends that filter.
	Filter *result.Filter `json:"filter,omitempty"`
	// Baseline and Candidate are the two sides.
	Baseline  Side `json:"baseline"`
	Candidate Side `json:"candidate"`
	// Counts are the pairs per class.
	Counts Counts `json:"counts"`
	// Latency is the overall latency shift.
	Latency Latency `json:"latency"`
	// Pairs are the paired cases, in the candidate's order, then those
	// of the baseline alone.
	Pairs []*Pair `json:"pairs"`
}

// Side is one side of a comparison, as the report shows it.
type Side struct {
	Spec   string        `json:"spec"`
	Kind   string        `json:"kind"`
	Env    string        `json:"env,omitempty"`
	Report string        `json:"report,omitempty"`
	Target result.Target `json:"target"`
	Run    SideRun       `json:"run"`
	// Shard and Rerun are the side's run's, as its result records them:
	// a report of one shard (run --shard K/N) or of a --rerun-failed run
	// holds part of its selection. `agenttest gate` refuses a comparison
	// whose candidate is such a report, as it refuses the report alone.
	Shard *result.Shard `json:"shard,omitempty"`
	Rerun *result.Rerun `json:"rerun,omitempty"`
	// ForcedMerge is the side's run's (result.Result.ForcedMerge): a
	// report agenttest merge --force wrote of reports that were not the
	// complete shards of one selection on one target.
	ForcedMerge []string `json:"forced_merge,omitempty"`
	// Filter is the side's run's (result.Result.Filter): a stored report
	// of a run narrowed by --tags, --name or FILE:LINE.
	Filter *result.Filter `json:"filter,omitempty"`
	// Paths are the suite paths the side's run was given
	// (result.Result.Paths); absent for a report written before runs
	// recorded them.
	Paths []string `json:"paths,omitempty"`
	// Deployments are the side's deployment evidence (the run report's
	// form); `agenttest gate` reads the candidate's.
	Deployments []*result.Deployment `json:"deployments"`
}

// SideRun is what the side's run concluded.
type SideRun struct {
	Started     time.Time        `json:"started"`
	DurationMS  float64          `json:"duration_ms"`
	Status      result.RunStatus `json:"status"`
	Interrupted bool             `json:"interrupted"`
	Stop        *result.Stop     `json:"stop,omitempty"`
}

// Counts counts the pairs by class.
type Counts struct {
	Total         int `json:"total"`
	Regressed     int `json:"regressed"`
	Fixed         int `json:"fixed"`
	Changed       int `json:"changed"`
	Slower        int `json:"slower"`
	Faster        int `json:"faster"`
	Unchanged     int `json:"unchanged"`
	NotCompared   int `json:"not_compared"`
	OnlyBaseline  int `json:"only_baseline"`
	OnlyCandidate int `json:"only_candidate"`
}

// Of returns the count of one class.
func (c Counts) Of(cl Class) int {
	return map[Class]int{Regressed: c.Regressed, Fixed: c.Fixed, Changed: c.Changed, Slower: c.Slower, Faster: c.Faster,
		Unchanged: c.Unchanged, NotCompared: c.NotCompared, OnlyBaseline: c.OnlyBaseline, OnlyCandidate: c.OnlyCandidate}[cl]
}

// Compared is how many of the pairs were compared (Class.Compared).
func (c Counts) Compared() int {
	n := 0
	for _, cl := range Classes {
		if cl.Compared() {
			n += c.Of(cl)
		}
	}
	return n
}

// CountPairs counts pairs by class: the Counts a comparison states, as
// its pairs give them.
func CountPairs(pairs []*Pair) Counts {
	var n Counts
	for _, p := range pairs {
		if p != nil {
			n.add(p.Class)
		}
	}
	return n
}

func (c *Counts) add(cl Class) {
	c.Total++
	switch cl {
	case Regressed:
		c.Regressed++
	case Fixed:
		c.Fixed++
	case Changed:
		c.Changed++
	case Slower:
		c.Slower++
	case Faster:
		c.Faster++
	case Unchanged:
		c.Unchanged++
	case NotCompared:
		c.NotCompared++
	case OnlyBaseline:
		c.OnlyBaseline++
	case OnlyCandidate:
		c.OnlyCandidate++
	}
}

// Pair is one scenario (one expanded examples row) on both sides.
type Pair struct {
	// File and Name identify the scenario; Pos is where it is written
	// (the candidate's position when it has one).
	File string   `json:"file"`
	Name string   `json:"name"`
	Pos  diag.Pos `json:"pos"`
	// Class is what the pair says; Note why it was not compared, or what
	// else a reader should know.
	Class Class  `json:"class"`
	Note  string `json:"note,omitempty"`
	// Quarantined: the scenario is under a quarantine that holds on the
	// candidate; it is compared and listed, but never fails the
	// comparison.
	Quarantined bool `json:"quarantined,omitempty"`
	// Baseline and Candidate are the outcomes; nil on the side that does
	// not have the scenario.
	Baseline  *Outcome `json:"baseline"`
	Candidate *Outcome `json:"candidate"`
	// Changes are the differences of the transcripts, turn by turn.
	Changes []Change `json:"changes"`
	// Latency is the pair's latency shift; nil when a side has no turn.
	Latency *ScenarioLatency `json:"latency"`
	// Rates compares the pass rates of a statistical scenario; nil for
	// the others.
	Rates *Rates `json:"rates"`

	// turns are the turn latencies of each side (ms), for the overall
	// latency.
	turns [2][]float64
}

// Outcome is a scenario's outcome on one side.
type Outcome struct {
	// Status is the case's status; Verdict what it says of the agent:
	// "passed" (flaky included), "failed", "errored" or "not run".
	Status         result.Status `json:"status"`
	Verdict        string        `json:"verdict"`
	ConversationID string        `json:"conversation_id,omitempty"`
	Agent          string        `json:"agent,omitempty"`
	Env            string        `json:"env,omitempty"`
	// Failures are the one-line messages of the broken expectations of
	// the attempt compared; Error its error, for an errored case.
	Failures []string `json:"failures,omitempty"`
	Error    string   `json:"error,omitempty"`
	// Unchecked is the case's (result.Case.Unchecked): its scenario
	// checks nothing of the agent, so it passes whenever the agent
	// answers. `agenttest gate` counts no candidate's such case as
	// testing its agent, as it counts none of a run.
	Unchecked bool `json:"unchecked,omitempty"`
}

// UncheckedOn names the sides on which the pair's case checks nothing of
// the agent (Outcome.Unchecked): "the candidate", "the baseline", "both
// sides", or "". Such a case passes whenever the agent answers, so its
// class says nothing of the agent there: the console and the HTML
// report say so beside it, as the JSON and the gate do.
func (p *Pair) UncheckedOn() string {
	base := p.Baseline != nil && p.Baseline.Unchecked
	cand := p.Candidate != nil && p.Candidate.Unchecked
	switch {
	case base && cand:
		return "both sides"
	case cand:
		return "the candidate"
	case base:
		return "the baseline"
	}
	return ""
}

// Unchecked are the pairs whose case checks nothing on a side
// (UncheckedOn), in order, whatever their class: an unchanged one is not
// listed with the others, and a reader must still see that it tested
// nothing.
func Unchecked(ps []*Pair) []*Pair {
	var out []*Pair
	for _, p := range ps {
		if p != nil && p.UncheckedOn() != "" {
			out = append(out, p)
		}
	}
	return out
}

// Verdicts of an Outcome.
const (
	VerdictPassed  = "passed"
	VerdictFailed  = "failed"
	VerdictErrored = "errored"
	VerdictNotRun  = "not run"
)

// Kinds of Change.
const (
	ChangeReply   = "reply"
	ChangeTrace   = "trace"
	ChangeHandoff = "handoff"
	ChangeState   = "state"
	ChangeEnded   = "ended"
	// ChangeSimilar: a similar check of a reply that changed scored
	// differently: how much nearer its threshold (or further from it)
	// the candidate's wording is. Pos is the matcher's, Baseline and
	// Candidate its score against its threshold ("similar 0.95 ≥
	// 0.80").
	ChangeSimilar = "similar"
	// ChangeTurns: the transcripts have different lengths (one stopped
	// at a failing step, or the conversation ended earlier).
	ChangeTurns = "turns"
	// ChangeVerdict: a statistical scenario's verdict flipped without a
	// significant difference of pass rates.
	ChangeVerdict = "verdict"
)

// Change is one difference between the transcripts.
type Change struct {
	// Turn is the turn's index (0: the greeting); Pos and Say the turn as
	// written.
	Turn int      `json:"turn"`
	Pos  diag.Pos `json:"pos"`
	Say  string   `json:"say,omitempty"`
	// What is one of the Change* constants.
	What string `json:"what"`
	// Baseline and Candidate are what each side had; Diff, for replies,
	// the word diff ([-removed-]{+added+}).
	Baseline  string `json:"baseline"`
	Candidate string `json:"candidate"`
	Diff      string `json:"diff,omitempty"`
}

// ScenarioLatency is a pair's latency: each side's median and 95th
// percentile over its turns (greeting included), and the shifts.
type ScenarioLatency struct {
	BaselineTurns   int     `json:"baseline_turns"`
	CandidateTurns  int     `json:"candidate_turns"`
	BaselineMedian  float64 `json:"baseline_median_ms"`
	CandidateMedian float64 `json:"candidate_median_ms"`
	MedianShift     float64 `json:"median_shift_ms"`
	BaselineP95     float64 `json:"baseline_p95_ms"`
	CandidateP95    float64 `json:"candidate_p95_ms"`
	P95Shift        float64 `json:"p95_shift_ms"`
	// Verdict is "slower", "faster" or "unchanged" by the thresholds.
	Verdict string `json:"verdict"`
}

// Latency is the overall latency: over the scenarios compared on both
// sides, the median and 95th percentile of every turn, the median of the
// scenarios' median shifts, and Wilcoxon's signed-rank test of those
// shifts.
type Latency struct {
	// Scenarios is the number of pairs with turns on both sides.
	Scenarios       int     `json:"scenarios"`
	BaselineMedian  float64 `json:"baseline_median_ms"`
	CandidateMedian float64 `json:"candidate_median_ms"`
	BaselineP95     float64 `json:"baseline_p95_ms"`
	CandidateP95    float64 `json:"candidate_p95_ms"`
	// MedianShift is the median over scenarios of their median shift.
	MedianShift float64 `json:"median_shift_ms"`
	// Test is the signed-rank test of the per-scenario shifts.
	Test SignedRankTest `json:"test"`
	// Verdict is "slower" or "faster" when the test is significant at
	// Alpha and MedianShift passes the thresholds, else "unchanged".
	Verdict string `json:"verdict"`
}

// SignedRankTest is the outcome of stats.WilcoxonSignedRank, named.
type SignedRankTest struct {
	Name  string  `json:"name"`
	N     int     `json:"n"`
	W     float64 `json:"statistic"`
	P     float64 `json:"p_value"`
	Exact bool    `json:"exact"`
}

// Rates compares the pass rates of a statistical scenario (runs that are
// evidence: errored runs left out) with Fisher's exact test.
type Rates struct {
	BaselinePassed  int     `json:"baseline_passed"`
	BaselineRuns    int     `json:"baseline_runs"`
	CandidatePassed int     `json:"candidate_passed"`
	CandidateRuns   int     `json:"candidate_runs"`
	Test            string  `json:"test"`
	P               float64 `json:"p_value"`
}

// BaselineRate and CandidateRate are the pass rates (0 without runs).
func (r *Rates) BaselineRate() float64  { return rate(r.BaselinePassed, r.BaselineRuns) }
func (r *Rates) CandidateRate() float64 { return rate(r.CandidatePassed, r.CandidateRuns) }

func rate(passed, runs int) float64 {
	if runs == 0 {
		return 0
	}
	return float64(passed) / float64(runs)
}

// ms is d in milliseconds, fractional.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
