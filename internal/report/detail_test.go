package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// TestCaseBlockBody: the console's block of a case the runner can leave
// in any shape says what broke and whose fault it is, and never panics.
func TestCaseBlockBody(t *testing.T) {
	t.Parallel()
	greeting := func() *result.Attempt {
		return &result.Attempt{Number: 1, Status: result.Failed,
			Turns:    []*result.Turn{exchange{index: 0, pos: pos("a.yaml", 4, 3), say: "hi", text: "Welcome!", conv: "c1", started: t0}.turn()},
			Failures: []assert.Failure{failure(pos("a.yaml", 5, 7), "response", "reply does not match", "hello", "Welcome!", "")}}
	}
	// broke is greeting's failure and transcript, each line after indent.
	broke := func(indent string) string {
		var b strings.Builder
		for _, l := range []string{"a.yaml:5:7: greeting: reply does not match", "  expected: hello", "  actual:   Welcome!",
			"transcript:", "  greeting", "    < Welcome!"} {
			b.WriteString(indent + l + "\n")
		}
		return b.String()
	}
	timeout := func(n int) *result.Attempt {
		return &result.Attempt{Number: n, Status: result.Errored, Error: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}}
	}
	cutOff := func(st result.Status, reason string) *result.Case {
		return &result.Case{Status: st, SkipReason: reason,
			Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionInterrupted, Runs: 2, Passed: 1, Failed: 1, Limit: 5, PassRate: 0.8}}
	}
	for _, tc := range []struct {
		name string
		c    *result.Case
		want string // a block with a body ends in a blank line
	}{
		{"errored before any attempt", &result.Case{Status: result.Errored},
			"ERROR a.yaml c (0ms)\n    errored before any attempt started\n\n"},
		{"failed before any attempt", &result.Case{Status: result.Failed},
			"FAIL a.yaml c (0ms)\n    failed before any attempt started\n\n"},
		// runner.noAgent: an error at the scenario, before any turn.
		{"errored at a position, no turns", &result.Case{Status: result.Errored, Attempts: []*result.Attempt{{Number: 1, Status: result.Errored,
			Error: &result.Error{Pos: pos("a.yaml", 2, 3), Kind: result.KindConfig, Message: "no agent"}}}},
			"ERROR a.yaml c (0ms)\n    a.yaml:2:3: config: no agent\n\n"},
		// runner.failedEarlier: the assertion failed, the retry met a
		// timeout; the case is failed and shows the broken expectation
		// in full, the timeout in one line.
		{"failed, then its retry errored", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{greeting(), timeout(2)}},
			"FAIL a.yaml c (0ms)\n" +
				"    attempt 2 of 2 errored: timeout: no reply within 10s\n" +
				"    attempt 1 of 2:\n" + broke("      ") + "\n"},
		{"errored after errors", &result.Case{Status: result.Errored, Attempts: []*result.Attempt{timeout(1), timeout(2)}},
			"ERROR a.yaml c (0ms)\n" +
				"    attempt 1 of 2 errored: timeout: no reply within 10s\n" +
				"    attempt 2 of 2:\n" +
				"      timeout: no reply within 10s\n\n"},
		// An earlier attempt without a cause is listed by its status.
		{"failed without a cause, then failed", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Number: 1, Status: result.Failed},
			func() *result.Attempt { a := greeting(); a.Number = 2; return a }()}},
			"FAIL a.yaml c (0ms)\n    attempt 1 of 2 failed\n    attempt 2 of 2:\n" + broke("      ") + "\n"},
		{"failed without a cause", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Number: 1, Status: result.Failed}}},
			"FAIL a.yaml c (0ms)\n    failed without a recorded cause\n\n"},
		// The transcript stops at the turn that broke, the first one too.
		{"broke at the first turn", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{func() *result.Attempt {
			a := greeting()
			a.Turns = append(a.Turns, exchange{index: 1, pos: pos("a.yaml", 6, 3), say: "bye", text: "Bye!", conv: "c1", started: t0}.turn())
			return a
		}()}},
			"FAIL a.yaml c (0ms)\n" + broke("    ") + "\n"},
		// A confirmation's summary and its reads, when there was more
		// than one.
		{"confirmations", &result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Number: 1, Status: result.Failed,
			Failures: []assert.Failure{failure(pos("a.yaml", 9, 5), "confirm", "no booking", "", "", "")},
			Confirmations: []*result.Confirmation{
				{Kind: "booking", Subject: "table for 2", Found: true, Held: true, Summary: "at 19:00", Reads: 1, Duration: 1e9},
				{Kind: "booking", Subject: "table for 4", Reads: 3, Duration: 2e9},
			}}}},
			"FAIL a.yaml c (0ms)\n" +
				"    a.yaml:9:5: confirm: no booking\n" +
				"    confirmed:\n" +
				"      ✓ booking table for 2: at 19:00\n" +
				"      ✗ booking table for 4 (3 reads, 2.0s)\n\n"},
		// A repeat cut off before a verdict ran: its line says the runs
		// it made, pending on an interruption, skipped on a stop.
		{"a repeat interrupted", cutOff(result.Pending, result.ReasonInterruptedRuns),
			"PENDING a.yaml c (interrupted before a verdict: 2 runs made of 5, 1 passed, 1 failed)\n"},
		{"a repeat stopped", cutOff(result.Skipped, result.ReasonStoppedRuns),
			"SKIP a.yaml c (stopped before a verdict: 2 runs made of 5, 1 passed, 1 failed)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.c.Name = "c"
			if got := NewHuman(&bytes.Buffer{}, HumanOptions{}).caseBlock(&result.File{Path: "a.yaml"}, tc.c); got != tc.want {
				t.Errorf("block =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestFailedAttempt: every view of a non-passing case (console, JUnit,
// GitHub, HTML) shows the attempt Case.Deciding picks: the last of the
// case's own status, so a failure is not reported by a later error.
func TestFailedAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status   result.Status
		attempts string // one letter per attempt: Failed, Errored, Passed, Pending, - for nil
		want     int    // the attempt's number, 0 for none
	}{
		{result.Failed, "", 0},
		{result.Failed, "F", 1},
		{result.Failed, "FE", 1},
		{result.Failed, "FEE", 1},
		{result.Failed, "FFE", 2},
		{result.Errored, "FE", 2},
		{result.Errored, "EF", 1},
		{result.Errored, "EE", 2},
		// A repeat's runs: the verdict's own kind of run first.
		{result.Failed, "FPEP", 1},
		{result.Errored, "EPFP", 1},
		// No attempt of the case's status: the last that did not pass.
		{result.Failed, "EP", 1},
		{result.Flaky, "FEP", 2},
		{result.Failed, "F-", 1},
		{result.Passed, "P", 1},
		{result.Pending, "FQ", 1},
		{result.Failed, "PQ", 2},
	} {
		c := &result.Case{Status: tc.status}
		for i, l := range tc.attempts {
			st := map[rune]result.Status{'F': result.Failed, 'E': result.Errored, 'P': result.Passed, 'Q': result.Pending}[l]
			var a *result.Attempt
			if l != '-' {
				a = &result.Attempt{Number: i + 1, Status: st}
			}
			c.Attempts = append(c.Attempts, a)
		}
		got := 0
		if a := c.Deciding(); a != nil {
			got = a.Number
		}
		if got != tc.want {
			t.Errorf("%s case, attempts %q: attempt %d, want %d", tc.status, tc.attempts, got, tc.want)
		}
	}
	// The JUnit message and the GitHub annotation name the expectation,
	// not the timeout after it.
	c := &result.Case{Name: "c", Status: result.Failed, Attempts: []*result.Attempt{
		{Number: 1, Status: result.Failed, Failures: []assert.Failure{failure(pos("a.yaml", 5, 7), "response", "reply does not match", "hello", "hi", "")}},
		{Number: 2, Status: result.Errored, Error: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}}}}
	r := &result.Result{Started: t0, Files: []*result.File{{Path: "a.yaml", Suite: "a", Cases: []*result.Case{c}}}}
	if f := junitOf(t, r).Suites[0].Cases[0].Failure; f == nil || f.Message != "a.yaml:5:7: reply does not match" {
		t.Errorf("JUnit <failure> = %+v, want the message of the failed expectation", f)
	}
	var g bytes.Buffer
	if err := WriteGitHubAnnotations(&g, r); err != nil {
		t.Fatal(err)
	}
	if out := g.String(); !strings.Contains(out, "reply does not match") || strings.Contains(out, "no reply within 10s") {
		t.Errorf("GitHub annotation names not the failure alone:\n%s", out)
	}
	// An errored case shows its error in full, and the failed attempt
	// after it in one line.
	e := &result.Case{Name: "c", Status: result.Errored, Attempts: []*result.Attempt{
		{Number: 1, Status: result.Errored, Error: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}},
		{Number: 2, Status: result.Failed, Failures: []assert.Failure{failure(pos("a.yaml", 5, 7), "response", "reply does not match", "hello", "hi", "")}}}}
	var b strings.Builder
	detail{b: &b}.writeCase(e, "")
	want := "attempt 2 of 2 failed: a.yaml:5:7: reply does not match (actual: hi)\nattempt 1 of 2:\n  timeout: no reply within 10s\n"
	if got := b.String(); got != want {
		t.Errorf("errored case's body =\n%s\nwant\n%s", got, want)
	}
}

