package stats

import (
	"math"
	"strings"
	"testing"
)

var standard = Design{PassRate: 0.9, Margin: 0.1, Confidence: 0.95}

func TestDecide(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name             string
		d                Design
		passes, failures int
		want             Decision
	}
	// For 0.9 against 0.8 at 95%, a pass moves log Λ by log(9/8) = 0.118
	// and a failure by log(1/2) = −0.693, between boundaries ±log 20 = ±3.0.
	cases := []testCase{
		{name: "no runs", d: standard, want: Continue},
		{name: "26 straight passes pass", d: standard, passes: 26, want: Pass},
		{name: "25 straight passes do not", d: standard, passes: 25, want: Continue},
		{name: "a failure costs about six passes", d: standard, passes: 32, failures: 1, want: Pass},
		{name: "one short after a failure", d: standard, passes: 31, failures: 1, want: Continue},
		{name: "5 straight failures fail", d: standard, failures: 5, want: Fail},
		{name: "4 straight failures do not", d: standard, failures: 4, want: Continue},
		{name: "half passing fails", d: standard, passes: 6, failures: 6, want: Fail},
		{name: "a perfect rate fails at the first failure", d: Design{PassRate: 1, Margin: 0.1, Confidence: 0.95}, passes: 20, failures: 1, want: Fail},
		{name: "a perfect rate passes after 29 passes", d: Design{PassRate: 1, Margin: 0.1, Confidence: 0.95}, passes: 29, want: Pass},
		// p1 = 1 meets 1/α exactly too: (1/0.5)² = 4 = 1/0.25.
		{name: "a perfect rate on an exact 1/α", d: Design{PassRate: 1, Margin: 0.5, Confidence: 0.75}, passes: 2, want: Pass},
		{name: "a perfect rate needs 29", d: Design{PassRate: 1, Margin: 0.1, Confidence: 0.95}, passes: 28, want: Continue},
		// Designs whose ratio meets 1/α exactly (2² = 1/0.25; 2⁴ = 1/0.0625):
		// the boundary passes, as the exact ratio says.
		{name: "a ratio of exactly 1/α passes", d: Design{PassRate: 0.8, Margin: 0.4, Confidence: 0.75}, passes: 2, want: Pass},
		{name: "one pass short of 1/α", d: Design{PassRate: 0.8, Margin: 0.4, Confidence: 0.75}, passes: 1, want: Continue},
		{name: "exactly 1/α after four passes", d: Design{PassRate: 0.5, Margin: 0.25, Confidence: 0.9375}, passes: 4, want: Pass},
		// Ratios that meet a boundary exactly though rounding puts them a
		// few ulps short: 2.5³ = 1/0.064, (0.75/0.45)² = 1/0.36, and on the
		// failing side 0.05/0.25 = 0.2 = α, (0.2)² = 0.04 = α.
		{name: "2.5³ is exactly 1/α", d: Design{PassRate: 0.5, Margin: 0.3, Confidence: 0.936}, passes: 3, want: Pass},
		{name: "(5/3)² is exactly 1/α", d: Design{PassRate: 0.75, Margin: 0.3, Confidence: 0.64}, passes: 2, want: Pass},
		{name: "one pass short of an exact 1/α", d: Design{PassRate: 0.75, Margin: 0.3, Confidence: 0.64}, passes: 1, want: Continue},
		{name: "a ratio of exactly α fails", d: Design{PassRate: 0.95, Margin: 0.2, Confidence: 0.8}, failures: 1, want: Fail},
		{name: "two failures make exactly α", d: Design{PassRate: 0.95, Margin: 0.2, Confidence: 0.96}, failures: 2, want: Fail},
		{name: "one failure short of an exact α", d: Design{PassRate: 0.95, Margin: 0.2, Confidence: 0.96}, failures: 1, want: Continue},
		// 1.5² · 0.25² = 0.140625 = α.
		{name: "an exact α after passes and failures", d: Design{PassRate: 0.9, Margin: 0.3, Confidence: 0.859375}, passes: 2, failures: 2, want: Fail},
		// 0.8 against 0.2: a pass is ×4 and a failure ×¼, so two more
		// passes than failures are exactly 1/α = 16 however many runs
		// there were. Rounding in log Λ grows with the runs (5e-12 at
		// 23,644 passes), past a window of a fixed 1e-12, where the test
		// went on at a boundary it had met.
		{name: "an exact 1/α after 47,286 runs", d: Design{PassRate: 0.8, Margin: 0.6, Confidence: 0.9375}, passes: 23644, failures: 23642, want: Pass},
		{name: "an exact α after 47,286 runs", d: Design{PassRate: 0.8, Margin: 0.6, Confidence: 0.9375}, passes: 23642, failures: 23644, want: Fail},
		// Rates near 0 or 1, or a tiny α, whose float differences (p1 −
		// margin, 1 − p1, 1 − confidence) are a relative 1e-10 off the
		// written ones, more than decide's window: Λ is still compared as
		// written (checked with Python fractions). 1e-6/1e-3 = 0.001 = α;
		// 10⁷ = 1/α; and two near-ties that are not ties.
		{name: "a pass rate of 0.999999 fails at an exact α", d: Design{PassRate: 0.999999, Margin: 0.000999, Confidence: 0.999}, failures: 1, want: Fail},
		{name: "an exact 1/α at 0.9999999", d: Design{PassRate: 0.5, Margin: 0.45, Confidence: 0.9999999}, passes: 7, want: Pass},
		{name: "one pass short of it", d: Design{PassRate: 0.5, Margin: 0.45, Confidence: 0.9999999}, passes: 6, want: Continue},
		{name: "Λ a relative 1e-10 below 1/α", d: Design{PassRate: 0.75, Margin: 0.7499999, Confidence: 0.9999994666667201}, passes: 1, failures: 1, want: Continue},
		{name: "Λ a relative 1e-10 above α", d: Design{PassRate: 0.9999999, Margin: 0.0399999, Confidence: 0.9999975000000001}, failures: 1, want: Continue},
		// Near-ties inside decide's window that are not ties, where
		// only the exact comparison tells the side: 0.6/0.2 = 3 against
		// 1/0.333333333333333 = 3.000000000000003, and 0.1/0.4 = 0.25
		// against α = 0.249999999999999 (15 digits: the floats' shortest
		// decimals are these).
		{name: "Λ a relative 1e-15 below 1/α", d: Design{PassRate: 0.6, Margin: 0.4, Confidence: 0.666666666666667}, passes: 1, want: Continue},
		{name: "Λ a relative 4e-15 above α", d: Design{PassRate: 0.9, Margin: 0.3, Confidence: 0.750000000000001}, failures: 1, want: Continue},
		{name: "Λ exactly α at 0.9999999", d: Design{PassRate: 0.9999999, Margin: 0.0399999, Confidence: 0.9999975}, failures: 1, want: Fail},
	}
	run := func(t *testing.T, tc testCase) {
		if got := tc.d.Decide(tc.passes, tc.failures); got != tc.want {
			t.Errorf("Decide(%d, %d) = %s, want %s", tc.passes, tc.failures, got, tc.want)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestBoundsExplainDecision checks the promise reports rely on: the test
// passes exactly when the lower bound reaches p0, and fails exactly when
// the upper bound falls to p1.
// TestDecisionString: the names the reports print, and a value outside
// them printed as a number instead of panicking.
func TestDecisionString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    Decision
		want string
	}{
		{Continue, "continue"},
		{Pass, "pass"},
		{Fail, "fail"},
		{Decision(3), "Decision(3)"},
		{Decision(-1), "Decision(-1)"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("Decision(%d).String() = %q, want %q", int(tc.d), got, tc.want)
		}
	}
}

