package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/result"
)

// SchemaV1 names the JSON form of a Comparison (WriteJSON). It changes
// only when a member is removed or changes meaning; members may be added
// within v1. The HTML report renders it when present.
//
// The document (latencies in milliseconds, fractional; times RFC 3339;
// empty strings omitted; arrays always present; a side or an outcome that
// does not exist is null):
//
//	schema     "agenttest/compare/v1"
//	started, duration_ms
//	status     passed | failed | errored | interrupted | empty
//	why        what decided the status ("1 scenario regressed")
//	options    {latency_min_shift_ms, latency_min_ratio, alpha, fail_on_change}
//	rerun      {of, failed, unrun}: the sides that ran selected with
//	            --rerun-failed (absent otherwise): the report, its failed
//	            and errored cases, and the cases its run left unrun
//	            (interrupted or stopped), which the sides ran too
//	filter     {tags, name, at, left_out}: --tags, --name or FILE:LINE
//	            narrowed the scenarios compared (absent otherwise), as a
//	            run report records it
//	baseline, candidate: side
//	counts     {total, regressed, fixed, changed, slower, faster, unchanged,
//	            not_compared, only_baseline, only_candidate}
//	latency    {scenarios, baseline_median_ms, candidate_median_ms,
//	            baseline_p95_ms, candidate_p95_ms, median_shift_ms,
//	            test: {name: "wilcoxon-signed-rank", n, statistic, p_value,
//	            exact}, verdict: slower | faster | unchanged}
//	pairs      [pair]
//
//	side       {spec, kind: environment | target | report, env, report,
//	            target: {name, build_url, runtime_url, account_id, env,
//	            embedded}, run: {started, duration_ms, status, interrupted,
//	            stop}, shard: {index, total, selection, selected},
//	            rerun: {of, failed, unrun}, forced_merge: [string],
//	            filter: {tags, name, at, left_out}, paths: [string],
//	            deployments: [deployment]}
//	            (shard, rerun, forced_merge and filter as the side's run
//	            report has them; absent for a run of the whole selection;
//	            paths: the suite paths the side's run was given, absent
//	            for a report written before runs recorded them)
//	pair       {file, name, pos: {file, line, col}, class, note, quarantined,
//	            baseline: outcome, candidate: outcome, changes: [change],
//	            latency: {baseline_turns, candidate_turns, baseline_median_ms,
//	            candidate_median_ms, median_shift_ms, baseline_p95_ms,
//	            candidate_p95_ms, p95_shift_ms, verdict} | null,
//	            rates: {baseline_passed, baseline_runs, candidate_passed,
//	            candidate_runs, test: "fisher-exact", p_value} | null}
//	outcome    {status, verdict: passed | failed | errored | "not run",
//	            conversation_id, agent, env, failures: [message], error,
//	            unchecked}
//	change     {turn, pos, say, what: reply | trace | handoff | state |
//	            ended | turns | verdict | similar, baseline, candidate, diff}
//	deployment the run report's form (result.Deployment): {agent, env, id,
//	            version, read_at, after_id, after_version, after_read_at,
//	            changed, verified, note}
//
// unchecked is true (absent otherwise) when the side's case checks
// nothing of the agent, as a run report's case says it.
//
// class is one of regressed, fixed, changed, slower, faster, unchanged,
// not-compared, only-baseline, only-candidate: one per pair, so counts add
// up to total. status maps onto the exit code of `agenttest compare`:
// passed 0, failed 1, errored 4, interrupted 130, empty 5. A statistical
// scenario's changes hold one "verdict" change when its verdict flipped
// without a significant difference of rates. In a reply's diff, removed
// words are [-…-] and added ones {+…+}; a trace is the node path joined
// with " → "; a state change lists what the turn wrote as name=value
// (values as JSON) and -name for a member it removed. A "similar" change
// follows the reply change of its turn: a similar check of that reply
// that scored otherwise, its pos the matcher's, baseline and candidate
// its score against its threshold ("similar 0.95 ≥ 0.80").
const SchemaV1 = "agenttest/compare/v1"

// document is a Comparison with its schema.
type document struct {
	Schema string `json:"schema"`
	*Comparison
}

