// Package coverage measures which dialogue nodes of each agent a run
// reached: per agent, the nodes and the node-to-node transitions its
// conversations went through (read from the node traces of their turns),
// the turns that reached each, and the nodes no conversation reached.
//
// What "every node" means depends on what is known about the agent. For
// the simulator's agents it is their definitions; for a real platform,
// which does not publish its dialogue graph to debug chat, it is every
// node seen in this run and in earlier runs. The caller says which with a
// Universe; the package itself reads nothing but results, so it is a pure
// function of its inputs:
//
//	u := coverage.Universe{}
//	u.Add("restaurant", coverage.SourceDefinition, def.NodeNames()...)
//	u.Merge(coverage.Observed(earlier...)) // --coverage-from
//	rep := coverage.Compute(res, u)
//	for _, a := range rep.Agents {
//		fmt.Println(a.Agent, a.NodesVisited, "/", a.NodesTotal, a.Unvisited)
//	}
//
// Results too large to hold together are added to a Tally one at a time
// (tally.Add(res)), and measured with tally.Report(u).
//
// A transition is a step of a conversation's path from one node to the
// next: within a turn's trace, and from the last node of a turn to the
// first node of the next turn (the agent was waiting at the one when the
// user's message moved it to the other). Every attempt of a case counts,
// whatever its verdict: a failing conversation still went where it went.
package coverage

