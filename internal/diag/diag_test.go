package diag

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPosString: a position drops the parts it does not know, and a
// column is printed from 1 on; line and column are never swapped.
func TestPosString(t *testing.T) {
	t.Parallel()
	for pos, want := range map[Pos]string{
		{}:                                "",
		{File: "a.yaml"}:                  "a.yaml",
		{File: "a.yaml", Col: 4}:          "a.yaml",
		{File: "a.yaml", Line: 3}:         "a.yaml:3",
		{File: "a.yaml", Line: 3, Col: 1}: "a.yaml:3:1",
		{File: "a.yaml", Line: 3, Col: 7}: "a.yaml:3:7",
		// A line without a file still says where: stdin, a flag.
		{Line: 2, Col: 5}: ":2:5",
	} {
		if got := pos.String(); got != want {
			t.Errorf("%#v.String() = %q, want %q", pos, got, want)
		}
	}
}

func TestPosIsZero(t *testing.T) {
	t.Parallel()
	for pos, want := range map[Pos]bool{
		{}:                 true,
		{File: "a.yaml"}:   false,
		{Line: 1}:          false,
		{Col: 1}:           false,
		{"a.yaml", 1, 1}:   false,
		{File: "", Col: 0}: true,
	} {
		if got := pos.IsZero(); got != want {
			t.Errorf("%#v.IsZero() = %v, want %v", pos, got, want)
		}
	}
}

// TestPosBefore: file first, then line, then column; a position is not
// before itself, so sorting keeps equal positions in their order.
func TestPosBefore(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p, q Pos
		want bool
	}{
		{Pos{"a", 9, 9}, Pos{"b", 1, 1}, true},
		{Pos{"b", 1, 1}, Pos{"a", 9, 9}, false},
		{Pos{"a", 1, 9}, Pos{"a", 2, 1}, true},
		{Pos{"a", 2, 1}, Pos{"a", 1, 9}, false},
		{Pos{"a", 2, 1}, Pos{"a", 2, 3}, true},
		{Pos{"a", 2, 3}, Pos{"a", 2, 1}, false},
		{Pos{"a", 2, 3}, Pos{"a", 2, 3}, false},
		{Pos{"a", 2, 0}, Pos{"a", 2, 0}, false},
	} {
		if got := tc.p.Before(tc.q); got != tc.want {
			t.Errorf("%v.Before(%v) = %v, want %v", tc.p, tc.q, got, tc.want)
		}
	}
}

