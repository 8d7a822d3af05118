package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/compare"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// The HTML report is tested three ways: here, its markup (a golden file
// of the page with its style, script and data set apart, and the data as
// a golden JSON file) and its escaping; in cmd/agenttest, in headless
// Chromium (html_browser_test.go).

// dataOpen starts the page's data block.
const dataOpen = `<script type="application/json" id="agenttest-data">`

// splitPage returns the page with its style, script and data replaced by
// markers, and the data block's JSON.
// compareHTML writes the HTML report of r, the candidate of a comparison
// with base (live), with the other options given.
func compareHTML(t *testing.T, base, r *result.Result, opt HTMLOptions) *bytes.Buffer {
	t.Helper()
	opt.Compare = compare.Build(
		compare.Input{Spec: "live", Kind: compare.KindEnvironment, Result: base, Status: result.RunPassed},
		compare.Input{Spec: "sandbox", Kind: compare.KindEnvironment, Result: r, Status: r.RunStatus()},
		compare.DefaultOptions())
	var b bytes.Buffer
	if err := WriteHTML(&b, r, opt); err != nil {
		t.Fatal(err)
	}
	return &b
}

func splitPage(t *testing.T, page string) (skeleton, data string) {
	t.Helper()
	i := strings.Index(page, dataOpen)
	if i < 0 {
		t.Fatal("no data block")
	}
	j := strings.Index(page[i:], "</script>")
	data = page[i+len(dataOpen) : i+j]
	skeleton = page[:i+len(dataOpen)] + "…data…" + page[i+j:]
	skeleton = regexp.MustCompile(`(?s)<style>.*?</style>`).ReplaceAllString(skeleton, "<style>…report.css…</style>")
	skeleton = regexp.MustCompile(`(?s)<script>.*?</script>`).ReplaceAllString(skeleton, "<script>…report.js…</script>")
	skeleton = regexp.MustCompile(`sha256-(?:[A-Za-z0-9+/=]|&#43;)+`).ReplaceAllString(skeleton, "sha256-…")
	return skeleton, data
}

func TestHTMLGolden(t *testing.T) {
	for name, fx := range map[string]func() *result.Result{"full": fixture, "probes": probesFixture} {
		t.Run(name, func(t *testing.T) {
			r := fx()
			var b bytes.Buffer
			err := WriteHTML(&b, r, HTMLOptions{Coverage: coverage.Compute(r, coverage.Universe{})})
			if err != nil {
				t.Fatal(err)
			}
			skeleton, data := splitPage(t, b.String())
			golden.Check(t, filepath.Join("testdata", name+".html"), []byte(skeleton))
			var v any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				t.Fatalf("the data block is not JSON: %v", err)
			}
			indented, _ := json.MarshalIndent(v, "", "  ")
			golden.Check(t, filepath.Join("testdata", name+".html-data.json"), append(indented, '\n'))
		})
	}
}

// TestHTMLInlineOnly checks that the page's policy names exactly the
// style and script it inlines, so the browser runs them and nothing else.
func TestHTMLInlineOnly(t *testing.T) {
	if err := htmlAssetsSafe(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, fixture(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	style := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	script := regexp.MustCompile(`(?s)\n<script>(.*?)</script>`).FindStringSubmatch(page)
	if style == nil || script == nil {
		t.Fatal("no inline style or script")
	}
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no Content-Security-Policy")
	}
	policy := html.UnescapeString(csp[1])
	for _, want := range []string{"default-src 'none'", "script-src '" + cspHash(script[1]) + "'", "style-src '" + cspHash(style[1]) + "'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy %q lacks %q", policy, want)
		}
	}
	for _, remote := range []string{"http://", "https://", "//fonts", "@import", "url("} {
		if strings.Contains(style[1]+script[1], remote) {
			t.Errorf("the inlined assets mention %q: a report fetches nothing", remote)
		}
	}
}

// hostile is text from the run that would be markup, close the data
// block or start a script if any part of the page let it through.
const hostile = `</script><script>alert(1)</script><img src=x onerror=alert(2)><!-- ]]> &amp; "quoted" 'single' ` + "\u2028"

