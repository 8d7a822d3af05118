Feature: Retries

  @agent:restaurant
  Scenario: books after glitches
    Then the greeting contains "Welcome"
    When the user says "I'd like to book a table"
    Then the current node is "CollectPartySize"
    When the user says "4 people at 7pm"
    Then the current node is "ConfirmBooking"
