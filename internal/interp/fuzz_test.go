package interp

import (
	"slices"
	"testing"
)

// FuzzInterpolate checks that expansion never panics and agrees with Scan
// (which the loaders use to check references before a run): the same texts
// are malformed, and the names Interpolate looks up, in order, are the
// references Scan lists.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"${a} $${b} ${env:C}", "${", "$$", "${a", "x${}y", "${env:}", "$${${a}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var looked []Ref
		_, err := Interpolate(s,
			func(n string) (string, bool) { looked = append(looked, Ref{Name: n}); return "v", true },
			func(n string) (string, bool) { looked = append(looked, Ref{Name: n, Env: true}); return "e", true })
		refs, scanErr := Scan(s)
		if (err == nil) != (scanErr == nil) {
			t.Fatalf("%q: Interpolate error %v, Scan error %v", s, err, scanErr)
		}
		if err == nil && !slices.Equal(looked, refs) {
			t.Fatalf("%q: Interpolate looked up %v, Scan lists %v", s, looked, refs)
		}
	})
}
