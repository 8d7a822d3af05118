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

// lint counts such a file once, and says each of its problems once, as
// run does.
func TestLintOneFileNamedTwoWays(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"s.yaml":   "suite: s\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {response: {contains: a}}\n",
		"bad.yaml": "suite: b\nagent: clinic\nscenarios:\n  - name: greets\n    greeting: {respons: {contains: a}}\n",
	})
	c := newCLI(t, dir, nil, "lint", "s.yaml", filepath.Join(dir, "s.yaml"))
	c.expect(t, exitOK, "1 suite file, 1 scenario: no problems")
	for _, cmd := range []string{"lint", "run", "list"} {
		c := newCLI(t, dir, nil, cmd, "bad.yaml", filepath.Join(dir, "bad.yaml"))
		out := c.expect(t, exitUsage, "\n1 error\n")
		if n := strings.Count(out, `unknown key "respons"`); n != 1 {
			t.Errorf("%s: the problem is said %d times, want once:\n%s", cmd, n, out)
		}
	}
}
