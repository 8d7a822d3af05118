@agent:clinic
  Scenario: written without its Feature
    When the user says "When are you open?"
    Then the agent's reply contains "open"

  Scenario: and another
    When the user says "hi"
