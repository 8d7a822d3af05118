package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestCallStatusNotYetKnown: a platform whose status of a call it just
// placed answers 404 for a moment (its store catches up) is read again
// until the status comes, as a record not there yet is. The first 404
// ended the probe, saying the platform keeps a status about 2h after the
// call ends, of a call placed a second before. A status that never comes
// within: errors the case as the platform's, saying so; a call whose
// status was read and is then forgotten goes on from what was read.
func TestCallStatusNotYetKnown(t *testing.T) {
	t.Parallel()
	const to = "+447700900001"
	own := record("conv-1", to, "VOICE-SIP", fakeclock.Start.Add(time.Second), false, false, `"call_sid":"OUT-1"`)
	for _, tc := range []struct {
		name   string
		status func(n int) string
		want   result.Status
		reads  int    // status reads, when checked
		err    string // in the error
	}{
		{name: "known from the third read", status: func(n int) string {
			if n < 3 {
				return ""
			}
			return `{"call_sid":"OUT-1","status":"success","conversation_id":"conv-1"}`
		}, want: result.Passed, reads: 3},
		{name: "never known", status: func(int) string { return "" }, want: result.Errored,
			err: "probe: call OUT-1 to " + to + ": the platform gave no status of it within 1m0s (35 reads; the last answered GET /v1/outbound-calling/OUT-1/status: 404: call not found): it placed the call and never showed its status, its error, not the agent's"},
		{name: "forgotten while calling", status: func(n int) string {
			if n < 3 {
				return `{"call_sid":"OUT-1","status":"calling"}`
			}
			return ""
		}, want: result.Errored, err: "probe: call OUT-1 to " + to + " was still calling after 1m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &hostileRuntime{status: tc.status, list: func(int) []string { return nil },
				get: func(id string) *string {
					if id == "conv-1" {
						return &own
					}
					return nil
				}}
			c := runHostile(t, h, `suite: calls
agent: p1
scenarios:
  - name: call
    probe: {outbound_call: {to: "`+to+`"}, within: 1m}
    confirm: {conversation: {channel: VOICE-SIP}}
`, func(o *Options) { o.Retries = 1 })
			// The first attempt's: the runtime counts its reads over both.
			a := c.Attempts[0]
			if c.Status != tc.want {
				t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
			}
			// The platform's error, retried: it may show the next call.
			if attempts := len(c.Attempts); tc.want == result.Errored && attempts != 2 {
				t.Errorf("%d attempts, want the error retried once", attempts)
			}
			if tc.reads != 0 && h.statusReads != tc.reads {
				t.Errorf("%d status reads, want %d", h.statusReads, tc.reads)
			}
			if tc.err != "" && (a.Error == nil || !strings.Contains(a.Error.Message, tc.err) || strings.Contains(a.Error.Message, "2h")) {
				t.Fatalf("error %v, want %q, and no word of the 2h a status is kept after a call ends%s", a.Error, tc.err, describe(c))
			}
		})
	}
}