// TestDiagnosticString: "pos: [warning: ]message[ (hint)]", each part
// only when it is there.
func TestDiagnosticString(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		d    Diagnostic
		want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	at := Pos{File: "s.yaml", Line: 4, Col: 3}
	for _, tc := range []testCase{
		{"error", Diagnostic{Pos: at, Message: "unknown key"}, "s.yaml:4:3: unknown key"},
		{"warning", Diagnostic{Severity: Warning, Pos: at, Message: "unused"}, "s.yaml:4:3: warning: unused"},
		{"hint", Diagnostic{Pos: at, Message: "unknown key", Hint: `did you mean "env"?`}, `s.yaml:4:3: unknown key (did you mean "env"?)`},
		{"no position", Diagnostic{Message: "no suites"}, "no suites"},
		{"warning, no position", Diagnostic{Severity: Warning, Message: "no suites"}, "warning: no suites"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	for s, want := range map[Severity]string{Error: "error", Warning: "warning", Severity(7): "error"} {
		if got := s.String(); got != want {
			t.Errorf("Severity(%d).String() = %q, want %q", s, got, want)
		}
	}
}

// TestDiagnostics: appends keep the order found and the severity asked
// for; a list is an error only when one of them is an error, whichever
// place it holds; Error prints one per line; the list is found again
// through wrapping.
func TestDiagnostics(t *testing.T) {
	t.Parallel()
	a, b := Pos{File: "a.yaml", Line: 1, Col: 1}, Pos{File: "a.yaml", Line: 2, Col: 1}
	var ds Diagnostics
	ds = ds.Warnf(a, "first %d", 1)
	if ds.HasErrors() || ds.Err() != nil {
		t.Errorf("a warning alone: HasErrors %v, Err %v", ds.HasErrors(), ds.Err())
	}
	ds = ds.Errorf(b, "second %s", "x")
	ds = ds.Append(Diagnostic{Severity: Warning, Pos: a, Message: "third"})
	want := Diagnostics{
		{Severity: Warning, Pos: a, Message: "first 1"},
		{Severity: Error, Pos: b, Message: "second x"},
		{Severity: Warning, Pos: a, Message: "third"},
	}
	if !slices.Equal(ds, want) {
		t.Fatalf("diagnostics = %#v, want %#v", ds, want)
	}
	if !ds.HasErrors() {
		t.Error("HasErrors = false with an error after a warning")
	}
	err := ds.Err()
	if err == nil {
		t.Fatal("Err = nil with an error")
	}
	if got, want := err.Error(), "a.yaml:1:1: warning: first 1\na.yaml:2:1: second x\na.yaml:1:1: warning: third"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, e := range []error{err, fmt.Errorf("load suite: %w", err)} {
		got, ok := AsDiagnostics(e)
		if !ok || !slices.Equal(got, ds) {
			t.Errorf("AsDiagnostics(%v) = %v, %v", e, got, ok)
		}
	}
	if got, ok := AsDiagnostics(fmt.Errorf("plain")); ok || got != nil {
		t.Errorf("AsDiagnostics of a plain error = %v, %v", got, ok)
	}
}

// TestDiagnosticsSort: by file, line and column, and problems at one
// place keep the order they were found in, however many there are (a
// file of one repeated mistake).
func TestDiagnosticsSort(t *testing.T) {
	t.Parallel()
	var ds Diagnostics
	for i := range 40 {
		// Five places, visited backwards and repeatedly.
		ds = ds.Errorf(Pos{File: "f.yaml", Line: 5 - i%5, Col: 1}, "%d", i)
	}
	ds = ds.Errorf(Pos{File: "e.yaml", Line: 9, Col: 9}, "first file")
	ds = ds.Errorf(Pos{File: "f.yaml", Line: 1}, "no column")
	ds.Sort()
	if ds[0].Message != "first file" || ds[1].Message != "no column" {
		t.Fatalf("sorted head = %v, %v", ds[0], ds[1])
	}
	for i := 2; i < len(ds); i++ {
		p, q := ds[i-1], ds[i]
		var pi, qi int
		fmt.Sscan(p.Message, &pi)
		fmt.Sscan(q.Message, &qi)
		if q.Pos.Before(p.Pos) || (p.Pos == q.Pos && pi > qi) {
			t.Fatalf("sorted: %v then %v", p, q)
		}
	}
}

// TestExcerpt: a source line longer than ExcerptWidth runes is shown as
// the part around the column at fault, the caret still under it; a short
// line is shown whole.
func TestExcerpt(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 200) + "X" + strings.Repeat("b", 5000)
	for _, tc := range []struct {
		name, line string
		col        int
		want       string
		wantCol    int
	}{
		{"short", "key: value", 6, "key: value", 6},
		{"exactly the width", strings.Repeat("x", ExcerptWidth), 100, strings.Repeat("x", ExcerptWidth), 100},
		{"at the start", long, 1, long[:ExcerptWidth] + "…", 1},
		{"in the middle", long, 201, "…" + long[160:160+ExcerptWidth] + "…", 42},
		{"at the end", strings.Repeat("a", 300), 300, "…" + strings.Repeat("a", ExcerptWidth), 121},
		{"past the end", strings.Repeat("a", 300), 302, "…" + strings.Repeat("a", ExcerptWidth), 123},
		{"runes", strings.Repeat("é", 300), 150, "…" + strings.Repeat("é", ExcerptWidth) + "…", 42},
		{"no column", long, 0, long[:ExcerptWidth] + "…", 0},
		{"an excerpt's excerpt", "…" + long[160:160+ExcerptWidth] + "…", 42, "…" + long[160:160+ExcerptWidth] + "…", 42},
	} {
		got, col := Excerpt(tc.line, tc.col)
		if got != tc.want || col != tc.wantCol {
			t.Errorf("%s: Excerpt(col %d) = %q, col %d; want %q, col %d", tc.name, tc.col, got, col, tc.want, tc.wantCol)
		}
		if tc.col > 0 && tc.col <= len([]rune(tc.line)) && []rune(got)[col-1] != []rune(tc.line)[tc.col-1] {
			t.Errorf("%s: the caret is under %q, not under the column's %q", tc.name, []rune(got)[col-1], []rune(tc.line)[tc.col-1])
		}
	}
}

func TestMaskLine(t *testing.T) {
	t.Parallel()
	mask := func(s string) string { return strings.ReplaceAll(s, "SECRETKEY", "[M]") }
	for _, tc := range []struct {
		name, line string
		col        int
		want       string
		wantCol    int
	}{
		{"nothing to mask", "say: hi", 6, "say: hi", 6},
		{"the key after the column", "bad: 1, say: SECRETKEY", 1, "bad: 1, say: [M]", 1},
		{"the key before the column", "say: SECRETKEY, bad: 1", 17, "say: [M], bad: 1", 11},
		{"two keys before", "SECRETKEY SECRETKEY bad", 21, "[M] [M] bad", 9},
		{"the column in the key", "say: SECRETKEY, bad: 1", 9, "say: [M], bad: 1", 6},
		{"the column at the key", "say: SECRETKEY", 6, "say: [M]", 6},
		{"past the end", "say: SECRETKEY", 17, "say: [M]", 11},
		{"runes before", "é: SECRETKEY ü bad", 16, "é: [M] ü bad", 10},
		{"no column", "say: SECRETKEY", 0, "say: [M]", 0},
	} {
		got, col := maskLine(tc.line, tc.col, mask)
		if got != tc.want || col != tc.wantCol {
			t.Errorf("%s: maskLine(%q, %d) = %q, %d; want %q, %d", tc.name, tc.line, tc.col, got, col, tc.want, tc.wantCol)
		}
	}
}

// TestMaskedExcerpt: at every place a secret can take on a long line,
// and every column around it, the excerpt of the masked window is that of
// the line masked whole, and no part of the secret shows: the window is
// widened until the secrets its edges cut lie outside what is shown.
func TestMaskedExcerpt(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-0123456789abcdef"
	mask := func(s string) string { return strings.ReplaceAll(s, secret, "[M]") }
	for _, filler := range []string{"x", "é"} {
		// Secrets on the line, and the filler between them: packed ones
		// shrink a window to less than an excerpt when masked.
		for _, secrets := range []struct{ n, gap int }{{0, 0}, {1, 0}, {2, 50}, {60, 0}, {60, 2}} {
			for at := 0; at < 1600; at += 13 {
				n := secrets.n
				line := strings.Repeat(filler, at) + strings.Repeat(secret+strings.Repeat(filler, secrets.gap), n) + strings.Repeat(filler, 1600-at)
				runes := utf8.RuneCountInString(line)
				for _, col := range []int{0, 1, 40, 41, 42, 300, 700, 1000, 1400, runes, runes + 3} {
					got, gotCol := MaskedExcerpt(line, col, mask, len(secret))
					want, wantCol := Excerpt(maskLine(line, col, mask))
					if got != want || gotCol != wantCol {
						t.Fatalf("%s×%d, %d secrets at %d, col %d: got %q, %d; want %q, %d", filler, runes, n, at, col, got, gotCol, want, wantCol)
					}
					for i := 0; i+4 <= len(secret); i++ {
						if strings.Contains(got, secret[i:i+4]) {
							t.Fatalf("%d secrets at %d, col %d: %q shows %q", n, at, col, got, secret[i:i+4])
						}
					}
				}
			}
		}
	}
}
