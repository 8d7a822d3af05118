@agent:restaurant
Feature: Steps written as descriptions
  when the clinic is closed, the agent says so: prose, not a step.

  Rule: bookings
    the user says "rule text"

    Background:
      given the channel "WEBCHAT"

    Scenario: a lower-case keyword
      when the user says "I want to book"
      Then the agent's reply contains "How many"

    Scenario Outline: a keyword run into the text
      Whenthe user says "<party> people"
      Then the agent's reply contains "How many"

      Examples: parties
        And the agent's reply contains "table"
        | party |
        | 4     |

  Scenario: a misspelt first keyword
    Wehn the user says "I want to book"
    Then the agent's reply contains "How many"

  Scenario: a keyword of another language
    Quand  the user says "I want to book"
    Then the agent's reply contains "How many"
