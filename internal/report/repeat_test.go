package report

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
	"github.com/jstemmer/go-junit-report/v2/junit"
)

func TestQuarantineNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		q    *result.Quarantine
		want string
	}{
		{"none", nil, ""},
		{"reason and owner", &result.Quarantine{Reason: "Welsh replies are being rewritten", Owner: "@clinic-team", Until: "2026-12-31"},
			"quarantined until 2026-12-31, @clinic-team: Welsh replies are being rewritten; does not gate"},
		{"a sentence keeps one stop", &result.Quarantine{Reason: "The results lookup times out now and then.", Until: "2026-12-31"},
			"quarantined until 2026-12-31: The results lookup times out now and then; does not gate"},
		{"lapsed", &result.Quarantine{Reason: "moved.", Until: "2026-03-01", Lapsed: true},
			"quarantine lapsed after 2026-03-01: gates again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := quarantineNote(&result.Case{Quarantine: tc.q}); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRepeatLine checks the numbers of a repeated case's verdict line:
// a share is never printed so that it reads as the other verdict, the
// bounds are the design's own (computed here by package stats), and a
// limit the guarantee cannot reach within stats.MaxRuns is said so, not
// given as a count.
func TestRepeatLine(t *testing.T) {
	t.Parallel()
	d := stats.Design{PassRate: 0.9, Margin: 0.1, Confidence: 0.95}
	seq := func(passed, failed, limit, needed int, decision string) *result.Repeat {
		return &result.Repeat{Procedure: result.ProcedureSPRT, Decision: decision, Runs: passed + failed, Passed: passed, Failed: failed,
			Limit: limit, Needed: needed, PassRate: d.PassRate, Margin: d.Margin, Confidence: d.Confidence, Level: d.Confidence,
			Lower: d.Lower(passed, failed), Upper: d.Upper(passed, failed)}
	}
	passedAt := func(d stats.Design, passed, failed int) *result.Repeat {
		if got := d.Decide(passed, failed); got != stats.Pass {
			t.Fatalf("%v after %d passes, %d failures: %s, not pass", d, passed, failed, got)
		}
		return &result.Repeat{Procedure: result.ProcedureSPRT, Decision: result.DecisionPassed, Runs: passed + failed, Passed: passed, Failed: failed,
			Limit: 1000, Needed: 1000, PassRate: d.PassRate, Margin: d.Margin, Confidence: d.Confidence, Level: d.Confidence,
			Lower: d.Lower(passed, failed), Upper: d.Upper(passed, failed)}
	}
	fixed := func(passed, failed int, rate float64, decision string) *result.Repeat {
		return &result.Repeat{Procedure: result.ProcedureFixed, Decision: decision, Runs: passed + failed, Passed: passed, Failed: failed,
			Limit: passed + failed, PassRate: rate, Level: 0.95}
	}
	for _, tc := range []struct {
		name string
		r    *result.Repeat
		want string
	}{
		// An internal error before the first run (runner.internalError)
		// leaves no run: a share of none is 0%, not 0.0000% (nor NaN%).
		{"fixed, no run made", fixed(0, 0, 0.8, ""), "0 of 0 runs passed (0%), 80% required"},
		{"fixed, short of the rate", fixed(2, 1, 0.8, result.DecisionFailed), "2 of 3 runs passed (67%), 80% required"},
		{"fixed, exactly the rate", fixed(3, 1, 0.75, result.DecisionPassed), "3 of 4 runs passed (75%), 75% required"},
		{"fixed, a decimal rate met exactly", fixed(7, 3, 0.7, result.DecisionPassed), "7 of 10 runs passed (70%), 70% required"},
		// 79.59% rounds to 80%, which would read as enough for a failure.
		{"fixed, just short of the rate", fixed(39, 10, 0.8, result.DecisionFailed), "39 of 49 runs passed (79.6%), 80% required"},
		{"fixed, just past the rate", fixed(49, 12, 0.8, result.DecisionPassed), "49 of 61 runs passed (80%), 80% required"},
		// The rate as written, not rounded: 79.5% was "80% required".
		{"fixed, a rate with a decimal percent", fixed(35, 9, 0.795, result.DecisionPassed), "35 of 44 runs passed (80%), 79.5% required"},
		{"fixed, short by a hundredth of a percent", fixed(7999, 2001, 0.8, result.DecisionFailed), "7999 of 10000 runs passed (79.99%), 80% required"},
		{"fixed, a rate with a decimal percent, short by little", fixed(159, 41, 0.7975, result.DecisionFailed), "159 of 200 runs passed (79.5%), 79.75% required"},
		// The rate as written, every digit of it: 0.666661 was "66.67%
		// required" at four digits, and 0.66666667 met by 2 of 3 runs
		// was a share "66.6667%" not below the rate it failed to reach.
		{"fixed, a rate of six digits", fixed(2, 1, 0.666661, result.DecisionPassed), "2 of 3 runs passed (67%), 66.6661% required"},
		{"fixed, short of a rate of eight digits", fixed(2, 1, 0.66666667, result.DecisionFailed), "2 of 3 runs passed (66.6666667%), 66.666667% required"},
		// Errored runs are said beside the counts.
		{"fixed, an errored run", func() *result.Repeat {
			r := fixed(3, 1, 0.8, result.DecisionFailed)
			r.Runs, r.Errored = 5, 1
			return r
		}(), "3 of 5 runs passed (60%), 80% required, 1 errored"},
		{"sequential, errored", func() *result.Repeat {
			r := seq(2, 1, 282, 282, result.DecisionErrored)
			r.Runs, r.Errored = 5, 2
			return r
		}(), "errored: 2 of 5 runs errored, more than a third; passed 2 of the 3 others"},
		// A repeat with no decision yet says its counts so far.
		{"sequential, undecided", seq(3, 1, 282, 282, ""), "passed 3 of 4 runs so far"},
		{"passed", seq(26, 0, 282, 282, result.DecisionPassed), "passed 26 of 26 runs; rate ≥ 0.80 at 95% (needs 0.9 − 0.1)"},
		{"failed", seq(5, 6, 282, 282, result.DecisionFailed), "passed 5 of 11 runs; rate < 0.89 at 95% (needs 0.9)"},
		// 0.95 − 0.025 = 0.925: a bound of 0.9251 at two places, 0.92,
		// would read as short of the rate the pass reached.
		{"passed, a rate below p0 at two places", passedAt(stats.Design{PassRate: 0.95, Margin: 0.025, Confidence: 0.95}, 113, 0),
			"passed 113 of 113 runs; rate ≥ 0.925 at 95% (needs 0.95 − 0.025)"},
		// Λ = 1/α exactly: the bound is p0 itself, computed a few ulps below.
		{"passed, a ratio exactly on the boundary", passedAt(stats.Design{PassRate: 0.8, Margin: 0.4, Confidence: 0.75}, 2, 0),
			"passed 2 of 2 runs; rate ≥ 0.40 at 75% (needs 0.8 − 0.4)"},
		// The design as written, as lint says it: four digits made
		// 0.99999 "1" and its confidence "at 100%".
		{"passed, rates of five nines", passedAt(stats.Design{PassRate: 0.99999, Margin: 0.5, Confidence: 0.99999}, 17, 0),
			"passed 17 of 17 runs; rate ≥ 0.50 at 99.999% (needs 0.99999 − 0.5)"},
		// Needed is a count up to stats.MaxRuns, and said only past the
		// limit.
		{"inconclusive, needs the most runs there are", seq(15, 5, 20, stats.MaxRuns, result.DecisionInconclusive),
			"inconclusive: passed 15 of 20 runs, the most repeat allows; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); the guarantee needs up to 100000 runs"},
		// No repeat: the limit is the one needed, and the user did not
		// set it; more runs are not what would decide.
		{"inconclusive, needs the limit", seq(15, 5, 20, 20, result.DecisionInconclusive),
			"inconclusive: passed 15 of 20 runs, the most the guarantee needs; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); a rate between 0.8 and 0.9 may end so: a smaller margin decides closer to 0.9, at the cost of more runs"},
		{"inconclusive above the limit needed", seq(15, 5, 20, 19, result.DecisionInconclusive),
			"inconclusive: passed 15 of 20 runs, the most repeat allows; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); a rate between 0.8 and 0.9 may end so: a smaller margin decides closer to 0.9, at the cost of more runs"},
		{"inconclusive below the limit needed", seq(15, 5, 20, 282, result.DecisionInconclusive),
			"inconclusive: passed 15 of 20 runs, the most repeat allows; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); the guarantee needs up to 282 runs"},
		// Needed is stats.MaxRuns+1 when even stats.MaxRuns runs are not
		// enough: no number of runs is "up to 100001".
		{"inconclusive, no limit enough", seq(15, 5, 20, stats.MaxRuns+1, result.DecisionInconclusive),
			"inconclusive: passed 15 of 20 runs, the most repeat allows; rate 0.40–0.94 at 90% (needs 0.9 − 0.1); the guarantee needs more than 100000 runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := repeatLine(tc.r); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestBelow: an upper bound is rounded up, never down, with as many
// places as it takes to stay below the rate it is compared with; one
// within rounding of the rate is the rate.
func TestBelow(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v, limit float64
		want     string
	}{
		{0.8888023363157218, 0.9, "0.89"},
		{0.8974661810192006, 0.9, "0.898"},
		// pass rate 1: one failure after many passes leaves the bound
		// just below 1, where six places rounded to the nearest gave
		// 0.999990, below the bound.
		{0.9999902, 1, "0.999991"},
		{0.9999999999951, 1, "0.999999999996"},
		// Within rounding of the limit: a ratio exactly on the boundary
		// (0.95 − 0.2 at 80%, one failure), whose bound is p1 itself.
		{0.95000000000000007, 0.95, "0.95"},
		{0.9999999999999, 1, "1"},
		// 0.95 − 0.45 at 99.99999%: seven failures are exactly Λ = α,
		// and the float rates put the bound 4e-12 above p1.
		{0.9500000000037597, 0.95, "0.95"},
		// Above the limit by more than rounding: not a failed test's
		// bound, printed in full.
		{0.9512, 0.95, "0.9512"},
	} {
		got := below(tc.v, tc.limit)
		if got != tc.want {
			t.Errorf("below(%v, %v) = %q, want %q", tc.v, tc.limit, got, tc.want)
		}
		if x, _ := strconv.ParseFloat(got, 64); tc.v <= tc.limit+boundTolerance && (x < tc.v-boundTolerance || x > tc.limit) {
			t.Errorf("below(%v, %v) = %q: not a bound rounded up below the limit", tc.v, tc.limit, got)
		}
	}
}

// TestAbove: a passed test's lower bound is rounded down, never up, with
// as many places as it takes to stay at or above p0; one within rounding
// of p0 is p0 as written.
func TestAbove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v, limit float64
		want     string
	}{
		{0.8012, 0.8, "0.80"},
		{0.9251455528064625, 0.95 - 0.025, "0.925"},
		{0.4950266, 0.5 - 0.005, "0.495"},
		{0.49500001, 0.495, "0.495"},
		// Exactly on the boundary, computed a few ulps below p0.
		{0.39999999999999997, 0.4, "0.40"},
		{0.9249999999999, 0.95 - 0.025, "0.925"},
		// Within rounding but past what twelve places hold: p0 as written.
		{0.9249999995, 0.95 - 0.025, "0.925"},
		// Below p0 by more than rounding: not a pass's bound.
		{0.79, 0.8, "0.79"},
	} {
		got := above(tc.v, tc.limit)
		if got != tc.want {
			t.Errorf("above(%v, %v) = %q, want %q", tc.v, tc.limit, got, tc.want)
		}
		if x, _ := strconv.ParseFloat(got, 64); tc.v >= tc.limit-boundTolerance && (x > tc.v+boundTolerance || x < tc.limit-1e-12) {
			t.Errorf("above(%v, %v) = %q: not a bound rounded down at or above the limit", tc.v, tc.limit, got)
		}
	}
}

// TestWriteRuns: a repeated case's console body: one mark per run (a
// run's retries are one run), fifty to a line, then each run that did not
// pass, the failed ones in full up to three.
func TestWriteRuns(t *testing.T) {
	t.Parallel()
	// runs builds the attempts of the runs in spec, one word per run, one
	// letter per attempt: P passed, F failed, E errored. Older reports
	// number no run (numbered false).
	runs := func(spec string, numbered bool) []*result.Attempt {
		var out []*result.Attempt
		for i, w := range strings.Fields(spec) {
			for _, l := range w {
				a := &result.Attempt{Number: len(out) + 1, Status: result.Passed}
				if numbered {
					a.Run = i + 1
				}
				switch l {
				case 'F':
					a.Status, a.Failures = result.Failed, []assert.Failure{failure(pos("a.yaml", 5, 7), "response", "reply does not match", "", "", "")}
				case 'E':
					a.Status, a.Error = result.Errored, &result.Error{Kind: result.KindTimeout, Message: "no reply"}
				}
				out = append(out, a)
			}
		}
		return out
	}
	const legend = "  (✓ passed, ✗ failed, E errored)"
	const failedRun = "  a.yaml:5:7: reply does not match\n"
	kinds1 := func(runs string) string {
		return "failed runs by what failed first (1 kind of failure):\n  " + runs + ": a.yaml:5:7: reply does not match\n"
	}
	// varied builds runs that fail with the reply in spec, one word per
	// run ("-" passes).
	varied := func(spec string) []*result.Attempt {
		var out []*result.Attempt
		for i, w := range strings.Fields(spec) {
			a := &result.Attempt{Number: i + 1, Run: i + 1, Status: result.Passed}
			if w != "-" {
				a.Status, a.Failures = result.Failed, []assert.Failure{failure(pos("a.yaml", 5, 7), "response", "reply does not match", "", w, "")}
			}
			out = append(out, a)
		}
		return out
	}
	kind := func(reply string) string { return "a.yaml:5:7: reply does not match (actual: " + reply + ")" }
	inFull := func(run, of int, reply string) string {
		return fmt.Sprintf("run %d of %d failed:\n  a.yaml:5:7: reply does not match\n    expected: \"\"\n    actual:   %s\n", run, of, reply)
	}
	many := strings.Fields("a b c d e f g h i j k l")
	for _, tc := range []struct {
		name     string
		attempts []*result.Attempt
		want     string // the block after the case's line, without its blank line
	}{
		{"a retried run is one run", runs("P EP F", true),
			"runs: ✓✓✗" + legend + "\nrun 3 of 3 failed:\n" + failedRun},
		{"an older report's attempts are a run each", runs("P E F", false),
			"runs: ✓E✗" + legend + "\nrun 2 of 3 errored: timeout: no reply\nrun 3 of 3 failed:\n" + failedRun},
		{"three failed runs in full, then a count; errored runs after them", runs("F F F F F E", true),
			"runs: ✗✗✗✗✗E" + legend + "\n" + kinds1("5× (runs 1, 2, 3, 4, 5)") +
				"run 1 of 6 failed:\n" + failedRun + "run 2 of 6 failed:\n" + failedRun + "run 3 of 6 failed:\n" + failedRun +
				"run 6 of 6 errored: timeout: no reply\n" +
				"… and 2 more failed runs: every transcript is in the JSON and JUnit reports\n"},
		{"one failed run past the three", runs("F F F F", true),
			"runs: ✗✗✗✗" + legend + "\n" + kinds1("4× (runs 1, 2, 3, 4)") +
				"run 1 of 4 failed:\n" + failedRun + "run 2 of 4 failed:\n" + failedRun + "run 3 of 4 failed:\n" + failedRun +
				"… and 1 more failed run: every transcript is in the JSON and JUnit reports\n"},
		// The kinds with the most runs come first, ties in the order
		// first seen; the first run of each kind is shown in full
		// before the earliest others.
		{"kinds of failure, the most frequent first, the first of each in full", varied("x x - x y z x"),
			"runs: ✗✗✓✗✗✗✗" + legend + "\n" +
				"failed runs by what failed first (3 kinds of failure):\n" +
				"  4× (runs 1, 2, 4, 7): " + kind("x") + "\n  1× (run 5): " + kind("y") + "\n  1× (run 6): " + kind("z") + "\n" +
				inFull(1, 7, "x") + inFull(5, 7, "y") + inFull(6, 7, "z") +
				"… and 3 more failed runs: every transcript is in the JSON and JUnit reports\n"},
		// After the first of each kind, the earliest of the others,
		// whatever their kind.
		{"the earliest others after the first of each kind", varied("x y x - y y"),
			"runs: ✗✗✗✓✗✗" + legend + "\n" +
				"failed runs by what failed first (2 kinds of failure):\n" +
				"  3× (runs 2, 5, 6): " + kind("y") + "\n  2× (runs 1, 3): " + kind("x") + "\n" +
				inFull(1, 6, "x") + inFull(2, 6, "y") + inFull(3, 6, "x") +
				"… and 2 more failed runs: every transcript is in the JSON and JUnit reports\n"},
		{"run numbers past five", varied("x x x x x x"),
			"runs: ✗✗✗✗✗✗" + legend + "\n" +
				"failed runs by what failed first (1 kind of failure):\n  6× (runs 1, 2, 3, 4, 5, …): " + kind("x") + "\n" +
				inFull(1, 6, "x") + inFull(2, 6, "x") + inFull(3, 6, "x") +
				"… and 3 more failed runs: every transcript is in the JSON and JUnit reports\n"},
		// An agent that never says the same thing twice: the console
		// lists ten kinds and counts the others.
		{"ten kinds on the console", varied("a " + strings.Join(many, " ")),
			"runs: ✗✗✗✗✗✗✗✗✗✗✗✗✗" + legend + "\n" +
				"failed runs by what failed first (12 kinds of failure):\n" +
				"  2× (runs 1, 2): " + kind("a") + "\n" +
				func() string {
					var b strings.Builder
					for i, w := range many[1:10] {
						fmt.Fprintf(&b, "  1× (run %d): %s\n", i+3, kind(w))
					}
					return b.String()
				}() +
				"  … and 2 more kinds in 2 runs: every one is in the JSON and JUnit reports\n" +
				inFull(1, 13, "a") + inFull(3, 13, "b") + inFull(4, 13, "c") +
				"… and 10 more failed runs: every transcript is in the JSON and JUnit reports\n"},
		{"no run made", nil, "failed before any run started\n"},
		{"fifty runs to a line", runs(strings.Repeat("P ", 50)+"F", true),
			"runs: " + strings.Repeat("✓", 50) + "\nruns: ✗" + legend + "\nrun 51 of 51 failed:\n" + failedRun},
		// The sequential test leaves errored runs out of its counts; the
		// fixed rule's "2 of 3 runs passed" has them among the runs.
		{"sequential", runs("P E F", true),
			"runs: ✓E✗  (✓ passed, ✗ failed, E errored: not counted)\nrun 2 of 3 errored: timeout: no reply\nrun 3 of 3 failed:\n" + failedRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &result.Case{Name: "c", Status: result.Failed, Attempts: tc.attempts,
				Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionFailed, Limit: 1}}
			if tc.name == "sequential" {
				c.Repeat.Procedure = result.ProcedureSPRT
			}
			block := NewHuman(&bytes.Buffer{}, HumanOptions{}).caseBlock(&result.File{Path: "a.yaml"}, c)
			_, body, _ := strings.Cut(block, "\n")
			body = strings.ReplaceAll(strings.TrimSuffix(body, "\n\n"), "\n    ", "\n")
			body = strings.TrimPrefix(body, "    ") + "\n"
			if body != tc.want {
				t.Errorf("body =\n%s\nwant\n%s", body, tc.want)
			}
		})
	}
}

