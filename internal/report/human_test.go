package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// writeLog records each Write separately, to check that a block arrives in
// one piece.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *writeLog) String() string { return strings.Join(w.writes, "") }

// TestHumanConcurrentBlocksDoNotInterleave finishes many failing cases
// from many goroutines and checks that every case's block is printed whole.
func TestHumanConcurrentBlocksDoNotInterleave(t *testing.T) {
	for _, opts := range []HumanOptions{{}, {TTY: true, Color: true, Now: stepClock()}} {
		t.Run(fmt.Sprintf("tty=%v", opts.TTY), func(t *testing.T) {
			r := fixture()
			file := r.Files[0]
			template := file.Cases[1] // failing, with failures and a transcript
			var cases []*result.Case
			for i := range 64 {
				c := *template
				c.Name = fmt.Sprintf("case %02d", i)
				cases = append(cases, &c)
			}
			var w writeLog
			h := NewHuman(&w, opts)
			// The lock serialises the clock too; stepClock is not
			// goroutine-safe on its own.
			h.RunStarted(len(cases), r.Target)
			var wg sync.WaitGroup
			for _, c := range cases {
				wg.Go(func() {
					h.CaseStarted(file, c)
					h.CaseFinished(file, c)
				})
			}
			wg.Wait()
			h.RunFinished(&result.Result{Files: []*result.File{{Path: file.Path, Cases: cases}}, Duration: r.Duration})
			if err := h.Err(); err != nil {
				t.Fatal(err)
			}
			out := w.String()
			ref := NewHuman(nil, opts)
			for _, c := range cases {
				block := ref.caseBlock(file, c)
				if n := strings.Count(out, block); n != 1 {
					t.Errorf("block of %s appears %d times whole, want 1", c.Name, n)
				}
				found := false
				for _, wr := range w.writes {
					if wr == block {
						found = true
					}
				}
				if !found {
					t.Errorf("block of %s was not written in one Write", c.Name)
				}
			}
			if !strings.Contains(out, "0 passed, 64 failed, 0 skipped in 3.21s"+map[bool]string{true: "\x1b[0m\n", false: "\n"}[opts.Color]) {
				t.Errorf("unexpected last line:\n%s", lastLines(out, 2))
			}
		})
	}
}

// TestHumanProgressClearedBeforeOutput checks that on a terminal every
// line of output starts on a blank line: the progress line is wiped first.
func TestHumanProgressClearedBeforeOutput(t *testing.T) {
	var w writeLog
	replay(NewHuman(&w, HumanOptions{TTY: true, Now: stepClock()}), fixture())
	progress := regexp.MustCompile(`^\r\[\d+/\d+\] \d+ running(, \d+ failed)?, \d+\.\ds *$`)
	clear := regexp.MustCompile(`^\r +\r$`)
	onProgress := false
	for _, wr := range w.writes {
		switch {
		case progress.MatchString(wr):
			onProgress = true
		case clear.MatchString(wr):
			onProgress = false
		default:
			if onProgress {
				t.Errorf("output written over the progress line: %q", wr)
			}
		}
		if strings.Contains(wr, "\x1b") {
			t.Errorf("colour written with Color off: %q", wr)
		}
	}
	if onProgress {
		t.Errorf("progress line left on screen at the end")
	}
}

func TestHumanNoColourOffTerminal(t *testing.T) {
	var b bytes.Buffer
	replay(NewHuman(&b, HumanOptions{TTY: false, Color: true}), fixture())
	if strings.ContainsAny(b.String(), "\x1b\r") {
		t.Errorf("non-TTY output holds escape codes or carriage returns")
	}
}

