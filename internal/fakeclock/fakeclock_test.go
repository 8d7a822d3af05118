package fakeclock

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestAfterFunc: timers fire when the clock is moved past them, in the
// order they fall due (those due together in the order they were set),
// each seeing its own time, before Advance returns; a stopped timer never
// fires, and a timer set by a firing one fires in the same move if it is
// due by its end.
func TestAfterFunc(t *testing.T) {
	type testCase struct {
		name  string
		set   func(c *Clock, fired func(name string))
		moves []time.Duration
		want  []string
	}
	run := func(t *testing.T, tc testCase) {
		c := New()
		var got []string
		tc.set(c, func(name string) { got = append(got, name+"@"+c.Now().Sub(Start).String()) })
		for _, d := range tc.moves {
			c.Advance(d)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("fired %v, want %v", got, tc.want)
		}
	}
	testCases := []testCase{
		{
			name: "not due",
			set: func(c *Clock, fired func(string)) {
				c.AfterFunc(time.Second, func() { fired("a") })
			},
			moves: []time.Duration{999 * time.Millisecond},
		},
		{
			name: "in the order due",
			set: func(c *Clock, fired func(string)) {
				c.AfterFunc(3*time.Second, func() { fired("c") })
				c.AfterFunc(time.Second, func() { fired("a") })
				c.AfterFunc(2*time.Second, func() { fired("b") })
			},
			moves: []time.Duration{5 * time.Second},
			want:  []string{"a@1s", "b@2s", "c@3s"},
		},
		{
			name: "due together, in the order set",
			set: func(c *Clock, fired func(string)) {
				c.AfterFunc(time.Second, func() { fired("first") })
				c.AfterFunc(time.Second, func() { fired("second") })
			},
			moves: []time.Duration{time.Second},
			want:  []string{"first@1s", "second@1s"},
		},
		{
			name: "over several moves",
			set: func(c *Clock, fired func(string)) {
				c.AfterFunc(1500*time.Millisecond, func() { fired("a") })
			},
			moves: []time.Duration{time.Second, time.Second},
			want:  []string{"a@1.5s"},
		},
		{
			name: "stopped",
			set: func(c *Clock, fired func(string)) {
				stop := c.AfterFunc(time.Second, func() { fired("a") })
				if !stop() {
					panic("stop of a pending timer reported false")
				}
				if stop() {
					panic("second stop reported true")
				}
			},
			moves: []time.Duration{time.Hour},
		},
		{
			name: "set by a firing one",
			set: func(c *Clock, fired func(string)) {
				c.AfterFunc(time.Second, func() {
					fired("a")
					c.AfterFunc(time.Second, func() { fired("b") })
					c.AfterFunc(time.Hour, func() { fired("c") })
				})
			},
			moves: []time.Duration{3 * time.Second},
			want:  []string{"a@1s", "b@2s"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestSleepFiresTimers: a sleeper moves the clock, so the timers due in
// its sleep fire; a stop after the firing reports false.
func TestSleepFiresTimers(t *testing.T) {
	c := New()
	fired := false
	stop := c.AfterFunc(time.Second, func() { fired = true })
	if err := c.Sleep(context.Background(), time.Second); err != nil || !fired {
		t.Fatalf("sleep: %v, fired %t", err, fired)
	}
	if stop() {
		t.Error("stop after the firing reported true")
	}
}

// TestAfterFuncNow: a timer due at once fires without a move, as
// time.AfterFunc's does.
func TestAfterFuncNow(t *testing.T) {
	c := New()
	done := make(chan struct{})
	c.AfterFunc(0, func() { close(done) })
	<-done
}
