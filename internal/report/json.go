package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/coverage"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

// SchemaV1 names the layout WriteJSON produces. It changes only when a
// member is removed or changes meaning; new members may be added within v1.
//
// The document (all durations are milliseconds, fractional, to the
// microsecond; times are RFC 3339 with nanoseconds, omitted when unknown;
// string members that are empty are omitted; arrays are always present):
//
//	schema   "agenttest/result/v1"
//	run      {started, duration_ms, interrupted, status, stop,
//	          pacing: {limited, accepted, accepted_per_s, waited_ms, max_waited_ms}}
//	target   {name, build_url, runtime_url, account_id, env, embedded, seed}  (never keys;
//	          seed: the embedded simulator's, 0 included; absent otherwise)
//	deployments [deployment]  (the evidence of what was tested)
//	shard    {index, total, selection, selected}  (--shard K/N runs only)
//	rerun    {of, failed, unrun}  (--rerun-failed runs only: the report
//	          whose cases the run ran again, how many of them failed or
//	          errored, and how many its run had left unrun)
//	forced_merge [string]  (agenttest merge --force runs only: what made
//	          the reports merged other than every shard of one selection
//	          on one target; agenttest gate refuses the report)
//	filter   {tags, name, at, left_out}  (runs narrowed by --tags, --name
//	          or FILE:LINE arguments only: the filter as given, and how
//	          many scenarios of the loaded files it left out; agenttest
//	          gate refuses the report unless its --tags and --name state
//	          the same filter)
//	paths    [string]  (the suite paths the run was given, as given:
//	          "." when none; absent in reports written before runs
//	          recorded them)
//	counts   {total, passed, flaky, failed, errored, skipped, pending,
//	          quarantined, inconclusive}
//	files    [{path, suite, status, duration_ms, counts, cases: [case]}]
//	          (status: result.File.Status; pending when an interrupted
//	          run started none of its cases)
//	checks   [case]  (run-level checks)
//	coverage {agents: [{agent, source, nodes_total, nodes_visited, percent,
//	          nodes: [{name, turns, cases, reached: [reach], undefined}],
//	          transitions: [{from, to, turns, cases, reached: [reach]}],
//	          unvisited: [name], untraced_cases (cases over messaging,
//	          which carry no node trace; omitted when none)}]}
//	          (when computed: coverage.Report)
//	reach    {case, pos, turn}
//
//	case     {name, pos, tags, status, duration_ms, agent, env, variant, via,
//	          streaming (true when over messaging with streamed replies), skip_reason, conversation_id, repeat, quarantine,
//	          rate_limited, rate_waited_ms, unchecked (true when the scenario
//	          checks nothing of the agent: it passes whenever the agent
//	          answers), attempts: [attempt]}
//	repeat   {procedure, decision, runs, passed, failed, errored, discarded,
//	          limit, needed, pass_rate, margin, confidence,
//	          interval: {lower, upper, level}, scores: [spread]}  (repeated cases only)
//	spread   {pos, key, to, min, not, runs, failed, low, median, high}
//	          (a similar matcher over the runs; scores is absent when the
//	          case has none)
//	quarantine {reason, owner, until, lapsed}       (quarantined cases only)
//	attempt  {number, run, status, conversation_id, started, duration_ms,
//	          failures: [{pos, step, key, message, expected, actual, diff, nearest, ignore_case}],
//	          error: {pos, kind, message, status} | null,
//	          confirmations: [confirmation], not_run: [step], turns: [turn]}
//	confirmation {pos, kind, subject, found, held, summary, reads, duration_ms,
//	          seen: [{at, who, text, reads, until}]}
//	          (what a confirm:, a probe or the alert gate read; kind is
//	          conversation, handoff_state, webhook, call, sms or alerts;
//	          seen, only of a probe's lines, is what it did and saw in
//	          order: who is sent (agenttest's call or SMS), platform (its
//	          answer, a call's status, a search; reads and until when the
//	          same was read several times in a row), user or agent (a turn
//	          of the probe's conversation record, at the platform's time))
//	step     {pos, kind, turn, text, confirms}  (a step the attempt did not
//	          run: not_run is absent when it ran them all)
//	turn     {index, pos, say, reply, ended, scores: [score], request, response,
//	          metadata, messaging, started, latency_ms}
//	score    {pos, key, to, score, min, not}  (a similar matcher of the
//	          turn's checks, passing or failing; scores is absent when the
//	          checks of the turn have none)
//	deployment {agent, env, id, version, read_at, after_id, after_version,
//	          after_read_at, changed, verified, note}  (result.Deployment's
//	          JSON form, shared with the comparison of agenttest compare)
//	messaging {session_id, events: [{id, type, kind, timestamp, text, level,
//	          delayed, replayed}], system: [{level, text}], session_ended, end_reason,
//	          joined, handoff: {destination, reason, joined, live_agent},
//	          completed_by, reconnects, resent, duplicates, flooded}
//	pos      {file, line, col}
//
// shard says which share of its selection a run ran (--shard K/N):
// selection is the fingerprint of the whole selection (its scenarios by
// file, position and name) and selected its size, so `agenttest merge`
// can tell the shards of one run from reports of other selections.
// rerun.of names the report whose cases a --rerun-failed run ran again:
// failed counts its failed and errored cases, unrun the cases its run
// left without a verdict because it was interrupted or stopped (pending,
// or skipped with run.stop's reason); the rerun ran both.
// coverage is the node coverage of the run's agents (package coverage):
// source "definition" when the agent's nodes come from its definition
// (the simulator's agents), "observed" when they are the nodes seen in
// this report and in the reports given to --coverage-from.
//
// run.status is the verdict of the run (result.RunStatus), the one the exit
// code of `agenttest run` follows: "passed" (0), "failed" (1), "errored"
// (4), "interrupted" (130) or "empty" (5: nothing was tested). run.stop,
// present when the run stopped starting cases before the end of its plan,
// is {kind, reason, cause, host, credential, agent, env, config}: kind is
// "fail-fast", "unreachable", "credentials", "unknown-agent" or
// "no-messaging-api", reason the
// skip_reason of the cases it left unrun, agent and env the agent the
// platform does not know or whose Messaging connector it refused, and
// config true when it was a configuration problem (exit 2).
//
// deployments has one entry per agent and environment the run tested, in
// the order the run first met them: id (and version) is the deployment
// active before the agent's first case, after_id (and after_version) the
// one active after its last. changed is true when they differ: the run is
// then "errored", whatever its cases say, and its console says
// "deployment of AGENT changed during the run: ID → AFTER_ID". verified is
// true when both were read and are the same: the evidence `agenttest
// gate` requires. note says why evidence is missing or incomplete (the
// platform does not serve the endpoint, a read failed, the run stopped
// before the second read). A run that read no deployment has an empty
// array.
//
// A case's status is its real outcome; how it gates the run is in the
// counts and in run.status: a case under a quarantine that holds
// (quarantine.lapsed false) counts only as quarantined and never fails the
// run. An inconclusive sequential test (repeat.decision "inconclusive") is
// a failed case, counted in failed and again in inconclusive. In repeat,
// procedure is "fixed" (repeat: N) or "sprt" (with a confidence);
// decision is passed, failed, inconclusive or errored, or interrupted
// for a case the run was interrupted or stopped during, after some runs
// and before a verdict (the case is pending or skipped, its skip_reason
// "interrupted before a verdict" or "stopped before a verdict"); runs
// counts the runs the verdict rests on, errored ones included (passed +
// failed + errored), or the runs made before the interruption, and
// discarded the parallel runs started after them; needed is the limit
// the guarantee needs, 100001 when even 100000 runs are not enough; each
// bound of interval holds at level, one-sided. An attempt's run numbers
// the run it belongs to.
//
// A failure's step is the feature step that made the check (absent for a
// YAML suite), its key what was checked (response, node, state.KEY, ...).
//
// An attempt's not_run lists, in order, the steps of the scenario's
// program after the one that ended it (a failure, an error, an
// interruption): what it left untested, a confirm: block included, for a
// YAML scenario as for a feature (one step program). A step's kind is
// setup, open, say, check, capture, probe, call_status or confirm; turn
// the turn a say sends or whose reply a check or capture reads (absent:
// the greeting, or a kind of no turn); text the step in one line, a
// feature step as written and a YAML one as the Cucumber report names it
// ("When the user says \"thanks\""); confirms what a confirm step reads
// (conversation, handoff_state, webhooks).
//
// reply is the agent's reply text as the client read it from response
// (absent when the call failed), and ended is true when the reply ended
// the conversation. request, response and metadata are the JSON exchanged
// with the platform, embedded as JSON on one line, as received (compacted
// when it spanned lines; null when absent). A body that was not valid JSON is
// embedded as a JSON string holding its text, so the document stays valid;
// so is one nested deeper than 200 levels (maxBodyDepth), so that every
// reader of the report (jq 1.6 stops at 256 levels) reads it.
// Inside a body's strings, a byte that is not UTF-8 and an escaped lone
// surrogate ("\ud800") are written \ufffd, which is what a reader decoding
// the body as received gets for them; the document is UTF-8, and jq, which
// refuses a lone surrogate, reads it.
// A case over the Messaging API has via "messaging"; its turns have
// messaging (absent for debug chat), request is the client event sent and
// response the array of events received. An event's delayed is true when
// the platform flagged the message as a holding message (the simulator's
// payload.delayed; the reference shows no such flag).
//
// metadata is the reply's metadata object when response does not hold it
// as received (a channel whose reply is not one body); when it does, the
// metadata is stored once, in response, and metadata is null.
//
// run.pacing is present when the platform refused requests with 429 or
// the run paced them (--rate): limited counts the 429s, accepted the
// other answers, accepted_per_s is accepted per second of the run, and
// waited_ms and max_waited_ms are the time the cases waited on rate limits
// in all and the longest one case waited. A case's rate_limited and
// rate_waited_ms are the same for the case, absent when 0.
const SchemaV1 = "agenttest/result/v1"

