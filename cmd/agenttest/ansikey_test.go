package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// TestKeyAcrossTerminalEscapesMasked: the reports that are files (JUnit,
// HTML, the GitHub annotations and summary) drop the terminal escape
// sequences of what they show; a platform that colours a part of the key
// it echoes ("sk-live-\x1b[1m0123...\x1b[0m", as a log-styled error
// does) has it whole once they are gone. The key is masked across them
// as the values are stored, in a run against a platform that sends it so,
// and in a report that holds it so, written again by merge. Before,
// the files showed the key as it is.
func TestKeyAcrossTerminalEscapesMasked(t *testing.T) {
	t.Parallel()
	const key = reportKey
	coloured := "sk-live-\x1b[1m0123456789\x1b[0mabcdefXYZ"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/deployments") {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"conversationId": "conv-1", "userInput": "", "response": "your key " + coloured + " is wrong",
			"metadata":          map[string]any{"currentNode": "Greeting", "nodeTrace": []string{"Greeting"}, "state": map[string]any{"k": "v " + coloured}},
			"conversationEnded": false, "delayedResponse": false,
		})
	}))
	t.Cleanup(srv.Close)
	dir := writeTree(t, map[string]string{"s.yaml": "agent: a\nscenarios:\n  - name: echoes\n    turns:\n      - say: hi\n        expect: {response: nothing like this}\n"})
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": key, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "summary.md"}
	run := newCLI(t, dir, env, "run", "s.yaml", "--junit", "r.xml", "--html", "r.html", "--json", "r.json")
	run.expect(t, exitFailed)
	// A report that holds the key so, as an older version wrote it.
	copyReport(t, filepath.Join(dir, "r.json"), filepath.Join(dir, "old.json"), func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			if _, ok := o["reply"].(string); ok {
				o["reply"] = "your key " + coloured + " is wrong"
			}
		})
	})
	merge := newCLI(t, dir, env, "merge", "old.json", "--junit", "m.xml", "--html", "m.html")
	merge.expect(t, exitFailed)
	texts := map[string]string{"run's console": run.stdout.String() + run.stderr.String(), "merge's console": merge.stdout.String() + merge.stderr.String()}
	// (The step summary names the failing case, and quotes no reply.)
	for _, name := range []string{"r.xml", "r.html", "r.json", "m.xml", "m.html", "summary.md"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
	}
	for name, text := range texts {
		if f := keyInDecoded(text, secret.Forms(key)); f != "" {
			t.Errorf("%s shows the key (%s)", name, f)
		}
		if name != "summary.md" && !strings.Contains(text, secret.Mask) {
			t.Errorf("%s shows no masked key: the test tests nothing", name)
		}
	}
}
