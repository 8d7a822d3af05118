package jsonkind

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestOffset: the value at a path is found where it starts, through
// objects and arrays, past strings that hold brackets, quotes and
// commas; a path that leaves the document ends at the last value on it
// that is there; a member given twice (its name in any case) is found at
// its last occurrence, the one json.Unmarshal keeps.
func TestOffset(t *testing.T) {
	t.Parallel()
	const doc = "{\"a\": {\"s\": \"x}],\\\"y\", \"b\": [1, {\"c\": -2}, null]},\r\n \"e\": 3, \"d\": 4, \"d\": 5, \"status\": 6, \"Status\": 7}"
	for _, tc := range []struct {
		name string
		path []any
		// at is the text the value starts with, the first time it
		// appears.
		at string
	}{
		{"the document", nil, "{"},
		{"a member", []any{"a"}, `{"s"`},
		{"past a string with brackets", []any{"a", "b"}, "[1"},
		{"an element", []any{"a", "b", 1, "c"}, "-2"},
		{"a null element", []any{"a", "b", 2, "status"}, "null"},
		{"an absent member", []any{"a", "z", 0}, `{"s"`},
		{"an index past the end", []any{"a", "b", 7}, "[1"},
		{"a member of a number", []any{"a", "b", 0, "x"}, "1,"},
		{"after a CRLF", []any{"e"}, "3"},
		{"given twice", []any{"d"}, "5"},
		// json.Unmarshal matches a struct's members ignoring case.
		{"given twice, in two cases", []any{"status"}, "7"},
	} {
		want := strings.Index(doc, tc.at)
		if got := Offset([]byte(doc), tc.path); got != int64(want) {
			t.Errorf("%s: Offset(%v) = %d (%q), want %d (%q)", tc.name, tc.path, got, doc[got:], want, doc[want:])
		}
	}
	// White space after a colon may hold a CR.
	if got := Offset([]byte("{\"a\":\r\n 1}"), []any{"a"}); got != 8 {
		t.Errorf("Offset past a CRLF after the colon = %d, want 8", got)
	}
	var run struct {
		Status int `json:"status"`
	}
	if err := json.Unmarshal([]byte(doc), &run); err != nil || run.Status != 7 {
		t.Errorf("json.Unmarshal took status = %d (%v), where Offset finds 7", run.Status, err)
	}
	for _, bad := range []string{"", "  ", "{", `{"a": [1,`, "[", "nul"} {
		if got := Offset([]byte(bad), []any{"a", 0}); got < 0 || got > int64(len(bad)) {
			t.Errorf("Offset(%q) = %d, outside the document", bad, got)
		}
	}
}

func TestValueError(t *testing.T) {
	t.Parallel()
	cause := errors.New("-1 is a negative duration")
	err := error(&ValueError{Path: []any{"files", 0, "cases", 12, "duration_ms"}, Offset: 9, Err: cause})
	if got, want := err.Error(), "files[0].cases[12].duration_ms: -1 is a negative duration"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not unwrapped")
	}
	if ve := At([]byte(`{"files": [{"x": 1}, {"duration_ms": -1}]}`), []any{"files", 1, "duration_ms"}, cause); ve.Offset != 37 || ve.Err != cause {
		t.Errorf("At = %+v, want the cause at offset 37", ve)
	}
	if got := PathString([]any{0, "a"}); got != "[0].a" {
		t.Errorf("PathString = %q", got)
	}
}
