package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/result"
)

// The structs below read a JUnit file independently of the types that
// wrote it, the way a CI server would.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []xSuite `xml:"testsuite"`
}

// junitOf writes r's JUnit report and decodes it.
func junitOf(t *testing.T, r *result.Result) xSuites {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc xSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

type xSuite struct {
	Name     string  `xml:"name,attr"`
	File     string  `xml:"file,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Time     string  `xml:"time,attr"`
	Cases    []xCase `xml:"testcase"`
}

type xCase struct {
	Name       string   `xml:"name,attr"`
	Classname  string   `xml:"classname,attr"`
	File       string   `xml:"file,attr"`
	Line       int      `xml:"line,attr"`
	Time       string   `xml:"time,attr"`
	Properties []xProp  `xml:"properties>property"`
	Failure    *xResult `xml:"failure"`
	Error      *xResult `xml:"error"`
	Skipped    *xResult `xml:"skipped"`
	Flaky      []xFlaky `xml:"flakyFailure"`
	FlakyError []xFlaky `xml:"flakyError"`
	SystemOut  string   `xml:"system-out"`
}

type xProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xResult struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

type xFlaky struct {
	Message    string `xml:"message,attr"`
	Type       string `xml:"type,attr"`
	StackTrace string `xml:"stackTrace"`
	SystemOut  string `xml:"system-out"`
}

func writeFixtureJUnit(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJUnit(&b, fixture()); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestJUnitParses(t *testing.T) {
	out := writeFixtureJUnit(t)
	if !bytes.HasPrefix(out, []byte(xml.Header)) {
		t.Errorf("report does not start with the XML header")
	}
	for _, bad := range []string{"\x1b", "\x00"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("report holds %q, which XML cannot carry", bad)
		}
	}
	var doc xSuites
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("report is not valid XML: %v", err)
	}

	if doc.Tests != 14 || doc.Failures != 4 || doc.Errors != 1 || doc.Skipped != 3 || doc.Time != "3.210" {
		t.Errorf("totals = tests %d failures %d errors %d skipped %d time %s; want 14 4 1 3 3.210",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, doc.Time)
	}
	var names []string
	for _, s := range doc.Suites {
		names = append(names, s.Name)
	}
	if got, want := strings.Join(names, "|"), `restaurant|special <chars> & "quotes"|Handoff|billing|checks`; got != want {
		t.Errorf("suites = %s, want %s (r.Files order, checks last)", got, want)
	}
	rest := doc.Suites[0]
	if rest.File != "suites/restaurant.yaml" || rest.Tests != 5 || rest.Failures != 2 || rest.Errors != 1 || rest.Time != "36.600" {
		t.Errorf("restaurant suite = %+v", rest)
	}

	byName := map[string]xCase{}
	for _, s := range doc.Suites {
		sum := 0
		for _, c := range s.Cases {
			byName[c.Name] = c
			if c.Failure != nil {
				sum++
			}
		}
		if sum != s.Failures {
			t.Errorf("suite %s says %d failures, has %d", s.Name, s.Failures, sum)
		}
	}

	type want struct {
		name       string
		failure    string // type of <failure>, "" for none
		errType    string // type of <error>
		skipped    string // message of <skipped>
		flaky      int
		bodyHas    []string
		systemOut  []string
		properties map[string]string
	}
	cases := []want{
		{name: "books a table for four",
			systemOut:  []string{"conversationId: conv-001\n", "> A table for four tonight, please", "state: +party_size=4"},
			properties: map[string]string{"conversationId": "conv-001", "agent": "luigi", "env": "sandbox", "attempts": "1"}},
		{name: "asks for the party size", failure: "assertion",
			bodyHas:    []string{"suites/restaurant.yaml:37:11: turn 2: reply does not match", "[-how many people-]{+what time+}", "state key party_size is missing"},
			properties: map[string]string{"variant": "formal"}},
		{name: "lists the menu", failure: "assertion", bodyHas: []string{"- - risotto\n", "+ - lasagne\n"}},
		{name: "greets in Italian", flaky: 1, systemOut: []string{"attempts: 2", "Benvenuti da Luigi!"}},
		{name: "answers opening hours", errType: "timeout", bodyHas: []string{"attempt 3 of 3", "no reply within 10s", "(no reply)"}},
		{name: "emoji 🍕 & <tags> \"quoted\" ]]> end", failure: "assertion", bodyHas: []string{"]]> and 🍕", `\x00`}},
		{name: "orders gluten-free", skipped: "skip: waiting for BUG-12\\a"},
		{name: "orders <dish> (dish=pizza)"},
		{name: "recommends a wine", failure: "assertion", bodyHas: []string{"2 of 3 runs passed (67%), 80% required", "runs: ✓✗✓", "run 2 of 3 failed:", "> Which wine with pizza?"}},
		{name: "hands off to a human", systemOut: []string{"handoff → reception", "conversation ended", "~a: 1 → 2", "-gone"}},
		{name: "complains about the bill", skipped: "not run: run interrupted"},
	}
	for _, w := range cases {
		c, ok := byName[w.name]
		if !ok {
			t.Errorf("no testcase %q", w.name)
			continue
		}
		if got := resultType(c.Failure); got != w.failure {
			t.Errorf("%s: failure type %q, want %q", w.name, got, w.failure)
		}
		if got := resultType(c.Error); got != w.errType {
			t.Errorf("%s: error type %q, want %q", w.name, got, w.errType)
		}
		if w.skipped == "" && c.Skipped != nil || w.skipped != "" && (c.Skipped == nil || c.Skipped.Message != w.skipped) {
			t.Errorf("%s: skipped = %+v, want message %q", w.name, c.Skipped, w.skipped)
		}
		if len(c.Flaky) != w.flaky {
			t.Errorf("%s: %d flakyFailure, want %d", w.name, len(c.Flaky), w.flaky)
		}
		body := ""
		if c.Failure != nil {
			body = c.Failure.Body
		} else if c.Error != nil {
			body = c.Error.Body
		}
		for _, s := range w.bodyHas {
			if !strings.Contains(body, s) {
				t.Errorf("%s: body lacks %q:\n%s", w.name, s, body)
			}
		}
		for _, s := range w.systemOut {
			if !strings.Contains(c.SystemOut, s) {
				t.Errorf("%s: system-out lacks %q:\n%s", w.name, s, c.SystemOut)
			}
		}
		props := map[string]string{}
		for _, p := range c.Properties {
			props[p.Name] = p.Value
		}
		for k, v := range w.properties {
			if props[k] != v {
				t.Errorf("%s: property %s = %q, want %q", w.name, k, props[k], v)
			}
		}
		if c.Classname != c.File || c.Line == 0 {
			t.Errorf("%s: classname %q file %q line %d", w.name, c.Classname, c.File, c.Line)
		}
	}

	fl := byName["greets in Italian"]
	if len(fl.Flaky) == 1 {
		f := fl.Flaky[0]
		if f.Type != "assertion" || !strings.Contains(f.Message, "62:16") ||
			!strings.Contains(f.StackTrace, `contains "Benvenuti"`) || !strings.Contains(f.SystemOut, "conv-004") {
			t.Errorf("flakyFailure = %+v", f)
		}
	}
	if fl.Failure != nil || fl.Error != nil {
		t.Errorf("flaky case is not passing: %+v", fl)
	}
	// Surefire's schema wants properties first and system-out last.
	if got := strings.Join(childOrder(t, out, "greets in Italian"), ","); got != "properties,flakyFailure,system-out" {
		t.Errorf("flaky testcase children = %s", got)
	}
	if strings.Contains(byName["emoji 🍕 & <tags> \"quoted\" ]]> end"].Failure.Body, "\uFFFD[31m") {
		t.Errorf("ANSI escape left a [31m behind")
	}
}

// childOrder lists the child elements of the named testcase, in order.
func childOrder(t *testing.T, doc []byte, name string) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var order []string
	depth, inCase := 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			return order
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			if tok.Name.Local == "testcase" {
				for _, a := range tok.Attr {
					if a.Name.Local == "name" && a.Value == name {
						inCase = true
						depth = 0
					}
				}
				continue
			}
			if inCase && depth == 1 {
				order = append(order, tok.Name.Local)
			}
		case xml.EndElement:
			if inCase && depth == 0 {
				return order
			}
			depth--
		}
	}
}

func resultType(r *xResult) string {
	if r == nil {
		return ""
	}
	return r.Type
}

// TestJUnitXMLLint checks the report with xmllint, when it is installed.
func TestJUnitXMLLint(t *testing.T) {
	lint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed")
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, writeFixtureJUnit(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(lint, "--noout", path).CombinedOutput(); err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
}

func TestXMLText(t *testing.T) {
	type testCase struct {
		in, want string
	}
	run := func(t *testing.T, tc testCase) {
		if got := xmlText(tc.in); got != tc.want {
			t.Errorf("xmlText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for name, tc := range map[string]testCase{
		"plain":       {"hello", "hello"},
		"ansi colour": {"\x1b[1;31mred\x1b[0m", "red"},
		"osc link":    {"\x1b]8;;http://x\x07link\x1b]8;;\x07", "link"},
		"nul":         {"a\x00b", "a\uFFFDb"},
		"lone esc":    {"a\x1b", "a\uFFFD"},
		"bad utf8":    {"a\xffb", "a\uFFFDb"},
		"keeps tabs":  {"a\tb\r\nc", "a\tb\r\nc"},
		"emoji":       {"🍕", "🍕"},
		"fffe":        {"a\uFFFEb", "a\uFFFDb"},
		// The ends of XML's Char ranges are characters.
		"range ends": {"\uD7FF\uE000\uFFFD\U00010000\U0010FFFF", "\uD7FF\uE000\uFFFD\U00010000\U0010FFFF"},
	} {
		t.Run(name, func(t *testing.T) { run(t, tc) })
	}
}

// TestJUnitRunProperties: <testsuites> carries the run's status, the
// deployment evidence of each agent whose deployment was read, and, after
// a stop, the reason of the cases it left unrun, which those cases carry
// as their skip message, and the error that caused it, which no testcase
// shows.
func TestJUnitRunProperties(t *testing.T) {
	res := &result.Result{
		Files: []*result.File{{Path: "a.yaml", Suite: "a", Cases: []*result.Case{
			{Name: "first", Status: result.Errored, Attempts: []*result.Attempt{{Number: 1, Status: result.Errored,
				Error: &result.Error{Kind: result.KindNetwork, Message: "connection refused"}}}},
			{Name: "second", Status: result.Skipped, SkipReason: result.ReasonUnreachable},
		}}},
		Stop: &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: "127.0.0.1:9",
			Cause: "dial tcp 127.0.0.1:9: connection refused"},
		// A deployment that could not be read leaves no evidence, and
		// takes none from the agents after it.
		Deployments: []*result.Deployment{{Agent: "clinic", Env: "live", Note: "read failed"}, {Agent: "luigi", Env: "sandbox", ID: "dep-7"}},
	}
	var b bytes.Buffer
	if err := WriteJUnit(&b, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b.String())
	}
	props := map[string]string{}
	for _, p := range doc.Properties {
		props[p.Name] = p.Value
	}
	want := map[string]string{PropertyStatus: "errored", PropertyStopped: result.ReasonUnreachable,
		PropertyStatusReason: "no check failed, but 1 case errored: the platform or the network kept the run from telling whether the agent is fine",
		PropertyStopCause:    "dial tcp 127.0.0.1:9: connection refused", "deployment.luigi.sandbox": "dep-7",
		// Neither deployment vouches for the run: the one never read
		// has no property of its own, and the other's id is no evidence
		// unless it was read again after the agent's last case.
		PropertyDeploymentUnconfirmed: "no deployment evidence of clinic in live: read failed; deployment of luigi in sandbox not confirmed after its last case: not read again"}
	if !maps.Equal(props, want) {
		t.Errorf("testsuites properties\n got %v\nwant %v", props, want)
	}
	if c := doc.Suites[0].Cases[1]; c.Skipped == nil || c.Skipped.Message != result.ReasonUnreachable {
		t.Errorf("the case not run is not skipped with the reason: %+v", c)
	}
}

// The counts the JUnit schema of CI servers declares are written even
// when zero (Jenkins' junit-10.xsd: tests, failures and errors on
// <testsuites>; tests, failures, errors and skipped on <testsuite>, the
// first three required), and nothing else is counted on <testsuites>
// but skipped, when cases were skipped. Before, a passing run's
// <testsuites> had no failures or errors, and a <testsuite> without
// skipped cases no skipped.
func TestJUnitCounts(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		r    *result.Result
		// want are the count attributes of <testsuites>, then of each
		// <testsuite>.
		want []string
	}
	passing := &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim", Embedded: true},
		Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
			{Name: "greets", Pos: pos("suites/a.yaml", 3, 5), Status: result.Passed, Duration: time.Second},
		}}}}
	for _, tc := range []testCase{
		{name: "passing run", r: passing, want: []string{
			`tests="1" failures="0" errors="0"`,
			`tests="1" failures="0" errors="0" skipped="0"`}},
		{name: "empty run", r: &result.Result{Started: t0, Target: result.Target{Name: "sim"}}, want: []string{
			`tests="0" failures="0" errors="0"`}},
		// The run's own errors are <error> testcases of a suite "run":
		// without them a CI server's test view, which shows the counts,
		// is all green for a run whose deployment changed, and all
		// skipped for one stopped before its first case errored.
		{name: "deployment changed", r: func() *result.Result {
			r := *passing
			r.Deployments = []*result.Deployment{{Agent: "clinic", Env: "sandbox", ID: "dep-1", After: "dep-2"}}
			return &r
		}(), want: []string{
			`tests="2" failures="0" errors="1"`,
			`tests="1" failures="0" errors="0" skipped="0"`,
			`tests="1" failures="0" errors="1" skipped="0"`}},
		{name: "stopped before any case errored", r: &result.Result{Started: t0, Target: result.Target{Name: "sim"},
			Stop: &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials, Cause: "401 from GET /v1/agents/{agentId}/deployments/active"},
			Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
				{Name: "greets", Status: result.Skipped, SkipReason: result.ReasonCredentials}}}}}, want: []string{
			`tests="2" failures="0" errors="1" skipped="1"`,
			`tests="1" failures="0" errors="0" skipped="1"`,
			`tests="1" failures="0" errors="1" skipped="0"`}},
		{name: "stopped on a case's error", r: &result.Result{Started: t0, Target: result.Target{Name: "sim"},
			Stop: &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Cause: "connection refused"},
			Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
				{Name: "errs", Status: result.Errored, Attempts: []*result.Attempt{{Number: 1, Status: result.Errored,
					Error: &result.Error{Kind: result.KindNetwork, Message: "connection refused"}}}},
				{Name: "greets", Status: result.Skipped, SkipReason: result.ReasonUnreachable}}}}}, want: []string{
			`tests="2" failures="0" errors="1" skipped="1"`,
			`tests="2" failures="0" errors="1" skipped="1"`}},
		{name: "stopped on a quarantined case's error", r: &result.Result{Started: t0, Target: result.Target{Name: "sim"},
			Stop: &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Cause: "connection refused"},
			Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
				{Name: "errs", Status: result.Errored, Quarantine: &result.Quarantine{Reason: "BUG-8", Until: "2099-01-01"}}}}}}, want: []string{
			`tests="2" failures="0" errors="1" skipped="1"`,
			`tests="1" failures="0" errors="0" skipped="1"`,
			`tests="1" failures="0" errors="1" skipped="0"`}},
		{name: "fail-fast stop", r: &result.Result{Started: t0, Target: result.Target{Name: "sim"},
			Stop: &result.Stop{Kind: result.StopFailFast, Reason: result.ReasonFailFast},
			Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
				{Name: "fails", Status: result.Failed},
				{Name: "greets", Status: result.Skipped, SkipReason: result.ReasonFailFast}}}}}, want: []string{
			`tests="2" failures="1" errors="0" skipped="1"`,
			`tests="2" failures="1" errors="0" skipped="1"`}},
		{name: "fixture", r: fixture(), want: []string{
			`tests="14" failures="4" errors="1" skipped="3"`,
			`tests="5" failures="2" errors="1" skipped="0"`,
			`tests="5" failures="2" errors="0" skipped="1"`,
			`tests="2" failures="0" errors="0" skipped="1"`,
			`tests="1" failures="0" errors="0" skipped="1"`,
			`tests="1" failures="0" errors="0" skipped="0"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := WriteJUnit(&b, tc.r); err != nil {
				t.Fatal(err)
			}
			var got []string
			dec := xml.NewDecoder(&b)
			for {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				el, ok := tok.(xml.StartElement)
				if !ok || (el.Name.Local != "testsuites" && el.Name.Local != "testsuite") {
					continue
				}
				var counts []string
				for _, a := range el.Attr {
					if slices.Contains([]string{"tests", "failures", "errors", "skipped", "disabled"}, a.Name.Local) {
						counts = append(counts, fmt.Sprintf("%s=%q", a.Name.Local, a.Value))
					}
				}
				got = append(got, strings.Join(counts, " "))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("counts:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestJUnitServerIDs: the conversation id is the server's choice, and
// the testcase's properties are also the "name: value" lines that open
// its <system-out> (and a flaky attempt's). An id holding a newline wrote
// lines of its own there ("attempts: 99" before the real attempts); it
// is written flat, as the console writes it.
func TestJUnitServerIDs(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, id, want string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		attempt := func(n int, s result.Status) *result.Attempt {
			a := &result.Attempt{Number: n, Status: s, ConversationID: tc.id, Started: t0}
			if s == result.Failed {
				a.Failures = []assert.Failure{failure(pos("a.yaml", 6, 9), "response", "reply does not match", "hi", "ho", "")}
			}
			return a
		}
		r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
			Cases: []*result.Case{{Name: "greets", Pos: pos("a.yaml", 3, 5), Status: result.Flaky, Agent: "luigi",
				Attempts: []*result.Attempt{attempt(1, result.Failed), attempt(2, result.Passed)}}}}}}
		doc := junitOf(t, r)
		c := doc.Suites[0].Cases[0]
		if c.Properties[0].Name != "conversationId" || c.Properties[0].Value != tc.want {
			t.Errorf("property %+v, want conversationId %q", c.Properties[0], tc.want)
		}
		wantOut := "conversationId: " + tc.want + "\nagent: luigi\nattempts: 2\n"
		if !strings.HasPrefix(c.SystemOut, wantOut) {
			t.Errorf("system-out opens\n%q\nwant\n%q", c.SystemOut, wantOut)
		}
		if len(c.Flaky) != 1 || !strings.HasPrefix(c.Flaky[0].SystemOut, "conversationId: "+tc.want+"\nattempt: 1 of 2\n") {
			t.Errorf("flakyFailure %+v", c.Flaky)
		}
	}
	for _, tc := range []testCase{
		{name: "plain", id: "conv-001", want: "conv-001"},
		{name: "newline", id: "conv-001\nattempts: 99", want: `conv-001\nattempts: 99`},
		{name: "carriage return and bidi", id: "conv\r\u202eevil", want: `conv\r\u202eevil`},
		{name: "escape sequence", id: "\x1b[31mconv\x1b[0m", want: "conv"},
		{name: "C1 and NUL", id: "conv\u0085\x00", want: `conv\u0085\x00`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestJUnitElementPerStatus: every status, quarantined or not, becomes
// the element a CI server counts it by, and each <testsuite>'s counts are
// the elements its testcases hold, as CI servers recount them. A
// quarantine that holds turns only a failure or an error into
// <skipped>; a quarantined case that passed stays a pass, and a lapsed
// quarantine gates again. An errored case with no recorded cause, or
// none of its kind, is an <error type="internal">.
func TestJUnitElementPerStatus(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name       string
		status     result.Status
		quarantine *result.Quarantine
		attempts   []*result.Attempt
		// want is the element of the testcase ("" for none), then its
		// type or message.
		want, detail string
	}
	holds := &result.Quarantine{Reason: "rewritten", Until: "2026-12-31"}
	lapsed := &result.Quarantine{Reason: "rewritten", Until: "2026-03-01", Lapsed: true}
	failed := func() []*result.Attempt {
		return []*result.Attempt{{Number: 1, Status: result.Failed, Started: t0,
			Failures: []assert.Failure{failure(pos("a.yaml", 6, 9), "response", "reply does not match", "hi", "ho", "")}}}
	}
	errored := func(e *result.Error) []*result.Attempt {
		return []*result.Attempt{{Number: 1, Status: result.Errored, Started: t0, Error: e}}
	}
	timeout := &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}
	cases := []testCase{
		{name: "passed", status: result.Passed},
		{name: "flaky", status: result.Flaky},
		{name: "failed", status: result.Failed, attempts: failed(), want: "failure", detail: "assertion"},
		{name: "failed without a recorded failure", status: result.Failed, attempts: []*result.Attempt{{Number: 1, Status: result.Failed}},
			want: "failure", detail: "assertion"},
		{name: "failed before any attempt", status: result.Failed, want: "failure", detail: "assertion"},
		{name: "errored", status: result.Errored, attempts: errored(timeout), want: "error", detail: "timeout"},
		{name: "errored without a cause", status: result.Errored, attempts: errored(nil), want: "error", detail: "internal"},
		{name: "errored without a kind", status: result.Errored, attempts: errored(&result.Error{Message: "broke"}), want: "error", detail: "internal"},
		{name: "errored before any attempt", status: result.Errored, want: "error", detail: "internal"},
		{name: "skipped", status: result.Skipped, want: "skipped"},
		{name: "pending", status: result.Pending, want: "skipped"},
		{name: "quarantined passed", status: result.Passed, quarantine: holds},
		{name: "quarantined flaky", status: result.Flaky, quarantine: holds},
		{name: "quarantined failed", status: result.Failed, quarantine: holds, attempts: failed(), want: "skipped",
			detail: "quarantined until 2026-12-31 (failed, not gating): rewritten"},
		{name: "quarantined errored", status: result.Errored, quarantine: holds, attempts: errored(timeout), want: "skipped",
			detail: "quarantined until 2026-12-31 (errored, not gating): rewritten"},
		{name: "quarantined skipped", status: result.Skipped, quarantine: holds, want: "skipped"},
		{name: "lapsed failed", status: result.Failed, quarantine: lapsed, attempts: failed(), want: "failure", detail: "assertion"},
		{name: "lapsed errored", status: result.Errored, quarantine: lapsed, attempts: errored(timeout), want: "error", detail: "timeout"},
	}
	var cs []*result.Case
	for i, tc := range cases {
		cs = append(cs, &result.Case{Name: tc.name, Pos: pos("a.yaml", 3+10*i, 5), Status: tc.status, Quarantine: tc.quarantine, Attempts: tc.attempts})
	}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a", Cases: cs}},
		Checks: []*result.Case{{Name: "no alerts firing", Status: result.Failed, Attempts: failed()}}}
	doc := junitOf(t, r)
	got := map[string]xCase{}
	for _, c := range doc.Suites[0].Cases {
		got[c.Name] = c
	}
	for _, tc := range cases {
		c, ok := got[tc.name]
		if !ok {
			t.Errorf("no testcase %q", tc.name)
			continue
		}
		el, detail := junitElement(c)
		if el != tc.want || detail != tc.detail && tc.detail != "" {
			t.Errorf("%s: <%s> %q, want <%s> %q", tc.name, el, detail, tc.want, tc.detail)
		}
	}
	for name, fx := range map[string]func() *result.Result{"element per status": func() *result.Result { return r },
		"full": fixture, "messaging": messagingFixture, "stats": statsFixture, "deployments": deploymentsFixture} {
		checkJUnitCounts(t, name, junitOf(t, fx()))
	}
}