func TestHumanSummaryLines(t *testing.T) {
	type testCase struct {
		result *result.Result
		want   string
	}
	run := func(t *testing.T, tc testCase) {
		var b bytes.Buffer
		NewHuman(&b, HumanOptions{}).RunFinished(tc.result)
		if got := lastLines(b.String(), strings.Count(tc.want, "\n")+1); got != tc.want {
			t.Errorf("last lines =\n%s\nwant\n%s", got, tc.want)
		}
	}
	one := func(st ...result.Status) *result.Result {
		f := &result.File{Path: "s.yaml"}
		for i, s := range st {
			f.Cases = append(f.Cases, &result.Case{Name: fmt.Sprint(i), Status: s})
		}
		return &result.Result{Files: []*result.File{f}, Duration: 1234567890}
	}
	stopped := func(st *result.Stop, statuses ...result.Status) *result.Result {
		r := one(statuses...)
		for _, c := range r.Files[0].Cases {
			if c.Status == result.Skipped {
				c.SkipReason = st.Reason
			}
		}
		r.Stop = st
		return r
	}
	paced := func(r *result.Result, waited time.Duration) *result.Result {
		c := r.Files[0].Cases[0]
		c.Attempts, c.RateLimited, c.RateWaited = []*result.Attempt{{}}, 2, waited
		r.Pacing = &result.Pacing{Limited: 2, Accepted: 10, Waited: waited, MaxWaited: waited}
		return r
	}
	// interrupted cuts the last case off after some of its runs.
	interrupted := func(statuses ...result.Status) *result.Result {
		r := one(statuses...)
		r.Interrupted = true
		cs := r.Files[0].Cases
		cs[len(cs)-1].Repeat = &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionInterrupted, Runs: 2, Passed: 2, Limit: 5}
		return r
	}
	unreachable := &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: "127.0.0.1:9", Cause: "connection refused"}
	refused := &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Host: "build.example.com", Credential: "build key", Config: true}
	for name, tc := range map[string]testCase{
		"empty": {&result.Result{}, "0 errored, 0 flaky\n0 passed, 0 failed, 0 skipped in 0ms\n" +
			"status: empty (nothing was tested: no scenario was selected)"},
		// The selection went to the other shards: say so, not that
		// nothing was selected.
		"an empty shard": {&result.Result{Shard: &result.Shard{Index: 9, Total: 9, Selected: 3}}, "0 errored, 0 flaky\n0 passed, 0 failed, 0 skipped in 0ms\n" +
			"status: empty (nothing was tested in shard 9/9: the other shards run the selection's 3 scenarios)"},
		// A shard of a selection of nothing: nothing was selected, the
		// other shards run nothing either.
		"a shard of nothing": {&result.Result{Shard: &result.Shard{Index: 1, Total: 2}}, "0 errored, 0 flaky\n0 passed, 0 failed, 0 skipped in 0ms\n" +
			"status: empty (nothing was tested: no scenario was selected)"},
		"all skipped": {one(result.Skipped, result.Skipped), "0 passed, 0 failed, 2 skipped in 1.23s\n" +
			"status: empty (nothing was tested: every selected scenario was skipped)"},
		"passed with a flaky case": {one(result.Passed, result.Flaky, result.Skipped), "1 passed, 0 failed, 1 skipped in 1.23s\nstatus: passed"},
		// The scenarios that did not run waited for nothing: the
		// average is over the one that ran.
		"paced, most skipped": {paced(one(result.Passed, result.Skipped, result.Skipped, result.Skipped), 4*time.Second),
			"paced at 8.1 req/s by 2 rate limits; a scenario waited 4.0s on average, 4.0s at most\n0 errored, 0 flaky\n1 passed, 0 failed, 3 skipped in 1.23s\nstatus: passed"},
		// An interruption that cut a repeated case off after some of
		// its runs counts it apart from the cases it never started.
		"interrupted, a repeat cut off":      {interrupted(result.Passed, result.Pending, result.Pending), "run interrupted: 1 case not run, 1 repeated case cut off before a verdict\n0 errored, 0 flaky, 2 pending\n1 passed, 0 failed, 0 skipped in 1.23s\nstatus: interrupted (the run was stopped before every case finished)"},
		"interrupted, only a repeat cut off": {interrupted(result.Passed, result.Pending), "run interrupted: 1 repeated case cut off before a verdict\n0 errored, 0 flaky, 1 pending\n1 passed, 0 failed, 0 skipped in 1.23s\nstatus: interrupted (the run was stopped before every case finished)"},
		// Stopped after every case had finished: the interruption is
		// still said, with the nothing it left.
		"interrupted after the last case": {func() *result.Result {
			r := one(result.Passed)
			r.Interrupted = true
			return r
		}(), "run interrupted: 0 cases not run\n0 errored, 0 flaky\n1 passed, 0 failed, 0 skipped in 1.23s\nstatus: interrupted (the run was stopped after every case had finished, before the run itself ended)"},
		// Paced by --rate alone: no 429, and no scenario waited on one.
		"paced, never limited": {func() *result.Result {
			r := one(result.Passed)
			r.Files[0].Cases[0].Attempts = []*result.Attempt{{}}
			r.Pacing = &result.Pacing{Accepted: 10}
			return r
		}(), "paced at 8.1 req/s, no rate limits\n0 errored, 0 flaky\n1 passed, 0 failed, 0 skipped in 1.23s\nstatus: passed"},
		"fixture": {fixture(), "run interrupted: 2 cases not run\npaced at 13.1 req/s by 3 rate limits; a scenario waited 200ms on average, 2.0s at most\n1 errored, 1 flaky, 2 pending\n4 passed, 4 failed, 1 skipped in 3.21s\nno alerts firing passed\n" +
			"status: interrupted (the run was stopped before every case finished)"},
		"a failure wins over an error": {one(result.Passed, result.Passed, result.Flaky, result.Skipped, result.Errored, result.Failed),
			"1 errored, 1 flaky\n2 passed, 1 failed, 1 skipped in 1.23s\nstatus: failed (a check failed: the agent broke an expectation; 1 case errored too: the platform or the network broke, not the agent)"},
		"errors only": {one(result.Passed, result.Errored, result.Errored),
			"1 passed, 0 failed, 0 skipped in 1.23s\n" +
				"status: errored (no check failed, but 2 cases errored: the platform or the network kept the run from telling whether the agent is fine)"},
		"platform unreachable": {stopped(unreachable, result.Errored, result.Skipped, result.Skipped),
			"run stopped: the platform is unreachable at 127.0.0.1:9: 2 cases not run\n1 errored, 2 not run (the run stopped), 0 flaky\n0 passed, 0 failed, 0 skipped in 1.23s\n" +
				"status: errored (no check failed, but 1 case errored: the platform or the network kept the run from telling whether the agent is fine)"},
		// A refused key is the configuration's (exit 2), not the
		// platform's: the case that met it is not blamed on either.
		"credentials refused": {stopped(refused, result.Passed, result.Errored, result.Skipped),
			"run stopped: the platform at build.example.com refused the build key: 1 case not run\n1 errored, 1 not run (the run stopped), 0 flaky\n1 passed, 0 failed, 0 skipped in 1.23s\n" +
				"status: errored (the platform at build.example.com refused the build key: a configuration problem kept the run from telling whether the agent is fine)"},
		"fail-fast": {stopped(&result.Stop{Kind: result.StopFailFast, Reason: result.ReasonFailFast}, result.Failed, result.Skipped),
			"run stopped: --fail-fast after the first failed or errored case: 1 case not run\n1 not run (the run stopped), 0 flaky\n0 passed, 1 failed, 0 skipped in 1.23s\n" +
				"status: failed (a check failed: the agent broke an expectation)"},
		// The platform was down from the first call: no case errored, and
		// the counts must not say "0 errored" over "status: errored".
		"platform down before any case": {stopped(unreachable, result.Skipped, result.Skipped, result.Skipped),
			"run stopped: the platform is unreachable at 127.0.0.1:9: 3 cases not run\n3 not run (the run stopped), 0 flaky\n0 passed, 0 failed, 0 skipped in 1.23s\n" +
				"status: errored (the platform is unreachable at 127.0.0.1:9: the run could not tell whether the agent is fine)"},
		// A case skipped on purpose stays skipped beside those the stop left.
		"a skip: beside a stop": {func() *result.Result {
			r := stopped(unreachable, result.Errored, result.Skipped, result.Skipped)
			r.Files[0].Cases[2].SkipReason = "skip: the agent is being rebuilt"
			return r
		}(), "1 errored, 1 not run (the run stopped), 0 flaky\n0 passed, 0 failed, 1 skipped in 1.23s\n" +
			"status: errored (no check failed, but 1 case errored: the platform or the network kept the run from telling whether the agent is fine)"},
		// A repeated case the stop cut off after some of its runs did
		// not finish for the stop: it is not skipped on purpose.
		"a repeat cut off by a stop": {func() *result.Result {
			r := stopped(unreachable, result.Errored, result.Skipped, result.Skipped)
			r.Files[0].Cases[2].SkipReason = result.ReasonStoppedRuns
			return r
		}(), "run stopped: the platform is unreachable at 127.0.0.1:9: 2 cases not run\n1 errored, 2 not run (the run stopped), 0 flaky\n0 passed, 0 failed, 0 skipped in 1.23s\n" +
			"status: errored (no check failed, but 1 case errored: the platform or the network kept the run from telling whether the agent is fine)"},
		// The alert gate is a run-level check: the counts are of the
		// scenarios the first line announced, and the gate has its line.
		"the alert gate passed": {withGate(one(result.Passed, result.Passed), result.Passed),
			"0 errored, 0 flaky\n2 passed, 0 failed, 0 skipped in 1.23s\nalert gate passed\nstatus: passed"},
		"an alert rule on api_errors fired": {withGate(one(result.Passed, result.Passed), result.Failed, apiErrors),
			"2 passed, 0 failed, 0 skipped in 1.23s\nalert gate failed: 1 alert rule firing\n" +
				"status: failed (1 alert rule firing, not a check of a scenario: " + apiErrors.Message + " (api_errors counts the platform's own 5xx answers))"},
		// A quarantined case's failure does not gate the run: the alert
		// rule alone failed it, and no check is blamed.
		"an alert rule fired beside a quarantined failure": {func() *result.Result {
			r := withGate(one(result.Failed, result.Passed), result.Failed, volume)
			r.Files[0].Cases[0].Quarantine = &result.Quarantine{Reason: "rewritten", Until: "2099-01-01"}
			return r
		}(), "alert gate failed: 1 alert rule firing\n" +
			"status: failed (1 alert rule firing, not a check of a scenario: " + volume.Message + ")"},
		"a check and an alert rule failed": {withGate(one(result.Failed, result.Passed), result.Failed, volume, apiErrors),
			"1 passed, 1 failed, 0 skipped in 1.23s\nalert gate failed: 2 alert rules firing\n" +
				"status: failed (a check failed: the agent broke an expectation; 2 alert rules firing, not a check of a scenario: " +
				volume.Message + "; " + apiErrors.Message + " (api_errors counts the platform's own 5xx answers))"},
		"the alert gate could not read the alerts": {withGate(one(result.Passed), result.Errored),
			"1 passed, 0 failed, 0 skipped in 1.23s\nalert gate errored\n" +
				"status: errored (no check failed, but the alert gate errored: the platform or the network kept the run from reading the firing alerts)"},
		"the alert gate not run on a stop": {func() *result.Result {
			r := withGate(stopped(unreachable, result.Skipped), result.Skipped)
			r.Checks[0].SkipReason = unreachable.Reason
			return r
		}(), "run stopped: the platform is unreachable at 127.0.0.1:9: 1 case not run\n1 not run (the run stopped), 0 flaky\n0 passed, 0 failed, 0 skipped in 1.23s\n" +
			"alert gate not run: platform unreachable\n" +
			"status: errored (the platform is unreachable at 127.0.0.1:9: the run could not tell whether the agent is fine)"},
	} {
		t.Run(name, func(t *testing.T) { run(t, tc) })
	}
}

