Feature: Broken syntax

  Scenario: a
    When the user says "hi"
  Examples:
    | a |
  Feature: again