func TestBoundsExplainDecision(t *testing.T) {
	t.Parallel()
	// The last three have ratios exactly on a boundary (TestDecide).
	for _, d := range []Design{standard, {0.8, 0.2, 0.9}, {1, 0.05, 0.99}, {0.6, 0.3, 0.8}, {0.95, 0.2, 0.96}, {0.5, 0.3, 0.936}, {0.75, 0.3, 0.64}} {
		decide := d.Decider()
		for s := 0; s <= 80; s++ {
			for f := 0; f <= 20; f++ {
				lo, hi := d.Lower(s, f), d.Upper(s, f)
				if lo < 0 || hi > 1 || lo > hi {
					t.Fatalf("%v after %d/%d: bounds [%v, %v]", d, s, f, lo, hi)
				}
				if n := s + f; n > 0 {
					share := float64(s) / float64(n)
					if lo > share || hi < share {
						t.Errorf("%v after %d/%d: bounds [%v, %v] exclude the observed share %v", d, s, f, lo, hi, share)
					}
				}
				dec := decide(s, f)
				if pass := lo >= d.Low()-1e-9; (dec == Pass) != pass {
					t.Errorf("%v after %d passes, %d failures: %s, but lower bound %v against p0 %v", d, s, f, dec, lo, d.Low())
				}
				if fail := f > 0 && hi <= d.PassRate+1e-9; (dec == Fail) != fail && !(dec == Pass && fail) {
					t.Errorf("%v after %d passes, %d failures: %s, but upper bound %v against p1 %v", d, s, f, dec, hi, d.PassRate)
				}
			}
		}
	}
}

