@agent:clinic
Feature: Outlines and plain scenarios

  # <b> in a plain Scenario is text: only an outline substitutes.
  Scenario: markup in a plain scenario
    When the user says "<b>hi</b>"
    Then the agent's reply contains "x"

  # Without placeholders an outline with no Examples runs once.
  Scenario Outline: an outline without placeholders
    When the user says "hi"
    Then the agent's reply contains "x"

  # An Examples block without rows adds no scenario, and its outline's
  # placeholders are no error of it.
  Scenario Outline: rows still to write <day>
    When the user says "on <day>"
    Then the agent's reply contains "x"

    Examples:
      | day |

  Scenario:
    When the user says "hi"
    Then the agent's reply contains "x"
