package coverage_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// conv builds a case of agent whose attempts went through the given node
// traces, one []string per turn (turn 0 is the greeting).
func conv(agent, name string, line int, attempts ...[][]string) *result.Case {
	c := &result.Case{Name: name, Agent: agent, Pos: diag.Pos{File: "s.yaml", Line: line, Col: 5}, Status: result.Passed}
	for i, turns := range attempts {
		a := &result.Attempt{Number: i + 1, Status: result.Passed}
		for j, trace := range turns {
			t := &result.Turn{Index: j}
			if trace != nil {
				raw, _ := json.Marshal(map[string]any{"nodeTrace": trace})
				t.Result = &reply.TurnResult{RawMetadata: raw}
			}
			a.Turns = append(a.Turns, t)
		}
		c.Attempts = append(c.Attempts, a)
	}
	return c
}

func res(cases ...*result.Case) *result.Result {
	return &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: cases}}}
}

func TestReportsAlone(t *testing.T) {
	t.Parallel()
	r := res(
		// Two attempts: the path does not run on from the first attempt's
		// last node (B) into the second's greeting (G).
		conv("bot", "one", 3, [][]string{{"G"}, {"A", "B"}}, [][]string{{"G"}, {"A"}, {"B", "A"}}),
		// A turn without a reply (nil trace) leaves the path where it was.
		conv("bot", "two", 9, [][]string{{"G"}, nil, {"C"}}),
		conv("other", "three", 12, [][]string{{"X"}}),
		// A case with no agent (it never ran) has no coverage.
		&result.Case{Name: "skipped", Status: result.Skipped},
	)
	rep := coverage.Compute(r, nil)
	if len(rep.Agents) != 2 || rep.Agents[0].Agent != "bot" || rep.Agents[1].Agent != "other" {
		t.Fatalf("agents = %+v", rep.Agents)
	}
	bot := rep.Agents[0]
	if bot.Source != coverage.SourceObserved || len(bot.Unvisited) != 0 || bot.NodesTotal != 4 || bot.Percent != 100 {
		t.Errorf("bot = %+v", bot)
	}
	type nodeCount struct {
		name         string
		turns, cases int
	}
	var got []nodeCount
	for _, n := range bot.Nodes {
		got = append(got, nodeCount{n.Name, n.Turns, n.Cases})
	}
	want := []nodeCount{{"A", 3, 1}, {"B", 2, 1}, {"C", 1, 1}, {"G", 3, 2}}
	if !slices.Equal(got, want) {
		t.Errorf("nodes = %v, want %v", got, want)
	}
	var trs []string
	for _, tr := range bot.Transitions {
		trs = append(trs, fmt.Sprintf("%s>%s:%d", tr.From, tr.To, tr.Turns))
	}
	if w := []string{"A>B:2", "B>A:1", "G>A:2", "G>C:1"}; !slices.Equal(trs, w) {
		t.Errorf("transitions = %v, want %v", trs, w)
	}
	// B>A was taken at turn 2 of case "one" (its second attempt); the
	// reach names the case and where it is written.
	ba := bot.Transitions[1]
	if w := []coverage.Reach{{Case: "one", Pos: diag.Pos{File: "s.yaml", Line: 3, Col: 5}, Turn: 2}}; !reflect.DeepEqual(ba.Reached, w) {
		t.Errorf("B>A reached = %+v", ba.Reached)
	}
	// A was reached at turn 1 of "one" in both attempts: one reach.
	if a := bot.Nodes[0]; len(a.Reached) != 2 || a.Reached[0].Turn != 1 || a.Reached[1].Turn != 2 {
		t.Errorf("A reached = %+v", a.Reached)
	}
}

