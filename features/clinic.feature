# The clinic agent (examples/agents/clinic.yaml): appointments and the
# on-call nurse handoff.
@clinic @agent:clinic
Feature: Clinic appointments

  Scenario: books an appointment and keeps the code it read out
    When the user says "I'd like to book an appointment on Tuesday at 10am"
    Then the current node is "ConfirmAppointment"
    And the state "day" is "tuesday"
    And the metric "BOOKED" is "true"
    And I remember "code" from the reply matching "booking code is ([A-Z0-9]{6})"
    When the user says "thanks, bye"
    Then the conversation ends
    And the state "booking_code" is "${code}"

  Rule: urgent callers go to the nurse

    Scenario Outline: puts urgent callers through to the nurse
      When the user says "<symptom>"
      Then the agent hands off to "on_call_nurse"
      And the agent's reply is similar to "That sounds urgent. I'm putting you through to our on-call nurse right now."

      Examples:
        | symptom           |
        | I have chest pain |

      @emergency
      Examples: emergencies
        | symptom           |
        | it's an emergency |
