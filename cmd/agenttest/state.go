package main

import (
	"context"
	"io"
	"io/fs"
	"time"

	"github.com/agenttest/agenttest/internal/clock"
	"github.com/agenttest/agenttest/internal/secret"
)

// State is the one value that owns the outside world: arguments,
// environment, standard streams, the working directory and the clock. main
// builds it from the process; tests build it from buffers and maps. Nothing
// under internal/ reads os.Args, os.Getenv, os.Stdout or time.Now itself.
type State struct {
	Args   []string
	Env    map[string]string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdoutTTY is true when Stdout is a terminal: live progress and
	// colour are allowed (unless NO_COLOR or --no-color).
	StdoutTTY bool
	// Dir is the working directory, for resolving relative paths.
	Dir string
	// FS reads files by their command-line paths: relative to Dir, "../"
	// and absolute paths too (pathFS).
	FS fs.FS
	// Now is the clock.
	Now func() time.Time
	// Sleep waits d, or until ctx is done and then returns its error: the
	// pauses of the platform client's retries and of the runner's retries
	// and polls. Nil means real timers; tests give a fake clock's.
	Sleep func(ctx context.Context, d time.Duration) error
	// AfterFunc, when set, runs the timers of run, gate and webhooks
	// listen on Now (fakeclock.Clock.AfterFunc): the bounds of their own
	// calls to the platform, of the deletion of a webhook endpoint at
	// exit, and the runner's and the client's. A test moves its fake
	// clock past a bound to cut what it bounds at once, instead of
	// waiting for it. It needs Now. Nil means real timers (and compare,
	// whose sides have clocks of their own, always uses them).
	AfterFunc clock.AfterFunc
	// SideClock, when set, gives each side of a comparison on the
	// embedded simulator a clock of its own: that side's simulator thinks
	// on it (sleep advances it) and its client and runner read it and
	// pause on it, so a side's latencies are the simulator's think times,
	// whatever the machine's load and whatever the other side does, and
	// what its simulator times (an outbound call's progress) moves with
	// the runner's waits for it. Nil uses Now and Sleep. Tests set it.
	SideClock func() (now func() time.Time, sleep func(ctx context.Context, d time.Duration) error)
	// Signals delivers SIGINT/SIGTERM (nil in tests that do not need it).
	Signals <-chan struct{}
	// Exit ends the process at once; called only on a second interrupt,
	// when the user does not want to wait for reports. nil ignores it.
	Exit func(code int)
	// CreateFile opens a report file for writing (relative to Dir unless
	// absolute), creating parent directories. Reports are streamed into it;
	// what was written appears under name only on Commit.
	CreateFile func(name string) (ReportFile, error)
	// AppendFile opens a file to append to (relative to Dir unless
	// absolute), creating it: GitHub's $GITHUB_STEP_SUMMARY, which every
	// step of a job adds to. nil appends nothing.
	AppendFile func(name string) (io.WriteCloser, error)
	// PrepareReport checks, before the run calls anything, that a report
	// can be written at name (relative to Dir unless absolute): not a
	// directory, its directory (created if missing) writable. It removes
	// a report an earlier run left there, so that a run that never
	// concludes leaves no stale verdict, but refuses a YAML or feature
	// file there (a suite, a config: agenttest writes neither). It leaves
	// no file behind. Nil checks nothing.
	PrepareReport func(name string) error
	// OpenFileLimit returns the process's limit of open files (the soft
	// RLIMIT_NOFILE, which Go raises to the hard one at start); nil means
	// unknown, and --parallel is taken as given.
	OpenFileLimit func() (uint64, error)
	// SetGCPercent sets the garbage collector's target and returns the
	// previous one (debug.SetGCPercent; see tuneGC). Nil leaves the
	// collector alone, as tests running many commands in one process do.
	SetGCPercent func(percent int) int
	// CollectGarbage runs a garbage collection (runtime.GC), between
	// loading the scenarios and running them (see tuneGC). Nil skips it.
	CollectGarbage func()
	// MaskLog is given each redactor the command builds (commandRedactor;
	// compare builds one per side), before any call: the process's log,
	// on which the Go runtime writes its debugging, is masked with every
	// one of them from then on (processLog). Nil leaves the log alone, as tests running many
	// commands in one process do.
	MaskLog func(*secret.Redactor)

	// config is the config file the command was given (--config, or
	// AGENTTEST_CONFIG), noted as its flags are parsed (flags.parse):
	// the error the command ends with masks the keys of the variables
	// it names (maskMessage), not those of ./agenttest.yaml.
	config string
}

// ReportFile is a report being written. Commit makes it appear under its
// name; Abort throws away what was written. One of them must be called.
type ReportFile interface {
	io.Writer
	Commit() error
	Abort()
}

// Getenv reads a variable from the State's environment.
func (s *State) Getenv(name string) string { return s.Env[name] }

// LookupEnv reads a variable and says whether it is set, in the form the
// runner and config resolution take.
func (s *State) LookupEnv(name string) (string, bool) {
	v, ok := s.Env[name]
	return v, ok
}
