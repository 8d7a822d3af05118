package interp

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	vars := map[string]string{"party": "4", "ref": "AB12CD", "empty": "", "dollar": "${party}"}
	env := map[string]string{"TOKEN": "s3cret"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	getenv := func(n string) (string, bool) { v, ok := env[n]; return v, ok }
	type testCase struct {
		name, in, want, err string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := Interpolate(tc.in, lookup, getenv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error = %v, want one containing %q", err, tc.err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	testCases := []testCase{
		{name: "plain", in: "no refs", want: "no refs"},
		{name: "var", in: "${party} people", want: "4 people"},
		{name: "several", in: "${party}-${ref}", want: "4-AB12CD"},
		{name: "empty value", in: "[${empty}]", want: "[]"},
		{name: "env", in: "Bearer ${env:TOKEN}", want: "Bearer s3cret"},
		{name: "escape", in: "$${party}", want: "${party}"},
		{name: "escape then ref", in: "$${a} ${party}", want: "${a} 4"},
		{name: "lone dollar", in: "costs $5 or $$", want: "costs $5 or $$"},
		{name: "values are not expanded again", in: "${dollar}", want: "${party}"},
		{name: "unknown var", in: "${nope}", err: "unknown variable ${nope}"},
		{name: "unset env", in: "${env:MISSING}", err: "environment variable MISSING is not set"},
		{name: "unterminated", in: "a ${party", err: "unterminated ${"},
		{name: "empty name", in: "${}", err: "invalid variable name"},
		{name: "bad name", in: "${a b}", err: "invalid variable name in ${a b}"},
		{name: "bad env name", in: "${env:A-B}", err: "invalid environment variable name"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestInterpolateNilFuncs(t *testing.T) {
	if _, err := Interpolate("${env:HOME}", nil, nil); err == nil {
		t.Error("nil getenv must treat variables as unset")
	}
	if _, err := Interpolate("${a}", nil, nil); err == nil {
		t.Error("nil lookup must treat names as unknown")
	}
	// A nil getenv must not fall back to lookup, which knows vars, not
	// the environment.
	vars := func(string) (string, bool) { return "var", true }
	if got, err := Interpolate("${env:HOME}", vars, nil); err == nil {
		t.Errorf("nil getenv: ${env:HOME} expanded to %q through lookup", got)
	}
}

// TestScanNames pins which names a reference accepts, at the edges of each
// range: a name is a letter or '_' then letters, digits, '_' or '-'; an
// environment name is a letter or '_' then letters, digits or '_'. The
// characters next to each range (` { @ [ / :) are refused.
func TestScanNames(t *testing.T) {
	testCases := []struct {
		in   string
		want Ref
		err  string
	}{
		{in: "${a}", want: Ref{Name: "a"}},
		{in: "${z}", want: Ref{Name: "z"}},
		{in: "${A}", want: Ref{Name: "A"}},
		{in: "${Z}", want: Ref{Name: "Z"}},
		{in: "${_}", want: Ref{Name: "_"}},
		{in: "${x0}", want: Ref{Name: "x0"}},
		{in: "${x9}", want: Ref{Name: "x9"}},
		{in: "${x-y}", want: Ref{Name: "x-y"}},
		{in: "${0x}", err: "invalid variable name in ${0x}"},
		{in: "${9}", err: "invalid variable name in ${9}"},
		{in: "${-x}", err: "invalid variable name in ${-x}"},
		{in: "${`}", err: "invalid variable name in ${`}"},
		{in: "${x{}", err: "invalid variable name in ${x{}"},
		{in: "${@}", err: "invalid variable name in ${@}"},
		{in: "${[}", err: "invalid variable name in ${[}"},
		{in: "${x/}", err: "invalid variable name in ${x/}"},
		{in: "${x:}", err: "invalid variable name in ${x:}"},
		{in: "${env:a}", want: Ref{Name: "a", Env: true}},
		{in: "${env:z}", want: Ref{Name: "z", Env: true}},
		{in: "${env:A}", want: Ref{Name: "A", Env: true}},
		{in: "${env:Z}", want: Ref{Name: "Z", Env: true}},
		{in: "${env:_}", want: Ref{Name: "_", Env: true}},
		{in: "${env:X0}", want: Ref{Name: "X0", Env: true}},
		{in: "${env:X9}", want: Ref{Name: "X9", Env: true}},
		{in: "${env:0X}", err: "invalid environment variable name in ${env:0X}"},
		{in: "${env:9}", err: "invalid environment variable name in ${env:9}"},
		{in: "${env:`}", err: "invalid environment variable name in ${env:`}"},
		{in: "${env:X{}", err: "invalid environment variable name in ${env:X{}"},
		{in: "${env:@}", err: "invalid environment variable name in ${env:@}"},
		{in: "${env:[}", err: "invalid environment variable name in ${env:[}"},
		{in: "${env:X/}", err: "invalid environment variable name in ${env:X/}"},
		{in: "${env:X:}", err: "invalid environment variable name in ${env:X:}"},
		{in: "${env:}", err: "invalid environment variable name in ${env:}"},
		{in: "${ a }", err: "invalid variable name in ${ a }"},
	}
	for _, tc := range testCases {
		t.Run(tc.in, func(t *testing.T) {
			refs, err := Scan(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Scan(%q) = %v, %v; want an error containing %q", tc.in, refs, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Scan(%q): %v", tc.in, err)
			}
			if want := []Ref{tc.want}; !reflect.DeepEqual(refs, want) {
				t.Errorf("Scan(%q) = %+v, want %+v", tc.in, refs, want)
			}
		})
	}
}

func TestResolveVars(t *testing.T) {
	getenv := func(n string) (string, bool) { return "E", n == "X" }
	got, err := ResolveVars(map[string]string{
		"a": "${b}-${c}", "b": "${c}!", "c": "${env:X}", "lit": "$${a}",
	}, getenv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "E!-E", "b": "E!", "c": "E", "lit": "${a}"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, tc := range []struct {
		vars map[string]string
		err  string
	}{
		{map[string]string{"a": "${b}", "b": "${a}"}, "refers to itself"},
		{map[string]string{"a": "${nope}"}, "var a: unknown variable ${nope}"},
		{map[string]string{"a": "${env:Y}"}, "environment variable Y is not set"},
		// Both fail; the first by name is reported, whatever the map order.
		{map[string]string{"b": "${y}", "a": "${x}"}, "var a: unknown variable ${x}"},
	} {
		if _, err := ResolveVars(tc.vars, getenv); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ResolveVars(%v) error = %v, want %q", tc.vars, err, tc.err)
		}
	}
	// lint finds the cycle through the *VarError (errors.Is).
	if _, err := ResolveVars(map[string]string{"a": "${a}"}, getenv); !errors.Is(err, ErrVarCycle) {
		t.Errorf("ResolveVars of a cycle: %v is not ErrVarCycle", err)
	}
}

// TestResolveVarsBound holds the bytes references add to the vars, all
// vars together, to MaxVarBytes: eleven vars of four references each,
// over 100 bytes, took 1.3 GB, and twenty-nine would never end. Up to the
// bound, vars expand.
func TestResolveVarsBound(t *testing.T) {
	getenv := func(n string) (string, bool) {
		switch n {
		case "HALF":
			return strings.Repeat("h", MaxVarBytes/2), true
		case "ONE":
			return "1", true
		}
		return "", false
	}
	chain := map[string]string{"v0": strings.Repeat("x", 100)}
	for i := 1; i < 30; i++ {
		p := fmt.Sprintf("${v%d}", i-1)
		chain[fmt.Sprintf("v%d", i)] = p + p + p + p
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		err  bool
	}{
		{"at the bound", map[string]string{"a": "${env:HALF}", "b": "${env:HALF}"}, false},
		{"at the bound through a var", map[string]string{"a": "${env:HALF}", "b": "${a}"}, false},
		{"one byte more", map[string]string{"a": "${env:HALF}", "b": "${env:HALF}", "c": "${env:ONE}"}, true},
		{"one byte more through a var", map[string]string{"a": "${env:HALF}", "b": "${a}", "c": "${env:ONE}"}, true},
		{"exponential", chain, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveVars(tc.vars, getenv)
			if !tc.err {
				if err != nil || len(got) != len(tc.vars) {
					t.Fatalf("ResolveVars: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "the vars expand to more than 1048576 bytes") {
				t.Fatalf("ResolveVars error = %.300v", err)
			}
			if !errors.Is(err, ErrVarsTooLarge) {
				t.Errorf("ResolveVars error %.300v is not ErrVarsTooLarge", err)
			}
		})
	}
}

// TestInterpolateBound holds the bytes references add to one text to
// MaxExpansion, vars and the environment alike: a var of 1 MiB written
// 3,000 times in a say: of 15 KB made a string of 1.2 GB and the run ran
// out of memory. Up to the bound, the text expands; literal text does not
// count.
func TestInterpolateBound(t *testing.T) {
	quarter := strings.Repeat("q", MaxExpansion/4)
	lookup := func(n string) (string, bool) { return quarter, n == "q" }
	getenv := func(n string) (string, bool) { return "1", n == "ONE" }
	long := strings.Repeat("literal ", MaxExpansion/4)
	for _, tc := range []struct {
		name, s string
		err     string
	}{
		{"at the bound", long + strings.Repeat("${q}", 4), ""},
		{"one byte more", "${q}${q}${q}${q}${env:ONE}", "the text expands to more than 4194304 bytes (at ${env:ONE})"},
		{"a thousand times", strings.Repeat("${q}", 1000), "the text expands to more than 4194304 bytes (at ${q})"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Interpolate(tc.s, lookup, getenv)
			if tc.err == "" {
				if err != nil || len(got) != len(long)+MaxExpansion {
					t.Fatalf("Interpolate: %d bytes, %v", len(got), err)
				}
				return
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("Interpolate error = %.300v, want %q", err, tc.err)
			}
		})
	}
}

// TestOffset: a loader reports a malformed reference at its ${, which
// Offset reads from Scan's error; an error of another kind (a reference
// Interpolate cannot resolve) names no offset.
func TestOffset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"hello ${name", 6},
		{"ok ${a} then ${1bad}", 13},
		{"${}", 0},
	} {
		_, err := Scan(tc.in)
		if err == nil {
			t.Fatalf("Scan(%q) = nil error", tc.in)
		}
		if got := Offset(err); got != tc.want {
			t.Errorf("Offset(Scan(%q)) = %d, want %d", tc.in, got, tc.want)
		}
	}
	_, err := Interpolate("x ${missing}", func(string) (string, bool) { return "", false }, nil)
	if err == nil || Offset(err) != 0 {
		t.Errorf("Offset of an unresolved reference = %d (%v), want 0", Offset(err), err)
	}
	if Offset(errors.New("other")) != 0 || Offset(nil) != 0 {
		t.Error("Offset of an error that is no SyntaxError is not 0")
	}
}
