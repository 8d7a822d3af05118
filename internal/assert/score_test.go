package assert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// TestCheckScores: every similar matcher a check evaluates gives its
// score, passing or failing, placed at its own similar key (else at its
// matcher, else at the check), under the check's key; an alternative of
// any past the one that passed is not evaluated and gives none; one
// under a not is marked, two nots cancel; the items of all after the
// one that failed are scored once, as they are evaluated once; a
// metric's values are scored once each.
func TestCheckScores(t *testing.T) {
	const said = "That sounds urgent. I'm putting you through to our on-call nurse right now."
	at := func(line int) diag.Pos { return diag.Pos{File: "s.yaml", Line: line, Col: 3} }
	sim := func(line int, to string, min float64) *Text {
		return &Text{Pos: at(line), Similar: &Similar{Pos: at(line + 100), To: to, Min: min}}
	}
	near := "That sounds urgent. I'm putting you through to a nurse."
	far := "Our opening hours are nine to five."
	const other = "something else entirely"
	type testCase struct {
		name string
		exp  *Expect
		want []string
	}
	line := func(pos int, key, to string, min float64, not bool) string {
		return fmt.Sprintf("s.yaml:%d:3 %s %q %.4f/%v not=%v", pos, key, to, Similarity(said, to), min, not)
	}
	cases := []testCase{
		{name: "no similar", exp: &Expect{Response: &Text{Contains: new("urgent")}, Node: &Text{Exact: new("UrgentHandoff")}}},
		{name: "passing", exp: &Expect{Response: sim(1, near, 0.75)},
			want: []string{line(101, "response", near, 0.75, false)}},
		{name: "failing, default threshold", exp: &Expect{Response: sim(1, far, 0)},
			want: []string{line(101, "response", far, DefaultSimilarity, false)}},
		{name: "no position of its own", exp: &Expect{Pos: at(9), Response: &Text{Similar: &Similar{To: near}}},
			want: []string{line(9, "response", near, DefaultSimilarity, false)}},
		{name: "at its matcher", exp: &Expect{Pos: at(9), Response: &Text{Pos: at(4), Similar: &Similar{To: near}}},
			want: []string{line(4, "response", near, DefaultSimilarity, false)}},
		{name: "at its alternative", exp: &Expect{Pos: at(9), Response: &Text{Pos: at(4), Any: []*Text{{Pos: at(5), Similar: &Similar{To: near}}}}},
			want: []string{line(5, "response", near, DefaultSimilarity, false)}},
		{name: "any stops at the first that passes", exp: &Expect{Response: &Text{Any: []*Text{sim(1, far, 0.9), sim(2, near, 0.7), sim(3, "never", 0)}}},
			want: []string{line(101, "response", far, 0.9, false), line(102, "response", near, 0.7, false)}},
		{name: "not", exp: &Expect{Response: &Text{Not: sim(1, far, 0)}},
			want: []string{line(101, "response", far, DefaultSimilarity, true)}},
		{name: "not not", exp: &Expect{Response: &Text{Not: &Text{Not: sim(1, near, 0.7)}}},
			want: []string{line(101, "response", near, 0.7, false)}},
		{name: "not, then beside it", exp: &Expect{Response: &Text{Similar: &Similar{Pos: at(200), To: near, Min: 0.7}, Not: sim(1, far, 0)}},
			want: []string{line(200, "response", near, 0.7, false), line(101, "response", far, DefaultSimilarity, true)}},
		{name: "all: the rest after a failure once each", exp: &Expect{Response: &Text{All: []*Text{sim(1, near, 0.7), sim(2, far, 0), sim(3, far, 0.5)}}},
			want: []string{line(101, "response", near, 0.7, false), line(102, "response", far, DefaultSimilarity, false), line(103, "response", far, 0.5, false)}},
		{name: "state key", exp: &Expect{State: []StateCheck{{Pos: at(5), Key: "summary", Match: sim(1, near, 0.7)}}},
			want: []string{line(101, "state.summary", near, 0.7, false)}},
		{name: "metric values, none passing", exp: &Expect{Metrics: []MetricCheck{{Pos: at(6), Name: "said", Match: sim(1, far, 0)}}},
			want: []string{
				fmt.Sprintf("s.yaml:101:3 metrics.said %q %.4f/0.8 not=false", far, Similarity(other, far)),
				line(101, "metrics.said", far, DefaultSimilarity, false)}},
		{name: "metric values, the first passing", exp: &Expect{Metrics: []MetricCheck{{Pos: at(6), Name: "said", Match: sim(1, other, 0)}}},
			want: []string{fmt.Sprintf("s.yaml:101:3 metrics.said %q 1.0000/0.8 not=false", other)}},
	}
	md := reply.Metadata{"currentNode": "UrgentHandoff", "state": map[string]any{"summary": said},
		"metrics": map[string]any{"said": []any{other, said}}}
	obs := Observation{Result: (&reply.TurnResult{Response: said}).SetMetadata(md)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, scores := CheckScores(tc.exp, obs, nil)
			var got []string
			for _, s := range scores {
				got = append(got, fmt.Sprintf("%s %s %q %.4f/%v not=%v", s.Pos, s.Key, s.To, s.Score, s.Min, s.Not))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("scores:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if tc.want == nil && scores != nil {
				t.Errorf("scores = %v, want nil", scores)
			}
			if fails := Check(tc.exp, obs, nil); len(fails) != len(checkFails(tc.exp, obs)) {
				t.Errorf("Check and CheckScores disagree on the failures")
			}
		})
	}
}

