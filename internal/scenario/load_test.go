package scenario

import (
	"fmt"
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

// TestLintVarsExpansion holds lint to what expanding a scenario's vars
// would error every run with: a var that refers to itself, and vars that
// repeat each other past interp.MaxVarBytes (a 557-byte suite that took
// 1.3 GB to run linted clean). Vars that use each other, the
// environment and examples columns within the bound load.
func TestLintVarsExpansion(t *testing.T) {
	t.Parallel()
	var chain strings.Builder
	chain.WriteString("  v0: \"" + strings.Repeat("x", 100) + "\"\n")
	for i := 1; i < 30; i++ {
		p := fmt.Sprintf("${v%d}", i-1)
		fmt.Fprintf(&chain, "  v%d: \"%s%s%s%s\"\n", i, p, p, p, p)
	}
	const scenario = "scenarios:\n  - name: a\n    vars: {own: \"${c}-${env:HOME}\"}\n    examples: [{c: \"${shared}\"}, {c: \"2\"}]\n" +
		"    turns:\n      - say: \"${top} ${own} ${c}\"\n        expect: {response: {contains: x}}\n"
	for _, tc := range []struct {
		name, vars, want string
	}{
		{"within the bound", "  shared: \"s\"\n  top: \"${shared}${own}${env:HOME}\"\n", ""},
		{"cycle", "  shared: \"s\"\n  top: \"${mid}\"\n  mid: \"${top}\"\n",
			"s.yaml:6:3: var mid: var top: var mid refers to itself through ${...}"},
		{"cycle through an examples column", "  shared: \"${top}\"\n  top: \"${own}\"\n",
			"s.yaml:9:17: var c: var shared: var top: var own: var c refers to itself through ${...}"},
		{"exponential", "  shared: \"s\"\n  top: t\n" + chain.String(),
			"s.yaml:16:3: var v10: var v9: var v8: var v7: the vars expand to more than 1048576 bytes (at ${v6})"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "suite: s\nagent: clinic\nvars:\n" + tc.vars + scenario
			s, ds := LoadFile("s.yaml", []byte(src))
			got := renderDiags(ds)
			if tc.want == "" {
				if s == nil {
					t.Fatalf("not loaded:\n%s", got)
				}
				return
			}
			if s != nil || !strings.Contains(got, tc.want) {
				t.Errorf("diagnostics:\n%s\nwant %q", got, tc.want)
			}
		})
	}
}
