Feature: Broken steps

  Scenario: undefined and invalid steps
    When the user says "hi"
    Then the agents reply contain "hello"
    And the agent's reply matches "(unclosed"
    And the agent's reply is similar to "hi" with at least 2
    Given the agent "restaurant"
    Then the state includes:
      | a | b | c |

  Scenario: nothing to do
    Given the agent "restaurant"
