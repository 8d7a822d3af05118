package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/result"
)

// HumanOptions configures the console view.
type HumanOptions struct {
	// TTY means the writer is a terminal: a progress line is redrawn in
	// place, and passing cases are not listed (unless Verbose). Off a
	// terminal (CI logs) every finished case gets one plain line.
	TTY bool
	// Color paints statuses, positions and diffs. The caller decides it
	// (TTY, NO_COLOR, --no-color); it is ignored when TTY is false, since
	// escape codes in a log file are noise.
	Color bool
	// Verbose also shows the transcript of passing cases.
	Verbose bool
	// Now is the clock for the elapsed time of the progress line; nil
	// means the progress line shows no elapsed time.
	Now func() time.Time
}

// Human is the console view of a run. It implements result.Observer and is
// safe for concurrent use: each case's output is composed apart and written
// as one block when the case finishes, so parallel cases never interleave.
type Human struct {
	w    io.Writer
	opts HumanOptions
	st   style

	mu      sync.Mutex
	total   int
	done    int
	running map[*result.Case]bool
	failed  int
	started time.Time
	// progress is the width, in runes, of the progress line on screen; 0
	// when none is shown.
	progress int
	err      error
}

var _ result.Observer = (*Human)(nil)

// NewHuman returns a console view writing to w.
func NewHuman(w io.Writer, opts HumanOptions) *Human {
	if !opts.TTY {
		opts.Color = false
	}
	return &Human{w: w, opts: opts, st: style{color: opts.Color}}
}

// Err returns the first error met writing to the output, if any. Observer
// methods cannot return errors; the CLI checks this at the end.
func (h *Human) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// RunStarted prints what is about to run.
func (h *Human) RunStarted(total int, target result.Target) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total = total
	if h.opts.Now != nil {
		h.started = h.opts.Now()
	}
	h.write(fmt.Sprintf("running %d %s against %s\n", total, plural(total, "case", "cases"), describeTarget(target)))
	h.drawProgress()
}

// CaseStarted counts the case as running on the progress line.
func (h *Human) CaseStarted(_ *result.File, c *result.Case) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == nil {
		h.running = make(map[*result.Case]bool)
	}
	h.running[c] = true
	h.drawProgress()
}

// CaseFinished prints the case's line and, when it did not simply pass,
// its details, as one block.
func (h *Human) CaseFinished(f *result.File, c *result.Case) {
	block := h.caseBlock(f, c)
	h.mu.Lock()
	defer h.mu.Unlock()
	if block != "" {
		h.clearProgress()
		h.write(block)
	}
	h.done++
	delete(h.running, c)
	if c.Status == result.Failed || c.Status == result.Errored {
		h.failed++
	}
	h.drawProgress()
}

// RunFinished prints the summary: the failed cases again, briefly, then the
// counts, the last line being "N passed, N failed, N skipped in 3.21s".
func (h *Human) RunFinished(r *result.Result) {
	var b strings.Builder
	s := Summarize(r)
	var bad []string
	for _, f := range r.Files {
		if f == nil {
			continue
		}
		for _, c := range f.Cases {
			if c != nil && (c.Status == result.Failed || c.Status == result.Errored) {
				bad = append(bad, "  "+h.label(c.Status)+" "+h.st.caseTitle(f, c))
			}
		}
	}
	for _, c := range r.Checks {
		if c != nil && (c.Status == result.Failed || c.Status == result.Errored) {
			bad = append(bad, "  "+h.label(c.Status)+" "+h.st.caseTitle(nil, c))
		}
	}
	b.WriteString("\n")
	if len(bad) > 0 {
		b.WriteString("not passed:\n")
		b.WriteString(strings.Join(bad, "\n"))
		b.WriteString("\n")
	}
	if r.Interrupted {
		b.WriteString(h.st.paint(sgrYellow, fmt.Sprintf("run interrupted: %d %s not run", s.Pending, plural(s.Pending, "case", "cases"))))
		b.WriteString("\n")
	}
	second := fmt.Sprintf("%d errored, %d flaky", s.Errored, s.Flaky)
	if s.Pending > 0 {
		second += fmt.Sprintf(", %d pending", s.Pending)
	}
	if line := PacingLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	b.WriteString(second + "\n")
	wall := r.Duration
	if wall == 0 && h.opts.Now != nil && !h.started.IsZero() {
		wall = h.opts.Now().Sub(h.started)
	}
	last := fmt.Sprintf("%d passed, %d failed, %d skipped in %s", s.Passed, s.Failed, s.Skipped, wallTime(wall))
	code := sgrGreen
	if s.Failed+s.Errored > 0 || r.Interrupted {
		code = sgrRed
	}
	b.WriteString(h.st.paint(code, last) + "\n")

	h.mu.Lock()
	defer h.mu.Unlock()
	h.clearProgress()
	h.write(b.String())
}

