# The agent and the environment are fixed before the run starts: a
# ${...} in them would reach the platform as written.
Feature: fixed before the run

  Scenario: an agent from a variable
    Given the agent "${env:AGENT}"
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  Scenario: an environment from a variable
    Given the agent "restaurant"
    And the environment "${env:NIGHT_ENV}"
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  @agent:${agent}
  Scenario: an agent tag from a variable
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  Scenario: an environment the platform does not have
    Given the environment "prod"
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  # At the environment's step, not at the first setup step.
  Scenario: an environment after another setup step
    Given the channel "WEBCHAT"
    And the environment "prod"
    When the user says "hi"
    Then the agent's reply contains "Welcome"

  # As YAML's agent: "" and env: "", at the quote.
  Scenario: an empty agent and environment
    Given the agent ""
    And the environment ""
    When the user says "hi"
    Then the agent's reply contains "Welcome"
