# A second feature: a bill enquiry at the example utility-billing agent.
# It checks what the agent DID, not only what it said: the functions it
# called, the state it kept, a custom metric and a handoff.
#
# Run it with:   go run ./cmd/agenttest run examples
@billing @agent:utility-billing
Feature: Utility bill enquiry

  Scenario: reads the bill once the caller is identified
    Given the conversation has started
    Then the greeting contains "account number"
    When the user says "my account number is 12345678"
    Then the current node is "AskPostcode"
    And the state "account_number" is "12345678"
    When the user says "sw1a 1aa"
    # The nodes entered this turn, in this order (gaps allowed).
    Then the node trace passes through:
      | node       |
      | Verify     |
      | LookupBill |
      | ReadBill   |
    And the function "lookup_bill" was called
    And no function failed
    And the metric "SERVICE_REQUEST" is "bill_enquiry"
    And the agent's reply contains "£84.20"

  # Account 99999999 is the agent's documented failing account: the lookup
  # fails and the caller is handed to a human.
  Scenario: hands off to the billing team when the lookup fails
    When the user says "account 99999999, postcode M1 1AE"
    Then the function "lookup_bill" failed
    And the agent hands off to "billing_team"
    And the conversation ends

  # Over web chat a handoff reaches a live agent, who takes the chat on.
  @webchat
  Scenario: hands over to a live agent over web chat
    Given the conversation is over messaging
    When the user says "I want to talk to a real person"
    Then the events arrive in this order:
      | event type                   |
      | EVENT_TYPE_HANDOFF_INITIATED |
      | EVENT_TYPE_LIVE_AGENT_JOINED |
    And the session continues
    When the user says "my bill looks wrong"
    Then the agent's reply contains "looking into"
    When the user says "thanks, bye"
    Then the session ends
