# The conversations of parity.yaml, written as a feature.
Feature: Parity

  Scenario: books a table for four
    Given the agent "restaurant"
    Then the greeting contains "Welcome"
    When the user says "I'd like to book a table"
    Then the node trace includes "CollectPartySize"
    And the current node is "CollectPartySize"
    When the user says "4 people at 7pm"
    Then the state includes:
      | key        | value |
      | party_size | 4     |
      | time       | 19:00 |
    And the current node is "ConfirmBooking"
    And the metric "BOOKED" is "true"
    And I remember "ref" from the reply matching "reference ([A-Z0-9]{6})"
    When the user says "what was my reference?"
    Then the agent's reply contains "${ref}"
    When the user says "thanks, bye"
    Then the conversation ends
    But the agent does not hand off

  @agent:restaurant
  Scenario: expects the wrong party size
    When the user says "I'd like to book a table"
    And the user says "4 people at 7pm"
    Then the state "party_size" is "6"

  @agent:restaurant
  Scenario: expects other words
    When the user says "I'd like to book a table"
    Then the agent says "How many guests will be dining tonight?"

  @agent:utility-billing
  Scenario: hands off a failed bill lookup
    When the user says "account 99999999, postcode M1 1AE"
    Then the function "lookup_bill" failed
    And the agent hands off to "billing_team"
    And the conversation ends

  @agent:utility-billing
  Scenario: talks after the end
    When the user says "account 99999999, postcode M1 1AE"
    And the user says "hello?"

  @agent:clinic
  Scenario Outline: puts urgent callers through
    When the user says "<symptom>"
    Then the agent hands off to "on_call_nurse"

    Examples:
      | symptom           |
      | I have chest pain |
      | it's an emergency |

  @agent:restaurant
  Scenario: cannot capture a reference
    When the user says "what's my reference?"
    Then I remember "ref" from the reply matching "reference ([A-Z0-9]{6})"

  @agent:restaurant
  Scenario: prompts after silence
    When the user says "I want to book"
    And the user stays silent
    Then the node trace passes through:
      | Silence          |
      | CollectPartySize |
    And the current node is "CollectPartySize"

  @agent:utility-billing @via:messaging
  Scenario: hands over to a live agent over web chat
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINED"
    When the user says "I want to talk to a real person"
    Then the agent hands off to "billing_team"
    And the events arrive in this order:
      | EVENT_TYPE_HANDOFF_INITIATED |
      | EVENT_TYPE_LIVE_AGENT_JOINED |
    And there is no system message
    And the session continues
    When the user says "bye"
    Then the agent's reply contains "Goodbye"
    And the events include "EVENT_TYPE_SESSION_END"
    And the session ends

  @agent:restaurant
  Scenario: expects a system message over web chat
    Given the conversation is over messaging
    When the user says "I'd like to book a table"
    Then a system message contains "high load"
    And the events include "EVENT_TYPE_VENDOR_AGENT_MESSAGE"

  # A quoted state key may use ${...}, expanded when the step runs.
  @agent:restaurant
  Scenario: remembers a state value under a key it captured
    When the user says "Can I get a table for 2 at 7pm please?"
    Then I remember "what" from the reply matching "(booking) reference"
    And I remember "ref" from the state "${what}_ref"
    When the user says "What's my booking reference?"
    Then the agent's reply contains "${ref}"
