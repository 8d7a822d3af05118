Feature: Unknown variables

  Scenario: a capture used before it is taken, and a typo
    When the user says "my reference is ${ref}"
    Then I remember "ref" from the reply matching "reference (R\d+)"
    When the user says "again ${rfe}"
    Then the agent's reply contains "${ref}"

  Scenario Outline: an Examples column misspelt in a reference
    When the user says "book for ${dya} at ${env:HOME}"
    Then the agent's reply contains "<day>"

    Examples:
      | day    |
      | friday |
