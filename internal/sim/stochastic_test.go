package sim_test

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"golang.org/x/sync/errgroup"
)

// The clinic's probabilistic questions (examples/agents/clinic.yaml): what
// a healthy, a broken and a borderline agent do, and the node a right
// answer ends on (a weighted reply ends on one node either way, so the
// opening hours are told apart by their text).
var clinicStochastic = []struct {
	name, say, right string
	rate             float64
}{
	{"healthy", "When are you open?", "Monday to Friday", 0.95},
	{"borderline", "Have my test results come back?", "ResultsReady", 0.85},
	{"broken", "I need a repeat prescription", "RepeatPrescription", 0.50},
}

// converse runs n clinic conversations that each say msg once, workers at a
// time, and returns each conversation's outcome (its node, then its reply)
// by conversation id. With idPrefix the client names the conversations
// (idPrefix-0, idPrefix-1, ...); without, the simulator does.
func converse(t *testing.T, s *simtest.Sim, msg string, n, workers int, idPrefix string) map[string]string {
	t.Helper()
	var mu sync.Mutex
	out := make(map[string]string, n)
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error {
			body := map[string]any{"clientEnv": "sandbox"}
			if idPrefix != "" {
				body["conversationId"] = fmt.Sprintf("%s-%d", idPrefix, i)
			}
			r := call(t, "POST", s.BuildURL+"/v1/agents/clinic/debug-chat", s.BuildKey, body)
			if r.status != 200 {
				return fmt.Errorf("create: %d %s", r.status, r.body)
			}
			id := r.json(t)["conversationId"].(string)
			r = call(t, "POST", s.BuildURL+"/v1/agents/clinic/debug-chat/"+id, s.BuildKey, map[string]any{"clientEnv": "sandbox", "message": msg})
			if r.status != 200 {
				return fmt.Errorf("turn: %d %s", r.status, r.body)
			}
			m := r.json(t)
			node := m["metadata"].(map[string]any)["currentNode"]
			mu.Lock()
			out[id] = fmt.Sprintf("%v: %v", node, m["response"])
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return out
}

// share is the fraction of outcomes that contain right.
func share(outcomes map[string]string, right string) float64 {
	n := 0
	for _, o := range outcomes {
		if strings.Contains(o, right) {
			n++
		}
	}
	return float64(n) / float64(len(outcomes))
}

// Over many conversations each behaviour is right at its weight. The
// draws are fixed by the seed, so the test cannot flake; it fails when
// weights are ignored (a uniform draw is right half the time).
func TestProbabilisticAgentsOverHTTP(t *testing.T) {
	t.Parallel()
	const n = 400
	// The standard deviation of a share over 400 runs is at most 0.025:
	// 0.065 is 2.6 of them at worst (p = 0.5) and 5 at p = 0.95.
	const tolerance = 0.065
	s := simtest.Start(t, sim.Options{Seed: 11})
	for _, b := range clinicStochastic {
		t.Run(b.name, func(t *testing.T) {
			got := share(converse(t, s, b.say, n, 8, ""), b.right)
			t.Logf("%s: right in %.3f of %d conversations", b.name, got, n)
			if math.Abs(got-b.rate) > tolerance {
				t.Errorf("%q right in %.3f of %d conversations, want %.2f ± %.3f", b.say, got, n, b.rate, tolerance)
			}
		})
	}
}

// The guarantee of docs/simulator.md: a conversation's draws depend on the
// seed and its id alone. Client-named conversations replay one by one
// whatever the concurrency; simulator-named ones are numbered in creation
// order, so a batch of like conversations has the same outcomes in any
// interleaving, and a sequential client replays exactly.
func TestProbabilisticAgentsReplayUnderTheSeed(t *testing.T) {
	t.Parallel()
	const n = 60
	msg := clinicStochastic[2].say // the broken one: the most varied
	run := func(seed int64, workers int, prefix string) map[string]string {
		return converse(t, simtest.Start(t, sim.Options{Seed: seed}), msg, n, workers, prefix)
	}
	t.Run("client-named conversations", func(t *testing.T) {
		a, b := run(4, 8, "case"), run(4, 1, "case")
		if !maps.Equal(a, b) {
			t.Errorf("same seed and ids, different outcomes under concurrency:\n%v\n%v", a, b)
		}
		if c := run(5, 8, "case"); maps.Equal(a, c) {
			t.Error("another seed gave the same outcomes")
		}
	})
	t.Run("simulator-named conversations", func(t *testing.T) {
		seq, conc := run(4, 1, ""), run(4, 8, "")
		if !maps.Equal(seq, conc) {
			t.Errorf("a batch of like conversations changed with the interleaving:\n%v\n%v", seq, conc)
		}
		if again := run(4, 1, ""); !maps.Equal(seq, again) {
			t.Error("a sequential client did not replay")
		}
	})
}
