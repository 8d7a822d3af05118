package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/clock"
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

// ensureAccount is ctx, given a rate account of its own when it has none
// (a call or a session outside a run's cases): its waits on rate limits
// are then left out of its timeouts, as a case's are.
func ensureAccount(ctx context.Context) context.Context {
	if platform.RateAccountFrom(ctx) == nil {
		ctx, _ = withAccount(ctx)
	}
	return ctx
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
// (the deployment reads, Options.Setup): the run's pace counts every
// request it made, the waits are the cases' (the alert gate, a check
// reported as a case, is settled as one).
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
// for its turn at a busy platform. Like the rest of the runner's bounds
// it runs on o's clock (Options.timeout); the waits are measured on Now,
// the client's clock. It is a turnTimer armed once.
func withTimeout(ctx context.Context, d time.Duration, o *Options) (context.Context, context.CancelFunc) {
	t := newTurnTimer(ctx, o)
	return t.arm(d), t.stop
}

// CallTimeout bounds a call the run makes outside its cases (the
// registration of its webhook endpoint) by d, as the runner bounds its
// own calls: the waits on rate limits charged to the account of ctx are
// left out of d, so a Retry-After longer than d is waited out (within
// the account's budget) instead of failing the call. ctx must carry a
// platform.RateAccount (platform.WithRateAccount); without one it is
// context.WithTimeout. now is the client's clock; after, when set, runs
// the bound's timer on now (Options.AfterFunc), else it runs on the real
// clock.
func CallTimeout(ctx context.Context, d time.Duration, now func() time.Time, after clock.AfterFunc) (context.Context, context.CancelFunc) {
	if now == nil {
		now = time.Now
	}
	return withTimeout(ctx, d, &Options{Now: now, AfterFunc: after})
}

// Bounded runs call under CallTimeout(ctx, d, now, after), a call the run
// makes outside its cases, and says in its error when that bound, not
// ctx, ended it: the client's says only "context deadline exceeded". A
// platform that takes a request and never answers would otherwise hold
// the command until an interrupt ended it. A ctx without a
// platform.RateAccount gets one for the call, so its rate-limit waits are
// left out of d as every bounded call's are: without one, the reads of
// agenttest gate and the registration of agenttest webhooks listen ended
// at a 429 whose Retry-After outlasted d (a refused promotion, exit 4,
// where waiting would have worked).
func Bounded[T any](ctx context.Context, d time.Duration, now func() time.Time, after clock.AfterFunc, call func(context.Context) (T, error)) (T, error) {
	ctx = ensureAccount(ctx)
	cctx, cancel := CallTimeout(ctx, d, now, after)
	defer cancel()
	v, err := call(cctx)
	return v, namedBound(ctx, cctx, d, err)
}

// namedBound says in err when the bound d of cctx, not its parent ctx,
// ended a call: the client's error says only "context deadline exceeded",
// which does not tell the user which limit to raise.
func namedBound(ctx, cctx context.Context, d time.Duration, err error) error {
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return fmt.Errorf("%w (turn timeout of %s exceeded)", err, d)
	}
	return err
}

// timeout is context.WithTimeout on the clock of the runner's timers:
// the real clock, or Now when Options.AfterFunc runs them
// (clock.WithTimeoutCause).
func (o *Options) timeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return clock.WithTimeoutCause(parent, d, nil, o.AfterFunc)
}

// timerNow is the time on the clock of the runner's timers.
func (o *Options) timerNow() time.Time {
	if o.AfterFunc == nil {
		return time.Now()
	}
	return o.Now()
}

// turnTimer bounds the calls of one session by the turn timeout with one
// context and one timer for all of them, armed and stopped around each
// call: a session's calls are sequential, and a context and a timer per
// call were a tenth of the runner's own cost per turn. When it fires, the
// rate-limit waits charged to the case's account since it was armed move
// the deadline set at the arm out by as much. A turn that times out ends
// its attempt, so the context it cancelled is never used again; a timer
// that fires just as its call returns finds the call's deadline not
// reached or the timer disarmed, and a context it cancelled anyway is
// replaced at the next arm.
//
// Without an account (CallTimeout's ctx without one; sessions and
// Bounded calls always have one) nothing is granted, and each call gets
// a context.WithTimeout of its own: its deadline lets the client end at
// once, with its real cause, a 429 pause that would outlast it.
//
// It runs on the real clock, or on Now when Options.AfterFunc runs the
// runner's timers (a test's fake clock).
type turnTimer struct {
	mu       sync.Mutex
	parent   context.Context
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	acct     *platform.RateAccount
	opts     *Options
	base     time.Duration // the account's waits already granted
	deadline time.Time     // on the clock the timer runs on
	armed    bool
	// plain cancels the call's own context when there is no account.
	plain context.CancelFunc
	// stopAfter stops the timer when Options.AfterFunc runs it.
	stopAfter func() bool
}

func newTurnTimer(parent context.Context, o *Options) *turnTimer {
	t := &turnTimer{}
	t.init(parent, o)
	return t
}

// init sets up a zero turnTimer (a Session's own) to bound calls made
// in parent.
func (t *turnTimer) init(parent context.Context, o *Options) {
	t.parent, t.acct, t.opts = parent, platform.RateAccountFrom(parent), o
}

// arm starts the time of one call and returns the context to make it
// with.
func (t *turnTimer) arm(d time.Duration) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.acct == nil {
		var ctx context.Context
		ctx, t.plain = t.opts.timeout(t.parent, d)
		return ctx
	}
	if t.ctx == nil || t.ctx.Err() != nil {
		t.ctx, t.cancel = context.WithCancelCause(t.parent)
	}
	t.base = t.acct.Waited(t.opts.Now())
	t.deadline, t.armed = t.opts.timerNow().Add(d), true
	t.reset(d)
	return t.ctx
}

// reset sets the timer to fire in d; t.mu is held.
func (t *turnTimer) reset(d time.Duration) {
	switch {
	case t.opts.AfterFunc != nil:
		if t.stopAfter != nil {
			t.stopAfter()
		}
		t.stopAfter = t.opts.AfterFunc(d, t.fire)
	case t.timer == nil:
		t.timer = time.AfterFunc(d, t.fire)
	default:
		t.timer.Reset(d)
	}
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
	if t.stopAfter != nil {
		t.stopAfter()
		t.stopAfter = nil
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
	// The waits granted move the deadline set at the arm, not the time
	// the timer fired at: a real timer fires late, and a deadline moved
	// from then would give the call each lateness again.
	if w := t.acct.Waited(t.opts.Now()); w > t.base {
		t.deadline, t.base = t.deadline.Add(w-t.base), w
	}
	if left := t.deadline.Sub(t.opts.timerNow()); left > 0 {
		// A firing from before the last arm, or a deadline moved out by
		// rate-limit waits: the timer is set for the deadline.
		t.reset(left)
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
