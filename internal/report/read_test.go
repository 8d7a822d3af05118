package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// TestReadJSONRoundTrip: a report read back and written again is the same
// document, for every fixture: ReadJSON loses nothing WriteJSON writes.
func TestReadJSONRoundTrip(t *testing.T) {
	for name, fx := range map[string]func() *result.Result{
		"full": fixture, "messaging": messagingFixture, "stats": statsFixture, "deployments": deploymentsFixture, "probes": probesFixture,
		"empty": func() *result.Result {
			return &result.Result{Started: t0, Target: result.Target{Name: "sim", Embedded: true}}
		},
		"clock durations": clockDurations,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := fx()
			if name == "full" {
				// The sections of a shard's report: which share it ran,
				// and the coverage computed over it.
				res.Shard = &result.Shard{Index: 2, Total: 3, Selection: "sha256:abc", Selected: 35}
				res.Rerun = &result.Rerun{Of: "first.json", Failed: 2, Unrun: 3}
				// Why the run stopped early, which the console's summary
				// and the status say again from the report.
				res.Stop = &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: "127.0.0.1:9", Cause: "connection refused"}
				fillUnusual(res)
			}
			var first, second bytes.Buffer
			if err := WriteJSON(&first, res, JSONOptions{Coverage: coverage.Compute(res, nil)}); err != nil {
				t.Fatal(err)
			}
			rep, err := ReadJSON(bytes.NewReader(first.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if name == "full" && (rep.Coverage == nil || len(rep.Coverage.Agents) == 0 || rep.Result.Shard == nil || rep.Result.Shard.Index != 2 ||
				rep.Result.Rerun == nil || *rep.Result.Rerun != *res.Rerun) {
				t.Errorf("coverage %+v, shard %+v, rerun %+v not read back", rep.Coverage, rep.Result.Shard, rep.Result.Rerun)
			}
			if name == "full" {
				checkUnusual(t, res, rep.Result)
			}
			if rep.Status != res.RunStatus() {
				t.Errorf("status %s, want %s", rep.Status, res.RunStatus())
			}
			if err := WriteJSON(&second, rep.Result, JSONOptions{Coverage: rep.Coverage}); err != nil {
				t.Fatal(err)
			}
			if first.String() != second.String() {
				t.Errorf("written again, the report differs:\n%s", lineDiff(first.String(), second.String()))
			}
		})
	}
}

// fillUnusual sets, on the full fixture, the members of a report that
// none of the fixtures' cases hold, so that the round trip carries them
// too: what a failure's feature step and nearest phrasing were, the HTTP
// status of an error (the platform's answer, not the agent's), what a
// confirm: read and whether it found it, the runs a repeat discarded.
func fillUnusual(r *result.Result) {
	r.Target.RuntimeURL = "https://runtime.example"
	for _, c := range r.Cases() {
		a := c.Deciding()
		switch c.Name {
		case "asks for the party size":
			a.Failures[0].Step = `Then the reply contains "how many people"`
			a.Failures[0].Nearest = "how many people?"
			a.Confirmations = []*result.Confirmation{
				{Pos: pos("suites/restaurant.yaml", 40, 7), Kind: result.ConfirmConversation, Subject: "conv-002", Found: true,
					Summary: "channel=WEBCHAT num_turns=2", Reads: 3, Duration: 1500 * time.Microsecond},
				{Pos: pos("suites/restaurant.yaml", 42, 7), Kind: result.ConfirmHandoffState, Subject: "conv-002"},
			}
		case "answers opening hours":
			a.Error.Kind, a.Error.Status = result.KindHTTP, 503
		case "recommends a wine":
			c.Repeat.Discarded = 2
		}
	}
}

