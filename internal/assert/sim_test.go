package assert

import (
	"encoding/json"
	"testing"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// TestCheckSimulatorMetadata checks the simulator's own metadata shape (its
// typed Metadata, encoded as it serves it) through the tolerant accessors:
// the checks must read what the default target sends.
func TestCheckSimulatorMetadata(t *testing.T) {
	md := agent.Metadata{
		ASRLangCode: "en-US", TTSLangCode: "en-US",
		State:       map[string]any{"party_size": 4, "booking": map[string]any{"code": "XY9"}},
		CurrentNode: "Confirm",
		NodeTrace:   []string{"Start", "CollectPartySize", "Confirm"},
		Metrics:     map[string]any{"BOOKED": "true", "CALL_TURN": []string{"a", "b"}},
		FunctionEvents: []agent.FunctionEvent{
			{Name: "check_availability", Status: "success", LatencyMS: 5},
			{Name: "book_table", Status: "error", Error: "no table free"},
		},
		HandoffDestination: "front-desk",
		RetrievedTopics:    []string{"Opening hours"},
		CitedTopic:         "Opening hours",
		LLMRequests:        []map[string]any{{"model": "sim-1"}},
	}
	raw, err := json.Marshal(map[string]any{"conversationId": "c", "response": "Booked.", "metadata": md})
	if err != nil {
		t.Fatal(err)
	}
	res := decodeReply(t, string(raw))
	exp := &Expect{
		Node:      &Text{Exact: new("Confirm")},
		Trace:     &Trace{Sequence: []string{"Start", "Confirm"}},
		State:     []StateCheck{{Key: "party_size", Match: &Text{Exact: new("4")}}, {Key: "booking.code", Match: &Text{Exact: new("XY9")}}},
		Handoff:   &Handoff{Expected: true, Destination: &Text{Exact: new("front-desk")}},
		Metrics:   []MetricCheck{{Name: "BOOKED", Match: &Text{Exact: new("true")}}, {Name: "CALL_TURN", Count: new(2)}},
		Functions: &Functions{Called: []string{"check_availability"}, Failed: []string{"book_table"}},
		Topics:    &Topics{Retrieved: []string{"Opening hours"}, Cited: &Text{Exact: new("Opening hours")}},
		Lang:      &Lang{ASR: &Text{Exact: new("en-US")}, TTS: &Text{Exact: new("en-US")}},
		Metadata:  []MetadataCheck{{Path: "llmRequests.0.model", Match: &Text{Exact: new("sim-1")}}},
	}
	if fails := Check(exp, Observation{Result: res}, nil); len(fails) != 0 {
		t.Errorf("unexpected failures: %#v", fails)
	}
	fails := Check(&Expect{Functions: &Functions{NoErrors: true}}, Observation{Result: res}, nil)
	if len(fails) != 1 || fails[0].Actual != "book_table: no table free" {
		t.Errorf("no_errors: got %#v", fails)
	}
}