func TestHTMLEscapesRunText(t *testing.T) {
	r := hostileResult()
	cov := coverage.Compute(r, coverage.Universe{})
	// On the baseline the case passed with another reply: it regressed,
	// and the comparison shows the replies' diff.
	base := hostileResult()
	bc := base.Files[0].Cases[0]
	bc.Status, bc.Attempts[0].Status, bc.Attempts[0].Failures = result.Passed, result.Passed, nil
	bt := *bc.Attempts[0].Turns[1]
	bt.Result = (&reply.TurnResult{Response: "hello", RawMetadata: bt.Result.RawMetadata}).SetMetadata(bt.Result.Meta())
	bc.Attempts[0].Turns[1] = &bt
	cmp := compare.Build(
		compare.Input{Spec: "live", Kind: compare.KindEnvironment, Result: base, Status: result.RunPassed},
		compare.Input{Spec: hostile, Kind: compare.KindEnvironment, Result: r, Status: r.RunStatus()},
		compare.DefaultOptions())
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{Coverage: cov, Compare: cmp, Title: hostile}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// Exactly the two script elements of the page (its data and its
	// code), and no element the run's text could have made.
	if n := strings.Count(strings.ToLower(page), "<script"); n != 2 {
		t.Errorf("%d <script elements, want 2", n)
	}
	for _, bad := range []string{"<img", "<!--"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	// The text is all there, escaped: in the markup (suite, node, the
	// comparison's side and reply) and in the data.
	if n := strings.Count(page, "&lt;/script&gt;&lt;script&gt;alert(1)"); n < 4 {
		t.Errorf("the hostile text shows escaped %d times in the markup, want it in title, plot, coverage and comparison", n)
	}
	_, data := splitPage(t, page)
	// A line separator ends a JavaScript line in older engines; the data
	// block escapes it with the rest.
	for _, bad := range []string{"<", ">", "\u2028"} {
		if strings.Contains(data, bad) {
			t.Errorf("the data block holds %q", bad)
		}
	}
	var doc struct {
		Cases []struct {
			Name     string `json:"n"`
			Attempts []struct {
				Turns []struct {
					Reply string `json:"r"`
				} `json:"turns"`
			} `json:"a"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("data block: %v", err)
	}
	if len(doc.Cases) != 1 || !strings.Contains(doc.Cases[0].Attempts[0].Turns[1].Reply, `</script><script>alert(1)`) {
		t.Errorf("the reply did not survive the data block: %+v", doc.Cases)
	}
}

// hostileResult is a run whose every text is hostile.
func hostileResult() *result.Result {
	meta := mustJSON(map[string]any{"currentNode": hostile, "nodeTrace": []string{"start", hostile}})
	var md reply.Metadata
	if err := json.Unmarshal(meta, &md); err != nil {
		panic(err)
	}
	turn := func(i int, say string) *result.Turn {
		return &result.Turn{Index: i, Say: say, Pos: diag.Pos{File: "s.yaml", Line: 3 + i, Col: 5}, Started: t0, Latency: 100 * time.Millisecond,
			Result: (&reply.TurnResult{Response: hostile, RawMetadata: meta}).SetMetadata(md)}
	}
	return &result.Result{
		Started: t0, Duration: time.Second,
		Target: result.Target{Name: hostile, Env: "sandbox"},
		Files: []*result.File{{Path: "s.yaml", Suite: hostile, Cases: []*result.Case{{
			Name: hostile, Pos: diag.Pos{File: "s.yaml", Line: 2, Col: 3}, Status: result.Failed, Agent: hostile, Duration: time.Second,
			Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, Started: t0, Duration: time.Second,
				Turns: []*result.Turn{turn(0, ""), turn(1, hostile)},
				Failures: []assert.Failure{{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: hostile,
					Expected: "hello", Actual: hostile, Diff: assert.Diff("hello", hostile)}},
			}},
		}}}},
		Deployments: []*result.Deployment{{Agent: hostile, Env: "sandbox", ID: hostile}},
	}
}

// TestHTMLControlText: what a server chose (a reply, a node, a trace, a
// state key, a handoff destination) and what a suite named (a name, a
// tag, a variant) reach the page with their controls written as the console and JUnit write them
// (internal/escape), in the case list's data and in the coverage and
// comparison sections alike (a suite's path too, by which they position
// a node or a pair), and the header's title, target facts, stop, why and
// deployments, which merge and compare read back from a report: each
// shown, and shown escaped. Before, the
// header carried the target raw, and the data carried the trace, node,
// state and handoff raw, the reply with its \r and bidi override, and
// the sections every name and node raw, escape sequences included; the
// case's tags were raw until they were flattened too.
func TestHTMLControlText(t *testing.T) {
	t.Parallel()
	const evil = "a\x1b[2Jb\rc\u202ed\x00e\u2066f\u0085g"
	// A suite's path is what the coverage and comparison sections
	// position a node or a pair by.
	const path = "s" + evil + ".yaml"
	run := func(node, text string) *result.Result {
		meta := mustJSON(map[string]any{"currentNode": node, "nodeTrace": []string{"start", node},
			"state": map[string]any{evil: evil}, "handoffDestination": evil})
		var md reply.Metadata
		if err := json.Unmarshal(meta, &md); err != nil {
			t.Fatal(err)
		}
		turn := func(i int, say string) *result.Turn {
			return &result.Turn{Index: i, Say: say, Pos: diag.Pos{File: path, Line: 3 + i, Col: 5}, Started: t0, Latency: time.Millisecond,
				Result: (&reply.TurnResult{Response: text, RawMetadata: meta}).SetMetadata(md)}
		}
		return &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim"},
			Files: []*result.File{{Path: path, Suite: evil, Cases: []*result.Case{{
				Name: evil, Pos: diag.Pos{File: path, Line: 2, Col: 3}, Status: result.Failed, Agent: evil, Duration: time.Second,
				Tags: []string{evil}, Variant: evil,
				Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, Started: t0, Duration: time.Second,
					Turns: []*result.Turn{turn(0, ""), turn(1, evil)},
					Failures: []assert.Failure{{Pos: diag.Pos{File: path, Line: 5, Col: 9}, Key: "response", Message: "reply does not match",
						Expected: "hello", Actual: text, Diff: assert.Diff("hello", text)}},
				}},
			}}}}}
	}
	base, r := run("greet", "hello"), run(evil, evil)
	// The header: the page's title, the target's facts, the stop.
	r.Target = result.Target{Name: evil, Env: evil, BuildURL: evil, RuntimeURL: evil, AccountID: evil}
	r.Stop = &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable, Host: evil}
	// A deployment that changed during the run errors it: the header
	// says why with the ids the platform gave.
	r.Deployments = []*result.Deployment{{Agent: "restaurant", Env: "sandbox", ID: "dep-1", After: evil}}
	bc := base.Files[0].Cases[0]
	bc.Status, bc.Attempts[0].Status, bc.Attempts[0].Failures = result.Passed, result.Passed, nil
	b := compareHTML(t, base, r, HTMLOptions{Coverage: coverage.Compute(r, coverage.Universe{})})
	raw := func(s string) bool {
		return strings.ContainsFunc(s, func(c rune) bool { return c != '\n' && c != '\t' && escape.Needed(string(c), "") })
	}
	skeleton, data := splitPage(t, b.String())
	for i, line := range strings.Split(skeleton, "\n") {
		if raw(line) {
			t.Errorf("page line %d holds a raw control: %q", i+1, line)
		}
	}
	const shown = `ab\rc\u202ed\x00e\u2066f\u0085g`
	for _, want := range []string{
		`<p class="stop">stopped early: the platform is unreachable at ` + shown + `</p>`,
		`<span class="why">deployment of restaurant changed during the run: dep-1 → ` + shown + `</span>`,
		`<dt>deployment</dt><dd>deployment of restaurant changed during the run: dep-1 → ` + shown + `</dd>`,
		`<span class="mono">s` + shown + `.yaml:2</span> `,
		`<span class="mono meta">s` + shown + `.yaml:2</span>`,
	} {
		if !strings.Contains(skeleton, want) {
			t.Errorf("the page lacks %s:\n%s", want, skeleton)
		}
	}
	var doc any
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(path+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), x)
			}
		case string:
			if raw(v) {
				t.Errorf("data %s holds a raw control: %q", path, v)
			}
		}
	}
	walk("", doc)
	for _, want := range []string{`"r":"ab\\rc\\u202ed\\x00e\\u2066f\\u0085g"`, `"node":"ab\\rc`, `"ho":"ab\\rc`} {
		if !strings.Contains(data, want) {
			t.Errorf("data lacks %s", want)
		}
	}
}

// TestHTMLDiffShowsInvisibleChanges: a reply that differs from the
// expected text, or from the baseline's reply, only by a no-break or
// zero-width space shows the change escaped as the console writes it
// (assert.TextDiff.Visible), in the case list's data and in the
// comparison's markup alike; text both sides share keeps its characters.
// Before, both carried the raw characters: a change no one could see.
func TestHTMLDiffShowsInvisibleChanges(t *testing.T) {
	t.Parallel()
	// run replied text; when actual is set, a check failed on it.
	run := func(text, actual string) *result.Result {
		turn := &result.Turn{Index: 0, Say: "hi", Pos: diag.Pos{File: "s.yaml", Line: 3, Col: 5}, Started: t0, Latency: time.Millisecond,
			Result: &reply.TurnResult{Response: text}}
		a := &result.Attempt{Number: 1, Status: result.Passed, Started: t0, Duration: time.Second, Turns: []*result.Turn{turn}}
		c := &result.Case{Name: "books", Pos: diag.Pos{File: "s.yaml", Line: 2, Col: 3}, Status: result.Passed, Duration: time.Second,
			Attempts: []*result.Attempt{a}}
		if actual != "" {
			const want = "Hello\u00a0there\nTable for 4 people"
			c.Status, a.Status = result.Failed, result.Failed
			a.Failures = []assert.Failure{{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text",
				Expected: want, Actual: actual, Diff: assert.Diff(want, actual)}}
		}
		return &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim"},
			Files: []*result.File{{Path: "s.yaml", Suite: "booking", Cases: []*result.Case{c}}}}
	}
	// The reply is one line against the baseline's (a word diff); the
	// failure's text, two against the expected text (a line diff).
	base, r := run("Table\u00a0for 4", ""), run("Table\u00a0for\u00a04", "Hello\u00a0there\nTable for\u00a04\u200b people")
	b := compareHTML(t, base, r, HTMLOptions{})
	skeleton, data := splitPage(t, b.String())
	if want := "<pre class=\"diff\">Table\u00a0for<del> </del><ins>\\u00a0</ins>4</pre>"; !strings.Contains(skeleton, want) {
		t.Errorf("the comparison lacks %q:\n%s", want, skeleton)
	}
	doc := failureDiffs(t, data)
	want := [][2]any{{0.0, "Hello\u00a0there\n"}, {1.0, "Table for 4 people\n"}, {2.0, `Table for\u00a04\u200b people` + "\n"}}
	if len(doc.Cases) != 1 || len(doc.Cases[0].Attempts) != 1 || len(doc.Cases[0].Attempts[0].Failures) != 1 {
		t.Fatalf("data: %s", data)
	}
	if got := doc.Cases[0].Attempts[0].Failures[0].Diff.Changes; !reflect.DeepEqual(got, want) {
		t.Errorf("the failure's diff\n got %#v\nwant %#v", got, want)
	}
}

// TestIgnoreCaseDiff: a failure of a check that ignored case keeps that in
// the JSON report (ignore_case), and the renderers that recompute the diff
// (the console in colour, the HTML report), given the report read back,
// mark only the real change, not every letter whose case differs.
func TestIgnoreCaseDiff(t *testing.T) {
	t.Parallel()
	const want, got = "Lovely! How many guests will be joining?", "LOVELY! HOW MANY PEOPLE WILL BE JOINING?"
	f := assert.Failure{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text (ignoring case)",
		Expected: want, Actual: got, IgnoreCase: true}
	f.Diff = assert.DiffTextFor(f, want, got, false)
	turn := &result.Turn{Index: 0, Say: "hi", Pos: diag.Pos{File: "s.yaml", Line: 3, Col: 5}, Started: t0, Latency: time.Millisecond,
		Result: &reply.TurnResult{Response: got}}
	r := oneFailure(f, turn)

	var js bytes.Buffer
	if err := WriteJSON(&js, r, JSONOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"ignore_case": true`) {
		t.Errorf("the JSON report lacks ignore_case:\n%s", js.String())
	}
	rep, err := ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	read := rep.Result.Files[0].Cases[0].Attempts[0].Failures[0]
	if !read.IgnoreCase || read.Diff != "LOVELY! HOW MANY [-guests-]{+PEOPLE+} WILL BE JOINING?" {
		t.Errorf("read back: ignore_case %v, diff %q", read.IgnoreCase, read.Diff)
	}

	// The console in colour recomputes the diff too.
	var con bytes.Buffer
	replay(NewHuman(&con, HumanOptions{TTY: true, Color: true, Now: stepClock()}), rep.Result)
	if want := "LOVELY! HOW MANY \x1b[31m[-guests-]\x1b[0m\x1b[32m{+PEOPLE+}\x1b[0m WILL BE JOINING?"; !strings.Contains(con.String(), want) {
		t.Errorf("the console lacks %q:\n%q", want, con.String())
	}

	var b bytes.Buffer
	if err := WriteHTML(&b, rep.Result, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	_, data := splitPage(t, b.String())
	doc := failureDiffs(t, data)
	if len(doc.Cases) != 1 || len(doc.Cases[0].Attempts) != 1 || len(doc.Cases[0].Attempts[0].Failures) != 1 {
		t.Fatalf("data: %s", data)
	}
	wantCh := [][2]any{{0.0, "LOVELY! HOW MANY "}, {1.0, "guests"}, {2.0, "PEOPLE"}, {0.0, " WILL BE JOINING?"}}
	if got := doc.Cases[0].Attempts[0].Failures[0].Diff.Changes; !reflect.DeepEqual(got, wantCh) {
		t.Errorf("the failure's diff\n got %#v\nwant %#v", got, wantCh)
	}
}

// diffData is the part of the HTML report's data block that holds the
// failures' diffs.
type diffData struct {
	Cases []struct {
		Attempts []struct {
			Failures []struct {
				Diff struct {
					Changes [][2]any `json:"ch"`
				} `json:"diff"`
			} `json:"fail"`
		} `json:"a"`
	} `json:"cases"`
}

// failureDiffs decodes the failures' diffs of the data block data.
func failureDiffs(t *testing.T, data string) diffData {
	t.Helper()
	var doc diffData
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("data block: %v", err)
	}
	return doc
}

// TestHTMLCaseMeta: the line under a case's name says its session
// parameters, and that its replies were streamed when they were.
func TestHTMLCaseMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c    result.Case
		want string
	}{
		{c: result.Case{Name: "a", Agent: "billing", Env: "sandbox"}, want: "agent billing · env sandbox"},
		{c: result.Case{Name: "a", Agent: "billing", Via: "messaging"}, want: "agent billing · via messaging"},
		{c: result.Case{Name: "a", Agent: "billing", Via: "messaging", Streaming: true}, want: "agent billing · via messaging · streamed replies"},
	} {
		if got := toHTMLCase(0, &result.File{Path: "s.yaml"}, &tc.c).Meta; got != tc.want {
			t.Errorf("meta %q, want %q", got, tc.want)
		}
	}
}

