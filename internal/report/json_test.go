package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/result"
)

func TestJSONSchema(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, fixture(), JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema string `json:"schema"`
		Run    struct {
			DurationMS  float64 `json:"duration_ms"`
			Interrupted bool    `json:"interrupted"`
			Status      string  `json:"status"`
			Pacing      struct {
				Limited      int     `json:"limited"`
				Accepted     int     `json:"accepted"`
				AcceptedPerS float64 `json:"accepted_per_s"`
				WaitedMS     float64 `json:"waited_ms"`
				MaxWaitedMS  float64 `json:"max_waited_ms"`
			} `json:"pacing"`
		} `json:"run"`
		Counts map[string]int `json:"counts"`
		Files  []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
			Cases  []struct {
				Name         string  `json:"name"`
				Status       string  `json:"status"`
				RateLimited  int     `json:"rate_limited"`
				RateWaitedMS float64 `json:"rate_waited_ms"`
				Attempts     []struct {
					Status   string            `json:"status"`
					Failures []json.RawMessage `json:"failures"`
					Error    *struct {
						Kind string `json:"kind"`
					} `json:"error"`
					Turns []struct {
						Request   json.RawMessage `json:"request"`
						Response  json.RawMessage `json:"response"`
						Metadata  json.RawMessage `json:"metadata"`
						LatencyMS float64         `json:"latency_ms"`
					} `json:"turns"`
				} `json:"attempts"`
			} `json:"cases"`
		} `json:"files"`
		Checks []json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if doc.Schema != SchemaV1 || doc.Run.DurationMS != 3210 || !doc.Run.Interrupted || doc.Run.Status != "interrupted" {
		t.Errorf("run = %+v schema %q", doc.Run, doc.Schema)
	}
	wantCounts := map[string]int{"total": 14, "passed": 5, "flaky": 1, "failed": 4, "errored": 1, "skipped": 1, "pending": 2}
	for k, v := range wantCounts {
		if doc.Counts[k] != v {
			t.Errorf("counts[%s] = %d, want %d", k, doc.Counts[k], v)
		}
	}
	if len(doc.Files) != 4 || doc.Files[1].Path != "suites/special.yaml" || len(doc.Checks) != 1 {
		t.Fatalf("files/checks out of shape: %d files, %d checks", len(doc.Files), len(doc.Checks))
	}
	// The file the interruption never reached says so, where the one it
	// cut short keeps the verdict of what ran.
	var statuses []string
	for _, f := range doc.Files {
		statuses = append(statuses, f.Path+" "+f.Status)
	}
	if got, want := strings.Join(statuses, ", "), "suites/restaurant.yaml errored, suites/special.yaml failed, features/handoff.feature passed, suites/billing.yaml pending"; got != want {
		t.Errorf("file statuses = %s\nwant %s", got, want)
	}
	if p := doc.Run.Pacing; p.Limited != 3 || p.Accepted != 42 || p.AcceptedPerS != 13.084 || p.WaitedMS != 2500 || p.MaxWaitedMS != 2000 {
		t.Errorf("run pacing = %+v", p)
	}
	if party := doc.Files[0].Cases[1]; party.RateLimited != 3 || party.RateWaitedMS != 2000 {
		t.Errorf("case pacing = %d, %v ms", party.RateLimited, party.RateWaitedMS)
	}
	books := doc.Files[0].Cases[0]
	turn := books.Attempts[0].Turns[1]
	var req map[string]any
	if err := json.Unmarshal(turn.Request, &req); err != nil || req["userInput"] != "A table for four tonight, please" {
		t.Errorf("request not embedded as an object: %s", turn.Request)
	}
	// The metadata is stored once, in the response it came in.
	var resp struct {
		Metadata map[string]any `json:"metadata"`
	}
	if err := json.Unmarshal(turn.Response, &resp); err != nil || resp.Metadata["currentNode"] != "confirm" || string(turn.Metadata) != "null" {
		t.Errorf("metadata not stored once in the response: response %s, metadata %s", turn.Response, turn.Metadata)
	}
	if turn.LatencyMS != 540 {
		t.Errorf("latency_ms = %v, want 540", turn.LatencyMS)
	}
	slow := doc.Files[0].Cases[4]
	if len(slow.Attempts) != 3 || slow.Attempts[2].Error == nil || slow.Attempts[2].Error.Kind != "timeout" {
		t.Errorf("errored case attempts = %+v", slow.Attempts)
	}
	if got := string(slow.Attempts[2].Turns[1].Response); got != "null" {
		t.Errorf("failed call response = %s, want null", got)
	}
	weird := doc.Files[1].Cases[0]
	var s string
	if err := json.Unmarshal(weird.Attempts[0].Turns[0].Response, &s); err != nil || s != "<html>502 Bad Gateway</html>" {
		t.Errorf("a non-JSON body is not embedded as a string: %s", weird.Attempts[0].Turns[0].Response)
	}
}

