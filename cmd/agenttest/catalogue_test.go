package main

// The bad-input catalogue of docs/reliability.md comes from real runs:
// each bad file goes through `agenttest lint`, each bad platform answer
// through `agenttest run`, and the message the user got is recorded. The
// test checks that every message is placed (file:line:col, or the
// endpoint and the status) and nothing panicked; -update rewrites the
// catalogue.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/golden"
)

const cataloguePath = "../../docs/reliability-catalogue.md"

var badFiles = []struct{ name, file, src string }{
	{"YAML syntax error", "s.yaml", "scenarios:\n  - name: a\n    turns: [{say: hi}\n"},
	{"tab indentation", "s.yaml", "scenarios:\n\t- name: a\n"},
	{"wrong indentation", "s.yaml", "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect:\n          response: {contains: hi}\n         node: A\n"},
	{"value containing \": \"", "s.yaml", "scenarios:\n  - name: a\n    turns:\n      - say: note: hi\n"},
	{"value containing \": \" inside {...}", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect:\n          response: {contains: Note: how many}\n"},
	{"value starting with @", "s.yaml", "tags: [smoke, @slow]\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n"},
	{"control character", "s.yaml", "scenarios:\n  - name: a\x00\n"},
	{"broken UTF-8", "s.yaml", "scenarios:\n  - name: \xff\xfe\n"},
	{"unknown key", "s.yaml", "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expct: {node: A}\n"},
	{"another tool's name for a check", "s.yaml", "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {expect_text: {contains: table}}\n"},
	{"another tool's name for a check, beside say", "s.yaml", "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        node_trace: [CollectPartySize]\n"},
	{"wrong type", "s.yaml", "scenarios:\n  - name: a\n    turns: hello\n"},
	{"null where a string belongs", "s.yaml", "scenarios:\n  - name: ~\n    turns: [{say: hi}]\n"},
	{"bad regex matcher", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {response: {regex: \"(\"}}\n"},
	{"unknown matcher", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {response: {contans: x}}\n"},
	{"unclosed ${", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: \"hi ${name\"\n"},
	{"undefined ${var}", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: \"hi ${nobody}\"\n"},
	{"capture used in its own turn", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: 4 people at 7pm\n        expect: {response: {contains: \"${ref}\"}}\n        capture: {ref: {response: 'reference ([A-Z0-9]{6})'}}\n"},
	{"reply text written as expect:", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: Welcome\n"},
	{"checks not indented under expect:", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect:\n        response: Welcome\n"},
	{"two YAML documents", "s.yaml", "scenarios:\n  - name: a\n    turns: [{say: hi}]\n---\nscenarios: []\n"},
	{"feature without Feature:", "f.feature", "Scenario: a\n  When the user says \"hi\"\n"},
	{"undefined step", "f.feature", "Feature: f\n  Scenario: a\n    When the user sings \"hi\"\n"},
	{"step text in single quotes", "f.feature", "Feature: f\n  Scenario: a\n    When the user says 'hi'\n"},
	{"ignoring case on a step without it", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n    Then the current node is \"Greeting\" ignoring case\n"},
	{"bad regex in a step", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n    Then the agent's reply matches \"(unclosed\"\n"},
	{"regex broken around a ${var}", "s.yaml", "vars: {x: a}\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {response: {matches: '(${x}'}}\n"},
	{"Gherkin syntax error", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n    | a | b |\n    | c |\n"},
	{"tag with a space", "f.feature", "@agent: restaurant\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n"},
	{"misspelt scenarios: key", "s.yaml", "suite: s\nscenario:\n  - {name: a, turns: [{say: hi}]}\n"},
	{"handoff: no (YAML 1.1 boolean)", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {handoff: no}\n"},
	{"feature: undefined ${var}", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi ${nobody}\"\n"},
	{"feature: outline column not in Examples", "f.feature", "Feature: f\n  Scenario Outline: a\n    When the user says \"<dya>\"\n\n    Examples:\n      | day |\n      | fri |\n"},
	{"feature: outline column one Examples table lacks", "f.feature", "Feature: f\n  Scenario Outline: a\n    When the user says \"<day> for <party>\"\n\n    Examples:\n      | day | party |\n      | fri | 4     |\n\n    Examples:\n      | day |\n      | sat |\n"},
	{"feature: step keyword in lower case", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n    then the agent says \"hello\"\n"},
	{"feature: duplicate scenario names", "f.feature", "Feature: f\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: a\n    When the user says \"ho\"\n"},
	{"suite reads an API key", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns:\n      - say: \"${env:AGENTTEST_BUILD_KEY}\"\n        expect: {ended: false}\n"},
	{"alias of no anchor", "s.yaml", "agent: restaurant\nscenarios:\n  - name: a\n    turns: *common\n"},
	{"feature: doc string never closed", "f.feature", "Feature: f\n  Scenario: a\n    When the user says:\n      \"\"\"\n      hi\n"},
	{"feature: tags on a Background", "f.feature", "Feature: f\n  @smoke\n  Background:\n    Given the user says \"hi\"\n  Scenario: a\n    Then the agent says \"hello\"\n"},
}

// badAnswer is a debug-chat answer to the session creation.
type badAnswer struct {
	name   string
	status int
	ctype  string
	body   string
	// tolerated answers are read on purpose (internal/platform/decode.go
	// accepts what other implementations of the reference send).
	tolerated bool
	// location is the Location header of a redirect.
	location string
}

// badAnswers are the answers of the catalogue. They are made when it runs,
// not at init: this test binary is also the agenttest of the process tests
// (asMainEnv), and the 20 MiB body made at init cost each of those
// processes 90 ms under -race, besides the test binary itself.
func badAnswers() []badAnswer {
	return []badAnswer{
		{"truncated JSON", 200, "application/json", `{"conversationId":"c1","response":"Hi","metad`, false, ""},
		{"wrong type (object for a string)", 200, "application/json", `{"conversationId":{"id":1},"userInput":"","response":"Hi","metadata":{},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"wrong type (string for an object)", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":"none","conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"missing required fields", 200, "application/json", `{"conversationId":"c1","response":"Hi"}`, false, ""},
		{"number where a string belongs", 200, "application/json", `{"conversationId":17,"userInput":"","response":"Hi","metadata":{},"conversationEnded":false,"delayedResponse":false}`, true, ""},
		{"null where a string belongs", 200, "application/json", `{"conversationId":"c1","userInput":"","response":null,"metadata":{},"conversationEnded":false,"delayedResponse":false}`, true, ""},
		{"null where the reference requires a flag", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{},"conversationEnded":null,"delayedResponse":false}`, false, ""},
		{"null metadata", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":null,"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"a member sent twice, with different values", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hello","metadata":{},"response":"Goodbye","conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"metadata.currentNode sent twice, with different values", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"currentNode":"Greeting","nodeTrace":["Greeting"],"currentNode":"Goodbye"},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"a key of metadata.state sent twice, with different values", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"state":{"plan":"basic","plan":"premium"}},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"not an object", 200, "application/json", `[1,2,3]`, false, ""},
		{"empty body", 200, "application/json", ``, false, ""},
		{"huge body (20 MiB)", 200, "application/json", `{"conversationId":"c1","response":"` + strings.Repeat("a", 20<<20) + `"}`, false, ""},
		{"HTML error page", 502, "text/html", `<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>`, false, ""},
		{"error without a body", 503, "", ``, false, ""},
		{"debug-chat error body", 400, "application/json", `{"success":false,"error":"Bad Request","error_code":"INVALID_ENV","error_message":"clientEnv must be one of sandbox, pre-release, live"}`, false, ""},
		{"metadata.state not an object", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"state":["day"]},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"metadata.nodeTrace not a list of names", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"nodeTrace":{"a":1}},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"metadata.metrics not an object", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"metrics":"CALL_TURN"},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"metadata.functionEvents not a list of objects", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"functionEvents":["book_table"]},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"metadata.retrievedTopics not a list of names", 200, "application/json", `{"conversationId":"c1","userInput":"","response":"Hi","metadata":{"retrievedTopics":true},"conversationEnded":false,"delayedResponse":false}`, false, ""},
		{"redirect to another host", 307, "", ``, false, "http://198.51.100.7/v1/agents/a1/debug-chat"},
		{"redirect that turns the POST into a GET", 302, "", ``, false, "/elsewhere"},
	}
}

// badConfigs are target settings refused before anything runs.
var badConfigs = []struct {
	name string
	env  map[string]string
	cfg  string
}{
	{"plain http to a remote host", nil, "default_target: t\ntargets:\n  t:\n    build_url: http://build.example.com\n    build_key: ${env:MY_KEY}\n"},
	{"key shorter than 12 characters", map[string]string{"MY_KEY": "short"}, "default_target: t\ntargets:\n  t:\n    build_url: https://build.example.com\n    build_key: ${env:MY_KEY}\n"},
	{"tab indentation in agenttest.yaml", nil, "default_target: t\ntargets:\n\tt: {}\n"},
	{"probe number from a variable that holds no number", map[string]string{"PROBE": "ask-reception"},
		"default_target: t\ntargets:\n  t:\n    build_url: https://build.example.com\n    build_key: ${env:MY_KEY}\n    probe_numbers: [\"${env:PROBE}\"]\n"},
}

// placedFile is file:line, with the column whenever the parser gives one
// (yaml.v3 gives none for some syntax errors).
var placedFile = regexp.MustCompile(`^[sf]\.(yaml|feature):\d+(:\d+)?: `)

func TestBadInputCatalogue(t *testing.T) {
	t.Parallel()
	var doc strings.Builder
	doc.WriteString("<!-- Generated by `go test ./cmd/agenttest -run TestBadInputCatalogue -update`; do not edit. -->\n\n")
	doc.WriteString("### Bad files (`agenttest lint`, exit 2)\n\n| Input | Message (first line) |\n|---|---|\n")
	for _, bf := range badFiles {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, bf.file), []byte(bf.src), 0o644); err != nil {
			t.Fatal(err)
		}
		c := newCLI(t, dir, nil, "lint", bf.file)
		code := c.run(t)
		msg := firstLine(strings.TrimSpace(c.stderr.String() + "\n" + c.stdout.String()))
		if code != exitUsage || !placedFile.MatchString(msg) {
			t.Errorf("%s: exit %d, first line %q: want exit 2 and file:line:col", bf.name, code, msg)
		}
		if strings.Contains(c.stderr.String(), "internal error") {
			t.Errorf("%s: %s", bf.name, c.stderr)
		}
		fmt.Fprintf(&doc, "| %s | `%s` |\n", bf.name, mdEscape(msg))
	}

	doc.WriteString("\n### Bad platform answers (`agenttest run`, the case is an error, exit 4)\n\n| Answer to `POST /v1/agents/{agentId}/debug-chat` | Message in the report |\n|---|---|\n")
	for _, ba := range badAnswers() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Only debug-chat gets the bad answer. The deployment read
			// before the case is not served: reading the huge body up to
			// the 16 MiB limit of other answers took most of the test's
			// CPU under the race detector, and the case's error is what
			// the catalogue shows.
			if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/agents/a1/debug-chat") {
				http.NotFound(w, r)
				return
			}
			if ba.ctype != "" {
				w.Header().Set("Content-Type", ba.ctype)
			}
			if ba.location != "" {
				w.Header().Set("Location", ba.location)
			}
			w.WriteHeader(ba.status)
			w.Write([]byte(ba.body))
		}))
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("agent: a1\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n"), 0o644)
		jsonPath := filepath.Join(dir, "r.json")
		c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": "bk-catalogue-0123"}, "run", "s.yaml", "--json", jsonPath)
		code := c.run(t)
		srv.Close()
		var r drillJSON
		b, _ := os.ReadFile(jsonPath)
		if err := json.Unmarshal(b, &r); err != nil || len(r.Files) != 1 || len(r.Files[0].Cases) != 1 {
			t.Fatalf("%s: exit %d, no usable report: %v\n%s%s", ba.name, code, err, c.stdout, c.stderr)
		}
		cs := r.Files[0].Cases[0]
		last := cs.Attempts[len(cs.Attempts)-1]
		msg := ""
		if last.Error != nil {
			// The test server's port changes from run to run.
			msg = strings.ReplaceAll(last.Error.Message, strings.TrimPrefix(srv.URL, "http://"), "127.0.0.1:PORT")
		}
		want := fmt.Sprintf("POST /v1/agents/a1/debug-chat: %d", ba.status)
		switch {
		case ba.tolerated:
			if code != exitOK || cs.Status != "passed" {
				t.Errorf("%s: exit %d, %s (%s): want the answer read", ba.name, code, cs.Status, msg)
			}
			msg = "(none: read as a string; null is the empty string)"
		case code != exitErrored || cs.Status != "errored" || !strings.Contains(msg, want):
			t.Errorf("%s: exit %d, %s, message %q: want an error naming %q", ba.name, code, cs.Status, msg, want)
		}
		fmt.Fprintf(&doc, "| %s (%d) | `%s` |\n", ba.name, ba.status, mdEscape(msg))
	}

	doc.WriteString("\n### Bad configuration (`agenttest run`, exit 2, nothing runs)\n\n| Setting | Message (first line) |\n|---|---|\n")
	for _, bc := range badConfigs {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(bc.cfg), 0o644)
		os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("agent: a1\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n"), 0o644)
		env := map[string]string{"MY_KEY": "bk-catalogue-0123"}
		maps.Copy(env, bc.env)
		c := newCLI(t, dir, env, "run", "s.yaml")
		code := c.run(t)
		msg := firstLine(strings.TrimSpace(c.stderr.String()))
		if code != exitUsage || !strings.HasPrefix(msg, "agenttest.yaml:") {
			t.Errorf("%s: exit %d, first line %q: want exit 2 and agenttest.yaml:line:col", bc.name, code, msg)
		}
		fmt.Fprintf(&doc, "| %s | `%s` |\n", bc.name, mdEscape(msg))
	}

	// The catalogue is a golden file: a changed message must change the
	// documentation with it, or this test fails.
	golden.Check(t, cataloguePath, []byte(doc.String()))
}

func mdEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "`", "'")
}
