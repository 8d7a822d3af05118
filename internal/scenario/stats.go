package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/stats"
)

// Stats are a scenario's statistical settings as written (`repeat:`,
// `pass_rate:`, `confidence:`, `margin:` or their tags); a zero field is
// unset. Without Confidence, `repeat: N` runs exactly N times and passes
// when the share of passing runs reaches PassRate (the fixed rule). With
// it, the runs are decided one by one by a sequential test (package
// stats) and Repeat is the most runs that count as evidence.
type Stats struct {
	Repeat     int
	PassRate   float64
	Confidence float64
	Margin     float64
}

// IsZero reports whether the scenario sets none of the settings.
func (s Stats) IsZero() bool { return s == Stats{} }

// Or returns s, or def when s sets no design: the run's --repeat,
// --pass-rate, --confidence and --margin apply to scenarios that set none
// of repeat, pass_rate and confidence, and never mix with a scenario's
// own design.
func (s Stats) Or(def Stats) Stats {
	if !s.ownDesign() {
		return def
	}
	return s
}

// ownDesign reports whether s sets a design of its own: a repeat, a pass
// rate or a confidence. A margin alone is none (it only tunes a
// confidence, and Check warns it has no effect): a scenario left with one
// after its confidence was removed ran once under a nightly --confidence,
// green on a single run.
func (s Stats) ownDesign() bool { return s.Repeat != 0 || s.PassRate != 0 || s.Confidence != 0 }

// RunStats returns the settings sc runs with: its own, else the run's
// (--repeat, --pass-rate, --confidence, --margin). A scenario with a
// probe never takes the run's: each of its runs places a real call or
// sends a real SMS to a probe number, and a nightly job's --confidence
// 0.95 would ring that phone 26 times or more a night. It repeats only
// when it says so itself.
func (sc *Scenario) RunStats(run Stats) Stats {
	if sc.DeclinesRunStats() {
		return Stats{}
	}
	return sc.Stats.Or(run)
}

// DeclinesRunStats reports whether sc runs without the run's statistical
// settings: it has a probe and no design of its own (RunStats).
func (sc *Scenario) DeclinesRunStats() bool { return !sc.Stats.ownDesign() && sc.Probe() != nil }

// Sequential reports whether the runs are decided by the sequential test.
func (s Stats) Sequential() bool { return s.Confidence > 0 }

// Design is the sequential test of s, defaults applied.
func (s Stats) Design() stats.Design { return s.withDefaults().design() }

// Resolve fills what is unset: a pass rate of 1; for a sequential test the
// margin stats.DefaultMargin and, without a repeat, the limit the
// guarantee needs (stats.Design.Needed); otherwise a single run. The
// settings must be valid (Check).
func (s Stats) Resolve() Stats {
	s = s.withDefaults()
	if s.Repeat == 0 {
		s.Repeat = 1
		if s.Sequential() {
			s.Repeat = min(s.design().Needed(), stats.MaxRuns)
		}
	}
	return s
}

// withDefaults fills the pass rate and, for a sequential test, the margin.
func (s Stats) withDefaults() Stats {
	if s.PassRate == 0 {
		s.PassRate = 1
	}
	switch {
	case !s.Sequential():
		s.Margin = 0
	case s.Margin == 0:
		s.Margin = stats.DefaultMargin
	}
	return s
}

func (s Stats) design() stats.Design {
	return stats.Design{PassRate: s.PassRate, Margin: s.Margin, Confidence: s.Confidence}
}

// Problem is one finding of Stats.Check, worded with the names the
// settings were written with.
type Problem struct {
	// Setting is the setting the problem is about (Names.Repeat, ...), for
	// its position.
	Setting  string
	Severity diag.Severity
	Message  string
	Hint     string
}

// Names are how a format spells the settings in messages: `repeat: 40`
// in YAML, `@repeat:40` in a feature file.
type Names struct {
	Repeat, PassRate, Confidence, Margin string
	// Value joins a name and a value.
	Value func(name, value string) string
}

// YAMLNames and TagNames spell the settings of the two formats.
var (
	YAMLNames = Names{Repeat: "repeat", PassRate: "pass_rate", Confidence: "confidence", Margin: "margin",
		Value: func(n, v string) string { return n + ": " + v }}
	TagNames = Names{Repeat: "@repeat", PassRate: "@pass-rate", Confidence: "@confidence", Margin: "@margin",
		Value: func(n, v string) string { return n + ":" + v }}
	// FlagNames spell the run's flags.
	FlagNames = Names{Repeat: "--repeat", PassRate: "--pass-rate", Confidence: "--confidence", Margin: "--margin",
		Value: func(n, v string) string { return n + " " + v }}
)