func TestUniverse(t *testing.T) {
	t.Parallel()
	run := res(conv("bot", "one", 3, [][]string{{"G"}, {"A", "Z"}}))

	// From the definition: unvisited nodes are listed, and a node the
	// definition lacks is reported as such.
	u := coverage.Universe{}
	u.Add("bot", coverage.SourceDefinition, "G", "A", "B", "C")
	u.Add("bot", coverage.SourceObserved, "Q") // a definition outranks observations
	u.Add("unused", coverage.SourceDefinition, "N")
	rep := coverage.Compute(run, u)
	if len(rep.Agents) != 1 {
		t.Fatalf("agents = %d, want only the agent the run talked to", len(rep.Agents))
	}
	bot := rep.Agents[0]
	if !slices.Equal(bot.Unvisited, []string{"B", "C"}) || bot.NodesVisited != 3 || bot.NodesTotal != 5 || bot.Percent != 60 {
		t.Errorf("bot: visited %d of %d (%.0f%%), unvisited %v", bot.NodesVisited, bot.NodesTotal, bot.Percent, bot.Unvisited)
	}
	for _, n := range bot.Nodes {
		if n.Undefined != (n.Name == "Z") {
			t.Errorf("node %s undefined = %v", n.Name, n.Undefined)
		}
	}

	// On a real platform: every node seen in earlier reports.
	earlier := res(conv("bot", "old", 3, [][]string{{"G"}, {"B"}}), conv("gone", "x", 4, [][]string{{"Y"}}))
	rep = coverage.Compute(run, coverage.Observed(earlier))
	bot = rep.Agents[0]
	if bot.Source != coverage.SourceObserved || !slices.Equal(bot.Unvisited, []string{"B"}) || bot.NodesTotal != 4 {
		t.Errorf("observed: %+v", bot)
	}

	// An earlier coverage report carries its universe, visited or not;
	// an observed universe gives way to a definition.
	from := coverage.FromReport(coverage.Compute(run, u))
	if k := from["bot"]; k.Source != coverage.SourceDefinition || len(k.Nodes) != 4 || k.Nodes["Z"] {
		t.Errorf("FromReport = %+v", k)
	}
	obs := coverage.Observed(earlier)
	obs.Merge(from)
	if k := obs["bot"]; k.Source != coverage.SourceDefinition || len(k.Nodes) != 4 {
		t.Errorf("merged = %+v", k)
	}
	// What was only observed goes when a definition comes: Q is not a
	// node of bot's definition, so it is not one never visited.
	seen := coverage.Universe{}
	seen.Add("bot", coverage.SourceObserved, "Q", "G")
	seen.Merge(from)
	if k := seen["bot"]; k.Source != coverage.SourceDefinition || len(k.Nodes) != 4 || k.Nodes["Q"] {
		t.Errorf("observed, then a definition = %+v", k)
	}
	// An empty name is no node; an earlier report whose source is
	// neither (edited, or of a later version) counts as observed: it
	// cannot say which nodes an agent lacks.
	u.Add("bot", coverage.SourceDefinition, "")
	if u["bot"].Nodes[""] {
		t.Errorf("an empty name became a node: %+v", u["bot"])
	}
	odd := coverage.FromReport(&coverage.Report{Agents: []*coverage.Agent{{Agent: "bot", Source: "", Nodes: []*coverage.Node{{Name: "G"}}}}})
	if k := odd["bot"]; k.Source != coverage.SourceObserved {
		t.Errorf("FromReport of a source neither = %+v", k)
	}
}

func TestReachedIsBounded(t *testing.T) {
	t.Parallel()
	var cases []*result.Case
	for i := range 3 * coverage.MaxReached {
		cases = append(cases, conv("bot", fmt.Sprint("case ", i), i+1, [][]string{{"G"}, {"A"}}))
	}
	rep := coverage.Compute(res(cases...), nil)
	for _, n := range rep.Agents[0].Nodes {
		if n.Turns != 3*coverage.MaxReached || n.Cases != 3*coverage.MaxReached || len(n.Reached) != coverage.MaxReached {
			t.Errorf("%s: turns %d, cases %d, reached %d", n.Name, n.Turns, n.Cases, len(n.Reached))
		}
		if n.Reached[0].Case != "case 0" {
			t.Errorf("%s: first reach %+v, want report order", n.Name, n.Reached[0])
		}
	}
	if tr := rep.Agents[0].Transitions[0]; tr.Turns != 3*coverage.MaxReached || len(tr.Reached) != coverage.MaxReached {
		t.Errorf("G>A: %+v", tr)
	}
}

// The model is plain data: it survives JSON unchanged, with empty lists
// as [] rather than null.
func TestJSON(t *testing.T) {
	t.Parallel()
	u := coverage.Universe{}
	u.Add("bot", coverage.SourceDefinition, "G", "A", "B")
	rep := coverage.Compute(res(conv("bot", "one", 3, [][]string{{"G"}})), u)
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back coverage.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&back, rep) {
		t.Errorf("round trip:\n%s\n%+v", b, back)
	}
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	agent := doc["agents"].([]any)[0].(map[string]any)
	if agent["transitions"] == nil || agent["nodes"].([]any)[0].(map[string]any)["reached"] == nil {
		t.Errorf("empty lists encoded as null: %s", b)
	}
}

