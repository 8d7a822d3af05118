package stats

import (
	"math"
	"sort"
)

// MaxRuns bounds the exact computations: Needed gives up on a design that
// needs more runs than this (a margin so thin, or a confidence so high,
// that no scenario would be run that often).
const MaxRuns = 100_000

// Operating is the exact behaviour of a design cut off at a limit, for one
// true pass rate: the probability of each verdict and the distribution of
// the runs it takes (errored runs aside).
type Operating struct {
	// Pass, Fail and Inconclusive sum to 1.
	Pass, Fail, Inconclusive float64
	// MeanRuns is the expected number of runs; P95 the 95th percentile.
	MeanRuns float64
	P95      int
}

// Operating computes how the test behaves when the true rate is rate and
// it may take at most limit runs.
func (d Design) Operating(rate float64, limit int) Operating {
	var o Operating
	p95 := 0
	d.walk(rate, limit, func(n int, pass, fail, open float64) bool {
		// (pass + fail) is P(N ≤ n); MeanRuns sums P(N > n) for n < limit.
		if n < limit {
			o.MeanRuns += open
		}
		if p95 == 0 && pass+fail >= 0.95 {
			p95 = n
		}
		o.Pass, o.Fail, o.Inconclusive = pass, fail, open
		return true
	})
	o.MeanRuns++ // P(N > 0) = 1
	if p95 == 0 {
		p95 = limit
	}
	o.P95 = p95
	return o
}

// Needed is the smallest limit at which the guarantee holds: a scenario
// at PassRate passes, and one at Low() fails, each with probability at
// least Confidence. Any larger limit keeps it (the verdicts of a longer
// test include those of a shorter one). It returns MaxRuns+1 when even
// MaxRuns runs are not enough, or the design is not valid.
func (d Design) Needed() int {
	if d.Validate() != nil || !d.withinRuns(MaxRuns) {
		return MaxRuns + 1
	}
	// The two rates are walked in lockstep, each until it meets the
	// guarantee; the answer is the later of the two.
	hi := d.walker(d.PassRate)
	lo := d.walker(d.Low())
	doneHi, doneLo := false, false
	for n := 1; n <= MaxRuns; n++ {
		if !doneHi {
			pass, _, _ := hi.step()
			doneHi = pass >= d.Confidence
		}
		if !doneLo {
			_, fail, _ := lo.step()
			doneLo = fail >= d.Confidence
		}
		if doneHi && doneLo {
			return n
		}
	}
	return MaxRuns + 1
}

// withinRuns reports whether any test on n runs can give the guarantee;
// when none can, neither can the sequential test stopped at n (it is a
// test on n runs that ignores the runs it did not take), and Needed need
// not walk MaxRuns runs of a design that asks for millions (a margin of
// 0.001 at 99.99999999% took seconds in lint). By Neyman and Pearson,
// the test that passes most often at PassRate, among those that pass at
// most 1 − Confidence of the time at Low(), passes on many passes: at
// least c of n, and at c−1 with the chance that spends what is left of
// 1 − Confidence. A guarantee it misses by more than rounding no test
// meets; one it may meet is left to the walk.
func (d Design) withinRuns(n int) bool {
	alpha := 1 - d.Confidence
	// The fewest passes c whose tail at Low() is within alpha.
	c := sort.Search(n+1, func(c int) bool { return atLeast(n, c, d.Low()) <= alpha })
	power := atLeast(n, c, d.PassRate)
	if c > 0 {
		// Randomised at c−1: the chance that brings the size to alpha.
		if at := atLeast(n, c-1, d.Low()) - atLeast(n, c, d.Low()); at > 0 {
			power += (alpha - atLeast(n, c, d.Low())) / at * (atLeast(n, c-1, d.PassRate) - power)
		}
	}
	const rounding = 1e-9
	return power >= d.Confidence-rounding
}

// walk follows the exact distribution of the test at rate for up to limit
// runs, calling visit after each run n with the probabilities that the
// test has passed, failed, or is still open. It stops early when visit
// returns false.
func (d Design) walk(rate float64, limit int, visit func(n int, pass, fail, open float64) bool) {
	w := d.walker(rate)
	for n := 1; n <= limit; n++ {
		pass, fail, open := w.step()
		if !visit(n, pass, fail, open) {
			return
		}
	}
}

