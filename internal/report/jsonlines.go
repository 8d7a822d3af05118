package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/agenttest/agenttest/internal/result"
)

// JSONLines is the machine progress view: one JSON object per line, for
// tools that follow a run as it goes (--format json). Every event has an
// "event" member: "run_started" (total, target), "case_finished" (file,
// suite and the case in the SchemaV1 case layout, without transcripts) and
// "run_finished" (counts, status, duration_ms, interrupted). It is safe
// for concurrent use.
type JSONLines struct {
	result.NoopObserver

	mu  sync.Mutex
	enc *json.Encoder
	err error
}

var _ result.Observer = (*JSONLines)(nil)

// NewJSONLines returns a JSON-lines view writing to w.
func NewJSONLines(w io.Writer) *JSONLines {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &JSONLines{enc: enc}
}

// Err returns the first error met writing events, if any.
func (j *JSONLines) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

type runStartedEvent struct {
	Event  string     `json:"event"`
	Total  int        `json:"total"`
	Target jsonTarget `json:"target"`
}

type caseFinishedEvent struct {
	Event string   `json:"event"`
	File  string   `json:"file,omitempty"`
	Suite string   `json:"suite,omitempty"`
	Case  jsonCase `json:"case"`
}

type runFinishedEvent struct {
	Event       string     `json:"event"`
	Status      string     `json:"status"`
	Counts      jsonCounts `json:"counts"`
	DurationMS  float64    `json:"duration_ms"`
	Interrupted bool       `json:"interrupted"`
}

// RunStarted emits a run_started event.
func (j *JSONLines) RunStarted(total int, target result.Target) {
	j.emit(runStartedEvent{Event: "run_started", Total: total, Target: toJSONTarget(target)})
}

// CaseFinished emits a case_finished event.
func (j *JSONLines) CaseFinished(f *result.File, c *result.Case) {
	ev := caseFinishedEvent{Event: "case_finished", Case: toJSONCase(c, false)}
	if f != nil {
		ev.File, ev.Suite = f.Path, f.Suite
	}
	j.emit(ev)
}

// RunFinished emits a run_finished event.
func (j *JSONLines) RunFinished(r *result.Result) {
	s := Summarize(r)
	j.emit(runFinishedEvent{
		Event:       "run_finished",
		Status:      s.Status.String(),
		Counts:      toJSONCounts(s),
		DurationMS:  millis(r.Duration),
		Interrupted: r.Interrupted,
	})
}

// emit writes one event line; Encode writes the whole line in one Write,
// and the lock keeps lines whole across goroutines.
func (j *JSONLines) emit(ev any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	if err := j.enc.Encode(ev); err != nil {
		j.err = fmt.Errorf("write json event: %w", err)
	}
}
