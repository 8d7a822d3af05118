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

  Scenario: opens the conversation and checks nothing
    Given the agent "restaurant"
    And the conversation has started

  Scenario: a capture with a broken pattern is reported once
    When the user says "4 people at 7pm"
    Then I remember "ref" from the reply matching "reference ([A-Z0-9]{6}"
    When the user says "what was my reference?"
    Then the agent's reply contains "${ref}"

  Scenario Outline: an outline's pattern is reported at its step
    When the user says "hi"
    Then the agent's reply matches "<pattern>"

    Examples:
      | pattern |
      | [a      |
