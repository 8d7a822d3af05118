package escape

import "testing"

func TestControls(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, keep, want string
	}{
		{"plain text is untouched", "Booked for 4 at 7pm 🍝 — café", "", "Booked for 4 at 7pm 🍝 — café"},
		{"an escape sequence", "dep-\x1b[2J\x1b]0;title\x07", "", `dep-\x1b[2J\x1b]0;title\a`},
		{"a carriage return cannot forge a line", "books\rgate: passed", "", `books\rgate: passed`},
		{"newline and tab escaped when not kept", "a\nb\tc", "", `a\nb\tc`},
		{"newline and tab kept", "a\nb\tc\r", "\n\t", "a\nb\tc\\r"},
		{"C1 controls", "x\u0085y\u009bz", "", `x\u0085y\u009bz`},
		{"line and paragraph separators", "a\u2028b\u2029c", "", `a\u2028b\u2029c`},
		{"bidirectional overrides and isolates", "abc\u202edcba\u2066x\u2069", "", `abc\u202edcba\u2066x\u2069`},
		{"invalid UTF-8", "ok\xff\xfeok", "", `ok\xff\xfeok`},
		{"quotes and backslashes stay", `say "hi" \o/`, "", `say "hi" \o/`},
		{"delete", "a\x7fb", "", `a\x7fb`},
		{"C0 and C1 bounds", "\x1f \u009f", "", `\x1f \u009f`},
		{"printable neighbours of the controls stay", "~ \u00a0 \u2027 \u202f \u2065 \u206a", "", "~ \u00a0 \u2027 \u202f \u2065 \u206a"},
		{"first embedding and isolate", "\u202ax\u2067y\u2068", "", `\u202ax\u2067y\u2068`},
		{"a replacement character sent as such stays", "a\ufffdb", "", "a\ufffdb"},
		{"replacement character and invalid byte", "\ufffd\xef", "", "\ufffd\\xef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Controls(tc.in, tc.keep)
			if got != tc.want {
				t.Errorf("Controls(%q, %q) = %q, want %q", tc.in, tc.keep, got, tc.want)
			}
			if Needed(tc.in, tc.keep) != (got != tc.in) {
				t.Errorf("Needed(%q, %q) = %v, but Controls changed it: %v", tc.in, tc.keep, !(got != tc.in), got != tc.in)
			}
		})
	}
}

func FuzzControls(f *testing.F) {
	f.Add("a\x1b[31mb\rc\u202e", "\n")
	f.Fuzz(func(t *testing.T, s, keep string) {
		out := Controls(s, keep)
		if needs(out, keep) {
			t.Fatalf("Controls(%q, %q) = %q still holds characters to escape", s, keep, out)
		}
		if !needs(s, keep) && out != s {
			t.Fatalf("Controls changed %q, which needs no escaping", s)
		}
	})
}
