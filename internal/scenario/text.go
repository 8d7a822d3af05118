package scenario

import (
	"bytes"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Text returns the source of a suite file as UTF-8 without a byte order
// mark, the form every loader, position and echoed line works from: a
// file saved as UTF-16 with its byte order mark (Windows editors,
// PowerShell's > and Out-File) is transcoded, and a UTF-8 byte order mark
// (Notepad) is dropped. Lines and columns of the text are unchanged. Any
// other src is returned as it is. yaml.v3 reads both forms by itself;
// Gherkin reads neither (a feature file saved with a BOM was "invalid
// Gherkin" at its first line, which looked right), and the lines echoed
// under a problem came out as raw UTF-16 bytes. The JSON reports the
// CLI reads back (gate, merge, history, --rerun-failed, ...) are read
// through it too: encoding/json reads neither form.
func Text(src []byte) []byte {
	switch {
	case bytes.HasPrefix(src, []byte{0xef, 0xbb, 0xbf}):
		return src[3:]
	case bytes.HasPrefix(src, []byte{0xff, 0xfe}):
		return fromUTF16(src[2:], func(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 })
	case bytes.HasPrefix(src, []byte{0xfe, 0xff}):
		return fromUTF16(src[2:], func(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) })
	}
	return src
}

// fromUTF16 transcodes UTF-16 code units, read by unit, to UTF-8. A
// lone surrogate or a last odd byte becomes U+FFFD.
func fromUTF16(b []byte, unit func([]byte) uint16) []byte {
	units := make([]uint16, 0, len(b)/2)
	for ; len(b) >= 2; b = b[2:] {
		units = append(units, unit(b))
	}
	out := make([]byte, 0, len(units)*3/2+len(b)*utf8.UTFMax)
	for _, r := range utf16.Decode(units) {
		out = utf8.AppendRune(out, r)
	}
	if len(b) == 1 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out
}

// notTextRune reports whether r is a character no suite file may hold:
// a control character other than tab, line feed and carriage return (C0,
// DEL, C1 but NEL), or U+FFFE or U+FFFF. yaml.v3 refuses these written
// raw; notText refuses them in a feature file.
func notTextRune(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' ||
		r >= 0x7f && r <= 0x9f && r != 0x85 ||
		r == 0xfffe || r == 0xffff
}

// notNameRune reports whether r may not be part of a suite's or a
// scenario's name: what no file may hold, and line ends too, since a name
// is one line in list, reports and --name. YAML escapes ("\a", "\n") and
// a Gherkin Examples cell ("\n") can put them in a name that the file
// itself does not hold. A tab may stay: a feature file may hold one.
func notNameRune(r rune) bool {
	return notTextRune(r) || r == '\n' || r == '\r' || r == 0x85
}

// badName returns a diagnostic's message and hint for the first
// character of name that a name may not hold (notNameRune), what naming
// the name ("scenario name"); ok when there is none. It is the one rule
// of both loaders, which report it at the name's scalar or the Examples
// cell it came from. A name is UTF-8: both loaders refuse a file that is
// not, and no YAML escape makes a name that is not.
func badName(what, name string) (msg, hint string, ok bool) {
	for _, r := range name {
		if notNameRune(r) {
			return fmt.Sprintf("%s holds control character %U, which is not allowed", what, r),
				"a name is printed on one line in list, reports and terminals and matched by --name; write it without control characters or line ends", false
		}
	}
	return "", "", true
}
