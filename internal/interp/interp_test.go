package interp

import (
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
}

func TestReferences(t *testing.T) {
	testCases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"${a} ${b} ${a}", []string{"a", "b"}},
		{"${env:X} ${c}", []string{"c"}},
		{"$${a} ${b}", []string{"b"}},
		{"${a} ${bad", []string{"a"}},
	}
	for _, tc := range testCases {
		if got := References(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("References(%q) = %q, want %q", tc.in, got, tc.want)
		}
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
	} {
		if _, err := ResolveVars(tc.vars, getenv); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ResolveVars(%v) error = %v, want %q", tc.vars, err, tc.err)
		}
	}
}
