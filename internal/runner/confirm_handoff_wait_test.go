package runner

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestHandoffStateWaitsToItsBound: the agent writes the handoff state, but
// a platform may store it a moment after the conversation ends, as it
// does the record. A 404 is read again within the confirmation's wait, by
// the record's backoff (100 ms doubling to 2 s: 19 reads in 30 s, the
// clock at 31.1 s), and only at the bound is it the agent's failure,
// saying how long it waited and how many reads. It was read once, and a
// state stored a moment late failed the agent. Another error of a read
// is still the platform's, at once.
func TestHandoffStateWaitsToItsBound(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	rec := record("conv-1", "+447700900002", "SMS", started, true, true, "")
	for _, tc := range []struct {
		name    string
		confirm string
		// stored is the read from which the state is there, broken the
		// one from which the platform answers 500; 0 for never.
		stored, broken int
		query          string // the reads' query
		status         result.Status
		reads          int           // requests for the state
		clock          time.Duration // how far the runner's clock moved
		want           string        // the failure's message, or in the error
		key            string        // the failure's key, confirm.handoff_state if ""
		line           string        // the state's confirmed line
	}{
		{name: "stored at the fourth read", confirm: `{handoff_state: {data: {reason: urgent}}}`, stored: 4, query: "id=conv-1",
			status: result.Passed, reads: 4, clock: 700 * time.Millisecond, line: `data: {"reason":"urgent"}`},
		{name: "stored late, by shared id", confirm: `{handoff_state: {shared_id: case-9, data: {reason: urgent}}}`, stored: 7, query: "shared_id=case-9",
			status: result.Passed, reads: 7, clock: 5100 * time.Millisecond, line: `data: {"reason":"urgent"}`},
		// What is stored is judged as it is: no wait in the message.
		{name: "stored at the second read, another reason", confirm: `{handoff_state: {data: {reason: billing}}}`, stored: 2, query: "id=conv-1",
			status: result.Failed, reads: 2, clock: 100 * time.Millisecond, line: `data: {"reason":"urgent"}`, key: "confirm.handoff_state.data.reason",
			want: `handoff data "reason" is not the expected value`},
		{name: "never stored", confirm: `{handoff_state: {data: {reason: urgent}}}`, query: "id=conv-1",
			status: result.Failed, reads: 19, clock: 31100 * time.Millisecond, line: "no handoff state stored within 30s",
			want: "no handoff state was stored for the conversation within the confirmation's wait of 30s (19 reads; the last answer a 404)"},
		{name: "never stored, by shared id", confirm: `{handoff_state: {shared_id: case-9}}`, query: "shared_id=case-9",
			status: result.Failed, reads: 19, clock: 31100 * time.Millisecond, line: "no handoff state stored within 30s",
			want: `no handoff state was stored under shared id "case-9" within the confirmation's wait of 30s (19 reads; the last answer a 404)`},
		{name: "a 500 after 404s", confirm: `{handoff_state: {data: {reason: urgent}}}`, broken: 3, query: "id=conv-1",
			status: result.Errored, reads: 3, clock: 300 * time.Millisecond,
			want: "confirm: read handoff state of conv-1: GET /v1/ws-abcd1234/p1/handoff_state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reads := 0
			h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
				list:      func(int) []string { return nil },
				getAnswer: func(int) (int, string) { return http.StatusOK, rec },
				handoff: func(q url.Values) (int, string) {
					reads++
					switch {
					case q.Encode() != tc.query:
						return http.StatusBadRequest, `{"error_message":"unexpected query ` + q.Encode() + `"}`
					case tc.broken != 0 && reads >= tc.broken:
						return http.StatusInternalServerError, `{"error_message":"boom"}`
					case tc.stored == 0 || reads < tc.stored:
						return http.StatusNotFound, `{"error_message":"no handoff state"}`
					}
					return http.StatusOK, `{"id":"conv-1","shared_id":"case-9","data":{"reason":"urgent"}}`
				}}
			c := runHostile(t, h, smsConfirm(tc.confirm))
			a := c.Last()
			if c.Status != tc.status || reads != tc.reads || len(c.Attempts) != 1 {
				t.Fatalf("%s after %d reads in %d attempts, want %s after %d in one%s", c.Status, reads, len(c.Attempts), tc.status, tc.reads, describe(c))
			}
			if waited := h.clk.Now().Sub(fakeclock.Start); waited != tc.clock {
				t.Errorf("the runner's clock moved %s, want %s", waited, tc.clock)
			}
			switch tc.status {
			case result.Failed:
				key := cmp.Or(tc.key, "confirm.handoff_state")
				if a.Error != nil || len(a.Failures) != 1 || a.Failures[0].Key != key || a.Failures[0].Message != tc.want {
					t.Errorf("error %+v, failures %+v; want %s saying %q", a.Error, a.Failures, key, tc.want)
				}
			case result.Errored:
				if a.Error == nil || a.Error.Kind != result.KindHTTP || !strings.Contains(a.Error.Message, tc.want) || !strings.Contains(a.Error.Message, "500") || len(a.Failures) != 0 {
					t.Errorf("error %+v, failures %+v; want an http error saying %q and no failure", a.Error, a.Failures, tc.want)
				}
				return
			}
			last := a.Confirmations[len(a.Confirmations)-1]
			if last.Kind != result.ConfirmHandoffState || last.Reads != tc.reads || last.Found != (tc.stored != 0) || last.Summary != tc.line || last.Duration != tc.clock {
				t.Errorf("state line %+v, want %d reads over %s saying %q", last, tc.reads, tc.clock, tc.line)
			}
		})
	}
}
