// Package report renders a run: live progress while cases finish, and the
// final human, JUnit and JSON reports.
//
// Everything here is a pure function of the run's data model
// (internal/result: result.Result and what it holds; never the runner) and
// of an io.Writer; nothing reads the environment or the clock except
// through the options it is given. The progress view (Human) implements
// result.Observer and is safe for the concurrent calls the runner makes;
// the file writers run once, at conclusion, and follow the order of
// r.Files, not the order cases finished in.
//
//	view := report.NewHuman(stdout, report.HumanOptions{TTY: tty, Color: color, Now: now})
//	res, err := runner.Run(ctx, suites, runner.Options{Observer: view})
//	...
//	err = report.WriteJUnit(junitFile, res)
//	err = report.WriteJSON(jsonFile, res, report.JSONOptions{})
//
// All three renderers count with Summarize, so the console summary, the
// JUnit totals and the JSON counts always agree, and all three state the
// run's status from result.Result.RunStatus (the console's last line, the
// JSON run.status, the JUnit <testsuites> property "status"), the verdict
// the CLI's exit code follows. ReadRerun reads a JSON report back, for
// --rerun-failed.
package report
