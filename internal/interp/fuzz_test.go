package interp

import (
	"errors"
	"slices"
	"strings"
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
		var se *SyntaxError
		if scanErr != nil && (!errors.As(scanErr, &se) || !strings.HasPrefix(s[se.Off:], "${")) {
			t.Fatalf("%q: Scan error %v is no SyntaxError at a ${", s, scanErr)
		}
		// Off is where Scan found each reference: its ${, then its body.
		names := make([]Ref, len(refs))
		for i, r := range refs {
			body := r.Name
			if r.Env {
				body = "env:" + body
			}
			if !strings.HasPrefix(s[r.Off:], "${"+body+"}") {
				t.Fatalf("%q: reference %+v is not at its offset", s, r)
			}
			names[i] = Ref{Name: r.Name, Env: r.Env}
		}
		if err == nil && !slices.Equal(looked, names) {
			t.Fatalf("%q: Interpolate looked up %v, Scan lists %v", s, looked, refs)
		}
	})
}
