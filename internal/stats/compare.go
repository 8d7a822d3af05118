package stats

import (
	"math"
	"slices"
	"sort"
)

// The tests `agenttest compare` uses to tell a change between two
// versions of an agent from noise. They are classical fixed-sample tests:
//
//   - WilcoxonSignedRank compares paired measurements, such as each
//     scenario's median turn latency on the baseline and on the candidate:
//     is one side systematically slower? It uses the ranks of the
//     differences, not their sizes, so one slow outlier cannot make a
//     shift on its own, and it assumes nothing about how latencies are
//     distributed.
//   - FisherExact compares two pass rates, such as a statistical
//     scenario's passes on each side: is the difference more than chance?
//
// References:
//   - F. Wilcoxon, Individual comparisons by ranking methods, Biometrics
//     Bulletin 1(6):80–83, 1945 (the signed-rank test; zero differences
//     dropped, as there).
//   - M. Hollander, D. A. Wolfe, E. Chicken, Nonparametric Statistical
//     Methods, 3rd ed., Wiley, 2014, §3.1 (mid-ranks for ties, the exact
//     null distribution, and the large-sample approximation with its tie
//     correction).
//   - R. A. Fisher, On the interpretation of χ² from contingency tables,
//     and the calculation of P, Journal of the Royal Statistical Society
//     85(1):87–94, 1922; A. Agresti, Categorical Data Analysis, 3rd ed.,
//     Wiley, 2013, §3.5 (the exact test; the two-sided p-value sums the
//     tables no more probable than the one observed).

// SignedRank is the outcome of Wilcoxon's signed-rank test.
type SignedRank struct {
	// N is the number of nonzero differences, the ones ranked.
	N int
	// W is the sum of the ranks of the positive differences (W+).
	W float64
	// P is the two-sided p-value: the probability, when neither side
	// tends to be larger, of a W at least as far from its mean. 1 when N
	// is 0.
	P float64
	// Exact is true when P comes from the exact null distribution (N up
	// to maxExactRanks), false for the normal approximation.
	Exact bool
}

// maxExactRanks is the most differences whose null distribution is
// computed exactly. Above it the normal approximation is within 0.0033 of
// the exact p-value (at 51 differences; 0.0017 at 100).
const maxExactRanks = 50

// WilcoxonSignedRank tests whether paired differences (candidate minus
// baseline) are centred on zero. Zero differences carry no sign and are
// dropped (Wilcoxon's rule); tied absolute differences share their mean
// rank. Up to 50 differences the p-value is exact, from the distribution
// of W over every assignment of signs to the ranks actually observed
// (ties included); above, it is the normal approximation with tie and
// continuity corrections.
func WilcoxonSignedRank(diffs []float64) SignedRank {
	var d []float64
	for _, x := range diffs {
		if x != 0 && !math.IsNaN(x) {
			d = append(d, x)
		}
	}
	n := len(d)
	if n == 0 {
		return SignedRank{P: 1, Exact: true}
	}
	// Rank |d|, ties sharing the mean of their ranks; ranks are kept
	// doubled so that mid-ranks (multiples of ½) are whole numbers.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return math.Abs(d[order[i]]) < math.Abs(d[order[j]]) })
	rank2 := make([]int, n)
	var tieTerm float64 // Σ (t³ − t) over groups of ties
	for i := 0; i < n; {
		j := i
		for j+1 < n && math.Abs(d[order[j+1]]) == math.Abs(d[order[i]]) {
			j++
		}
		// Ranks i+1 … j+1 share (i+1 + j+1)/2; doubled: i+j+2.
		for k := i; k <= j; k++ {
			rank2[order[k]] = i + j + 2
		}
		if t := float64(j - i + 1); t > 1 {
			tieTerm += t*t*t - t
		}
		i = j + 1
	}
	w2 := 0
	for i, x := range d {
		if x > 0 {
			w2 += rank2[i]
		}
	}
	res := SignedRank{N: n, W: float64(w2) / 2}
	if n <= maxExactRanks {
		res.P, res.Exact = exactSignedRank(rank2, w2), true
		return res
	}
	nf := float64(n)
	mean := nf * (nf + 1) / 4
	variance := nf*(nf+1)*(2*nf+1)/24 - tieTerm/48
	z := math.Max(math.Abs(res.W-mean)-0.5, 0) / math.Sqrt(variance)
	res.P = math.Min(1, math.Erfc(z/math.Sqrt2))
	return res
}

// exactSignedRank is the two-sided p-value of an observed doubled W+ of
// w2: under the null each rank's sign is + or − with probability ½,
// independently, so the distribution of the doubled W+ is a convolution,
// computed over its whole-number support.
func exactSignedRank(rank2 []int, w2 int) float64 {
	return signedRankP(signedRankDist(rank2), w2)
}

// signedRankDist is the null distribution of the doubled W+ of the
// doubled ranks rank2, by its whole-number support.
func signedRankDist(rank2 []int) []float64 {
	total := 0
	for _, r := range rank2 {
		total += r
	}
	dist := make([]float64, total+1)
	dist[0] = 1
	top := 0
	for _, r := range rank2 {
		for s := top; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+r] += dist[s] / 2
				dist[s] /= 2
			}
		}
		top += r
	}
	return dist
}

// signedRankP is the two-sided p-value of a doubled W+ of w2 under the
// null distribution dist.
func signedRankP(dist []float64, w2 int) float64 {
	var lower, upper float64 // P(W ≤ w), P(W ≥ w)
	for s, p := range dist {
		if s <= w2 {
			lower += p
		}
		if s >= w2 {
			upper += p
		}
	}
	return math.Min(1, 2*math.Min(lower, upper))
}

// FisherExact is the two-sided p-value of Fisher's exact test that two
// rates are equal: a successes of n trials on one side, b of m on the
// other. With the margins fixed, the first side's successes follow a
// hypergeometric distribution; the p-value sums the probabilities of the
// tables no more probable than the one observed (with a relative
// tolerance of 1e-7, as R's fisher.test, so that equal probabilities
// computed along different paths count as equal). It is 1 when either
// side has no trials.
func FisherExact(a, n, b, m int) float64 {
	if n <= 0 || m <= 0 || a < 0 || b < 0 || a > n || b > m {
		return 1
	}
	k, total := a+b, n+m
	logP := func(x int) float64 {
		return logChoose(k, x) + logChoose(total-k, n-x) - logChoose(total, n)
	}
	observed := logP(a)
	p := 0.0
	for x := max(0, k-m); x <= min(k, n); x++ {
		if lp := logP(x); lp <= observed+math.Log1p(1e-7) {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

// logChoose is log C(n, k).
func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of xs by linear
// interpolation between the closest ranks (Hyndman and Fan's type 7, the
// default of R and NumPy): the median is Quantile(xs, 0.5), and with few
// values the 95th percentile lies between the two largest rather than
// jumping to the largest. NaN when xs is empty.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
