package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// notRunReason is what a pending case says when the runner gave no reason.
const notRunReason = "not run: run interrupted"

// casePos is the position a case is listed under: file:line of the
// scenario, falling back to the file path when the scenario has none.
func casePos(f *result.File, c *result.Case) string {
	p := c.Pos
	if p.File == "" && f != nil {
		p.File = f.Path
	}
	p.Col = 0
	return p.String()
}

// caseTitle is "file:line name", the way a case is named in every line of
// the console.
func (st style) caseTitle(f *result.File, c *result.Case) string {
	pos := casePos(f, c)
	if pos == "" {
		return st.flat(c.Name)
	}
	return st.flat(pos + " " + c.Name)
}

// turnLabel names a transcript turn the way failure lines do.
func turnLabel(t *result.Turn) string {
	if t.Index == 0 {
		return "greeting"
	}
	return fmt.Sprintf("turn %d", t.Index)
}

// turnOf is the turn of the transcript written at exactly pos (the last
// one, after retried calls), or nil.
func turnOf(a *result.Attempt, pos diag.Pos) *result.Turn {
	if a == nil || pos.Line == 0 {
		return nil
	}
	var found *result.Turn
	for _, t := range a.Turns {
		if t != nil && t.Pos == pos {
			found = t
		}
	}
	return found
}

// turnAt finds the turn an expectation or error at pos belongs to: the
// last turn written at or before pos in the same file. Positions are the
// only reliable link, since the runner records failures per attempt. When
// nothing matches, the last turn is the best guess: an attempt stops at the
// first turn whose checks fail.
func turnAt(a *result.Attempt, pos diag.Pos) *result.Turn {
	if a == nil || len(a.Turns) == 0 {
		return nil
	}
	var found *result.Turn
	if pos.Line > 0 {
		for _, t := range a.Turns {
			if t == nil || t.Pos.File != pos.File || t.Pos.Line == 0 {
				continue
			}
			if t.Pos.Line < pos.Line || t.Pos.Line == pos.Line && t.Pos.Col <= pos.Col {
				found = t
			}
		}
	}
	if found == nil {
		found = a.Turns[len(a.Turns)-1]
	}
	return found
}

// failureLine is the one-line form of a failure:
// "suites/refund.yaml:42:7: turn 3: reply does not match".
func (st style) failureLine(a *result.Attempt, f assert.Failure) string {
	var parts []string
	if p := f.Pos.String(); p != "" {
		parts = append(parts, p)
	}
	if f.Step != "" {
		// A feature step names itself better than a turn number. Steps
		// that take a table or a DocString end in a colon already.
		parts = append(parts, strings.TrimSuffix(f.Step, ":"))
	} else if afterSession(f.Key) {
		// Confirmations, probes and the alert gate are checked after (or
		// instead of) the turns: their key says what was checked.
		parts = append(parts, f.Key)
	} else if t := turnAt(a, f.Pos); t != nil {
		parts = append(parts, turnLabel(t))
	}
	msg := f.Message
	if msg == "" {
		msg = f.Key + " does not hold"
	}
	parts = append(parts, msg)
	return st.flat(strings.Join(parts, ": "))
}

// afterSession says whether a failure key is one of the checks made after
// the session rather than on a turn's reply.
func afterSession(key string) bool {
	for _, p := range []string{"confirm", "probe", "alerts"} {
		if key == p || strings.HasPrefix(key, p+".") {
			return true
		}
	}
	return false
}

// errorLine is the one-line form of an attempt's infrastructure error:
// "suites/x.yaml:20:5: turn 3: timeout: no reply within 30s". The turn is
// named only when the error is the failed call of a turn of the
// transcript (at the turn's own position); the runner's message names
// anything else it was doing ("probe: place call to ..."), so no label is
// said twice.
func (st style) errorLine(a *result.Attempt, e *result.Error) string {
	var parts []string
	if p := e.Pos.String(); p != "" {
		parts = append(parts, p)
	}
	if t := turnOf(a, e.Pos); t != nil {
		parts = append(parts, turnLabel(t))
	}
	if e.Kind != "" {
		parts = append(parts, e.Kind)
	}
	parts = append(parts, e.Message)
	return st.flat(strings.Join(parts, ": "))
}