// junitElement is the one outcome element of a testcase ("" for a pass)
// and its type (<failure>, <error>) or message (<skipped>).
func junitElement(c xCase) (string, string) {
	var els []string
	var detail string
	if c.Failure != nil {
		els, detail = append(els, "failure"), c.Failure.Type
	}
	if c.Error != nil {
		els, detail = append(els, "error"), c.Error.Type
	}
	if c.Skipped != nil {
		els, detail = append(els, "skipped"), c.Skipped.Message
	}
	return strings.Join(els, "+"), detail
}

// checkJUnitCounts recounts a report as a CI server does: each suite's
// counts are its testcases' elements, and the totals their sums.
func checkJUnitCounts(t *testing.T, name string, doc xSuites) {
	t.Helper()
	var sum xSuites
	for _, s := range doc.Suites {
		n := xSuite{Tests: len(s.Cases)}
		for _, c := range s.Cases {
			switch el, _ := junitElement(c); el {
			case "failure":
				n.Failures++
			case "error":
				n.Errors++
			case "skipped":
				n.Skipped++
			case "":
			default:
				t.Errorf("%s: testcase %q holds <%s>, one at most", name, c.Name, el)
			}
		}
		if s.Tests != n.Tests || s.Failures != n.Failures || s.Errors != n.Errors || s.Skipped != n.Skipped {
			t.Errorf("%s: suite %s counts tests %d failures %d errors %d skipped %d; its testcases %d %d %d %d",
				name, s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, n.Tests, n.Failures, n.Errors, n.Skipped)
		}
		sum.Tests, sum.Failures, sum.Errors, sum.Skipped = sum.Tests+n.Tests, sum.Failures+n.Failures, sum.Errors+n.Errors, sum.Skipped+n.Skipped
	}
	if doc.Tests != sum.Tests || doc.Failures != sum.Failures || doc.Errors != sum.Errors || doc.Skipped != sum.Skipped {
		t.Errorf("%s: totals tests %d failures %d errors %d skipped %d; the suites' %d %d %d %d",
			name, doc.Tests, doc.Failures, doc.Errors, doc.Skipped, sum.Tests, sum.Failures, sum.Errors, sum.Skipped)
	}
}