// The types below are the JSON view of a Result's parts (the document's
// envelope and files are written member by member by WriteJSON). They exist
// so that the file format is owned here, documented above, and does not
// shift when the runner's types change.

type jsonRun struct {
	Started     string       `json:"started,omitempty"`
	DurationMS  float64      `json:"duration_ms"`
	Interrupted bool         `json:"interrupted"`
	Status      string       `json:"status"`
	Stop        *result.Stop `json:"stop,omitempty"`
	Pacing      *jsonPacing  `json:"pacing,omitempty"`
}

type jsonPacing struct {
	Limited      int     `json:"limited"`
	Accepted     int     `json:"accepted"`
	AcceptedPerS float64 `json:"accepted_per_s"`
	WaitedMS     float64 `json:"waited_ms"`
	MaxWaitedMS  float64 `json:"max_waited_ms"`
}

type jsonTarget struct {
	Name       string `json:"name"`
	BuildURL   string `json:"build_url,omitempty"`
	RuntimeURL string `json:"runtime_url,omitempty"`
	AccountID  string `json:"account_id,omitempty"`
	Env        string `json:"env,omitempty"`
	Embedded   bool   `json:"embedded"`
	// Seed is the embedded simulator's seed, 0 included: what replays
	// its draws. Absent for a real platform.
	Seed *int64 `json:"seed,omitempty"`
}

