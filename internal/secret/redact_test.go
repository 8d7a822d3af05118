package secret

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// testKeys have the shapes that break naive redaction: characters that
// JSON, URLs, regular expressions, HTML and base64 all write differently.
var testKeys = []string{
	"sk-live-0123456789abcdef",
	"eyJhbGci.PLANTED+key/with=",
	"k&<ey>\"quoted\"-0123456",
	"clé-spéciale-ümlaut-ß",
	"emoji-😀-key-0123456789",
	`back\slash.(group)[x]{2}^$|?*`,
	"has inner space 0123",
	"testsuites12", // a word of our own report structure, 12 characters
}

// leftover returns the first form of key still in s, or "".
func leftover(s, key string) string {
	for _, f := range Forms(key) {
		if strings.Contains(s, f) {
			return f
		}
	}
	return ""
}

func mustNew(t testing.TB, keys ...string) *Redactor {
	t.Helper()
	r, err := New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedactEveryForm(t *testing.T) {
	t.Parallel()
	contexts := []struct {
		name string
		wrap func(form string) string
	}{
		{"alone", func(f string) string { return f }},
		{"in text", func(f string) string { return "invalid key " + f + " rejected" }},
		{"glued to letters", func(f string) string { return "abc" + f + "xyz" }},
		{"in a JSON string", func(f string) string { return `{"error_message":"bad key ` + f + `","code":401}` }},
		{"twice", func(f string) string { return f + "," + f }},
		{"in a query", func(f string) string { return "https://h/x?key=" + f + "&y=1" }},
		{"in HTML", func(f string) string { return "<title>Bad gateway for " + f + "</title>" }},
	}
	for _, key := range testKeys {
		r := mustNew(t, key, "other-key-0123456789")
		for _, form := range Forms(key) {
			for _, c := range contexts {
				in := c.wrap(form)
				out := r.String(in)
				if f := leftover(out, key); f != "" {
					t.Errorf("key %q, form %q, %s: %q survives in %q", key, form, c.name, f, out)
				}
				if !strings.Contains(out, Mask) {
					t.Errorf("key %q, form %q, %s: nothing masked in %q", key, form, c.name, out)
				}
			}
		}
	}
}

// encodeMixed writes each character of key in a form drawn from rng: the
// forms a proxy that escapes only some characters produces.
func encodeMixed(key string, rng *rand.Rand) string {
	var b strings.Builder
	for _, r := range key {
		ch := string(r)
		opts := []string{ch, allU(ch, false), allU(ch, true), allPct(ch, false), allPct(ch, true), jsonString(ch), phpString(ch)}
		if q := regexp.QuoteMeta(ch); q != ch {
			opts = append(opts, q, jsonString(q))
		}
		if ch == " " {
			opts = append(opts, "+")
		}
		b.WriteString(opts[rng.IntN(len(opts))])
	}
	return b.String()
}

func TestRedactMixedForms(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, key := range testKeys {
		r := mustNew(t, key)
		// 100 mixtures a key; FuzzRedact plants more in CI's fuzz pass.
		for range 100 {
			enc := encodeMixed(key, rng)
			out := r.String("x " + enc + " y")
			if strings.Contains(out, enc) || out != "x "+Mask+" y" {
				t.Fatalf("key %q as %q: got %q", key, enc, out)
			}
		}
	}
}

func TestRedactBase64AtEveryAlignment(t *testing.T) {
	t.Parallel()
	for _, key := range testKeys {
		r := mustNew(t, key)
		for _, prefix := range []string{"", "u", "us", "user:", "Basic-ab"} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				b64 := enc.EncodeToString([]byte(prefix + key + "!tail"))
				out := r.String("Authorization: " + b64)
				dec := decodeAllBase64(out)
				if strings.Contains(dec, key) || strings.Contains(out, b64) {
					t.Errorf("key %q, prefix %q: %q decodes to %q", key, prefix, out, dec)
				}
			}
		}
	}
}

