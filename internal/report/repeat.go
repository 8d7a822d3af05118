package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
	"github.com/jstemmer/go-junit-report/v2/junit"
)

// This file renders what every view says about repeated cases (their
// runs, their verdict's grounds) and quarantined ones, so that the
// console, JUnit and JSON say the same thing.

// repeatLine is the one-line verdict of a repeated case.
//
// Fixed rule:  "3 of 5 runs passed (60%), 80% required"
// Sequential (pass rate 0.9, margin 0.1, confidence 0.95):
//
//	"passed 26 of 26 runs; rate ≥ 0.80 at 95% (needs 0.9 − 0.1)"
//	"passed 5 of 11 runs; rate < 0.89 at 95% (needs 0.9)"
//	"inconclusive: passed 15 of 20 runs, the most repeat allows; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); the guarantee needs up to 282 runs"
//	"inconclusive: passed 65 of 81 runs, the most the guarantee needs; rate 0.61–0.92 at 90% (needs 0.9 − 0.2); a rate between 0.7 and 0.9 may end so: a smaller margin decides closer to 0.9, at the cost of more runs"
//
// Errored runs are said beside the counts, never in them.
func repeatLine(r *result.Repeat) string {
	if r.Decision == result.DecisionInterrupted {
		s := fmt.Sprintf("%d %s made of %d, %d passed, %d failed", r.Runs, plural(r.Runs, "run", "runs"), r.Limit, r.Passed, r.Failed)
		if r.Procedure == result.ProcedureSPRT {
			s = fmt.Sprintf("%d %s made of at most %d, %d passed, %d failed", r.Runs, plural(r.Runs, "run", "runs"), r.Limit, r.Passed, r.Failed)
		}
		if r.Errored > 0 {
			s += fmt.Sprintf(", %d errored", r.Errored)
		}
		return s
	}
	if r.Procedure != result.ProcedureSPRT {
		got, want := sharePercents(r.Passed, r.Runs, r.PassRate)
		s := fmt.Sprintf("%d of %d runs passed (%s%%), %s%% required", r.Passed, r.Runs, got, want)
		if r.Errored > 0 {
			s += fmt.Sprintf(", %d errored", r.Errored)
		}
		return s
	}
	counts := fmt.Sprintf("passed %d of %d runs", r.Passed, r.Counted())
	if r.Errored > 0 {
		counts += fmt.Sprintf(" (%d more errored, not counted)", r.Errored)
	}
	level := stats.Level(r.Level)
	needs := fmt.Sprintf("needs %s − %s", stats.Rate(r.PassRate), stats.Rate(r.Margin))
	switch r.Decision {
	case result.DecisionPassed:
		return fmt.Sprintf("%s; rate ≥ %s at %s (%s)", counts, above(r.Lower, r.PassRate-r.Margin), level, needs)
	case result.DecisionFailed:
		return fmt.Sprintf("%s; rate < %s at %s (needs %s)", counts, below(r.Upper, r.PassRate), level, stats.Rate(r.PassRate))
	case result.DecisionInconclusive:
		// Without repeat: the limit is the one the guarantee needs, and
		// no repeat was used up.
		most := "the most repeat allows"
		if r.Limit == r.Needed {
			most = "the most the guarantee needs"
		}
		s := fmt.Sprintf("inconclusive: %s, %s; rate %s–%s at %s (%s)", counts, most, floor2(r.Lower), ceil2(r.Upper), bothLevel(r.Level), needs)
		switch {
		case r.Needed > stats.MaxRuns:
			// stats.Design.Needed's "more than MaxRuns", not a count.
			s += fmt.Sprintf("; the guarantee needs more than %d runs", stats.MaxRuns)
		case r.Needed > r.Limit:
			s += fmt.Sprintf("; the guarantee needs up to %d runs", r.Needed)
		default:
			// Every run the guarantee needs was allowed: more runs are not
			// the remedy. The test promises a verdict only outside the
			// margin, and an agent inside it may end here.
			p1 := stats.Rate(r.PassRate)
			s += fmt.Sprintf("; a rate between %s and %s may end so: a smaller margin decides closer to %s, at the cost of more runs", stats.Rate(r.PassRate-r.Margin), p1, p1)
		}
		return s
	case result.DecisionErrored:
		return fmt.Sprintf("errored: %d of %d runs errored, more than a third; passed %d of the %d others", r.Errored, r.Runs, r.Passed, r.Counted())
	}
	return counts + " so far"
}

