package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
)

func TestBuild(t *testing.T) {
	type testCase struct {
		name      string
		verdicts  []Verdict
		flips     int
		regressed bool
		passedIn  int
		failedIn  int
	}
	cases := []testCase{
		{name: "steady", verdicts: []Verdict{VerdictPassed, VerdictPassed, VerdictFlaky}},
		{name: "broke", verdicts: []Verdict{VerdictPassed, VerdictFailed}, flips: 1, regressed: true, passedIn: 0, failedIn: 1},
		{name: "broke through an error", verdicts: []Verdict{VerdictPassed, VerdictErrored, VerdictNone, VerdictInconclusive}, flips: 1, regressed: true, passedIn: 0, failedIn: 3},
		{name: "flapping, fixed", verdicts: []Verdict{VerdictFailed, VerdictPassed, VerdictFailed, VerdictPassed}, flips: 3},
		{name: "always failing", verdicts: []Verdict{VerdictFailed, VerdictFailed}},
		{name: "still failing", verdicts: []Verdict{VerdictPassed, VerdictPassed, VerdictFailed, VerdictErrored, VerdictFailed}, flips: 1, regressed: true, passedIn: 1, failedIn: 2},
		{name: "broke again", verdicts: []Verdict{VerdictPassed, VerdictFailed, VerdictPassed, VerdictFailed}, flips: 3, regressed: true, passedIn: 2, failedIn: 3},
		{name: "errors are not flips", verdicts: []Verdict{VerdictPassed, VerdictErrored, VerdictPassed}},
		// A pass on a retry is a pass: failing after it is a regression.
		{name: "flaky, then failed", verdicts: []Verdict{VerdictFlaky, VerdictFailed}, flips: 1, regressed: true, passedIn: 0, failedIn: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reports []*Report
			for _, v := range tc.verdicts {
				r := &Report{}
				if v != VerdictNone {
					r.Cases = []Case{{File: "a.yaml", Name: "x", Verdict: v, Passed: 1}}
				}
				reports = append(reports, r)
			}
			h := Build(reports)
			s := h.Scenarios[0]
			if s.Flips != tc.flips || s.Regressed != tc.regressed || tc.regressed && (s.PassedIn != tc.passedIn || s.FailedIn != tc.failedIn) {
				t.Errorf("flips %d regressed %t (%d→%d); want %d %t (%d→%d)", s.Flips, s.Regressed, s.PassedIn, s.FailedIn, tc.flips, tc.regressed, tc.passedIn, tc.failedIn)
			}
			if got := len(h.Regressions()); got != map[bool]int{false: 0, true: 1}[tc.regressed] {
				t.Errorf("%d regressions listed, want it listed only when it regressed", got)
			}
		})
	}
}

// TestBuildSameNameTwice: a name twice in one file of one report keeps
// the worse verdict, whichever comes first: a passing one does not hide
// the other's failure.
func TestBuildSameNameTwice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		twice  [2]Verdict
		want   Verdict
		before Verdict // the verdict of the report before, which regressed when want is a failure
	}{
		{"passed, then failed", [2]Verdict{VerdictPassed, VerdictFailed}, VerdictFailed, VerdictPassed},
		{"failed, then passed", [2]Verdict{VerdictFailed, VerdictPassed}, VerdictFailed, VerdictPassed},
		{"flaky, then inconclusive", [2]Verdict{VerdictFlaky, VerdictInconclusive}, VerdictInconclusive, VerdictPassed},
		{"passed, then errored", [2]Verdict{VerdictPassed, VerdictErrored}, VerdictErrored, VerdictPassed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := Build([]*Report{{Cases: []Case{{File: "a.yaml", Name: "x", Verdict: tc.before}}},
				{Cases: []Case{{File: "a.yaml", Name: "x", Verdict: tc.twice[0]}, {File: "a.yaml", Name: "x", Verdict: tc.twice[1]}}}})
			s := h.Scenarios[0]
			if len(h.Scenarios) != 1 || s.Verdicts[1] != tc.want || s.Regressed != (tc.want.side() < 0) {
				t.Errorf("verdicts %v, regressed %v: want %s in the second report", s.Verdicts, s.Regressed, tc.want)
			}
		})
	}
}

// TestBuildSameNameTwiceMarks: a name twice in one report keeps what
// either case says of it, whichever comes first: a quarantine that held,
// a pass only on a retry after failing, runs that went both ways.
func TestBuildSameNameTwiceMarks(t *testing.T) {
	t.Parallel()
	marked := Case{File: "a.yaml", Name: "x", Verdict: VerdictFlaky, Quarantined: true, Passed: 1, Failed: 1}
	plain := Case{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}
	for _, order := range [][]Case{{marked, plain}, {plain, marked}} {
		s := Build([]*Report{{Cases: order}}).Scenarios[0]
		if !s.Quarantined[0] || !s.Retried[0] || !s.Mixed[0] {
			t.Errorf("%s then %s: quarantined %t, retried %t, mixed %t; want all three", order[0].Verdict, order[1].Verdict, s.Quarantined[0], s.Retried[0], s.Mixed[0])
		}
	}
}

// TestKept: the reports whose run could not say whether the agent is
// fine, errored or interrupted, are listed as kept from a verdict.
func TestKept(t *testing.T) {
	t.Parallel()
	var reports []*Report
	for i, st := range []string{"passed", "errored", "failed", "interrupted", "empty"} {
		reports = append(reports, &Report{Path: st + ".json", Started: fmt.Sprintf("2026-03-0%dT00:00:00Z", i+1), Status: st})
	}
	// --fail-fast stopped the run at a failure: the agent's night, though
	// the run could not judge every case.
	reports[2].Causes = []string{"stopped: --fail-fast after the first failed or errored case"}
	h := Build(reports)
	if got := h.Kept(); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("kept %v, want the errored and the interrupted report", got)
	}
	var b bytes.Buffer
	if err := WriteText(&b, h); err != nil {
		t.Fatal(err)
	}
	if want := "kept from a verdict on the agent (the platform, the network or the run, not the agent): 2 of 5 reports: 2, 4\n"; !strings.Contains(b.String(), want) {
		t.Errorf("history lacks %q:\n%s", want, b.String())
	}
}

