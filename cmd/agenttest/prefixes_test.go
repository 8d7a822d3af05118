package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsSayEachThingOnce: an error line names its place once: the
// failed call of a turn as "turn N" (from the transcript), anything else
// in the runner's own words, never "turn 1: http: turn 1: POST ...".
func TestErrorsSayEachThingOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Count(r.URL.Path, "/") == 4 { // session creation
			fmt.Fprint(w, `{"conversationId":"c1","userInput":"","response":"Welcome","metadata":{},"conversationEnded":false,"delayedResponse":false}`)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"message":"boom"}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	suite := `agent: a1
scenarios:
  - name: turn fails
    turns:
      - say: hi
  - name: variable unset
    # The run refuses a say that expands an unset variable before it
    # starts; a literal $${ passes that check and still resolves the
    # vars when the turn is said (the run-time backstop).
    vars: {v: "${env:AGENTTEST_TEST_UNSET}"}
    turns:
      - say: "$${v}"
`
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": "build-key-0123456789"}
	c := newCLI(t, dir, env, "run", "--parallel", "1")
	if code := c.run(t); code != exitErrored {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	out := c.stdout.String()
	for _, want := range []string{
		"s.yaml:5:9: turn 1: http: POST /v1/agents/a1/debug-chat/c1: 500: boom",
		"s.yaml:12:9: config: turn 1: say: var v: environment variable AGENTTEST_TEST_UNSET is not set",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Count(line, "turn 1") > 1 {
			t.Errorf("a line says the turn twice: %q", line)
		}
	}
}
