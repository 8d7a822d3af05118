// Package runner turns loaded scenarios into a result.Result by running
// their step programs against an agent and checking every reply.
//
// It is the middle of Load → Run → Report: internal/scenario loads suites
// (YAML and features alike compile to a list of steps), runner executes
// them, internal/report renders the Result. Nothing here prints; progress
// leaves the package only through a result.Observer.
//
//	suites, diags := scenario.Load(fsys, paths)
//	res, err := runner.Run(ctx, suites, runner.Options{
//		Channel:  runner.DebugChat(client), // client is a *platform.Client
//		Parallel: 8,
//		Observer: view,
//	})
//	// res is complete even when ctx was cancelled: unfinished cases are
//	// Pending and res.Interrupted is set.
//
// There is one interpreter. A Session is one attempt at a scenario: a
// fresh conversation, and Exec runs one step in it (open, say, check,
// capture, probe, call status, confirm), opening the conversation at the
// first step that needs one. The case loop (case.go) runs the steps of a
// scenario in order through a Session per attempt and stops at the first
// step that does not hold, since later steps depend on earlier ones. An
// assertion that does not hold makes the attempt Failed; a transport,
// platform or harness problem makes it Errored. Failed and Errored
// attempts are retried while the scenario's budget lasts, except for
// problems a retry cannot fix (bad credentials, unknown agent,
// configuration). The last attempt decides the verdict, so a retry never
// hides a real failure; a case that passes only after a retry is Flaky.
// A repeated scenario runs fresh sessions until its rule decides: the fixed
// repeatRule, or the sequential test of package stats (repeat.go); extra
// runs take the run's idle slots.
//
// Cases run concurrently (Options.Parallel) but the Result keeps file and
// case order, whatever order they finish in. The scheduler stops starting
// cases (stop.go) under FailFast, and by itself when the platform cannot
// be used at all: a host that never answered cannot be connected to, it
// refuses the credentials, or it does not know the agent; the cases not run are
// Skipped with the reason and Result.Stop says why, once. The godog integration
// (package godogsteps) drives the same Session one godog step at a time.
package runner
