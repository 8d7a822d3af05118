package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
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
		t.Errorf("%s differs from the golden file (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// TestFormats is the format matrix: each fixture rendered by each
// renderer, compared with its golden file.
func TestFormats(t *testing.T) {
	fixtures := map[string]func() *result.Result{
		"full": fixture,
		"empty": func() *result.Result {
			return &result.Result{Started: t0, Target: result.Target{Name: "sim", Embedded: true}}
		},
	}
	formats := map[string]func(*bytes.Buffer, *result.Result) error{
		"human.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{}), r)
			return nil
		},
		"human-verbose.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{Verbose: true}), r)
			return nil
		},
		"human-tty-color.txt": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewHuman(b, HumanOptions{TTY: true, Color: true, Now: stepClock()}), r)
			return nil
		},
		"jsonl": func(b *bytes.Buffer, r *result.Result) error {
			replay(NewJSONLines(b), r)
			return nil
		},
		"json":      func(b *bytes.Buffer, r *result.Result) error { return WriteJSON(b, r) },
		"junit.xml": func(b *bytes.Buffer, r *result.Result) error { return WriteJUnit(b, r) },
	}
	for fname, fx := range fixtures {
		for format, render := range formats {
			t.Run(fname+"/"+format, func(t *testing.T) {
				var b bytes.Buffer
				if err := render(&b, fx()); err != nil {
					t.Fatal(err)
				}
				golden(t, fname+"."+format, b.Bytes())
			})
		}
	}
}
