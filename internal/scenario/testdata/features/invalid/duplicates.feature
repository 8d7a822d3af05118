Feature: Duplicate names

  Scenario: greets
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  Scenario: greets
    When the user says "hello"
    Then the agent's reply contains "Welcome"

  Scenario Outline: books
    When the user says "<n>"
    Then the agent's reply contains "ok"

    Examples:
      | n |
      | 4 |
      | 4 |
