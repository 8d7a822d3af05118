package report

import (
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// The HTML report embeds its cases as one JSON document, which the page's
// script renders lazily (a run of 20,000 cases would be a page of millions
// of elements). Everything a reader sees is decided here, with the same
// functions the console and JUnit use (failureLine, errorLine, repeatLine,
// quarantineNote, notRunLine, viewTurn, stateChanges, writeMessaging,
// cutLong, assert.DiffFor);
// the script only lays it out. Member names are short because they repeat
// once per case, turn and failure.

// The document in the page's data block is {"files": [htmlFile],
// "cases": [htmlCase]}; WriteHTML streams it a case at a time.

type htmlFile struct {
	Path  string `json:"path"`
	Suite string `json:"suite"`
}

// htmlCase is one case as the list shows it.
type htmlCase struct {
	// File indexes htmlData.Files; -1 for a run-level check.
	File int    `json:"f"`
	Name string `json:"n"`
	// Pos is "file:line", what the case is listed and rerun by.
	Pos    string `json:"p"`
	Status string `json:"s"`
	// Kinds are the filters the case answers to: its status (as the
	// counts see it: a quarantined case is "quarantined" only) and
	// "inconclusive" for an undecided sequential test.
	Kinds      []string `json:"k"`
	DurationMS float64  `json:"d"`
	Tags       []string `json:"t,omitempty"`
	// Meta is agent, env, variant and channel (and "streamed replies"
	// when the conversation asked for them), in one line.
	Meta string `json:"m,omitempty"`
	// Note is the case's remark: why it was skipped, its quarantine, the
	// attempt it passed on, its statistical verdict.
	Note string `json:"note,omitempty"`
	// Head is the first failure or the error, one line: what the
	// collapsed row says.
	Head string `json:"h,omitempty"`
	// RateWaitMS is the time the case waited on rate limits.
	RateWaitMS float64 `json:"rw,omitempty"`
	// Runs is the outcome of each run of a repeated case ("p", "f", "e").
	Runs string `json:"runs,omitempty"`
	// FailureKinds is the failed runs of a repeated case grouped by
	// what failed first, one line each, as the console lists them.
	FailureKinds []string `json:"fk,omitempty"`
	// Spreads is each similar matcher of a repeated case over its
	// runs, one line each (spreadLines).
	Spreads  []string      `json:"sp,omitempty"`
	Attempts []htmlAttempt `json:"a,omitempty"`
}

type htmlAttempt struct {
	Number int `json:"n"`
	// Run is the run of a repeated case the attempt belongs to.
	Run        int     `json:"run,omitempty"`
	Status     string  `json:"s"`
	DurationMS float64 `json:"d"`
	// Conv is the conversation (or Messaging session) id.
	Conv     string        `json:"conv,omitempty"`
	Failures []htmlFailure `json:"fail,omitempty"`
	Error    string        `json:"err,omitempty"`
	// Broke is the index of the turn where the attempt broke, -1 when it
	// did not (the transcript marks it).
	Broke   int           `json:"broke"`
	Turns   []htmlTurn    `json:"turns,omitempty"`
	Confirm []htmlConfirm `json:"conf,omitempty"`
	// NotRun is what the attempt did not run, when it ended before its
	// last step.
	NotRun *htmlNotRun `json:"nr,omitempty"`
}

// htmlNotRun is the steps an attempt did not run: the console's line
// ("not run: turns 2-3, confirm (conversation)") and each step,
// "file:line:col text".
type htmlNotRun struct {
	Line  string   `json:"line"`
	Steps []string `json:"steps"`
}

type htmlFailure struct {
	// Line is "file:line:col: turn 3: message", as the console says it.
	Line     string `json:"line"`
	Expected string `json:"exp,omitempty"`
	// Nearest is assert.Failure.Nearest, which Diff is then made against.
	Nearest string `json:"near,omitempty"`
	Actual  string `json:"act,omitempty"`
	// ExpectedCut, NearestCut and ActualCut are those values as the page
	// first shows them when they are long (htmlLong), the whole on a
	// click: the diff shows where they differ.
	ExpectedCut string    `json:"expc,omitempty"`
	NearestCut  string    `json:"nearc,omitempty"`
	ActualCut   string    `json:"actc,omitempty"`
	Diff        *htmlDiff `json:"diff,omitempty"`
}

// htmlDiff is assert.TextDiff as the console shows it (TextDiff.Visible:
// changed invisible characters escaped): Changes are [op, text] pairs
// with op 0 same, 1 removed (expected only), 2 added (actual only).
type htmlDiff struct {
	Lines     bool     `json:"lines,omitempty"`
	Changes   [][2]any `json:"ch"`
	Note      string   `json:"note,omitempty"`
	Truncated bool     `json:"trunc,omitempty"`
}

type htmlTurn struct {
	Index int    `json:"i"`
	Pos   string `json:"p,omitempty"`
	Say   string `json:"say,omitempty"`
	// NoReply is true when the call failed: there is no reply to show.
	NoReply bool   `json:"none,omitempty"`
	Reply   string `json:"r,omitempty"`
	// ReplyCut is Reply as the page first shows it when it is long
	// (htmlLong).
	ReplyCut string   `json:"rc,omitempty"`
	Trace    []string `json:"tr,omitempty"`
	Node     string   `json:"node,omitempty"`
	// State lists the state keys the turn changed (stateChanges);
	// StateCut, when one of them is long, each as the page first shows
	// it (htmlLong: "" for one that is not).
	State    []string `json:"st,omitempty"`
	StateCut []string `json:"stc,omitempty"`
	Handoff  string   `json:"ho,omitempty"`
	Ended    bool     `json:"end,omitempty"`
	Delayed  bool     `json:"del,omitempty"`
	// Events are the lines a Messaging turn's events make.
	Events []string `json:"ev,omitempty"`
	// Scores are the similar checks of the reply (scoreLine).
	Scores    []htmlScore `json:"sc,omitempty"`
	LatencyMS float64     `json:"lat"`
}

// htmlScore is one similar check of a turn: its line, and whether it
// failed or passed near its threshold (assert.Score.Near), which the
// page marks.
type htmlScore struct {
	Line   string `json:"t"`
	Near   bool   `json:"n,omitempty"`
	Failed bool   `json:"f,omitempty"`
}

type htmlConfirm struct {
	Kind    string `json:"kind"`
	Subject string `json:"subj"`
	Held    bool   `json:"ok"`
	Summary string `json:"sum,omitempty"`
	// Seen is what a probe did and saw, each line as the console writes
	// it (seenLine), with who for its look.
	Seen []htmlSeen `json:"seen,omitempty"`
}

type htmlSeen struct {
	Who  string `json:"w"`
	Line string `json:"x"`
}

// htmlStyle is how text is cleaned for the page: like a file, escape
// sequences stripped, and the other controls written as the console and
// JUnit write them (internal/escape: "\r", "\u202e"), so that a reply, a
// node or a state key shows what it holds, in its order. HTML escaping is
// the page's job (textContent, html/template).
var htmlStyle = style{file: true}

// htmlFailureStyle is how a failure's compared values and their diff are
// cleaned, as in the other reports (style.compared).
var htmlFailureStyle = htmlStyle.compared()

// flatAll is htmlStyle.flat of each of ss.
func flatAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = htmlStyle.flat(s)
	}
	return out
}

