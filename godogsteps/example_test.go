package godogsteps_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"testing/fstest"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/sim"
)

// A Go team's own godog suite with agenttest's steps mixed in, run here
// against agenttest's platform simulator (in-process here; a module of
// your own runs "agenttest sim --print-env" as a process instead, since
// internal/sim is agenttest's). Against a real platform, give the build
// host and its key (and the runtime host for confirmations).
func ExampleSteps_Register() {
	platform, err := sim.New(sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	defer platform.Close()
	hs := httptest.NewServer(platform.Handler())
	defer hs.Close()
	platform.SetURLs(hs.URL, hs.URL)

	feature := `Feature: Booking
  Background:
    Given our backend has a free table

  Scenario: asks for the party size
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
    And the current node is "CollectPartySize"
    And our backend still has a free table
`
	// The steps read the same text, for the lines failures point at.
	features := fstest.MapFS{"booking.feature": {Data: []byte(feature)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: hs.URL,
		BuildKey: platform.Info().BuildKey,
		Agent:    "restaurant",
		Features: features,
	})
	if err != nil {
		panic(err)
	}
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			// The team's own steps register next to agenttest's.
			sc.Step(`^our backend (?:has|still has) a free table$`, func() error { return nil })
		},
		Options: &godog.Options{
			Format: "progress",
			Output: io.Discard,
			FS:     features,
			Paths:  []string{"booking.feature"},
			Strict: true,
		},
	}.Run()
	fmt.Println("godog exit status:", status)
	// Output: godog exit status: 0
}
