package runner

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestSimilarScoresRecorded: every similar matcher a check evaluates
// leaves its score on the turn whose reply it read, passing or failing,
// with where it was written, the key, the text and the threshold; an
// alternative of any that was not reached leaves none, and one under a
// not is marked. A reply over real HTTP from the simulator's clinic.
func TestSimilarScoresRecorded(t *testing.T) {
	t.Parallel()
	const urgent = "That sounds urgent. I'm putting you through to our on-call nurse right now."
	const suite = `suite: Scores
agent: clinic
scenarios:
  - name: passes
    greeting:
      response: {similar: {to: "Hello, you've reached Riverside Clinic. I can book you an appointment.", min: 0.6}}
    turns:
      - say: I have chest pain
        expect:
          response:
            any:
              - similar: {to: "Our opening hours are nine to five.", min: 0.9}
              - similar: {to: "That sounds urgent. I'm putting you through to a nurse.", min: 0.75}
              - similar: "never reached"
            not: {similar: "Hello, you've reached Riverside Clinic."}
  - name: fails
    turns:
      - say: I have chest pain
        expect:
          response: {similar: "Our opening hours are nine to five."}
  - name: none
    turns:
      - say: I have chest pain
        expect:
          response: {contains: urgent}
`
	res := runYAML(t, fstest.MapFS{"scores.yaml": {Data: []byte(suite)}}, "scores.yaml")
	cases := res.Files[0].Cases
	line := func(s assert.Score) string {
		return fmt.Sprintf("%s %s %q %.4f min %v not=%v", s.Pos, s.Key, s.To, s.Score, s.Min, s.Not)
	}
	scoresOf := func(c *result.Case, turn int) string {
		var out []string
		for _, s := range c.Last().Turns[turn].Scores {
			out = append(out, line(s))
		}
		return strings.Join(out, "\n")
	}
	want := func(pos, to, reply string, min float64, not bool) string {
		return line(assert.Score{Pos: posIn("scores.yaml", pos), Key: "response", To: to, Score: assert.Similarity(reply, to), Min: min, Not: not})
	}
	greeting := cases[0].Last().Turns[0].Reply().Response
	for _, tc := range []struct {
		name string
		c    *result.Case
		turn int
		want []string
	}{
		{"greeting", cases[0], 0, []string{
			want("6:18", "Hello, you've reached Riverside Clinic. I can book you an appointment.", greeting, 0.6, false)}},
		{"any and not", cases[0], 1, []string{
			want("12:17", "Our opening hours are nine to five.", urgent, 0.9, false),
			want("13:17", "That sounds urgent. I'm putting you through to a nurse.", urgent, 0.75, false),
			want("15:19", "Hello, you've reached Riverside Clinic.", urgent, assert.DefaultSimilarity, true)}},
		{"failing", cases[1], 1, []string{
			want("20:22", "Our opening hours are nine to five.", urgent, assert.DefaultSimilarity, false)}},
	} {
		if got := scoresOf(tc.c, tc.turn); got != strings.Join(tc.want, "\n") {
			t.Errorf("%s: scores:\n%s\nwant:\n%s", tc.name, got, strings.Join(tc.want, "\n"))
		}
	}
	if cases[0].Status != result.Passed || cases[1].Status != result.Failed {
		t.Errorf("statuses = %s, %s; want passed, failed", cases[0].Status, cases[1].Status)
	}
	for _, tr := range cases[2].Last().Turns {
		if tr.Scores != nil {
			t.Errorf("a turn with no similar check has scores %v", tr.Scores)
		}
	}
}

// posIn is the position "line:col" in file.
func posIn(file, lineCol string) diag.Pos {
	var p diag.Pos
	p.File = file
	fmt.Sscanf(lineCol, "%d:%d", &p.Line, &p.Col)
	return p
}

// TestGreetingScoredAfterTurns: a check of the greeting made after the
// turns (a step handed over later, as godog's are) keeps its scores on
// the greeting, not on the last turn.
func TestGreetingScoredAfterTurns(t *testing.T) {
	t.Parallel()
	const welcome = "Welcome to Bella Tavola! I can book you a table or answer questions about our menu, allergens and opening hours."
	sc := booking("books", 10)
	exp := &assert.Expect{Pos: pos(40, 7), Response: &assert.Text{Pos: pos(40, 9), Similar: &assert.Similar{To: welcome, Min: 0.9}}}
	g := check(exp)
	g.Greeting = true
	sc.Steps = append(sc.Steps, g)
	e := newEnv(t, sim.Options{Seed: 1})
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	a := res.Files[0].Cases[0].Last()
	if res.Files[0].Cases[0].Status != result.Passed {
		t.Fatalf("%s%s", a.Status, describe(res.Files[0].Cases[0]))
	}
	if s := a.Turns[0].Scores; len(s) != 1 || s[0].Score != 1 || s[0].Pos != pos(40, 9) {
		t.Errorf("greeting scores = %+v, want its similar check's 1", s)
	}
	for _, tr := range a.Turns[1:] {
		if tr.Scores != nil {
			t.Errorf("turn %d has the greeting's scores %+v", tr.Index, tr.Scores)
		}
	}
}
