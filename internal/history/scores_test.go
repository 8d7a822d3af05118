package history

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
)

// scoredReport is a report of night i (from 1) whose one case, a.yaml's
// "s", passed with the matcher scores given.
func scoredReport(t *testing.T, i int, changed bool, scores ...assert.Score) *Report {
	t.Helper()
	keys, sc := caseScores(scores)
	return &Report{Path: fmt.Sprintf("n%d.json", i), Started: fmt.Sprintf("2026-03-%02dT02:00:00Z", i), Status: "passed", Changed: changed,
		Cases: []Case{{File: "a.yaml", Name: "s", Verdict: VerdictPassed, Passed: 1, MatcherKeys: keys, Scores: sc}}}
}

// TestDrifting: a matcher is named as drifting when the median of the
// newer half of its scores moved toward its threshold by more than
// assert.NearMargin, or at all into NearMargin of it, and it still
// passes in the newest report; a negated matcher drifts upward; reports
// of a changed deployment are not counted in either half.
func TestDrifting(t *testing.T) {
	t.Parallel()
	sim := func(v, min float64) assert.Score {
		return assert.Score{Pos: diag.Pos{File: "a.yaml", Line: 7}, Key: "response", To: "booked", Score: v, Min: min}
	}
	not := func(v float64) assert.Score {
		s := sim(v, 0.5)
		s.Not, s.To = true, "sorry"
		return s
	}
	type testCase struct {
		name     string
		nights   [][]assert.Score
		changed  int // a night (from 1) whose deployment changed
		drifting bool
		near     bool
	}
	for _, tc := range []testCase{
		{name: "fell by more than the margin", nights: [][]assert.Score{{sim(0.95, 0.6)}, {sim(0.93, 0.6)}, {sim(0.86, 0.6)}, {sim(0.85, 0.6)}}, drifting: true},
		{name: "fell by the margin or less, clear of the threshold", nights: [][]assert.Score{{sim(0.95, 0.6)}, {sim(0.95, 0.6)}, {sim(0.90, 0.6)}, {sim(0.90, 0.6)}}},
		{name: "fell a little into the margin", nights: [][]assert.Score{{sim(0.66, 0.6)}, {sim(0.66, 0.6)}, {sim(0.64, 0.6)}, {sim(0.64, 0.6)}}, drifting: true, near: true},
		{name: "near all along, not closer", nights: [][]assert.Score{{sim(0.62, 0.6)}, {sim(0.62, 0.6)}, {sim(0.63, 0.6)}, {sim(0.62, 0.6)}}, near: true},
		{name: "fails in the newest report", nights: [][]assert.Score{{sim(0.95, 0.6)}, {sim(0.95, 0.6)}, {sim(0.7, 0.6)}, {sim(0.55, 0.6)}}, near: true},
		{name: "rose", nights: [][]assert.Score{{sim(0.7, 0.6)}, {sim(0.7, 0.6)}, {sim(0.9, 0.6)}, {sim(0.9, 0.6)}}},
		{name: "a negated matcher rose toward its threshold", nights: [][]assert.Score{{not(0.1)}, {not(0.1)}, {not(0.3)}, {not(0.3)}}, drifting: true},
		{name: "a negated matcher fell", nights: [][]assert.Score{{not(0.47)}, {not(0.47)}, {not(0.1)}, {not(0.1)}}},
		{name: "a negated matcher fails in the newest report", nights: [][]assert.Score{{not(0.1)}, {not(0.1)}, {not(0.3)}, {not(0.5)}}},
		{name: "the drop is a changed deployment's", nights: [][]assert.Score{{sim(0.95, 0.6)}, {sim(0.95, 0.6)}, {sim(0.95, 0.6)}, {sim(0.7, 0.6)}}, changed: 4},
		{name: "not scored in the older half", nights: [][]assert.Score{nil, nil, {sim(0.7, 0.6)}, {sim(0.62, 0.6)}}},
		{name: "a negated matcher not scored in the older half", nights: [][]assert.Score{nil, nil, {not(0.3)}, {not(0.4)}}},
		{name: "not scored in the newer half", nights: [][]assert.Score{{sim(0.9, 0.6)}, {sim(0.9, 0.6)}, nil, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reports []*Report
			for i, n := range tc.nights {
				reports = append(reports, scoredReport(t, i+1, tc.changed == i+1, n...))
			}
			h := Build(reports)
			m := h.Scenarios[0].Matchers[0]
			if m.Drifting != tc.drifting || m.Near != tc.near {
				t.Errorf("drifting %v near %v (older %v, newer %v), want %v %v", m.Drifting, m.Near, m.Older, m.Newer, tc.drifting, tc.near)
			}
			if got := len(h.Drifting()); got != map[bool]int{false: 0, true: 1}[tc.drifting] {
				t.Errorf("History.Drifting has %d", got)
			}
			var text strings.Builder
			if err := WriteText(&text, h); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "closer to the threshold") != tc.drifting {
				t.Errorf("text view:\n%s", text.String())
			}
			// A negated matcher passes below its threshold.
			if want := map[bool]string{false: "≥ 0.60", true: "< 0.50"}[m.Not]; !strings.Contains(text.String(), "  "+want+"  ") {
				t.Errorf("text view lacks the threshold %s:\n%s", want, text.String())
			}
		})
	}
}