// decodeAllBase64 decodes every base64-looking run of s, at every
// alignment, and joins the results.
func decodeAllBase64(s string) string {
	var out []string
	for _, run := range regexp.MustCompile(`[A-Za-z0-9+/_=-]{8,}`).FindAllString(s, -1) {
		run = strings.TrimRight(run, "=")
		for i := 0; i < 4 && i < len(run); i++ {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				part := run[i:]
				part = part[:len(part)/4*4]
				if b, err := enc.DecodeString(part); err == nil {
					out = append(out, string(b))
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// Redacting a JSON body keeps it valid JSON, also when a form sits right
// after an escaped backslash or the key holds a quote.
func TestJSONStaysValid(t *testing.T) {
	t.Parallel()
	for _, key := range testKeys {
		r := mustNew(t, key)
		bodies := []string{
			`{"a":"` + jsonString(key) + `"}`,
			`{"a":"\\` + allU(key, false) + `"}`,
			`{"a":"\\\\` + allU(key, true) + `\\"}`,
			`{"` + jsonString(key) + `":1,"b":["` + phpString(key) + `"]}`,
			`["` + jsonString(jsonString(key)) + `"]`,
		}
		for _, body := range bodies {
			if !json.Valid([]byte(body)) {
				t.Fatalf("test body is not JSON: %s", body)
			}
			out := r.JSON([]byte(body))
			if !json.Valid(out) {
				t.Errorf("key %q: %s became invalid: %s", key, body, out)
			}
			var v any
			_ = json.Unmarshal(out, &v)
			if s := fmt.Sprint(v); strings.Contains(s, key) || leftover(string(out), key) != "" {
				t.Errorf("key %q: %s leaves the key in %s", key, body, out)
			}
		}
	}
	// A raw quote in a key crosses the document's structure.
	key := `ab","c":"0123456789`
	r := mustNew(t, key)
	body := []byte(`{"x":"ab","c":"0123456789"}`)
	out := r.JSON(body)
	if !json.Valid(out) || strings.Contains(string(out), "0123456789") && strings.Contains(string(out), `"ab"`) {
		t.Errorf("structure-crossing key: %s", out)
	}
	// A key whose first letter is that of an escape (\t): the mask
	// takes the escape's backslash.
	r = mustNew(t, "tok-live-0123456789")
	for _, body := range []string{`{"a":"x\tok-live-0123456789"}`, `["\\\tok-live-0123456789"]`} {
		if out := r.JSON([]byte(body)); !json.Valid(out) || r.Contains(string(out)) {
			t.Errorf("%s became %s", body, out)
		}
	}
	// Masked where it stands, a key that spans a member's name and value
	// leaves {"[REDACTED]", ...}: the document is decoded and encoded
	// again, and the compact encoding no longer holds the key.
	key = `k": "0123456789ab`
	r = mustNew(t, key)
	body = []byte(`{"k": "0123456789ab", "n": 1}`)
	if out := r.JSON(body); !json.Valid(out) || r.Contains(string(out)) {
		t.Errorf("key across a member: %s", out)
	}
}

func TestNothingToRedact(t *testing.T) {
	r := mustNew(t, testKeys...)
	text := []byte(`{"conversationId":"c-1","response":"Sure, a table for 4 at 7pm. \\u00e9 100% ok","metadata":{"nodeTrace":["Greeting","Book"]}}`)
	if out := r.Bytes(text); &out[0] != &text[0] {
		t.Errorf("clean text was copied")
	}
	if n := testing.AllocsPerRun(100, func() { r.Bytes(text) }); n != 0 {
		t.Errorf("clean text: %v allocations, want 0", n)
	}
	var nilR *Redactor
	if nilR.String("x") != "x" || !nilR.Empty() || nilR.Contains("x") {
		t.Errorf("a nil redactor must change nothing")
	}
}

// A key that contains the mask's letters cannot be spelled again by a mask
// and the text next to it.
func TestMaskCannotRebuildAKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{Mask + "tail", "ab" + Mask} {
		r := mustNew(t, key)
		for _, in := range []string{key + "tail", key + key + "tail", "[REDACTED]" + key + "tail", "ab" + key, "abab" + key} {
			if out := r.String(in); strings.Contains(out, key) {
				t.Errorf("%q -> %q", in, out)
			}
		}
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	type testCase struct {
		key, want string
	}
	for _, tc := range []testCase{
		{"0123456789ab", ""},
		{"test", "build_key is 4 characters long; keys shorter than 12 characters are refused"},
		{"0123456789a", "build_key is 11 characters long"},
		{"Q", "build_key is 1 character long; keys shorter than 12 characters are refused"},
		{"clé-11-runes", ""},
		{"0123456789ab\n", "control character"},
		{"0123456\u202e789ab", "invisible formatting"},
		{"0123456789ab\u2028cd", "invisible formatting"},
		{"0123456789ab\u200bcd", "invisible formatting"},
		{"\ufeff0123456789ab", "invisible formatting"},
		{"0123456789ab\u200dcd", "invisible formatting"},
		{"0123456789ab\U000e0100", "invisible formatting"},
		{" 0123456789ab", "white space"},
		{"\xff0123456789ab", "not valid UTF-8"},
	} {
		err := CheckKey("build_key", tc.key)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.key, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: %v, want %q", tc.key, err, tc.want)
		case err != nil && strings.Contains(err.Error(), tc.key):
			t.Errorf("the message shows the key: %v", err)
		}
	}
	if _, err := New("short"); err == nil {
		t.Errorf("New accepted a short key")
	}
}

// TestMaskable: of the secrets given, those a redactor takes, each once,
// in order; an empty, short or unprintable one is left out, and takes
// nothing from the others.
func TestMaskable(t *testing.T) {
	t.Parallel()
	got := Maskable("", "sk-live-0123456789abcdef", "short", "0123456789a", "0123456789ab\n", "sk-live-0123456789abcdef", "clé-11-runes")
	if want := []string{"sk-live-0123456789abcdef", "clé-11-runes"}; !slices.Equal(got, want) {
		t.Errorf("Maskable = %q, want %q", got, want)
	}
	if _, err := New(got...); err != nil {
		t.Errorf("New refuses what Maskable keeps: %v", err)
	}
}

func TestErrorKeepsTheChain(t *testing.T) {
	t.Parallel()
	r := mustNew(t, testKeys[0])
	err := r.Error(fmt.Errorf("call: %w (key %s)", io.ErrUnexpectedEOF, testKeys[0]))
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), testKeys[0]) {
		t.Errorf("got %v", err)
	}
}

func TestValueRedactsNamesAndStrings(t *testing.T) {
	t.Parallel()
	key := testKeys[1]
	r := mustNew(t, key)
	in := map[string]any{"a": []any{"x " + key, 1.0}, key: "v", "clean": map[string]any{"k": "v"}}
	out := r.Value(in).(map[string]any)
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "PLANTED") || out["clean"] == nil {
		t.Errorf("got %s", b)
	}
	if len(in) != 3 || in[key] != "v" {
		t.Errorf("the input was modified")
	}
}

func TestWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := mustNew(t, testKeys[0]).Writer(&b)
	fmt.Fprintf(w, "key=%s\n", url.QueryEscape(testKeys[0]))
	if b.String() != "key="+Mask+"\n" {
		t.Errorf("got %q", b.String())
	}
}

func TestFormsAreDistinctAndValid(t *testing.T) {
	t.Parallel()
	for _, key := range testKeys {
		for _, f := range Forms(key) {
			if !utf8.ValidString(f) {
				t.Errorf("%q: form %q is not UTF-8", key, f)
			}
		}
	}
}

// TestWith: a redactor extended with a key masks the old keys and the new
// one in every form, and the one it was made from is left as it was.
func TestWith(t *testing.T) {
	base, err := New("base-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := base.With("session-token-9876543210")
	if err != nil {
		t.Fatal(err)
	}
	text := `a base-key-0123456789 b session-token-9876543210 c ` + url.QueryEscape("session-token-9876543210") +
		" d " + base64.StdEncoding.EncodeToString([]byte("x:session-token-9876543210"))
	got := ext.String(text)
	if strings.Contains(got, "0123456789") || strings.Contains(got, "9876543210") || ext.Contains("session-token-9876543210") == false {
		t.Errorf("extended: %q", got)
	}
	if got := base.String(text); !strings.Contains(got, "session-token-9876543210") || strings.Contains(got, "base-key-0123456789") {
		t.Errorf("the base redactor changed: %q", got)
	}
	if _, err := base.With("short"); err == nil {
		t.Error("a short key was accepted")
	}
	var none *Redactor
	if r, err := none.With("only-key-0123456789"); err != nil || r.String("x only-key-0123456789") != "x "+Mask {
		t.Errorf("nil base: %v", err)
	}
}

// TestNewKeys: an empty or repeated key is skipped and the keys after it
// still count (optional wiring passes an unset key), and every refused
// key is reported, by its place in the list.
func TestNewKeys(t *testing.T) {
	t.Parallel()
	k1, k2 := "first-key-0123456789", "second-key-0123456789"
	r := mustNew(t, "", k1, k1, k2)
	if got := r.String(k1 + " " + k2); got != Mask+" "+Mask {
		t.Errorf("got %q", got)
	}
	_, err := New("short", k1, "also short", k2)
	if err == nil {
		t.Fatal("New accepted short keys")
	}
	for _, want := range []string{"key 1 is 5 characters long", "key 3 is 10 characters long"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v does not say %q", err, want)
		}
	}
}

