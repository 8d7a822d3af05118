// Package godogsteps registers agenttest's step vocabulary on a godog
// ScenarioContext, so that a Go team with its own godog suite can mix the
// steps of agenttest feature files ("When the user says ...", "Then the
// agent's reply contains ...", "Then the conversation record shows:" and
// the rest: run `agenttest steps` for all of them) into its features.
//
// Each godog step runs through agenttest's one interpreter: a godog
// scenario is one agenttest session, opened at its first step that needs a
// conversation, and every step is executed and checked exactly as
// `agenttest run` executes and checks it. A failing step returns an error
// saying what broke as agenttest run's console does (the step's line, the
// check's key, expected, actual and their diff); godog marks it failed
// and skips the rest of the scenario. The step carries the transcript of
// the conversation up to that turn and what the scenario confirmed as a
// godog attachment (transcript.txt, text/plain), which godog's cucumber
// formatter writes as the step's embedding. godog marks every such step
// failed; the error says whose fault it is, as agenttest run tells a
// failure (exit 1) from an error (exit 4): a check's key (response:,
// node:, state.NAME: ...) when the agent broke an expectation, an error
// kind (http:, network:, timeout:, messaging:, config:, interrupted:)
// when the platform, the configuration or the run kept the step from
// telling. An outbound call that no status or
// confirmation step awaits is awaited when the scenario ends, in its After
// hook, and must succeed, as in agenttest run.
//
//	steps, err := godogsteps.New(godogsteps.Options{
//		BuildURL: "https://build.us.example.com",
//		BuildKey: os.Getenv("AGENTTEST_BUILD_KEY"),
//		Agent:    "restaurant",
//		Getenv:   os.LookupEnv,
//	})
//	if err != nil { ... }
//	status := godog.TestSuite{
//		ScenarioInitializer: steps.Register,
//		Options:             &godog.Options{Format: "pretty", Paths: []string{"features"}},
//	}.Run()
//
// A team's own steps register on the same ScenarioContext, next to
// Register, and mix with agenttest's in one scenario: only the steps whose
// text matches one of agenttest's make the session's program; godog runs
// the others with the team's definitions. They read what agenttest's
// steps found from the context godog gives them: Expand expands ${name}
// (a value an "I remember" step captured, an Examples column,
// ${env:NAME}; never to a key of the Options, which it refuses), and
// ConversationID is the conversation's id. A scenario whose steps of
// agenttest's are setup steps alone (a shared Background's Given the
// agent "..." above the team's own steps) opens no session.
//
// Register registers everything on the scenario's context, nothing at
// suite level (godog registers steps per scenario, and a step registered
// at suite level races under Concurrency), and keeps each
// scenario's session in state created per scenario, so godog's
// Concurrency is safe. The probes of the scenarios one Steps serves take
// turns on the numbers they call or text, as the probes of one agenttest
// run do: two scenarios that text one number side by side each confirm
// the conversation it caused, the second waiting until the first found
// its own (a call holds its number until its final status is read). Build
// the Steps once per suite and register that one value in every scenario.
// Two Steps do not take turns with each other: two suites in one process
// (parallel tests, each with its own New) whose probes call or text one
// number side by side may each see the other's conversation, as two
// agenttest runs would. Give them different ProbeNumbers, or share one
// Steps between them.
//
// What agenttest run adds and godog does not: retries, repeats,
// statistical verdicts and quarantine (@retries, @repeat, @pass-rate,
// @confidence, @margin, @quarantine) are decided by agenttest's case
// loop, which godog does not have; under godog each scenario runs once,
// as one attempt, and those tags are ignored. What agenttest run's --tags
// and --name select, godog's Tags option does (and, with godog's
// TestingT, go test -run on a scenario's subtest). The reports are godog's formatters; agenttest's JUnit and JSON
// reports come from `agenttest run`. The steps read the feature files
// godog runs (Options.Features) for what godog's pickles lack: the line of
// each step, which failures point at, and the values of an Examples row,
// which steps may use as ${column}.
//
// The tags that set parameters work as in agenttest: @agent:NAME,
// @env:ENV, @via:messaging (web chat over the Messaging API, which needs
// Options.MessagingURL, MessagingHost and Connectors), @streaming:true
// (over messaging, replies streamed in chunks), @timeout:D and
// @within:D (the bound of an outbound call's status), and @skip skips the
// scenario. A scenario in the live environment (@env:live, or Options.Env)
// talks to the live agent and needs Options.AllowLive, as agenttest run
// needs --allow-live; without it the scenario fails before its first call.
//
// Each agenttest step is bounded by the context godog gives it: the
// scenario's (godog.Options.DefaultContext), as your Before hooks and
// the steps before it made it, whichever order the hooks were registered
// in. Cancel it (on a signal, or with a cancel or a deadline of your own
// added in a hook or a step) and the agenttest step running, or the next
// one, fails with "interrupted: run interrupted", followed by the cause
// (its keys masked) or "(context deadline exceeded)" when the context
// says why; the values
// your hooks and steps put in it pass through agenttest's steps to
// yours. Options.TurnTimeout and @timeout:D bound agenttest's calls
// besides.
package godogsteps
