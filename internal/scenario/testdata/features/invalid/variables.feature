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

  # A step's doc string and table cells are checked as its text is, each
  # reference of a text, after a malformed one too.
  Scenario: references in a doc string, a table and after a known one
    When the user says:
      """
      my name is ${nmae}
      """
    Then I remember "name" from the reply matching "(\w+)"
    When the user says "${name} and ${nmae}"
    Then the state includes:
      | key  | value   |
      | name | ${naem} |
    When the user says:
      """
      half a reference ${name
      """

  # A value remembered by the step that uses it, or a step after the
  # one that uses it, is named with where it is remembered: the
  # reference comes too early, the name is right.
  Scenario: remembered too late
    When the user says "book a table"
    Then the agent's reply contains "reference ${code}"
    And I remember "code" from the reply matching "reference (R\d+)"
    And I remember "again" from the reply matching "${again}(\d+)"
    And I remember "code" from the reply matching "(R\d+)"
    And I remember "broken" from the reply matching "(${broken}"

  # Each scenario is a conversation of its own: a value another scenario
  # remembers (above or below) is named as such; a near miss of one is
  # not, nor is the remembering step of an Outline's other row.
  Scenario: uses a value of another scenario
    When the user says "is ${code} booked? and ${note}?"
    Then the agent's reply contains "${codes}"

  Scenario Outline: remembers a note on <day>
    When the user says "${note} on <day>"
    Then I remember "note" from the reply matching "(.*)"

    Examples:
      | day    |
      | monday |
      | friday |

  # An Outline's rows are the one scenario to this rule.
  Scenario Outline: rows remember different names
    When the user says "${second} again"
    Then I remember "<name>" from the reply matching "(.*)"

    Examples:
      | name   |
      | first  |
      | second |
