package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// The escapes of @actions/core (command.ts): a message may not end the
// command early, and a property may not end itself or the property list.
func TestGitHubEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	annotation(&b, "error", diag.Pos{File: "suites/a,b:c.yaml", Line: 3, Col: 7}, "50% off, now: cheap\r\n",
		"100% sure\r\nline two: a, b\n")
	want := "::error file=suites/a%2Cb%3Ac.yaml,line=3,col=7,title=agenttest 50%25 off%2C now%3A cheap\\r\\n::" +
		"100%25 sure%0D%0Aline two: a, b\n"
	if got := b.String(); got != want {
		t.Errorf("annotation:\n got %q\nwant %q", got, want)
	}
	if got := mdText("a | b <script>*x*</script>\nnext"); got != `a \| b &lt;script&gt;\*x\*&lt;/script&gt; next` {
		t.Errorf("mdText = %q", got)
	}
}

// A scenario's name, its path and a deployment id are a file's or a
// platform's text: in the job's log (the annotations) and its summary
// they can neither colour nor clear the log viewer nor reorder what it
// shows, and HTML stays text. Before, the title, the file property and
// the summary's cells carried them raw.
func TestGitHubHostileText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in             string
		title, summary, code string
	}{
		{name: "colour", in: "a \x1b[31mred\x1b[0m b",
			title: "agenttest a red b", summary: "a red b", code: "`a red b`"},
		{name: "screen clear and window title", in: "x\x1b[2J\x1b]0;pwn\x07y",
			title: "agenttest xy", summary: "xy", code: "`xy`"},
		{name: "lone escape and bell", in: "x\x1by\x07",
			title: `agenttest x\x1by\a`, summary: `x\\x1by\\a`, code: "`x\\x1by\\a`"},
		{name: "bidi override", in: "passed \u202edeliaf",
			title: `agenttest passed \u202edeliaf`, summary: `passed \\u202edeliaf`, code: "`passed \\u202edeliaf`"},
		{name: "carriage return forging a line", in: "ok\r::error::forged",
			title: `agenttest ok\r%3A%3Aerror%3A%3Aforged`, summary: "ok ::error::forged", code: "`ok ::error::forged`"},
		{name: "invalid UTF-8 and NUL", in: "a\xff\x00b",
			title: `agenttest a\xff\x00b`, summary: `a\\xff\\x00b`, code: "`a\\xff\\x00b`"},
		{name: "HTML", in: "<img src=x onerror=alert(1)>",
			title: "agenttest <img src=x onerror=alert(1)>", summary: "&lt;img src=x onerror=alert(1)&gt;", code: "`<img src=x onerror=alert(1)>`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			annotation(&b, "error", diag.Pos{File: tc.in, Line: 1}, tc.in, "m")
			want := "::error file=" + strings.TrimPrefix(tc.title, "agenttest ") + ",line=1,title=" + tc.title + "::m\n"
			if got := b.String(); got != want {
				t.Errorf("annotation:\n got %q\nwant %q", got, want)
			}
			if got := mdText(tc.in); got != tc.summary {
				t.Errorf("mdText = %q, want %q", got, tc.summary)
			}
			if got := mdCode(tc.in); got != tc.code {
				t.Errorf("mdCode = %q, want %q", got, tc.code)
			}
		})
	}
}

// An interrupted run says so on the job's page whatever its cases say:
// an ::error of its own, first, and the summary's count of the cases it
// did not run. Before, a failed case's annotation was the only one, and
// the job, red with exit 130, read as a failed run. The scenario's
// name, a suite's text, stays escaped in the annotations that follow.
func TestGitHubInterrupted(t *testing.T) {
	t.Parallel()
	r := &result.Result{Started: t0, Duration: time.Second, Interrupted: true, Target: result.Target{Name: "sim", Embedded: true},
		Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
			{Name: "books\r::error::forged", Pos: pos("suites/a.yaml", 3, 5), Status: result.Failed, Attempts: []*result.Attempt{{
				Number: 1, Status: result.Failed, Failures: []assert.Failure{{Pos: pos("suites/a.yaml", 6, 9), Key: "reply", Message: "reply does not match"}}}}},
			{Name: "greets", Pos: pos("suites/a.yaml", 10, 5), Status: result.Passed},
			{Name: "pays", Pos: pos("suites/a.yaml", 20, 5), Status: result.Pending, SkipReason: result.ReasonInterrupted},
		}}}}
	var b strings.Builder
	if err := WriteGitHubAnnotations(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		"::error title=agenttest run interrupted::the run was stopped before every case finished (cancelled by a signal or a deadline): " +
			"1 of 3 scenarios not run; the verdicts of the others stand",
		`::error file=suites/a.yaml,line=6,col=9,title=agenttest failed%3A books\r%3A%3Aerror%3A%3Aforged::suites/a.yaml:6:9: reply does not match`,
	}
	if !slices.Equal(lines, want) {
		t.Errorf("annotations:\n got %q\nwant %q", lines, want)
	}
	b.Reset()
	if err := WriteGitHubSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ⏹️ agenttest: interrupted\n\nthe run was stopped before every case finished (cancelled by a signal or a deadline): " +
		"1 of 3 scenarios not run; the verdicts of the others stand\n", "1 not run", `| failed | books ::error::forged |`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

