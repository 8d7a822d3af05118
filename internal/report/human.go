package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/escape"
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
	h.write(fmt.Sprintf("running %d %s against %s\n", total, plural(total, "case", "cases"), h.st.flat(describeTarget(target))))
	h.drawProgress()
}

var _ result.DeploymentObserver = (*Human)(nil)

// DeploymentsRead prints, among the run's first lines, the deployment each
// agent is tested on, and once why there is no evidence where there is
// none.
func (h *Human) DeploymentsRead(ds []*result.Deployment) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clearProgress()
	h.write(deploymentLines(ds, h.st))
	h.drawProgress()
}

// deploymentLines are the lines of DeploymentsRead: one per deployment
// read, then the notes, each said once with the agents it concerns.
func deploymentLines(ds []*result.Deployment, st style) string {
	var b strings.Builder
	var notes []string
	about := map[string][]string{}
	for _, d := range ds {
		if d.ID != "" {
			b.WriteString(st.flat("deployment of " + d.Agent + " in " + d.Env + ": " + d.ID))
			if d.Version != "" {
				b.WriteString(st.flat(" (version " + d.Version + ")"))
			}
			b.WriteString("\n")
			continue
		}
		if _, seen := about[d.Note]; !seen {
			notes = append(notes, d.Note)
		}
		about[d.Note] = append(about[d.Note], d.Agent+" in "+d.Env)
	}
	for _, n := range notes {
		tail := "; the run goes on, and agenttest gate will refuse its report"
		if n == result.NoteRunStopped || n == result.NoteRunInterrupted {
			tail = "; agenttest gate will refuse its report"
		}
		b.WriteString(st.paint(sgrYellow, st.flat("note: no deployment evidence ("+strings.Join(about[n], ", ")+"): "+n+tail)))
		b.WriteString("\n")
	}
	return b.String()
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
	if g := c.Gate(); g == result.Failed || g == result.Errored {
		h.failed++
	}
	h.drawProgress()
}