// The firing rules of the alert gate's tests, as runner.gateAlerts
// words them.
var (
	apiErrors = assert.Failure{Key: "alerts.api_errors", Message: `alert firing (account-wide): rule "platform errors" (alr_2): api_errors >= 1 over 5m, value 4`}
	volume    = assert.Failure{Key: "alerts.call_volume", Message: `alert firing (agent clinic): rule "clinic volume" (alr_1): call_volume >= 1 over 5m, value 3`}
)

// withGate adds to r the alert gate with status st and the failures of
// its firing rules.
func withGate(r *result.Result, st result.Status, firing ...assert.Failure) *result.Result {
	r.Checks = append(r.Checks, &result.Case{Name: result.AlertGateName, Status: st,
		Attempts: []*result.Attempt{{Number: 1, Status: st, Failures: firing}}})
	return r
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

func TestHumanWriteErrorIsKept(t *testing.T) {
	w := &failingWriter{}
	h := NewHuman(w, HumanOptions{})
	replay(h, fixture())
	if err := h.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err() = %v, want the write error", err)
	}
	if w.n != 1 {
		t.Errorf("%d writes after the first error, want none", w.n-1)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestDeploymentNotes: a deployment note says the run goes on without
// evidence, except when the deployment was left unread because the run
// was already stopping: then the run does not go on.
func TestDeploymentNotes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		note   string
		goesOn bool
	}{
		{note: "the platform answered 404 to GET /v1/agents/{agentId}/deployments/active (it does not serve the endpoint, or does not know the agent)", goesOn: true},
		{note: "read failed: GET /v1/agents/a1/deployments/active: 500", goesOn: true},
		{note: result.NoteRunStopped},
		{note: result.NoteRunInterrupted},
	} {
		got := deploymentLines([]*result.Deployment{{Agent: "clinic", Env: "sandbox", Note: tc.note}}, style{})
		want := "note: no deployment evidence (clinic in sandbox): " + tc.note + "; agenttest gate will refuse its report\n"
		if tc.goesOn {
			want = "note: no deployment evidence (clinic in sandbox): " + tc.note + "; the run goes on, and agenttest gate will refuse its report\n"
		}
		if got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

// TestDeploymentNoteSaidOnce: agents without evidence for the same
// reason share one note that names them all, rather than one note each.
func TestDeploymentNoteSaidOnce(t *testing.T) {
	t.Parallel()
	ds := []*result.Deployment{
		{Agent: "clinic", Env: "sandbox", Note: result.NoteRunStopped},
		{Agent: "billing", Env: "live", ID: "dep-1"},
		{Agent: "billing", Env: "sandbox", Note: result.NoteRunStopped},
	}
	want := "deployment of billing in live: dep-1\n" +
		"note: no deployment evidence (clinic in sandbox, billing in sandbox): " + result.NoteRunStopped + "; agenttest gate will refuse its report\n"
	if got := deploymentLines(ds, style{}); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestDeploymentLinesEscapeControls: a deployment id or a note holds what
// a platform sent; its escape sequences and line breaks are shown
// escaped on a terminal and dropped in a file, never obeyed.
func TestDeploymentLinesEscapeControls(t *testing.T) {
	t.Parallel()
	ds := []*result.Deployment{
		{Agent: "clinic", Env: "sandbox", ID: "dep-\x1b[31mred\r\nPASS"},
		{Agent: "billing", Env: "sandbox", Note: "read failed: 500: \x1b]0;owned\x07"},
	}
	for _, tc := range []struct {
		st   style
		want string
	}{
		{style{}, "deployment of clinic in sandbox: dep-\\x1b[31mred\\r\\nPASS\n" +
			"note: no deployment evidence (billing in sandbox): read failed: 500: \\x1b]0;owned\\a; the run goes on, and agenttest gate will refuse its report\n"},
		{style{file: true}, "deployment of clinic in sandbox: dep-red\\r\\nPASS\n" +
			"note: no deployment evidence (billing in sandbox): read failed: 500: ; the run goes on, and agenttest gate will refuse its report\n"},
	} {
		if got := deploymentLines(ds, tc.st); got != tc.want {
			t.Errorf("file %v:\ngot  %q\nwant %q", tc.st.file, got, tc.want)
		}
	}
}

// TestHumanEscapesRunText: the run's own lines (the first, naming the
// target; the summary's stop, deployment and check lines; the status
// line) hold text a config file, a platform or, read back by agenttest
// merge, a JSON report chose: escape sequences and line breaks in it are
// shown escaped, never obeyed, as in the lines of the cases.
func TestHumanEscapesRunText(t *testing.T) {
	t.Parallel()
	const hostile = "x\x1b[2J\x1b]0;owned\x07\r\nFORGED\u202e"
	type testCase struct {
		edit func(r *result.Result)
	}
	run := func(t *testing.T, tc testCase) {
		r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: []*result.Case{{Name: "a", Status: result.Passed}}}}}
		tc.edit(r)
		var b bytes.Buffer
		replay(NewHuman(&b, HumanOptions{}), r)
		out := b.String()
		if strings.ContainsAny(out, "\x1b\x07\r\u202e") || strings.Contains(out, "\nFORGED") {
			t.Errorf("control characters obeyed in:\n%q", out)
		}
		if !strings.Contains(out, `x\x1b[2J\x1b]0;owned\a\r\nFORGED\u202e`) {
			t.Errorf("the text is not shown escaped in:\n%q", out)
		}
	}
	changed := func(d *result.Deployment) *result.Deployment {
		d.Env, d.ID, d.After = cmp.Or(d.Env, "sandbox"), cmp.Or(d.ID, "dep-1"), cmp.Or(d.After, "dep-2")
		return d
	}
	for name, tc := range map[string]testCase{
		"target name": {func(r *result.Result) { r.Target.Name = hostile }},
		"build url":   {func(r *result.Result) { r.Target.BuildURL = hostile }},
		"target env":  {func(r *result.Result) { r.Target.Env = hostile; r.Files = nil }},
		"case env": {func(r *result.Result) {
			r.Target.Envs = []result.EnvCount{{Env: hostile, Cases: 1}}
		}},
		"stop host": {func(r *result.Result) {
			r.Stop = &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: hostile}
		}},
		"stop reason": {func(r *result.Result) { r.Stop = &result.Stop{Kind: "other", Reason: hostile} }},
		"changed deployment id": {func(r *result.Result) {
			r.Deployments = []*result.Deployment{changed(&result.Deployment{Agent: "clinic", After: hostile})}
		}},
		"changed deployment agent": {func(r *result.Result) {
			r.Deployments = []*result.Deployment{changed(&result.Deployment{Agent: hostile})}
		}},
		"unconfirmed deployment note": {func(r *result.Result) {
			r.Deployments = []*result.Deployment{{Agent: "clinic", Env: "sandbox", ID: "dep-1", Note: hostile}}
		}},
		"check name": {func(r *result.Result) {
			r.Checks = []*result.Case{{Name: hostile, Status: result.Errored}}
		}},
		"quarantine reason": {func(r *result.Result) {
			r.Files[0].Cases[0].Quarantine = &result.Quarantine{Reason: hostile, Until: "2099-01-01"}
		}},
		"case name": {func(r *result.Result) { r.Files[0].Cases[0].Name = hostile }},
		"skip reason": {func(r *result.Result) {
			c := r.Files[0].Cases[0]
			c.Status, c.SkipReason = result.Skipped, hostile
		}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestTranscriptFactsStayOnTheirLine: the one-line facts of a transcript
// (the trace, the current node, the state keys, a handoff's destination,
// a Messaging turn's event types, system messages, handoff and end
// reason, a confirmation's summary) are what a server chose. A line break
// in one is written \n, on the fact's indented line, in the console (-v)
// and in JUnit's body alike. Before, it was obeyed: the rest of the value
// began a line of its own at column 0, where it could forge a line of the
// run's ("status: passed") or a workflow command the Actions runner obeys.
func TestTranscriptFactsStayOnTheirLine(t *testing.T) {
	t.Parallel()
	const forged = "x\n::error::FORGED\nstatus: passed"
	debugTurn := func(meta map[string]any) *result.Turn {
		var md reply.Metadata
		raw := mustJSON(meta)
		if err := json.Unmarshal(raw, &md); err != nil {
			t.Fatal(err)
		}
		return &result.Turn{Index: 1, Say: "hi", Pos: diag.Pos{File: "s.yaml", Line: 4, Col: 5},
			Result: (&reply.TurnResult{Response: "ok", RawMetadata: raw}).SetMetadata(md)}
	}
	msg := func(m *reply.Messaging) *result.Turn { return msgTurn(1, 4, "hi", "ok", "conv-1", 0, m) }
	for name, tc := range map[string]struct {
		turn    *result.Turn
		confirm *result.Confirmation
		conv    string
	}{
		"node":                 {turn: debugTurn(map[string]any{"currentNode": forged})},
		"trace":                {turn: debugTurn(map[string]any{"nodeTrace": []string{"start", forged}})},
		"state key":            {turn: debugTurn(map[string]any{"state": map[string]any{forged: 1}})},
		"handoff destination":  {turn: debugTurn(map[string]any{"handoffDestination": forged})},
		"event type":           {turn: msg(&reply.Messaging{Events: []reply.Event{ev("1", forged, "")}})},
		"system message":       {turn: msg(&reply.Messaging{System: []reply.SystemMessage{{Level: "INFO", Text: forged}}})},
		"system message level": {turn: msg(&reply.Messaging{System: []reply.SystemMessage{{Level: forged, Text: "hi"}}})},
		"messaging handoff":    {turn: msg(&reply.Messaging{Handoff: &reply.MessagingHandoff{Destination: forged, Joined: true, LiveAgent: forged}})},
		"end reason":           {turn: msg(&reply.Messaging{SessionEnded: true, EndReason: forged})},
		"conversation id":      {turn: debugTurn(map[string]any{}), conv: forged},
		"confirmation":         {turn: debugTurn(map[string]any{}), confirm: &result.Confirmation{Kind: result.ConfirmConversation, Subject: forged, Found: true, Held: true, Summary: forged}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := &result.Attempt{Number: 1, Status: result.Failed, Turns: []*result.Turn{tc.turn},
				Failures: []assert.Failure{{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text", Expected: "hello", Actual: "ok"}}}
			if tc.confirm != nil {
				a.Confirmations = []*result.Confirmation{tc.confirm}
			}
			a.ConversationID = tc.conv
			r := &result.Result{Files: []*result.File{{Path: "s.yaml", Cases: []*result.Case{{Name: "a", Pos: diag.Pos{File: "s.yaml", Line: 2, Col: 3},
				Status: result.Failed, Attempts: []*result.Attempt{a}}}}}}
			var console, junit bytes.Buffer
			replay(NewHuman(&console, HumanOptions{Verbose: true}), r)
			if err := WriteJUnit(&junit, r); err != nil {
				t.Fatal(err)
			}
			for what, out := range map[string]string{"console": console.String(), "junit": junit.String()} {
				for i, line := range strings.Split(out, "\n") {
					if l := strings.TrimSpace(line); strings.HasPrefix(l, "::error::FORGED") || strings.HasPrefix(l, "status: passed") {
						t.Errorf("%s line %d is the server's: %q\n%s", what, i+1, line, out)
					}
				}
				if !strings.Contains(out, `x\n::error::FORGED\nstatus: passed`) {
					t.Errorf("%s does not show the value escaped:\n%s", what, out)
				}
			}
		})
	}
}

// TestHumanCountLineColour: the count line is green only when nothing
// failed, errored or was left unrun by a stop or an interruption: a run
// that errored without a failure, or that a stop cut short, is not
// painted as a pass.
func TestHumanCountLineColour(t *testing.T) {
	t.Parallel()
	run := func(interrupted bool, stop *result.Stop, statuses ...result.Status) *result.Result {
		f := &result.File{Path: "s.yaml"}
		for i, s := range statuses {
			c := &result.Case{Name: fmt.Sprint(i), Status: s}
			if stop != nil && s == result.Skipped {
				c.SkipReason = stop.Reason
			}
			f.Cases = append(f.Cases, c)
		}
		return &result.Result{Files: []*result.File{f}, Duration: time.Second, Interrupted: interrupted, Stop: stop}
	}
	failFast := &result.Stop{Kind: result.StopFailFast, Reason: result.ReasonFailFast}
	for name, tc := range map[string]struct {
		r    *result.Result
		want string
	}{
		"passed":                {run(false, nil, result.Passed, result.Skipped), sgrGreen},
		"failed":                {run(false, nil, result.Passed, result.Failed), sgrRed},
		"errored only":          {run(false, nil, result.Passed, result.Errored), sgrRed},
		"stopped, none failed":  {run(false, failFast, result.Passed, result.Skipped), sgrRed},
		"interrupted, none run": {run(true, nil, result.Passed, result.Pending), sgrRed},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			NewHuman(&b, HumanOptions{TTY: true, Color: true}).RunFinished(tc.r)
			for line := range strings.SplitSeq(b.String(), "\n") {
				if strings.Contains(line, " passed, ") {
					if want := "\x1b[" + tc.want + "m"; !strings.HasPrefix(line, want) {
						t.Errorf("count line %q, want it painted %q", line, want)
					}
					return
				}
			}
			t.Errorf("no count line in\n%s", b.String())
		})
	}
}

// TestTurnAt: a failure names the turn it belongs to, "turn 2: reply
// does not match", the last turn written at or before it in its file
// (by line, then by column, as in a YAML flow mapping); the last turn
// only when its position says nothing or lies in no turn's file. A turn
// written at exactly a position gives a step its latency (turnOf).
func TestTurnAt(t *testing.T) {
	t.Parallel()
	turn := func(i, line, col int) *result.Turn {
		return &result.Turn{Index: i, Pos: pos("a.yaml", line, col)}
	}
	a := &result.Attempt{Turns: []*result.Turn{turn(0, 5, 3), nil, turn(1, 8, 3), {Index: 9}, turn(2, 12, 3), turn(3, 12, 30),
		{Index: 4, Pos: pos("other.yaml", 1, 1)}}}
	for _, tc := range []struct {
		at   diag.Pos
		want int // the turn's index
	}{
		{pos("a.yaml", 7, 1), 0}, {pos("a.yaml", 8, 3), 1}, {pos("a.yaml", 9, 7), 1}, {pos("a.yaml", 12, 9), 2},
		{pos("a.yaml", 12, 31), 3}, {pos("a.yaml", 40, 1), 3}, {pos("a.yaml", 2, 1), 4}, {pos("b.yaml", 9, 1), 4}, {diag.Pos{}, 4},
	} {
		if got := turnAt(a, tc.at); got == nil || got.Index != tc.want {
			t.Errorf("turnAt(%s) = %+v, want turn %d", tc.at, got, tc.want)
		}
	}
	if got := turnOf(a, pos("a.yaml", 12, 3)); got == nil || got.Index != 2 {
		t.Errorf("turnOf(a.yaml:12:3) = %+v, want turn 2", got)
	}
	for _, at := range []diag.Pos{pos("a.yaml", 12, 4), {}} {
		if got := turnOf(a, at); got != nil {
			t.Errorf("turnOf(%s) = %+v, want none", at, got)
		}
	}
	// A retried call writes its turn again at the same position: the
	// last one is the call that counted.
	retried := &result.Attempt{Turns: []*result.Turn{{Index: 1, Pos: pos("a.yaml", 8, 3), Latency: 10}, {Index: 1, Pos: pos("a.yaml", 8, 3), Latency: 20}}}
	if got := turnOf(retried, pos("a.yaml", 8, 3)); got != retried.Turns[1] {
		t.Errorf("turnOf of a retried call = %+v, want the last", got)
	}
}

// TestFailureLine: a failure's one line names where it was checked: the
// feature step (without its colon), the after-session check by its key,
// or the turn.
func TestFailureLine(t *testing.T) {
	t.Parallel()
	a := &result.Attempt{Turns: []*result.Turn{{Index: 0, Pos: pos("a.yaml", 3, 3)}, {Index: 1, Pos: pos("a.yaml", 5, 3)}}}
	at := pos("a.yaml", 6, 7)
	for _, tc := range []struct {
		f    assert.Failure
		want string
	}{
		{assert.Failure{Pos: at, Key: "reply", Message: "reply does not match"}, "a.yaml:6:7: turn 1: reply does not match"},
		{assert.Failure{Pos: pos("a.yaml", 4, 1), Key: "reply", Message: "m"}, "a.yaml:4:1: greeting: m"},
		{assert.Failure{Pos: at, Step: `Then the reply is:`, Message: "m"}, "a.yaml:6:7: Then the reply is: m"},
		{assert.Failure{Pos: at, Key: "confirm", Message: "m"}, "a.yaml:6:7: confirm: m"},
		{assert.Failure{Pos: at, Key: "probe.reply", Message: "m"}, "a.yaml:6:7: probe.reply: m"},
		{assert.Failure{Pos: at, Key: "alerts", Message: "m"}, "a.yaml:6:7: alerts: m"},
		// A key that only starts like an after-session check is a turn's.
		{assert.Failure{Pos: at, Key: "confirmation", Message: "m"}, "a.yaml:6:7: turn 1: m"},
		{assert.Failure{Pos: at, Key: "state.plan"}, "a.yaml:6:7: turn 1: state.plan does not hold"},
		{assert.Failure{Key: "reply", Message: "line\n\x1b[2Jtwo"}, `turn 1: line\n\x1b[2Jtwo`},
	} {
		if got := (style{}).failureLine(a, tc.f); got != tc.want {
			t.Errorf("failureLine(%+v) =\n%q, want\n%q", tc.f, got, tc.want)
		}
	}
}

// TestCaseBlockQuiet: on a terminal a passing case is quiet, except a
// quarantined one, whose line says the quarantine still holds while the
// case passes.
func TestCaseBlockQuiet(t *testing.T) {
	t.Parallel()
	f := &result.File{Path: "s.yaml"}
	passed := &result.Case{Name: "books", Pos: pos("s.yaml", 3, 5), Status: result.Passed, Duration: 5e6}
	held := &result.Case{Name: "books", Pos: pos("s.yaml", 3, 5), Status: result.Passed, Duration: 5e6,
		Quarantine: &result.Quarantine{Reason: "rewritten", Until: "2099-01-01"}}
	for _, tc := range []struct {
		name string
		c    *result.Case
		tty  bool
		want string
	}{
		{"passed on a terminal", passed, true, ""},
		{"passed in a log", passed, false, "PASS s.yaml:3 books (5ms)\n"},
		{"quarantined, passed on a terminal", held, true, "PASS s.yaml:3 books (quarantined until 2099-01-01: rewritten; does not gate, 5ms)\n"},
	} {
		if got := NewHuman(nil, HumanOptions{TTY: tc.tty}).caseBlock(f, tc.c); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestConsoleDurations: a case's duration and the run's wall time turn
// from milliseconds to seconds at one second.
func TestConsoleDurations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d          time.Duration
		caseD, run string
	}{
		{999 * time.Millisecond, "999ms", "999ms"},
		{time.Second, "1.0s", "1.00s"},
		{3210 * time.Millisecond, "3.2s", "3.21s"},
	} {
		if got := formatDuration(tc.d); got != tc.caseD {
			t.Errorf("formatDuration(%v) = %q, want %q", tc.d, got, tc.caseD)
		}
		if got := wallTime(tc.d); got != tc.run {
			t.Errorf("wallTime(%v) = %q, want %q", tc.d, got, tc.run)
		}
	}
}

// TestCaseTitle: a case is named by its own position (the file's path
// when it has none) and its name, escaped, so that a name cannot drive
// the terminal or break the line.
func TestCaseTitle(t *testing.T) {
	t.Parallel()
	f := &result.File{Path: "suites/x.yaml"}
	for _, tc := range []struct {
		f    *result.File
		c    *result.Case
		want string
	}{
		{f, &result.Case{Name: "books", Pos: pos("features/x.feature", 7, 3)}, "features/x.feature:7 books"},
		{f, &result.Case{Name: "books"}, "suites/x.yaml books"},
		{nil, &result.Case{Name: "books"}, "books"},
		{f, &result.Case{Name: "\x1b[2Jwipe\nPASS"}, `suites/x.yaml \x1b[2Jwipe\nPASS`},
		{nil, &result.Case{Name: "\x1b]0;owned\x07"}, `\x1b]0;owned\a`},
	} {
		if got := (style{}).caseTitle(tc.f, tc.c); got != tc.want {
			t.Errorf("caseTitle(%q) = %q, want %q", tc.c.Name, got, tc.want)
		}
	}
}

// TestErrorLine: an error names its turn only when it is a turn's failed
// call, at the turn's own position; an error elsewhere (a probe, a
// confirmation) names itself in its message.
func TestErrorLine(t *testing.T) {
	t.Parallel()
	a := &result.Attempt{Turns: []*result.Turn{{Index: 0, Pos: pos("a.yaml", 3, 3)}, {Index: 1, Pos: pos("a.yaml", 5, 3)}}}
	for _, tc := range []struct {
		e    *result.Error
		want string
	}{
		{&result.Error{Pos: pos("a.yaml", 5, 3), Kind: result.KindTimeout, Message: "no reply within 30s"}, "a.yaml:5:3: turn 1: timeout: no reply within 30s"},
		{&result.Error{Pos: pos("a.yaml", 9, 5), Kind: result.KindHTTP, Message: "probe: 500"}, "a.yaml:9:5: http: probe: 500"},
		{&result.Error{Message: "boom\r\x1b[1A"}, `boom\r\x1b[1A`},
	} {
		if got := (style{}).errorLine(a, tc.e); got != tc.want {
			t.Errorf("errorLine(%+v) =\n%q, want\n%q", tc.e, got, tc.want)
		}
	}
}

// TestTranscriptEmptyReply: an empty reply over the debug API is an empty
// "<" line; "(no message)" is Messaging's, whose turn may end on events
// alone.
func TestTranscriptEmptyReply(t *testing.T) {
	t.Parallel()
	debug := exchange{index: 1, pos: pos("a.yaml", 4, 5), say: "hi", conv: "c1"}.turn()
	msg := msgTurn(1, 4, "hi", "", "c1", 0, &reply.Messaging{})
	for _, tc := range []struct {
		turn *result.Turn
		want string
	}{
		{debug, "transcript:\n  turn 1\n    > hi\n    <\n"},
		// A silence: an empty message, which a bare ">" showed as a
		// message lost. A blank one is quoted, its blanks shown.
		{exchange{index: 1, pos: pos("a.yaml", 4, 5), conv: "c1", text: "Sorry, I didn't hear anything."}.turn(),
			"transcript:\n  turn 1\n    > (silence)\n    < Sorry, I didn't hear anything.\n"},
		{exchange{index: 1, pos: pos("a.yaml", 4, 5), say: "  ", conv: "c1", text: "Sorry?"}.turn(), "transcript:\n  turn 1\n    > \"  \"\n    < Sorry?\n"},
		{msg, "transcript:\n  turn 1 · 40ms\n    > hi\n    (no message)\n"},
		// The user input metadata a turn sent, under its text: what the
		// agent was told besides it.
		{&result.Turn{Index: 1, Say: "my balance", Request: json.RawMessage(`{"clientEnv":"sandbox","message":"my balance","metadata":{ "tier": "gold", "tags": ["vip"] }}`),
			Result: &reply.TurnResult{Response: "Gold members pay nothing."}},
			"transcript:\n  turn 1\n    > my balance\n      metadata: {\"tier\":\"gold\",\"tags\":[\"vip\"]}\n    < Gold members pay nothing.\n"},
		{&result.Turn{Index: 1, Say: "hi", Request: json.RawMessage(`{"clientEnv":"sandbox","message":"hi"}`), Result: &reply.TurnResult{Response: "Hello"}},
			"transcript:\n  turn 1\n    > hi\n    < Hello\n"},
		// A stream cut before its end: what it had shown.
		{msgTurn(1, 4, "hi", "", "c1", 0, &reply.Messaging{Events: []reply.Event{
			{ID: "2", Type: "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", Kind: "agent_chunk", Text: "Your balance "},
			{ID: "3", Type: "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", Kind: "agent_chunk", Text: "is"},
			{ID: "4", Type: "EVENT_TYPE_SYSTEM_MESSAGE", Kind: "system", Text: "Sorry, I encountered an error."}}}),
			"transcript:\n  turn 1 · 40ms\n    > hi\n    (no complete message; the stream stopped after \"Your balance is\")\n" +
				"      events: EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK ×2 → EVENT_TYPE_SYSTEM_MESSAGE\n"},
	} {
		var b strings.Builder
		detail{b: &b}.writeTranscript(&result.Attempt{Turns: []*result.Turn{tc.turn}}, -1, "")
		if got := b.String(); got != tc.want {
			t.Errorf("got\n%q\nwant\n%q", got, tc.want)
		}
	}
}

// TestTranscriptMessagingMetadata: a turn over Messaging shows the
// metadata it sent of its own, as one over debug chat does: its client
// event's custom metadata without the client's tag and without the
// integration attributes every event repeats, unless it gave one of them
// another value. Before, a web chat turn showed none, and a failure that
// turned on it (the account number a signed-in page sends) read as if
// the agent had been told only the text.
func TestTranscriptMessagingMetadata(t *testing.T) {
	t.Parallel()
	custom := func(index int, say, custom string) *result.Turn {
		turn := msgTurn(index, 4, say, "Hello.", "c1", 0, &reply.Messaging{})
		typ, payload := "EVENT_TYPE_USER_MESSAGE", `{"text":"`+say+`"}`
		if index == 0 {
			typ, payload = "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN", `{}`
		}
		turn.Request = json.RawMessage(`{"metadata":{"custom":` + custom + `},"payload":` + payload + `,"type":"` + typ + `"}`)
		return turn
	}
	join := custom(0, "", `{"agenttest_id":"c1","page":"/account","tier":"gold"}`)
	for _, tc := range []struct {
		name  string
		turns []*result.Turn
		want  string
	}{
		{"the turn's own, the attributes left out", []*result.Turn{join, custom(1, "my bill", `{"account_number":"12345678","agenttest_id":"c2","page":"/account","tier":"gold"}`)},
			"    > my bill\n      metadata: {\"account_number\":\"12345678\"}\n"},
		{"an attribute given another value", []*result.Turn{join, custom(1, "my bill", `{"agenttest_id":"c2","page":"/bills","tier":"gold"}`)},
			"    > my bill\n      metadata: {\"page\":\"/bills\"}\n"},
		{"none of its own", []*result.Turn{join, custom(1, "my bill", `{"agenttest_id":"c2","page":"/account","tier":"gold"}`)},
			"    > my bill\n    < Hello.\n"},
		{"no opening kept", []*result.Turn{custom(1, "a&b", `{"agenttest_id":"c2","q":"<a&b>","n":{"x":[1, 2]}}`)},
			"    > a&b\n      metadata: {\"n\":{\"x\":[1,2]},\"q\":\"<a&b>\"}\n"},
	} {
		var b strings.Builder
		detail{b: &b}.writeTranscript(&result.Attempt{Turns: tc.turns}, -1, "")
		if got := b.String(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant it to hold\n%s", tc.name, got, tc.want)
		}
	}
}

// TestTranscriptStateAndDelay: a reply without a state object moves no
// key, so the next state is compared with the last one seen; a holding
// message the platform flagged says so.
func TestTranscriptStateAndDelay(t *testing.T) {
	t.Parallel()
	turn := func(i int, text string, delayed bool, md reply.Metadata) *result.Turn {
		return &result.Turn{Index: i, Say: "hi", Result: (&reply.TurnResult{Response: text, DelayedResponse: delayed}).SetMetadata(md)}
	}
	a := &result.Attempt{Turns: []*result.Turn{
		turn(1, "a", false, reply.Metadata{"state": map[string]any{"plan": "gold"}}),
		turn(2, "b", true, reply.Metadata{}),
		turn(3, "c", false, reply.Metadata{"state": map[string]any{"plan": "gold", "n": 1}}),
	}}
	var b strings.Builder
	detail{b: &b}.writeTranscript(a, -1, "")
	want := "transcript:\n" +
		"  turn 1\n    > hi\n    < a\n      state: +plan=\"gold\"\n" +
		"  turn 2\n    > hi\n    < b\n      delayed response\n" +
		"  turn 3\n    > hi\n    < c\n      state: +n=1\n"
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestOneLineInvalidUTF8: a reply that is not valid UTF-8 is still
// shown with its control characters escaped, never as raw bytes a
// terminal would obey.
func TestOneLineInvalidUTF8(t *testing.T) {
	t.Parallel()
	in := "ok\xff\x1b[2J\nnext"
	want := `"ok\xff\x1b[2J\nnext"`
	if got := (style{}).oneLine(in); got != want {
		t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
	}
	if got := (style{}).flat(in); got != want {
		t.Errorf("flat(%q) = %q, want %q", in, got, want)
	}
}