// TestHTMLFailureValuesAsConsole: a failure's expected, nearest and actual
// values read in the HTML report as the console prints them: quoted when
// white space matters (a trailing space, then with a no-break space
// escaped), an empty reply as "", a text of several lines as its lines;
// the diff is still made of the texts themselves.
func TestHTMLFailureValuesAsConsole(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, exp, near, act, wantExp, wantNear, wantAct string
		// wantDiff is the diff's changes, when the case pins them.
		wantDiff [][2]any
	}{
		{name: "trailing space", exp: "Table for 4 ", act: "Table for 4", wantExp: `"Table for 4 "`, wantAct: "Table for 4"},
		{name: "no-break space and trailing space", exp: "19\u00a0h ", act: "19 h", wantExp: `"19\u00a0h "`, wantAct: "19 h"},
		// Alone, a no-break space is left to the diff, in both.
		{name: "no-break space", exp: "19\u00a0h", act: "19 h", wantExp: "19\u00a0h", wantAct: "19 h"},
		{name: "empty reply", exp: "Hello", act: "", wantExp: "Hello", wantAct: `""`},
		{name: "nearest", exp: `is one of "a", "b "`, near: "b ", act: "c", wantExp: `is one of "a", "b "`, wantNear: `"b "`, wantAct: "c"},
		{name: "lines", exp: "one\ntwo", act: "one\nthree", wantExp: "one\ntwo", wantAct: "one\nthree"},
		// Nothing was expected but something came.
		{name: "no expected text", exp: "", act: "Hello", wantExp: `""`, wantAct: "Hello"},
		// A reply that differs only by an escape sequence shows it
		// escaped, in its value and in the diff: stripped, the two values
		// read the same and the failure had no diff.
		{name: "escape sequence", exp: "Table for 2", act: "Table\x1b[31m for 2", wantExp: "Table for 2", wantAct: `"Table\x1b[31m for 2"`,
			wantDiff: [][2]any{{0.0, "Table"}, {2.0, `\x1b[31m`}, {0.0, " for 2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := assert.Failure{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text",
				Expected: tc.exp, Nearest: tc.near, Actual: tc.act}
			f.Diff = assert.Diff(f.DiffBase(), tc.act)
			r := oneFailure(f, &result.Turn{Index: 1, Say: "hi", Pos: diag.Pos{File: "s.yaml", Line: 4, Col: 9}, Started: t0, Result: &reply.TurnResult{Response: tc.act}})
			var b bytes.Buffer
			if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			_, data := splitPage(t, b.String())
			var doc struct {
				Cases []struct {
					Attempts []struct {
						Failures []struct {
							Exp  string `json:"exp"`
							Near string `json:"near"`
							Act  string `json:"act"`
							Diff struct {
								Changes [][2]any `json:"ch"`
							} `json:"diff"`
						} `json:"fail"`
					} `json:"a"`
				} `json:"cases"`
			}
			if err := json.Unmarshal([]byte(data), &doc); err != nil {
				t.Fatalf("data block: %v", err)
			}
			got := doc.Cases[0].Attempts[0].Failures[0]
			if got.Exp != tc.wantExp || got.Near != tc.wantNear || got.Act != tc.wantAct {
				t.Errorf("expected %q nearest %q actual %q, want %q, %q, %q", got.Exp, got.Near, got.Act, tc.wantExp, tc.wantNear, tc.wantAct)
			}
			if tc.wantDiff != nil && !reflect.DeepEqual(got.Diff.Changes, tc.wantDiff) {
				t.Errorf("diff %#v, want %#v", got.Diff.Changes, tc.wantDiff)
			}
			for _, ch := range got.Diff.Changes {
				if s, _ := ch[1].(string); strings.HasPrefix(s, `"`) {
					t.Errorf("the diff compares the quoted value: %#v", got.Diff.Changes)
				}
				if s, _ := ch[1].(string); strings.Contains(s, "\x1b") {
					t.Errorf("the diff holds an escape sequence: %#v", got.Diff.Changes)
				}
			}
			// The console says the same.
			console := FailureValues(f, "")
			for _, v := range []string{tc.wantExp, tc.wantAct} {
				if !strings.Contains(v, "\n") && !strings.Contains(console, v) {
					t.Errorf("the console shows no %q:\n%s", v, console)
				}
			}
		})
	}
}