// RunFinished prints the summary: the failed cases again, briefly, why the
// run stopped early if it did, then the counts ("N passed, N failed, N
// skipped in 3.21s"), the last line being the run's status, the verdict
// the exit code follows (result.RunStatus).
func (h *Human) RunFinished(r *result.Result) {
	var b strings.Builder
	// The counts are of the scenarios, as the first line's; the run-level
	// checks (the alert gate) get a line of their own.
	s := summarizeScenarios(r)
	var bad, flaky, held, lapsed []string
	list := func(f *result.File, c *result.Case) {
		line := "  " + h.label(c) + " " + h.st.caseTitle(f, c)
		switch q := c.Quarantine; {
		case c.Quarantined():
			held = append(held, line+h.st.flat(" ("+q.Reason+")"))
		case c.Status == result.Failed || c.Status == result.Errored:
			bad = append(bad, line)
		case c.Status == result.Flaky:
			// Named again because a retry that rescues an agent wrong
			// half the time must not read as a clean pass.
			if note := c.FlakyNote(); note != "" {
				line += h.st.flat(" (" + note + ")")
			}
			flaky = append(flaky, line)
		}
		if q := c.Quarantine; q != nil && q.Lapsed {
			lapsed = append(lapsed, "  "+h.st.caseTitle(f, c)+h.st.flat(" (until "+q.Until+": "+q.Reason+")"))
		}
	}
	for f, c := range r.Cases() {
		list(f, c)
	}
	b.WriteString("\n")
	for _, group := range []struct {
		head  string
		lines []string
	}{
		{"not passed:", bad},
		{"flaky, passed only on a retry:", flaky},
		{"quarantined, not gating the run:", held},
		{"quarantine lapsed, gating again:", lapsed},
	} {
		if len(group.lines) > 0 {
			b.WriteString(group.head + "\n")
			b.WriteString(strings.Join(group.lines, "\n"))
			b.WriteString("\n")
		}
	}
	if r.Interrupted {
		var what []string
		if n := s.Pending - s.Cut; n > 0 || s.Cut == 0 {
			what = append(what, fmt.Sprintf("%d %s not run", n, plural(n, "case", "cases")))
		}
		if s.Cut > 0 {
			what = append(what, fmt.Sprintf("%d repeated %s cut off before a verdict", s.Cut, plural(s.Cut, "case", "cases")))
		}
		line := "run interrupted: " + strings.Join(what, ", ")
		b.WriteString(h.st.paint(sgrYellow, line))
		b.WriteString("\n")
	}
	if st := r.Stop; st != nil {
		b.WriteString(h.st.paint(sgrYellow, fmt.Sprintf("run stopped: %s: %d %s not run", h.st.flat(st.Why()), s.NotRun, plural(s.NotRun, "case", "cases"))))
		b.WriteString("\n")
	}
	for _, d := range r.Deployments {
		switch {
		case d == nil:
		case d.Changed():
			b.WriteString(h.st.paint(sgrRed, h.st.flat(d.ChangeMessage())) + "\n")
		case d.ID != "" && d.After == "" && d.Note != "":
			b.WriteString(h.st.paint(sgrYellow, h.st.flat(d.UnconfirmedMessage())) + "\n")
		}
	}
	// Cases a stop left unrun are counted as such, not as skipped: a
	// line "0 errored ... 6 skipped" above "status: errored" would say
	// nothing went wrong.
	var parts []string
	if s.Errored > 0 || s.NotRun == 0 {
		parts = append(parts, fmt.Sprintf("%d errored", s.Errored))
	}
	if s.NotRun > 0 {
		parts = append(parts, fmt.Sprintf("%d not run (the run stopped)", s.NotRun))
	}
	second := strings.Join(append(parts, fmt.Sprintf("%d flaky", s.Flaky)), ", ")
	if s.Pending > 0 {
		second += fmt.Sprintf(", %d pending", s.Pending)
	}
	if s.Inconclusive > 0 {
		second += fmt.Sprintf(", %d inconclusive (counted as failed)", s.Inconclusive)
	}
	if s.Quarantined > 0 {
		second += fmt.Sprintf(", %d quarantined", s.Quarantined)
	}
	if line := PacingLine(r); line != "" {
		b.WriteString(line + "\n")
	}
	b.WriteString(second + "\n")
	wall := r.Duration
	if wall == 0 && h.opts.Now != nil && !h.started.IsZero() {
		wall = h.opts.Now().Sub(h.started)
	}
	last := fmt.Sprintf("%d passed, %d failed, %d skipped in %s", s.Passed, s.Failed, s.Skipped-s.NotRun, wallTime(wall))
	code := sgrGreen
	if s.Failed+s.Errored+s.NotRun > 0 || r.Interrupted {
		code = sgrRed
	}
	b.WriteString(h.st.paint(code, last) + "\n")
	for _, c := range r.Checks {
		if c != nil {
			b.WriteString(h.checkLine(c) + "\n")
		}
	}
	b.WriteString(h.statusLine(r, s) + "\n")

	h.mu.Lock()
	defer h.mu.Unlock()
	h.clearProgress()
	h.write(b.String())
}

// checkLine is the summary line of a run-level check: "alert gate
// passed", "alert gate failed: 1 alert rule firing", "alert gate not run:
// platform unreachable".
func (h *Human) checkLine(c *result.Case) string {
	code, line := sgrYellow, c.Name+" "+pendingReason(c)
	switch c.Status {
	case result.Passed, result.Flaky:
		code, line = sgrGreen, c.Name+" passed"
	case result.Failed:
		n := 0
		if a := c.Last(); a != nil {
			n = len(a.Failures)
		}
		code, line = sgrRed, fmt.Sprintf("%s failed: %d alert %s firing", c.Name, n, plural(n, "rule", "rules"))
	case result.Errored:
		code, line = sgrMagenta, c.Name+" errored"
	}
	return h.st.paint(code, h.st.flat(line))
}

// statusLine is the last line of a run: its status and what it means.
func (h *Human) statusLine(r *result.Result, s Summary) string {
	st := r.RunStatus()
	code := map[result.RunStatus]string{result.RunPassed: sgrGreen, result.RunFailed: sgrRed,
		result.RunErrored: sgrMagenta, result.RunInterrupted: sgrYellow, result.RunEmpty: sgrYellow}[st]
	line := "status: " + string(st)
	if why := statusWhy(r, s); why != "" {
		line += " (" + why + ")"
	}
	return h.st.paint(code, h.st.flat(line))
}