// htmlFiles are the files of r as the data block lists them.
func htmlFiles(r *result.Result) []htmlFile {
	out := []htmlFile{}
	for _, f := range r.Files {
		if f != nil {
			out = append(out, htmlFile{Path: htmlStyle.flat(f.Path), Suite: htmlStyle.flat(f.Suite)})
		}
	}
	return out
}

// eachHTMLCase calls fn with every case of r as the data block holds it,
// in report order, stopping at the first error: one case's view is held
// at a time, so a report of 100,000 cases is written in the memory of one.
func eachHTMLCase(r *result.Result, fn func(htmlCase) error) error {
	fi := 0
	for _, f := range r.Files {
		if f == nil {
			continue
		}
		for _, c := range f.Cases {
			if c != nil {
				if err := fn(toHTMLCase(fi, f, c)); err != nil {
					return err
				}
			}
		}
		fi++
	}
	for _, c := range r.Checks {
		if c != nil {
			if err := fn(toHTMLCase(-1, nil, c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// caseKind is the one count a case falls in, as Summary.add counts it.
func caseKind(c *result.Case) string {
	if c.QuarantineHeld() {
		return "quarantined"
	}
	return c.Status.String()
}

func toHTMLCase(fi int, f *result.File, c *result.Case) htmlCase {
	hc := htmlCase{
		File:       fi,
		Name:       htmlStyle.flat(c.Name),
		Pos:        htmlStyle.flat(casePos(f, c)),
		Status:     c.Status.String(),
		Kinds:      []string{caseKind(c)},
		DurationMS: millis(c.Duration),
		Tags:       flatAll(c.Tags),
		RateWaitMS: millis(c.RateWaited),
	}
	if c.Inconclusive() && c.Status == result.Failed && hc.Kinds[0] == "failed" {
		hc.Kinds = append(hc.Kinds, "inconclusive")
	}
	var meta []string
	for _, m := range []struct{ k, v string }{{"agent", c.Agent}, {"env", c.Env}, {"variant", c.Variant}, {"via", c.Via}} {
		if m.v != "" {
			meta = append(meta, m.k+" "+m.v)
		}
	}
	if c.Streaming {
		meta = append(meta, "streamed replies")
	}
	hc.Meta = htmlStyle.flat(strings.Join(meta, " · "))
	if c.Status == result.Skipped || c.Status == result.Pending {
		hc.Note = htmlStyle.flat(caseNote(c))
	} else {
		// caseNote without the duration, which the row shows apart.
		var notes []string
		if q := quarantineNote(c); q != "" {
			notes = append(notes, q)
		}
		if note := c.FlakyNote(); c.Status == result.Flaky && note != "" {
			notes = append(notes, note)
		}
		if c.Repeat != nil {
			notes = append(notes, repeatLine(c.Repeat))
		}
		notes = append(notes, nearNotes(c)...)
		hc.Note = htmlStyle.flat(strings.Join(notes, "; "))
	}
	hc.Head = caseHead(c)
	if c.Repeat != nil {
		var runs strings.Builder
		for _, r := range c.Runs() {
			switch r.Last().Status {
			case result.Passed, result.Flaky:
				runs.WriteByte('p')
			case result.Failed:
				runs.WriteByte('f')
			default:
				runs.WriteByte('e')
			}
		}
		hc.Runs = runs.String()
		hc.Spreads = flatAll(spreadLines(c))
		if groups := htmlStyle.failureGroups(c.Runs()); worthListing(groups) {
			for _, g := range groups {
				hc.FailureKinds = append(hc.FailureKinds, g.String())
			}
		}
	}
	for _, a := range c.Attempts {
		if a != nil {
			hc.Attempts = append(hc.Attempts, toHTMLAttempt(a))
		}
	}
	return hc
}

// caseHead is the first failure or the error of a failed or errored
// case, one line: what its collapsed row says.
func caseHead(c *result.Case) string {
	if c.Status != result.Failed && c.Status != result.Errored {
		return ""
	}
	a := c.Deciding()
	switch {
	case a == nil:
		return ""
	case len(a.Failures) > 0:
		return htmlStyle.failureLine(a, a.Failures[0])
	case a.Error != nil:
		return htmlStyle.errorLine(a, a.Error)
	}
	return ""
}

func toHTMLAttempt(a *result.Attempt) htmlAttempt {
	ha := htmlAttempt{
		Number:     a.Number,
		Run:        a.Run,
		Status:     a.Status.String(),
		DurationMS: millis(a.Duration),
		Conv:       htmlStyle.flat(a.ConversationID),
		Broke:      brokeAt(a),
	}
	if ha.Conv == "" {
		ha.Conv = htmlStyle.flat(sessionID(a))
	}
	for _, f := range a.Failures {
		hf := htmlFailure{Line: htmlStyle.failureLine(a, f)}
		if f.Expected != "" || f.Actual != "" {
			// As the console shows them (showValue): quoted when white
			// space or an invisible character matters, an empty value as
			// "", where the page showed a trailing space, a no-break
			// space or an empty reply as nothing at all.
			j := joinersDiffer(f)
			hf.Expected, hf.Actual = htmlValue(f.Expected, j), htmlValue(f.Actual, j)
			show := func(s string) string { return htmlValue(s, j) }
			hf.ExpectedCut, hf.ActualCut = htmlLong(f.Expected, show), htmlLong(f.Actual, show)
			if f.Nearest != "" {
				hf.Nearest, hf.NearestCut = htmlValue(f.Nearest, j), htmlLong(f.Nearest, show)
			}
		}
		if f.Diff != "" {
			hf.Diff = toHTMLDiff(assert.DiffFor(f, htmlFailureStyle.oneLine(f.DiffBase()), htmlFailureStyle.oneLine(f.Actual)))
		}
		ha.Failures = append(ha.Failures, hf)
	}
	if e := a.Error; e != nil {
		ha.Error = htmlStyle.errorLine(a, e)
	}
	var prev map[string]any
	for _, t := range a.Turns {
		if t == nil {
			continue
		}
		ht := htmlTurn{Index: t.Index, Pos: htmlStyle.flat(t.Pos.String()), Say: htmlStyle.oneLine(t.Say), LatencyMS: millis(t.Latency)}
		v := viewTurn(t.Reply())
		switch {
		case !v.HasResult:
			ht.NoReply = true
		case t.Messaging != nil:
			ht.Reply, ht.ReplyCut = htmlStyle.oneLine(v.Reply), htmlLong(v.Reply, htmlStyle.oneLine)
			var b strings.Builder
			detail{b: &b, st: htmlStyle}.writeMessaging("", t.Messaging)
			ht.Events = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if b.Len() == 0 {
				ht.Events = nil
			}
			if part := t.Messaging.ChunkText(); v.Reply == "" && part != "" {
				ht.Events = append([]string{htmlStyle.flat(stoppedAfter(part))}, ht.Events...)
			}
		default:
			ht.Reply, ht.ReplyCut = htmlStyle.oneLine(v.Reply), htmlLong(v.Reply, htmlStyle.oneLine)
			ht.Trace, ht.Node = flatAll(v.Trace), htmlStyle.flat(v.Node)
			changes := stateChanges(prev, v.State)
			ht.State = flatAll(changes)
			for i, ch := range changes {
				if cut := htmlLong(ch, htmlStyle.flat); cut != "" {
					if ht.StateCut == nil {
						ht.StateCut = make([]string, len(changes))
					}
					ht.StateCut[i] = cut
				}
			}
			if v.State != nil {
				prev = v.State
			}
			ht.Handoff, ht.Ended, ht.Delayed = htmlStyle.flat(v.Handoff), v.Ended, v.Delayed
		}
		for _, sc := range t.Scores {
			ht.Scores = append(ht.Scores, htmlScore{Line: htmlStyle.scoreLine(sc), Near: sc.Near(), Failed: !sc.Passed()})
		}
		ha.Turns = append(ha.Turns, ht)
	}
	for _, c := range a.Confirmations {
		if c != nil {
			hc := htmlConfirm{Kind: c.Kind, Subject: htmlStyle.flat(c.Subject), Held: c.Held, Summary: htmlStyle.flat(c.Summary)}
			for _, sn := range c.Seen {
				hc.Seen = append(hc.Seen, htmlSeen{Who: sn.Who, Line: htmlStyle.flat(seenLine(sn))})
			}
			ha.Confirm = append(ha.Confirm, hc)
		}
	}
	if l := notRunLine(a.NotRun); l != "" {
		ha.NotRun = &htmlNotRun{Line: l, Steps: []string{}}
		for _, st := range a.NotRun {
			if st != nil {
				ha.NotRun.Steps = append(ha.NotRun.Steps, htmlStyle.oneLine(strings.TrimSpace(st.Pos.String()+" "+st.Text)))
			}
		}
	}
	return ha
}

func toHTMLDiff(td assert.TextDiff) *htmlDiff {
	if len(td.Changes) == 0 && td.Note == "" {
		return nil
	}
	hd := &htmlDiff{Lines: td.Lines, Changes: make([][2]any, 0, len(td.Changes)), Note: td.Note, Truncated: td.Truncated}
	for _, c := range td.Visible().Changes {
		hd.Changes = append(hd.Changes, [2]any{int(c.Op), c.Text})
	}
	return hd
}

// htmlLong is s as the page first shows it when it is long (cutLong, the
// rule of the console's failures): its head as show renders it, and how
// long it is; "" when it is not long. The page shows the whole on a
// click: a reply of 26 KB drawn whole under expected, actual and in the
// transcript buried the diff, which shows where the texts differ.
func htmlLong(s string, show func(string) string) string {
	head, n, long := cutLong(s)
	if !long {
		return ""
	}
	return show(head) + fmt.Sprintf("… (%d characters)", n)
}

// htmlValue is a compared value of a failure as the console's showValue
// renders it, the lines of a longer text kept as lines (the page shows
// them in a <pre>); joiners is joinersDiffer of the failure.
func htmlValue(s string, joiners bool) string {
	if c := htmlFailureStyle.clean(s); needsQuote(c, joiners) {
		return quoteValue(c, joiners)
	}
	return htmlFailureStyle.oneLine(s)
}
