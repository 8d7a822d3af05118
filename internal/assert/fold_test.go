package assert

import (
	"strings"
	"testing"
)

// containsByMap is contains ignoring case as the general path has it
// (foldString, which is strings.Map of foldRune on valid UTF-8).
func containsByMap(s, sub string) bool {
	return strings.Contains(foldString(s), foldString(sub))
}

var foldTexts = []string{
	"", "a", "A", "Great, a table for 4. How many people?", "HOW MANY", "how many", "How Many",
	"@[`{", "[\\]^_`", "reference ABC123", "abc123", "ABC", "Z", "z",
	"Kelvin \u212a", "k", "long ſ", "s", "ΟΔΟΣ", "οδος", "İstanbul", "istanbul", "\xff", "\xffA",
	strings.Repeat("ab", foldBuf/2), strings.Repeat("AB", foldBuf/2) + "c", strings.Repeat("a", foldBuf+1),
}

func TestContainsFoldsCaseLikeFoldRune(t *testing.T) {
	for _, s := range foldTexts {
		for _, sub := range foldTexts {
			if got, want := contains(s, sub, true), containsByMap(s, sub); got != want {
				t.Errorf("contains(%q, %q, true) = %v, want %v", s, sub, got, want)
			}
		}
	}
}

func FuzzContainsFold(f *testing.F) {
	for _, s := range foldTexts[:14] {
		f.Add(s, "how")
	}
	f.Fuzz(func(t *testing.T, s, sub string) {
		if got, want := contains(s, sub, true), containsByMap(s, sub); got != want {
			t.Errorf("contains(%q, %q, true) = %v, want %v", s, sub, got, want)
		}
	})
}

// TestContainsFoldAllocations: an ASCII reply is searched ignoring case
// without copying it or the text (strings.Map copies any text with an
// upper-case letter).
func TestContainsFoldAllocations(t *testing.T) {
	reply, sub := "Great, a table for 4. How many people?", "HOW MANY"
	if n := testing.AllocsPerRun(100, func() { contains(reply, sub, true) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
