// Package steps is the Gherkin step vocabulary of agenttest: one table of
// definitions (pattern, example, doc, builder) that is the single source
// for the godog registration, for `agenttest steps` and for lint.
//
// A step compiles to an Op, a plain description of what the session driver
// (internal/runner) does: change a session parameter, open the session,
// send a turn, check the last reply with an assert.Expect, or capture a
// value. Check steps build the same assert.Expect the YAML format builds,
// so features and YAML suites share every check.
//
//	lib := steps.New()
//	op, err := lib.Compile(steps.Input{Pos: pos, Keyword: "Then ", Text: `the agent's reply contains "how many"`})
//	// op.Kind == steps.Check; op.Expect(expand) builds the assert.Expect.
//
// Later steps slot in by adding a definition and, when they do something
// new to the conversation, an Op kind.
package steps
