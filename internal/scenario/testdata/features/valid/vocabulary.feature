Feature: Every step of the vocabulary
  Each step definition's example, so the golden file holds what each one
  compiles to: a step dropped, weakened or set on the wrong field shows.

  Scenario: setup and a chat
    Given the agent "restaurant"
    And the environment "sandbox"
    And the channel "VOICE-SIP"
    And the variant "spring"
    And the ASR language "en-GB"
    And the TTS language "fr-FR"
    And the integration attribute "tier" is "gold"
    And the integration attributes:
      | region | north |
      | plan   | basic |
    Given the conversation has started
    Then the greeting contains "Welcome"
    When the user says "a table for 4 at 7pm"
    Then the agent says "How many people?"
    When the user says:
      """
      I booked for Friday.
      Can I change it?
      """
    Then the agent says:
      """
      Your table for 4 is booked.
      Your reference is R1234.
      """
    And the agent's reply contains "how many"
    And the agent's reply contains:
      """
      Our opening hours:
      Monday to Friday
      """
    And the agent's reply contains one of:
      | how many   |
      | party size |
    And the agent's reply does not contain "sorry"
    And the agent's reply matches "table for \d+"
    And the agent's reply is similar to "How many guests?" with at least 0.6
    And the agent's reply is similar to "How many?"
    When the user stays silent
    Then the node trace includes "ask_party_size"
    And the node trace does not include "handoff"
    And the node trace passes through:
      | start          |
      | ask_party_size |
    And the current node is "ask_party_size"
    And the flow is "booking"
    And the step is "collect_party"
    And the state "party_size" is "4"
    And the state "booking_ref" matches "^R\d+$"
    And the state has no "payment_card"
    And the state includes:
      | party_size | 4   |
      | time       | 7pm |
    And the agent hands off to "billing_team"
    And the agent does not hand off
    And the conversation ends
    And the conversation continues
    And the reply is delayed
    And the reply is not delayed
    And the ASR language is "en-GB"
    And the TTS language is "en-GB"
    And the metric "BOOKING_MADE" is "true"
    And the metric "CALL_TURN" was written 2 times
    And the function "check_availability" was called
    And the function "cancel_booking" was not called
    And the function "lookup_bill" failed
    And no function failed
    And the topic "opening_hours" was retrieved
    And the topic "menu" was cited
    And the reply came within 2000 ms
    And I remember "ref" from the reply matching "reference (R\d+)"
    And I remember "table" from the state "booking_ref"
    And the agent says "${ref} at ${table}"
    And the agent says "Hello" ignoring case
    And the agent's reply contains "how many" ignoring case
    And the agent's reply does not contain "sorry" ignoring case
    And the agent's reply contains, ignoring case:
      """
      Opening Hours
      """
    And the greeting contains "welcome" ignoring case

  Scenario: messaging
    Given the conversation is over messaging
    And the replies are streamed
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINED"
    When the user says "a person please"
    Then the events include "EVENT_TYPE_LIVE_AGENT_JOINED"
    And the events do not include "EVENT_TYPE_SYSTEM_MESSAGE"
    And the events arrive in this order:
      | EVENT_TYPE_HANDOFF_INITIATED |
      | EVENT_TYPE_LIVE_AGENT_JOINED |
    And a system message contains "high load"
    And an error system message contains "could not connect you"
    And there is no system message
    And the session ends
    And the session continues

  Scenario: a call
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"
    And the conversation record shows:
      | field          | value       |
      | channel        | WEBCHAT     |
      | handoff        | true        |
      | num_turns      | at least 2  |
      | num_ood        | between 1 and 1 |
      | metrics.BOOKED | true        |
      | state.day      | tuesday     |
    And the handoff state "reason" is "urgent_symptoms"
    And a "handoff.created" webhook arrives
    And the conversation has a recording

  Scenario: an SMS
    When the SMS "Reply YES to confirm" is sent to "+447700900002"
    Then the conversation record shows:
      | field   | value |
      | channel | SMS   |
    And the conversation has no recording

  Scenario: a call from a chosen number
    When an outbound call is placed to "+447700900001" from "+442071230002"
    Then the call ends with status "success"

  Scenario: an SMS from a chosen number
    When the SMS "Reply YES to confirm" is sent to "+447700900002" from "+442071230002"
    Then the conversation record shows:
      | field   | value |
      | channel | SMS   |
