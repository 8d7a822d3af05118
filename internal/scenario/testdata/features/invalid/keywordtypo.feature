@agent:clinic
Feature: Misspelt keywords

  Scenario: a Feature line misspelt inside a scenario
    When the user says "hi"
    Feture: not the file's
    Then the agent's reply contains "hi"

  Scenario Outline: a misspelt Examples
    When the user says "<request>"
    Then the agent's reply contains "open"

    Exmaples:
      | request            |
      | When are you open? |

  Scenario Outlin: a misspelt Scenario Outline
    When the user says "hi"

    examples:
      | a |
      | b |

  Scenario: a misspelt step keyword after a step
    When the user says "hi"
    Thne the agent's reply contains "hi"
