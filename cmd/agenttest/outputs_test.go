package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/result"
)

// The Cucumber Messages of a run of a feature and a YAML suite, read back
// with the messages library: every case is a test case of its pickle,
// whose document places it where it is written, and each step's status
// says where the scenario broke: PASSED before the failing check, FAILED
// at it (with the failure), SKIPPED after.
func TestCucumberMessages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ndjson, jsonPath := filepath.Join(dir, "cucumber.ndjson"), filepath.Join(dir, "result.json")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples/features/restaurant.feature", "examples-failing/restaurant.yaml",
		"--cucumber", ndjson, "--json", jsonPath)
	c.expect(t, exitFailed)
	checkCucumber(t, ndjson, readDoc(t, jsonPath).Result)
}

// checkCucumber checks the Cucumber Messages of a run against its
// result (see TestCucumberMessages).
func checkCucumber(t *testing.T, ndjson string, res *result.Result) {
	t.Helper()
	envs := readEnvelopes(t, ndjson)
	if len(envs) == 0 || envs[0].Meta == nil || envs[0].Meta.ProtocolVersion == "" {
		t.Fatalf("the stream does not start with meta")
	}
	if last := envs[len(envs)-1].TestRunFinished; last == nil || last.Success {
		t.Fatalf("the stream does not end with an unsuccessful testRunFinished: %+v", last)
	}

	// Index the stream.
	sources := map[string]bool{}
	locs := map[string]*messages.Location{} // AST node id -> location
	pickles := map[string]*messages.Pickle{}
	testCases := map[string]*messages.TestCase{}
	started := map[string]*messages.TestCaseStarted{}
	steps := map[string][]*messages.TestStepFinished{} // by testCaseStarted id
	attached := map[string]*messages.Attachment{}      // by testCaseStarted and testStep id
	var order []string                                 // testCaseStarted ids
	for _, e := range envs {
		switch {
		case e.Source != nil:
			sources[e.Source.Uri] = true
		case e.GherkinDocument != nil:
			for _, ch := range e.GherkinDocument.Feature.Children {
				scs := []*messages.Scenario{ch.Scenario}
				if ch.Rule != nil {
					scs = nil
					for _, rc := range ch.Rule.Children {
						scs = append(scs, rc.Scenario)
					}
				}
				for _, sc := range scs {
					if sc == nil {
						continue
					}
					locs[sc.Id] = sc.Location
					for _, st := range sc.Steps {
						locs[st.Id] = st.Location
					}
					for _, ex := range sc.Examples {
						for _, row := range ex.TableBody {
							locs[row.Id] = row.Location
						}
					}
				}
				if ch.Background != nil {
					for _, st := range ch.Background.Steps {
						locs[st.Id] = st.Location
					}
				}
			}
		case e.Pickle != nil:
			pickles[e.Pickle.Id] = e.Pickle
		case e.TestCase != nil:
			testCases[e.TestCase.Id] = e.TestCase
		case e.TestCaseStarted != nil:
			started[e.TestCaseStarted.Id] = e.TestCaseStarted
			order = append(order, e.TestCaseStarted.Id)
		case e.TestStepFinished != nil:
			steps[e.TestStepFinished.TestCaseStartedId] = append(steps[e.TestStepFinished.TestCaseStartedId], e.TestStepFinished)
		case e.Attachment != nil:
			attached[e.Attachment.TestCaseStartedId+" "+e.Attachment.TestStepId] = e.Attachment
		}
	}
	for _, f := range res.Files {
		if sources[f.Path] != strings.HasSuffix(f.Path, ".feature") {
			t.Errorf("sources = %v: the features' text only (YAML is not Gherkin)", sources)
		}
	}

	// The last attempt of each case, by file and line of its pickle.
	type stream struct {
		pickle  *messages.Pickle
		tc      *messages.TestCase
		steps   []*messages.TestStepFinished
		started string
	}
	byPos := map[string]stream{}
	for _, id := range order {
		tc := testCases[started[id].TestCaseId]
		p := pickles[tc.PickleId]
		at := locs[p.AstNodeIds[len(p.AstNodeIds)-1]]
		byPos[p.Uri+":"+strconv.FormatInt(at.Line, 10)] = stream{p, tc, steps[id], id}
	}
	cases := 0
	for _, file := range res.Files {
		for _, cs := range file.Cases {
			cases++
			s, ok := byPos[cs.Pos.File+":"+strconv.Itoa(cs.Pos.Line)]
			if !ok {
				t.Errorf("%s %q has no test case at its line", cs.Pos, cs.Name)
				continue
			}
			// An examples row's case names its row; Cucumber's pickle
			// keeps the outline's name.
			if !strings.HasPrefix(cs.Name, s.pickle.Name) {
				t.Errorf("%s: pickle %q, case %q", cs.Pos, s.pickle.Name, cs.Name)
			}
			if len(s.steps) != len(s.pickle.Steps) || len(s.steps) == 0 {
				t.Errorf("%s: %d step results for %d steps", cs.Pos, len(s.steps), len(s.pickle.Steps))
				continue
			}
			var statuses []string
			for _, st := range s.steps {
				statuses = append(statuses, string(st.TestStepResult.Status))
			}
			got := strings.Join(statuses, " ")
			switch cs.Status {
			case result.Passed, result.Flaky:
				if strings.Trim(got, "PASED ") != "" {
					t.Errorf("%s passed, steps %s", cs.Pos, got)
				}
			case result.Failed:
				fail := cs.Last().Failures[0]
				// The failed step is the last one written at or before
				// the failure.
				want := 0
				for i, ps := range s.pickle.Steps {
					if l := locs[ps.AstNodeIds[0]]; l.Line <= int64(fail.Pos.Line) {
						want = i
					}
				}
				for i, st := range s.steps {
					status := st.TestStepResult.Status
					switch {
					case i < want && status != messages.TestStepResultStatus_PASSED,
						i > want && status != messages.TestStepResultStatus_SKIPPED:
						t.Errorf("%s: step %d is %s (steps %s, failure at %s)", cs.Pos, i, status, got, fail.Pos)
					case i == want && (status != messages.TestStepResultStatus_FAILED || !strings.Contains(st.TestStepResult.Message, fail.Message)):
						t.Errorf("%s: step %d is %s %q, want FAILED with %q", cs.Pos, i, status, st.TestStepResult.Message, fail.Message)
					}
				}
				// The failed step carries the transcript up to the broken
				// turn, as the other reports do.
				a := cs.Last()
				last := a.Turns[len(a.Turns)-1].Reply().Response
				att := attached[s.started+" "+s.steps[want].TestStepId]
				switch {
				case att == nil:
					t.Errorf("%s: the failed step has no attachment", cs.Pos)
				case att.MediaType != "text/plain" || att.ContentEncoding != messages.AttachmentContentEncoding_IDENTITY ||
					!strings.HasPrefix(att.Body, "transcript (conversation "+a.ConversationID+"):\n") || !strings.Contains(att.Body, "< "+last):
					t.Errorf("%s: attachment %s %s, want the transcript ending with %q:\n%s", cs.Pos, att.MediaType, att.ContentEncoding, last, att.Body)
				}
			default:
				t.Errorf("%s: unexpected status %s in this run", cs.Pos, cs.Status)
			}
		}
	}
	if cases == 0 || len(byPos) != cases {
		t.Errorf("%d cases, %d test cases", cases, len(byPos))
	}
}

