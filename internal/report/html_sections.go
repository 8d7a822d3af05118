package report

import (
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/compare"
)

// The coverage and comparison sections of the HTML report are rendered by
// the page template (html/sections.html) straight from their models; the
// functions here say in words what the template shows of them.

// comparePairLimit bounds the pairs the comparison section lists: a
// comparison of 20,000 scenarios lists its changes, and the JSON of
// agenttest compare holds them all.
const comparePairLimit = 500

// comparePairs are the pairs the section lists: every one that is not
// unchanged, regressions first, as the console lists them.
func comparePairs(ps []*compare.Pair) []*compare.Pair {
	var out []*compare.Pair
	for _, cl := range compare.Classes {
		if cl == compare.Unchanged {
			continue
		}
		for _, p := range ps {
			if p != nil && p.Class == cl && len(out) < comparePairLimit {
				out = append(out, p)
			}
		}
	}
	return out
}

// uncheckedPairs are the pairs of a comparison that check nothing on a
// side (compare.Unchecked), at most comparePairLimit of them, and how
// many more there are.
type uncheckedPairs struct {
	Pairs []*compare.Pair
	More  int
}

// compareUnchecked lists the pairs that check nothing on a side, or nil
// when none does.
func compareUnchecked(ps []*compare.Pair) *uncheckedPairs {
	un := compare.Unchecked(ps)
	if len(un) == 0 {
		return nil
	}
	n := min(len(un), comparePairLimit)
	return &uncheckedPairs{Pairs: un[:n], More: len(un) - n}
}

// compareSide names a side of a comparison in one line.
func compareSide(s compare.Side) string {
	what := s.Spec
	switch s.Kind {
	case compare.KindReport:
		what = "report " + s.Report
	case compare.KindEnvironment, compare.KindTarget:
		what = fmt.Sprintf("%s (target %s, env %s)", s.Spec, s.Target.Name, s.Env)
	}
	parts := []string{what, "run " + string(s.Run.Status)}
	for _, d := range s.Deployments {
		if d != nil && d.ID != "" {
			parts = append(parts, "deployment of "+d.Agent+" "+d.ID)
		}
	}
	return htmlStyle.flat(strings.Join(parts, ", "))
}

// compareLatency is the overall latency line.
func compareLatency(l compare.Latency) string {
	if l.Scenarios == 0 {
		return "Latency: no scenario answered on both sides."
	}
	s := fmt.Sprintf("Latency over %d %s: median per turn %s → %s, p95 %s → %s; median shift per scenario %s (Wilcoxon signed-rank p = %.3g)",
		l.Scenarios, plural(l.Scenarios, "scenario", "scenarios"), msLabel(l.BaselineMedian), msLabel(l.CandidateMedian),
		msLabel(l.BaselineP95), msLabel(l.CandidateP95), msLabel(l.MedianShift), l.Test.P)
	if l.Verdict == string(compare.Slower) || l.Verdict == string(compare.Faster) {
		return s + ": " + l.Verdict + " overall."
	}
	return s + ": no overall shift."
}

// htmlDiffView is a diff as the page template marks it up: changes
// inline for one-line texts, or prefixed lines.
type htmlDiffView struct {
	Inline    []assert.Change
	Lines     []htmlDiffLine
	Note      string
	Truncated bool
}

type htmlDiffLine struct{ Class, Text string }

// diffView is the diff of a baseline and a candidate reply, its changed
// invisible characters escaped as the console shows them.
func diffView(baseline, candidate string) htmlDiffView {
	td := assert.DiffOf(htmlStyle.oneLine(baseline), htmlStyle.oneLine(candidate)).Visible()
	v := htmlDiffView{Note: td.Note, Truncated: td.Truncated}
	if !td.Lines {
		v.Inline = td.Changes
		return v
	}
	for _, c := range td.Changes {
		class, prefix := "", "  "
		switch c.Op {
		case assert.Removed:
			class, prefix = "rm", "- "
		case assert.Added:
			class, prefix = "add", "+ "
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(c.Text, "\n"), "\n") {
			v.Lines = append(v.Lines, htmlDiffLine{Class: class, Text: prefix + l})
		}
	}
	return v
}

// htmlLongView is a value a section shows (flat) and, when it is long,
// the head the page first shows (htmlLong); the script turns Cut into the
// case list's "show all" button, so both parts of the page cut by one rule.
type htmlLongView struct{ Whole, Cut string }

// sectionLong is a comparison's state value as its table shows it: a
// value of 26 KB drawn whole buried the table.
func sectionLong(s string) htmlLongView {
	return htmlLongView{Whole: htmlStyle.flat(s), Cut: htmlLong(s, htmlStyle.flat)}
}