// TestBuildOrdersByStart: reports named newest first (a glob sorts by
// name, not time) are read in the order of their runs, so a scenario that
// passed in the earlier run and failed in the later one regressed; when a
// start is missing, the order given stands.
func TestBuildOrdersByStart(t *testing.T) {
	rep := func(path, started string, v Verdict) *Report {
		return &Report{Path: path, Started: started, Cases: []Case{{File: "a.yaml", Name: "x", Verdict: v, Passed: 1}}}
	}
	newer := rep("run-10.json", "2026-03-10T02:00:00.5Z", VerdictFailed)
	older := rep("run-9.json", "2026-03-09T02:00:00Z", VerdictPassed)
	h := Build([]*Report{newer, older})
	if h.Reports[0] != older || h.Reports[1] != newer {
		t.Errorf("reports in order %s, %s; want run-9.json first", h.Reports[0].Path, h.Reports[1].Path)
	}
	if s := h.Scenarios[0]; !s.Regressed || s.Verdicts[0] != VerdictPassed || s.Verdicts[1] != VerdictFailed {
		t.Errorf("verdicts %v, regressed %t; want passed then failed, regressed", s.Verdicts, s.Regressed)
	}
	if h.Undated != nil {
		t.Errorf("Undated %s, want none", h.Undated.Path)
	}
	undated := rep("old.json", "", VerdictPassed)
	h = Build([]*Report{newer, undated, rep("older.json", "", VerdictPassed)})
	if h.Reports[0] != newer {
		t.Errorf("with a report without a start, the order given changed: %s first", h.Reports[0].Path)
	}
	if h.Undated != undated {
		t.Errorf("Undated %v, want old.json", h.Undated)
	}
	// Starts are times, not text: an offset or a fraction of a second
	// orders by the instant.
	east := rep("east.json", "2026-03-10T03:30:00+02:00", VerdictPassed) // 01:30Z
	frac := rep("frac.json", "2026-03-10T01:45:00.5Z", VerdictPassed)
	whole := rep("whole.json", "2026-03-10T01:45:00Z", VerdictPassed)
	if h := Build([]*Report{newer, frac, whole, east}); !slices.Equal(h.Reports, []*Report{east, whole, frac, newer}) {
		var got []string
		for _, r := range h.Reports {
			got = append(got, r.Path)
		}
		t.Errorf("order %v, want east, whole, frac, run-10", got)
	}
	// Runs that started together (two targets of one nightly job) stay
	// as given, however many there are.
	var ties []*Report
	for i := range 40 {
		ties = append(ties, rep(fmt.Sprintf("t%d.json", i), "2026-03-01T02:00:00Z", VerdictPassed))
	}
	if h := Build(append([]*Report{newer}, ties...)); !slices.Equal(h.Reports, append(ties, newer)) {
		t.Errorf("reports that started together were reordered")
	}
}

// TestWriteTextOrder: the first line says in which order the reports
// are: oldest first, or, when one records no start, as given, naming it.
// Before, it said "oldest first" of reports kept in the order given.
func TestWriteTextOrder(t *testing.T) {
	t.Parallel()
	rep := func(path, started string) *Report {
		return &Report{Path: path, Started: started, Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}}}
	}
	for _, tc := range []struct {
		name    string
		reports []*Report
		want    string
	}{
		{"dated", []*Report{rep("b.json", "2026-03-02T00:00:00Z"), rep("a.json", "2026-03-01T00:00:00Z")}, "2 reports, oldest first:\n  1  a.json  "},
		{"one undated", []*Report{rep("b.json", "2026-03-02T00:00:00Z"), rep("a\x1b.json", "")},
			"2 reports, in the order given (a\\x1b.json records no start):\n  1  b.json  "},
		{"alone", []*Report{rep("a.json", "")}, "1 report, oldest first:\n"},
	} {
		var b bytes.Buffer
		if err := WriteText(&b, Build(tc.reports)); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), tc.want) {
			t.Errorf("%s: history starts\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
}

// TestWriteTextQuarantined: a scenario says in how many of the reports
// it was under a quarantine that held, beside its name.
func TestWriteTextQuarantined(t *testing.T) {
	t.Parallel()
	rep := func(started string, quarantined bool) *Report {
		return &Report{Path: started + ".json", Started: started, Cases: []Case{
			{File: "a.yaml", Name: "x", Verdict: VerdictFailed, Failed: 1, Quarantined: quarantined},
			{File: "a.yaml", Name: "y", Verdict: VerdictPassed, Passed: 1}}}
	}
	var b bytes.Buffer
	if err := WriteText(&b, Build([]*Report{rep("2026-03-01T00:00:00Z", true), rep("2026-03-02T00:00:00Z", false), rep("2026-03-03T00:00:00Z", true)})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "a.yaml: x (quarantined in 2)\n") || strings.Contains(b.String(), "a.yaml: y (") {
		t.Errorf("history lacks x quarantined in 2 reports, y in none:\n%s", b.String())
	}
	b.Reset()
	if err := WriteText(&b, Build([]*Report{rep("2026-03-01T00:00:00Z", true)})); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "a.yaml: x (quarantined in 1)\n") {
		t.Errorf("history lacks x quarantined in 1 report:\n%s", b.String())
	}
}