// checkUnusual compares what fillUnusual set with what was read back: a
// member the writer left out reads back empty, and is then written out
// as empty again, which the round trip alone cannot tell.
func checkUnusual(t *testing.T, wrote, read *result.Result) {
	t.Helper()
	if read.Target.RuntimeURL != wrote.Target.RuntimeURL {
		t.Errorf("runtime URL %q, want %q", read.Target.RuntimeURL, wrote.Target.RuntimeURL)
	}
	type part struct {
		Failures      []assert.Failure
		Error         *result.Error
		Confirmations []*result.Confirmation
		Repeat        *result.Repeat
	}
	parts := func(r *result.Result) map[string]part {
		m := map[string]part{}
		for _, c := range r.Cases() {
			a := c.Deciding()
			if a != nil {
				m[c.Name] = part{a.Failures, a.Error, a.Confirmations, c.Repeat}
			}
		}
		return m
	}
	want, got := parts(wrote), parts(read)
	for _, name := range []string{"asks for the party size", "answers opening hours", "recommends a wine"} {
		if !reflect.DeepEqual(got[name], want[name]) {
			t.Errorf("%s read back as\n%s\nwant\n%s", name, mustJSON(got[name]), mustJSON(want[name]))
		}
	}
}

// lineDiff shows the first lines where two documents part.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "lengths differ"
}

// TestReadJSONOlderReports: a turn written before "reply" existed takes
// the reply text from its response body; what is not a report is refused.
func TestReadJSONOlderReports(t *testing.T) {
	doc := `{"schema":"agenttest/result/v1","run":{"status":"passed"},"target":{"name":"sim"},
	"files":[{"path":"a.yaml","suite":"a","cases":[{"name":"c","pos":{},"status":"passed","attempts":[{"number":1,"status":"passed",
	"turns":[{"index":0,"pos":{},"say":"","response":{"response":"Welcome!","conversationEnded":true,"metadata":{"nodeTrace":["Greeting"]}},"metadata":{"nodeTrace":["Greeting"]},"latency_ms":12.5}],
	"confirmations":[{"pos":{},"kind":"conversation","subject":"c1","found":true,"duration_ms":1},{"pos":{},"kind":"webhook","subject":"e","found":false,"duration_ms":1}]}]}]}],"checks":[]}`
	rep, err := ReadJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	turn := rep.Result.Files[0].Cases[0].Attempts[0].Turns[0]
	if r := turn.Reply(); r == nil || r.Response != "Welcome!" || !r.ConversationEnded || r.Meta().CurrentNode() != "" || len(r.Meta().NodeTrace()) != 1 || turn.Latency.Microseconds() != 12500 {
		t.Errorf("turn %+v reply %+v", turn, r)
	}
	if rep.Result.Deployments != nil {
		t.Errorf("deployments %v, want none", rep.Result.Deployments)
	}
	// A confirmation written before "held" existed held when something
	// was found: its line keeps its mark.
	for _, c := range rep.Result.Files[0].Cases[0].Attempts[0].Confirmations {
		if c.Held != c.Found {
			t.Errorf("confirmation %s %s: held %v, want %v (found)", c.Kind, c.Subject, c.Held, c.Found)
		}
	}
	for _, bad := range []string{`{"schema":"agenttest/compare/v1"}`, `[]`, `{"schema":"agenttest/result/v1","files":[{"cases":[{"status":"great"}]}]}`} {
		if _, err := ReadJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: read without error", bad)
		}
	}
}

// clockDurations is a run timed by a real clock: durations in
// nanoseconds, which the report holds to the microsecond. Read back and
// written again (agenttest merge of one report), a file's duration is
// the sum of its cases' as written, and 1.013ms, 1012999.99...ns as a
// float, reads as 1013µs; before, both came out a microsecond or a few
// short.
func clockDurations() *result.Result {
	c := func(line int, d time.Duration) *result.Case {
		return &result.Case{Name: "case " + strconv.Itoa(line), Pos: pos("suites/a.yaml", line, 5), Status: result.Passed, Duration: d,
			Attempts: []*result.Attempt{{Number: 1, Run: 1, Status: result.Passed, Started: t0, Duration: d,
				Turns: []*result.Turn{exchange{index: 1, pos: pos("suites/a.yaml", line+1, 7), say: "hi", text: "hello", conv: "c1",
					started: t0, latency: 1013 * time.Microsecond}.turn()}}}}
	}
	return &result.Result{Started: t0, Duration: 7_654_321 * time.Nanosecond, Target: result.Target{Name: "sim", Embedded: true},
		Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
			c(3, 1_013_600*time.Nanosecond), c(9, 2_000_700*time.Nanosecond), c(15, 3_000_999*time.Nanosecond)}}}}
}

