package report

import (
	"github.com/agenttest/agenttest/internal/result"
)

// deploymentsFixture is a run of two agents whose evidence has every
// shape: the restaurant's sandbox deployment changed during the run (so
// the run is errored although its case passed), the clinic's live one was
// verified, and the billing agent's platform does not serve the endpoint.
func deploymentsFixture() *result.Result {
	rest := "suites/restaurant.yaml"
	c := &result.Case{Name: "books a table", Pos: pos(rest, 4, 5), Status: result.Passed, Duration: 120e6, Agent: "restaurant", Env: "sandbox",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-1", Started: at(10), Duration: 120e6,
			Turns: []*result.Turn{
				exchange{index: 0, pos: pos(rest, 4, 5), text: "Welcome!", conv: "conv-1", started: at(10), latency: 40e6}.turn(),
				exchange{index: 1, pos: pos(rest, 6, 9), say: "A table for 2", text: "Booked.", conv: "conv-1", started: at(60), latency: 80e6,
					meta: map[string]any{"nodeTrace": []any{"ConfirmBooking"}}}.turn(),
			}}}}
	clinic := &result.Case{Name: "opening hours", Pos: pos("suites/clinic.yaml", 3, 5), Status: result.Passed, Duration: 50e6, Agent: "clinic", Env: "live",
		Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: "conv-2", Started: at(20), Duration: 50e6,
			Turns: []*result.Turn{exchange{index: 0, pos: pos("suites/clinic.yaml", 3, 5), text: "Hello", conv: "conv-2", started: at(20), latency: 50e6}.turn()}}}}
	return &result.Result{
		Started:  t0,
		Duration: 300e6,
		Target:   result.Target{Name: "sandbox", BuildURL: "https://build.us.example-platform.com", RuntimeURL: "https://runtime-us-1.example-platform.com", AccountID: "ws-a1b2c3d4", Env: "sandbox"},
		Files: []*result.File{
			{Path: rest, Suite: "restaurant", Cases: []*result.Case{c}},
			{Path: "suites/clinic.yaml", Suite: "clinic", Cases: []*result.Case{clinic}},
		},
		Deployments: []*result.Deployment{
			{Agent: "restaurant", Env: "sandbox", ID: "dep-1111", Version: "1.2", ReadAt: at(1), After: "dep-2222", AfterVersion: "1.3", AfterReadAt: at(200)},
			{Agent: "clinic", Env: "live", ID: "dep-3333", Version: "1.0", ReadAt: at(1), After: "dep-3333", AfterVersion: "1.0", AfterReadAt: at(100)},
			{Agent: "utility-billing", Env: "sandbox", ReadAt: at(1), Note: "the platform answered 404 to GET /v1/agents/{agentId}/deployments/active (it does not serve the endpoint, or does not know the agent)"},
		},
	}
}
