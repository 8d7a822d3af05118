# Web chat against a platform that misbehaves on purpose: these scenarios
# pass only against a simulator with the fault their tag names, so they
# live under testdata (which `agenttest run features` skips) and
# features_test.go runs each against its own simulator (godog, which
# reads testdata too, leaves @platform-fault out).
@via:messaging @platform-fault
Feature: Web chat when the platform fails

  # The handoff finds no live agent: the platform says so and ends the
  # session (the simulator's --no-live-agent).
  @no-live-agent @agent:utility-billing
  Scenario: says when no live agent can take the chat
    When the user says "I want to talk to a real person"
    Then the agent hands off to "billing_team"
    And an error system message contains "could not connect you to an agent"
    And the events include "EVENT_TYPE_SESSION_END"
    And the session ends

  # The platform is overloaded: the join is answered with the high-load
  # system message and the agent never joins (the simulator's
  # --overload 1). Checks before the first When look at the opening.
  @overload @agent:restaurant
  Scenario: says when the platform is overloaded
    Given the conversation has started
    Then a system message contains "experiencing high load"
    And the events do not include "EVENT_TYPE_VENDOR_AGENT_JOINED"
    And the session continues