type jsonCounts struct {
	Total        int `json:"total"`
	Passed       int `json:"passed"`
	Flaky        int `json:"flaky"`
	Failed       int `json:"failed"`
	Errored      int `json:"errored"`
	Skipped      int `json:"skipped"`
	Pending      int `json:"pending"`
	Quarantined  int `json:"quarantined"`
	Inconclusive int `json:"inconclusive"`
}

type jsonPos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

type jsonCase struct {
	Name           string          `json:"name"`
	Pos            jsonPos         `json:"pos"`
	Tags           []string        `json:"tags"`
	Status         string          `json:"status"`
	DurationMS     float64         `json:"duration_ms"`
	Agent          string          `json:"agent,omitempty"`
	Env            string          `json:"env,omitempty"`
	Variant        string          `json:"variant,omitempty"`
	Via            string          `json:"via,omitempty"`
	Streaming      bool            `json:"streaming,omitempty"`
	SkipReason     string          `json:"skip_reason,omitempty"`
	ConversationID string          `json:"conversation_id,omitempty"`
	Repeat         *jsonRepeat     `json:"repeat,omitempty"`
	Quarantine     *jsonQuarantine `json:"quarantine,omitempty"`
	RateLimited    int             `json:"rate_limited,omitempty"`
	RateWaitedMS   float64         `json:"rate_waited_ms,omitempty"`
	Unchecked      bool            `json:"unchecked,omitempty"`
	// Attempts are written after the members above (writeCase).
	Attempts []*result.Attempt `json:"-"`
}

type jsonRepeat struct {
	Procedure  string       `json:"procedure"`
	Decision   string       `json:"decision,omitempty"`
	Runs       int          `json:"runs"`
	Passed     int          `json:"passed"`
	Failed     int          `json:"failed"`
	Errored    int          `json:"errored"`
	Discarded  int          `json:"discarded"`
	Limit      int          `json:"limit"`
	Needed     int          `json:"needed,omitempty"`
	PassRate   float64      `json:"pass_rate"`
	Margin     float64      `json:"margin,omitempty"`
	Confidence float64      `json:"confidence,omitempty"`
	Interval   jsonInterval `json:"interval"`
	// Scores is the spread of each similar matcher over the runs, worked
	// out from the turns' scores (a reader need not keep it).
	Scores []jsonSpread `json:"scores,omitempty"`
}

type jsonInterval struct {
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	Level float64 `json:"level"`
}

type jsonQuarantine struct {
	Reason string `json:"reason"`
	Owner  string `json:"owner,omitempty"`
	Until  string `json:"until"`
	Lapsed bool   `json:"lapsed"`
}

type jsonAttempt struct {
	Number         int           `json:"number"`
	Run            int           `json:"run,omitempty"`
	Status         string        `json:"status"`
	ConversationID string        `json:"conversation_id,omitempty"`
	Started        string        `json:"started,omitempty"`
	DurationMS     float64       `json:"duration_ms"`
	Failures       []jsonFailure `json:"failures"`
	Error          *jsonError    `json:"error"`
	// Confirmations are the reads of confirm:, probes and the alert gate.
	Confirmations []jsonConfirmation `json:"confirmations"`
	// NotRun are the steps after the one that ended the attempt.
	NotRun []jsonStep `json:"not_run,omitempty"`
	// The turns follow the members above (writeAttempt).
}

type jsonStep struct {
	Pos      jsonPos  `json:"pos"`
	Kind     string   `json:"kind"`
	Turn     int      `json:"turn,omitempty"`
	Text     string   `json:"text"`
	Confirms []string `json:"confirms,omitempty"`
}