// TestNeeded checks the cap rule exactly: at Needed runs both guarantees
// hold, one run fewer one of them does not.
func TestNeeded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    Design
		want int
	}{
		{standard, 282},
		{Design{0.8, 0.1, 0.95}, 417},
		{Design{1, 0.1, 0.95}, 29},
	} {
		n := tc.d.Needed()
		if n != tc.want {
			t.Errorf("%v: Needed() = %d, want %d", tc.d, n, tc.want)
		}
		hi, lo := tc.d.Operating(tc.d.PassRate, n), tc.d.Operating(tc.d.Low(), n)
		if hi.Pass < tc.d.Confidence || lo.Fail < tc.d.Confidence {
			t.Errorf("%v at %d runs: passes %.4f at p1, fails %.4f at p0; want both ≥ %v", tc.d, n, hi.Pass, lo.Fail, tc.d.Confidence)
		}
		hi, lo = tc.d.Operating(tc.d.PassRate, n-1), tc.d.Operating(tc.d.Low(), n-1)
		if hi.Pass >= tc.d.Confidence && lo.Fail >= tc.d.Confidence {
			t.Errorf("%v: the guarantee holds at %d runs already", tc.d, n-1)
		}
	}
}

// TestNeededBeyondMaxRuns pins what Needed says when no limit gives the
// guarantee: MaxRuns+1, which the loader and the runner read as "more
// than MaxRuns" (a limit of MaxRuns-1 would read as a design that fits).
// The design of a margin of 0.005 at 99% needs more than MaxRuns runs;
// walking them takes under a second, so it is skipped only under -race.
func TestNeededBeyondMaxRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		d    Design
		slow bool
	}{
		{name: "invalid design", d: Design{0.9, 0.9, 0.95}},
		{name: "too fine a margin", d: Design{0.9, 0.005, 0.99}, slow: true},
	} {
		if tc.slow && raceEnabled {
			continue
		}
		if n := tc.d.Needed(); n != MaxRuns+1 {
			t.Errorf("%s %v: Needed() = %d, want MaxRuns+1 = %d", tc.name, tc.d, n, MaxRuns+1)
		}
	}
	// FewestToPass says the same of a design no run of straight passes
	// within MaxRuns can pass: log 100 / log(0.99/0.9899999) ≈ 4.6e7 runs.
	if n := (Design{0.99, 1e-7, 0.99}).FewestToPass(); n != MaxRuns+1 {
		t.Errorf("FewestToPass() = %d, want MaxRuns+1 = %d", n, MaxRuns+1)
	}
}

