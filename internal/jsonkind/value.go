package jsonkind

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A ValueError is a value of a JSON document that decodes, but that the
// document's format does not allow (a negative duration, a status no case
// has). Path names it as JavaScript would (files[0].cases[2].status),
// and Offset is where it starts in the document (Offset), so that the
// reader of the file is told its line and column.
type ValueError struct {
	Path   []any
	Offset int64
	Err    error
}

// At is err as the problem of the value at path in data, placed there.
func At(data []byte, path []any, err error) *ValueError {
	return &ValueError{Path: path, Offset: Offset(data, path), Err: err}
}

func (e *ValueError) Error() string { return PathString(e.Path) + ": " + e.Err.Error() }
func (e *ValueError) Unwrap() error { return e.Err }

// PathString writes a path of member names and array indices as
// JavaScript does: files[0].cases[2].status.
func PathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, p)
		}
	}
	return b.String()
}

// Offset is the offset in data, a JSON document, of the first byte of the
// value at path (member names and array indices); where the path leaves
// the document (a member that is absent, an element that is null), of the
// last value on it that is there. A member is found where json.Unmarshal
// into a struct takes it from: its name matched ignoring case, and when
// given twice, its last occurrence.
func Offset(data []byte, path []any) int64 {
	off := int64(0)
	for {
		off = skipSpace(data, off)
		if len(path) == 0 || off >= int64(len(data)) {
			return off
		}
		next, ok := memberOffset(data, off, path[0])
		if !ok {
			return off
		}
		off, path = next, path[1:]
	}
}

// memberOffset is the offset of the value of member key (a string) of the
// object, or of element key (an int) of the array, that starts at off.
func memberOffset(data []byte, off int64, key any) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	found, ok := int64(0), false
	for i := 0; dec.More(); i++ {
		var name any = i
		if tok == json.Delim('{') {
			if name, err = dec.Token(); err != nil {
				return 0, false
			}
		} else if tok != json.Delim('[') {
			return 0, false
		}
		start := off + dec.InputOffset()
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, false
		}
		if sameMember(name, key) {
			found, ok = start, true
		}
	}
	return found, ok
}

// sameMember reports whether name, a member name or an array index of
// the document, is key: an index equal, a name equal ignoring case, as
// json.Unmarshal matches a struct's fields.
func sameMember(name, key any) bool {
	n, isName := name.(string)
	k, isKey := key.(string)
	if isName && isKey {
		return strings.EqualFold(n, k)
	}
	return name == key
}

// skipSpace is the offset of the first byte at or after off that is not
// white space, a colon or a comma: where the value after a token starts.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
		off++
	}
	return off
}