// oneFailure is a run of one case, "books" in s.yaml, whose one attempt
// took turn and broke f.
func oneFailure(f assert.Failure, turn *result.Turn) *result.Result {
	a := &result.Attempt{Number: 1, Status: result.Failed, Started: t0, Duration: time.Second, Turns: []*result.Turn{turn},
		Failures: []assert.Failure{f}}
	c := &result.Case{Name: "books", Pos: diag.Pos{File: "s.yaml", Line: 2, Col: 3}, Status: result.Failed, Duration: time.Second,
		Attempts: []*result.Attempt{a}}
	return &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim"},
		Files: []*result.File{{Path: "s.yaml", Suite: "booking", Cases: []*result.Case{c}}}}
}

// TestHTMLKindsAgreeWithCounts: every filter of the case list counts as
// many cases as answer to it in the data, and as the summary the JSON and
// JUnit reports are made from counts: a quarantined case that ran is
// "quarantined" only, a failed case whose sequential test was undecided
// is "failed" and "inconclusive" (unless quarantined), a run-level check
// is listed with the scenarios, a lapsed quarantine gates again. The
// failed and passed filters are offered even when they count nothing.
func TestHTMLKindsAgreeWithCounts(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name   string
		cases  []*result.Case
		checks []*result.Case
		want   map[string]int
	}
	quarantine := &result.Quarantine{Reason: "BUG-7", Until: "2099-01-01"}
	undecided := &result.Repeat{Decision: result.DecisionInconclusive}
	run := func(t *testing.T, tc testCase) {
		r := &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim"},
			// A nil file is listed by no index: the cases after it keep
			// theirs.
			Files: []*result.File{nil, {Path: "s.yaml", Suite: "s", Cases: tc.cases}}}
		r.Checks = tc.checks
		var b bytes.Buffer
		if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		skeleton, data := splitPage(t, b.String())
		chips := map[string]int{}
		for _, m := range regexp.MustCompile(`data-kind="(\w+)" aria-pressed="false">\w+ <b>(\d+)</b>`).FindAllStringSubmatch(skeleton, -1) {
			var n int
			fmt.Sscan(m[2], &n)
			chips[m[1]] = n
		}
		if !reflect.DeepEqual(chips, tc.want) {
			t.Errorf("filters %v, want %v", chips, tc.want)
		}
		var doc struct {
			Cases []struct {
				File  int      `json:"f"`
				Kinds []string `json:"k"`
			} `json:"cases"`
		}
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			t.Fatal(err)
		}
		answer := map[string]int{}
		for i, c := range doc.Cases {
			for _, k := range c.Kinds {
				answer[k]++
			}
			wantFile := 0
			if i >= len(tc.cases) {
				wantFile = -1
			}
			if c.File != wantFile {
				t.Errorf("case %d is listed in file %d, want %d", i, c.File, wantFile)
			}
		}
		s := Summarize(r)
		summary := map[string]int{"failed": s.Failed, "errored": s.Errored, "flaky": s.Flaky, "quarantined": s.Quarantined,
			"inconclusive": s.Inconclusive, "passed": s.Passed, "skipped": s.Skipped, "pending": s.Pending}
		for k, n := range tc.want {
			if answer[k] != n || summary[k] != n {
				t.Errorf("%s: %d cases answer to it, the summary counts %d, the filter %d", k, answer[k], summary[k], n)
			}
		}
		if len(doc.Cases) != s.Total {
			t.Errorf("%d cases listed, the summary counts %d", len(doc.Cases), s.Total)
		}
	}
	for _, tc := range []testCase{
		{
			name: "every kind",
			cases: []*result.Case{
				{Name: "passed", Status: result.Passed},
				{Name: "failed", Status: result.Failed},
				{Name: "errored", Status: result.Errored},
				{Name: "flaky", Status: result.Flaky},
				{Name: "skipped", Status: result.Skipped},
				{Name: "pending", Status: result.Pending},
				{Name: "quarantined, passed", Status: result.Passed, Quarantine: quarantine},
				{Name: "quarantined, failed", Status: result.Failed, Quarantine: quarantine},
				{Name: "quarantined, skipped", Status: result.Skipped, Quarantine: quarantine},
				{Name: "lapsed", Status: result.Failed, Quarantine: &result.Quarantine{Reason: "BUG-8", Until: "2000-01-01", Lapsed: true}},
				{Name: "undecided", Status: result.Failed, Repeat: undecided},
				{Name: "undecided too", Status: result.Failed, Repeat: undecided},
				{Name: "undecided, quarantined", Status: result.Failed, Repeat: undecided, Quarantine: quarantine},
			},
			checks: []*result.Case{{Name: "alert gate", Status: result.Failed}, {Name: "budget", Status: result.Passed}},
			want:   map[string]int{"passed": 2, "failed": 5, "errored": 1, "flaky": 1, "skipped": 2, "pending": 1, "quarantined": 3, "inconclusive": 2},
		},
		{
			name:  "nothing failed or passed",
			cases: []*result.Case{{Name: "skipped", Status: result.Skipped}},
			want:  map[string]int{"failed": 0, "passed": 0, "skipped": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestHTMLDeploymentFacts: the header's line about each deployment tested
// says what the run knows of it, in every shape the evidence takes.
func TestHTMLDeploymentFacts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		d    *result.Deployment
		want string
	}{
		{d: &result.Deployment{Agent: "billing", Env: "sandbox", Note: "the platform answered 404"},
			want: "billing in sandbox: unknown (the platform answered 404)"},
		{d: &result.Deployment{Agent: "billing", Env: "sandbox", ID: "dep-1", Version: "1.2", After: "dep-2"},
			want: "deployment of billing changed during the run: dep-1 → dep-2"},
		{d: &result.Deployment{Agent: "billing", Env: "live", ID: "dep-1", Version: "1.2", After: "dep-1"},
			want: "billing in live: dep-1 (version 1.2), the same after the last case"},
		{d: &result.Deployment{Agent: "billing", Env: "live", ID: "dep-1", After: "dep-1"},
			want: "billing in live: dep-1, the same after the last case"},
		{d: &result.Deployment{Agent: "billing", Env: "live", ID: "dep-1", Note: "run interrupted"},
			want: "billing in live: dep-1, not confirmed after the last case: run interrupted"},
		{d: &result.Deployment{Agent: "billing", Env: "live", ID: "dep-1"},
			want: "billing in live: dep-1"},
	} {
		got := deploymentFacts([]*result.Deployment{nil, tc.d})
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("deployment %+v reads %q, want %q", *tc.d, got, tc.want)
		}
	}
}