// TestJUnitFlakyErrorSaysWhoseFault: a <flakyError>'s message ends with
// whose fault it is, as an <error>'s does: a reader that shows a flaky
// case's earlier attempts must not take the platform's timeout for the
// agent's broken expectation.
func TestJUnitFlakyErrorSaysWhoseFault(t *testing.T) {
	t.Parallel()
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
		Cases: []*result.Case{{Name: "books", Pos: pos("a.yaml", 3, 5), Status: result.Flaky, Attempts: []*result.Attempt{
			{Number: 1, Status: result.Errored, Started: t0, Error: &result.Error{Pos: pos("a.yaml", 5, 3), Kind: result.KindTimeout, Message: "turn 1: no reply within 30s"}},
			{Number: 2, Status: result.Passed, ConversationID: "conv-2", Started: t0},
		}}}}}}
	c := junitOf(t, r).Suites[0].Cases[0]
	if len(c.FlakyError) != 1 {
		t.Fatalf("%d flakyError, want 1", len(c.FlakyError))
	}
	f := c.FlakyError[0]
	if !strings.Contains(f.Message, "no reply within 30s") || !strings.HasSuffix(f.Message, "(errored, not failed: the platform broke, not the agent; nothing was learnt about the agent)") || f.Type != result.KindTimeout {
		t.Errorf("flakyError message %q, type %q", f.Message, f.Type)
	}
}

