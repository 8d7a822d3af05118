// Command agenttest regression-tests conversational agents hosted on the
// agent platform. main only builds the process State and maps the result of
// run to an exit code; everything else is testable in-process.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
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
		Args:      os.Args[1:],
		Env:       env,
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		StdoutTTY: isTerminal(os.Stdout),
		Dir:       dir,
		FS:        os.DirFS(dir),
		Now:       time.Now,
		Signals:   interrupts,
		Exit:      os.Exit,
		WriteFile: writeFileIn(dir),
	}, stop, nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// writeFileIn returns a WriteFile rooted at dir that creates parent
// directories, so --junit reports/ci/junit.xml works on a fresh checkout.
func writeFileIn(dir string) func(string, []byte) error {
	return func(name string, data []byte) error {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		return os.WriteFile(name, data, 0o644)
	}
}
