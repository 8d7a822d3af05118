package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// CucumberProtocol is the version of the Cucumber Messages protocol the
// stream declares: the one of the messages module agenttest is built with
// (godog's).
const CucumberProtocol = "21.0.1"

// CucumberDoc is one suite file as Cucumber Messages carry it: the
// parsed feature (or the mapping of a YAML suite, scenario.Gherkin) and
// the pickles of its selected scenarios.
type CucumberDoc struct {
	// Source is the text of a feature file; nil for a YAML suite, whose
	// text is not Gherkin.
	Source   *messages.Source
	Document *messages.GherkinDocument
	Pickles  []*messages.Pickle
	// Locations are the locations of the document's nodes by id
	// (scenario.Locations): pickles name their origin by id only.
	Locations map[string]*messages.Location
}

// CucumberOptions completes what a Result does not hold.
type CucumberOptions struct {
	// Docs are the suite files of the run.
	Docs []CucumberDoc
	// Version is agenttest's version, for the meta message.
	Version string
}

// WriteCucumber writes the run as Cucumber Messages, one JSON envelope per
// line (NDJSON), the format Cucumber's formatters and report tools read
// (cucumber-html-formatter, Allure, Xray): meta; for each file its
// source, gherkinDocument and pickles; testRunStarted; for each case its
// testCase and, for each attempt (retries and statistical runs),
// testCaseStarted, testStepStarted and testStepFinished per step and
// testCaseFinished; testRunFinished.
//
// A case is matched to its pickle by file and line. Step results follow
// the attempt: the steps before the broken check PASSED, the step it
// belongs to (the last step written at or before the failure's position)
// FAILED with the failure as the console says it, the rest SKIPPED. An
// errored attempt fails its step the same way (Cucumber has no status
// for it that its tools read), with an exception named after the
// error's kind (agenttest.Error.timeout, ...) and a message whose first
// line says it errored and who broke, not the agent (erroredLine); a
// case that did not run has every step SKIPPED. A FAILED step has an attachment (text/plain,
// transcript.txt), which Cucumber's report tools show under it: the
// transcript up to the turn where the attempt broke and what was
// confirmed, as the JUnit report writes them. The stream's success is the
// run's status being passed; when it is not, testRunFinished's message
// gives the status and what it means, as the console's last line does
// ("interrupted: the run was stopped before every case finished").
func WriteCucumber(w io.Writer, r *result.Result, opt CucumberOptions) error {
	cw := &cucumberWriter{w: bufio.NewWriter(w)}
	cw.enc = json.NewEncoder(cw.w)
	cw.enc.SetEscapeHTML(false)
	cw.emit(&messages.Envelope{Meta: &messages.Meta{
		ProtocolVersion: CucumberProtocol,
		Implementation:  &messages.Product{Name: "agenttest", Version: opt.Version},
		Runtime:         &messages.Product{Name: "go", Version: runtime.Version()},
		Os:              &messages.Product{Name: runtime.GOOS},
		Cpu:             &messages.Product{Name: runtime.GOARCH},
	}})
	type pickleRef struct {
		p    *messages.Pickle
		locs map[string]*messages.Location
	}
	byLine := map[string]map[int64]pickleRef{}
	for _, d := range opt.Docs {
		if d.Document == nil {
			continue
		}
		if d.Source != nil {
			cw.emit(&messages.Envelope{Source: d.Source})
		}
		cw.emit(&messages.Envelope{GherkinDocument: d.Document})
		locs := d.Locations
		for _, p := range d.Pickles {
			cw.emit(&messages.Envelope{Pickle: p})
			if n := len(p.AstNodeIds); n > 0 && locs[p.AstNodeIds[n-1]] != nil {
				if byLine[p.Uri] == nil {
					byLine[p.Uri] = map[int64]pickleRef{}
				}
				byLine[p.Uri][locs[p.AstNodeIds[n-1]].Line] = pickleRef{p, locs}
			}
		}
	}
	cw.emit(&messages.Envelope{TestRunStarted: &messages.TestRunStarted{Timestamp: stamp(r.Started)}})
	for f, c := range r.Scenarios() {
		file := cmp.Or(c.Pos.File, f.Path)
		if ref, ok := byLine[file][int64(c.Pos.Line)]; ok {
			cw.testCase(r, c, ref.p, ref.locs)
		}
	}
	status := r.RunStatus()
	finished := &messages.TestRunFinished{Success: status == result.RunPassed, Timestamp: stamp(r.Started.Add(r.Duration))}
	if !finished.Success {
		finished.Message = string(status)
		if why := statusWhy(r, Summarize(r)); why != "" {
			finished.Message += ": " + fileStyle.flat(why)
		}
	}
	cw.emit(&messages.Envelope{TestRunFinished: finished})
	if cw.err == nil {
		cw.err = cw.w.Flush()
	}
	if cw.err != nil {
		return fmt.Errorf("write cucumber messages: %w", cw.err)
	}
	return nil
}

type cucumberWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
	err error
	// ids numbers the test cases, steps and attempts of the stream; they
	// are prefixed so they never meet the documents' ids.
	ids int
}

func (cw *cucumberWriter) emit(e *messages.Envelope) {
	if cw.err == nil {
		cw.err = cw.enc.Encode(e)
	}
}

func (cw *cucumberWriter) id(prefix string) string {
	cw.ids++
	return fmt.Sprintf("%s-%d", prefix, cw.ids)
}

func stamp(t time.Time) *messages.Timestamp {
	if t.IsZero() {
		return &messages.Timestamp{}
	}
	ts := messages.GoTimeToTimestamp(t)
	return &ts
}

func duration(d time.Duration) *messages.Duration {
	md := messages.GoDurationToDuration(d)
	return &md
}

// testCase writes one case: its testCase, then each attempt.
func (cw *cucumberWriter) testCase(r *result.Result, c *result.Case, p *messages.Pickle, locs map[string]*messages.Location) {
	tc := &messages.TestCase{Id: cw.id("testcase"), PickleId: p.Id, TestSteps: []*messages.TestStep{}}
	lines := make([]diag.Pos, len(p.Steps))
	for i, ps := range p.Steps {
		tc.TestSteps = append(tc.TestSteps, &messages.TestStep{Id: cw.id("teststep"), PickleStepId: ps.Id})
		if len(ps.AstNodeIds) > 0 {
			if l := locs[ps.AstNodeIds[0]]; l != nil {
				lines[i] = diag.Pos{File: p.Uri, Line: int(l.Line), Col: int(l.Column)}
			}
		}
	}
	cw.emit(&messages.Envelope{TestCase: tc})
	attempts := verdictLast(c)
	if len(attempts) == 0 {
		// Not run (skipped, pending): one attempt with every step skipped.
		attempts = []*result.Attempt{{Status: c.Status, Started: r.Started}}
	}
	for i, a := range attempts {
		if a == nil {
			continue
		}
		started := cw.id("started")
		cw.emit(&messages.Envelope{TestCaseStarted: &messages.TestCaseStarted{Attempt: int64(i), Id: started, TestCaseId: tc.Id,
			Timestamp: stamp(a.Started)}})
		results := stepResults(r.Stop, c, a, lines)
		if i == len(attempts)-1 && c.Repeat != nil {
			// The verdict over the runs, where the tools read the result.
			for _, res := range results {
				if res.Status == messages.TestStepResultStatus_FAILED {
					res.Message = repeatLine(c.Repeat) + "\n" + res.Message
				}
			}
		}
		at := a.Started
		for j, ts := range tc.TestSteps {
			cw.emit(&messages.Envelope{TestStepStarted: &messages.TestStepStarted{TestCaseStartedId: started, TestStepId: ts.Id, Timestamp: stamp(at)}})
			if results[j].Status == messages.TestStepResultStatus_FAILED {
				if body := TranscriptText(a); body != "" {
					cw.emit(&messages.Envelope{Attachment: &messages.Attachment{Body: body, ContentEncoding: messages.AttachmentContentEncoding_IDENTITY,
						MediaType: "text/plain", FileName: "transcript.txt", TestCaseStartedId: started, TestStepId: ts.Id}})
				}
			}
			at = at.Add(messages.DurationToGoDuration(*results[j].Duration))
			cw.emit(&messages.Envelope{TestStepFinished: &messages.TestStepFinished{TestCaseStartedId: started, TestStepId: ts.Id,
				TestStepResult: results[j], Timestamp: stamp(at)}})
		}
		cw.emit(&messages.Envelope{TestCaseFinished: &messages.TestCaseFinished{TestCaseStartedId: started,
			Timestamp: stamp(a.Started.Add(a.Duration)), WillBeRetried: i < len(attempts)-1}})
	}
}

// verdictLast orders the attempts of a case for the stream. Cucumber's
// tools take a scenario's result from its last attempt (the one not
// retried), so the runs of a repeated scenario, which ran side by side
// and decide together, end with one whose outcome is the verdict's: a
// failed run when the scenario failed (its runs fell short), a passed one
// when it passed despite failed runs. Other cases keep their order: their
// last attempt is their verdict.
func verdictLast(c *result.Case) []*result.Attempt {
	if c.Repeat == nil || len(c.Attempts) < 2 {
		return c.Attempts
	}
	want := func(a *result.Attempt) bool { return a.Status == result.Passed || a.Status == result.Flaky }
	if c.Status != result.Passed && c.Status != result.Flaky {
		want = func(a *result.Attempt) bool { return a.Status == result.Failed }
	}
	for i, a := range slices.Backward(c.Attempts) {
		if a != nil && want(a) {
			out := make([]*result.Attempt, 0, len(c.Attempts))
			out = append(out, c.Attempts[:i]...)
			out = append(out, c.Attempts[i+1:]...)
			return append(out, a)
		}
	}
	return c.Attempts
}

