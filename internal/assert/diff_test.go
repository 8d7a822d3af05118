package assert

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/NAME, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden file:\n got:\n%s\n want:\n%s", name, got, want)
	}
}

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
			golden(t, filepath.Join("diff", tc.name+".txt"), Diff(tc.expected, tc.actual)+"\n")
			golden(t, filepath.Join("diff", tc.name+".color.txt"), DiffColor(tc.expected, tc.actual)+"\n")
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

func TestDiffCapsInput(t *testing.T) {
	long := strings.Repeat("word ", 5000)
	d := Diff(long+"a", long+"b")
	if !strings.HasSuffix(d, "(diff truncated)") {
		t.Errorf("long inline diff not marked truncated: ...%q", d[max(0, len(d)-60):])
	}
	many := strings.Repeat("line\n", 20000)
	d = Diff(many+"a\n", many+"b\n")
	if !strings.HasSuffix(d, "(diff truncated)") {
		t.Errorf("long line diff not marked truncated: ...%q", d[max(0, len(d)-60):])
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
