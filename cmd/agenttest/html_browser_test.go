package main

// The HTML report tested in a real browser: headless Chromium, driven
// over the DevTools protocol with chromedp, opens the report of
// examples-failing (run through the CLI against the embedded simulator)
// and one of 20,000 cases made from a synthetic result, and checks what a
// reader relies on: the page loads with no console error and no request
// but its own file, the filters and the search change the list, a
// failing case shows its diff and transcript, the plots are there, and
// hostile reply text stays text.
//
// Chromium is found as $AGENTTEST_CHROME or chromium, chromium-browser,
// google-chrome on PATH. Without one the test fails under CI=true (.ci/run
// installs it) and skips elsewhere.
//
// The screenshot of docs/reading-reports.md is made by this test:
//
//	go test ./cmd/agenttest -run 'TestHTMLReportInBrowser/examples-failing' -html-screenshot ../../docs/images

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
)

var htmlScreenshots = flag.String("html-screenshot", "", "write screenshots of the HTML report of examples-failing into `DIR` (docs/images)")

// chromePath finds a Chromium to drive, or ends the test: failed under
// CI, where one must be installed, skipped elsewhere.
func chromePath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("AGENTTEST_CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no Chromium for the HTML report's browser test: install chromium (apt-get install chromium) or set AGENTTEST_CHROME"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browserPage is one tab on a report, with what it logged and fetched.
type browserPage struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string // console errors, exceptions, error log entries
	requests []string // URLs of every request the page made
}

// listen runs in the tab's message loop (chromedp.WithListener): it only
// records.
func (p *browserPage) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		p.problems = append(p.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
	case *runtime.EventConsoleAPICalled:
		switch ev.Type {
		case runtime.ConsoleAPICalledTypeError, runtime.ConsoleAPICalledTypeWarning, runtime.ConsoleAPICalledTypeAssert:
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p.problems = append(p.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *log.EventEntryAdded:
		// Content-Security-Policy violations and failed loads are
		// reported here, not through the console API.
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			p.problems = append(p.problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	}
}

// openReport opens the report at path in a new tab of the browser and
// waits until its script has rendered the list.
func openReport(t *testing.T, browser context.Context, path string) *browserPage {
	t.Helper()
	p := &browserPage{}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(p.listen))
	t.Cleanup(cancel)
	p.ctx = ctx
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			for _, enable := range []func() error{
				func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err },
				func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
			} {
				if err := enable(); err != nil {
					return err
				}
			}
			return nil
		}),
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible(chromedp.CSS(`html[data-ready="true"] #list`)),
	); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return p
}

