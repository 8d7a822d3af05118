// Command agenttest regression-tests conversational agents hosted on the
// agent platform. main only builds the process State and maps the result of
// run to an exit code; everything else is testable in-process.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agenttest/agenttest/internal/secret"
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
	logs := &processLog{w: os.Stderr}
	log.SetOutput(logs)
	// The temporary files of the reports being written: an exit at once
	// removes them, where the deferred Abort of their writer never runs.
	temps := &tempFiles{}
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
		Exit:          exitRemoving(temps, os.Exit),
		CreateFile:    createFileIn(dir, temps),
		AppendFile:    appendFileIn(dir),
		PrepareReport: prepareReportIn(dir),
		// Go raises the soft limit to the hard one at start (Go 1.19+).
		OpenFileLimit:  openFileLimit,
		SetGCPercent:   debug.SetGCPercent,
		CollectGarbage: runtime.GC,
		MaskLog:        logs.mask,
	}, stop, nil
}

// processLog is the process's log (package log), on which the Go runtime
// writes its debugging: GODEBUG=http2debug=1, which a job sets to see why
// HTTP/2 calls through a proxy fail, logs every header a call sends,
// x-api-key among them. Once the command has its redactor, every line is
// masked with it; before, no call was made, so no line holds a key. A
// command with more than one (compare's sides) has each mask in turn.
type processLog struct {
	w      io.Writer
	mu     sync.Mutex
	masked atomic.Pointer[io.Writer]
}

func (l *processLog) mask(r *secret.Redactor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	next := l.w
	if w := l.masked.Load(); w != nil {
		next = *w
	}
	next = r.Writer(next)
	l.masked.Store(&next)
}

func (l *processLog) Write(p []byte) (int, error) {
	if w := l.masked.Load(); w != nil {
		return (*w).Write(p)
	}
	return l.w.Write(p)
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
// regular file (/dev/stdout, a named pipe) is written in place. The
// temporary files are kept in temps until committed or aborted.
func createFileIn(dir string, temps *tempFiles) func(string) (ReportFile, error) {
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
		f, err := temps.create(filepath.Dir(name), "."+filepath.Base(name)+".*")
		if err != nil {
			return nil, err
		}
		return &renamedFile{File: f, dest: name, temps: temps}, nil
	}
}

// tempFiles are the temporary files of the reports being written, for
// an exit that cannot wait for their writers (a second interrupt while
// the reports of an interrupted run are written) to remove them: left
// behind, each is a hidden half report beside its destination.
type tempFiles struct {
	mu      sync.Mutex
	names   map[string]bool
	exiting bool
}

// create creates a temporary file as os.CreateTemp does and keeps its
// name. It holds the lock while it does, so a removeAll either sees the
// file or runs before it exists; after a removeAll it creates none.
func (t *tempFiles) create(dir, pattern string) (*os.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.exiting {
		return nil, errors.New("exiting")
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if t.names == nil {
		t.names = map[string]bool{}
	}
	t.names[f.Name()] = true
	return f, nil
}

// forget drops a name once its file is renamed or removed.
func (t *tempFiles) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, name)
}

// removeAll removes the files not yet renamed or removed; it is called
// on the way out, and no report starts after it.
func (t *tempFiles) removeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for name := range t.names {
		os.Remove(name)
	}
	t.names, t.exiting = nil, true
}

// exitRemoving returns an Exit that removes the temporary files of the
// reports being written, then exits.
func exitRemoving(temps *tempFiles, exit func(int)) func(int) {
	return func(code int) {
		temps.removeAll()
		exit(code)
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
	dest  string
	temps *tempFiles
}

func (f *renamedFile) Commit() error {
	defer f.temps.forget(f.Name())
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
	f.temps.forget(f.Name())
}

// inPlaceFile is a report written straight into a special file.
type inPlaceFile struct{ *os.File }

func (f *inPlaceFile) Commit() error { return f.Close() }
func (f *inPlaceFile) Abort()        { f.Close() }
