package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
)

// renderDiags prints diagnostics the way lint does, with the source line.
func renderDiags(ds diag.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteString("\n")
		if d.Source != "" {
			b.WriteString("    | ")
			b.WriteString(d.Source)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func loadTestdata(t *testing.T, path string) (*Suite, diag.Diagnostics) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return LoadFile(filepath.ToSlash(path), src)
}

// TestLoadFileValid decodes every file under testdata/valid and compares
// its warnings and its decoded model with the golden file next to it.
func TestLoadFileValid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no files under testdata/valid")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, ds := loadTestdata(t, f)
			if ds.HasErrors() {
				t.Fatalf("unexpected errors:\n%s", renderDiags(ds))
			}
			if s == nil {
				t.Fatal("nil suite without errors")
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(renderDiags(ds)+"---"+dump(s)))
		})
	}
}

// TestLoadFileInvalid loads every file under testdata/invalid: each must
// fail, with all of its problems, positions and source lines as in the
// golden file.
func TestLoadFileInvalid(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no files under testdata/invalid")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, ds := loadTestdata(t, f)
			if !ds.HasErrors() {
				t.Fatalf("expected errors, got none")
			}
			if s != nil {
				t.Error("suite returned despite errors")
			}
			for _, d := range ds {
				if d.Pos.File != filepath.ToSlash(f) || d.Pos.Line == 0 {
					t.Errorf("diagnostic without file:line: %v", d)
				}
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".golden", []byte(renderDiags(ds)))
		})
	}
}
