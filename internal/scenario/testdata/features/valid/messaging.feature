@agent:utility-billing @via:messaging
Feature: Web chat

  Scenario: hands over to a live agent
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINED"
    When the user says "I want to talk to a real person"
    Then the agent hands off to "billing_team"
    And the events arrive in this order:
      | event type                   |
      | EVENT_TYPE_HANDOFF_INITIATED |
      | EVENT_TYPE_LIVE_AGENT_JOINED |
    And the events do not include "EVENT_TYPE_SYSTEM_MESSAGE"
    And there is no system message
    And the session continues
    When the user says "bye"
    Then the events include "EVENT_TYPE_SESSION_END"
    And the session ends

  Scenario: nobody picks up
    When the user says "I want to talk to a real person"
    Then an error system message contains "could not connect you"
    And a system message contains "Sorry"

  @via:debug_chat
  Scenario: a tag goes back to debug chat
    When the user says "my account number is 12345678"
    Then the current node is "AskPostcode"

  Scenario: a step goes back to debug chat
    Given the conversation is over debug chat
    When the user says "my account number is 12345678"
    Then the current node is "AskPostcode"