// On GitHub Actions (GITHUB_ACTIONS=true) a failing run prints an
// ::error annotation at each broken check and appends its summary to
// $GITHUB_STEP_SUMMARY, after what earlier steps wrote there.
func TestGitHubOutputs(t *testing.T) {
	t.Parallel()
	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("# earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := examplesEnv()
	env["GITHUB_ACTIONS"] = "true"
	env["GITHUB_STEP_SUMMARY"] = summary
	c := newCLI(t, repoRoot, env, "run", "examples-failing/restaurant.yaml")
	c.expect(t, exitFailed,
		"::error file=examples-failing/restaurant.yaml,line=28,col=11,title=agenttest failed%3A reply text mismatch shows a diff::examples-failing/restaurant.yaml:28:11: turn 1: reply is not the expected text%0A")
	// The pause of workflow commands ends once, before the annotations.
	if n := strings.Count(c.stdout.String(), "\n::agenttest-"); n != 1 {
		t.Errorf("workflow commands resumed %d times:\n%s", n, c.stdout)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# earlier step\n### ❌ agenttest: failed", "| failed | reply text mismatch shows a diff | `examples-failing/restaurant.yaml:22` |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary lacks %q:\n%s", want, b)
		}
	}
	// Without GitHub Actions, nothing of it.
	c = newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/restaurant.yaml")
	if out := c.expect(t, exitFailed); strings.Contains(out, "::error") {
		t.Errorf("annotations outside GitHub Actions:\n%s", out)
	}
}

