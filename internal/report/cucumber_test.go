package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// Cucumber's tools read a scenario's result from its last attempt, so the
// runs of a repeated scenario end with one whose outcome is the verdict.
func TestVerdictLast(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		c      *result.Case
		wantAt int // index in c.Attempts of the attempt emitted last
	}
	att := func(st ...result.Status) []*result.Attempt {
		out := make([]*result.Attempt, len(st))
		for i, s := range st {
			out[i] = &result.Attempt{Number: i + 1, Run: i + 1, Status: s}
		}
		return out
	}
	rep := &result.Repeat{Procedure: result.ProcedureFixed, Runs: 3}
	cases := []testCase{
		{name: "failed verdict, last run passed", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Passed, result.Failed, result.Passed)}, wantAt: 1},
		{name: "passed verdict, last run failed", c: &result.Case{Status: result.Passed, Repeat: rep,
			Attempts: att(result.Passed, result.Passed, result.Failed)}, wantAt: 1},
		{name: "verdict already last", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Passed, result.Failed)}, wantAt: 1},
		{name: "retries keep their order", c: &result.Case{Status: result.Flaky,
			Attempts: att(result.Failed, result.Passed)}, wantAt: 1},
		{name: "two runs, the verdict's first", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Failed, result.Passed)}, wantAt: 0},
		{name: "the verdict's run first", c: &result.Case{Status: result.Failed, Repeat: rep,
			Attempts: att(result.Failed, result.Passed, result.Passed)}, wantAt: 0},
		// An error after a failed try is the verdict of a retried case:
		// its last attempt says the platform broke, not the agent.
		{name: "retried into an error", c: &result.Case{Status: result.Errored,
			Attempts: att(result.Failed, result.Errored)}, wantAt: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := verdictLast(tc.c)
			if len(got) != len(tc.c.Attempts) || got[len(got)-1] != tc.c.Attempts[tc.wantAt] {
				t.Fatalf("last attempt %+v, want attempt %d", got[len(got)-1], tc.wantAt+1)
			}
			seen := map[*result.Attempt]bool{}
			for _, a := range got {
				seen[a] = true
			}
			if len(seen) != len(tc.c.Attempts) {
				t.Errorf("attempts lost or repeated: %v", got)
			}
		})
	}
}

