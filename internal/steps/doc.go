// Package steps is the Gherkin step vocabulary of agenttest: one table of
// definitions (pattern, example, doc, builder) that is the single source
// for the godog registration, for `agenttest steps` and for lint.
//
// It also defines the step program both formats compile to. A Step is a
// plain description of one thing the interpreter (internal/runner) does:
// change a session parameter, open the session, send a turn, check the
// last reply with an assert.Expect, capture a value, start from a probe,
// await a call's status, or confirm what the platform recorded. The YAML
// decoder (internal/scenario) emits the same Steps for greeting:, turns:,
// probe: and confirm:, and check steps build the same assert.Expect the
// YAML format builds, so features and YAML suites share every check and
// one interpreter runs both.
//
//	lib := steps.New()
//	st, err := lib.Compile(steps.Input{Pos: pos, Keyword: "Then ", Text: `the agent's reply contains "how many"`})
//	// st.Kind == steps.Check; st.Expect(expand) builds the assert.Expect.
//
// Later steps slot in by adding a definition and, when they do something
// new to the conversation, a Kind and its case in the interpreter.
package steps
