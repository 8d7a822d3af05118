// Command agenttest regression-tests conversational agents hosted on the
// agent platform. main only builds the process State and maps the result of
// run to an exit code; everything else is testable in-process.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

func main() {
	st, stop, err := processState()
	if err != nil {
		fmt.Fprintf(os.Stderr, "agenttest: %v\n", err)
		os.Exit(exitInternal)
	}
	code := exitCode(run(context.Background(), st), st.Stderr)
	stop()
	os.Exit(code)
}

// processState is the one place that reads the process: arguments,
// environment, streams, terminal, working directory, clock and signals.
func processState() (*State, func(), error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, nil, fmt.Errorf("working directory: %w", err)
	}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	// A reader of the console that goes away (agenttest run ... | head)
	// must not kill the run: by default Go exits on SIGPIPE from a write
	// to stdout or stderr, before the reports of --json and --junit are
	// written. Ignored, the write fails with EPIPE, and the run goes on
	// to its reports and its exit code.
	signal.Ignore(syscall.SIGPIPE)
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	interrupts := make(chan struct{}, 2)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigc:
				select {
				case interrupts <- struct{}{}:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	stop := func() {
		signal.Stop(sigc)
		close(done)
	}
	return &State{
		Args:          os.Args[1:],
		Env:           env,
		Stdin:         os.Stdin,
		Stdout:        os.Stdout,
		Stderr:        os.Stderr,
		StdoutTTY:     isTerminal(os.Stdout),
		Dir:           dir,
		FS:            pathFS(dir),
		Now:           time.Now,
		Signals:       interrupts,
		Exit:          os.Exit,
		CreateFile:    createFileIn(dir),
		AppendFile:    appendFileIn(dir),
		PrepareReport: prepareReportIn(dir),
		// Go raises the soft limit to the hard one at start (Go 1.19+).
		OpenFileLimit:  openFileLimit,
		SetGCPercent:   debug.SetGCPercent,
		CollectGarbage: runtime.GC,
	}, stop, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// createFileIn returns a CreateFile rooted at dir that creates parent
// directories, so --junit reports/ci/junit.xml works on a fresh checkout.
// A report goes to a temporary file beside its destination and is renamed
// over it on Commit, so an interrupted or failing write never leaves half a
// report where CI looks for one. A destination that exists and is not a
// regular file (/dev/stdout, a named pipe) is written in place.
func createFileIn(dir string) func(string) (ReportFile, error) {
	return func(name string) (ReportFile, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if fi, err := os.Stat(name); err == nil && !fi.Mode().IsRegular() {
			f, err := os.OpenFile(name, os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			return &inPlaceFile{f}, nil
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return nil, err
		}
		f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
		if err != nil {
			return nil, err
		}
		return &renamedFile{File: f, dest: name}, nil
	}
}

// appendFileIn returns an AppendFile rooted at dir.
func appendFileIn(dir string) func(string) (io.WriteCloser, error) {
	return func(name string) (io.WriteCloser, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	}
}

// renamedFile is a report written to a temporary file and renamed into
// place on Commit.
type renamedFile struct {
	*os.File
	dest string
}

func (f *renamedFile) Commit() error {
	if err := f.Chmod(0o644); err != nil {
		f.Abort()
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), f.dest); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

func (f *renamedFile) Abort() {
	f.Close()
	os.Remove(f.Name())
}

// inPlaceFile is a report written straight into a special file.
type inPlaceFile struct{ *os.File }

func (f *inPlaceFile) Commit() error { return f.Close() }
func (f *inPlaceFile) Abort()        { f.Close() }
