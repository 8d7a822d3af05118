package main

// The HTML report of examples-failing, run through the CLI against the
// embedded simulator, opened in headless Chromium (internal/browsertest):
// the page loads with no console error and no request but its own file,
// the filters and the search change the list, a failing case shows its
// diff and transcript, the plots and the coverage are there. The report of
// 20,000 cases is tested in internal/report (html_browser_test.go).
//
// The screenshots of docs/reading-reports.md are made by this test:
//
//	go test ./cmd/agenttest -run TestHTMLReportInBrowser -html-screenshot "$PWD/docs/images"

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agenttest/agenttest/internal/browsertest"
)

var htmlScreenshots = flag.String("html-screenshot", "", "write screenshots of the HTML report of examples-failing into `DIR` (docs/images)")

// TestHTMLReportInBrowser runs beside the package's other tests: it waits
// on Chromium most of its time. The tests that time the simulator's
// replies (compare's latency classes) hold a bar of 150 ms against the
// stalls of a loaded machine (compareCLI), which the fault drills, as
// heavy as Chromium, may cause beside them too.
func TestHTMLReportInBrowser(t *testing.T) {
	t.Parallel()
	browser := browsertest.Start(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing", "--html", out)
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
	}
	p := browsertest.Open(t, browser, out)

	total := p.Count(t, "#list .case")
	if total < 5 {
		t.Fatalf("%d cases listed, want every case of examples-failing", total)
	}
	// examples-failing runs on the embedded simulator: coverage is
	// against the agents' definitions, so some nodes are unvisited.
	if p.Count(t, "#coverage .cov-agent") == 0 || p.Count(t, "#coverage tr.missing") == 0 {
		t.Errorf("no coverage section, or no unvisited node in it")
	}
	for _, plot := range []string{"#plot-latency svg rect.bar", "#plot-latency svg line.m-p50", "#plot-latency svg line.m-p95",
		"#plot-latency svg line.m-p99", "#plot-timeline svg rect.span", "#plot-suites svg rect.span"} {
		if p.Count(t, plot) == 0 {
			t.Errorf("no %s: a plot is missing", plot)
		}
	}

	// Every case of examples-failing fails: the passed filter shows
	// none, with the failed one all, and with neither all again.
	if n := p.Count(t, "#list .case.k-failed"); n != total {
		t.Errorf("%d of %d cases failed, want all", n, total)
	}
	p.Click(t, `.chip[data-kind="passed"]`)
	if n := p.Count(t, "#list .case"); n != 0 || !strings.HasPrefix(p.Text(t, "#shown"), "0 of ") {
		t.Errorf("passed filter: %d cases shown (%q), want none", n, p.Text(t, "#shown"))
	}
	p.Click(t, `.chip[data-kind="failed"]`)
	if n := p.Count(t, "#list .case"); n != total {
		t.Errorf("passed and failed filters: %d cases shown, want %d", n, total)
	}
	p.Click(t, `.chip[data-kind="failed"]`)
	p.Click(t, `.chip[data-kind="passed"]`)
	if n := p.Count(t, "#list .case"); n != total {
		t.Errorf("no filter: %d cases shown, want %d", n, total)
	}

	// The search finds a scenario by a word of its name.
	p.Search(t, "out of order")
	if n := p.Count(t, "#list .case"); n != 1 || !strings.Contains(p.Text(t, "#list .case .name"), "trace sequence out of order") {
		t.Errorf("search by name: %d cases shown", n)
	}
	// And by a word of an agent's reply (the restaurant's question).
	p.Search(t, "joining you")
	if n := p.Count(t, "#list .case"); n == 0 || n == total {
		t.Errorf("search by reply: %d of %d cases shown", n, total)
	}

	// The reply mismatch shows its diff and its transcript.
	p.Search(t, "reply text mismatch")
	p.Click(t, `#list .case .row`)
	p.Do(t, chromedp.WaitVisible(chromedp.CSS(`#list .case .body .diff`)))
	if p.Count(t, "#list .case .diff del") == 0 || p.Count(t, "#list .case .diff ins") == 0 {
		t.Errorf("the diff marks nothing removed or added")
	}
	if line := p.Text(t, "#list .case .failure .line"); !strings.Contains(line, "examples-failing/restaurant.yaml:") {
		t.Errorf("failure line %q does not name the file:line", line)
	}
	if p.Count(t, "#list .case .chat .bubble.user") == 0 || p.Count(t, "#list .case .chat .bubble.agent") < 2 {
		t.Errorf("the transcript lacks the user's or the agent's bubbles")
	}
	if p.Count(t, "#list .case .chat .turn.broke") != 1 {
		t.Errorf("the turn that broke is not marked")
	}
	if *htmlScreenshots != "" {
		screenshots(t, p, *htmlScreenshots)
	}
	p.CheckClean(t, out)
}

// screenshots writes the pictures of docs/reading-reports.md: the report
// of examples-failing with the reply mismatch open, on a laptop and on a
// phone.
func screenshots(t *testing.T, p *browsertest.Page, dir string) {
	t.Helper()
	for _, shot := range []struct {
		name          string
		width, height int64
	}{{"html-report.png", 1200, 1400}, {"html-report-phone.png", 390, 1100}} {
		p.Do(t, chromedp.EmulateViewport(shot.width, shot.height), chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
		png, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
