package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/jstemmer/go-junit-report/v2/junit"
)

// JUnit layout (what CI servers read):
//
//   - the counts: <testsuites> and each <testsuite> carry tests, failures
//     and errors, zero too, and each <testsuite> skipped, zero too, as
//     the JUnit schema of Jenkins (junit-10.xsd) declares them; skipped
//     is on <testsuites> only when cases were skipped (see junitSuites);
//   - one <testsuite> per suite file, in r.Files order: name = suite name,
//     file = path, time = sum of its cases, timestamp = its first attempt;
//     run-level checks get a suite named "checks"; the run's own errors
//     that no case carries (a deployment changed during the run, a stop
//     before any case errored) are <error> testcases of a last suite
//     named "run" (runErrors), so the counts are not all green;
//   - one <testcase> per scenario (per expanded example row): classname =
//     file path (the Terraform convention), file and line attributes for
//     GitLab, <properties> with conversationId, agent, env, variant and
//     attempts (also written at the head of <system-out>);
//   - a broken expectation is a <failure type="assertion">, an
//     infrastructure problem an <error type="KIND"> (network, timeout, http,
//     ...), with the details, the steps not run after it (one line:
//     "not run: turns 2-3, confirm (conversation)") and the transcript
//     in plain text; its message is the first failure's line, and an
//     <error>'s ends with whose fault it is (errorMessage); the body
//     opens with the message when the detail opens with earlier attempts
//     (resultBody);
//   - <system-out> holds, after those properties, the console's notes of
//     the similar checks: each that passed by less than
//     assert.NearMargin ("near threshold: similar 0.72 ≥ 0.70 at ..."),
//     and a repeated case's spread of each over its runs; the
//     transcripts in the report show each similar check's score under
//     its turn;
//   - <system-out> holds the transcript of the last attempt only when the
//     body does not hold it whole (a passing or flaky case's; of a probe,
//     which has no chat, its confirmed: lines with what it did and saw
//     under them, its transcript): Jenkins
//     shows the body and system-out one under the other, GitLab joins
//     them;
//   - skipped cases are <skipped message="reason">; cases an interrupted
//     run never reached are <skipped message="not run: run interrupted">,
//     not errors: nothing went wrong with them, and CI should not count a
//     timeout as N errors;
//   - a case that passed only on a retry carries one Surefire
//     <flakyFailure> or <flakyError> per earlier failed attempt;
//   - a repeated case has repeat.* properties (procedure, decision, runs,
//     passed, failed, errored, limit, pass_rate, margin, confidence,
//     needed, interval) and every failed run's transcript in its body; an
//     inconclusive one is a <failure type="inconclusive">;
//   - a quarantined case has quarantine.* properties and quarantined=true
//     while the quarantine holds; if it failed or errored then, it is
//     <skipped message="quarantined ...">, with the failure in system-out,
//     since it must not fail the build;
//   - <testsuites> carries the run's properties: "status", the verdict of
//     the run that the exit code follows (passed, failed, errored,
//     interrupted, empty), "status_reason", what it means as the
//     console's last line says it (whose fault an errored run is, what
//     failed a run: a check or an alert rule), when there is more to say
//     than the status, and "stopped", the skip reason of the cases a
//     stop left unrun (not run: --fail-fast, not run: platform
//     unreachable, ...) when the run stopped early, with "stop_cause",
//     the error that decided it (keys masked), unless it was --fail-fast;
//   - <testsuites> also carries the deployment evidence: one property
//     "deployment.AGENT.ENV" per agent and environment, whose value is the
//     deployment id the run tested ("ID → AFTER_ID" when it changed
//     during the run), and "deployment_changed" with the console's
//     message(s) when one did, and "deployment_unconfirmed" with the
//     console's words for each deployment never read, or not read again
//     after its agent's last case; each <testcase> has a "deployment"
//     property, the id its agent and environment were tested on;
//   - <testsuites> has "shard" ("2/4 of 47 scenarios"), "rerun" (the
//     cases a --rerun-failed run reran) and "forced_merge" (what merge
//     --force overrode) when the run is not of its whole selection;
//   - every text is stripped of ANSI escapes and of runes XML cannot hold;
//     every attribute and property (a name, a path, a message, and so
//     each line of the head of <system-out>) is one line, its controls
//     and invisible characters escaped as the console escapes them
//     (xmlLine).

