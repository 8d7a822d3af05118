Feature: Outlines whose rows lack a column

  Scenario Outline: books on <day>
    When the user says "a table on <day> for <party>"
    Then the agent's reply contains "<reply>"

    @weekdays
    Examples: weekdays
      | day    | party | reply    |
      | monday | 4     | How many |

    Examples: no party
      | day     | reply    |
      | tuesday | How many |

    Examples: not written yet
      | day | party | reply |

    Examples:

  Scenario Outline: a column named twice
    When the user says "on <day> ${day}"
    Then the agent's reply contains "ok"

    Examples:
      | day    | day     |
      | monday | tuesday |

  Scenario Outline: an outline with no Examples
    When the user says "a table for <party>"
    Then the agent's reply contains "ok"

  # The hints name each column once, of one table or of all.
  Scenario Outline: a placeholder no table has
    When the user says "<party> on <day>"
    Then the agent's reply contains "ok"

    Examples:
      | day    | day     |
      | monday | tuesday |

    Examples:
      | day     | party |
      | weekend | 2     |

  Rule: outlines in a Rule are checked too
    Scenario Outline: in a rule
      When the user says "on <dya>"
      Then the agent's reply contains "ok"

      Examples:
        | day    |
        | monday |

  Scenario Outline: a placeholder no table has, twice over
    When the user says "<size> on <day>"
    Then the agent's reply contains "ok"

    Examples:
      | day    |
      | monday |

    Examples:
      | day     |
      | weekend |
