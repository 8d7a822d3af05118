package clock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// TestWithTimeoutCause: on a fake clock's AfterFunc, a bound reads as
// context.WithTimeoutCause's: DeadlineExceeded with its cause once its
// time passed on the clock, and its parent's end when the parent ended
// first.
func TestWithTimeoutCause(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	cause := errors.New("turn timeout")

	ctx, cancel := WithTimeoutCause(context.Background(), time.Second, cause, clk.AfterFunc)
	clk.Advance(999 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended before its time: %v", ctx.Err())
	}
	clk.Advance(time.Millisecond)
	mustBeDone(t, ctx)
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != cause {
		t.Errorf("err %v, cause %v; want %v, %v", ctx.Err(), context.Cause(ctx), context.DeadlineExceeded, cause)
	}
	cancel()
	if ctx.Err() != context.DeadlineExceeded {
		t.Errorf("after cancel: %v", ctx.Err())
	}

	// A child without a cause of its own, as the platform client's
	// connect within a turn.
	outer, cancelOuter := WithTimeoutCause(context.Background(), time.Second, cause, clk.AfterFunc)
	defer cancelOuter()
	inner, cancelInner := WithTimeoutCause(outer, time.Minute, nil, clk.AfterFunc)
	defer cancelInner()
	clk.Advance(time.Second)
	mustBeDone(t, inner)
	if inner.Err() != context.DeadlineExceeded || context.Cause(inner) != cause {
		t.Errorf("child of a bound that passed: err %v, cause %v", inner.Err(), context.Cause(inner))
	}

	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel = WithTimeoutCause(parent, time.Second, cause, clk.AfterFunc)
	defer cancel()
	cancelParent()
	clk.Advance(time.Second)
	if ctx.Err() != context.Canceled || context.Cause(ctx) != context.Canceled {
		t.Errorf("parent cancelled: err %v, cause %v", ctx.Err(), context.Cause(ctx))
	}

	ctx, cancel = WithTimeoutCause(context.Background(), time.Second, nil, clk.AfterFunc)
	cancel()
	clk.Advance(time.Second)
	if ctx.Err() != context.Canceled {
		t.Errorf("cancelled: %v", ctx.Err())
	}
	ctx, cancel = WithTimeoutCause(context.Background(), time.Second, nil, clk.AfterFunc)
	defer cancel()
	clk.Advance(time.Second)
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != context.DeadlineExceeded {
		t.Errorf("no cause: err %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
}

// TestWithTimeoutCauseRealClock: without AfterFunc it is the context
// package's, with a Deadline the platform client reads.
func TestWithTimeoutCauseRealClock(t *testing.T) {
	t.Parallel()
	cause := errors.New("turn timeout")
	ctx, cancel := WithTimeoutCause(context.Background(), time.Nanosecond, cause, nil)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("no deadline on the real clock")
	}
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != cause {
		t.Errorf("err %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
}

// TestWithTimeoutGraceFiringLate: the grants move the end set at the
// start, not the time the timer fired at. Here every timer fires 100ms
// after it is due and three grants of 1s come one a firing: the bound
// ends at its 1s and the grants' 3s, plus the last firing's lateness,
// where an end moved from each late firing gave it 300ms more.
func TestWithTimeoutGraceFiringLate(t *testing.T) {
	t.Parallel()
	const late = 100 * time.Millisecond
	clk := fakeclock.New()
	after := func(d time.Duration, f func()) func() bool { return clk.AfterFunc(d+late, f) }
	grants := 3
	ctx, cancel := WithTimeoutGrace(context.Background(), time.Second, nil, after, clk.Now, func() time.Duration {
		if grants == 0 {
			return 0
		}
		grants--
		return time.Second
	})
	defer cancel()
	clk.Advance(4*time.Second + late - time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("ended before its 1s, the 3s granted and a firing's lateness passed: %v", ctx.Err())
	}
	clk.Advance(time.Millisecond)
	if ctx.Err() != context.DeadlineExceeded || grants != 0 {
		t.Errorf("err %v with %d grants left, want the bound's end once its 1s, the 3s granted and one lateness passed", ctx.Err(), grants)
	}
}

// TestWithTimeoutGrace: the bound ends once d and every grant have
// passed with nothing more granted, and has no Deadline, on either clock.
func TestWithTimeoutGrace(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	cause := errors.New("turn timeout")
	grants := []time.Duration{3 * time.Second, time.Second}
	asked := 0
	ctx, cancel := WithTimeoutGrace(context.Background(), time.Second, cause, clk.AfterFunc, clk.Now, func() time.Duration {
		asked++
		if len(grants) == 0 {
			return 0
		}
		g := grants[0]
		grants = grants[1:]
		return g
	})
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a deadline, which a grant would make wrong")
	}
	clk.Advance(5*time.Second - time.Millisecond)
	if ctx.Err() != nil || asked != 2 {
		t.Fatalf("before d and the grants passed: err %v after %d asks", ctx.Err(), asked)
	}
	clk.Advance(time.Millisecond)
	mustBeDone(t, ctx)
	if ctx.Err() != context.DeadlineExceeded || context.Cause(ctx) != cause || asked != 3 {
		t.Errorf("err %v, cause %v after %d asks; want the bound's end after 3", ctx.Err(), context.Cause(ctx), asked)
	}

	// On the real clock, with nothing granted, it ends too.
	rctx, cancelReal := WithTimeoutGrace(context.Background(), time.Nanosecond, cause, nil, nil, func() time.Duration { return 0 })
	defer cancelReal()
	if _, ok := rctx.Deadline(); ok {
		t.Error("a deadline on the real clock")
	}
	<-rctx.Done()
	if rctx.Err() != context.DeadlineExceeded || context.Cause(rctx) != cause {
		t.Errorf("real clock: err %v, cause %v", rctx.Err(), context.Cause(rctx))
	}
}

// mustBeDone fails at once when ctx is not done: a fake clock's timers
// fire inside Advance, so a bound that passed has ended when it returns,
// and a bound that missed its time would otherwise block the test.
func mustBeDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	default:
		t.Fatal("not ended once its time passed on the clock")
	}
}

