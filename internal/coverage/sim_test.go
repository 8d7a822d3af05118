package coverage_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// runSim runs the suite testdata/sim.yaml through the runner against the
// simulator, over real HTTP.
func runSim(t *testing.T) *result.Result {
	t.Helper()
	s := simtest.Start(t, sim.Options{Seed: 1})
	c, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID,
		BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey})
	if err != nil {
		t.Fatal(err)
	}
	suites, diags := scenario.Load(os.DirFS("testdata"), []string{"sim.yaml"})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, err := runner.Run(context.Background(), suites, runner.Options{Channel: runner.DebugChat(c), Parallel: 3,
		RetryDelay: -1, TurnTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		for _, c := range f.Cases {
			if c.Status != result.Passed {
				t.Fatalf("case %q: %s (%+v)", c.Name, c.Status, c.Last())
			}
		}
	}
	return res
}

// definitions is the universe of the simulator's built-in agents, as the
// CLI gives it for a run on the embedded simulator.
func definitions(t *testing.T) coverage.Universe {
	t.Helper()
	defs, err := agent.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	u := coverage.Universe{}
	for _, d := range defs {
		u.Add(d.ID, coverage.SourceDefinition, d.NodeNames()...)
	}
	return u
}

func names(a *coverage.Agent, visited bool) []string {
	var out []string
	for _, n := range a.Nodes {
		if (n.Turns > 0) == visited {
			out = append(out, n.Name)
		}
	}
	return out
}

func transitions(a *coverage.Agent) []string {
	var out []string
	for _, tr := range a.Transitions {
		out = append(out, tr.From+">"+tr.To)
	}
	return out
}

func TestSimulatorAgents(t *testing.T) {
	t.Parallel()
	res := runSim(t)
	rep := coverage.Compute(res, definitions(t))

	if got := len(rep.Agents); got != 2 {
		t.Fatalf("agents = %d, want 2 (clinic, restaurant; utility-billing has no case)", got)
	}
	type want struct {
		visited, unvisited, transitions []string
	}
	for _, tc := range []struct {
		agent string
		want  want
	}{
		{"restaurant", want{
			visited:   []string{"CheckParty", "CollectPartySize", "ConfirmBooking", "Goodbye", "Greeting", "NoReference", "StartBooking", "TellReference"},
			unvisited: []string{"AnswerQuestion", "AskTime", "CheckAvailability", "Fallback", "ReadReference", "Silence", "SmallTalk"},
			transitions: []string{"CheckParty>ConfirmBooking", "CollectPartySize>CheckParty", "ConfirmBooking>Goodbye",
				"Greeting>StartBooking", "Greeting>TellReference", "StartBooking>CollectPartySize", "TellReference>NoReference"},
		}},
		{"clinic", want{
			visited:     []string{"Greeting", "OpeningHours"},
			transitions: []string{"Greeting>OpeningHours"},
		}},
	} {
		a := rep.Agent(tc.agent)
		if a == nil {
			t.Fatalf("no coverage of %s", tc.agent)
		}
		if a.Source != coverage.SourceDefinition {
			t.Errorf("%s: source %q", tc.agent, a.Source)
		}
		if got := names(a, true); !slices.Equal(got, tc.want.visited) {
			t.Errorf("%s visited = %v\nwant %v", tc.agent, got, tc.want.visited)
		}
		if tc.want.unvisited != nil && !slices.Equal(a.Unvisited, tc.want.unvisited) {
			t.Errorf("%s unvisited = %v\nwant %v", tc.agent, a.Unvisited, tc.want.unvisited)
		}
		if got := transitions(a); !slices.Equal(got, tc.want.transitions) {
			t.Errorf("%s transitions = %v\nwant %v", tc.agent, got, tc.want.transitions)
		}
		if a.NodesVisited != len(tc.want.visited) || a.NodesTotal != len(a.Nodes) || a.NodesVisited+len(a.Unvisited) != a.NodesTotal {
			t.Errorf("%s counts: visited %d of %d, unvisited %d", tc.agent, a.NodesVisited, a.NodesTotal, len(a.Unvisited))
		}
		for _, n := range a.Nodes {
			if n.Undefined {
				t.Errorf("%s: node %s reported as not in the definition", tc.agent, n.Name)
			}
		}
	}
	// The clinic's universe is its whole definition.
	clinic := rep.Agent("clinic")
	defs := definitions(t)
	if clinic.NodesTotal != len(defs["clinic"].Nodes) {
		t.Errorf("clinic nodes = %d, want the %d of its definition", clinic.NodesTotal, len(defs["clinic"].Nodes))
	}

	// The turns that reached a node: the greeting by every case at turn
	// 0, ConfirmBooking by turn 2 of one case.
	r := rep.Agent("restaurant")
	node := func(name string) *coverage.Node {
		for _, n := range r.Nodes {
			if n.Name == name {
				return n
			}
		}
		t.Fatalf("no node %s", name)
		return nil
	}
	if g := node("Greeting"); g.Turns != 2 || g.Cases != 2 || len(g.Reached) != 2 || g.Reached[0].Turn != 0 {
		t.Errorf("Greeting = %+v", g)
	}
	cb := node("ConfirmBooking")
	if cb.Turns != 1 || len(cb.Reached) != 1 || cb.Reached[0].Case != "books a table" || cb.Reached[0].Turn != 2 ||
		cb.Reached[0].Pos.File != "sim.yaml" || cb.Reached[0].Pos.Line != 3 {
		t.Errorf("ConfirmBooking = %+v", cb)
	}
}
