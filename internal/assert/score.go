package assert

import (
	"strconv"

	"github.com/agenttest/agenttest/internal/diag"
)

// Score is the similarity one `similar` matcher measured on one reply,
// whether it passed or not. A passing check says nothing of how close it
// came: a reply at 0.71 against a threshold of 0.70 is as green as one at
// 0.98, so the drift of an LLM agent toward its threshold would show only
// the night it fails. The checks that compute the score keep it here.
type Score struct {
	// Pos is where the matcher was written: its `similar` key in YAML,
	// the step in a feature.
	Pos diag.Pos `json:"pos"`
	// Key names the checked value as Failure.Key does: "response",
	// "state.summary".
	Key string `json:"key"`
	// To is the text the value was compared with, after its ${...}
	// references were expanded; whole (reports cut it for one line).
	To string `json:"to"`
	// Score is Similarity of the value and To; Min the threshold the
	// matcher held it to (DefaultSimilarity when it gave none).
	Score float64 `json:"score"`
	Min   float64 `json:"min"`
	// Not is set when the matcher sits under a `not`, an odd number of
	// them: it passes when the score is below Min.
	Not bool `json:"not,omitempty"`
}

// NearMargin is how far above its threshold a passing score counts as
// near it (Near): 0.05 is a few words of a reply of a sentence or two
// (one changed word of ten moves the score by about 0.05 to 0.1), the
// wobble an LLM agent's rephrasing brings from one run to the next, so a
// check passing by less may fail on the next run without anything
// having changed.
const NearMargin = 0.05

// Passed says whether the matcher held: the score reached Min, or for a
// negated one stayed below it.
func (s Score) Passed() bool { return (s.Score >= s.Min) != s.Not }

// Near says whether the matcher passed by less than NearMargin: the
// early warning of a reply drifting toward its threshold.
func (s Score) Near() bool {
	if !s.Passed() {
		return false
	}
	if s.Not {
		return s.Score > s.Min-NearMargin
	}
	return s.Score < s.Min+NearMargin
}

// Relation writes the score against its threshold, "0.93 ≥ 0.80" or
// "0.63 < 0.80", with as many decimals as it takes for the numbers to
// read as the comparison the check made (formatMin, scoreBelow).
func (s Score) Relation() string {
	return FormatScore(s.Score, s.Min) + relation(s.Score, s.Min) + formatMin(s.Min)
}

// Name names the matcher by what it checks: "similar" for the reply,
// "state.summary similar" for another value, with "not " before a
// negated one.
func (s Score) Name() string {
	w := "similar"
	if s.Key != "response" && s.Key != "" {
		w = s.Key + " similar"
	}
	if s.Not {
		w = "not " + w
	}
	return w
}

// FormatScore writes a similarity measured against the threshold min:
// two decimals, or as many more as it takes for a score below min to
// read below it (0.797 against 0.8, not 0.80).
func FormatScore(score, min float64) string {
	if score < min {
		return scoreBelow(score, min)
	}
	return strconv.FormatFloat(score, 'f', 2, 64)
}

// FormatMin writes a similarity threshold as the failure messages do:
// two decimals, or in full when it has more.
func FormatMin(min float64) string { return formatMin(min) }

func relation(score, min float64) string {
	if score < min {
		return " < "
	}
	return " ≥ "
}

// scoring collects the Scores of one check: the checker sets it up for
// the key it checks and the matchers report to it as they evaluate. A
// nil *scoring collects nothing (Text.Match, the retries of a metric's
// values), and a check of a key with no similar matcher never calls it,
// so the turns that have none allocate nothing for it.
type scoring struct {
	// list is the checker's scores, handed over and back by value: a
	// pointer into the checker would move it to the heap on every Check.
	list []Score
	l    label
	// pos is where the check is placed, for a matcher whose Similar has
	// no position of its own.
	pos diag.Pos
	// not counts the `not`s around the matcher evaluated, mod 2.
	not bool
}

// add records the score of s, a similar matcher of t.
func (sc *scoring) add(t *Text, s *Similar, got, want float64) {
	if sc == nil {
		return
	}
	pos := s.Pos
	if pos.IsZero() {
		pos = t.Pos
	}
	if pos.IsZero() {
		pos = sc.pos
	}
	sc.list = append(sc.list, Score{Pos: pos, Key: sc.l.Key(), To: s.To, Score: got, Min: want, Not: sc.not})
}

// flip turns sc to the matcher under a `not`, or back from it.
func (sc *scoring) flip() {
	if sc != nil {
		sc.not = !sc.not
	}
}
