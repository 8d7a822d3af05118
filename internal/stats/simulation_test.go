package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The simulation checks the test the way a user meets it: Bernoulli
// streams at a true pass rate, each run until the test decides or the
// limit is reached, counted by verdict. No network and no runner: the
// runner feeds the same Decide with the runs in the order they started.

// grid is the true pass rates every design is simulated at.
var grid = []float64{0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0}

// designs are the settings simulated: the recommended one and a cheaper,
// looser one.
var designs = []Design{
	{PassRate: 0.9, Margin: 0.1, Confidence: 0.95},
	{PassRate: 0.8, Margin: 0.1, Confidence: 0.95},
}

// outcome is what a batch of simulated streams showed.
type outcome struct {
	streams                  int
	pass, fail, inconclusive int
	runs                     []int // runs used by each stream, sorted
}

func (o outcome) share(n int) float64 { return float64(n) / float64(o.streams) }

func (o outcome) mean() float64 {
	sum := 0
	for _, r := range o.runs {
		sum += r
	}
	return float64(sum) / float64(len(o.runs))
}

// p95 is the 95th percentile of the runs used.
func (o outcome) p95() int { return o.runs[(len(o.runs)*95+99)/100-1] }

// simulate runs streams of the design at rate with the given limit.
func simulate(d Design, rate float64, limit, streams int, rng *rand.Rand) outcome {
	o := outcome{streams: streams, runs: make([]int, 0, streams)}
	// The test Decide builds at each call (its rates read as written),
	// built once for the millions of decisions of a simulation.
	test := d.test()
	for range streams {
		s, f := 0, 0
		dec := Continue
		for dec == Continue && s+f < limit {
			if rng.Float64() < rate {
				s++
			} else {
				f++
			}
			dec = test.decide(s, f)
		}
		switch dec {
		case Pass:
			o.pass++
		case Fail:
			o.fail++
		default:
			o.inconclusive++
		}
		o.runs = append(o.runs, s+f)
	}
	slices.Sort(o.runs)
	return o
}

// streamCount is how many streams each rate gets: thousands, fewer under
// -short and the race detector (where the same code runs ten times
// slower and proves nothing more).
func streamCount() int {
	if testing.Short() || raceEnabled {
		return 3000
	}
	return 10000
}

// TestSimulatedErrorRates measures both error rates against their bounds:
// at a true rate at or above PassRate the test must pass, at or below
// Low() it must fail, each with probability at least Confidence, with
// the limit at Needed. The measured shares must also agree with the
// exact computation, which proves the dynamic programme and Decide agree.
func TestSimulatedErrorRates(t *testing.T) {
	t.Parallel()
	streams := streamCount()
	for di, d := range designs {
		limit := d.Needed()
		t.Run(fmt.Sprintf("%g-%g-%g", d.PassRate, d.Margin, d.Confidence), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(13, uint64(di)))
			worstMiss, worstWrongPass := 0.0, 0.0
			for _, rate := range grid {
				o := simulate(d, rate, limit, streams, rng)
				exact := d.Operating(rate, limit)
				// Four standard errors: a seeded run fails only on a real
				// disagreement, not on noise.
				tol := func(p float64) float64 { return 4*math.Sqrt(p*(1-p)/float64(streams)) + 1e-3 }
				if got := o.share(o.pass); math.Abs(got-exact.Pass) > tol(exact.Pass) {
					t.Errorf("rate %v: passed %.4f of streams, exact %.4f", rate, got, exact.Pass)
				}
				if got := o.share(o.fail); math.Abs(got-exact.Fail) > tol(exact.Fail) {
					t.Errorf("rate %v: failed %.4f of streams, exact %.4f", rate, got, exact.Fail)
				}
				switch {
				case rate >= d.PassRate-1e-12:
					miss := 1 - o.share(o.pass)
					worstMiss = math.Max(worstMiss, miss)
					if exact.Pass < d.Confidence {
						t.Errorf("rate %v ≥ pass rate: passes with probability %.4f, want ≥ %v", rate, exact.Pass, d.Confidence)
					}
					if miss > 1-d.Confidence+tol(1-d.Confidence) {
						t.Errorf("rate %v ≥ pass rate: %.4f of streams did not pass, bound %.2f", rate, miss, 1-d.Confidence)
					}
				case rate <= d.Low()+1e-12:
					wrong := 1 - o.share(o.fail)
					worstWrongPass = math.Max(worstWrongPass, wrong)
					if exact.Fail < d.Confidence {
						t.Errorf("rate %v ≤ pass rate − margin: fails with probability %.4f, want ≥ %v", rate, exact.Fail, d.Confidence)
					}
					if wrong > 1-d.Confidence+tol(1-d.Confidence) {
						t.Errorf("rate %v ≤ pass rate − margin: %.4f of streams did not fail, bound %.2f", rate, wrong, 1-d.Confidence)
					}
				}
				t.Logf("rate %.2f: pass %.4f fail %.4f inconclusive %.4f; runs mean %.1f p95 %d (exact mean %.1f p95 %d)",
					rate, o.share(o.pass), o.share(o.fail), o.share(o.inconclusive), o.mean(), o.p95(), exact.MeanRuns, exact.P95)
			}
			t.Logf("limit %d, %d streams per rate: worst share not passing at ≥ %.2f: %.4f; not failing at ≤ %.2f: %.4f (bound %.2f each)",
				limit, streams, d.PassRate, worstMiss, d.Low(), worstWrongPass, 1-d.Confidence)
		})
	}
}

