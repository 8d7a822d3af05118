package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// jsonDoc is a whole SchemaV1 document, as ReadJSON decodes it. The parts
// are the very types WriteJSON encodes, so the two cannot drift apart.
type jsonDoc struct {
	Schema string     `json:"schema"`
	Run    jsonRun    `json:"run"`
	Target jsonTarget `json:"target"`
	// Deployments are read one by one (result.Deployment), each refusing
	// at its place in the document.
	Deployments []json.RawMessage `json:"deployments"`
	Shard       *result.Shard     `json:"shard"`
	Rerun       *result.Rerun     `json:"rerun"`
	ForcedMerge []string          `json:"forced_merge"`
	Filter      *result.Filter    `json:"filter"`
	Paths       []string          `json:"paths"`
	Files       []struct {
		Path  string `json:"path"`
		Suite string `json:"suite"`
		// Status is the file's, which the reader works out again from
		// its cases, but which no run writes as anything but a status.
		Status string     `json:"status"`
		Cases  []readCase `json:"cases"`
	} `json:"files"`
	Checks   []readCase       `json:"checks"`
	Coverage *coverage.Report `json:"coverage"`
}

// readCase, readAttempt and readTurn are the heads WriteJSON encodes with
// the members it streams after them (writeCase, writeAttempt, writeTurn).
type readCase struct {
	jsonCase
	Attempts []readAttempt `json:"attempts"`
}

type readAttempt struct {
	jsonAttempt
	Turns []readTurn `json:"turns"`
}

type readTurn struct {
	jsonTurn
	Request   json.RawMessage  `json:"request"`
	Response  json.RawMessage  `json:"response"`
	Metadata  json.RawMessage  `json:"metadata"`
	Messaging *reply.Messaging `json:"messaging"`
	Started   string           `json:"started"`
	LatencyMS float64          `json:"latency_ms"`
}

// Report is a JSON report read back: the run's Result, and the verdict
// the report states (run.status), which is what a run concluded and what
// its exit code followed.
type Report struct {
	Result *result.Result
	Status result.RunStatus
	// Coverage is the report's coverage section, nil when it has none.
	Coverage *coverage.Report
}

// ReadJSON reads a report written by WriteJSON back into a Result: files,
// cases, attempts, transcripts (replies with their metadata and
// latencies), repeats, quarantines, the run's stop, pacing and deployment
// evidence. What the report does not hold (the decoded request of a turn,
// members of the reply body other than its text and metadata) stays
// empty. A report written before a member existed reads with that member
// empty: a turn without "reply" takes the text of its response's
// "response" member. A document that is not a report of this schema is
// an error.
func ReadJSON(r io.Reader) (*Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("not a JSON report: %w", err)
	}
	var doc jsonDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON report: %w", err)
	}
	if err := CheckSchema(doc.Schema); err != nil {
		return nil, err
	}
	// A report without "deployments" predates "reply" (both came with
	// ReadJSON): only there does a turn without "reply" read its reply
	// from its response. In a later report it is a call that failed,
	// whose body the client refused (an answer about another
	// conversation, metadata it could not decode), and stays refused.
	rd := &reader{legacy: doc.Deployments == nil}
	run := []any{"run"}
	res := &result.Result{
		Started:     rd.Time(member(run, "started"), doc.Run.Started),
		Duration:    rd.Millis(member(run, "duration_ms"), doc.Run.DurationMS),
		Interrupted: doc.Run.Interrupted,
		Target: result.Target{Name: doc.Target.Name, BuildURL: doc.Target.BuildURL, RuntimeURL: doc.Target.RuntimeURL,
			AccountID: doc.Target.AccountID, Env: doc.Target.Env, Embedded: doc.Target.Embedded},
		Files: []*result.File{},
	}
	if doc.Target.Embedded && doc.Target.Seed != nil {
		res.Target.Seed = *doc.Target.Seed
	}
	if p := doc.Run.Pacing; p != nil {
		pacing := member(run, "pacing")
		res.Pacing = &result.Pacing{Limited: p.Limited, Accepted: p.Accepted,
			Waited: rd.Millis(member(pacing, "waited_ms"), p.WaitedMS), MaxWaited: rd.Millis(member(pacing, "max_waited_ms"), p.MaxWaitedMS)}
	}
	res.Stop = doc.Run.Stop
	for i, raw := range doc.Deployments {
		var d *result.Deployment
		rd.Check([]any{"deployments", i}, json.Unmarshal(raw, &d))
		if d != nil {
			res.Deployments = append(res.Deployments, d)
		}
	}
	rd.Shard([]any{"shard"}, doc.Shard)
	res.Shard, res.Rerun, res.ForcedMerge, res.Filter, res.Paths = doc.Shard, doc.Rerun, doc.ForcedMerge, doc.Filter, doc.Paths
	for i, f := range doc.Files {
		rf := &result.File{Path: f.Path, Suite: f.Suite}
		if f.Status != "" {
			rd.Status([]any{"files", i, "status"}, f.Status)
		}
		for j, c := range f.Cases {
			rf.Cases = append(rf.Cases, rd.readCase([]any{"files", i, "cases", j}, c))
		}
		res.Files = append(res.Files, rf)
	}
	for i, c := range doc.Checks {
		res.Checks = append(res.Checks, rd.readCase([]any{"checks", i}, c))
	}
	// The verdict the report states: every run states one, which gate
	// weighs; a report without it (a null or edited run) is no report.
	status := rd.RunStatus(member(run, "status"), doc.Run.Status)
	if err := rd.Err(data); err != nil {
		return nil, err
	}
	return &Report{Result: res, Status: status, Coverage: doc.Coverage}, nil
}