// TestJUnitFlakyTranscript: the <flakyFailure> of an earlier attempt
// holds that attempt's whole transcript, up to the turn that broke, and
// the broken expectation with its diff.
func TestJUnitFlakyTranscript(t *testing.T) {
	t.Parallel()
	turns := func(conv, last string) []*result.Turn {
		return []*result.Turn{
			exchange{index: 0, pos: pos("a.yaml", 4, 3), text: "Welcome!", conv: conv, started: t0}.turn(),
			exchange{index: 1, pos: pos("a.yaml", 5, 3), say: "a table", text: "For how many?", conv: conv, started: t0}.turn(),
			exchange{index: 2, pos: pos("a.yaml", 7, 3), say: "four", text: last, conv: conv, started: t0}.turn(),
		}
	}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
		Cases: []*result.Case{{Name: "books", Pos: pos("a.yaml", 3, 5), Status: result.Flaky, Attempts: []*result.Attempt{
			{Number: 1, Status: result.Failed, ConversationID: "conv-1", Started: t0, Turns: turns("conv-1", "Booked for five."),
				Failures: []assert.Failure{failure(pos("a.yaml", 8, 9), "response", "reply does not match", "Booked for four.", "Booked for five.",
					"Booked for [-four-]{+five+}.")}},
			{Number: 2, Status: result.Passed, ConversationID: "conv-2", Started: t0, Turns: turns("conv-2", "Booked for four.")},
		}}}}}}
	c := junitOf(t, r).Suites[0].Cases[0]
	if len(c.Flaky) != 1 {
		t.Fatalf("%d flakyFailure, want 1", len(c.Flaky))
	}
	f := c.Flaky[0]
	for _, want := range []string{"> four", "< Booked for five."} {
		if !strings.Contains(f.SystemOut, want) {
			t.Errorf("flakyFailure system-out lacks %q:\n%s", want, f.SystemOut)
		}
	}
	if !strings.Contains(f.StackTrace, "a.yaml:8:9") || !strings.Contains(f.StackTrace, "Booked for [-four-]{+five+}.") {
		t.Errorf("flakyFailure stackTrace lacks the failure and its diff:\n%s", f.StackTrace)
	}
	if !strings.HasPrefix(f.SystemOut, "conversationId: conv-1\nattempt: 1 of 2\n") {
		t.Errorf("flakyFailure system-out opens\n%s", f.SystemOut)
	}
	// An attempt that broke before the platform named a conversation has
	// no conversationId line.
	a := r.Files[0].Cases[0].Attempts[0]
	a.ConversationID, a.Turns = "", nil
	if f := junitOf(t, r).Suites[0].Cases[0].Flaky[0]; f.SystemOut != "attempt: 1 of 2\n" {
		t.Errorf("flakyFailure of an attempt without a conversation: system-out %q", f.SystemOut)
	}
}

