package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/result"
)

// Values checks the values of a JSON report as a reader decodes them,
// by the rules every reader of reports shares: a case's or an attempt's
// status (result.Status), the run's (result.ParseRunStatus), a time
// (result.ParseTime), a duration (result.CheckMillis), a run's shard
// (result.Shard.Check). It keeps the first
// value that breaks one with its path (member names and array indices),
// and Err places it in the document. ReadJSON reads through it, and so do
// the readers that decode only the members they need (ReadRerun,
// history), so that no reader takes for a report what another refuses.
//
//	var v report.Values
//	st := v.RunStatus([]any{"run", "status"}, doc.Run.Status)
//	if err := v.Err(data); err != nil { ... } // run.status at its line and column
type Values struct {
	err  error
	path []any
}

// Check keeps err, when it is the first, as the problem of the value at
// path.
func (v *Values) Check(path []any, err error) {
	if err != nil && v.err == nil {
		v.err, v.path = err, slices.Clone(path)
	}
}

// Err is the first problem kept, at its place in data, the document
// read (a jsonkind.ValueError): nil when there is none.
func (v *Values) Err(data []byte) error {
	if v.err == nil {
		return nil
	}
	return fmt.Errorf("not a JSON report: %w", jsonkind.At(data, v.path, v.err))
}

// Time reads a time (result.ParseTime): the zero time for "".
func (v *Values) Time(path []any, s string) time.Time {
	t, err := result.ParseTime(s)
	v.Check(path, err)
	return t
}

// Status reads the status of a case or an attempt.
func (v *Values) Status(path []any, s string) result.Status {
	var st result.Status
	v.Check(path, st.UnmarshalText([]byte(s)))
	return st
}

// RunStatus reads the run's status (result.ParseRunStatus).
func (v *Values) RunStatus(path []any, s string) result.RunStatus {
	st, err := result.ParseRunStatus(s)
	v.Check(path, err)
	return st
}

// Millis reads a duration_ms (fromMillis), which result.CheckMillis
// must find fine: 0 when it does not.
func (v *Values) Millis(path []any, ms float64) time.Duration {
	if err := result.CheckMillis(ms); err != nil {
		v.Check(path, err)
		return 0
	}
	return fromMillis(ms)
}

// Shard checks the shard of a sharded run's report (result.Shard.Check),
// placing a problem at the member at fault: shard.index of "3/2".
func (v *Values) Shard(path []any, s *result.Shard) {
	if s == nil {
		return
	}
	field, err := s.Check()
	v.Check(member(path, field), err)
}

// member is the path of a member (or element) of the value at path.
func member(path []any, more ...any) []any { return append(slices.Clip(path), more...) }
