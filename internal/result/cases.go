package result

import (
	"fmt"
	"iter"
	"strings"
)

// Scenarios yields each case of the run's files with its file, in file
// order, skipping nil files and cases: the walk every renderer makes.
func (r *Result) Scenarios() iter.Seq2[*File, *Case] {
	return func(yield func(*File, *Case) bool) {
		for _, f := range r.Files {
			if f == nil {
				continue
			}
			for _, c := range f.Cases {
				if c != nil && !yield(f, c) {
					return
				}
			}
		}
	}
}

// Cases yields what Scenarios does, then each run-level check (Checks)
// with a nil file.
func (r *Result) Cases() iter.Seq2[*File, *Case] {
	return func(yield func(*File, *Case) bool) {
		for f, c := range r.Scenarios() {
			if !yield(f, c) {
				return
			}
		}
		for _, c := range r.Checks {
			if c != nil && !yield(nil, c) {
				return
			}
		}
	}
}

// Run is one run of a repeated case: its attempts (errored ones retried),
// whose last is its outcome.
type Run struct {
	Number   int
	Attempts []*Attempt
}

// Last is the attempt that decided the run.
func (r Run) Last() *Attempt { return r.Attempts[len(r.Attempts)-1] }

// Runs groups a repeated case's attempts by run, in order. Attempts
// without a run number (reports of older versions) are a run each.
func (c *Case) Runs() []Run {
	var out []Run
	for _, a := range c.Attempts {
		if a == nil {
			continue
		}
		if n := len(out); n > 0 && a.Run != 0 && out[n-1].Number == a.Run {
			out[n-1].Attempts = append(out[n-1].Attempts, a)
			continue
		}
		num := a.Run
		if num == 0 {
			num = len(out) + 1
		}
		out = append(out, Run{Number: num, Attempts: []*Attempt{a}})
	}
	return out
}

// ErroredByConfig reports whether the case errored because of its
// configuration (KindConfig): its scenario cannot be run as written, and
// running it again cannot help. The error that decided the verdict is the
// last attempt's: a configuration error is never retried, so a case that
// met one ends on it. A repeated case errored by configuration when every
// run of it that errored did; one run the platform or the network broke
// is reason enough to try again.
func (c *Case) ErroredByConfig() bool {
	if c.Status != Errored {
		return false
	}
	if c.Repeat == nil {
		a := c.Last()
		return a != nil && a.Error != nil && a.Error.Kind == KindConfig
	}
	config := false
	for _, r := range c.Runs() {
		a := r.Last()
		if a.Status != Errored {
			continue
		}
		if a.Error == nil || a.Error.Kind != KindConfig {
			return false
		}
		config = true
	}
	return config
}

// ErroredScenarios counts the scenarios (not the run-level checks) that
// error the run (Case.Gate: a quarantined one never does), and how many of
// them errored by configuration (Case.ErroredByConfig): what the run's
// status says of an errored run.
func (r *Result) ErroredScenarios() (errored, config int) {
	for _, c := range r.Scenarios() {
		if c.Gate() != Errored {
			continue
		}
		errored++
		if c.ErroredByConfig() {
			config++
		}
	}
	return errored, config
}

// InconclusiveFailed splits the scenarios whose verdict failed the run:
// the statistical ones that ended inconclusive, named "POS NAME" in case
// order, and how many failed otherwise (a check broke). An inconclusive
// case counts as failed though its runs said nothing against the agent,
// so what failed a run is said apart (InconclusiveWhy).
func (r *Result) InconclusiveFailed() (inconclusive []string, broke int) {
	for _, c := range r.Scenarios() {
		switch {
		case c.Gate() != Failed:
		case c.Inconclusive():
			inconclusive = append(inconclusive, fmt.Sprintf("%s %s", c.Pos, c.Name))
		default:
			broke++
		}
	}
	return inconclusive, broke
}

// InconclusiveWhy says that the statistical cases named (InconclusiveFailed)
// ended inconclusive, and what is wanted of them: more runs, not a fix of
// the agent; "" for none.
func InconclusiveWhy(names []string) string {
	n := len(names)
	if n == 0 {
		return ""
	}
	one := n == 1
	pick := func(a, b string) string {
		if one {
			return a
		}
		return b
	}
	return fmt.Sprintf("%d statistical %s inconclusive (%s): %s showed neither that the agent reaches its pass rate nor that it falls short, and %s as failed; let %s run more (raise or leave out repeat:) or widen %s margin",
		n, pick("case was", "cases were"), strings.Join(names, "; "), pick("its runs", "their runs"), pick("it counts", "they count"), pick("it", "them"), pick("its", "their"))
}