// do performs actions on the page, failing the test on an error.
func (p *browserPage) do(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, p *browserPage, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// count is the number of elements sel matches.
func (p *browserPage) count(t *testing.T, sel string) int {
	t.Helper()
	return eval[int](t, p, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// text is the text of the first element sel matches, "" when none.
func (p *browserPage) text(t *testing.T, sel string) string {
	t.Helper()
	return eval[string](t, p, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel))
}

// click clicks the first element sel matches.
func (p *browserPage) click(t *testing.T, sel string) {
	t.Helper()
	p.do(t, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// search types q into the search box and waits for the list to follow
// (it does after a short pause for typing, and then records q in the
// address).
func (p *browserPage) search(t *testing.T, q string) {
	t.Helper()
	p.do(t,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("search").value = ""`),
		chromedp.SendKeys(chromedp.ID("search"), q),
	)
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](fmt.Sprintf(`decodeURIComponent(location.hash).endsWith(%q)`, "q="+q))); err != nil {
		t.Fatalf("search %q: the list did not follow: %v", q, err)
	}
}

// checkClean fails the test if the page logged a problem or fetched
// anything but its own file.
func (p *browserPage) checkClean(t *testing.T, path string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.problems {
		t.Errorf("the page reported: %s", pr)
	}
	for _, u := range p.requests {
		if u != "file://"+path {
			t.Errorf("the page requested %s: a report fetches nothing", u)
		}
	}
	if len(p.requests) == 0 {
		t.Errorf("no request seen at all, not even the document: the network events were not captured")
	}
}

// newBrowser starts one headless Chromium for the subtests, each of which
// opens its own tab.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromePath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return browser
}

func TestHTMLReportInBrowser(t *testing.T) {
	browser := newBrowser(t)
	t.Run("examples-failing", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		out := filepath.Join(dir, "report.html")
		c := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing", "--html", out)
		if code := c.run(t); code != exitFailed {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
		}
		p := openReport(t, browser, out)

		total := p.count(t, "#list .case")
		if total < 5 {
			t.Fatalf("%d cases listed, want every case of examples-failing", total)
		}
		// examples-failing runs on the embedded simulator: coverage is
		// against the agents' definitions, so some nodes are unvisited.
		if p.count(t, "#coverage .cov-agent") == 0 || p.count(t, "#coverage tr.missing") == 0 {
			t.Errorf("no coverage section, or no unvisited node in it")
		}
		for _, plot := range []string{"#plot-latency svg rect.bar", "#plot-latency svg line.m-p50", "#plot-latency svg line.m-p95",
			"#plot-latency svg line.m-p99", "#plot-timeline svg rect.span", "#plot-suites svg rect.span"} {
			if p.count(t, plot) == 0 {
				t.Errorf("no %s: a plot is missing", plot)
			}
		}

		// Every case of examples-failing fails: the passed filter shows
		// none, with the failed one all, and with neither all again.
		if n := p.count(t, "#list .case.k-failed"); n != total {
			t.Errorf("%d of %d cases failed, want all", n, total)
		}
		p.click(t, `.chip[data-kind="passed"]`)
		if n := p.count(t, "#list .case"); n != 0 || !strings.HasPrefix(p.text(t, "#shown"), "0 of ") {
			t.Errorf("passed filter: %d cases shown (%q), want none", n, p.text(t, "#shown"))
		}
		p.click(t, `.chip[data-kind="failed"]`)
		if n := p.count(t, "#list .case"); n != total {
			t.Errorf("passed and failed filters: %d cases shown, want %d", n, total)
		}
		p.click(t, `.chip[data-kind="failed"]`)
		p.click(t, `.chip[data-kind="passed"]`)
		if n := p.count(t, "#list .case"); n != total {
			t.Errorf("no filter: %d cases shown, want %d", n, total)
		}

		// The search finds a scenario by a word of its name.
		p.search(t, "out of order")
		if n := p.count(t, "#list .case"); n != 1 || !strings.Contains(p.text(t, "#list .case .name"), "trace sequence out of order") {
			t.Errorf("search by name: %d cases shown", n)
		}
		// And by a word of an agent's reply (the restaurant's question).
		p.search(t, "joining you")
		if n := p.count(t, "#list .case"); n == 0 || n == total {
			t.Errorf("search by reply: %d of %d cases shown", n, total)
		}

		// The reply mismatch shows its diff and its transcript.
		p.search(t, "reply text mismatch")
		p.click(t, `#list .case .row`)
		p.do(t, chromedp.WaitVisible(chromedp.CSS(`#list .case .body .diff`)))
		if p.count(t, "#list .case .diff del") == 0 || p.count(t, "#list .case .diff ins") == 0 {
			t.Errorf("the diff marks nothing removed or added")
		}
		if line := p.text(t, "#list .case .failure .line"); !strings.Contains(line, "examples-failing/restaurant.yaml:") {
			t.Errorf("failure line %q does not name the file:line", line)
		}
		if p.count(t, "#list .case .chat .bubble.user") == 0 || p.count(t, "#list .case .chat .bubble.agent") < 2 {
			t.Errorf("the transcript lacks the user's or the agent's bubbles")
		}
		if p.count(t, "#list .case .chat .turn.broke") != 1 {
			t.Errorf("the turn that broke is not marked")
		}
		if *htmlScreenshots != "" {
			screenshots(t, p, *htmlScreenshots)
		}
		p.checkClean(t, out)
	})

	t.Run("20000 cases", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "report.html")
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := report.WriteHTML(f, syntheticResult(20000), report.HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		f.Close()
		fi, _ := os.Stat(out)
		start := time.Now()
		p := openReport(t, browser, out)
		t.Logf("%d-byte report of 20,000 cases rendered in %s", fi.Size(), time.Since(start).Round(time.Millisecond))

		// Lazily rendered: a page of the list, not 20,000 rows.
		shown := p.count(t, "#list .case")
		if shown == 0 || shown > 1000 {
			t.Errorf("%d rows in the document: the list is not rendered lazily", shown)
		}
		if s := p.text(t, "#shown"); !strings.Contains(s, "of 20000 cases") {
			t.Errorf("count line %q", s)
		}
		p.click(t, `#more`)
		if n := p.count(t, "#list .case"); n <= shown {
			t.Errorf("show more: %d rows, was %d", n, shown)
		}

		// Filters: the errored cases, then the flaky ones too.
		p.click(t, `.chip[data-kind="errored"]`)
		if s := p.text(t, "#shown"); !strings.HasPrefix(s, "200 of 20000") {
			t.Errorf("errored filter: %q, want the 200 errored cases", s)
		}
		if p.count(t, "#list .case") != p.count(t, "#list .case.k-errored") {
			t.Errorf("errored filter shows other cases")
		}
		p.click(t, `.chip[data-kind="errored"]`)

		// Search over replies of every case, not only the rendered ones.
		p.search(t, "order #19999")
		if n := p.count(t, "#list .case"); n != 1 {
			t.Errorf("search for the last case's reply: %d rows", n)
		}

		// A reply of markup stays text: no script runs, no image loads.
		p.search(t, "hostile")
		p.click(t, `#list .case .row`)
		p.do(t, chromedp.WaitVisible(chromedp.CSS(`#list .case .body .chat`)))
		if eval[bool](t, p, `window.__pwned !== undefined`) {
			t.Errorf("a reply's markup ran")
		}
		if reply := p.text(t, "#list .case .chat"); !strings.Contains(reply, hostileReply) {
			t.Errorf("the hostile reply is not shown as text: %q", reply)
		}
		if p.count(t, "#list .case .body img, #list .case .body script") != 0 {
			t.Errorf("a reply became elements")
		}
		p.checkClean(t, out)
	})
}

// screenshots writes the pictures of docs/reading-reports.md: the report
// of examples-failing with the reply mismatch open, on a laptop and on a
// phone.
func screenshots(t *testing.T, p *browserPage, dir string) {
	t.Helper()
	for _, shot := range []struct {
		name          string
		width, height int64
	}{{"html-report.png", 1200, 1400}, {"html-report-phone.png", 390, 1100}} {
		p.do(t, chromedp.EmulateViewport(shot.width, shot.height), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hostileReply is a reply that would run a script and load an image if
// the report ever parsed replies as markup, or closed its data block.
const hostileReply = `hostile </script><script>window.__pwned=1</script><img src="https://example.invalid/x.png" onerror="window.__pwned=2"> <!-- ]]>`

// syntheticResult makes a run of n cases, in 50 files, for the browser
// test: mostly passed, 1% failed with a reply diff, 1% errored, 1% flaky,
// a few quarantined, and one with a hostile reply. Case i's last reply
// says "order #i".
func syntheticResult(n int) *result.Result {
	t0 := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	r := &result.Result{Started: t0, Target: result.Target{Name: "staging", Env: "pre-release", BuildURL: "https://build.example.invalid"}}
	const files, parallel = 50, 16
	perFile := n / files
	for fi := 0; fi < files; fi++ {
		f := &result.File{Path: fmt.Sprintf("suites/area%02d.yaml", fi), Suite: fmt.Sprintf("Area %d", fi)}
		for ci := 0; ci < perFile; ci++ {
			i := fi*perFile + ci
			started := t0.Add(time.Duration(i/parallel) * 900 * time.Millisecond)
			c := &result.Case{Name: fmt.Sprintf("scenario %d books a table", i), Pos: diag.Pos{File: f.Path, Line: 4 + 9*ci, Col: 5},
				Agent: "restaurant", Status: result.Passed, Duration: 800 * time.Millisecond}
			a := &result.Attempt{Number: 1, Status: result.Passed, Started: started, Duration: 800 * time.Millisecond,
				ConversationID: fmt.Sprintf("conv-%d", i)}
			say := []string{"", "I'd like to book a table", "4 people at 7pm"}
			answer := []string{"Welcome to Luigi's!", "How many people will be joining you?", fmt.Sprintf("Booked: order #%d", i)}
			if i == n/2 {
				answer[2] = hostileReply
			}
			for ti := range say {
				meta, _ := json.Marshal(map[string]any{"nodeTrace": []string{"Start", fmt.Sprintf("Node%d", ti)}, "state": map[string]any{"turn": ti}})
				var md reply.Metadata
				_ = json.Unmarshal(meta, &md)
				a.Turns = append(a.Turns, &result.Turn{Index: ti, Pos: diag.Pos{File: f.Path, Line: c.Pos.Line + 2*ti, Col: 9}, Say: say[ti],
					Started: started.Add(time.Duration(ti) * 250 * time.Millisecond), Latency: time.Duration(80+(i*7+ti*13)%400) * time.Millisecond,
					Result: &reply.TurnResult{ConversationID: a.ConversationID, Response: answer[ti], Metadata: md, RawMetadata: meta}})
			}
			switch {
			case i%100 == 1:
				a.Status, c.Status = result.Failed, result.Failed
				want := "How many guests will be joining you today?"
				a.Failures = []assert.Failure{{Pos: diag.Pos{File: f.Path, Line: c.Pos.Line + 3, Col: 11}, Key: "response",
					Message: "reply does not match", Expected: want, Actual: answer[1], Diff: assert.Diff(want, answer[1])}}
			case i%100 == 2:
				a.Status, c.Status = result.Errored, result.Errored
				a.Error = &result.Error{Pos: a.Turns[2].Pos, Kind: result.KindTimeout, Message: "no reply within 30s"}
				a.Turns[2].Result = nil
			case i%100 == 3:
				c.Status = result.Flaky
				first := *a
				first.Status, first.Error = result.Errored, &result.Error{Kind: result.KindNetwork, Message: "connection reset"}
				c.Attempts = append(c.Attempts, &first)
				a.Number = 2
				c.RateWaited = 1200 * time.Millisecond
			case i%500 == 4:
				c.Quarantine = &result.Quarantine{Reason: "BUG-12", Until: "2026-12-31"}
			}
			c.Attempts = append(c.Attempts, a)
			f.Cases = append(f.Cases, c)
		}
		r.Files = append(r.Files, f)
	}
	r.Duration = time.Duration(n/parallel+1) * 900 * time.Millisecond
	return r
}

// TestSyntheticResultCounts keeps the synthetic run what the browser test
// assumes, with or without a browser.
func TestSyntheticResultCounts(t *testing.T) {
	s := report.Summarize(syntheticResult(20000))
	if s.Total != 20000 || s.Errored != 200 || s.Failed != 200 || s.Flaky != 200 || s.Quarantined != 40 {
		t.Errorf("synthetic run: %+v", s)
	}
}
