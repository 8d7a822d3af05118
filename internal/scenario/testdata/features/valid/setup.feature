@agent:clinic
Feature: Session parameters

  # The session's parameters are at the first setup step, whichever it
  # sets: a run-time error expanding them is reported there.
  Scenario: a variant
    Given the variant "v2"
    When the user says "hi"
    Then the agent's reply contains "x"

  Scenario: an ASR language
    Given the ASR language "en-GB"
    When the user says "hi"
    Then the agent's reply contains "x"

  Scenario: a TTS language
    Given the TTS language "en-GB"
    When the user says "hi"
    Then the agent's reply contains "x"

  Scenario: one integration attribute
    Given the integration attribute "tier" is "gold"
    When the user says "hi"
    Then the agent's reply contains "x"
