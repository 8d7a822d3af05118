@agent:clinic
Feature: A misspelt Scenario
  Reads the next lines as this description: the scenario vanishes.
  Note: a line of prose with a colon is not a keyword.

  Scenaro: asks for the opening hours
    When the user says "When are you open?"

  Scenario: asks again
    When the user says "When are you open?"
    Then the agent's reply contains "open"
