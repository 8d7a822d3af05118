# language: fr
Fonctionnalité: Steps written as descriptions, in French
  A Background's description, the keywords of the file's language, and
  the same line twice, each warned of at its own line.

  Contexte:
    quand the user says "in the Background"
    Soit the channel "WEBCHAT"

  Scénario: twice
    the agent says "again"
    the agent says "again"
    Quand the user says "hi"
    Alors the agent's reply contains "hello"

  Scénario: after prose
    Some prose first.

    the agent says "later"
    Quand the user says "hi"
    Alors the agent's reply contains "hello"
