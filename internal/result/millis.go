package result

import (
	"fmt"
	"math"
	"time"
)

// MaxMillis is the longest duration in milliseconds a time.Duration
// holds: some 292 years.
const MaxMillis = float64(math.MaxInt64 / int64(time.Millisecond))

// CheckMillis says what is wrong with ms, a duration in milliseconds read
// from a JSON report or comparison (duration_ms, latency_ms): a run
// writes none below 0, and none past MaxMillis, which would wrap around
// to another duration (a run that ended centuries ahead of the gate's
// clock would read as one that ended before it). Nil when it is fine.
func CheckMillis(ms float64) error {
	switch {
	case ms < 0:
		return fmt.Errorf("%v is a negative duration", ms)
	case ms > MaxMillis:
		return fmt.Errorf("%v milliseconds is longer than a duration can be (about 292 years)", ms)
	}
	return nil
}
