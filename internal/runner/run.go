package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
	if opts.Chat == nil {
		return nil, errors.New("run scenarios: no platform client")
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

	// YAML cases and feature cases run side by side and share one limit:
	// every running case holds a slot of sem.
	sem := make(chan struct{}, opts.Parallel)
	var yamlJobs, featureJobs []*job
	for _, j := range jobs {
		if j.sc.IsFeature() {
			featureJobs = append(featureJobs, j)
		} else {
			yamlJobs = append(yamlJobs, j)
		}
	}
	features := make(chan struct{})
	go func() {
		defer close(features)
		r.runFeatures(ctx, featureJobs, sem)
	}()

	var g errgroup.Group
	g.SetLimit(opts.Parallel)
	next := 0
	for ; next < len(yamlJobs); next++ {
		// Checked again by each job when it starts: Go blocks while
		// Parallel cases run, and the run may be stopped meanwhile.
		if ctx.Err() != nil || r.stopped.Load() {
			break
		}
		j := yamlJobs[next]
		g.Go(func() error {
			if acquire(ctx, sem) {
				defer func() { <-sem }()
			}
			r.runJob(ctx, j)
			return nil // a failing case is a result, never a group error
		})
	}
	// Jobs never handed to the group are marked here, without a goroutine
	// each: after a Ctrl-C on a 20,000-case suite nearly all of them are.
	for ; next < len(yamlJobs); next++ {
		r.runJob(ctx, yamlJobs[next])
	}
	_ = g.Wait() // jobs always return nil
	<-features
	if opts.Alerts != nil {
		r.addCheck(res, r.gateAlerts(ctx, res))
	}

	res.Duration = opts.Now().Sub(res.Started)
	res.Interrupted = r.interrupted.Load()
	opts.Observer.RunFinished(res)
	return res, nil
}

// runJob runs one case to its verdict and reports it. Every job passes
// here exactly once, so CaseFinished is called once per case.
func (r *runner) runJob(ctx context.Context, j *job) {
	r.execute(ctx, j)
	r.finishJob(j)
}

// acquire takes a slot of sem, or gives up when ctx is done (the case is
// then marked without running).
func acquire(ctx context.Context, sem chan struct{}) bool {
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// finishJob settles a case that has its verdict: memory, fail-fast and the
// observer. Every case passes here exactly once.
func (r *runner) finishJob(j *job) {
	if r.lean && j.c.Status == result.Passed {
		release(j.c)
	}
	if r.opts.FailFast && (j.c.Status == result.Failed || j.c.Status == result.Errored) {
		r.stopped.Store(true)
	}
	r.opts.Observer.CaseFinished(j.file, j.c)
}

// execute decides whether the case runs and runs it. A panic anywhere below
// becomes an Errored case: errgroup does not propagate panics, and one bad
// case must not take the process, and every report, down with it.
func (r *runner) execute(ctx context.Context, j *job) {
	c, sc := j.c, j.sc
	if !r.gate(ctx, j) {
		return
	}

	started := r.opts.Now()
	defer func() {
		c.Duration = r.opts.Now().Sub(started)
		if p := recover(); p != nil {
			r.internalError(j, p, debug.Stack())
		}
	}()
	r.opts.Observer.CaseStarted(j.file, c)

	if r.noAgent(j) {
		return
	}
	if sc.Repeat > 1 {
		r.repeat(ctx, j, nil)
		return
	}
	st, cut := r.runOnce(ctx, j, r.retries(sc), true)
	if cut {
		r.cutOff(c)
		return
	}
	c.Status = st
}

// gate decides whether the case runs at all; when it does not, the case
// has its status (skipped, or pending after an interruption).
func (r *runner) gate(ctx context.Context, j *job) bool {
	c, sc := j.c, j.sc
	switch {
	case sc.Skip != "":
		c.Status, c.SkipReason = result.Skipped, sc.Skip
		return false
	case ctx.Err() != nil:
		c.Status, c.SkipReason = result.Pending, result.ReasonInterrupted
		r.interrupted.Store(true)
		return false
	case r.stopped.Load():
		c.Status, c.SkipReason = result.Skipped, result.ReasonFailFast
		r.interrupted.Store(true)
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
	a := r.newAttempt(c)
	a.Status = result.Errored
	a.Error = &result.Error{Pos: j.sc.Pos, Kind: result.KindConfig, Message: msgNoAgent}
	c.Status = result.Errored
	return true
}

// release drops the decoded metadata of a passing case's replies, keeping
// the raw JSON they came from (Turn.Reply decodes it again). A passing case
// is only ever summarised, and the decoded maps are most of its memory.
func release(c *result.Case) {
	for _, a := range c.Attempts {
		for _, t := range a.Turns {
			if t.Result != nil && len(t.Result.RawMetadata) > 0 {
				t.Result.Metadata = nil
			}
		}
	}
}

// internalError records a recovered panic on the attempt in progress (or a
// new one) so the report shows where it happened.
func (r *runner) internalError(j *job, p any, stack []byte) {
	c := j.c
	a := c.Last()
	if a == nil || a.Status != result.Pending {
		a = r.newAttempt(c)
	}
	a.Status = result.Errored
	a.Error = &result.Error{
		Pos:     j.sc.Pos,
		Kind:    result.KindInternal,
		Message: fmt.Sprintf("internal error (please report it): panic: %v\n%s", p, stack),
	}
	c.Status, c.SkipReason = result.Errored, ""
}

// cutOff marks a case the run was interrupted in. Its attempts, including
// the partial transcript of the one in flight, are kept.
func (r *runner) cutOff(c *result.Case) {
	c.Status, c.SkipReason = result.Pending, result.ReasonInterrupted
	r.interrupted.Store(true)
}