// TestCaseScores: a matcher is its key, text and negation in a scenario,
// not its position: a line added above it keeps its record; the same
// text checked twice is two matchers, told apart by their order; a
// matcher scored more than once in a run (a metric's values) counts its
// median; a name twice in one report keeps the lower score.
func TestCaseScores(t *testing.T) {
	t.Parallel()
	at := func(line int, to string, v float64) assert.Score {
		return assert.Score{Pos: diag.Pos{File: "a.yaml", Line: line}, Key: "response", To: to, Score: v, Min: 0.5}
	}
	r1 := scoredReport(t, 1, false, at(7, "hi", 0.9), at(9, "hi", 0.8), at(9, "hi", 0.6), at(9, "hi", 0.7), at(11, "bye", 0.9))
	// A line added above: every matcher moved down by one.
	r2 := scoredReport(t, 2, false, at(8, "hi", 0.85), at(10, "hi", 0.75), at(12, "bye", 0.95))
	// The same scenario twice in the report: the lower score is kept.
	keys, sc := caseScores([]assert.Score{at(8, "hi", 0.6)})
	r2.Cases = append(r2.Cases, Case{File: "a.yaml", Name: "s", Verdict: VerdictPassed, Passed: 1, MatcherKeys: keys, Scores: sc})
	h := Build([]*Report{r1, r2})
	ms := h.Scenarios[0].Matchers
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s#%d %.2f %.2f line %d", m.To, m.N, m.Scores[0].Score, m.Scores[1].Score, m.Latest.Pos.Line))
	}
	want := "hi#0 0.90 0.60 line 8, hi#1 0.70 0.75 line 10, bye#0 0.90 0.95 line 12"
	if strings.Join(got, ", ") != want {
		t.Errorf("matchers %q, want %q", strings.Join(got, ", "), want)
	}
	var text strings.Builder
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), `a.yaml: s: similar "hi" (#2)`+"\n") {
		t.Errorf("the second matcher of one text is not numbered:\n%s", text.String())
	}
}

