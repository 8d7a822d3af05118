package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// loadTestdata loads files under testdata, failing on any error.
func loadTestdata(t *testing.T, paths ...string) []*scenario.Suite {
	t.Helper()
	suites, diags := scenario.Load(os.DirFS("testdata"), paths)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return suites
}

// facts renders what a case learnt without positions or timings: the
// verdict, every attempt with its turns, failures (key, message, expected,
// actual, diff) and error kind. YAML and features must agree on all of it.
func facts(c *result.Case) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.Name, c.Status)
	if c.Repeat != nil {
		fmt.Fprintf(&b, " repeat %d/%d", c.Repeat.Passed, c.Repeat.Runs)
	}
	b.WriteString("\n")
	for _, a := range c.Attempts {
		fmt.Fprintf(&b, "  attempt %d: %s, %d turns:", a.Number, a.Status, len(a.Turns))
		for _, t := range a.Turns {
			fmt.Fprintf(&b, " %q", t.Say)
		}
		b.WriteString("\n")
		for _, f := range a.Failures {
			fmt.Fprintf(&b, "    failure %s: %s | expected %q | actual %q | diff %q\n", f.Key, f.Message, f.Expected, f.Actual, f.Diff)
		}
		if a.Error != nil {
			fmt.Fprintf(&b, "    error %s\n", a.Error.Kind)
		}
		if nr := notRunFacts(a.NotRun); nr != "" {
			fmt.Fprintf(&b, "    not run: %s\n", nr)
		}
	}
	return b.String()
}

// notRunFacts renders the steps an attempt did not run as both formats
// must agree on them: each turn's say, checks and captures, and what the
// confirmations read. A feature may check a reply in several steps where
// YAML has one expect: (and a confirm step per check where YAML has one
// confirm:), so the checks left of the turn that broke (its say ran) are
// a feature's alone, consecutive checks of a turn count once, and
// consecutive confirmations as one.
func notRunFacts(ss []*result.Step) string {
	var out []string
	said := map[int]bool{}
	for i, st := range ss {
		if st.Kind == result.StepSay {
			said[st.Turn] = true
		}
		if (st.Kind == result.StepCheck || st.Kind == result.StepCapture) && !said[st.Turn] {
			continue
		}
		w := fmt.Sprintf("%s %d", st.Kind, st.Turn)
		if st.Kind == result.StepConfirm {
			if i > 0 && ss[i-1].Kind == result.StepConfirm {
				out[len(out)-1] += "+" + strings.Join(st.Confirms, "+")
				continue
			}
			w = "confirm " + strings.Join(st.Confirms, "+")
		}
		if len(out) == 0 || out[len(out)-1] != w {
			out = append(out, w)
		}
	}
	return strings.Join(out, ", ")
}

func allFacts(f *result.File) string {
	var b strings.Builder
	for _, c := range f.Cases {
		b.WriteString(facts(c))
	}
	return b.String()
}

// TestFeatureParity runs the same conversations written in YAML and as a
// feature, in one run, and requires the same verdicts, attempts and
// failure facts.
func TestFeatureParity(t *testing.T) {
	t.Parallel()
	suites := loadTestdata(t, "parity/parity.feature", "parity/parity.yaml")
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.DefaultAgent = ""
	opts.Retries = 1
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 {
		t.Fatalf("files: %d", len(res.Files))
	}
	feat, yml := res.Files[0], res.Files[1]
	if feat.Path != "parity/parity.feature" || yml.Path != "parity/parity.yaml" {
		t.Fatalf("files %s, %s", feat.Path, yml.Path)
	}
	got, want := allFacts(feat), allFacts(yml)
	if got != want {
		t.Errorf("feature facts:\n%s\nYAML facts:\n%s", got, want)
	}
	// The run must hold both kinds of verdict, or the comparison proves
	// little.
	for _, st := range []string{": passed", ": failed"} {
		if !strings.Contains(want, st) {
			t.Errorf("no case%s in:\n%s", st, want)
		}
	}
	// Feature failures point at the step and name it.
	c := feat.Cases[1]
	f := c.Last().Failures[0]
	if f.Pos.String() != "parity/parity.feature:28:5" || f.Step != `Then the state "party_size" is "6"` {
		t.Errorf("failure at %s, step %q", f.Pos, f.Step)
	}
	if c.Pos.String() != "parity/parity.feature:25:3" {
		t.Errorf("case at %s", c.Pos)
	}
	// A capture that finds nothing reads like any broken check: the
	// reports name the turn or step (the message must not name it again)
	// and show what was looked for and what the reply held.
	for _, file := range []*result.File{feat, yml} {
		for _, c := range file.Cases {
			if c.Name != "cannot capture a reference" {
				continue
			}
			f := c.Last().Failures[0]
			want := assert.Failure{Pos: f.Pos, Step: f.Step, Key: "capture.ref",
				Message:  "cannot capture ref from response: pattern does not match",
				Expected: "matches /reference ([A-Z0-9]{6})/",
				Actual:   "I can't find a booking in this conversation yet. Would you like to book a table?"}
			if f != want {
				t.Errorf("%s: capture failure\n got  %#v\n want %#v", file.Path, f, want)
			}
		}
	}
	if t.Failed() {
		t.Logf("case 0:\n%s", describe(feat.Cases[0]))
	}
}

