package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// manyProblems is a suite of n scenarios with two problems each: an unknown
// key of the scenario and one of its turn.
func manyProblems(n int) []byte {
	var b bytes.Buffer
	b.WriteString("suite: big\nscenarios:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: s%d\n    agnt: x\n    turns: [{say: hi, expct: {response: hi}}]\n", i)
	}
	return b.Bytes()
}

// BenchmarkLintManyProblems lints a file with 40,000 problems: loading and
// printing must stay linear in the number of problems (positions from a
// line index, not rescans), and the output is capped per file.
//
//	go test -run '^$' -bench LintManyProblems -benchtime 5x ./cmd/agenttest
//
// The target is under 2 s per lint (BENCHMARKS.md).
func BenchmarkLintManyProblems(b *testing.B) {
	fsys := fstest.MapFS{"big.yaml": {Data: manyProblems(20_000)}}
	for b.Loop() {
		var out bytes.Buffer
		st := &State{
			Args: []string{"lint", "big.yaml"}, Env: map[string]string{}, Stdin: strings.NewReader(""),
			Stdout: &out, Stderr: io.Discard, Dir: "/", FS: fsys, Now: time.Now,
		}
		err := run(context.Background(), st)
		if code := exitCode(err, io.Discard); code != exitUsage {
			b.Fatalf("exit %d", code)
		}
		if !strings.Contains(out.String(), "…and 39950 more in big.yaml\n40000 errors\n") {
			b.Fatalf("output does not end with the capped list:\n%s", out.String()[max(0, out.Len()-300):])
		}
	}
}
