package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// runner is the state of one Run shared by its workers. Everything in it is
// either read-only after Run starts or atomic: cases never wait on each
// other, so a large suite scales with Parallel.
type runner struct {
	opts Options
	// stopped is set by the first Failed or Errored case under FailFast.
	stopped atomic.Bool
	// interrupted is set when any case is left unfinished or not started
	// because of cancellation or FailFast.
	interrupted atomic.Bool
	// lean is set when the run is large enough that passing cases release
	// their decoded metadata.
	lean bool
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
// caller can write every report.
func Run(ctx context.Context, suites []*scenario.Suite, opts Options) (*result.Result, error) {
	if opts.Channel == nil {
		return nil, errors.New("run scenarios: no channel to the agent")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("run scenarios: %w", err)
	}
	files, jobs := plan(suites, opts)
	r := &runner{opts: opts, lean: opts.LeanAbove >= 0 && len(jobs) > opts.LeanAbove}
	res := &result.Result{Started: opts.Now(), Target: opts.Target, Files: files}
	if res.Files == nil {
		res.Files = []*result.File{}
	}
	opts.Observer.RunStarted(len(jobs), opts.Target)

	var g errgroup.Group
	g.SetLimit(opts.Parallel)
	next := 0
	for ; next < len(jobs); next++ {
		// Checked again by each job when it starts: Go blocks while
		// Parallel cases run, and the run may be stopped meanwhile.
		if ctx.Err() != nil || r.stopped.Load() {
			break
		}
		j := jobs[next]
		jobs[next] = nil // the goroutine owns it, and frees it when done
		g.Go(func() error {
			r.runJob(ctx, j)
			return nil // a failing case is a result, never a group error
		})
	}
	// Jobs never handed to the group are marked here, without a goroutine
	// each: after a Ctrl-C on a 20,000-case suite nearly all of them are.
	for ; next < len(jobs); next++ {
		r.runJob(ctx, jobs[next])
	}
	_ = g.Wait() // jobs always return nil
	if opts.Alerts != nil {
		r.addCheck(res, r.gateAlerts(ctx, res))
	}

	res.Duration = opts.Now().Sub(res.Started)
	res.Interrupted = r.interrupted.Load()
	res.Pacing = r.pacing.result()
	opts.Observer.RunFinished(res)
	return res, nil
}

// runJob runs one case to its verdict and reports it. Every job passes
// here exactly once, so CaseFinished is called once per case.
func (r *runner) runJob(ctx context.Context, j *job) {
	r.execute(ctx, j)
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
	if r.opts.FailFast && (j.c.Status == result.Failed || j.c.Status == result.Errored) {
		r.stopped.Store(true)
	}
	r.opts.Observer.CaseFinished(j.file, j.c)
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
