Feature: Messaging chosen by a step

  Scenario: books over web chat
    Given the agent "restaurant"
    And the conversation is over messaging
    When the user says "I'd like to book a table"
    Then the agent's reply contains "how many"
    And I remember "what" from the reply matching "(\w+) people"