// Check reports what makes the settings unusable (errors) or weaker than
// they look (warnings): settings without effect, an impossible design,
// and a limit too small for the guarantee the design states. It is the one
// rule the loaders, lint and the run's flags share.
func (s Stats) Check(n Names) []Problem {
	var out []Problem
	warn := func(setting, hint, format string, args ...any) {
		out = append(out, Problem{Setting: setting, Severity: diag.Warning, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	fail := func(setting, hint, format string, args ...any) {
		out = append(out, Problem{Setting: setting, Severity: diag.Error, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	if s.Repeat > stats.MaxRuns {
		// Every run is a session, and every run's transcript is kept for
		// the reports: a repeat of a billion would run for days and end
		// out of memory. MaxRuns is also as far as a sequential test's
		// figures are computed (Resolve caps its default limit there).
		fail(n.Repeat, "each run is a session on the platform, kept in every report",
			"%s must be at most %d, not %d", n.Repeat, stats.MaxRuns, s.Repeat)
		return out
	}
	if !s.Sequential() {
		if s.PassRate != 0 && s.Repeat == 0 {
			warn(n.PassRate, "", "%s has no effect without %s or %s", n.PassRate, n.Repeat, n.Confidence)
		}
		if s.Margin != 0 {
			warn(n.Margin, "", "%s has no effect without %s", n.Margin, n.Confidence)
		}
		if s.Repeat == 1 {
			// The runner repeats from two runs on (a single run is an
			// ordinary case, retried after a failure): a sample of one
			// would pass on a retry, where "repeat: N runs N sessions"
			// and a repeat's failed runs are data, not retried.
			warn(n.Repeat, fmt.Sprintf("write %s for a sample, or leave %s out", n.Value(n.Repeat, "2"), n.Repeat),
				"%s runs the scenario once, as without %s: a failed run is retried as any scenario's is, and %s has no effect",
				n.Value(n.Repeat, "1"), n.Repeat, n.PassRate)
		}
		return out
	}
	d := s.withDefaults().design()
	if !(d.Confidence > 0.5 && d.Confidence < 1) {
		fail(n.Confidence, "a probability such as 0.95 or 95%", "%s must be above 0.5 and below 1, not %v", n.Confidence, s.Confidence)
		return out
	}
	if s.Margin == 0 && !(d.Margin < d.PassRate) {
		// No margin is written: the default is what does not fit, and
		// the pass rate is the setting written to move.
		fail(n.PassRate, fmt.Sprintf("a rate at or below %s − margin must fail, so the margin must be below %s: write a smaller one (%s) or raise %s",
			n.PassRate, stats.Rate(d.PassRate), n.Value(n.Margin, stats.Rate(d.PassRate/2)), n.PassRate),
			"the default margin %s is not below %s %s", stats.Rate(d.Margin), n.PassRate, stats.Rate(d.PassRate))
		return out
	}
	if !(d.Margin > 0 && d.Margin < d.PassRate) {
		fail(n.Margin, fmt.Sprintf("a rate at or below %s − %s must fail, so the margin must be below %s", n.PassRate, n.Margin, stats.Rate(d.PassRate)),
			"%s must be above 0 and below %s %s, not %v", n.Margin, n.PassRate, stats.Rate(d.PassRate), d.Margin)
		return out
	}
	needed := d.Needed()
	if needed > stats.MaxRuns {
		warn(n.Confidence, fmt.Sprintf("widen %s or lower %s", n.Margin, n.Confidence),
			"%s at %s confidence needs more than %d runs for its guarantee", design(d), stats.Level(d.Confidence), stats.MaxRuns)
		return out
	}
	if s.Repeat == 0 || s.Repeat >= needed {
		return out
	}
	hint := fmt.Sprintf("leave %s out: the default allows %d runs, of which an agent at %s uses %.0f on average; or widen %s",
		n.Repeat, needed, stats.Rate(d.PassRate), d.Operating(d.PassRate, needed).MeanRuns, n.Margin)
	if fewest := d.FewestToPass(); s.Repeat < fewest {
		warn(n.Repeat, hint, "%s is too few for %s at %s confidence: no agent can pass in %s (a pass takes at least %d); the guarantee needs up to %d",
			n.Value(n.Repeat, fmt.Sprint(s.Repeat)), design(d), stats.Level(d.Confidence), runCount(s.Repeat), fewest, needed)
		return out
	}
	// The side the limit leaves short: the passing one first; from some
	// limit below needed on (239 of 282 for 0.9 and 0.1 at 95%) only the
	// failing one is, and "an agent at 0.9 passes only 96% of the time"
	// would warn of a shortfall that is not there.
	if o := d.Operating(d.PassRate, s.Repeat); o.Pass < d.Confidence {
		warn(n.Repeat, hint,
			"%s is too few for %s at %s confidence: the guarantee needs up to %d runs; with %d, an agent at exactly %s passes only %s of the time and is inconclusive (a failure) %s of the time",
			n.Value(n.Repeat, fmt.Sprint(s.Repeat)), design(d), stats.Level(d.Confidence), needed, s.Repeat,
			stats.Rate(d.PassRate), percentShort(o.Pass, d.Confidence), percent(o.Inconclusive))
		return out
	}
	o := d.Operating(d.Low(), s.Repeat)
	warn(n.Repeat, hint,
		"%s is too few for %s at %s confidence: the guarantee needs up to %d runs; with %d, an agent at exactly %s fails only %s of the time and is inconclusive %s of the time",
		n.Value(n.Repeat, fmt.Sprint(s.Repeat)), design(d), stats.Level(d.Confidence), needed, s.Repeat,
		stats.Rate(d.Low()), percentShort(o.Fail, d.Confidence), percent(o.Inconclusive))
	return out
}

// percentShort prints a probability below limit (a confidence) as
// percent does, with the decimals it takes to show it below, rounded
// down: 94.89% against 95% is 94.8%, where "passes only 95% of the
// time" at 95% confidence would state no shortfall at all.
func percentShort(v, limit float64) string {
	s := percent(v)
	for places := 1; places <= 4; places++ {
		if p, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64); err != nil || p < limit*100 {
			return s
		}
		s = strconv.FormatFloat(stats.RoundDown(v*100, places), 'f', places, 64) + "%"
	}
	return s
}

// runCount is "1 run", "3 runs".
func runCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// design names a design in messages: "pass rate 0.9, margin 0.1".
func design(d stats.Design) string {
	return fmt.Sprintf("pass rate %s, margin %s", stats.Rate(d.PassRate), stats.Rate(d.Margin))
}

// percent prints a computed probability (how often a design passes or
// ends inconclusive; a written confidence is stats.Level's) as a
// percentage: 95%, 24%, 99.6%, 0.4%. Near 0% and 100% it keeps the
// digits that tell it from them, up to four decimals: 0.9995 is 99.95%,
// which "100.0%" would misstate; one closer still is "over 99.9999%" ("under 0.0001%" near
// 0%), where more digits would only be hard to read. A probability a sum
// rounded a few ulps past 0 or 1 (Operating's Inconclusive can be
// 1.0000000000000002) is 0% or 100%, never 100.000000000000028%.
func percent(v float64) string {
	const digits = 4
	switch p := v * 100; {
	case p <= 0:
		return "0%"
	case p >= 100:
		return "100%"
	case p < 1:
		if p < 0.0001 {
			return "under 0.0001%"
		}
		return fmt.Sprintf("%.1g%%", p)
	case p > 99:
		for d := 1; d <= digits; d++ {
			if s := fmt.Sprintf("%.*f", d, p); !strings.HasPrefix(s, "100") {
				return s + "%"
			}
		}
		return "over 99.9999%"
	default:
		return fmt.Sprintf("%.0f%%", p)
	}
}

// Quarantine keeps a known-flaky scenario visible without letting it gate
// the run: it runs and is reported with its real outcome, marked
// quarantined, until the end of its Until day; then it gates again.
type Quarantine struct {
	// Pos is where the quarantine is written.
	Pos diag.Pos
	// Reason says why (required); Owner who is on it (optional).
	Reason string
	Owner  string
	// Until is the last day of the quarantine, at midnight UTC.
	Until time.Time
}

// Lapsed reports whether the quarantine is over at now: after the end of
// its Until day (UTC).
func (q *Quarantine) Lapsed(now time.Time) bool {
	return !now.Before(q.Until.AddDate(0, 0, 1))
}

// UntilText is the Until day as written: 2026-12-31.
func (q *Quarantine) UntilText() string { return q.Until.Format(time.DateOnly) }

// parseUntil reads a quarantine's last day.
func parseUntil(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("until must be a date such as 2026-12-31, not %q", s)
	}
	return t, nil
}