// TestReadScores: a repeated case's matcher reads the median of its
// spread; a case retried reads its last attempt's score, which decided
// it; a report without scores reads none.
func TestReadScores(t *testing.T) {
	t.Parallel()
	score := func(v float64) string {
		return fmt.Sprintf(`{"pos": {"file": "a.yaml", "line": 7, "col": 3}, "key": "response", "to": "hi", "score": %v, "min": 0.6}`, v)
	}
	r, err := Read("n.json", []byte(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-01T00:00:00Z", "status": "passed"},
		"files": [{"path": "a.yaml", "cases": [
		{"name": "repeated", "status": "passed", "repeat": {"runs": 3, "passed": 2, "failed": 1,
			"scores": [{"pos": {"file": "a.yaml", "line": 9}, "key": "state.x", "to": "yo", "min": 0.7, "not": true, "runs": 3, "failed": 1, "low": 0.1, "median": 0.62, "high": 0.9}]},
			"attempts": [{"status": "passed", "turns": [{"scores": [`+score(0.1)+`]}]}]},
		{"name": "retried", "status": "flaky", "attempts": [{"status": "failed", "turns": [{"scores": [`+score(0.1)+`]}]},
			{"status": "passed", "turns": [{}, {"scores": [`+score(0.9)+`, `+score(0.8)+`]}]}]},
		{"name": "old", "status": "passed", "attempts": [{"status": "passed", "turns": [{}]}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Cases {
		got = append(got, fmt.Sprintf("%s %v %v", c.Name, c.MatcherKeys, c.Scores))
	}
	want := "repeated [{state.x yo true 0}] [{a.yaml:9 0.62 0.7}], " +
		"retried [{response hi false 0}] [{a.yaml:7:3 0.8500000000000001 0.6}], old [] []"
	if strings.Join(got, ", ") != want {
		t.Errorf("cases read\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
}

// TestScoresEscaped: a matcher's line quotes its scenario's file and
// name as every line of the history does, escaped: the files are
// anyone's, and a terminal would obey a control sequence among them.
func TestScoresEscaped(t *testing.T) {
	t.Parallel()
	r := scoredReport(t, 1, false, assert.Score{Key: "response", To: "hi\x1b[2J", Score: 0.9, Min: 0.5})
	r.Cases[0].Name = "s\x1b]0;owned\x07"
	var text strings.Builder
	if err := WriteText(&text, Build([]*Report{r})); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(text.String(), "\x1b\x07") || !strings.Contains(text.String(), `a.yaml: s\x1b]0;owned\a: similar "hi\x1b[2J"`) {
		t.Errorf("the matcher's line is not escaped:\n%q", text.String())
	}
}

// TestScoresNewestColumns: the text view's table of scores shows the
// newest scoreColumns reports and says which, so that a month of nightly
// reports keeps its lines short; the drift is still computed over every
// report, and the JSON history keeps every score.
func TestScoresNewestColumns(t *testing.T) {
	t.Parallel()
	n := scoreColumns + 2
	var reports []*Report
	for i := 1; i <= n; i++ {
		v := 0.95
		if i > n/2 {
			v = 0.7
		}
		if i == 1 {
			v = 0.99 // only in a report the table leaves out
		}
		reports = append(reports, scoredReport(t, i, false,
			assert.Score{Pos: diag.Pos{File: "a.yaml", Line: 7}, Key: "response", To: "booked", Score: v, Min: 0.6}))
	}
	h := Build(reports)
	var text strings.Builder
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	cols := ""
	for i := 3; i <= n; i++ {
		cols += fmt.Sprintf("%-6d", i) // a score's four characters and two of padding
	}
	for _, want := range []string{
		fmt.Sprintf("similar scores by report, reports 3–%d of %d (--json holds them all) (a repeated case's median over its runs; · not scored):\n", n, n),
		"\n" + cols + "threshold  matcher\n",
		"\n" + strings.Repeat("0.95  ", n/2-2) + strings.Repeat("0.70  ", n/2) + "≥ 0.60     a.yaml: s: similar \"booked\"\n",
		fmt.Sprintf("closer to the threshold in the newer reports (%d–%d) than in the older (1–%d)", n/2+1, n, n/2),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text view lacks\n%s\nin:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0.99") {
		t.Errorf("the table shows a report older than the newest %d:\n%s", scoreColumns, out)
	}
	// Reports that fit show every column, under the heading as it was.
	text.Reset()
	if err := WriteText(&text, Build(reports[n-scoreColumns:])); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\nsimilar scores by report (a repeated") || !strings.Contains(text.String(), "\n1     2     ") {
		t.Errorf("%d reports are not shown whole:\n%s", scoreColumns, text.String())
	}
	var doc strings.Builder
	if err := WriteJSON(&doc, h); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.String(), "0.99") {
		t.Errorf("the JSON history lacks the oldest score:\n%s", doc.String())
	}
}
