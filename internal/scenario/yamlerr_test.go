package scenario

import (
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorsPointAtTheMistake: the YAML mistakes designers make
// most are reported at the line and column written wrong, with the fix,
// not where yaml.v3's parser noticed (the line of the enclosing block,
// no column, in the parser's terms).
func TestYAMLSyntaxErrorsPointAtTheMistake(t *testing.T) {
	t.Parallel()
	const head = "suite: t\nscenarios:\n  - name: a\n    turns:\n"
	for _, tc := range []struct {
		name, src, at, hint string
	}{
		{"key indented less than its siblings", head + "      - say: hi\n        expect:\n          response: {contains: a}\n         node: X\n",
			"8:10", "a key lines up with the other keys of its mapping"},
		{"key indented more than its siblings", head + "      - say: hi\n        expect:\n            response: {contains: a}\n          node: X\n",
			"8:11", "a key lines up with the other keys"},
		{"key after a flow mapping indented more", head + "      - say: hi\n        expect:\n          response: {contains: a}\n            node: X\n",
			"8:13", "a key lines up with the other keys"},
		{"key of an item at the items' dash", head + "      - say: hi\n      expect:\n          response: {contains: a}\n",
			"6:7", "a key of a list item lines up with the item's first key"},
		{"list item out of line", head + "      - say: hi\n        expect:\n          trace:\n          - A\n         - B\n",
			"9:10", "a list item's - lines up with the - of the other items"},
		{"key indented under a list item's key", head + "      - say: hi\n  - name: b\n     turns:\n      - say: hi\n",
			"7:6", "a key lines up with the other keys"},
		{"value with a colon", head + "      - say: note: hi\n", "5:14", `a value that contains ": " must be quoted: "note: hi"`},
		{"tag starting with @", "suite: t\ntags: [smoke, @slow]\nscenarios: []\n", "2:15", `YAML reserves @ at the start of a value: quote it ("@slow")`},
		{"say starting with a backtick", head + "      - say: `hi`\n", "5:14", "YAML reserves ` at the start of a value: quote it (\"`hi`\")"},
		{"list never closed", head + "      - say: hi\n        expect:\n          trace: [Greeting, Booking\n      - say: bye\n",
			"7:18", "this [ is never closed: end the list with ]"},
		{"list never closed, the file goes on", "suite: t\nscenarios:\n  - name: a\n    tags: [smoke, fast\n    greeting: {node: Greeting}\n",
			"4:11", "this [ is never closed"},
		{"inner mapping closed, outer not", head + "      - say: hi\n        expect: {response: {contains: open}\n      - say: bye\n",
			"6:17", "this { is never closed: end the mapping with }"},
		{"brackets in quotes, comments and plain values open nothing", head + "      - say: 'a [quoted' # [comment\n        note: see [1\n        expect: {response: {contains: \"{x\"}\n      - say: bye\n",
			"7:17", "this { is never closed"},
		{"brackets in a block scalar open nothing", head + "      - say: |\n          [not yaml\n        expect: [a\n",
			"7:17", "this [ is never closed"},
		{"bracket closing nothing", "suite: t\nscenarios:\n  - name: a\n    tags: [smoke, fast]]\n",
			"4:24", "this ] closes no [: remove it"},
		{"tab still wins", head + "\t- say: hi\n", "5:1", "indent with spaces"},
		// yaml.v3 gives no line: the whole file was blamed at 1:1.
		{"alias of no anchor", "suite: t\nx-turn: &greet {say: hi}\nscenarios:\n  - name: é\n    turns: [*greet, *gret]\n",
			"5:21", "no &gret is defined above this line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ds := LoadFile("s.yaml", []byte(tc.src))
			if len(ds) != 1 {
				t.Fatalf("want one diagnostic, got:\n%s", renderDiags(ds))
			}
			d := ds[0]
			if got := strings.TrimPrefix(d.Pos.String(), "s.yaml:"); got != tc.at {
				t.Errorf("at %s, want %s: %s", got, tc.at, d)
			}
			if !strings.Contains(d.Hint, tc.hint) {
				t.Errorf("hint %q, want it to contain %q", d.Hint, tc.hint)
			}
		})
	}
}
