# Silence, out-of-domain input, knowledge answers, voice metadata and
# goodbye at the restaurant agent.
@agent:restaurant
Feature: Conversation handling

  Scenario: prompts again after silence
    When the user says "I want to book"
    Then the current node is "CollectPartySize"
    When the user stays silent
    Then the node trace passes through:
      | node             |
      | Silence          |
      | CollectPartySize |
    And the agent says "Sorry, I didn't hear anything. How many people, and for what time?"
    When the user says:
      """
      4 people
      at 7pm
      """
    Then the current node is "ConfirmBooking"

  Scenario: falls back on out-of-domain input
    When the user says "What's the weather like on Mars?"
    Then the current node is "Greeting"
    And the node trace includes "Fallback"
    And the agent's reply matches "(?i)^sorry, i didn't quite get that"
    And the agent's reply does not contain "Mars"

  @knowledge
  Scenario: answers allergen questions from the knowledge base
    When the user says "Is the food gluten free? I have a dairy allergy."
    Then the topic "allergens" was retrieved
    And the topic "menu" was retrieved
    And the topic "allergens" was cited
    And the agent's reply is similar to "Every dish lists its allergens, gluten-free pasta is available and the kitchen is nut-free." with at least 0.7

  @voice
  Scenario: voice calls carry call metadata and the requested languages
    Given the channel "VOICE-SIP"
    And the ASR language "en-US"
    And the TTS language "en-US"
    And the integration attribute "from_number" is "+447700900123"
    When the user says "what's on the menu?"
    Then the state "channel" is "VOICE-SIP"
    And the state "from_" is "+447700900123"
    # The session's codes win over the agent's en-GB.
    And the ASR language is "en-US"
    And the TTS language is "en-US"
    And the topic "menu" was cited
    And the reply came within 5000 ms

  @smoke @retries:1
  Scenario: says goodbye and ends the conversation
    When the user says "that's all, bye"
    Then the conversation ends
    And the agent does not hand off
    And the current node is "Goodbye"