// attemptLine summarises an attempt in one line, for the list of earlier
// attempts of a retried case.
func (st style) attemptLine(a *result.Attempt) string {
	switch {
	case a.Error != nil:
		return a.Status.String() + ": " + st.errorLine(a, a.Error)
	case len(a.Failures) > 0:
		s := a.Status.String() + ": " + st.failureLine(a, a.Failures[0])
		if v := a.Failures[0].Actual; v != "" {
			// What the agent said, so attempts that broke the same
			// expectation with different answers (an agent that varies)
			// read apart from a steady wrong answer (a regression).
			s += " (actual: " + st.shortValue(v) + ")"
		}
		if n := len(a.Failures) - 1; n > 0 {
			s += fmt.Sprintf(" (and %d more)", n)
		}
		return s
	default:
		return a.Status.String()
	}
}

// detail writes the explanation of a case: why it failed or errored, the
// earlier attempts, and the transcript. Both the console block and the
// JUnit body are made by it, so they say the same thing.
type detail struct {
	b  *strings.Builder
	st style
	// maxRuns bounds the failed runs of a repeated case shown in full
	// (the console's); 0 shows them all (the files').
	maxRuns int
	// whole, when not nil, records the attempts whose whole transcript
	// was written (not cut at the turn that broke): JUnit's system-out
	// does not write them again.
	whole map[*result.Attempt]bool
	// errorAbove says the text opens with the deciding attempt's error
	// line (JUnit's body, resultBody): a retried case's listing refers
	// to it instead of writing it again.
	errorAbove bool
}

// consoleRuns is the number of failed runs of a repeated case the console
// shows in full; the reports hold every one.
const consoleRuns = 3

// writeCase writes the body of a non-passing (or, verbose, any) case.
// Every line starts with indent.
func (d detail) writeCase(c *result.Case, indent string) {
	switch c.Status {
	case result.Skipped:
		if c.SkipReason != "" {
			d.line(indent, "skipped: "+c.SkipReason)
		}
		return
	case result.Pending:
		d.line(indent, pendingReason(c))
		return
	}
	if c.Repeat != nil {
		d.writeRuns(c, indent)
		return
	}
	a := c.Last()
	if c.Status == result.Failed || c.Status == result.Errored {
		a = c.Deciding()
	}
	if a == nil {
		if c.Status == result.Errored || c.Status == result.Failed {
			d.line(indent, c.Status.String()+" before any attempt started")
		}
		return
	}
	n := len(c.Attempts)
	for _, e := range c.Attempts {
		if e == nil || e == a || e.Status == result.Passed {
			continue
		}
		d.line(indent, fmt.Sprintf("attempt %d of %d %s", e.Number, n, d.st.attemptLine(e)))
	}
	if n > 1 && d.errorAbove {
		// The error's line (or "errored without a recorded cause")
		// opens the text; failures before it are not in that line.
		d.line(indent, fmt.Sprintf("attempt %d of %d %s, as above:", a.Number, n, a.Status))
		for _, f := range a.Failures {
			d.writeFailure(a, f, indent+"  ")
		}
		d.writeAfterCause(a, indent+"  ")
		return
	}
	if n > 1 {
		d.line(indent, fmt.Sprintf("attempt %d of %d:", a.Number, n))
		indent += "  "
	}
	d.writeAttempt(a, indent)
}

// pendingReason says why a pending case did not run, or for a repeated
// case interrupted after some runs, the runs it made.
func pendingReason(c *result.Case) string {
	if r := c.Repeat; r != nil && r.Decision == result.DecisionInterrupted {
		// It ran: what it made is what there is to say.
		return c.SkipReason + ": " + repeatLine(r)
	}
	if c.SkipReason != "" {
		return "not run: " + strings.TrimPrefix(c.SkipReason, "not run: ")
	}
	return notRunReason
}

