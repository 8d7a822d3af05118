package godogsteps_test

import (
	"context"
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
	buildURL, buildKey, stop := simulator()
	defer stop()

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
		BuildURL: buildURL,
		BuildKey: buildKey,
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

// A failing agenttest step returns an error that says where, which check
// and whose fault it is: a check's key (here response:) when the agent
// broke an expectation, an error kind (http:, config:, ...) when the
// platform or the configuration did. godog prints it under the step; an
// After hook of yours receives it too.
func ExampleSteps_Register_failure() {
	buildURL, buildKey, stop := simulator()
	defer stop()

	feature := `@agent:restaurant
Feature: Booking
  Scenario: the agent's words
    When the user says "I'd like to book a table"
    Then the agent says "How many people will be joining you tonight?"

  Scenario: no runtime host
    When the user says "goodbye"
    Then the conversation record shows:
      | channel | WEBCHAT |
`
	features := fstest.MapFS{"booking.feature": {Data: []byte(feature)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: buildURL,
		BuildKey: buildKey,
		Features: features,
	})
	if err != nil {
		panic(err)
	}
	godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			sc.After(func(ctx context.Context, s *godog.Scenario, err error) (context.Context, error) {
				fmt.Printf("%s:\n%v\n", s.Name, err)
				return ctx, nil
			})
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: features, Paths: []string{"booking.feature"}},
	}.Run()
	// Output:
	// the agent's words:
	// booking.feature:5:5: response: reply is not the expected text
	//   expected: How many people will be joining you tonight?
	//   actual:   Lovely! How many people will be joining you, and at what time?
	//   diff:     {+Lovely! +}How many people will be joining you[- tonight-]{+, and at what time+}?
	// no runtime host:
	// booking.feature:9:5: config: confirm: no client for the runtime host (give godogsteps.Options.RuntimeURL, AccountID and RuntimeKey)
}

// simulator serves agenttest's platform simulator in-process and returns
// its build host, its key and how to stop it. A module of your own cannot
// import internal/sim: run "agenttest sim --print-env" as a process and
// read the AGENTTEST_* lines it prints instead.
func simulator() (buildURL, buildKey string, stop func()) {
	platform, err := sim.New(sim.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(platform.Handler())
	platform.SetURLs(hs.URL, hs.URL)
	return hs.URL, platform.Info().BuildKey, func() { hs.Close(); platform.Close() }
}

// A step of the team's own reads what agenttest's steps found: the value
// an "I remember" step captured, through Expand, and the conversation's
// id, to look for the booking in the team's own systems.
func ExampleExpand() {
	buildURL, buildKey, stop := simulator()
	defer stop()

	feature := `@agent:restaurant
Feature: Booking
  Scenario: the booking reaches our backend
    When the user says "a table for 4 at 7pm"
    Then I remember "ref" from the reply matching "booking reference ([A-Z0-9]+)"
    And our backend has the booking "${ref}"
`
	features := fstest.MapFS{"booking.feature": {Data: []byte(feature)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: buildURL, BuildKey: buildKey, Features: features})
	if err != nil {
		panic(err)
	}
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			sc.Step(`^our backend has the booking "([^"]*)"$`, func(ctx context.Context, ref string) error {
				ref, err := godogsteps.Expand(ctx, ref)
				if err != nil {
					return err
				}
				fmt.Printf("booking %d characters long, of conversation %t\n", len(ref), godogsteps.ConversationID(ctx) != "")
				return nil
			})
		},
		Options: &godog.Options{Format: "progress", Output: io.Discard, FS: features, Paths: []string{"booking.feature"}, Strict: true},
	}.Run()
	fmt.Println("godog exit status:", status)
	// Output:
	// booking 6 characters long, of conversation true
	// godog exit status: 0
}

// The webhook steps wait on agenttest's own receiver: serve it where the
// platform reaches it, register its URL once, before the scenarios, and
// unregister it after them.
func ExampleNewWebhookReceiver() {
	platform, err := sim.New(sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	if err != nil {
		panic(err)
	}
	defer platform.Close()
	hosts := httptest.NewServer(platform.Handler())
	defer hosts.Close()
	platform.SetURLs(hosts.URL, hosts.URL)
	info := platform.Info()

	receiver := godogsteps.NewWebhookReceiver("")
	public := httptest.NewServer(receiver) // in CI: an https:// URL that reaches it
	defer public.Close()

	feature := `@agent:clinic
Feature: Urgent calls
  Scenario: the nurse is told
    When the user says "I have chest pain"
    Then a "handoff.created" webhook arrives
`
	features := fstest.MapFS{"urgent.feature": {Data: []byte(feature)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: hosts.URL, BuildKey: info.BuildKey,
		RuntimeURL: hosts.URL, AccountID: info.AccountID, RuntimeKey: info.RuntimeKey,
		WebhookReceiver: receiver,
		Features:        features,
	})
	if err != nil {
		panic(err)
	}
	if err := steps.RegisterWebhook(context.Background(), public.URL+"/"); err != nil {
		panic(err)
	}
	// The platform sends an endpoint every environment's events while it
	// exists: remove it when the suite is done.
	defer steps.UnregisterWebhook(context.Background())
	status := godog.TestSuite{
		ScenarioInitializer: steps.Register,
		Options:             &godog.Options{Format: "progress", Output: io.Discard, FS: features, Paths: []string{"urgent.feature"}, Strict: true},
	}.Run()
	fmt.Println("godog exit status:", status)
	// Output: godog exit status: 0
}
