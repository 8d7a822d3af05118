package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
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
			return errReportIsDir
		case err == nil && fi.Mode().IsRegular() && authored(name):
			// agenttest writes no YAML or Gherkin: a file of that kind at
			// a report path is a suite, the config file or a CI job, and
			// removing it (or writing over it at the end) would destroy
			// what the user wrote ("run --json suites/booking.yaml").
			return fmt.Errorf("it is a %s file, not a report: the report would replace it; name another file", filepath.Ext(name))
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

// authored says whether name is a kind of file agenttest reads and never
// writes: a YAML file (suites, agenttest.yaml) or a Gherkin feature.
func authored(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".feature":
		return true
	}
	return false
}

// input is a file a command reads, named by the flag (or the role) that
// gave it: a report path naming it would remove it before it is read, or
// write over it.
type input struct {
	flag, path string
}

// overwrittenInputs returns a problem for each report path (flag to path)
// that names one of the inputs of the command, in the order of the report
// flags: "run --rerun-failed r.json --json r.json" would remove the report
// it is about to read. Two names are one file when they are the same path
// or, both existing, the same file (a ./ prefix, an absolute path, a link).
func overwrittenInputs(st *State, files map[string]string, inputs []input) []string {
	var problems []string
	for _, flag := range reportFlags {
		path := files[flag]
		if path == "" {
			continue
		}
		for _, in := range inputs {
			if in.path != "" && sameFile(st, path, in.path) {
				problems = append(problems, fmt.Sprintf("%s %s is the file %s reads: name another file for the report", flag, path, in.flag))
				break
			}
		}
	}
	return problems
}

// cfgPath is the path of the config file read, "" when none was.
func cfgPath(cfg *config.File) string {
	if cfg == nil {
		return ""
	}
	return cfg.Path
}

// reportFlags are the flags of report files, in the order their problems
// are said.
var reportFlags = []string{"--junit", "--json", "--html", "--cucumber"}

// reportExample names, for each report flag, a file of its kind: the
// example a report path that is a directory is told to name in it.
var reportExample = map[string]string{"--junit": "junit.xml", "--json": "results.json", "--html": "report.html", "--cucumber": "cucumber.json"}

// errReportIsDir is State.PrepareReport's error for a report path that
// is a directory; prepareFiles, which knows the flag, adds an example.
var errReportIsDir = errors.New("it is a directory; name a file in it")

// sameFile says whether the names a and b (as given on the command line)
// are one file.
func sameFile(st *State, a, b string) bool {
	if argPath(a) == argPath(b) {
		return true
	}
	if st.FS == nil {
		return false
	}
	fa, errA := fs.Stat(st.FS, argPath(a))
	fb, errB := fs.Stat(st.FS, argPath(b))
	return errA == nil && errB == nil && os.SameFile(fa, fb)
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
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
