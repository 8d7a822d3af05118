package compare

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/result"
)

// TextOptions configure the console view of a comparison.
type TextOptions struct {
	// Color paints the classes and the reply diffs (a terminal that
	// allows it).
	Color bool
	// Verbose also lists the unchanged pairs.
	Verbose bool
}

// ANSI colours of the console view.
const (
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrMagenta = "\x1b[35m"
	sgrFaint   = "\x1b[2m"
	sgrReset   = "\x1b[0m"
)

// classColour is the colour of each class's label.
var classColour = map[Class]string{Regressed: sgrRed, Fixed: sgrGreen, Changed: sgrYellow, Slower: sgrMagenta, Faster: sgrGreen,
	NotCompared: sgrYellow, OnlyBaseline: sgrFaint, OnlyCandidate: sgrFaint, Unchanged: sgrFaint}

// WriteText writes the console view of c: both sides, each pair that is
// not unchanged with what changed (every pair with Verbose), the overall
// latency, the counts and, last, the status and what decided it. What
// the runs or their report files chose (names, ids, states, replies) is
// escaped: the files are anyone's.
func WriteText(w io.Writer, c *Comparison, o TextOptions) error {
	t := &text{o: o}
	t.side("baseline ", c.Baseline)
	t.side("candidate", c.Candidate)
	t.b.WriteString("\n")
	for _, p := range c.Pairs {
		if p.Class == Unchanged && !o.Verbose {
			continue
		}
		t.pair(p)
	}
	t.unchecked(c.Pairs)
	t.latency(c.Latency, c.Options)
	n := c.Counts
	fmt.Fprintf(&t.b, "%d %s: %d regressed, %d fixed, %d changed, %d slower, %d faster, %d unchanged",
		n.Total, plural(n.Total, "scenario", "scenarios"), n.Regressed, n.Fixed, n.Changed, n.Slower, n.Faster, n.Unchanged)
	if n.NotCompared > 0 {
		fmt.Fprintf(&t.b, ", %d not compared", n.NotCompared)
	}
	if k := n.OnlyBaseline + n.OnlyCandidate; k > 0 {
		fmt.Fprintf(&t.b, ", %d on one side only", k)
	}
	t.b.WriteString("\n")
	colour := map[result.RunStatus]string{result.RunPassed: sgrGreen, result.RunFailed: sgrRed, result.RunErrored: sgrMagenta}[c.Status]
	t.b.WriteString(t.paint(cmp.Or(colour, sgrYellow), "status: "+string(c.Status)+" ("+escape.Line(c.Why)+")") + "\n")
	_, err := io.WriteString(w, t.b.String())
	return err
}

type text struct {
	o TextOptions
	b strings.Builder
}

func (t *text) paint(code, s string) string {
	if !t.o.Color || code == "" {
		return s
	}
	return code + s + sgrReset
}

// side is one line per side: what it is, how its run ended, and the
// deployments it tested.
func (t *text) side(label string, s Side) {
	t.b.WriteString(label + " " + s.Line() + "\n")
	for _, d := range s.Deployments {
		line := fmt.Sprintf("  deployment of %s in %s: %s", escape.Line(d.Agent), escape.Line(d.Env), escape.Line(d.ID))
		switch {
		case d.ID == "":
			line = fmt.Sprintf("  deployment of %s in %s: unknown (%s)", escape.Line(d.Agent), escape.Line(d.Env), escape.Line(d.Note))
		case d.Changed():
			line = "  " + t.paint(sgrRed, escape.Line(d.ChangeMessage()))
		case d.Version != "":
			line += " (version " + escape.Line(d.Version) + ")"
		}
		t.b.WriteString(line + "\n")
	}
}

