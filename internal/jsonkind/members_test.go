package jsonkind

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSameMember: an object at one of the paths that names a member
// twice, as json.Unmarshal matches names (equal, or equal ignoring case
// with Unicode's folding), is found at its second name; objects
// elsewhere, strings that hold quotes, brackets and commas, and members
// of other objects with the same name are not such a member.
func TestSameMember(t *testing.T) {
	t.Parallel()
	// The paths in both orders: the deepest one is not always last.
	paths := [][]any{{}, {"run"}, {"deployments", AnyIndex}}
	reversed := slices.Clone(paths)
	slices.Reverse(reversed)
	for _, tc := range []struct {
		name, doc string
		// path is the member found, "" for none; at is the text the
		// second name starts with.
		path, at string
	}{
		{"none", `{"run": {"status": "passed"}, "deployments": [{"id": "a", "after_id": "a"}]}`, "", ""},
		{"the same name", `{"run": {"status": "failed", "status": "passed"}}`, "run.status", `"status": "passed"`},
		{"another case", `{"deployments": [{"id": "a"}, {"id": "b", "ID": "c"}]}`, "deployments[1].ID", `"ID"`},
		{"Unicode folding", `{"run": {"status": "failed", "ſtatus": "passed"}}`, "run.ſtatus", `"ſtatus"`},
		{"an escaped name", `{"deployments": [{"id": "a", "\u0049d": "b"}]}`, "deployments[0].Id", `"\u0049d"`},
		{"the document", `{"run": {}, "Run": {}}`, "Run", `"Run"`},
		{"a path spelt in another case", `{"Deployments": [{"id": "a", "Id": "b"}]}`, "Deployments[0].Id", `"Id"`},
		{"names in strings", `{"run": {"s": "\"status\": {[,\\", "status": "x", "t": ["status", {"status": 1}]}}`, "", ""},
		{"objects elsewhere", `{"files": [{"metadata": {"Name": 1, "name": 2}}], "run": {"state": {"a": 1, "A": 2}}}`, "", ""},
		{"an object where the path has an array", `{"deployments": {"a": {"id": "a", "ID": "b"}}}`, "", ""},
		{"one name in two objects", `{"deployments": [{"id": "a"}, {"id": "b"}], "id": "c"}`, "", ""},
		{"after nested values", `{"deployments": [{"agent": {"x": [1, {"id": 2}]}, "id": "a", "Agent": "b"}]}`, "deployments[0].Agent", `"Agent"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := SameMember([]byte(tc.doc), paths...)
			if rerr := SameMember([]byte(tc.doc), reversed...); fmt.Sprint(rerr) != fmt.Sprint(err) {
				t.Errorf("SameMember with the paths reversed: %v, in order: %v", rerr, err)
			}
			if tc.path == "" {
				if err != nil {
					t.Fatalf("SameMember: %v", err)
				}
				return
			}
			var ve *ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("SameMember: %v, want a ValueError at %s", err, tc.path)
			}
			if got := PathString(ve.Path); got != tc.path {
				t.Errorf("path %s, want %s", got, tc.path)
			}
			if want := int64(strings.LastIndex(tc.doc, tc.at)); ve.Offset != want {
				t.Errorf("offset %d (%.12q), want %d", ve.Offset, tc.doc[ve.Offset:], want)
			}
		})
	}
}

// TestSameMemberNotADocument: a name whose escape does not decode is
// no finding of SameMember's; the decoder of the document says what is
// wrong with it.
func TestSameMemberNotADocument(t *testing.T) {
	t.Parallel()
	if err := SameMember([]byte(`{"a\x": 1, "a\x": 2}`), []any{}); err != nil {
		t.Errorf("SameMember = %v, want nil", err)
	}
}

// TestDepth: brackets inside strings, escaped quotes and escaped
// backslashes do not count; arrays and objects do.
func TestDepth(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		`1`:                            0,
		`"[[{"`:                        0,
		`[1]`:                          1,
		`{"a":[1,{"b":[]}]}`:           4,
		`["\"[[", "\\", [["x\\\"["]]]`: 3,
		`[[],[[]],[]]`:                 3,
		`["\"", "["]`:                  1,
	} {
		if got := Depth([]byte(in)); got != want {
			t.Errorf("Depth(%s) = %d, want %d", in, got, want)
		}
	}
}
