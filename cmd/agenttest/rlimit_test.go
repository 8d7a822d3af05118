package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFitParallel(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name               string
		limit              uint64
		err                error
		parallel           int
		receiver, embedded bool
		messaging          bool
		want               int
		says               string
	}
	for _, tc := range []testCase{
		{name: "fits", limit: 1 << 20, parallel: 2000, want: 2000},
		{name: "remote target", limit: 1024, parallel: 2000, want: 480, says: "--parallel 2000 lowered to 480: the open-file limit is 1024 (ulimit -n) and each scenario may hold 2 connections"},
		{name: "embedded simulator holds both ends", limit: 1024, parallel: 2000, embedded: true, want: 240},
		{name: "a WebSocket to the messaging host too", limit: 1024, parallel: 2000, messaging: true, want: 320},
		{name: "receiver connections reserved", limit: 1024, parallel: 2000, receiver: true, embedded: true, want: 176},
		{name: "tiny limit still runs one", limit: 10, parallel: 8, want: 1},
		{name: "unknown limit", err: errors.New("no limit"), parallel: 2000, want: 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t, ".", nil)
			c.st.OpenFileLimit = func() (uint64, error) { return tc.limit, tc.err }
			got := fitParallel(c.st, tc.parallel, connsPerCase(tc.embedded, tc.messaging), tc.receiver)
			if got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			msg := c.stderr.String()
			if (got == tc.parallel) != (msg == "") || !strings.Contains(msg, tc.says) || strings.Count(msg, "\n") > 1 {
				t.Errorf("stderr %q", msg)
			}
		})
	}
}

// A run asked for more parallel scenarios than the open-file limit allows
// runs them all, fewer at a time, and says so once.
func TestRunLowersParallelToTheOpenFileLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := "agent: restaurant\nscenarios:\n  - {name: a, turns: [{say: hi}]}\n  - {name: b, turns: [{say: hi}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, dir, nil, "run", "--parallel", "2000", "s.yaml")
	c.st.OpenFileLimit = func() (uint64, error) { return 1024, nil }
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	if n := strings.Count(c.stderr.String(), "lowered to"); n != 1 {
		t.Errorf("said %d times:\n%s", n, c.stderr)
	}
}

// A comparison runs its sides at once, each at --parallel: a scenario
// holds the connections of both, so --parallel is lowered to what both
// sides' scenarios fit in, where each side alone would have fitted.
func TestCompareLowersParallelToTheOpenFileLimit(t *testing.T) {
	t.Parallel()
	c := compareCLI(t, repoRoot, map[string]string{"AGENTTEST_PARALLEL": "200"}, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live")
	c.st.OpenFileLimit = func() (uint64, error) { return 1024, nil }
	c.expect(t, exitFailed, "--parallel 200 lowered to 120: the open-file limit is 1024 (ulimit -n) and each scenario may hold 8 connections")
	if n := strings.Count(c.stderr.String(), "lowered to"); n != 1 {
		t.Errorf("said %d times:\n%s", n, c.stderr)
	}
}