// A case that did not run (here: after --fail-fast) is a test case whose
// steps are all SKIPPED with its reason.
func TestCucumberNotRun(t *testing.T) {
	t.Parallel()
	ndjson := filepath.Join(t.TempDir(), "cucumber.ndjson")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/restaurant.yaml", "--fail-fast", "--parallel", "1", "--cucumber", ndjson)
	c.expect(t, exitFailed)
	b, err := os.ReadFile(ndjson)
	if err != nil {
		t.Fatal(err)
	}
	var failed, skipped int
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var e messages.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if f := e.TestStepFinished; f != nil {
			switch f.TestStepResult.Status {
			case messages.TestStepResultStatus_FAILED:
				failed++
			case messages.TestStepResultStatus_SKIPPED:
				if f.TestStepResult.Message == result.ReasonFailFast {
					skipped++
				}
			}
		}
	}
	if failed != 1 || skipped < 3 {
		t.Errorf("%d FAILED steps, %d SKIPPED with %q: want 1 and a step of each case not run", failed, skipped, result.ReasonFailFast)
	}
}

// TestVerdictsOnly checks when a run lets passing cases drop their
// transcripts: only when nothing after the console reads them.
func TestVerdictsOnly(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		opts runOptions
		env  map[string]string
		want bool
	}
	for _, tc := range []testCase{
		{name: "no report", want: true},
		{name: "verbose console", opts: runOptions{verbose: true}, want: true},
		{name: "junit", opts: runOptions{junit: "junit.xml"}},
		{name: "json", opts: runOptions{json: "report.json"}},
		{name: "html", opts: runOptions{html: "report.html"}},
		{name: "cucumber", opts: runOptions{outputs: outputs{cucumber: "messages.ndjson"}}},
		{name: "github flag", opts: runOptions{outputs: outputs{github: true, githubSet: true}}},
		{name: "github actions", env: map[string]string{"GITHUB_ACTIONS": "true"}},
		// Only "true" is GitHub Actions; --github=false turns it off.
		{name: "github actions false", env: map[string]string{"GITHUB_ACTIONS": "false"}, want: true},
		{name: "github off in github actions", opts: runOptions{outputs: outputs{githubSet: true}}, env: map[string]string{"GITHUB_ACTIONS": "true"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.opts.verdictsOnly(&State{Env: tc.env}); got != tc.want {
				t.Errorf("verdictsOnly = %t, want %t", got, tc.want)
			}
		})
	}
}

