@agent:restaurant
Feature: A step after the Examples

  Scenario Outline: books for <party>
    When the user says "a table for <party>"

    Examples:
      | party |
      | 4     |

    Then the agent's reply contains "How many"
