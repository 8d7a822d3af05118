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
