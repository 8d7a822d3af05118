package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// hostilePaths rewrites a JSON report as a hostile one could be written:
// every suite file's path and every position's file holds an escape
// sequence, a bidirectional override, a line break and a carriage return.
func hostilePaths(t *testing.T, doc []byte, path string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "path" && strings.HasSuffix(s, ".yaml") {
					v[k] = path
					continue
				}
				if p, ok := x.(map[string]any); ok && k == "pos" {
					if _, ok := p["file"]; ok {
						p["file"] = path
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportPathsAreEscaped: the commands that read a JSON report back
// show its files' paths and its positions the way they show every other
// text of it, with their controls escaped: agenttest coverage's "first
// reached" column, and the coverage and comparison sections and the case
// list of an HTML report written by merge or compare. Before, those
// printed the path raw (its escape sequence cleared the screen, its line
// break began a forged line, its override reversed the text).
func TestReportPathsAreEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	run := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/restaurant.yaml", "--json", p("run.json"))
	run.expect(t, exitFailed)
	doc, err := os.ReadFile(p("run.json"))
	if err != nil {
		t.Fatal(err)
	}
	const evil = "suites/a\x1b[2J\u202eb\nFORGED\rc.yaml"
	// Two copies: compare pairs their cases by position.
	for _, name := range []string{"evil.json", "evil-too.json"} {
		if err := os.WriteFile(p(name), hostilePaths(t, doc, evil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw := regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
	for _, tc := range []struct {
		name string
		args []string
		code int
		html string
	}{
		{"coverage", []string{"coverage", p("evil.json")}, exitOK, ""},
		{"merge", []string{"merge", "-v", p("evil.json"), "--html", p("merge.html")}, exitFailed, p("merge.html")},
		{"compare", []string{"compare", "--baseline", p("evil-too.json"), "--candidate", p("evil.json"), "--html", p("compare.html")}, exitOK, p("compare.html")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t, repoRoot, examplesEnv(), tc.args...)
			if code := c.run(t); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, c.stdout, c.stderr)
			}
			texts := map[string]string{"output": c.stdout.String() + c.stderr.String()}
			if tc.html != "" {
				b, err := os.ReadFile(tc.html)
				if err != nil {
					t.Fatal(err)
				}
				texts["page"] = string(b)
				texts["page's data"] = strings.Join(jsonStrings(t, htmlData(t, string(b))), "\n")
			}
			// The console escapes the escape sequence; the page strips it.
			if !strings.Contains(texts["output"]+texts["page"], `\u202eb\nFORGED\rc.yaml`) {
				t.Errorf("the path is not shown escaped:\n%s", texts["output"])
			}
			for what, text := range texts {
				for i, line := range strings.Split(text, "\n") {
					if loc := raw.FindStringIndex(line); loc != nil || strings.HasPrefix(line, "FORGED") {
						t.Errorf("%s line %d holds the path raw: %q", what, i+1, line)
					}
				}
			}
		})
	}
}

// TestReportErrorLinesAreTheirOwn: a report refused for a value no run
// writes is named in one line per problem; the values the message quotes
// (here the agent of a deployment whose read_at is not a time) cannot
// begin a line of their own. Before, the agent was quoted raw, and its
// line break began an "agenttest: FORGED" line.
func TestReportErrorLinesAreTheirOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/restaurant.yaml", "--json", p("run.json")).expect(t, exitFailed)
	doc, err := os.ReadFile(p("run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	deps, _ := v["deployments"].([]any)
	if len(deps) == 0 {
		t.Fatalf("the report has no deployments: the test tests nothing")
	}
	d := deps[0].(map[string]any)
	d["agent"], d["read_at"] = "restaurant\nFORGED: gate passed", "yesterday"
	bad, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("bad.json"), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"merge", p("bad.json")}, {"gate", p("bad.json")}, {"coverage", p("bad.json")}} {
		out := newCLI(t, repoRoot, examplesEnv(), args...).expect(t, exitUsage, `restaurant\nFORGED: gate passed`)
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(line, "agenttest: FORGED") {
				t.Errorf("%s: the agent began a line: %q\n%s", args[0], line, out)
			}
		}
	}
}
