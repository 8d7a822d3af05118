package scenario

import (
	"os"
	"strings"
	"testing"
)

// TestDocExamplesLoad loads every complete suite shown in
// docs/writing-scenarios.md, so the guide cannot drift from the loader.
func TestDocExamplesLoad(t *testing.T) {
	t.Parallel()
	loaded := 0
	for i, b := range docBlocks(t, "../../docs/writing-scenarios.md", "yaml") {
		block := wrapFragment(b)
		if block == "" {
			continue
		}
		loaded++
		if _, ds := LoadFile("doc.yaml", []byte(block)); len(ds) > 0 {
			t.Errorf("yaml block %d of the guide does not load cleanly:\n%s\n%s", i, block, renderDiags(ds))
		}
	}
	if loaded < 8 {
		t.Errorf("found only %d complete suites in the guide", loaded)
	}
}

// TestDocFeaturesLoad loads every complete feature file shown in
// docs/writing-features.md (a block with a Feature: line; the others are
// steps quoted alone), as TestDocExamplesLoad does for the YAML guide.
func TestDocFeaturesLoad(t *testing.T) {
	t.Parallel()
	loaded := 0
	for i, block := range docBlocks(t, "../../docs/writing-features.md", "gherkin") {
		if !strings.HasPrefix(block, "Feature:") && !strings.Contains(block, "\nFeature:") {
			continue
		}
		loaded++
		if _, ds := loadFeature("doc.feature", []byte(block)); len(ds) > 0 {
			t.Errorf("gherkin block %d of the guide does not load cleanly:\n%s\n%s", i, block, renderDiags(ds))
		}
	}
	if loaded < 4 {
		t.Errorf("found only %d complete feature files in the guide", loaded)
	}
}

// wrapFragment completes a fragment of the guide into a suite: a list of
// scenarios, a turn's expect, or a matcher. It returns "" for fragments of
// another shape.
func wrapFragment(block string) string {
	indent := func(s, pad string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = pad + l
		}
		return strings.Join(lines, "\n") + "\n"
	}
	const turn = "scenarios:\n  - name: doc\n    turns:\n      - say: hi\n"
	switch {
	case strings.HasPrefix(block, "scenarios:") || strings.Contains(block, "\nscenarios:"):
		return block
	case strings.HasPrefix(block, "- name:"):
		return "scenarios:\n" + indent(block, "  ")
	case strings.HasPrefix(block, "expect:"):
		return turn + indent(block, "        ")
	case strings.HasPrefix(block, "- say:"):
		return "scenarios:\n  - name: doc\n    turns:\n" + indent(block, "      ")
	case strings.HasPrefix(block, "response:"):
		return turn + "        expect:\n" + indent(block, "          ")
	}
	return ""
}

func BenchmarkLoadFile(b *testing.B) {
	src, err := os.ReadFile("testdata/valid/every-key.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, ds := LoadFile("every-key.yaml", src); ds.HasErrors() {
			b.Fatal(ds)
		}
	}
}

// docBlocks returns the code blocks of the language lang in the guide at
// path, each without its fences.
func docBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for i, b := range strings.Split(string(src), "```"+lang+"\n")[1:] {
		before, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatalf("%s: %s block %d is not closed", path, lang, i)
		}
		blocks = append(blocks, before)
	}
	return blocks
}