// TestSimulatedSmallLimit shows what a limit below Needed costs: at 40
// runs a scenario at exactly 0.9 passes only about a quarter of the time
// and ends inconclusive (a gate failure) otherwise, while one at 0.8 is
// still failed within the bound. The figures lint quotes come from the
// same computation.
func TestSimulatedSmallLimit(t *testing.T) {
	t.Parallel()
	d := designs[0]
	rng := rand.New(rand.NewPCG(13, 99))
	streams := streamCount()
	hi := simulate(d, d.PassRate, 40, streams, rng)
	exact := d.Operating(d.PassRate, 40)
	if got := hi.share(hi.inconclusive); got < 0.6 || math.Abs(got-exact.Inconclusive) > 0.05 {
		t.Errorf("limit 40 at rate 0.9: inconclusive %.4f, exact %.4f", got, exact.Inconclusive)
	}
	lo := simulate(d, d.Low(), 40, streams, rng)
	if got := lo.share(lo.pass); got > 1-d.Confidence {
		t.Errorf("limit 40 at rate 0.8: passed %.4f, more than the bound %.2f", got, 1-d.Confidence)
	}
	t.Logf("limit 40: at 0.9 pass %.4f inconclusive %.4f; at 0.8 fail %.4f inconclusive %.4f",
		hi.share(hi.pass), hi.share(hi.inconclusive), lo.share(lo.fail), lo.share(lo.inconclusive))
}

// BenchmarkSequentialRuns simulates b.N streams per design and rate at
// the limit Needed and reports the runs they used against the fixed-size
// design with the same guarantee (BENCHMARKS.md):
//
//	go test ./internal/stats -run '^$' -bench SequentialRuns -benchtime 20000x
func BenchmarkSequentialRuns(b *testing.B) {
	for _, d := range designs {
		limit := d.Needed()
		fixed, _ := d.FixedRuns()
		for _, rate := range grid {
			b.Run(fmt.Sprintf("%g-%g-%g/rate=%g", d.PassRate, d.Margin, d.Confidence, rate), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(13, math.Float64bits(rate)))
				o := simulate(d, rate, limit, b.N, rng)
				b.ReportMetric(o.mean(), "mean-runs")
				b.ReportMetric(float64(o.p95()), "p95-runs")
				b.ReportMetric(float64(fixed), "fixed-runs")
				b.ReportMetric(o.mean()/float64(fixed)*100, "%-of-fixed")
				b.ReportMetric(o.share(o.pass)*100, "%-pass")
				b.ReportMetric(o.share(o.fail)*100, "%-fail")
			})
		}
	}
}
