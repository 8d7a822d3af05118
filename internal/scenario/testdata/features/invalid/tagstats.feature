Feature: Statistical tags

  # A setting's problem names the setting as written.
  @confidence:95
  Scenario: a confidence without its percent sign
    When the user says "hi"
    Then the agent's reply contains "x"

  @confidence:95% @margin:150%
  Scenario: a margin above one
    When the user says "hi"
    Then the agent's reply contains "x"

  # A design with a setting that does not parse is not judged further:
  # @margin has an effect once @confidence is written right.
  @confidence:high @margin:0.1
  Scenario: a confidence that does not parse
    When the user says "hi"
    Then the agent's reply contains "x"

  # The default margin's problem is at the pass rate written, since no
  # @margin is written.
  @pass-rate:5% @confidence:95%
  Scenario: a pass rate below the default margin
    When the user says "hi"
    Then the agent's reply contains "x"

  # A share is a finite number: "Inf" parses as one, and is refused.
  @confidence:Inf
  Scenario: a confidence of infinity
    When the user says "hi"
    Then the agent's reply contains "x"

  # A pass rate of exactly 1, every run passing, is the highest there is.
  @repeat:3 @pass-rate:1
  Scenario: a pass rate of one
    When the user says "hi"
    Then the agent's reply contains "x"
