@agent:clinic
Feature: Examples columns that nothing reads

  # A Background's ${area} reads each outline's row.
  Background:
    When the user says "hello from ${area}"

  # note is read by no step: its two rows run the same steps.
  Scenario Outline: a left-over column
    When the user says "I have a <symptom>"
    Then the agent's reply contains "doctor"

    Examples:
      | symptom  | area  | note     |
      | cough    | north | mild     |
      | headache | south | moderate |

  # Read as <name>, as ${name}, in the name, in a Background and in
  # another cell: no warning.
  Scenario Outline: every column is read <title>
    When the user says "hi"
    Then the agent's reply contains "${full}"

    Examples:
      | title | detail | area  | full           |
      | a     | cough  | north | ${detail} soon |

  # A column close to one a step uses is no misspelling of it: the hint
  # names no placeholder. ${env:TOKEN} is the environment's, not the
  # column's.
  Scenario Outline: a near column
    When the user says "on <day> with ${env:TOKEN}"
    Then the agent's reply contains "open"

    Examples:
      | day    | days | area  | TOKEN |
      | friday | 2    | north | t     |

  Rule: a misspelt column
    # The Rule's Background reads floor.
    Background:
      When the user says "on ${floor}"

    Scenario Outline: in a rule
      When the user says "on <day>"
      Then the agent's reply contains "open"

      Examples:
        | day    | area  | symptoms | floor |
        | friday | north | cough    | 2     |
