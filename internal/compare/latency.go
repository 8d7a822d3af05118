package compare

import (
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
)

// Latency. A turn's latency is what the client measured from sending the
// request to reading the reply (result.Turn.Latency), the greeting
// included: users wait for it too.
//
// One conversation per side is too few turns for a test within a
// scenario, so a scenario is slower or faster by thresholds alone: its
// median moved by at least Options.MinShiftMS and by at least
// Options.MinRatio of the baseline's median. The two thresholds together
// keep noise out: a fast agent's jitter is a large ratio of little, a slow
// agent's a small ratio of much.
//
// Across scenarios the shifts are paired (the same scenario on both
// sides), and Wilcoxon's signed-rank test asks whether they lean one way
// more than chance allows. The overall verdict needs both: the test
// significant at Options.Alpha and the median shift past the thresholds.
// With fewer than 6 scenarios no outcome reaches p < 0.05 (the smallest
// two-sided p of 5 is 2/32), and the overall verdict stays unchanged.

// turnLatencies are the latencies of the turns that got a reply, in
// milliseconds: of the last attempt, or of every counted run of a
// statistical scenario.
func turnLatencies(c *result.Case) []float64 {
	var attempts []*result.Attempt
	if statistical(c) {
		for _, a := range c.Attempts {
			if a != nil && (a.Status == result.Passed || a.Status == result.Failed) {
				attempts = append(attempts, a)
			}
		}
	} else if a := compared(c); a != nil {
		attempts = append(attempts, a)
	}
	var out []float64
	for _, a := range attempts {
		for _, t := range a.Turns {
			if t != nil && t.Result != nil {
				out = append(out, ms(t.Latency))
			}
		}
	}
	return out
}

// scenarioLatency sets a pair's latency, none when a side has no turn
// with a reply.
func (p *Pair) scenarioLatency(bc, cc *result.Case, o Options) {
	b, c := turnLatencies(bc), turnLatencies(cc)
	if len(b) == 0 || len(c) == 0 {
		return
	}
	p.turns = [2][]float64{b, c}
	l := &ScenarioLatency{
		BaselineTurns: len(b), CandidateTurns: len(c),
		BaselineMedian: stats.Quantile(b, 0.5), CandidateMedian: stats.Quantile(c, 0.5),
		BaselineP95: stats.Quantile(b, 0.95), CandidateP95: stats.Quantile(c, 0.95),
	}
	l.MedianShift = l.CandidateMedian - l.BaselineMedian
	l.P95Shift = l.CandidateP95 - l.BaselineP95
	l.Verdict = shiftVerdict(l.MedianShift, l.BaselineMedian, o)
	p.Latency = l
}

// shiftVerdict says whether a shift of a median passes both thresholds.
func shiftVerdict(shift, base float64, o Options) string {
	mag := shift
	if mag < 0 {
		mag = -mag
	}
	if mag < o.MinShiftMS || mag < o.MinRatio*base {
		return string(Unchanged)
	}
	if shift > 0 {
		return string(Slower)
	}
	return string(Faster)
}

// latencyClass is the class of a pair whose verdict and behaviour did not
// change.
func latencyClass(l *ScenarioLatency) Class {
	if l == nil {
		return Unchanged
	}
	return Class(l.Verdict)
}

// overallLatency weighs the pairs compared on both sides together.
func overallLatency(pairs []*Pair, o Options) Latency {
	out := Latency{Verdict: string(Unchanged), Test: SignedRankTest{Name: "wilcoxon-signed-rank", P: 1, Exact: true}}
	var shifts, baseMedians, base, cand []float64
	for _, p := range pairs {
		if p.Latency == nil {
			continue
		}
		base = append(base, p.turns[0]...)
		cand = append(cand, p.turns[1]...)
		shifts = append(shifts, p.Latency.MedianShift)
		baseMedians = append(baseMedians, p.Latency.BaselineMedian)
	}
	out.Scenarios = len(shifts)
	if out.Scenarios == 0 {
		return out
	}
	out.BaselineMedian, out.CandidateMedian = stats.Quantile(base, 0.5), stats.Quantile(cand, 0.5)
	out.BaselineP95, out.CandidateP95 = stats.Quantile(base, 0.95), stats.Quantile(cand, 0.95)
	out.MedianShift = stats.Quantile(shifts, 0.5)
	sr := stats.WilcoxonSignedRank(shifts)
	out.Test = SignedRankTest{Name: "wilcoxon-signed-rank", N: sr.N, W: sr.W, P: sr.P, Exact: sr.Exact}
	if sr.P < o.Alpha {
		out.Verdict = shiftVerdict(out.MedianShift, stats.Quantile(baseMedians, 0.5), o)
	}
	return out
}
