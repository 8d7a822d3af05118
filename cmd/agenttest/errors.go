package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/agenttest/agenttest/internal/escape"
)

// Exit codes: the whole table. Documented in `agenttest help`, `help
// run`, docs/configuration.md and the README. runExit maps the outcome of
// a run onto the codes 0, 1, 4, 5 and 130.
const (
	exitOK          = 0   // every selected scenario passed (flaky counts as passed)
	exitFailed      = 1   // a check failed: the agent broke an expectation; or an alert rule fired
	exitUsage       = 2   // bad usage, config, suite files or report paths; nothing run
	exitInternal    = 3   // a bug or an environment problem of agenttest itself
	exitErrored     = 4   // no check failed, but a case errored: platform or network
	exitEmpty       = 5   // nothing was tested (--allow-empty makes it 0)
	exitInterrupted = 130 // stopped by SIGINT/SIGTERM; reports still written
)

// exitError carries an exit code up to main. Its message is printed one
// line per problem, each as "agenttest: ...", then the hint as it is. An
// empty message means the problem was already reported (diagnostics, the
// run summary) and main prints nothing more.
type exitError struct {
	code int
	msg  string
	// hint follows the problems, e.g. "Run 'agenttest help run' for
	// usage."
	hint string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode is the process exit code for this error.
func (e *exitError) ExitCode() int { return e.code }

// outputError is a report or output that could not be written at the
// end (a full disk, a directory gone): exit 3, the environment's problem
// rather than agenttest's, so it is said as what it is, without the
// "internal error" of a bug. The run's verdict is on the console above.
type outputError struct{ err error }

func (e *outputError) Error() string { return e.err.Error() }
func (e *outputError) Unwrap() error { return e.err }

// ExitCode is exit 3, as for any output that could not be written.
func (e *outputError) ExitCode() int { return exitInternal }

// outputErrorf is an outputError with fmt.Errorf's message.
func outputErrorf(format string, args ...any) error {
	return &outputError{err: fmt.Errorf(format, args...)}
}

// usageErrorf reports bad flags, arguments or configuration: exit 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// usageProblems reports the problems of a command's flags and arguments,
// one line each ("run: --parallel must be at least 1"), with the hint to
// the command's help: exit 2.
func usageProblems(cmd string, problems ...string) error {
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = cmd + ": " + p
	}
	return &exitError{code: exitUsage, msg: strings.Join(lines, "\n"), hint: helpHint(cmd)}
}

// fileProblems reports the problems of the files a command was given
// (a report cut short, not a JSON report), one line each, as
// usageProblems does but without the hint to the command's help, which
// has nothing to say of a file's content: exit 2. The line lands where a
// nightly job keeps the command's output (its step summary).
func fileProblems(cmd string, problems ...string) error {
	err := usageProblems(cmd, problems...).(*exitError)
	err.hint = ""
	return err
}

// helpHint points at the help of a command.
func helpHint(cmd string) string {
	word, _, _ := strings.Cut(cmd, " ") // "webhooks listen": help webhooks
	if word == "" {
		return "Run 'agenttest help' for usage."
	}
	return fmt.Sprintf("Run 'agenttest help %s' for usage.", word)
}

// reported is an error whose details are already printed.
func reported(code int) error { return &exitError{code: code} }

// exitCode maps the error of run to the process exit code, printing the
// message when there is one: every line as "agenttest: ...", so that a
// problem is one line a CI log search finds, then the hint. Anything
// without an ExitCode is internal.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) {
		printLines(stderr, "internal error: "+err.Error())
		return exitInternal
	}
	printLines(stderr, err.Error())
	var ee *exitError
	if errors.As(err, &ee) && ee.hint != "" {
		fmt.Fprintln(stderr, ee.hint)
	}
	return ec.ExitCode()
}

// printLines writes each non-empty line of msg as "agenttest: line",
// escaped (a message quotes what servers and report files hold: an error
// body, a deployment id, which must not drive the terminal or forge a
// line).
func printLines(w io.Writer, msg string) {
	var b strings.Builder
	for line := range strings.SplitSeq(msg, "\n") {
		if line = strings.TrimRight(line, " \t"); line != "" {
			b.WriteString("agenttest: " + escape.Controls(line, "\t") + "\n")
		}
	}
	io.WriteString(w, b.String())
}

// listenProblem says why listening on addr failed, once: the net
// package's error repeats the address and the system call ("listen tcp
// 127.0.0.1:8080: bind: address already in use").
func listenProblem(addr string, err error) string {
	why := err.Error()
	var se *os.SyscallError
	var op *net.OpError
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = "the address is already in use (stop what holds it, or choose another port)"
	case errors.Is(err, syscall.EACCES):
		why = "permission denied (ports below 1024 need privileges)"
	case errors.As(err, &se):
		why = se.Err.Error()
	case errors.As(err, &op):
		why = op.Err.Error()
	}
	return fmt.Sprintf("cannot listen on %s: %s", addr, why)
}