// TestReadRefusesWhatReportsRefuse: a report whose start is no time, or
// whose run, case or attempt states a status no run writes, is refused
// by Read as report.ReadJSON (gate, merge) refuses it, in the same words
// at the same place. Before, history read a start that did not parse as
// none (and kept the order given, still saying "oldest first"), a run
// without a status as one, and a case of an unknown status, or a null
// case, as a case that did not run.
func TestReadRefusesWhatReportsRefuse(t *testing.T) {
	t.Parallel()
	const head = `{"schema": "agenttest/result/v1", `
	cases := func(cs string) string {
		return head + `"run": {"started": "2026-03-01T00:00:00Z", "status": "failed"}, "files": [{"path": "a.yaml", "cases": [` + cs + `]}]}`
	}
	for _, tc := range []struct{ name, doc, at string }{
		{"a start that is no time", head + `"run": {"started": "last night", "status": "passed"}}`, `"last night"`},
		{"a start without its zone", head + `"run": {"started": "2026-03-01T00:00:00", "status": "passed"}}`, `"2026-03-01T00:00:00"`},
		{"a run without a status", head + `"run": {"started": "2026-03-01T00:00:00Z"}}`, `{"started"`},
		{"a null run", head + `"run": null}`, "null"},
		{"a run status no run writes", head + `"run": {"status": "green"}}`, `"green"`},
		{"a case status no run writes", cases(`{"name": "x", "status": "passed"}, {"name": "y", "status": "great"}`), `"great"`},
		{"a null case", cases(`{"name": "x", "status": "passed"}, null`), "null"},
		{"an attempt status no run writes", cases(`{"name": "x", "status": "failed", "attempts": [{"status": "failed"}, {"status": "FAILED"}]}`), `"FAILED"`},
		{"a shard no run deals", head + `"run": {"status": "passed"}, "shard": {"index": 3, "total": 2}}`, "3,"},
		{"no shards", head + `"run": {"status": "passed"}, "shard": {"index": 1, "total": 0}}`, "0}"},
		{"a check's status", head + `"run": {"status": "failed"}, "checks": [{"name": "alert gate", "status": ""}]}`, `""}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Read("n.json", []byte(tc.doc))
			_, want := report.ReadJSON(strings.NewReader(tc.doc))
			if err == nil || want == nil {
				t.Fatalf("history: %v; report.ReadJSON: %v; want both to refuse it", err, want)
			}
			if got := strings.TrimPrefix(err.Error(), "n.json: "); got != want.Error() {
				t.Errorf("history: %s\nwant:    %s", got, want)
			}
			var ve *jsonkind.ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a ValueError", err)
			}
			if at := strings.Index(tc.doc, tc.at); ve.Offset != int64(at) {
				t.Errorf("offset %d (%q), want %d (%q)", ve.Offset, tc.doc[min(ve.Offset, int64(len(tc.doc))):], at, tc.doc[at:])
			}
		})
	}
}

// TestReadMatchesByFileAndName reads two reports in which a scenario moved
// down its file and another was renamed.
func TestReadMatchesByFileAndName(t *testing.T) {
	doc := func(started string, cases string) []byte {
		return []byte(`{"schema": "agenttest/result/v1", "run": {"started": "` + started + `", "status": "failed"},
			"files": [{"path": "suites/a.yaml", "cases": [` + cases + `]}], "checks": []}`)
	}
	r1, err := Read("r1.json", doc("2026-03-01T00:00:00Z",
		`{"name": "greets", "pos": {"line": 3}, "status": "passed", "attempts": [{"status": "passed"}]},
		 {"name": "books", "pos": {"line": 9}, "status": "passed",
		  "repeat": {"procedure": "sprt", "decision": "passed", "runs": 28, "passed": 26, "failed": 0, "errored": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Read("r2.json", doc("2026-03-02T00:00:00Z",
		`{"name": "greets warmly", "pos": {"line": 3}, "status": "passed", "attempts": [{"status": "passed"}]},
		 {"name": "books", "pos": {"line": 12}, "status": "failed",
		  "repeat": {"procedure": "sprt", "decision": "inconclusive", "runs": 10, "passed": 9, "failed": 1, "errored": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := Build([]*Report{r1, r2})
	if len(h.Scenarios) != 3 {
		t.Fatalf("%d scenarios, want greets, books and greets warmly", len(h.Scenarios))
	}
	books := h.Scenarios[1]
	if books.Name != "books" || books.Passed != 35 || books.Failed != 1 || books.Errored != 2 || !books.Regressed ||
		books.Verdicts[1] != VerdictInconclusive {
		t.Errorf("books: %+v", books)
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"36 +2E", "0.97", "✓?", "went from passing to failing (1):", "suites/a.yaml: books: passed in report 1, inconclusive in report 2", "·✓"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteJSON(&js, h); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Schema    string `json:"schema"`
		Scenarios []struct {
			Name     string    `json:"name"`
			Verdicts []*string `json:"verdicts"`
			PassRate *float64  `json:"pass_rate"`
		} `json:"scenarios"`
		Regressed []struct {
			Name     string `json:"name"`
			FailedIn int    `json:"failed_in"`
		} `json:"regressed"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Schema != SchemaV1 || len(back.Scenarios) != 3 || back.Scenarios[2].Verdicts[0] != nil || len(back.Regressed) != 1 || back.Regressed[0].FailedIn != 1 {
		t.Errorf("JSON history: %s", js.String())
	}
	if _, err := Read("x.json", []byte(`{"schema": "other"}`)); err == nil || !strings.Contains(err.Error(), `x.json: not an agenttest JSON report (schema "other"`) {
		t.Errorf("wrong schema: %v", err)
	}
	if _, err := Read("x.json", []byte(`<xml/>`)); err == nil || !strings.Contains(err.Error(), "x.json: not a JSON report") {
		t.Errorf("not JSON: %v", err)
	}
}

// TestReadRepeatCounts: a repeated scenario counts its runs as its
// repeat says, not its attempts a second time; a report from before "failed" was written counts as failed
// every run that neither passed nor errored.
func TestReadRepeatCounts(t *testing.T) {
	for _, tc := range []struct {
		name, repeat            string
		passed, failed, errored int
	}{
		{"failed written", `"runs": 10, "passed": 7, "failed": 2, "errored": 1`, 7, 2, 1},
		{"failed not written", `"runs": 10, "passed": 7, "errored": 1`, 7, 2, 1},
		{"failed not written, none errored", `"runs": 10, "passed": 7`, 7, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Read("r.json", []byte(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-01T00:00:00Z", "status": "failed"},
				"files": [{"path": "suites/a.yaml", "cases": [{"name": "books", "status": "failed",
				  "repeat": {"procedure": "sprt", "decision": "failed", `+tc.repeat+`},
				  "attempts": [{"run": 1, "status": "passed"}, {"run": 2, "status": "failed"}, {"run": 3, "status": "errored"}]}]}], "checks": []}`))
			if err != nil {
				t.Fatal(err)
			}
			if c := r.Cases[0]; c.Passed != tc.passed || c.Failed != tc.failed || c.Errored != tc.errored {
				t.Errorf("books %+v, want %d passed, %d failed, %d errored", c, tc.passed, tc.failed, tc.errored)
			}
		})
	}
}

// TestWriteTextEscapes: report files are anyone's; a control character in
// a path, status or case name does not reach the terminal raw.
func TestWriteTextEscapes(t *testing.T) {
	t.Parallel()
	const evil = "\x1b[2J\rgate: passed\u202e"
	h := Build([]*Report{
		{Path: "a.json" + evil, Status: "passed" + evil, Cases: []Case{{File: "a.yaml" + evil, Name: "books" + evil, Verdict: VerdictPassed, Passed: 1}}},
		{Path: "b.json", Cases: []Case{{File: "a.yaml" + evil, Name: "books" + evil, Verdict: VerdictFailed, Failed: 1}}},
	})
	var b bytes.Buffer
	if err := WriteText(&b, h); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if i := strings.IndexAny(out, "\x1b\r\u202e"); i >= 0 {
		t.Errorf("a control character reaches the terminal: %q", out[max(0, i-30):min(len(out), i+30)])
	}
	if n := strings.Count(out, `books\x1b[2J\rgate: passed\u202e`); n != 2 {
		t.Errorf("the name is shown escaped %d times, want 2 (the table and the regressions):\n%s", n, out)
	}
}

// TestReportSummary reads what a report line says after its status, and
// the marks of passes on retry: a pass after a failed attempt is marked,
// a pass after errored attempts alone is not (the agent passed whenever
// it was tested), and only a scenario that went both ways within one
// report is listed as varying.
func TestReportSummary(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, run, extra, cases string
		line                    string
		retried, mixed          bool
		quarantined             bool
		verdict                 Verdict // of x, when given
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		doc := `{"schema": "agenttest/result/v1", "run": {"started": "2026-03-01T00:00:00Z", ` + tc.run + `}, ` + tc.extra +
			`"files": [{"path": "a.yaml", "cases": [` + tc.cases + `]}]}`
		r, err := Read("n.json", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		h := Build([]*Report{r})
		var b bytes.Buffer
		if err := WriteText(&b, h); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "  1  n.json  2026-03-01T00:00:00Z  "+tc.line+"\n") {
			t.Errorf("report line, want %q:\n%s", tc.line, b.String())
		}
		s := h.Scenarios[0]
		if s.Retried[0] != tc.retried || s.Unsteady() != tc.mixed || s.Quarantined[0] != tc.quarantined {
			t.Errorf("retried %t, unsteady %t, quarantined %t; want %t, %t, %t", s.Retried[0], s.Unsteady(), s.Quarantined[0], tc.retried, tc.mixed, tc.quarantined)
		}
		if tc.verdict != VerdictNone && s.Verdicts[0] != tc.verdict {
			t.Errorf("verdict %q, want %q", s.Verdicts[0], tc.verdict)
		}
	}
	for _, tc := range []testCase{
		{
			name: "a retry hid a failure", run: `"status": "passed"`,
			extra: `"target": {"env": "live"}, "counts": {"passed": 0, "flaky": 1},`,
			cases: `{"name": "x", "status": "flaky", "attempts": [{"status": "failed"}, {"status": "passed"}]}`,
			line:  "passed  in live: 1 flaky", retried: true, mixed: true,
		},
		{
			name: "a retry got past a platform error", run: `"status": "passed"`,
			extra: `"deployments": [{"agent": "clinic", "env": "live", "changed": false}], "counts": {"flaky": 1},`,
			cases: `{"name": "x", "status": "flaky", "attempts": [{"status": "errored"}, {"status": "passed"}]}`,
			line:  "passed  in live: 1 flaky",
		},
		{
			name: "the deployment changed", run: `"status": "errored"`,
			extra: `"deployments": [{"agent": "clinic", "env": "live", "changed": true}, {"agent": "billing", "env": "sandbox"}], "counts": {"passed": 1},`,
			cases: `{"name": "x", "status": "passed", "attempts": [{"status": "passed"}]}`,
			line:  "errored  in live, sandbox: 1 passed (deployment of clinic changed during the run)",
		},
		{
			name: "interrupted", run: `"status": "interrupted", "interrupted": true`,
			extra: `"counts": {"passed": 1, "pending": 2, "skipped": 1},`,
			cases: `{"name": "x", "status": "passed", "attempts": [{"status": "passed"}]}, {"name": "y", "status": "skipped", "skip_reason": "not today"}`,
			line:  "interrupted  1 passed, 2 not run, 1 skipped (interrupted)",
		},
		{
			name: "a repeat that went both ways and passed", run: `"status": "passed"`,
			cases: `{"name": "x", "status": "passed", "repeat": {"decision": "passed", "runs": 10, "passed": 9, "failed": 1}}`,
			line:  "passed", mixed: true,
		},
		{
			// Each environment once; the target's only when no
			// deployment says where its cases ran.
			name: "environments of the deployments", run: `"status": "passed"`,
			extra: `"target": {"env": "sandbox"}, "deployments": [{"agent": "clinic", "env": "live"}, {"agent": "billing", "env": "live"}, {"agent": "faq", "env": ""}], "counts": {"passed": 1},`,
			cases: `{"name": "x", "status": "passed", "attempts": [{"status": "passed"}]}`,
			line:  "passed  in live: 1 passed",
		},
		{
			name: "the platform could not be reached", run: `"status": "errored", "stop": {"kind": "unreachable", "reason": "not run: platform unreachable", "host": "api.example"}`,
			// A case skipped on purpose is no case the stop left unrun,
			// as the console counts it.
			extra: `"counts": {"errored": 1, "skipped": 3},`,
			cases: `{"name": "x", "status": "errored", "attempts": [{"status": "errored"}]}, {"name": "y", "status": "skipped", "skip_reason": "not run: platform unreachable"},
				{"name": "z", "status": "skipped", "skip_reason": "not today"}, {"name": "w", "status": "skipped", "skip_reason": "not run: platform unreachable"}`,
			line: "errored  1 errored, 2 not run, 1 skipped (stopped: platform unreachable at api.example)", verdict: VerdictErrored,
		},
		{
			name: "--fail-fast", run: `"status": "failed", "stop": {"kind": "fail-fast", "reason": "not run: --fail-fast"}`,
			extra: `"counts": {"failed": 1, "skipped": 1},`,
			cases: `{"name": "x", "status": "failed", "quarantine": {"until": "2026-04-01"}, "attempts": [{"status": "failed"}]}, {"name": "y", "status": "skipped", "skip_reason": "not run: --fail-fast"}`,
			line:  "failed  1 failed, 1 not run (stopped: --fail-fast)", verdict: VerdictFailed, quarantined: true,
		},
		{
			// A quarantined case is counted apart from the verdicts:
			// the night's line names it rather than dropping it.
			name: "a quarantine that held", run: `"status": "passed"`,
			extra: `"target": {"env": "live"}, "counts": {"total": 2, "passed": 1, "quarantined": 1},`,
			cases: `{"name": "x", "status": "failed", "quarantine": {"until": "2026-04-01"}, "attempts": [{"status": "failed"}]}, {"name": "y", "status": "passed", "attempts": [{"status": "passed"}]}`,
			line:  "passed  in live: 1 passed, 1 quarantined", verdict: VerdictFailed, quarantined: true,
		},
		{
			name: "a quarantine that lapsed", run: `"status": "failed"`,
			cases: `{"name": "x", "status": "failed", "quarantine": {"until": "2026-02-01", "lapsed": true}, "attempts": [{"status": "failed"}]}`,
			line:  "failed", verdict: VerdictFailed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestSameRunCountedOnce: a run given twice (a copy of its report, a
// glob that matches it and its copy) counts once: pooling its runs twice
// would make the interval look surer than it is. Reports of other runs,
// shards of one run among them, each count.
func TestSameRunCountedOnce(t *testing.T) {
	doc := func(started, target, shard, status string) []byte {
		return []byte(`{"schema": "agenttest/result/v1", "run": {"started": "` + started + `", "status": "` + status + `"},
			"target": {"name": "` + target + `", "embedded": false}` + shard + `,
			"files": [{"path": "a.yaml", "cases": [{"name": "x", "status": "` + status + `", "attempts": [{"status": "` + status + `"}]}]}]}`)
	}
	read := func(path string, data []byte) *Report {
		t.Helper()
		r, err := Read(path, data)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	night1 := doc("2026-03-01T02:00:00.123456789Z", "live", "", "passed")
	night2 := doc("2026-03-02T02:00:00Z", "live", "", "failed")
	// Written again by hand, spaced otherwise: still the same run.
	respaced := []byte(strings.ReplaceAll(string(night2), ": ", ":"))
	undated := doc("", "live", "", "passed")
	for _, tc := range []struct {
		name string
		in   []*Report
		runs int // of scenario x
		kept int // reports
		same []string
	}{
		{"distinct", []*Report{read("1.json", night1), read("2.json", night2)}, 2, 2, nil},
		{"a copy", []*Report{read("2.json", night2), read("1.json", night1), read("latest.json", night2)}, 2, 2, []string{"2.json latest.json"}},
		{"respaced", []*Report{read("2.json", night2), read("copy.json", respaced)}, 1, 1, []string{"2.json copy.json"}},
		{"thrice", []*Report{read("1.json", night1), read("1.json", night1), read("./1.json", night1), read("2.json", night2)}, 2, 2, []string{"1.json 1.json ./1.json"}},
		{"undated copy", []*Report{read("old.json", undated), read("old-copy.json", undated)}, 1, 1, []string{"old.json old-copy.json"}},
		// Without a start, the target does not tell two runs apart.
		{"undated, distinct", []*Report{read("old.json", undated), read("older.json", doc("", "live", "", "failed"))}, 2, 2, nil},
		{"other target", []*Report{read("1.json", night1), read("s.json", doc("2026-03-01T02:00:00.123456789Z", "sandbox", "", "passed"))}, 2, 2, nil},
		{"shards", []*Report{
			read("s1.json", doc("2026-03-01T02:00:00Z", "live", `, "shard": {"index": 1, "total": 2, "selection": "sha256:x"}`, "passed")),
			read("s2.json", doc("2026-03-01T02:00:00Z", "live", `, "shard": {"index": 2, "total": 2, "selection": "sha256:x"}`, "passed")),
		}, 2, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Build(tc.in)
			if len(h.Reports) != tc.kept || h.Scenarios[0].Runs() != tc.runs {
				t.Errorf("%d reports, %d runs of x; want %d, %d", len(h.Reports), h.Scenarios[0].Runs(), tc.kept, tc.runs)
			}
			var same []string
			for _, g := range h.Same {
				var paths []string
				for _, r := range g {
					paths = append(paths, r.Path)
				}
				same = append(same, strings.Join(paths, " "))
			}
			if strings.Join(same, "; ") != strings.Join(tc.same, "; ") {
				t.Errorf("same runs %q, want %q", same, tc.same)
			}
		})
	}
}

// TestUnsteadyCountsEvidence: the unsteady list counts the runs that are
// evidence (errored runs say nothing of the agent), while the JSON's runs
// count every run, errored ones included, as its schema says.
func TestUnsteadyCountsEvidence(t *testing.T) {
	t.Parallel()
	h := Build([]*Report{
		{Path: "1.json", Started: "2026-03-01T00:00:00Z", Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 2, Errored: 2}}},
		{Path: "2.json", Started: "2026-03-02T00:00:00Z", Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictFlaky, Passed: 1, Failed: 1}}},
	})
	var text, js bytes.Buffer
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	if want := "passed and failed in one run: the agent's answers vary (1):\n  a.yaml: x: in report 2; failed 1 of 4 runs in all: 1 of 2 in report 2\n"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	if err := WriteJSON(&js, h); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Scenarios []struct {
			Runs, Passed, Failed, Errored int
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if s := back.Scenarios[0]; s.Runs != 6 || s.Passed != 3 || s.Failed != 1 || s.Errored != 2 {
		t.Errorf("JSON scenario %+v, want 6 runs: 3 passed, 1 failed, 2 errored", s)
	}
}

// TestWriteJSONGolden pins the JSON history whole: empty lists are [],
// never null (a jq filter over kept or causes must not meet null); only a
// scenario that went from passing to failing is in regressed, not one
// that flipped back; where a scenario did not run, its verdict is null; a
// regressed scenario names the deployment of each of its two reports, null
// where a report records none.
func TestWriteJSONGolden(t *testing.T) {
	t.Parallel()
	h := Build([]*Report{
		{Path: "1.json", Started: "2026-03-01T00:00:00Z", Status: "failed", Counts: Counts{Passed: 1, Failed: 2, Skipped: 1},
			Target: result.Target{Name: "nightly", BuildURL: "https://build.example.com", Env: "live"}, Cases: []Case{
				{File: "a.yaml", Name: "w", Verdict: VerdictFailed, Failed: 1},
				{File: "a.yaml", Name: "x", Verdict: VerdictFailed, Failed: 1},
				{File: "a.yaml", Name: "y", Verdict: VerdictPassed, Passed: 1}}},
		{Path: "2.json", Started: "2026-03-02T00:00:00Z", Status: "failed", Envs: []string{"live"}, Counts: Counts{Flaky: 1, Errored: 1, Quarantined: 1},
			Target:      result.Target{Name: "nightly", BuildURL: "https://build.staging.example.com", Env: "live"},
			Deployments: []Deployment{{Agent: "clinic", Env: "live", ID: "dep-2", Version: "1.1"}}, Cases: []Case{
				{File: "a.yaml", Name: "x", Verdict: VerdictFlaky, Passed: 1, Failed: 1},
				{File: "a.yaml", Name: "y", Agent: "clinic", Env: "live", Verdict: VerdictFailed, Failed: 1, Quarantined: true},
				{File: "a.yaml", Name: "z", Verdict: VerdictErrored, Errored: 1}}},
	})
	var b bytes.Buffer
	if err := WriteJSON(&b, h); err != nil {
		t.Fatal(err)
	}
	// The interval's last digits are the float arithmetic's, not the
	// history's: four places are compared.
	got := regexp.MustCompile(`\d\.\d{3,}`).ReplaceAllStringFunc(b.String(), func(f string) string {
		v, _ := strconv.ParseFloat(f, 64)
		return strings.TrimRight(strconv.FormatFloat(v, 'f', 4, 64), "0")
	})
	golden.Check(t, filepath.Join("testdata", "history.json"), []byte(got))
	// The text rounds the interval outwards: w's upper bound 0.975 is a
	// hair below it in binary, which %.2f alone prints as 0.97.
	b.Reset()
	if err := WriteText(&b, h); err != nil {
		t.Fatal(err)
	}
	if want := "\n1      0.00       0.00–0.98     ✗·        0      a.yaml: w\n"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
}

// TestReadChecks: a run-level check (the alert gate) has a history as a
// scenario has, under "(checks)": a gate that failed every night is not
// left out of the nights' record.
func TestReadChecks(t *testing.T) {
	t.Parallel()
	r, err := Read("n.json", []byte(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-01T00:00:00Z", "status": "failed"},
		"files": [{"path": "a.yaml", "cases": [{"name": "x", "status": "passed", "attempts": [{"status": "passed"}]}]}],
		"checks": [{"name": "alert gate", "status": "failed", "attempts": [{"status": "failed"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}, {File: "(checks)", Name: "alert gate", Verdict: VerdictFailed, Failed: 1}}
	if !reflect.DeepEqual(r.Cases, want) {
		t.Errorf("cases %+v, want %+v", r.Cases, want)
	}
}

// TestChangedDeploymentIsNoClaim: a night during which a deployment
// changed is kept from a verdict on the agent (its verdicts are about two
// deployments), so its failures are not a regression or a flip, and runs
// that went both ways in it are not the agent's answers varying; its
// verdicts still show in the strip. Before, such a night was listed as
// kept from a verdict and, in the same history, as the night the
// scenario went from passing to failing and varied.
func TestChangedDeploymentIsNoClaim(t *testing.T) {
	t.Parallel()
	night := func(day, status string, changed bool, caseStatus, repeat string) *Report {
		t.Helper()
		r, err := Read("n"+day+".json", []byte(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-0`+day+`T02:00:00Z", "status": "`+status+`"},
			"deployments": [{"agent": "clinic", "env": "live", "changed": `+fmt.Sprint(changed)+`}],
			"files": [{"path": "suites/clinic.yaml", "cases": [{"name": "books", "status": "`+caseStatus+`", "repeat": {`+repeat+`}},
			  {"name": "greets", "status": "flaky", "attempts": [{"status": "`+map[bool]string{false: "errored", true: "failed"}[changed]+`"}, {"status": "passed"}]}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	passed := night("1", "passed", false, "passed", `"decision": "passed", "runs": 26, "passed": 26, "failed": 0`)
	changed := night("2", "errored", true, "failed", `"decision": "failed", "runs": 12, "passed": 8, "failed": 4`)
	failed := night("3", "failed", false, "failed", `"decision": "failed", "runs": 6, "passed": 0, "failed": 6`)

	h := Build([]*Report{passed, changed})
	books, greets := h.Scenarios[0], h.Scenarios[1]
	if !changed.Changed || books.Verdicts[1] != VerdictFailed || books.Flips != 0 || books.Regressed || books.Unsteady() || greets.Retried[1] || greets.Unsteady() {
		t.Errorf("changed night: Changed %t; books verdicts %v, flips %d, regressed %t, unsteady %t; greets retried %v, unsteady %t; want a ✗ that is no claim",
			changed.Changed, books.Verdicts, books.Flips, books.Regressed, books.Unsteady(), greets.Retried, greets.Unsteady())
	}
	var b bytes.Buffer
	if err := WriteText(&b, h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✓✗        0      suites/clinic.yaml: books\n", "kept from a verdict on the agent (the platform, the network or the run, not the agent): 1 of 2 reports: 2\n",
		"no scenario went from passing to failing\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("history lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "the agent's answers vary") {
		t.Errorf("the changed night is said to vary:\n%s", b.String())
	}
	// The next night's failure is the agent's: it regressed from the
	// last night that was a claim.
	books = Build([]*Report{passed, changed, failed}).Scenarios[0]
	if !books.Regressed || books.PassedIn != 0 || books.FailedIn != 2 || books.Flips != 1 {
		t.Errorf("after the changed night: regressed %t (%d→%d), flips %d; want regressed 0→2, 1 flip", books.Regressed, books.PassedIn, books.FailedIn, books.Flips)
	}
	// Nor is its pass a claim: failing before and after it is no flip.
	early := night("1", "failed", false, "failed", `"decision": "failed", "runs": 6, "passed": 0, "failed": 6`)
	changedPass := night("2", "errored", true, "passed", `"decision": "passed", "runs": 26, "passed": 26, "failed": 0`)
	books = Build([]*Report{early, changedPass, failed}).Scenarios[0]
	if books.Regressed || books.Flips != 0 {
		t.Errorf("failed, a changed night's pass, failed: regressed %t, flips %d; want neither", books.Regressed, books.Flips)
	}
}

// TestTargets: reports of more than one target (another name, workspace,
// environment or platform, by the rule merge holds shards to, or other
// agents) are said to be, in the text view and the JSON, naming each
// target and its reports: every scenario's record folds them together,
// and a flip between them may be the targets', not the agent's. Before,
// a nightly history that a glob let a staging report into read as one
// target's. The embedded simulator's URLs are new in every process, and
// a report that records no agents is taken to have tested the others'.
func TestTargets(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		targets []string // the "target" member of each report
		agents  [][]string
		groups  [][]int
		text    string // the text view's section, "" when there is none
	}
	const sandbox = `{"name": "nightly", "build_url": "https://build.example.com", "runtime_url": "https://rt.example.com", "account_id": "acc-1", "env": "sandbox"}`
	restaurant := []string{"restaurant"}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		var reports []*Report
		for i, target := range tc.targets {
			var deps []string
			for _, a := range tc.agents[i] {
				deps = append(deps, fmt.Sprintf(`{"agent": %q, "env": "sandbox"}`, a))
			}
			doc := fmt.Sprintf(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-0%dT00:00:00Z", "status": "passed"}, "target": %s, "deployments": [%s],
				"files": [{"path": "a.yaml", "cases": [{"name": "x", "status": "passed", "attempts": [{"status": "passed"}]}]}]}`, i+1, target, strings.Join(deps, ", "))
			r, err := Read(fmt.Sprintf("%d.json", i+1), []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			reports = append(reports, r)
		}
		h := Build(reports)
		if got := h.Targets(); !slices.EqualFunc(got, tc.groups, slices.Equal) {
			t.Errorf("targets %v, want %v", got, tc.groups)
		}
		var b bytes.Buffer
		if err := WriteText(&b, h); err != nil {
			t.Fatal(err)
		}
		got := ""
		if i := strings.Index(b.String(), "more than one target"); i >= 0 {
			got = b.String()[i:]
			got = got[:strings.Index(got, "\n\n")+1]
		}
		if got != tc.text {
			t.Errorf("text:\n%s\nwant:\n%s", got, tc.text)
		}
		b.Reset()
		if err := WriteJSON(&b, h); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Targets []struct {
				Reports []int `json:"reports"`
			} `json:"targets"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Targets) != len(tc.groups) {
			t.Errorf("JSON targets %+v, want %v", doc.Targets, tc.groups)
		}
	}
	for _, tc := range []testCase{
		{name: "one target", targets: []string{sandbox, sandbox, sandbox}, agents: [][]string{restaurant, restaurant, restaurant}, groups: [][]int{{0, 1, 2}}},
		{name: "the embedded simulator, on a new port each night", agents: [][]string{restaurant, restaurant},
			targets: []string{`{"name": "sim", "build_url": "http://127.0.0.1:4001", "embedded": true}`, `{"name": "sim", "build_url": "http://127.0.0.1:4002", "embedded": true}`},
			groups:  [][]int{{0, 1}}},
		// The agents a report tested do not make another target: a
		// suite added for a second agent changes what runs, not where.
		{name: "other agents, or none recorded", targets: []string{sandbox, sandbox, sandbox, sandbox},
			agents: [][]string{restaurant, nil, {"bookings", "restaurant"}, {"bookings"}}, groups: [][]int{{0, 1, 2, 3}}},
		{name: "another platform", agents: [][]string{restaurant, restaurant, restaurant},
			targets: []string{sandbox, strings.Replace(sandbox, "build.example.com", "build.staging.example.com", 1), sandbox},
			groups:  [][]int{{0, 2}, {1}},
			text: "more than one target: the reports tested 2, which every scenario's record below folds together:\n" +
				`  reports 1, 3: target "nightly", workspace acc-1, env sandbox, the platform at https://build.example.com, runtime at https://rt.example.com` + "\n" +
				`  report 2: target "nightly", workspace acc-1, env sandbox, the platform at https://build.staging.example.com, runtime at https://rt.example.com` + "\n"},
		{name: "another environment", agents: [][]string{restaurant, restaurant},
			targets: []string{sandbox, strings.Replace(sandbox, `"sandbox"`, `"live"`, 1)}, groups: [][]int{{0}, {1}},
			text: "more than one target: the reports tested 2, which every scenario's record below folds together:\n" +
				`  report 1: target "nightly", workspace acc-1, env sandbox, the platform at https://build.example.com, runtime at https://rt.example.com` + "\n" +
				`  report 2: target "nightly", workspace acc-1, env live, the platform at https://build.example.com, runtime at https://rt.example.com` + "\n"},
		{name: "another name, on the embedded simulator", agents: [][]string{nil, nil},
			targets: []string{`{"name": "sim", "runtime_url": "http://127.0.0.1:4003", "embedded": true}`, `{"name": "sim2\u001b[2J", "embedded": true}`}, groups: [][]int{{0}, {1}},
			text: "more than one target: the reports tested 2, which every scenario's record below folds together:\n" +
				`  report 1: target "sim", the embedded simulator` + "\n" +
				`  report 2: target "sim2\x1b[2J", the embedded simulator` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRegressionNamesDeployments: a scenario that went from passing to
// failing says which deployment of its agent each of the two reports
// tested, so the morning's reader tells a new version that broke it from
// the same version answering otherwise. Before, the line named the two
// reports alone, and the deployments were in neither view.
func TestRegressionNamesDeployments(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// deps are the two nights' deployments members; caseEnv the
		// env of their case ("" leaves it out, as a run-level check).
		deps    [2]string
		caseEnv string
		// moved and movedEnv are the agent and env of the failing
		// night's case when the suite moved it ("" keeps clinic and
		// caseEnv).
		moved, movedEnv string
		text            string // "" for none beside the reports
		json            string
	}
	clinic := func(id, version string) string {
		return `{"agent": "clinic", "env": "live", "id": "` + id + `", "version": "` + version + `", "changed": false}`
	}
	run := func(t *testing.T, tc testCase) {
		night := func(day, status, deps string) *Report {
			t.Helper()
			agent, caseEnv := "clinic", tc.caseEnv
			if tc.moved != "" && status == "failed" {
				agent = tc.moved
			}
			if tc.movedEnv != "" && status == "failed" {
				caseEnv = tc.movedEnv
			}
			env := ""
			if caseEnv != "" {
				env = `"env": "` + caseEnv + `", `
			}
			r, err := Read("n"+day+".json", []byte(`{"schema": "agenttest/result/v1", "run": {"started": "2026-03-0`+day+`T02:00:00Z", "status": "`+status+`"},
				"deployments": [`+deps+`],
				"files": [{"path": "suites/clinic.yaml", "cases": [{"name": "books", "agent": "`+agent+`", `+env+`"status": "`+status+`", "attempts": [{"status": "`+status+`"}]}]}]}`))
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		h := Build([]*Report{night("1", "passed", tc.deps[0]), night("2", "failed", tc.deps[1])})
		var text, js bytes.Buffer
		if err := WriteText(&text, h); err != nil {
			t.Fatal(err)
		}
		want := "  suites/clinic.yaml: books: passed in report 1, failed in report 2" + tc.text + "\n"
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
		if err := WriteJSON(&js, h); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Regressed []json.RawMessage }
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.Regressed) != 1 {
			t.Fatalf("JSON history: %v\n%s", err, js.String())
		}
		var got bytes.Buffer
		if err := json.Compact(&got, doc.Regressed[0]); err != nil {
			t.Fatal(err)
		}
		if want := `{"file":"suites/clinic.yaml","name":"books","passed_in":0,"failed_in":1,` + tc.json + `}`; got.String() != want {
			t.Errorf("regressed:\n%s\nwant\n%s", got.String(), want)
		}
	}
	for _, tc := range []testCase{
		{name: "redeployed", deps: [2]string{clinic("dep-1", "1.0"), clinic("dep-2", "1.1")}, caseEnv: "live",
			text: "; deployment of clinic in live dep-1 (version 1.0) → dep-2 (version 1.1) (redeployed)",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":{"agent":"clinic","env":"live","id":"dep-2","version":"1.1"}`},
		{name: "the same deployment", deps: [2]string{clinic("dep-1", "1.0"), clinic("dep-1", "1.0")}, caseEnv: "live",
			text: "; deployment of clinic in live dep-1 in both (not redeployed)",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"}`},
		{name: "no version", deps: [2]string{clinic("dep-1", ""), clinic("dep-2", "")}, caseEnv: "live",
			text: "; deployment of clinic in live dep-1 → dep-2 (redeployed)",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1"},"failed_on":{"agent":"clinic","env":"live","id":"dep-2"}`},
		{name: "a case without its env takes its agent's one deployment", deps: [2]string{clinic("dep-1", "1.0"), clinic("dep-2", "1.0")},
			text: "; deployment of clinic in live dep-1 (version 1.0) → dep-2 (version 1.0) (redeployed)",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":{"agent":"clinic","env":"live","id":"dep-2","version":"1.0"}`},
		{name: "a night that records none", deps: [2]string{"", clinic("dep-2", "1.1")}, caseEnv: "live",
			json: `"passed_on":null,"failed_on":{"agent":"clinic","env":"live","id":"dep-2","version":"1.1"}`},
		{name: "a failing night that records none", deps: [2]string{clinic("dep-1", "1.0"), ""}, caseEnv: "live",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":null`},
		{name: "a scenario moved to another agent", deps: [2]string{clinic("dep-1", "1.0"), `{"agent": "triage", "env": "live", "id": "dep-7"}`}, caseEnv: "live", moved: "triage",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":{"agent":"triage","env":"live","id":"dep-7"}`},
		{name: "a scenario moved to another environment", deps: [2]string{clinic("dep-1", "1.0"), `{"agent": "clinic", "env": "sandbox", "id": "dep-8"}`}, caseEnv: "live", movedEnv: "sandbox",
			json: `"passed_on":{"agent":"clinic","env":"live","id":"dep-1","version":"1.0"},"failed_on":{"agent":"clinic","env":"sandbox","id":"dep-8"}`},
		{name: "a deployment that could not be read", deps: [2]string{`{"agent": "clinic", "env": "live", "note": "read failed"}`, clinic("dep-2", "1.1")}, caseEnv: "live",
			json: `"passed_on":null,"failed_on":{"agent":"clinic","env":"live","id":"dep-2","version":"1.1"}`},
		{name: "another environment's deployment is not the case's", deps: [2]string{clinic("dep-1", "1.0"), clinic("dep-2", "1.1")}, caseEnv: "sandbox",
			json: `"passed_on":null,"failed_on":null`},
		{name: "two environments and a case without its env", deps: [2]string{clinic("dep-1", "1.0") + `, {"agent": "clinic", "env": "sandbox", "id": "dep-9"}`, clinic("dep-2", "1.1")},
			json: `"passed_on":null,"failed_on":{"agent":"clinic","env":"live","id":"dep-2","version":"1.1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestUnsteadySaysEachReport: a scenario whose answers varied says how
// much in each report it varied in, beside the total, and the JSON has its
// runs report by report (null where it is not in the report; a name twice
// in one report sums both): a night at 8 of 27 failed reads apart from a
// month of passes. Before, only the total over every report was given,
// in which one bad night among thirty was a rate of 0.97.
func TestUnsteadySaysEachReport(t *testing.T) {
	t.Parallel()
	night := func(day string, cases ...Case) *Report {
		return &Report{Path: day + ".json", Started: "2026-03-0" + day + "T02:00:00Z", Status: "passed", Cases: cases}
	}
	x := func(passed, failed, errored int) Case {
		return Case{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: passed, Failed: failed, Errored: errored}
	}
	h := Build([]*Report{
		night("1", x(26, 0, 0)),
		night("2", x(19, 8, 1)),
		night("3", Case{File: "a.yaml", Name: "y", Verdict: VerdictPassed, Passed: 1}),
		night("4", x(20, 1, 0), x(8, 1, 0)),
	})
	var text, js bytes.Buffer
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	if want := "  a.yaml: x: in reports 2, 4; failed 10 of 83 runs in all: 8 of 27 in report 2, 2 of 30 in report 4\n"; !strings.Contains(text.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, text.String())
	}
	if err := WriteJSON(&js, h); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Scenarios []struct {
			ByReport []*Tally `json:"runs_by_report"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(back.Scenarios[0].ByReport)
	if want := `[{"Passed":26,"Failed":0,"Errored":0},{"Passed":19,"Failed":8,"Errored":1},null,{"Passed":28,"Failed":2,"Errored":0}]`; string(got) != want {
		t.Errorf("runs_by_report %s, want %s\n%s", got, want, js.String())
	}
}

// TestWorseInTheNewerHalf: a scenario still passing but more and more
// often only on a retry, or failing more often than it did, is named
// before it turns red: its verdicts in the older half of the reports
// against the newer (of five, the third in neither), by share, errored
// verdicts aside. One that went from passing to failing is listed under
// that alone. Before, only the flips within the set and the latest
// verdict said anything of a trend.
func TestWorseInTheNewerHalf(t *testing.T) {
	t.Parallel()
	strips := []struct{ name, strip string }{
		{"steady", "✓✓✓✓✓"},
		{"growing flakier", "✓✓✓~~"},
		{"fails now and then", "✓✓✓✗✓"},
		{"fails as often, retried less", "~✗✓✗✓"},
		{"turned red", "✓✓✓✓✗"},
		{"got better", "✗~✓✓✓"},
		{"worse in the middle only", "✓✓✗✓✓"},
		{"errored lately", "✓✓✓EE"},
		{"not run lately", "✓✓✓··"},
		{"a larger share failed, an error aside", "✓✗✓✗E"},
		{"a larger share on a retry, an error aside", "~✓✓~E"},
	}
	reports := make([]*Report, 5)
	for i := range reports {
		reports[i] = &Report{Path: fmt.Sprintf("night-%d.json", i+1), Started: fmt.Sprintf("2026-03-0%dT02:00:00Z", i+1), Status: "passed"}
		for _, s := range strips {
			c := Case{File: "nightly.yaml", Name: s.name}
			switch []rune(s.strip)[i] {
			case '✓':
				c.Verdict, c.Passed = VerdictPassed, 1
			case '~':
				c.Verdict, c.Passed, c.Failed = VerdictFlaky, 1, 1
			case '✗':
				c.Verdict, c.Failed = VerdictFailed, 1
			case 'E':
				c.Verdict, c.Errored = VerdictErrored, 1
			default:
				continue
			}
			reports[i].Cases = append(reports[i].Cases, c)
		}
	}
	h := Build(reports)
	var text, js bytes.Buffer
	if err := WriteText(&text, h); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "worse.txt"), text.Bytes())
	if err := WriteJSON(&js, h); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Scenarios []struct {
			Name         string
			Older, Newer Trend
			Worse        bool
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range back.Scenarios {
		o, n := s.Older, s.Newer
		got = append(got, fmt.Sprintf("%s {%d %d %d} {%d %d %d} %t", s.Name, o.Passed, o.Retried, o.Failed, n.Passed, n.Retried, n.Failed, s.Worse))
	}
	want := []string{
		"steady {2 0 0} {2 0 0} false",
		"growing flakier {2 0 0} {0 2 0} true",
		"fails now and then {2 0 0} {1 0 1} true",
		"fails as often, retried less {0 1 1} {1 0 1} false",
		"turned red {2 0 0} {1 0 1} true",
		"got better {0 1 1} {2 0 0} false",
		"worse in the middle only {2 0 0} {2 0 0} false",
		"errored lately {2 0 0} {0 0 0} false",
		"not run lately {2 0 0} {0 0 0} false",
		"a larger share failed, an error aside {1 0 1} {0 0 1} true",
		"a larger share on a retry, an error aside {1 1 0} {0 1 0} true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("older, newer, worse:\n%s\nwant\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), js.String())
	}

	// Of two reports, each half is one report.
	var two bytes.Buffer
	if err := WriteText(&two, Build(reports[2:4])); err != nil {
		t.Fatal(err)
	}
	if want := "worse in the newer reports (2) than in the older (1): a larger share failed, or passed only on a retry (2):\n  nightly.yaml: growing flakier: "; !strings.Contains(two.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, two.String())
	}

	// A report of a deployment that changed during its run is no claim
	// about the agent: a failure in it does not make the newer half worse.
	changed := Build([]*Report{
		{Path: "1.json", Started: "2026-03-01T02:00:00Z", Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}}},
		{Path: "2.json", Started: "2026-03-02T02:00:00Z", Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}}},
		{Path: "3.json", Started: "2026-03-03T02:00:00Z", Changed: true, Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictFailed, Failed: 1}}},
		{Path: "4.json", Started: "2026-03-04T02:00:00Z", Cases: []Case{{File: "a.yaml", Name: "x", Verdict: VerdictPassed, Passed: 1}}},
	})
	if s := changed.Scenarios[0]; s.Worse || s.Newer != (Trend{Passed: 1}) {
		t.Errorf("with a changed deployment's failure in the newer half: newer %+v, worse %t; want 1 passed, not worse", s.Newer, s.Worse)
	}
}

// TestUnlisted: what the newest report stopped testing is named against
// the latest earlier report that holds cases. A scenario a stop or a
// skip left unrun is still listed (its report says why); a report with
// no case (the tags selected nothing) is passed over as the one to
// compare with, and as the newest compares with nothing: its status says
// it tested nothing.
func TestUnlisted(t *testing.T) {
	t.Parallel()
	c := func(name string, v Verdict) Case { return Case{File: "s.yaml", Name: name, Verdict: v} }
	night := func(day int, cases ...Case) *Report {
		return &Report{Path: fmt.Sprintf("%d.json", day), Started: fmt.Sprintf("2026-03-%02dT02:30:00Z", day), Status: "passed", Cases: cases}
	}
	names := func(ss []*Scenario) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		reports        []*Report
		since          int
		dropped, added []string
	}{
		{"renamed and deselected", []*Report{night(1, c("a", VerdictPassed), c("b", VerdictPassed), c("c", VerdictPassed)), night(2, c("a", VerdictPassed), c("b2", VerdictPassed))},
			0, []string{"b", "c"}, []string{"b2"}},
		{"the same", []*Report{night(1, c("a", VerdictPassed)), night(2, c("a", VerdictFailed))}, 0, []string{}, []string{}},
		{"one dropped, none added", []*Report{night(1, c("a", VerdictPassed), c("b", VerdictPassed)), night(2, c("a", VerdictPassed))}, 0, []string{"b"}, []string{}},
		{"one added, none dropped", []*Report{night(1, c("a", VerdictPassed)), night(2, c("a", VerdictPassed), c("b", VerdictPassed))}, 0, []string{}, []string{"b"}},
		{"left unrun or skipped is still listed", []*Report{night(1, c("a", VerdictPassed), c("b", VerdictPassed)), night(2, c("a", VerdictNone), c("b", VerdictNone))},
			0, []string{}, []string{}},
		{"an empty night before is passed over", []*Report{night(1, c("a", VerdictPassed), c("b", VerdictPassed)), night(2), night(3, c("a", VerdictPassed))},
			0, []string{"b"}, []string{}},
		{"only what the night before held", []*Report{night(1, c("a", VerdictPassed)), night(2, c("b", VerdictPassed)), night(3, c("b", VerdictPassed))},
			1, []string{}, []string{}},
		{"an empty newest night compares with nothing", []*Report{night(1, c("a", VerdictPassed)), night(2)}, -1, []string{}, []string{}},
		{"one report", []*Report{night(1, c("a", VerdictPassed))}, -1, []string{}, []string{}},
		{"no report", nil, -1, []string{}, []string{}},
		{"nothing earlier holds cases", []*Report{night(1), night(2, c("a", VerdictPassed))}, -1, []string{}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since, dropped, added := Build(tc.reports).Unlisted()
			if since != tc.since || !slices.Equal(names(dropped), tc.dropped) || !slices.Equal(names(added), tc.added) {
				t.Errorf("Unlisted() = %d, %v, %v; want %d, %v, %v", since, names(dropped), names(added), tc.since, tc.dropped, tc.added)
			}
			// The text lists the dropped, and the added only beside them:
			// a new scenario alone is no news of what stopped being tested.
			var b bytes.Buffer
			if err := WriteText(&b, Build(tc.reports)); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if got, want := strings.Contains(out, "not in the newest report"), len(tc.dropped) > 0; got != want {
				t.Errorf("dropped listed: %v, want %v\n%s", got, want, out)
			}
			if got, want := strings.Contains(out, "\nin the newest report"), len(tc.dropped) > 0 && len(tc.added) > 0; got != want {
				t.Errorf("added listed: %v, want %v\n%s", got, want, out)
			}
		})
	}
}