// TestJUnitControlText: every text of the JUnit report that a suite, a
// config or a server chose (suite and scenario names, the path, a skip
// or quarantine reason, the target, a deployment id) is written with its
// controls and invisible characters escaped, as the console and the HTML
// report write them: a CI server shows these attributes as they are, and
// a bidi override or a zero-width space in them would reorder or hide
// text. Before, the names, the skip and quarantine messages and
// properties, the target, the run's stop and deployment properties and
// an error's kind were raw (a testcase's deployment property was already
// escaped).
func TestJUnitControlText(t *testing.T) {
	t.Parallel()
	const evil = "a\x1b[2Jb\rc\u202ed\x00e\u200bf\u0085g"
	erroredBy := func(n int, kind string) *result.Attempt {
		return &result.Attempt{Number: n, Status: result.Errored, Started: t0, Error: &result.Error{Kind: kind, Message: "no reply"}}
	}
	failed := &result.Attempt{Number: 1, Status: result.Failed, Started: t0,
		Failures: []assert.Failure{failure(pos("s"+evil+".yaml", 6, 9), "response", "reply does not match", "hi", "ho", "")}}
	r := &result.Result{Started: t0,
		Target:      result.Target{Name: evil, Env: evil, BuildURL: evil},
		Deployments: []*result.Deployment{{Agent: evil, Env: evil, ID: evil, After: evil + "2"}},
		Files: []*result.File{{Path: "s" + evil + ".yaml", Suite: evil, Cases: []*result.Case{
			{Name: evil, Pos: pos("s"+evil+".yaml", 3, 5), Status: result.Skipped, SkipReason: evil},
			{Name: evil + "2", Pos: pos("s"+evil+".yaml", 5, 5), Status: result.Failed, Agent: evil, Env: evil,
				Quarantine: &result.Quarantine{Reason: evil, Owner: evil, Until: evil}, Attempts: []*result.Attempt{failed}},
			// A report merge reads back may name any kind of error.
			{Name: "errored", Pos: pos("s.yaml", 7, 5), Status: result.Errored, Attempts: []*result.Attempt{erroredBy(1, evil)}},
			{Name: "flaky", Pos: pos("s.yaml", 9, 5), Status: result.Flaky,
				Attempts: []*result.Attempt{erroredBy(1, evil), {Number: 2, Status: result.Passed, Started: t0}}},
		}}},
		Stop: &result.Stop{Kind: result.StopUnreachable, Reason: evil, Cause: evil}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<property name="stop_cause" value="ab\rc`) {
		t.Errorf("the run's stop cause is not written:\n%s", b.String())
	}
	raw := func(s string) bool {
		return strings.ContainsFunc(s, func(c rune) bool { return c != '\n' && c != '\t' && escape.Needed(string(c), "") })
	}
	dec := xml.NewDecoder(&b)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				if raw(a.Value) || strings.Contains(a.Value, "\n") {
					t.Errorf("<%s %s> holds a raw control: %q", tok.Name.Local, a.Name.Local, a.Value)
				}
			}
		case xml.CharData:
			if raw(string(tok)) {
				t.Errorf("text holds a raw control: %q", tok)
			}
		}
	}
}

