package scenario

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestObjectSynonymHint: an unknown key that is another tool's name for
// a check written at another level gets where that check goes, after the
// hints a key set gives itself: its own moved and means come first.
func TestObjectSynonymHint(t *testing.T) {
	t.Parallel()
	ks := keySet{what: "turn", keys: []string{"say"},
		moved: map[string]string{"response": "checks go under expect:", "reply": "reply is written elsewhere"},
		means: map[string]string{"text": "say"}}
	for _, tc := range []struct{ key, hint string }{
		{"expect_text", `did you mean "response"? checks go under expect:`},
		{"reply", "reply is written elsewhere"},
		{"text", `did you mean "say"?`},
		{"path", "known keys: say"},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tc.key+": x\n"), &n); err != nil {
			t.Fatal(err)
		}
		d := &decoder{file: "s.yaml"}
		d.object(n.Content[0], ks)
		if len(d.diags) != 1 || d.diags[0].Hint != tc.hint {
			t.Errorf("%s: diagnostics %v, want one with hint %q", tc.key, d.diags, tc.hint)
		}
	}
}
