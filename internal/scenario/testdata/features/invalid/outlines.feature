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