// reader converts the parts of a document, checking their values.
type reader struct {
	Values
	// legacy is set for a report written before turns had "reply".
	legacy bool
}

// fromMillis reads a duration_ms, which holds whole microseconds
// (millis): rounded to the microsecond, so that 1.013 (1012999.99...ns
// as a float) reads as the 1013µs it was written from and a report
// written again from it says 1.013 again.
func fromMillis(ms float64) time.Duration {
	return time.Duration(math.Round(ms*1000)) * time.Microsecond
}

func fromJSONPos(p jsonPos) diag.Pos { return diag.Pos{File: p.File, Line: p.Line, Col: p.Col} }

func (rd *reader) readCase(path []any, jc readCase) *result.Case {
	c := &result.Case{
		Name: jc.Name, Pos: fromJSONPos(jc.Pos), Tags: jc.Tags, Status: rd.Status(member(path, "status"), jc.Status),
		Duration: rd.Millis(member(path, "duration_ms"), jc.DurationMS), Agent: jc.Agent, Env: jc.Env, Variant: jc.Variant, Via: jc.Via, Streaming: jc.Streaming,
		SkipReason: jc.SkipReason, RateLimited: jc.RateLimited, RateWaited: rd.Millis(member(path, "rate_waited_ms"), jc.RateWaitedMS),
		Unchecked: jc.Unchecked,
	}
	if rp := jc.Repeat; rp != nil {
		c.Repeat = &result.Repeat{Procedure: rp.Procedure, Decision: rp.Decision, Runs: rp.Runs, Passed: rp.Passed, Failed: rp.Failed,
			Errored: rp.Errored, Discarded: rp.Discarded, Limit: rp.Limit, Needed: rp.Needed, PassRate: rp.PassRate,
			Margin: rp.Margin, Confidence: rp.Confidence, Lower: rp.Interval.Lower, Upper: rp.Interval.Upper, Level: rp.Interval.Level}
	}
	if q := jc.Quarantine; q != nil {
		c.Quarantine = &result.Quarantine{Reason: q.Reason, Owner: q.Owner, Until: q.Until, Lapsed: q.Lapsed}
	}
	for i, ja := range jc.Attempts {
		c.Attempts = append(c.Attempts, rd.readAttempt(member(path, "attempts", i), ja))
	}
	return c
}

