package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/runner"
)

// SchemaV1 names the layout WriteJSON produces. It changes only when a
// member is removed or changes meaning; new members may be added within v1.
//
// The document (all durations are milliseconds, fractional, to the
// microsecond; times are RFC 3339 with nanoseconds, omitted when unknown;
// string members that are empty are omitted; arrays are always present):
//
//	schema   "agenttest/result/v1"
//	run      {started, duration_ms, interrupted, status}
//	target   {name, build_url, runtime_url, account_id, env, embedded}  (never keys)
//	counts   {total, passed, flaky, failed, errored, skipped, pending}
//	files    [{path, suite, status, duration_ms, counts, cases: [case]}]
//	checks   [case]  (run-level checks)
//
//	case     {name, pos, tags, status, duration_ms, agent, env, variant,
//	          skip_reason, conversation_id, repeat: {runs, passed, pass_rate},
//	          attempts: [attempt]}
//	attempt  {number, status, conversation_id, started, duration_ms,
//	          failures: [{pos, key, message, expected, actual, diff}],
//	          error: {pos, kind, message} | null, turns: [turn]}
//	turn     {index, pos, say, request, response, metadata, started, latency_ms}
//	pos      {file, line, col}
//
// request, response and metadata are the JSON exchanged with the platform,
// embedded as JSON (null when absent). A body that was not valid JSON is
// embedded as a JSON string holding its text, so the document stays valid.
const SchemaV1 = "agenttest/result/v1"

// The types below are the JSON view of a Result. They exist so that the
// file format is owned here, documented above, and does not shift when the
// runner's types change.

type jsonResult struct {
	Schema string     `json:"schema"`
	Run    jsonRun    `json:"run"`
	Target jsonTarget `json:"target"`
	Counts jsonCounts `json:"counts"`
	Files  []jsonFile `json:"files"`
	Checks []jsonCase `json:"checks"`
}

type jsonRun struct {
	Started     string  `json:"started,omitempty"`
	DurationMS  float64 `json:"duration_ms"`
	Interrupted bool    `json:"interrupted"`
	Status      string  `json:"status"`
}

type jsonTarget struct {
	Name       string `json:"name"`
	BuildURL   string `json:"build_url,omitempty"`
	RuntimeURL string `json:"runtime_url,omitempty"`
	AccountID  string `json:"account_id,omitempty"`
	Env        string `json:"env,omitempty"`
	Embedded   bool   `json:"embedded"`
}

type jsonCounts struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Flaky   int `json:"flaky"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Skipped int `json:"skipped"`
	Pending int `json:"pending"`
}

type jsonFile struct {
	Path       string     `json:"path"`
	Suite      string     `json:"suite"`
	Status     string     `json:"status"`
	DurationMS float64    `json:"duration_ms"`
	Counts     jsonCounts `json:"counts"`
	Cases      []jsonCase `json:"cases"`
}

type jsonPos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

type jsonCase struct {
	Name           string        `json:"name"`
	Pos            jsonPos       `json:"pos"`
	Tags           []string      `json:"tags"`
	Status         string        `json:"status"`
	DurationMS     float64       `json:"duration_ms"`
	Agent          string        `json:"agent,omitempty"`
	Env            string        `json:"env,omitempty"`
	Variant        string        `json:"variant,omitempty"`
	SkipReason     string        `json:"skip_reason,omitempty"`
	ConversationID string        `json:"conversation_id,omitempty"`
	Repeat         *jsonRepeat   `json:"repeat,omitempty"`
	Attempts       []jsonAttempt `json:"attempts"`
}

type jsonRepeat struct {
	Runs     int     `json:"runs"`
	Passed   int     `json:"passed"`
	PassRate float64 `json:"pass_rate"`
}

type jsonAttempt struct {
	Number         int           `json:"number"`
	Status         string        `json:"status"`
	ConversationID string        `json:"conversation_id,omitempty"`
	Started        string        `json:"started,omitempty"`
	DurationMS     float64       `json:"duration_ms"`
	Failures       []jsonFailure `json:"failures"`
	Error          *jsonError    `json:"error"`
	// Turns is nil (and left out) only in progress events, which carry
	// no transcripts.
	Turns *[]jsonTurn `json:"turns,omitempty"`
}

type jsonFailure struct {
	Pos      jsonPos `json:"pos"`
	Key      string  `json:"key,omitempty"`
	Message  string  `json:"message"`
	Expected string  `json:"expected,omitempty"`
	Actual   string  `json:"actual,omitempty"`
	Diff     string  `json:"diff,omitempty"`
}

type jsonError struct {
	Pos     jsonPos `json:"pos"`
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message"`
}

