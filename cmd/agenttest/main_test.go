package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// syncBuffer is a goroutine-safe buffer: the views and the interrupt
// watcher write from several goroutines, a child process's output is
// copied in by os/exec. notify, when set, is called after each write with
// everything written so far.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	notify func(string)
	// changed is closed and replaced at each write, waking await.
	changed chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	n, err := s.b.Write(p)
	all := s.b.String()
	notify := s.notify
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	s.mu.Unlock()
	if notify != nil {
		notify(all)
	}
	return n, err
}

// await returns everything written once cond holds of it, checking again
// at each write, so that the test goes on the moment the output it waits
// for is written. When ctx ends first (the test's bound on a broken
// build), it returns what was written and ctx's error.
func (s *syncBuffer) await(ctx context.Context, cond func(string) bool) (string, error) {
	for {
		s.mu.Lock()
		all := s.b.String()
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if cond(all) {
			return all, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return all, ctx.Err()
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cli is one in-process invocation of agenttest.
type cli struct {
	st     *State
	stdout *syncBuffer
	stderr *syncBuffer
	sigs   chan struct{}
	exits  chan int
}

// newCLI builds a State rooted at dir (a directory under testdata/) with
// the given environment and nothing from the process.
func newCLI(t *testing.T, dir string, env map[string]string, args ...string) *cli {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{}
	}
	c := &cli{stdout: &syncBuffer{}, stderr: &syncBuffer{}, sigs: make(chan struct{}, 2), exits: make(chan int, 2)}
	c.st = &State{
		Args:          args,
		Env:           env,
		Stdin:         strings.NewReader(""),
		Stdout:        c.stdout,
		Stderr:        c.stderr,
		Dir:           abs,
		FS:            pathFS(abs),
		Now:           time.Now,
		Sleep:         shortSleep,
		Signals:       c.sigs,
		Exit:          func(code int) { c.exits <- code },
		CreateFile:    createFileIn(abs, &tempFiles{}),
		AppendFile:    appendFileIn(abs),
		PrepareReport: prepareReportIn(abs),
	}
	return c
}

// shortSleep stands for the real pauses of a run (retry backoff,
// Retry-After, the polls of a record): it waits at most a millisecond.
// What the tests prove (verdicts, reports, recovery by retries) does not
// depend on how long the pauses are, and the real ones would make the
// drills wait for minutes; polls still yield to the simulator's clock.
func shortSleep(ctx context.Context, d time.Duration) error {
	return platform.Sleep(ctx, min(d, time.Millisecond))
}

// hangBound bounds the tests' waits for what must happen (an exit, a
// line of output, the end of goroutines): it ends a test of a broken
// build with a message rather than at go test's timeout. It times
// nothing, so it is far above what the slowest loaded machine needs: the
// shorter bounds (5 s, 10 s) some waits had could be missed under -race
// with the tree's packages running side by side.
const hangBound = 60 * time.Second

func (c *cli) run(t *testing.T) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	return exitCode(run(ctx, c.st), c.stderr)
}

// expect runs c, requires the exit code and every text of want in its
// output (stdout, then stderr), and returns the output.
func (c *cli) expect(t *testing.T, code int, want ...string) string {
	t.Helper()
	got := c.run(t)
	out := c.stdout.String() + c.stderr.String()
	if got != code {
		t.Fatalf("exit %d, want %d\n%s", got, code, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// emptyReport is the JSON report of a run that tested nothing.
const emptyReport = `{"schema": "agenttest/result/v1", "run": {"status": "empty"}, "target": {"name": "live"}, "files": []}`

func TestExitCodes(t *testing.T) {
	t.Parallel()
	absFail, err := filepath.Abs("testdata/fail")
	if err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name string
		dir  string
		args []string
		env  map[string]string
		code int
		// stdout and stderr must contain each of these.
		stdout []string
		stderr []string
		// absent must appear in neither.
		absent []string
		// files, when set, are written to a fresh directory that the
		// command runs in, instead of dir.
		files map[string]string
	}
	run := func(t *testing.T, tc testCase) {
		if tc.files != nil {
			tc.dir = t.TempDir()
			for name, src := range tc.files {
				if err := os.WriteFile(filepath.Join(tc.dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := newCLI(t, tc.dir, tc.env, tc.args...)
		code := c.run(t)
		if code != tc.code {
			t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
		}
		for _, want := range tc.stdout {
			if !strings.Contains(c.stdout.String(), want) {
				t.Errorf("stdout lacks %q:\n%s", want, c.stdout)
			}
		}
		for _, want := range tc.stderr {
			if !strings.Contains(c.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, c.stderr)
			}
		}
		for _, bad := range tc.absent {
			if strings.Contains(c.stdout.String()+c.stderr.String(), bad) {
				t.Errorf("output shows %q:\n%s%s", bad, c.stdout, c.stderr)
			}
		}
	}
	cases := []testCase{
		{
			name:   "passing suite on the embedded simulator",
			dir:    "testdata/pass",
			args:   []string{"run"},
			code:   exitOK,
			stdout: []string{"2 passed, 0 failed, 0 skipped"},
		},
		{
			name:   "failing expectation",
			dir:    "testdata/fail",
			args:   []string{"run", "suites"},
			code:   exitFailed,
			stdout: []string{"suites/wrong.yaml:5:16: greeting: reply does not contain", "1 passed, 1 failed"},
		},
		// A config file with errors runs nothing, however the rest of it
		// reads: its problems are said at their lines and the run ends.
		{
			name:   "config file with errors",
			files:  map[string]string{"agenttest.yaml": "run:\n  parallel: 0\n", "s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n"},
			args:   []string{"run", "s.yaml"},
			code:   exitUsage,
			stderr: []string{"agenttest.yaml:2:13: parallel must be an integer of at least 1, not \"0\"\n"},
			absent: []string{"running", "PASS"},
		},
		{
			name:   "a line of a directory",
			dir:    "testdata/pass",
			args:   []string{"run", "suites:3"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: suites:3: a line selects a scenario of a file, and suites is a directory\n"},
		},
		{
			name:   "unknown flag",
			dir:    "testdata/pass",
			args:   []string{"run", "--paralel", "2"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: unknown flag --paralel (did you mean --parallel?)\nRun 'agenttest help run' for usage.\n"},
		},
		{
			name:   "every subcommand parses flags alike",
			dir:    "testdata/pass",
			args:   []string{"sim", "--lisen", "127.0.0.1:0"},
			code:   exitUsage,
			stderr: []string{"agenttest: sim: unknown flag --lisen (did you mean --listen?)\nRun 'agenttest help sim' for usage.\n"},
		},
		{
			name:   "one dash is accepted as two",
			dir:    "testdata/pass",
			args:   []string{"list", "-tags", "@nosuch", "-bogus"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: unknown flag -bogus\n"},
		},
		{
			// Not a typo: the wrong command. Every command's flags are
			// registered, not parsed, to name those that have it.
			name:   "a flag of run and others given to list",
			dir:    "testdata/pass",
			args:   []string{"list", "--target", "staging"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: unknown flag --target (a flag of run, webhooks, compare and gate, not of list)\nRun 'agenttest help list' for usage.\n"},
		},
		{
			name:   "a flag of run and merge given to lint, with its value",
			dir:    "testdata/pass",
			args:   []string{"lint", "--junit=lint.xml"},
			code:   exitUsage,
			stderr: []string{"agenttest: lint: unknown flag --junit (a flag of run and merge, not of lint)\n"},
		},
		{
			name:   "a flag of compare only given to list",
			dir:    "testdata/pass",
			args:   []string{"list", "--baseline", "live"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: unknown flag --baseline (a flag of compare, not of list)\n"},
		},
		{
			name:   "a flag of gate given to run",
			dir:    "testdata/pass",
			args:   []string{"run", "--max-age=2h", "suites"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: unknown flag --max-age (a flag of gate, not of run)\n"},
		},
		{
			name:   "a flag of sim and webhooks given to gate",
			dir:    "testdata/pass",
			args:   []string{"gate", "--listen", ":0", "r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: unknown flag --listen (a flag of sim and webhooks, not of gate)\n"},
		},
		{
			name:   "a flag of run, lint, list and merge given to gate",
			dir:    "testdata/pass",
			args:   []string{"gate", "--allow-empty", "r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: unknown flag --allow-empty (a flag of run, lint, list and merge, not of gate)\n"},
		},
		{
			name:   "a flag of coverage given to history",
			dir:    "testdata/pass",
			args:   []string{"history", "--coverage-from", "a.json", "b.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: history: unknown flag --coverage-from (a flag of run, coverage and merge, not of history)\n"},
		},
		{
			name:   "a flag of no command",
			dir:    "testdata/pass",
			args:   []string{"list", "--nosuch"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: unknown flag --nosuch\nRun 'agenttest help list' for usage.\n"},
		},
		{
			name:   "one unknown letter suggests nothing",
			dir:    "testdata/pass",
			args:   []string{"run", "-x"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: unknown flag -x\nRun 'agenttest help run' for usage.\n"},
		},
		{
			name:   "a one-letter flag is suggested as written",
			dir:    "testdata/pass",
			args:   []string{"merge", "-vv", "r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: merge: unknown flag -vv (did you mean -v?)\n"},
		},
		{
			name:   "a flag without its value",
			dir:    "testdata/pass",
			args:   []string{"run", "--tags"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --tags needs a value\n"},
		},
		{
			name: "bad flag values all reported at once",
			dir:  "testdata/pass",
			args: []string{"run", "--parallel", "0", "--retries", "-1", "--name", "/(/", "--tags", "@a &&", "--turn-timeout", "0s", "--max-reply-bytes", "4095"},
			code: exitUsage,
			stderr: []string{"agenttest: run: --parallel must be at least 1", "agenttest: run: --retries must not be negative", "agenttest: run: --name \"/(/\": not a regular expression", "agenttest: run: --tags \"@a &&\"",
				"agenttest: run: --turn-timeout must be positive, got 0s", "agenttest: run: --max-reply-bytes must be at least 4096, got 4095"},
		},
		{
			// The least of each bound is allowed: --rate-wait 0 errors a
			// case at its first 429 (no waiting), it is no mistake.
			name:   "the least values of the bounds",
			dir:    "testdata/pass",
			args:   []string{"run", "--parallel", "1", "--retries", "0", "--turn-timeout", "1ns", "--max-reply-bytes", "4096", "--rate-wait", "0", "--sim", "--name", "/^$/"},
			code:   exitEmpty,
			absent: []string{"must"},
		},
		{
			// A suite saved as UTF-16 (PowerShell) echoes its lines as
			// they read under a problem found after loading.
			name:   "source line of a file in UTF-16",
			files:  map[string]string{"s.yaml": utf16LE("\ufeffsuite: s\nagent: nosuch\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n")},
			args:   []string{"run", "s.yaml"},
			code:   exitUsage,
			stderr: []string{"s.yaml:2:8: ", "\n 2 | agent: nosuch\n"},
		},
		{
			name:   "a line of a file of no scenario",
			files:  map[string]string{"empty.yaml": "suite: empty\nscenarios: []\n"},
			args:   []string{"run", "empty.yaml:2"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: empty.yaml:2: no scenario is written at line 2 (the file holds no scenario)\n"},
		},
		{
			// 0 is how a run says "not set": given, it would run every
			// scenario once as if the flag were not there.
			name:   "a repeat of 0 is refused, like a scenario's repeat: 0",
			dir:    "testdata/pass",
			args:   []string{"run", "--repeat", "0"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --repeat must be 1 or more, not 0\n"},
		},
		{
			name:   "a repeat of 0 from the environment is refused too",
			dir:    "testdata/pass",
			args:   []string{"compare", "--baseline", "sandbox", "--candidate", "pre-release"},
			env:    map[string]string{"AGENTTEST_REPEAT": "0"},
			code:   exitUsage,
			stderr: []string{"agenttest: compare: --repeat must be 1 or more, not 0 (set by AGENTTEST_REPEAT)\n"},
		},
		{
			name:   "a negative repeat is refused",
			dir:    "testdata/pass",
			args:   []string{"run", "--repeat", "-1"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --repeat must be 1 or more, not -1\n"},
		},
		{
			name:   "a repeat past the most runs is refused",
			dir:    "testdata/pass",
			args:   []string{"run", "--repeat", "1000000000"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --repeat must be at most 100000, not 1000000000\n"},
		},
		{
			name:   "a pass rate above 1 is refused",
			dir:    "testdata/pass",
			args:   []string{"run", "--pass-rate", "1.5"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --pass-rate must be above 0 and at most 1, not 1.5\n"},
		},
		{
			name:   "--repeat on a run of no probe notes nothing",
			dir:    "testdata/pass",
			args:   []string{"run", "--repeat", "2"},
			code:   exitOK,
			absent: []string{"agenttest: note:"},
		},
		{
			name:   "a pass rate of 1 is not",
			dir:    "testdata/pass",
			args:   []string{"run", "--pass-rate", "1", "--repeat", "0"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --repeat must be 1 or more, not 0\n"},
			absent: []string{"--pass-rate"},
		},
		{
			name:   "a pass rate of 0 or infinity is not a share",
			dir:    "testdata/pass",
			args:   []string{"run", "--pass-rate", "0", "--margin", "Inf"},
			code:   exitUsage,
			stderr: []string{`agenttest: run: --pass-rate "0": not a number above 0 such as 0.9 or 90%`, `agenttest: run: --margin "Inf": not a number above 0 such as 0.9 or 90%`},
		},
		{
			name:   "a share is read without the spaces around it",
			dir:    "testdata/pass",
			args:   []string{"run", "--pass-rate", " 90% ", "--repeat", "0"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --repeat must be 1 or more, not 0\n"},
			absent: []string{"--pass-rate"},
		},
		{
			name:   "a pass rate from the environment, as a percentage",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_PASS_RATE": "150%"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --pass-rate must be above 0 and at most 1, not 1.5 (set by AGENTTEST_PASS_RATE)\n"},
		},
		{
			name:   "a pass rate from the environment that is not one",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_PASS_RATE": "most"},
			code:   exitUsage,
			stderr: []string{`agenttest: run: AGENTTEST_PASS_RATE="most" is not a number above 0 such as 0.9 or 90%` + "\n"},
		},
		{
			name:   "bad enum value lists the allowed ones",
			dir:    "testdata/pass",
			args:   []string{"run", "--env", "prod"},
			code:   exitUsage,
			stderr: []string{`must be one of sandbox, pre-release, live (did you mean "live"?)`},
		},
		{
			name:   "misspelt enum value",
			dir:    "testdata/pass",
			args:   []string{"run", "--env", "sandbx"},
			code:   exitUsage,
			stderr: []string{`must be one of sandbox, pre-release, live (did you mean "sandbox"?)`},
		},
		{
			name:   "bad environment default",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_PARALLEL": "many"},
			code:   exitUsage,
			stderr: []string{`AGENTTEST_PARALLEL="many" is not an integer`},
		},
		{
			// A job's command line has no --parallel to fix.
			name:   "a bad value from the environment names its variable",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_PARALLEL": "0", "AGENTTEST_JSON": "r.json", "AGENTTEST_JUNIT": "./r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --parallel must be at least 1, got 0 (set by AGENTTEST_PARALLEL)\n", "agenttest: run: --json and --junit both write r.json (set by AGENTTEST_JSON, AGENTTEST_JUNIT)\n"},
		},
		{
			// The address is the user's choice, as for sim.
			name:   "webhooks listen on an address that does not parse",
			dir:    "testdata/pass",
			args:   []string{"webhooks", "listen", "--listen", "127.0.0.1:99999"},
			env:    map[string]string{"AGENTTEST_BUILD_URL": "http://127.0.0.1:1", "AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_ACCOUNT_ID": "acc-1"},
			code:   exitUsage,
			stderr: []string{"agenttest: webhooks listen: --listen: cannot listen on 127.0.0.1:99999: "},
		},
		{
			name:   "list -v names the YAML files passed over, on stderr",
			files:  map[string]string{"s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n", "ci.yml": "name: ci\non: push\njobs: {}\n"},
			args:   []string{"list", "-v"},
			code:   exitOK,
			stdout: []string{"s.yaml:4  greets\n"},
			stderr: []string{"skipped ci.yml: not a suite (top-level keys: name, on, jobs)\n"},
		},
		{
			name:   "list says which variable set a bad value",
			dir:    "testdata/pass",
			args:   []string{"list"},
			env:    map[string]string{"AGENTTEST_ALLOW_EMPTY": "perhaps", "AGENTTEST_TAGS": "@a and"},
			code:   exitUsage,
			stderr: []string{`agenttest: list: AGENTTEST_ALLOW_EMPTY="perhaps" is not a boolean (true or false)`, "(set by AGENTTEST_TAGS)"},
		},
		{
			name:   "the command line wins over the variable",
			dir:    "testdata/pass",
			args:   []string{"list", "--shard", "3/2"},
			env:    map[string]string{"AGENTTEST_SHARD": "1/2"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: --shard \"3/2\": want 1 <= K <= N, e.g. 2/4 for the second of four shards\n"},
			absent: []string{"set by"},
		},
		{
			// A job that fixes a variable's bad value on its command line
			// is not held to the variable.
			name:   "a flag on the command line wins over its variable that does not parse",
			dir:    "testdata/pass",
			args:   []string{"list", "--allow-empty=false", "--tags", "@nope"},
			env:    map[string]string{"AGENTTEST_ALLOW_EMPTY": "perhaps"},
			code:   exitEmpty,
			absent: []string{"AGENTTEST_ALLOW_EMPTY"},
		},
		{
			name:   "a number on the command line wins over its variable that does not parse",
			dir:    "testdata/pass",
			args:   []string{"run", "--parallel", "2"},
			env:    map[string]string{"AGENTTEST_PARALLEL": "many"},
			code:   exitOK,
			absent: []string{"AGENTTEST_PARALLEL"},
		},
		{
			// "false" would otherwise be a path: "find suites in false".
			name:   "a bool flag's value is written with =",
			dir:    "testdata/pass",
			args:   []string{"list", "--allow-empty", "false"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: --allow-empty takes no separate value: write --allow-empty=false (or ./false for a path)\n"},
			absent: []string{"find suites"},
		},
		{
			// A script's "--json - | jq" would find the console on stdout
			// and the report in a file named "-".
			name:   "a report is not written to standard output",
			files:  map[string]string{"s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n"},
			args:   []string{"run", "--json", "-"},
			code:   exitUsage,
			stderr: []string{"agenttest: run: --json -: a report is written to a file, not to standard output (the console is there): name a file, ./- for one named -\n"},
		},
		{
			// A variable left in a job's environment selected nothing:
			// its command line has no --tags to look at.
			name:   "an empty selection names the variable of its filter",
			dir:    "testdata/pass",
			args:   []string{"list", "--name", "a"},
			env:    map[string]string{"AGENTTEST_TAGS": "@nope", "AGENTTEST_NAME": "b"},
			code:   exitEmpty,
			stderr: []string{`matches --tags "@nope" (set by AGENTTEST_TAGS) and --name "a";`},
		},
		{
			// "--tags --name x" took --name for the tag expression and x
			// for a path: "find suites in x".
			name:   "a flag is not the value of the flag before it",
			dir:    "testdata/pass",
			args:   []string{"list", "--tags", "--name", "x"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: --tags needs a value, and --name is a flag (write --tags=--name for that value)\n"},
			absent: []string{"find suites"},
		},
		{
			// --help anywhere shows the help, as it does after any flag.
			name:   "--help is not the value of the flag before it",
			dir:    "testdata/pass",
			args:   []string{"list", "--name", "--help"},
			code:   exitOK,
			stdout: []string{"Usage: agenttest list "},
		},
		{
			name:   "a one-letter switch's value is written with = too",
			dir:    "testdata/pass",
			args:   []string{"list", "-v", "true"},
			code:   exitUsage,
			stderr: []string{"agenttest: list: -v takes no separate value: write -v=true (or ./true for a path)\n"},
		},
		{
			name:   "gate names the variable too",
			dir:    "testdata/pass",
			args:   []string{"gate", "r.json"},
			env:    map[string]string{"AGENTTEST_MAX_AGE": "-1h"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: --max-age must be positive, got -1h0m0s (set by AGENTTEST_MAX_AGE)\n"},
		},
		{
			// A report no age can pass is a typo, not a gate.
			name:   "gate refuses a --max-age of 0",
			dir:    "testdata/pass",
			args:   []string{"gate", "--max-age", "0", "r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: --max-age must be positive, got 0s\n"},
		},
		{
			// Gating the first of two reports would pass what the
			// second says.
			name:   "gate weighs one report at a time",
			dir:    "testdata/pass",
			args:   []string{"gate", "a.json", "b.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: one report at a time, got 2: a.json b.json\n"},
		},
		{
			name:   "gate needs a report",
			dir:    "testdata/pass",
			args:   []string{"gate"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: name the JSON report to gate on\n"},
		},
		{
			name:   "gate --sim excludes --target",
			dir:    "testdata/pass",
			args:   []string{"gate", "--sim", "--target", "sandbox", "r.json"},
			code:   exitUsage,
			stderr: []string{"agenttest: gate: --sim and --target exclude each other"},
		},
		{
			// A merged run that tested nothing exits as that run would.
			name:   "merge of a run that tested nothing",
			args:   []string{"merge", "empty.json"},
			files:  map[string]string{"empty.json": emptyReport},
			code:   exitEmpty,
			stdout: []string{"status: empty (nothing was tested"},
		},
		{
			name:  "merge --allow-empty",
			args:  []string{"merge", "--allow-empty", "empty.json"},
			files: map[string]string{"empty.json": emptyReport},
			code:  exitOK,
		},
		{
			name:   "merge needs reports",
			dir:    "testdata/pass",
			args:   []string{"merge"},
			code:   exitUsage,
			stderr: []string{"agenttest: merge: name the JSON reports of the shards (agenttest run --shard K/N --json FILE)\n"},
		},
		{
			name:   "invalid suite file",
			dir:    "testdata/invalid",
			args:   []string{"run"},
			code:   exitUsage,
			stderr: []string{`suites/bad.yaml:7:9: unknown key "expct" in turn (did you mean "expect"?)`},
		},
		{
			name: "bad config with a literal key",
			dir:  "testdata/badconfig",
			args: []string{"run"},
			code: exitUsage,
			stderr: []string{
				"agenttest.yaml:6:16: build_key must be an ${env:NAME} reference, not a literal key",
				`agenttest.yaml:7:5: unknown target key "runtim_key" (did you mean "runtime_key"?)`,
			},
			absent: []string{"sk-live-0123456789abcdef"},
		},
		{
			name:   "explicit config file that does not exist",
			dir:    "testdata/pass",
			args:   []string{"run", "--config", "nope.yaml"},
			code:   exitUsage,
			stderr: []string{"config file nope.yaml does not exist"},
		},
		{
			// A newcomer runs from another directory than the config
			// file's, or a CI job lacks the file: the message says no
			// file was read and where one is looked for.
			name:   "unknown target",
			dir:    "testdata/pass",
			args:   []string{"run", "--target", "staging"},
			code:   exitUsage,
			stderr: []string{`unknown target "staging" (no config file was read: ./agenttest.yaml is not in the working directory; targets are defined there, or in the file --config FILE names)`},
		},
		{
			name:   "a target of a config file without targets",
			args:   []string{"run", "--target", "staging"},
			files:  map[string]string{"agenttest.yaml": "run:\n  parallel: 2\n", "s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n"},
			code:   exitUsage,
			stderr: []string{`unknown target "staging" (agenttest.yaml defines no targets: add it under targets:)`},
		},
		{
			// A job's command line has no --target or --config to fix.
			name:   "an unknown target or config file from the environment names its variable",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_TARGET": "staging", "AGENTTEST_CONFIG": "nope.yaml"},
			code:   exitUsage,
			stderr: []string{"config file nope.yaml does not exist (set by AGENTTEST_CONFIG)\n"},
		},
		{
			name:   "an unknown target from the environment names its variable",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_TARGET": "staging"},
			code:   exitUsage,
			stderr: []string{`unknown target "staging" (set by AGENTTEST_TARGET)`},
		},
		{
			name:   "environment target without a key names the variable",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_BUILD_URL": "http://127.0.0.1:1"},
			code:   exitUsage,
			stderr: []string{"has no build_key (set AGENTTEST_BUILD_KEY"},
		},
		{
			name:   "--sim and --target",
			dir:    "testdata/pass",
			args:   []string{"run", "--sim", "--target", "x"},
			code:   exitUsage,
			stderr: []string{"--sim and --target exclude each other"},
		},
		{
			name:   "paths outside the working directory are run, shown as given",
			dir:    "testdata/pass",
			args:   []string{"run", "../fail"},
			code:   exitFailed,
			stdout: []string{"../fail/suites/wrong.yaml:5:16: greeting: reply does not contain"},
		},
		{
			name:   "absolute paths too",
			dir:    "testdata/pass",
			args:   []string{"list", absFail},
			code:   exitOK,
			stdout: []string{absFail + "/suites/wrong.yaml:4  expects the wrong greeting"},
		},
		{
			name:   "a config file outside the working directory",
			dir:    "testdata/pass",
			args:   []string{"run", "--config", "../badconfig/agenttest.yaml"},
			code:   exitUsage,
			stderr: []string{"../badconfig/agenttest.yaml:6:16: build_key must be an ${env:NAME} reference"},
			absent: []string{"sk-live-0123456789abcdef"},
		},
		{
			name: "lint and run agree on what a directory's YAML files are",
			dir:  "testdata/discovery",
			args: []string{"lint", "-v"},
			code: exitUsage,
			stdout: []string{
				"skipped suites/agent.yaml: not a suite (top-level keys: id, name, start, nodes)",
				"skipped suites/ci.yml: not a suite (top-level keys: name, on, env, jobs)",
				"suites/broken.yml:3:11: invalid YAML",
				"suites/empty.yaml:1:1: file is empty",
				`suites/misspelt.yaml:3:1: unknown key "scenario" in suite (did you mean "scenarios"?)`,
			},
		},
		{
			name: "run refuses the same files",
			dir:  "testdata/discovery",
			args: []string{"run"},
			code: exitUsage,
			stderr: []string{
				"suites/broken.yml:3:11: invalid YAML",
				"suites/empty.yaml:1:1: file is empty",
				`suites/misspelt.yaml:3:1: unknown key "scenario" in suite (did you mean "scenarios"?)`,
			},
			absent: []string{"agent.yaml", "ci.yml", "suite has no scenarios"},
		},
		{
			name:   "lint of a config file",
			dir:    "testdata/badconfig",
			args:   []string{"lint", "agenttest.yaml"},
			code:   exitUsage,
			stdout: []string{"agenttest.yaml:6:16: build_key must be"},
			absent: []string{"booking.yaml", "sk-live-0123456789abcdef"},
		},
		{
			name:   "lint of a good config file",
			dir:    repoRoot,
			args:   []string{"lint", "examples/agenttest.yaml"},
			code:   exitOK,
			stdout: []string{"examples/agenttest.yaml: no problems"},
		},
		{
			name:   "run of a config file",
			dir:    repoRoot,
			args:   []string{"run", "examples/agenttest.yaml"},
			code:   exitUsage,
			stderr: []string{"agenttest: examples/agenttest.yaml is a config file, not a suite: pass it with --config"},
		},
		{
			name:   "lint of nothing",
			dir:    "testdata/nosuites",
			args:   []string{"lint"},
			code:   exitEmpty,
			stderr: []string{"agenttest: nothing to test: no suite file under . (a suite is a .feature file, or a YAML file with a scenarios: key)\n"},
		},
		{
			name:   "lint of a suite of no scenarios",
			files:  map[string]string{"empty.yaml": "agent: restaurant\nscenarios: []\n"},
			args:   []string{"lint", "empty.yaml"},
			code:   exitEmpty,
			stderr: []string{"agenttest: nothing to test: no scenario under empty.yaml (1 suite file, none with a scenario)\n"},
		},
		{
			name:   "lint of nothing, allowed",
			dir:    "testdata/nosuites",
			args:   []string{"lint", "--allow-empty"},
			code:   exitOK,
			stdout: []string{"0 suite files, 0 scenarios: no problems"},
		},
		{
			name:   "lint with a setting that is not one",
			dir:    "testdata/pass",
			args:   []string{"lint"},
			env:    map[string]string{"AGENTTEST_ALLOW_EMPTY": "perhaps"},
			code:   exitUsage,
			stderr: []string{`agenttest: lint: AGENTTEST_ALLOW_EMPTY="perhaps" is not a boolean (true or false)`},
		},
		{
			name:   "lint of two config files, one by --config",
			dir:    repoRoot,
			args:   []string{"lint", "--config", "cmd/agenttest/testdata/badconfig/agenttest.yaml", "examples/agenttest.yaml"},
			code:   exitUsage,
			stdout: []string{"cmd/agenttest/testdata/badconfig/agenttest.yaml:6:16: build_key must be"},
		},
		{
			name:   "lint of agenttest.yml",
			files:  map[string]string{"agenttest.yml": "run:\n  parallel: 0\n"},
			args:   []string{"lint", "agenttest.yml"},
			code:   exitUsage,
			stdout: []string{"agenttest.yml:2:13: parallel must be an integer of at least 1"},
		},
		{
			name:   "no suites is not a pass",
			dir:    "testdata/nosuites",
			args:   []string{"run"},
			code:   exitEmpty,
			stderr: []string{"agenttest: nothing to test: no suite file under ."},
			stdout: []string{"status: empty (nothing was tested: no scenario was selected)"},
		},
		{
			name:   "a suite of no scenarios selects nothing",
			files:  map[string]string{"empty.yaml": "agent: restaurant\nscenarios: []\n"},
			args:   []string{"run", "empty.yaml"},
			code:   exitEmpty,
			stderr: []string{"agenttest: nothing to test: no scenario under empty.yaml (1 suite file, none with a scenario)\n"},
		},
		{
			name:   "nothing selected",
			dir:    "testdata/pass",
			args:   []string{"run", "--tags", "@Smoke"},
			code:   exitEmpty,
			stderr: []string{"agenttest: nothing to test: no scenario of the 2 in 1 suite file matches --tags \"@Smoke\"; no scenario is tagged @Smoke (did you mean @smoke?)"},
		},
		{
			// A name written twice is counted once; one with a quote
			// gets no shell line that its quote would break.
			name:   "a name in another case, with a quote",
			files:  map[string]string{"s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: says it's open\n    greeting: {response: {contains: a}}\n", "t.yaml": "suite: t\nagent: clinic\nscenarios:\n  - name: says it's open\n    greeting: {response: {contains: a}}\n"},
			args:   []string{"list", "--name", "IT'S"},
			code:   exitEmpty,
			stderr: []string{`agenttest: nothing to list: no scenario of the 2 in 2 suite files matches --name "IT'S"; --name is case-sensitive, and 1 name contains "IT'S" in another case, such as "says it's open"` + "\n"},
		},
		{
			// The ignore-case line quotes the text's metacharacters.
			name:   "a name in another case, with metacharacters",
			files:  map[string]string{"s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: costs $5 (plus tax)\n    greeting: {response: {contains: a}}\n"},
			args:   []string{"list", "--name", "$5 (PLUS"},
			code:   exitEmpty,
			stderr: []string{`such as "costs $5 (plus tax)" (--name '/(?i)\$5 \(PLUS/' ignores case)` + "\n"},
		},
		{
			// A /REGEX/ is the user's own: case is theirs to write.
			name:   "a regular expression in another case",
			files:  map[string]string{"s.yaml": "suite: s\nagent: clinic\nscenarios:\n  - name: opens the /help/ page\n    greeting: {response: {contains: a}}\n"},
			args:   []string{"list", "--name", "/HELP/"},
			code:   exitEmpty,
			stderr: []string{`agenttest: nothing to list: no scenario of the 1 in 1 suite file matches --name "/HELP/"` + "\n"},
			absent: []string{"case-sensitive"},
		},
		{
			// The command line's --tags replaces the variable's, however
			// many times it is given.
			name:   "--tags replaces AGENTTEST_TAGS",
			dir:    "testdata/pass",
			env:    map[string]string{"AGENTTEST_TAGS": "@smoke"},
			args:   []string{"list", "--tags", "@booking", "--tags", "~@nosuch"},
			code:   exitOK,
			stdout: []string{"books a table for four", "says goodbye"},
		},
		{
			name:   "a name nearly a scenario's",
			dir:    "testdata/pass",
			args:   []string{"run", "--name", "books a tabel for four"},
			code:   exitEmpty,
			stderr: []string{`agenttest: nothing to test: no scenario of the 2 in 1 suite file matches --name "books a tabel for four"; did you mean "books a table for four"?` + "\n"},
		},
		{
			name: "nothing selected, allowed",
			dir:  "testdata/pass",
			args: []string{"run", "--tags", "@nosuch", "--allow-empty"},
			code: exitOK,
		},
		{
			// A boolean flag takes its variable as every other does.
			name: "nothing selected, allowed by the variable",
			dir:  "testdata/pass",
			args: []string{"run", "--tags", "@nosuch"},
			env:  map[string]string{"AGENTTEST_ALLOW_EMPTY": "true"},
			code: exitOK,
		},
		{
			name:   "unknown command",
			dir:    "testdata/pass",
			args:   []string{"rnu"},
			code:   exitUsage,
			stderr: []string{`unknown command "rnu" (did you mean "run"?)` + "\nRun 'agenttest help' for usage.\n"},
		},
		{
			name:   "a command misspelt, of the later ones",
			dir:    "testdata/pass",
			args:   []string{"gaet"},
			code:   exitUsage,
			stderr: []string{`unknown command "gaet" (did you mean "gate"?)`},
		},
		{
			name:   "a lone dash is no flag",
			dir:    "testdata/pass",
			args:   []string{"-"},
			code:   exitUsage,
			stderr: []string{`agenttest: unknown command "-"`},
		},
		{
			name:   "help of help",
			dir:    "testdata/pass",
			args:   []string{"help", "help"},
			code:   exitOK,
			stdout: []string{"Usage:\n  agenttest <command> [flags] [arguments]"},
		},
		{
			// An empty variable is unset, as a shell's VAR= reads.
			name:   "an empty setting is no setting",
			dir:    "testdata/pass",
			args:   []string{"run"},
			env:    map[string]string{"AGENTTEST_ALLOW_EMPTY": ""},
			code:   exitOK,
			stdout: []string{"2 passed, 0 failed"},
		},
		{
			// compare starts no receiver: a webhook secret in the
			// environment too short to be a key is nothing to mask.
			name:   "a short webhook secret compare does not use",
			dir:    "testdata/pass",
			args:   []string{"compare", "--baseline", "sandbox", "--candidate", "pre-release"},
			env:    map[string]string{"AGENTTEST_WEBHOOK_SECRET": "abc"},
			code:   exitOK,
			stdout: []string{"status: passed"},
		},
		{
			name:   "a flag before the command",
			dir:    "testdata/pass",
			args:   []string{"--sim", "run", "suites"},
			code:   exitUsage,
			stderr: []string{"agenttest: --sim comes before the command: flags follow it (agenttest run --sim ...)\nRun 'agenttest help run' for usage."},
			absent: []string{"did you mean"},
		},
		{
			name:   "a flag and no command",
			dir:    "testdata/pass",
			args:   []string{"--parallel=2"},
			code:   exitUsage,
			stderr: []string{"agenttest: --parallel is a flag, not a command: flags follow the command (agenttest COMMAND --parallel=2 ...)"},
		},
		{
			name:   "no command",
			dir:    "testdata/pass",
			code:   exitUsage,
			stderr: []string{"Usage:", "no command given"},
		},
		{
			name:   "lint finds the problem",
			dir:    "testdata/invalid",
			args:   []string{"lint"},
			code:   exitUsage,
			stdout: []string{"suites/bad.yaml:7:9: unknown key \"expct\"", "expct: {response: hi}"},
		},
		{
			name:   "lint of a good tree",
			dir:    "testdata/pass",
			args:   []string{"lint"},
			code:   exitOK,
			stdout: []string{"1 suite file, 2 scenarios: no problems"},
		},
		{
			name:   "lint checks the config file too, masking the key",
			dir:    "testdata/badconfig",
			args:   []string{"lint"},
			code:   exitUsage,
			stdout: []string{"agenttest.yaml:6:16: build_key must be", "build_key: [REDACTED]"},
			absent: []string{"sk-live-0123456789abcdef"},
		},
		{
			name:   "version",
			dir:    "testdata/pass",
			args:   []string{"version"},
			code:   exitOK,
			stdout: []string{"agenttest "},
		},
		{
			name:   "version refuses a flag it does not have, as every command does",
			dir:    "testdata/pass",
			args:   []string{"version", "--short"},
			code:   exitUsage,
			stderr: []string{"agenttest: version: unknown flag --short\nRun 'agenttest help version' for usage.\n"},
			absent: []string{"agenttest (devel)"},
		},
		{
			name:   "version --json is one JSON object",
			dir:    "testdata/pass",
			args:   []string{"version", "--json"},
			code:   exitOK,
			stdout: []string{`{"version":"(devel)","go":"` + runtime.Version() + `"}` + "\n"},
			absent: []string{"agenttest (devel)"},
		},
		{
			name:   "--version --json=false is the version line",
			dir:    "testdata/pass",
			args:   []string{"--version", "--json=false"},
			code:   exitOK,
			stdout: []string{"agenttest (devel) " + runtime.Version() + "\n"},
			absent: []string{"{"},
		},
		{
			name:   "a flag of version and others given to lint",
			dir:    "testdata/pass",
			args:   []string{"lint", "--json"},
			code:   exitUsage,
			stderr: []string{"agenttest: lint: unknown flag --json (a flag of run, history, coverage, merge, compare and version, not of lint)\n"},
		},
		{
			name:   "version takes no arguments",
			dir:    "testdata/pass",
			args:   []string{"--version", "short"},
			code:   exitUsage,
			stderr: []string{"agenttest: version: takes no arguments\n"},
			absent: []string{"agenttest (devel)"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestEmbeddedSimulatorIsAnnouncedFirst(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"run"}, {"run", "--sim", "-v"}} {
		c := newCLI(t, "testdata/pass", nil, args...)
		if code := c.run(t); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, c.stdout, c.stderr)
		}
		line := firstLine(c.stdout.String())
		if !strings.HasPrefix(line, "agenttest: ") || !strings.Contains(line, "using the embedded simulator (agents: clinic, restaurant, utility-billing)") {
			t.Errorf("%v: first line %q", args, line)
		}
		for _, key := range []string{sim.DefaultBuildKey, sim.DefaultRuntimeKey} {
			if strings.Contains(c.stdout.String()+c.stderr.String(), key) {
				t.Errorf("%v: output shows the simulator key %q", args, key)
			}
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	type testCase struct {
		args []string
		want string
		// code and stderr are what an empty selection gets: the reason,
		// and exit 5 as run would give.
		code   int
		stderr string
	}
	for _, tc := range []testCase{
		{args: []string{"list"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\nsuites/booking.yaml:22  says goodbye  @booking\n"},
		{args: []string{"list", "--tags", "@smoke"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		{args: []string{"list", ".", "--name", "/goodbye$/"}, want: "suites/booking.yaml:22  says goodbye  @booking\n"},
		{args: []string{"list", ".", "--name", "goodbye$"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "goodbye$"` + "\n"},
		{args: []string{"list", "--name", "says good"}, want: "suites/booking.yaml:22  says goodbye  @booking\n"},
		// A name no scenario has gets the nearest one, by diag.Suggest's
		// rule; a name some scenario has, left out by another filter,
		// gets none.
		{args: []string{"list", "--name", "Say Goodbye"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "Say Goodbye"; did you mean "says goodbye"?` + "\n"},
		// No whole name is near, but some contain the text in another
		// case: --name keeps its case, and the hint says how to drop it.
		{args: []string{"list", "--name", "BOOKS"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "BOOKS"; --name is case-sensitive, and 1 name contains "BOOKS" in another case, such as "books a table for four" (--name '/(?i)BOOKS/' ignores case)` + "\n"},
		{args: []string{"list", "--name", "/(?i)BOOKS/"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		{args: []string{"list", "--name", "Good.bye"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "Good.bye"` + "\n"},
		{args: []string{"list", "--name", "A"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "A"; --name is case-sensitive, and 2 names contain "A" in another case, such as "books a table for four" (--name '/(?i)A/' ignores case)` + "\n"},
		{args: []string{"list", "--name", "/BOOKS/"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --name "/BOOKS/"` + "\n"},
		{args: []string{"list", "--name", "says goodbye", "--tags", "@smoke"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --tags "@smoke" and --name "says goodbye"` + "\n"},
		{args: []string{"list", "suites/booking.yaml:22"}, want: "suites/booking.yaml:22  says goodbye  @booking\n"},
		{args: []string{"list", "./suites/booking.yaml:5:5", "--tags", "@smoke"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		// --tags given again: both hold, as Cucumber's do (the last
		// alone would list says goodbye too); an empty one adds nothing.
		{args: []string{"list", "--tags", "@smoke", "--tags", "@booking"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		{args: []string{"list", "--tags", "@smoke", "--tags="}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		{args: []string{"list", "--tags=", "--tags", "@smoke"}, want: "suites/booking.yaml:5  books a table for four  @booking @smoke\n"},
		{args: []string{"list", "--tags", "~@smoke", "--tags", "@smoke"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --tags "(~@smoke) and (@smoke)"` + "\n"},
		{args: []string{"list", "--tags", "~@booking"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --tags "~@booking"` + "\n"},
		{args: []string{"list", "--tags", "@smoek"}, code: exitEmpty,
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --tags "@smoek"; no scenario is tagged @smoek (did you mean @smoke?)` + "\n"},
		{args: []string{"list", "--tags", "@smoek", "--allow-empty"},
			stderr: `agenttest: nothing to list: no scenario of the 2 in 1 suite file matches --tags "@smoek"; no scenario is tagged @smoek (did you mean @smoke?)` + "\n"},
		// A shard the selection leaves empty is not an empty selection.
		{args: []string{"list", "--tags", "@smoke", "--shard", "2/3"},
			stderr: "agenttest: shard 2/3 has no scenario: the selection has 1, dealt over 3 shards\n"},
	} {
		c := newCLI(t, "testdata/pass", nil, tc.args...)
		if code := c.run(t); code != tc.code {
			t.Errorf("%v: exit %d, want %d: %s", tc.args, code, tc.code, c.stderr)
		}
		if got := c.stdout.String(); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.args, got, tc.want)
		}
		if got := c.stderr.String(); got != tc.stderr {
			t.Errorf("%v: stderr\n got %q\nwant %q", tc.args, got, tc.stderr)
		}
	}
}

// junitDoc is an independent view of the JUnit schema, to prove the file
// parses and says what happened.
type junitDoc struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string    `xml:"name,attr"`
			Failure *struct{} `xml:"failure"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// jsonDoc is the part of the JSON report the tests read.
type jsonDoc struct {
	Schema string `json:"schema"`
	Run    struct {
		Interrupted bool `json:"interrupted"`
	} `json:"run"`
	Files []struct {
		Cases []struct {
			Name       string `json:"name"`
			Status     string `json:"status"`
			SkipReason string `json:"skip_reason"`
		} `json:"cases"`
	} `json:"files"`
}

func readReports(t *testing.T, junitPath, jsonPath string) (junitDoc, jsonDoc) {
	t.Helper()
	var j junitDoc
	b, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b)
	}
	var r jsonDoc
	b, err = os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, b)
	}
	return j, r
}

func TestReportFiles(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	junitPath := filepath.Join(out, "nested", "dir", "junit.xml")
	jsonPath := filepath.Join(out, "other", "result.json")
	c := newCLI(t, "testdata/fail", nil, "run", "--junit", junitPath, "--json", jsonPath)
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	j, r := readReports(t, junitPath, jsonPath)
	if len(j.Suites) != 1 || j.Suites[0].Tests != 2 || j.Suites[0].Failures != 1 {
		t.Errorf("JUnit suites = %+v", j.Suites)
	}
	if r.Schema != "agenttest/result/v1" || len(r.Files) != 1 || len(r.Files[0].Cases) != 2 {
		t.Fatalf("JSON = %+v", r)
	}
	if got := r.Files[0].Cases[0].Status + "," + r.Files[0].Cases[1].Status; got != "failed,passed" {
		t.Errorf("statuses %s", got)
	}
}

// TestConfigRunDefaultsAndTarget runs against a simulator named by a
// config target whose key comes from ${env:...}, with report paths from the
// config's run section.
func TestConfigRunDefaultsAndTarget(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 3})
	dir := t.TempDir()
	copyTree(t, "testdata/pass/suites", filepath.Join(dir, "suites"))
	cfg := "default_target: local\n" +
		"targets:\n  local:\n    build_url: ${env:SIM_BUILD_URL}\n    account_id: " + s.AccountID + "\n    agent_id: restaurant\n    build_key: ${env:SIM_KEY}\n" +
		"run:\n  parallel: 1\n  junit: out/junit.xml\n  json: out/result.json\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, dir, map[string]string{"SIM_BUILD_URL": s.BuildURL, "SIM_KEY": s.BuildKey}, "run")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	if line := firstLine(c.stdout.String()); strings.Contains(line, "embedded") || !strings.Contains(line, "local") {
		t.Errorf("first line %q", line)
	}
	readReports(t, filepath.Join(dir, "out/junit.xml"), filepath.Join(dir, "out/result.json"))
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func simEnv(s *simtest.Sim) map[string]string {
	return map[string]string{
		"AGENTTEST_BUILD_URL":   s.BuildURL,
		"AGENTTEST_RUNTIME_URL": s.RuntimeURL,
		"AGENTTEST_ACCOUNT_ID":  s.AccountID,
		"AGENTTEST_BUILD_KEY":   s.BuildKey,
		"AGENTTEST_RUNTIME_KEY": s.RuntimeKey,
	}
}

// TestInterruptWritesReports interrupts a run of 8 cases, 2 at a time,
// when the first case passes, and checks what the interruption did rather
// than how long it took: no case started after it, the cases in flight
// were cut off, and every report says so.
//
// The simulator answers until that first PASS; from then on it holds
// every request until the client gives up on it, so no case started or
// still running at the interruption can finish by itself, however slow
// the machine.
func TestInterruptWritesReports(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	env, hold := holdingBuild(t, s)
	out := t.TempDir()
	junitPath, jsonPath := filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json")
	c := newCLI(t, "testdata/slow", env, "run", "--parallel", "2", "--junit", junitPath, "--json", jsonPath)
	// The first PASS is printed while the passing case still holds its
	// slot: no other case has started yet.
	hold.interruptAt(c, "PASS ")
	r := &drillResult{code: c.run(t)}
	r.stdout, r.stderr = c.stdout.String(), c.stderr.String()
	if r.code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, exitInterrupted, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "interrupted: stopping the run and writing reports") {
		t.Errorf("stderr: %s", r.stderr)
	}
	r.readReports(t, "", junitPath, jsonPath)
	// One verdict per case, the same in the console, JUnit and JSON:
	// pending cases are JUnit skips and PENDING lines.
	crossCheck(t, r)
	if !r.json.Run.Interrupted || r.json.Run.Status != "interrupted" {
		t.Errorf("JSON report says interrupted %v, status %q", r.json.Run.Interrupted, r.json.Run.Status)
	}
	if !strings.Contains(r.junitText, `<property name="status" value="interrupted">`) {
		t.Error("JUnit report does not carry the interrupted status")
	}
	if !strings.Contains(r.stdout, "run interrupted:") || !strings.Contains(r.stdout, "status: interrupted") {
		t.Errorf("console summary does not say the run was interrupted:\n%s", r.stdout)
	}
	// passed: finished before the interruption. cut: started, then cut
	// off in flight (its partial attempt kept). unstarted: never started.
	var passed, cut, unstarted int
	for _, cs := range r.cases() {
		switch {
		case cs.Status == "passed":
			passed++
		case cs.Status != "pending":
			t.Errorf("%s is %s: an interruption is neither a failure nor an error", cs.Name, cs.Status)
		case cs.SkipReason != "not run: run interrupted":
			t.Errorf("%s is pending with reason %q", cs.Name, cs.SkipReason)
		case len(cs.Attempts) > 0:
			cut++
		default:
			unstarted++
		}
	}
	// The first PASS came while both slots were busy, so at most two
	// cases had started: the one that passed and one other, which may
	// have passed just before the interruption took effect or been cut
	// off. The signal is handled as the passing case frees its slot, so
	// one more case may start in that instant on either slot, and is cut
	// off at its first call (held above). Nothing can pass after the
	// interruption, and the plan is never finished.
	if passed < 1 || passed > 2 || passed+cut > 4 || passed+cut+unstarted != 8 || unstarted < 4 {
		t.Errorf("%d passed, %d cut off, %d never started; want 1-2 passed, at most 4 started of 8\n%s", passed, cut, unstarted, r.stdout)
	}
	t.Logf("%d passed, %d cut off, %d never started; %d requests held", passed, cut, unstarted, hold.held.Load())
}

// exitedInterrupted waits for c's Exit, which a second interrupt calls
// with exitInterrupted.
func (c *cli) exitedInterrupted(t *testing.T) {
	t.Helper()
	select {
	case code := <-c.exits:
		if code != exitInterrupted {
			t.Errorf("Exit(%d), want %d", code, exitInterrupted)
		}
	case <-time.After(hangBound):
		t.Fatal("a second interrupt did not exit")
	}
}

func TestSecondInterruptExitsAtOnce(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, Faults: sim.Faults{Latency: 100 * time.Millisecond}})
	c := newCLI(t, "testdata/slow", simEnv(s), "run", "--parallel", "1")
	c.sigs <- struct{}{}
	c.sigs <- struct{}{}
	c.run(t)
	c.exitedInterrupted(t)
}

// TestSecondInterruptRemovesTheTemporaryReport: a second interrupt while
// the reports of an interrupted run are written exits at once, and takes
// the temporary file of the report being written with it. Before, that
// file stayed beside the report's destination, hidden (.junit.xml.123).
func TestSecondInterruptRemovesTheTemporaryReport(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	out := t.TempDir()
	c := newCLI(t, "testdata/pass", simEnv(s), "run", "--junit", filepath.Join(out, "junit.xml"))
	temps := &tempFiles{}
	create := createFileIn(c.st.Dir, temps)
	writing, release := make(chan struct{}), make(chan struct{})
	c.st.CreateFile = func(name string) (ReportFile, error) {
		f, err := create(name)
		if err != nil {
			return nil, err
		}
		return &stalledReport{ReportFile: f, writing: writing, release: release}, nil
	}
	c.st.Exit = exitRemoving(temps, func(code int) { c.exits <- code })
	c.sigs <- struct{}{} // the run stops at once and writes its report
	done := make(chan int, 1)
	go func() { done <- c.run(t) }()
	select {
	case <-writing:
	case <-time.After(hangBound):
		close(release)
		t.Fatalf("the report was never written\n%s", c.stderr)
	}
	if names := dirNames(t, out); len(names) != 1 || !strings.HasPrefix(names[0], ".junit.xml.") {
		t.Fatalf("while the report is written %s holds %q, want its temporary file", out, names)
	}
	c.sigs <- struct{}{}
	c.exitedInterrupted(t)
	if names := dirNames(t, out); len(names) != 0 {
		t.Errorf("after the exit %s holds %q, want nothing", out, names)
	}
	close(release) // the writer of the report goes on, as no process would
	<-done
}

// TestNoReportStartsAfterTheExit: once the exit has removed the
// temporary reports, a writer that starts one after it (the reports of
// an interrupted run, still being written when a second interrupt
// exits) gets an error, and no hidden half report is left behind for
// the exit's removal to have missed.
func TestNoReportStartsAfterTheExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	temps := &tempFiles{}
	create := createFileIn(dir, temps)
	exitRemoving(temps, func(int) {})(exitInterrupted)
	if f, err := create("junit.xml"); err == nil {
		f.Abort()
		t.Error("a report started after the exit")
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("after the exit %s holds %q, want nothing", dir, names)
	}
}

// TestReportIsReadableByAll: a report is written to a temporary file
// (created 0600) and renamed into place; it is made 0644 first, as a
// file written in place would be, so a CI step run as another user (an
// artifact upload) can read it.
func TestReportIsReadableByAll(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := t.TempDir()
	f, err := createFileIn(dir, &tempFiles{})("r.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("report mode %v, want -rw-r--r--", fi.Mode().Perm())
	}
}

// stalledReport is a report whose writing stops at its first write
// until release is closed; writing is closed when it stops.
type stalledReport struct {
	ReportFile
	writing, release chan struct{}
	once             sync.Once
}

func (r *stalledReport) Write(p []byte) (int, error) {
	r.once.Do(func() {
		close(r.writing)
		<-r.release
	})
	return r.ReportFile.Write(p)
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestPendingSecondInterruptWins: when the run ends at the very moment a
// second interrupt is pending, the interrupt wins. Here cancelling the
// run ends it at once, so after the first interrupt both the run's end
// and the second are ready; a plain select would pick the end about half
// the time and the second interrupt would be lost.
func TestPendingSecondInterruptWins(t *testing.T) {
	t.Parallel()
	for i := range 20 {
		sigs := make(chan struct{}, 2)
		sigs <- struct{}{}
		sigs <- struct{}{}
		exits := make(chan int, 1)
		st := &State{Signals: sigs, Stderr: io.Discard, Exit: func(code int) { exits <- code }}
		var in *interrupts
		watching := make(chan struct{})
		in = watchInterrupts(st, func() { <-watching; in.stop() }, "running")
		close(watching)
		select {
		case code := <-exits:
			if code != exitInterrupted {
				t.Fatalf("round %d: Exit(%d), want %d", i, code, exitInterrupted)
			}
		case <-time.After(hangBound):
			t.Fatalf("round %d: the pending second interrupt was lost to the end of the run", i)
		}
	}
}

func TestKeysNeverPrinted(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	const buildKey, runtimeKey = "planted-build-key-7f3a9c", "planted-runtime-key-51d2e8"
	type testCase struct {
		name string
		env  map[string]string
		dir  func(t *testing.T) string
		code int
		// reports: the run concluded and wrote both reports.
		reports bool
	}
	plain := func(*testing.T) string { return "testdata/pass" }
	cases := []testCase{
		{
			name:    "wrong keys from AGENTTEST_* give 401s",
			env:     map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_ACCOUNT_ID": s.AccountID, "AGENTTEST_BUILD_KEY": buildKey, "AGENTTEST_RUNTIME_KEY": runtimeKey},
			dir:     plain,
			code:    exitUsage,
			reports: true,
		},
		{
			name:    "unreachable host",
			env:     map[string]string{"AGENTTEST_BUILD_URL": "http://127.0.0.1:1", "AGENTTEST_BUILD_KEY": buildKey, "AGENTTEST_RUNTIME_KEY": runtimeKey},
			dir:     plain,
			code:    exitErrored,
			reports: true,
		},
		{
			name: "keys from config references, bad account id",
			env:  map[string]string{"BK": buildKey, "RK": runtimeKey},
			dir: func(t *testing.T) string {
				dir := t.TempDir()
				copyTree(t, "testdata/pass/suites", filepath.Join(dir, "suites"))
				cfg := "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    account_id: ACCOUNT-12345678\n    build_key: ${env:BK}\n    runtime_key: ${env:RK}\n"
				os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644)
				return dir
			},
			code: exitUsage,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			junitPath, jsonPath := filepath.Join(out, "j.xml"), filepath.Join(out, "r.json")
			c := newCLI(t, tc.dir(t), tc.env, "run", "-v", "--retries", "1", "--junit", junitPath, "--json", jsonPath)
			if code := c.run(t); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, c.stdout, c.stderr)
			}
			texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
			for _, p := range []string{junitPath, jsonPath} {
				if b, err := os.ReadFile(p); err == nil {
					texts[filepath.Base(p)] = string(b)
				}
			}
			if tc.reports && len(texts) != 4 {
				t.Errorf("reports missing: have %d outputs", len(texts))
			}
			for name, text := range texts {
				for _, key := range []string{buildKey, runtimeKey} {
					if strings.Contains(text, key) {
						t.Errorf("%s contains the key %q:\n%s", name, key, text)
					}
				}
			}
		})
	}
}

func TestHelpGolden(t *testing.T) {
	t.Parallel()
	type testCase struct {
		args   []string
		golden string
	}
	for _, tc := range []testCase{
		{[]string{"help"}, "help.golden"},
		{[]string{"--help"}, "help.golden"},
		{[]string{"help", "--help"}, "help.golden"},
		{[]string{"help", "-h"}, "help.golden"},
		{[]string{"help", "run"}, "run.golden"},
		{[]string{"run", "--help"}, "run.golden"},
		{[]string{"lint", "-h"}, "lint.golden"},
		{[]string{"list", "--help"}, "list.golden"},
		{[]string{"help", "steps"}, "steps-help.golden"},
		{[]string{"steps"}, "steps.golden"},
		{[]string{"help", "webhooks"}, "webhooks.golden"},
		{[]string{"webhooks", "listen", "--help"}, "webhooks.golden"},
		{[]string{"help", "history"}, "history.golden"},
		{[]string{"history", "--help"}, "history.golden"},
		{[]string{"help", "sim"}, "sim.golden"},
		{[]string{"sim", "-h"}, "sim.golden"},
		{[]string{"help", "gate"}, "gate.golden"},
		{[]string{"gate", "--help"}, "gate.golden"},
		{[]string{"help", "compare"}, "compare.golden"},
		{[]string{"compare", "-h"}, "compare.golden"},
		{[]string{"help", "merge"}, "merge.golden"},
		{[]string{"merge", "--help"}, "merge.golden"},
		{[]string{"help", "coverage"}, "coverage.golden"},
		{[]string{"coverage", "-h"}, "coverage.golden"},
		{[]string{"help", "version"}, "version.golden"},
		{[]string{"version", "--help"}, "version.golden"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// An empty environment, so the defaults shown are the
			// built-in ones.
			c := newCLI(t, "testdata/pass", nil, tc.args...)
			if code := c.run(t); code != exitOK {
				t.Fatalf("exit %d: %s", code, c.stderr)
			}
			golden.Check(t, filepath.Join("testdata", "help", tc.golden), []byte(c.stdout.String()))
		})
	}
}

func TestFlagPrecedence(t *testing.T) {
	t.Parallel()
	cfgSrc := "run:\n  parallel: 3\n  retries: 2\n  turn_timeout: 10s\n  junit: cfg.xml\n  json: cfg.json\n  html: cfg.html\n"
	type testCase struct {
		name string
		args []string
		env  map[string]string
		want string
	}
	run := func(t *testing.T, tc testCase) {
		c := newCLI(t, "testdata/pass", tc.env)
		o, fl, err := parseRunOptions(c.st, tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		f, diags := loadConfigForTest(cfgSrc)
		if diags != nil {
			t.Fatal(diags)
		}
		o.applyConfig(f, fl)
		got := strings.Join([]string{itoa(o.parallel), itoa(o.retries), o.turnTimeout.String(), o.junit, o.json, o.html}, " ")
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "config over defaults", want: "3 2 10s cfg.xml cfg.json cfg.html"},
		{name: "environment over config", env: map[string]string{"AGENTTEST_PARALLEL": "5", "AGENTTEST_JSON": "env.json", "AGENTTEST_HTML": "env.html", "AGENTTEST_TURN_TIMEOUT": "1m"}, want: "5 2 1m0s cfg.xml env.json env.html"},
		{name: "flag over environment", args: []string{"--parallel", "7", "--junit", "flag.xml", "--html", "flag.html"}, env: map[string]string{"AGENTTEST_PARALLEL": "5", "AGENTTEST_JUNIT": "env.xml"}, want: "7 2 10s flag.xml cfg.json flag.html"},
		{name: "flag equal to the default still wins", args: []string{"--retries=0", "--parallel", "8"}, want: "8 0 10s cfg.xml cfg.json cfg.html"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestInterspersedFlags(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "testdata/pass", nil)
	o, _, err := parseRunOptions(c.st, []string{"suites", "--tags", "@smoke", "./other/", "-v", "--", "--odd-name"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.paths, ","); got != "suites,other,--odd-name" || o.tags != "@smoke" || !o.verbose {
		t.Errorf("paths %q tags %q verbose %v", got, o.tags, o.verbose)
	}
}

func TestNoColor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tty     bool
		noColor bool
		env     string
		want    bool
	}{
		{true, false, "", true},
		{false, false, "", false},
		{true, true, "", false},
		{true, false, "1", false},
	} {
		st := &State{StdoutTTY: tc.tty, Env: map[string]string{}}
		if tc.env != "" {
			st.Env["NO_COLOR"] = tc.env
		}
		if got := useColor(st, tc.noColor); got != tc.want {
			t.Errorf("%+v: useColor = %v", tc, got)
		}
	}
}

func loadConfigForTest(src string) (*config.File, error) {
	f, diags := config.Load("agenttest.yaml", []byte(src))
	if len(diags) > 0 {
		return nil, diags
	}
	return f, nil
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestEmbeddedWhenNoTargetSelected(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyTree(t, "testdata/pass/suites", filepath.Join(dir, "suites"))
	cfg := "targets:\n  staging:\n    build_url: https://build.example.com\n    build_key: ${env:STAGING_KEY}\n"
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, dir, nil, "run", "--tags", "@smoke")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	want := "agenttest: no target configured; using the embedded simulator (agents: clinic, restaurant, utility-billing); agenttest.yaml defines targets staging but none is selected (use --target or default_target)"
	if line := firstLine(c.stdout.String()); line != want {
		t.Errorf("first line\n got %q\nwant %q", line, want)
	}
	// A file of a target per agent, region and environment is named in
	// part: the first line is no listing.
	many := "targets:\n"
	for i := range 20 {
		many += "  t" + itoa(i) + ":\n    build_url: https://build.example.com\n    build_key: ${env:STAGING_KEY}\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "many.yaml"), []byte(many), 0o644); err != nil {
		t.Fatal(err)
	}
	c = newCLI(t, dir, nil, "run", "--tags", "@smoke", "--config", "many.yaml")
	if code := c.run(t); code != exitOK {
		t.Fatalf("many targets: exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	want = "agenttest: no target configured; using the embedded simulator (agents: clinic, restaurant, utility-billing); many.yaml defines targets t0, t1, t2, t3, t4, t5, t6, t7, and 12 more but none is selected (use --target or default_target)"
	if line := firstLine(c.stdout.String()); line != want {
		t.Errorf("first line with 20 targets\n got %q\nwant %q", line, want)
	}
	// --sim chose the simulator over the targets: it says so, and
	// nothing of a target left unselected.
	c = newCLI(t, dir, nil, "run", "--tags", "@smoke", "--sim")
	if code := c.run(t); code != exitOK {
		t.Fatalf("--sim: exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	want = "agenttest: --sim; using the embedded simulator (agents: clinic, restaurant, utility-billing)"
	if line := firstLine(c.stdout.String()); line != want {
		t.Errorf("first line with --sim\n got %q\nwant %q", line, want)
	}
}

// TestSymlinksAreFollowed: a suite reached through a symbolic link (to a
// file anywhere) is read like the file itself, under the link's path.
func TestSymlinksAreFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	elsewhere := t.TempDir()
	src := bookingSuite(t)
	if err := os.WriteFile(filepath.Join(elsewhere, "real.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, "real.yaml"), filepath.Join(dir, "suites", "linked.yaml")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	c := newCLI(t, dir, nil, "list")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d: %s", code, c.stderr)
	}
	if got := c.stdout.String(); !strings.HasPrefix(got, "suites/linked.yaml:5  books a table for four") {
		t.Errorf("list:\n%s", got)
	}
}

// TestBrokenSymlinks: a path that is a symbolic link to nothing says so,
// with the link's target, where "no such file or directory" contradicted
// the link that ls shows. A broken ./agenttest.yaml is an error, not a
// config file that is absent: the run does not fall back to the embedded
// simulator.
func TestBrokenSymlinks(t *testing.T) {
	t.Parallel()
	src := bookingSuite(t)
	for _, tc := range []struct {
		name  string
		links map[string]string // link → its target
		args  []string
		want  string
	}{
		{"suite named", map[string]string{"suites/gone.yaml": "../moved.yaml"}, []string{"run", "suites/gone.yaml"},
			"find suites in suites/gone.yaml: a symbolic link to ../moved.yaml, which does not exist\n"},
		{"feature named", map[string]string{"gone.feature": "features/moved.feature"}, []string{"list", "gone.feature"},
			"find suites in gone.feature: a symbolic link to features/moved.feature, which does not exist\n"},
		{"suite in a directory", map[string]string{"suites/gone.yaml": "../moved.yaml"}, []string{"lint", "suites"},
			"suites/gone.yaml: read suite: open suites/gone.yaml: a symbolic link to ../moved.yaml, which does not exist\n"},
		{"default config", map[string]string{"agenttest.yaml": "../shared/agenttest.yaml"}, []string{"run", "suites"},
			"agenttest: config file agenttest.yaml is a symbolic link to ../shared/agenttest.yaml, which does not exist\n"},
		{"config named", map[string]string{"ci.yaml": "moved.yaml"}, []string{"lint", "--config", "ci.yaml", "suites"},
			"agenttest: config file ci.yaml is a symbolic link to moved.yaml, which does not exist\n"},
		{"report", map[string]string{"reports/run.json": "old/run.json"}, []string{"gate", "reports/run.json"},
			"agenttest: gate: reports/run.json: open: a symbolic link to old/run.json, which does not exist\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"suites/booking.yaml": string(src)})
			for link, target := range tc.links {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, link)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
					t.Skipf("no symbolic links here: %v", err)
				}
			}
			out := newCLI(t, dir, nil, tc.args...).expect(t, exitUsage, tc.want)
			if strings.Contains(out, "no such file") || strings.Contains(out, "embedded simulator") {
				t.Errorf("output:\n%s", out)
			}
		})
	}
}

// lint, run and list refuse alike a name with a control character: a YAML
// escape writes one, an outline's Examples cell (\n) puts a line end in a
// feature's. Before, all three loaded them (list printed them escaped).
func TestCommandsRefuseControlNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"s.yaml":    "suite: s\nagent: restaurant\nscenarios:\n  - name: \"bell\\a\"\n    turns: [{say: hi, expect: {response: {contains: Welcome}}}]\n",
		"f.feature": "@agent:restaurant\nFeature: f\n  Scenario Outline: say <x>\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n\n    Examples:\n      | x    |\n      | a\\nb |\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"lint"}, {"run", "--sim"}, {"list"}} {
		newCLI(t, dir, nil, args...).expect(t, exitUsage,
			"f.feature:9:9: scenario name holds control character U+000A, which is not allowed",
			"s.yaml:4:11: scenario name holds control character U+0007, which is not allowed",
			// The flag that matches names, which the user can look up.
			"matched by --name;")
	}
}

// list prints one scenario per line: a name holding a tab, a line
// separator or a bidirectional override (all a name may hold; control
// characters and line ends it may not, badName) and a file path holding
// an escape sequence or a line break are shown escaped, as run shows
// them, so that they can neither drive the terminal nor forge a line of
// the listing. Before, they were printed raw.
func TestListEscapesNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := "suite: s\nagent: restaurant\nscenarios:\n" +
		`  - name: "red\ttext\Lforged\u202e"` + "\n" +
		"    turns: [{say: hi, expect: {response: {contains: Welcome}}}]\n"
	file := "s\x1b[31m\x1b]0;title\a\r\nsuites\u2028x.yaml"
	if err := os.WriteFile(filepath.Join(dir, file), []byte(suite), 0o644); err != nil {
		t.Skipf("no such file names here: %v", err)
	}
	c := newCLI(t, dir, nil, "list")
	if code := c.run(t); code != 0 {
		t.Fatalf("exit %d: %s", code, c.stderr)
	}
	want := `s\x1b[31m\x1b]0;title\a\r\nsuites\u2028x.yaml:4  red\ttext\u2028forged\u202e` + "\n"
	if got := c.stdout.String(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestDurationMeant: a promotion job's --max-age in days, or without a
// unit, is said with the duration it most likely meant.
func TestDurationMeant(t *testing.T) {
	t.Parallel()
	newCLI(t, "testdata/pass", nil, "gate", "r.json", "--max-age", "90").expect(t, exitUsage,
		"agenttest: gate: --max-age \"90\": not a duration such as 30s or 2m (a number needs a unit: 90s, 90m or 90h)\n")
	newCLI(t, "testdata/pass", map[string]string{"AGENTTEST_MAX_AGE": "1.5d"}, "gate", "r.json").expect(t, exitUsage,
		"agenttest: gate: AGENTTEST_MAX_AGE=\"1.5d\" is not a duration such as 30s or 2m (no unit of days: write 36h)\n")
}
