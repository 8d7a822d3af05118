package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepReplyKeepsTheReportReadable: a platform may nest its reply as
// deep as encoding/json decodes (10000 levels). The run's verdict does
// not depend on it, and its JSON report stays a document every reader
// reads: agenttest merge, history and coverage, and jq 1.6, which stops
// at 256 levels. A body nested deeper than 200 levels is embedded as a
// JSON string of its text, as one that is not JSON is. Before, the body
// was embedded as received, on top of the report's own ten levels: the
// report of a run that passed was "not a JSON report" to every command
// that reads one back ("exceeded max depth"), so the merge of its shards
// and its gate failed.
func TestDeepReplyKeepsTheReportReadable(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{250, 9990} {
		t.Run(itoa(depth), func(t *testing.T) {
			t.Parallel()
			deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"conversationId":"conv-1","userInput":"","response":"hi","conversationEnded":false,"delayedResponse":false,` +
					`"metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"state":{"k":` + deep + `}}}`))
			}))
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			suite := "suite: deep\nscenarios:\n  - name: answers\n    agent: a\n    turns:\n      - say: hi\n        expect: {response: hi, node: Greeting}\n"
			if err := os.WriteFile(filepath.Join(dir, "deep.yaml"), []byte(suite), 0o644); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_RUNTIME_URL": srv.URL,
				"AGENTTEST_ACCOUNT_ID": "acc-1", "AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_RUNTIME_KEY": "runtime-key-0123456789"}
			report := filepath.Join(dir, "result.json")
			newCLI(t, dir, env, "run", ".", "--json", report).expect(t, exitOK, "1 passed, 0 failed")
			doc, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			if d := nesting(doc); d > 256 {
				t.Errorf("the report nests %d levels deep: jq 1.6 refuses more than 256", d)
			}
			if !strings.Contains(string(doc), `"response": "{\"conversationId\":\"conv-1\"`) {
				t.Errorf("the deep reply is not embedded as a string of its text")
			}
			newCLI(t, dir, env, "merge", report).expect(t, exitOK, "1 passed, 0 failed")
			newCLI(t, dir, env, "history", report).expect(t, exitOK)
			newCLI(t, dir, env, "coverage", report).expect(t, exitOK, "Greeting")
		})
	}
}

// nesting is how deeply a JSON document nests its arrays and objects,
// read through encoding/json's tokens: a reading of its own, apart from
// the report writer's.
func nesting(doc []byte) int {
	dec := json.NewDecoder(bytes.NewReader(doc))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			// The end, or more levels than encoding/json reads.
			return max(deepest, depth)
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}
