package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocVoiceSuiteRuns: the voice suite of docs/writing-scenarios.md
// ("Testing a voice agent") runs as it is against the embedded simulator
// and passes, with no warning: a voice designer who copies it starts from
// a suite that works, calls and SMS included.
func TestDocVoiceSuiteRuns(t *testing.T) {
	t.Parallel()
	lines, _ := docBlock(t, "docs/writing-scenarios.md", "suite: Billing line")
	dir := writeTree(t, map[string]string{"voice.yaml": strings.Join(lines, "\n") + "\n"})
	out := newCLI(t, dir, examplesEnv(), "run", "voice.yaml").expect(t, exitOK, "3 passed, 0 failed")
	if strings.Contains(out, "warning") {
		t.Errorf("the guide's suite draws a warning:\n%s", out)
	}
}

// TestDocSuitesRun: every whole suite a guide or the README shows (a yaml
// block with a top-level scenarios:, a gherkin block with its Feature:) runs as it is against the embedded
// simulator and passes, with no warning: a designer copies them first.
// The one the guide runs against a simulator started with
// --no-live-agent fails on the embedded one, which always finds a live
// agent, as the guide says.
func TestDocSuitesRun(t *testing.T) {
	t.Parallel()
	onlyElsewhere := map[string]bool{"suite: Live agent unavailable": true}
	guides, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range append(guides, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, path)
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			var file string
			switch lines[i] {
			case "```yaml":
				file = "guide.yaml"
			case "```gherkin":
				file = "guide.feature"
			default:
				continue
			}
			start := i + 1
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			}
			block := strings.Join(lines[start:i], "\n") + "\n"
			// A whole suite, not a fragment of one.
			if !strings.Contains("\n"+block, "\nscenarios:") && !strings.Contains("\n"+block, "\nFeature:") {
				continue
			}
			n++
			first := lines[start]
			t.Run(fmt.Sprintf("%s:%d", rel, start+1), func(t *testing.T) {
				t.Parallel()
				dir := writeTree(t, map[string]string{file: block})
				c := newCLI(t, dir, examplesEnv(), "run", file)
				code := c.run(t)
				out := c.stdout.String() + c.stderr.String()
				if onlyElsewhere[first] {
					if code != exitFailed {
						t.Errorf("exit %d on the embedded simulator, want %d (it always finds a live agent)\n%s", code, exitFailed, out)
					}
					return
				}
				if code != exitOK || strings.Contains(out, "warning") {
					t.Errorf("the guide's suite does not pass as it is (exit %d):\n%s", code, out)
				}
			})
		}
	}
	if n < 10 {
		t.Errorf("found %d suites in the guides, want at least 10", n)
	}
}
