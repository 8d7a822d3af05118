Feature: Unknown columns

  Scenario Outline: a misspelt column
    When the user says "a table on <dya> for <party>"
    When the user says:
      """
      <day> for <paty>
      """
    Then the state includes:
      | party_size | <prty> |

    Examples:
      | day    | party |
      | friday | 4     |
      | monday | 2     |

  Scenario Outline: a misspelt header
    When the user says "<request>"

    Examples:
      | requst       |
      | when to open |

  Scenario Outline: an unused column named twice is warned of once
    When the user says "hi"

    Examples:
      | note | note |
      | a    | b    |
