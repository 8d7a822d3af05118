# The run refuses before it starts the ${env:NAME} references it knows a
# scenario expands; a setup step's arguments are left to the run, which
# errors the scenario as a configuration error when it opens the session.
@agent:restaurant
Feature: Configuration error

  Scenario: says a variable no one set
    Given the channel "${env:AGENTTEST_TEST_UNSET_VARIABLE}"
    When the user says "a table for two"
    Then the agent's reply contains "table"

  Scenario: passes
    Then the greeting contains "Welcome"