// TestHTMLCaseData: what the case list shows of a case that is not a
// plain failure (its quarantine, the outcome of each of its runs, the
// conversation or Messaging session it held) is in its data, a server's
// or a suite's text with its controls escaped as elsewhere.
func TestHTMLCaseData(t *testing.T) {
	t.Parallel()
	const evil, shown = "a\x1b[2Jb\rc\u202ed\x00e\u2066f\u0085g", `ab\rc\u202ed\x00e\u2066f\u0085g`
	attempt := func(run int, st result.Status) *result.Attempt {
		return &result.Attempt{Number: 1, Run: run, Status: st, ConversationID: "conv-1"}
	}
	for _, tc := range []struct {
		name string
		c    result.Case
		got  func(htmlCase) string
		want string
	}{
		{
			name: "quarantine",
			c: result.Case{Status: result.Failed, Quarantine: &result.Quarantine{Reason: evil, Owner: "ops", Until: "2099-01-01"},
				Attempts: []*result.Attempt{attempt(0, result.Failed)}},
			got:  func(hc htmlCase) string { return hc.Note },
			want: "quarantined until 2099-01-01, ops: " + shown + "; does not gate",
		},
		{
			name: "runs",
			c: result.Case{Status: result.Failed, Repeat: &result.Repeat{Runs: 4, Passed: 2, Failed: 1, Errored: 1},
				Attempts: []*result.Attempt{attempt(1, result.Passed), attempt(2, result.Failed), attempt(3, result.Errored), attempt(4, result.Flaky)}},
			got:  func(hc htmlCase) string { return hc.Runs },
			want: "pfep",
		},
		{
			name: "conversation",
			c:    result.Case{Status: result.Passed, Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, ConversationID: evil}}},
			got:  func(hc htmlCase) string { return hc.Attempts[0].Conv },
			want: shown,
		},
		{
			name: "session",
			c: result.Case{Status: result.Passed, Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Turns: []*result.Turn{
				{Index: 0, Result: &reply.TurnResult{Response: evil}, Messaging: &reply.Messaging{SessionID: evil}}}}}},
			got:  func(hc htmlCase) string { return hc.Attempts[0].Conv },
			want: shown,
		},
		{
			// A turn that is not there is not shown; one with no events
			// shows none, not an empty line.
			name: "session reply",
			c: result.Case{Status: result.Passed, Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Turns: []*result.Turn{
				nil, {Index: 0, Result: &reply.TurnResult{Response: evil}, Messaging: &reply.Messaging{SessionID: "s-1"}}}}}},
			got: func(hc htmlCase) string {
				return fmt.Sprintf("%d turns: %s, events %q", len(hc.Attempts[0].Turns), hc.Attempts[0].Turns[0].Reply, hc.Attempts[0].Turns[0].Events)
			},
			want: `1 turns: ` + shown + `, events []`,
		},
		{
			// A reply without state changes none: the next one's changes
			// are against the last state seen, as the console says them.
			name: "state over a turn without it",
			c: result.Case{Status: result.Passed, Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Turns: []*result.Turn{
				stateTurn(0, map[string]any{"a": 1}), stateTurn(1, nil), stateTurn(2, map[string]any{"a": 1, "b": 2})}}}},
			got: func(hc htmlCase) string {
				var out []string
				for _, t := range hc.Attempts[0].Turns {
					out = append(out, fmt.Sprint(t.State))
				}
				return strings.Join(out, " ")
			},
			want: "[+a=1] [] [+b=2]",
		},
		{
			// A diff that marks nothing still says why the texts differ.
			name: "diff of a final newline",
			c: result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, Failures: []assert.Failure{{
				Key: "response", Message: "reply is not the expected text", Expected: "a\nb\n", Actual: "a\nb", Diff: assert.Diff("a\nb\n", "a\nb")}}}}},
			got: func(hc htmlCase) string {
				d := hc.Attempts[0].Failures[0].Diff
				if d == nil {
					return "no diff"
				}
				return fmt.Sprintf("%d changes, note %q", len(d.Changes), d.Note)
			},
			want: `0 changes, note "the texts differ only in the final newline"`,
		},
		{
			name: "confirmations",
			c: result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Number: 1, Status: result.Failed, Confirmations: []*result.Confirmation{
				nil, {Kind: "ticket", Subject: evil, Found: true, Held: true, Summary: evil, Seen: []result.Seen{{Who: result.SeenAgent, Text: evil}}}}}}},
			got:  func(hc htmlCase) string { return fmt.Sprintf("%+v", hc.Attempts[0].Confirm) },
			want: `[{Kind:ticket Subject:` + shown + ` Held:true Summary:` + shown + ` Seen:[{Who:agent Line:< ` + shown + `}]}]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = "books"
			if got := tc.got(toHTMLCase(0, &result.File{Path: "s.yaml"}, &tc.c)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// stateTurn is turn i answered with state (none when nil).
func stateTurn(i int, state map[string]any) *result.Turn {
	m := map[string]any{"currentNode": "n"}
	if state != nil {
		m["state"] = state
	}
	raw := mustJSON(m)
	var md reply.Metadata
	if err := json.Unmarshal(raw, &md); err != nil {
		panic(err)
	}
	return &result.Turn{Index: i, Result: (&reply.TurnResult{Response: "ok", RawMetadata: raw}).SetMetadata(md)}
}

// TestHTMLComparePairs: the comparison section lists every pair that
// changed, regressions first and in the order of compare.Classes, the
// unchanged ones left out, at most comparePairLimit of them.
func TestHTMLComparePairs(t *testing.T) {
	t.Parallel()
	pair := func(name string, cl compare.Class) *compare.Pair { return &compare.Pair{Name: name, Class: cl} }
	names := func(ps []*compare.Pair) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	ps := []*compare.Pair{pair("a", compare.Unchanged), pair("b", compare.Fixed), nil, pair("c", compare.OnlyCandidate),
		pair("d", compare.Regressed), pair("e", compare.Fixed), pair("f", compare.Slower)}
	if got, want := names(comparePairs(ps)), []string{"d", "b", "e", "f", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pairs %q, want %q", got, want)
	}
	many := make([]*compare.Pair, comparePairLimit+1)
	for i := range many {
		many[i] = pair(fmt.Sprint(i), compare.Regressed)
	}
	if got := comparePairs(many); len(got) != comparePairLimit || got[comparePairLimit-1] != many[comparePairLimit-1] {
		t.Errorf("%d pairs listed, want the first %d", len(got), comparePairLimit)
	}
}

// TestHTMLCompareSide: a side of a comparison is named by what it ran
// (a report read back, or a spec with its target and environment), its
// run's status and the deployments it read.
func TestHTMLCompareSide(t *testing.T) {
	t.Parallel()
	deps := []*result.Deployment{nil, {Agent: "billing", ID: "dep-1"}, {Agent: "clinic", Note: "404"}}
	for _, tc := range []struct {
		s    compare.Side
		want string
	}{
		{s: compare.Side{Spec: "old.json", Kind: compare.KindReport, Report: "old.json", Run: compare.SideRun{Status: result.RunPassed}},
			want: "report old.json, run passed"},
		{s: compare.Side{Spec: "live", Kind: compare.KindEnvironment, Env: "prod", Target: result.Target{Name: "eu"},
			Run: compare.SideRun{Status: result.RunFailed}, Deployments: deps},
			want: "live (target eu, env prod), run failed, deployment of billing dep-1"},
		{s: compare.Side{Spec: "eu", Kind: compare.KindTarget, Env: "sandbox", Target: result.Target{Name: "eu"}, Run: compare.SideRun{Status: result.RunErrored}},
			want: "eu (target eu, env sandbox), run errored"},
	} {
		if got := compareSide(tc.s); got != tc.want {
			t.Errorf("side %q, want %q", got, tc.want)
		}
	}
}

// TestHTMLCompareLatency: the comparison's latency line says whether the
// candidate is slower or faster overall only when the test found a shift.
func TestHTMLCompareLatency(t *testing.T) {
	t.Parallel()
	l := compare.Latency{Scenarios: 3, BaselineMedian: 100, CandidateMedian: 400, BaselineP95: 200, CandidateP95: 900, MedianShift: 300,
		Test: compare.SignedRankTest{P: 0.01}}
	const over = "Latency over 3 scenarios: median per turn 100ms → 400ms, p95 200ms → 900ms; median shift per scenario 300ms (Wilcoxon signed-rank p = 0.01)"
	for _, tc := range []struct {
		verdict string
		want    string
	}{
		{verdict: string(compare.Slower), want: over + ": slower overall."},
		{verdict: string(compare.Faster), want: over + ": faster overall."},
		{verdict: "", want: over + ": no overall shift."},
	} {
		l.Verdict = tc.verdict
		if got := compareLatency(l); got != tc.want {
			t.Errorf("verdict %q:\n got %q\nwant %q", tc.verdict, got, tc.want)
		}
	}
	if got, want := compareLatency(compare.Latency{}), "Latency: no scenario answered on both sides."; got != want {
		t.Errorf("no scenario: got %q, want %q", got, want)
	}
}

// TestHTMLDiffView: a comparison's reply diff of several lines is shown
// as lines marked removed or added, each with its prefix, the others kept;
// the text both replies share shows its controls escaped too.
func TestHTMLDiffView(t *testing.T) {
	t.Parallel()
	v := diffView("Hello\nTable for 2\nBye", "Hello\nTable for 4\nBye")
	want := []htmlDiffLine{{"", "  Hello"}, {"rm", "- Table for 2"}, {"add", "+ Table for 4"}, {"", "  Bye"}}
	if !reflect.DeepEqual(v.Lines, want) || v.Inline != nil {
		t.Errorf("diff lines %q, inline %+v, want %q", v.Lines, v.Inline, want)
	}
	v = diffView("Table\r\x1b[2J for 2", "Table\r\x1b[2J for 4")
	if len(v.Inline) == 0 || v.Inline[0].Op != assert.Same || v.Inline[0].Text != `Table\r for ` {
		t.Errorf("diff %+v, want it to start with the shared text escaped", v.Inline)
	}
}

// TestHTMLSuitePlot: with more suites than it draws, the pass-rate plot
// keeps the ones with the lowest rate and says so; a suite is named by
// its path when it has no name, and one where nothing ran has no rate.
func TestHTMLSuitePlot(t *testing.T) {
	t.Parallel()
	suites := func(n int) *result.Result {
		r := &result.Result{Started: t0, Duration: time.Second}
		for i := range n {
			f := &result.File{Path: fmt.Sprintf("suites/s%02d.yaml", i), Suite: fmt.Sprintf("suite %02d", i),
				Cases: []*result.Case{{Name: "a", Status: result.Passed}}}
			switch i {
			case 0:
				f.Suite = ""
			case n - 2:
				f.Suite, f.Cases[0].Status = "worst", result.Failed
			case n - 1:
				f.Suite, f.Cases[0].Status = "idle", result.Skipped
			}
			r.Files = append(r.Files, f)
		}
		return r
	}
	for _, tc := range []struct {
		n             int
		caption       string
		shown, hidden []string
	}{
		{n: suiteLimit, caption: "40 suites; pass rate is passed (flaky included) of the cases that ran and gate",
			shown: []string{">suites/s00.yaml<", ">suite 37<", ">worst<", ">idle<", ">0%<", ">—<", ">100%<"}},
		{n: suiteLimit + 2, caption: "the 40 suites with the lowest pass rate of 42; pass rate is passed (flaky included) of the cases that ran and gate",
			shown: []string{">suites/s00.yaml<", ">suite 37<", ">worst<", ">idle<"}, hidden: []string{">suite 38<", ">suite 39<"}},
	} {
		p, ok := suitePlot(suites(tc.n))
		if !ok || p.Caption != tc.caption {
			t.Errorf("%d suites: caption %q, want %q", tc.n, p.Caption, tc.caption)
		}
		for _, s := range tc.shown {
			if !strings.Contains(string(p.SVG), s) {
				t.Errorf("%d suites: the plot lacks %s", tc.n, s)
			}
		}
		for _, s := range tc.hidden {
			if strings.Contains(string(p.SVG), s) {
				t.Errorf("%d suites: the plot shows %s", tc.n, s)
			}
		}
		// The lowest rates come first, in the order of the files.
		if i, j := strings.Index(string(p.SVG), ">worst<"), strings.Index(string(p.SVG), ">idle<"); tc.n > suiteLimit && (i < 0 || j < i || j > strings.Index(string(p.SVG), ">suites/s00.yaml<")) {
			t.Errorf("%d suites: worst, idle, then the others; got worst at %d, idle at %d", tc.n, i, j)
		}
	}
}

// TestHTMLTimelineCrowded: above laneLimit attempts the timeline draws
// how many ran and waited over time, and its caption says it.
func TestHTMLTimelineCrowded(t *testing.T) {
	t.Parallel()
	r := &result.Result{Started: t0, Duration: time.Second}
	f := &result.File{Path: "s.yaml", Suite: "s"}
	for i := range laneLimit + 1 {
		f.Cases = append(f.Cases, &result.Case{Name: "a", Status: result.Passed, Duration: 100 * time.Millisecond, RateWaited: 10 * time.Millisecond,
			Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Started: t0.Add(time.Duration(i) * 2 * time.Millisecond), Duration: 100 * time.Millisecond}}})
	}
	r.Files = []*result.File{f}
	p, ok := timelinePlot(r)
	if want := "401 attempts; on average at most 50 running at once; 4.0s waited on rate limits in all (shaded)"; !ok || p.Caption != want {
		t.Errorf("caption %q, want %q", p.Caption, want)
	}
	for _, want := range []string{`aria-label="attempts running over the run"`, `<path class="area-run" d="M48.0 184.0L`, `Z"><title>attempts running</title></path>`,
		`<path class="area-wait" d="M48.0 184.0L`, `<title>of which waiting on rate limits</title>`, `<line class="axis" x1="48.0" y1="184.0" x2="704.0" y2="184.0"/>`,
		`<text class="tick" x="42.0" y="32.0" text-anchor="end">50</text>`, `<text class="tick" x="42.0" y="184.0" text-anchor="end">0</text>`} {
		if !strings.Contains(string(p.SVG), want) {
			t.Errorf("the plot lacks %s:\n%s", want, p.SVG)
		}
	}
}

