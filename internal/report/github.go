package report

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/escape"
	"github.com/agenttest/agenttest/internal/result"
)

// GitHub Actions reads workflow commands from a step's output
// (https://docs.github.com/actions/reference/workflow-commands-for-github-actions):
// `::error file=F,line=L,col=C,title=T::message` puts the message on line L
// of F in the pull request's diff and the run's summary. The message and
// the properties are escaped the way the runner's own toolkit does
// (@actions/core command.ts: escapeData, escapeProperty). A property is
// one line of a file's text (a scenario's name, its path), shown in the
// job's log and on the pull request: ciText cleans it first.

// WriteGitHubAnnotations writes one workflow command per broken
// expectation of the run: `::error` at the position of every failure of a
// failed case's failing attempt, and at the position of an errored
// case's error (the scenario's when the error has none); `::warning` for
// a flaky case (at its first failure) and for a quarantined case that
// failed or errored, since neither gates the run. Run-level checks (the
// alert gate) are annotated like cases; `::notice` at each similar check
// of a passing case that passed near its threshold (nearNotes). Other
// passing cases, skipped and pending ones write nothing. The message holds what the console says of the
// failure: the failure line, expected, actual and the diff, uncoloured.
//
// An interrupted run opens with one `::error` of its own, whatever its
// cases say: its exit code (130) fails the job, and the annotations of
// the cases that finished would otherwise read as the whole story.
//
// GitHub shows at most annotationsPerLevel annotations of each level per
// step and drops the rest without a word. When a run has more, the first
// annotationsPerLevel-1 of the level are written and the last one says
// how many more there are and where each broke, so that the run's page
// never reads as the whole story when it is not.
func WriteGitHubAnnotations(w io.Writer, r *result.Result) error {
	return WriteGitHubAnnotationsWith(w, r, GitHubOptions{})
}

// GitHubOptions are what the annotations need of the job they are
// written in.
type GitHubOptions struct {
	// File maps the path of a suite, as the run names it, to the
	// annotation's file: the runner reads a relative path as the
	// repository's, not the step's working directory's. Nil keeps it.
	File func(path string) string
}

// WriteGitHubAnnotationsWith is WriteGitHubAnnotations with the job's
// options.
func WriteGitHubAnnotationsWith(w io.Writer, r *result.Result, o GitHubOptions) error {
	var as annotations
	st := r.RunStatus()
	if st == result.RunInterrupted {
		as.add("error", diag.Pos{}, "run interrupted", githubWhy(r, Summarize(r)))
	}
	for f, c := range r.Cases() {
		annotateCase(&as, f, c)
	}
	// A run can error with no case to point at (a platform that could not
	// be used, a deployment that changed under it): the job still gets
	// one annotation saying why.
	if len(as) == 0 && (st == result.RunErrored || st == result.RunFailed) {
		as.add("error", diag.Pos{}, "run "+string(st), githubWhy(r, Summarize(r)))
	}
	if o.File != nil {
		for i := range as {
			if as[i].at.File != "" {
				as[i].at.File = o.File(as[i].at.File)
			}
		}
	}
	var b strings.Builder
	as.write(&b)
	return writeString(w, b.String(), "github annotations")
}

// annotationsPerLevel is how many annotations of one level (error,
// warning) GitHub Actions shows per step: those after are dropped
// (actions/toolkit docs/problem-matchers.md, "Limitations").
const annotationsPerLevel = 10

// omittedListed bounds the places listed in the annotation that stands
// for those GitHub would drop: the summary and the reports hold them all.
const omittedListed = 20

// annotations are a run's workflow commands, in the order they are
// written.
type annotations []ghAnnotation

type ghAnnotation struct {
	level      string
	at         diag.Pos
	title, msg string
}

func (as *annotations) add(level string, at diag.Pos, title, msg string) {
	*as = append(*as, ghAnnotation{level, at, title, msg})
}