// TestJUnitOfReadJSONAgrees: the JUnit report merge writes from a run's
// JSON report is the one the run wrote, though the JSON keeps durations
// only to the microsecond: a case of 4.500499ms is 0.005 s in both, not
// 0.005 from the clock and 0.004 from the 4.5ms read back (as a float,
// 0.0045 is a hair below it).
func TestJUnitOfReadJSONAgrees(t *testing.T) {
	t.Parallel()
	res := clockDurations()
	res.Files[0].Cases = append(res.Files[0].Cases, func() *result.Case {
		c := clockDurations().Files[0].Cases[0]
		c.Name, c.Duration = "at the rounding edge", 4_500_499*time.Nanosecond
		return c
	}())
	var js, direct, reread bytes.Buffer
	if err := WriteJSON(&js, res, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&direct, res); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&reread, rep.Result); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(direct.String(), `name="at the rounding edge" classname="suites/a.yaml" time="0.005"`) {
		t.Errorf("the case at the rounding edge is not 0.005 s:\n%s", direct.String())
	}
	if direct.String() != reread.String() {
		t.Errorf("the JUnit of the JSON read back differs:\n%s", lineDiff(direct.String(), reread.String()))
	}
}

// TestReadRerun: --rerun-failed runs again the failed and errored cases
// of a report, and the cases its run's interruption or stop left without
// a verdict; never a passing case, nor one its scenario's skip: skipped.
func TestReadRerun(t *testing.T) {
	t.Parallel()
	cases := []*result.Case{
		{Name: "fails", Status: result.Failed},
		{Name: "errors", Status: result.Errored},
		{Name: "passes", Status: result.Passed},
		{Name: "skip written", Status: result.Skipped, SkipReason: "waits on the vendor"},
		{Name: "cut off", Status: result.Pending, SkipReason: result.ReasonInterrupted},
		{Name: "interrupted runs", Status: result.Pending, SkipReason: result.ReasonInterruptedRuns},
		{Name: "after fail-fast", Status: result.Skipped, SkipReason: result.ReasonFailFast},
		{Name: "stopped runs", Status: result.Skipped, SkipReason: result.ReasonStoppedRuns},
		// A merged report keeps one shard's stop; another shard's cases
		// keep the reason of theirs.
		{Name: "other shard", Status: result.Skipped, SkipReason: result.ReasonUnreachable},
		// A stop of a kind this reader does not know gives its own reason.
		{Name: "own reason", Status: result.Skipped, SkipReason: "not run: a new kind of stop"},
	}
	type testCase struct {
		name        string
		interrupted bool
		stop        *result.Stop
		want        []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		res := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Interrupted: tc.interrupted, Stop: tc.stop,
			Files: []*result.File{{Path: "suites/a.yaml", Cases: cases}}}
		var b bytes.Buffer
		if err := WriteJSON(&b, res, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		got, stop, err := ReadRerun(&b)
		if err != nil {
			t.Fatal(err)
		}
		if (stop == nil) != (tc.stop == nil) || stop != nil && *stop != *tc.stop {
			t.Errorf("stop %+v, want %+v", stop, tc.stop)
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name)
			unrun := c.Status != "failed" && c.Status != "errored"
			if c.File != "suites/a.yaml" || c.Unrun != unrun || (c.Reason != "") != unrun {
				t.Errorf("%+v: want file suites/a.yaml, unrun %v with its reason", c, unrun)
			}
			// The cases hold no pos.file: the file is their entry's.
			if from := jsonkind.PathString(c.From); from != "files[0].path" {
				t.Errorf("%s: file read from %s, want files[0].path", c.Name, from)
			}
		}
		if strings.Join(names, ", ") != strings.Join(tc.want, ", ") {
			t.Errorf("rerun %q, want %q", names, tc.want)
		}
	}
	for _, tc := range []testCase{
		// No stop: a skipped case was skipped on purpose, whatever its
		// reason says.
		{name: "finished", want: []string{"fails", "errors", "cut off", "interrupted runs"}},
		{name: "interrupted", interrupted: true, want: []string{"fails", "errors", "cut off", "interrupted runs"}},
		{name: "stopped", stop: &result.Stop{Kind: result.StopCredentials, Reason: result.ReasonCredentials},
			want: []string{"fails", "errors", "cut off", "interrupted runs", "after fail-fast", "stopped runs", "other shard"}},
		{name: "a new kind of stop", stop: &result.Stop{Kind: "new", Reason: "not run: a new kind of stop"},
			want: []string{"fails", "errors", "cut off", "interrupted runs", "after fail-fast", "stopped runs", "other shard", "own reason"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestReadJSONValueErrors: a report whose values decode, but hold what no
// run writes, is refused at the value, with its path: a negative duration,
// or one past what a time.Duration holds (which wrapped around, so that a
// run that ended centuries ahead of the gate's clock read as one that
// ended before it), an unknown status of a case or of the run, a null
// where a case or the run was. Before,
// both durations were read as if valid, and a status was refused without
// a place ("case : unknown status").
func TestReadJSONValueErrors(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// doc holds the bad value; at is the text it starts with,
		// the first time it appears.
		doc, at, want string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		_, err := ReadJSON(strings.NewReader(tc.doc))
		var ve *jsonkind.ValueError
		if !errors.As(err, &ve) {
			t.Fatalf("error %v, want a ValueError", err)
		}
		if got := err.Error(); got != tc.want {
			t.Errorf("error %q, want %q", got, tc.want)
		}
		if want := strings.Index(tc.doc, tc.at); ve.Offset != int64(want) {
			t.Errorf("offset %d (%q), want %d (%q)", ve.Offset, tc.doc[min(ve.Offset, int64(len(tc.doc))):], want, tc.doc[want:])
		}
	}
	const head = `{"schema": "agenttest/result/v1", `
	att := func(members string) string {
		return head + `"files": [{"path": "a.yaml", "cases": [{"name": "c", "status": "passed", "duration_ms": 1,
			"attempts": [{"number": 1, "status": "passed", "duration_ms": 1, ` + members + `}]}]}]}`
	}
	for _, tc := range []testCase{
		{name: "negative run duration", doc: head + `"run": {"status": "passed", "duration_ms": -5000}}`, at: "-5000",
			want: "not a JSON report: run.duration_ms: -5000 is a negative duration"},
		{name: "run duration past a time.Duration", doc: head + `"run": {"duration_ms": 1e16, "status": "passed"}}`, at: "1e16",
			want: "not a JSON report: run.duration_ms: 1e+16 milliseconds is longer than a duration can be (about 292 years)"},
		{name: "pacing wait", doc: head + `"run": {"pacing": {"waited_ms": 3, "max_waited_ms": -1}}}`, at: "-1",
			want: "not a JSON report: run.pacing.max_waited_ms: -1 is a negative duration"},
		{name: "turn latency", doc: att(`"turns": [{"index": 1, "latency_ms": 2}, {"index": 2, "latency_ms": -0.5}]`), at: "-0.5",
			want: "not a JSON report: files[0].cases[0].attempts[0].turns[1].latency_ms: -0.5 is a negative duration"},
		{name: "confirmation", doc: att(`"confirmations": [{"kind": "call", "duration_ms": 1e300}]`), at: "1e300",
			want: "not a JSON report: files[0].cases[0].attempts[0].confirmations[0].duration_ms: 1e+300 milliseconds is longer than a duration can be (about 292 years)"},
		{name: "unknown status of a check", doc: head + `"checks": [{"name": "alert gate", "status": "great"}]}`, at: `"great"`,
			want: `not a JSON report: checks[0].status: unknown status "great"`},
		// The readers work a file's status out again from its cases,
		// but a report holding one no run writes is no run's report.
		{name: "unknown status of a file", doc: head + `"files": [{"path": "a.yaml", "status": "bogus", "cases": [{"name": "c", "status": "passed"}]}]}`, at: `"bogus"`,
			want: `not a JSON report: files[0].status: unknown status "bogus"`},
		{name: "null for a case", doc: head + `"files": [{"path": "a.yaml", "cases": [{"name": "c", "status": "passed"}, null]}]}`, at: "null",
			want: `not a JSON report: files[0].cases[1].status: unknown status ""`},
		// Metadata of a reply no client accepts, which a reader cannot
		// decode: the nodes a comparison and coverage read from it would
		// be read as none.
		{name: "metadata past float64", doc: att(`"turns": [{"index": 1, "reply": "hi", "metadata": {"n": 1e999}}]`), at: `{"n"`,
			want: `not a JSON report: files[0].cases[0].attempts[0].turns[0].metadata: json: cannot unmarshal number 1e999 into Go value of type float64`},
		{name: "bad time of an attempt", doc: att(`"started": "yesterday"`), at: `"yesterday"`,
			want: `not a JSON report: files[0].cases[0].attempts[0].started: "yesterday" is not an RFC 3339 time`},
		// The verdict a report states, which gate weighs: a report
		// without one (its run null, or edited) is no report. Before, gate
		// refused it as a run that "did not pass: its status is " (exit 1).
		{name: "null run", doc: head + `"run": null}`, at: "null",
			want: `not a JSON report: run.status: unknown run status "" (one of passed, failed, errored, interrupted, empty)`},
		{name: "unknown run status", doc: head + `"run": {"status": "green"}}`, at: `"green"`,
			want: `not a JSON report: run.status: unknown run status "green" (one of passed, failed, errored, interrupted, empty)`},
		// A deployment reads itself (result.Deployment): refused at its
		// place, where before its time was refused with no place and a
		// member of the wrong type at its place within the deployment.
		{name: "bad time of a deployment", doc: head + `"run": {"status": "passed"}, "deployments": [{"agent": "a", "id": "d", "read_at": "noon"}]}`, at: `{"agent"`,
			want: `not a JSON report: deployments[0]: deployment of "a": read_at: parsing time "noon" as "2006-01-02T15:04:05.999999999Z07:00": cannot parse "noon" as "2006"`},
		{name: "deployment id of the wrong type", doc: head + `"run": {"status": "passed"}, "deployments": [null, {"agent": "a", "id": 5}]}`, at: `{"agent"`,
			want: `not a JSON report: deployments[1]: id is a JSON number, where a deployment has a string`},
		{name: "deployment not an object", doc: head + `"run": {"status": "passed"}, "deployments": ["dep-1"]}`, at: `"dep-1"`,
			want: `not a JSON report: deployments[0]: a JSON string, where a deployment is an object`},
		// A shard no run deals (an edited report): merge took 3/2 for
		// a shard and said shard 2/2 was missing, and a lone shard of
		// "1/0" for the whole run, which then passed.
		{name: "shard past its total", doc: head + `"run": {"status": "passed"}, "shard": {"index": 3, "total": 2, "selection": "s"}}`, at: "3,",
			want: "not a JSON report: shard.index: shard 3 of 2: want 1 <= index <= total"},
		{name: "shard 0", doc: head + `"run": {"status": "passed"}, "shard": {"index": 0, "total": 2}}`, at: "0,",
			want: "not a JSON report: shard.index: shard 0 of 2: want 1 <= index <= total"},
		{name: "negative shard", doc: head + `"run": {"status": "passed"}, "shard": {"index": -1, "total": 2}}`, at: "-1",
			want: "not a JSON report: shard.index: shard -1 of 2: want 1 <= index <= total"},
		{name: "no shards", doc: head + `"run": {"status": "passed"}, "shard": {"index": 1, "total": 0}}`, at: "0}",
			want: "not a JSON report: shard.total: 0 shards: a selection is dealt into 1 or more"},
		{name: "negative total", doc: head + `"run": {"status": "passed"}, "shard": {"total": -2, "index": 1}}`, at: "-2",
			want: "not a JSON report: shard.total: -2 shards: a selection is dealt into 1 or more"},
		{name: "negative selected", doc: head + `"run": {"status": "passed"}, "shard": {"index": 1, "total": 1, "selected": -4}}`, at: "-4",
			want: "not a JSON report: shard.selected: -4 scenarios selected"},
		// A member given twice is read from its last occurrence, and
		// refused there.
		{name: "duplicate member", doc: head + `"run": {"duration_ms": 1, "duration_ms": -2}}`, at: "-2",
			want: "not a JSON report: run.duration_ms: -2 is a negative duration"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestReadJSONFailedCalls: a call the client refused keeps its body in
// the transcript, and a report read back keeps it refused, however much
// the body looks like a reply: the platform answered about another
// conversation, which is never a reply to check, or with metadata no
// reader can decode (a number past float64). Before, ReadJSON read such
// a body as the reply (a report that stated a reply the run refused, and
// whose nodes coverage counted), or refused the whole report, which
// merge, gate, compare and --rerun-failed then could not read.
func TestReadJSONFailedCalls(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
			Cases: []*result.Case{{Name: "c", Pos: pos("a.yaml", 3, 5), Status: result.Errored, Attempts: []*result.Attempt{{
				Number: 1, Status: result.Errored, Started: t0, Error: &result.Error{Pos: pos("a.yaml", 4, 7), Kind: result.KindHTTP, Message: "refused"},
				Turns: []*result.Turn{{Index: 1, Pos: pos("a.yaml", 4, 7), Say: "hi", Response: json.RawMessage(tc.body)}},
			}}}}}}}
		var first, second bytes.Buffer
		if err := WriteJSON(&first, r, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		rep, err := ReadJSON(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("the report of a refused call is not read back: %v", err)
		}
		if got := rep.Result.Files[0].Cases[0].Attempts[0].Turns[0].Reply(); got != nil {
			t.Errorf("the refused call reads back as the reply %q", got.Response)
		}
		if err := WriteJSON(&second, rep.Result, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		if first.String() != second.String() {
			t.Errorf("written again, the report differs:\n%s", lineDiff(first.String(), second.String()))
		}
	}
	for _, tc := range []testCase{
		{name: "another conversation", body: `{"conversationId":"someone-else","userInput":"hi","response":"Your card ends in 4242",` +
			`"metadata":{"currentNode":"Billing"},"conversationEnded":false,"delayedResponse":false}`},
		{name: "metadata past float64", body: `{"conversationId":"c1","userInput":"hi","response":"hello",` +
			`"metadata":{"n":1e999},"conversationEnded":false,"delayedResponse":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestReadJSONMetadataNotAnObject: a reply whose metadata was not an
// object (a platform's bug, kept as received) reads back without it,
// rather than making the whole report unreadable.
func TestReadJSONMetadataNotAnObject(t *testing.T) {
	t.Parallel()
	tr := &reply.TurnResult{ConversationID: "c1", Response: "hello", RawMetadata: json.RawMessage(`[1]`)}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
		Cases: []*result.Case{{Name: "c", Pos: pos("a.yaml", 3, 5), Status: result.Passed, Attempts: []*result.Attempt{{
			Number: 1, Status: result.Passed, Started: t0,
			Turns: []*result.Turn{{Index: 1, Pos: pos("a.yaml", 4, 7), Say: "hi", Result: tr}},
		}}}}}}}
	var b bytes.Buffer
	if err := WriteJSON(&b, r, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatalf("not read back: %v", err)
	}
	if got := rep.Result.Files[0].Cases[0].Attempts[0].Turns[0].Reply(); got == nil || got.Response != "hello" {
		t.Errorf("reply read back as %+v, want hello", got)
	}
}
