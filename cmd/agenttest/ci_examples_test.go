package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/scenario"
)

// agenttestLine finds an agenttest command in a CI step: at the start of
// a line or after a shell separator.
var agenttestLine = regexp.MustCompile(`(?m)(?:^|&&\s*)\s*(agenttest\s[^\n#]*)`)

// TestCIExamplesUseRealFlags: every agenttest command in examples/ci is
// valid YAML and names a command and flags that exist, so the examples
// cannot drift from the CLI unnoticed. The commands are parsed, not run
// (--help ends each after its flags were read).
func TestCIExamplesUseRealFlags(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples/ci/*.yml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("CI examples %v: %v", files, err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, s := range yamlStrings(doc) {
			for _, m := range agenttestLine.FindAllStringSubmatch(s, -1) {
				args := strings.Fields(ciVars.Replace(strings.ReplaceAll(m[1], "'", "")))[1:]
				// A shell fallback ends the command.
				if i := slices.Index(args, "||"); i >= 0 {
					args = args[:i]
				}
				if len(args) == 0 || args[0] == "version" {
					continue
				}
				seen[args[0]] = true
				c := newCLI(t, repoRoot, nil, append(args, "--help")...)
				if code := c.run(t); code != exitOK {
					t.Errorf("%s: %s: exit %d\n%s", filepath.Base(f), m[1], code, c.stderr)
				}
			}
		}
	}
	for _, cmd := range []string{"run", "lint", "gate", "compare", "merge"} {
		if !seen[cmd] {
			t.Errorf("no CI example runs agenttest %s", cmd)
		}
	}
}

// ciVars stands for the values CI fills in: a matrix entry of GitHub
// Actions, GitLab's parallel job numbers, a glob of report files.
var ciVars = strings.NewReplacer("${{ matrix.shard }}", "1", "$CI_NODE_INDEX", "1", "$CI_NODE_TOTAL", "4")

// TestCIExamplesShard: the sharded jobs give --shard a K/N that parses
// and merge the reports they upload.
func TestCIExamplesShard(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"shards-github-actions.yml", "shards-gitlab-ci.yml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci", f))
		if err != nil {
			t.Fatal(err)
		}
		text := ciVars.Replace(string(b))
		for _, want := range []string{"agenttest merge ", "--json reports/shard-1.json"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
		shards := regexp.MustCompile(`(?m)^[^#\n]*--shard (\S+)`).FindAllStringSubmatch(text, -1)
		if len(shards) == 0 {
			t.Errorf("%s runs no shard", f)
		}
		for _, m := range shards {
			if _, err := scenario.ParseShard(m[1]); err != nil {
				t.Errorf("%s: --shard %s: %v", f, m[1], err)
			}
		}
	}
}

// yamlStrings lists every string value of a decoded YAML document.
func yamlStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, yamlStrings(x)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, yamlStrings(x)...)
		}
		return out
	}
	return nil
}
