// Package escape makes text that servers, suites and report files chose
// safe to print. Replies, node names, error bodies, deployment ids and
// case names reach terminals, logs and line-based reports; a control
// character among them could move the cursor, colour or clear the screen,
// forge a line ("\r gate: passed") or, with the Unicode bidirectional
// controls, show text in another order than it is. This package is the
// one rule for that: such characters are written as Go escapes them.
// It imports the standard library only, so the pure leaves use it.
package escape

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Controls returns s with every character that can drive a terminal or
// reorder what it shows written as Go escapes it (\x1b, \r, \u2028,
// \u202e), except the characters in keep (a transcript keeps "\n\t",
// a one-line message keeps nothing). A byte that is not UTF-8 is written
// \xNN. Everything else, any script and emoji included, is left as is.
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
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
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

// unsafe reports whether r is a C0 or C1 control, a Unicode line or
// paragraph separator, or a bidirectional embedding, override or isolate.
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == '\u2028', r == '\u2029':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