// write writes the annotations, each level within annotationsPerLevel:
// when a level has more, its last one lists the places of the others.
func (as annotations) write(b *strings.Builder) {
	count := map[string]int{}
	for _, a := range as {
		count[a.level]++
	}
	written := map[string]int{}
	omitted := map[string][]ghAnnotation{}
	for _, a := range as {
		if count[a.level] > annotationsPerLevel && written[a.level] == annotationsPerLevel-1 {
			omitted[a.level] = append(omitted[a.level], a)
			continue
		}
		written[a.level]++
		annotation(b, a.level, a.at, a.title, a.msg)
	}
	for _, level := range []string{"error", "warning", "notice"} {
		rest := omitted[level]
		if len(rest) == 0 {
			continue
		}
		where := "the step summary, the log above and the report files"
		if level == "notice" {
			// The summary lists what did not pass; a near pass is not.
			where = "the log above and the report files"
		}
		var msg strings.Builder
		fmt.Fprintf(&msg, "GitHub Actions shows %d %s annotations per step; these %d are in %s:",
			annotationsPerLevel, level, len(rest), where)
		for i, a := range rest {
			if i == omittedListed {
				fmt.Fprintf(&msg, "\n... and %d more", len(rest)-omittedListed)
				break
			}
			msg.WriteString("\n")
			if a.at.File != "" {
				msg.WriteString(ciText(a.at.String()) + ": ")
			}
			msg.WriteString(ciText(a.title))
		}
		annotation(b, level, diag.Pos{}, fmt.Sprintf("%d more %s not shown as annotations", len(rest), plural(len(rest), level, level+"s")), msg.String())
	}
}

// githubWhy is what a run's status means (statusWhy), and for an
// interrupted run also how much of it did not run: the annotation and the
// summary stand alone on the run's page, where the console's counts are
// not next to them.
func githubWhy(r *result.Result, s Summary) string {
	why := statusWhy(r, s)
	if r.RunStatus() == result.RunInterrupted && s.Pending > 0 {
		why += fmt.Sprintf(" (cancelled by a signal or a deadline): %d of %d %s not run; the verdicts of the others stand",
			s.Pending, s.Total, plural(s.Total, "scenario", "scenarios"))
	}
	return why
}

func annotateCase(b *annotations, f *result.File, c *result.Case) {
	level := "error"
	title := c.Status.String() + ": " + c.Name
	switch {
	case c.Status == result.Flaky:
		// Whether the retry got past the agent or the platform is what a
		// reader of the annotation needs first (FlakyNote).
		level, title = "warning", "flaky ("+cmp.Or(c.FlakyNote(), "passed on retry")+"): "+c.Name
	case c.Quarantined() && (c.Status == result.Failed || c.Status == result.Errored):
		level, title = "warning", c.Status.String()+" (quarantined, not gating): "+c.Name
	case c.Inconclusive():
		title = "inconclusive: " + c.Name
	case c.Status == result.Passed:
		annotateNear(b, c)
		return
	case c.Status != result.Failed && c.Status != result.Errored:
		return
	}
	a := c.Deciding()
	st := style{file: true}
	at := c.Pos
	if at.File == "" && f != nil {
		at.File = f.Path
	}
	if a == nil {
		b.add(level, at, title, c.Status.String()+" before any attempt started")
		return
	}
	if c.Repeat != nil {
		// A statistical verdict rests on many runs: one annotation at the
		// scenario gives the verdict's grounds (as the console's FAIL line
		// and the Cucumber step do) and the runs (the first line of the
		// console's block), then the failures of the last failing run are
		// annotated.
		var d strings.Builder
		detail{b: &d, st: st}.writeRuns(c, "")
		runs, _, _ := strings.Cut(d.String(), "\n")
		b.add(level, at, title, st.flat(repeatLine(c.Repeat))+"\n"+runs)
		if level == "warning" || c.Inconclusive() {
			return
		}
	}
	// What the attempt left untested goes with the annotation of what
	// ended it (its error, else its last failure), as under the
	// console's failure.
	notRun := ""
	if l := notRunLine(a.NotRun); l != "" {
		notRun = "\n" + l
	}
	for i, fl := range a.Failures {
		var d strings.Builder
		detail{b: &d, st: st}.writeFailure(a, fl, "")
		if c.Status == result.Flaky && i == 0 {
			b.add(level, orPos(fl.Pos, at), title, d.String())
			return
		}
		msg := d.String()
		if i == len(a.Failures)-1 && a.Error == nil {
			msg = strings.TrimSuffix(msg, "\n") + notRun
		}
		b.add(level, orPos(fl.Pos, at), title, msg)
	}
	if e := a.Error; e != nil {
		b.add(level, orPos(e.Pos, at), title, st.errorLine(a, e)+notRun)
	}
	if len(a.Failures) == 0 && a.Error == nil {
		b.add(level, at, title, a.Status.String()+" without a recorded cause")
	}
}

