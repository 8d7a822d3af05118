package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEveryFuzzTargetIsFuzzedInCI: docs/reliability.md ("Bad input")
// says .ci/run fuzzes each target and lists them; a fuzz target written
// since, in any package, must be in both lists, with its package, or it
// only ever runs its seeds.
func TestEveryFuzzTargetIsFuzzedInCI(t *testing.T) {
	t.Parallel()
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	var inCode []string
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// The pattern's literal, found first: the regexp over every
		// test file of the repository took half a second under -race.
		if !bytes.Contains(b, []byte("func Fuzz")) {
			return nil
		}
		rel, err := filepath.Rel(repoRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(b), -1) {
			inCode = append(inCode, filepath.ToSlash(rel)+" "+m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inCode) == 0 {
		t.Fatal("no fuzz target found under the repository")
	}
	slices.Sort(inCode)

	ci, err := os.ReadFile(filepath.Join(repoRoot, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	_, targets, ok := strings.Cut(string(ci), "<<'TARGETS'\n")
	targets, _, ok2 := strings.Cut(targets, "\nTARGETS")
	if !ok || !ok2 {
		t.Fatal(".ci/run has no TARGETS list")
	}
	var inCI []string
	for line := range strings.SplitSeq(targets, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			inCI = append(inCI, strings.TrimPrefix(f[0], "./")+" "+f[1])
		}
	}
	slices.Sort(inCI)

	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(Fuzz\\w+)` \\| `([^`]+)` \\|")
	var inDoc []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		inDoc = append(inDoc, m[2]+" "+m[1])
	}
	slices.Sort(inDoc)

	said := "no number of"
	if m := regexp.MustCompile(`(\d+) fuzz targets`).FindSubmatch(doc); m != nil {
		said = string(m[1])
	}
	if said != strconv.Itoa(len(inCode)) {
		t.Errorf("docs/reliability.md says %s fuzz targets; the repository has %d", said, len(inCode))
	}
	if !slices.Equal(inCI, inCode) {
		t.Errorf(".ci/run fuzzes\n  %s\nthe fuzz targets of the repository are\n  %s", strings.Join(inCI, "\n  "), strings.Join(inCode, "\n  "))
	}
	if !slices.Equal(inDoc, inCode) {
		t.Errorf("docs/reliability.md lists\n  %s\nthe fuzz targets of the repository are\n  %s", strings.Join(inDoc, "\n  "), strings.Join(inCode, "\n  "))
	}
}
