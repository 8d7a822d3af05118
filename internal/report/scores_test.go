package report

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// TestNearNotes: a case that passed, on its first attempt or on a retry,
// notes each similar check of its passing attempt that passed near its
// threshold; one that failed says its failure instead, and a repeated
// one its spread.
func TestNearNotes(t *testing.T) {
	at := diag.Pos{File: "s.yaml", Line: 9, Col: 22}
	near := assert.Score{Pos: at, Key: "response", To: "hi", Score: 0.72, Min: 0.7}
	clear := assert.Score{Pos: at, Key: "state.summary", To: "hi", Score: 0.9, Min: 0.7}
	attempt := func(status result.Status, s ...assert.Score) *result.Attempt {
		return &result.Attempt{Status: status, Turns: []*result.Turn{{Index: 1, Scores: s}}}
	}
	for _, tc := range []struct {
		name string
		c    *result.Case
		want string
	}{
		{"passed", &result.Case{Status: result.Passed, Attempts: []*result.Attempt{attempt(result.Passed, clear, near)}},
			"near threshold: similar 0.72 ≥ 0.70 at s.yaml:9:22"},
		{"flaky, by its passing attempt", &result.Case{Status: result.Flaky, Attempts: []*result.Attempt{
			attempt(result.Failed, assert.Score{Pos: at, Key: "node", Score: 0.71, Min: 0.7}), attempt(result.Passed, near)}},
			"near threshold: similar 0.72 ≥ 0.70 at s.yaml:9:22"},
		{"failed", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{attempt(result.Failed, near)}}, ""},
		{"repeated", &result.Case{Status: result.Passed, Repeat: &result.Repeat{}, Attempts: []*result.Attempt{attempt(result.Passed, near)}}, ""},
	} {
		if got := strings.Join(nearNotes(tc.c), "\n"); got != tc.want {
			t.Errorf("%s: notes %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestScoreLines: a score names the value it checked when it is not the
// reply, and a negated matcher as such, in a transcript's line and in a
// repeated case's spread, whose failing runs of a negated matcher are
// those at or above its threshold.
func TestScoreLines(t *testing.T) {
	at := diag.Pos{File: "s.yaml", Line: 9, Col: 22}
	st := style{}
	for _, tc := range []struct{ got, want string }{
		{st.scoreLine(assert.Score{Pos: at, Key: "state.summary", To: "hi", Score: 0.9, Min: 0.7}),
			`state.summary similar 0.90 ≥ 0.70 to "hi" (s.yaml:9:22)`},
		{st.scoreLine(assert.Score{Key: "response", To: strings.Repeat("a b ", 20), Score: 0.3, Min: 0.8, Not: true}),
			`not similar 0.30 < 0.80 to "` + strings.Repeat("a b ", 15) + `…"`},
		{spreadLine(result.ScoreSpread{Pos: at, Key: "response", Min: 0.6, Not: true, Runs: 3, Failed: 2, Low: 0.3, Median: 0.7, High: 0.8}),
			"not similar at s.yaml:9:22 over 3 runs: lowest 0.30, median 0.70, highest 0.80; 2 at or above the threshold 0.60"},
		{spreadLine(result.ScoreSpread{Key: "response", Min: 0.6, Runs: 1, Low: 0.7, Median: 0.7, High: 0.7}),
			"similar over 1 run: lowest 0.70, median 0.70, highest 0.70; 0 below the threshold 0.60"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}
