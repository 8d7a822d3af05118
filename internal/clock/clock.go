// Package clock holds what the runner and the platform client time their
// bounds with: the real clock, or the timers of a test's fake clock
// (internal/fakeclock), which a test moves past a bound to cut what it
// bounds at once instead of waiting for it. It uses the standard library
// only.
package clock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// AfterFunc calls f once d has passed on its clock and returns stop,
// which cancels the call and reports whether it did: time.AfterFunc's
// Stop, or fakeclock.Clock.AfterFunc. Nil means the real clock.
type AfterFunc = func(d time.Duration, f func()) (stop func() bool)

// WithTimeoutCause is context.WithTimeoutCause on after's clock; with a
// nil after it is context.WithTimeoutCause. On after's clock the context
// has no Deadline (callers compare deadlines with the real clock); once d
// passed its Err is context.DeadlineExceeded and its Cause is cause (a
// nil cause reads as DeadlineExceeded), as context.WithTimeoutCause's,
// and a parent's end reads as the parent's error.
func WithTimeoutCause(parent context.Context, d time.Duration, cause error, after AfterFunc) (context.Context, context.CancelFunc) {
	if after == nil {
		return context.WithTimeoutCause(parent, d, cause)
	}
	return WithTimeoutGrace(parent, d, cause, after, nil, nil)
}

// WithTimeoutGrace is WithTimeoutCause whose time is moved out by what
// grace grants when it runs out: grace returns the time to add (a
// Messaging turn's rate-limit waits since the last call, which its bound
// leaves out), and the context ends only when d and every grant have
// passed with nothing more granted. The grants move the end set at the
// start, not the time the timer fired at: a real timer fires late, and
// an end moved from then would give the bound each lateness again. now
// is after's clock; a nil after is the real clock and its time.Now. A
// nil grace grants nothing. Its context has no Deadline on any clock:
// one known in advance would be wrong once time is granted, and a caller
// that compares a wait with it (a rate-limit pause) would refuse a wait
// that the grant makes room for.
func WithTimeoutGrace(parent context.Context, d time.Duration, cause error, after AfterFunc, now func() time.Time, grace func() time.Duration) (context.Context, context.CancelFunc) {
	if after == nil {
		after, now = realAfter, time.Now
	}
	if cause == nil {
		cause = context.DeadlineExceeded
	}
	inner, cancel := context.WithCancelCause(parent)
	ctx := &timed{Context: inner, parent: parent}
	var (
		mu   sync.Mutex
		stop func() bool
		fire func()
		end  time.Time // on now's clock; with a grace only
	)
	fire = func() {
		mu.Lock()
		defer mu.Unlock()
		if inner.Err() != nil {
			return
		}
		if grace != nil {
			end = end.Add(grace())
			if left := end.Sub(now()); left > 0 {
				stop = after(left, fire)
				return
			}
		}
		ctx.fired.Store(true)
		cancel(cause)
	}
	mu.Lock()
	if grace != nil {
		end = now().Add(d)
	}
	stop = after(d, fire)
	mu.Unlock()
	return ctx, func() {
		mu.Lock()
		stop()
		mu.Unlock()
		cancel(context.Canceled)
	}
}

// realAfter is time.AfterFunc as an AfterFunc.
func realAfter(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// timed is the context of WithTimeoutGrace: its
// Err is context.DeadlineExceeded once its time passed, as a
// context.WithTimeout's, where the context.WithCancelCause it wraps would
// say context.Canceled.
type timed struct {
	context.Context
	parent context.Context
	fired  atomic.Bool
}

func (c *timed) Err() error {
	err := c.Context.Err()
	switch {
	case err == nil:
		return nil
	case c.fired.Load():
		return context.DeadlineExceeded
	}
	if perr := c.parent.Err(); perr != nil {
		return perr
	}
	return err
}
