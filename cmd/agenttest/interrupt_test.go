package main

// Interruption with a real process: agenttest (this test binary running
// main) is run against the shipped suites on a slow embedded simulator, and sent
// SIGINT or SIGTERM mid-run. Unlike the in-process tests of main_test.go,
// this covers main's signal wiring and the exit status the shell sees.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// asMainEnv makes the test binary run agenttest's main instead of the
// tests: the interruption tests start it as a real agenttest process,
// without building another binary.
const asMainEnv = "GO_TEST_RUN_AS_AGENTTEST"

// noRaceExitPause is the environment entry that spares an agenttest
// process built with -race the race runtime's one-second pause before a
// successful exit. The pause gives goroutines still running a last
// chance to race; a race found while the process ran still fails its
// exit (code 66), pause or not.
const noRaceExitPause = "GORACE=atexit_sleep_ms=0"

// processEnv is the whole environment of an agenttest process a test
// starts: HOME, a PATH, the entries that make the test binary agenttest
// and spare its race pause, and more. Under go test -cover the binary
// is built for coverage, and without GOCOVERDIR it warns on stderr,
// which the tests read as agenttest's: its counters go where go test
// collects the package's (-test.gocoverdir), or nowhere that matters.
func processEnv(t *testing.T, home string, more ...string) []string {
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, asMainEnv + "=1", noRaceExitPause}
	if testing.CoverMode() != "" {
		dir := t.TempDir()
		if f := flag.Lookup("test.gocoverdir"); f != nil && f.Value.String() != "" {
			dir = f.Value.String()
		}
		env = append(env, "GOCOVERDIR="+dir)
	}
	return append(env, more...)
}

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main() // exits
	}
	flag.Parse()
	parallelWhileWaiting()
	collectLessOften(os.LookupEnv, debug.SetGCPercent)
	os.Exit(m.Run())
}

// testGOGC is the collector's target for this test process.
const testGOGC = 400

// collectLessOften sets the collector's target of this test process to
// testGOGC, not the default 100, unless GOGC or GOMEMLIMIT is set: the
// tests run hundreds of commands in one process, each leaving its
// simulator, transcripts and reports behind, and under -race collecting
// them that often took nearly a tenth of the package's CPU (its test
// binary: about 40 CPU-seconds at 100, 37 at 200, 36 at 400, for a peak
// of 0.65, 0.8 and 1 GB; BENCHMARKS.md, testcost4). The agenttest
// processes the tests start run main, which tunes its own (tuneGC).
func collectLessOften(lookupEnv func(string) (string, bool), setGCPercent func(int) int) {
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		if _, set := lookupEnv(name); set {
			return
		}
	}
	setGCPercent(testGOGC)
}

// parallelWaiters is how many parallel tests run at once per CPU unless
// go test's -parallel says otherwise.
const parallelWaiters = 4

// parallelWhileWaiting lets parallelWaiters tests per CPU run side by
// side, not the one of testing's default (-parallel is GOMAXPROCS):
// most of this package's tests spend their time waiting on what they
// started (the embedded simulator's paced calls, a server that stalls,
// a process, a browser), and at two at a time on a 2-core machine they
// left it half idle, 17 s of wall time for 19 s of CPU. An explicit
// -parallel is kept.
func parallelWhileWaiting() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(parallelWaiters*runtime.GOMAXPROCS(0)))
	}
}

// agenttestBinary returns the program that runs agenttest as a process of
// its own: this test binary, with asMainEnv set.
func agenttestBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts agenttest processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary: %v", err)
	}
	return exe
}

// startSlowRun starts `agenttest run suites` with every call of the
// embedded simulator slowed down, so the run takes seconds (about 60
// cases, two at a time, each call 50ms).
func startSlowRun(t *testing.T, out string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	bin := agenttestBinary(t)
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "suites", "--parallel", "2",
		"--junit", filepath.Join(out, "junit.xml"), "--json", filepath.Join(out, "result.json"))
	cmd.Dir = root
	cmd.Env = processEnv(t, out, simFlagsEnv+"=--latency=50ms")
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdout, stderr
}

