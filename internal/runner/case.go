package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/stats"
)

// This file is the case loop: everything between "a case was scheduled"
// and "the case has its verdict". It owns whether the case runs (skip,
// interruption, fail-fast), its retries and repeats, and the recovery of
// panics; each attempt is one pass of the scenario's program through a
// Session (attempt, the one step loop).

// execute decides whether the case runs and runs it. A panic anywhere below
// becomes an Errored case: unrecovered in a worker it would end the
// process, and one bad case must not take every report down with it.
func (r *runner) execute(ctx context.Context, j *job) {
	c, sc := j.c, j.sc
	if !r.gate(ctx, j) {
		return
	}
	started := r.opts.Now()
	ctx, acct := withAccount(ctx)
	defer func() {
		c.Duration = r.opts.Now().Sub(started)
		r.settleAccount(c, acct)
		if p := recover(); p != nil {
			r.internalError(j, p, debug.Stack())
		}
	}()
	r.opts.Observer.CaseStarted(j.file, c)

	if r.noAgent(j) {
		return
	}
	if st := sc.RunStats(r.opts.Stats).Resolve(); st.Repeat > 1 || st.Sequential() {
		r.repeat(ctx, j, st)
		return
	}
	st, cut := r.runOnce(ctx, j, r.retries(sc), true)
	if cut {
		r.cutOff(c)
		return
	}
	c.Status = st
}

// attempt runs the scenario's program once, step by step, in a fresh
// session, stopping at the first step that does not hold: later steps
// depend on the earlier ones, and the attempt records them as not run.
// It returns the recorded attempt (Pending when the run was interrupted
// during it) and whether a failure or error of it is worth retrying.
func (r *runner) attempt(ctx context.Context, j *job) (a *result.Attempt, retry bool) {
	s := newSession(ctx, &r.opts, j.sc, j.c)
	s.a.Run = j.run
	defer s.End()
	ok, opened := true, false
	for i, st := range j.sc.Steps {
		ok = s.Exec(st)
		if !opened && s.greeting != nil {
			opened = true
			r.stops.open(servedBy(s.greeting, s.c.Agent))
		}
		if !ok {
			s.notRun(j.sc.Steps, i+1)
			break
		}
	}
	if ok {
		if ok = s.Finish(); ok {
			s.Pass()
		}
	}
	if hint, says, ok := r.stops.served(s.stop); ok {
		// The platform served it a moment ago: its 404 is a glitch,
		// retried, and no claim about the configuration.
		s.a.Error.Message = strings.TrimSuffix(s.a.Error.Message, hint) + says
		s.stop, s.retry = nil, true
	}
	if r.stops.after(s.reached, s.stop) {
		// The run is stopped on the platform: no further attempt of
		// this case. One in flight beside the case that stopped the
		// run, whose own failure called for a stop too (the same wall,
		// met before the cut reached its call), is cut off as the
		// others in flight are: the cause is said once, by the stop,
		// and which cases say it does not hang on how the goroutines
		// ran. Its attempt reads as one the stop's cancel cut
		// (callFailed): interrupted at the step it was in, its partial
		// transcript kept; the platform's answer would be the cause a
		// second time, which the stop's reason already says.
		if s.stop != nil && r.stops.stopped() != s.stop {
			s.errored(interrupted(s.a.Error.Pos, ""))
			s.a.Status = result.Pending
		}
		return s.a, false
	}
	// A configuration error is never retried, whichever step met it:
	// every attempt would meet it again (result.Case.ErroredByConfig).
	config := s.a.Error != nil && s.a.Error.Kind == result.KindConfig
	return s.a, !ok && s.retry && !config
}

// retries is the number of extra attempts a case gets.
func (r *runner) retries(sc *scenario.Scenario) int {
	if sc.Retries != nil {
		return max(*sc.Retries, 0)
	}
	return r.opts.Retries
}

// runOnce runs attempts of the case until one passes, the budget of extra
// attempts is spent, or the last problem is one a retry cannot fix. With
// retryFailed false only Errored attempts are retried: a repeated
// scenario's assertion failure is a data point, not a glitch. cut reports
// that the run was interrupted before a verdict.
//
// The last attempt decides: a pass after a failure is Flaky, and a failure
// after a pass cannot happen because attempts stop at the first pass.
func (r *runner) runOnce(ctx context.Context, j *job, budget int, retryFailed bool) (st result.Status, cut bool) {
	var rng *rand.Rand // created on the first backoff only
	for n := 0; ; n++ {
		a, retry := r.attempt(ctx, j)
		st := a.Status
		switch st {
		case result.Pending:
			return result.Pending, true
		case result.Passed:
			if n > 0 {
				return result.Flaky, false
			}
			return result.Passed, false
		}
		if n >= budget || !retry || (st == result.Failed && !retryFailed) {
			if st == result.Errored && failedEarlier(j.c, n) {
				// An earlier attempt of this run showed a real assertion
				// break; a later one that errored learnt nothing about the
				// agent and must not turn the failure into an error
				// (found by the fault drill, docs/reliability.md).
				return result.Failed, false
			}
			return st, false
		}
		if st == result.Errored {
			if rng == nil {
				rng = rand.New(rand.NewPCG(uint64(r.opts.Seed), uint64(j.index)))
			}
			if r.opts.Sleep(ctx, backoff(r.opts.RetryDelay, n, rng)) != nil {
				return result.Pending, true
			}
		}
	}
}

