# The utility-billing agent (examples/agents/utility-billing.yaml): checks
# on what the agent did, not only on what it said.
@billing @agent:utility-billing
Feature: Bill enquiries

  Scenario: reads the bill once the caller is identified
    Given the conversation has started
    Then the greeting contains "account number"
    And the current node is "AskAccount"
    When the user says "my account number is ${account}"
    Then the current node is "AskPostcode"
    And the state "account_number" is "${account}"
    When the user says "sw1a 1aa"
    Then the node trace passes through:
      | Verify     |
      | LookupBill |
      | ReadBill   |
    And the function "verify_identity" was called
    And the function "lookup_bill" was called
    And no function failed
    And the state "postcode" is "SW1A 1AA"
    And the metric "SERVICE_REQUEST" is "bill_enquiry"
    And the agent's reply contains "£84.20"

    Examples:
      | account  |
      | 12345678 |

  Scenario: takes the account number of a signed-in customer from the web page
    When the user says "I'm signed in, what's my bill?" with the metadata:
      | key            | value    |
      | account_number | 12345678 |
      | page           | /account |
    Then the node trace passes through:
      | SignedIn    |
      | AskPostcode |
    And the state "account_number" is "12345678"

  Scenario: asks for the account number when the page sends none
    When the user says "I'm signed in"
    Then the node trace passes through:
      | SignedIn   |
      | AskAccount |
    And the state has no "account_number"

  Scenario: hands off to the billing team when the lookup fails
    When the user says "account 99999999, postcode M1 1AE"
    Then the function "lookup_bill" failed
    And the agent hands off to "billing_team"
    And the conversation ends
