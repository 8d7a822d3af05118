package scenario

import (
	"strings"
	"testing"
)

func TestTagExpr(t *testing.T) {
	t.Parallel()
	type testCase struct {
		expr  string
		tags  []string
		match bool
	}
	run := func(t *testing.T, tc testCase) {
		e, err := ParseTagExpr(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Match(tc.tags); got != tc.match {
			t.Errorf("%q.Match(%q) = %v, want %v", tc.expr, tc.tags, got, tc.match)
		}
	}
	testCases := []testCase{
		{"", nil, true},
		{"  ", []string{"a"}, true},
		{"@smoke", []string{"smoke"}, true},
		{"@smoke", []string{"@smoke"}, true},
		{"smoke", []string{"smoke"}, true},
		{"@smoke", []string{"slow"}, false},
		{"@smoke", []string{"Smoke"}, false},
		{"@smoke && ~@slow", []string{"smoke"}, true},
		{"@smoke && ~@slow", []string{"smoke", "slow"}, false},
		{"@a,@b", []string{"b"}, true},
		{"@a,@b", []string{"c"}, false},
		{"@a || @b", []string{"a"}, true},
		{"@a or @b", []string{"c"}, false},
		{"@a and not @b", []string{"a"}, true},
		{"@a AND NOT @b", []string{"a", "b"}, false},
		{"!@a", nil, true},
		{"not not @a", []string{"a"}, true},
		// godog: "," binds tighter than "&&".
		{"@a,@b && @c", []string{"b", "c"}, true},
		{"@a,@b && @c", []string{"a"}, false},
		// "&&" binds tighter than "||".
		{"@a || @b && @c", []string{"a"}, true},
		{"@a || @b && @c", []string{"b"}, false},
		{"(@a || @b) && @c", []string{"a"}, false},
		{"(@a || @b) && @c", []string{"a", "c"}, true},
		{"~(@a,@b)", []string{"c"}, true},
		{"@and", []string{"and"}, true},
		{"@wip-1.2", []string{"wip-1.2"}, true},
		// Tabs and line breaks separate as spaces do: an expression
		// from a YAML block or a CRLF file.
		{"@a\t&&\t@b", []string{"a", "b"}, true},
		{"@a\n||\n@b", []string{"b"}, true},
		{"@a\r\n&& ~@b\r\n", []string{"a", "b"}, false},
	}
	for _, tc := range testCases {
		t.Run(tc.expr, func(t *testing.T) { run(t, tc) })
	}
}

func TestTagExprErrors(t *testing.T) {
	t.Parallel()
	testCases := []struct{ expr, want string }{
		{"@a &&", `expected a tag, "(" or "not", found the end`},
		{"&& @a", `found "&&" at column 1`},
		{"@a & @b", `single '&' at column 4: write &&`},
		{"@a | @b", `single '|' at column 4: write ||`},
		{"(@a", `expected ")" to close "(" at column 1`},
		{"@a)", `unexpected ")" at column 3`},
		{"@a @b", `missing operator before "@b" at column 4`},
		{"@", "empty tag at column 1"},
		{"@a,", "found the end"},
		{"()", `found ")" at column 2`},
		{strings.Repeat("(", 200) + "@a" + strings.Repeat(")", 200), "nested more than"},
	}
	for _, tc := range testCases {
		_, err := ParseTagExpr(tc.expr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTagExpr(%q) error = %v, want one containing %q", tc.expr, err, tc.want)
		}
	}
}

func TestTagExprString(t *testing.T) {
	t.Parallel()
	e, err := ParseTagExpr("@a && ~@b")
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != "@a && ~@b" {
		t.Errorf("String() = %q", e.String())
	}
	var zero TagExpr
	if !zero.Match([]string{"x"}) {
		t.Error("the zero TagExpr must match everything")
	}
}

// TestMisspeltSkip: @skip written wrong is warned about (the scenario it
// should hold back runs), words teams tag with are not.
func TestMisspeltSkip(t *testing.T) {
	t.Parallel()
	for tag, want := range map[string]bool{
		"skip": false, "Skip": true, "SKIP": true, "skp": true, "sikp": true, "skipp": true, "skips": true,
		"ship": false, "slip": false, "smoke": false, "skipped-on-live": false, "": false,
	} {
		if got := misspeltSkip(tag); got != want {
			t.Errorf("misspeltSkip(%q) = %v, want %v", tag, got, want)
		}
	}
}