import (
	"cmp"
	"slices"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// Where the node list of an agent comes from (Agent.Source).
const (
	// SourceDefinition: the agent's definition (the simulator's agents):
	// a node never visited is one the suites do not reach.
	SourceDefinition = "definition"
	// SourceObserved: every node seen in the node traces of this report
	// and of the earlier reports given (a real platform): a node no run
	// ever reached is unknown, so it cannot be listed as unvisited.
	SourceObserved = "observed"
)

// MaxReached bounds Node.Reached and Transition.Reached: a greeting node
// is reached by every case, and a report of 20,000 cases must stay
// readable. The counts are exact; only the list is cut.
const MaxReached = 10

// Report is the node coverage of a run, one entry per agent the run has
// cases for, sorted by agent id. It is plain data (JSON as it stands), so
// that reports embed it and renderers read it.
type Report struct {
	Agents []*Agent `json:"agents"`
}

// Agent is the coverage of one agent.
type Agent struct {
	// Agent is the agent (project) id the cases named.
	Agent string `json:"agent"`
	// Source is SourceDefinition or SourceObserved.
	Source string `json:"source"`
	// NodesTotal counts Nodes; NodesVisited those reached by at least one
	// turn; Percent is their ratio, 0 to 100 (0 when there are none).
	NodesTotal   int     `json:"nodes_total"`
	NodesVisited int     `json:"nodes_visited"`
	Percent      float64 `json:"percent"`
	// Nodes is every node of the universe and every node the run reached,
	// sorted by name; a node with Turns 0 was never visited.
	Nodes []*Node `json:"nodes"`
	// Transitions are the node-to-node steps the run took, sorted by
	// From, then To.
	Transitions []*Transition `json:"transitions"`
	// Unvisited names the nodes of Nodes no turn reached, sorted.
	Unvisited []string `json:"unvisited"`
	// Untraced counts the cases over messaging: web chat carries no node
	// trace, so the nodes they went through are not in Nodes, and a node
	// only they reached is listed as unvisited.
	Untraced int `json:"untraced_cases,omitempty"`
}

// Node is one node of an agent and how the run reached it.
type Node struct {
	Name string `json:"name"`
	// Turns counts the turns, over every attempt and run, whose node
	// trace holds the node; Cases the distinct cases among them.
	Turns int `json:"turns"`
	Cases int `json:"cases"`
	// Reached lists the first MaxReached distinct (case, turn) that
	// reached it, in report order.
	Reached []Reach `json:"reached"`
	// Undefined is true when the agent's definition (Source
	// SourceDefinition) has no such node, yet a trace names it: the
	// platform ran another version of the agent than the one described.
	Undefined bool `json:"undefined,omitempty"`
}

// Transition is one step of a conversation's path, From one node To the
// next, and how often the run took it.
type Transition struct {
	From    string  `json:"from"`
	To      string  `json:"to"`
	Turns   int     `json:"turns"`
	Cases   int     `json:"cases"`
	Reached []Reach `json:"reached"`
}

// Reach is a turn that reached a node or took a transition: the case
// (its name and where it is written, as every report names cases) and
// the turn's index in the transcript (0 is the greeting).
type Reach struct {
	Case string   `json:"case"`
	Pos  diag.Pos `json:"pos"`
	Turn int      `json:"turn"`
}

// Universe is, per agent id, every node the agent is known to have and
// where that knowledge comes from.
type Universe map[string]*Known

// Known is the node list of one agent in a Universe.
type Known struct {
	// Source is SourceDefinition or SourceObserved.
	Source string
	// Nodes is the set of node names.
	Nodes map[string]bool
}

// Add records nodes of an agent. A definition outranks observations: once
// an agent's nodes come from its definition, observed nodes are not
// added to them (Compute still lists a visited node the definition
// lacks, marked Undefined).
func (u Universe) Add(agent, source string, nodes ...string) {
	k := u[agent]
	switch {
	case k == nil:
		k = &Known{Source: source, Nodes: map[string]bool{}}
		u[agent] = k
	case k.Source == SourceObserved && source == SourceDefinition:
		k.Source, k.Nodes = source, map[string]bool{}
	case k.Source == SourceDefinition && source == SourceObserved:
		return
	}
	for _, n := range nodes {
		if n != "" {
			k.Nodes[n] = true
		}
	}
}

// Merge adds every agent and node of other to u.
func (u Universe) Merge(other Universe) {
	for _, agent := range sortedKeys(other) {
		k := other[agent]
		u.Add(agent, k.Source, sortedKeys(k.Nodes)...)
	}
}

// Observed returns the nodes the node traces of the results name, per
// agent, as a Universe of SourceObserved: what earlier reports
// (--coverage-from) contribute on a real platform.
func Observed(results ...*result.Result) Universe {
	u := Universe{}
	for _, r := range results {
		walk(r, func(c *result.Case, _ *result.Turn, trace []string) {
			u.Add(c.Agent, SourceObserved, trace...)
		})
	}
	return u
}

// FromReport returns the universe an earlier coverage report was measured
// against: every node it lists, visited or not, with its agent's source.
// Nodes a definition lacked (Undefined) are left out of a definition's
// universe.
func FromReport(rep *Report) Universe {
	u := Universe{}
	if rep == nil {
		return u
	}
	for _, a := range rep.Agents {
		if a == nil {
			continue
		}
		var names []string
		for _, n := range a.Nodes {
			if n != nil && !n.Undefined {
				names = append(names, n.Name)
			}
		}
		source := a.Source
		if source != SourceDefinition {
			source = SourceObserved
		}
		u.Add(a.Agent, source, names...)
	}
	return u
}

// walk calls fn for every turn of every attempt of every case of r, in
// report order, with the turn's node trace (possibly empty). Run-level
// checks have no conversation and are left out.
func walk(r *result.Result, fn func(c *result.Case, t *result.Turn, trace []string)) {
	if r == nil {
		return
	}
	for _, c := range r.Scenarios() {
		if c.Agent == "" {
			continue
		}
		for _, a := range c.Attempts {
			if a == nil {
				continue
			}
			for _, t := range a.Turns {
				var trace []string
				if rep := t.Reply(); rep != nil {
					trace = rep.Meta().NodeTrace()
				}
				fn(c, t, trace)
			}
		}
	}
}

// tally accumulates the visits of one node or transition. It counts the
// cases by the serial Tally.Add gives each (a case's turns are walked one
// after another, so a new case is a serial other than the last), and
// keeps no case: a Tally outlives the results it was given.
type tally struct {
	turns, cases int
	last         int // the serial of the last case counted
	reached      []Reach
	seen         map[reachKey]bool
}

type reachKey struct{ c, turn int }

func (t *tally) add(serial int, c *result.Case, turn *result.Turn) {
	t.turns++
	if t.last != serial {
		t.cases, t.last = t.cases+1, serial
	}
	k := reachKey{serial, turn.Index}
	if len(t.reached) < MaxReached && !t.seen[k] {
		if t.seen == nil {
			t.seen = map[reachKey]bool{}
		}
		t.seen[k] = true
		t.reached = append(t.reached, Reach{Case: c.Name, Pos: c.Pos, Turn: turn.Index})
	}
}

func (t *tally) reachedList() []Reach {
	if t == nil || t.reached == nil {
		return []Reach{}
	}
	return t.reached
}

func (t *tally) counts() (turns, cases int) {
	if t == nil {
		return 0, 0
	}
	return t.turns, t.cases
}

type edge struct{ from, to string }

// agentTally is what walking results found for one agent.
type agentTally struct {
	nodes    map[string]*tally
	edges    map[edge]*tally
	untraced int
}

// Tally accumulates the coverage of results given one at a time (Add),
// so that a command measuring many reports holds one in memory at once;
// Report measures what it holds against a Universe. Cases of different
// results count apart, as cases of one result do.
type Tally struct {
	agents map[string]*agentTally
	cases  int // serials given so far; 0 is none
}

// NewTally returns an empty Tally.
func NewTally() *Tally { return &Tally{agents: map[string]*agentTally{}} }

func (t *Tally) agent(name string) *agentTally {
	a := t.agents[name]
	if a == nil {
		a = &agentTally{nodes: map[string]*tally{}, edges: map[edge]*tally{}}
		t.agents[name] = a
	}
	return a
}

// Add walks the node traces of r. Every agent that r has a case for is
// reported, visited or not.
func (t *Tally) Add(r *result.Result) {
	if r == nil {
		return
	}
	for _, c := range r.Scenarios() {
		if c.Agent == "" {
			continue
		}
		a := t.agent(c.Agent)
		if c.Via != "" && len(c.Attempts) > 0 {
			a.untraced++
		}
	}
	// prev is the last node of the previous turn of the same attempt.
	var (
		prevTurn *result.Turn
		prev     string
		prevCase *result.Case
	)
	walk(r, func(c *result.Case, turn *result.Turn, trace []string) {
		// A new attempt starts at its greeting (index 0) or with a new
		// case; the path does not continue across them.
		if c != prevCase || turn.Index == 0 || prevTurn == nil || turn.Index <= prevTurn.Index {
			prev = ""
		}
		if c != prevCase {
			t.cases++
		}
		prevCase, prevTurn = c, turn
		a := t.agent(c.Agent)
		counted := map[string]bool{}
		for _, n := range trace {
			if !counted[n] {
				counted[n] = true
				tl := a.nodes[n]
				if tl == nil {
					tl = &tally{}
					a.nodes[n] = tl
				}
				tl.add(t.cases, c, turn)
			}
			if prev != "" {
				e := edge{prev, n}
				tl := a.edges[e]
				if tl == nil {
					tl = &tally{}
					a.edges[e] = tl
				}
				tl.add(t.cases, c, turn)
			}
			prev = n
		}
	})
}

// Report measures what t holds against u: every agent of the results
// added, with the nodes u knows plus those the results reached. An agent
// u does not know is measured against what the results reached
// (SourceObserved); an agent of u no result talked to is not reported.
func (t *Tally) Report(u Universe) *Report {
	rep := &Report{Agents: []*Agent{}}
	for _, name := range sortedKeys(t.agents) {
		rep.Agents = append(rep.Agents, t.agents[name].report(name, u[name]))
	}
	return rep
}

// Compute measures the coverage of r against u (Tally.Report).
func Compute(r *result.Result, u Universe) *Report {
	t := NewTally()
	t.Add(r)
	return t.Report(u)
}

func (at *agentTally) report(name string, k *Known) *Agent {
	a := &Agent{Agent: name, Source: SourceObserved, Nodes: []*Node{}, Transitions: []*Transition{}, Unvisited: []string{}, Untraced: at.untraced}
	all := map[string]bool{}
	if k != nil {
		a.Source = k.Source
		for n := range k.Nodes {
			all[n] = true
		}
	}
	for n := range at.nodes {
		all[n] = true
	}
	for _, n := range sortedKeys(all) {
		tl := at.nodes[n]
		turns, cases := tl.counts()
		node := &Node{Name: n, Turns: turns, Cases: cases, Reached: tl.reachedList(),
			Undefined: a.Source == SourceDefinition && !k.Nodes[n]}
		a.Nodes = append(a.Nodes, node)
		if turns == 0 {
			a.Unvisited = append(a.Unvisited, n)
		} else {
			a.NodesVisited++
		}
	}
	a.NodesTotal = len(a.Nodes)
	if a.NodesTotal > 0 {
		a.Percent = 100 * float64(a.NodesVisited) / float64(a.NodesTotal)
	}
	edges := make([]edge, 0, len(at.edges))
	for e := range at.edges {
		edges = append(edges, e)
	}
	slices.SortFunc(edges, func(x, y edge) int { return cmp.Or(cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to)) })
	for _, e := range edges {
		tl := at.edges[e]
		turns, cases := tl.counts()
		a.Transitions = append(a.Transitions, &Transition{From: e.from, To: e.to, Turns: turns, Cases: cases, Reached: tl.reachedList()})
	}
	return a
}

// Agent returns the coverage of the agent with the given id, or nil.
func (r *Report) Agent(id string) *Agent {
	if r == nil {
		return nil
	}
	for _, a := range r.Agents {
		if a != nil && a.Agent == id {
			return a
		}
	}
	return nil
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
