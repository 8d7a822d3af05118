package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
)

// statsOptions are the run's statistical settings: they apply to the
// scenarios that set none of repeat, pass_rate and confidence.
type statsOptions struct {
	repeat                       int
	passRate, confidence, margin float64
	// repeatGiven: --repeat (or AGENTTEST_REPEAT) was given, so a 0 is
	// the user's, not the default that leaves scenarios to one run.
	repeatGiven bool
}

func (o *statsOptions) register(f *flags) {
	f.intVar(&o.repeat, "repeat", "AGENTTEST_REPEAT", 0, "run each scenario that sets no repeat, pass_rate or confidence up to `N` times (with --confidence: the most runs that count)")
	f.shareVar(&o.passRate, "pass-rate", "AGENTTEST_PASS_RATE", "the pass `RATE` those scenarios must reach, e.g. 0.9 or 90%; 1 when not given")
	f.shareVar(&o.confidence, "confidence", "AGENTTEST_CONFIDENCE", "decide those scenarios sequentially with this `PROBABILITY` of the right verdict, e.g. 0.95")
	f.shareVar(&o.margin, "margin", "AGENTTEST_MARGIN", "with --confidence: a rate at or below pass rate − `MARGIN` must fail; 0.1 when not given")
}

// parsed notes, once f is parsed, which settings were given.
func (o *statsOptions) parsed(f *flags) {
	o.repeatGiven = f.isSet("repeat")
}

// stats is the settings as the runner takes them.
func (o statsOptions) stats() scenario.Stats {
	return scenario.Stats{Repeat: o.repeat, PassRate: o.passRate, Confidence: o.confidence, Margin: o.margin}
}

// check returns the problems of the settings (usage errors) and their
// warnings, worded the way lint words them for a file.
func (o statsOptions) check() (problems, warnings []string) {
	// A repeat of 0 is refused as a scenario's repeat: 0 is how
	// scenario.Stats says "not set", and the run would go on with every
	// scenario run once, as if the flag were not there.
	if o.repeat < 0 || (o.repeat == 0 && o.repeatGiven) {
		problems = append(problems, fmt.Sprintf("--repeat must be 1 or more, not %d", o.repeat))
	}
	if o.passRate > 1 {
		problems = append(problems, fmt.Sprintf("--pass-rate must be above 0 and at most 1, not %v", o.passRate))
	}
	if len(problems) > 0 {
		return problems, nil
	}
	for _, p := range o.stats().Check(scenario.FlagNames) {
		if p.Severity == diag.Error {
			problems = append(problems, p.Message)
			continue
		}
		msg := "agenttest: warning: " + p.Message
		if p.Hint != "" {
			msg += " (" + p.Hint + ")"
		}
		warnings = append(warnings, msg)
	}
	return problems, warnings
}

// probeNote says, once, which selected scenarios the run's statistical
// flags leave to a single run: those with a probe, each run of which
// calls or texts a real number (scenario.Scenario.DeclinesRunStats).
// Empty when the flags are unset or no such scenario is selected.
func (o statsOptions) probeNote(suites []*scenario.Suite) string {
	if o.stats().IsZero() {
		return ""
	}
	var names []string
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if sc.DeclinesRunStats() {
				names = append(names, fmt.Sprintf("%s %q", sc.Pos, sc.Name))
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("agenttest: note: %s not applied to %d %s with a probe, run once each (every run would call or text a real number; give the scenario its own repeat: to repeat it): %s",
		strings.Join(o.setFlags(), ", "), len(names), plural(len(names), "scenario", "scenarios"), strings.Join(names, ", "))
}

// costNote says, before the run, how many sessions its statistical
// scenarios may open: each runs until its test decides, and against a
// rate-limited platform its limit (282 runs for pass rate 0.9, margin 0.1
// at 95%) is what the run may take. For each it gives the limit and the
// runs an agent at exactly its pass rate takes on average
// (stats.Design.Operating). A fixed repeat says its cost in the file.
// Empty when no selected scenario is statistical.
func (o statsOptions) costNote(suites []*scenario.Suite) string {
	var lines []string
	total, n := 0, 0
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if sc.Skip != "" {
				continue
			}
			st := sc.RunStats(o.stats()).Resolve()
			if !st.Sequential() {
				continue
			}
			n++
			total += st.Repeat
			if len(lines) < costLines {
				d := st.Design()
				lines = append(lines, fmt.Sprintf("%s %q: up to %d (about %.0f for an agent at %s)", sc.Pos, sc.Name, st.Repeat,
					d.Operating(d.PassRate, st.Repeat).MeanRuns, strconv.FormatFloat(d.PassRate, 'f', -1, 64)))
			}
		}
	}
	if n == 0 {
		return ""
	}
	if n > costLines {
		lines = append(lines, fmt.Sprintf("and %d more", n-costLines))
	}
	return fmt.Sprintf("agenttest: note: %d statistical %s may open up to %d sessions (and one more for each errored run): %s",
		n, plural(n, "scenario", "scenarios"), total, strings.Join(lines, "; "))
}

// costLines is the number of scenarios the cost note names.
const costLines = 3

// setFlags names the statistical flags that are set.
func (o statsOptions) setFlags() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"--repeat", o.repeat != 0}, {"--pass-rate", o.passRate != 0}, {"--confidence", o.confidence != 0}, {"--margin", o.margin != 0}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// shareVar is a rate or probability flag: 0.9 or 90%.
func (f *flags) shareVar(p *float64, name, envName, usage string) {
	if v, ok := f.env(name, envName); ok {
		if x, err := parseShareFlag(v); err != nil {
			f.envProblems[name] = fmt.Sprintf("%s=%q is %v", envName, v, err)
		} else {
			*p = x
		}
	}
	f.fs.Var(shareValue{p}, name, withEnv(usage, envName))
}

// shareValue is a flag.Value of a share written 0.9 or 90%.
type shareValue struct{ p *float64 }

func (s shareValue) String() string {
	if s.p == nil || *s.p == 0 {
		return ""
	}
	return strconv.FormatFloat(*s.p, 'g', -1, 64)
}

func (s shareValue) Set(v string) error {
	x, err := parseShareFlag(v)
	if err != nil {
		return err
	}
	*s.p = x
	return nil
}

func parseShareFlag(v string) (float64, error) {
	t := strings.TrimSpace(v)
	pct := strings.HasSuffix(t, "%")
	x, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		// Said after the value by flags.parse and shareVar.
		return 0, errors.New("not a number above 0 such as 0.9 or 90%")
	}
	if pct {
		x /= 100
	}
	return x, nil
}

// lapsedQuarantines warns of the quarantines that lapsed by now: their
// scenarios gate the run again.
func lapsedQuarantines(suites []*scenario.Suite, now time.Time) diag.Diagnostics {
	var ds diag.Diagnostics
	seen := map[diag.Pos]bool{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			q := sc.Quarantine
			if q == nil || !q.Lapsed(now) || seen[q.Pos] {
				continue
			}
			seen[q.Pos] = true
			ds = ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: q.Pos,
				Message: fmt.Sprintf("quarantine of %q lapsed after %s, its last day: the scenario gates runs again", sc.Name, q.UntilText()),
				Hint:    "fix the scenario or the agent, or extend until if the reason still holds"})
		}
	}
	return ds
}