// caseBlock composes everything printed for a finished case. It reads only
// the case, so it runs outside the lock.
func (h *Human) caseBlock(f *result.File, c *result.Case) string {
	quiet := c.Status == result.Passed && h.opts.TTY && !h.opts.Verbose
	if quiet {
		return ""
	}
	var b strings.Builder
	b.WriteString(h.label(c.Status))
	b.WriteString(" ")
	b.WriteString(h.st.caseTitle(f, c))
	if note := caseNote(c); note != "" {
		b.WriteString(" (" + h.st.flat(note) + ")")
	}
	b.WriteString("\n")
	showBody := c.Status == result.Failed || c.Status == result.Errored || c.Status == result.Flaky ||
		h.opts.Verbose && c.Status == result.Passed
	if !showBody {
		return b.String()
	}
	d := detail{b: &b, st: h.st}
	if c.Status == result.Flaky && !h.opts.Verbose {
		// A flaky case passed: say what went wrong before, and keep the
		// passing transcript for -v.
		n := len(c.Attempts)
		for _, a := range c.Attempts {
			if a != nil && a.Status != result.Passed {
				d.line("    ", fmt.Sprintf("attempt %d of %d %s", a.Number, n, h.st.attemptLine(a)))
			}
		}
	} else {
		d.writeCase(c, "    ")
	}
	b.WriteString("\n")
	return b.String()
}

// caseNote is the parenthesised remark on a case's line: its duration,
// and why it was skipped or on which attempt it passed.
func caseNote(c *result.Case) string {
	switch c.Status {
	case result.Skipped:
		return c.SkipReason
	case result.Pending:
		return pendingReason(c)
	}
	var notes []string
	if c.Status == result.Flaky {
		if a := c.Last(); a != nil {
			notes = append(notes, fmt.Sprintf("passed on attempt %d of %d", a.Number, len(c.Attempts)))
		}
	}
	if c.Repeat != nil {
		notes = append(notes, repeatLine(c.Repeat))
	}
	notes = append(notes, formatDuration(c.Duration))
	if c.RateWaited > 0 {
		notes = append(notes, "waited "+waitTime(c.RateWaited)+" on rate limits")
	}
	return strings.Join(notes, ", ")
}

// label is the status word that starts a case's line.
func (h *Human) label(s result.Status) string {
	switch s {
	case result.Passed:
		return h.st.paint(sgrGreen, "PASS")
	case result.Flaky:
		return h.st.paint(sgrYellow, "FLAKY")
	case result.Failed:
		return h.st.paint(sgrRed, "FAIL")
	case result.Errored:
		return h.st.paint(sgrMagenta, "ERROR")
	case result.Skipped:
		return h.st.paint(sgrCyan, "SKIP")
	default:
		return h.st.paint(sgrCyan, "PENDING")
	}
}

// drawProgress redraws the progress line; only on a terminal. Caller holds
// mu.
func (h *Human) drawProgress() {
	if !h.opts.TTY {
		return
	}
	line := fmt.Sprintf("[%d/%d] %d running", h.done, h.total, len(h.running))
	if h.failed > 0 {
		line += ", " + h.st.paint(sgrRed, fmt.Sprintf("%d failed", h.failed))
	}
	if h.opts.Now != nil && !h.started.IsZero() {
		line += fmt.Sprintf(", %.1fs", h.opts.Now().Sub(h.started).Seconds())
	}
	width := utf8.RuneCountInString(StripANSI(line))
	pad := ""
	if h.progress > width {
		pad = strings.Repeat(" ", h.progress-width)
	}
	h.write("\r" + line + pad)
	h.progress = width
}

// clearProgress blanks the progress line so that the next output starts at
// column 0 of a clean line. It uses blanks, not an erase escape, so that
// it works on any terminal. Caller holds mu.
func (h *Human) clearProgress() {
	if h.progress == 0 {
		return
	}
	h.write("\r" + strings.Repeat(" ", h.progress) + "\r")
	h.progress = 0
}

// write writes s, remembering the first error and writing nothing more
// after it. Caller holds mu.
func (h *Human) write(s string) {
	if h.err != nil || s == "" {
		return
	}
	if _, err := io.WriteString(h.w, s); err != nil {
		h.err = fmt.Errorf("write progress: %w", err)
	}
}

// describeTarget names the target on the first line of a run.
func describeTarget(t result.Target) string {
	name := t.Name
	if name == "" {
		name = "unnamed target"
	}
	var extra []string
	switch {
	case t.Embedded:
		extra = append(extra, "embedded simulator")
	case t.BuildURL != "":
		extra = append(extra, t.BuildURL)
	}
	if t.Env != "" {
		extra = append(extra, "env "+t.Env)
	}
	if len(extra) == 0 {
		return name
	}
	return name + " (" + strings.Join(extra, ", ") + ")"
}

// plural picks the word form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// wallTime renders the run's wall time on the summary line: milliseconds
// under a second (a small suite against the simulator takes a few, and
// "0.00s" reads like nothing ran), else seconds to the hundredth.
func wallTime(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
