package platform

import (
	"sync"
	"time"
)

// The Messaging client's timers (the settle window, AwaitEnd's quiet, the
// turn timeout: clock.WithTimeoutCause) run on the real clock, or on
// Config.AfterFunc when a test gives its fake clock's: a window then
// closes when the test moves the clock past it, not when real time has
// passed, so a loaded machine cannot close it between two frames of a
// test platform.

// quietTimer is a window of quiet (the settle window, AwaitEnd's quiet):
// a time.Timer, or a timer on Config.AfterFunc. Its zero value is a
// timer not set, whose channel is nil; a firing from before the last
// Reset or Stop is never received, as with time.Timer since Go 1.23.
type quietTimer struct {
	real *time.Timer
	fake *fakeTimer
}

// fakeTimer is a quietTimer on Config.AfterFunc. Each setting has a
// generation; a callback of an older one sends nothing.
type fakeTimer struct {
	after func(d time.Duration, f func()) (stop func() bool)
	now   func() time.Time
	c     chan time.Time
	mu    sync.Mutex
	gen   uint64
	stop  func() bool
}

// setQuiet sets q to fire in d, on the client's timers: a new timer the
// first time, a Reset after that.
func (c *Client) setQuiet(q *quietTimer, d time.Duration) {
	switch {
	case q.real != nil:
		q.real.Reset(d)
	case q.fake != nil:
		q.fake.reset(d)
	case c.cfg.AfterFunc == nil:
		q.real = time.NewTimer(d)
	default:
		q.fake = &fakeTimer{after: c.cfg.AfterFunc, now: c.now, c: make(chan time.Time, 1)}
		q.fake.reset(d)
	}
}

// C is the channel the firing arrives on; nil before the first setting.
func (q *quietTimer) C() <-chan time.Time {
	switch {
	case q.real != nil:
		return q.real.C
	case q.fake != nil:
		return q.fake.c
	}
	return nil
}

// Stop stops the timer, if set.
func (q *quietTimer) Stop() {
	switch {
	case q.real != nil:
		q.real.Stop()
	case q.fake != nil:
		q.fake.mu.Lock()
		q.fake.cancel()
		q.fake.mu.Unlock()
	}
}

// reset sets the timer anew: the setting before it is stopped and its
// firing, if already sent, is taken back.
func (t *fakeTimer) reset(d time.Duration) {
	t.mu.Lock()
	t.cancel()
	gen := t.gen
	t.mu.Unlock()
	stop := t.after(d, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.gen != gen {
			return
		}
		select {
		case t.c <- t.now():
		default:
		}
	})
	t.mu.Lock()
	if t.gen == gen {
		t.stop = stop
	} else {
		stop()
	}
	t.mu.Unlock()
}

// cancel ends the current setting: a new generation, the setting's timer
// stopped, and a firing not yet received dropped; t.mu is held.
func (t *fakeTimer) cancel() {
	t.gen++
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	select {
	case <-t.c:
	default:
	}
}
