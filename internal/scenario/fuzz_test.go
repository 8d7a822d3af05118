package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadFile checks that no input makes the loader panic, and that its
// answer is coherent: a suite exactly when there is no error, and every
// diagnostic placed in the file.
func FuzzLoadFile(f *testing.F) {
	for _, dir := range []string{"testdata/valid", "testdata/invalid"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, file := range files {
			if src, err := os.ReadFile(file); err == nil {
				f.Add(src)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, ds := LoadFile("f.yaml", src)
		if (s == nil) != ds.HasErrors() {
			t.Fatalf("suite %v with diagnostics:\n%s", s != nil, renderDiags(ds))
		}
		if d := recovered(ds); d != nil {
			t.Fatalf("loader panicked: %s", d.Message)
		}
		for _, d := range ds {
			if d.Pos.File != "f.yaml" || d.Pos.Line < 1 || d.Message == "" {
				t.Fatalf("diagnostic without file:line or message: %#v", d)
			}
		}
		loadYAML("found.yaml", src, false)
	})
}

// FuzzTagExpr checks that parsing never panics and that a parsed
// expression can be matched.
func FuzzTagExpr(f *testing.F) {
	for _, s := range []string{"@a && ~@b", "@a,@b", "(@a || not @b) and @c", "@a &", "((("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseTagExpr(s)
		if err == nil {
			e.Match([]string{"a", "b"})
		}
	})
}