// TestCutOffRepeatInJUnit: JUnit's <skipped> of a repeat cut off before a
// verdict says the runs it made, as the console's line does, whether an
// interruption (pending) or a stop (skipped) cut it off.
func TestCutOffRepeatInJUnit(t *testing.T) {
	t.Parallel()
	for st, reason := range map[result.Status]string{result.Pending: result.ReasonInterruptedRuns, result.Skipped: result.ReasonStoppedRuns} {
		c := &result.Case{Name: "c", Status: st, SkipReason: reason,
			Repeat: &result.Repeat{Procedure: result.ProcedureSPRT, Decision: result.DecisionInterrupted, Runs: 3, Passed: 2, Errored: 1, Limit: 40}}
		r := &result.Result{Started: t0, Files: []*result.File{{Path: "a.yaml", Suite: "a", Cases: []*result.Case{c}}}}
		want := reason + ": 3 runs made of at most 40, 2 passed, 0 failed, 1 errored"
		if s := junitOf(t, r).Suites[0].Cases[0].Skipped; s == nil || s.Message != want {
			t.Errorf("%s: <skipped> = %+v, want the message %q", st, s, want)
		}
	}
}

// TestWriteCaseNotRun: the body of a case that did not run says why.
func TestWriteCaseNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    *result.Case
		want string
	}{
		{&result.Case{Status: result.Skipped, SkipReason: "skip: wip"}, "  skipped: skip: wip\n"},
		{&result.Case{Status: result.Skipped}, ""},
		{&result.Case{Status: result.Pending}, "  " + notRunReason + "\n"},
		{&result.Case{Status: result.Errored}, "  errored before any attempt started\n"},
	} {
		var b strings.Builder
		detail{b: &b}.writeCase(tc.c, "  ")
		if got := b.String(); got != tc.want {
			t.Errorf("%s case: got %q, want %q", tc.c.Status, got, tc.want)
		}
	}
}