// TestGitHubAnnotationPlaces: each case that did not pass is annotated
// where it broke, with the level that says whether it gates: the failure's
// or the error's position, else the scenario's (the file's path when the
// scenario has none), and no file for a run-level check that has none.
// Passing, skipped and pending cases are not annotated.
func TestGitHubAnnotationPlaces(t *testing.T) {
	t.Parallel()
	fail := func(p diag.Pos) []*result.Attempt {
		return []*result.Attempt{{Number: 1, Status: result.Failed, Failures: []assert.Failure{{Pos: p, Key: "reply", Message: "reply does not match"}}}}
	}
	errored := []*result.Attempt{{Number: 1, Status: result.Errored, Error: &result.Error{Kind: result.KindTimeout, Message: "no reply within 10s"}}}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"},
		Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: []*result.Case{
			{Name: "passes", Pos: pos("suites/a.yaml", 3, 5), Status: result.Passed},
			{Name: "fails", Pos: pos("suites/a.yaml", 10, 5), Status: result.Failed, Attempts: fail(pos("suites/a.yaml", 12, 9))},
			{Name: "fails with no place", Status: result.Failed, Attempts: fail(diag.Pos{})},
			{Name: "errors", Pos: pos("suites/a.yaml", 20, 5), Status: result.Errored, Attempts: errored},
			{Name: "quarantined", Pos: pos("suites/a.yaml", 30, 5), Status: result.Failed, Attempts: fail(pos("suites/a.yaml", 31, 9)),
				Quarantine: &result.Quarantine{Reason: "r", Until: "2026-12-31"}},
			{Name: "skipped", Pos: pos("suites/a.yaml", 40, 5), Status: result.Skipped, SkipReason: "skip: later"},
			{Name: "pending", Pos: pos("suites/a.yaml", 50, 5), Status: result.Pending},
		}}},
		Checks: []*result.Case{{Name: "no alerts firing", Status: result.Errored, Attempts: errored}}}
	var b strings.Builder
	if err := WriteGitHubAnnotations(&b, r); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"::error file=suites/a.yaml,line=12,col=9,title=agenttest failed%3A fails::suites/a.yaml:12:9: reply does not match",
		"::error file=suites/a.yaml,title=agenttest failed%3A fails with no place::reply does not match",
		"::error file=suites/a.yaml,line=20,col=5,title=agenttest errored%3A errors::timeout: no reply within 10s",
		"::warning file=suites/a.yaml,line=31,col=9,title=agenttest failed (quarantined%2C not gating)%3A quarantined::suites/a.yaml:31:9: reply does not match",
		"::error title=agenttest errored%3A no alerts firing::timeout: no reply within 10s",
	}
	if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); !slices.Equal(got, want) {
		t.Errorf("annotations:\n got %q\nwant %q", got, want)
	}
}

// TestGitHubSummaryDeployments: the step summary lists the deployment of
// every agent whose deployment was read, after one that could not be.
func TestGitHubSummaryDeployments(t *testing.T) {
	t.Parallel()
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Deployments: []*result.Deployment{
		{Agent: "clinic", Env: "live", Note: "read failed"}, {Agent: "luigi", Env: "sandbox", ID: "dep-7", After: "dep-7"}}}
	var b strings.Builder
	if err := WriteGitHubSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	if want := "- `luigi` in `sandbox`: deployment `dep-7`\n"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

