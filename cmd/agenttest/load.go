package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/scenario"
)

// fsPath turns a command-line path into a path of st.FS: relative to Dir,
// slash-separated, without "./". Paths outside the working directory are
// refused, since the FS cannot reach them.
func fsPath(st *State, p string) (string, error) {
	clean := filepath.Clean(p)
	if filepath.IsAbs(clean) {
		rel, err := filepath.Rel(st.Dir, clean)
		if err != nil {
			return "", fmt.Errorf("path %s is outside the working directory %s", p, st.Dir)
		}
		clean = rel
	}
	clean = path.Clean(filepath.ToSlash(clean))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %s is outside the working directory %s; run agenttest from a directory that contains it", p, st.Dir)
	}
	return clean, nil
}

// suitePaths maps the PATH arguments (default ".") to FS paths, reporting
// every bad one.
func suitePaths(st *State, args []string) ([]string, []string) {
	if len(args) == 0 {
		args = []string{"."}
	}
	var out, problems []string
	for _, a := range args {
		p, err := fsPath(st, a)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, p)
	}
	return out, problems
}

// sources reads files for echoing source lines under diagnostics; the
// config file is served masked so a literal key is never echoed.
type sources struct {
	st  *State
	cfg *config.File
}

func (s sources) read(file string) []byte {
	if s.cfg != nil && file == s.cfg.Path {
		return s.cfg.Source()
	}
	b, err := fs.ReadFile(s.st.FS, file)
	if err != nil {
		return nil
	}
	return b
}

// loadConfig reads the config file: --config when given (it must exist),
// else ./agenttest.yaml when present. A missing default file is no
// config. Diagnostics are printed to w; errors end the command (exit 2).
func loadConfig(st *State, w io.Writer, name string, color bool) (*config.File, error) {
	explicit := name != ""
	if !explicit {
		name = config.DefaultPath
	}
	p, err := fsPath(st, name)
	if err != nil {
		return nil, usageErrorf("--config: %v", err)
	}
	src, err := fs.ReadFile(st.FS, p)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageErrorf("config file %s does not exist", name)
		}
		return nil, usageErrorf("read config file %s: %v", name, err)
	}
	f, diags := config.Load(p, src)
	if len(diags) > 0 {
		report.WriteDiagnostics(w, diags, sources{st: st, cfg: f}.read, color)
	}
	if diags.HasErrors() {
		return nil, reported(exitUsage)
	}
	return f, nil
}

// loadSuites finds and loads the suites under paths, printing every
// diagnostic (warnings too) to w. Errors end the command (exit 2).
func loadSuites(st *State, w io.Writer, paths []string, color bool) ([]*scenario.Suite, diag.Diagnostics, error) {
	suites, diags := scenario.Load(st.FS, paths)
	if len(diags) > 0 {
		diags.Sort()
		report.WriteDiagnostics(w, diags, sources{st: st}.read, color)
	}
	if diags.HasErrors() {
		return nil, diags, reported(exitUsage)
	}
	return suites, diags, nil
}

// useColor: only on a terminal, and never with NO_COLOR (any non-empty
// value, per no-color.org) or --no-color.
func useColor(st *State, noColor bool) bool {
	return st.StdoutTTY && !noColor && st.Getenv("NO_COLOR") == ""
}
