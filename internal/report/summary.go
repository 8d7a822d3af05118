package report

import (
	"time"

	"github.com/agenttest/agenttest/internal/runner"
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
	// Status folds every verdict with runner.Status.Merge.
	Status runner.Status
	// Duration is the run's wall time.
	Duration time.Duration
	// Interrupted repeats Result.Interrupted.
	Interrupted bool
}

// Summarize counts the cases of r.
func Summarize(r *runner.Result) Summary {
	s := Summary{Duration: r.Duration, Interrupted: r.Interrupted}
	for _, c := range allCases(r) {
		s.add(c.Status)
	}
	return s
}

// add counts one verdict.
func (s *Summary) add(st runner.Status) {
	s.Total++
	if s.Total == 1 {
		s.Status = st
	} else {
		s.Status = s.Status.Merge(st)
	}
	switch st {
	case runner.Passed:
		s.Passed++
	case runner.Flaky:
		s.Flaky++
	case runner.Failed:
		s.Failed++
	case runner.Errored:
		s.Errored++
	case runner.Skipped:
		s.Skipped++
	default:
		s.Pending++
	}
}

// Counts returns the number of cases of r per status; statuses that no case
// has are absent.
func Counts(r *runner.Result) map[runner.Status]int {
	m := make(map[runner.Status]int)
	for _, c := range allCases(r) {
		m[c.Status]++
	}
	return m
}

// allCases lists every case of r in report order: files in order, their
// cases in order, then the run-level checks.
func allCases(r *runner.Result) []*runner.Case {
	var cs []*runner.Case
	for _, f := range r.Files {
		if f == nil {
			continue
		}
		for _, c := range f.Cases {
			if c != nil {
				cs = append(cs, c)
			}
		}
	}
	for _, c := range r.Checks {
		if c != nil {
			cs = append(cs, c)
		}
	}
	return cs
}
