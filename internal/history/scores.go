package history

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/stats"
)

// A similar matcher's score says how far a passing reply sat from its
// threshold, which a verdict does not: an LLM agent drifting toward it
// (0.95, 0.88, 0.81, 0.77 against 0.75) is green every night until the
// night it fails. History follows each matcher's score over the reports
// and names the ones that moved toward their threshold.

// MatcherKey identifies a similar matcher of a scenario across reports:
// what it checks (Key, Not) and the text it compares with (To), and N,
// its place among the scenario's matchers with that key and text (0 for
// the first), for a scenario that checks one text twice. Its position is
// not part of it: a line added above moves every matcher below, and the
// matcher is the same. An edited text is another matcher, since its
// scores measure something else.
type MatcherKey struct {
	Key, To string
	Not     bool
	N       int
}

// Scored is a matcher's score in one report: the one score of a case run
// once (its deciding attempt's; the median where a metric's values
// scored it more than once), the median of a repeated case's runs; Min
// the threshold it was held to there.
type Scored struct {
	Pos        diag.Pos
	Score, Min float64
}

// Matcher is one similar matcher's record over the reports.
type Matcher struct {
	MatcherKey
	// Scores has one entry per report, nil where the matcher was not
	// scored (a report written before scores were kept, a scenario not
	// run, a turn not reached).
	Scores []*Scored
	// Older and Newer are the medians of its scores in the older and the
	// newer half of the reports (History.Halves; reports of a changed
	// deployment aside), HasOlder and HasNewer whether either half scored
	// it. Latest is its score in the newest report that scored it.
	Older, Newer       float64
	HasOlder, HasNewer bool
	Latest             *Scored
	// Near is set when the newer half's median passes by less than
	// assert.NearMargin at Latest's threshold. Drifting is set when the
	// newer half moved toward that threshold and the matcher still passes
	// in the newest report that scored it: by more than
	// assert.NearMargin, or at all when Near.
	Drifting, Near bool
}

// Name names the matcher as the reports do: "similar", "state.summary
// similar", "not similar".
func (m *Matcher) Name() string { return assert.Score{Key: m.Key, Not: m.Not}.Name() }

// score is s of m at its latest threshold: the comparison it would make.
func (m *Matcher) score(s float64) assert.Score {
	return assert.Score{Key: m.Key, Not: m.Not, Score: s, Min: m.Latest.Min}
}

// caseScores are the matchers of one case in one report, each by its
// MatcherKey, in the order they were first scored. scores are the scores
// of one run (the deciding attempt's turns'), or a repeated case's
// medians, in the order the report lists them; a matcher is one position,
// key and negation there, and scored more than once it counts its median.
func caseScores(scores []assert.Score) ([]MatcherKey, []Scored) {
	type at struct {
		pos diag.Pos
		key string
		not bool
	}
	index := map[at]int{}
	var keys []MatcherKey
	var values [][]float64
	var out []Scored
	seen := map[MatcherKey]int{}
	for _, s := range scores {
		a := at{s.Pos, s.Key, s.Not}
		i, ok := index[a]
		if !ok {
			k := MatcherKey{Key: s.Key, To: s.To, Not: s.Not}
			k.N = seen[k]
			seen[k]++
			i = len(keys)
			index[a] = i
			keys = append(keys, k)
			values = append(values, nil)
			out = append(out, Scored{Pos: s.Pos, Min: s.Min})
		}
		values[i] = append(values[i], s.Score)
	}
	for i, v := range values {
		out[i].Score = stats.Quantile(v, 0.5)
	}
	return keys, out
}

// addScores records the scores of c, a case of s in report i of n.
func (s *Scenario) addScores(c Case, i, n int) {
	for j, k := range c.MatcherKeys {
		m := s.matcher(k, n)
		sc := c.Scores[j]
		// A name twice in one file (examples rows make distinct names)
		// keeps the lower score, as it keeps the worse verdict.
		if old := m.Scores[i]; old == nil || sc.Score < old.Score {
			m.Scores[i] = &sc
		}
	}
}

// matcher is the record of the matcher k, made for n reports when new.
func (s *Scenario) matcher(k MatcherKey, n int) *Matcher {
	for _, m := range s.Matchers {
		if m.MatcherKey == k {
			return m
		}
	}
	m := &Matcher{MatcherKey: k, Scores: make([]*Scored, n)}
	s.Matchers = append(s.Matchers, m)
	return m
}

// trend works out the medians of its halves and whether it drifts toward
// its threshold.
func (m *Matcher) trend(reports []*Report, older, newer []int) {
	for _, sc := range m.Scores {
		if sc != nil {
			m.Latest = sc
		}
	}
	m.Older, m.HasOlder = m.median(reports, older)
	m.Newer, m.HasNewer = m.median(reports, newer)
	if m.Latest == nil || !m.HasNewer {
		return
	}
	m.Near = m.score(m.Newer).Near()
	if !m.HasOlder || !m.score(m.Latest.Score).Passed() {
		return
	}
	// toward is how far the newer half moved toward the threshold: down,
	// or up for a negated matcher, which passes below it.
	toward := m.Older - m.Newer
	if m.Not {
		toward = -toward
	}
	m.Drifting = toward > assert.NearMargin || toward > 0 && m.Near
}

// median is the median of its scores in the reports of the indexes idx,
// reports of a changed deployment aside (their scores are of two
// deployments), and whether there is any.
func (m *Matcher) median(reports []*Report, idx []int) (float64, bool) {
	var v []float64
	for _, i := range idx {
		if sc := m.Scores[i]; sc != nil && !reports[i].Changed {
			v = append(v, sc.Score)
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return stats.Quantile(v, 0.5), true
}

// Drifting are the similar matchers whose scores moved toward their
// threshold in the newer reports (Matcher.Drifting), with their
// scenarios, in order.
func (h *History) Drifting() []ScenarioMatcher {
	var out []ScenarioMatcher
	for _, s := range h.Scenarios {
		for _, m := range s.Matchers {
			if m.Drifting {
				out = append(out, ScenarioMatcher{Scenario: s, Matcher: m})
			}
		}
	}
	return out
}

// ScenarioMatcher is a matcher with its scenario.
type ScenarioMatcher struct {
	Scenario *Scenario
	Matcher  *Matcher
}
