Feature: A doc string never closed

  Scenario: a
    When the user says:
      """
      I would like a table
      """
    Then the agent says:
      ```text
      Welcome

  Scenario: b
    When the user says "hi"