// TestJUnitTranscriptOnceInBody: system-out does not repeat a transcript
// the <failure> body holds whole (Jenkins shows both, one under the
// other; GitLab joins them); it keeps the whole one when the body's was
// cut at the turn that broke and later turns were sent.
func TestJUnitTranscriptOnceInBody(t *testing.T) {
	t.Parallel()
	turns := []*result.Turn{
		exchange{index: 0, pos: pos("a.yaml", 4, 3), text: "Welcome!", conv: "conv-1", started: t0}.turn(),
		exchange{index: 1, pos: pos("a.yaml", 5, 3), say: "a table", text: "For how many?", conv: "conv-1", started: t0}.turn(),
		exchange{index: 2, pos: pos("a.yaml", 7, 3), say: "four", text: "Booked for five.", conv: "conv-1", started: t0}.turn(),
	}
	for _, tc := range []struct {
		name    string
		at      diag.Pos      // the failure's
		err     *result.Error // instead of a failure
		bodyHas []string
		outHas  []string // in system-out's transcript; none when nil
	}{
		{name: "broke at the last turn", at: pos("a.yaml", 8, 9), bodyHas: []string{"> four"}},
		{name: "broke before the last turn", at: pos("a.yaml", 6, 9), outHas: []string{"> a table", "> four", "< Booked for five."}},
		// An error at no position shows the whole transcript in the body.
		{name: "errored at no turn", err: &result.Error{Kind: result.KindNetwork, Message: "connection reset"}, bodyHas: []string{"> four"}},
	} {
		a := &result.Attempt{Number: 1, Status: result.Failed, ConversationID: "conv-1", Started: t0,
			// A nil turn is skipped, wherever it is.
			Turns: append(slices.Clone(turns), nil)}
		if tc.err != nil {
			a.Status, a.Error = result.Errored, tc.err
		} else {
			a.Failures = []assert.Failure{failure(tc.at, "response", "reply does not match", "x", "y", "")}
		}
		r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
			Cases: []*result.Case{{Name: "books", Pos: pos("a.yaml", 3, 5), Status: a.Status, Attempts: []*result.Attempt{a}}}}}}
		c := junitOf(t, r).Suites[0].Cases[0]
		res := c.Failure
		if tc.err != nil {
			res = c.Error
		}
		if res == nil || strings.Count(res.Body, "transcript (conversation conv-1)") != 1 {
			t.Fatalf("%s: failure %+v, error %+v", tc.name, c.Failure, c.Error)
		}
		for _, s := range tc.bodyHas {
			if !strings.Contains(res.Body, s) {
				t.Errorf("%s: body lacks %q:\n%s", tc.name, s, res.Body)
			}
		}
		if got := strings.Contains(c.SystemOut, "transcript ("); got != (tc.outHas != nil) {
			t.Errorf("%s: system-out has a transcript: %v, want %v:\n%s", tc.name, got, tc.outHas != nil, c.SystemOut)
		}
		for _, s := range tc.outHas {
			if !strings.Contains(c.SystemOut, s) {
				t.Errorf("%s: system-out lacks %q:\n%s", tc.name, s, c.SystemOut)
			}
		}
	}
}

