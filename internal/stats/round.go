package stats

import "math"

// RoundDown and RoundUp round a bound to places decimals away from the
// estimate it bounds (a lower bound down, an upper bound up), so that a
// printed interval is never narrower than the computed one. They forgive
// the rounding of binary floats (0.29 is 28.999999999999996 hundredths,
// 0.8 is 80.00000000000001): a bound a hair off a value of places decimals
// is that value, not the next one out. The run report and the history
// print intervals through them, so the two agree on every bound.
func RoundDown(v float64, places int) float64 {
	scale := math.Pow(10, float64(places))
	return math.Floor(v*scale+1e-9) / scale
}

// RoundUp is RoundDown's mirror for an upper bound.
func RoundUp(v float64, places int) float64 {
	scale := math.Pow(10, float64(places))
	up := math.Ceil(v*scale-1e-9) / scale
	if up == 0 {
		// The ceiling of the forgiven hair below 0 is -0, which prints
		// as -0.000.
		return 0
	}
	return up
}
