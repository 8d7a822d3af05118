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
    When the user says "${detail}"
    Then the agent's reply contains "${full}"

    Examples:
      | title | detail | area  | full           |
      | a     | cough  | north | ${detail} soon |

  Rule: a misspelt column
    Scenario Outline: in a rule
      When the user says "on <day>"
      Then the agent's reply contains "open"

      Examples:
        | day    | area  | symptoms |
        | friday | north | cough    |