// Names of the <testsuites> properties.
const (
	PropertyStatus = "status"
	// PropertyStatusReason is what the status means, one line.
	PropertyStatusReason = "status_reason"
	PropertyStopped      = "stopped"
	// PropertyStopCause is the error that stopped the run, one line.
	PropertyStopCause = "stop_cause"
	// PropertyDeployment prefixes "AGENT.ENV" in the name of the run's
	// deployment properties, and names a testcase's.
	PropertyDeployment = "deployment"
	// PropertyDeploymentChanged says what changed during the run.
	PropertyDeploymentChanged = "deployment_changed"
	// PropertyDeploymentUnconfirmed says which deployments the run could
	// not tie its verdicts to (never read, or not read again after the
	// agent's last case), and why: a JUnit reader would otherwise take
	// the id of deployment.AGENT.ENV, or its absence, for evidence.
	PropertyDeploymentUnconfirmed = "deployment_unconfirmed"
	// PropertyShard, PropertyRerun and PropertyForcedMerge say that the
	// run is not of its whole selection: a shard's ("2/4 of 47
	// scenarios"), a --rerun-failed run's (the cases it reran) or a
	// merge --force's (what it overrode).
	PropertyShard       = "shard"
	PropertyRerun       = "rerun"
	PropertyForcedMerge = "forced_merge"
)

// fileStyle renders plain text for a file: no colour, escape sequences
// stripped.
var fileStyle = style{file: true}

// failureType is the type attribute of an assertion <failure>.
const failureType = "assertion"

// junitSuites is <testsuites> holding our extended suites.
//
// The counts follow the JUnit schema CI servers validate against (the
// Jenkins xUnit plugin's junit-10.xsd, which Surefire, pytest and JUnit 5
// test their output with; Ant's JUnit.xsd agrees on <testsuite>): tests,
// failures and errors are written always, zero too, on <testsuites> (where
// they are declared, and a reader that sums them should not have to
// guess what a missing one means) and on <testsuite> (where they are
// required). skipped is declared on <testsuite> only, and written there
// always (MarshalXML); on <testsuites> it is written, as v2.1.0 writes
// it, only when cases were skipped.
type junitSuites struct {
	junit.Testsuites
	// Tests, Failures, Errors and Skipped shadow the embedded counts,
	// which v2.1.0 tags omitempty: a passing run's report lost
	// failures="0" errors="0". Their order is the attributes'.
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr,omitempty"`
	// Properties are the run's: its status (result.RunStatus) and why it
	// stopped early, if it did. v2.1.0's Testsuites has none.
	Properties *[]junit.Property `xml:"properties>property,omitempty"`
	// Suites shadows the embedded []junit.Testsuite.
	Suites []junitSuite `xml:"testsuite,omitempty"`
}

// junitSuite is the <testsuite> of one file (or of the run-level checks
// when f is nil). It writes itself (MarshalXML), one testcase at a time:
// the cases of a run of 100,000 scenarios, built all at once, would hold
// every transcript twice more in memory.
type junitSuite struct {
	id         int
	name, path string
	f          *result.File
	cases      []*result.Case
	r          *result.Result
	// extra are testcases of no case: the run's own errors (runErrors).
	extra  []junitCase
	counts junit.Testsuite // Tests, Failures, Errors, Skipped
}

// junitCase extends junit.Testcase with what v2.1.0 lacks: per-testcase
// properties, file and line attributes, and Surefire's flaky elements.
// Field order is element order: properties first, then the embedded
// result elements, then the flaky ones, then system-out (which shadows the
// embedded one so that it comes last, as the Surefire schema wants).
type junitCase struct {
	Properties *[]junit.Property `xml:"properties>property,omitempty"`
	junit.Testcase
	File          string        `xml:"file,attr,omitempty"`
	Line          int           `xml:"line,attr,omitempty"`
	FlakyFailures []junitFlaky  `xml:"flakyFailure,omitempty"`
	FlakyErrors   []junitFlaky  `xml:"flakyError,omitempty"`
	SystemOut     *junit.Output `xml:"system-out,omitempty"`
}

