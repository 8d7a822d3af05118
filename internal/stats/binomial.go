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
		lower, _ = bisect(func(q float64) float64 { return alpha - tail(runs, passes, q) }, 0, float64(passes)/float64(runs), true)
	}
	if passes < runs {
		// P(X ≤ passes | q) falls with q; upper is where it reaches α.
		_, upper = bisect(func(q float64) float64 { return (1 - tail(runs, passes+1, q)) - alpha }, float64(passes)/float64(runs), 1, true)
	}
	return lower, upper
}

// tail is P(X ≥ k) for X ~ Binomial(n, q).
func tail(n, k int, q float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n {
		return 0
	}
	sum := 0.0
	for _, p := range binomialPMF(n, q)[k:] {
		sum += p
	}
	return math.Min(sum, 1)
}
