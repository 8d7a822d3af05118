@smoke @via:messaging
Feature: Tags

  # A tag the Feature gives is the scenario's once; a bare tag other
  # than @streaming is a filter tag over messaging too, without a word.
  @smoke @fast
  Scenario: tagged twice
    When the user says "hi"
    Then the agent's reply contains "x"

  # The least of each count. A name:value tag near no parameter is a
  # filter tag, without a word.
  @retries:0 @repeat:1 @jira:ABC-123
  Scenario: bounds
    When the user says "hi"
    Then the agent's reply contains "x"

  # The most of a count, as a suite's YAML takes it.
  @retries:2147483647
  Scenario: most retries
    When the user says "hi"
    Then the agent's reply contains "x"