// TestFeatureRetriesAndRepeat injects the same faults into the YAML and
// the feature form of one conversation (one case at a time, so the n-th
// request is the same one in both) and requires the same attempts and
// verdicts: retries replay the steps before the failing one in a fresh
// session, repeat replays them all.
func TestFeatureRetriesAndRepeat(t *testing.T) {
	t.Parallel()
	chatTimeout := func(w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestTimeout)
		io.WriteString(w, `{"success":false,"error":"timeout","error_id":"e1","error_code":"CHAT_TIMEOUT","error_message":"the chat session exceeded the timeout limit","data":null}`)
		return true
	}
	type testCase struct {
		name     string
		retries  int
		repeat   int
		rate     float64
		fault    func(kind string, n int64, w http.ResponseWriter) bool
		rewrite  func(kind string, n int64, body []byte) []byte
		want     result.Status
		attempts int
	}
	run := func(t *testing.T, tc testCase) {
		var out [2]string
		for i, file := range []string{"parity/retry.yaml", "parity/retry.feature"} {
			e := newEnv(t, sim.Options{Seed: 1})
			if tc.fault != nil {
				e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool { return tc.fault(kind, n, w) })
			}
			if tc.rewrite != nil {
				e.proxy.onResponse(tc.rewrite)
			}
			suites := loadTestdata(t, file)
			sc := suites[0].Scenarios[0]
			sc.Retries, sc.Stats = &tc.retries, scenario.Stats{Repeat: tc.repeat, PassRate: tc.rate}
			opts := e.opts()
			opts.DefaultAgent = ""
			// The runs of a repeat one at a time: the faults pick the
			// n-th request.
			opts.Parallel = 1
			res, err := Run(context.Background(), suites, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Files[0].Cases[0]
			if c.Status != tc.want || len(c.Attempts) != tc.attempts {
				t.Errorf("%s: %s with %d attempts, want %s with %d:%s", file, c.Status, len(c.Attempts), tc.want, tc.attempts, describe(c))
			}
			out[i] = facts(c)
		}
		if out[0] != out[1] {
			t.Errorf("YAML:\n%s\nfeature:\n%s", out[0], out[1])
		}
	}
	for _, tc := range []testCase{
		{name: "an errored turn is retried", retries: 2, want: result.Flaky, attempts: 2,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n == 2 && chatTimeout(w)
			}},
		{name: "a failed check is retried", retries: 1, want: result.Flaky, attempts: 2,
			rewrite: func(kind string, n int64, body []byte) []byte {
				if kind == "turn" && n == 1 {
					return []byte(strings.ReplaceAll(string(body), "CollectPartySize", "Elsewhere"))
				}
				return body
			}},
		{name: "retries run out", retries: 2, want: result.Errored, attempts: 3,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n%2 == 0 && chatTimeout(w)
			}},
		{name: "a failure without retries is final", retries: 0, want: result.Failed, attempts: 1,
			rewrite: func(kind string, n int64, body []byte) []byte {
				return []byte(strings.ReplaceAll(string(body), "ConfirmBooking", "Elsewhere"))
			}},
		{name: "repeat reaches the pass rate", repeat: 5, rate: 0.6, want: result.Passed, attempts: 5,
			rewrite: func(kind string, n int64, body []byte) []byte {
				if kind == "start" && n%2 == 0 {
					return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
				}
				return body
			}},
		{name: "repeat falls short", repeat: 5, rate: 0.8, want: result.Failed, attempts: 5,
			rewrite: func(kind string, n int64, body []byte) []byte {
				if kind == "start" && n%2 == 0 {
					return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
				}
				return body
			}},
		{name: "repeat retries errored runs", repeat: 3, rate: 1, retries: 1, want: result.Passed, attempts: 4,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n == 3 && chatTimeout(w)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// manyFeature is a feature of n booking conversations (one outline row
// each), for the cancellation and scheduling tests.
func manyFeature(n int) []byte {
	var b strings.Builder
	b.WriteString("@agent:restaurant\nFeature: Many\n\n  Scenario Outline: books <i>\n")
	b.WriteString("    When the user says \"I'd like to book a table\"\n    Then the current node is \"CollectPartySize\"\n")
	b.WriteString("    When the user says \"4 people at 7pm\"\n    Then the current node is \"ConfirmBooking\"\n\n    Examples:\n      | i |\n")
	for i := range n {
		fmt.Fprintf(&b, "      | %d |\n", i)
	}
	return []byte(b.String())
}

func TestFeatureCancel(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1, Faults: sim.Faults{Latency: 2 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.proxy.onRequest(func(kind string, n int64, r *http.Request, w http.ResponseWriter) bool {
		if kind == "turn" && n == 30 {
			cancel()
			return hangUp(t, r, w)
		}
		return false
	})
	fsys := fstest.MapFS{
		"a.feature": {Data: manyFeature(40)},
		"b.yaml":    {Data: []byte("suite: b\nagent: restaurant\nscenarios:\n" + strings.Repeat("  - {name: hi, turns: [{say: hi}]}\n", 1))},
	}
	suites, diags := scenario.Load(fsys, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	opts := e.opts()
	opts.DefaultAgent = ""
	rec := newRecorder()
	opts.Observer = rec
	res, err := Run(ctx, suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if !res.Interrupted {
		t.Error("Interrupted not set")
	}
	passed, pending, cut := 0, 0, 0
	for _, c := range res.Files[0].Cases {
		switch c.Status {
		case result.Passed:
			passed++
		case result.Pending:
			pending++
			if c.SkipReason != result.ReasonInterrupted {
				t.Errorf("%s: reason %q", c.Name, c.SkipReason)
			}
			if a := c.Last(); a != nil {
				cut++
				if a.Error == nil || a.Error.Kind != result.KindInterrupted {
					t.Errorf("%s: cut-off attempt not recorded: %s", c.Name, describe(c))
				}
			}
		default:
			t.Errorf("%s: %s%s", c.Name, c.Status, describe(c))
		}
	}
	if passed == 0 || pending < 20 || cut == 0 {
		t.Errorf("passed %d, pending %d (%d cut off in flight)", passed, pending, cut)
	}
}

// TestFeatureFilters: --tags and --name act on feature scenarios as on
// YAML ones; unselected pickles never open a session and are absent from
// the Result. Parallel 1 and 8 give the same facts.
func TestFeatureFilters(t *testing.T) {
	t.Parallel()
	tags, err := scenario.ParseTagExpr("@agent:clinic || @agent:utility-billing")
	if err != nil {
		t.Fatal(err)
	}
	var prev string
	for _, parallel := range []int{1, 8} {
		e := newEnv(t, sim.Options{Seed: 1})
		opts := e.opts()
		opts.DefaultAgent, opts.Parallel = "", parallel
		opts.Select = scenario.Selection{Tags: &tags, Name: regexp.MustCompile(`urgent|hands off`)}
		res, err := Run(context.Background(), loadTestdata(t, "parity/parity.feature"), opts)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range res.Files[0].Cases {
			names = append(names, c.Name)
		}
		want := `hands off a failed bill lookup|puts urgent callers through [symptom="I have chest pain"]|puts urgent callers through [symptom="it's an emergency"]`
		if got := strings.Join(names, "|"); got != want {
			t.Errorf("cases %s, want %s", got, want)
		}
		if n := e.proxy.starts.Load(); n != 3 {
			t.Errorf("%d sessions opened, want 3", n)
		}
		got := allFacts(res.Files[0])
		if prev != "" && got != prev {
			t.Errorf("parallel %d:\n%s\nparallel 1:\n%s", parallel, got, prev)
		}
		prev = got
	}
}

// TestFeatureMultiLineReply: a reply of several lines is checked against a
// DocString, line by line, over real HTTP. The simulator's agents answer
// in one line, so the proxy breaks the first turn's reply into three.
func TestFeatureMultiLineReply(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	const oneLine = `Lovely! How many people will be joining you, and at what time?`
	e.proxy.onResponse(func(kind string, _ int64, body []byte) []byte {
		if kind != "turn" {
			return body
		}
		return bytes.Replace(body, []byte(oneLine), []byte(`Lovely!\nHow many people will be joining you?\nAnd at what time?`), 1)
	})
	src := `@agent:restaurant
Feature: Multi-line replies

  Scenario: the whole reply
    When the user says "I'd like to book a table"
    Then the agent says:
      """
      Lovely!
      How many people will be joining you?
      And at what time?
      """

  Scenario: part of the reply
    When the user says "I'd like to book a table"
    Then the agent's reply contains:
      """
      How many people will be joining you?
      And at what time?
      """

  Scenario: a line missing
    When the user says "I'd like to book a table"
    Then the agent says:
      """
      Lovely!
      And at what time?
      """
`
	suites, diags := scenario.Load(fstest.MapFS{"multi.feature": {Data: []byte(src)}}, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	opts := e.opts()
	opts.DefaultAgent = ""
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	cases := res.Files[0].Cases
	if len(cases) != 3 || cases[0].Status != result.Passed || cases[1].Status != result.Passed || cases[2].Status != result.Failed {
		t.Fatalf("cases:\n%s", allFacts(res.Files[0]))
	}
	f := cases[2].Last().Failures
	// The failure points at the step and shows the line the DocString
	// lacks.
	want := "--- expected\n+++ actual\n  Lovely!\n+ How many people will be joining you?\n  And at what time?"
	if len(f) != 1 || f[0].Pos.Line != 23 || f[0].Step != "Then the agent says:" || f[0].Diff != want {
		t.Errorf("failures %+v, want one at line 23 with the diff\n%s", f, want)
	}
}

// A say written as a feature's DocString or a YAML block scalar that
// refers to an unset ${env:NAME} errors the case at the text's first line,
// where the reference is written: before, at the step (the feature's
// keyword, the YAML turn), lines above it. A check's state key that does
// errors at its step, and a start parameter at the scenario's start:.
// Every attempt would meet the same problem, so none
// is retried.
func TestUnsetEnvInMultiLineSay(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"s.feature": {Data: []byte("@agent:restaurant\nFeature: f\n  Scenario: doc\n    When the user says:\n      \"\"\"\n      hello ${env:AGENTTEST_UNSET_IN_TEST}\n      \"\"\"\n    Then the agent's reply contains \"Welcome\"\n")},
		"s.yaml":    {Data: []byte("agent: restaurant\nscenarios:\n  - name: block\n    turns:\n      - say: |\n          hello\n          ${env:AGENTTEST_UNSET_IN_TEST}\n        expect: {response: {contains: Welcome}}\n")},
		"t.yaml":    {Data: []byte("agent: restaurant\nscenarios:\n  - name: start\n    start: {asr_lang: \"${env:AGENTTEST_UNSET_IN_TEST}\"}\n    turns:\n      - say: hello\n")},
		"c.feature": {Data: []byte("@agent:restaurant\nFeature: f\n  Scenario: check\n    When the user says \"hello\"\n    Then the state \"${env:AGENTTEST_UNSET_IN_TEST}\" is \"4\"\n")},
		// In an expected value or a capture's pattern it is no verdict on
		// the agent either: not a failure (exit 1) retried twice.
		"m.feature": {Data: []byte("@agent:restaurant\nFeature: f\n  Scenario: matcher\n    When the user says \"hello\"\n    Then the agent's reply contains \"${env:AGENTTEST_UNSET_IN_TEST}\"\n")},
		"m.yaml":    {Data: []byte("agent: restaurant\nscenarios:\n  - name: matcher\n    turns:\n      - say: hello\n        expect: {trace: {includes: [Start]}, response: {contains: \"${env:AGENTTEST_UNSET_IN_TEST}\"}}\n")},
		"r.feature": {Data: []byte("@agent:restaurant\nFeature: f\n  Scenario: capture\n    When the user says \"hello\"\n    Then I remember \"ref\" from the reply matching \"${env:AGENTTEST_UNSET_IN_TEST}(.)\"\n")},
		// In an item of a node-trace list, at the item (its row).
		"n.feature": {Data: []byte("@agent:restaurant\nFeature: f\n  Scenario: trace\n    When the user says \"hello\"\n    Then the node trace passes through:\n      | Start |\n      | ${env:AGENTTEST_UNSET_IN_TEST} |\n")},
		"n.yaml":    {Data: []byte("agent: restaurant\nscenarios:\n  - name: trace\n    turns:\n      - say: hello\n        expect: {trace: {includes: [Start, \"${env:AGENTTEST_UNSET_IN_TEST}\"]}}\n")},
	}
	suites, diags := scenario.Load(fsys, []string{"s.feature", "s.yaml", "c.feature", "t.yaml", "m.feature", "m.yaml", "r.feature", "n.feature", "n.yaml"})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	opts := newEnv(t, sim.Options{Seed: 1}).opts()
	opts.Getenv = func(string) (string, bool) { return "", false }
	// Every attempt would meet it: none is retried.
	opts.Retries = 2
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s.feature": "s.feature:6:7", "s.yaml": "s.yaml:6:11", "c.feature": "c.feature:5:5", "t.yaml": "t.yaml:4:5",
		"m.feature": "m.feature:5:5", "m.yaml": "m.yaml:6:46", "r.feature": "r.feature:5:5", "n.feature": "n.feature:7:9", "n.yaml": "n.yaml:6:44"}
	for _, f := range res.Files {
		c := f.Cases[0]
		a := c.Last()
		if c.Status != result.Errored || len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindConfig ||
			a.Error.Pos.String() != want[f.Path] || !strings.Contains(a.Error.Message, "AGENTTEST_UNSET_IN_TEST is not set") {
			t.Errorf("%s: %s, error %+v; want a config error at %s%s", f.Path, c.Status, a.Error, want[f.Path], describe(c))
		}
	}
}
