package result

import (
	"fmt"
	"time"
)

// ParseTime reads a time as a JSON report writes it (run.started, an
// attempt's or a turn's started): RFC 3339, to the nanosecond, or "" for
// one not known (the zero time). Every reader of reports reads times
// through it, so that none takes a time another refuses.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	return t, nil
}

// ParseRunStatus reads the verdict a JSON report states (run.status):
// one of the run statuses. Every run states one, so a report without it
// (its run null, or edited) is refused by every reader of reports.
func ParseRunStatus(s string) (RunStatus, error) {
	if st := RunStatus(s); st.Known() {
		return st, nil
	}
	return "", fmt.Errorf("unknown run status %q (one of passed, failed, errored, interrupted, empty)", s)
}
