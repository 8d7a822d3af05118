package yamlerr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFirstFailingLineGivesUp: where no leading part of the file fails
// the way the whole does, the parser's line stands.
func TestFirstFailingLineGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		lines []string
		from  int
	}{
		{"valid file", []string{"a: 1\n", "b: 2\n"}, 1},
		{"line beyond the file", []string{"a: [\n"}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if n := firstFailingLine(tc.lines, tc.from); n != 0 {
				t.Errorf("firstFailingLine = %d, want 0", n)
			}
		})
	}
}

// TestFlowBrackets: brackets open a flow only where a value starts or
// inside a flow, never inside quotes (escapes included), comments or a
// block scalar's text; a closer of the other kind closes nothing, and a
// closer after a flow ended on its line is stray.
func TestFlowBrackets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		// unclosed and stray are the brackets as "ch line:col".
		unclosed, stray []string
	}{
		{"a plain value", "a: see [1\n", nil, nil},
		{"a flow never closed", "a: [b, {c: d\n", []string{"[ 1:4", "{ 1:8"}, nil},
		{"a closer of the other kind", "a: {b: [c}\n", []string{"{ 1:4", "[ 1:8"}, nil},
		{"a flow closed", "a: [b, {c: d}]\n", nil, nil},
		{"a stray closer", "a: [b]]\n", nil, []string{"] 1:7"}},
		{"a closer in a plain value", "a: b]\n", nil, nil},
		{"a # that is no comment", "a: [x#y]\n", nil, nil},
		{"a comment", "a: x # [y\n", nil, nil},
		{"an escaped quote", "a: \"\\\",[x\"\nb: [c\n", []string{"[ 2:4"}, nil},
		{"an apostrophe in a plain value", "a: don't\nb: [c\n", []string{"[ 2:4"}, nil},
		{"a block scalar's text", "a: |\n  [x\n\n  [y\nb: [c\n", []string{"[ 5:4"}, nil},
		{"a key after a block scalar", "a: |\n  x\nb: [c\n", []string{"[ 3:4"}, nil},
		{"a list item's block scalar", "- |\n  [x\n- [c\n", []string{"[ 3:3"}, nil},
		{"a key of an item after its block scalar", "- say: |\n    x\n  next: [c\n", []string{"[ 3:9"}, nil},
		{"a | inside a flow", "a: [b,\n  c: |\n    d]\n", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			unclosed, stray, _, _ := flowBrackets(strings.SplitAfter(tc.src, "\n"))
			if got := brackets(unclosed); !slices.Equal(got, tc.unclosed) {
				t.Errorf("unclosed = %q, want %q", got, tc.unclosed)
			}
			if got := brackets(stray); !slices.Equal(got, tc.stray) {
				t.Errorf("stray = %q, want %q", got, tc.stray)
			}
		})
	}
}

// TestFlowBracketsInValue: a bracket inside a plain value of a flow is
// one, at the value's first column; a flow opened right after a key's
// colon or a list's dash is not.
func TestFlowBracketsInValue(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"a: {m: ^\\d{4}$}\n": "{ 1:8",
		"a: [x, a[b]]\n":     "[ 1:8",
		"a:[b]\n":            "",
		"-[b]\n":             "",
	}
	for src, w := range want {
		_, _, inValue, _ := flowBrackets(strings.SplitAfter(src, "\n"))
		if got := strings.Join(brackets(inValue), " "); got != w {
			t.Errorf("%q: inValue = %q, want %q", src, got, w)
		}
	}
}

func brackets(bs []bracket) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%c %d:%d", b.ch, b.line, b.col))
	}
	return out
}

func TestBlockScalar(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]bool{
		"a: |":        true,
		"a: >-":       true,
		"a: |2+":      true,
		"- |":         true,
		"a: | # c":    true,
		"a: |  # c":   true,
		"a: |x":       false,
		"a: b":        false,
		"a: '|'":      false,
		"a:":          false,
		"  - say: >1": true,
	} {
		if got := blockScalar(line); got != want {
			t.Errorf("blockScalar(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestColumns: the columns the hints point at count characters, not
// bytes, and an indentation of spaces only (a tab has its own hint).
func TestColumns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"indentCol", indentCol("   a: 1"), 4},
		{"indentCol, no indentation", indentCol("a: 1"), 1},
		{"indentCol stops at a tab", indentCol(" \ta: 1"), 2},
		{"aliasCol", aliasCol("a: [*x, *y]", "y"), 9},
		{"aliasCol past a longer name", aliasCol("a: [*yy, *y]", "y"), 10},
		{"aliasCol at the end", aliasCol("a: *y", "y"), 4},
		{"aliasCol after é", aliasCol("é: *y", "y"), 4},
		{"aliasCol of a key", aliasCol("*y: 1", "y"), 1},
		{"aliasCol of no alias", aliasCol("a: *yy", "y"), 0},
		{"reservedStart after a key", reservedStart("a: @b"), 4},
		{"reservedStart in a flow", reservedStart("a: [b, `c`]"), 8},
		{"reservedStart in a plain value", reservedStart("a: b@c"), 0},
		{"reservedStart in quotes", reservedStart(`a: "x, @y"`), 0},
		{"reservedStart after a # that is no comment", reservedStart("a: [b#c, @d]"), 10},
		{"reservedStart in a comment", reservedStart("a: b # @c"), 0},
		{"valueColon", valueColon("say: note: hi"), 6},
		{"valueColon of an item", valueColon("  - say: note: hi"), 10},
		{"valueColon after é", valueColon("é: b: c"), 4},
		{"valueColon of a plain value", valueColon("a: b"), 0},
		{"valueColon of a quoted value", valueColon(`a: "b: c"`), 0},
		{"valueColon of a block scalar", valueColon("a: |"), 0},
		{"valueColon of a quoted key", valueColon(`"a: b": c: d`), 0},
		{"valueColon of no key", valueColon("a"), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

// TestFirstUnprintable: tab, line breaks and printable Unicode are
// allowed; the first other character, or broken UTF-8, is found at its
// line and column (a column per character).
func TestFirstUnprintable(t *testing.T) {
	t.Parallel()
	for src, want := range map[string][2]int{
		"a:\tb\n":           {1, 1},
		"a: b\nc: d\n":      {1, 1},
		"ab\U00010000cd\n":  {1, 1},
		"a: \u00a0\ufffd\n": {1, 1},
		"a: \x7f":           {1, 4},
		"a\n\x01":           {2, 1},
		"é\x01":             {1, 2},
		"a: \xff":           {1, 4},
		"a: \x85\x01":       {1, 4},
	} {
		if l, c := firstUnprintable([]byte(src)); [2]int{l, c} != want {
			t.Errorf("firstUnprintable(%q) = %d:%d, want %d:%d", src, l, c, want[0], want[1])
		}
	}
}