func (rd *reader) readAttempt(path []any, ja readAttempt) *result.Attempt {
	a := &result.Attempt{
		Number: ja.Number, Run: ja.Run, Status: rd.Status(member(path, "status"), ja.Status), ConversationID: ja.ConversationID,
		Started: rd.Time(member(path, "started"), ja.Started), Duration: rd.Millis(member(path, "duration_ms"), ja.DurationMS),
	}
	for _, f := range ja.Failures {
		a.Failures = append(a.Failures, assert.Failure{Pos: fromJSONPos(f.Pos), Step: f.Step, Key: f.Key, Message: f.Message,
			Expected: f.Expected, Actual: f.Actual, Diff: f.Diff, Nearest: f.Nearest, IgnoreCase: f.IgnoreCase})
	}
	if e := ja.Error; e != nil {
		a.Error = &result.Error{Pos: fromJSONPos(e.Pos), Kind: e.Kind, Message: e.Message, Status: e.Status}
	}
	for i, cf := range ja.Confirmations {
		held := cf.Found // a report written before held was kept
		if cf.Held != nil {
			held = *cf.Held
		}
		rc := &result.Confirmation{Pos: fromJSONPos(cf.Pos), Kind: cf.Kind, Subject: cf.Subject,
			Found: cf.Found, Held: held, Summary: cf.Summary, Reads: cf.Reads, Duration: rd.Millis(member(path, "confirmations", i, "duration_ms"), cf.DurationMS)}
		for j, sn := range cf.Seen {
			at := member(path, "confirmations", i, "seen", j)
			rc.Seen = append(rc.Seen, result.Seen{At: rd.Time(member(at, "at"), sn.At), Who: sn.Who, Text: sn.Text, Reads: sn.Reads, Until: rd.Time(member(at, "until"), sn.Until)})
		}
		a.Confirmations = append(a.Confirmations, rc)
	}
	for _, st := range ja.NotRun {
		a.NotRun = append(a.NotRun, &result.Step{Pos: fromJSONPos(st.Pos), Kind: st.Kind, Turn: st.Turn, Text: st.Text, Confirms: st.Confirms})
	}
	for i, jt := range ja.Turns {
		a.Turns = append(a.Turns, rd.readTurn(member(path, "turns", i), jt))
	}
	return a
}

func (rd *reader) readTurn(path []any, jt readTurn) *result.Turn {
	t := &result.Turn{Index: jt.Index, Pos: fromJSONPos(jt.Pos), Say: jt.Say, Request: jt.Request, Response: jt.Response,
		Messaging: jt.Messaging, Started: rd.Time(member(path, "started"), jt.Started), Latency: rd.Millis(member(path, "latency_ms"), jt.LatencyMS)}
	for _, sc := range jt.Scores {
		t.Scores = append(t.Scores, assert.Score{Pos: fromJSONPos(sc.Pos), Key: sc.Key, To: sc.To, Score: sc.Score, Min: sc.Min, Not: sc.Not})
	}
	if jt.Reply == nil && !rd.legacy {
		return t // the call failed
	}
	hasMeta := len(jt.Metadata) > 0 && jt.Metadata[0] == '{'
	tr := &reply.TurnResult{}
	if !hasMeta {
		// The metadata is stored once, in a response of the reference's
		// own shape (turnMetadata).
		if plain, ok := reply.ParseTurn(jt.Response); ok {
			jt.Metadata, hasMeta, tr.Plain = plain.RawMetadata, true, true
		}
	}
	switch {
	case jt.Reply != nil:
		tr.Response, tr.ConversationEnded = *jt.Reply, jt.Ended
	case hasMeta:
		// A report from before "reply" and "ended" were written: the
		// reference's members of the debug-chat reply.
		var body struct {
			Response string `json:"response"`
			Ended    bool   `json:"conversationEnded"`
		}
		_ = json.Unmarshal(jt.Response, &body) // best effort: what is not there stays empty
		tr.Response, tr.ConversationEnded = body.Response, body.Ended
	default:
		return t // the call failed
	}
	if hasMeta {
		tr.RawMetadata = jt.Metadata
		var md reply.Metadata
		if err := json.Unmarshal(jt.Metadata, &md); err != nil {
			rd.Check(member(path, "metadata"), err)
		}
		tr.SetMetadata(md)
	}
	t.Result = tr
	return t
}