// junitFlaky is Surefire's flakyFailure/flakyError: an earlier failed
// attempt of a test that passed in the end.
type junitFlaky struct {
	Message    string        `xml:"message,attr"`
	Type       string        `xml:"type,attr"`
	StackTrace *junit.Output `xml:"stackTrace,omitempty"`
	SystemOut  *junit.Output `xml:"system-out,omitempty"`
}

// WriteJUnit writes r as a JUnit XML report, with the XML header. The
// totals are counted first, so the document streams out case by case.
func WriteJUnit(w io.Writer, r *result.Result) error {
	doc := junitSuites{}
	doc.Name = "agenttest"
	doc.Time = seconds(r.Duration)
	props := []junit.Property{{Name: PropertyStatus, Value: string(r.RunStatus())}}
	if why := statusWhy(r, Summarize(r)); why != "" {
		// A CI server shows the JUnit, not the console: whose fault an
		// errored run is must reach its reader too.
		props = append(props, junit.Property{Name: PropertyStatusReason, Value: xmlLine(why)})
	}
	if r.Stop != nil {
		props = append(props, junit.Property{Name: PropertyStopped, Value: xmlLine(r.Stop.Reason)})
		if r.Stop.Cause != "" {
			// A stop before the first case (the deployment read met a
			// refused key) leaves no testcase that shows the cause.
			props = append(props, junit.Property{Name: PropertyStopCause, Value: xmlLine(r.Stop.Cause)})
		}
	}
	// What the run is the verdict of, when not its whole selection: a CI
	// server that shows a shard's or a rerun's JUnit as the run's shows
	// a green part of it.
	if sh := r.Shard; sh != nil {
		props = append(props, junit.Property{Name: PropertyShard, Value: fmt.Sprintf("%d/%d of %d scenarios", sh.Index, sh.Total, sh.Selected)})
	}
	if rr := r.Rerun; rr != nil {
		props = append(props, junit.Property{Name: PropertyRerun, Value: xmlLine(rr.Cases(rr.Of))})
	}
	if len(r.ForcedMerge) > 0 {
		props = append(props, junit.Property{Name: PropertyForcedMerge, Value: xmlLine(strings.Join(r.ForcedMerge, "; "))})
	}
	var changed, unconfirmed []string
	for _, d := range r.Deployments {
		if d == nil {
			continue
		}
		if m := d.UnconfirmedMessage(); m != "" {
			unconfirmed = append(unconfirmed, m)
		}
		if d.ID == "" {
			continue
		}
		v := d.ID
		if d.Changed() {
			v += " → " + d.After
			changed = append(changed, d.ChangeMessage())
		}
		props = append(props, junit.Property{Name: xmlLine(PropertyDeployment + "." + d.Agent + "." + d.Env), Value: xmlLine(v)})
	}
	if len(changed) > 0 {
		props = append(props, junit.Property{Name: PropertyDeploymentChanged, Value: xmlLine(strings.Join(changed, "; "))})
	}
	if len(unconfirmed) > 0 {
		props = append(props, junit.Property{Name: PropertyDeploymentUnconfirmed, Value: xmlLine(strings.Join(unconfirmed, "; "))})
	}
	doc.Properties = &props
	for i, f := range r.Files {
		if f == nil {
			continue
		}
		doc.add(newSuite(i, f.Suite, f.Path, f, f.Cases, r))
	}
	if len(r.Checks) > 0 {
		doc.add(newSuite(len(r.Files), "checks", "", nil, r.Checks, r))
	}
	if errs := runErrors(r); len(errs) > 0 {
		id := len(r.Files)
		if len(r.Checks) > 0 {
			id++
		}
		s := junitSuite{id: id, name: "run", r: r, extra: errs}
		s.counts.Tests, s.counts.Errors = len(errs), len(errs)
		doc.add(s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "\t")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}

// add appends a suite and adds its counts to the totals, like
// junit.Testsuites.AddSuite does for its own type.
func (t *junitSuites) add(s junitSuite) {
	t.Tests += s.counts.Tests
	t.Failures += s.counts.Failures
	t.Errors += s.counts.Errors
	t.Skipped += s.counts.Skipped
	t.Suites = append(t.Suites, s)
}

// newSuite counts the cases of a suite by the element each will get
// (buildCase: failed is a <failure>, errored an <error>, skipped and
// never run a <skipped>).
func newSuite(id int, name, path string, f *result.File, cases []*result.Case, r *result.Result) junitSuite {
	s := junitSuite{id: id, name: name, path: path, f: f, cases: cases, r: r}
	for _, c := range cases {
		if c == nil {
			continue
		}
		s.counts.Tests++
		switch {
		case held(c), c.Status == result.Skipped, c.Status == result.Pending:
			s.counts.Skipped++
		case c.Status == result.Failed:
			s.counts.Failures++
		case c.Status == result.Errored:
			s.counts.Errors++
		}
	}
	return s
}

// held reports whether c is a quarantined case that would fail the build:
// it is written as <skipped>, its real outcome in system-out.
func held(c *result.Case) bool {
	return c.Quarantined() && (c.Status == result.Failed || c.Status == result.Errored)
}

// MarshalXML writes the <testsuite> element: its attributes in the order
// of junit.Testsuite's fields, its properties, then each testcase as it
// is built.
func (s junitSuite) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	var total time.Duration
	var first time.Time
	for _, c := range s.cases {
		if c == nil {
			continue
		}
		// Summed as the JSON report holds them (to the microsecond), so
		// that the JUnit of a run and the one merge writes from its JSON
		// report agree to the millisecond.
		total += c.Duration.Truncate(time.Microsecond)
		for _, a := range c.Attempts {
			if a != nil && !a.Started.IsZero() && (first.IsZero() || a.Started.Before(first)) {
				first = a.Started
			}
		}
	}
	if first.IsZero() {
		first = s.r.Started
	}
	attr := func(name, value string) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: value} }
	start.Attr = []xml.Attr{
		attr("name", xmlLine(s.name)),
		attr("tests", strconv.Itoa(s.counts.Tests)),
		attr("failures", strconv.Itoa(s.counts.Failures)),
		attr("errors", strconv.Itoa(s.counts.Errors)),
		attr("id", strconv.Itoa(s.id)),
		// Always, zero too, unlike junit.Testsuite's omitempty: see
		// junitSuites.
		attr("skipped", strconv.Itoa(s.counts.Skipped)),
		attr("time", seconds(total)),
	}
	if !first.IsZero() {
		start.Attr = append(start.Attr, attr("timestamp", first.Format(time.RFC3339)))
	}
	if s.path != "" {
		start.Attr = append(start.Attr, attr("file", xmlLine(s.path)))
	}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	var props struct {
		Property []junit.Property `xml:"property"`
	}
	t := s.r.Target
	for _, p := range [][2]string{{"target", t.Name}, {"build_url", t.BuildURL}, {"env", t.Env}} {
		if p[1] != "" {
			props.Property = append(props.Property, junit.Property{Name: p[0], Value: xmlLine(p[1])})
		}
	}
	if t.Embedded {
		// What replays the simulator's draws, as the JSON report's
		// target.seed.
		props.Property = append(props.Property, junit.Property{Name: "seed", Value: strconv.FormatInt(t.Seed, 10)})
	}
	if len(props.Property) > 0 {
		if err := e.EncodeElement(props, xml.StartElement{Name: xml.Name{Local: "properties"}}); err != nil {
			return err
		}
	}
	for _, c := range s.cases {
		if c == nil {
			continue
		}
		if err := e.EncodeElement(buildCase(s.f, c, s.r), xml.StartElement{Name: xml.Name{Local: "testcase"}}); err != nil {
			return err
		}
	}
	for _, tc := range s.extra {
		if err := e.EncodeElement(tc, xml.StartElement{Name: xml.Name{Local: "testcase"}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// runErrors are the errors of the run that no testcase carries, each an
// <error> testcase of a last suite named "run": a deployment that changed
// during the run (every case may have passed), and a stop that no case
// errored on (the deployment read before the first case met a refused
// key). A CI server's test view shows the counts, not the <testsuites>
// properties; without these it shows all green, or all skipped, for a
// run that errored. gotestsum writes a package's failure outside its
// tests as a testcase the same way.
func runErrors(r *result.Result) []junitCase {
	var out []junitCase
	add := func(name, typ, msg string) {
		tc := junitCase{}
		tc.Name, tc.Classname = xmlLine(name), "run"
		tc.Time = seconds(0)
		tc.Error = &junit.Result{Message: xmlLine(msg), Type: xmlLine(typ), Data: xmlLine(msg) + "\n"}
		out = append(out, tc)
	}
	// Each message ends with whose fault it is, as a case's <error>'s
	// does (errorMessage): these are read as failures too.
	for _, d := range r.DeploymentChanges() {
		add(fmt.Sprintf("deployment of %s in %s unchanged", d.Agent, d.Env), PropertyDeploymentChanged,
			d.ChangeMessage()+" (errored, not failed: the deployment changed under the run, not by the agent's doing; no verdict is tied to one deployment: run the tests again on the new one)")
	}
	// A --fail-fast stop has no cause: the failure it stopped on is a
	// testcase.
	if st := r.Stop; st != nil && st.Cause != "" {
		for _, c := range r.Cases() {
			if c != nil && c.Status == result.Errored && !held(c) {
				return out
			}
		}
		add("run stopped", st.Kind, st.Reason+": "+st.Cause+" ("+stopFault(st)+")")
	}
	return out
}

// stopFault says whose fault a stop is: the target's configuration for a
// refused key or an unknown agent (exit 2), else the network or the
// platform.
func stopFault(st *result.Stop) string {
	switch {
	case st.Config:
		return erroredBy("the target's configuration")
	case st.Kind == result.StopUnreachable:
		return erroredLine(result.KindNetwork)
	}
	return erroredLine(result.KindHTTP)
}

// buildCase makes the <testcase> of one scenario.
func buildCase(f *result.File, c *result.Case, r *result.Result) junitCase {
	tc := junitCase{}
	tc.Name = xmlLine(c.Name)
	classname := c.Pos.File
	if f != nil {
		classname = f.Path
	}
	if classname == "" {
		classname = "checks"
	}
	tc.Classname = xmlLine(classname)
	tc.File = xmlLine(classname)
	tc.Line = c.Pos.Line
	tc.Time = seconds(c.Duration)

	props := append(caseProperties(c, r.DeploymentOf(c.Agent, c.Env)), repeatProperties(c)...)
	if len(props) > 0 {
		tc.Properties = &props
	}
	var head strings.Builder
	for _, p := range props {
		fmt.Fprintf(&head, "%s: %s\n", p.Name, p.Value)
	}

	var body strings.Builder
	// The transcripts the body holds whole are not written again in
	// system-out: Jenkins shows a failure's body (Stack Trace) and its
	// system-out (Standard Output) one under the other, and GitLab joins
	// them in one System output.
	inBody := map[*result.Attempt]bool{}
	d := detail{b: &body, st: fileStyle, whole: inBody}
	if c.Repeat != nil {
		d.line("", repeatLine(c.Repeat))
	}
	held := held(c)
	switch {
	case held:
		d.writeCase(c, "")
		tc.Skipped = &junit.Result{Message: xmlLine(fmt.Sprintf("quarantined until %s (%s, not gating): %s", c.Quarantine.Until, c.Status, c.Quarantine.Reason))}
	case c.Status == result.Failed:
		a := c.Deciding()
		d.writeCase(c, "")
		typ := failureType
		if c.Inconclusive() {
			typ = result.DecisionInconclusive
		}
		msg := failureMessage(c, a)
		tc.Failure = &junit.Result{
			Message: xmlLine(msg),
			Type:    typ,
			Data:    xmlText(resultBody(c, a, msg, body.String())),
		}
	case c.Status == result.Errored:
		a := c.Deciding()
		// The body opens with the error's line when attempts come
		// before it (resultBody): the listing need not repeat it. A
		// repeated case's runs (writeRuns) do not read it.
		d.errorAbove = true
		d.writeCase(c, "")
		kind := "internal"
		if a != nil && a.Error != nil && a.Error.Kind != "" {
			kind = a.Error.Kind
		}
		msg := errorMessage(r.Stop, a)
		tc.Error = &junit.Result{
			Message: xmlLine(msg),
			Type:    xmlLine(kind),
			Data:    xmlText(resultBody(c, a, msg, body.String())),
		}
	case c.Status == result.Skipped, c.Status == result.Pending:
		// The console's note: a repeat cut off before a verdict says
		// the runs it made, on a stop as on an interruption.
		tc.Skipped = &junit.Result{Message: xmlLine(caseNote(c))}
	case c.Status == result.Flaky:
		tc.FlakyFailures, tc.FlakyErrors = flakyAttempts(c)
	}

	var out strings.Builder
	out.WriteString(head.String())
	// How close the similar checks came to their thresholds, as the
	// console's case line says it: CI shows system-out for a passing
	// case too, where a near pass is the warning.
	for _, l := range append(nearNotes(c), spreadLines(c)...) {
		out.WriteString(fileStyle.flat(l) + "\n")
	}
	if held {
		// The real outcome of a quarantined case, where CI shows output.
		out.WriteString("\n" + body.String())
	}
	if a := c.Last(); a != nil && len(a.Turns) > 0 && !inBody[a] {
		out.WriteString("\n")
		d := detail{b: &out, st: fileStyle}
		d.writeTranscript(a, -1, "")
	} else if a != nil && len(a.Turns) == 0 && !inBody[a] && sawAny(a) {
		// A probe's: what it saw stands for its transcript.
		out.WriteString("\n")
		d := detail{b: &out, st: fileStyle}
		d.writeConfirmations(a, "")
	}
	if out.Len() > 0 {
		tc.SystemOut = &junit.Output{Data: xmlText(out.String())}
	}
	return tc
}

// resultBody is the text of a <failure> or <error>: the case's detail,
// opened by msg, its message, when the detail opens with something else
// than the deciding attempt's cause (a retried case's earlier attempts,
// "attempt 1 of 2 failed: ..."). GitLab shows the body, never the
// message, and the body is what a reader of any CI server reads first.
func resultBody(c *result.Case, a *result.Attempt, msg, body string) string {
	if c.Repeat == nil && a != nil && !strings.HasPrefix(body, attemptCause(a)+"\n") {
		return msg + "\n" + body
	}
	return body
}

// caseProperties are the testcase properties: what a reader needs to find
// the conversation on the platform. The values are flat (fileStyle.flat):
// they are also the head of <system-out>, one "name: value" line each, and
// the server chooses the conversation and session ids; one holding a
// newline wrote lines of its own there ("attempts: 99").
func caseProperties(c *result.Case, dep *result.Deployment) []junit.Property {
	var props []junit.Property
	add := func(name, value string) {
		if value != "" {
			props = append(props, junit.Property{Name: name, Value: xmlLine(value)})
		}
	}
	add("conversationId", c.ConversationID())
	add("agent", c.Agent)
	add("env", c.Env)
	add("variant", c.Variant)
	add("via", c.Via)
	if c.Streaming {
		add("streaming", "true")
	}
	add("messagingSessionId", sessionID(c.Last()))
	if dep != nil {
		add(PropertyDeployment, dep.ID)
	}
	if n := len(c.Attempts); n > 0 {
		add("attempts", strconv.Itoa(n))
	}
	return props
}

// failureMessage is the message attribute of a <failure>: the first
// failure's one-liner, with a count of the others.
func failureMessage(c *result.Case, a *result.Attempt) string {
	if c.Repeat != nil && c.Repeat.Procedure == result.ProcedureSPRT {
		// The verdict's grounds: the runs, not one of them.
		return repeatLine(c.Repeat)
	}
	if a == nil || len(a.Failures) == 0 {
		if c.Repeat != nil {
			return repeatLine(c.Repeat)
		}
		return "failed"
	}
	msg := fileStyle.failureLine(a, a.Failures[0])
	if n := len(a.Failures) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	if c.Repeat != nil {
		msg = repeatLine(c.Repeat) + "; " + msg
	}
	return msg
}

// errorMessage is the message attribute of an <error>: the cause, then
// whose fault it is (errorFault; stop is the run's). Jenkins' JUnit
// plugin, and the GitHub Actions reporters (mikepenz/action-junit-report,
// dorny/test-reporter), read an <error> as a <failure>, its type unread:
// without it a timeout of the platform reads there as the agent's broken
// expectation.
func errorMessage(stop *result.Stop, a *result.Attempt) string {
	if a == nil || a.Error == nil {
		return "errored without a recorded cause (" + erroredLine("") + ")"
	}
	return fileStyle.errorLine(a, a.Error) + " (" + errorFault(stop, a.Error) + ")"
}

// errorFault says whose fault an attempt's error e is: its kind's
// (erroredLine), except for the error that stopped the run (stop, nil
// when it did not stop), which is whose fault the stop says: a refused
// key or an unknown agent is the target's configuration (exit 2), where
// it read as the platform's by its kind (http) beside the run's stop.
func errorFault(stop *result.Stop, e *result.Error) string {
	if stop.CausedBy(e) {
		return stopFault(stop)
	}
	return erroredLine(e.Kind)
}

// flakyAttempts renders the failed attempts of a case that passed in the
// end, split into Surefire's flakyFailure and flakyError.
func flakyAttempts(c *result.Case) (failures, errs []junitFlaky) {
	for _, a := range c.Attempts {
		if a == nil || (a.Status != result.Failed && a.Status != result.Errored) {
			continue
		}
		var trace, out strings.Builder
		d := detail{b: &trace, st: fileStyle}
		for _, f := range a.Failures {
			d.writeFailure(a, f, "")
		}
		if a.Error != nil {
			d.line("", fileStyle.errorLine(a, a.Error))
		}
		od := detail{b: &out, st: fileStyle}
		if a.ConversationID != "" {
			od.line("", "conversationId: "+fileStyle.flat(a.ConversationID))
		}
		od.line("", fmt.Sprintf("attempt: %d of %d", a.Number, len(c.Attempts)))
		od.writeTranscript(a, -1, "")
		fl := junitFlaky{
			StackTrace: &junit.Output{Data: xmlText(trace.String())},
			SystemOut:  &junit.Output{Data: xmlText(out.String())},
		}
		if a.Status == result.Errored {
			// As an <error>'s: whose fault it is, for the readers that
			// show a flaky case's earlier attempts.
			fl.Message = xmlLine(errorMessage(nil, a))
			fl.Type = "internal"
			if a.Error != nil && a.Error.Kind != "" {
				fl.Type = xmlLine(a.Error.Kind)
			}
			errs = append(errs, fl)
			continue
		}
		fl.Message = xmlLine(attemptCause(a))
		fl.Type = failureType
		failures = append(failures, fl)
	}
	return failures, errs
}

// attemptCause is the one-line cause of a failed attempt.
func attemptCause(a *result.Attempt) string {
	switch {
	case a.Error != nil:
		return fileStyle.errorLine(a, a.Error)
	case len(a.Failures) > 0:
		return fileStyle.failureLine(a, a.Failures[0])
	default:
		return a.Status.String()
	}
}

// sawAny reports whether a probe of attempt a kept what it saw.
func sawAny(a *result.Attempt) bool {
	for _, c := range a.Confirmations {
		if c != nil && len(c.Seen) > 0 {
			return true
		}
	}
	return false
}