// A statistical scenario that fails is red in Cucumber's tools, which
// read a scenario's result from its last attempt: its runs end with a
// failed one whose failed step states the verdict.
func TestCucumberRepeatVerdict(t *testing.T) {
	t.Parallel()
	ndjson := filepath.Join(t.TempDir(), "cucumber.ndjson")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/clinic.yaml", "--cucumber", ndjson)
	c.expect(t, exitFailed)
	b, err := os.ReadFile(ndjson)
	if err != nil {
		t.Fatal(err)
	}
	var last []*messages.TestStepResult
	var finished *messages.TestCaseFinished
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var e messages.Envelope
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.TestCaseStarted != nil:
			last = nil
		case e.TestStepFinished != nil:
			last = append(last, e.TestStepFinished.TestStepResult)
		case e.TestCaseFinished != nil:
			finished = e.TestCaseFinished
		}
	}
	if finished == nil || finished.WillBeRetried {
		t.Fatalf("the last attempt is to be retried: %+v", finished)
	}
	failed := false
	for _, r := range last {
		if r.Status == messages.TestStepResultStatus_FAILED {
			failed = true
			if !strings.HasPrefix(r.Message, "passed ") || !strings.Contains(r.Message, " runs; rate < ") {
				t.Errorf("the failed step does not state the verdict first:\n%s", r.Message)
			}
		}
	}
	if !failed {
		t.Errorf("the last attempt of a failed statistical scenario has no failed step")
	}
}

// TestCoverageOfTheServedVersion: on the embedded simulator, an agent's
// node coverage is measured against the version the run's environment
// serves, for the scenarios that name no agent (the target's, the
// simulator's first) and no environment (the run's) too. A node only the
// served version has is unvisited; measured against the file's own
// version, or against the nodes seen, it would be missing.
func TestCoverageOfTheServedVersion(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"agents/demo.yaml": "id: demo\nversion: \"2\"\nenvironments:\n  pre-release: \"1\"\nstart: Hello\nnodes:\n  Hello:\n    say: hi\n" +
			"versions:\n  \"1\":\n    nodes:\n      Bye:\n        say: bye\n",
		"suites/s.yaml": "suite: s\nscenarios:\n  - name: greets\n    greeting: {response: {contains: hi}}\n",
	})
	c := newCLI(t, dir, map[string]string{simFlagsEnv: "--agents agents"}, "run", "suites", "--env", "pre-release", "--json", "r.json")
	c.expect(t, exitOK)
	var rep struct{ Coverage coverage.Report }
	if data, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("r.json: %v\n%s", err, data)
	}
	a := rep.Coverage.Agent("demo")
	if a == nil || a.Source != coverage.SourceDefinition || a.NodesTotal != 2 {
		t.Fatalf("demo = %+v, want 2 nodes of its definition", a)
	}
	if !slices.Equal(a.Unvisited, []string{"Bye"}) {
		t.Errorf("unvisited %q, want [Bye]", a.Unvisited)
	}
}

// TestCoverageOverMessaging: a case over messaging carries no node
// trace, so coverage says how many cases it could not count, in the JSON,
// HTML and text reports, rather than list the nodes they went through as
// never visited without a word.
func TestCoverageOverMessaging(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"agents/demo.yaml": "id: demo\nstart: Hello\nnodes:\n  Hello:\n    say: hi\n",
		"suites/s.yaml": "suite: s\nagent: demo\nscenarios:\n  - name: over debug chat\n    greeting: {response: {contains: hi}}\n" +
			"  - name: over web chat\n    via: messaging\n    greeting: {response: {contains: hi}}\n" +
			"  - name: over web chat, streamed\n    via: messaging\n    streaming: true\n    greeting: {response: {contains: hi}}\n",
	})
	newCLI(t, dir, map[string]string{simFlagsEnv: "--agents agents"}, "run", "suites", "--json", "r.json", "--html", "r.html").expect(t, exitOK)
	var rep struct{ Coverage coverage.Report }
	if data, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || json.Unmarshal(data, &rep) != nil {
		t.Fatalf("r.json: %v\n%s", err, data)
	}
	if a := rep.Coverage.Agent("demo"); a == nil || a.Untraced != 2 || a.NodesVisited != 1 {
		t.Fatalf("demo = %+v, want 2 untraced cases and the node of the debug-chat case", a)
	}
	const note = "2 cases over messaging not counted: web chat carries no node trace"
	if html, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !strings.Contains(string(html), note) {
		t.Errorf("r.html lacks %q (%v)", note, err)
	}
	newCLI(t, dir, nil, "coverage", "r.json").expect(t, exitOK, "demo: 1 of 1 nodes visited (100%), 0 transitions taken; nodes of its definition\n"+note+"\n")
}