// walker is the state of the dynamic programme over (runs, passes): the
// probability of each pass count among the paths still open after n runs.
// The open pass counts form one interval (the continuation region between
// two parallel lines), so the state is a short slice.
type walker struct {
	t          test
	rate       float64
	n          int
	lo         int       // pass count of open[0]
	open       []float64 // P(still open after n runs with lo+i passes)
	next       []float64
	pass, fail float64
}

func (d Design) walker(rate float64) *walker {
	return &walker{t: d.test(), rate: rate, open: []float64{1}}
}

// step advances one run and returns the cumulative probabilities.
func (w *walker) step() (pass, fail, open float64) {
	w.n++
	passFrom, failTo := w.t.cuts(w.n)
	// After the run, pass counts lo..lo+len(open) are reachable: count i
	// from i-1 passes and a pass, or from i passes and a failure. One
	// loop computes each count, sorts it and writes it once (0 unless
	// still open), in locals: Needed takes every run up to MaxRuns for a
	// design that needs more, and under the race detector each memory
	// access here is a call (a quarter of the time of two loops over a
	// zeroed slice, there).
	rate, q, lo, src := w.rate, 1-w.rate, w.lo, w.open
	pass, fail = w.pass, w.fail
	next := w.next[:0]
	first, last := -1, -1
	prev := 0.0
	for i := 0; i <= len(src); i++ {
		cur := 0.0
		if i < len(src) {
			cur = src[i]
		}
		p := prev*rate + cur*q
		prev = cur
		v := 0.0
		if p != 0 {
			switch s := lo + i; {
			case s >= passFrom:
				pass += p
			case s <= failTo:
				fail += p
			default:
				if first < 0 {
					first = i
				}
				last = i
				open += p
				v = p
			}
		}
		next = append(next, v)
	}
	w.pass, w.fail = pass, fail
	// The buffers swap: the open counts move to the front of next, and
	// the old ones are the next step's to write.
	w.next = w.open[:0]
	if first < 0 {
		w.open = next[:0]
	} else {
		w.open = next[:copy(next, next[first:last+1])]
		w.lo += first
	}
	// Rounding leaves the sum a few ulps off 1; the open mass is what is
	// not yet decided.
	return pass, fail, math.Max(open, 0)
}

// FixedRuns is the fixed-size design with the same guarantee, for
// comparison: the fewest runs n, and the passes threshold c, such that a
// scenario decided by "at least c of n runs passed" passes with
// probability ≥ Confidence at PassRate and fails with probability ≥
// Confidence at Low(). It returns (0, 0) beyond MaxRuns.
func (d Design) FixedRuns() (n, threshold int) {
	p1, p0 := d.PassRate, d.Low()
	alpha := 1 - d.Confidence
	for n := 1; n <= MaxRuns; n++ {
		// The smallest c with P(X ≥ c | p0) ≤ α; then check p1.
		pm0, pm1 := binomialPMF(n, p0), binomialPMF(n, p1)
		tail0, tail1, c := 0.0, 0.0, n+1
		for c > 0 && tail0+pm0[c-1] <= alpha {
			c--
			tail0 += pm0[c]
			tail1 += pm1[c]
		}
		if c <= n && tail1 >= d.Confidence {
			return n, c
		}
	}
	return 0, 0
}

// binomialPMF is P(X = k) for k = 0..n, X ~ Binomial(n, p), computed in
// log space.
func binomialPMF(n int, p float64) []float64 {
	pm := make([]float64, n+1)
	switch {
	case p <= 0:
		pm[0] = 1
		return pm
	case p >= 1:
		pm[n] = 1
		return pm
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	for k := range pm {
		lk, _ := math.Lgamma(float64(k + 1))
		lr, _ := math.Lgamma(float64(n - k + 1))
		pm[k] = math.Exp(ln - lk - lr + float64(k)*lp + float64(n-k)*lq)
	}
	return pm
}
