package stats

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
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
	// upR, downR and alphaR are the ratios and α in the rationals the
	// design is written as, for the exact comparison at a boundary
	// (onBoundary); nil for a design Validate refuses.
	upR, downR, alphaR *big.Rat
}

func (d Design) test() test {
	var t test
	t.certainFail = d.PassRate >= 1
	// The logs are taken of the written ratios, each rounded once to a
	// float, not of ratios of the rounded rates: p0 = 0.5 − 0.45 = 0.05 as
	// written, where the float difference of the float rates is a relative
	// 1e-16/0.05 off, and 1 − 0.9999999 a relative 1e-9. Rounding the
	// rates first put log Λ further from its written value than the window
	// of decide (0.999999 against 0.999 at 99.9%: one failure is Λ = 0.001
	// = α, and the test went on).
	p1, m, c := decimal(d.PassRate), decimal(d.Margin), decimal(d.Confidence)
	if p1 != nil && m != nil && c != nil {
		one := big.NewRat(1, 1)
		p0 := new(big.Rat).Sub(p1, m)
		alpha := new(big.Rat).Sub(one, c)
		if p0.Sign() > 0 && p1.Cmp(one) <= 0 && alpha.Sign() > 0 {
			t.upR = new(big.Rat).Quo(p1, p0)
			t.downR = new(big.Rat).Quo(new(big.Rat).Sub(one, p1), new(big.Rat).Sub(one, p0))
			t.alphaR = alpha
			t.up = logRat(t.upR)
			t.bound = -logRat(alpha)
			if !t.certainFail {
				t.down = logRat(t.downR)
			}
			return t
		}
	}
	// A design Validate refuses: its floats as they are.
	t.up = math.Log(d.PassRate / d.Low())
	t.bound = math.Log(1 / (1 - d.Confidence))
	if !t.certainFail {
		t.down = math.Log((1 - d.PassRate) / (1 - d.Low()))
	}
	return t
}

// decimal is v as its shortest decimal (0.95, not
// 0.94999999999999995559), or nil when it is not finite.
func decimal(v float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	if !ok {
		return nil
	}
	return r
}

// logRat is log r for r > 0, within an ulp or two: r is rounded once.
func logRat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return math.Log(f)
}

// llr is log Λ after s passes and f failures.
func (t *test) llr(s, f int) float64 {
	if f > 0 && t.certainFail {
		return math.Inf(-1)
	}
	return float64(s)*t.up + float64(f)*t.down
}

func (t *test) decide(s, f int) Decision {
	l := t.llr(s, f)
	// Rounding puts log Λ a few ulps to either side of a boundary it
	// meets exactly (0.95 against 0.75 at 80%: one failure makes Λ =
	// 0.2 = α), and the test would take another run where Λ ≤ α says
	// fail. Within rounding of a boundary (the error of l is a few ulps
	// of each log ratio per run), Λ is compared exactly.
	if math.Abs(math.Abs(l)-t.bound) <= 1e-12*float64(1+s+f) {
		return t.onBoundary(l, s, f)
	}
	switch {
	case l >= t.bound:
		return Pass
	case l <= -t.bound:
		return Fail
	}
	return Continue
}

// cuts returns, after n runs, the fewest passes that pass and the most
// that fail (n+1 and −1 when none do): log Λ grows with the passes, so
// the verdicts of the n+1 pass counts are those two cuts, found by
// decide from where the boundaries cross.
func (t *test) cuts(n int) (passFrom, failTo int) {
	is := func(s int, want Decision) bool { return t.decide(s, n-s) == want }
	if t.certainFail {
		// Every failure fails; only n passes in a row may pass.
		passFrom = n + 1
		if is(n, Pass) {
			passFrom = n
		}
		return passFrom, n - 1
	}
	// log Λ = s·up + (n−s)·down meets ±bound at s = (±bound − n·down) /
	// (up − down); rounding may put the cut a pass to either side.
	at := func(b float64) float64 { return (b - float64(n)*t.down) / (t.up - t.down) }
	// A start outside 0..n+1 (or NaN, for a design Validate refuses) is
	// the nearest end; the walks below are right from any start.
	clamp := func(x float64, lo, hi int) int {
		switch {
		case x >= float64(lo) && x <= float64(hi):
			return int(x)
		case x < float64(lo):
			return lo
		}
		return hi
	}
	passFrom = clamp(math.Ceil(at(t.bound)), 0, n+1)
	for passFrom > 0 && is(passFrom-1, Pass) {
		passFrom--
	}
	for passFrom <= n && !is(passFrom, Pass) {
		passFrom++
	}
	failTo = clamp(math.Floor(at(-t.bound)), -1, n)
	for failTo < n && is(failTo+1, Fail) {
		failTo++
	}
	for failTo >= 0 && !is(failTo, Fail) {
		failTo--
	}
	return passFrom, failTo
}

