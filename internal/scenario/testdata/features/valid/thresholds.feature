Feature: Similarity thresholds that check next to nothing
  A threshold of 1 asks for the text's own words; 0.1 or less passes
  nearly any reply. A useful threshold, or none, is not warned of.

  Scenario: Pointless thresholds
    When the user says "a table please"
    Then the agent's reply is similar to "How many guests?" with at least 100%
    And the agent's reply is similar to "How many guests?" with at least 1
    And the agent's reply is similar to "How many guests?" with at least 5%
    And the agent's reply is similar to "How many guests?" with at least 0.1
    And the agent's reply is similar to "How many guests?" with at least 0.7
    And the agent's reply is similar to "How many guests?"

  Scenario Outline: A threshold from the examples
    When the user says "a table please"
    Then the agent's reply is similar to "How many guests?" with at least <min>

    Examples:
      | min |
      | 1   |
      | 60% |

  Scenario Outline: A percentage from the examples
    When the user says "a table please"
    Then the agent's reply is similar to "How many guests?" with at least <share>%

    Examples:
      | share |
      | 5     |
