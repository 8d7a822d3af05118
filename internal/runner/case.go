package runner

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// retries is the number of extra attempts a case gets.
func (r *runner) retries(sc *scenario.Scenario) int {
	if sc.Retries != nil {
		return max(*sc.Retries, 0)
	}
	return r.opts.Retries
}

// newAttempt appends a fresh attempt, numbered across the whole case (a
// repeated scenario numbers the attempts of all its runs in one sequence).
func (r *runner) newAttempt(c *result.Case) *result.Attempt {
	a := &result.Attempt{Number: len(c.Attempts) + 1, Status: result.Pending, Started: r.opts.Now()}
	c.Attempts = append(c.Attempts, a)
	return a
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
	return r.retryLoop(ctx, j, budget, retryFailed, 0, func(int) (result.Status, bool) {
		a, retry := r.attempt(ctx, j)
		return a.Status, retry
	})
}

// retryLoop is the retry rule of runOnce over any way of making an attempt:
// try(n) makes attempt n (0 is the first of this run) and returns its
// status and whether a retry could help. A feature scenario enters it at
// every step with the attempts its run already used (first), since its
// attempts span several godog steps.
func (r *runner) retryLoop(ctx context.Context, j *job, budget int, retryFailed bool, first int, try func(n int) (result.Status, bool)) (st result.Status, cut bool) {
	var rng *rand.Rand // created on the first backoff only
	for n := first; ; n++ {
		st, retry := try(n)
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
			if !sleep(ctx, backoff(r.opts.RetryDelay, n, rng)) {
				return result.Pending, true
			}
		}
	}
}

// failedEarlier reports whether an attempt of the current run before its
// n-th (0-based) and latest one failed. The run's attempts are the last n+1
// of the case: a repeated scenario numbers all its runs in one sequence.
func failedEarlier(c *result.Case, n int) bool {
	last := len(c.Attempts) - 1
	for i := max(last-n, 0); i < last; i++ {
		if c.Attempts[i] != nil && c.Attempts[i].Status == result.Failed {
			return true
		}
	}
	return false
}

// repeat runs a `repeat: N` scenario: N runs from fresh sessions, each
// retried only when it errored. The case passes when the share of passing
// runs reaches the pass rate. When it does not, the case is Failed if the
// rate is out of reach even counting every errored run as a pass (the agent
// really fell short), and Errored otherwise (the platform kept us from
// knowing). once(i) makes run i; nil runs the YAML scenario with runOnce.
func (r *runner) repeat(ctx context.Context, j *job, once func(i int) (result.Status, bool)) {
	c, sc := j.c, j.sc
	rate := sc.PassRate
	if rate <= 0 {
		// Zero means unset: a rate of 0 would pass anything.
		rate = 1
	}
	rep := &result.Repeat{Runs: sc.Repeat, PassRate: rate}
	c.Repeat = rep
	budget := r.retries(sc)
	if once == nil {
		once = func(int) (result.Status, bool) { return r.runOnce(ctx, j, budget, false) }
	}
	errored := 0
	for i := 0; i < sc.Repeat; i++ {
		st, cut := once(i)
		if cut {
			r.cutOff(c)
			return
		}
		switch st {
		case result.Passed, result.Flaky:
			rep.Passed++
		case result.Errored:
			errored++
		}
	}
	switch {
	case reaches(rep.Passed, rep.Runs, rate):
		c.Status = result.Passed
	case reaches(rep.Passed+errored, rep.Runs, rate):
		c.Status = result.Errored
	default:
		c.Status = result.Failed
	}
}

// reaches reports whether passed/runs ≥ rate, tolerating the rounding of a
// rate written in decimal (0.7 of 10 runs is 7 passes, not 8).
func reaches(passed, runs int, rate float64) bool {
	return float64(passed) >= rate*float64(runs)-1e-9
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

// sleep waits for d or until ctx is done, reporting whether it waited the
// whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
