@agent:clinic
Feature: A broken step says it alone

  # The step's own error, and not that the scenario checks nothing, nor
  # that its probe lacks a confirmation step.
  Scenario: a greeting check written wrong
    Given the conversation has started
    Then the greeting contans "Welcome"

  Scenario: an SMS probe with a confirmation written wrong
    When the SMS "hi" is sent to "+447700900001"
    Then the conversation recrd shows:
      | num_turns | 1 |

  # Nor that its @within bounds no call.
  @within:1m
  Scenario: a call written wrong under @within
    When an outbound cal is placed to "+447700900001"