// TestShowLong: a compared value of more than longValue runes is shown by
// its first longHead runes and its length, quoted or as a block as the
// whole would be; one of longValue runes is shown whole.
func TestShowLong(t *testing.T) {
	t.Parallel()
	word := func(n int) string { return strings.Repeat("é", n) }
	for _, tc := range []struct{ name, value, want string }{
		{"short", "hello", "hello"},
		{"at the limit", word(longValue), word(longValue)},
		{"over the limit", word(longValue + 1), word(longHead) + "… (1001 characters, cut: the diff shows where they differ)"},
		{"quoted", " " + word(longValue), `" ` + word(longHead-1) + `"… (1001 characters, cut: the diff shows where they differ)`},
		{"lines", word(longValue) + "\nend", "|\n  " + word(longHead) + "… (1004 characters, cut: the diff shows where they differ)"},
		{"lines cut after the first", "a\n" + word(longValue), "|\n  a\n  " + word(longHead-2) + "… (1002 characters, cut: the diff shows where they differ)"},
		{"quoted lines", " " + word(longValue) + "\nend", `" ` + word(longHead-1) + `"… (1005 characters, cut: the diff shows where they differ)`},
		{"the first 200", strings.Repeat("a", 1001), strings.Repeat("a", 200) + "… (1001 characters, cut: the diff shows where they differ)"},
	} {
		if got := fileStyle.showLong(tc.value, "  ", false); got != tc.want {
			t.Errorf("%s: showLong = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestShortValue: the value of a one-line summary is cut at ShortRunes
// runes, quoted when its raw form would mislead or it spans lines.
func TestShortValue(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", ShortRunes)
	for _, tc := range []struct{ name, value, want string }{
		{"short", "three", "three"},
		{"at the limit", long, long},
		{"over it", long + "x", long + "…"},
		{"the first 60", strings.Repeat("a", 61), strings.Repeat("a", 60) + "…"},
		{"spaces that matter", "three ", `"three "`},
		{"lines", "one\ntwo", `"one\ntwo"`},
		{"lines over the limit", "one\n" + long, `"one\n` + long[:len(long)-8] + `…"`},
		{"empty", "", `""`},
	} {
		if got := fileStyle.shortValue(tc.value); got != tc.want {
			t.Errorf("%s: shortValue = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAttemptLineActual: an earlier attempt's line says what the agent
// answered to the first expectation it broke, and nothing for a failure
// that compared no text.
func TestAttemptLineActual(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		f    assert.Failure
		want string
	}{
		{"an answer", assert.Failure{Pos: pos("a.yaml", 5, 7), Message: "reply is not the expected text", Expected: "six", Actual: "three"},
			"failed: a.yaml:5:7: reply is not the expected text (actual: three)"},
		{"no text compared", assert.Failure{Pos: pos("a.yaml", 5, 7), Message: "no handoff"},
			"failed: a.yaml:5:7: no handoff"},
	} {
		a := &result.Attempt{Number: 1, Status: result.Failed, Failures: []assert.Failure{tc.f}}
		if got := fileStyle.attemptLine(a); got != tc.want {
			t.Errorf("%s: attemptLine = %q, want %q", tc.name, got, tc.want)
		}
	}
}
