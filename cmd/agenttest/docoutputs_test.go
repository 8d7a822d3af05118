package main

// The sample outputs the guides show of the shipped examples, checked
// against what the commands print for them on the embedded simulator, so
// that a change of the examples or of the output cannot leave a guide
// showing what no run prints.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docBlock returns the lines of the fenced block of the guide at path
// (relative to the repository root) that holds anchor, with its line
// numbers, and fails the test when there is none.
func docBlock(t *testing.T, path, anchor string) (lines []string, at []int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	var nums []int
	in := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			if in {
				if strings.Contains(strings.Join(block, "\n"), anchor) {
					return block, nums
				}
				block, nums = nil, nil
			}
			in = !in
			continue
		}
		if in {
			block, nums = append(block, line), append(nums, i+1)
		}
	}
	t.Fatalf("%s has no fenced block holding %q", path, anchor)
	return nil, nil
}

// words is a line with its runs of spaces made one: a guide's table is
// narrower than the printed one, whose columns fit every row.
func words(line string) string { return strings.Join(strings.Fields(line), " ") }

// checkDocBlock fails for every line of the block that out does not
// print, columns aside; lines for which skip is true (an elision, a
// timing) are not compared.
func checkDocBlock(t *testing.T, path string, lines []string, at []int, out string, skip func(string) bool) {
	t.Helper()
	printed := map[string]bool{}
	for line := range strings.SplitSeq(out, "\n") {
		printed[words(line)] = true
	}
	for i, line := range lines {
		if w := words(line); w == "" || w == "..." || w == "…" || skip(w) {
			continue
		}
		if !printed[words(line)] {
			t.Errorf("%s:%d: shows a line the command does not print: %q\noutput:\n%s", path, at[i], line, out)
		}
	}
}

// TestDocCoverageSample: the coverage table of docs/configuration.md
// ("Node coverage") is the restaurant's in a run of examples/.
func TestDocCoverageSample(t *testing.T) {
	t.Parallel()
	const guide = "docs/configuration.md"
	lines, at := docBlock(t, guide, "nodes visited (67%)")
	code, run, b := runExamples(t)
	if code != exitOK {
		t.Fatalf("run examples: %s%s", run.stdout, run.stderr)
	}
	report := filepath.Join(t.TempDir(), "result.json")
	if err := os.WriteFile(report, b, 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, repoRoot, examplesEnv(), "coverage", report)
	if code := c.run(t); code != exitOK {
		t.Fatalf("coverage: exit %d\n%s", code, c.stderr)
	}
	checkDocBlock(t, guide, lines, at, c.stdout.String(), func(string) bool { return false })
}

// TestDocCompareSample: the comparison docs/promoting.md shows is the one
// of examples/compare, live against pre-release, but for its timings.
func TestDocCompareSample(t *testing.T) {
	t.Parallel()
	const guide = "docs/promoting.md"
	lines, at := docBlock(t, guide, "REGRESSED examples/compare/restaurant.yaml:23")
	c := compareCLI(t, repoRoot, nil, "compare", "--baseline", "live", "--candidate", "pre-release", "examples/compare", "--allow-live")
	out := c.expect(t, exitFailed)
	checkDocBlock(t, guide, lines, at, out, func(line string) bool {
		return strings.HasPrefix(line, "latency")
	})
}

// docShellCommand reads the commands of a guide's shell block as a shell
// would: continued lines joined, each of "; " and "&&" a separator, and
// the forms the guides run agenttest by (go run ./cmd/agenttest, go tool
// agenttest) written as the installed command. Comments go first: their
// words are no command.
var docShellComment = regexp.MustCompile(`(?m)(?:^|\s)#.*$`)

var docShellCommand = strings.NewReplacer("\\\n", " ", "; ", "\n", "go run ./cmd/agenttest ", "agenttest ", "go tool agenttest ", "agenttest ")

