# Tags above a Background or a step: one error at the tags each, and the
# file's other problems still reported, not a cascade of errors at every
# line after the tags.
@agent:clinic
Feature: Misplaced tags

  @smoke
  # a comment between the tags and the Background
  @nightly
  Background:
    Given the user says "hi"

  Scenario: tagged step
    When the user says "When are you open?"
    @wip
    Then the agent's reply contains "Monday to Friday"

  Rule: tagged Background in a Rule
    @smoke
    Background:
      Given the user says "hello"

    Scenario: ends in a second Feature
      When the user says "hi"
      | not | a table |
  Feature: again
