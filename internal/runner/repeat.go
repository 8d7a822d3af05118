package runner

import (
	"context"
	"runtime/debug"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/stats"
)

// This file runs repeated scenarios: `repeat: N` (the fixed rule) and
// statistical ones (`confidence:`, the sequential test of package stats).
//
// Runs are fresh sessions. They may run several at once: the case holds
// one of the run's --parallel slots, and takes idle ones for extra runs
// (never one a waiting case could have). Whatever order they finish in,
// the verdict is decided on the runs in the order they started, looking
// at the longest finished prefix only: the evidence is then the same
// sequence of independent runs a one-at-a-time run would see, so the
// sequential test's error rates hold exactly. Runs still going when the
// verdict falls are stopped and discarded, never counted.

// minErrored is the number of errored runs from which a case stops early
// as errored, when they are more than a third of its runs: a platform that
// is down must not cost a statistical scenario hundreds of sessions.
const minErrored = 5

// tally counts the runs of a repeated scenario, in the order they started.
type tally struct {
	runs, passed, failed, errored int
}

func (t *tally) add(st result.Status) {
	t.runs++
	switch st {
	case result.Passed, result.Flaky:
		t.passed++
	case result.Errored:
		t.errored++
	default:
		t.failed++
	}
}

// rule decides a repeated case from its tally: done reports a verdict,
// with the status and Decision* name it gives the case.
type rule func(t tally) (verdict result.Status, decision string, done bool)

// fixedRule is `repeat: N` with `pass_rate:` (repeatRule).
func fixedRule(planned int, rate float64) rule {
	return func(t tally) (result.Status, string, bool) {
		st, done := repeatRule(t, planned, rate)
		switch st {
		case result.Passed:
			return st, result.DecisionPassed, done
		case result.Errored:
			return st, result.DecisionErrored, done
		}
		return st, result.DecisionFailed, done
	}
}

// sequentialRule is the sequential test of d with at most limit runs of
// evidence. Errored runs are not evidence: the test sees the passes and
// failures only. More than a third of the runs errored makes the case
// errored, when it ends or, from minErrored errored runs on, at once;
// unless it ends failed (or inconclusive) on failures the errored runs
// could not have undone, had every one of them passed: the agent's
// failure then stands, as the fixed rule's does (repeatRule).
func sequentialRule(d stats.Design, limit int) rule {
	decide := d.Decider()
	return func(t tally) (result.Status, string, bool) {
		tooMany := 3*t.errored > t.runs
		if tooMany && t.errored >= minErrored {
			return result.Errored, result.DecisionErrored, true
		}
		dec := decide(t.passed, t.failed)
		if dec == stats.Continue && t.passed+t.failed < limit {
			return result.Pending, "", false
		}
		switch {
		case tooMany && decide(t.passed+t.errored, t.failed) == stats.Pass:
			// A pass, or a verdict the errored runs could have made
			// one (log Λ grows with the passes, so a pass stays one).
			return result.Errored, result.DecisionErrored, true
		case dec == stats.Pass:
			return result.Passed, result.DecisionPassed, true
		case dec == stats.Fail:
			return result.Failed, result.DecisionFailed, true
		}
		return result.Failed, result.DecisionInconclusive, true
	}
}

// evidence counts the runs of a repeated case in the order they started,
// whatever order they finish in: a run is counted once every run started
// before it is, and none after the verdict. The verdict is then the one a
// one-at-a-time run with the same outcomes would reach.
type evidence struct {
	decide rule
	// finished holds the outcomes by start order; known marks those in.
	finished []result.Status
	known    []bool
	// next is the number of runs counted.
	next    int
	t       tally
	decided bool
	// verdict and decision are the case's, once decided.
	verdict  result.Status
	decision string
}

// add records the outcome of run i (0-based, in start order) and counts
// what it completes; it reports whether the verdict is in.
func (e *evidence) add(i int, st result.Status) bool {
	for len(e.finished) <= i {
		e.finished, e.known = append(e.finished, 0), append(e.known, false)
	}
	e.finished[i], e.known[i] = st, true
	for !e.decided && e.next < len(e.known) && e.known[e.next] {
		e.t.add(e.finished[e.next])
		e.next++
		e.verdict, e.decision, e.decided = e.decide(e.t)
	}
	return e.decided
}

// repeatRun is one run of a repeated case, recorded on a case of its own
// (the runs may go on at the same time) and merged into the real case in
// start order when the verdict is in.
type repeatRun struct {
	index  int
	status result.Status
	// cut: the run was stopped before its outcome, by an interruption or
	// because the verdict fell.
	cut bool
	// extra: the run held a slot of its own, to be given back.
	extra bool
	c     *result.Case
}