// onBoundary decides a log Λ of l within rounding of a boundary.
func (t *test) onBoundary(l float64, s, f int) Decision {
	switch {
	case t.upR == nil:
		// Not a valid design (Decide's contract): no exact rates.
		return Continue
	case l > 0 && t.compare(s, f, true) >= 0:
		return Pass
	case l < 0 && t.compare(s, f, false) <= 0:
		return Fail
	}
	return Continue
}

// compare compares Λ after s passes and f failures with 1/α (upper) or α,
// exactly, in the rationals the design's rates are written as (the
// shortest decimals of its floats: 0.95, not 0.94999999999999995559):
// the sign of Λ − 1/α, or of Λ − α.
func (t *test) compare(s, f int, upper bool) int {
	// Λ·k against 1, with k = α (upper) or 1/α: the passes' ratio to the
	// power s, the failures' to the power f, and k, each a fraction.
	k := t.alphaR
	if !upper {
		k = new(big.Rat).Inv(t.alphaR)
	}
	up, down := t.upR, t.downR
	// First in 256-bit floating point, whose error (about 2⁻²⁴⁰ for any
	// count of runs) decides every ratio not within 2⁻²⁰⁰ of the
	// boundary; then in integers, for a ratio on it.
	const prec = 256
	fl := func(r *big.Rat) *big.Float { return new(big.Float).SetPrec(prec).SetRat(r) }
	x := new(big.Float).SetPrec(prec).Mul(powFloat(fl(up), s), powFloat(fl(down), f))
	x.Mul(x, fl(k))
	diff := new(big.Float).SetPrec(prec).Sub(x, big.NewFloat(1))
	if diff.Sign() != 0 && new(big.Float).Abs(diff).Cmp(new(big.Float).SetMantExp(big.NewFloat(1), -200)) > 0 {
		return diff.Sign()
	}
	se, fe := big.NewInt(int64(s)), big.NewInt(int64(f))
	num := new(big.Int).Mul(new(big.Int).Exp(up.Num(), se, nil), new(big.Int).Exp(down.Num(), fe, nil))
	den := new(big.Int).Mul(new(big.Int).Exp(up.Denom(), se, nil), new(big.Int).Exp(down.Denom(), fe, nil))
	num.Mul(num, k.Num())
	den.Mul(den, k.Denom())
	return num.Cmp(den)
}

// powFloat is x to the power e ≥ 0, by squaring, at x's precision.
func powFloat(x *big.Float, e int) *big.Float {
	r := new(big.Float).SetPrec(x.Prec()).SetInt64(1)
	b := new(big.Float).Copy(x)
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r.Mul(r, b)
		}
		b.Mul(b, b)
	}
	return r
}

// Decide applies the test to the evidence so far: passes and failures in
// any order (the statistic depends on the counts only). Errored runs are
// not evidence and must not be counted in either. The design must be
// valid.
func (d Design) Decide(passes, failures int) Decision {
	return d.Decider()(passes, failures)
}

// Decider returns Decide of d with the design's rates read once, for a
// caller that asks after every run (a repeated scenario): reading them
// parses each as a decimal and takes exact ratios, thousands of times
// the cost of a decision.
func (d Design) Decider() func(passes, failures int) Decision {
	t := d.test()
	return t.decide
}

// FewestToPass is the fewest runs in which the design can pass: that
// many passes in a row (MaxRuns+1 when more than MaxRuns are needed).
func (d Design) FewestToPass() int {
	t := d.test() // once: Decide reads the rates at each call
	n := 1
	for t.decide(n, 0) != Pass && n <= MaxRuns {
		n++
	}
	return n
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
