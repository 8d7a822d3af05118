@agent:restaurant
Feature: A step keyword in lower case

  Scenario: after a step
    When the user says "I want to book"
    then the agent's reply contains "How many"
    And the current node is "CollectPartySize"
