package godogsteps_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/sim"
)

// A Go team's own godog suite with agenttest's steps mixed in, run here
// against agenttest's platform simulator. Against a real platform, give
// the build host and its key (and the runtime host for confirmations).
func ExampleSteps_Register() {
	platform, err := sim.New(sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	defer platform.Close()
	hs := httptest.NewServer(platform.Handler())
	defer hs.Close()
	platform.SetURLs(hs.URL, hs.URL)

	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: hs.URL,
		BuildKey: platform.Info().BuildKey,
		Agent:    "restaurant",
	})
	if err != nil {
		panic(err)
	}
	feature := `Feature: Booking
  Scenario: asks for the party size
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
    And the current node is "CollectPartySize"
`
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			// The team's own steps register here too.
		},
		Options: &godog.Options{
			Format:          "progress",
			Output:          io.Discard,
			FeatureContents: []godog.Feature{{Name: "booking.feature", Contents: []byte(feature)}},
			Strict:          true,
		},
	}.Run()
	fmt.Println("godog exit status:", status)
	// Output: godog exit status: 0
}