// repeat runs a repeated scenario with the settings st (resolved: the
// scenario's own or the run's).
func (r *runner) repeat(ctx context.Context, j *job, st scenario.Stats) {
	c := j.c
	rep := &result.Repeat{Procedure: result.ProcedureFixed, Limit: st.Repeat, PassRate: st.PassRate, Level: fixedLevel}
	ev := &evidence{decide: fixedRule(st.Repeat, st.PassRate)}
	if st.Sequential() {
		d := st.Design()
		rep.Procedure, rep.Margin, rep.Confidence, rep.Level = result.ProcedureSPRT, d.Margin, d.Confidence, d.Confidence
		rep.Needed = d.Needed()
		ev.decide = sequentialRule(d, st.Repeat)
	}
	c.Repeat = rep

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan repeatRun)
	var (
		runs     []*repeatRun // by start order; nil until finished
		inFlight int
		errored  int // errored runs finished so far, counted or not
		cut      bool
	)
	// mayStart says whether another run may start: every run of the fixed
	// rule is needed; the sequential test needs at most st.Repeat runs
	// that are evidence, and an errored run is not.
	mayStart := func() bool {
		if len(runs) == 0 {
			// The case's own run: a case past its gate makes its
			// attempt even if a stop came meanwhile, as a case run once
			// does, so that every started case has one to show.
			return true
		}
		// The run's stop and interruption are asked of the runner, not
		// only of runCtx: a cancellation reaches a context's children
		// after the context itself, and a stop is decided before the
		// cases' context is cut, so a run started in between (seen under
		// -race on one CPU) would ask the platform for yet another
		// session after the stop.
		if ev.decided || cut || runCtx.Err() != nil || r.outer.Err() != nil || r.platformStopped() {
			return false
		}
		if st.Sequential() {
			return len(runs)-errored < st.Repeat
		}
		return len(runs) < st.Repeat
	}
	for {
		// The case's own slot runs one run; idle slots run more.
		for mayStart() {
			extra := inFlight > 0
			if extra && !r.slots.TryAcquire(1) {
				break
			}
			rr := &repeatRun{index: len(runs), extra: extra, c: scratchCase(c)}
			runs = append(runs, nil)
			inFlight++
			go r.runRepeat(runCtx, j, rr, done)
		}
		if inFlight == 0 {
			break
		}
		rr := <-done
		inFlight--
		if rr.extra {
			r.slots.Release(1)
		}
		runs[rr.index] = &rr
		switch {
		case rr.cut:
			// Stopped by an interruption, or after the verdict.
			cut = cut || ctx.Err() != nil
			continue
		case rr.status == result.Errored:
			errored++
		}
		if ev.add(rr.index, rr.status) {
			stop() // runs still going are not counted
		}
	}

	t := ev.t
	if !ev.decided {
		// No verdict (an interruption, a stop): the counts are those of
		// every run that finished, as the attempts kept are.
		t = tally{}
		for _, rr := range runs {
			if rr != nil && !rr.cut {
				t.add(rr.status)
			}
		}
	}
	rep.Runs, rep.Passed, rep.Failed, rep.Errored = t.runs, t.passed, t.failed, t.errored
	if st.Sequential() {
		d := st.Design()
		rep.Lower, rep.Upper = d.Lower(t.passed, t.failed), d.Upper(t.passed, t.failed)
	} else {
		rep.Lower, rep.Upper = stats.Binomial(t.passed, t.passed+t.failed, fixedLevel)
	}
	for i, rr := range runs {
		switch {
		case rr == nil:
		case i < ev.next || !ev.decided:
			// Counted runs, and on an interruption everything seen.
			r.mergeRun(c, rr, i)
		default:
			rep.Discarded++
		}
	}
	if !ev.decided {
		if errored > 0 && r.platformStopped() {
			// The run stopped on a platform that cannot be used (stop.go),
			// which this case met: no further run would tell anything.
			c.Status, rep.Decision = result.Errored, result.DecisionErrored
			return
		}
		// Interrupted, or cut off by a stop, before a verdict: the
		// attempts so far are kept, and a case that made runs says so
		// rather than that it did not run.
		r.cutOff(c)
		if rep.Runs > 0 {
			rep.Decision = result.DecisionInterrupted
			c.SkipReason = result.ReasonStoppedRuns
			if c.Status == result.Pending {
				c.SkipReason = result.ReasonInterruptedRuns
			}
		}
		return
	}
	c.Status, rep.Decision = ev.verdict, ev.decision
}

// fixedLevel is the confidence of the interval a fixed repeat reports.
const fixedLevel = 0.95

// runRepeat runs one run and reports it on done. A panic becomes an
// errored run with the stack recorded, as for a whole case.
func (r *runner) runRepeat(ctx context.Context, j *job, rr *repeatRun, done chan<- repeatRun) {
	sj := &job{index: j.index, file: j.file, c: rr.c, sc: j.sc, run: rr.index + 1}
	defer func() {
		if p := recover(); p != nil {
			r.internalError(sj, p, debug.Stack())
			rr.status, rr.cut = result.Errored, false
		}
		done <- *rr
	}()
	rr.status, rr.cut = r.runOnce(ctx, sj, r.retries(j.sc), false)
}

// scratchCase is a case of its own for one run: the session parameters of
// the real case, no attempts.
func scratchCase(c *result.Case) *result.Case {
	return &result.Case{Name: c.Name, Pos: c.Pos, Tags: c.Tags, Agent: c.Agent, Env: c.Env, Variant: c.Variant}
}

// mergeRun moves the attempts of run i onto the case, numbered after the
// attempts already there and marked with their run. Setup steps may have
// changed the session parameters; every run changes them alike.
func (r *runner) mergeRun(c *result.Case, rr *repeatRun, i int) {
	for _, a := range rr.c.Attempts {
		a.Number, a.Run = len(c.Attempts)+1, i+1
		c.Attempts = append(c.Attempts, a)
	}
	if len(rr.c.Attempts) > 0 {
		c.Agent, c.Env, c.Variant = rr.c.Agent, rr.c.Env, rr.c.Variant
	}
}