// A step an errored attempt fails says first that it errored and who
// broke, never the agent, and names the error's kind in its exception;
// a failed check's step says what the check found.
func TestCucumberStepBlame(t *testing.T) {
	t.Parallel()
	steps := []diag.Pos{pos("a.feature", 3, 5), pos("a.feature", 4, 5)}
	type testCase struct {
		name          string
		a             *result.Attempt
		stop          *result.Stop
		message, exc  string
		failedAtIndex int
	}
	errored := func(kind string) *result.Attempt {
		return &result.Attempt{Status: result.Errored, Error: &result.Error{Pos: pos("a.feature", 4, 5), Kind: kind, Message: "it broke"}}
	}
	// Who broke, by the error's kind: never the agent.
	cases := []testCase{}
	for _, k := range []struct{ kind, who string }{
		{result.KindHTTP, "the platform"}, {result.KindNetwork, "the network or the platform"},
		{result.KindConfig, "the scenario's configuration"}, {result.KindInternal, "agenttest itself"},
		{result.KindMessaging, "the platform"}, {result.KindRateLimited, "the platform"},
		{result.KindInterrupted, "the run's interruption"}, {"", "the platform or the harness"},
	} {
		line, exc := "a.feature:4:5: "+k.kind+": it broke", "agenttest.Error."+k.kind
		if k.kind == "" {
			line, exc = "a.feature:4:5: it broke", "agenttest.Error.error"
		}
		cases = append(cases, testCase{name: cmp.Or(k.kind, "no kind"), a: errored(k.kind), failedAtIndex: 1, exc: exc,
			message: "errored, not failed: " + k.who + " broke, not the agent; nothing was learnt about the agent\n" + line})
	}
	for _, tc := range append(cases, []testCase{
		{name: "failed, no cause", a: &result.Attempt{Status: result.Failed}, failedAtIndex: 1, message: "failed without a recorded cause"},
		{name: "no cause", a: &result.Attempt{Status: result.Errored}, failedAtIndex: 1, exc: "agenttest.Error.error",
			message: "errored, not failed: the platform or the harness broke, not the agent; nothing was learnt about the agent\nerrored without a recorded cause"},
		{name: "failed check", a: &result.Attempt{Status: result.Failed, Failures: []assert.Failure{{Pos: pos("a.feature", 3, 9), Key: "reply", Message: "reply does not match"}}},
			failedAtIndex: 0, exc: "agenttest.Failure", message: "a.feature:3:9: reply does not match"},
		// The error that stopped the run on a refused key is the
		// target's configuration's, as the stop says, not the
		// platform's by its kind.
		{name: "the cause of a stop on a configuration problem", a: errored(result.KindHTTP), failedAtIndex: 1, exc: "agenttest.Error.http",
			stop:    &result.Stop{Kind: result.StopCredentials, Config: true, Cause: "it broke"},
			message: "errored, not failed: the target's configuration broke, not the agent; nothing was learnt about the agent\na.feature:4:5: http: it broke"},
		{name: "another error of a run stopped on a configuration problem", a: errored(result.KindHTTP), failedAtIndex: 1, exc: "agenttest.Error.http",
			stop:    &result.Stop{Kind: result.StopCredentials, Config: true, Cause: "401 elsewhere"},
			message: "errored, not failed: the platform broke, not the agent; nothing was learnt about the agent\na.feature:4:5: http: it broke"},
	}...) {
		t.Run(tc.name, func(t *testing.T) {
			res := stepResults(tc.stop, &result.Case{Status: tc.a.Status}, tc.a, steps)
			got := res[tc.failedAtIndex]
			if got.Status != messages.TestStepResultStatus_FAILED || !strings.HasPrefix(got.Message, tc.message) {
				t.Errorf("step %d: %s %q, want FAILED %q", tc.failedAtIndex, got.Status, got.Message, tc.message)
			}
			if tc.exc == "" && got.Exception != nil || tc.exc != "" && (got.Exception == nil || got.Exception.Type != tc.exc) {
				t.Errorf("exception %+v, want %s", got.Exception, tc.exc)
			}
		})
	}
}