// TestStreamCutShowsItsChunks: a streamed reply the platform cut off
// with an error errors the case, and the transcript quotes what the
// stream had shown (the console's and the HTML report's), where it would
// say only "(no message)".
func TestStreamCutShowsItsChunks(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"s.yaml": "suite: s\nagent: utility-billing\nvia: messaging\nstreaming: true\nscenarios:\n  - name: asks\n    turns:\n      - say: hello\n",
	})
	c := newCLI(t, dir, map[string]string{simFlagsEnv: "--reply-failure 1"}, "run", "--retries", "0", "--html", "r.html", "s.yaml")
	c.expect(t, exitErrored, `(no complete message; the stream stopped after "Sorry, I didn't understand `)
	html, err := os.ReadFile(filepath.Join(dir, "r.html"))
	if err != nil || !strings.Contains(string(html), `the stream stopped after \"Sorry, I didn't understand `) {
		t.Errorf("r.html lacks the cut stream (%v)", err)
	}
	// The greeting's stream was whole: it is the reply, never a cut.
	if strings.Contains(string(html), `the stream stopped after \"Hello`) {
		t.Error("r.html calls the greeting's whole stream cut")
	}
}

// TestCucumberSelection: --cucumber holds the documents and pickles of
// the scenarios the run selected, no more: a pickle without a test case
// reads in Cucumber's tools as a scenario that never ran.
func TestCucumberSelection(t *testing.T) {
	t.Parallel()
	ndjson := filepath.Join(t.TempDir(), "cucumber.ndjson")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples/features/restaurant.feature", "examples-failing/restaurant.yaml",
		"--name", "books a table for four", "--cucumber", ndjson)
	c.expect(t, exitOK)
	var docs, pickles []string
	for _, e := range readEnvelopes(t, ndjson) {
		switch {
		case e.GherkinDocument != nil:
			docs = append(docs, e.GherkinDocument.Uri)
		case e.Pickle != nil:
			pickles = append(pickles, e.Pickle.Name)
		}
	}
	if !slices.Equal(docs, []string{"examples/features/restaurant.feature"}) || !slices.Equal(pickles, []string{"books a table for four"}) {
		t.Errorf("documents %q, pickles %q: want the feature's one selected scenario", docs, pickles)
	}
}

// failingClose is a file whose writes succeed and whose Close fails, as
// on a network file system that reports a full quota at close.
type failingClose struct{}

func (failingClose) Write(p []byte) (int, error) { return len(p), nil }
func (failingClose) Close() error                { return errors.New("disk quota exceeded") }

// TestGitHubSummaryCloseError: a step summary that could not be closed
// may not hold the run's summary, and the run says so rather than
// passing as if the summary were there.
func TestGitHubSummaryCloseError(t *testing.T) {
	t.Parallel()
	c := newCLI(t, "testdata/pass", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "summary.md"}, "run")
	c.st.AppendFile = func(string) (io.WriteCloser, error) { return failingClose{}, nil }
	out := c.expect(t, exitInternal, "agenttest: append the step summary to summary.md (GITHUB_STEP_SUMMARY): disk quota exceeded")
	if strings.Contains(out, "internal error") {
		t.Errorf("a full disk is called an internal error of agenttest:\n%s", out)
	}
}