// TestDocCommandsUseRealFlags: every agenttest command of a shell block of
// README.md and docs/ names a command and flags that exist, as the CI
// examples must (TestCIExamplesUseRealFlags): a newcomer copies these
// first, and a renamed or removed flag cannot leave a guide giving a
// command that is refused. The commands are parsed, not run (--help ends
// each after its flags were read).
func TestDocCommandsUseRealFlags(t *testing.T) {
	t.Parallel()
	guides, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(guides) < 8 {
		t.Fatalf("guides %v: %v", guides, err)
	}
	seen := map[string]bool{}
	for _, path := range append(guides, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, path)
		var block strings.Builder
		in, start := false, 0
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case !in && strings.HasPrefix(line, "```sh"):
				in, start = true, i+2
				block.Reset()
			case in && strings.HasPrefix(line, "```"):
				in = false
				for _, args := range ciCommands(docShellCommand.Replace(docShellComment.ReplaceAllString(block.String(), ""))) {
					seen[args[0]] = true
					c := newCLI(t, repoRoot, nil, append(args, "--help")...)
					if code := c.run(t); code != exitOK {
						t.Errorf("%s: the block at line %d runs agenttest %s: exit %d\n%s", rel, start, strings.Join(args, " "), code, c.stderr)
					}
				}
			case in:
				block.WriteString(line + "\n")
			}
		}
	}
	for _, cmd := range []string{"run", "sim", "lint", "list", "steps", "gate", "compare", "merge", "help"} {
		if !seen[cmd] {
			t.Errorf("no shell block of the guides runs agenttest %s", cmd)
		}
	}
}

// TestDocTargetVariablesInHelp: the variables docs/configuration.md
// ("Environment variables") says override a target's fields are the
// ones agenttest help run names: a newcomer who reads the help alone
// must not miss one (AGENTTEST_MESSAGING_QUIET was left out of it when
// messaging_quiet came), and the guide must not name one run ignores.
func TestDocTargetVariablesInHelp(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(b), "\nTarget fields: ")
	para, _, ok2 := strings.Cut(para, "Each one overrides")
	if !ok || !ok2 {
		t.Fatal(`docs/configuration.md has no "Target fields: ... Each one overrides" paragraph`)
	}
	variable := regexp.MustCompile(`AGENTTEST_[A-Z_]+`)
	doc := variable.FindAllString(para, -1)
	help := words(newCLI(t, repoRoot, nil, "help", "run").expect(t, exitOK))
	_, help, ok = strings.Cut(help, "The target is --target NAME")
	help, _, ok2 = strings.Cut(help, "With no target configured")
	if !ok || !ok2 {
		t.Fatalf(`agenttest help run has no "The target is --target NAME ... With no target configured" paragraph:
%s`, help)
	}
	named := variable.FindAllString(help, -1)
	slices.Sort(doc)
	slices.Sort(named)
	if !slices.Equal(doc, named) {
		t.Errorf("docs/configuration.md names the target variables %v, agenttest help run %v", doc, named)
	}
}

// TestDocStatisticalVerdictInCucumber: the verdict docs/reading-reports.md
// says a statistical scenario's failed step starts with, for
// examples-failing/clinic.yaml, is the one the Cucumber Messages of a
// run of it hold, as the console's FAIL line gives it.
func TestDocStatisticalVerdictInCucumber(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reading-reports.md"))
	if err != nil {
		t.Fatal(err)
	}
	shown := regexp.MustCompile("\\(`(passed [^`]*)` for `examples-failing/clinic.yaml`\\)").FindSubmatch([]byte(words(string(b))))
	if shown == nil {
		t.Fatal("docs/reading-reports.md gives no verdict for examples-failing/clinic.yaml")
	}
	messages := filepath.Join(t.TempDir(), "c.ndjson")
	newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/clinic.yaml", "--cucumber", messages).expect(t, exitFailed)
	ndjson, err := os.ReadFile(messages)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ndjson), `"message":"`+string(shown[1])+`\n`) {
		t.Errorf("docs/reading-reports.md says the failed step starts with %q; the Cucumber Messages of the run hold none such:\n%s", shown[1], ndjson)
	}
}
