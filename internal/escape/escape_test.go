package escape

import (
	"slices"
	"testing"
	"unicode"
)

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
		{"printable neighbours of the controls stay", "~ \u00a0 \u00ac \u00ae \u2027 \u202f \u205f \u2070", "", "~ \u00a0 \u00ac \u00ae \u2027 \u202f \u205f \u2070"},
		{"first embedding and isolate", "\u202ax\u2067y\u2068", "", `\u202ax\u2067y\u2068`},
		{"a replacement character sent as such stays", "a\ufffdb", "", "a\ufffdb"},
		{"replacement character and invalid byte", "\ufffd\xef", "", "\ufffd\\xef"},
		{"zero-width space", "Hel\u200blo", "", `Hel\u200blo`},
		{"byte order mark", "\ufeffHello", "\n\t", `\ufeffHello`},
		{"word joiner and invisible operators", "a\u2060b\u2062c\u2064d", "", `a\u2060b\u2062c\u2064d`},
		{"soft hyphen", "reser\u00advation", "", `reser\u00advation`},
		{"bidirectional marks", "a\u200eb\u200fc\u061cd", "", `a\u200eb\u200fc\u061cd`},
		{"tag characters spelling hidden words", "ok\U000e0069\U000e0067\U000e006e\U000e007f", "", `ok\U000e0069\U000e0067\U000e006e\U000e007f`},
		{"language tag and the bounds of the tags block", "\U000e0001\U000e0000\U000e00ff", "", `\U000e0001\U000e0000\U000e00ff`},
		{"Hangul fillers", "\u3164\uffa0\u115f\u1160", "", `\u3164\uffa0\u115f\u1160`},
		{"deprecated format controls and reserved ignorables", "\u206a\u206f\ufff0\ufff8\U000e01f0\U000e0fff", "",
			`\u206a\u206f\ufff0\ufff8\U000e01f0\U000e0fff`},
		{"an emoji ZWJ sequence stays", "\U0001F469\u200d\U0001F4BB and \u2764\ufe0f", "", "\U0001F469\u200d\U0001F4BB and \u2764\ufe0f"},
		{"Persian with a non-joiner stays", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"},
		{"the other joiners stay", "\u034f\u180b\u180e\u180f\U000e0100\U000e01ef", "", "\u034f\u180b\u180e\u180f\U000e0100\U000e01ef"},
		{"visible format characters stay", "\u0600\u06dd\ufff9\U00013430", "", "\u0600\u06dd\ufff9\U00013430"},
		{"other spaces stay", "19\u202fh\u00a0\u3000", "", "19\u202fh\u00a0\u3000"},
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

// TestRunesOfJoiners checks Runes with Joiner, as a failure whose texts
// differ in joiners shows them: each joiner and variation selector
// escaped, Go's printable ones too, and nothing else touched.
func TestRunesOfJoiners(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"an emoji ZWJ sequence", "\U0001F469\u200d\U0001F4BB", "\U0001F469\\u200d\U0001F4BB"},
		{"non-joiner", "\u0645\u06cc\u200c\u062e", "\u0645\u06cc\\u200c\u062e"},
		{"variation selectors", "\u2764\ufe0f \u845b\U000e0100 \u2764\ufe00", "\u2764\\ufe0f \u845b\\U000e0100 \u2764\\ufe00"},
		{"grapheme joiner and Mongolian", "a\u034fb\u180bc\u180ed\u180f", `a\u034fb\u180bc\u180ed\u180f`},
		{"controls and hidden characters are not its business", "a\x1b\u200b\xffb", "a\x1b\u200b\xffb"},
		{"invalid UTF-8 kept beside a joiner", "\xff\u200d\xfe", "\xff\\u200d\xfe"},
		{"neighbours stay", "\u034e\u0350\u180a\u1810\u200a\u2010\ufdff\ufe10\U000e00ff\U000e01f0", "\u034e\u0350\u180a\u1810\u200a\u2010\ufdff\ufe10\U000e00ff\U000e01f0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Runes(tc.in, Joiner); got != tc.want {
				t.Errorf("Runes(%q, Joiner) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestInvisibleIsDefaultIgnorable checks the two classes against Unicode,
// code point by code point: together they are Default_Ignorable_Code_Point
// as DerivedCoreProperties.txt derives it from the properties the unicode
// package holds, the joiners are the joiners and the variation selectors,
// and no character is in both. A character Unicode adds to the property
// fails here, to be put in one class or the other.
func TestInvisibleIsDefaultIgnorable(t *testing.T) {
	t.Parallel()
	joiners := []rune{0x200c, 0x200d, 0x034f, 0x180e}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		di := unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r)
		di = di && !unicode.Is(unicode.White_Space, r) && !unicode.Is(unicode.Prepended_Concatenation_Mark, r) &&
			!(r >= 0xfff9 && r <= 0xfffb) && !(r >= 0x13430 && r <= 0x13440)
		if Invisible(r) != di {
			t.Errorf("Invisible(%U) = %v, Default_Ignorable_Code_Point %v", r, Invisible(r), di)
		}
		if j := unicode.Is(unicode.Variation_Selector, r) || slices.Contains(joiners, r); Joiner(r) != j {
			t.Errorf("Joiner(%U) = %v, want %v", r, Joiner(r), j)
		}
		if hidden(r) && Joiner(r) {
			t.Errorf("%U is both hidden and a joiner", r)
		}
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
