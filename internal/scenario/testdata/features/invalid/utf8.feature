Feature: booking
  Scenario: books ÿþ a table
    When the user says "hi"
    Then the agent's reply contains "Welcome"
