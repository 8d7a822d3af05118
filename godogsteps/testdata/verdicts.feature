# Scenarios that fail on purpose, beside the passing ones of features/:
# the godog integration must give each the verdict `agenttest run` gives.
Feature: Verdicts under godog

  @agent:restaurant
  Scenario: a reply that does not say what is expected fails
    When the user says "I'd like to book a table"
    Then the agent's reply contains "we are closed"

  @agent:restaurant
  Scenario: a later check fails after earlier ones held
    When the user says "I'd like to book a table"
    Then the current node is "CollectPartySize"
    When the user says "4 people at 7pm"
    Then the state "party_size" is "6"

  @agent:clinic
  Scenario: a record that does not show the handoff fails
    When the user says "goodbye"
    Then the conversation record shows:
      | handoff | true |

  @agent:clinic @within:5s
  Scenario: a call that fails where success is expected fails
    When an outbound call is placed to "+447700900999"
    Then the call ends with status "success"

  # No step awaits the call: the scenario's end does, and it must connect.
  @agent:clinic @within:5s
  Scenario: a call that no step awaits fails when it does not connect
    When an outbound call is placed to "+447700900999"

  @agent:restaurant @skip
  Scenario: a skipped scenario runs nothing
    When the user says "hello"
    Then the agent says "never checked"
