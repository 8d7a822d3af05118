package main

import (
	"io"
	"slices"
	"testing"

	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// TestTuneGC checks the collector's targets a run sets through
// State.SetGCPercent: the lowest while loading, a collection
// (State.CollectGarbage) and then the run's own once its size is known
// (for a large run, the lowest until a third of its cases have finished),
// the one before at the end, and none at all when the environment sets
// GOGC or GOMEMLIMIT.
func TestTuneGC(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name      string
		env       map[string]string
		scenarios int
		// want are the targets set, in order: loading, the run, restore,
		// with collected where the collection runs.
		want []int
		// raiseAfter is the number of finished cases after which the
		// run's target goes up to largeRunGOGC; 0 for never.
		raiseAfter int
	}
	const collected = -1
	for _, tc := range []testCase{
		{name: "small run keeps the default", scenarios: 10, want: []int{hugeRunGOGC, collected, 100, 100}},
		{name: "large run", scenarios: largeRun + 1, want: []int{hugeRunGOGC, collected, hugeRunGOGC, largeRunGOGC, 100}, raiseAfter: (largeRun + 1) / 3},
		{name: "largest run short of huge", scenarios: hugeRun, want: []int{hugeRunGOGC, collected, hugeRunGOGC, largeRunGOGC, 100}, raiseAfter: hugeRun / 3},
		{name: "huge run", scenarios: hugeRun + 1, want: []int{hugeRunGOGC, collected, hugeRunGOGC, 100}},
		// A large run, the size with the most targets to leave unset
		// (a huge one has fewer and walks 50 times the cases).
		{name: "GOGC set", env: map[string]string{"GOGC": "200"}, scenarios: largeRun + 1},
		{name: "GOMEMLIMIT set", env: map[string]string{"GOMEMLIMIT": "1GiB"}, scenarios: largeRun + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			current := 100
			var set []int
			st := &State{Env: tc.env, SetGCPercent: func(p int) int {
				set = append(set, p)
				old := current
				current = p
				return old
			}, CollectGarbage: func() { set = append(set, collected) }}
			suites := []*scenario.Suite{{Scenarios: make([]*scenario.Scenario, tc.scenarios/2)}, {Scenarios: make([]*scenario.Scenario, tc.scenarios-tc.scenarios/2)}}
			gc := tuneGC(st)
			gc.run(suites)
			obs := gc.observe(report.NewHuman(io.Discard, report.HumanOptions{}))
			for i := range tc.scenarios {
				if raised := len(set) > 0 && set[len(set)-1] == largeRunGOGC; raised != (tc.raiseAfter > 0 && i >= tc.raiseAfter) {
					t.Fatalf("after %d of %d cases finished, targets set %v", i, tc.scenarios, set)
				}
				obs.CaseFinished(&result.File{}, &result.Case{Status: result.Passed})
			}
			gc.restore()
			if !slices.Equal(set, tc.want) {
				t.Errorf("targets set %v, want %v", set, tc.want)
			}
			if current != 100 {
				t.Errorf("target left at %d, want 100", current)
			}
		})
	}
	// Without SetGCPercent (tests running commands in one process) the
	// collector is left alone.
	if gc := tuneGC(&State{}); gc.set != nil {
		t.Error("tuneGC without SetGCPercent would set the collector's target")
	}
}

// TestCollectLessOften: the test process's collector target goes up to
// testGOGC unless the environment sets GOGC or GOMEMLIMIT, which are the
// user's to choose (a memory-starved CI runner, a profile).
func TestCollectLessOften(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want []int
	}{
		{env: map[string]string{}, want: []int{testGOGC}},
		{env: map[string]string{"GOGC": "100"}},
		{env: map[string]string{"GOMEMLIMIT": "1GiB"}},
		{env: map[string]string{"GOGC": "", "GOMEMLIMIT": ""}},
	} {
		var set []int
		collectLessOften(func(name string) (string, bool) { v, ok := tc.env[name]; return v, ok },
			func(p int) int { set = append(set, p); return 100 })
		if !slices.Equal(set, tc.want) {
			t.Errorf("environment %v: targets set %v, want %v", tc.env, set, tc.want)
		}
	}
}