// statusWhy says what the run's status means, for the console's last
// line and the HTML report's header.
func statusWhy(r *result.Result, s Summary) string {
	switch r.RunStatus() {
	case result.RunPassed:
		if s.Quarantined > 0 {
			return fmt.Sprintf("%d quarantined %s not gating the run", s.Quarantined, plural(s.Quarantined, "case", "cases"))
		}
	case result.RunFailed:
		return failedWhy(r)
	case result.RunErrored:
		if changes := r.DeploymentChanges(); len(changes) > 0 {
			msgs := make([]string, len(changes))
			for i, d := range changes {
				msgs[i] = d.ChangeMessage()
			}
			return strings.Join(msgs, "; ")
		}
		if st := r.Stop; st != nil && st.Config {
			// A refused key or an unknown agent (exit 2): the cases
			// that met it errored on the configuration, whatever their
			// errors' kinds, and the rest did not run.
			return st.Why() + ": a configuration problem kept the run from telling whether the agent is fine"
		}
		// Counted without the checks: an alert gate that could not read
		// the alerts is not a case that errored.
		n, config := r.ErroredScenarios()
		if n == 0 && r.Stop != nil {
			// Only a quarantined case met the stop: the rest did not run.
			return r.Stop.Why() + ": the run could not tell whether the agent is fine"
		}
		if n == 0 {
			return "no check failed, but the alert gate errored: the platform or the network kept the run from reading the firing alerts"
		}
		return fmt.Sprintf("no check failed, but %d %s errored: %s", n, plural(n, "case", "cases"), erroredWhy(n, config))
	case result.RunInterrupted:
		if s.Pending == 0 {
			// Stopped in what follows the last verdict (the deployment
			// read again, the alert gate): every case stands, but the
			// run did not end on its own.
			return "the run was stopped after every case had finished, before the run itself ended"
		}
		return "the run was stopped before every case finished"
	case result.RunEmpty:
		if s.Total > 0 {
			return "nothing was tested: every selected scenario was skipped"
		}
		if sh := r.Shard; sh != nil && sh.Selected > 0 {
			return fmt.Sprintf("nothing was tested in shard %d/%d: the other shards run the selection's %d %s",
				sh.Index, sh.Total, sh.Selected, plural(sh.Selected, "scenario", "scenarios"))
		}
		return "nothing was tested: no scenario was selected"
	}
	return ""
}

// erroredWhy says why n cases errored, config of them because their
// scenario cannot be run as written (result.Case.ErroredByConfig): that is
// for the user to fix, and retrying the job will not help, where the
// platform or the network may do better next time.
func erroredWhy(n, config int) string {
	switch {
	case config == 0:
		return "the platform or the network kept the run from telling whether the agent is fine"
	case config == n:
		return fmt.Sprintf("%s cannot be run as written (a configuration error; retrying will not help)",
			plural(n, "its scenario", "their scenarios"))
	}
	return fmt.Sprintf("%d cannot be run as written (a configuration error), and the platform or the network kept %d from telling whether the agent is fine",
		config, n-config)
}

// failedWhy says what failed a run: a check of a scenario (the agent
// broke an expectation), a statistical case that ended inconclusive, a
// firing alert rule, or several. An alert rule is
// named with its metric, since it may measure the platform (api_errors:
// its own 5xx answers) rather than the agent.
func failedWhy(r *result.Result) string {
	// A statistical case that ended inconclusive counts as failed, but
	// its runs said nothing against the agent: it is said apart.
	inconclusive, broke := r.InconclusiveFailed()
	var fired []string
	platform := false
	for _, c := range r.Checks {
		if c == nil || c.Gate() != result.Failed || c.Last() == nil {
			continue
		}
		for _, f := range c.Last().Failures {
			fired = append(fired, f.Message)
			platform = platform || f.Key == "alerts.api_errors"
		}
	}
	var why []string
	if broke > 0 || len(fired) == 0 && len(inconclusive) == 0 {
		why = append(why, "a check failed: the agent broke an expectation")
	}
	if broke == 0 && len(inconclusive) > 0 {
		// Beside a broken expectation, the counts line already says
		// "N inconclusive (counted as failed)".
		why = append(why, result.InconclusiveWhy(inconclusive))
	}
	if n, config := r.ErroredScenarios(); n > 0 {
		// A platform error beside a broken expectation is said too: the
		// line would otherwise put every red case on the agent.
		cause := "the platform or the network broke, not the agent"
		if config > 0 {
			cause = erroredWhy(n, config)
		}
		why = append(why, fmt.Sprintf("%d %s errored too: %s", n, plural(n, "case", "cases"), cause))
	}
	if len(fired) > 0 {
		line := fmt.Sprintf("%d alert %s firing, not a check of a scenario: %s", len(fired), plural(len(fired), "rule", "rules"), strings.Join(fired, "; "))
		if platform {
			line += " (api_errors counts the platform's own 5xx answers)"
		}
		why = append(why, line)
	}
	return strings.Join(why, "; ")
}

