package secret

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// appendAll feeds chunks to a Stream of r and checks every step against
// the whole-text redaction (String of the text before and the chunk
// together, as maskSpread did at each chunk): the same text, and a mask
// reported exactly when that redaction changed something. It returns the
// stream's text and whether any step masked.
func appendAll(t testing.TB, r *Redactor, chunks []string) (string, bool) {
	t.Helper()
	s := r.Stream()
	prev, masked := "", false
	for i, c := range chunks {
		want := r.String(prev + c)
		got := s.Append(c)
		if s.String() != want || got != (want != prev+c) {
			t.Fatalf("chunk %d of %q: stream %q (masked %v), whole text %q (masked %v)",
				i, chunks, s.String(), got, want, want != prev+c)
		}
		masked = masked || got
		prev = want
	}
	if s.Len() != len(prev) {
		t.Fatalf("Len %d, text %d bytes", s.Len(), len(prev))
	}
	return prev, masked
}

// split cuts text at n-1 distinct random points (fewer when it is
// short); pieces may split a character or an escape anywhere.
func split(rng *rand.Rand, text string, n int) []string {
	if n > len(text) {
		n = len(text)
	}
	cuts := map[int]bool{}
	for len(cuts) < n-1 {
		cuts[1+rng.IntN(len(text)-1)] = true
	}
	var out []string
	last := 0
	for i := 1; i < len(text); i++ {
		if cuts[i] {
			out = append(out, text[last:i])
			last = i
		}
	}
	return append(out, text[last:])
}

// longestForm is the longest text any pattern of r matches: each unit in
// its longest form. Split so that only its last byte comes in the last
// chunk, it starts exactly reach-1 bytes before that chunk, at the first
// byte the window scans.
func longestForm(r *table) string {
	for _, p := range r.pats {
		var b strings.Builder
		for _, u := range p.units {
			long := u[0].s
			for _, a := range u {
				if len(a.s) > len(long) {
					long = a.s
				}
			}
			b.WriteString(long)
		}
		if b.Len() == r.reach {
			return b.String()
		}
	}
	panic("no pattern reaches reach")
}