// TestCostsTable checks the figures of docs/writing-scenarios.md ("What it
// costs") against reference values computed independently, by exact
// rational arithmetic over (runs, passes) with the decisions taken on the
// exact likelihood ratio: the limit, the mean and 95th percentile of the
// runs at pass_rate and at pass_rate − margin, the mean at 0.5, the runs
// when every run passes, and the fixed design.
func TestCostsTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d                 Design
		needed            int
		meanHi            float64
		p95Hi             int
		meanLo            float64
		p95Lo             int
		meanHalf          float64
		allPass, fixedRun int
	}{
		{Design{0.9, 0.1, 0.95}, 282, 76.663, 177, 66.863, 166, 11.630, 26, 135},
		{Design{0.9, 0.1, 0.9}, 170, 54.422, 130, 47.834, 123, 9.203, 20, 86},
		{Design{0.9, 0.1, 0.99}, 552, 124.955, 267, 107.616, 249, 17.173, 40, 272},
		{Design{0.8, 0.1, 0.95}, 417, 108.387, 257, 101.415, 251, 23.426, 23, 204},
		{Design{0.8, 0.2, 0.95}, 105, 31.503, 72, 28.536, 70, 16.103, 11, 60},
		{Design{0.95, 0.05, 0.95}, 646, 166.534, 374, 142.786, 358, 10.268, 56, 298},
		{Design{1, 0.1, 0.95}, 29, 29, 29, 9.529, 29, 2.000, 29, 29},
	} {
		d := tc.d
		n := d.Needed()
		hi, lo, half := d.Operating(d.PassRate, n), d.Operating(d.Low(), n), d.Operating(0.5, n)
		fixed, _ := d.FixedRuns()
		if n != tc.needed || !near(hi.MeanRuns, tc.meanHi, 5e-4) || hi.P95 != tc.p95Hi || !near(lo.MeanRuns, tc.meanLo, 5e-4) || lo.P95 != tc.p95Lo ||
			!near(half.MeanRuns, tc.meanHalf, 5e-4) || d.FewestToPass() != tc.allPass || fixed != tc.fixedRun {
			t.Errorf("%v: limit %d, at p1 %.3f / %d, at p0 %.3f / %d, at 0.5 %.3f, all passing %d, fixed %d; want %d, %.3f / %d, %.3f / %d, %.3f, %d, %d",
				d, n, hi.MeanRuns, hi.P95, lo.MeanRuns, lo.P95, half.MeanRuns, d.FewestToPass(), fixed,
				tc.needed, tc.meanHi, tc.p95Hi, tc.meanLo, tc.p95Lo, tc.meanHalf, tc.allPass, tc.fixedRun)
		}
	}
}

func TestOperatingSumsToOne(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{0, 0.3, 0.8, 0.85, 0.9, 1} {
		for _, limit := range []int{1, 10, 40, 282} {
			o := standard.Operating(rate, limit)
			if s := o.Pass + o.Fail + o.Inconclusive; math.Abs(s-1) > 1e-9 {
				t.Errorf("rate %v, limit %d: probabilities sum to %v", rate, limit, s)
			}
			if o.MeanRuns < 1 || o.MeanRuns > float64(limit) || o.P95 < 1 || o.P95 > limit {
				t.Errorf("rate %v, limit %d: mean %v, p95 %d", rate, limit, o.MeanRuns, o.P95)
			}
		}
	}
	// A limit below the fewest runs that can pass leaves a perfect agent
	// undecided every time.
	if o := standard.Operating(1, 24); o.Inconclusive != 1 {
		t.Errorf("24 runs of a perfect agent: %+v, want always inconclusive", o)
	}
}

// TestOperatingOnBoundary: where Λ meets α exactly, the exact walk must
// count the verdict Decide gives. At 95% against 50%, 99% confidence, two
// failures make Λ = (0.05/0.5)² = 0.01 = α: a fail, which the crossing of
// the boundaries computed in floats puts one pass count short of, so the
// walk must correct it (without, the 0.25 of two failures at rate 0.5 was
// counted inconclusive).
func TestOperatingOnBoundary(t *testing.T) {
	t.Parallel()
	d := Design{0.95, 0.45, 0.99}
	if got := d.Decide(0, 2); got != Fail {
		t.Fatalf("%v: Decide(0, 2) = %v, want fail", d, got)
	}
	o := d.Operating(0.5, 2)
	if !near(o.Fail, 0.25, 1e-12) || o.Pass != 0 || !near(o.Inconclusive, 0.75, 1e-12) {
		t.Errorf("%v at rate 0.5, limit 2: %+v, want fail 0.25, pass 0, inconclusive 0.75", d, o)
	}
}

func TestFixedRuns(t *testing.T) {
	t.Parallel()
	n, c := standard.FixedRuns()
	if n != 135 || c != 116 {
		t.Errorf("FixedRuns() = %d, %d; want 135 runs, 116 passes", n, c)
	}
}

