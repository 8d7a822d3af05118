package main

// The exit-code table, row by row, as the shell sees it: each test starts
// agenttest as a process of its own (this test binary running main, see
// interrupt_test.go) and reads its exit status, its output and the
// reports it left. SIGINT (130) is TestSignalMidRun. TestUnreachableTarget
// runs in-process, on a fake clock whose pauses it counts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// process is one finished agenttest process.
type process struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runProcess runs agenttest in dir with env (and nothing else of this
// process's environment) and waits for it.
func runProcess(t *testing.T, dir string, env map[string]string, args ...string) process {
	t.Helper()
	return startProcess(t, dir, env, args...)(t)
}

// startProcess starts agenttest as runProcess does and returns the func
// that waits for it.
func startProcess(t *testing.T, dir string, env map[string]string, args ...string) (wait func(t *testing.T) process) {
	t.Helper()
	cmd := exec.Command(agenttestBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = processEnv(t, t.TempDir())
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("agenttest %v: %v", args, err)
	}
	return func(t *testing.T) process {
		t.Helper()
		err := cmd.Wait()
		p := process{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		default:
			t.Fatalf("agenttest %v: %v", args, err)
		}
		return p
	}
}

func (p process) String() string {
	return fmt.Sprintf("exit %d after %s\nstdout:\n%s\nstderr:\n%s", p.code, p.took.Round(time.Millisecond), p.stdout, p.stderr)
}

// TestExitCodeTable drives the built binary through every row of the
// exit-code table but 130.
func TestExitCodeTable(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	type testCase struct {
		name string
		dir  string
		env  map[string]string
		args []string
		code int
		// stdout and stderr must contain each of these; stderr none of
		// notStderr.
		stdout, stderr, notStderr []string
	}
	cases := []testCase{
		{name: "0: every scenario passed", dir: "testdata/pass", args: []string{"run"}, code: exitOK,
			stdout: []string{"2 passed, 0 failed, 0 skipped", "status: passed"}},
		{name: "1: a check failed", dir: "testdata/fail", args: []string{"run"}, code: exitFailed,
			stdout: []string{"status: failed"}},
		{name: "2: a directory of broken suite files, run", dir: "testdata/discovery", args: []string{"run"}, code: exitUsage,
			stderr: []string{"suites/broken.yml:3:11: invalid YAML", "suites/empty.yaml:1:1: file is empty", `suites/misspelt.yaml:3:1: unknown key "scenario"`}},
		{name: "2: a directory of broken suite files, lint", dir: "testdata/discovery", args: []string{"lint"}, code: exitUsage,
			stdout: []string{"suites/broken.yml:3:11: invalid YAML", "suites/empty.yaml:1:1: file is empty", `suites/misspelt.yaml:3:1: unknown key "scenario"`}},
		{name: "2: the platform refuses the key", dir: "testdata/pass",
			env: map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": "not-the-build-key-0123"}, args: []string{"run", "--parallel", "1"}, code: exitUsage,
			stderr: []string{"refused the build key", "check AGENTTEST_BUILD_KEY"}, stdout: []string{"not run: credentials refused"}},
		{name: "3: internal (a report the disk refuses at the end)", dir: "testdata/pass", args: []string{"run", "--json", "/dev/full"}, code: exitInternal,
			stderr: []string{"agenttest: write report /dev/full: no space left on device"}, notStderr: []string{"internal error"}},
		{name: "4: errors only (every turn times out on the platform)", dir: "testdata/pass",
			env: map[string]string{simFlagsEnv: "--chat-timeout 1"}, args: []string{"run", "--retries", "0"}, code: exitErrored,
			stdout: []string{"CHAT_TIMEOUT", "0 passed, 0 failed, 0 skipped", "status: errored"}},
		{name: "5: nothing selected", dir: "testdata/pass", args: []string{"run", "--tags", "@NoSuch"}, code: exitEmpty,
			stderr: []string{"agenttest: nothing to test"}, stdout: []string{"status: empty"}},
		{name: "0: nothing selected, allowed", dir: "testdata/pass", args: []string{"run", "--tags", "@NoSuch", "--allow-empty"}, code: exitOK,
			stdout: []string{"status: empty"}},
	}
	// Every row's process starts at once; each row then waits for its own.
	waits := make([]func(t *testing.T) process, len(cases))
	for i, tc := range cases {
		if tc.name[0] == '3' {
			if _, err := os.Stat("/dev/full"); err != nil {
				continue
			}
		}
		waits[i] = startProcess(t, tc.dir, tc.env, tc.args...)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if waits[i] == nil {
				t.Skip("no /dev/full here")
			}
			p := waits[i](t)
			if p.code != tc.code {
				t.Fatalf("want exit %d, got %s", tc.code, p)
			}
			for _, w := range tc.stdout {
				if !strings.Contains(p.stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, p)
				}
			}
			for _, w := range tc.stderr {
				if !strings.Contains(p.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, p)
				}
			}
			for _, w := range tc.notStderr {
				if strings.Contains(p.stderr, w) {
					t.Errorf("stderr has %q:\n%s", w, p)
				}
			}
		})
	}
}

