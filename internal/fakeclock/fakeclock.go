// Package fakeclock is a clock for tests that moves only when told to, or
// when something sleeps on it: waits (retry backoff, Retry-After, poll
// intervals, rate-limit refills) then cost no wall time, and what depends
// on time plays out the same on a loaded machine as on an idle one.
//
//	clk := fakeclock.New()
//	srv, _ := sim.New(sim.Options{Now: clk.Now})            // the simulator's clock
//	client, _ := platform.New(platform.Config{Now: clk.Now,
//		Retry: platform.RetryPolicy{Sleep: clk.Sleep}})     // the client's waits
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
	mu  sync.Mutex
	now time.Time
}

// New returns a clock showing Start.
func New() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Sleep returns at once, with ctx's error when ctx is done, after moving
// the clock forward by d: the sleeper sees its whole wait pass. Sleepers on
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