// A passed attempt passes every step; a failure is blamed on the last
// step written at or before it, by line and then by column, as two steps
// on one line of a YAML flow mapping are.
func TestCucumberStepOfFailure(t *testing.T) {
	t.Parallel()
	passed := &result.Attempt{Status: result.Passed}
	for i, r := range stepResults(nil, &result.Case{Status: result.Passed}, passed, []diag.Pos{pos("a.feature", 3, 5), pos("a.feature", 4, 5)}) {
		if r.Status != messages.TestStepResultStatus_PASSED {
			t.Errorf("passed attempt: step %d %s", i, r.Status)
		}
	}
	steps := []diag.Pos{pos("a.yaml", 3, 5), pos("a.yaml", 3, 20), pos("a.yaml", 5, 5)}
	for _, tc := range []struct {
		at   diag.Pos
		want int
	}{
		{pos("a.yaml", 3, 9), 0}, {pos("a.yaml", 3, 20), 1}, {pos("a.yaml", 4, 1), 1}, {pos("a.yaml", 2, 1), 0},
		{pos("b.yaml", 9, 1), 0}, {diag.Pos{}, 2},
	} {
		if got := stepAt(steps, tc.at); got != tc.want {
			t.Errorf("stepAt(%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
}

// TestWriteCucumberMessages reads back the messages of a feature's
// scenarios: each case is matched to its pickle by the line of its
// example row (the last AST node), a failed step carries the broken
// expectation and the transcript up to it, a retried attempt says it will
// be retried, a repeat's verdict line heads only its last attempt, a case
// not run says why on every step, and the run's verdict is one line
// without escape sequences.
func TestWriteCucumberMessages(t *testing.T) {
	t.Parallel()
	const uri = "features/f.feature"
	locs := map[string]*messages.Location{"outline": {Line: 2, Column: 3}}
	var pickles []*messages.Pickle
	// pickle is an example row of the outline, at line, whose two steps
	// are at lines 3 and 4.
	pickle := func(line int64) {
		id := fmt.Sprint(line)
		locs["row"+id] = &messages.Location{Line: line, Column: 5}
		locs["s3"], locs["s4"] = &messages.Location{Line: 3, Column: 5}, &messages.Location{Line: 4, Column: 5}
		pickles = append(pickles, &messages.Pickle{Id: "p" + id, Uri: uri, AstNodeIds: []string{"outline", "row" + id},
			Steps: []*messages.PickleStep{{Id: "p" + id + "s3", AstNodeIds: []string{"s3"}}, {Id: "p" + id + "s4", AstNodeIds: []string{"s4"}}}})
	}
	turns := []*result.Turn{{Index: 1, Pos: pos(uri, 3, 5), Say: "hi"}, {Index: 2, Pos: pos(uri, 4, 5), Say: "UNREACHED"}}
	broken := func(n int) *result.Attempt {
		return &result.Attempt{Number: n, Status: result.Failed, Turns: turns,
			Failures:      []assert.Failure{{Pos: pos(uri, 3, 9), Key: "reply", Message: "reply does not match"}},
			Confirmations: []*result.Confirmation{{Kind: result.ConfirmConversation, Subject: "conv-1", Found: true, Held: true}}}
	}
	var cases []*result.Case
	for i, c := range []*result.Case{
		{Name: "retried", Status: result.Failed, Attempts: []*result.Attempt{broken(1), broken(2)}},
		{Name: "repeated", Status: result.Failed, Attempts: []*result.Attempt{broken(1), broken(2)},
			Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionFailed, Runs: 2, Failed: 2, Limit: 2, PassRate: 0.5}},
		{Name: "interrupted", Status: result.Pending},
	} {
		line := int64(10 + i)
		pickle(line)
		c.Pos = pos(uri, int(line), 7)
		cases = append(cases, c)
	}
	r := withGate(&result.Result{Started: t0, Files: []*result.File{{Path: uri, Cases: cases}}}, result.Failed,
		assert.Failure{Key: "alerts.call_volume", Message: "rule \x1b[31mred\x1b[0m\nfiring"})
	var b bytes.Buffer
	err := WriteCucumber(&b, r, CucumberOptions{Docs: []CucumberDoc{{Source: &messages.Source{Uri: uri, Data: "Feature: f"},
		Document: &messages.GherkinDocument{Uri: uri}, Pickles: pickles, Locations: locs}}})
	if err != nil {
		t.Fatal(err)
	}
	var sources, testCases int
	var attempts []*messages.TestCaseFinished
	var numbers []int64
	var steps []*messages.TestStepResult
	var attached []string
	var finished *messages.TestRunFinished
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		var e messages.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Source != nil:
			sources++
		case e.TestCase != nil:
			testCases++
		case e.TestCaseStarted != nil:
			numbers = append(numbers, e.TestCaseStarted.Attempt)
		case e.TestCaseFinished != nil:
			attempts = append(attempts, e.TestCaseFinished)
		case e.TestStepFinished != nil:
			steps = append(steps, e.TestStepFinished.TestStepResult)
		case e.Attachment != nil:
			attached = append(attached, e.Attachment.Body)
		case e.TestRunFinished != nil:
			finished = e.TestRunFinished
		}
	}
	if sources != 1 || testCases != 3 || len(attempts) != 5 || len(steps) != 10 {
		t.Fatalf("%d sources, %d test cases, %d attempts, %d steps; want 1, 3, 5, 10:\n%s", sources, testCases, len(attempts), len(steps), b.String())
	}
	if fmt.Sprint(numbers) != "[0 1 0 1 0]" {
		t.Errorf("attempts numbered %v, want [0 1 0 1 0]", numbers)
	}
	for i, want := range []bool{true, false, true, false, false} {
		if attempts[i].WillBeRetried != want {
			t.Errorf("attempt %d: willBeRetried %v, want %v", i+1, attempts[i].WillBeRetried, want)
		}
	}
	wantFailure := "features/f.feature:3:9: turn 1: reply does not match"
	repeat := "0 of 2 runs passed (0%), 50% required\n"
	for i, st := range steps[:8] {
		if i%2 == 1 {
			if st.Status != messages.TestStepResultStatus_SKIPPED {
				t.Errorf("step %d after the broken one: %s, want SKIPPED", i+1, st.Status)
			}
			continue
		}
		msg := wantFailure
		if i == 6 {
			msg = repeat + wantFailure
		}
		if st.Status != messages.TestStepResultStatus_FAILED || st.Message != msg {
			t.Errorf("step %d: %s %q, want FAILED %q", i+1, st.Status, st.Message, msg)
		}
		if st.Exception == nil || st.Exception.Message != wantFailure {
			t.Errorf("step %d: exception %+v, want the failure's line", i+1, st.Exception)
		}
	}
	for i, st := range steps[8:] {
		if st.Status != messages.TestStepResultStatus_SKIPPED || st.Message != notRunReason {
			t.Errorf("interrupted case's step %d: %s %q, want SKIPPED %q", i+1, st.Status, st.Message, notRunReason)
		}
	}
	wantTranscript := "transcript:\n  turn 1\n    > hi\n    (no reply)\nconfirmed:\n  ✓ conversation conv-1"
	if len(attached) != 4 || attached[0] != wantTranscript {
		t.Errorf("%d attachments, the first:\n%s\nwant 4, each:\n%s", len(attached), attached, wantTranscript)
	}
	wantRun := `failed: a check failed: the agent broke an expectation; 1 alert rule firing, not a check of a scenario: rule red\nfiring`
	if finished == nil || finished.Success || finished.Message != wantRun {
		t.Errorf("testRunFinished %+v, want the message %q", finished, wantRun)
	}
}