// TestHTMLMsLabel: the plots' and the comparison's durations change unit
// at one and ten seconds.
func TestHTMLMsLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ms   float64
		want string
	}{{0, "0"}, {4.25, "4.2ms"}, {10, "10ms"}, {999, "999ms"}, {1000, "1.0s"}, {9999, "10.0s"}, {10000, "10s"}, {61000, "61s"}} {
		if got := msLabel(tc.ms); got != tc.want {
			t.Errorf("msLabel(%v) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

// TestHTMLStaticCases: without its script the page lists the cases that
// gate and did not pass, the first htmlStaticMax of them, and counts the
// rest; a quarantined failure, which does not gate, and a pass are not
// listed, and a run where everything passed lists nothing.
func TestHTMLStaticCases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		failed, errored int
		listed          int
		more            string
	}{
		{name: "all passed"},
		{name: "one of each", failed: 1, errored: 1, listed: 2},
		{name: "at the bound", failed: htmlStaticMax, listed: htmlStaticMax},
		{name: "over it", failed: htmlStaticMax, errored: 3, listed: htmlStaticMax, more: "… and 3 more that did not pass."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &result.File{Path: "s.yaml", Suite: "s"}
			add := func(s result.Status, q *result.Quarantine) {
				a := &result.Attempt{Number: 1, Status: s, Started: t0}
				switch s {
				case result.Failed:
					a.Failures = []assert.Failure{{Pos: diag.Pos{File: "s.yaml", Line: 9, Col: 3}, Key: "response", Message: "reply does not match"}}
				case result.Errored:
					a.Error = &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}
				}
				f.Cases = append(f.Cases, &result.Case{Name: fmt.Sprintf("case %d", len(f.Cases)), Pos: diag.Pos{File: "s.yaml", Line: len(f.Cases) + 1},
					Status: s, Quarantine: q, Attempts: []*result.Attempt{a}})
			}
			add(result.Passed, nil)
			add(result.Failed, &result.Quarantine{Reason: "BUG-1", Until: "2099-01-01"})
			for range tc.failed {
				add(result.Failed, nil)
			}
			for range tc.errored {
				add(result.Errored, nil)
			}
			var b bytes.Buffer
			if err := WriteHTML(&b, &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{f}}, HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if n := strings.Count(page, `<details class="case"><summary>`); n != tc.listed {
				t.Errorf("%d cases listed without the script, want %d", n, tc.listed)
			}
			for _, not := range []string{"case 0", "case 1"} {
				if strings.Contains(page, "<summary>FAILED s.yaml:"+not[5:]+" "+not) {
					t.Errorf("%s (passed or quarantined) is listed", not)
				}
			}
			if tc.listed > 0 && !strings.Contains(page, "<summary>FAILED s.yaml:3 case 2: s.yaml:9:3: reply does not match</summary>") {
				t.Errorf("the first failed case is not listed with its failure")
			}
			if got := strings.Contains(page, "more that did not pass"); got != (tc.more != "") || tc.more != "" && !strings.Contains(page, tc.more) {
				t.Errorf("the count of the cases left out: want %q", tc.more)
			}
			if got := strings.Contains(page, "the cases that did not pass follow"); got != (tc.listed > 0) {
				t.Errorf("the note says cases follow: %v, want %v", got, tc.listed > 0)
			}
		})
	}
}

