package stats

// Reaches reports whether passed of runs reach rate: the fixed rule of a
// scenario with `repeat:` and `pass_rate:` and no confidence. It
// tolerates the rounding of a rate written in decimal (0.7 of 10 runs is
// 7 passes, not 8), by a billionth of the passes the rate asks for: a
// tolerance of a fixed size let a rate above 0 whose share of the runs is
// below it (pass_rate: 1e-10) pass with no run passing. The runner
// decides by it and the report's verdict line words the share by it, so
// the two cannot disagree.
func Reaches(passed, runs int, rate float64) bool {
	need := rate * float64(runs)
	return float64(passed) >= need-need*1e-9
}