type jsonConfirmation struct {
	Pos     jsonPos `json:"pos"`
	Kind    string  `json:"kind"`
	Subject string  `json:"subject"`
	Found   bool    `json:"found"`
	// Held is nil in a report written before it was kept: there, what
	// was found held.
	Held       *bool   `json:"held,omitempty"`
	Summary    string  `json:"summary,omitempty"`
	Reads      int     `json:"reads,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	// Seen is what a probe did and saw (result.Seen).
	Seen []jsonSeen `json:"seen,omitempty"`
}

type jsonSeen struct {
	At    string `json:"at,omitempty"`
	Who   string `json:"who"`
	Text  string `json:"text"`
	Reads int    `json:"reads,omitempty"`
	Until string `json:"until,omitempty"`
}

type jsonFailure struct {
	Pos jsonPos `json:"pos"`
	// Step is the feature step that made the check (absent for YAML).
	Step     string `json:"step,omitempty"`
	Key      string `json:"key,omitempty"`
	Message  string `json:"message"`
	Expected string `json:"expected,omitempty"`
	Actual   string `json:"actual,omitempty"`
	Diff     string `json:"diff,omitempty"`
	// Nearest is the listed phrasing nearest the reply when none matched
	// (one_of, any); diff is then made against it.
	Nearest string `json:"nearest,omitempty"`
	// IgnoreCase is true when the check ignored case (ignore_case); the
	// diff then shows no change of case alone.
	IgnoreCase bool `json:"ignore_case,omitempty"`
}

type jsonError struct {
	Pos     jsonPos `json:"pos"`
	Kind    string  `json:"kind,omitempty"`
	Message string  `json:"message"`
	// Status is the HTTP status of an error answer (kind "http").
	Status int `json:"status,omitempty"`
}

// jsonTurn is the head of a turn; request, response, metadata,
// messaging (reply.Messaging's own JSON form), started and latency_ms
// follow it (writeTurn).
type jsonTurn struct {
	Index int     `json:"index"`
	Pos   jsonPos `json:"pos"`
	Say   string  `json:"say"`
	Reply *string `json:"reply,omitempty"`
	Ended bool    `json:"ended,omitempty"`
	// Scores are the similar matchers' scores of the reply's checks.
	Scores []jsonScore `json:"scores,omitempty"`
}

// jsonScore is an assert.Score.
type jsonScore struct {
	Pos   jsonPos `json:"pos"`
	Key   string  `json:"key"`
	To    string  `json:"to"`
	Score float64 `json:"score"`
	Min   float64 `json:"min"`
	Not   bool    `json:"not,omitempty"`
}

// jsonSpread is a result.ScoreSpread.
type jsonSpread struct {
	Pos    jsonPos `json:"pos"`
	Key    string  `json:"key"`
	To     string  `json:"to"`
	Min    float64 `json:"min"`
	Not    bool    `json:"not,omitempty"`
	Runs   int     `json:"runs"`
	Failed int     `json:"failed"`
	Low    float64 `json:"low"`
	Median float64 `json:"median"`
	High   float64 `json:"high"`
}

// WriteJSON writes r as one indented JSON document in the SchemaV1 layout.
//
// The document is streamed case by case: a run of 20,000 scenarios makes a
// report of hundreds of megabytes, and building it whole (and then
// indenting it, as encoding/json does) would hold several copies of it in
// memory at once. Only one case's encoding is held at a time.
func WriteJSON(w io.Writer, r *result.Result, opt JSONOptions) error {
	s := Summarize(r)
	js := newJSONStream(w)
	js.open('{')
	js.field("schema", SchemaV1)
	js.field("run", jsonRun{
		Started:     jsonTime(r.Started),
		DurationMS:  millis(r.Duration),
		Interrupted: r.Interrupted,
		Status:      string(r.RunStatus()),
		Stop:        r.Stop,
		Pacing:      toJSONPacing(r),
	})
	js.field("target", toJSONTarget(r.Target))
	js.field("deployments", deploymentsOf(r))
	if r.Shard != nil {
		js.field("shard", r.Shard)
	}
	if r.Rerun != nil {
		js.field("rerun", r.Rerun)
	}
	if len(r.ForcedMerge) > 0 {
		js.field("forced_merge", r.ForcedMerge)
	}
	if r.Filter != nil {
		js.field("filter", r.Filter)
	}
	if len(r.Paths) > 0 {
		js.field("paths", r.Paths)
	}
	js.field("counts", toJSONCounts(s))
	js.key("files")
	js.open('[')
	for _, f := range r.Files {
		if f == nil {
			continue
		}
		var fs Summary
		for _, c := range f.Cases {
			if c != nil {
				fs.add(c)
			}
		}
		js.element()
		js.open('{')
		js.field("path", f.Path)
		js.field("suite", f.Suite)
		js.field("status", f.Status().String())
		js.field("duration_ms", fileMillis(f))
		js.field("counts", toJSONCounts(fs))
		js.key("cases")
		js.open('[')
		for _, c := range f.Cases {
			if c != nil {
				js.element()
				js.writeCase(c)
			}
		}
		js.close(']')
		js.close('}')
	}
	js.close(']')
	js.key("checks")
	js.open('[')
	for _, c := range r.Checks {
		if c != nil {
			js.element()
			js.writeCase(c)
		}
	}
	js.close(']')
	if opt.Coverage != nil {
		js.field("coverage", opt.Coverage)
	}
	js.close('}')
	if err := js.finish(); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// JSONOptions are the sections of a JSON report computed over the run's
// Result rather than held in it.
type JSONOptions struct {
	// Coverage is the node coverage of the run (nil leaves the section
	// out).
	Coverage *coverage.Report
}

// deploymentsOf is the run's deployment evidence, an empty array when it
// read none.
func deploymentsOf(r *result.Result) []*result.Deployment {
	out := []*result.Deployment{}
	for _, d := range r.Deployments {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// jsonStream writes an indented JSON document piece by piece, in exactly
// the layout json.Encoder with SetIndent("", "  ") gives, so a streamed
// document reads (and diffs) like an encoded one. Errors stick: after the
// first, nothing more is written and finish reports it.
type jsonStream struct {
	w     *bufio.Writer
	buf   bytes.Buffer
	enc   *json.Encoder
	depth int
	// first is true while the innermost open object or array is empty.
	first bool
	err   error
}

func newJSONStream(w io.Writer) *jsonStream {
	js := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	js.enc = json.NewEncoder(&js.buf)
	// Replies quote prices and HTML snippets; "<" escaped as \u003c
	// helps nobody reading the file.
	js.enc.SetEscapeHTML(false)
	return js
}

func (js *jsonStream) raw(s string) {
	if js.err == nil {
		_, js.err = js.w.WriteString(s)
	}
}

// newline starts a line at the current depth. After an error the depth
// may be off (object does not open what it failed to encode): nothing is
// written then, and WriteJSON returns the error.
func (js *jsonStream) newline() {
	if js.err == nil {
		js.raw("\n" + strings.Repeat("  ", js.depth))
	}
}

// open starts an object or an array one level deeper.
func (js *jsonStream) open(c byte) {
	js.raw(string(c))
	js.depth++
	js.first = true
}

// close ends the innermost object or array; an empty one stays "{}" or "[]".
func (js *jsonStream) close(c byte) {
	js.depth--
	if !js.first {
		js.newline()
	}
	js.raw(string(c))
	js.first = false
}

// element starts the next member or item of the innermost container.
func (js *jsonStream) element() {
	if !js.first {
		js.raw(",")
	}
	js.first = false
	js.newline()
}

// key starts an object member; its value follows.
func (js *jsonStream) key(name string) {
	js.element()
	js.value(name)
	js.raw(": ")
}

func (js *jsonStream) field(name string, v any) {
	js.key(name)
	js.value(v)
}

// value encodes v indented for the current depth.
func (js *jsonStream) value(v any) {
	if b, ok := js.encode(v); ok {
		_, js.err = js.w.Write(b)
	}
}

// object writes v, which encodes as a JSON object, and leaves the object
// open: more members follow with key or field, then close('}').
func (js *jsonStream) object(v any) {
	b, ok := js.encode(v)
	switch {
	case !ok:
	case string(b) == "{}":
		js.open('{')
	default:
		// Everything but the last line, which closes the object.
		_, js.err = js.w.Write(b[:bytes.LastIndexByte(b, '\n')])
		js.depth++
		js.first = false
	}
}

// encode encodes v indented for the current depth, without the final
// newline, into js.buf; ok is false after an error.
func (js *jsonStream) encode(v any) (b []byte, ok bool) {
	if js.err != nil {
		return nil, false
	}
	js.buf.Reset()
	js.enc.SetIndent(strings.Repeat("  ", js.depth), "  ")
	if js.err = js.enc.Encode(v); js.err != nil {
		return nil, false
	}
	return bytes.TrimSuffix(js.buf.Bytes(), []byte("\n")), true
}

// body writes a body exchanged with the platform (rawJSON), on one line.
func (js *jsonStream) body(b []byte) {
	if js.err != nil {
		return
	}
	raw := rawJSON(b)
	if raw == nil {
		js.raw("null")
		return
	}
	if bytes.ContainsAny(raw, "\n\r\t") {
		js.buf.Reset()
		if json.Compact(&js.buf, raw) == nil {
			raw = js.buf.Bytes()
		}
	}
	_, js.err = js.w.Write(raw)
}

func (js *jsonStream) finish() error {
	js.raw("\n")
	if js.err != nil {
		return js.err
	}
	return js.w.Flush()
}

func toJSONTarget(t result.Target) jsonTarget {
	jt := jsonTarget{
		Name:       t.Name,
		BuildURL:   t.BuildURL,
		RuntimeURL: t.RuntimeURL,
		AccountID:  t.AccountID,
		Env:        t.Env,
		Embedded:   t.Embedded,
	}
	if t.Embedded {
		jt.Seed = &t.Seed
	}
	return jt
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

		Quarantined:  s.Quarantined,
		Inconclusive: s.Inconclusive,
	}
}

func toJSONPos(p diag.Pos) jsonPos { return jsonPos{File: p.File, Line: p.Line, Col: p.Col} }

func toJSONPacing(r *result.Result) *jsonPacing {
	p := r.Pacing
	if p == nil {
		return nil
	}
	return &jsonPacing{
		Limited:      p.Limited,
		Accepted:     p.Accepted,
		AcceptedPerS: math.Round(p.AcceptedRate(r.Duration)*1000) / 1000,
		WaitedMS:     millis(p.Waited),
		MaxWaitedMS:  millis(p.MaxWaited),
	}
}

// writeCase writes a case: its members, then its attempts.
func (js *jsonStream) writeCase(c *result.Case) {
	js.objectWith(toJSONCase(c), "attempts", func() {
		for _, a := range c.Attempts {
			if a != nil {
				js.element()
				js.writeAttempt(a)
			}
		}
	})
}

// writeAttempt writes an attempt: its members, then its turns.
func (js *jsonStream) writeAttempt(a *result.Attempt) {
	js.objectWith(toJSONAttempt(a), "turns", func() {
		for _, t := range a.Turns {
			if t != nil {
				js.element()
				js.writeTurn(t)
			}
		}
	})
}

// objectWith writes head's members, then a last member named key, an
// array whose items writes.
func (js *jsonStream) objectWith(head any, key string, items func()) {
	js.object(head)
	js.key(key)
	js.open('[')
	items()
	js.close(']')
	js.close('}')
}

// writeTurn writes a turn. The bodies are embedded as they came, on one
// line: re-indented, they were half of a large report, and they are the
// part a reader compares with the platform's own logs.
func (js *jsonStream) writeTurn(t *result.Turn) {
	head := jsonTurn{Index: t.Index, Pos: toJSONPos(t.Pos), Say: t.Say}
	for _, sc := range t.Scores {
		head.Scores = append(head.Scores, jsonScore{Pos: toJSONPos(sc.Pos), Key: sc.Key, To: sc.To, Score: sc.Score, Min: sc.Min, Not: sc.Not})
	}
	if r := turnReply(t); r != nil {
		head.Reply, head.Ended = &r.Response, r.ConversationEnded
	}
	js.object(head)
	js.key("request")
	js.body(t.Request)
	js.key("response")
	js.body(t.Response)
	js.key("metadata")
	js.body(turnMetadata(t))
	if t.Messaging != nil {
		js.field("messaging", t.Messaging)
	}
	if s := jsonTime(t.Started); s != "" {
		js.field("started", s)
	}
	js.field("latency_ms", millis(t.Latency))
	js.close('}')
}

// turnReply is the reply the client read, or nil when the call failed,
// for its text: a released reply's body is parsed again without decoding
// its metadata (Turn.Reply would), a kept one is read as is.
func turnReply(t *result.Turn) *reply.TurnResult {
	if t.Released() {
		r, _ := reply.ParseTurn(t.Response) // Release checked that it parses
		return r
	}
	return t.Result
}

// turnMetadata is the metadata of a reply whose response does not hold it
// in the reference's own shape (see SchemaV1), or nil. A reply the client
// found plain (reply.TurnResult.Plain; a released one always is) gives its
// metadata back through reply.ParseTurn, as ReadJSON does; any other
// shape keeps it here, so a reader never has to guess where it was.
func turnMetadata(t *result.Turn) []byte {
	r := t.Result
	if r == nil || t.Released() || (r.Plain && len(r.RawMetadata) > 0) {
		return nil
	}
	if raw := r.RawMetadata; len(raw) > 0 {
		return raw
	}
	if md := r.Meta(); md != nil {
		if b, err := json.Marshal(md); err == nil {
			return b
		}
	}
	return nil
}

// toJSONCase converts the members of a case but its attempts.
func toJSONCase(c *result.Case) jsonCase {
	jc := jsonCase{
		Name:           c.Name,
		Pos:            toJSONPos(c.Pos),
		Tags:           append([]string{}, c.Tags...),
		Status:         c.Status.String(),
		DurationMS:     millis(c.Duration),
		Agent:          c.Agent,
		Env:            c.Env,
		Variant:        c.Variant,
		Via:            c.Via,
		Streaming:      c.Streaming,
		SkipReason:     c.SkipReason,
		ConversationID: c.ConversationID(),
		RateLimited:    c.RateLimited,
		RateWaitedMS:   millis(c.RateWaited),
		Unchecked:      c.Unchecked,
	}
	if c.Status == result.Pending && jc.SkipReason == "" {
		jc.SkipReason = notRunReason
	}
	if r := c.Repeat; r != nil {
		jc.Repeat = &jsonRepeat{Procedure: r.Procedure, Decision: r.Decision, Runs: r.Runs, Passed: r.Passed, Failed: r.Failed,
			Errored: r.Errored, Discarded: r.Discarded, Limit: r.Limit, Needed: r.Needed, PassRate: r.PassRate,
			Margin: r.Margin, Confidence: r.Confidence, Interval: jsonInterval{Lower: r.Lower, Upper: r.Upper, Level: r.Level}}
		for _, sp := range c.ScoreSpreads() {
			jc.Repeat.Scores = append(jc.Repeat.Scores, jsonSpread{Pos: toJSONPos(sp.Pos), Key: sp.Key, To: sp.To, Min: sp.Min, Not: sp.Not,
				Runs: sp.Runs, Failed: sp.Failed, Low: sp.Low, Median: sp.Median, High: sp.High})
		}
	}
	if q := c.Quarantine; q != nil {
		jc.Quarantine = &jsonQuarantine{Reason: q.Reason, Owner: q.Owner, Until: q.Until, Lapsed: q.Lapsed}
	}
	return jc
}

// toJSONAttempt converts the members of an attempt but its turns.
func toJSONAttempt(a *result.Attempt) jsonAttempt {
	ja := jsonAttempt{
		Number:         a.Number,
		Run:            a.Run,
		Status:         a.Status.String(),
		ConversationID: a.ConversationID,
		Started:        jsonTime(a.Started),
		DurationMS:     millis(a.Duration),
		Failures:       []jsonFailure{},
		Confirmations:  []jsonConfirmation{},
	}
	for _, f := range a.Failures {
		ja.Failures = append(ja.Failures, toJSONFailure(f))
	}
	if e := a.Error; e != nil {
		ja.Error = &jsonError{Pos: toJSONPos(e.Pos), Kind: e.Kind, Message: e.Message, Status: e.Status}
	}
	for _, c := range a.Confirmations {
		if c != nil {
			jc := jsonConfirmation{Pos: toJSONPos(c.Pos), Kind: c.Kind, Subject: c.Subject,
				Found: c.Found, Held: &c.Held, Summary: c.Summary, Reads: c.Reads, DurationMS: millis(c.Duration)}
			for _, sn := range c.Seen {
				jc.Seen = append(jc.Seen, jsonSeen{At: jsonTime(sn.At), Who: sn.Who, Text: sn.Text, Reads: sn.Reads, Until: jsonTime(sn.Until)})
			}
			ja.Confirmations = append(ja.Confirmations, jc)
		}
	}
	for _, st := range a.NotRun {
		if st != nil {
			ja.NotRun = append(ja.NotRun, jsonStep{Pos: toJSONPos(st.Pos), Kind: st.Kind, Turn: st.Turn, Text: st.Text, Confirms: st.Confirms})
		}
	}
	return ja
}

func toJSONFailure(f assert.Failure) jsonFailure {
	return jsonFailure{
		Pos:        toJSONPos(f.Pos),
		Step:       f.Step,
		Key:        f.Key,
		Message:    f.Message,
		Expected:   f.Expected,
		Actual:     f.Actual,
		Diff:       f.Diff,
		Nearest:    f.Nearest,
		IgnoreCase: f.IgnoreCase,
	}
}

// maxBodyDepth bounds the nesting of a body embedded as JSON. A reader
// meets the body's levels on top of the report's own (about ten): jq 1.6
// refuses a document nested deeper than 256 levels, Python's json module
// one deeper than about 1000, and encoding/json, which every command that
// reads a report back uses, one deeper than 10000. A platform that nested
// its reply deeper would make the report of a run that passed unreadable
// to agenttest merge, gate, compare, history and coverage.
const maxBodyDepth = 200

// rawJSON embeds a body as JSON when it is JSON, as a JSON string of its
// text when it is not (a proxy's HTML error page) or is nested deeper than
// maxBodyDepth, and as null when empty.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) && jsonkind.Depth(b) <= maxBodyDepth {
		return json.RawMessage(utf8Strings(b))
	}
	s, _ := json.Marshal(string(b)) // marshalling a string cannot fail
	return s
}

// utf8Strings returns raw, valid JSON, with \ufffd in place of every byte
// of its strings that is not UTF-8 and every escaped surrogate that is not
// half of a pair: json.Valid accepts both, but the first makes the report
// a file that is not UTF-8 (RFC 8259 wants it to be), and jq refuses the
// second and with it the whole report. A decoder reads the same text from
// the result as from raw: encoding/json replaces both with U+FFFD one for
// one, as here. raw is returned as is when it needs no change.
func utf8Strings(raw []byte) []byte {
	var out []byte
	done := 0 // raw[:done] is in out
	replace := func(i, n int) {
		out = append(out, raw[done:i]...)
		out = append(out, `\ufffd`...)
		done = i + n
	}
	inString := false
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case !inString:
			inString = c == '"'
			i++
		case c == '"':
			inString = false
			i++
		case c == '\\':
			r := escapedRune(raw, i)
			switch {
			case r < 0:
				i += 2 // \n, \", ...
			case !utf16.IsSurrogate(r):
				i += 6
			case r < 0xdc00 && utf16.DecodeRune(r, escapedRune(raw, i+6)) != unicode.ReplacementChar:
				i += 12
			default:
				replace(i, 6)
				i += 6
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				replace(i, 1)
			}
			i += n
		}
	}
	if out == nil {
		return raw
	}
	return append(out, raw[done:]...)
}

// escapedRune is the rune of the \uXXXX escape at raw[i:], or -1 when
// there is none.
func escapedRune(raw []byte, i int) rune {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return -1
	}
	// Four hex digits: json.Valid let no sign or other digit through.
	n, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

// jsonTime renders t in RFC 3339 with nanoseconds, or "" when unknown.
func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}

// CheckSchema refuses a document that is not a JSON report of this
// version, for every reader of reports (--rerun-failed, history).
func CheckSchema(schema string) error {
	if schema != SchemaV1 {
		return fmt.Errorf("not an agenttest JSON report (schema %q, want %q)", schema, SchemaV1)
	}
	return nil
}

// RerunCase is a case a JSON report lists that --rerun-failed runs again:
// one that failed or errored, or one its run left unrun when it was
// interrupted or stopped (Unrun).
type RerunCase struct {
	// File is the case's file as the report names it (its pos.file, else
	// the path of its file entry).
	File string
	// Name is the case's name, examples row included.
	Name string
	// Status is "failed" or "errored"; for an unrun case, "pending" (the
	// run was interrupted) or "skipped" (a stop left it unrun).
	Status string
	// Unrun is true for a case the run's interruption or stop left
	// without a verdict; Reason is then its skip_reason ("not run: run
	// interrupted", "not run: --fail-fast", "stopped before a verdict",
	// ...).
	Unrun  bool
	Reason string
	// From is the path in the report of the member File was read from
	// (files[0].cases[2].pos.file, or files[0].path), for messages about
	// the file: jsonkind.Offset finds it in the document.
	From []any
}

// ReadRerun reads a JSON report written by WriteJSON and returns, in
// report order, the cases --rerun-failed runs again: those that failed
// or errored, and those the run left without a verdict because it was
// interrupted (pending) or stopped starting cases (--fail-fast, a
// platform that could not be used: skipped with the stop's reason). A
// case skipped by its scenario's skip: is not one of them. Run-level
// checks (the alert gate) are not cases of a suite and are left out. A
// document that is not an agenttest report is an error, and so is a
// case's status no run writes (Values), as ReadJSON refuses it.
//
// It returns the run's stop too (nil when the run did not stop): the
// cases of a shard missing from a merged report are not in it, so only
// the stop can say that they were not run.
func ReadRerun(r io.Reader) ([]RerunCase, *result.Stop, error) {
	var doc struct {
		Schema string `json:"schema"`
		Run    struct {
			Stop *result.Stop `json:"stop"`
		} `json:"run"`
		Files []struct {
			Path  string `json:"path"`
			Cases []struct {
				Name       string  `json:"name"`
				Pos        jsonPos `json:"pos"`
				Status     string  `json:"status"`
				SkipReason string  `json:"skip_reason"`
			} `json:"cases"`
		} `json:"files"`
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON report: %w", err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("not a JSON report: %w", err)
	}
	if err := CheckSchema(doc.Schema); err != nil {
		return nil, nil, err
	}
	var v Values
	var out []RerunCase
	for i, f := range doc.Files {
		for j, c := range f.Cases {
			at := []any{"files", i, "cases", j}
			v.Status(member(at, "status"), c.Status)
			rc := RerunCase{Name: c.Name, Status: c.Status, File: c.Pos.File, From: member(at, "pos", "file")}
			switch c.Status {
			case result.Failed.String(), result.Errored.String():
			case result.Pending.String():
				// Pending is a case without a verdict: the run was
				// interrupted before or while it ran.
				rc.Unrun, rc.Reason = true, cmp.Or(c.SkipReason, notRunReason)
			case result.Skipped.String():
				if !doc.Run.Stop.Left(c.SkipReason) {
					continue
				}
				rc.Unrun, rc.Reason = true, c.SkipReason
			default:
				continue
			}
			if rc.File == "" {
				rc.File, rc.From = f.Path, []any{"files", i, "path"}
			}
			out = append(out, rc)
		}
	}
	if err := v.Err(data); err != nil {
		return nil, nil, err
	}
	return out, doc.Run.Stop, nil
}

// fileMillis is a file's duration for JSON: the sum of its cases'
// durations as millis writes them, so that it is the sum a reader of the
// report gets, and a report read back (ReadJSON) and written again says
// the same, where the rounded sum of nanoseconds could differ by a few
// microseconds.
func fileMillis(f *result.File) float64 {
	var us int64
	for _, c := range f.Cases {
		if c != nil {
			us += c.Duration.Microseconds()
		}
	}
	return float64(us) / 1000
}