// sharePercents prints the share of passing runs and the rate required
// as percentages: the rate as written (80, 79.5, 66.6661), the share in whole
// numbers unless that would contradict the verdict: 39 of 49 runs
// (79.59%) against 80% is "79.6", not "80", which would read as enough.
// The share reaches the rate as the fixed rule counts it (stats.Reaches).
func sharePercents(passed, runs int, rate float64) (got, want string) {
	want = stats.Rate(rate * 100)
	if runs == 0 {
		// No run made (an internal error before the first): Reaches
		// holds for none, and no decimal makes 0 reach the rate.
		return "0", want
	}
	share := float64(passed) / float64(runs)
	reached := stats.Reaches(passed, runs, rate)
	w, _ := strconv.ParseFloat(want, 64)
	for places := 0; ; places++ {
		got = strconv.FormatFloat(share*100, 'f', places, 64)
		if g, _ := strconv.ParseFloat(got, 64); (g >= w) == reached || places == 12 {
			return got, want
		}
	}
}

// bothLevel is the confidence of an interval whose two bounds each hold
// at level (result.Repeat's Lower and Upper): each may fail with 1 −
// level, so both hold at 1 − 2(1 − level), 90% for bounds at 95%. A
// one-sided statement ("rate ≥ 0.80") keeps the bound's own level.
func bothLevel(level float64) string { return stats.Level(1 - 2*(1-level)) }

// floor2 and ceil2 print a bound to two places, rounded away from the
// estimate, so that the printed bound is never tighter than the computed.
func floor2(v float64) string { return strconv.FormatFloat(stats.RoundDown(v, 2), 'f', 2, 64) }
func ceil2(v float64) string  { return strconv.FormatFloat(stats.RoundUp(v, 2), 'f', 2, 64) }