// TestConfigErrorNamedApart: a scenario that cannot be run as written (a
// ${env:...} no one set) errors the run with exit 4 as any error does,
// but the status line says it is a configuration error, which retrying
// the job will not fix, not the platform or the network; and a merge of
// the run's JSON report says the same with the same code.
func TestConfigErrorNamedApart(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	junitPath, jsonPath := filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json")
	const status = "status: errored (no check failed, but 1 case errored: its scenario cannot be run as written (a configuration error; retrying will not help))"
	p := runProcess(t, "testdata/configerror", nil, "run", "--junit", junitPath, "--json", jsonPath)
	if p.code != exitErrored {
		t.Fatalf("want exit 4, got %s", p)
	}
	if !strings.Contains(p.stdout, "AGENTTEST_TEST_UNSET_VARIABLE") || !strings.HasSuffix(p.stdout, status+"\n") {
		t.Errorf("stdout does not name the variable and end with\n%s\n%s", status, p)
	}
	junit, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<property name="status" value="errored">`, `type="config"`} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("JUnit lacks %s:\n%s", want, junit)
		}
	}
	m := runProcess(t, out, nil, "merge", jsonPath)
	if m.code != exitErrored || !strings.HasSuffix(m.stdout, status+"\n") {
		t.Errorf("merge: want exit 4 and stdout ending with\n%s\ngot %s", status, m)
	}
}

// TestUnreachableTarget: a 100-scenario suite against a closed port ends
// with exit 4 once the first calls meet it, without waiting out long
// retry backoffs; it says the cause once with the host and what to check,
// and reports every case: the few that tried, errored, the rest not run
// with the reason, in the console and in both reports.
//
// It runs in-process so that the run's pauses go to a fake clock and can
// be counted: what the client asked to wait is bounded by its retry
// policy for the few calls made, on a loaded machine as on an idle one.
// The exit status a shell sees for errors only is TestExitCodeTable's.
func TestUnreachableTarget(t *testing.T) {
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
	dir := t.TempDir()
	var suite strings.Builder
	suite.WriteString("suite: many\nagent: restaurant\nscenarios:\n")
	for i := range 100 {
		fmt.Fprintf(&suite, "  - {name: case %d, greeting: {response: {contains: Welcome}}}\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "many.yaml"), []byte(suite.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTTEST_BUILD_URL": "http://" + addr, "AGENTTEST_BUILD_KEY": "build-key-0123456789"}
	const parallel = 8
	c := newCLI(t, dir, env, "run", "--parallel", fmt.Sprint(parallel), "--junit", "junit.xml", "--json", "result.json")
	clk, waits := fakeclock.New(), &pauses{}
	c.st.Now, c.st.Sleep = clk.Now, waits.on(clk.Sleep)
	code := c.run(t)
	p := process{code: code, stdout: c.stdout.String(), stderr: c.stderr.String()}
	if p.code != exitErrored {
		t.Fatalf("want exit 4, got %s", p)
	}
	cause := "the platform at " + addr + " is unreachable"
	if n := strings.Count(p.stderr, cause); n != 1 || !strings.Contains(p.stderr, "connection refused") || !strings.Contains(p.stderr, "check AGENTTEST_BUILD_URL") {
		t.Errorf("stderr says the cause %d times, want once with what to check:\n%s", n, p.stderr)
	}
	errored := strings.Count(p.stdout, "\nERROR ")
	skipped := strings.Count(p.stdout, "(not run: platform unreachable)")
	if errored > parallel || errored+skipped != 100 {
		t.Errorf("%d errored and %d not run, want the 100 cases with at most --parallel errored (the deployment read before the first case may meet the closed port first):\n%s", errored, skipped, p)
	}
	if !strings.Contains(p.stdout, "status: errored") {
		t.Errorf("console does not end with the errored status:\n%s", p.stdout)
	}
	var doc struct {
		Run struct {
			Status string `json:"status"`
			Stop   struct {
				Kind, Reason, Host, Cause string
			} `json:"stop"`
		} `json:"run"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Run.Status != "errored" || doc.Run.Stop.Kind != "unreachable" || doc.Run.Stop.Host != addr || doc.Run.Stop.Reason != "not run: platform unreachable" {
		t.Errorf("JSON run = %+v", doc.Run)
	}
	junit, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(junit), `<skipped message="not run: platform unreachable">`); n != skipped {
		t.Errorf("JUnit skips %d cases with the reason, the console %d", n, skipped)
	}
	if !strings.Contains(string(junit), `<property name="status" value="errored">`) {
		t.Errorf("JUnit lacks the run status")
	}
	// The call that met the closed port first tried as often as the
	// retry policy allows, and its failure stopped the run.
	if want := fmt.Sprintf("connection refused (gave up after %d attempts)", platform.DefaultMaxAttempts); !strings.Contains(doc.Run.Stop.Cause, want) {
		t.Errorf("JSON stop cause %q lacks %q", doc.Run.Stop.Cause, want)
	}
	// What the run waited: one backoff per call that met the port (the
	// deployment read, at most --parallel cases), each within the
	// policy's schedule: at most MaxAttempts-1 pauses, the k-th below
	// BaseDelay×2^(k-1), so under 3s a call. Runner retries of a case
	// would show as more pauses or more calls.
	calls := waits.calls()
	var total time.Duration
	for i, ds := range calls {
		// The bound this test had on the wall time of the whole run,
		// whose calls wait side by side.
		if sum := sumDurations(ds); sum >= 5*time.Second {
			t.Errorf("call %d waited %s against a closed port, want under 5s: %v", i, sum, ds)
		}
		if len(ds) > platform.DefaultMaxAttempts-1 {
			t.Errorf("call %d paused %d times, want at most %d: %v", i, len(ds), platform.DefaultMaxAttempts-1, ds)
		}
		for k, d := range ds {
			if ceiling := min(platform.DefaultBaseDelay<<k, platform.DefaultMaxDelay); d < 0 || d >= ceiling {
				t.Errorf("call %d: pause %d is %s, want under %s: %v", i, k+1, d, ceiling, ds)
			}
		}
		total += sumDurations(ds)
	}
	if len(calls) == 0 || len(calls) > parallel+1 {
		t.Errorf("%d calls paused, want 1 to %d (the deployment read and the cases in flight): %v", len(calls), parallel+1, calls)
	}
	t.Logf("%d calls paused %s in all: %v", len(calls), total, calls)
}

