# A third feature: the example clinic agent, with a Rule grouping related
# scenarios, Examples with their own tags, and a multi-line message.
#
# Run it with:   go run ./cmd/agenttest run examples
@clinic @agent:clinic
Feature: Clinic appointments

  Scenario: books an appointment and reads back the code
    # A DocString sends several lines as one message.
    When the user says:
      """
      Hello,
      I'd like to book an appointment on Tuesday at 10am
      """
    Then the current node is "ConfirmAppointment"
    And the state "time" is "10:00"
    And I remember "code" from the reply matching "booking code is ([A-Z0-9]{6})"
    When the user says "thanks, bye"
    Then the conversation ends
    And the state "booking_code" is "${code}"

  # The opening hours are right about 95% of the time. The tags make the
  # scenario statistical: it runs until a sequential test is 95% sure the
  # rate is above 0.6 (about 13 sessions here), and fails a rate of 0.6 or
  # less with the same confidence. A wide margin is cheap; the YAML
  # version (examples/suites/clinic.yaml) draws the line closer.
  @pass-rate:0.8 @margin:0.2 @confidence:0.95
  Scenario: tells callers the opening hours
    When the user says "When are you open?"
    Then the agent's reply contains "Monday to Friday"

  Rule: urgent callers are put through to the nurse

    Scenario Outline: puts urgent callers through to the nurse
      When the user says "<symptom>"
      Then the agent hands off to "on_call_nurse"
      And the agent's reply is similar to "That sounds urgent. I'm putting you through to our on-call nurse right now."

      Examples:
        | symptom           |
        | I have chest pain |

      # Tags on Examples apply to their rows only: --tags '@emergency'.
      @emergency
      Examples:
        | symptom           |
        | it's an emergency |

  @webchat @via:messaging
  Scenario: puts urgent callers through to a nurse over web chat
    When the user says "I have chest pain"
    Then the agent hands off to "on_call_nurse"
    And the events include "EVENT_TYPE_LIVE_AGENT_JOINED"
    And there is no system message
