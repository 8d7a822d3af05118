package result

import (
	"slices"

	"github.com/agenttest/agenttest/internal/diag"
)

// ScoreSpread is how one similar matcher of a repeated case scored over
// its runs: where an LLM agent's variance shows, and how far its
// replies sit from the threshold, which a pass rate alone hides.
type ScoreSpread struct {
	// Pos, Key, To, Min and Not are the matcher's (assert.Score); To is
	// the text of its first run.
	Pos diag.Pos
	Key string
	To  string
	Min float64
	Not bool
	// Runs counts the runs that scored the matcher; Failed those whose
	// score failed it: below Min, or for a negated matcher not below.
	Runs   int
	Failed int
	// Low, Median and High are the least, the median (the mean of the
	// middle two of an even count) and the greatest score.
	Low, Median, High float64
}

// spreadKey tells the matchers of a case apart: a matcher is where it
// was written and what it checks.
type spreadKey struct {
	pos diag.Pos
	key string
	not bool
}

// ScoreSpreads is the spread of every similar matcher of a repeated
// case over the runs that scored it, by the deciding attempt of each run
// (a retried attempt's scores are not the run's), in the order the
// matchers were first scored. A matcher scored more than once in a run
// (a metric's values) counts each score. Nil for a case that is not
// repeated or scored nothing.
func (c *Case) ScoreSpreads() []ScoreSpread {
	if c.Repeat == nil {
		return nil
	}
	var out []ScoreSpread
	var scores [][]float64
	index := map[spreadKey]int{}
	for _, r := range c.Runs() {
		for _, t := range r.Last().Turns {
			if t == nil {
				continue
			}
			for _, s := range t.Scores {
				k := spreadKey{s.Pos, s.Key, s.Not}
				i, ok := index[k]
				if !ok {
					i = len(out)
					index[k] = i
					out = append(out, ScoreSpread{Pos: s.Pos, Key: s.Key, To: s.To, Min: s.Min, Not: s.Not})
					scores = append(scores, nil)
				}
				out[i].Runs++
				if !s.Passed() {
					out[i].Failed++
				}
				scores[i] = append(scores[i], s.Score)
			}
		}
	}
	for i, v := range scores {
		slices.Sort(v)
		n := len(v)
		out[i].Low, out[i].High = v[0], v[n-1]
		out[i].Median = (v[(n-1)/2] + v[n/2]) / 2
	}
	return out
}
