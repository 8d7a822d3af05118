package main

// End-to-end tests of the shipped YAML: examples/, suites/ and
// examples-failing/ run through the CLI's run() in-process against the
// embedded simulator, and suites/ is proven to use every expectation key
// and matcher of the format.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
)

// repoRoot is where examples/, suites/ and examples-failing/ live, relative
// to this package.
const repoRoot = "../.."

// examplesEnv is the environment of the end-to-end runs. suites/ reads
// ${env:PATH}; a fixed value keeps the runs independent of the machine.
func examplesEnv() map[string]string {
	return map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
}

// caseReport is the part of a JSON report case these tests read.
type caseReport struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	SkipReason string `json:"skip_reason"`
	Repeat     *struct {
		Decision string `json:"decision"`
		Runs     int    `json:"runs"`
		Failed   int    `json:"failed"`
		Errored  int    `json:"errored"`
	} `json:"repeat"`
	Pos struct {
		File string `json:"file"`
		Line int    `json:"line"`
	} `json:"pos"`
}

// runJSON runs agenttest with --json into a temporary file and returns the
// exit code, the CLI and the cases of the report in file order.
func runJSON(t *testing.T, args ...string) (int, *cli, []caseReport) {
	t.Helper()
	code, c, b := runReport(t, args...)
	return code, c, reportCases(t, b)
}

// runReport runs agenttest with --json into a temporary file and returns
// the exit code, the CLI and the report.
func runReport(t *testing.T, args ...string) (int, *cli, []byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "result.json")
	c := newCLI(t, repoRoot, examplesEnv(), append(args, "--json", out)...)
	code := c.run(t)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("no JSON report (exit %d): %v\nstdout:\n%s\nstderr:\n%s", code, err, c.stdout, c.stderr)
	}
	return code, c, b
}

// examplesRun is `agenttest run examples --json`, made once for the tests
// that read it (TestRunExamplesPasses, TestDocCoverageSample): each
// making its own took half a second of CPU under -race for the same run.
var examplesRun struct {
	once sync.Once
	done bool // false: the run ended the test that made it
	code int
	c    *cli
	// report is the JSON report, kept in memory: its file was in the
	// temporary directory of the test that made the run.
	report []byte
}

// runExamples returns the exit code, the CLI and the JSON report of
// examplesRun, making the run if no test has yet.
func runExamples(t *testing.T) (int, *cli, []byte) {
	t.Helper()
	r := &examplesRun
	r.once.Do(func() {
		r.code, r.c, r.report = runReport(t, "run", "examples")
		r.done = true
	})
	if !r.done {
		t.Fatal("run examples failed in the test that made it")
	}
	return r.code, r.c, r.report
}

