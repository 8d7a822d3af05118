package report

import (
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// This file renders the scores of the similar matchers (assert.Score):
// how close each reply came to its threshold, which a pass alone does
// not say.

// scoreLine is one score in a transcript, under its turn:
// `similar 0.93 ≥ 0.80 to "That sounds urgent…" (clinic.yaml:32:22)`.
func (st style) scoreLine(s assert.Score) string {
	line := s.Name() + " " + s.Relation() + " to " + st.compared().quotedShort(s.To)
	if p := s.Pos.String(); p != "" {
		line += " (" + p + ")"
	}
	return st.flat(line)
}

// quotedShort is shortValue always quoted: the text a score was measured
// against, cut as a one-line summary cuts a value.
func (st style) quotedShort(s string) string {
	v := st.shortValue(s)
	if strings.HasPrefix(v, `"`) {
		return v
	}
	if head, ok := strings.CutSuffix(v, "…"); ok {
		return `"` + head + `…"`
	}
	return `"` + v + `"`
}

// nearNotes are the notes of a case that passed whose similar checks
// passed by less than assert.NearMargin, on its passing attempt:
// `near threshold: similar 0.72 ≥ 0.70 at clinic.yaml:32:22`. A repeated
// case says it in its spread instead (spreadLines).
func nearNotes(c *result.Case) []string {
	var notes []string
	for _, s := range nearScores(c) {
		notes = append(notes, nearNote(s))
	}
	return notes
}

// nearScores are the scores nearNotes notes.
func nearScores(c *result.Case) []assert.Score {
	if c.Repeat != nil || (c.Status != result.Passed && c.Status != result.Flaky) {
		return nil
	}
	a := c.Last()
	if a == nil {
		return nil
	}
	var near []assert.Score
	for _, t := range a.Turns {
		if t == nil {
			continue
		}
		for _, s := range t.Scores {
			if s.Near() {
				near = append(near, s)
			}
		}
	}
	return near
}

// nearNote is the note of one score near its threshold.
func nearNote(s assert.Score) string {
	note := "near threshold: " + s.Name() + " " + s.Relation()
	if p := s.Pos.String(); p != "" {
		note += " at " + p
	}
	return note
}

// spreadLines are the lines of a repeated case's similar matchers, one
// each: `similar at suites/restaurant.yaml:240:13 over 30 runs: lowest
// 0.31, median 0.71, highest 0.74; 11 below the threshold 0.60`.
func spreadLines(c *result.Case) []string {
	spreads := c.ScoreSpreads()
	lines := make([]string, 0, len(spreads))
	for _, sp := range spreads {
		lines = append(lines, spreadLine(sp))
	}
	return lines
}

func spreadLine(sp result.ScoreSpread) string {
	at := ""
	if p := sp.Pos.String(); p != "" {
		at = " at " + p
	}
	failed := "below"
	if sp.Not {
		failed = "at or above"
	}
	// lowest and highest, not min and max: a scenario's `min` is the
	// threshold, which the line gives last.
	return fmt.Sprintf("%s%s over %d %s: lowest %s, median %s, highest %s; %d %s the threshold %s",
		(assert.Score{Key: sp.Key, Not: sp.Not}).Name(), at, sp.Runs, plural(sp.Runs, "run", "runs"),
		assert.FormatScore(sp.Low, sp.Min), assert.FormatScore(sp.Median, sp.Min), assert.FormatScore(sp.High, sp.Min),
		sp.Failed, failed, assert.FormatMin(sp.Min))
}
