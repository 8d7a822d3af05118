package stats

import (
	"math"
	"math/big"
	"testing"
)

// exactTails are P(X ≥ k) and P(X ≤ k) for k = 0..n, X ~ Binomial(n, q)
// with q read as its shortest decimal: the terms summed in rationals and
// each tail rounded once, the definition atLeast and atMost shortcut.
func exactTails(n int, q float64) (geq, leq []float64) {
	qr := decimal(q)
	pr := new(big.Rat).Sub(big.NewRat(1, 1), qr)
	pow := func(r *big.Rat, e int) *big.Rat {
		x := big.NewInt(int64(e))
		return new(big.Rat).SetFrac(new(big.Int).Exp(r.Num(), x, nil), new(big.Int).Exp(r.Denom(), x, nil))
	}
	terms := make([]*big.Rat, n+1)
	for x := range terms {
		terms[x] = new(big.Rat).SetInt(new(big.Int).Binomial(int64(n), int64(x)))
		terms[x].Mul(terms[x], pow(qr, x))
		terms[x].Mul(terms[x], pow(pr, n-x))
	}
	geq, leq = make([]float64, n+1), make([]float64, n+1)
	sum := new(big.Rat)
	for x := n; x >= 0; x-- {
		sum.Add(sum, terms[x])
		geq[x], _ = sum.Float64()
	}
	sum = new(big.Rat)
	for x := 0; x <= n; x++ {
		sum.Add(sum, terms[x])
		leq[x], _ = sum.Float64()
	}
	return geq, leq
}

// TestBinomialTails checks the tail sums against the exact sums at every
// k from below 0 to above n, on both sides of the mode: the bounds of
// Binomial only ever ask for the tail on the far side of the estimate,
// so the complement each takes on the mode's other side (P(X ≥ k) =
// 1 − P(X ≤ k−1)) is pinned here, off by one nowhere. A tail that is
// certain (k ≤ 0 for atLeast, k ≥ n for atMost) is exactly 1.
func TestBinomialTails(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 10, 40, 120} {
		for _, q := range []float64{0.01, 0.05, 0.3, 0.5, 0.9, 0.99} {
			geq, leq := exactTails(n, q)
			for k := -1; k <= n+1; k++ {
				wantGeq, wantLeq := 1.0, 0.0 // k below 0
				switch {
				case k > n:
					wantGeq, wantLeq = 0, 1
				case k >= 0:
					wantGeq, wantLeq = geq[k], leq[k]
				}
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"atLeast", atLeast(n, k, q), wantGeq}, {"atMost", atMost(n, k, q), wantLeq}} {
					// Relative to the tail, or to its complement when that
					// is the smaller (Lgamma's error grows with n): a term
					// too many or too few is a relative error of the order
					// of the ratio of neighbouring terms.
					tol := 1e-11 * math.Min(c.want, 1-c.want)
					if c.got != c.want && math.Abs(c.got-c.want) > tol {
						t.Errorf("%s(%d, %d, %v) = %.17g, want %.17g", c.name, n, k, q, c.got, c.want)
					}
				}
			}
		}
	}
}