// TestGitHubAnnotationsWithinLimits: GitHub shows 10 error and 10
// warning annotations per step and drops the others silently. A run with
// more writes 9 of the level and a 10th that counts the others and
// lists where each broke; a run at the limit writes them all. Before,
// every failure of a large suite was written, and the run's page showed
// the first 10 as though they were all.
func TestGitHubAnnotationsWithinLimits(t *testing.T) {
	t.Parallel()
	cases := func(n int, st result.Status, line0 int) []*result.Case {
		var cs []*result.Case
		for i := range n {
			line := line0 + 10*i
			a := &result.Attempt{Number: 1, Status: result.Failed,
				Failures: []assert.Failure{{Pos: pos("suites/a.yaml", line+2, 9), Key: "reply", Message: "reply does not match"}}}
			as := []*result.Attempt{a}
			if st == result.Flaky {
				as = append(as, &result.Attempt{Number: 2, Status: result.Passed})
			}
			cs = append(cs, &result.Case{Name: fmt.Sprintf("case %d", line), Pos: pos("suites/a.yaml", line, 5), Status: st, Attempts: as})
		}
		return cs
	}
	type testCase struct {
		name                  string
		failed, flaky         int
		interrupted           bool
		errors, warnings      int
		errorsMore, warnsMore string // the 10th annotation of the level, "" when none stands for others
	}
	run := func(t *testing.T, tc testCase) {
		cs := append(cases(tc.failed, result.Failed, 10), cases(tc.flaky, result.Flaky, 1000)...)
		r := &result.Result{Started: t0, Interrupted: tc.interrupted, Target: result.Target{Name: "sim"},
			Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: cs}}}
		var b strings.Builder
		if err := WriteGitHubAnnotations(&b, r); err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		last := map[string]string{}
		for line := range strings.SplitSeq(strings.TrimSuffix(b.String(), "\n"), "\n") {
			level, _, _ := strings.Cut(strings.TrimPrefix(line, "::"), " ")
			count[level]++
			last[level] = line
		}
		if count["error"] != tc.errors || count["warning"] != tc.warnings {
			t.Errorf("%d errors and %d warnings, want %d and %d:\n%s", count["error"], count["warning"], tc.errors, tc.warnings, b.String())
		}
		for level, want := range map[string]string{"error": tc.errorsMore, "warning": tc.warnsMore} {
			if want == "" {
				if strings.Contains(last[level], "not shown as annotations") {
					t.Errorf("the last %s stands for others, though none were left out: %s", level, last[level])
				}
				continue
			}
			if last[level] != want {
				t.Errorf("the last %s:\n got %q\nwant %q", level, last[level], want)
			}
		}
	}
	list := func(from, n, step int, what string) string {
		var s strings.Builder
		for i := range n {
			line := from + step*i
			fmt.Fprintf(&s, "%%0Asuites/a.yaml:%d:9: %s case %d", line+2, what, line)
		}
		return s.String()
	}
	for _, tc := range []testCase{
		{name: "at the limit", failed: 10, flaky: 10, errors: 10, warnings: 10},
		{name: "one over", failed: 11, errors: 10,
			errorsMore: "::error title=agenttest 2 more errors not shown as annotations::GitHub Actions shows 10 error annotations per step; " +
				"these 2 are in the step summary, the log above and the report files:" + list(100, 2, 10, "failed:")},
		{name: "an interrupted run's own counts", failed: 10, interrupted: true, errors: 10,
			errorsMore: "::error title=agenttest 2 more errors not shown as annotations::GitHub Actions shows 10 error annotations per step; " +
				"these 2 are in the step summary, the log above and the report files:" + list(90, 2, 10, "failed:")},
		{name: "many of both", failed: 40, flaky: 12, errors: 10, warnings: 10,
			errorsMore: "::error title=agenttest 31 more errors not shown as annotations::GitHub Actions shows 10 error annotations per step; " +
				"these 31 are in the step summary, the log above and the report files:" + list(100, 20, 10, "failed:") + "%0A... and 11 more",
			warnsMore: "::warning title=agenttest 3 more warnings not shown as annotations::GitHub Actions shows 10 warning annotations per step; " +
				"these 3 are in the step summary, the log above and the report files:" + list(1090, 3, 10, "flaky (passed on attempt 2 of 2 after a failed check):")},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestGitHubAnnotationSizes: the runner cuts an annotation's message to
// 4096 UTF-16 code units without a word, and a title may have 255. A
// failure whose reply runs long is cut here to fit, on a rune boundary,
// and says so; one that fits is whole. Before, a long reply's diff lost
// its end (the diff itself, often) with nothing to say it was gone.
func TestGitHubAnnotationSizes(t *testing.T) {
	t.Parallel()
	unescape := strings.NewReplacer("%0A", "\n", "%0D", "\r", "%3A", ":", "%2C", ",", "%25", "%")
	units := func(s string) int { return len(utf16.Encode([]rune(s))) }
	type testCase struct {
		name, title, msg string
		cut, titleCut    bool
		// full: the cut message fills the limit (its text is one unit a
		// character)
		full bool
	}
	run := func(t *testing.T, tc testCase) {
		var b strings.Builder
		annotation(&b, "error", pos("suites/a.yaml", 3, 5), tc.title, tc.msg)
		line := strings.TrimSuffix(b.String(), "\n")
		props, data, ok := strings.Cut(strings.TrimPrefix(line, "::error "), "::")
		if !ok {
			t.Fatalf("not a command: %q", line)
		}
		msg := unescape.Replace(data)
		_, title, _ := strings.Cut(props, "title=")
		title = unescape.Replace(title)
		if !utf8.ValidString(msg) || !utf8.ValidString(title) {
			t.Errorf("cut inside a rune: %q / %q", title, msg)
		}
		if n := units(msg); n > annotationMessageMax {
			t.Errorf("message of %d UTF-16 units, more than %d", n, annotationMessageMax)
		}
		if n := units(title); n > annotationTitleMax {
			t.Errorf("title of %d UTF-16 units, more than %d", n, annotationTitleMax)
		}
		if got := strings.HasSuffix(msg, "... cut to the 4096 characters of a GitHub annotation: the whole failure is in the log above and the report files"); got != tc.cut {
			t.Errorf("message says it was cut: %v, want %v (%d units)", got, tc.cut, units(msg))
		}
		if n := units(msg); tc.full && n != annotationMessageMax {
			t.Errorf("cut to %d UTF-16 units, not the %d the runner keeps", n, annotationMessageMax)
		}
		if !tc.cut && msg != tc.msg {
			t.Errorf("message changed though it fits:\n got %q\nwant %q", msg, tc.msg)
		}
		if head, ok := strings.CutSuffix(msg, annotationCut); tc.cut && (!ok || !strings.HasPrefix(tc.msg, head)) {
			t.Errorf("the cut message is not the message's beginning")
		}
		if got := strings.HasSuffix(title, "…"); got != tc.titleCut {
			t.Errorf("title cut: %v, want %v: %q", got, tc.titleCut, title)
		}
	}
	for _, tc := range []testCase{
		{name: "fits", title: "failed: books", msg: strings.Repeat("x", annotationMessageMax)},
		{name: "one over", title: "failed: books", msg: strings.Repeat("x", annotationMessageMax+1), cut: true, full: true},
		{name: "long reply", title: "failed: books", msg: "turn 1: reply does not match\n  actual: " + strings.Repeat("long reply, ", 2000), cut: true, full: true},
		// An emoji is two UTF-16 units: 2100 of them are 4200.
		{name: "emoji", title: "failed: books", msg: strings.Repeat("🍝", 2100), cut: true},
		{name: "long name", title: "failed: " + strings.Repeat("row=é ", 60), msg: "m", titleCut: true},
		{name: "name at the limit", title: strings.Repeat("n", annotationTitleMax-len("agenttest ")), msg: "m"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestGitHubNoticesWithinLimits: the notices of similar checks passed
// near their thresholds are held to GitHub's 10 per step as errors and
// warnings are: the 10th counts the others and lists where each is.
func TestGitHubNoticesWithinLimits(t *testing.T) {
	t.Parallel()
	var cs []*result.Case
	for i := range 12 {
		line := 10 + 10*i
		s := assert.Score{Pos: pos("suites/a.yaml", line+2, 21), Key: "response", To: "hi", Score: 0.71, Min: 0.7}
		cs = append(cs, &result.Case{Name: fmt.Sprintf("case %d", line), Pos: pos("suites/a.yaml", line, 5), Status: result.Passed,
			Attempts: []*result.Attempt{{Number: 1, Status: result.Passed, Turns: []*result.Turn{{Index: 1, Scores: []assert.Score{s}}}}}})
	}
	r := &result.Result{Started: t0, Target: result.Target{Name: "sim"}, Files: []*result.File{{Path: "suites/a.yaml", Suite: "a", Cases: cs}}}
	var b strings.Builder
	if err := WriteGitHubAnnotations(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := "::notice title=agenttest 3 more notices not shown as annotations::GitHub Actions shows 10 notice annotations per step; " +
		"these 3 are in the log above and the report files:" +
		"%0Asuites/a.yaml:102:21: near threshold: case 100%0Asuites/a.yaml:112:21: near threshold: case 110%0Asuites/a.yaml:122:21: near threshold: case 120"
	if len(lines) != 10 || lines[9] != want {
		t.Errorf("%d notices, the last:\n got %q\nwant %q", len(lines), lines[len(lines)-1], want)
	}
}
