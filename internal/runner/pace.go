package runner

import (
	"context"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// This file keeps rate limits out of a case's verdict. Each case gets a
// platform.RateAccount in the context of its calls: the client charges it
// every wait on a rate limit (a Retry-After pause, the case's turn at the
// key's pace) and fails a call only when the case would wait past the
// run's budget (platform.Config.RateWait). The turn and scenario timeouts
// leave those waits out, since a case waiting for its turn at a busy
// platform is not slow, and a 429 is never an attempt: a case that passed
// after waiting passed, it is not flaky.

// withAccount gives the case's calls an account of its own.
func withAccount(ctx context.Context) (context.Context, *platform.RateAccount) {
	a := platform.NewRateAccount()
	return platform.WithRateAccount(ctx, a), a
}

// settleAccount records what rate limits cost the case.
func (r *runner) settleAccount(c *result.Case, a *platform.RateAccount) {
	u := a.Usage(r.opts.Now())
	c.RateLimited, c.RateWaited = u.Limited, u.Waited
	r.pacing.add(u)
}

// pacing sums the accounts of a run's cases.
type pacing struct {
	mu sync.Mutex
	p  result.Pacing
}

func (s *pacing) add(u platform.RateUsage) {
	s.mu.Lock()
	s.p.Limited += u.Limited
	s.p.Accepted += u.Accepted
	s.p.Waited += u.Waited
	s.p.MaxWaited = max(s.p.MaxWaited, u.Waited)
	s.mu.Unlock()
}

// addRun counts the answers to a call of the run's own, outside any case
// (the deployment reads): the run's pace counts every request it made,
// the waits are the cases'.
func (s *pacing) addRun(u platform.RateUsage) {
	s.mu.Lock()
	s.p.Limited += u.Limited
	s.p.Accepted += u.Accepted
	s.mu.Unlock()
}

// result returns the run's Pacing, or nil when no case was refused or
// waited.
func (s *pacing) result() *result.Pacing {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p.Limited == 0 && s.p.Waited == 0 {
		return nil
	}
	p := s.p
	return &p
}

// withTimeout is context.WithTimeout for the time a case spends on its
// own: the rate-limit waits charged to the account of ctx (if any) are
// added back to the timeout, so a case is not timed out while it waits
// for its turn at a busy platform. Like context.WithTimeout it runs on
// the real clock; the waits are measured on now, the client's clock. It
// is a turnTimer armed once.
func withTimeout(ctx context.Context, d time.Duration, now func() time.Time) (context.Context, context.CancelFunc) {
	t := newTurnTimer(ctx, now)
	return t.arm(d), t.stop
}

// turnTimer bounds the calls of one session by the turn timeout with one
// context and one timer for all of them, armed and stopped around each
// call: a session's calls are sequential, and a context and a timer per
// call were a tenth of the runner's own cost per turn. When it fires, the
// rate-limit waits charged to the case's account since it was armed are
// granted again. A turn that times out ends its attempt, so the context
// it cancelled is never used again; a timer that fires just as its call
// returns finds the call's deadline not reached or the timer disarmed,
// and a context it cancelled anyway is replaced at the next arm.
//
// Without an account (a session outside a run, such as godogsteps')
// nothing is granted, and each call gets a context.WithTimeout of its
// own: its deadline lets the client end at once, with its real cause, a
// 429 pause that would outlast it.
type turnTimer struct {
	mu       sync.Mutex
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	acct     *platform.RateAccount
	now      func() time.Time
	base     time.Duration // the account's waits already granted
	deadline time.Time     // on the real clock, as the timer runs
	armed    bool
	// plain cancels the call's own context when there is no account.
	plain context.CancelFunc
}

func newTurnTimer(parent context.Context, now func() time.Time) *turnTimer {
	return &turnTimer{parent: parent, acct: platform.RateAccountFrom(parent), now: now}
}

// arm starts the time of one call and returns the context to make it
// with.
func (t *turnTimer) arm(d time.Duration) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.acct == nil {
		var ctx context.Context
		ctx, t.plain = context.WithTimeout(t.parent, d)
		return ctx
	}
	if t.ctx == nil || t.ctx.Err() != nil {
		t.ctx, t.cancel = context.WithCancelCause(t.parent)
	}
	t.base = t.acct.Waited(t.now())
	t.deadline, t.armed = time.Now().Add(d), true
	if t.timer == nil {
		t.timer = time.AfterFunc(d, t.fire)
	} else {
		t.timer.Reset(d)
	}
	return t.ctx
}

// disarm ends the time of the call.
func (t *turnTimer) disarm() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release()
}

// release stops the call's time; t.mu is held.
func (t *turnTimer) release() {
	t.armed = false
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.plain != nil {
		t.plain()
		t.plain = nil
	}
}

func (t *turnTimer) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.armed {
		return
	}
	if left := time.Until(t.deadline); left > 0 {
		// A firing from before the last arm, or a deadline moved out by
		// rate-limit waits: the timer is set for the deadline.
		t.timer.Reset(left)
		return
	}
	if w := t.acct.Waited(t.now()); w > t.base {
		t.deadline = time.Now().Add(w - t.base)
		t.timer.Reset(w - t.base)
		t.base = w
		return
	}
	t.cancel(context.DeadlineExceeded)
}

// stop releases the timer and the context.
func (t *turnTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release()
	if t.cancel != nil {
		t.cancel(context.Canceled)
	}
}