// TestRepeatPropertiesDecision: a repeat without a decision (cut off
// before its first run) has no repeat.decision property, rather than an
// empty one.
func TestRepeatPropertiesDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		decision string
		want     bool
	}{{"", false}, {result.DecisionPassed, true}} {
		c := &result.Case{Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: tc.decision}}
		got := slices.ContainsFunc(repeatProperties(c), func(p junit.Property) bool { return p.Name == "repeat.decision" })
		if got != tc.want {
			t.Errorf("decision %q: repeat.decision property %v, want %v", tc.decision, got, tc.want)
		}
	}
}

// TestRepeatPropertiesAsWritten: JUnit's properties carry the design as
// the JSON report does, not rounded to four digits (0.99999 was "1").
func TestRepeatPropertiesAsWritten(t *testing.T) {
	t.Parallel()
	c := &result.Case{Repeat: &result.Repeat{Procedure: result.ProcedureSPRT, PassRate: 0.666661, Margin: 0.00001,
		Confidence: 0.99999, Level: 0.99999, Upper: 1}}
	want := map[string]string{
		"repeat.pass_rate":  "0.666661",
		"repeat.margin":     "1e-05",
		"repeat.confidence": "0.99999",
		"repeat.interval":   "[0.000, 1.000] at 99.998%",
	}
	for _, p := range repeatProperties(c) {
		if w, ok := want[p.Name]; ok && p.Value != w {
			t.Errorf("%s = %q, want %q", p.Name, p.Value, w)
		}
	}
}