// TestValueRedactsEveryEntry: every element of a list and every member
// of an object is redacted, wherever the one holding the key comes.
func TestValueRedactsEveryEntry(t *testing.T) {
	t.Parallel()
	key := testKeys[0]
	r := mustNew(t, key)
	list := r.Value([]any{"clean", 1.0, "x " + key}).([]any)
	if list[2] != "x "+Mask || list[0] != "clean" {
		t.Errorf("list: %q", list)
	}
	obj := map[string]any{"dirty": "x " + key}
	for i := range 32 {
		obj[fmt.Sprint("clean", i)] = "v"
	}
	// A map is walked in a new order each time: a walk that stops early
	// would leave the key in some of these.
	for range 16 {
		out := r.Value(obj).(map[string]any)
		if out["dirty"] != "x "+Mask || len(out) != len(obj) {
			t.Fatalf("object: %q", out)
		}
	}
}

// TestSmallAPIs: an empty JSON body, a nil error, and what a redacting
// writer reports.
func TestSmallAPIs(t *testing.T) {
	t.Parallel()
	r := mustNew(t, testKeys[0])
	for _, b := range [][]byte{nil, {}} {
		if out := r.JSON(b); len(out) != 0 {
			t.Errorf("JSON(%q) = %q", b, out)
		}
	}
	if err := r.Error(nil); err != nil {
		t.Errorf("Error(nil) = %v", err)
	}
	// A clean error is returned as it is: err == io.EOF still holds.
	if err := r.Error(io.EOF); err != io.EOF {
		t.Errorf("Error(io.EOF) = %#v", err)
	}
	var b strings.Builder
	line := "key=" + testKeys[0] + "\n"
	if n, err := r.Writer(&b).Write([]byte(line)); n != len(line) || err != nil || b.String() != "key="+Mask+"\n" {
		t.Errorf("Write = %d, %v; wrote %q", n, err, b.String())
	}
	if n, err := r.Writer(failingWriter{}).Write([]byte(line)); n != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Write to a failing writer = %d, %v", n, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestFormsByIndependentWriters: forms built here with the standard
// library, not with the package's helpers (Forms shares those with the
// patterns, so a mistake in one would be in both): numeric character
// references of every character but an ASCII letter or digit, UTF-16 in
// both byte orders read as Latin-1, \u escapes of characters beyond the
// BMP (surrogate pairs) and of the last BMP character, and the
// regex-quoted key in a URL.
func TestFormsByIndependentWriters(t *testing.T) {
	t.Parallel()
	type testCase struct {
		key, text string
	}
	var cases []testCase
	for c := rune(' '); c <= '~'; c++ {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		key := "0123456789ab" + string(c) + "cd"
		for _, format := range []string{"&#%d;", "&#x%x;", "&#x%X;", "&#X%x;"} {
			cases = append(cases, testCase{key, strings.Replace(key, string(c), fmt.Sprintf(format, c), 1)})
		}
	}
	apos := "it's-a-key-0123"
	cases = append(cases, testCase{apos, html.EscapeString(apos)}, // Go: &#39;
		testCase{apos, strings.ReplaceAll(apos, "'", "&#039;")}, // PHP's htmlspecialchars, ENT_QUOTES
		testCase{apos, strings.ReplaceAll(apos, "'", "&apos;")}) // ENT_HTML5, XML
	for _, key := range []string{testKeys[0], "clé-spéciale-ümlaut-ß", "emoji-😀-key-0123456789", "ключ-доступа-0123", "sub₀-key-0123456789", "last-bmp-\uffff-0123456"} {
		var dec strings.Builder
		for _, c := range key {
			if c < utf8.RuneSelf {
				dec.WriteRune(c)
			} else {
				fmt.Fprintf(&dec, "&#%d;", c)
			}
		}
		cases = append(cases, testCase{key, dec.String()})
		for _, f := range Forms(key) { // Forms too, for these keys
			cases = append(cases, testCase{key, f})
		}
		var esc strings.Builder
		for _, c := range key {
			if r1, r2 := utf16.EncodeRune(c); r1 != utf8.RuneError {
				fmt.Fprintf(&esc, `\u%04x\u%04X`, r1, r2)
			} else {
				fmt.Fprintf(&esc, `\u%04x`, c)
			}
		}
		cases = append(cases, testCase{key, esc.String()})
		for _, order := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
			var raw []byte
			for _, u := range utf16.Encode([]rune(key)) {
				raw = order.AppendUint16(raw, u)
			}
			var latin1 strings.Builder
			for _, b := range raw {
				latin1.WriteRune(rune(b))
			}
			// An ASCII-only JSON encoder of that text, in upper-case hex.
			var upper strings.Builder
			for _, c := range latin1.String() {
				if c == 0 || c >= utf8.RuneSelf {
					fmt.Fprintf(&upper, `\u%04X`, c)
				} else {
					upper.WriteRune(c)
				}
			}
			cases = append(cases, testCase{key, string(raw)}, testCase{key, latin1.String()}, testCase{key, upper.String()})
			if key == testKeys[0] { // Go's %q of the body: each NUL as \x00
				q := strconv.Quote(string(raw))
				cases = append(cases, testCase{key, q[1 : len(q)-1]})
			}
		}
	}
	for _, key := range []string{testKeys[5], `C:\Users\x\key.0123`} {
		quoted := regexp.QuoteMeta(key)
		cases = append(cases, testCase{key, url.QueryEscape(quoted)}, testCase{key, url.PathEscape(quoted)})
	}
	for _, tc := range cases {
		r := mustNew(t, tc.key)
		if got := r.String("a " + tc.text + " b"); got != "a "+Mask+" b" {
			t.Errorf("key %q as %q: got %q", tc.key, tc.text, got)
		}
	}
}