// annotateNear writes a `::notice` at each similar check of a passing
// case that passed near its threshold (nearNotes), on the line of the
// matcher: the warning of a reply drifting toward failure goes where the
// threshold is written. A flaky case's warning says more already.
func annotateNear(b *annotations, c *result.Case) {
	for _, n := range nearScores(c) {
		b.add("notice", n.Pos, "near threshold: "+c.Name, nearNote(n)+"\npassed by less than "+assert.FormatMin(assert.NearMargin)+": a rephrasing may fail it")
	}
}

func orPos(p, fallback diag.Pos) diag.Pos {
	if p.File == "" {
		return fallback
	}
	return p
}

// annotation writes one workflow command.
func annotation(b *strings.Builder, level string, at diag.Pos, title, msg string) {
	b.WriteString("::" + level)
	var props []string
	if at.File != "" {
		props = append(props, "file="+escapeProperty(ciText(at.File)))
		if at.Line > 0 {
			props = append(props, fmt.Sprintf("line=%d", at.Line))
		}
		if at.Col > 0 {
			props = append(props, fmt.Sprintf("col=%d", at.Col))
		}
	}
	props = append(props, "title="+escapeProperty(fitAnnotation(ciText("agenttest "+title), annotationTitleMax, "…")))
	b.WriteString(" " + strings.Join(props, ","))
	b.WriteString("::" + escapeData(fitAnnotation(strings.TrimRight(msg, "\n"), annotationMessageMax, annotationCut)) + "\n")
}

// The runner cuts an annotation's message to 4096 characters (UTF-16
// code units: actions/runner 2.305.0 onwards) without a word, and the
// checks API takes a title of at most 255: a long reply's diff or an
// examples row's name is cut here instead, saying so.
const (
	annotationMessageMax = 4096
	annotationTitleMax   = 255
	annotationCut        = "\n... cut to the 4096 characters of a GitHub annotation: the whole failure is in the log above and the report files"
)

// fitAnnotation cuts s to at most max UTF-16 code units, the last of
// them being note, on a rune boundary; s is returned whole when it fits.
func fitAnnotation(s string, max int, note string) string {
	units := func(s string) int { return len(utf16.Encode([]rune(s))) }
	if units(s) <= max {
		return s
	}
	budget, n := max-units(note), 0
	for i, r := range s {
		if n += utf16.RuneLen(r); n > budget {
			return s[:i] + note
		}
	}
	return s
}

// ciText makes one line of text a suite or a platform chose (a name, a
// path, a deployment id) safe in a job's log and its summary: escape
// sequences are stripped, as in the message, whose text is the console's
// uncoloured, and what remains that could drive the log viewer or
// reorder what it shows (a lone ESC, a carriage return, a bidirectional
// override) is written as Go escapes it.
func ciText(s string) string { return escape.Line(escape.StripANSI(s)) }

// escapeData escapes a command's message (@actions/core escapeData).
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a command property's value (@actions/core
// escapeProperty): also ':' and ',', which end a property.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// summaryRows bounds the table of the step summary: GitHub keeps at most
// 1 MiB of summary per step, and a nightly run with hundreds of failures
// is read in its report files.
const summaryRows = 50

