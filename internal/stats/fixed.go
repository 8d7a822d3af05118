package stats

// Reaches reports whether passed of runs reach rate: the fixed rule of a
// scenario with `repeat:` and `pass_rate:` and no confidence. It
// tolerates the rounding of a rate written in decimal (0.7 of 10 runs is
// 7 passes, not 8). The runner decides by it and the report's verdict
// line words the share by it, so the two cannot disagree.
func Reaches(passed, runs int, rate float64) bool {
	return float64(passed) >= rate*float64(runs)-1e-9
}
