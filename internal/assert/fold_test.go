package assert

import (
	"encoding/binary"
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
	"@[`{", "[\\]^_`", "@ABCXYZ[`abcxyz{", "@abcxyz[`ABCXYZ{", "Kelvin \u212a in a longer reply", "reference ABC123", "abc123", "ABC", "Z", "z",
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

// TestLowerLanes holds lowerLanes to lowering byte by byte, for every
// ASCII byte in every lane beside every ASCII byte in the lanes around
// it (a carry or borrow would cross into them).
func TestLowerLanes(t *testing.T) {
	t.Parallel()
	lower := func(c byte) byte {
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		return c
	}
	for lane := range 8 {
		for c := range byte(0x80) {
			for d := range byte(0x80) {
				var in, want [8]byte
				for k := range in {
					in[k] = d
				}
				in[lane] = c
				for k, b := range in {
					want[k] = lower(b)
				}
				var got [8]byte
				binary.LittleEndian.PutUint64(got[:], lowerLanes(binary.LittleEndian.Uint64(in[:])))
				if got != want {
					t.Fatalf("lowerLanes(%q) = %q, want %q", in, got, want)
				}
			}
		}
	}
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