// failedEarlier reports whether an attempt of the current run before its
// n-th (0-based) and latest one failed. The run's attempts are the last n+1
// of the case; each run of a repeated scenario records on a case of its
// own (scratchCase), so today they are all of its attempts, and
// the window only keeps another run's failure out should runs ever share
// one.
func failedEarlier(c *result.Case, n int) bool {
	last := len(c.Attempts) - 1
	for i := max(last-n, 0); i < last; i++ {
		if c.Attempts[i] != nil && c.Attempts[i].Status == result.Failed {
			return true
		}
	}
	return false
}

// repeatRule decides a repeated scenario from its runs so far: done
// reports that no further run is needed, verdict is then the case's
// status. This is the fixed rule of `repeat: N` and `pass_rate:`: after N
// runs the case passes when the share of passing runs reaches the rate.
// When it does not, the case is Failed if the rate is out of reach even
// counting every errored run as a pass (the agent really fell short), and
// Errored otherwise (the platform kept us from knowing). A scenario with
// a confidence is decided by sequentialRule instead (repeat.go).
func repeatRule(t tally, planned int, rate float64) (verdict result.Status, done bool) {
	switch {
	case t.runs < planned:
		return result.Pending, false
	case stats.Reaches(t.passed, t.runs, rate):
		return result.Passed, true
	case stats.Reaches(t.passed+t.errored, t.runs, rate):
		return result.Errored, true
	}
	return result.Failed, true
}

// backoff is the pause before attempt n+2 after an errored attempt n+1:
// base doubled each time, capped, with ±25% jitter so parallel cases hit by
// the same outage do not come back in lockstep.
func backoff(base time.Duration, n int, rng *rand.Rand) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base << min(n, 10)
	if d > maxRetryDelay || d <= 0 {
		d = maxRetryDelay
	}
	jitter := time.Duration(rng.Int64N(int64(d)/2+1)) - d/4
	return d + jitter
}

// gate decides whether the case runs at all; when it does not, the case
// has its status (skipped, or pending after an interruption).
func (r *runner) gate(ctx context.Context, j *job) bool {
	c, sc := j.c, j.sc
	switch {
	case sc.Skip != "":
		c.Status, c.SkipReason = result.Skipped, r.opts.Redactor.String(sc.Skip)
		return false
	case r.outer.Err() != nil:
		c.Status, c.SkipReason = result.Pending, result.ReasonInterrupted
		r.interrupted.Store(true)
		return false
	}
	if stop := r.stops.stopped(); stop != nil {
		c.Status, c.SkipReason = result.Skipped, stop.Reason
		return false
	}
	return true
}

// noAgent errors a case that names no agent anywhere, reporting whether it
// did.
func (r *runner) noAgent(j *job) bool {
	c := j.c
	if c.Agent != "" {
		return false
	}
	recordError(r.opts.Redactor, newAttempt(c, r.opts.Now()), &result.Error{Pos: j.sc.Pos, Kind: result.KindConfig, Message: r.opts.Settings.noAgent()})
	c.Status = result.Errored
	return true
}

// internalError records a recovered panic on the attempt in progress (or a
// new one) so the report shows where it happened.
func (r *runner) internalError(j *job, p any, stack []byte) {
	c := j.c
	a := c.Last()
	if a == nil || a.Status != result.Pending {
		a = newAttempt(c, r.opts.Now())
	}
	recordError(r.opts.Redactor, a, &result.Error{
		Pos:     j.sc.Pos,
		Kind:    result.KindInternal,
		Message: fmt.Sprintf("internal error (please report it): panic: %v\n%s", p, stack),
	})
	c.Status, c.SkipReason = result.Errored, ""
}

// platformStopped reports whether the run stopped on a platform that
// cannot be used (not --fail-fast, not an interruption).
func (r *runner) platformStopped() bool {
	stop := r.stops.stopped()
	return stop != nil && stop.Kind != result.StopFailFast && r.outer.Err() == nil
}

// cutOff marks a case cut off in flight: by an interruption (Pending),
// or by a platform stop (Skipped with its reason). Its attempts, including
// the partial transcript of the one in flight, are kept.
func (r *runner) cutOff(c *result.Case) {
	if stop := r.stops.stopped(); stop != nil && r.outer.Err() == nil {
		c.Status, c.SkipReason = result.Skipped, stop.Reason
		return
	}
	c.Status, c.SkipReason = result.Pending, result.ReasonInterrupted
	r.interrupted.Store(true)
}
