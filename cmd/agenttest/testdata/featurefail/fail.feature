@agent:restaurant
Feature: Failing on purpose
  Scenario: expects other words
    When the user says "I'd like to book a table"
    Then the agent's reply contains "how many guests"
