package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeMasksBeforeItCuts: a shard's report agenttest wrote holds no
// key, but one edited may; merge masks the keys the environment holds as
// it reads the reports, before it writes or cuts anything. A GitHub
// annotation is cut to the runner's 4096 characters: cut first, a key
// that straddles the cut would leave a part of it that no redactor, nor
// the runner's masking of its secrets, knows. The failure holds the key
// at every offset around the cut, and no 8 characters of it may show in
// the console, the annotations or the JUnit report. Before, merge masked
// nothing: the key whole in each, and its first half in the annotation.
func TestMergeMasksBeforeItCuts(t *testing.T) {
	t.Parallel()
	dir, env := workflowJob(t)
	key := env["AGENTTEST_BUILD_KEY"]
	if code := newCLI(t, dir, env, "run", ".", "--github=false", "--json", "shard.json").run(t); code != exitFailed {
		t.Fatalf("run: exit %d, want %d", code, exitFailed)
	}
	var msg strings.Builder
	msg.WriteString("reply " + strings.Repeat("x", 3800))
	for i := range 2 * len(key) {
		msg.WriteString(strings.Repeat("y", i%3) + key)
	}
	editReport(t, filepath.Join(dir, "shard.json"), func(doc map[string]any) {
		for _, f := range doc["files"].([]any) {
			for _, c := range f.(map[string]any)["cases"].([]any) {
				for _, a := range c.(map[string]any)["attempts"].([]any) {
					if fs, _ := a.(map[string]any)["failures"].([]any); len(fs) > 0 {
						fs[0].(map[string]any)["message"] = msg.String()
					}
				}
			}
		}
	})
	c := newCLI(t, dir, env, "merge", "shard.json", "--junit", "merged.xml")
	c.expect(t, exitFailed)
	junit, err := os.ReadFile(filepath.Join(dir, "merged.xml"))
	if err != nil {
		t.Fatal(err)
	}
	out := c.stdout.String() + c.stderr.String()
	if !strings.Contains(out, "cut to the 4096 characters of a GitHub annotation") {
		t.Fatalf("no annotation was cut: the test tests nothing\n%.3000s", out)
	}
	for name, text := range map[string]string{"the console and annotations": out, "merged.xml": string(junit)} {
		for i := 0; i+8 <= len(key); i++ {
			if part := key[i : i+8]; strings.Contains(text, part) {
				t.Errorf("%s show %q of the key", name, part)
				break
			}
		}
	}
}
