package assert

import "testing"

// TestCheckPattern: lint's verdict on a pattern is the one it gets at run
// time, references standing for literal text, in the same words whatever
// the file format.
func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, pattern, want string
	}{
		{"valid", `^reference ([A-Z0-9]{6})$`, ""},
		{"valid around a reference", `^${ref}\.(\d+)$`, ""},
		{"a reference is never pattern syntax", `${a}+`, ""},
		{"literal ${", `$${x}`, ""},
		// Checked as it runs, the reference expanded: a name of a group.
		{"a reference in a group's name", `(?P<${name}>\d+)`, ""},
		{"unclosed group", `(19:00`, "invalid regular expression \"(19:00\": missing closing ): `(19:00`"},
		{"unclosed class", `[a`, "invalid regular expression \"[a\": missing closing ]: `[a`"},
		{"broken around a reference", `(${party}`, `invalid regular expression "(${party}": missing closing )`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckPattern(tc.pattern)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("CheckPattern(%q) = %q, want %q", tc.pattern, got, tc.want)
			}
		})
	}
}
