package history

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/report"
)

// label names a matcher of s on one line: `nightly.yaml: books: similar
// "Booked: a table…"`, its text cut and quoted, and escaped as the rest
// of the history is: the files are anyone's.
func (m *Matcher) label(s *Scenario) string {
	// As much as a report's one-line summary of a value.
	to := m.To[:diag.RuneOffset(m.To, report.ShortRunes)]
	q := strconv.Quote(to)
	if len(to) < len(m.To) {
		q = strings.TrimSuffix(q, `"`) + `…"`
	}
	label := s.File + ": " + s.Name + ": " + m.Name() + " " + q
	if m.N > 0 {
		// The same text checked again in the scenario.
		label += fmt.Sprintf(" (#%d)", m.N+1)
	}
	return escape.Line(label)
}

// threshold writes the comparison that passes the matcher at its latest
// threshold: "≥ 0.75", or "< 0.75" for a negated one.
func (m *Matcher) threshold() string {
	if m.Not {
		return "< " + assert.FormatMin(m.Latest.Min)
	}
	return "≥ " + assert.FormatMin(m.Latest.Min)
}

// scoreColumns is how many reports, the newest, the text view's table of
// scores shows: a column of six characters each, 30 nightly reports
// would make lines of some 180 characters and more. The drift below it
// is computed over every report.
const scoreColumns = 10

// writeScores writes every similar matcher's score report by report,
// the newest scoreColumns, when any report kept one: nothing for reports
// written before scores were kept.
func writeScores(b *strings.Builder, h *History) {
	var any bool
	for _, s := range h.Scenarios {
		any = any || len(s.Matchers) > 0
	}
	if !any {
		return
	}
	first := max(0, len(h.Reports)-scoreColumns)
	b.WriteString("\nsimilar scores by report")
	if first > 0 {
		fmt.Fprintf(b, ", reports %d–%d of %d (--json holds them all)", first+1, len(h.Reports), len(h.Reports))
	}
	b.WriteString(" (a repeated case's median over its runs; · not scored):\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for i := first; i < len(h.Reports); i++ {
		fmt.Fprintf(tw, "%d\t", i+1)
	}
	fmt.Fprint(tw, "threshold\tmatcher\n")
	for _, s := range h.Scenarios {
		for _, m := range s.Matchers {
			for _, sc := range m.Scores[first:] {
				v := "·"
				if sc != nil {
					v = assert.FormatScore(sc.Score, sc.Min)
				}
				fmt.Fprintf(tw, "%s\t", v)
			}
			fmt.Fprintf(tw, "%s\t%s\n", m.threshold(), m.label(s))
		}
	}
	tw.Flush()
	b.WriteString("\n")
}

// writeDrifting names the matchers whose scores moved toward their
// threshold while they still pass: the failure to come, before it does.
func writeDrifting(b *strings.Builder, h *History) {
	drifting := h.Drifting()
	if len(drifting) == 0 {
		return
	}
	older, newer := h.Halves()
	fmt.Fprintf(b, "closer to the threshold in the newer reports (%s) than in the older (%s): a similar score's median moved toward it by more than %.2f, or to within %.2f of it, still passing (%d):\n",
		span(newer), span(older), assert.NearMargin, assert.NearMargin, len(drifting))
	for _, d := range drifting {
		m := d.Matcher
		line := fmt.Sprintf("  %s: older %s; newer %s, threshold %s", m.label(d.Scenario),
			assert.FormatScore(m.Older, m.Latest.Min), assert.FormatScore(m.Newer, m.Latest.Min), m.threshold())
		if m.Near {
			line += fmt.Sprintf(" (within %.2f)", assert.NearMargin)
		}
		if p := m.Latest.Pos.String(); p != "" {
			line += " at " + escape.Line(p)
		}
		b.WriteString(line + "\n")
	}
}

// jsonMatcher is a Matcher in the JSON history.
type jsonMatcher struct {
	Key      string     `json:"key"`
	To       string     `json:"to"`
	Not      bool       `json:"not"`
	N        int        `json:"n"`
	Pos      diag.Pos   `json:"pos"`
	Min      float64    `json:"min"`
	ByReport []*float64 `json:"scores_by_report"`
	Older    *float64   `json:"older"`
	Newer    *float64   `json:"newer"`
	Near     bool       `json:"near"`
	Drifting bool       `json:"drifting"`
}

// jsonDrifting names a drifting matcher (History.Drifting).
type jsonDrifting struct {
	File string `json:"file"`
	Name string `json:"name"`
	Key  string `json:"key"`
	To   string `json:"to"`
	Not  bool   `json:"not"`
	N    int    `json:"n"`
}

// matchersJSON are the matchers of s in the JSON history.
func matchersJSON(s *Scenario) []jsonMatcher {
	out := []jsonMatcher{}
	for _, m := range s.Matchers {
		jm := jsonMatcher{Key: m.Key, To: m.To, Not: m.Not, N: m.N, Pos: m.Latest.Pos, Min: m.Latest.Min, Near: m.Near, Drifting: m.Drifting}
		for _, sc := range m.Scores {
			var v *float64
			if sc != nil {
				v = &sc.Score
			}
			jm.ByReport = append(jm.ByReport, v)
		}
		if m.HasOlder {
			jm.Older = &m.Older
		}
		if m.HasNewer {
			jm.Newer = &m.Newer
		}
		out = append(out, jm)
	}
	return out
}
