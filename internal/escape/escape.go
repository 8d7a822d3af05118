// Package escape makes text that servers, suites and report files chose
// safe to print. Replies, node names, error bodies, deployment ids and
// case names reach terminals, logs and line-based reports; a control
// character among them could move the cursor, colour or clear the screen,
// forge a line ("\r gate: passed") or, with the Unicode bidirectional
// controls, show text in another order than it is. An invisible one (a
// zero-width space, a byte order mark) makes two texts that differ look
// the same, and the tag characters spell words a reader cannot see but
// a model reads. This package is the one rule for that: such characters
// are written as Go escapes them (\x1b, \u202e, \U000e0041).
//
// Invisible means Unicode's Default_Ignorable_Code_Point: what a
// renderer draws as nothing. It falls in two classes:
//
//   - Escaped everywhere (Controls), with the C0 and C1 controls and the
//     line and paragraph separators: those with no part in drawing the
//     text around them. The bidirectional controls and marks
//     (U+202A-202E, U+2066-2069, LRM, RLM, ALM), the zero-width space,
//     the word joiner and invisible operators, the soft hyphen, the byte
//     order mark, the Hangul fillers, the tag characters (U+E0000-E007F:
//     a subdivision flag, England's, is shown as a black flag and
//     escapes, the price of showing hidden text) and the code points
//     Unicode reserves as ignorable.
//   - Kept, and escaped only where two texts differ in them (Joiner):
//     the zero-width joiner and non-joiner, the combining grapheme
//     joiner, the Mongolian vowel separator and the variation
//     selectors. Emoji sequences (U+1F469 U+200D U+1F4BB), Persian and
//     the Indic scripts are drawn with them, so a transcript keeps them;
//     a failure whose texts differ where they stand writes them as
//     escapes, since "👩\u200d💻" and "👩💻" would otherwise look alike.
//
// Everything else, any script, emoji and other spaces included, is left
// as it is. It imports the standard library only, so the pure leaves use
// it.
package escape

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ansiRE matches the escape sequences a terminal interprets: CSI sequences
// (colours, cursor moves), OSC sequences (titles, hyperlinks) ended by BEL or
// ST, and two-byte escapes. Agent replies and diffs may carry them; files
// must not.
var ansiRE = regexp.MustCompile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)|\x1b[@-Z\\\\-_]")

// StripANSI removes terminal escape sequences from s: what the report
// files show of a text that holds them (a terminal shows them escaped,
// Controls). The key redactor reads a text so too (secret), since a key
// the sequences part is whole once they are gone.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRE.ReplaceAllString(s, "")
}

// Controls returns s with every character that can drive a terminal,
// reorder what it shows or hide in it written as Go escapes it (\x1b,
// \r, \u2028, \u202e, \u200b, \U000e0041), except the characters in keep
// (a transcript keeps "\n\t", a one-line message keeps nothing). A byte
// that is not UTF-8 is written \xNN. Joiners and variation selectors are
// kept (see Joiner), and everything else, any script and emoji
// included, is left as is.
func Controls(s, keep string) string {
	if !needs(s, keep) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case unsafe(r) && !strings.ContainsRune(keep, r):
			writeRune(&b, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Line is Controls keeping nothing: a value (a name, a path, a message)
// that must stay on its line.
func Line(s string) string { return Controls(s, "") }

// Needed reports whether Controls would change s: whether it holds a
// character to escape that keep does not keep.
func Needed(s, keep string) bool { return needs(s, keep) }

// Runes returns s with every rune for which which reports true written as
// Go escapes it (\u200d, \U000e0041), even one Go counts as printable
// (a variation selector), and everything else, a byte that is not UTF-8
// included, as it is. With Joiner, it shows the joiners and variation
// selectors Controls keeps, where a failure's texts differ in them:
// "👩\u200d💻" beside "👩💻".
func Runes(s string, which func(rune) bool) string {
	if !strings.ContainsFunc(s, which) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if which(r) {
			writeRune(&b, r)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Joiner reports whether r is one of the invisible characters Controls
// keeps because the text around it is drawn with it: the zero-width
// joiner and non-joiner (U+200D, U+200C), the combining grapheme joiner
// (U+034F), the Mongolian vowel separator (U+180E) or a variation
// selector (Unicode's Variation_Selector).
func Joiner(r rune) bool {
	switch {
	case r < 0x34f:
		return false
	case r == '\u034f', // combining grapheme joiner
		r >= '\u180b' && r <= '\u180f', // Mongolian free variation selectors and vowel separator
		r == '\u200c', r == '\u200d',   // zero-width non-joiner and joiner
		r >= '\ufe00' && r <= '\ufe0f', // variation selectors
		r >= 0xe0100 && r <= 0xe01ef:   // variation selectors supplement
		return true
	}
	return false
}

// Invisible reports whether r is a character this package writes as an
// escape because it cannot be seen, rather than because it drives the
// terminal: a default-ignorable code point of Unicode (Controls escapes
// it, or it is a Joiner). A diff escapes these in the text it marks as
// changed, where a change made of them would show as "{++}".
func Invisible(r rune) bool { return hidden(r) || Joiner(r) }

func writeRune(b *strings.Builder, r rune) {
	// As Go writes it: \u200b, and beyond the BMP \U000e0041, which \u
	// would cut short. ToASCII, because Go counts a variation selector
	// and a Hangul filler as printable and would write them as they are.
	q := strconv.QuoteRuneToASCII(r)
	b.WriteString(q[1 : len(q)-1])
}

func needs(s, keep string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (unsafe(r) && !strings.ContainsRune(keep, r)) {
			return true
		}
		i += n
	}
	return false
}

// unsafe reports whether Controls escapes r: a C0 or C1 control, a
// Unicode line or paragraph separator, or a hidden character.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	}
	return hidden(r)
}

// hidden reports whether r is a default-ignorable code point (Unicode's
// Default_Ignorable_Code_Point: drawn as nothing) with no part in how the
// text around it is drawn, which is every one but the joiners (Joiner).
func hidden(r rune) bool {
	switch {
	case r < 0xad:
		return false
	case r == '\u00ad', // soft hyphen
		r == '\u061c',                // Arabic letter mark
		r == '\u115f', r == '\u1160', // Hangul choseong and jungseong fillers
		r == '\u17b4', r == '\u17b5', // Khmer inherent vowels, not to be used
		r == '\u200b',                // zero-width space
		r == '\u200e', r == '\u200f', // left-to-right and right-to-left marks
		r >= '\u202a' && r <= '\u202e', // bidirectional embeddings and overrides
		r >= '\u2060' && r <= '\u206f', // word joiner, invisible operators, isolates, deprecated format controls
		r == '\u3164', r == '\uffa0',   // Hangul fillers
		r == '\ufeff',                  // byte order mark, zero-width no-break space
		r >= '\ufff0' && r <= '\ufff8', // unassigned, ignorable
		r >= 0x1bca0 && r <= 0x1bca3,   // shorthand format controls
		r >= 0x1d173 && r <= 0x1d17a,   // musical symbol format controls
		r >= 0xe0000 && r <= 0xe00ff,   // tags (U+E0020-E007F), language tag, unassigned
		r >= 0xe01f0 && r <= 0xe0fff:   // unassigned, ignorable
		return true
	}
	return false
}