// waitUntil waits until what b holds satisfies cond, checking again at
// each write to b; it fails the test after hangBound.
func waitUntil(t *testing.T, b *syncBuffer, what string, cond func(string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	if _, err := b.await(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// exitStatus waits for the child and returns its exit code, failing the
// test when it does not end within hangBound.
func exitStatus(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			return ee.ExitCode()
		}
		t.Fatalf("wait: %v", err)
	case <-time.After(hangBound):
		cmd.Process.Kill()
		<-done
		t.Fatalf("agenttest did not exit within %s", hangBound)
	}
	return -1
}

func TestSignalMidRun(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := t.TempDir()
			cmd, stdout, stderr := startSlowRun(t, out)
			// Some verdicts are in, many cases are still to come.
			waitUntil(t, stdout, "a first verdict", func(out string) bool { return strings.Contains(out, "\nPASS ") })
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := exitStatus(t, cmd); code != exitInterrupted {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitInterrupted, stdout, stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted: stopping the run and writing reports") {
				t.Errorf("stderr does not say what happens: %s", stderr)
			}
			r := &drillResult{code: exitInterrupted, stdout: stdout.String(), stderr: stderr.String()}
			r.readReports(t, "", filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json"))
			if !r.json.Run.Interrupted || r.json.Run.Status != "interrupted" {
				t.Errorf("JSON report says interrupted %v, status %q: want an interrupted run", r.json.Run.Interrupted, r.json.Run.Status)
			}
			if !strings.Contains(r.junitText, `<property name="status" value="interrupted">`) {
				t.Error("JUnit report does not carry the interrupted status")
			}
			if !strings.Contains(r.stdout, "status: interrupted") {
				t.Errorf("console does not end with the interrupted status:\n%s", r.stdout)
			}
			counts := map[string]int{}
			for _, c := range r.cases() {
				counts[c.Status]++
				if c.Status == "pending" && c.SkipReason == "" {
					t.Errorf("%s is pending without saying why", c.Name)
				}
			}
			if counts["passed"] < 1 || counts["pending"] < 1 {
				t.Errorf("want finished and unfinished cases, got %v", counts)
			}
			if counts["failed"]+counts["errored"] > 0 {
				t.Errorf("an interruption turned cases into failures or errors: %v", counts)
			}
			// Every case has one verdict in the console and in both
			// reports, the unfinished ones included.
			crossCheck(t, r)
			if !strings.Contains(r.stdout, "run interrupted:") {
				t.Errorf("summary does not say the run was interrupted:\n%s", r.stdout)
			}
		})
	}
}

// TestSecondSignalExitsAtOnce makes the conclusion of an interrupted run
// block: its JUnit report goes to a named pipe nobody reads, so writing it
// never ends. A second SIGINT must end the process anyway, with 130.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(out, "junit.xml"), 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	cmd, stdout, stderr := startSlowRun(t, out)
	waitUntil(t, stdout, "a first verdict", func(out string) bool { return strings.Contains(out, "\nPASS ") })
	cmd.Process.Signal(syscall.SIGINT)
	waitUntil(t, stdout, "the summary of the interrupted run", func(out string) bool { return strings.Contains(out, "run interrupted:") })
	// Signals of one kind do not queue: send the second once the first
	// has been handled, as a user pressing Ctrl-C again would.
	cmd.Process.Signal(syscall.SIGINT)
	if code := exitStatus(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\nstderr:\n%s", code, exitInterrupted, stderr)
	}
	if s := stderr.String(); !strings.Contains(s, "interrupted again: exiting without waiting") {
		t.Errorf("stderr does not show the second interrupt: %s", s)
	}
}

// TestConsoleReaderGoesAway: a run whose console is read by a program that
// stops early (agenttest run ... | head) goes on to its reports and its
// own exit code. By default a Go program dies of SIGPIPE at its next write
// to stdout, and the reports were never written.
func TestConsoleReaderGoesAway(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	junit, report := filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json")
	// Slowed down so that the run still writes after its reader is gone.
	cmd, r, stderr := startPiped(t, processEnv(t, out, simFlagsEnv+"=--latency=20ms"), false,
		"run", "examples-failing", "--parallel", "2", "--junit", junit, "--json", report)
	// Read the first line, as head -1 does, and go away.
	first := make([]byte, 1)
	for first[0] != '\n' {
		if _, err := r.Read(first); err != nil {
			t.Fatalf("no first line: %v", err)
		}
	}
	r.Close()
	if code := exitStatus(t, cmd); code != exitFailed {
		t.Fatalf("exit %d, want %d (the run's own)\nstderr:\n%s", code, exitFailed, stderr)
	}
	// The run's note of what its statistical scenario may cost is all
	// it says on stderr: nothing of a broken pipe.
	for l := range strings.Lines(stderr.String()) {
		if !strings.HasPrefix(l, "agenttest: note: ") {
			t.Errorf("stderr: %s", stderr)
			break
		}
	}
	res := &drillResult{code: exitFailed}
	res.readReports(t, "", junit, report)
	if res.json.Run.Status != "failed" || len(res.cases()) == 0 {
		t.Errorf("JSON report: status %q, %d cases; want the failed run's", res.json.Run.Status, len(res.cases()))
	}
}

