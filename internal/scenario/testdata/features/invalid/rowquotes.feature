Feature: Examples values that break their steps

  Scenario Outline: repeats what the user said
    When the user says "<text>"
    Then the agent's reply <check> "<text>"

    Examples:
      | text         | check         |
      | say "hi"     | contains      |
      | say \"hi\"   | contains      |
      | hello        | contain       |
      | hello        | is similar to |
      | say "hi"     | contain       |
