package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
)

// argPath turns a command-line path into a name of st.FS (pathFS): the
// path as given, cleaned and slash-separated ("./suites/" is "suites";
// "../x" and absolute paths stay what they are).
func argPath(p string) string {
	return filepath.ToSlash(filepath.Clean(p))
}

// suitePaths maps the PATH arguments (default ".") to FS names.
func suitePaths(args []string) []string {
	if len(args) == 0 {
		args = []string{"."}
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = argPath(a)
	}
	return out
}

// sources reads files for echoing source lines under diagnostics; the
// config file is served masked so a literal key is never echoed.
type sources struct {
	st  *State
	cfg *config.File
}

// write prints diags to w as report.WriteDiagnostics does, with the keys
// the environment holds (knownKeys) masked in their words and in the
// lines echoed under them: a key pasted into a suite is exactly what a
// problem on its line echoes.
func (s sources) write(w io.Writer, diags diag.Diagnostics, color bool) {
	red := knownKeys(s.st, s.cfg)
	report.WriteDiagnostics(w, config.RedactDiags(s.withLines(diags), red), func(file string) []byte { return red.Bytes(s.read(file)) }, color)
}

// withLines gives each diagnostic at a line of a file it can read, and
// without its source line yet, that line: masked with the loaders' lines
// (config.RedactDiags), never after a cut or in a file masked whole,
// where a key before the column would move the caret off the problem.
func (s sources) withLines(diags diag.Diagnostics) diag.Diagnostics {
	files := map[string][]string{}
	for i := range diags {
		d := &diags[i]
		if d.Source != "" || d.Pos.File == "" || d.Pos.Line <= 0 {
			continue
		}
		lines, ok := files[d.Pos.File]
		if !ok {
			if data := s.read(d.Pos.File); data != nil {
				lines = strings.Split(string(data), "\n")
			}
			files[d.Pos.File] = lines
		}
		if d.Pos.Line <= len(lines) {
			d.Source = strings.TrimRight(lines[d.Pos.Line-1], "\r")
		}
	}
	return diags
}

// knownKeys is the redactor of envKeys, before any target is resolved.
func knownKeys(st *State, cfg *config.File) *secret.Redactor {
	red, _ := secret.New(envKeys(st, cfg)...)
	return red
}

// workspaceKeys is knownKeys with the key variables of the config file
// named (keysConfig), for a command that reads what another wrote (a
// report, merged, compared, gated on, read for history or coverage) and
// has no target of its own yet, or none at all: a workspace whose
// agenttest.yaml keeps its keys in SANDBOX_BUILD_KEY holds no
// AGENTTEST_BUILD_KEY, and a report edited, written elsewhere or by an
// older version may hold that key in any value, or in a value its error
// quotes.
func workspaceKeys(st *State, name string) *secret.Redactor {
	return knownKeys(st, keysConfig(st, name))
}

// envKeys are the keys the environment holds in the variables that hold
// keys (config.KeyVariables: AGENTTEST_BUILD_KEY and the others, the
// webhook signing secret, and those cfg's key settings name), whatever
// target they are for; one too short to mask is left out (Resolve
// refuses it).
func envKeys(st *State, cfg *config.File) []string {
	var keys []string
	for name := range config.KeyVariables(cfg) {
		keys = append(keys, st.Getenv(name))
	}
	return secret.Maskable(keys...)
}

func (s sources) read(file string) []byte {
	if s.cfg != nil && file == s.cfg.Path {
		return s.cfg.Source()
	}
	b, err := fs.ReadFile(s.st.FS, file)
	if err != nil {
		return nil
	}
	return scenario.Text(b)
}

// loadConfig reads the config file: --config when given (it must exist),
// else ./agenttest.yaml when present. A missing default file is no
// config. Diagnostics are printed to w; errors end the command (exit 2).
func loadConfig(st *State, w io.Writer, fl *flags, name string, color bool) (*config.File, error) {
	f, diags, err := readConfig(st, name)
	if e, ok := errors.AsType[*exitError](err); ok {
		e.msg += fl.setByNote("config")
	}
	if err != nil {
		return nil, err
	}
	if len(diags) > 0 {
		sources{st: st, cfg: f}.write(w, diags, color)
	}
	if diags.HasErrors() {
		return nil, reported(exitUsage)
	}
	return f, nil
}

