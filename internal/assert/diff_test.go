package assert

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/golden"
)

func TestDiffGolden(t *testing.T) {
	type testCase struct {
		name             string
		expected, actual string
	}
	cases := []testCase{
		{"inline-words", "Hello, how can I help you today?", "Hi! How may I help you?"},
		{"inline-number", "Your table for 4 is booked for 7pm.", "Your table for 5 is booked for 8pm."},
		{"inline-insert-only", "Your table is booked.", "Your table is booked. Anything else?"},
		{"inline-unicode", "Votre table est réservée à 19h.", "Votre table est réservée à 20h, merci."},
		{"lines", "line1\nline2\nline3\n", "line1\nLINE2\nline3\nline4\n"},
		{"lines-one-to-many", "Your booking is confirmed.", "Your booking is confirmed.\nReference: AB12CD\nSee you soon!"},
		{"lines-missing-final-newline", "a\nb", "a\nb\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", "diff", tc.name+".txt"), []byte(Diff(tc.expected, tc.actual)+"\n"))
			golden.Check(t, filepath.Join("testdata", "diff", tc.name+".color.txt"), []byte(DiffColor(tc.expected, tc.actual)+"\n"))
		})
	}
}

func TestDiffEqual(t *testing.T) {
	if d := Diff("same", "same"); d != "" {
		t.Errorf("Diff of equal texts = %q, want empty", d)
	}
}

func TestDiffColorKeepsMarkers(t *testing.T) {
	d := DiffColor("a b", "a c")
	for _, want := range []string{ansiRed + "[-b-]" + ansiReset, ansiGreen + "{+c+}" + ansiReset} {
		if !strings.Contains(d, want) {
			t.Errorf("DiffColor = %q, missing %q", d, want)
		}
	}
	if plain := Diff("a b", "a c"); strings.Contains(plain, "\x1b") {
		t.Errorf("Diff must not colour: %q", plain)
	}
}

