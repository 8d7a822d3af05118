# Confirming outcomes beyond the chat, in Gherkin: the feature form of
# examples/suites/confirmations.yaml (docs/confirmations.md).
#
# A debug chat shows what the agent said; these steps read back what the
# platform recorded once the conversation is over:
#   - the conversation record (Conversations API), any field by its name;
#   - the handoff state the agent stored for the contact centre;
#   - webhook events, which must arrive signed for this conversation;
#   - the recording of a voice conversation.
# A probe step starts a scenario from an outbound call or an SMS instead of
# a debug chat.
#
# Against the embedded simulator everything is automatic. Against a real
# platform, run with --webhook-listen and --webhook-url, and list the
# numbers probes may call under probe_numbers: in agenttest.yaml (a probe
# to any other number stops the run before it starts).
#
# Run it with:   go run ./cmd/agenttest run examples/features/confirmations.feature
@agent:clinic
Feature: Clinic outcomes

  Scenario: urgent symptoms reach the on-call nurse
    When the user says "I have chest pain"
    # The record is read once it exists; the agent ended this chat with
    # the handoff, so agenttest also waits for in_progress to turn false.
    Then the conversation record shows:
      | field               | value         |
      | channel             | WEBCHAT       |
      | in_progress         | false         |
      | handoff             | true          |
      | handoff_destination | on_call_nurse |
      | num_turns           | at least 2    |
      | turns.intents       | urgent        |
    # What the contact centre receives, by the conversation id.
    And the handoff state "reason" is "urgent_symptoms"
    # Each event must arrive for this conversation with a valid signature.
    And a "handoff.created" webhook arrives

  # @within bounds the wait for the call's final status (default 2m).
  @within:1m
  Scenario: a reminder call connects
    # No debug chat is opened: the scenario starts from the call.
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"
    # The call's conversation, found by the state key call_sid.
    And the conversation record shows:
      | channel   | VOICE-SIP  |
      | num_turns | at least 1 |
    # Only voice conversations have a recording ("has no recording" for a chat).
    And the conversation has a recording

  Scenario: a reminder SMS opens a conversation
    When the SMS "Reply YES to confirm" is sent to "+447700900002"
    # Probes do not wait for the conversation to end unless the table asks
    # for in_progress false: an SMS conversation stays open for the reply.
    Then the conversation record shows:
      | in_progress | true |
