package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// TestWilcoxonSignedRankKnown: the paired example of Hollander and Wolfe
// (R's ?wilcox.test, depression scale before and after): V = 40, two-sided
// p = 0.03906.
func TestWilcoxonSignedRankKnown(t *testing.T) {
	t.Parallel()
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	got := WilcoxonSignedRank(d)
	if got.N != 9 || got.W != 40 || !got.Exact || !near(got.P, 0.0390625, 1e-12) {
		t.Errorf("got %+v, want N 9, W 40, exact p 0.0390625", got)
	}
	// The test is symmetric: the other way round, the same p.
	for i := range d {
		d[i] = -d[i]
	}
	if back := WilcoxonSignedRank(d); back.W != 5 || back.P != got.P {
		t.Errorf("reversed: %+v", back)
	}
	for _, tc := range []struct {
		d    []float64
		want SignedRank
	}{
		{nil, SignedRank{P: 1, Exact: true}},
		{[]float64{0, 0, 0}, SignedRank{P: 1, Exact: true}},
		// One positive difference: W is 1 or 0 with equal chance.
		{[]float64{0, 3}, SignedRank{N: 1, W: 1, P: 1, Exact: true}},
		// All six positive: the most extreme of 64 sign patterns, twice.
		{[]float64{1, 2, 3, 4, 5, 6}, SignedRank{N: 6, W: 21, P: 2.0 / 64, Exact: true}},
	} {
		if got := WilcoxonSignedRank(tc.d); got != tc.want {
			t.Errorf("%v: %+v, want %+v", tc.d, got, tc.want)
		}
	}
}

// TestWilcoxonSignedRankTies pins the edges of the two methods: 50
// differences still take the exact distribution (all positive: 2/2⁵⁰),
// and above, the normal approximation's tie correction counts every
// group of ties, pairs included. 51 differences, magnitudes 1..25 twice
// (odd ones once each sign) and 26: W = 994.5, and the textbook formula
// (Hollander and Wolfe §3.1: variance n(n+1)(2n+1)/24 − Σ(t³−t)/48,
// continuity ½), computed apart in Python, gives p = 0.0019154144446773
// (0.0019181736 with the pairs left out of the correction).
func TestWilcoxonSignedRankTies(t *testing.T) {
	t.Parallel()
	d := make([]float64, 50)
	for i := range d {
		d[i] = float64(i + 1)
	}
	if got := WilcoxonSignedRank(d); got.N != 50 || got.W != 1275 || !got.Exact || got.P != 2/math.Pow(2, 50) {
		t.Errorf("50 positive differences: %+v, want exact p 2/2⁵⁰", got)
	}
	d = d[:0]
	for i := 1; i <= 25; i++ {
		if i%2 == 1 {
			d = append(d, float64(i), -float64(i))
		} else {
			d = append(d, float64(i), float64(i))
		}
	}
	d = append(d, 26)
	if got := WilcoxonSignedRank(d); got.N != 51 || got.W != 994.5 || got.Exact || !near(got.P, 0.0019154144446773018, 1e-12) {
		t.Errorf("51 differences with tied pairs: %+v, want W 994.5, approximate p 0.0019154144446773", got)
	}
}

// bruteSignedRank is the exact two-sided p-value by enumerating every
// sign pattern of the observed absolute differences: the definition the
// convolution must reproduce, ties included.
func bruteSignedRank(d []float64) float64 {
	var nz []float64
	for _, x := range d {
		if x != 0 {
			nz = append(nz, x)
		}
	}
	n := len(nz)
	if n == 0 {
		return 1
	}
	wOf := func(v []float64) float64 {
		w := 0.0
		for _, x := range v {
			if x <= 0 {
				continue
			}
			less, equal := 0, 0
			for _, y := range v {
				switch {
				case math.Abs(y) < math.Abs(x):
					less++
				case math.Abs(y) == math.Abs(x):
					equal++
				}
			}
			w += float64(less) + float64(equal+1)/2
		}
		return w
	}
	obs := wOf(nz)
	var lower, upper int
	v := make([]float64, n)
	for mask := 0; mask < 1<<n; mask++ {
		for i, x := range nz {
			v[i] = math.Abs(x)
			if mask&(1<<i) != 0 {
				v[i] = -v[i]
			}
		}
		w := wOf(v)
		if w <= obs+1e-9 {
			lower++
		}
		if w >= obs-1e-9 {
			upper++
		}
	}
	return math.Min(1, 2*float64(min(lower, upper))/float64(int(1)<<n))
}

