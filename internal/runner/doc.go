// Package runner turns loaded scenarios into a Result by driving debug-chat
// sessions against an agent and checking every reply.
//
// It is the middle of Load → Run → Report: internal/scenario loads suites,
// runner executes them, internal/report renders the Result. Nothing here
// prints; progress leaves the package only through an Observer.
//
//	suites, err := scenario.Load(...)
//	res, err := runner.Run(ctx, suites, runner.Options{
//		Chat:     client, // *platform.Client
//		Parallel: 8,
//		Observer: view,
//	})
//	// res is complete even when ctx was cancelled: unfinished cases are
//	// Pending and res.Interrupted is set.
//
// A case is one scenario (one expanded examples row). Each attempt of a case
// starts a fresh session, checks the greeting, then sends the turns in order
// and stops at the first turn whose checks fail: later turns depend on the
// earlier ones. An assertion that does not hold makes the attempt Failed; a
// transport, platform or harness problem makes it Errored. Failed and Errored
// attempts are retried while the scenario's budget lasts, except for problems
// a retry cannot fix (bad credentials, unknown agent, configuration). The
// last attempt decides the verdict, so a retry never hides a real failure; a
// case that passes only after a retry is Flaky.
//
// Cases run concurrently (Options.Parallel) but the Result keeps file and
// case order, whatever order they finish in.
//
// Feature scenarios (scenario.Scenario.Steps) run through one godog run per
// Run, beside the YAML cases and sharing their Parallel slots. Each godog
// step drives the same session driver as the YAML loop (feature.go); a
// failing step with attempts left starts a fresh session and replays the
// steps before it, so a feature's attempts and verdict are those of the
// same conversation in YAML.
package runner
