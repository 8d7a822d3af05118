# A Feature without a title is named after its file.
Feature:
  Scenario: a
    When the user says "hi"
    Then the agent's reply contains "x"
