package secret

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestKeyAcrossTerminalEscapes: a key that terminal escape sequences
// part (a colour on a part of it, a title, a two-byte escape) is masked
// in every way a text is redacted, in the text without them: the report
// files drop them, and the key would be whole there. Escapes that part
// no key stay, and such a text is returned as it is. Before, each way
// found nothing, and the JUnit and HTML reports showed the key.
func TestKeyAcrossTerminalEscapes(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	r := mustNew(t, key)
	for _, tc := range []struct{ text, want string }{
		{"a sk-live-\x1b[1m0123456789\x1b[0mabcdef b", "a " + Mask + " b"},
		{"\x1b]0;title\x07sk-live-01234\x1b]0;x\x1b\\56789abcdef", Mask},
		{"sk-live-0123\x1bM456789abcdef", Mask},
		// Escapes that part no key stay.
		{"\x1b[31mred\x1b[0m sk-live-0123", "\x1b[31mred\x1b[0m sk-live-0123"},
		// A key whole beside an escape is masked where it stands.
		{"\x1b[31mred\x1b[0m sk-live-0123456789abcdef", "\x1b[31mred\x1b[0m " + Mask},
		// Both: the text loses its escapes with the key they part.
		{"sk-live-0123456789abcdef \x1b[1msk-live-\x1b[0m0123456789abcdef", Mask + " " + Mask},
	} {
		if got := r.String(tc.text); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if got := string(r.Bytes([]byte(tc.text))); got != tc.want {
			t.Errorf("Bytes(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if got, want := r.Contains(tc.text), tc.want != tc.text; got != want {
			t.Errorf("Contains(%q) = %v, want %v", tc.text, got, want)
		}
		doc, _ := json.Marshal(map[string]string{"reply": tc.text})
		var v map[string]string
		if err := json.Unmarshal(r.JSON(doc), &v); err != nil || v["reply"] != tc.want {
			t.Errorf("JSON(%s) = %q (%v), want the reply %q", doc, v["reply"], err, tc.want)
		}
		// In chunks of any size, the key's parts coming in any of them.
		for _, n := range []int{1, 3, 7} {
			s := r.Stream()
			for i := 0; i < len(tc.text); i += n {
				s.Append(tc.text[i:min(i+n, len(tc.text))])
			}
			if got := s.String(); got != tc.want {
				t.Errorf("a stream of %q in chunks of %d = %q, want %q", tc.text, n, got, tc.want)
			}
		}
	}
	// A document whose escapes part no key is returned as it came, not
	// encoded again (its members keep their order).
	doc := []byte(`{"z": "\u001b[31mred\u001B[0m", "a": 1}`)
	if out := r.JSON(doc); &out[0] != &doc[0] {
		t.Errorf("JSON(%s) = %s: a document with nothing to mask was copied", doc, out)
	}
	// A document that writes ESC in upper-case hex.
	upper := []byte(`{"reply":"sk-live-\u001B[1m0123456789abcdef"}`)
	if out := r.JSON(upper); !bytes.Contains(out, []byte(Mask)) || !json.Valid(out) {
		t.Errorf("JSON(%s) = %s", upper, out)
	}
	// Invalid JSON is redacted as text, its escapes raw.
	if out := r.JSON([]byte("{\"a\": \"sk-live-\x1b[1m0123456789abcdef")); !bytes.Contains(out, []byte(Mask)) {
		t.Errorf("invalid JSON with a raw escape: %q", out)
	}
	// The stream reports what it masked.
	s := r.Stream()
	if s.Append("sk-live-\x1b[1m") || !s.Append("0123456789abcdef") || strings.Contains(s.String(), "\x1b") {
		t.Errorf("the stream's appends: %q", s.String())
	}
}