func TestBinomial(t *testing.T) {
	t.Parallel()
	// Clopper–Pearson 90% two-sided, i.e. 95% one-sided each, from the
	// published tables.
	for _, tc := range []struct {
		s, n   int
		lo, hi float64
	}{
		{8, 10, 0.4931, 0.9632},
		{0, 10, 0, 0.2589},
		{10, 10, 0.7411, 1},
		// One pass: the lower bound is 1 − 0.95^(1/10), above 0.
		{1, 10, 0.0051, 0.3942},
		{27, 28, 0.8415, 0.9982},
	} {
		lo, hi := Binomial(tc.s, tc.n, 0.95)
		if math.Abs(lo-tc.lo) > 5e-5 || math.Abs(hi-tc.hi) > 5e-5 {
			t.Errorf("Binomial(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.s, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    Design
		want string
	}{
		{standard, ""},
		{Design{1, 0.1, 0.95}, ""},
		{Design{0, 0.1, 0.95}, "pass rate must be above 0"},
		{Design{0.9, 0.9, 0.95}, "margin must be above 0 and below the pass rate 0.9"},
		{Design{0.9, 0, 0.95}, "margin must be above 0"},
		{Design{0.9, 0.1, 1}, "confidence must be above 0.5 and below 1"},
		{Design{0.9, 0.1, 0.5}, "confidence must be above 0.5"},
	} {
		err := tc.d.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.d, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q", tc.d, err, tc.want)
		}
	}
}

// TestCuts checks the walker's shortcut against the rule itself: after n
// runs the pass counts from passFrom on pass, those up to failTo fail,
// and the rest go on, as decide says of each.
func TestCuts(t *testing.T) {
	t.Parallel()
	for _, d := range []Design{standard, {0.8, 0.2, 0.9}, {1, 0.1, 0.95}, {1, 0.05, 0.99}, {0.6, 0.3, 0.8},
		{0.95, 0.2, 0.96}, {0.5, 0.3, 0.936}, {0.75, 0.3, 0.64}, {0.9, 0.001, 0.95}, {0.51, 0.5, 0.51},
		{0.999999, 0.000999, 0.999}, {0.5, 0.45, 0.9999999}, {0.6, 0.4, 0.666666666666667}, {0.9, 0.3, 0.750000000000001},
		// Boundaries met exactly at every other run count (×4 a pass, ×¼
		// a failure), where rounding puts the crossing a hair to either
		// side of a whole pass count.
		{0.8, 0.6, 0.75}, {0.8, 0.6, 0.9375}} {
		tt := d.test()
		for n := 0; n <= 400; n++ {
			passFrom, failTo := tt.cuts(n)
			for s := 0; s <= n; s++ {
				want := Continue
				if s >= passFrom {
					want = Pass
				} else if s <= failTo {
					want = Fail
				}
				if got := tt.decide(s, n-s); got != want {
					t.Fatalf("%v after %d runs: cuts %d, %d say %s for %d passes; decide says %s", d, n, passFrom, failTo, want, s, got)
				}
			}
		}
	}
}

// TestBinomialLargeN checks the bounds of many pooled runs (`history`
// over a year of nightly reports) against reference values computed
// independently (mpmath, 30 digits, from the defining tail equations),
// and (TestBinomialSumsWhatMatters) that a bisection step sums the terms
// that matter rather than building all n+1 probabilities: it allocates
// nothing, where it took 0.8 s at 100,000 runs.
func TestBinomialLargeN(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s, n       int
		confidence float64
		lo, hi     float64
	}{
		{95000, 100000, 0.95, 0.948851678053, 0.951128981627},
		{95000, 100000, 0.99, 0.948373833940, 0.951590543974},
		{500, 1000, 0.95, 0.473517731235691, 0.526482268764309},
		{0, 1000, 0.95, 0, 0.0029912495450953},
		{1000, 1000, 0.99, 0.995405417351527, 1},
	} {
		lo, hi := Binomial(tc.s, tc.n, tc.confidence)
		if math.Abs(lo-tc.lo) > 1e-11 || math.Abs(hi-tc.hi) > 1e-11 {
			t.Errorf("Binomial(%d, %d, %v) = [%.15f, %.15f], want [%.15f, %.15f]", tc.s, tc.n, tc.confidence, lo, hi, tc.lo, tc.hi)
		}
	}
}

// TestBinomialSumsWhatMatters: not parallel, for AllocsPerRun.
func TestBinomialSumsWhatMatters(t *testing.T) {
	if a := testing.AllocsPerRun(3, func() { Binomial(90000, 100000, 0.975) }); a > 4 {
		t.Errorf("Binomial of 100,000 runs allocates %v times: it builds the whole distribution", a)
	}
}

