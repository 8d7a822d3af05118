@agent:restaurant
Feature: Thresholds

  Scenario: asks the party size
    When the user says "a table please"
    Then the agent's reply is similar to "How many guests?" with at least 5%
