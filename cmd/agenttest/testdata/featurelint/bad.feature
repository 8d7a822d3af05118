@agent:restaurant
Feature: Typos
  Scenario: a typo
    When the user says "hi"
    Then the agents reply contain "hello"