// TestJUnitErrorMessageWhose: an <error>'s message ends with whose fault
// it is, as the Cucumber step's opens: Jenkins and the GitHub Actions
// reporters show it as a failed test and do not read its type. The error
// that stopped the run is whose fault the stop says: a key refused on a
// turn read as the platform's by its kind (http) beside a run stopped on
// a configuration problem (exit 2).
func TestJUnitErrorMessageWhose(t *testing.T) {
	t.Parallel()
	const refused = "POST /v1/agents/a1/debug-chat: 403 FORBIDDEN: no rights (check the API key and its rights on this agent)"
	keyStop := &result.Stop{Kind: result.StopCredentials, Config: true, Reason: result.ReasonCredentials, Cause: refused}
	for _, tc := range []struct {
		err  *result.Error
		stop *result.Stop
		want string
	}{
		{err: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}, want: "timeout: no reply within 10s (" + erroredLine(result.KindTimeout) + ")"},
		{err: &result.Error{Kind: result.KindNetwork, Message: "connection reset"}, want: "network: connection reset (errored, not failed: the network or the platform broke, not the agent; nothing was learnt about the agent)"},
		{want: "errored without a recorded cause (errored, not failed: the platform or the harness broke, not the agent; nothing was learnt about the agent)"},
		{err: &result.Error{Kind: result.KindHTTP, Message: refused, Status: 403}, stop: keyStop,
			want: "http: " + refused + " (errored, not failed: the target's configuration broke, not the agent; nothing was learnt about the agent)"},
		{err: &result.Error{Kind: result.KindHTTP, Message: "POST /v1/agents/a1/debug-chat: 500 INTERNAL_ERROR", Status: 500}, stop: keyStop,
			want: "http: POST /v1/agents/a1/debug-chat: 500 INTERNAL_ERROR (errored, not failed: the platform broke, not the agent; nothing was learnt about the agent)"},
		{err: &result.Error{Kind: result.KindNetwork, Message: "POST /v1/agents/a1/debug-chat: dial tcp: connection refused"},
			stop: &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Cause: "POST /v1/agents/a1/debug-chat: dial tcp: connection refused"},
			want: "network: POST /v1/agents/a1/debug-chat: dial tcp: connection refused (errored, not failed: the network or the platform broke, not the agent; nothing was learnt about the agent)"},
	} {
		a := &result.Attempt{Number: 1, Status: result.Errored, Started: t0, Error: tc.err}
		r := &result.Result{Started: t0, Stop: tc.stop, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
			Cases: []*result.Case{{Name: "books", Pos: pos("a.yaml", 3, 5), Status: result.Errored, Attempts: []*result.Attempt{a}}}}}}
		c := junitOf(t, r).Suites[0].Cases[0]
		if c.Error == nil || c.Error.Message != tc.want {
			t.Errorf("error %+v, want message %q", c.Error, tc.want)
		}
	}
}

