package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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
				args := strings.Fields(strings.ReplaceAll(m[1], "'", ""))[1:]
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
	for _, cmd := range []string{"run", "lint", "gate", "compare"} {
		if !seen[cmd] {
			t.Errorf("no CI example runs agenttest %s", cmd)
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
