package stats

import "math"

// Binomial returns the one-sided Clopper–Pearson bounds of a pass rate
// from a fixed number of runs (decided in advance, not sequentially):
// each bound holds with probability at least confidence. It is the
// interval of a `repeat:` scenario without a confidence of its own; a
// sequential test reports Design.Lower and Design.Upper instead, which
// stay valid when the number of runs depends on the outcomes.
func Binomial(passes, runs int, confidence float64) (lower, upper float64) {
	alpha := 1 - confidence
	lower, upper = 0, 1
	if runs <= 0 {
		return lower, upper
	}
	if passes > 0 {
		// P(X ≥ passes | q) grows with q; lower is where it reaches α.
		lower, _ = bisect(func(q float64) float64 { return alpha - atLeast(runs, passes, q) }, 0, float64(passes)/float64(runs), true)
	}
	if passes < runs {
		// P(X ≤ passes | q) falls with q; upper is where it reaches α.
		_, upper = bisect(func(q float64) float64 { return atMost(runs, passes, q) - alpha }, float64(passes)/float64(runs), 1, true)
	}
	return lower, upper
}

// atLeast is P(X ≥ k) and atMost P(X ≤ k) for X ~ Binomial(n, q). Each
// sums the probabilities from k away from the mode, where they fall,
// until what is left is below 1e-17 of the sum: a few standard
// deviations' worth of terms, not n (the bounds of pooled runs in
// `history` have n in the tens of thousands, and a bisection takes a
// hundred sums). k on the mode's other side is the complement's.
func atLeast(n, k int, q float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case q <= 0:
		return 0
	case q >= 1:
		return 1
	case float64(k) < float64(n+1)*q-1:
		// Below the mode: the terms from k up would first grow.
		return math.Max(0, 1-atMost(n, k-1, q))
	}
	ratio := q / (1 - q)
	return fromTerm(n, k, q, func(x int) float64 { return float64(n-x) / float64(x+1) * ratio }, 1)
}

func atMost(n, k int, q float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case q <= 0:
		return 1
	case q >= 1:
		return 0
	case float64(k) > float64(n+1)*q:
		return math.Max(0, 1-atLeast(n, k+1, q))
	}
	ratio := (1 - q) / q
	return fromTerm(n, k, q, func(x int) float64 { return float64(x) / float64(n-x+1) * ratio }, -1)
}

// fromTerm sums P(X = x) for x = k, k+step, ... while it matters: next(x)
// is P(X = x+step) / P(X = x), below 1 and falling from k on (the
// binomial is log-concave), so what is left after a term t is below
// t·r/(1−r) for the ratio r at that term.
func fromTerm(n, k int, q float64, next func(x int) float64, step int) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lr, _ := math.Lgamma(float64(n - k + 1))
	t := math.Exp(ln - lk - lr + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
	sum := 0.0
	for x := k; x >= 0 && x <= n && t > 0; x += step {
		sum += t
		r := next(x)
		if r < 1 && t*r/(1-r) <= 1e-17*sum {
			break
		}
		t *= r
	}
	return math.Min(sum, 1)
}
