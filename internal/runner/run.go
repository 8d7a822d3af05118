package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// runner is the state of one Run shared by its workers. Everything in it is
// either read-only after Run starts or atomic: cases never wait on each
// other, so a large suite scales with Parallel.
type runner struct {
	opts Options
	// outer is the caller's context: once it is cancelled the run is
	// interrupted. The cases run in a child of it that the stop rule may
	// cut off (stops).
	outer context.Context
	// stops decides when the run stops starting cases (stop.go).
	stops *stopper
	// interrupted is set when any case is left unfinished or not started
	// because the run was cancelled.
	interrupted atomic.Bool
	// lean is set when passing cases release their decoded replies
	// (Options.LeanAbove).
	lean bool
	// slots are the run's Parallel sessions at once: each running case
	// holds one, and a repeated case takes idle ones for extra runs.
	slots *semaphore.Weighted
	// pacing sums what rate limits cost the cases.
	pacing pacing
}

// Run executes the scenarios of suites that pass the filters of opts and
// returns their results in file and case order.
//
// Failures of the agent and problems of the platform are results, not
// errors: the error is non-nil only when nothing can run at all (no
// client, invalid options). When ctx is cancelled, Run stops starting
// cases, cuts off the calls in flight and still returns a complete Result
// with the unfinished cases Pending and Result.Interrupted set, so the
// caller can write every report. When the platform cannot be used at all,
// or under FailFast, Run stops the same way by itself (stop.go): the cases
// it did not run are Skipped and Result.Stop says why.
func Run(ctx context.Context, suites []*scenario.Suite, opts Options) (*result.Result, error) {
	if opts.Channel == nil {
		return nil, errors.New("run scenarios: no channel to the agent")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("run scenarios: %w", err)
	}
	if opts.lines == nil {
		opts.lines = newProbeLines()
	}
	files, jobs := plan(suites, opts)
	cases, cut := context.WithCancel(ctx)
	defer cut()
	r := &runner{opts: opts, outer: ctx, stops: newStopper(cut), lean: opts.LeanAbove >= 0 && len(jobs) > opts.LeanAbove,
		slots: semaphore.NewWeighted(int64(opts.Parallel))}
	// The headline names the environments the cases run in, not only the
	// target's: a suite's env: wins over it.
	planned := make([]*result.Case, len(jobs))
	for i, j := range jobs {
		planned[i] = j.c
	}
	opts.Target.Envs = result.CountEnvs(planned)
	if opts.Setup != nil {
		r.pacing.addRun(opts.Setup.Usage(opts.Now()))
	}
	res := &result.Result{Started: opts.Now(), Target: opts.Target, Files: files}
	if res.Files == nil {
		res.Files = []*result.File{}
	}
	opts.Observer.RunStarted(len(jobs), opts.Target)
	var ev *evidences
	if opts.Deployments != nil {
		ev = planEvidence(jobs)
		r.readBefore(cases, ev)
		res.Deployments = ev.deployments()
		if o, ok := opts.Observer.(result.DeploymentObserver); ok && len(res.Deployments) > 0 {
			o.DeploymentsRead(res.Deployments)
		}
	}

	// Parallel long-lived workers take the jobs in order: a goroutine per
	// case would grow a fresh stack to the depth of a session for every
	// one of them (2% of a large run's CPU).
	var (
		wg    sync.WaitGroup
		taken atomic.Int64
	)
	for range min(opts.Parallel, len(jobs)) {
		wg.Go(func() {
			for {
				// Checked before every job: the run may have been
				// stopped while the last one ran. Acquire waits on
				// cases: a platform stop or an interruption ends the
				// wait for a slot, which an extra run of a repeated
				// case may hold.
				if cases.Err() != nil || r.stops.stopped() != nil || r.slots.Acquire(cases, 1) != nil {
					return
				}
				i := taken.Add(1) - 1
				if i >= int64(len(jobs)) {
					r.slots.Release(1)
					return
				}
				j := jobs[i]
				jobs[i] = nil // the worker owns it from here
				r.runJob(cases, ev, j)
				r.slots.Release(1)
			}
		})
	}
	wg.Wait()
	// Jobs no worker took are marked here: after a Ctrl-C on a
	// 20,000-case suite nearly all of them are.
	for _, j := range jobs[min(int(taken.Load()), len(jobs)):] {
		r.runJob(cases, ev, j)
	}
	if opts.Alerts != nil {
		r.addCheck(res, r.gateAlerts(ctx, res))
	}

	res.Duration = opts.Now().Sub(res.Started)
	res.Interrupted = r.interrupted.Load()
	res.Stop = r.stopOf(res)
	res.Pacing = r.pacing.result()
	opts.Observer.RunFinished(res)
	return res, nil
}

// runJob runs one case to its verdict and reports it. Every job passes
// here exactly once, so CaseFinished is called once per case, and the
// deployment evidence (ev, nil when not read) learns when its agent's
// last case is done.
func (r *runner) runJob(ctx context.Context, ev *evidences, j *job) {
	r.execute(ctx, j)
	if ev != nil {
		r.caseDone(ctx, ev, j)
	}
	r.finishJob(j)
}

// finishJob settles a case that has its verdict: memory, fail-fast and the
// observer. Every case passes here exactly once.
func (r *runner) finishJob(j *job) {
	if r.lean && j.c.Status == result.Passed {
		release(j.c)
	}
	// The case has everything the reports need; its program is no longer
	// needed, and a large suite's programs are as big as its results.
	j.sc = nil
	// What the case gates: a quarantined failure must not stop a run
	// that it cannot fail.
	if g := j.c.Gate(); r.opts.FailFast && (g == result.Failed || g == result.Errored) {
		r.stops.decide(&result.Stop{Kind: result.StopFailFast, Reason: result.ReasonFailFast})
	}
	r.opts.Observer.CaseFinished(j.file, j.c)
	if r.opts.VerdictsOnly && j.c.Status == result.Passed {
		for _, a := range j.c.Attempts {
			a.Turns = nil
		}
	}
}

// stopOf is the stop the result reports: a platform stop always (it
// decides the exit code even when it came at the last case), a fail-fast
// stop only when it left a case unrun.
func (r *runner) stopOf(res *result.Result) *result.Stop {
	st := r.stops.stopped()
	if st == nil || st.Kind != result.StopFailFast {
		return st
	}
	for _, f := range res.Files {
		for _, c := range f.Cases {
			if c.Status == result.Skipped && c.SkipReason == st.Reason {
				return st
			}
		}
	}
	return nil
}

// release drops the decoded replies of a passing case, keeping the
// bodies they came from (Turn.Release; Turn.Reply decodes them again). A
// passing case is only ever summarised, and the decoded replies are a
// good part of its memory.
func release(c *result.Case) {
	for _, a := range c.Attempts {
		for _, t := range a.Turns {
			if t != nil {
				t.Release()
			}
		}
	}
}