// reportCases returns the cases of a JSON report in file order.
func reportCases(t *testing.T, b []byte) []caseReport {
	t.Helper()
	var doc struct {
		Files []struct {
			Cases []caseReport `json:"cases"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("JSON report does not parse: %v\n%s", err, b)
	}
	var cases []caseReport
	for _, f := range doc.Files {
		cases = append(cases, f.Cases...)
	}
	return cases
}

// loadTree loads the suites under dir (relative to the repository root)
// and fails the test on any load error.
func loadTree(t *testing.T, dir string) []*scenario.Suite {
	t.Helper()
	suites, diags := scenario.Load(os.DirFS(repoRoot), []string{dir})
	for _, d := range diags {
		if d.Severity == diag.Error {
			t.Errorf("%s: %s", d.Pos, d.Message)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if len(suites) == 0 {
		t.Fatalf("no suites under %s", dir)
	}
	return suites
}

func TestRunExamplesPasses(t *testing.T) {
	t.Parallel()
	code, c, report := runExamples(t)
	cases := reportCases(t, report)
	if code != exitOK {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, c.stdout, c.stderr)
	}
	if want := scenario.Count(loadTree(t, "examples")); len(cases) != want {
		t.Errorf("report has %d cases, the suites %d", len(cases), want)
	}
	for _, cs := range cases {
		if cs.Status != "passed" {
			t.Errorf("%s:%d %s: %s", cs.Pos.File, cs.Pos.Line, cs.Name, cs.Status)
		}
	}
	if !strings.Contains(firstLine(c.stdout.String()), "embedded simulator") {
		t.Errorf("first line does not announce the simulator: %q", firstLine(c.stdout.String()))
	}
}

func TestRunSuitesPasses(t *testing.T) {
	t.Parallel()
	suites := loadTree(t, "suites")
	code, c, cases := runJSON(t, "run", "suites")
	if code != exitOK {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, c.stdout, c.stderr)
	}
	if want := scenario.Count(suites); len(cases) != want {
		t.Errorf("report has %d cases, the suites %d", len(cases), want)
	}
	skips := map[string]bool{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if sc.Skip != "" {
				skips[sc.Name] = true
			}
		}
	}
	for _, cs := range cases {
		want := "passed"
		if skips[cs.Name] {
			want = "skipped"
		}
		if cs.Status != want {
			t.Errorf("%s:%d %s: %s, want %s", cs.Pos.File, cs.Pos.Line, cs.Name, cs.Status, want)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", c.stdout)
	}
}

// TestRunExamplesFailing checks that each deliberate failure of
// examples-failing/ is reported where it was written, with expected and
// actual values, and that a text mismatch comes with its diff.
func TestRunExamplesFailing(t *testing.T) {
	t.Parallel()
	const (
		file        = "examples-failing/restaurant.yaml"
		confirmFile = "examples-failing/confirmations.yaml"
	)
	suites := loadTree(t, "examples-failing")
	src, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")

	// Where each deliberate mistake was written, read from the loaded
	// model, and a word its source line must hold, so that a position
	// pointing elsewhere cannot pass.
	var restaurant, confirmations *scenario.Suite
	for _, s := range suites {
		switch s.Path {
		case file:
			restaurant = s
		case confirmFile:
			confirmations = s
		}
	}
	if restaurant == nil || confirmations == nil {
		t.Fatalf("examples-failing lacks %s or %s", file, confirmFile)
	}
	find := func(name string) *assert.Expect {
		for _, sc := range restaurant.Scenarios {
			if sc.Name != name {
				continue
			}
			// The first check after the first turn's say.
			for _, st := range sc.Steps {
				if st.Kind == steps.Check && !st.Greeting {
					exp, err := st.Expect(func(s string) (string, error) { return s, nil })
					if err != nil {
						t.Fatal(err)
					}
					return exp
				}
			}
		}
		t.Fatalf("%s has no scenario %q", file, name)
		return nil
	}
	type mistake struct {
		pos    diag.Pos
		onLine string
		output []string
	}
	mistakes := []mistake{
		{
			pos:    find("reply text mismatch shows a diff").Response.Pos,
			onLine: "How many guests",
			output: []string{"expected: Lovely! How many guests", "actual:   Lovely! How many people", "diff:", "[-guests-]{+people+}"},
		},
		{
			pos:    find("wrong state value names the key").State[1].Pos,
			onLine: "time: 7pm",
			output: []string{`state "time"`, "expected: 7pm", "actual:   19:00"},
		},
		{
			pos:    find("trace sequence out of order").Trace.Parts.ItemPos("sequence", 2),
			onLine: "sequence: [StartBooking, ConfirmBooking, CheckParty]",
			output: []string{"StartBooking > ConfirmBooking > CheckParty", "actual:   StartBooking > CheckParty > ConfirmBooking"},
		},
		{
			pos:    find("web chat expects a live agent").Events.Parts.ItemPos("includes", 0),
			onLine: "events: {includes: [EVENT_TYPE_LIVE_AGENT_JOINED]}",
			output: []string{"no EVENT_TYPE_LIVE_AGENT_JOINED event in the turn", "expected: includes EVENT_TYPE_LIVE_AGENT_JOINED",
				"actual:   EVENT_TYPE_USER_MESSAGE > EVENT_TYPE_VENDOR_AGENT_TYPING > EVENT_TYPE_VENDOR_AGENT_MESSAGE > EVENT_TYPE_VENDOR_AGENT_TYPING",
				"events: EVENT_TYPE_USER_MESSAGE → EVENT_TYPE_VENDOR_AGENT_TYPING → EVENT_TYPE_VENDOR_AGENT_MESSAGE → EVENT_TYPE_VENDOR_AGENT_TYPING"},
		},
	}

	code, c, cases := runJSON(t, "run", "examples-failing")
	if code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailed, c.stdout, c.stderr)
	}
	out := c.stdout.String()
	for _, m := range mistakes {
		if m.pos.Line < 1 || m.pos.Line > len(lines) || !strings.Contains(lines[m.pos.Line-1], m.onLine) {
			t.Errorf("position %s does not point at %q", m.pos, m.onLine)
		}
		if want := m.pos.String() + ": turn 1: "; !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
		for _, want := range m.output {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q", want)
			}
		}
	}
	// The wrong confirmation fails at the field, after the session, with
	// what the record holds and the evidence read.
	confirmSrc, err := os.ReadFile(filepath.Join(repoRoot, confirmFile))
	if err != nil {
		t.Fatal(err)
	}
	var confirm *assert.Confirm
	for _, st := range confirmations.Scenarios[0].Steps {
		if st.Kind == steps.Confirm {
			if confirm, err = st.Confirm(func(s string) (string, error) { return s, nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	dest := confirm.Conversation.Fields[1]
	if dest.Field != "handoff_destination" || !strings.Contains(strings.Split(string(confirmSrc), "\n")[dest.Pos.Line-1], "handoff_destination: reception") {
		t.Errorf("position %s does not point at the wrong destination", dest.Pos)
	}
	for _, want := range []string{
		dest.Pos.String() + ": confirm.conversation.handoff_destination: conversation handoff_destination is not the expected value",
		"expected: reception", "actual:   on_call_nurse", "confirmed:", "handoff_destination=on_call_nurse",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// One transcript per failing scenario; the statistical one
	// (examples-failing/clinic.yaml) shows its first three failed runs.
	failing, transcripts := len(mistakes)+1, len(mistakes)+1
	for _, cs := range cases {
		if cs.Repeat != nil {
			failing++
			transcripts += min(cs.Repeat.Failed, 3)
			if cs.Repeat.Decision != "failed" {
				t.Errorf("%s: decision %q, want failed", cs.Name, cs.Repeat.Decision)
			}
		}
	}
	if n := strings.Count(out, "transcript (conversation "); n != transcripts {
		t.Errorf("%d transcripts, want one per failing scenario and three of the statistical one (%d)", n, transcripts)
	}
	if len(cases) != failing || failing != len(mistakes)+2 {
		t.Errorf("report has %d cases, want %d", len(cases), len(mistakes)+2)
	}
	for _, cs := range cases {
		if cs.Status != "failed" {
			t.Errorf("%s: %s, want failed", cs.Name, cs.Status)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}

func TestLintShippedSuites(t *testing.T) {
	t.Parallel()
	c := newCLI(t, repoRoot, examplesEnv(), "lint", "suites", "examples", "examples-failing")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, c.stdout, c.stderr)
	}
	if strings.Contains(c.stdout.String()+c.stderr.String(), "warning") {
		t.Errorf("lint warns about the shipped suites:\n%s%s", c.stdout, c.stderr)
	}
}

// feature is one part of the format that suites/ must use somewhere. The
// names are those of the table in suites/README.md.
type feature[T any] struct {
	name string
	used func(T) bool
}

// expectFeatures are the expectation keys and their forms.
var expectFeatures = []feature[*assert.Expect]{
	{"response", func(e *assert.Expect) bool { return e.Response != nil }},
	{"trace.includes", func(e *assert.Expect) bool { return e.Trace != nil && len(e.Trace.Includes) > 0 }},
	{"trace.excludes", func(e *assert.Expect) bool { return e.Trace != nil && len(e.Trace.Excludes) > 0 }},
	{"trace.sequence", func(e *assert.Expect) bool { return e.Trace != nil && len(e.Trace.Sequence) > 0 }},
	{"trace.equals", func(e *assert.Expect) bool { return e.Trace != nil && e.Trace.Equals != nil }},
	{"node", func(e *assert.Expect) bool { return e.Node != nil }},
	{"flow", func(e *assert.Expect) bool { return e.Flow != nil }},
	{"step", func(e *assert.Expect) bool { return e.Step != nil }},
	{"state (matcher)", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.State, func(s assert.StateCheck) bool { return s.Match != nil })
	}},
	{"state.present", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.State, func(s assert.StateCheck) bool { return s.Present != nil && *s.Present })
	}},
	{"state.absent", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.State, func(s assert.StateCheck) bool { return s.Present != nil && !*s.Present })
	}},
	{"handoff: false", func(e *assert.Expect) bool { return e.Handoff != nil && !e.Handoff.Expected }},
	{"handoff: true", func(e *assert.Expect) bool {
		return e.Handoff != nil && e.Handoff.Expected && e.Handoff.Destination == nil
	}},
	{"handoff (destination)", func(e *assert.Expect) bool { return e.Handoff != nil && e.Handoff.Destination != nil }},
	{"ended", func(e *assert.Expect) bool { return e.Ended != nil }},
	{"delayed", func(e *assert.Expect) bool { return e.Delayed != nil }},
	{"metrics (matcher)", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.Metrics, func(m assert.MetricCheck) bool { return m.Match != nil })
	}},
	{"metrics.count", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.Metrics, func(m assert.MetricCheck) bool { return m.Count != nil })
	}},
	{"metrics.absent", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.Metrics, func(m assert.MetricCheck) bool { return m.Present != nil })
	}},
	{"functions.called", func(e *assert.Expect) bool { return e.Functions != nil && len(e.Functions.Called) > 0 }},
	{"functions.not_called", func(e *assert.Expect) bool { return e.Functions != nil && len(e.Functions.NotCalled) > 0 }},
	{"functions.failed", func(e *assert.Expect) bool { return e.Functions != nil && len(e.Functions.Failed) > 0 }},
	{"functions.no_errors", func(e *assert.Expect) bool { return e.Functions != nil && e.Functions.NoErrors }},
	{"topics.retrieved", func(e *assert.Expect) bool { return e.Topics != nil && len(e.Topics.Retrieved) > 0 }},
	{"topics.cited", func(e *assert.Expect) bool { return e.Topics != nil && e.Topics.Cited != nil }},
	{"latency_ms", func(e *assert.Expect) bool { return e.LatencyMS != nil }},
	{"lang.asr", func(e *assert.Expect) bool { return e.Lang != nil && e.Lang.ASR != nil }},
	{"lang.tts", func(e *assert.Expect) bool { return e.Lang != nil && e.Lang.TTS != nil }},
	{"metadata (dotted path)", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.Metadata, func(m assert.MetadataCheck) bool { return strings.Contains(m.Path, ".") && m.Match != nil })
	}},
	{"metadata.present", func(e *assert.Expect) bool {
		return slices.ContainsFunc(e.Metadata, func(m assert.MetadataCheck) bool { return m.Present != nil })
	}},
	{"events.includes", func(e *assert.Expect) bool { return e.Events != nil && len(e.Events.Includes) > 0 }},
	{"events.excludes", func(e *assert.Expect) bool { return e.Events != nil && len(e.Events.Excludes) > 0 }},
	{"events.sequence", func(e *assert.Expect) bool { return e.Events != nil && len(e.Events.Sequence) > 0 }},
	{"system_message: false", func(e *assert.Expect) bool { return e.SystemMessage != nil && !e.SystemMessage.Expected }},
	{"session_ended", func(e *assert.Expect) bool { return e.SessionEnded != nil }},
}

// matcherFeatures are the matcher kinds.
var matcherFeatures = []feature[*assert.Text]{
	{"bare string", func(m *assert.Text) bool { return m.Exact != nil }},
	{"equals", func(m *assert.Text) bool { return m.Equals != nil }},
	{"contains", func(m *assert.Text) bool { return m.Contains != nil }},
	{"not_contains", func(m *assert.Text) bool { return m.NotContains != nil }},
	{"matches", func(m *assert.Text) bool { return m.Matches != nil }},
	{"not_matches", func(m *assert.Text) bool { return m.NotMatches != nil }},
	{"one_of", func(m *assert.Text) bool { return len(m.OneOf) > 0 }},
	{"similar (default threshold)", func(m *assert.Text) bool { return m.Similar != nil && m.Similar.Min == 0 }},
	{"similar (min)", func(m *assert.Text) bool { return m.Similar != nil && m.Similar.Min > 0 }},
	{"ignore_case", func(m *assert.Text) bool { return m.IgnoreCase }},
	{"any", func(m *assert.Text) bool { return len(m.Any) > 0 }},
	{"all", func(m *assert.Text) bool { return len(m.All) > 0 }},
	{"not", func(m *assert.Text) bool { return m.Not != nil }},
}

// scenarioFeatures are the scenario and turn keys.
var scenarioFeatures = []feature[*scenario.Scenario]{
	{"greeting", func(s *scenario.Scenario) bool {
		return slices.ContainsFunc(s.Steps, func(st *steps.Step) bool { return st.Kind == steps.Check && st.Greeting })
	}},
	{"capture", func(s *scenario.Scenario) bool {
		return slices.ContainsFunc(s.Steps, func(st *steps.Step) bool { return st.Kind == steps.Capture })
	}},
	{"vars", func(s *scenario.Scenario) bool { return len(s.Vars) > 0 }},
	{"${env:NAME}", func(s *scenario.Scenario) bool {
		for _, v := range s.Vars {
			if strings.Contains(v, "${env:") {
				return true
			}
		}
		return false
	}},
	// An examples row is named with its values: "name [col=value]".
	{"examples", func(s *scenario.Scenario) bool {
		return strings.HasSuffix(s.Name, "]") && strings.Contains(s.Name, "=")
	}},
	{"repeat + pass_rate", func(s *scenario.Scenario) bool {
		return s.Stats.Repeat > 1 && s.Stats.PassRate < 1 && !s.Stats.Sequential()
	}},
	{"confidence + margin", func(s *scenario.Scenario) bool { return s.Stats.Sequential() && s.Stats.Margin > 0 }},
	{"quarantine", func(s *scenario.Scenario) bool { return s.Quarantine != nil && s.Quarantine.Owner != "" }},
	{"retries", func(s *scenario.Scenario) bool { return s.Retries != nil && *s.Retries > 0 }},
	{"skip", func(s *scenario.Scenario) bool { return s.Skip != "" }},
	{"timeout", func(s *scenario.Scenario) bool { return s.Timeout > 0 }},
	{"tags", func(s *scenario.Scenario) bool { return len(s.Tags) > 0 }},
	{"start.channel VOICE-SIP", func(s *scenario.Scenario) bool { return s.Start.Channel == "VOICE-SIP" }},
	{"via: messaging", func(s *scenario.Scenario) bool { return s.Messaging() }},
	{"start.variant", func(s *scenario.Scenario) bool { return s.Start.Variant != "" }},
	{"start.asr_lang", func(s *scenario.Scenario) bool { return s.Start.ASRLang != "" }},
	{"start.tts_lang", func(s *scenario.Scenario) bool { return s.Start.TTSLang != "" }},
	{"start.integration_attributes", func(s *scenario.Scenario) bool { return len(s.Start.IntegrationAttributes) > 0 }},
	{"silence", func(s *scenario.Scenario) bool {
		return slices.ContainsFunc(s.Steps, func(st *steps.Step) bool { return st.Kind == steps.Say && st.Say == "" })
	}},
	// Out-of-domain input is seen through its effect: a fallback reply.
	{"out-of-domain input", func(s *scenario.Scenario) bool {
		for _, e := range expects(s) {
			if e.Trace != nil && (slices.Contains(e.Trace.Equals, "Fallback") || slices.Contains(e.Trace.Sequence, "Fallback")) {
				return true
			}
			if e.Response != nil && e.Response.Equals != nil && *e.Response.Equals == "Sorry, I didn't understand that." {
				return true
			}
		}
		return false
	}},
}

// expects returns a scenario's greeting and turn expectations, as written.
func expects(s *scenario.Scenario) []*assert.Expect {
	var out []*assert.Expect
	for _, st := range s.Steps {
		if st.Kind == steps.Check {
			if e, err := st.Expect(func(v string) (string, error) { return v, nil }); err == nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// texts returns every matcher of an expectation, nested ones included.
func texts(e *assert.Expect) []*assert.Text {
	var out []*assert.Text
	var walk func(*assert.Text)
	walk = func(m *assert.Text) {
		if m == nil {
			return
		}
		out = append(out, m)
		for _, sub := range append(slices.Clone(m.Any), m.All...) {
			walk(sub)
		}
		walk(m.Not)
	}
	walk(e.Response)
	walk(e.Node)
	walk(e.Flow)
	walk(e.Step)
	for _, s := range e.State {
		walk(s.Match)
	}
	if e.Handoff != nil {
		walk(e.Handoff.Destination)
	}
	for _, m := range e.Metrics {
		walk(m.Match)
	}
	if e.Topics != nil {
		walk(e.Topics.Cited)
	}
	if e.Lang != nil {
		walk(e.Lang.ASR)
		walk(e.Lang.TTS)
	}
	for _, m := range e.Metadata {
		walk(m.Match)
	}
	return out
}

// TestSuitesCoverTheFormat proves the claim of suites/README.md: every
// expectation key, every matcher and every scenario key of the format is
// used by some scenario of suites/, and the README's table names each one.
func TestSuitesCoverTheFormat(t *testing.T) {
	t.Parallel()
	suites := loadTree(t, "suites")
	readme, err := os.ReadFile(filepath.Join(repoRoot, "suites", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			for _, f := range scenarioFeatures {
				used[f.name] = used[f.name] || f.used(sc)
			}
			for _, e := range expects(sc) {
				for _, f := range expectFeatures {
					used[f.name] = used[f.name] || f.used(e)
				}
				for _, m := range texts(e) {
					for _, f := range matcherFeatures {
						used[f.name] = used[f.name] || f.used(m)
					}
				}
			}
		}
	}
	// The lists above are written by hand; reflection makes sure they miss
	// no field: a key added to the model must be used in suites/ too.
	fieldsUsed := map[string]bool{}
	mark := func(v any) {
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			f := rv.Type().Field(i)
			if f.Name != "Pos" && !rv.Field(i).IsZero() {
				fieldsUsed[rv.Type().Name()+"."+f.Name] = true
			}
		}
	}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			for _, e := range expects(sc) {
				mark(e)
				for _, m := range texts(e) {
					mark(m)
				}
			}
		}
	}
	for _, v := range []any{assert.Expect{}, assert.Text{}} {
		typ := reflect.TypeOf(v)
		for field := range typ.Fields() {
			if name := typ.Name() + "." + field.Name; field.Name != "Pos" && !fieldsUsed[name] {
				t.Errorf("suites/ never sets %s", name)
			}
		}
	}

	var names []string
	for _, f := range expectFeatures {
		names = append(names, f.name)
	}
	for _, f := range matcherFeatures {
		names = append(names, f.name)
	}
	for _, f := range scenarioFeatures {
		names = append(names, f.name)
	}
	var missing []string
	for _, n := range names {
		if !used[n] {
			missing = append(missing, n)
		}
		if !strings.Contains(string(readme), "| `"+n+"` |") {
			t.Errorf("suites/README.md has no table row for `%s`", n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("suites/ never uses: %s", strings.Join(missing, ", "))
	}
}