// TestReportPathIsADirectory: --junit naming a directory is refused
// before any call (exit 2), and the platform never hears from the run.
func TestReportPathIsADirectory(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	dir, err := filepath.Abs("testdata/pass")
	if err != nil {
		t.Fatal(err)
	}
	reports := t.TempDir()
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": "build-key-0123456789"}
	p := runProcess(t, dir, env, "run", "--junit", reports, "--json", filepath.Join(reports, "result.json"))
	if p.code != exitUsage {
		t.Fatalf("want exit 2, got %s", p)
	}
	if want := "agenttest: run: --junit " + reports + ": it is a directory"; !strings.Contains(p.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, p)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the platform got %d calls", n)
	}
	if strings.Contains(p.stdout, "running ") {
		t.Errorf("the run started:\n%s", p.stdout)
	}
}

// TestKilledRunLeavesNoReport: reports are written when a run concludes,
// and an earlier run's reports are removed when it starts, so a run killed
// with SIGKILL after its first case leaves no report at the final paths,
// and no temporary file.
func TestKilledRunLeavesNoReport(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	for _, name := range []string{"junit.xml", "result.json"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte("the previous run's green verdict"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd, stdout, stderr := startSlowRun(t, out)
	waitUntil(t, stdout, "a first verdict", func(out string) bool { return strings.Contains(out, "\nPASS ") })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("%s left in the report directory after kill -9\nstderr:\n%s", e.Name(), stderr)
	}
}

// pauses records the waits a run asks for, by the context they are asked
// with: the platform client retries a call in one context, so the waits
// of one context are one call's backoff.
type pauses struct {
	mu     sync.Mutex
	byCtx  map[context.Context]int
	chains [][]time.Duration
}

// on returns a Sleep that records each wait and then waits with sleep.
func (p *pauses) on(sleep func(context.Context, time.Duration) error) func(context.Context, time.Duration) error {
	return func(ctx context.Context, d time.Duration) error {
		p.mu.Lock()
		if p.byCtx == nil {
			p.byCtx = map[context.Context]int{}
		}
		i, ok := p.byCtx[ctx]
		if !ok {
			i = len(p.chains)
			p.byCtx[ctx] = i
			p.chains = append(p.chains, nil)
		}
		p.chains[i] = append(p.chains[i], d)
		p.mu.Unlock()
		return sleep(ctx, d)
	}
}

func sumDurations(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum
}

// calls returns the waits of each context, in the order of their first.
func (p *pauses) calls() [][]time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.chains)
}

// TestReportDirectoryRefusesFiles: a report in a directory that takes no
// new file is refused before the run, though its permission bits would
// let root write there: /proc refuses every new file, whoever asks.
func TestReportDirectoryRefusesFiles(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	out := newCLI(t, "testdata/pass", nil, "run", "--json", "/proc/agenttest-report.json").
		expect(t, exitUsage, "agenttest: run: --json /proc/agenttest-report.json: cannot write there: ")
	if strings.Contains(out, "running ") {
		t.Errorf("the run started:\n%s", out)
	}
}

// TestExitCodeOfAnUntypedError: an error that carries no exit code is
// agenttest's own fault: exit 3, said as an internal error.
func TestExitCodeOfAnUntypedError(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	if code := exitCode(fmt.Errorf("sim: %w", errors.ErrUnsupported), &stderr); code != exitInternal || stderr.String() != "agenttest: internal error: sim: unsupported operation\n" {
		t.Errorf("exit %d, want %d: %q", code, exitInternal, stderr.String())
	}
}
