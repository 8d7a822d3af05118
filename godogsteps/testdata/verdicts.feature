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

  # The newest steps fail alike too: a turn's metadata, the languages, a
  # recording, the handoff state, a probe from a number of the agent's,
  # the events of web chat.
  @agent:utility-billing
  Scenario: metadata without the account number leaves it unknown
    When the user says "I'm signed in" with the metadata:
      | page | /account |
    Then the state "account_number" is "12345678"

  @agent:restaurant
  Scenario: a language the session did not ask for fails
    Given the ASR language "en-US"
    When the user says "hello"
    Then the ASR language is "en-US"
    And the TTS language is "en-US"

  @agent:clinic
  Scenario: a chat has no recording
    When the user says "goodbye"
    Then the conversation has a recording

  @agent:clinic
  Scenario: no handoff state without a handoff
    When the user says "goodbye"
    Then the handoff state "reason" is "urgent_symptoms"

  @agent:clinic
  Scenario: an SMS from a number the agent does not have fails
    When the SMS "Reply YES to confirm" is sent to "+447700900002" from "+447700900001"
    Then the conversation record shows:
      | in_progress | true |

  @agent:utility-billing @via:messaging
  Scenario: no live agent joins a bill question
    When the user says "what's my bill?"
    Then the events include "EVENT_TYPE_LIVE_AGENT_JOINED"
