package main

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// bookingSuite is the text of testdata/pass/suites/booking.yaml, the
// suite a test's own tree is built around.
func bookingSuite(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile("testdata/pass/suites/booking.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestConfigFileNotAFile: a config file that is not one to read is a
// usage error that says what it is, before anything is read from it. A
// named pipe blocked the command in its open, past Ctrl-C, without a
// word; /dev/zero or a log named by mistake was read into memory whole.
func TestConfigFileNotAFile(t *testing.T) {
	t.Parallel()
	src := bookingSuite(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		args  []string
		want  string
	}{
		{"a named pipe", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "ci.yaml"), 0o600); err != nil {
				t.Skipf("no named pipes here: %v", err)
			}
		}, []string{"run", "--config", "ci.yaml", "suites"},
			"agenttest: config file ci.yaml is not a regular file but a named pipe, which agenttest does not read\n"},
		{"a directory named", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "conf"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"lint", "--config", "conf", "suites"}, "agenttest: config file conf is a directory, not a file\n"},
		{"a directory in place of ./agenttest.yaml", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, "agenttest.yaml"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"run", "suites"}, "agenttest: config file agenttest.yaml is a directory, not a file\n"},
		{"a file over the bound", func(t *testing.T, dir string) {
			f, err := os.Create(filepath.Join(dir, "big.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			// Sparse: the size is what is refused, before a byte is read.
			if err := f.Truncate(maxConfigBytes + 1); err != nil {
				t.Fatal(err)
			}
		}, []string{"run", "--config", "big.yaml", "suites"},
			"agenttest: config file big.yaml is 16777217 bytes, and a config file is at most 16 MiB: is it the right file?\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"suites/booking.yaml": string(src)})
			tc.setup(t, dir)
			out := newCLI(t, dir, nil, tc.args...).expect(t, exitUsage, tc.want)
			if strings.Contains(out, "embedded simulator") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}

// TestFirstLineNamesHosts: a run's first line names the target, the build
// and runtime URLs it calls and its environment, as resolved: with two
// regions, a runtime host moved by AGENTTEST_RUNTIME_URL (with its own
// key) is the one named, where the line named the build URL alone and a
// confirmation's host showed only when it failed.
func TestFirstLineNamesHosts(t *testing.T) {
	t.Parallel()
	us := simtest.Start(t, sim.Options{Seed: 1})
	eu := simtest.Start(t, sim.Options{Seed: 2})
	src := bookingSuite(t)
	cfg := "default_target: us-sandbox\ntargets:\n  us-sandbox:\n    build_url: " + us.BuildURL + "\n    runtime_url: " + us.RuntimeURL +
		"\n    account_id: " + us.AccountID + "\n    env: sandbox\n    build_key: ${env:US_BUILD}\n    runtime_key: ${env:US_RUNTIME}\n"
	dir := writeTree(t, map[string]string{"suites/booking.yaml": string(src), "agenttest.yaml": cfg})
	env := map[string]string{"US_BUILD": us.BuildKey, "US_RUNTIME": us.RuntimeKey}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"as the file writes it", nil, nil, "running 1 case against us-sandbox (" + us.BuildURL + ", runtime " + us.RuntimeURL + ", env sandbox)"},
		{"the runtime host of another region", map[string]string{"AGENTTEST_RUNTIME_URL": eu.RuntimeURL, "AGENTTEST_RUNTIME_KEY": eu.RuntimeKey}, []string{"--env", "pre-release"},
			"running 1 case against us-sandbox (" + us.BuildURL + ", runtime " + eu.RuntimeURL + ", env pre-release)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := maps.Clone(env)
			maps.Copy(e, tc.env)
			c := newCLI(t, dir, e, append([]string{"run", "--tags", "@smoke", "suites"}, tc.args...)...)
			out := c.expect(t, exitOK)
			if line := firstLine(out); line != tc.want {
				t.Errorf("first line\n got %q\nwant %q", line, tc.want)
			}
		})
	}
}

// growingFS says a file is small when asked, and then holds more: a
// config file that grew between its Stat and its read.
type growingFS struct{ fstest.MapFS }

func (g growingFS) Stat(name string) (fs.FileInfo, error) {
	return fstest.MapFS{name: {Data: []byte("x")}}.Stat(name)
}

// TestConfigFileGrownIsCut: the bound holds for what is read, not only
// for what Stat said: a file that grew past it is refused, not read
// whole.
func TestConfigFileGrownIsCut(t *testing.T) {
	t.Parallel()
	fsys := growingFS{fstest.MapFS{"agenttest.yaml": {Data: make([]byte, maxConfigBytes+1)}}}
	_, err := readConfigFile(fsys, "agenttest.yaml")
	if _, ok := errors.AsType[configFileError](err); !ok || !strings.Contains(err.Error(), "is over 16 MiB") {
		t.Errorf("error %v", err)
	}
}
