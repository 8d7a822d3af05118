// Package golden compares what a test produced with a golden file, for the
// tests of every package that keeps expected output under testdata/. Run
// the tests with -update to rewrite the files, then review the diff:
//
//	golden.Check(t, "testdata/full.junit.xml", out.Bytes())
//	go test ./internal/report -update
//
// It is imported by tests only: the -update flag it defines belongs to the
// test binary.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ (then review the diff)")

// Check compares got with the file at path; under -update it rewrites the
// file instead.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test produced (run go test -update and review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