// readConfig reads and checks the config file name (--config), or
// ./agenttest.yaml when name is empty and the file exists. Problems of
// the file are diagnostics; a file that cannot be read is a usage error.
func readConfig(st *State, name string) (*config.File, diag.Diagnostics, error) {
	explicit := name != ""
	if !explicit {
		name = config.DefaultPath
	}
	p := argPath(name)
	src, err := readConfigFile(st.FS, p)
	if err != nil {
		// A link to nothing is not an absent file: the user meant it to
		// be read, and the run must not fall back to another target.
		if broken, ok := errors.AsType[*brokenLinkError](err); ok {
			return nil, nil, usageErrorf("config file %s is %v", name, broken)
		}
		if bad, ok := errors.AsType[configFileError](err); ok {
			return nil, nil, usageErrorf("config file %s %v", name, bad)
		}
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, usageErrorf("config file %s does not exist", name)
		}
		return nil, nil, usageErrorf("read config file %s: %v", name, unwrapPath(err))
	}
	// The text, as a suite's: yaml.v3 decodes a byte order mark and
	// UTF-16 by itself, but the positions, hints and echoed lines of the
	// file's problems are taken from these bytes.
	f, diags := config.Load(p, scenario.Text(src))
	return f, diags, nil
}

// maxConfigBytes bounds the config file: one of a workspace's every
// target is a few kilobytes, and a --config naming a log, an image or
// /dev/zero must not be read into memory whole.
const maxConfigBytes = 16 << 20

// readConfigFile reads the config file p, which must be a regular file
// of at most maxConfigBytes: a named pipe would block the command before
// it says anything (and past Ctrl-C), a device would never end.
func readConfigFile(fsys fs.FS, p string) ([]byte, error) {
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, configFileError("is a directory, not a file")
	case !fi.Mode().IsRegular():
		return nil, configFileError(fmt.Sprintf("is not a regular file but a %s, which agenttest does not read", fileKind(fi.Mode())))
	case fi.Size() > maxConfigBytes:
		return nil, configFileError(fmt.Sprintf("is %d bytes, and a config file is at most %d MiB: is it the right file?", fi.Size(), maxConfigBytes>>20))
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file that grew since its Stat is cut at the bound, and refused.
	src, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err == nil && len(src) > maxConfigBytes {
		err = configFileError(fmt.Sprintf("is over %d MiB, the most a config file may be: is it the right file?", maxConfigBytes>>20))
	}
	return src, err
}

// configFileError is what is wrong with a config file that exists but
// is not one to read; it follows "config file NAME".
type configFileError string

func (e configFileError) Error() string { return string(e) }

// fileKind names a file mode that is not a regular file's.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// loadSuites finds and loads the suites under paths, printing every
// diagnostic (warnings too) to w. Errors end the command (exit 2).
func loadSuites(st *State, cfg *config.File, w io.Writer, paths []string, color bool) ([]*scenario.Suite, []scenario.Skipped, error) {
	for _, p := range paths {
		if isConfigName(p) {
			return nil, nil, usageErrorf("%s is a config file, not a suite: pass it with --config (agenttest lint %s checks it)", p, p)
		}
	}
	l := scenario.LoadAll(st.FS, paths)
	oneFileEach(st, &l)
	l.Diags = append(l.Diags, keysInNames(st, l.Suites, cfg)...)
	if len(l.Diags) > 0 {
		l.Diags.Sort()
		sources{st: st, cfg: cfg}.write(w, l.Diags, color)
	}
	if l.Diags.HasErrors() {
		return nil, nil, reported(exitUsage)
	}
	return l.Suites, l.Skipped, nil
}

// oneFileEach keeps one spelling of a file the paths name twice
// (suites and $PWD/suites/a.yaml, or ../repo/suites), the first met:
// discovery tells spellings apart, so the file's scenarios would run
// twice, under two names, in one report, and its problems be said
// twice.
func oneFileEach(st *State, l *scenario.Loaded) {
	first := map[string]string{}
	other := func(p string) bool {
		a := absArg(st, p)
		s, ok := first[a]
		if !ok {
			first[a] = argPath(p)
			return false
		}
		return s != argPath(p)
	}
	l.Suites = slices.DeleteFunc(l.Suites, func(su *scenario.Suite) bool { return other(su.Path) })
	l.Diags = slices.DeleteFunc(l.Diags, func(d diag.Diagnostic) bool { return d.Pos.File != "" && other(d.Pos.File) })
}

// useColor: only on a terminal, and never with NO_COLOR (any non-empty
// value, per no-color.org) or --no-color.
func useColor(st *State, noColor bool) bool {
	return st.StdoutTTY && !noColor && st.Getenv("NO_COLOR") == ""
}