// The text and JSON forms of `agenttest coverage`, as golden files.
func TestRender(t *testing.T) {
	t.Parallel()
	u := coverage.Universe{}
	u.Add("bot", coverage.SourceDefinition, "G", "A", "B", "C")
	rep := coverage.Compute(res(
		conv("bot", "one", 3, [][]string{{"G"}, {"A", "Z"}}),
		conv("bot", "two\x1b[31m", 9, [][]string{{"G"}, {"B"}}),
		conv("live", "three", 12, [][]string{{"X"}, {"Y"}}),
	), u)
	var text, js bytes.Buffer
	if err := coverage.WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := coverage.WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/render.txt", text.Bytes())
	golden.Check(t, "testdata/render.json", js.Bytes())
}

// TestTallyOfSeveralResults: results added one at a time measure as the
// same cases in one result do, and the Tally keeps none of them, so a
// command measuring many reports holds one at a time.
func TestTallyOfSeveralResults(t *testing.T) {
	t.Parallel()
	mk := func() []*result.Case {
		return []*result.Case{
			conv("bot", "one", 3, [][]string{{"G"}, {"A", "B"}}, [][]string{{"G"}, {"A"}}),
			conv("bot", "two", 9, [][]string{{"G"}, {"C"}}),
			conv("other", "three", 12, [][]string{{"X"}}),
		}
	}
	first, second := mk(), mk()
	want := coverage.Compute(res(slices.Concat(first, second)...), nil)

	tally := coverage.NewTally()
	kept := make([]weak.Pointer[result.Case], 0, len(first)+len(second))
	for _, cases := range [][]*result.Case{first, second} {
		for _, c := range cases {
			kept = append(kept, weak.Make(c))
		}
		tally.Add(res(cases...))
	}
	if got := tally.Report(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("added apart:\n%+v\nwant as one result:\n%+v", got, want)
	}
	first, second = nil, nil
	runtime.GC()
	for i, p := range kept {
		if p.Value() != nil {
			t.Errorf("case %d is still reachable after Add: the Tally keeps it", i)
		}
	}
	// The tally is used after the collection, so it is alive there:
	// the greeting of two cases in each result.
	a := tally.Report(nil).Agent("bot")
	if i := slices.IndexFunc(a.Nodes, func(n *coverage.Node) bool { return n.Name == "G" }); i < 0 || a.Nodes[i].Cases != 4 {
		t.Errorf("bot's G reached by %+v, want 4 cases", a.Nodes)
	}
}

// TestWalkEdges: a node a turn's trace passes twice counts one turn, and
// the loop is two transitions; a case without an agent (none named) and
// a missing attempt contribute nothing and break nothing.
func TestWalkEdges(t *testing.T) {
	t.Parallel()
	loop := conv("bot", "loop", 3, [][]string{{"G"}, {"A", "B", "A"}})
	loop.Attempts = append(loop.Attempts, nil)
	rep := coverage.Compute(res(loop, conv("", "nameless", 9, [][]string{{"N"}})), nil)
	if len(rep.Agents) != 1 || rep.Agents[0].Agent != "bot" {
		t.Fatalf("agents = %+v, want bot alone", rep.Agents)
	}
	var got []string
	for _, n := range rep.Agents[0].Nodes {
		got = append(got, fmt.Sprintf("%s:%d/%d", n.Name, n.Turns, n.Cases))
	}
	for _, tr := range rep.Agents[0].Transitions {
		got = append(got, fmt.Sprintf("%s>%s:%d/%d", tr.From, tr.To, tr.Turns, tr.Cases))
	}
	if want := []string{"A:1/1", "B:1/1", "G:1/1", "A>B:1/1", "B>A:1/1", "G>A:1/1"}; !slices.Equal(got, want) {
		t.Errorf("nodes and transitions %v, want %v", got, want)
	}
}