// TestDiffCapsInput: texts longer than the cap are compared from where
// they first differ to where they last do, so a change kilobytes in
// shows; the diff holds what stands beside it, the rest written "…";
// only a part that differs beyond the cap is cut.
func TestDiffCapsInput(t *testing.T) {
	long := strings.Repeat("word ", 5000)
	context := strings.Repeat("word ", keepRunes/5)
	for _, tc := range []struct{ name, expected, actual, want string }{
		{"a change at the end", long + "a", long + "b", "…" + context + "[-a-]{+b+}"},
		{"a change at the start", "a " + long, "b " + long, "[-a-]{+b+} " + strings.TrimSuffix(context, " ") + "…"},
		{"a change in a word", long + "table", long + "tables", "…" + context + "[-table-]{+tables+}"},
		{"a change in the middle", long + "a " + long, long + "b " + long,
			"…" + context + "[-a-]{+b+} " + strings.TrimSuffix(context, " ") + "…"},
		{"a multibyte change", long + "é " + long, long + "è " + long,
			"…" + context + "[-é-]{+è+} " + strings.TrimSuffix(context, " ") + "…"},
		{"a change of lines", strings.Repeat("line\n", 20000) + "a\n", strings.Repeat("line\n", 20000) + "b\n",
			"--- expected\n+++ actual\n  … 19997 unchanged lines\n  line\n  line\n  line\n- a\n+ b"},
		{"a line changed in the middle", strings.Repeat("line\n", 20000) + "a\n" + strings.Repeat("line\n", 20000),
			strings.Repeat("line\n", 20000) + "b\n" + strings.Repeat("line\n", 20000),
			"--- expected\n+++ actual\n  … 19997 unchanged lines\n  line\n  line\n  line\n- a\n+ b\n  line\n  line\n  line\n  … 19997 unchanged lines"},
		{"a change in a word of one side", long + "Xtable", long + "table", "…" + context + "[-Xtable-]{+table+}"},
		{"a change in a word of the other", long + "table", long + "Xtable", "…" + context + "[-table-]{+Xtable+}"},
		{"a byte that is not UTF-8", long + "\xff", long + "\ufffd", "…" + context + "[-\xff-]{+\ufffd+}"},
		{"only the final line break", strings.Repeat("line\n", 20000) + "end\n", strings.Repeat("line\n", 20000) + "end",
			"--- expected\n+++ actual\n(the texts differ only in the final newline)"},
	} {
		if got := Diff(tc.expected, tc.actual); got != tc.want {
			t.Errorf("%s: Diff = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Only one text longer than the cap: compared from where they differ,
	// and what the part compared does not reach is not shown after it.
	if d, want := Diff("a end", "b "+long+"end"), "[-a-]{+b word word"; !strings.HasPrefix(d, want) || !strings.HasSuffix(d, " word+} (diff truncated)") {
		t.Errorf("diff of a short text and a long one = %q...%q, want %q... word+} (diff truncated)", d[:min(len(d), 40)], d[max(0, len(d)-40):], want)
	}
	if td := DiffOf("a "+long, "b "+long); td.Changes[0] != (Change{Removed, "a"}) {
		t.Errorf("DiffOf of long texts differing first = %+v..., want the change first", td.Changes[0])
	}
	if td := DiffOf(strings.Repeat("line\n", 20000)+"end\n", strings.Repeat("line\n", 20000)+"end"); len(td.Changes) != 0 {
		t.Errorf("DiffOf of long texts differing only in the final newline has changes %+v, want only its note", td.Changes[:1])
	}
	if d := Diff("short", long); !strings.HasSuffix(d, " (diff truncated)") {
		t.Errorf("diff against a long reply not marked truncated: ...%q", d[max(0, len(d)-40):])
	}
	// Texts that differ at both ends by more than the cap are cut; when
	// their parts compared are the same (a word, a line longer than the
	// cap), the diff says where they differ.
	d := Diff("a "+long+"a", "b "+long+"b")
	if want := "[-a-]{+b+} word word"; !strings.HasPrefix(d, want) || !strings.HasSuffix(d, " (diff truncated)") {
		t.Errorf("long inline diff = %q...%q, want %q... (diff truncated)", d[:min(len(d), 40)], d[max(0, len(d)-40):], want)
	}
	word := strings.Repeat("x", 5000)
	d = Diff(word+"a", word+"b")
	if want := "(the texts differ beyond the part compared) (diff truncated)"; d != want {
		t.Errorf("inline diff of texts differing beyond the part compared = %q, want %q", d[:min(len(d), 80)], want)
	}
	many := strings.Repeat("line\n", 20000)
	d = Diff("x\n"+many+"a\n", "y\n"+many+"b\n")
	if !strings.HasSuffix(d, "(diff truncated)") {
		t.Errorf("long line diff not marked truncated: ...%q", d[max(0, len(d)-60):])
	}
	d = Diff(strings.Repeat(word, 14)+"a\n", strings.Repeat(word, 14)+"b\n")
	if want := "--- expected\n+++ actual\n(the texts differ beyond the part compared)\n(diff truncated)"; d != want {
		t.Errorf("line diff of texts differing beyond the part compared = %q, want %q", d, want)
	}
}

// TestDiffEdges: an empty text against lines is no empty line, and a
// text of exactly the inline cap is compared whole.
func TestDiffEdges(t *testing.T) {
	if got, want := Diff("", "a\nb"), "--- expected\n+++ actual\n+ a\n+ b"; got != want {
		t.Errorf("Diff of nothing against lines = %q, want %q", got, want)
	}
	at := strings.Repeat("x", maxInlineDiff-2)
	if got, want := Diff(at+" a", at+" b"), "… [-a-]{+b+}"; got != want {
		t.Errorf("Diff of texts of the inline cap = ...%q, want ...%q", got[max(0, len(got)-20):], want[len(want)-20:])
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	s, cut := truncate("ééé", 3) // é is two bytes: cut inside the second
	if !cut || s != "é" {
		t.Errorf("truncate = %q, %v; want \"é\", true", s, cut)
	}
}

func BenchmarkDiffInline(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Diff("Great, a table for 4. When would you like to come?", "Great, a table for 4. What time would you like?")
	}
}

// TestDiffShowsInvisibleChanges checks that a change made of characters
// a terminal does not show (an LLM's no-break or zero-width spaces) is
// written so that it can be seen, and that text both sides share is not.
func TestDiffShowsInvisibleChanges(t *testing.T) {
	type testCase struct {
		name, expected, actual, want string
	}
	cases := []testCase{
		{"no-break space", "Table for 4 people", "Table for\u00a04 people", `Table for[- -]{+\u00a0+}4 people`},
		{"narrow no-break space", "19 h", "19\u202fh", `19[- -]{+\u202f+}h`},
		{"zero-width space", "Thank you", "Thank\u200b you", `Thank{+\u200b+} you`},
		{"soft hyphen in a word", "reservation", "reser\u00advation", `[-reservation-]{+reser\u00advation+}`},
		{"shared no-break space kept", "Table for\u00a04", "Table for\u00a05", "Table for\u00a0[-4-]{+5+}"},
		{"lines", "Hello\nTable for 4\n", "Hello\nTable for\u00a04\n", "--- expected\n+++ actual\n  Hello\n- Table for 4\n+ Table for\\u00a04"},
		{"lines sharing one kept", "Table\u00a0for 4\nBye\n", "Table\u00a0for 4\nbye\n", "--- expected\n+++ actual\n  Table\u00a0for 4\n- Bye\n+ bye"},
		{"invalid byte kept", "a b", "a\xff\u00a0b", "a[- -]{+\xff\\u00a0+}b"},
		{"format character beyond the BMP", "flag", "flag\U000e0001", `flag{+\U000e0001+}`},
		{"a missing joiner", "👩\u200d💻 ready", "👩💻 ready", `👩[-\u200d-]💻 ready`},
		{"a missing non-joiner", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", "\u0645\u06cc\u062e\u0648\u0627\u0647\u0645",
			"[-\u0645\u06cc\\u200c\u062e\u0648\u0627\u0647\u0645-]{+\u0645\u06cc\u062e\u0648\u0627\u0647\u0645+}"},
		{"a missing variation selector, which Go counts as printable", "I \u2764\ufe0f it", "I \u2764 it", "I \u2764[-\\ufe0f-] it"},
		{"a shared emoji sequence drawn as one", "I am 👩\u200d💻", "You are 👩\u200d💻", "[-I am-]{+You are+} 👩\u200d💻"},
		{"tag characters", "ok", "ok\U000e0069\U000e0067", `ok{+\U000e0069\U000e0067+}`},
		{"a format character Unicode does not count as ignorable", "ok", "ok\ufff9", `ok{+\ufff9+}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Diff(tc.expected, tc.actual); got != tc.want {
				t.Errorf("Diff(%q, %q)\n got %q\nwant %q", tc.expected, tc.actual, got, tc.want)
			}
		})
	}
}

// TestTextDiffVisible checks that the diff a renderer of its own gets
// escapes what Diff escapes, only in the changed pieces, and leaves the
// diff it was made from as it was.
func TestTextDiffVisible(t *testing.T) {
	td := DiffOf("Table\u00a0for 4 people", "Table\u00a0for\u00a04 people")
	want := []Change{{Same, "Table\u00a0for"}, {Removed, " "}, {Added, `\u00a0`}, {Same, "4 people"}}
	if got := td.Visible().Changes; !reflect.DeepEqual(got, want) {
		t.Errorf("Visible().Changes\n got %#v\nwant %#v", got, want)
	}
	if td.Changes[2].Text != "\u00a0" {
		t.Errorf("Visible changed the diff it was made from: %#v", td.Changes)
	}
	if got := (TextDiff{Lines: true, Note: "n"}).Visible(); !reflect.DeepEqual(got, TextDiff{Lines: true, Note: "n"}) {
		t.Errorf("Visible of a note: %#v", got)
	}
}

// TestDiffIgnoringCase checks the diff of a check that ignored case: a
// letter that differs only in case is no change, whatever its script or
// byte length (the Kelvin sign is three bytes, its k one), so only the real
// change is marked; shared and added text is the reply's own and removed
// text the expected one's. A text that differs only in case passes such a
// check, so it has no diff.
func TestDiffIgnoringCase(t *testing.T) {
	type testCase struct {
		name, expected, actual, want string
	}
	cases := []testCase{
		{"one line", "Lovely! How many guests will be joining?", "LOVELY! HOW MANY PEOPLE WILL BE JOINING?",
			"LOVELY! HOW MANY [-guests-]{+PEOPLE+} WILL BE JOINING?"},
		{"greek final sigma", "η οδος κλειστη", "Η ΟΔΟΣ ΑΝΟΙΧΤΗ", "Η ΟΔΟΣ [-κλειστη-]{+ΑΝΟΙΧΤΗ+}"},
		{"dotted capital I", "İstanbul at 9", "istanbul at 10", "istanbul at [-9-]{+10+}"},
		{"kelvin sign", "\u212aelvin 20, Kelvin", "kelvin 21, \u212aELVIN", "kelvin [-20-]{+21+}, \u212aELVIN"},
		{"lines", "Hello\nHow many GUESTS?\nBye", "HELLO\nhow many people?\nbye\n",
			"--- expected\n+++ actual\n  HELLO\n- How many GUESTS?\n+ how many people?\n  bye"},
		{"lines differ in case and final newline", "A\nb", "a\nB\n", "--- expected\n+++ actual\n(the texts differ only in the final newline)"},
		{"invalid byte kept", "A b", "a\xffB", "a[- -]{+\xff+}B"},
		// Ignoring case an invalid byte equals only itself (equal), so
		// two that differ are a change, not two U+FFFD alike.
		{"invalid bytes differ", "Code A\xff", "code a\xfe", "code a[-\xff-]{+\xfe+}"},
		{"invalid bytes differ in lines", "A\xff\nb", "a\xfe\nB", "--- expected\n+++ actual\n- A\xff\n+ a\xfe\n  B"},
		{"case alone", "ΟΔΟΣ \u212a", "οδος k", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := Failure{Expected: tc.expected, Actual: tc.actual, IgnoreCase: true}
			if got := DiffTextFor(f, tc.expected, tc.actual, false); got != tc.want {
				t.Errorf("DiffTextFor(%q, %q) ignoring case\n got %q\nwant %q", tc.expected, tc.actual, got, tc.want)
			}
			if got, want := DiffTextFor(f, tc.expected, tc.actual, false), Diff(tc.expected, tc.actual); tc.want != "" && got == want {
				t.Errorf("DiffTextFor ignoring case is the diff that marks case: %q", got)
			}
			// The pieces are the texts themselves: the shared and added
			// ones make up actual, the shared and removed ones expected.
			if td := DiffFor(f, tc.expected, tc.actual); !td.Lines {
				var e, a strings.Builder
				for _, c := range td.Changes {
					if c.Op != Added {
						e.WriteString(c.Text)
					}
					if c.Op != Removed {
						a.WriteString(c.Text)
					}
				}
				if len(td.Changes) > 0 && (!equal(e.String(), tc.expected, true) || a.String() != tc.actual) {
					t.Errorf("pieces %#v make up %q and %q", td.Changes, e.String(), a.String())
				}
			}
			f.IgnoreCase = false
			if got, want := DiffTextFor(f, tc.expected, tc.actual, true), DiffColor(tc.expected, tc.actual); got != want {
				t.Errorf("DiffTextFor minding case\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestDiffOfLinesSharingNone: texts of several lines that share no
// line, but words, are diffed word by word, a changed line break
// written \n, so a reply on one line against an expectation written over
// several shows where they differ; texts sharing a line, no word, or
// longer than the inline cap keep the line diff.
func TestDiffOfLinesSharingNone(t *testing.T) {
	long := strings.Repeat("word ", maxInlineDiff/5)
	for _, tc := range []struct{ name, expected, actual, want string }{
		{"a DocString against one line", "Your table is booked.\nSee you at 7pm.", "Your table is booked. See you at 7pm!",
			`Your table is booked.[-\n-]{+ +}See you at 7pm[-.-]{+!+}`},
		{"lines that share words", "Hello there\nHow are you", "Hello there!\nHow are you?",
			"Hello there{+!+}\nHow are you{+?+}"},
		{"a final line break, as in a YAML block", "Your table is booked.\nSee you.\n", "Your table is booked. See you.",
			`Your table is booked.[-\n-]{+ +}See you.`},
		{"lines that share a line", "Hello\nHow are you", "Hello\nHow are you?",
			"--- expected\n+++ actual\n  Hello\n- How are you\n+ How are you?"},
		{"lines that share no word", "line one\nline two", "Lovely!",
			"--- expected\n+++ actual\n- line one\n- line two\n+ Lovely!"},
		{"above the inline cap", long + "\nend", long + " end",
			"--- expected\n+++ actual\n- " + long + "\n- end\n+ " + long + " end"},
		{"an expected text above the inline cap", long + "\nend", "word end",
			"--- expected\n+++ actual\n- " + long + "\n- end\n+ word end"},
		{"a reply above the inline cap", "word\nend", long + "end",
			"--- expected\n+++ actual\n- word\n- end\n+ " + long + "end"},
		{"lines that share only punctuation", "Yes.\nNo.", "Maybe. Perhaps.",
			"--- expected\n+++ actual\n- Yes.\n- No.\n+ Maybe. Perhaps."},
		{"lines that share only numbers", "Table 4\nat 7", "Tisch 4 um 7",
			`[-Table-]{+Tisch+} 4[-\nat-]{+ um+} 7`},
	} {
		if got := Diff(tc.expected, tc.actual); got != tc.want {
			t.Errorf("%s: Diff = %q, want %q", tc.name, got, tc.want)
		}
	}
	// Folding case, the pieces hold the texts as written; the page's
	// pieces write a changed line break as the text report does.
	td := DiffOfFold("Your TABLE\nis booked.", "your table is booked")
	if td.Lines || renderInline(td.Changes, false) != `your table[-\n-]{+ +}is booked[-.-]` {
		t.Errorf("folded diff = %+v", td)
	}
	if v := td.Visible(); v.Changes[1].Text != `\n` {
		t.Errorf("visible pieces %+v, want the removed line break written \\n", v.Changes)
	}
	// A line diff's pieces are whole lines, line ends and all.
	if v := DiffOf("a\nb", "a\nc").Visible(); !v.Lines || v.Changes[1].Text != "b\n" {
		t.Errorf("visible line pieces %+v, want whole lines", v.Changes)
	}
}

// TestDiffOfFoldLong: the ends two long texts share are found as the
// check compared them, case folded, and kept in the reply's letters.
func TestDiffOfFoldLong(t *testing.T) {
	long := strings.Repeat("word ", 5000)
	got := render(DiffOfFold(long+"table", strings.ToUpper(long)+"TABLES"), false)
	want := "…" + strings.Repeat("WORD ", keepRunes/5) + "[-table-]{+TABLES+}"
	if got != want {
		t.Errorf("folded diff of long texts = %q, want %q", got, want)
	}
}

// TestDiffElidesLongSharedText: a stretch both texts share of elideOver
// runes (elideLines lines) is shown whole; a longer one keeps what
// stands beside the change, outside a word.
func TestDiffElidesLongSharedText(t *testing.T) {
	at := strings.Repeat("abcd ", elideOver/5) // elideOver runes
	over := "z" + at
	lines := strings.Repeat("line\n", elideLines)
	for _, tc := range []struct{ name, expected, actual, want string }{
		{"shared text at the limit", at + "x", at + "y", at + "[-x-]{+y+}"},
		{"shared text over it", over + "x", over + "y", "…" + strings.Repeat("abcd ", keepRunes/5) + "[-x-]{+y+}"},
		{"shared text after a change, cut outside a word", "x " + strings.Repeat("abcdef ", 100), "y " + strings.Repeat("abcdef ", 100),
			"[-x-]{+y+} " + strings.Repeat("abcdef ", 11) + "…"},
		{"nine shared lines", strings.Repeat("a\n", 9) + "x", strings.Repeat("a\n", 9) + "y", "--- expected\n+++ actual\n  … 6 unchanged lines\n  a\n  a\n  a\n- x\n+ y"},
		{"shared lines at the limit", lines + "x\n", lines + "y\n", "--- expected\n+++ actual\n" + strings.Repeat("  line\n", elideLines) + "- x\n+ y"},
		{"shared lines over it", "line\n" + lines + "x\n", "line\n" + lines + "y\n",
			"--- expected\n+++ actual\n  … " + strconv.Itoa(elideLines+1-keepLines) + " unchanged lines\n" + strings.Repeat("  line\n", keepLines) + "- x\n+ y"},
	} {
		if got := Diff(tc.expected, tc.actual); got != tc.want {
			t.Errorf("%s: Diff = %q, want %q", tc.name, got, tc.want)
		}
	}
}
