package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// TestExitCodeNumbers pins each exit-code constant to the number the
// docs give it, and the docs' table to exactly those numbers: the other
// tests compare exit statuses with the named constants, so a constant
// moved to another number (exitErrored = 1) passed them all while every
// CI pipeline reading the documented 4 misread the run. A code changed
// in one place and not the other fails here.
func TestExitCodeNumbers(t *testing.T) {
	t.Parallel()
	codes := []struct {
		name      string
		got, want int
	}{
		{"exitOK", exitOK, 0},
		{"exitFailed", exitFailed, 1},
		{"exitUsage", exitUsage, 2},
		{"exitInternal", exitInternal, 3},
		{"exitErrored", exitErrored, 4},
		{"exitEmpty", exitEmpty, 5},
		{"exitInterrupted", exitInterrupted, 130},
	}
	var want []int
	for _, c := range codes {
		if c.got != c.want {
			t.Errorf("%s = %d, documented as %d", c.name, c.got, c.want)
		}
		want = append(want, c.got)
	}
	const guide = "docs/configuration.md"
	b, err := os.ReadFile(filepath.Join(repoRoot, guide))
	if err != nil {
		t.Fatal(err)
	}
	// The section's table: "| N | Meaning |" rows, up to the next heading.
	section := regexp.MustCompile(`(?s)\n## Exit codes\n(.*?)\n## `).FindSubmatch(b)
	if section == nil {
		t.Fatalf("%s has no section \"Exit codes\"", guide)
	}
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllSubmatch(section[1], -1) {
		n, err := strconv.Atoi(string(m[1]))
		if err != nil {
			t.Fatal(err)
		}
		documented = append(documented, n)
	}
	if !slices.Equal(documented, want) {
		t.Errorf("%s \"Exit codes\" lists %v, the constants are %v", guide, documented, want)
	}
}