type jsonTurn struct {
	Index     int             `json:"index"`
	Pos       jsonPos         `json:"pos"`
	Say       string          `json:"say"`
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`
	Metadata  json.RawMessage `json:"metadata"`
	Started   string          `json:"started,omitempty"`
	LatencyMS float64         `json:"latency_ms"`
}

// WriteJSON writes r as one indented JSON document in the SchemaV1 layout.
func WriteJSON(w io.Writer, r *runner.Result) error {
	doc := jsonResult{
		Schema: SchemaV1,
		Run: jsonRun{
			Started:     jsonTime(r.Started),
			DurationMS:  millis(r.Duration),
			Interrupted: r.Interrupted,
		},
		Target: toJSONTarget(r.Target),
		Files:  []jsonFile{},
		Checks: []jsonCase{},
	}
	s := Summarize(r)
	doc.Run.Status = s.Status.String()
	doc.Counts = toJSONCounts(s)
	for _, f := range r.Files {
		if f == nil {
			continue
		}
		jf := jsonFile{
			Path:       f.Path,
			Suite:      f.Suite,
			Status:     f.Status().String(),
			DurationMS: millis(f.Duration()),
			Cases:      []jsonCase{},
		}
		var fs Summary
		for _, c := range f.Cases {
			if c == nil {
				continue
			}
			fs.add(c.Status)
			jf.Cases = append(jf.Cases, toJSONCase(c, true))
		}
		jf.Counts = toJSONCounts(fs)
		doc.Files = append(doc.Files, jf)
	}
	for _, c := range r.Checks {
		if c != nil {
			doc.Checks = append(doc.Checks, toJSONCase(c, true))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Replies quote prices and HTML snippets; "<" escaped as \u003c
	// helps nobody reading the file.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

func toJSONTarget(t runner.Target) jsonTarget {
	return jsonTarget{
		Name:       t.Name,
		BuildURL:   t.BuildURL,
		RuntimeURL: t.RuntimeURL,
		AccountID:  t.AccountID,
		Env:        t.Env,
		Embedded:   t.Embedded,
	}
}

func toJSONCounts(s Summary) jsonCounts {
	return jsonCounts{
		Total:   s.Total,
		Passed:  s.Passed,
		Flaky:   s.Flaky,
		Failed:  s.Failed,
		Errored: s.Errored,
		Skipped: s.Skipped,
		Pending: s.Pending,
	}
}

func toJSONPos(p diag.Pos) jsonPos { return jsonPos{File: p.File, Line: p.Line, Col: p.Col} }

// toJSONCase converts a case; withTurns false leaves the transcripts out,
// for the one-line progress events.
func toJSONCase(c *runner.Case, withTurns bool) jsonCase {
	jc := jsonCase{
		Name:           c.Name,
		Pos:            toJSONPos(c.Pos),
		Tags:           append([]string{}, c.Tags...),
		Status:         c.Status.String(),
		DurationMS:     millis(c.Duration),
		Agent:          c.Agent,
		Env:            c.Env,
		Variant:        c.Variant,
		SkipReason:     c.SkipReason,
		ConversationID: c.ConversationID(),
		Attempts:       []jsonAttempt{},
	}
	if c.Status == runner.Pending && jc.SkipReason == "" {
		jc.SkipReason = notRunReason
	}
	if c.Repeat != nil {
		jc.Repeat = &jsonRepeat{Runs: c.Repeat.Runs, Passed: c.Repeat.Passed, PassRate: c.Repeat.PassRate}
	}
	for _, a := range c.Attempts {
		if a != nil {
			jc.Attempts = append(jc.Attempts, toJSONAttempt(a, withTurns))
		}
	}
	return jc
}

func toJSONAttempt(a *runner.Attempt, withTurns bool) jsonAttempt {
	ja := jsonAttempt{
		Number:         a.Number,
		Status:         a.Status.String(),
		ConversationID: a.ConversationID,
		Started:        jsonTime(a.Started),
		DurationMS:     millis(a.Duration),
		Failures:       []jsonFailure{},
	}
	for _, f := range a.Failures {
		ja.Failures = append(ja.Failures, toJSONFailure(f))
	}
	if e := a.Error; e != nil {
		ja.Error = &jsonError{Pos: toJSONPos(e.Pos), Kind: e.Kind, Message: e.Message}
	}
	if !withTurns {
		return ja
	}
	turns := []jsonTurn{}
	for _, t := range a.Turns {
		if t == nil {
			continue
		}
		jt := jsonTurn{
			Index:     t.Index,
			Pos:       toJSONPos(t.Pos),
			Say:       t.Say,
			Request:   rawJSON(t.Request),
			Response:  rawJSON(t.Response),
			Started:   jsonTime(t.Started),
			LatencyMS: millis(t.Latency),
		}
		if t.Result != nil {
			if len(t.Result.RawMetadata) > 0 {
				jt.Metadata = rawJSON(t.Result.RawMetadata)
			} else if t.Result.Metadata != nil {
				if b, err := json.Marshal(t.Result.Metadata); err == nil {
					jt.Metadata = b
				}
			}
		}
		turns = append(turns, jt)
	}
	ja.Turns = &turns
	return ja
}

func toJSONFailure(f assert.Failure) jsonFailure {
	return jsonFailure{
		Pos:      toJSONPos(f.Pos),
		Key:      f.Key,
		Message:  f.Message,
		Expected: f.Expected,
		Actual:   f.Actual,
		Diff:     f.Diff,
	}
}

// rawJSON embeds a body as JSON when it is JSON, as a JSON string of its
// text when it is not (a proxy's HTML error page), and as null when empty.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b)) // marshalling a string cannot fail
	return s
}

// jsonTime renders t in RFC 3339 with nanoseconds, or "" when unknown.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