func checkFails(exp *Expect, obs Observation) []Failure {
	f, _ := CheckScores(exp, obs, nil)
	return f
}

// TestCheckScoresAllocateNothingWithoutSimilar: collecting scores costs
// a check with no similar matcher nothing: the scores of a reply are
// made only when there is one to keep.
func TestCheckScoresAllocateNothingWithoutSimilar(t *testing.T) {
	exp := &Expect{Response: &Text{Contains: new("urgent"), Any: []*Text{{Contains: new("nurse")}}, All: []*Text{{Contains: new("call")}}},
		State: []StateCheck{{Key: "day", Match: &Text{Exact: new("tuesday")}}}}
	md := reply.Metadata{"state": map[string]any{"day": "tuesday"}}
	obs := Observation{Result: (&reply.TurnResult{Response: "That sounds urgent, a nurse will call."}).SetMetadata(md)}
	if n := testing.AllocsPerRun(100, func() { CheckScores(exp, obs, nil) }); n != 0 {
		t.Errorf("a passing check without a similar matcher allocates %v times, want 0", n)
	}
}

// TestScoreNear: a score passing by less than NearMargin is near its
// threshold, for a negated matcher below it; a failing one is not near
// but failed.
func TestScoreNear(t *testing.T) {
	for _, tc := range []struct {
		s            Score
		passed, near bool
		relation     string
	}{
		{Score{Score: 0.72, Min: 0.7}, true, true, "0.72 ≥ 0.70"},
		{Score{Score: 0.7, Min: 0.7}, true, true, "0.70 ≥ 0.70"},
		{Score{Score: 0.76, Min: 0.7}, true, false, "0.76 ≥ 0.70"},
		{Score{Score: 0.6999, Min: 0.7}, false, false, "0.6999 < 0.70"},
		{Score{Score: 0.98, Min: 0.8}, true, false, "0.98 ≥ 0.80"},
		{Score{Score: 0.79, Min: 0.8, Not: true}, true, true, "0.79 < 0.80"},
		{Score{Score: 0.74, Min: 0.8, Not: true}, true, false, "0.74 < 0.80"},
		{Score{Score: 0.8, Min: 0.8, Not: true}, false, false, "0.80 ≥ 0.80"},
		{Score{Score: 0.86, Min: 0.855}, true, true, "0.86 ≥ 0.855"},
		// NearMargin above is no longer near; below, for a negated one.
		{Score{Score: 0.5 + NearMargin, Min: 0.5}, true, false, "0.55 ≥ 0.50"},
		{Score{Score: 0.5 - NearMargin, Min: 0.5, Not: true}, true, false, "0.45 < 0.50"},
	} {
		if p, n, r := tc.s.Passed(), tc.s.Near(), tc.s.Relation(); p != tc.passed || n != tc.near || r != tc.relation {
			t.Errorf("%+v: passed %v near %v %q, want %v %v %q", tc.s, p, n, r, tc.passed, tc.near, tc.relation)
		}
	}
}

// TestCheckScoresExpanded: a similar text with a ${...} reference is
// scored as expanded, still placed at its own similar key.
func TestCheckScoresExpanded(t *testing.T) {
	pos := diag.Pos{File: "s.yaml", Line: 7, Col: 22}
	exp := &Expect{Response: &Text{Pos: diag.Pos{File: "s.yaml", Line: 7, Col: 11}, Similar: &Similar{Pos: pos, To: "Your code is ${code}."}}}
	expand := func(s string) (string, error) { return strings.ReplaceAll(s, "${code}", "AB12"), nil }
	_, scores := CheckScores(exp, Observation{Result: &reply.TurnResult{Response: "Your code is AB12."}}, expand)
	if len(scores) != 1 || scores[0].Pos != pos || scores[0].To != "Your code is AB12." || scores[0].Score != 1 {
		t.Errorf("scores = %+v, want one of 1 against the expanded text at %s", scores, pos)
	}
}