// TestWriteTextEdges: a run with no agent says so; an agent that took one
// transition or none is counted in words that agree; node names a hostile
// platform chose are escaped wherever they are listed; turns and cases
// are told apart (two attempts of one case).
func TestWriteTextEdges(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := coverage.WriteText(&b, &coverage.Report{Agents: []*coverage.Agent{}}); err != nil {
		t.Fatal(err)
	}
	if want := "no agent: the reports hold no case that talked to an agent\n"; b.String() != want {
		t.Errorf("no agent:\n%s\nwant:\n%s", b.String(), want)
	}
	u := coverage.Universe{}
	u.Add("evil", coverage.SourceDefinition, "G", "v\x1b[2J", "u\x1b[2J")
	rep := coverage.Compute(res(
		conv("alone", "hello", 3, [][]string{{"G"}}),
		conv("evil", "x", 9, [][]string{{"G"}, {"v\x1b[2J"}}, [][]string{{"G"}, {"v\x1b[2J"}}),
	), u)
	b.Reset()
	if err := coverage.WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	const want = `alone: 1 of 1 nodes visited (100%), 0 transitions taken; nodes seen in these reports (a real platform does not list an agent's nodes)
  NODE        TURNS  CASES  FIRST REACHED BY
  G           1      1      s.yaml:3 hello (greeting)
  TRANSITION  TURNS  CASES  FIRST TAKEN BY

evil: 2 of 3 nodes visited (67%), 1 transition taken; nodes of its definition
never visited: u\x1b[2J
  NODE          TURNS  CASES  FIRST REACHED BY
  G             2      1      s.yaml:9 x (greeting)
  u\x1b[2J      0      0      -
  v\x1b[2J      2      1      s.yaml:9 x (turn 1)
  TRANSITION    TURNS  CASES  FIRST TAKEN BY
  G → v\x1b[2J  2      1      s.yaml:9 x (turn 1)
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestAgentWithoutTurns: an agent whose cases never got a turn (the
// platform was down, or every case was skipped) is reported with none of
// its nodes visited, not left out as if no suite tested it.
func TestAgentWithoutTurns(t *testing.T) {
	t.Parallel()
	u := coverage.Universe{}
	u.Add("clinic", coverage.SourceDefinition, "G", "A")
	rep := coverage.Compute(res(&result.Case{Name: "books", Agent: "clinic", Status: result.Skipped}), u)
	if a := rep.Agent("clinic"); a == nil || a.NodesVisited != 0 || a.NodesTotal != 2 || !slices.Equal(a.Unvisited, []string{"A", "G"}) {
		t.Errorf("clinic = %+v, want 0 of its 2 nodes visited", a)
	}
}

// TestFromReportNulls: a report's coverage section is anyone's JSON; a
// null agent or node in it (report.ReadJSON lets them through) is passed
// over, not a panic, and no report is no agent.
func TestFromReportNulls(t *testing.T) {
	t.Parallel()
	u := coverage.FromReport(&coverage.Report{Agents: []*coverage.Agent{nil,
		{Agent: "bot", Source: coverage.SourceDefinition, Nodes: []*coverage.Node{nil, {Name: "G"}}}}})
	if k := u["bot"]; len(u) != 1 || k == nil || k.Source != coverage.SourceDefinition || !reflect.DeepEqual(k.Nodes, map[string]bool{"G": true}) {
		t.Errorf("universe = %+v", u)
	}
	if a := (*coverage.Report)(nil).Agent("bot"); a != nil {
		t.Errorf("no report has agent %+v", a)
	}
	if a := (&coverage.Report{Agents: []*coverage.Agent{nil}}).Agent("bot"); a != nil {
		t.Errorf("a null agent is bot: %+v", a)
	}
}

// TestUntraced: the cases over messaging that ran are counted apart, per
// agent (a skipped one never talked); the text says how many.
func TestUntraced(t *testing.T) {
	t.Parallel()
	web := func(name string, line int, ran bool) *result.Case {
		c := conv("bot", name, line, [][]string{nil, nil})
		c.Via = "messaging"
		if !ran {
			c.Attempts = nil
		}
		return c
	}
	for _, tc := range []struct {
		cases []*result.Case
		want  int
		text  string
	}{
		{[]*result.Case{conv("bot", "chat", 3, [][]string{{"G"}}), web("web", 9, true), web("skipped", 12, false)}, 1, "1 case over messaging not counted"},
		{[]*result.Case{web("a", 3, true), web("b", 9, true)}, 2, "2 cases over messaging not counted"},
	} {
		rep := coverage.Compute(res(tc.cases...), nil)
		if got := rep.Agent("bot").Untraced; got != tc.want {
			t.Errorf("untraced %d, want %d", got, tc.want)
		}
		var b bytes.Buffer
		if err := coverage.WriteText(&b, rep); err != nil || !bytes.Contains(b.Bytes(), []byte(tc.text)) {
			t.Errorf("text lacks %q:\n%s", tc.text, b.String())
		}
	}
}
