@agent:clinic
Feture: A misspelt Feature

  Scenario: never read
    When the user says "When are you open?"
    Then the agent's reply contains "open"
