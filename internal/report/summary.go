package report

import (
	"fmt"
	"time"

	"github.com/agenttest/agenttest/internal/result"
)

// Summary counts the cases of a run by verdict. Run-level checks
// (Result.Checks) count like scenarios. Flaky cases are counted apart from
// passed ones: they passed, but the summary must not hide that they needed a
// retry.
type Summary struct {
	Total   int
	Passed  int
	Flaky   int
	Failed  int
	Errored int
	Skipped int
	// Pending counts cases that never ran because the run was interrupted.
	Pending int
	// Cut counts the repeated cases an interruption or a stop cut off
	// after some of their runs, before a verdict (they are among Pending
	// or Skipped: Repeat.Decision is result.DecisionInterrupted).
	Cut int
	// NotRun counts the skipped cases a stop (Result.Stop: --fail-fast, a
	// platform that cannot be used) left unrun; they are among Skipped.
	NotRun int
	// Checks counts the run-level checks (Result.Checks, the alert gate)
	// among Total.
	Checks int
	// Quarantined counts the cases under a quarantine that holds: they are
	// counted here only, whatever their outcome, and do not gate the run.
	Quarantined int
	// Inconclusive counts the failed cases whose sequential test reached
	// its limit undecided (they are among Failed).
	Inconclusive int
	// Lapsed counts the cases whose quarantine lapsed: they gate again and
	// are counted by their outcome.
	Lapsed int
	// Status folds every verdict with result.Status.Merge.
	Status result.Status
	// Duration is the run's wall time.
	Duration time.Duration
	// Interrupted repeats Result.Interrupted.
	Interrupted bool
}

// Summarize counts the cases of r, its run-level checks included: the
// counts of the JSON and JUnit reports, where each check is a case.
func Summarize(r *result.Result) Summary {
	s := summarizeScenarios(r)
	for _, c := range r.Checks {
		if c != nil {
			s.add(c)
			s.Checks++
			s.countStopped(r, c)
		}
	}
	return s
}

// summarizeScenarios counts the scenarios of r without its run-level
// checks: the cases the console's first line announces, so that its
// count line adds up to them and names the checks apart.
func summarizeScenarios(r *result.Result) Summary {
	s := Summary{Duration: r.Duration, Interrupted: r.Interrupted}
	for _, c := range r.Scenarios() {
		s.add(c)
		s.countStopped(r, c)
	}
	return s
}

// countStopped counts c in NotRun when the run's stop left it unrun.
func (s *Summary) countStopped(r *result.Result, c *result.Case) {
	if c.Status == result.Skipped && r.Stop.Left(c.SkipReason) {
		s.NotRun++
	}
}

// add counts one case by the verdict it gates the run with (Case.Gate).
func (s *Summary) add(c *result.Case) {
	s.Total++
	if s.Total == 1 {
		s.Status = c.Gate()
	} else {
		s.Status = s.Status.Merge(c.Gate())
	}
	if c.Quarantine != nil && c.Quarantine.Lapsed {
		s.Lapsed++
	}
	if c.QuarantineHeld() {
		s.Quarantined++
		return
	}
	if c.Inconclusive() && c.Status == result.Failed {
		s.Inconclusive++
	}
	if c.Repeat != nil && c.Repeat.Decision == result.DecisionInterrupted {
		s.Cut++
	}
	switch c.Status {
	case result.Passed:
		s.Passed++
	case result.Flaky:
		s.Flaky++
	case result.Failed:
		s.Failed++
	case result.Errored:
		s.Errored++
	case result.Skipped:
		s.Skipped++
	default:
		s.Pending++
	}
}

// Counts returns the number of cases of r per status; statuses that no case
// has are absent.
func Counts(r *result.Result) map[result.Status]int {
	m := make(map[result.Status]int)
	for _, c := range allCases(r) {
		m[c.Status]++
	}
	return m
}

// allCases lists every case of r in report order: files in order, their
// cases in order, then the run-level checks.
func allCases(r *result.Result) []*result.Case {
	var cs []*result.Case
	for _, c := range r.Cases() {
		cs = append(cs, c)
	}
	return cs
}

// PacingLine says what the platform's rate limits cost a run, e.g.
// "paced at 19.8 req/s by 212 rate limits; a scenario waited 2m29s on
// average, 2m31s at most", or "" when nothing was limited or paced. The
// rate is the requests the platform accepted per second of the run, its
// own calls and run-level checks included; the waits are the scenarios'
// alone, since the line speaks of scenarios (an alert gate that waited is
// not one), and the average is over the scenarios that ran: one skipped
// or never started (fail-fast, an interrupt) waited for nothing, and
// counting it made a run stopped early read as hardly paced.
func PacingLine(r *result.Result) string {
	p := r.Pacing
	if p == nil {
		return ""
	}
	line := fmt.Sprintf("paced at %.1f req/s", p.AcceptedRate(r.Duration))
	if p.Limited > 0 {
		line += fmt.Sprintf(" by %d rate %s", p.Limited, plural(p.Limited, "limit", "limits"))
	} else {
		line += ", no rate limits"
	}
	var n int
	var waited, most time.Duration
	for _, c := range r.Scenarios() {
		if len(c.Attempts) == 0 {
			continue
		}
		n++
		waited += c.RateWaited
		most = max(most, c.RateWaited)
	}
	if waited > 0 {
		line += fmt.Sprintf("; a scenario waited %s on average, %s at most", waitTime(waited/time.Duration(n)), waitTime(most))
	}
	return line
}

// waitTime renders a wait on rate limits: to the millisecond below a
// second, to the tenth of a second below a minute, and to the second
// beyond (2m31s).
func waitTime(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}
