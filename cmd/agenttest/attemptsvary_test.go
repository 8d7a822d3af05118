package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestRetriedAttemptsSayWhatTheAgentAnswered: a scenario retried after
// each of its attempts broke the same expectation lists its earlier
// attempts one line each, with what the agent answered, so an agent
// that varies (here a die that never shows six) reads apart from one
// that gives the same wrong answer every time.
func TestRetriedAttemptsSayWhatTheAgentAnswered(t *testing.T) {
	t.Parallel()
	agent := diceAgent("[one, two, three]")
	suite := "agent: dice\nscenarios:\n  - name: rolls a six\n    retries: 5\n    turns:\n      - say: roll the dice\n        expect: {response: six}\n"
	dir := writeTree(t, map[string]string{"agents/dice.yaml": agent, "suites/s.yaml": suite})
	out := newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents", "--seed", "7").expect(t, exitFailed)
	line := regexp.MustCompile(`(?m)^    attempt [1-5] of 6 failed: suites/s.yaml:7:18: turn 1: reply is not the expected text \(actual: (one|two|three)\)$`)
	seen := map[string]bool{}
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		seen[m[1]] = true
	}
	if n := len(line.FindAllString(out, -1)); n != 5 || len(seen) < 2 {
		t.Errorf("%d lines of earlier attempts with what the agent answered (%v), want 5 with at least two answers:\n%s", n, seen, out)
	}
	if strings.Contains(out, "(actual: six)") {
		t.Errorf("an attempt says the agent answered six:\n%s", out)
	}
}

// diceAgent is the definition of an agent that answers "roll" with say:
// a reply, a list of phrasings, or weighted ones.
func diceAgent(say string) string {
	return "id: dice\nstart: Hello\nintents:\n  roll:\n    patterns: ['\\broll\\b']\nroutes:\n  - intent: roll\n    goto: Roll\n" +
		"nodes:\n  Hello: {say: Hello}\n  Roll: {say: " + say + "}\n"
}