// caseBlock composes everything printed for a finished case. It reads only
// the case, so it runs outside the lock.
func (h *Human) caseBlock(f *result.File, c *result.Case) string {
	// A similar check that passed near its threshold is the early
	// warning of a reply drifting toward failure: said even where a
	// passing case is otherwise quiet.
	near := nearNotes(c)
	quiet := c.Status == result.Passed && h.opts.TTY && !h.opts.Verbose && c.Quarantine == nil && len(near) == 0
	if quiet {
		return ""
	}
	var b strings.Builder
	b.WriteString(h.label(c))
	b.WriteString(" ")
	b.WriteString(h.st.caseTitle(f, c))
	if note := caseNote(c); note != "" {
		b.WriteString(" (" + h.st.flat(note) + ")")
	}
	b.WriteString("\n")
	for _, n := range near {
		b.WriteString("    " + h.st.paint(sgrYellow, h.st.flat(n)) + "\n")
	}
	for _, l := range spreadLines(c) {
		b.WriteString("    " + h.st.flat(l) + "\n")
	}
	showBody := c.Status == result.Failed || c.Status == result.Errored || c.Status == result.Flaky ||
		h.opts.Verbose && c.Status == result.Passed
	if !showBody {
		return b.String()
	}
	d := detail{b: &b, st: h.st, maxRuns: consoleRuns}
	if h.opts.Verbose {
		d.maxRuns = 0
	}
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
		if r := c.Repeat; r != nil && r.Decision == result.DecisionInterrupted {
			return pendingReason(c)
		}
		return c.SkipReason
	case result.Pending:
		return pendingReason(c)
	}
	var notes []string
	if q := quarantineNote(c); q != "" {
		notes = append(notes, q)
	}
	if c.Status == result.Flaky {
		if note := c.FlakyNote(); note != "" {
			notes = append(notes, note)
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

// label is the status word that starts a case's line: its status, or
// INCONCLUSIVE for a sequential test that reached its limit undecided.
func (h *Human) label(c *result.Case) string {
	if c.Inconclusive() && c.Status == result.Failed {
		return h.st.paint(sgrYellow, "INCONCLUSIVE")
	}
	switch c.Status {
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
	width := utf8.RuneCountInString(escape.StripANSI(line))
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

// describeTarget names the target on the first line of a run, with its
// build and runtime URLs and the environments its cases run in
// (Target.Envs): "env live" when they all run in one, "envs live (10),
// sandbox (4)" when they do not.
func describeTarget(t result.Target) string {
	name := t.Name
	if name == "" {
		name = "unnamed target"
	}
	var extra []string
	switch {
	case t.Embedded && t.Seed != 0:
		// The seed replays the simulator's draws; the default, 0, goes
		// without saying.
		extra = append(extra, fmt.Sprintf("embedded simulator, seed %d", t.Seed))
	case t.Embedded:
		extra = append(extra, "embedded simulator")
	case t.BuildURL != "":
		extra = append(extra, t.BuildURL)
		// The runtime host takes the runtime key (confirmations,
		// probes): one of another region, or of another target through
		// AGENTTEST_RUNTIME_URL, shows here before anything is called.
		if t.RuntimeURL != "" {
			extra = append(extra, "runtime "+t.RuntimeURL)
		}
	}
	switch envs := t.Envs; {
	case len(envs) == 1:
		extra = append(extra, "env "+envs[0].Env)
	case len(envs) > 1:
		each := make([]string, len(envs))
		for i, e := range envs {
			each[i] = fmt.Sprintf("%s (%d)", e.Env, e.Cases)
		}
		extra = append(extra, "envs "+strings.Join(each, ", "))
	case t.Env != "":
		// No case runs: the target's environment is all there is to say.
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