// WriteGitHubSummary writes the Markdown that a run appends to
// $GITHUB_STEP_SUMMARY: the run's status and why, the counts, the target,
// and a table of the cases that did not pass (failed, errored, flaky,
// quarantined failures; at most summaryRows), each with its file:line and
// its first failure.
func WriteGitHubSummary(w io.Writer, r *result.Result) error {
	s := Summarize(r)
	why := githubWhy(r, s)
	var b strings.Builder
	icon := map[result.RunStatus]string{result.RunPassed: "✅", result.RunFailed: "❌", result.RunErrored: "⚠️",
		result.RunInterrupted: "⏹️", result.RunEmpty: "➖"}[r.RunStatus()]
	fmt.Fprintf(&b, "### %s agenttest: %s\n\n", icon, r.RunStatus())
	if why != "" {
		fmt.Fprintf(&b, "%s\n\n", mdText(why))
	}
	counts := []string{fmt.Sprintf("%d passed", s.Passed)}
	for _, c := range []struct {
		n    int
		what string
	}{{s.Flaky, "flaky"}, {s.Failed, "failed"}, {s.Errored, "errored"}, {s.Inconclusive, "inconclusive"},
		{s.Quarantined, "quarantined"}, {s.Skipped, "skipped"}, {s.Pending, "not run"}} {
		if c.n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	target := r.Target.Name
	if r.Target.Embedded {
		target += " (embedded simulator)"
	}
	fmt.Fprintf(&b, "**%d %s**: %s, in %s, against %s", s.Total, plural(s.Total, "scenario", "scenarios"),
		strings.Join(counts, ", "), formatDuration(r.Duration), mdCode(target))
	if r.Target.Env != "" {
		fmt.Fprintf(&b, " (%s)", mdCode(r.Target.Env))
	}
	b.WriteString("\n\n")
	for _, d := range r.Deployments {
		if d == nil || d.ID == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s in %s: deployment %s", mdCode(d.Agent), mdCode(d.Env), mdCode(d.ID))
		if d.Version != "" {
			fmt.Fprintf(&b, " (version %s)", mdCode(d.Version))
		}
		if d.After != "" && d.After != d.ID {
			fmt.Fprintf(&b, ", then %s", mdCode(d.After))
		}
		b.WriteString("\n")
	}
	if len(r.Deployments) > 0 {
		b.WriteString("\n")
	}

	type row struct{ status, name, where, why string }
	var rows []row
	add := func(f *result.File, c *result.Case) {
		status := c.Status.String()
		switch {
		case c.Quarantined() && (c.Status == result.Failed || c.Status == result.Errored):
			status += " (quarantined)"
		case c.Inconclusive():
			status = "inconclusive"
		case c.Status != result.Failed && c.Status != result.Errored && c.Status != result.Flaky:
			return
		}
		why := ""
		if a := c.Deciding(); a != nil {
			why = style{file: true}.attemptLine(a)
			why = strings.TrimPrefix(why, a.Status.String()+": ")
		}
		if c.Repeat != nil {
			// The verdict rests on the runs, not on the one failure shown.
			why = strings.TrimSuffix(style{file: true}.flat(repeatLine(c.Repeat))+"; a failed run: "+why, "; a failed run: ")
		}
		rows = append(rows, row{status, c.Name, casePos(f, c), why})
	}
	for f, c := range r.Cases() {
		add(f, c)
	}
	if len(rows) == 0 {
		return writeString(w, b.String(), "github step summary")
	}
	b.WriteString("| status | scenario | where | why |\n|---|---|---|---|\n")
	for i, rw := range rows {
		if i == summaryRows {
			fmt.Fprintf(&b, "\n%d more in the JUnit and JSON reports.\n", len(rows)-summaryRows)
			break
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", rw.status, mdText(rw.name), mdCode(rw.where), mdText(rw.why))
	}
	return writeString(w, b.String(), "github step summary")
}

func writeString(w io.Writer, s, what string) error {
	if _, err := io.WriteString(w, s); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

// mdText makes free text (a scenario name, a reply quoted in a failure)
// safe in a Markdown table cell: one line, no cell separator, no HTML,
// which GitHub would render, and no control character (ciText).
func mdText(s string) string {
	s = ciText(strings.Join(strings.Fields(s), " "))
	return strings.NewReplacer("\\", "\\\\", "|", "\\|", "<", "&lt;", ">", "&gt;", "&", "&amp;", "`", "\\`",
		"*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]").Replace(s)
}

// mdCode renders a path or a name as inline code.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = ciText(strings.Join(strings.Fields(s), " "))
	return "`" + strings.NewReplacer("`", "'", "|", "\\|").Replace(s) + "`"
}

// CommandGuard is the Actions runner's own remedy for text it must not
// read as workflow commands: Stop before it, Resume after, with a token
// nobody could know when the text was written (a reply could otherwise
// resume the commands itself). The runner obeys a line that starts,
// after blanks, with `::`, and in the older syntax one holding `##[`
// anywhere.
type CommandGuard struct{ Stop, Resume string }

// NewCommandGuard makes the lines of a guard with a fresh token.
func NewCommandGuard() CommandGuard {
	token := "agenttest-" + rand.Text()
	return CommandGuard{Stop: "::stop-commands::" + token, Resume: "::" + token + "::"}
}

// MayHoldCommand says whether text could hold a workflow command the
// runner obeys: `::` (looked for anywhere, not only at a line's start,
// which costs at most a needless guard) or `##[`.
func MayHoldCommand(text string) bool {
	return strings.Contains(text, "::") || strings.Contains(text, "##[")
}
