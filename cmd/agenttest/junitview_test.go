package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJUnitTranscriptOnce: a CI server's test view shows a case's
// broken expectation first, its transcript once, and an errored case's
// message says it is not the agent's failure. Jenkins shows a <failure> or <error> body (Stack
// Trace) above its <system-out> (Standard Output), and GitLab joins them
// in one System output, so system-out holds the properties alone when the
// body holds the transcript; a passing case's system-out keeps it.
func TestJUnitTranscriptOnce(t *testing.T) {
	t.Parallel()
	suite := "agent: restaurant\nscenarios:\n" +
		"  - name: greets wrongly\n    greeting: {response: Good morning}\n" +
		"  - name: greets\n    greeting: {response: {contains: Bella Tavola}}\n" +
		"  - name: books\n    turns:\n      - say: I'd like to book a table\n        expect: {response: {contains: How many}}\n"
	dir := writeTree(t, map[string]string{"suites/s.yaml": suite})
	// Every turn times out on the platform: "books" errors on both of
	// its attempts; the greetings are no turn.
	env := map[string]string{simFlagsEnv: "--chat-timeout 1"}
	newCLI(t, dir, env, "run", "suites", "--sim", "--retries", "1", "--junit", "r.xml").expect(t, exitFailed)
	raw, err := os.ReadFile(filepath.Join(dir, "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ body, out int }{
		"greets wrongly": {1, 0},
		"greets":         {0, 1},
		"books":          {1, 0}, // the deciding attempt's; the first is one line
	}
	if len(doc.Cases) != len(want) {
		t.Fatalf("%d testcases, want %d:\n%s", len(doc.Cases), len(want), raw)
	}
	for _, c := range doc.Cases {
		body, msg := "", ""
		if c.Failure != nil {
			body, msg = c.Failure.Body, c.Failure.Message
		}
		if c.Error != nil {
			body, msg = c.Error.Body, c.Error.Message
		}
		// Both are retried: the body opens with the deciding cause, not
		// with "attempt 1 of 2 …" (GitLab shows the body, not the message).
		if msg != "" && !strings.HasPrefix(body, msg+"\n") {
			t.Errorf("%s: body does not open with the message %q:\n%s", c.Name, msg, body)
		}
		n := func(s string) int { return strings.Count(s, "transcript (conversation ") }
		w := want[c.Name]
		if n(body) != w.body || n(c.SystemOut) != w.out {
			t.Errorf("%s: %d transcripts in the body and %d in system-out, want %d and %d:\n%s\n--- system-out\n%s",
				c.Name, n(body), n(c.SystemOut), w.body, w.out, body, c.SystemOut)
		}
		// Jenkins and the GitHub Actions reporters show an <error> as a
		// failed test, its type unread: its message says whose it is.
		const timeout = "suites/s.yaml:9:9: turn 1: timeout: POST /v1/agents/restaurant/debug-chat/conv-"
		const notAgent = " (errored, not failed: the platform broke, not the agent; nothing was learnt about the agent)"
		if c.Name == "books" && (c.Error == nil || !strings.HasPrefix(c.Error.Message, timeout) || !strings.HasSuffix(c.Error.Message, notAgent)) {
			t.Errorf("books: error %+v, want a message %q…%q", c.Error, timeout, notAgent)
		}
		if !strings.HasPrefix(c.SystemOut, "conversationId: conv-") {
			t.Errorf("%s: system-out does not open with the properties:\n%s", c.Name, c.SystemOut)
		}
	}
}