// TestConsoleReaderGoneCompareGate: compare and gate whose console has no
// reader (agenttest compare ... | head, whose head is gone) exit with
// their own verdict, and compare writes its report. Before, the write of
// the comparison to the console failed with EPIPE: "internal error:
// write /dev/stdout: broken pipe", exit 3, and no --json for the gate of
// the next job; the gate's verdict became exit 3 too.
func TestConsoleReaderGoneCompareGate(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	// noReader runs agenttest with a stdout whose reader closed before
	// it started: every write to the console fails with EPIPE.
	noReader := func(args ...string) {
		t.Helper()
		cmd, _, stderr := startPiped(t, processEnv(t, out), true, args...)
		if code := exitStatus(t, cmd); code != exitOK || stderr.String() != "" {
			t.Errorf("agenttest %s: exit %d, want 0\nstderr:\n%s", strings.Join(args, " "), code, stderr)
		}
	}
	comparison, report := filepath.Join(out, "compare.json"), filepath.Join(out, "r.json")
	noReader("compare", "--baseline", "live", "--candidate", "pre-release", "--allow-live", "examples/compare", "--name", "books a table", "--json", comparison)
	var doc struct{ Status string }
	if b, err := os.ReadFile(comparison); err != nil || json.Unmarshal(b, &doc) != nil || doc.Status != "passed" {
		t.Errorf("the comparison's report: %v, status %q", err, doc.Status)
	}
	noReader("run", "examples/compare", "--name", "books a table", "--json", report)
	noReader("gate", "--name", "books a table", report)
}

// TestConsoleReaderGoneReaders: the commands that read what is already
// there (history and coverage of the nightly reports, list, steps) exit 0
// when their console has no reader (agenttest history nightly/*.json |
// head, whose head has read its lines). Before, each exited 3 with
// "internal error: write /dev/stdout: broken pipe", which a CI step under
// bash -e -o pipefail turned into a failed job. They say why as compare
// and gate do (consoleErr).
func TestConsoleReaderGoneReaders(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	report := filepath.Join(out, "r.json")
	cmd, _, stderr := startPiped(t, processEnv(t, out), true, "run", "examples/compare", "--name", "books a table", "--json", report)
	if code := exitStatus(t, cmd); code != exitOK {
		t.Fatalf("run: exit %d\nstderr:\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"history", report},
		{"history", "--json", report},
		{"coverage", report},
		{"coverage", "--json", report},
		{"list", "examples/compare"},
		{"steps"},
	} {
		t.Run(strings.ReplaceAll(strings.Join(args, " "), report, "r.json"), func(t *testing.T) {
			t.Parallel()
			cmd, _, stderr := startPiped(t, processEnv(t, out), true, args...)
			if code := exitStatus(t, cmd); code != exitOK || stderr.String() != "" {
				t.Errorf("agenttest %s: exit %d, want 0\nstderr:\n%s", strings.Join(args, " "), code, stderr)
			}
		})
	}
}

// startPiped starts agenttest in the repository's root with env, its
// console a pipe whose read end it returns (nil when readerGone: closed
// before the process started, so that every write to its console fails
// with EPIPE), and its stderr.
func startPiped(t *testing.T, env []string, readerGone bool, args ...string) (*exec.Cmd, *os.File, *syncBuffer) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if readerGone {
		r.Close()
		r = nil
	}
	cmd := exec.Command(agenttestBinary(t), args...)
	cmd.Dir, cmd.Env = root, env
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = w, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return cmd, r, stderr
}
