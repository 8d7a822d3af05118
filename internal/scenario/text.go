package scenario

import (
	"bytes"
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
