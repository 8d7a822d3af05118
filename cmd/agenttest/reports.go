package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// prepareReportIn returns the State.PrepareReport of a process whose
// working directory is dir: see State.PrepareReport.
func prepareReportIn(dir string) func(string) error {
	return func(name string) error {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		fi, err := os.Stat(name)
		switch {
		case err == nil && fi.IsDir():
			return errors.New("it is a directory; name a file, e.g. reports/junit.xml")
		case err == nil && !fi.Mode().IsRegular():
			// A device or a pipe (/dev/stdout) is written in place, once
			// the run is over: opening a pipe now would block until a
			// reader comes, so only the permission is checked.
			return writable(name)
		case err == nil:
			// An earlier run's verdict: gone now, so that a run killed
			// before it writes its own never leaves the old one behind.
			// Removing it proves the directory writable, too.
			if err := os.Remove(name); err != nil {
				return fmt.Errorf("cannot remove the report already there: %w", unwrapPath(err))
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return unwrapPath(err)
		}
		dir := filepath.Dir(name)
		// Parents are created, so reports/ci/junit.xml works on a fresh
		// checkout.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("cannot create its directory: %w", unwrapPath(err))
		}
		return canCreateIn(dir)
	}
}

// canCreateIn checks that a report can be created in dir the way it will
// be (a temporary file, renamed at the end) by doing just that with an
// empty file and removing it at once. Permission bits alone do not tell:
// root passes access(2) in a directory of /sys that refuses new files.
func canCreateIn(dir string) error {
	f, err := os.CreateTemp(dir, ".agenttest-check-*")
	if err != nil {
		return fmt.Errorf("cannot write there: %w", unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// unwrapPath drops the path an *fs.PathError repeats: the message that
// wraps it names the report already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
