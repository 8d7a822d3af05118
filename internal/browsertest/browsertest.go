// Package browsertest opens the HTML report (internal/report) in headless
// Chromium for tests, driven over the DevTools protocol with chromedp,
// and records what a reader's browser would complain about: console
// errors, uncaught exceptions, Content-Security-Policy violations, and
// every request the page makes.
//
//	browser := browsertest.Start(t) // skips, or fails under CI=true, without Chromium
//	p := browsertest.Open(t, browser, "/tmp/report.html")
//	p.Click(t, `.chip[data-kind="failed"]`)
//	n := p.Count(t, "#list .case")
//	p.CheckClean(t, "/tmp/report.html")
//
// Chromium is $AGENTTEST_CHROME, or chromium, chromium-browser,
// google-chrome or google-chrome-stable on PATH. Without one, a test
// fails when CI=true (.ci/run installs it from the distribution's
// packages) and is skipped elsewhere, with a message saying how to get it.
//
// It is imported by tests only.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromePath finds a Chromium to drive, or ends the test: failed under
// CI, where one must be installed, skipped elsewhere.
func chromePath(t testing.TB) string {
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

// Page is one tab on a report, with what it logged and fetched.
type Page struct {
	// Ctx is the tab's chromedp context, for actions the methods lack.
	Ctx      context.Context
	mu       sync.Mutex
	problems []string // console errors, exceptions, error log entries
	requests []string // URLs of every request the page made
}

// listen runs in the tab's message loop (chromedp.WithListener): it only
// records.
func (p *Page) listen(ev any) {
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

// Open opens the report at path in a new tab of the browser and
// waits until its script has rendered the list.
func Open(t testing.TB, browser context.Context, path string) *Page {
	t.Helper()
	p := &Page{}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(p.listen))
	t.Cleanup(cancel)
	p.Ctx = ctx
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

// Do performs actions on the page, failing the test on an error.
func (p *Page) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(p.Ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, p *Page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Count is the number of elements sel matches.
func (p *Page) Count(t testing.TB, sel string) int {
	t.Helper()
	return Eval[int](t, p, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// Text is the text of the first element sel matches, "" when none.
func (p *Page) Text(t testing.TB, sel string) string {
	t.Helper()
	return Eval[string](t, p, fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel))
}

// Click clicks the first element sel matches.
func (p *Page) Click(t testing.TB, sel string) {
	t.Helper()
	p.Do(t, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// Search types q into the search box and waits for the list to follow
// (it does after a short pause for typing, and then records q in the
// address).
func (p *Page) Search(t testing.TB, q string) {
	t.Helper()
	p.Do(t,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("search").value = ""`),
		chromedp.SendKeys(chromedp.ID("search"), q),
	)
	if _, err := chromedp.Run(p.Ctx, chromedp.Poll[bool](fmt.Sprintf(`decodeURIComponent(location.hash).endsWith(%q)`, "q="+q))); err != nil {
		t.Fatalf("search %q: the list did not follow: %v", q, err)
	}
}

// CheckClean fails the test if the page logged a problem or fetched
// anything but its own file.
func (p *Page) CheckClean(t testing.TB, path string) {
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

// Start starts a headless Chromium for the test, stopped when it ends;
// each Open makes a tab of it, and tabs may be used in parallel subtests.
func Start(t testing.TB) context.Context {
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
