package compare

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// TestScoreChanges: each similar check of a turn is paired with the
// baseline's matcher written at the same place for the same key (and
// as negated or not), the first of them when the baseline scored it
// more than once; one that scored the same, or that the baseline did
// not score, is no change.
func TestScoreChanges(t *testing.T) {
	at := func(line int) diag.Pos { return diag.Pos{File: "s.yaml", Line: line, Col: 22} }
	score := func(line int, key string, v float64, not bool) assert.Score {
		return assert.Score{Pos: at(line), Key: key, Score: v, Min: 0.7, Not: not}
	}
	b := &result.Turn{Index: 1, Scores: []assert.Score{
		score(5, "response", 0.9, false), score(6, "response", 0.8, false), score(7, "response", 0.5, true), score(8, "state.x", 0.75, false),
		score(9, "state.y", 0.3, false),    // another key
		score(6, "response", 0.85, false)}} // a matcher scored twice (a metric's values): the first
	c := &result.Turn{Index: 1, Say: "hi", Scores: []assert.Score{
		score(6, "response", 0.72, false), // paired with line 6, not 5
		score(5, "response", 0.9, false),  // the same score
		score(7, "response", 0.6, false),  // not negated on the baseline
		score(8, "state.x", 0.65, false),
		score(9, "response", 0.1, false), // not on the baseline
	}}
	var got []string
	for _, ch := range scoreChanges(b, c) {
		got = append(got, ch.Pos.String()+": "+ch.Baseline+" → "+ch.Candidate)
	}
	want := []string{
		"s.yaml:6:22: similar 0.80 ≥ 0.70 → similar 0.72 ≥ 0.70",
		"s.yaml:8:22: state.x similar 0.75 ≥ 0.70 → state.x similar 0.65 < 0.70",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