func TestSummarize(t *testing.T) {
	r := fixture()
	s := Summarize(r)
	want := Summary{Total: 14, Passed: 5, Flaky: 1, Failed: 4, Errored: 1, Skipped: 1, Pending: 2, Checks: 1,
		Status: result.Errored, Duration: r.Duration, Interrupted: true}
	if s != want {
		t.Errorf("Summarize = %+v, want %+v", s, want)
	}
	c := Counts(r)
	if c[result.Passed] != 5 || c[result.Failed] != 4 || c[result.Pending] != 2 || len(c) != 6 {
		t.Errorf("Counts = %v", c)
	}
	if got := Summarize(&result.Result{}); got.Total != 0 || got.Status != result.Pending {
		t.Errorf("empty Summarize = %+v", got)
	}
}

// TestSummarizeQuarantine: a case under a quarantine that holds counts
// as quarantined alone, whatever it did once it ran, passed included; one
// that did not run counts as skipped or pending; a lapsed quarantine
// counts by the case's outcome again, and gates the run.
func TestSummarizeQuarantine(t *testing.T) {
	t.Parallel()
	f := &result.File{Path: "a.yaml"}
	for _, st := range []result.Status{result.Passed, result.Flaky, result.Failed, result.Errored, result.Skipped, result.Pending} {
		f.Cases = append(f.Cases, &result.Case{Name: st.String(), Status: st, Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}})
	}
	f.Cases = append(f.Cases, &result.Case{Name: "lapsed", Status: result.Failed, Quarantine: &result.Quarantine{Reason: "r", Until: "2026-03-01", Lapsed: true}})
	got := Summarize(&result.Result{Files: []*result.File{f}})
	want := Summary{Total: 7, Quarantined: 4, Skipped: 1, Pending: 1, Failed: 1, Lapsed: 1, Status: result.Failed}
	if got != want {
		t.Errorf("Summarize = %+v, want %+v", got, want)
	}
}