// TestWriteCucumberStopBlame: the step of the case whose error stopped
// the run on a refused key says that the target's configuration broke,
// as the run's stop does, and not the platform, by its kind.
func TestWriteCucumberStopBlame(t *testing.T) {
	t.Parallel()
	const uri = "features/f.feature"
	const refused = "POST /v1/agents/a1/debug-chat: 401 Unauthorized"
	locs := map[string]*messages.Location{"sc": {Line: 2, Column: 3}, "s3": {Line: 3, Column: 5}}
	pickles := []*messages.Pickle{{Id: "p", Uri: uri, AstNodeIds: []string{"sc"}, Steps: []*messages.PickleStep{{Id: "ps3", AstNodeIds: []string{"s3"}}}}}
	a := &result.Attempt{Number: 1, Status: result.Errored, Error: &result.Error{Pos: pos(uri, 3, 5), Kind: result.KindHTTP, Message: refused, Status: 401}}
	r := &result.Result{Started: t0, Stop: &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Cause: refused, Config: true},
		Files: []*result.File{{Path: uri, Cases: []*result.Case{{Name: "a", Pos: pos(uri, 2, 3), Status: result.Errored, Attempts: []*result.Attempt{a}}}}}}
	var b bytes.Buffer
	if err := WriteCucumber(&b, r, CucumberOptions{Docs: []CucumberDoc{{Source: &messages.Source{Uri: uri, Data: "Feature: f"},
		Document: &messages.GherkinDocument{Uri: uri}, Pickles: pickles, Locations: locs}}}); err != nil {
		t.Fatal(err)
	}
	want := "errored, not failed: the target's configuration broke, not the agent; nothing was learnt about the agent\n" + uri + ":3:5: http: " + refused
	var said []string
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		var e messages.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		if f := e.TestStepFinished; f != nil {
			said = append(said, f.TestStepResult.Message)
		}
	}
	if len(said) != 1 || said[0] != want {
		t.Errorf("steps say %q, want %q", said, want)
	}
}