// TestReaches: the fixed rule counts a share at the rate as reaching it,
// whatever the float arithmetic of a decimal rate gives (0.28 × 25 is
// 7.000000000000001, 0.56 × 50 is 28.000000000000004), and one pass
// short as not; a rate above 0, however small, is not reached by runs
// none of which passed.
func TestReaches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		passed, runs int
		rate         float64
		want         bool
	}{
		{7, 10, 0.7, true},
		{7, 25, 0.28, true},
		{28, 50, 0.56, true},
		{27, 50, 0.56, false},
		{6, 10, 0.7, false},
		{39, 49, 0.8, false},
		{40, 50, 0.8, true},
		{29, 100, 0.29, true},
		{0, 0, 0.8, true},
		{10, 10, 1, true},
		{9, 10, 1, false},
		{0, 3, 1e-10, false},
		{0, 3, 1e-300, false},
		{1, 3, 1e-300, true},
		{0, 1000, 0.0001, false},
		{1, 1000, 0.0001, true},
	} {
		if got := Reaches(tc.passed, tc.runs, tc.rate); got != tc.want {
			t.Errorf("Reaches(%d, %d, %v) = %v, want %v", tc.passed, tc.runs, tc.rate, got, tc.want)
		}
	}
}

func TestRoundOutward(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v        float64
		places   int
		down, up float64
	}{
		{0.123, 2, 0.12, 0.13},
		{0.29, 2, 0.29, 0.29}, // 28.999999999999996 hundredths
		{0.8, 2, 0.8, 0.8},    // 80.00000000000001 hundredths
		{0.07, 2, 0.07, 0.07}, // 7.000000000000001 hundredths
		{0.8951, 3, 0.895, 0.896},
		{0, 2, 0, 0},
		{1, 2, 1, 1},
		{0.999991, 6, 0.999991, 0.999991},
		{0.9999911, 6, 0.999991, 0.999992},
		// Half a thousandth of a step from the grid is a real value,
		// not a float's hair: rounded outward all the same.
		{0.129995, 2, 0.12, 0.13},
		{0.120005, 2, 0.12, 0.13},
	} {
		if got := RoundDown(tc.v, tc.places); got != tc.down {
			t.Errorf("RoundDown(%v, %d) = %v, want %v", tc.v, tc.places, got, tc.down)
		}
		// -0 == 0, but it prints as -0.000: compare the signs too.
		if got := RoundUp(tc.v, tc.places); got != tc.up || math.Signbit(got) != math.Signbit(tc.up) {
			t.Errorf("RoundUp(%v, %d) = %v, want %v", tc.v, tc.places, got, tc.up)
		}
	}
}

// TestWithinRuns: no test on n runs gives a design's guarantee unless the
// best fixed one (Neyman and Pearson's) does, so at every limit Needed
// finds, that test gives it, and one run short of it the sequential test
// does not while the check may still say yes (it only rules designs out).
// A design that asks for millions of runs is ruled out without walking
// MaxRuns of them.
func TestWithinRuns(t *testing.T) {
	t.Parallel()
	for _, d := range []Design{standard, {0.8, 0.1, 0.95}, {1, 0.1, 0.95}, {0.5, 0.2, 0.99}, {0.95, 0.05, 0.9}, {0.7, 0.3, 0.999}} {
		n := d.Needed()
		if n > MaxRuns {
			t.Fatalf("%v: Needed() = %d", d, n)
		}
		if !d.withinRuns(n) {
			t.Errorf("%v: the sequential test gives the guarantee in %d runs, and the best fixed test on %d does not", d, n, n)
		}
		if fixed, _ := d.FixedRuns(); fixed > 0 && !d.withinRuns(fixed) {
			t.Errorf("%v: \"at least c of %d runs\" gives the guarantee (FixedRuns), and withinRuns says no test does", d, fixed)
		}
	}
	for _, d := range []Design{{0.9, 0.001, 0.9999999999}, {0.5, 0.001, 0.999}} {
		if d.withinRuns(MaxRuns) {
			t.Errorf("%v: no test on %d runs gives its guarantee, and withinRuns says one may", d, MaxRuns)
		}
		if n := d.Needed(); n != MaxRuns+1 {
			t.Errorf("%v: Needed() = %d, want MaxRuns+1", d, n)
		}
	}
}
