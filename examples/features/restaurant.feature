# A first feature: book a table at the example restaurant agent. It is the
# same conversation as examples/suites/restaurant.yaml, written in Gherkin.
#
# Run it with:   go run ./cmd/agenttest run examples
# (no target configured: agenttest starts its embedded simulator, which
# serves the example agents in examples/agents). List every step you can
# use with:      go run ./cmd/agenttest steps
#
# Tags are for filtering (--tags '@smoke') and also set parameters:
# @agent:NAME, @env:ENV, @retries:N, @repeat:N, @pass-rate:0.8,
# @timeout:30s, @skip. A tag on the Feature applies to every scenario.
@booking
Feature: Restaurant booking
  Free text under the title is for the reader: say what the agent should
  do and why it matters.

  # Background steps run before each scenario. Setup steps (Given ...)
  # choose the session; the session opens at the first When.
  Background:
    Given the agent "restaurant"
    And the environment "sandbox"
    And the channel "WEBCHAT"

  @smoke
  Scenario: books a table for four
    # Checks before any When apply to the greeting.
    Given the conversation has started
    Then the greeting contains "Welcome"
    When the user says "I'd like to book a table"
    # And and But continue the step before: here, more checks.
    Then the agent's reply contains "How many"
    And the node trace includes "CollectPartySize"
    When the user says "4 people at 7pm"
    Then the current node is "ConfirmBooking"
    And the state "time" matches "^19:00$"
    # Keep part of the reply for later steps: ${ref}.
    And I remember "ref" from the reply matching "reference ([A-Z0-9]{6})"
    When the user says "what was my reference?"
    Then the agent's reply contains "${ref}"
    When the user says "thanks, bye"
    Then the conversation ends
    But the agent does not hand off

  # A Scenario Outline runs once per Examples row; <column> and ${column}
  # both read the row.
  Scenario Outline: books for different party sizes
    When the user says "a table for <party> at 7pm"
    Then the state "party_size" is "${party}"
    And the conversation continues

    Examples:
      | party |
      | 2     |
      | 6     |

  # Session details go in as integration attributes, one row each.
  @voice
  Scenario: a voice call carries the caller's number
    Given the channel "VOICE-SIP"
    And the integration attributes:
      | name        | value         |
      | from_number | +447700900123 |
    When the user says "what's on the menu?"
    Then the state "from_" is "+447700900123"
    And the topic "menu" was retrieved

  # The same booking through web chat: the Messaging API that end users'
  # chat widget uses. No debug metadata there: check the reply, the events
  # and the conversation record.
  @webchat @via:messaging
  Scenario: books a table over web chat
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINED"
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
    When the user says "4 people at 7pm"
    Then the agent's reply contains "reference"
    And there is no system message
    And the conversation record shows:
      | field   | value   |
      | channel | WEBCHAT |

  # The same over a web chat that streams its replies, in chunks as the
  # chat widget gets them (@streaming:true says it as a tag); the checks
  # read the reply the chunks add up to.
  @webchat @via:messaging
  Scenario: books a table over web chat, replies streamed
    Given the replies are streamed
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
    When the user says "4 people at 7pm"
    Then the agent's reply contains "reference"
    And the events include "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK"