// Line says in one line what the side is and how its run ended: "report
// live.json (target live, env live): run passed, started 2026-03-01
// 12:00:00Z", "target:live (target live, env live): run failed, started
// ...", then its shard and rerun. What the report files chose is escaped: they are anyone's.
func (s Side) Line() string {
	what := s.Spec
	switch s.Kind {
	case KindReport:
		// The environment it tested shows a baseline of sandbox, or of
		// another target, where live was meant.
		what = "report " + s.Report
		if s.Env != "" {
			what += fmt.Sprintf(" (target %s, env %s)", s.Target.Name, s.Env)
		}
	case KindEnvironment, KindTarget:
		what = fmt.Sprintf("%s (target %s, env %s)", s.Spec, s.Target.Name, s.Env)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: run %s", escape.Line(what), escape.Line(string(s.Run.Status)))
	if !s.Run.Started.IsZero() {
		fmt.Fprintf(&b, ", started %s", s.Run.Started.UTC().Format("2006-01-02 15:04:05Z"))
	}
	if sh := s.Shard; sh != nil && sh.Total > 1 {
		fmt.Fprintf(&b, ", shard %d of %d", sh.Index, sh.Total)
	}
	if rr := s.Rerun; rr != nil {
		fmt.Fprintf(&b, ", a rerun of %s", rr.Cases(escape.Line(rr.Of)))
	}
	return b.String()
}

// pair writes one pair: its class and position, then why.
func (t *text) pair(p *Pair) {
	label := strings.ToUpper(string(p.Class))
	t.b.WriteString(t.paint(classColour[p.Class], label) + " " + escape.Line(p.title()))
	if p.Quarantined {
		t.b.WriteString(" (quarantined: does not fail the comparison)")
	}
	if on := p.UncheckedOn(); on != "" {
		t.b.WriteString(" (checks nothing on " + on + ")")
	}
	t.b.WriteString("\n")
	if p.Note != "" {
		t.b.WriteString("    " + escape.Line(p.Note) + "\n")
	}
	if p.Class == Regressed || p.Class == Fixed {
		failed := p.Candidate
		if p.Class == Fixed {
			failed = p.Baseline
		}
		side := map[Class]string{Regressed: "candidate", Fixed: "baseline"}[p.Class]
		for _, f := range failed.Failures {
			t.b.WriteString("    " + side + ": " + escape.Line(f) + "\n")
		}
	}
	if r := p.Rates; r != nil {
		fmt.Fprintf(&t.b, "    pass rate %s → %s (Fisher's exact test, p = %.3g)\n",
			rateText(r.BaselinePassed, r.BaselineRuns), rateText(r.CandidatePassed, r.CandidateRuns), r.P)
	}
	turn := -1
	for _, ch := range p.Changes {
		if ch.What == ChangeVerdict {
			fmt.Fprintf(&t.b, "    verdict: %s → %s\n", escape.Line(ch.Baseline), escape.Line(ch.Candidate))
			continue
		}
		if ch.Turn != turn && ch.What != ChangeTurns {
			turn = ch.Turn
			head := "greeting"
			if ch.Turn > 0 {
				head = fmt.Sprintf("turn %d", ch.Turn)
				if ch.Say != "" {
					head += " > " + escape.Line(ch.Say)
				}
			}
			t.b.WriteString("    " + head + "\n")
		}
		switch ch.What {
		case ChangeReply:
			// Replies may span lines; nothing else in them may reach
			// the terminal raw.
			d := escape.Controls(ch.Diff, "\n")
			if t.o.Color {
				d = strings.Replace(assert.DiffColor(escape.Controls(ch.Baseline, "\n"), escape.Controls(ch.Candidate, "\n")), "--- expected\n+++ actual", "--- baseline\n+++ candidate", 1)
			}
			if strings.Contains(d, "\n") {
				t.b.WriteString("      reply:\n        " + strings.ReplaceAll(d, "\n", "\n        ") + "\n")
			} else {
				t.b.WriteString("      reply: " + d + "\n")
			}
		case ChangeTurns:
			fmt.Fprintf(&t.b, "    transcript: %s → %s\n", escape.Line(ch.Baseline), escape.Line(ch.Candidate))
		case ChangeSimilar:
			fmt.Fprintf(&t.b, "      %s → %s (%s)\n", escape.Line(ch.Baseline), escape.Line(ch.Candidate), escape.Line(ch.Pos.String()))
		default:
			// Two lines: a trace is itself written with arrows.
			fmt.Fprintf(&t.b, "      %-*s %s\n", len(ch.What)+12, ch.What+" (baseline):", escape.Line(ch.Baseline))
			fmt.Fprintf(&t.b, "      %-*s %s\n", len(ch.What)+12, ch.What+" (candidate):", escape.Line(ch.Candidate))
		}
	}
	if l := p.Latency; l != nil && (l.Verdict != string(Unchanged) || t.o.Verbose) {
		fmt.Fprintf(&t.b, "    latency: median %s → %s (%s), p95 %s → %s (%s)\n",
			msText(l.BaselineMedian), msText(l.CandidateMedian), shiftText(l.MedianShift),
			msText(l.BaselineP95), msText(l.CandidateP95), shiftText(l.P95Shift))
	}
}

// title is how the console names a pair: "FILE:LINE NAME".
func (p *Pair) title() string {
	if pos := p.Pos.String(); pos != "" {
		return fmt.Sprintf("%s:%d %s", p.Pos.File, p.Pos.Line, p.Name)
	}
	if p.File != "" {
		return p.File + " " + p.Name
	}
	return p.Name
}

// unchecked lists the pairs whose case checks nothing on a side, whatever
// their class (an unchanged one is listed nowhere else): its class says
// nothing of the agent there, which the JSON and the gate say too.
func (t *text) unchecked(ps []*Pair) {
	un := Unchecked(ps)
	if len(un) == 0 {
		return
	}
	t.b.WriteString("\nchecked nothing (passes whenever the agent answers, so its class says nothing of the agent):\n")
	for _, p := range un {
		t.b.WriteString("  " + escape.Line(p.title()) + " (on " + p.UncheckedOn() + ")\n")
	}
}

// latency writes the overall latency line.
func (t *text) latency(l Latency, o Options) {
	t.b.WriteString("\n")
	if l.Scenarios == 0 {
		t.b.WriteString("latency: no scenario answered on both sides\n")
		return
	}
	fmt.Fprintf(&t.b, "latency over %d %s: median per turn %s → %s, p95 %s → %s; median shift per scenario %s, Wilcoxon signed-rank p = %.3g",
		l.Scenarios, plural(l.Scenarios, "scenario", "scenarios"), msText(l.BaselineMedian), msText(l.CandidateMedian),
		msText(l.BaselineP95), msText(l.CandidateP95), shiftText(l.MedianShift), l.Test.P)
	switch l.Verdict {
	case string(Slower), string(Faster):
		fmt.Fprintf(&t.b, ": %s overall\n", l.Verdict)
	default:
		fmt.Fprintf(&t.b, ": no overall shift (needs p < %g and a median shift of %s and %.0f%%)\n", o.Alpha, msText(o.MinShiftMS), 100*o.MinRatio)
	}
}

// msText renders milliseconds for people: 0.4ms, 12ms, 1.25s.
func msText(v float64) string {
	switch {
	case v >= 1000 || v <= -1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v < 10 && v > -10:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}

func shiftText(v float64) string {
	if v >= 0 {
		return "+" + msText(v)
	}
	return msText(v)
}