// TestJSONOfReleasedReplies: a large run keeps only the bodies of its
// passing replies (result.Turn.Release); the JSON report reads them again
// and must come out byte for byte the same.
func TestJSONOfReleasedReplies(t *testing.T) {
	var kept, lean bytes.Buffer
	if err := WriteJSON(&kept, fixture(), JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	r, released := fixture(), 0
	for _, f := range r.Files {
		for _, c := range f.Cases {
			if c.Status != result.Passed {
				continue
			}
			for _, a := range c.Attempts {
				for _, tr := range a.Turns {
					if tr.Result != nil {
						tr.Release()
						released++
					}
				}
			}
		}
	}
	if released == 0 {
		t.Fatal("the fixture has no passing reply to release")
	}
	if err := WriteJSON(&lean, r, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	if kept.String() != lean.String() {
		t.Errorf("releasing %d replies changed the JSON report:\n%s\nwant\n%s", released, lean.String(), kept.String())
	}
}

// TestJSONBodiesUTF8: a body is embedded as received, but a hostile or
// broken server's strings may hold bytes that are not UTF-8 or escaped
// lone surrogates, which json.Valid accepts. The report stays UTF-8 and
// free of lone surrogates (jq refused the whole report: "Invalid
// \uXXXX\uXXXX surrogate pair escape"), and a reader decodes the same
// text from the embedded body as from the body received.
func TestJSONBodiesUTF8(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body string
		want       string // the response member as embedded
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "a.yaml", Suite: "a",
			Cases: []*result.Case{{Name: "c", Pos: pos("a.yaml", 3, 5), Status: result.Failed, Attempts: []*result.Attempt{{
				Number: 1, Status: result.Failed, Started: t0,
				Turns: []*result.Turn{{Index: 1, Say: "hi", Response: json.RawMessage(tc.body)}},
			}}}}}}}
		var b bytes.Buffer
		if err := WriteJSON(&b, r, JSONOptions{}); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b.Bytes()) {
			t.Errorf("the report is not UTF-8:\n%q", b.String())
		}
		var doc struct {
			Files []struct {
				Cases []struct {
					Attempts []struct {
						Turns []struct {
							Response json.RawMessage `json:"response"`
						} `json:"turns"`
					} `json:"attempts"`
				} `json:"cases"`
			} `json:"files"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		got := doc.Files[0].Cases[0].Attempts[0].Turns[0].Response
		if string(got) != tc.want {
			t.Errorf("response embedded as\n%s\nwant\n%s", got, tc.want)
		}
		if !json.Valid([]byte(tc.body)) {
			return // embedded as a string of its text
		}
		var sent, read any
		if err := json.Unmarshal([]byte(tc.body), &sent); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &read); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sent, read) {
			t.Errorf("the embedded body reads %#v, the body received %#v", read, sent)
		}
	}
	for _, tc := range []testCase{
		{name: "clean", body: `{"response":"caf\u00e9 ☕ \ud83d\ude00"}`, want: `{"response":"caf\u00e9 ☕ \ud83d\ude00"}`},
		{name: "escaped backslash before u", body: `{"response":"\\ud800"}`, want: `{"response":"\\ud800"}`},
		{name: "escaped backslash before hex", body: `{"response":"\\d800"}`, want: `{"response":"\\d800"}`},
		{name: "lone surrogate after an escape", body: `{"response":"\n\ud800"}`, want: `{"response":"\n\ufffd"}`},
		{name: "byte not UTF-8", body: "{\"response\":\"a\xffb\xc3(\"}", want: `{"response":"a\ufffdb\ufffd("}`},
		{name: "truncated rune", body: "{\"response\":\"\xe2\x98\"}", want: `{"response":"\ufffd\ufffd"}`},
		{name: "byte not UTF-8 in a key", body: "{\"k\xff\":1}", want: `{"k\ufffd":1}`},
		{name: "lone high surrogate", body: `{"response":"a\ud800b"}`, want: `{"response":"a\ufffdb"}`},
		{name: "lone low surrogate", body: `{"response":"\uDFFF"}`, want: `{"response":"\ufffd"}`},
		{name: "high then not low", body: `{"response":"\ud83d\u0041"}`, want: `{"response":"\ufffd\u0041"}`},
		{name: "high then text like an escape", body: `{"response":"\ud83dxude00"}`, want: `{"response":"\ufffdxude00"}`},
		{name: "pair reversed", body: `{"response":"\ude00\ud83d"}`, want: `{"response":"\ufffd\ufffd"}`},
		{name: "high at the end", body: `["\ud83d"]`, want: `["\ufffd"]`},
		{name: "not JSON", body: "<html>\xff</html>", want: `"\u003chtml\u003e\ufffd\u003c/html\u003e"`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestJSONUnencodable: a value JSON cannot hold (a NaN pass rate, from
// a report built by hand) is an error of WriteJSON, not a panic; the
// stream's depth went negative when the object it failed to encode was
// closed.
func TestJSONUnencodable(t *testing.T) {
	t.Parallel()
	r := fixture()
	r.Files[0].Cases[0].Repeat = &result.Repeat{Procedure: result.ProcedureSPRT, PassRate: math.NaN()}
	err := WriteJSON(io.Discard, r, JSONOptions{})
	if err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("WriteJSON = %v, want an error naming the NaN", err)
	}
}

// TestJSONArraysPresent: SchemaV1 says arrays are always present, so
// that jq's .attempts[].confirmations[] does not stop at the first
// attempt without one ("Cannot iterate over null"); confirmations was
// left out when empty.
func TestJSONArraysPresent(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteJSON(&b, fixture(), JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Cases []map[string]json.RawMessage `json:"cases"`
		} `json:"files"`
		Checks []map[string]json.RawMessage `json:"checks"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	cases := doc.Checks
	for _, f := range doc.Files {
		cases = append(cases, f.Cases...)
	}
	attempts := 0
	for _, c := range cases {
		if !bytes.HasPrefix(c["tags"], []byte("[")) {
			t.Errorf("case %s: tags is %s", c["name"], c["tags"])
		}
		var as []map[string]json.RawMessage
		if err := json.Unmarshal(c["attempts"], &as); err != nil || as == nil {
			t.Errorf("case %s: attempts is %s", c["name"], c["attempts"])
		}
		for _, a := range as {
			attempts++
			for _, key := range []string{"failures", "confirmations", "turns"} {
				if !bytes.HasPrefix(a[key], []byte("[")) {
					t.Errorf("case %s attempt %s: %s is %q, want an array", c["name"], a["number"], key, a[key])
				}
			}
		}
	}
	if attempts == 0 {
		t.Fatal("no attempt in the fixture's report")
	}
}
