package platform

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
)

// at is fakeclock.Start plus d, the pacer tests' clock.
func at(d time.Duration) time.Time { return fakeclock.Start.Add(d) }

// admit takes n requests at now, which the pacer must allow.
func admit(t *testing.T, p *pacer, now time.Time, n int) []ticket {
	t.Helper()
	out := make([]ticket, n)
	for i := range out {
		tk, wait, ok := p.take(now)
		if !ok {
			t.Fatalf("request %d of %d at %s refused (wait %s)", i+1, n, now.Sub(fakeclock.Start), wait)
		}
		out[i] = tk
	}
	return out
}

// TestPacerLearnsFromConcurrentTraffic: the rate the platform accepts is
// learnt from the key's traffic once requests went side by side, not from
// the requests sent before the key last had none in flight: the
// deployment reads of a run, one alone or a few side by side (one per
// agent and environment), whose round trip on a slow platform counted as
// seconds of traffic and made the learnt rate a third of the platform's.
func TestPacerLearnsFromConcurrentTraffic(t *testing.T) {
	t.Parallel()
	for _, reads := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("%d reads", reads), func(t *testing.T) {
			t.Parallel()
			p := newPacer(0)
			for _, read := range admit(t, p, at(0), reads) {
				p.answered(at(2*time.Second), read, true, false, 0)
			}
			burst := admit(t, p, at(2*time.Second), 20)
			for _, tk := range burst[:19] {
				p.answered(at(2500*time.Millisecond), tk, true, false, 0)
			}
			p.answered(at(3*time.Second), burst[19], true, true, time.Second)
			// 19 accepted in the second since the burst went; counting
			// the reads and their two seconds, 19 + reads in three.
			if want := 19.0; math.Abs(p.rate-want) > 1e-9 {
				t.Errorf("learnt rate %.2f/s, want %.2f/s", p.rate, want)
			}
		})
	}
}

// drain takes requests at now until the pacer refuses one: the rate
// binds.
func drain(p *pacer, now time.Time) []ticket {
	var out []ticket
	for {
		tk, _, ok := p.take(now)
		if !ok {
			return out
		}
		out = append(out, tk)
	}
}

// TestPacerGrowsOncePerRoundTrip: the rate grows only with the answers of
// requests sent at the current rate, so once per round trip at most: on
// a platform that answers in seconds, answers of requests sent before an
// increase grew it again before any answer at the new rate could come
// back with a 429.
func TestPacerGrowsOncePerRoundTrip(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	p.learning, p.rate, p.ceiling, p.gen = false, 10, 10, 1 // as after a first 429
	p.tokens, p.filled = p.depth(), at(0)
	answer := func(now time.Time, tks ...[]ticket) {
		for _, l := range tks {
			for _, tk := range l {
				p.answered(now, tk, true, false, 0)
			}
		}
	}
	first := drain(p, at(0))
	sentBefore := append(drain(p, at(1500*time.Millisecond)), drain(p, at(1700*time.Millisecond))...)
	answer(at(2*time.Second), first)
	grown := p.rate
	if grown <= 10 {
		t.Fatalf("rate %.2f after a window of answers at a binding rate, want it grown", grown)
	}
	sentAfter := drain(p, at(2*time.Second))
	// More than a window of answers, but to requests sent before the
	// increase: they tell nothing of the new rate.
	answer(at(3*time.Second), sentBefore)
	if p.rate != grown {
		t.Errorf("rate %.2f after %d answers to requests sent before the increase, want %.2f", p.rate, len(sentBefore), grown)
	}
	// A window of answers to requests sent at the new rate grows it.
	answer(at(4*time.Second), sentAfter, drain(p, at(3*time.Second)))
	if p.rate <= grown {
		t.Errorf("rate %.2f after a window of answers at the new rate, want above %.2f", p.rate, grown)
	}
}

// TestPacerKeepsLearningThroughAPause: once a window's worth of requests
// went side by side, a moment with none in flight (the workers between
// calls at once) does not start the measure afresh: the first 429 after
// it learns from the whole run of traffic, not from the answers of the
// instant since.
func TestPacerKeepsLearningThroughAPause(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	first := admit(t, p, at(0), startWindow)
	for _, tk := range first {
		p.answered(at(500*time.Millisecond), tk, true, false, 0)
	}
	after := admit(t, p, at(time.Second), 2)
	p.answered(at(1100*time.Millisecond), after[1], true, true, time.Second)
	if want := float64(startWindow) / 1.1; math.Abs(p.rate-want) > 1e-9 {
		t.Errorf("learnt rate %.2f/s, want %.2f/s: the %d answers of the run's traffic over 1.1s", p.rate, want, startWindow)
	}
}

// TestPacerKeepsWhatAnEarlierRunShowed: a moment with none in flight
// before a window's worth went side by side (two workers between calls
// at once) restarts the measure, but the rate the platform accepted
// before it still counts: a 429 just after the restart learns the
// earlier run's rate, not the few answers since.
func TestPacerKeepsWhatAnEarlierRunShowed(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	earlier := admit(t, p, at(0), 15)
	for _, tk := range earlier {
		p.answered(at(100*time.Millisecond), tk, true, false, 0)
	}
	after := admit(t, p, at(100*time.Millisecond), 2)
	p.answered(at(150*time.Millisecond), after[1], true, true, time.Second)
	// 15 answers in the first run, over at least a second.
	if want := 15.0; math.Abs(p.rate-want) > 1e-9 {
		t.Errorf("learnt rate %.2f/s, want %.2f/s", p.rate, want)
	}
}

