package coverage_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// BenchmarkCompute measures coverage over a nightly-sized run: 20,000
// cases of three turns each, whose metadata is held raw (as the runner
// keeps passing cases of a large run), with a realistic state.
//
//	go test ./internal/coverage -run '^$' -bench Compute -benchmem
func BenchmarkCompute(b *testing.B) {
	var cases []*result.Case
	for i := range 20000 {
		a := &result.Attempt{Number: 1, Status: result.Passed}
		for j, trace := range [][]string{{"Greeting"}, {"StartBooking", "CollectPartySize"}, {"CheckParty", "ConfirmBooking"}} {
			raw, _ := json.Marshal(map[string]any{"nodeTrace": trace, "currentNode": trace[len(trace)-1],
				"state": map[string]any{"party_size": "4", "time": "19:00", "booking_ref": "ABC123"}, "inFlow": "booking"})
			a.Turns = append(a.Turns, &result.Turn{Index: j, Result: &reply.TurnResult{RawMetadata: raw}})
		}
		cases = append(cases, &result.Case{Name: fmt.Sprint("case ", i), Agent: "restaurant",
			Pos: diag.Pos{File: "s.yaml", Line: i + 1}, Status: result.Passed, Attempts: []*result.Attempt{a}})
	}
	r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: cases}}}
	b.ReportAllocs()
	for b.Loop() {
		coverage.Compute(r, nil)
	}
}
