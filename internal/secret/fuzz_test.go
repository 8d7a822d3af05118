package secret

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedact: for any key of at least MinLen characters and any text, with
// the key planted in the text in a form picked by the fuzzer (each
// character encoded its own way), the output holds the key in none of the
// forms of Forms, nor the planted text. The same text cut into chunks at
// points the seed picks and fed to a Stream is redacted at every chunk
// as the whole text so far is (appendAll), masks the planted key, and
// leaves no form of it.
//
//	go test -run '^$' -fuzz '^FuzzRedact$' -fuzztime 1m ./internal/secret
func FuzzRedact(f *testing.F) {
	f.Add("sk-live-0123456789abcdef", "error: invalid key %s", uint64(1), uint16(6))
	f.Add("eyJhbGci.PLANTED+key/with=", `{"error_message":"bad key"}`, uint64(2), uint16(26))
	f.Add("k&<ey>\"quoted\"-0123456", "<title>%</title>", uint64(3), uint16(7))
	f.Add("clé-spéciale-ümlaut-ß", "", uint64(4), uint16(0))
	f.Add("emoji-😀-key-0123456789", `\\\\`, uint64(5), uint16(2))
	f.Add(`back\slash.(group)[x]{2}^$|?*`, `\u005c\\`, uint64(6), uint16(1))
	f.Add("[REDACTED]ab", "[REDACTED]abab", uint64(7), uint16(12))
	f.Add("testsuites12", "<testsuites12><testsuite>", uint64(8), uint16(1))
	f.Fuzz(func(t *testing.T, key, text string, seed uint64, at uint16) {
		if CheckKey("key", key) != nil {
			return
		}
		r, err := New(key)
		if err != nil {
			t.Fatal(err)
		}
		planted := encodeMixed(key, rand.New(rand.NewPCG(seed, seed>>32)))
		pos := int(at) % (len(text) + 1)
		for pos > 0 && pos < len(text) && !utf8.RuneStart(text[pos]) {
			pos--
		}
		in := text[:pos] + planted + text[pos:]
		out := r.String(in)
		if strings.Contains(out, planted) {
			t.Fatalf("planted %q survives: %q -> %q", planted, in, out)
		}
		if f := leftover(out, key); f != "" {
			t.Fatalf("form %q survives: %q -> %q", f, in, out)
		}
		if r.String(out) != out {
			t.Fatalf("redacting twice changes %q", out)
		}
		// At most 64 chunks: appendAll redacts the whole text so far at
		// each chunk as its oracle, so a text of thousands of bytes cut
		// at every byte took seconds an input and the fuzzer took it for
		// a hang; the seed picks where the cuts fall.
		rng := rand.New(rand.NewPCG(seed>>32, seed))
		streamed, masked := appendAll(t, r, split(rng, in, 1+rng.IntN(min(len(in), 64))))
		if !masked || leftover(streamed, key) != "" || r.Contains(streamed) {
			t.Fatalf("streamed %q: masked %v, left %q", in, masked, streamed)
		}
	})
}