// TestHTMLLongValues: a value longer than the console's rule for long
// (cutLong) is first shown by the same head, with its length, and kept
// whole for the page to show on a click: a failure's expected, nearest
// and actual values, a reply, a state change. Values that are not long
// carry no cut.
func TestHTMLLongValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("Clause: the tenant shall keep the premises. ", 30) // 1320 runes
	want := long + "landlord"
	blob := strings.Repeat("é", longValue+1)
	f := assert.Failure{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text",
		Expected: want, Nearest: " " + want, Actual: long}
	f.Diff = assert.Diff(f.DiffBase(), long)
	turn := &result.Turn{Index: 1, Say: "terms", Pos: diag.Pos{File: "s.yaml", Line: 4, Col: 9}, Started: t0,
		Result: (&reply.TurnResult{Response: long}).SetMetadata(reply.Metadata{"state": map[string]any{"blob": blob, "a": "x", "c": "y"}})}
	r := oneFailure(f, turn)
	// And over Messaging.
	a := r.Files[0].Cases[0].Attempts[0]
	a.Turns = append(a.Turns, msgTurn(2, 6, "more", long, "conv-1", 0, &reply.Messaging{Joined: true,
		Events: []reply.Event{ev("1", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", long)}}))
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	_, data := splitPage(t, b.String())
	var doc struct {
		Cases []struct {
			Attempts []struct {
				Failures []struct {
					Exp   string `json:"exp"`
					ExpC  string `json:"expc"`
					Near  string `json:"near"`
					NearC string `json:"nearc"`
					Act   string `json:"act"`
					ActC  string `json:"actc"`
				} `json:"fail"`
				Turns []struct {
					Reply    string   `json:"r"`
					ReplyCut string   `json:"rc"`
					State    []string `json:"st"`
					StateCut []string `json:"stc"`
				} `json:"turns"`
			} `json:"a"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(data), &doc); err != nil {
		t.Fatalf("data block: %v", err)
	}
	da := doc.Cases[0].Attempts[0]
	got, tr := da.Failures[0], da.Turns[0]
	head := firstRunes(long, longHead)
	for _, c := range []struct{ name, whole, wantWhole, cut, wantCut string }{
		{"expected", got.Exp, want, got.ExpC, head + "… (1328 characters)"},
		// Quoted as the whole is, as the console quotes it.
		{"nearest", got.Near, `" ` + strings.TrimSuffix(want, " ") + `"`, got.NearC, `" ` + firstRunes(want, longHead-1) + `"… (1329 characters)`},
		// Its trailing space quotes the whole, not the head, as on the
		// console.
		{"actual", got.Act, `"` + long + `"`, got.ActC, head + "… (1320 characters)"},
		{"reply", tr.Reply, long, tr.ReplyCut, head + "… (1320 characters)"},
		{"reply over Messaging", da.Turns[1].Reply, long, da.Turns[1].ReplyCut, head + "… (1320 characters)"},
	} {
		if c.whole != c.wantWhole {
			t.Errorf("%s: whole value %.80q…, want %.80q…", c.name, c.whole, c.wantWhole)
		}
		if c.cut != c.wantCut {
			t.Errorf("%s: cut %q, want %q", c.name, c.cut, c.wantCut)
		}
	}
	// The console shows the same heads.
	console := FailureValues(f, "")
	for _, cut := range []string{got.ExpC, got.NearC, got.ActC} {
		if h, _, _ := strings.Cut(cut, "… ("); !strings.Contains(console, h+"… (") {
			t.Errorf("the console does not show the head %q:\n%.600s", h, console)
		}
	}
	wantState := []string{"", `+blob="` + firstRunes(blob, longHead-len(`+blob="`)) + "… (1009 characters)", ""}
	if len(tr.State) != 3 || tr.State[1] != `+blob="`+blob+`"` || !reflect.DeepEqual(tr.StateCut, wantState) {
		t.Errorf("state %.60q, cut %q; want the whole change and cut %q", tr.State, tr.StateCut, wantState)
	}
	// Values that are not long are not cut.
	short := assert.Failure{Pos: f.Pos, Key: "response", Message: "reply is not the expected text", Expected: "Hello", Actual: strings.Repeat("a", longValue)}
	b.Reset()
	if err := WriteHTML(&b, oneFailure(short, &result.Turn{Index: 1, Say: "hi", Started: t0, Result: (&reply.TurnResult{Response: short.Actual}).SetMetadata(reply.Metadata{"state": map[string]any{"k": "v"}})}), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, data := splitPage(t, b.String()); strings.Contains(data, `"expc"`) || strings.Contains(data, `"actc"`) || strings.Contains(data, `"rc"`) || strings.Contains(data, `"stc"`) {
		t.Errorf("values of at most %d characters are cut: %s", longValue, data)
	}
}

// TestHTMLCompareVerdictInHeader: a comparison's report says the
// comparison's verdict in its header, by the run's own, where a reader
// deciding a promotion looks first; before, the header held only the
// candidate's run (failed, say, where the comparison passed: the failure
// was the baseline's too), and the verdict came below every plot.
func TestHTMLCompareVerdictInHeader(t *testing.T) {
	t.Parallel()
	f := assert.Failure{Pos: diag.Pos{File: "s.yaml", Line: 5, Col: 9}, Key: "response", Message: "reply is not the expected text", Expected: "Hello", Actual: "Hi"}
	turn := func() *result.Turn {
		return &result.Turn{Index: 1, Say: "hi", Started: t0, Result: &reply.TurnResult{Response: "Hi"}}
	}
	base, cand := oneFailure(f, turn()), oneFailure(f, turn())
	cmp := compare.Build(
		compare.Input{Spec: "live", Kind: compare.KindEnvironment, Result: base, Status: base.RunStatus()},
		compare.Input{Spec: "pre-release", Kind: compare.KindEnvironment, Result: cand, Status: cand.RunStatus()},
		compare.DefaultOptions())
	if cmp.Status != result.RunPassed {
		t.Fatalf("a failure the baseline shares is no regression: the comparison %s (%s)", cmp.Status, cmp.Why)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, cand, HTMLOptions{Compare: cmp}); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(b.String(), `<section id="cases"`)
	want := `<p class="status st-` + string(cmp.Status) + `" id="compare-status"><a href="#compare">comparison</a>: <span class="badge">` + string(cmp.Status) + `</span> <span class="why">` + htmlStyle.flat(cmp.Why) + `</span></p>`
	if !strings.Contains(header, want) {
		t.Errorf("the header lacks the comparison's verdict %s:\n%s", want, header)
	}
	if !strings.Contains(header, `<p class="status st-failed" id="run-status">`) {
		t.Errorf("the header lacks the run's own status")
	}
	// A regression, and a why holding what a side named (the path of
	// its report, the reason its run stopped) shown as the console
	// shows it.
	pass := oneFailure(f, turn())
	pass.Files[0].Cases[0].Status, pass.Files[0].Cases[0].Attempts[0].Status, pass.Files[0].Cases[0].Attempts[0].Failures = result.Passed, result.Passed, nil
	cmp = compare.Build(
		compare.Input{Spec: "live", Kind: compare.KindEnvironment, Result: pass, Status: pass.RunStatus()},
		compare.Input{Spec: "pre-release", Kind: compare.KindEnvironment, Result: cand, Status: cand.RunStatus()},
		compare.DefaultOptions())
	cmp.Why += " \u202e\r"
	b.Reset()
	if err := WriteHTML(&b, cand, HTMLOptions{Compare: cmp}); err != nil {
		t.Fatal(err)
	}
	header, _, _ = strings.Cut(b.String(), `<section id="cases"`)
	if want := `<p class="status st-failed" id="compare-status"><a href="#compare">comparison</a>: <span class="badge">failed</span> <span class="why">1 scenario regressed \u202e\r</span></p>`; !strings.Contains(header, want) {
		t.Errorf("the header lacks the comparison's verdict %s:\n%s", want, header)
	}
	// A run's report has no such line.
	b.Reset()
	if err := WriteHTML(&b, cand, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="compare-status"`) {
		t.Errorf("a run's report names a comparison")
	}
}

// TestSectionLong pins that the comparison's table cleans the head it
// first shows as it cleans the whole: a node name of a hostile server,
// long enough to be cut, keeps no escape sequence in either.
func TestSectionLong(t *testing.T) {
	v := sectionLong("\x1b[31mNode" + strings.Repeat("x", 1200))
	if strings.ContainsRune(v.Cut, 0x1b) || strings.ContainsRune(v.Whole, 0x1b) {
		t.Errorf("escape sequence kept: cut %.40q, whole %.40q", v.Cut, v.Whole)
	}
	if !strings.HasPrefix(v.Cut, "Nodexx") || !strings.HasSuffix(v.Cut, "… (1209 characters)") {
		t.Errorf("cut %q, want the cleaned head and the length", v.Cut)
	}
	if short := sectionLong("Start → Menu"); short.Cut != "" || short.Whole != "Start → Menu" {
		t.Errorf("a short value: %+v, want it whole and not cut", short)
	}
}

// TestHTMLCompareUnchecked: the comparison's section says which pairs
// check nothing, and on which side: beside a pair it lists, and in a
// list of them all, unchanged ones included, which it lists nowhere
// else. Before, only the JSON (and the gate) said so: a reviewer read an
// unchanged scenario that tested nothing as one that held.
func TestHTMLCompareUnchecked(t *testing.T) {
	t.Parallel()
	run := func(said string, unchecked ...bool) *result.Result {
		var cases []*result.Case
		for i, name := range []string{"says goodbye", "books", "greets"} {
			turn := &result.Turn{Index: 0, Say: "hi", Pos: diag.Pos{File: "s.yaml", Line: 10*i + 3, Col: 5}, Started: t0, Latency: time.Millisecond,
				Result: &reply.TurnResult{Response: said + name}}
			cases = append(cases, &result.Case{Name: name, Pos: diag.Pos{File: "s.yaml", Line: 10*i + 2, Col: 3}, Status: result.Passed, Duration: time.Second,
				Unchecked: unchecked[i], Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Started: t0, Duration: time.Second, Turns: []*result.Turn{turn}}}})
		}
		return &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "sim"},
			Files: []*result.File{{Path: "s.yaml", Suite: "booking", Cases: cases}}}
	}
	// says goodbye: unchanged, nothing checked on both sides; books:
	// changed, nothing checked on the candidate; greets: checks.
	base, r := run("same ", true, false, false), run("same ", true, true, false)
	r.Files[0].Cases[1].Attempts[0].Turns[0].Result.Response = "other books"
	b := compareHTML(t, base, r, HTMLOptions{})
	skeleton, _ := splitPage(t, b.String())
	for _, want := range []string{
		`<p class="unchecked"><b>Checked nothing</b> <span class="meta">(passes whenever the agent answers, so its class says nothing of the agent)</span>: <span class="mono">s.yaml:2</span> says goodbye (on both sides); <span class="mono">s.yaml:12</span> books (on the candidate)</p>`,
		`<b>books</b> <span class="mono meta">s.yaml:12</span> <span class="meta">(checks nothing on the candidate)</span></summary>`,
	} {
		if !strings.Contains(skeleton, want) {
			t.Errorf("the page lacks %s:\n%s", want, skeleton)
		}
	}
	if strings.Count(skeleton, "checks nothing on") != 1 || strings.Contains(skeleton, "greets (on") {
		t.Errorf("the page marks a pair that checks:\n%s", skeleton)
	}

	// At most comparePairLimit named, and how many more.
	many := make([]*compare.Pair, comparePairLimit+2)
	for i := range many {
		many[i] = &compare.Pair{Name: fmt.Sprint(i), Class: compare.Unchanged, Candidate: &compare.Outcome{Unchecked: true}}
	}
	if got := compareUnchecked(many); len(got.Pairs) != comparePairLimit || got.More != 2 || got.Pairs[comparePairLimit-1] != many[comparePairLimit-1] {
		t.Errorf("%d listed and %d more, want %d and 2", len(got.Pairs), got.More, comparePairLimit)
	}
	if got := compareUnchecked(many[:comparePairLimit]); len(got.Pairs) != comparePairLimit || got.More != 0 {
		t.Errorf("%d listed and %d more, want %d and 0", len(got.Pairs), got.More, comparePairLimit)
	}
	if got := compareUnchecked(many[:0]); got != nil {
		t.Errorf("none unchecked: %+v", got)
	}
}
