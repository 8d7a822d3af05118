package stats

import (
	"errors"
	"fmt"
	"math"
)

// DefaultMargin is the margin of a design that sets none: a rate 0.1 below
// the pass rate must fail.
const DefaultMargin = 0.1

// Design is a sequential test of a scenario's pass rate.
type Design struct {
	// PassRate is p1, the rate a healthy agent reaches: at or above it the
	// scenario passes with probability at least Confidence.
	PassRate float64
	// Margin is p1 − p0: at or below p0 = PassRate − Margin the scenario
	// fails with probability at least Confidence. Between p0 and p1 either
	// verdict is acceptable.
	Margin float64
	// Confidence is 1 − α = 1 − β, the probability of the right verdict at
	// or beyond the two rates.
	Confidence float64
}

// Validate reports what makes the design unusable: rates outside (0, 1],
// a margin that reaches 0, a confidence outside (0.5, 1).
func (d Design) Validate() error {
	var errs []error
	if !(d.PassRate > 0 && d.PassRate <= 1) {
		errs = append(errs, fmt.Errorf("pass rate must be above 0 and at most 1, not %v", d.PassRate))
	}
	if !(d.Margin > 0 && d.Margin < d.PassRate) {
		errs = append(errs, fmt.Errorf("margin must be above 0 and below the pass rate %v, not %v", d.PassRate, d.Margin))
	}
	if !(d.Confidence > 0.5 && d.Confidence < 1) {
		errs = append(errs, fmt.Errorf("confidence must be above 0.5 and below 1, not %v", d.Confidence))
	}
	return errors.Join(errs...)
}

// Low is p0 = PassRate − Margin, the rate that must fail.
func (d Design) Low() float64 { return d.PassRate - d.Margin }

// Decision is what the test says after some runs.
type Decision int

const (
	// Continue: the evidence does not decide yet; run again.
	Continue Decision = iota
	// Pass: the rate is above p0 (Lower ≥ p0).
	Pass
	// Fail: the rate is below p1 (Upper ≤ p1).
	Fail
)

var decisionNames = [...]string{"continue", "pass", "fail"}

func (d Decision) String() string {
	if d < 0 || int(d) >= len(decisionNames) {
		return fmt.Sprintf("Decision(%d)", int(d))
	}
	return decisionNames[d]
}

// test is a design's statistic precomputed: the log-likelihood ratio moves
// by up for a pass and down for a failure, and the test stops at the
// boundaries ±bound.
type test struct {
	up, down float64
	// certainFail: p1 = 1, so a single failure proves the rate below p1.
	certainFail bool
	bound       float64
}

func (d Design) test() test {
	t := test{
		up:    math.Log(d.PassRate / d.Low()),
		bound: math.Log(1 / (1 - d.Confidence)),
	}
	if d.PassRate >= 1 {
		t.certainFail = true
	} else {
		t.down = math.Log((1 - d.PassRate) / (1 - d.Low()))
	}
	return t
}

// llr is log Λ after s passes and f failures.
func (t test) llr(s, f int) float64 {
	if f > 0 && t.certainFail {
		return math.Inf(-1)
	}
	return float64(s)*t.up + float64(f)*t.down
}

func (t test) decide(s, f int) Decision {
	switch l := t.llr(s, f); {
	case l >= t.bound:
		return Pass
	case l <= -t.bound:
		return Fail
	}
	return Continue
}

// Decide applies the test to the evidence so far: passes and failures in
// any order (the statistic depends on the counts only). Errored runs are
// not evidence and must not be counted in either. The design must be
// valid.
func (d Design) Decide(passes, failures int) Decision {
	return d.test().decide(passes, failures)
}

// Lower is the rate's anytime-valid lower confidence bound at
// d.Confidence after passes and failures: the smallest rate q the
// likelihood ratio of PassRate against q has not yet ruled out (ratio
// below 1/α). For every true rate p the chance that Lower ever exceeds p
// is at most α, so the bound holds at whatever run the test stopped. The
// test passes exactly when Lower ≥ Low().
func (d Design) Lower(passes, failures int) float64 {
	if passes == 0 {
		return 0
	}
	if failures > 0 && d.PassRate >= 1 {
		// The ratio bet everything on p = 1 and lost.
		return 0
	}
	n := float64(passes + failures)
	s, f := float64(passes), float64(failures)
	c := math.Log(1 / (1 - d.Confidence))
	// log ratio of PassRate against q: decreasing in q below the observed
	// share, and below c at min(share, PassRate).
	g := func(q float64) float64 {
		v := s * math.Log(d.PassRate/q)
		if f > 0 {
			v += f * math.Log((1-d.PassRate)/(1-q))
		}
		return v - c
	}
	lo, _ := bisect(g, 0, math.Min(s/n, d.PassRate), true)
	return lo
}

// Upper is the anytime-valid upper confidence bound, the mirror of Lower
// with the likelihood ratio of Low() against q. The test fails exactly when
// Upper ≤ PassRate.
func (d Design) Upper(passes, failures int) float64 {
	if failures == 0 {
		return 1
	}
	p0 := d.Low()
	n := float64(passes + failures)
	s, f := float64(passes), float64(failures)
	c := math.Log(1 / (1 - d.Confidence))
	h := func(q float64) float64 {
		v := f * math.Log((1-p0)/(1-q))
		if s > 0 {
			v += s * math.Log(p0/q)
		}
		return v - c
	}
	_, hi := bisect(h, math.Max(s/n, p0), 1, false)
	return hi
}

// bisect narrows (lo, hi) around the root of fn, a function monotone
// there that changes sign: decreasing (positive towards lo) when falling,
// else increasing. It returns the final bracket, so that a lower bound
// can be rounded down (lo) and an upper bound up (hi): a reported bound is
// never tighter than the true one.
func bisect(fn func(float64) float64, lo, hi float64, falling bool) (float64, float64) {
	for range 100 {
		mid := (lo + hi) / 2
		if mid <= lo || mid >= hi {
			break
		}
		if v := fn(mid); (v > 0) == falling {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi
}
