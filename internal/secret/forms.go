package secret

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// alt is one way of writing one character of a key (or of its base64).
// fold makes ASCII letters compare case-insensitively: the hex digits of
// \u00e9 and %C3 may come in either case. The letters of a key in
// another case are alternatives of their own (caseUnit).
type alt struct {
	s    string
	fold bool
}

// unit is every way of writing one character.
type unit []alt

// pattern is a key (or a base64 rendering of it) as a sequence of units.
type pattern struct {
	units []unit
	// b64 patterns also take the partial base64 characters around the
	// core (which carry a few bits of the key) and the padding.
	b64, lead bool
}

// regexMeta are the characters regexp.QuoteMeta escapes.
const regexMeta = `\.+*?()|[]{}^$`

// htmlRefs are the named character references XML and HTML writers use,
// and the zero-padded one of PHP. Every character but a letter or a digit
// may also come as a numeric reference (numericRefs).
var htmlRefs = map[byte][]string{
	'&':  {"&amp;"},
	'<':  {"&lt;"},
	'>':  {"&gt;"},
	'"':  {"&quot;"},
	'\'': {"&apos;", "&#039;"},
}

// keyPatterns returns the patterns of a key: its characters, its hex
// digits, and the base64 cores at each alignment and alphabet.
func keyPatterns(key string) []pattern {
	pats := []pattern{{units: textUnits(key)}, {units: hexUnits(key)}, {units: utf16Units(key, false)}, {units: utf16Units(key, true)}}
	for _, v := range caseVariants(key) {
		pats = append(pats, pattern{units: textUnits(v)})
	}
	seen := map[string]bool{}
	for off := range 3 {
		core, lead := base64Core(key, off)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			c := core
			if enc == base64.URLEncoding {
				c = urlAlphabet.Replace(core)
			}
			if c == "" || seen[c] {
				continue
			}
			seen[c] = true
			units := make([]unit, 0, len(c))
			units = append(units, asciiUnit(c[0]))
			for i := 1; i < len(c); i++ {
				units = append(units, wrappedUnit(c[i]))
			}
			pats = append(pats, pattern{units: units, b64: true, lead: lead})
		}
	}
	return pats
}

// urlAlphabet turns standard base64 into the URL-safe alphabet's.
var urlAlphabet = strings.NewReplacer("+", "-", "/", "_")

// base64Core is the part of the base64 of key, placed off bytes into a
// longer text, whose characters depend on the key's bytes alone. lead
// reports whether a character before it holds bits of the key too.
func base64Core(key string, off int) (core string, lead bool) {
	enc := base64.StdEncoding.EncodeToString(append(make([]byte, off), key...))
	startBit, endBit := 8*off, 8*(off+len(key))
	first := (startBit + 5) / 6 // first character wholly inside the key
	last := endBit / 6          // one past the last one
	if last <= first {
		return "", false
	}
	return enc[first:last], startBit%6 != 0
}

// textUnits splits a key into characters: a rune of valid UTF-8, else a
// single byte.
func textUnits(key string) []unit {
	out := make([]unit, 0, len(key))
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		if r == utf8.RuneError && size <= 1 {
			out = append(out, byteUnit(key[i]))
			i++
			continue
		}
		if size == 1 {
			out = append(out, asciiUnit(key[i]))
		} else {
			out = append(out, charUnit(key[i:i+size]))
		}
		i += size
	}
	return out
}