// brokeAt is the index of the last turn an attempt's failures and error
// belong to: the transcript of a broken attempt stops there. It is -1
// when none does (the whole transcript is shown).
func brokeAt(a *result.Attempt) int {
	upTo := -1
	for _, f := range a.Failures {
		if t := turnAt(a, f.Pos); t != nil && t.Index > upTo {
			upTo = t.Index
		}
	}
	if e := a.Error; e != nil && !e.Pos.IsZero() {
		if t := turnAt(a, e.Pos); t != nil && t.Index > upTo {
			upTo = t.Index
		}
	}
	return upTo
}

// writeAttempt writes an attempt's failures or error, the steps it did
// not run (in one line), then its transcript up to the turn where it
// broke.
func (d detail) writeAttempt(a *result.Attempt, indent string) {
	for _, f := range a.Failures {
		d.writeFailure(a, f, indent)
	}
	if e := a.Error; e != nil {
		d.line(indent, d.st.paint(sgrBold, d.st.errorLine(a, e)))
	}
	if a.Error == nil && len(a.Failures) == 0 && a.Status != result.Passed && a.Status != result.Flaky {
		d.line(indent, a.Status.String()+" without a recorded cause")
	}
	d.writeAfterCause(a, indent)
}

// writeAfterCause writes what follows an attempt's cause: the steps it
// did not run, its transcript and what was confirmed.
func (d detail) writeAfterCause(a *result.Attempt, indent string) {
	if l := notRunLine(a.NotRun); l != "" {
		d.line(indent, d.st.paint(sgrYellow, l))
	}
	d.writeTranscript(a, brokeAt(a), indent)
	d.writeConfirmations(a, indent)
}

// writeConfirmations lists what was read back from the platform after the
// session or by a probe: the evidence behind confirm: failures.
func (d detail) writeConfirmations(a *result.Attempt, indent string) {
	if len(a.Confirmations) == 0 {
		return
	}
	d.line(indent, "confirmed:")
	for _, c := range a.Confirmations {
		if c == nil {
			continue
		}
		mark := "✓"
		if !c.Held {
			mark = "✗"
		}
		s := fmt.Sprintf("%s %s %s", mark, c.Kind, c.Subject)
		if c.Summary != "" {
			s += ": " + c.Summary
		}
		if c.Reads > 1 {
			s += fmt.Sprintf(" (%d reads, %s)", c.Reads, formatDuration(c.Duration))
		}
		d.line(indent+"  ", d.st.flat(s))
		for _, sn := range c.Seen {
			d.line(indent+"    ", d.st.paint(sgrDim, d.st.flat(seenLine(sn))))
		}
	}
	if d.whole != nil && len(a.Turns) == 0 {
		// A probe's attempt has no transcript: what it saw, under its
		// lines, stands for it, and JUnit's system-out does not write
		// it again.
		d.whole[a] = true
	}
}

// seenMarks mark who sent or said what a probe saw, as a transcript
// marks the user ("> ") and the agent ("< ").
var seenMarks = map[string]string{result.SeenSent: "→ ", result.SeenPlatform: "← ", result.SeenUser: "> ", result.SeenAgent: "< "}

// seenLine is one thing a probe did or saw, as every report writes it:
// when (UTC, to the millisecond; for a status read several times in a
// row, its first read and its last), who (→ agenttest sent, ← the
// platform answered, > the user and < the agent of the record), what.
func seenLine(sn result.Seen) string {
	var b strings.Builder
	if !sn.At.IsZero() {
		b.WriteString(sn.At.UTC().Format(seenTime))
		if sn.Reads > 1 && !sn.Until.IsZero() {
			b.WriteString("–" + sn.Until.UTC().Format(seenTime))
		}
		b.WriteString(" ")
	}
	b.WriteString(seenMarks[sn.Who])
	b.WriteString(sn.Text)
	if sn.Reads > 1 {
		fmt.Fprintf(&b, " (%d reads)", sn.Reads)
	}
	return b.String()
}

// seenTime is the clock time of what a probe saw.
const seenTime = "15:04:05.000"

// writeFailure writes one failure: its line, expected, actual and diff.
func (d detail) writeFailure(a *result.Attempt, f assert.Failure, indent string) {
	d.line(indent, d.st.paint(sgrBold, d.st.failureLine(a, f)))
	d.writeValues(f, indent+"  ")
}

