# The event types of the events steps: lint warns as for a YAML suite, at
# the opening quote of the step's text or at the table's cell; known types,
# another platform's well-formed type and a ${...} pass without a word.
@agent:utility-billing @via:messaging
Feature: Event types

  Scenario: misspelt
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINDE"
    When the user says "I want to talk to a real person"
    Then the events include "EVENT_TYPE_HANDOFF_INITATED"
    And the events do not include "EVENT_TYPE_SYSTEM_MESAGE"
    And the events do not include "system message"
    And the events arrive in this order:
      | event type                   |
      | EVENT_TYPE_HANDOFF_INITIATED |
      | Event_Type_Live_Agent_Joined |
    When the user says "bye"
    Then the events include "EVENT_TYPE_SESION_END"

  Scenario Outline: misspelt in an Examples row
    When the user says "hello"
    Then the events do not include "<type>"
    And the events arrive in this order:
      | <type> |

    Examples:
      | type                      |
      | EVENT_TYPE_SYSTEM_MESAGE  |
      | EVENT_TYPE_SYSTEM_MESSAGE |

  Scenario: known or another platform's
    Then the greeting events include "EVENT_TYPE_ACME_AGENT_JOINED"
    When the user says "I want to talk to a real person"
    Then the events include "EVENT_TYPE_CUSTOMER_SURVEY"
    And the events do not include "EVENT_TYPE_SYSTEM_MESSAGE"
    And the events arrive in this order:
      | EVENT_TYPE_HANDOFF_INITIATED |
      | EVENT_TYPE_LIVE_AGENT_JOINED |
    And I remember "said" from the reply matching "(\w+)"
    When the user says "bye"
    Then the events include "${said}"

  Scenario: misspelt in the first row of a table without a header
    When the user says "hi"
    Then the events arrive in this order:
      | EVENT_TYPE_HANDOF_INITIATED  |
      | EVENT_TYPE_LIVE_AGENT_JOINED |

  Scenario Outline: one quote written, the other in the row
    When the user says "hi"
    Then the agent's reply contains "<text>

    Examples:
      | text |
      | "    |
