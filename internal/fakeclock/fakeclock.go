// Package fakeclock is a clock for tests that moves only when told to, or
// when something sleeps on it: waits (retry backoff, Retry-After, poll
// intervals, rate-limit refills) then cost no wall time, and what depends
// on time plays out the same on a loaded machine as on an idle one.
//
//	clk := fakeclock.New()
//	srv, _ := sim.New(sim.Options{Now: clk.Now})            // the simulator's clock
//	client, _ := platform.New(platform.Config{Now: clk.Now,
//		Retry: platform.RetryPolicy{Sleep: clk.Sleep},      // the client's waits
//		AfterFunc: clk.AfterFunc})                          // its Messaging timers
//
// Its timers (AfterFunc) fire when the clock is moved past them, on the
// goroutine that moves it: a bound on the clock is cut by moving the
// clock, not by waiting for it.
package fakeclock

import (
	"context"
	"sync"
	"time"
)

// Start is the time a new Clock shows.
var Start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*timer
	seq    int
}

// timer is a call of AfterFunc not made yet.
type timer struct {
	due time.Time
	seq int // the order of AfterFunc calls, for timers due together
	f   func()
}

// New returns a clock showing Start.
func New() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d. The timers due by then fire on
// the way, in the order they are due (those due together in the order
// they were set), each with the clock showing its time, before Advance
// returns; a timer that a fired one sets fires too if it is due by then.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		t := c.next(end)
		if t == nil {
			break
		}
		c.now = t.due
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// next removes and returns the first timer due by end, or nil; c.mu is
// held.
func (c *Clock) next(end time.Time) *timer {
	i := -1
	for j, t := range c.timers {
		if !t.due.After(end) && (i < 0 || t.due.Before(c.timers[i].due) || t.due.Equal(c.timers[i].due) && t.seq < c.timers[i].seq) {
			i = j
		}
	}
	if i < 0 {
		return nil
	}
	t := c.timers[i]
	c.timers = append(c.timers[:i], c.timers[i+1:]...)
	return t
}

// AfterFunc calls f once the clock has moved d past now, on the
// goroutine that moves it (so f, like time.AfterFunc's, must not wait for
// that goroutine). A d of zero or less calls f at once on a goroutine of
// its own, as time.AfterFunc does. stop cancels the call and reports
// whether it did: false when f was called or stopped already. Its
// signature is runner.Options.AfterFunc's and platform.Config.AfterFunc's.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	if d <= 0 {
		go f()
		return func() bool { return false }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &timer{due: c.now.Add(d), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, u := range c.timers {
			if u == t {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return true
			}
		}
		return false
	}
}

// Sleep returns at once, with ctx's error when ctx is done, after moving
// the clock forward by d (Advance): the sleeper sees its whole wait pass,
// and the timers due in it fire. Sleepers on
// several goroutines each move it, so time runs faster than on a real
// clock, never slower.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
	}
	return nil
}