// below prints an upper bound that lies below limit, rounded up but with
// as many places as it takes to stay below it: 0.896 rather than 0.90
// against a limit of 0.9, 0.999991 against 1. A bound within rounding of
// the limit is the limit: a test that fails with its ratio exactly on the
// boundary rules out the rate p1 itself, so "rate < p1" is exact (the
// bound's confidence set is open there). Rounding is boundTolerance: the
// bound is found from the float rates, which at a rate near 1 or a tiny α
// are a relative 1e-10 off the written ones (0.95 − 0.45 at 99.99999%:
// seven failures are Λ = α, and the bound is p1 + 4e-12).
func below(v, limit float64) string {
	for places := 2; places <= 12; places++ {
		if up := stats.RoundUp(v, places); up < limit-1e-12 {
			return strconv.FormatFloat(up, 'f', places, 64)
		}
	}
	if v <= limit+boundTolerance {
		return stats.Rate(limit)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// above is below's mirror for a lower bound that reaches limit (p0 of a
// passed test): rounded down with as many places as it takes to stay at
// or above it, 0.925 rather than 0.92 against 0.95 − 0.025, which would
// read as short of the rate the pass says it reached. A bound within
// rounding of the limit is the limit, as written (p1 − margin to twelve
// digits, not 0.92499999999999993).
func above(v, limit float64) string {
	for places := 2; places <= 12; places++ {
		if down := stats.RoundDown(v, places); down >= limit-1e-12 {
			return strconv.FormatFloat(down, 'f', places, 64)
		}
	}
	if v >= limit-boundTolerance {
		return stats.Rate(limit)
	}
	// Not a pass's bound (a report without a margin): two places.
	return floor2(v)
}

// boundTolerance is how far a bound may be computed past the limit its
// verdict says it reached (stats' own TestBoundsExplainDecision allows
// the same).
const boundTolerance = 1e-9

// runMark is a run's outcome in the runs strip.
func runMark(a *result.Attempt) string {
	switch a.Status {
	case result.Passed, result.Flaky:
		return "✓"
	case result.Failed:
		return "✗"
	case result.Errored:
		return "E"
	}
	return "·"
}

// stripWidth is the number of runs per line of the runs strip.
const stripWidth = 50

// writeRuns writes the body of a repeated case: a strip of its runs, then
// the failed runs grouped by what failed, then each run that did not
// pass: the failed ones with their failures and transcripts (all of them
// when d.maxRuns is 0; else d.maxRuns of them, the first of each kind of
// failure first), the errored ones in one line each.
func (d detail) writeRuns(c *result.Case, indent string) {
	runs := c.Runs()
	if len(runs) == 0 {
		d.line(indent, c.Status.String()+" before any run started")
		return
	}
	var strip strings.Builder
	for i, r := range runs {
		if i > 0 && i%stripWidth == 0 {
			d.line(indent, "runs: "+strip.String())
			strip.Reset()
		}
		strip.WriteString(runMark(r.Last()))
	}
	legend := "  (✓ passed, ✗ failed, E errored: not counted)"
	if c.Repeat != nil && c.Repeat.Procedure == result.ProcedureFixed {
		// The fixed rule's "3 of 5 runs passed" counts them among the runs.
		legend = "  (✓ passed, ✗ failed, E errored)"
	}
	d.line(indent, "runs: "+strip.String()+legend)
	groups := d.st.failureGroups(runs)
	d.writeFailureGroups(groups, indent)
	full := fullRuns(groups, d.maxRuns)
	hidden := 0
	for _, r := range runs {
		a := r.Last()
		switch a.Status {
		case result.Passed, result.Flaky:
			continue
		case result.Failed:
			if full != nil && !full[r.Number] {
				hidden++
				continue
			}
			d.line(indent, fmt.Sprintf("run %d of %d failed:", r.Number, len(runs)))
			d.writeAttempt(a, indent+"  ")
		default:
			d.line(indent, fmt.Sprintf("run %d of %d %s", r.Number, len(runs), d.st.attemptLine(a)))
		}
	}
	if hidden > 0 {
		d.line(indent, fmt.Sprintf("… and %d more failed %s: every transcript is in the JSON and JUnit reports", hidden, plural(hidden, "run", "runs")))
	}
}

// failureGroup is the failed runs of a repeated case that broke the same
// expectation first with the same reply: one way an agent whose answers
// vary gets it wrong.
type failureGroup struct {
	line string // what failed first, and what the agent said
	runs []int  // the run numbers, in order
}

// failureGroups groups a repeated case's failed runs by their line
// (attemptLine without the status), the groups with the most runs first,
// then in the order they were first seen.
func (st style) failureGroups(runs []result.Run) []failureGroup {
	var groups []failureGroup
	at := map[string]int{}
	for _, r := range runs {
		a := r.Last()
		if a.Status != result.Failed {
			continue
		}
		line := strings.TrimPrefix(st.attemptLine(a), a.Status.String()+": ")
		i, ok := at[line]
		if !ok {
			i = len(groups)
			at[line] = i
			groups = append(groups, failureGroup{line: line})
		}
		groups[i].runs = append(groups[i].runs, r.Number)
	}
	slices.SortStableFunc(groups, func(x, y failureGroup) int { return len(y.runs) - len(x.runs) })
	return groups
}

// String is the group's line: "8× (runs 2, 3, 5, 6, 8, …): " and what
// failed.
func (g failureGroup) String() string {
	nums := make([]string, 0, groupRuns+1)
	for _, n := range g.runs[:min(len(g.runs), groupRuns)] {
		nums = append(nums, strconv.Itoa(n))
	}
	if len(g.runs) > groupRuns {
		nums = append(nums, "…")
	}
	return fmt.Sprintf("%d× (%s %s): %s", len(g.runs), plural(len(g.runs), "run", "runs"), strings.Join(nums, ", "), g.line)
}

// groupRuns is the number of run numbers a group's line names before "…".
const groupRuns = 5

// writeFailureGroups writes, above the failed runs in full, what failed
// and how often, with what the agent said, so a designer sees every
// wrong answer without reading every transcript.
func (d detail) writeFailureGroups(groups []failureGroup, indent string) {
	if !worthListing(groups) {
		return
	}
	d.line(indent, fmt.Sprintf("failed runs by what failed first (%d %s of failure):", len(groups), plural(len(groups), "kind", "kinds")))
	listed := groups
	if d.maxRuns > 0 && len(groups) > consoleGroups {
		// An agent that never says the same thing twice makes a kind of
		// every run: the console lists the commonest, the files all.
		listed = groups[:consoleGroups]
	}
	for _, g := range listed {
		d.line(indent+"  ", g.String())
	}
	if rest := groups[len(listed):]; len(rest) > 0 {
		n := 0
		for _, g := range rest {
			n += len(g.runs)
		}
		d.line(indent+"  ", fmt.Sprintf("… and %d more %s in %d %s: every one is in the JSON and JUnit reports", len(rest), plural(len(rest), "kind", "kinds"), n, plural(n, "run", "runs")))
	}
}

// worthListing says whether the groups are worth a list of their own:
// a single failed run is its own summary.
func worthListing(groups []failureGroup) bool {
	return len(groups) > 1 || len(groups) == 1 && len(groups[0].runs) > 1
}

// consoleGroups is the number of kinds of failure the console lists.
const consoleGroups = 10

// fullRuns is the failed runs shown in full when at most limit are: the
// first run of each kind of failure, the most frequent kinds first, then
// the earliest others. It is nil when every one is shown (limit is 0).
func fullRuns(groups []failureGroup, limit int) map[int]bool {
	if limit <= 0 {
		return nil
	}
	full := map[int]bool{}
	for _, g := range groups {
		if len(full) < limit {
			full[g.runs[0]] = true
		}
	}
	var rest []int
	for _, g := range groups {
		rest = append(rest, g.runs[1:]...)
	}
	slices.Sort(rest)
	for _, n := range rest {
		if len(full) >= limit {
			break
		}
		full[n] = true
	}
	return full
}

// quarantineNote is the bracketed remark on a quarantined case's line.
func quarantineNote(c *result.Case) string {
	q := c.Quarantine
	if q == nil {
		return ""
	}
	if q.Lapsed {
		return "quarantine lapsed after " + q.Until + ": gates again"
	}
	who := ""
	if q.Owner != "" {
		who = ", " + q.Owner
	}
	// A reason written as a sentence ends in its own stop, which would
	// read "rewritten.; does not gate".
	reason := strings.TrimRight(q.Reason, ".;:! ")
	return "quarantined until " + q.Until + who + ": " + reason + "; does not gate"
}

// repeatProperties are the JUnit properties of a repeated or quarantined
// case: the same facts as the JSON report.
func repeatProperties(c *result.Case) []junit.Property {
	var props []junit.Property
	add := func(name, value string) {
		props = append(props, junit.Property{Name: name, Value: xmlLine(value)})
	}
	if r := c.Repeat; r != nil {
		add("repeat.procedure", r.Procedure)
		if r.Decision != "" {
			add("repeat.decision", r.Decision)
		}
		add("repeat.runs", strconv.Itoa(r.Runs))
		add("repeat.passed", strconv.Itoa(r.Passed))
		add("repeat.failed", strconv.Itoa(r.Failed))
		add("repeat.errored", strconv.Itoa(r.Errored))
		add("repeat.limit", strconv.Itoa(r.Limit))
		add("repeat.pass_rate", stats.Rate(r.PassRate))
		if r.Procedure == result.ProcedureSPRT {
			add("repeat.margin", stats.Rate(r.Margin))
			add("repeat.confidence", stats.Rate(r.Confidence))
			add("repeat.needed", strconv.Itoa(r.Needed))
		}
		add("repeat.interval", fmt.Sprintf("[%.3f, %.3f] at %s", stats.RoundDown(r.Lower, 3), stats.RoundUp(r.Upper, 3), bothLevel(r.Level)))
		if r.Discarded > 0 {
			add("repeat.discarded", strconv.Itoa(r.Discarded))
		}
	}
	if q := c.Quarantine; q != nil {
		add("quarantine.reason", q.Reason)
		if q.Owner != "" {
			add("quarantine.owner", q.Owner)
		}
		add("quarantine.until", q.Until)
		add("quarantined", strconv.FormatBool(!q.Lapsed))
	}
	return props
}