// TestPacerWindowCapsRequestsInFlight: before the platform refused
// anything, no more than startWindow requests of a key are in flight,
// whatever the workers; after a 429 that taught no rate (the key's bucket
// was empty from the start), relearnWindow of them per pause. The
// request past the window waits for one in flight to end (wait 0).
func TestPacerWindowCapsRequestsInFlight(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	first := admit(t, p, at(0), startWindow)
	if _, wait, ok := p.take(at(0)); ok || wait != 0 {
		t.Fatalf("request %d at once: admitted %v, wait %s; want it held by the window", startWindow+1, ok, wait)
	}
	for _, tk := range first {
		p.answered(at(0), tk, true, true, time.Second)
	}
	admit(t, p, at(time.Second), relearnWindow)
	if _, wait, ok := p.take(at(time.Second)); ok || wait != 0 {
		t.Errorf("request %d after a pause: admitted %v, wait %s; want it held by the window of %d", relearnWindow+1, ok, wait, relearnWindow)
	}
}

// TestPacerRelearnsUntilSomethingIsAccepted: a 429 before the platform
// accepted anything teaches no rate, however many come in a row (the
// key's bucket stays empty while another job spends it), and neither
// does the 429 of a request sent before learning began again, even the
// last one, after another of them was accepted: learning a rate from
// either made the pacer go at its slowest (minRate).
func TestPacerRelearnsUntilSomethingIsAccepted(t *testing.T) {
	t.Parallel()
	learning := func(t *testing.T, p *pacer, after string) {
		t.Helper()
		if !p.learning || p.rate != 0 {
			t.Errorf("after %s: learning %v at %.2f/s, want learning, no rate", after, p.learning, p.rate)
		}
	}
	t.Run("429s in a row", func(t *testing.T) {
		t.Parallel()
		p := newPacer(0)
		for i := range 3 {
			tk := admit(t, p, at(time.Duration(i)*time.Second), 1)[0]
			p.answered(at(time.Duration(i)*time.Second), tk, true, true, time.Second)
			learning(t, p, fmt.Sprintf("429 %d", i+1))
		}
	})
	t.Run("a late 429 of a request sent before", func(t *testing.T) {
		t.Parallel()
		p := newPacer(0)
		before := admit(t, p, at(0), 3)
		p.answered(at(0), before[0], true, true, time.Second)
		p.answered(at(100*time.Millisecond), before[1], true, false, 0)
		p.answered(at(200*time.Millisecond), before[2], true, true, time.Second)
		learning(t, p, "the 429 of the last request sent before learning began again")
	})
}

// TestPacerSendsOneWhenAShortPauseEnds: the token bucket refills during
// a Retry-After pause, but a pause shorter than a bucket's worth lets go
// only what it refilled, at least the one request the platform promised
// to take: at 9 requests a second after a 429 asking for 200ms, one.
func TestPacerSendsOneWhenAShortPauseEnds(t *testing.T) {
	t.Parallel()
	p := newPacer(0)
	p.learning, p.rate, p.ceiling, p.gen = false, 10, 10, 1 // as after a first 429
	p.tokens, p.filled = p.depth(), at(0)
	refused := admit(t, p, at(0), 1)[0]
	p.answered(at(0), refused, true, true, 200*time.Millisecond)
	if _, wait, ok := p.take(at(100 * time.Millisecond)); ok || wait != 100*time.Millisecond {
		t.Errorf("during the pause: admitted %v, wait %s; want a wait of 100ms", ok, wait)
	}
	if n := len(drain(p, at(200*time.Millisecond))); n != 1 || p.rate != 9 {
		t.Errorf("%d requests went when the pause ended, at %.2f/s; want 1 at 9/s", n, p.rate)
	}
}

// TestRateAccountCountsAWaitInProgress: what a case waited includes the
// wait in progress, once however many of its calls wait together, so
// that the budget left to a call that wakes to wait again (its turn
// taken, the pause moved out by another 429) counts its first sleep, and
// a turn timeout firing mid-wait grants the wait so far.
func TestRateAccountCountsAWaitInProgress(t *testing.T) {
	t.Parallel()
	a := NewRateAccount()
	a.setLimit(10 * time.Second)
	a.startWait(at(0))
	a.endWait(at(time.Second))
	a.startWait(at(2 * time.Second))
	a.startWait(at(2500 * time.Millisecond)) // another call of the case
	for _, c := range []struct {
		now        time.Duration
		waited     time.Duration
		endOneWait bool
	}{
		{now: 2 * time.Second, waited: time.Second},
		{now: 3 * time.Second, waited: 2 * time.Second, endOneWait: true},
		{now: 4 * time.Second, waited: 3 * time.Second, endOneWait: true},
		{now: 5 * time.Second, waited: 3 * time.Second},
	} {
		if w, left := a.Waited(at(c.now)), a.left(at(c.now)); w != c.waited || left != 10*time.Second-c.waited {
			t.Errorf("at %s: waited %s, %s left; want %s, %s", c.now, w, left, c.waited, 10*time.Second-c.waited)
		}
		if c.endOneWait {
			a.endWait(at(c.now))
		}
	}
}