// TestWilcoxonSignedRankExact checks the convolution against enumeration
// on random differences with ties and zeros.
func TestWilcoxonSignedRankExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + rng.IntN(12)
		d := make([]float64, n)
		for i := range d {
			d[i] = float64(rng.IntN(7) - 3) // ties and zeros on purpose
		}
		got, want := WilcoxonSignedRank(d).P, bruteSignedRank(d)
		if !near(got, want, 1e-12) {
			t.Fatalf("trial %d %v: p %g, want %g", trial, d, got, want)
		}
	}
}

// TestWilcoxonSignedRankApproximation checks the normal approximation
// against the exact distribution at every possible W, just above the
// exact range and beyond (no ties): within 0.0035 everywhere (0.0033 at
// 51 differences, 0.0017 at 100).
func TestWilcoxonSignedRankApproximation(t *testing.T) {
	t.Parallel()
	for _, n := range []int{maxExactRanks + 1, 60, 100} {
		rank2 := make([]int, n)
		for i := range rank2 {
			rank2[i] = 2 * (i + 1)
		}
		dist := signedRankDist(rank2)
		d := make([]float64, n)
		worst := 0.0
		for w := 0; w <= n*(n+1)/2; w++ {
			// Differences ±1..±n whose positive ranks sum to w.
			rest := w
			for r := n; r >= 1; r-- {
				d[r-1] = -float64(r)
				if rest >= r {
					d[r-1], rest = float64(r), rest-r
				}
			}
			approx := WilcoxonSignedRank(d)
			if approx.Exact || approx.W != float64(w) {
				t.Fatalf("n %d, w %d: %+v", n, w, approx)
			}
			exact := signedRankP(dist, 2*w)
			worst = math.Max(worst, math.Abs(approx.P-exact))
		}
		if worst > 0.0035 {
			t.Errorf("n %d: the approximation is up to %.5f from the exact p-value", n, worst)
		}
		t.Logf("n %d: approximation within %.5f of the exact p-value", n, worst)
	}
}

func TestFisherExact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, n, b, m int
		want       float64
	}{
		// Fisher's lady tasting tea: 3 of 4 against 1 of 4.
		{3, 4, 1, 4, 0.4857142857142857},
		{10, 10, 0, 10, 2.0 / 184756},
		{5, 10, 5, 10, 1},
		// R: fisher.test(matrix(c(48, 2, 40, 10), 2)) p = 0.02776.
		{48, 50, 40, 50, 0.027756},
		{0, 0, 3, 5, 1},
		// A table 0.9% more probable than the one observed is not "no
		// more probable": p = 0.0753 (exact fractions), 0.1297 if the
		// tolerance for equal probabilities reached 1%.
		{10, 12, 10, 20, 0.07527803804584769},
	} {
		got := FisherExact(tc.a, tc.n, tc.b, tc.m)
		if !near(got, tc.want, 1e-5) {
			t.Errorf("FisherExact(%d/%d, %d/%d) = %g, want %g", tc.a, tc.n, tc.b, tc.m, got, tc.want)
		}
		if sym := FisherExact(tc.b, tc.m, tc.a, tc.n); !near(sym, got, 1e-12) {
			t.Errorf("not symmetric: %g and %g", got, sym)
		}
	}
}

func TestQuantile(t *testing.T) {
	t.Parallel()
	xs := []float64{40, 10, 30, 20}
	for _, tc := range []struct{ q, want float64 }{{0, 10}, {0.5, 25}, {0.95, 38.5}, {1, 40}} {
		if got := Quantile(xs, tc.q); !near(got, tc.want, 1e-9) {
			t.Errorf("Quantile(%v) = %g, want %g", tc.q, got, tc.want)
		}
	}
	if xs[0] != 40 {
		t.Error("Quantile sorted its argument")
	}
	if !math.IsNaN(Quantile(nil, 0.5)) || Quantile([]float64{7}, 0.95) != 7 {
		t.Error("empty or single")
	}
}
