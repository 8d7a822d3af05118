# Acceptance features of agenttest itself, run by `go test ./features`
# against the embedded simulator and its example agents
# (examples/agents/restaurant.yaml).
@restaurant @agent:restaurant
Feature: Table booking at Bella Tavola

  Background:
    Given the channel "WEBCHAT"
    And the environment "sandbox"

  @smoke
  Scenario: books in one message and reads the reference back
    When the user says "Can I get a table for 2 at 7pm please?"
    Then the node trace passes through:
      | StartBooking   |
      | CheckParty     |
      | ConfirmBooking |
    And the current node is "ConfirmBooking"
    And the flow is "booking"
    And the step is "confirm"
    And the state includes:
      | key        | value |
      | party_size | 2     |
      | time       | 19:00 |
    And the state "booking_ref" matches "^[A-Z0-9]{6}$"
    And the metric "BOOKED" is "true"
    And the agent's reply contains "A table for 2 at 19:00"
    But the agent's reply does not contain "spring menu"
    And the function "check_availability" was not called
    And I remember "ref" from the reply matching "booking reference ([A-Z0-9]{6})"
    And I remember "stored" from the state "booking_ref"
    When the user says "What's my booking reference?"
    Then the agent says "Your booking reference is ${ref}, for 2 people at 19:00."
    And the state "booking_ref" is "${stored}"
    And the metric "BOOKED" was written 1 time

  # A DocString holds a reply as it is written, quotes and all, and may
  # run over several lines.
  Scenario: confirms the booking word for word
    When the user says "Can I get a table for 2 at 7pm please?"
    Then I remember "ref" from the state "booking_ref"
    And the agent says:
      """
      All set! A table for 2 at 19:00, booking reference ${ref}. Is there anything else?
      """
    When the user says "What's my booking reference?"
    Then the agent's reply contains:
      """
      Your booking reference is ${ref}
      """
    And the agent's reply contains, ignoring case:
      """
      YOUR BOOKING REFERENCE IS ${ref}
      """

  Scenario Outline: asks for the party size, then the time
    When the user says "I'd like to make a reservation"
    Then the current node is "CollectPartySize"
    And the agent's reply contains "how many" ignoring case
    And the state has no "party_size"
    When the user says "<said>"
    Then the agent says "And at what time would you like the table for ${size}?"
    And the state "party_size" is "<size>"
    When the user says "half past eight in the evening, so 8:30pm"
    Then the node trace does not include "CheckAvailability"
    And the state "time" is "20:30"

    Examples:
      | said         | size |
      | two of us    | 2    |
      | a party of 6 | 6    |

  @functions
  Scenario: holds a large party while checking the private room
    When the user says "We need a table for 9 at 8pm"
    Then the reply is delayed
    And the agent's reply contains "one moment"
    When the user says "sure, I'll wait"
    Then the reply is not delayed
    And the function "check_availability" was called
    And no function failed
    And the agent's reply contains "A table for 9 at 20:00"
    And the agent's reply contains one of:
      | private dining room |
      | main dining room    |

  @variant
  Scenario: greets in the spring variant's wording
    Given the variant "spring"
    And the conversation has started
    Then the greeting contains "now serving our spring menu"
    And the state "variant_id" is "spring"
    When the user says "book a table please"
    Then the agent's reply matches "^Lovely, a spring dinner!"