// WriteJSON writes c as one indented SchemaV1 document.
func WriteJSON(w io.Writer, c *Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(document{Schema: SchemaV1, Comparison: c}); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// ReadJSON reads a document WriteJSON wrote. A document of another schema
// is an error, and so is a duration no run has (result.CheckMillis), a
// side's shard no run deals (result.Shard.Check) or a status, time or
// deployment that does not read, at its place in the document
// (jsonkind.ValueError).
func ReadJSON(r io.Reader) (*Comparison, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("not a JSON comparison: %w", err)
	}
	doc := document{Comparison: &Comparison{}}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a JSON comparison: %w", placed(data, err))
	}
	if doc.Schema != SchemaV1 {
		return nil, fmt.Errorf("not an agenttest comparison (schema %q, want %q)", doc.Schema, SchemaV1)
	}
	c := doc.Comparison
	// A null pair or deployment is none, as a run report's null
	// deployment is (report.ReadJSON): `agenttest gate` weighs what is
	// left, and a candidate whose every deployment is null records none.
	c.Pairs = slices.DeleteFunc(c.Pairs, func(p *Pair) bool { return p == nil })
	for _, s := range []*Side{&c.Baseline, &c.Candidate} {
		s.Deployments = slices.DeleteFunc(s.Deployments, func(d *result.Deployment) bool { return d == nil })
	}
	for _, d := range []struct {
		path []any
		ms   float64
	}{
		{[]any{"duration_ms"}, c.DurationMS},
		{[]any{"baseline", "run", "duration_ms"}, c.Baseline.Run.DurationMS},
		{[]any{"candidate", "run", "duration_ms"}, c.Candidate.Run.DurationMS},
	} {
		if err := result.CheckMillis(d.ms); err != nil {
			return nil, fmt.Errorf("not a JSON comparison: %w", jsonkind.At(data, d.path, err))
		}
	}
	// A side's shard as a run report's is read (report.Values): the gate
	// refuses a candidate that is one shard, and must not take one no
	// run deals ("1/0") for a whole run.
	for _, s := range []struct {
		name string
		side *Side
	}{{"baseline", &c.Baseline}, {"candidate", &c.Candidate}} {
		if s.side.Shard == nil {
			continue
		}
		if field, err := s.side.Shard.Check(); err != nil {
			return nil, fmt.Errorf("not a JSON comparison: %w", jsonkind.At(data, []any{s.name, "shard", field}, err))
		}
	}
	return c, nil
}

// placed gives err, a decoding error of a value that reads itself (a
// status, a time, a deployment), its place in data (jsonkind.ValueError):
// encoding/json says where the document is malformed or of the wrong
// type, never which of those values refused. Any other err is returned as
// it is.
func placed(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return err
	}
	type outcome struct {
		Status json.RawMessage `json:"status"`
	}
	type side struct {
		Run struct {
			Started json.RawMessage `json:"started"`
		} `json:"run"`
		Deployments []json.RawMessage `json:"deployments"`
	}
	var doc struct {
		Started             json.RawMessage `json:"started"`
		Baseline, Candidate side
		Pairs               []*struct {
			Baseline, Candidate *outcome
		} `json:"pairs"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return err
	}
	type value struct {
		path []any
		raw  json.RawMessage
		into any
	}
	values := []value{{[]any{"started"}, doc.Started, new(time.Time)}}
	for _, s := range []struct {
		name string
		side side
	}{{"baseline", doc.Baseline}, {"candidate", doc.Candidate}} {
		values = append(values, value{[]any{s.name, "run", "started"}, s.side.Run.Started, new(time.Time)})
		for i, d := range s.side.Deployments {
			values = append(values, value{[]any{s.name, "deployments", i}, d, new(result.Deployment)})
		}
	}
	for i, p := range doc.Pairs {
		if p == nil {
			continue
		}
		for _, o := range []struct {
			name string
			o    *outcome
		}{{"baseline", p.Baseline}, {"candidate", p.Candidate}} {
			if o.o != nil {
				values = append(values, value{[]any{"pairs", i, o.name, "status"}, o.o.Status, new(result.Status)})
			}
		}
	}
	for _, v := range values {
		if len(v.raw) == 0 {
			continue
		}
		if verr := json.Unmarshal(v.raw, v.into); verr != nil {
			return jsonkind.At(data, v.path, verr)
		}
	}
	return err
}
