@smoke
Feature: Every tag is read

  # Each tag is read after one that is refused, and after @skip.
  @agent:${AGENT} @env:prod @via:pigeon @streaming:yes @quarantine:someday @within:0s @retries:x @agent:
  Scenario: one problem per tag
    When the user says "hi"
    Then the agent's reply contains "x"

  @skip @repeat:0
  Scenario: skipped and still checked
    When the user says "hi"
    Then the agent's reply contains "x"

  # A tag of an Examples block is reported where it is written.
  Scenario Outline: tagged rows
    When the user says "<w>"
    Then the agent's reply contains "x"

    @repeat:0
    Examples:
      | w  |
      | hi |