// TestJUnitRunErrorsSayWhoseFault: the run-level <error> testcases (a
// stop no case errored on, a deployment that changed) end their message
// with whose fault it is, as a case's <error> does: Jenkins and the GitHub
// Actions reporters show them as failed tests.
func TestJUnitRunErrorsSayWhoseFault(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    *result.Result
		want string
	}{
		{"refused key", &result.Result{Started: t0, Stop: &result.Stop{Kind: result.StopCredentials, Config: true, Reason: "not run: credentials refused", Cause: "401 Unauthorized"}},
			"not run: credentials refused: 401 Unauthorized (errored, not failed: the target's configuration broke, not the agent; nothing was learnt about the agent)"},
		{"unreachable", &result.Result{Started: t0, Stop: &result.Stop{Kind: result.StopUnreachable, Reason: "not run: platform unreachable", Cause: "dial tcp: connection refused"}},
			"not run: platform unreachable: dial tcp: connection refused (errored, not failed: the network or the platform broke, not the agent; nothing was learnt about the agent)"},
		{"a stop of another kind", &result.Result{Started: t0, Stop: &result.Stop{Kind: "other", Reason: "not run: stopped", Cause: "404"}},
			"not run: stopped: 404 (errored, not failed: the platform broke, not the agent; nothing was learnt about the agent)"},
		{"deployment changed", &result.Result{Started: t0, Deployments: []*result.Deployment{{Agent: "luigi", Env: "sandbox", ID: "dep-1", After: "dep-2"}}},
			"(errored, not failed: the deployment changed under the run, not by the agent's doing; no verdict is tied to one deployment: run the tests again on the new one)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			doc := junitOf(t, tc.r)
			var got []string
			for _, s := range doc.Suites {
				for _, c := range s.Cases {
					if c.Classname == "run" && c.Error != nil {
						got = append(got, c.Error.Message)
					}
				}
			}
			if len(got) != 1 || !strings.HasSuffix(got[0], tc.want) {
				t.Errorf("run errors %q, want one ending %q", got, tc.want)
			}
		})
	}
}

// TestJUnitRetriedErrorOnce: a retried case that errored opens its
// <error> body with the deciding error (GitLab shows the body, not the
// message), and the attempts' listing refers to it rather than writing
// it a second time.
func TestJUnitRetriedErrorOnce(t *testing.T) {
	t.Parallel()
	first := &result.Attempt{Number: 1, Status: result.Errored, Started: t0,
		Error: &result.Error{Kind: result.KindNetwork, Message: "connection reset"}}
	last := &result.Attempt{Number: 2, Status: result.Errored, Started: t0,
		Error: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
		Cases: []*result.Case{{Name: "books", Pos: pos("a.yaml", 3, 5), Status: result.Errored, Attempts: []*result.Attempt{first, last}}}}}}
	c := junitOf(t, r).Suites[0].Cases[0]
	if c.Error == nil {
		t.Fatalf("no <error> in %+v", c)
	}
	want := "timeout: no reply within 10s (" + erroredLine(result.KindTimeout) + ")\n" +
		"attempt 1 of 2 errored: network: connection reset\n" +
		"attempt 2 of 2 errored, as above:\n"
	if c.Error.Body != want {
		t.Errorf("body:\n%s\nwant:\n%s", c.Error.Body, want)
	}
	// Without a recorded cause, the opening line says so once; a check
	// that failed before the error is not in that line and stays.
	last.Error = nil
	c = junitOf(t, r).Suites[0].Cases[0]
	want = "errored without a recorded cause (" + erroredLine("") + ")\n" +
		"attempt 1 of 2 errored: network: connection reset\n" +
		"attempt 2 of 2 errored, as above:\n"
	if c.Error == nil || c.Error.Body != want {
		t.Errorf("without a cause: %+v\nwant body:\n%s", c.Error, want)
	}
	last.Error = &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}
	last.Failures = []assert.Failure{{Pos: pos("a.yaml", 8, 3), Key: "response", Message: "reply is not the expected text"}}
	c = junitOf(t, r).Suites[0].Cases[0]
	if c.Error == nil || !strings.Contains(c.Error.Body, "attempt 2 of 2 errored, as above:\n  a.yaml:8:3: reply is not the expected text") {
		t.Errorf("the failure before the error is not listed: %+v", c.Error)
	}
}