// TranscriptText is the attachment of a failed step (see WriteCucumber):
// a's transcript up to the turn where it broke, then what it confirmed,
// as a file shows them (no colour; control characters escaped). godog's
// steps attach it to their failed step too (godogsteps).
func TranscriptText(a *result.Attempt) string {
	var b strings.Builder
	d := detail{b: &b, st: style{file: true}}
	d.writeTranscript(a, brokeAt(a), "")
	d.writeConfirmations(a, "")
	return strings.TrimRight(b.String(), "\n")
}

// stepResults decides the result of each step of an attempt (see
// WriteCucumber); stop is the run's, which says whose fault its cause is
// (errorFault). A step's duration is the latency of the turn written at
// its position, when there is one.
func stepResults(stop *result.Stop, c *result.Case, a *result.Attempt, steps []diag.Pos) []*messages.TestStepResult {
	out := make([]*messages.TestStepResult, len(steps))
	broken, msg, exc := -1, "", (*messages.Exception)(nil)
	st := style{file: true}
	switch {
	case a.Status == result.Skipped || a.Status == result.Pending:
		reason := c.SkipReason
		if reason == "" && c.Status == result.Pending {
			reason = notRunReason
		}
		for i := range out {
			out[i] = &messages.TestStepResult{Duration: duration(0), Status: messages.TestStepResultStatus_SKIPPED, Message: reason}
		}
		return out
	case len(a.Failures) > 0:
		f := a.Failures[0]
		broken = stepAt(steps, f.Pos)
		var b strings.Builder
		for _, fl := range a.Failures {
			detail{b: &b, st: st}.writeFailure(a, fl, "")
		}
		msg = strings.TrimRight(b.String(), "\n")
		exc = &messages.Exception{Type: "agenttest.Failure", Message: st.failureLine(a, f)}
	case a.Error != nil:
		broken = stepAt(steps, a.Error.Pos)
		msg = errorFault(stop, a.Error) + "\n" + st.errorLine(a, a.Error)
		kind := a.Error.Kind
		if kind == "" {
			kind = "error"
		}
		exc = &messages.Exception{Type: "agenttest.Error." + kind, Message: msg}
	case a.Status == result.Errored:
		broken, msg = len(steps)-1, erroredLine("")+"\nerrored without a recorded cause"
		exc = &messages.Exception{Type: "agenttest.Error.error", Message: msg}
	case a.Status == result.Failed:
		broken, msg = len(steps)-1, "failed without a recorded cause"
	}
	for i, pos := range steps {
		res := &messages.TestStepResult{Duration: duration(latencyAt(a, pos)), Status: messages.TestStepResultStatus_PASSED}
		switch {
		case broken >= 0 && i == broken:
			res.Status, res.Message, res.Exception = messages.TestStepResultStatus_FAILED, msg, exc
		case broken >= 0 && i > broken:
			res.Status = messages.TestStepResultStatus_SKIPPED
		}
		out[i] = res
	}
	return out
}

// erroredLine says that an errored attempt is not the agent's failure,
// and who broke: it opens the message of a step an errored attempt
// fails, and ends a JUnit <error>'s message (errorMessage). Cucumber's
// statuses have no "errored": FAILED is the one status every tool
// reading them knows and counts against the run (cucumber-json-
// formatter's JSON has passed, failed, skipped, pending and undefined;
// the Jenkins cucumber plugin and cucumber-html-reporter fail a build
// on failed alone, unless told to fail on pending or undefined, and
// json-formatter cannot convert ambiguous or unknown). So the message
// says, before anything else, that this failure is not the agent's.
func erroredLine(kind string) string {
	who := "the platform or the harness"
	switch kind {
	case result.KindNetwork:
		who = "the network or the platform"
	case result.KindTimeout, result.KindHTTP, result.KindMessaging, result.KindRateLimited:
		who = "the platform"
	case result.KindConfig:
		who = "the scenario's configuration"
	case result.KindInternal:
		who = "agenttest itself"
	case result.KindInterrupted:
		who = "the run's interruption"
	}
	return erroredBy(who)
}

// erroredBy says that who broke, not the agent.
func erroredBy(who string) string {
	return "errored, not failed: " + who + " broke, not the agent; nothing was learnt about the agent"
}

// stepAt is the index of the step a failure or an error at pos belongs to:
// the last step written at or before it in the same file; the first step
// when none is (an error before the first step, at the scenario), and the
// last when pos says nothing.
func stepAt(steps []diag.Pos, pos diag.Pos) int {
	if len(steps) == 0 {
		return -1
	}
	if pos.Line == 0 {
		return len(steps) - 1
	}
	found := 0
	for i, s := range steps {
		if s.File == pos.File && (s.Line < pos.Line || s.Line == pos.Line && s.Col <= pos.Col) {
			found = i
		}
	}
	return found
}

// latencyAt is the latency of the turn written at pos (the last one, after
// retried calls), or 0.
func latencyAt(a *result.Attempt, pos diag.Pos) time.Duration {
	if t := turnOf(a, pos); t != nil {
		return t.Latency
	}
	return 0
}
