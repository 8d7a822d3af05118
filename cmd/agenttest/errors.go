package main

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes: the whole table. Documented in docs/configuration.md and in
// `agenttest help`.
const (
	exitOK          = 0
	exitFailed      = 1   // a scenario failed or errored
	exitUsage       = 2   // bad usage, bad config or invalid suite files; nothing run
	exitInternal    = 3   // a bug or an environment problem of agenttest itself
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; reports still written
)

// exitError carries an exit code up to main. An empty message means the
// problem was already reported (diagnostics, the run summary) and main
// prints nothing more.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode is the process exit code for this error.
func (e *exitError) ExitCode() int { return e.code }

// usageErrorf reports bad flags, arguments or configuration: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// reported is an error whose details are already printed.
func reported(code int) error { return &exitError{code: code} }

// exitCode maps the error of run to the process exit code, printing the
// message when there is one. Anything without an ExitCode is internal.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		if msg := err.Error(); msg != "" {
			fmt.Fprintf(stderr, "agenttest: %s\n", msg)
		}
		return ec.ExitCode()
	}
	fmt.Fprintf(stderr, "agenttest: internal error: %v\n", err)
	return exitInternal
}
