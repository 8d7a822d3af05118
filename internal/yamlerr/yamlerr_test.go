package yamlerr

import (
	"fmt"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
)

// TestDiagnostic: each syntax error yaml.v3 reports is placed at the
// line and column written wrong, with the parser's message after
// "invalid YAML: " and the fix where the mistake is a common one.
func TestDiagnostic(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, src string
		// at is line:col, msg the message after "invalid YAML: ".
		at, msg, hint string
	}
	const (
		unclosedList = "did not find expected ',' or ']'"
		unclosedMap  = "did not find expected ',' or '}'"
		noKey        = "did not find expected key"
		mapping      = "mapping values are not allowed in this context"
		noToken      = "found character that cannot start any token"
		tabHint      = "indent with spaces: YAML does not allow tabs in indentation"
		escapeHint   = `in double quotes \ starts an escape (\n, \"): write the text in single quotes, where \ is itself ('^\d+$'), or each \ as \\`
	)
	run := func(t *testing.T, tc testCase) {
		t.Helper()
		err := parseError([]byte(tc.src))
		if err == nil {
			t.Fatal("the source parses")
		}
		d := Diagnostic("f.yaml", []byte(tc.src), err)
		want := diag.Diagnostic{Severity: diag.Error, Pos: diag.Pos{File: "f.yaml"}, Message: "invalid YAML: " + tc.msg, Hint: tc.hint}
		want.Pos.Line, want.Pos.Col = lineCol(t, tc.at)
		if d != want {
			t.Errorf("Diagnostic =\n %s\nwant\n %s", d, want)
		}
	}
	for _, tc := range []testCase{
		// Bytes the reader refuses come with no line: the first one is
		// found, counting a column per character.
		{"a control character", "a: 1\nbé: 2\x01\n", "2:6", "control characters are not allowed", ""},
		// yaml.v3 reads a byte order mark anywhere.
		{"a BOM before a control character", "a: b\ufeff\x01\n", "1:6", "control characters are not allowed", ""},
		{"broken UTF-8", "a: b\xff\n", "1:5", "invalid leading UTF-8 octet", ""},
		// A tab is looked for on the reported line first, then below,
		// then above.
		{"a tab below the reported line", "a:\n  b: 1\n\tc: 2\n", "3:1", "found a tab character that violates indentation", tabHint},
		{"a tab on the last line", "a:\n  b: 1\n  \tc: 2", "3:3", "found a tab character that violates indentation", tabHint},
		{"tabs on the reported line and below", "a:\n\tb: 1\n\tc: 2\n", "2:1", noToken, tabHint},
		{"a key indented to no level", "a:\n  b: 1\n c: 2\n", "3:2", noKey, hintKeyIndent},
		{"a list item indented to no level", "list:\n  - a\n  - b\n - c\n", "4:2", noKey, hintListIndent},
		{"a key of a list item at its -", "m:\n  - a: 1\n  b: 2\n", "3:3", "did not find expected '-' indicator", hintItemIndent},
		// A prefix that fails another way (cut inside a flow) is not
		// the line at fault.
		{"a key indented to no level after a flow", "a: [b,\n  c]\n  d: e\n", "3:3", noKey, hintKeyIndent},
		{"a key indented to no level after a flow from the context line", "x:\n  a: [b,\n    c]\n   d: e\n", "4:4", noKey, hintKeyIndent},
		{"a key indented to no level after a long flow", "x:\n  a: [b,\n    c,\n    c,\n    c,\n    c,\n    c,\n    d]\n   e: f\n", "9:4", noKey, hintKeyIndent},
		{"a stray bracket", "a: [b]]\n", "1:7", noKey, "this ] closes no [: remove it"},
		{"a stray bracket below the mistake", "a:\n  b: 1\n c: 2\nd: [e]]\n", "3:2", noKey, hintKeyIndent},
		{"a list never closed", "a: [b\n", "1:4", unclosedList, "this [ is never closed: end the list with ]"},
		// A [ that opens no flow (the text of a plain value) but
		// that the scan takes for one, above the line yaml.v3 names,
		// is not the one never closed.
		{"a list never closed below a bracket in a plain value", "a: b\n  [c\n\nd:\n  - [e\n", "5:5", unclosedList, "this [ is never closed: end the list with ]"},
		{"a list never closed after a bracket in a plain value on the reported line", "a: b\n  [c\nd: [e\n", "3:4", unclosedList, "this [ is never closed: end the list with ]"},
		{"two lists never closed", "a: [b, [c\n", "1:4", unclosedList, "this [ is never closed: end the list with ]"},
		{"a mapping never closed in a list", "a: [b, {c: d\n", "1:8", unclosedMap, "this { is never closed: end the mapping with }"},
		// yaml.v3 names no line for the first.
		{"a pattern in double quotes", "a: \"^\\d+$\"\n", "1:6", "found unknown escape character", escapeHint},
		{"a pattern in double quotes after an escape", "x:\n  b: {m: \"\\\" \\.\"}\n", "2:14", "found unknown escape character", escapeHint},
		// A quote inside a plain value starts no quoted one.
		{"a pattern in double quotes after a plain value with a quote", "a: {m: x\"y, n: \"\\d\"}\n", "1:17", "found unknown escape character", escapeHint},
		// A pattern's braces in a flow end its plain value: at the value.
		{"a pattern with braces in a flow", "a: {m: ^\\d{4}$}\n", "1:8", unclosedMap, "inside [ ] or { }, a value that holds { must be quoted: write it in single quotes"},
		{"a pattern with brackets in a nested flow", "x:\n  y:\n    a: {m: x, n: [a[bc]$]}\n", "3:19", unclosedList, "inside [ ] or { }, a value that holds [ must be quoted: write it in single quotes"},
		// A value holding ": " in a flow: yaml.v3 names the line above
		// the flow, with no column and no word of the colon.
		{"a value holding a colon in a flow", "a:\n  b: {contains: Note: how many}\n", "2:17", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('Note: how many')`},
		{"a value holding a colon after a quoted one", "a: {c: 'x: y', b: c: d}\n", "1:19", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('c: d')`},
		{"a value holding a colon and a quote", "a: {m: it's: x}\n", "1:8", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('it''s: x')`},
		{"a value holding a colon on a flow's second line", "a:\n  b: {contains: x,\n      m: Note: how}\n", "3:10", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('Note: how')`},
		{"a value holding a colon after a nested flow", "a: {b: {c: d}, e: f: g}\n", "1:19", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('f: g')`},
		{"a value holding a colon before a space", "a: {m: x: y , n: z}\n", "1:8", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('x: y')`},
		// '' in single quotes is a quote: the text after it is quoted too.
		{"a value holding a colon below a quoted one with a quote", "a: {m: 'it''s: x: y'}\nb: {c: d e: f}\n", "2:8", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('d e: f')`},
		{"two values holding a colon", "a: {m: x: y, n: p: q}\n", "1:8", unclosedMap,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('x: y')`},
		{"a key after a nested flow", "a: {b: {c: d} x: y}\n", "1:1", unclosedMap, ""},
		// An item of a list with ": " is a key and its value: the item
		// is the text.
		{"an item holding two colons in a list", "a: [x, Note: how: y]\n", "1:8", unclosedList,
			`inside [ ] or { }, a value that contains ": " must be quoted: write it in single quotes ('Note: how: y')`},
		{"a reserved @", "tags: [smoke, @slow]\n", "1:15", noToken, `YAML reserves @ at the start of a value: quote it ("@slow")`},
		{"a reserved @ after a non-ASCII value", "é: [x, `y`]\n", "1:8", noToken, "YAML reserves ` at the start of a value: quote it (\"`y`\")"},
		{"a value holding a colon", "a: b\n  c: d: e\n", "2:6", mapping, `a value that contains ": " must be quoted: "d: e"`},
		{"a key indented under a value", "a: b\n  c: d\n", "2:3", mapping, hintKeyIndent},
		{"an alias of no anchor", "a: &x 1\nb: [*x, *y]\n", "2:9", "unknown anchor 'y' referenced",
			"no &y is defined above this line: an alias (*y) can only repeat an anchor (&y) written before it; did you mean *x?"},
		// A near miss of an anchor above is named; one below, or one far
		// from every anchor, is not.
		{"an alias of a misspelt anchor", "x-booked: &booked {node: A}\nb: *bookd\nc: &bookd 1\n", "2:4", "unknown anchor 'bookd' referenced",
			"no &bookd is defined above this line: an alias (*bookd) can only repeat an anchor (&bookd) written before it; did you mean *booked?"},
		{"an alias far from every anchor", "x-booked: &booked {node: A}\nb: *polite\n", "2:4", "unknown anchor 'polite' referenced",
			"no &polite is defined above this line: an alias (*polite) can only repeat an anchor (&polite) written before it"},
		{"an alias of an anchor defined below", "a: *booked\nb: &booked 1\n", "1:4", "unknown anchor 'booked' referenced",
			"no &booked is defined above this line: an alias (*booked) can only repeat an anchor (&booked) written before it"},
		{"an alias of no anchor as a key", "a:\n  *x: 1\n", "2:3", "unknown anchor 'x' referenced",
			"no &x is defined above this line: an alias (*x) can only repeat an anchor (&x) written before it"},
		{"an alias of no anchor as a key of a flow", "a: {*x: 1}\n", "1:5", "unknown anchor 'x' referenced",
			"no &x is defined above this line: an alias (*x) can only repeat an anchor (&x) written before it"},
		{"an alias of no anchor on the first line", "a: *x\nb: 1\n", "1:4", "unknown anchor 'x' referenced",
			"no &x is defined above this line: an alias (*x) can only repeat an anchor (&x) written before it"},
		{"an alias of no anchor in a later document", "a: 1\n---\nb: *x\n", "3:4", "unknown anchor 'x' referenced",
			"no &x is defined above this line: an alias (*x) can only repeat an anchor (&x) written before it"},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

func lineCol(t *testing.T, at string) (line, col int) {
	t.Helper()
	if _, err := fmt.Sscanf(at, "%d:%d", &line, &col); err != nil {
		t.Fatalf("at %q: %v", at, err)
	}
	return line, col
}
