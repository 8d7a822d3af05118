package interp

import "testing"

// FuzzInterpolate checks that expansion never panics and agrees with
// References on which names are used.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{"${a} $${b} ${env:C}", "${", "$$", "${a", "x${}y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		used := map[string]bool{}
		_, err := Interpolate(s, func(n string) (string, bool) { used[n] = true; return "v", true },
			func(string) (string, bool) { return "e", true })
		if err != nil {
			return
		}
		for _, n := range References(s) {
			if !used[n] {
				t.Fatalf("References(%q) lists %q, which Interpolate did not look up", s, n)
			}
		}
	})
}