// TestStreamEdges: the cases where a window that starts late could see
// less than the whole text does.
func TestStreamEdges(t *testing.T) {
	t.Parallel()
	key := testKeys[1] // "eyJhbGci.PLANTED+key/with=": base64, regex and JSON characters
	r := mustNew(t, key, "other-key-0123456789")
	long := longestForm(r.current())
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + key + "!tail"))
	filler := strings.Repeat("lorem ipsum ", 200) // far longer than the reach
	if len(filler) < 2*r.current().reach {
		t.Fatalf("filler of %d bytes, reach %d", len(filler), r.current().reach)
	}
	type testCase struct {
		name   string
		chunks []string
		want   string // the stream's text at the end
	}
	for _, tc := range []testCase{
		{
			name:   "the longest form, its last byte alone",
			chunks: []string{filler + long[:len(long)-1], long[len(long)-1:]},
			want:   filler + Mask,
		},
		{
			name:   "the longest form, one byte a chunk",
			chunks: append([]string{filler}, strings.Split(long, "")...),
			want:   filler + Mask,
		},
		{
			name: "a base64 run, its start long before the chunk that completes the key",
			// The run's first characters are far outside the window;
			// the partial character before the core and the padding
			// after it are masked as in the whole text.
			chunks: []string{filler + "Authorization: Basic " + b64[:3], b64[3 : len(b64)-2], b64[len(b64)-2:], " end"},
			want:   filler + "Authorization: Basic " + r.String(b64) + " end",
		},
		{
			name: "an escape whose backslashes run back past the window",
			// escapeBounds counts the backslashes before the match
			// over the whole text: 2*reach+1 of them make the match's
			// own backslash escaped, so the mask takes one more.
			chunks: []string{strings.Repeat(`\`, 2*r.current().reach+1), allU(key, false)[:7], allU(key, false)[7:]},
			want:   strings.Repeat(`\`, 2*r.current().reach) + Mask,
		},
		{
			name:   "a mask from an earlier chunk, then the key again",
			chunks: []string{"a " + key[:5], key[5:] + " b " + key[:9], key[9:] + " c"},
			want:   "a " + Mask + " b " + Mask + " c",
		},
		{
			name:   "a form that straddles the window start of a short chunk",
			chunks: []string{filler + jsonString(jsonString(key))[:20], jsonString(jsonString(key))[20:]},
			want:   filler + Mask,
		},
		{
			name:   "a text with no key",
			chunks: []string{filler, "eyJhbGci.PLANTED+key", "/wit", "h", "out"},
			want:   filler + "eyJhbGci.PLANTED+key/without",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, masked := appendAll(t, r, tc.chunks)
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			if masked != r.Contains(strings.Join(tc.chunks, "")) {
				t.Errorf("masked %v, the joined text holds a key: %v", masked, !masked)
			}
		})
	}
}

// A key that holds the mask's letters can be spelled again by a mask and
// the text after it; the stream's passes reach back as the whole text's
// do.
func TestStreamMaskInKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"ab" + Mask, Mask + "tail", "x]" + Mask + "[y"} {
		r := mustNew(t, key)
		text := strings.Repeat("ab", 40) + key + strings.Repeat(key, 3) + "tail"
		rng := rand.New(rand.NewPCG(3, uint64(len(key))))
		for range 20 {
			appendAll(t, r, split(rng, text, 1+rng.IntN(len(text))))
		}
	}
}

// plantings are the ways a test plants a key in a text: every form of
// Forms, mixtures, base64 inside a longer run at every alignment and hex
// inside a longer hex run, after a backslash (an escape to widen over).
func plantings(key string, rng *rand.Rand) []string {
	out := Forms(key)
	for range 4 {
		out = append(out, encodeMixed(key, rng))
	}
	for _, prefix := range []string{"", "u", "us", "user:"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString([]byte(prefix+key+"!tail")))
		}
	}
	out = append(out, "00ff"+hex.EncodeToString([]byte(key))+"ab", `\`+allU(key, true), `\\`+jsonString(key))
	return out
}

// noise is text around the planted keys: words, base64 and hex
// characters that may extend a run, escapes, and masks.
var noise = []string{"the ", "table ", "for four ", "QUJD", "ZGVm", "+/", "=", "0a1b", `\`, `\\`, `\u00`, "%2", "&amp;", Mask, `"`, "é", "\n"}

// TestStreamMatchesWholeText: for random texts holding keys in every
// form, split at random points into chunks, the stream masks exactly
// where the whole-text redaction of each step does, with the same text;
// it masks at all exactly when the joined text holds a key; and what it
// leaves holds no form of a key.
func TestStreamMatchesWholeText(t *testing.T) {
	t.Parallel()
	for ki, key := range testKeys {
		t.Run(fmt.Sprint(ki), func(t *testing.T) {
			t.Parallel()
			r := mustNew(t, key, "other-key-0123456789")
			rng := rand.New(rand.NewPCG(uint64(ki), 7))
			forms := plantings(key, rng)
			// 60 texts a key: the fuzz target (FuzzRedact, in CI's
			// fuzz pass) goes on where these stop.
			for i := range 60 {
				var b strings.Builder
				for range rng.IntN(12) {
					b.WriteString(noise[rng.IntN(len(noise))])
				}
				// One text in four holds no key: the stream must not
				// mask it either.
				if i%4 != 0 {
					for range 1 + rng.IntN(3) {
						b.WriteString(forms[rng.IntN(len(forms))])
						for range rng.IntN(4) {
							b.WriteString(noise[rng.IntN(len(noise))])
						}
					}
				}
				text := b.String()
				if text == "" {
					continue
				}
				chunks := split(rng, text, 1+rng.IntN(len(text)))
				got, masked := appendAll(t, r, chunks)
				if masked != r.Contains(text) {
					t.Fatalf("%q: masked %v, the joined text holds a key: %v", chunks, masked, !masked)
				}
				if f := leftover(got, key); f != "" || r.Contains(got) {
					t.Fatalf("%q: form %q survives in %q", chunks, f, got)
				}
			}
		})
	}
}

// A Stream of a redactor without keys, or of none, only joins.
func TestStreamWithoutKeys(t *testing.T) {
	t.Parallel()
	var none *Redactor
	empty := mustNew(t)
	for _, r := range []*Redactor{none, empty} {
		s := r.Stream()
		for _, c := range []string{"a ", testKeys[0], " b"} {
			if s.Append(c) {
				t.Errorf("masked %q", c)
			}
		}
		if s.String() != "a "+testKeys[0]+" b" || s.Redactor() != r {
			t.Errorf("got %q", s.String())
		}
	}
}

// firstMatch is where the first match of r in text starts, by trying
// every pattern at every position; len(text) when there is none.
func firstMatch(r *table, text []byte) int {
	for i := range text {
		for pi := range r.pats {
			if match(&r.pats[pi], text, i) >= 0 {
				return i
			}
		}
	}
	return len(text)
}

// TestRedactFromAnyCleanStart: redaction that starts its scan anywhere
// up to the first match gives what redaction from 0 does, also when the
// scan starts right at a base64 core whose partial character before it
// is masked too, or at a form whose escape's backslash comes before it.
func TestRedactFromAnyCleanStart(t *testing.T) {
	t.Parallel()
	for ki, key := range testKeys {
		r := mustNew(t, key).current()
		rng := rand.New(rand.NewPCG(uint64(ki), 11))
		for _, form := range plantings(key, rng) {
			for _, before := range []string{"", "x", "A", `\`, `\\\`, Mask} {
				text := []byte("the " + before + form + " after")
				want := string(r.redact(text, 0))
				for from := range firstMatch(r, text) + 1 {
					if got := string(r.redact(text, from)); got != want {
						t.Fatalf("key %q in %q, from %d: %q, from 0: %q", key, text, from, got, want)
					}
				}
			}
		}
	}
}