// TestMaskTakesWholeEscapes: a mask neither starts nor ends inside a
// backslash escape, so it leaves no lone backslash (String, not JSON,
// whose re-encoding would hide one).
func TestMaskTakesWholeEscapes(t *testing.T) {
	t.Parallel()
	sk := testKeys[0] // "sk-live-0123456789abcdef": \\u0073 is its s escaped twice
	slash := `0123456789ab\`
	type testCase struct {
		name, key, in, want string
	}
	for _, tc := range []testCase{
		{"escaped backslash before the form", sk, `a\\\u0073` + sk[1:] + " b", "a" + Mask + " b"},
		{"at the start of the text", sk, `\\\u0073` + sk[1:] + " b", Mask + " b"},
		{"two escaped backslashes before it", sk, `a\\\\u0073` + sk[1:], `a\\` + Mask},
		{"a key's backslash starts a \\u escape", slash, "x " + slash + "u0041 y", "x " + Mask + " y"},
		{"a key's backslash starts a short escape", slash, "x " + slash + "n y", "x " + Mask + " y"},
		{"the key's backslash escaped", slash, "x " + slash + `\u0041 y`, "x " + Mask + "u0041 y"},
		{"a key's backslash ends the text", slash, "x " + slash, "x " + Mask},
		// The key's t is the letter of the escape \t: the mask takes the
		// backslash too.
		{"the first letter of a short escape", "tok-live-0123456789", `x\tok-live-0123456789`, "x" + Mask},
		{"after an escaped backslash", "tok-live-0123456789", `x\\\tok-live-0123456789`, `x\\` + Mask},
		{"after two escaped backslashes", "tok-live-0123456789", `x\\\\tok-live-0123456789`, `x\\\\` + Mask},
	} {
		if got := mustNew(t, tc.key).String(tc.in); got != tc.want {
			t.Errorf("%s: %q -> %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestBase64MasksEveryCharacterOfTheKey: in a base64 text, the
// characters holding a bit of the key are masked, with the padding right
// after them, and the characters before them are kept. The character
// after a key that ends on a character's edge holds none of its bits,
// but a core cannot tell where the text's bytes end, so it is taken too.
// Every character of both alphabets comes as the partial one after the
// core, and every other byte follows a run the key ends.
func TestBase64MasksEveryCharacterOfTheKey(t *testing.T) {
	t.Parallel()
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	var nibbles, others []string // bytes of every high and low nibble; bytes no base64 text holds
	for b := 0; b < 256; b += 0x11 {
		nibbles = append(nibbles, string([]byte{byte(b)}))
	}
	for b := range 256 {
		if !strings.ContainsRune(alphabet+"=%", rune(b)) {
			others = append(others, string([]byte{byte(b)}))
		}
	}
	// The last bytes of the keys have every value of their two low bits.
	for _, key := range append(testKeys, "sk-test-0123456784") {
		r := mustNew(t, key)
		prefixes := append([]string{"", "usr"}, nibbles...)
		for _, n := range nibbles {
			prefixes = append(prefixes, "u"+n)
		}
		for i, prefix := range prefixes {
			for j, suffix := range append([]string{""}, nibbles...) {
				// A key of 12 bytes or more spans a whole 3-byte block, so
				// the characters at its start depend on the prefix alone
				// and those at its end on the suffix and the alignment:
				// every prefix meets the first two suffixes, and every
				// suffix the prefixes of each length ("", "usr", the
				// first one-byte and the first two-byte one), rather
				// than every pair.
				if j > 1 && i > 2 && i != 2+len(nibbles) {
					continue
				}
				for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
					b64 := enc.EncodeToString([]byte(prefix + key + suffix))
					first := 8 * len(prefix) / 6
					end := (8*(len(prefix)+len(key)) + 5) / 6
					if 8*(len(prefix)+len(key))%6 == 0 && end < len(b64) && b64[end] != '=' {
						end++
					}
					for end < len(b64) && b64[end] == '=' {
						end++
					}
					followers := []string{" end", ""}
					if end == len(b64) && prefix == "" && suffix == "" {
						followers = others
						if strings.HasSuffix(b64, "==") {
							followers = append(followers, "=") // no third padding
						}
					}
					// A run cut to start at the key's first whole character
					// (a truncated log line): nothing before it is taken.
					core := b64[(8*len(prefix)+5)/6:]
					if got := r.String("Basic " + core); got != "Basic "+Mask+b64[end:] {
						t.Fatalf("key %q, prefix %q, suffix %q: %q -> %q", key, prefix, suffix, core, got)
					}
					if got := r.String(core); got != Mask+b64[end:] {
						t.Fatalf("key %q, prefix %q, suffix %q: %q -> %q", key, prefix, suffix, core, got)
					}
					pads := []string{"="}
					if strings.Contains(b64, "=") {
						pads = append(pads, "%3D", "%3d") // in a URL
					}
					for _, pad := range pads {
						for _, f := range followers {
							in := "Basic " + strings.ReplaceAll(b64, "=", pad) + f
							want := "Basic " + b64[:first] + Mask + strings.ReplaceAll(b64[end:], "=", pad) + f
							if got := r.String(in); got != want {
								t.Fatalf("key %q, prefix %q, suffix %q: %q -> %q, want %q", key, prefix, suffix, in, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestAdjacentFormsAreAllMasked: a form that starts inside another's
// match, or inside what the mask takes around it (the base64 character
// after a core, padding, the rest of an escape its last backslash
// starts), and runs on past it is masked to its end, with the one
// before, under one mask: scanning on from the first mask's end left
// the rest of that key in the text.
func TestAdjacentFormsAreAllMasked(t *testing.T) {
	t.Parallel()
	sk := testKeys[0] // 24 bytes: its base64 at offset 0 ends on a character's edge
	slash := `0123456789ab\`
	pad1 := "pad-one-key-01" // 14 bytes: its base64 ends with one '='
	eq := "=second-key-0123"
	b64 := base64.StdEncoding.EncodeToString
	type testCase struct {
		name string
		keys []string
		in   string
	}
	for _, tc := range []testCase{
		{"base64 of the key twice", []string{sk}, b64([]byte(sk + sk))},
		{"base64 then the key", []string{sk}, b64([]byte(sk)) + sk},
		{"base64 then its hex", []string{sk}, b64([]byte(sk)) + hex.EncodeToString([]byte(sk))},
		{"base64 then a key that starts with =", []string{pad1, eq}, b64([]byte(pad1)) + eq},
		{"a backslash then a key that starts with n", []string{slash, "nsecond-key-0123"}, slash + "nsecond-key-0123"},
		{"a backslash then an escaped key", []string{slash, sk}, slash + allU(sk[:1], false) + sk[1:]},
		{"a key one byte into another", []string{"ab-key-number-one", "b-key-number-one-2"}, "ab-key-number-one-2"},
		{"a key inside another", []string{"outer-[inner-key-0123]-tail", "inner-key-0123"}, "outer-[inner-key-0123]-tail"},
	} {
		r := mustNew(t, tc.keys...)
		if got := r.String(tc.in); got != Mask {
			t.Errorf("%s: %q -> %q", tc.name, tc.in, got)
		}
	}
}

// TestLookalikesAreKept: text that only resembles a key's form is left
// as it is, since a mask there garbles what a report shows: the key with
// one letter another (not the same letter in another case, which
// TestRedactCaseAndLineBreaks masks), raw or escaped, and escapes whose \
// or % is a byte that differs from it in bit 0x20 only, as an ASCII
// letter does from its other case.
func TestLookalikesAreKept(t *testing.T) {
	t.Parallel()
	key := testKeys[0]
	r := mustNew(t, key)
	for _, in := range []string{
		"t" + key[1:],
		`\u0074` + key[1:],
		`\u0054` + key[1:],
		`|u0073` + key[1:],
		key[:5] + `|u0076` + key[6:],
		key[:5] + "\x0576" + key[6:], // 0x05 is % but for bit 0x20
	} {
		// At each shift the scan tests other pairs of the text.
		for pad := range 4 {
			in := strings.Repeat(" ", pad) + in
			if got := r.String(in); got != in {
				t.Errorf("%q -> %q", in, got)
			}
		}
	}
}

// wrapLines breaks s into lines of n characters, each ended by eol, as
// MIME (76, \r\n), PEM (64, \n) and Python's base64.encodebytes (76, \n,
// which a JSON body then carries as the escape \n) write base64.
func wrapLines(s string, n int, eol string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		b.WriteString(s[i:min(i+n, len(s))] + eol)
	}
	return b.String()
}

// A key whose letters a server changed the case of (an error that shouts,
// a gateway that lowercases what it logs, each character in any case and
// any of its forms) is the key to whoever reads it, and is masked; so is
// the base64 of a key inside a longer base64 text that is broken into
// lines, raw or JSON-escaped, wherever the breaks fall. Before, both were
// shown: the raw characters compared case-sensitively, and a line break
// inside the base64 of a key ended the match.
func TestRedactCaseAndLineBreaks(t *testing.T) {
	t.Parallel()
	for _, key := range testKeys {
		r := mustNew(t, key)
		cases := map[string]string{
			"upper":          strings.ToUpper(key),
			"lower":          strings.ToLower(key),
			"title":          strings.ToUpper(key[:1]) + strings.ToLower(key[1:]),
			"upper, escaped": allU(strings.ToUpper(key), false),
			"upper, in JSON": jsonString(strings.ToUpper(key)),
			"upper, in URL":  url.QueryEscape(strings.ToUpper(key)),
		}
		for prefix := range 3 {
			dump := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", prefix) + "x-api-key: " + key + "\r\n\r\n"))
			for _, width := range []int{4, 5, 7, 64, 76} {
				for eol, name := range map[string]string{"\r\n": "CRLF", "\n": "LF", `\n`: `JSON \n`, `\r\n`: `JSON \r\n`} {
					cases[fmt.Sprintf("base64 at offset %d, lines of %d, %s", prefix, width, name)] = wrapLines(dump, width, eol)
				}
			}
		}
		for _, f := range []string{cases["upper"], cases["lower"]} {
			if !slices.Contains(Forms(key), f) {
				t.Errorf("key %q: Forms lacks %q, so the outputs' checks do not look for it", key, f)
			}
		}
		// A break just before the key's base64 is the text's own: the
		// mask starts after it.
		dump := base64.StdEncoding.EncodeToString([]byte("abc" + key))
		if out := r.String(dump[:4] + "\n" + dump[4:]); !strings.HasPrefix(out, dump[:4]+"\n"+Mask) {
			t.Errorf("key %q: %q -> %q, want the line break kept before the mask", key, dump[:4]+"\n"+dump[4:], out)
		}
		for name, in := range cases {
			out := r.String("said: " + in + " end")
			if !strings.Contains(out, Mask) {
				t.Errorf("key %q, %s: nothing masked in %q", key, name, out)
				continue
			}
			if strings.Contains(name, "base64") {
				joined := strings.NewReplacer("\r", "", "\n", "", `\r`, "", `\n`, "").Replace(out)
				if dec := decodeAllBase64(joined); strings.Contains(dec, key) || strings.Contains(dec, key[:len(key)/2]) || strings.Contains(dec, key[len(key)/2:]) {
					t.Errorf("key %q, %s: %q decodes to %q", key, name, out, dec)
				}
			} else if strings.EqualFold(out, "said: "+in+" end") {
				t.Errorf("key %q, %s: %q", key, name, out)
			}
		}
	}
}