// FailureValues renders what a failure compared as the console report
// shows it without colour: its expected, nearest and actual values and
// the diff, every line prefixed with indent, control characters escaped;
// "" when it compared no texts. For integrations that print a failure in
// a frame of their own: godogsteps, whose step errors godog prints.
func FailureValues(f assert.Failure, indent string) string {
	var b strings.Builder
	detail{b: &b}.writeValues(f, indent)
	return strings.TrimSuffix(b.String(), "\n")
}

// writeValues writes a failure's expected, nearest, actual and diff lines
// at indent in.
func (d detail) writeValues(f assert.Failure, in string) {
	st := d.st.compared()
	if f.Expected != "" || f.Actual != "" {
		j := joinersDiffer(f)
		d.line(in, "expected: "+st.showLong(f.Expected, in+"  ", j))
		if f.Nearest != "" {
			d.line(in, "nearest:  "+st.showLong(f.Nearest, in+"  ", j))
		}
		d.line(in, "actual:   "+st.showLong(f.Actual, in+"  ", j))
	}
	if f.Diff == "" {
		return
	}
	// Control characters in the compared texts are escaped, as in the
	// transcript, so that a reply cannot drive the terminal; the diff
	// escapes the invisible ones it marks as changed, joiners included.
	diff := st.oneLine(f.Diff)
	if st.color {
		diff = assert.DiffTextFor(f, st.oneLine(f.DiffBase()), st.oneLine(f.Actual), true)
	}
	diff = strings.TrimRight(diff, "\n")
	if strings.Contains(diff, "\n") {
		d.line(in, "diff:")
		d.b.WriteString(indentLines(diff, in+"  "))
		d.b.WriteString("\n")
		return
	}
	d.line(in, "diff:     "+diff)
}

// writeTranscript writes the turns of a, up to and including the turn with
// index upTo (all turns when upTo is negative): what the user said, what
// the agent answered, where the flow went, and which state keys moved.
func (d detail) writeTranscript(a *result.Attempt, upTo int, indent string) {
	if len(a.Turns) == 0 {
		return
	}
	head := "transcript"
	if a.ConversationID != "" {
		head += " (conversation " + d.st.flat(a.ConversationID) + ")"
	}
	d.line(indent, head+":")
	in := indent + "  "
	var prev map[string]any
	var opening *result.Turn
	cut := false
	for _, t := range a.Turns {
		if t != nil && t.Index == 0 {
			opening = t
		}
		cut = cut || t != nil && upTo >= 0 && t.Index > upTo
	}
	if d.whole != nil && !cut {
		d.whole[a] = true
	}
	for _, t := range a.Turns {
		if t == nil {
			continue
		}
		if upTo >= 0 && t.Index > upTo {
			break
		}
		label := turnLabel(t)
		if t.Latency > 0 {
			label += " · " + formatDuration(t.Latency)
		}
		d.line(in, d.st.paint(sgrDim, label))
		msg := in + "  "
		if t.Index > 0 {
			d.message(msg, "> ", saidText(t.Say))
			if md := sentMetadata(t, opening); md != "" {
				d.line(msg+"  ", d.st.flat("metadata: "+md))
			}
		}
		v := viewTurn(t.Reply())
		info := msg + "  "
		if !v.HasResult {
			d.line(msg, "(no reply)")
			continue
		}
		if t.Messaging != nil && v.Reply == "" {
			d.line(msg, noMessage(t.Messaging))
		} else {
			d.message(msg, "< ", v.Reply)
		}
		if t.Messaging != nil {
			// A Messaging turn has no debug metadata; its events say
			// what happened, the end included.
			d.writeMessaging(info, t.Messaging)
			d.writeScores(info, t)
			continue
		}
		var facts []string
		if len(v.Trace) > 0 {
			facts = append(facts, "trace: "+strings.Join(v.Trace, " → "))
		}
		if v.Node != "" {
			facts = append(facts, "node: "+v.Node)
		}
		if len(facts) > 0 {
			d.line(info, d.st.flat(strings.Join(facts, " · ")))
		}
		if ch := stateChanges(prev, v.State); len(ch) > 0 {
			d.line(info, d.st.flat("state: "+strings.Join(ch, ", ")))
		}
		if v.State != nil {
			prev = v.State
		}
		if v.Handoff != "" {
			d.line(info, d.st.paint(sgrYellow, d.st.flat("handoff → "+v.Handoff)))
		}
		if v.Delayed {
			d.line(info, "delayed response")
		}
		if v.Ended {
			d.line(info, d.st.paint(sgrYellow, "conversation ended"))
		}
		d.writeScores(info, t)
	}
}

