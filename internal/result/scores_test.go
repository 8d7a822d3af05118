package result

import (
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
)

// TestScoreSpreads: each similar matcher of a repeated case is spread
// over the runs by the attempt that decided each run (a retried one's
// scores are not the run's): its least, median and greatest score, and
// the runs it failed, below its threshold or, negated, not below it.
func TestScoreSpreads(t *testing.T) {
	at := diag.Pos{File: "s.yaml", Line: 9, Col: 22}
	score := func(v float64, not bool) assert.Score {
		return assert.Score{Pos: at, Key: "response", To: "hello", Score: v, Min: 0.6, Not: not}
	}
	attempt := func(run int, status Status, scores ...assert.Score) *Attempt {
		return &Attempt{Run: run, Status: status, Turns: []*Turn{{Index: 0}, {Index: 1, Scores: scores}}}
	}
	c := &Case{Repeat: &Repeat{Procedure: ProcedureFixed}, Attempts: []*Attempt{
		attempt(1, Passed, score(0.9, false), score(0.3, true)),
		attempt(2, Errored, score(0.1, false)), // retried: not the run's
		attempt(2, Failed, score(0.5, false), score(0.7, true)),
		attempt(3, Passed, score(0.7, false), score(0.8, true)),
		attempt(4, Passed, score(0.65, false)),
	}}
	got := c.ScoreSpreads()
	want := []ScoreSpread{
		{Pos: at, Key: "response", To: "hello", Min: 0.6, Runs: 4, Failed: 1, Low: 0.5, Median: (0.65 + 0.7) / 2, High: 0.9},
		{Pos: at, Key: "response", To: "hello", Min: 0.6, Not: true, Runs: 3, Failed: 2, Low: 0.3, Median: 0.7, High: 0.8},
	}
	if len(got) != len(want) {
		t.Fatalf("spreads = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spread %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	c.Repeat = nil
	if s := c.ScoreSpreads(); s != nil {
		t.Errorf("a case not repeated has spreads %+v", s)
	}
}