// caseVariants are the key in the cases a text is put in whole, other
// than its own: a server that shouts an error, a gateway that lowercases
// what it logs, a message that capitalises its first word. Each shows
// the key to whoever tries the few cases of its letters. Keys are
// case-sensitive, so only the text's case is loosened, never the base64
// or the UTF-16 of a key, which an encoder writes from the key's own
// bytes. Whole-text cases, not every mix of them: a letter that may come
// in either case at every place would let the text's common pairs of
// letters through the scan's filter (inner), and the clean scan of every
// reply would cost several times as much.
func caseVariants(key string) []string {
	var out []string
	upper, lower := strings.ToUpper(key), strings.ToLower(key)
	r, n := utf8.DecodeRuneInString(lower)
	title := string(unicode.ToUpper(r)) + lower[n:]
	for _, v := range []string{upper, lower, title} {
		if v != key && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// lineBreaks are the line ends a wrapped base64 text holds between its
// characters: MIME's and PEM's, raw or JSON-escaped (Python's
// base64.encodebytes breaks every 76 characters, and a JSON body carries
// its \n as an escape).
var lineBreaks = []string{"\n", "\r\n", `\n`, `\r\n`}

// wrappedUnit is a base64 character c of a key's base64 core after its
// first: c in any of its forms, or c at the start of a new line, so that
// a core a line break splits is found wherever the break falls.
func wrappedUnit(c byte) unit {
	e := &wrappedUnits[c]
	e.once.Do(func() {
		u := append(unit(nil), asciiUnit(c)...)
		for _, br := range lineBreaks {
			u = append(u, alt{s: br + string(c)})
		}
		e.u = u
		e.info = newUnitInfo(u)
	})
	return e.u
}

// hexUnits are the hex digits of a key's bytes, in either case (a debug
// dump, a hash-like rendering of a header): two digits per byte, each
// only itself, since hex has no escaped forms of its own.
func hexUnits(key string) []unit {
	out := make([]unit, 0, 2*len(key))
	for _, b := range []byte(key) {
		out = append(out, hexDigitUnits[b>>4], hexDigitUnits[b&0xf])
	}
	return out
}

// hexDigitUnits are the units of the 16 hex digits, shared by every
// key's hex pattern as asciiUnits are: a table's build (unitEdges) does
// the work of a unit once, and a key's hex digits are 16 units at most
// where each of its 2·len(key) digits was one of its own. Never written.
var hexDigitUnits = func() (out [16]unit) {
	for i, d := range "0123456789abcdef" {
		out[i] = unit{{s: string(d), fold: true}}
	}
	return out
}()

// utf16Units are the UTF-16 code units of a key, little- or big-endian:
// a server or gateway that answers in UTF-16 (a charset=utf-16 error
// page) carries an ASCII key as its bytes interleaved with NULs, which
// none of the text forms match. Text that passes such bytes on reads each
// as a Latin-1 character (latin1Forms): raw, as the UTF-8 of that
// character, or escaped, so a JSON string or an error message quoting the
// body holds the key too.
func utf16Units(key string, bigEndian bool) []unit {
	out := make([]unit, 0, len(key))
	for _, cu := range utf16.Encode([]rune(key)) {
		if cu < utf8.RuneSelf {
			e := &asciiUTF16Units[cu][b2i(bigEndian)]
			e.once.Do(func() { e.u = utf16Unit(cu, bigEndian) })
			out = append(out, e.u)
		} else {
			out = append(out, utf16Unit(cu, bigEndian))
		}
	}
	return out
}

// asciiUTF16Units are the UTF-16 units of the ASCII characters, in each
// byte order, built once like asciiUnits.
var asciiUTF16Units [utf8.RuneSelf][2]struct {
	once sync.Once
	u    unit
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// utf16Unit lists the forms of one UTF-16 code unit: every form of its
// first byte followed by every form of its second.
func utf16Unit(cu uint16, bigEndian bool) unit {
	pair := utf16Bytes(cu, bigEndian)
	var u unit
	for _, a := range latin1Forms(pair[0]) {
		for _, b := range latin1Forms(pair[1]) {
			u = append(u, alt{s: a + b})
		}
	}
	return u
}

// utf16Bytes are the two bytes of the code unit cu in the byte order
// asked for.
func utf16Bytes(cu uint16, bigEndian bool) [2]byte {
	if bigEndian {
		return [2]byte{byte(cu >> 8), byte(cu)}
	}
	return [2]byte{byte(cu), byte(cu >> 8)}
}

// latin1Forms are the ways a text writes the byte b of a UTF-16 body: the
// byte itself, the Latin-1 character b in UTF-8, and its escapes: JSON's
// \u00XX (either hex case; a JSON encoder writes a NUL so, an ASCII-only
// one every byte past 0x7f) and Go's \x00 for a NUL in a quoted message.
// An ASCII character is also written as itself.
func latin1Forms(b byte) []string {
	out := []string{string([]byte{b})}
	switch {
	case b == 0:
		return append(out, `\u0000`, `\x00`)
	case b >= utf8.RuneSelf:
		out = append(out, string(rune(b)), fmt.Sprintf(`\u%04x`, b), fmt.Sprintf(`\u%04X`, b))
	}
	return out
}

// byteUnit is a byte that is not valid UTF-8: JSON cannot carry it, a URL
// can.
func byteUnit(b byte) unit {
	return unit{{s: string([]byte{b})}, {s: fmt.Sprintf("%%%02x", b), fold: true}}
}

// asciiUnits are the units of the ASCII characters, each built once: the
// forms of a character do not depend on the key, keys are mostly ASCII,
// and building them again for every character of every key was most of
// New's time (a few hundred strings per character). Units are never
// written after they are built, so the patterns of every redactor share
// them.
var asciiUnits [utf8.RuneSelf]sharedUnit

// wrappedUnits are wrappedUnit of the ASCII characters, built once as
// asciiUnits are.
var wrappedUnits [utf8.RuneSelf]sharedUnit

// sharedUnit is a unit built once and shared by the patterns of every
// key, with its unitInfo: a table's build takes the pairs inside its
// forms from there, where working them out again for every table was a
// quarter of New's time under the race detector. Never written after its
// once.
type sharedUnit struct {
	once sync.Once
	u    unit
	info *unitInfo
}

// sharedInfo is the unitInfo of u when u is one of asciiUnits or
// wrappedUnits (both start with the character itself), nil otherwise.
func sharedInfo(u unit) *unitInfo {
	if len(u) == 0 || len(u[0].s) != 1 || u[0].fold || u[0].s[0] >= utf8.RuneSelf {
		return nil
	}
	c := u[0].s[0]
	if a := asciiUnit(c); &a[0] == &u[0] {
		return asciiUnits[c].info
	}
	if w := wrappedUnit(c); &w[0] == &u[0] {
		return wrappedUnits[c].info
	}
	return nil
}

// asciiUnit is charUnit of the ASCII character c.
func asciiUnit(c byte) unit {
	e := &asciiUnits[c]
	e.once.Do(func() {
		e.u = charUnit(string(rune(c)))
		e.info = newUnitInfo(e.u)
	})
	return e.u
}

// charUnit lists the forms of one character (a whole UTF-8 rune).
func charUnit(ch string) unit {
	set := newAltSet(ch)
	level0 := []string{ch}
	if len(ch) == 1 && strings.IndexByte(regexMeta, ch[0]) >= 0 {
		level0 = append(level0, `\`+ch)
	}
	for _, s := range level0 {
		set.add(s)
		for _, v := range jsonForms(s) {
			set.add(v)
		}
		for _, v := range urlForms(s) {
			set.add(v)
		}
	}
	if len(ch) == 1 {
		for _, v := range htmlRefs[ch[0]] {
			set.add(v)
		}
	}
	if r, _ := utf8.DecodeRuneInString(ch); numericRef(r) {
		set.add(fmt.Sprintf("&#%d;", r))
		set.add(fmt.Sprintf("&#x%x;", r))
	}
	// A second JSON layer: text already escaped once, inside a JSON
	// string again (a reply quoting a JSON document, a report of a body).
	for _, a := range append([]alt(nil), set.alts...) {
		if !strings.ContainsAny(a.s, `\"/`) {
			continue
		}
		for _, enc := range jsonLayers {
			set.add(enc.Replace(a.s))
		}
	}
	return set.alts
}

// numericRef reports whether HTML and XML writers may write r as a
// numeric character reference (&#43; &#x2b;): Go's html/template writes +
// so in text, and = ` and a space in an unquoted attribute; OWASP ESAPI
// every ASCII character but a letter, a digit and , . - _ and a space;
// .NET every Latin-1 letter and every character beyond the BMP. A letter
// or a digit of ASCII is never written so.
func numericRef(r rune) bool {
	return r >= utf8.RuneSelf || !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
}

// jsonLayers are the ways a JSON encoder writes text that holds
// backslashes, quotes and slashes: Go and most encoders, PHP (which also
// escapes /), and encoders that write \u escapes only.
var jsonLayers = []*strings.Replacer{
	strings.NewReplacer(`\`, `\\`, `"`, `\"`),
	strings.NewReplacer(`\`, `\\`, `"`, `\"`, `/`, `\/`),
	strings.NewReplacer(`\`, `\u005c`, `"`, `\u0022`),
}

// jsonForms is every way to write s inside a JSON string, each rune
// either as it is or escaped (\uXXXX, a short escape, \/ for /).
func jsonForms(s string) []string {
	out := []string{""}
	for _, r := range s {
		opts := []string{string(r)}
		switch r {
		case '"':
			opts = append(opts, `\"`)
		case '\\':
			opts = append(opts, `\\`)
		case '/':
			opts = append(opts, `\/`)
		case '\b':
			opts = append(opts, `\b`)
		case '\f':
			opts = append(opts, `\f`)
		case '\n':
			opts = append(opts, `\n`)
		case '\r':
			opts = append(opts, `\r`)
		case '\t':
			opts = append(opts, `\t`)
		}
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			opts = append(opts, fmt.Sprintf(`\u%04x\u%04x`, r1, r2))
		} else {
			opts = append(opts, fmt.Sprintf(`\u%04x`, r))
		}
		out = product(out, opts)
	}
	return out
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// urlForms is every way to write s in a URL or form body: each byte as it
// is or as %XX, a space also as +.
func urlForms(s string) []string {
	out := []string{""}
	for i := 0; i < len(s); i++ {
		opts := []string{s[i : i+1], fmt.Sprintf("%%%02x", s[i])}
		if s[i] == ' ' {
			opts = append(opts, "+")
		}
		out = product(out, opts)
	}
	return out
}

func product(prefixes, opts []string) []string {
	out := make([]string, 0, len(prefixes)*len(opts))
	for _, p := range prefixes {
		for _, o := range opts {
			out = append(out, p+o)
		}
	}
	return out
}

// altSet collects distinct alternatives; the raw character never folds.
type altSet struct {
	raw  string
	seen map[string]bool
	alts []alt
}

func newAltSet(raw string) *altSet {
	return &altSet{raw: raw, seen: map[string]bool{}}
}

func (s *altSet) add(v string) {
	k := v
	if v != s.raw {
		k = strings.ToLower(v)
	}
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	s.alts = append(s.alts, alt{s: v, fold: v != s.raw})
}

// Forms returns the canonical renderings of key in the forms the package
// guarantees to find: raw, JSON-escaped (Go, PHP, all-\u in both hex
// cases, and escaped twice), URL-encoded (query, path, all-%XX in both
// cases), regex-quoted (raw and in JSON), base64 (standard, URL, padded and
// raw, and PHP-escaped), hex (both cases), HTML-escaped (as Go's
// html/template writes text and an unquoted attribute, as .NET and OWASP
// ESAPI write text), UTF-16 (both byte orders, its bytes as Latin-1 characters,
// the NULs raw or as \u0000), the key in upper and in lower case, and
// its base64 broken across two lines (raw and JSON-escaped). Tests and
// the fuzz target check that no output holds any of them.
func Forms(key string) []string {
	quoted := regexp.QuoteMeta(key)
	b := []byte(key)
	forms := []string{
		key,
		jsonString(key),
		phpString(key),
		allU(key, false),
		allU(key, true),
		jsonString(jsonString(key)),
		url.QueryEscape(key),
		url.PathEscape(key),
		allPct(key, false),
		allPct(key, true),
		quoted,
		jsonString(quoted),
		hex.EncodeToString(b),
		strings.ToUpper(hex.EncodeToString(b)),
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		phpString(base64.StdEncoding.EncodeToString(b)),
		goHTML.Replace(key),
		goHTMLAttr.Replace(key),
		dotNetHTML(key),
		esapiHTML(key),
	}
	for _, be := range []bool{false, true} {
		forms = append(forms, utf16Text(key, be, "\x00"), utf16Text(key, be, `\u0000`))
	}
	b64 := base64.StdEncoding.EncodeToString(b)
	forms = append(forms, strings.ToUpper(key), strings.ToLower(key),
		b64[:len(b64)/2]+"\r\n"+b64[len(b64)/2:], b64[:len(b64)/2]+`\n`+b64[len(b64)/2:])
	seen := map[string]bool{}
	out := forms[:0]
	for _, f := range forms {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// goHTML and goHTMLAttr write text as Go's html/template does in an
// element's text and in an unquoted attribute value.
var (
	goHTML     = strings.NewReplacer(`"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")
	goHTMLAttr = strings.NewReplacer(`"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;",
		" ", "&#32;", "=", "&#61;", "`", "&#96;")
)

// dotNetHTML writes s as .NET's WebUtility.HtmlEncode does: the
// characters XML escapes by name (' as &#39;), and every character past
// ASCII as a decimal reference.
func dotNetHTML(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			if r < utf8.RuneSelf {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, "&#%d;", r)
			}
		}
	}
	return b.String()
}

// esapiHTML writes s as OWASP ESAPI's encodeForHTML does: every ASCII
// character but a letter, a digit and , . - _ and a space as a hex
// reference.
func esapiHTML(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf && numericRef(r) && !strings.ContainsRune(",.-_ ", r) {
			fmt.Fprintf(&b, "&#x%x;", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// utf16Text writes key in UTF-16 as a text that passes its bytes on as
// Latin-1 characters: each NUL as nul, every other byte as the UTF-8 of
// its character (so the form is UTF-8, as the texts tests plant it in
// must be).
func utf16Text(key string, bigEndian bool, nul string) string {
	var b strings.Builder
	for _, cu := range utf16.Encode([]rune(key)) {
		for _, c := range utf16Bytes(cu, bigEndian) {
			if c == 0 {
				b.WriteString(nul)
			} else {
				b.WriteRune(rune(c))
			}
		}
	}
	return b.String()
}

// jsonString is the inside of the JSON string literal encoding/json writes
// for s.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}

// phpString is jsonString as PHP's json_encode writes it, with \/ for /.
func phpString(s string) string {
	return strings.ReplaceAll(jsonString(s), "/", `\/`)
}

// allU writes every rune of s as \uXXXX.
func allU(s string, upper bool) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	if upper {
		return strings.ReplaceAll(strings.ToUpper(b.String()), `\U`, `\u`)
	}
	return b.String()
}

// allPct writes every byte of s as %XX.
func allPct(s string, upper bool) string {
	format := "%%%02x"
	if upper {
		format = "%%%02X"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}