// TestWithTimeoutGraceBoundary: a grant, however small, moves the end by
// exactly itself.
func TestWithTimeoutGraceBoundary(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	granted := false
	ctx, cancel := WithTimeoutGrace(context.Background(), time.Second, nil, clk.AfterFunc, clk.Now, func() time.Duration {
		if granted {
			return 0
		}
		granted = true
		return time.Nanosecond
	})
	defer cancel()
	clk.Advance(time.Second)
	if ctx.Err() != nil || !granted {
		t.Fatalf("ended at d with 1ns granted: %v", ctx.Err())
	}
	clk.Advance(time.Nanosecond)
	mustBeDone(t, ctx)
}

// TestCancelStopsTheTimer: cancel stops the timer that runs, the first
// one or the one a grant set, so none is left to fire (on the real clock,
// a goroutine kept for nothing).
func TestCancelStopsTheTimer(t *testing.T) {
	t.Parallel()
	for _, grants := range []int{0, 1, 2} {
		clk := fakeclock.New()
		pending := 0
		after := func(d time.Duration, f func()) func() bool {
			pending++
			stop := clk.AfterFunc(d, func() { pending--; f() })
			return func() bool {
				stopped := stop()
				if stopped {
					pending--
				}
				return stopped
			}
		}
		left := grants
		ctx, cancel := WithTimeoutGrace(context.Background(), time.Second, nil, after, clk.Now, func() time.Duration {
			if left == 0 {
				return 0
			}
			left--
			return time.Second
		})
		clk.Advance(time.Duration(grants) * time.Second)
		cancel()
		if pending != 0 || ctx.Err() != context.Canceled {
			t.Errorf("%d grants: %d timers left after cancel, err %v", grants, pending, ctx.Err())
		}
	}
}
