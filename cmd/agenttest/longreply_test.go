package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLongReplyFailure: an agent's reply of 26 KB that differs from the
// expected text in one word near its end. The diff shows that word with
// what stands beside it (not that the first 4 KB are the same); the
// console and JUnit show expected and actual by their start and length,
// the reply whole once, in the transcript; the JSON report keeps both
// texts whole, since it is data.
func TestLongReplyFailure(t *testing.T) {
	t.Parallel()
	var clauses []string
	for i := range 340 {
		clauses = append(clauses, "Clause "+itoa(i)+": the tenant shall keep the premises in good repair.")
	}
	reply := strings.Join(clauses, " ")
	want := strings.Replace(reply, "Clause 339: the tenant", "Clause 339: the landlord", 1)
	agent := "id: lease\nstart: Hello\nintents:\n  terms:\n    patterns: ['\\bterms\\b']\nroutes:\n  - intent: terms\n    goto: Terms\n" +
		"nodes:\n  Hello: {say: Hello}\n  Terms: {say: \"" + reply + "\"}\n"
	suite := "agent: lease\nscenarios:\n  - name: reads the terms\n    turns:\n      - say: the terms please\n" +
		"        expect: {response: \"" + want + "\"}\n"
	dir := writeTree(t, map[string]string{"agents/lease.yaml": agent, "suites/s.yaml": suite})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents", "--json", "r.json", "--junit", "r.xml").expect(t, exitFailed)
	junit, err := os.ReadFile(filepath.Join(dir, "r.xml"))
	if err != nil {
		t.Fatal(err)
	}
	// The diff holds what stands beside the change, from a word's start.
	diff := "diff:     … " + clauses[338] + " Clause 339: the [-landlord-]{+tenant+} shall keep the premises in good repair.\n"
	// JUnit shows the transcript once, in the failure: not again in
	// <system-out>.
	for name, tc := range map[string]struct {
		text  string
		times int
	}{"console": {out, 1}, "JUnit": {string(junit), 1}} {
		text := tc.text
		if !strings.Contains(text, diff) {
			t.Errorf("%s: no diff %q in\n%.3000s", name, diff, text)
		}
		if n := strings.Count(text, clauses[300]); n != tc.times {
			t.Errorf("%s: the reply's clause 300 is shown %d times, want %d (in the transcript)", name, n, tc.times)
		}
		for _, line := range []string{"expected: " + clauses[0], "actual:   " + clauses[0]} {
			if !strings.Contains(text, line) {
				t.Errorf("%s: no line starting %q", name, line)
			}
		}
		if !strings.Contains(text, "… ("+itoa(len([]rune(reply)))+" characters, cut: the diff shows where they differ)") {
			t.Errorf("%s: the actual value does not say it was cut and how long it is", name)
		}
	}
	f := readDoc(t, filepath.Join(dir, "r.json")).Result.Files[0].Cases[0].Last().Failures[0]
	if f.Expected != want || f.Actual != reply {
		t.Errorf("JSON failure holds expected of %d bytes and actual of %d, want the whole texts (%d, %d)", len(f.Expected), len(f.Actual), len(want), len(reply))
	}
}
