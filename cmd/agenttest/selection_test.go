package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A script that names a file twice, once as given and once absolute
// ($PWD/..., git's full names, an editor's path), means the file once:
// its scenarios ran twice, under two names, in one report.
func TestOneFileNamedTwoWaysRunsOnce(t *testing.T) {
	t.Parallel()
	suite := "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n  - name: greets again\n    greeting: {response: {contains: a}}\n"
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		want []string
	}{
		{"a directory and the file absolute", func(dir string) []string { return []string{"list", ".", filepath.Join(dir, "s.yaml")} },
			[]string{"s.yaml:4  greets", "s.yaml:6  greets again"}},
		{"a line of the file absolute", func(dir string) []string { return []string{"list", "s.yaml", filepath.Join(dir, "s.yaml") + ":6"} },
			[]string{"s.yaml:6  greets again"}},
		{"a line of the file as given, beside it absolute", func(dir string) []string { return []string{"list", filepath.Join(dir, "s.yaml"), "s.yaml:6"} },
			[]string{"s.yaml:6  greets again"}},
		{"through ..", func(dir string) []string {
			return []string{"list", "s.yaml", filepath.Join("..", filepath.Base(dir), "s.yaml")}
		}, []string{"s.yaml:4  greets", "s.yaml:6  greets again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeTree(t, map[string]string{"s.yaml": suite})
			c := newCLI(t, dir, nil, tc.args(dir)...)
			c.expect(t, exitOK)
			lines := strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("listed %d scenarios, want %d:\n%s", len(lines), len(tc.want), c.stdout.String())
			}
			for i, w := range tc.want {
				if !strings.HasSuffix(lines[i], w) {
					t.Errorf("line %d: %q, want it to end with %q", i+1, lines[i], w)
				}
			}
		})
	}
}
