@agent:restaurant
Feature: Channel rules

  @via:messaging
  Scenario: debug metadata over messaging
    When the user says "a table for 4"
    Then the node trace includes "CollectPartySize"
    And the state "party_size" is "4"
    And I remember "ref" from the state "booking_ref"
    And the events include "EVENT_TYPE_VENDOR_AGENT_JOINED"

  Scenario: events over debug chat
    When the user says "hi"
    Then the events include "EVENT_TYPE_SYSTEM_MESSAGE"
    And the session ends

  @via:web
  Scenario: unknown channel
    When the user says "hi"

  Scenario: a probe over messaging
    Given the conversation is over messaging
    When the SMS "hi" is sent to "+447700900001"

  @via:messaging
  Scenario: the joined event in a turn's sequence
    When the user says "hi"
    Then the events arrive in this order:
      | event type                      |
      | EVENT_TYPE_VENDOR_AGENT_JOINED  |
      | EVENT_TYPE_VENDOR_AGENT_MESSAGE |

  @via:messaging
  Scenario: a delayed reply over messaging
    When the user says "a table for 4"
    Then the reply is not delayed