// writeScores writes the scores of the similar checks of a turn's reply,
// one line each.
func (d detail) writeScores(indent string, t *result.Turn) {
	for _, s := range t.Scores {
		d.line(indent, d.st.scoreLine(s))
	}
}

// sentMetadata is the user input metadata a turn sent (a debug-chat
// request's metadata object, compact and as kept: masked; over
// Messaging, the turn's own custom metadata, sentCustom), or "": what the
// agent read as input besides the text is part of what it was told.
// opening is the attempt's opening turn, or nil.
func sentMetadata(t, opening *result.Turn) string {
	if len(t.Request) == 0 {
		return ""
	}
	if t.Messaging != nil {
		return sentCustom(t, opening)
	}
	var req struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(t.Request, &req) != nil || len(req.Metadata) < 2 || req.Metadata[0] != '{' {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, req.Metadata) != nil || b.String() == "{}" {
		return ""
	}
	return b.String()
}

// sentCustom is the custom metadata a Messaging turn sent of its own: its
// client event's metadata.custom without the client's tag
// (reply.ClientIDKey) and without the integration attributes the join
// carried, which every client event repeats (a turn's value of one of
// them that differs is its own). Keys come sorted, as the client sends
// them.
func sentCustom(t, opening *result.Turn) string {
	custom := requestCustom(t.Request)
	delete(custom, reply.ClientIDKey)
	if opening != nil {
		for k, v := range requestCustom(opening.Request) {
			if w, ok := custom[k]; ok && compactJSON(w) == compactJSON(v) {
				delete(custom, k)
			}
		}
	}
	if len(custom) == 0 {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(custom) != nil {
		return ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// requestCustom is the metadata.custom object of a Messaging client
// event, member by member, or nil.
func requestCustom(raw json.RawMessage) map[string]json.RawMessage {
	var ev struct {
		Metadata struct {
			Custom map[string]json.RawMessage `json:"custom"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &ev) != nil {
		return nil
	}
	return ev.Metadata.Custom
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// saidText is what a transcript shows of a user turn: an empty message
// is a silence (silence: true, say: "", When the user stays silent),
// which a bare "> " would leave looking like a message lost, as the HTML
// report's bubble says too; a message of blanks alone is quoted, since
// the line would show none of them.
func saidText(say string) string {
	switch {
	case say == "":
		return "(silence)"
	case strings.TrimSpace(say) == "":
		return strconv.Quote(say)
	}
	return say
}

// message writes "> text" or "< text", continuing a multi-line text under
// its first character.
func (d detail) message(indent, marker, text string) {
	lines := strings.Split(d.st.oneLine(text), "\n")
	d.line(indent, marker+lines[0])
	for _, l := range lines[1:] {
		d.line(indent+strings.Repeat(" ", len(marker)), l)
	}
}

// line writes indent, s and a newline, without trailing blanks.
func (d detail) line(indent, s string) {
	d.b.WriteString(strings.TrimRight(indent+s, " "))
	d.b.WriteString("\n")
}

// stateChanges lists the keys of cur that differ from prev, sorted:
// "+key=value" for added, "~key: old → new" for changed, "-key" for
// removed. A reply without a state object changes nothing.
func stateChanges(prev, cur map[string]any) []string {
	if cur == nil {
		return nil
	}
	keys := make(map[string]bool, len(prev)+len(cur))
	for k := range prev {
		keys[k] = true
	}
	for k := range cur {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		old, had := prev[k]
		now, has := cur[k]
		switch {
		case !had && has:
			out = append(out, "+"+k+"="+stateValue(now))
		case had && !has:
			out = append(out, "-"+k)
		case stateValue(old) != stateValue(now):
			out = append(out, "~"+k+": "+stateValue(old)+" → "+stateValue(now))
		}
	}
	return out
}
