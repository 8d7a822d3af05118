# Probes and confirmations (docs/confirmations.md): what the platform
# recorded, checked after the conversation, and scenarios that start from
# an outbound call or an SMS instead of a debug chat. Every step of the
# group is used here against the embedded simulator.
@confirm @agent:clinic
Feature: Confirming outcomes beyond the chat

  Scenario: an urgent handoff is recorded, stored and announced
    When the user says "I have chest pain"
    Then the agent hands off to "on_call_nurse"
    And the conversation record shows:
      | field               | value         |
      | channel             | WEBCHAT       |
      | environment         | sandbox       |
      | in_progress         | false         |
      | handoff             | true          |
      | handoff_destination | on_call_nurse |
      | num_turns           | at least 2    |
      | turns.intents       | urgent        |
    And the handoff state "reason" is "urgent_symptoms"
    And the conversation has no recording
    And a "conversation.completed" webhook arrives
    And a "handoff.created" webhook arrives

  Scenario: a booking is recorded with its state and metrics
    When the user says "I'd like to book an appointment on Tuesday at 10am"
    Then the conversation record shows:
      | num_turns      | between 1 and 10 |
      | handoff        | false            |
      | state.day      | tuesday          |
      | metrics.BOOKED | true             |

  @within:30s
  Scenario: a reminder call connects
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"
    And the conversation record shows:
      | channel     | VOICE-SIP     |
      | to_number       | +447700900001    |
      | num_turns       | at least 1       |
      | turns.responses | Riverside Clinic |
    And the conversation has a recording

  Scenario: a reminder SMS opens a conversation
    When the SMS "Reply YES to confirm" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress     | true                 |
      | turns.responses | Reply YES to confirm |

  # From a number of the agent's own (agent_number), not the one the
  # platform picks for the environment.
  @within:30s
  Scenario: a reminder call from the clinic's number
    When an outbound call is placed to "+447700900001" from "+15555550199"
    Then the call ends with status "success"
    And the conversation record shows:
      | from_number | +15555550199 |

  Scenario: a reminder SMS from the clinic's number
    When the SMS "Reply YES to confirm" is sent to "+447700900002" from "+15555550199"
    Then the conversation record shows:
      | from_number | +15555550199 |
