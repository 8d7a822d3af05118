@restaurant @agent:restaurant @retries:1
Feature: Table booking
  Designers' notes are free text.

  Background:
    Given the channel "WEBCHAT"
    And the integration attributes:
      | name | value |
      | tier | gold  |

  @smoke @env:pre-release
  Scenario: books in one message
    When the user says "a table for 2 at 7pm"
    Then the agent's reply contains "A table for 2"
    And I remember "ref" from the reply matching "reference ([A-Z0-9]{6})"
    When the user says:
      """
      What is my reference?
      Is it ${ref}?
      """
    Then the state includes:
      | party_size | 2     |
      | time       | 19:00 |

  @repeat:5 @pass-rate:80%
  Scenario Outline: asks for the party size
    Given the variant "spring"
    When the user says "<said>"
    Then the state "party_size" is "${size}"

    Examples: small
      | said      | size |
      | two of us | 2    |

    @large @timeout:30s
    Examples: large
      | said        | size |
      | a party of 9 | 9   |

  Rule: the greeting
    @agent:clinic
    Scenario: greets
      Given the conversation has started
      Then the greeting contains "Welcome"
      And the node trace passes through:
        | node     |
        | Greeting |

  @skip
  Scenario: cancels a booking
    When the user says "cancel"
    Then the conversation continues
