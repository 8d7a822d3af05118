package runner

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmationUnreadable: a record or handoff state the platform
// answered with an error, a body that is no record, or a 429 asking for
// more than the rate budget is the platform's problem: the case errors at
// the confirmation, naming the read and the platform's answer, with no
// failure of the agent; a check that failed before the part left unread
// stands, and that part's line says why. No key is in anything the case
// records.
func TestConfirmationUnreadable(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	rec := strings.TrimSuffix(record("conv-1", "+447700900002", "SMS", started, true, false, ""), "}") + `,"metrics":{"BOOKED":"true"}}`
	type testCase struct {
		name    string
		confirm string
		get     func(n int) (int, string)      // nil: the record
		handoff func(url.Values) (int, string) // nil: a record with data
		// hang holds the reads of the record (of the handoff state with
		// hangHandoff) from the hang-th on, while the runner's clock
		// moves a minute; the turn timeout is a minute of the hour's
		// bound, or, with scenarioTimeout, an hour and the scenario's
		// timeout 10 s.
		hang            int
		hangHandoff     bool
		scenarioTimeout bool
		status          result.Status
		kind            string // the error's kind
		want            string // in the error, or the failure with the unread line
	}
	run := func(t *testing.T, tc testCase) {
		// Each attempt's SMS opens a conversation of its own: conv-1,
		// then conv-2 for a retry.
		h := &hostileRuntime{smsAnswer: newConversations,
			list: func(int) []string { return nil }, getAnswer: tc.get, handoff: tc.handoff}
		own := func() string { return "conv-" + strconv.Itoa(h.smsSends) }
		if h.getAnswer == nil {
			h.getAnswer = func(int) (int, string) {
				return http.StatusOK, strings.Replace(rec, `"conv-1"`, strconv.Quote(own()), 1)
			}
		}
		if h.handoff == nil {
			// Read by the conversation's id alone.
			h.handoff = func(q url.Values) (int, string) {
				if q.Get("id") != own() || q.Has("shared_id") {
					return http.StatusBadRequest, `{"error_message":"unexpected query ` + q.Encode() + `"}`
				}
				return http.StatusOK, `{"id":` + strconv.Quote(own()) + `,"data":{"reason":"x"}}`
			}
		}
		src := smsConfirm(tc.confirm)
		if tc.scenarioTimeout {
			src += "    timeout: 10s\n"
		}
		c := runHostile(t, h, src, func(o *Options) {
			o.Retries = 1
			if tc.hang != 0 {
				reads := 0
				path := "/conversations/"
				if tc.hangHandoff {
					path = "/handoff_state"
				}
				h.hang = func(r *http.Request, _ bool) bool {
					if !strings.Contains(r.URL.Path, path) {
						return false
					}
					reads++
					return reads >= tc.hang
				}
				h.held, o.TurnTimeout, o.ConfirmTimeout = time.Minute, time.Minute, time.Hour
				if tc.scenarioTimeout {
					o.TurnTimeout = time.Hour
				}
			}
		})
		a := c.Last()
		if c.Status != tc.status {
			t.Fatalf("%s, want %s%s", c.Status, tc.status, describe(c))
		}
		switch tc.status {
		case result.Errored:
			// The first attempt's error, but for a 429: the client makes
			// each call once, so the first 429 is an answer, and the
			// retry's wait on the host is past the budget.
			a := c.Attempts[0]
			if tc.kind == result.KindRateLimited {
				a = c.Last()
			}
			if a.Error == nil || a.Error.Kind != tc.kind || a.Error.Pos.Line != 6 || !strings.Contains(a.Error.Message, tc.want) || len(a.Failures) != 0 {
				t.Errorf("error %+v, failures %+v; want %s at line 6 saying %q and no failure", a.Error, a.Failures, tc.kind, tc.want)
			}
		case result.Passed:
			if last := a.Confirmations[len(a.Confirmations)-1]; last.Kind != result.ConfirmHandoffState || !last.Found || last.Summary != `data: {"reason":"x"}` {
				t.Errorf("handoff state line %+v, want found, showing its data", last)
			}
		case result.Failed:
			// A failure is retried: the record may lag.
			if len(c.Attempts) != 2 || a.Error != nil || len(a.Failures) != 1 || a.Failures[0].Key != "confirm.conversation.channel" {
				t.Errorf("%d attempts, error %+v, failures %+v; want 2 failing on the channel alone", len(c.Attempts), a.Error, a.Failures)
			}
			if rec := a.Confirmations[1]; rec.Kind != result.ConfirmConversation || !rec.Found || !strings.Contains(rec.Summary, "channel=SMS") || !strings.Contains(rec.Summary, "metrics=1") {
				t.Errorf("record line %+v, want found, showing the channel and the metrics", rec)
			}
			last := a.Confirmations[len(a.Confirmations)-1]
			if last.Kind != result.ConfirmHandoffState || last.Found || !strings.Contains(last.Summary, tc.want) {
				t.Errorf("handoff state line %+v, want unread, saying %q", last, tc.want)
			}
		}
		for _, cf := range a.Confirmations {
			if cf.Found && cf.Kind == result.ConfirmConversation && tc.get != nil {
				t.Errorf("confirmation %+v found a record the platform never gave", cf)
			}
		}
		out, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"rk-secret-runtime", "bk-secret-build"} {
			if strings.Contains(string(out), key) {
				t.Errorf("the case shows key %s: %s", key, out)
			}
		}
	}
	record := `{conversation: {in_progress: true}}`
	both := `{conversation: {in_progress: true}, handoff_state: {data: {reason: x}}}`
	for _, tc := range []testCase{
		{name: "record 500", confirm: record, get: func(int) (int, string) { return http.StatusInternalServerError, `{"error_message":"boom"}` },
			status: result.Errored, kind: result.KindHTTP, want: "confirm: read conversation conv-1: "},
		{name: "record not JSON", confirm: record, get: func(int) (int, string) { return http.StatusOK, `{"id":"conv-1",` },
			status: result.Errored, kind: result.KindHTTP, want: "confirm: read conversation conv-1: "},
		{name: "record member of the wrong type", confirm: record, get: func(int) (int, string) { return http.StatusOK, `{"id":"conv-1","in_progress":"yes"}` },
			status: result.Errored, kind: result.KindHTTP, want: "in_progress"},
		{name: "record 429 past the budget", confirm: record, get: func(int) (int, string) { return http.StatusTooManyRequests, `{"error_message":"slow down"}` },
			status: result.Errored, kind: result.KindRateLimited, want: "confirm: read conversation conv-2: rate limited: "},
		{name: "record 401", confirm: record, get: func(int) (int, string) { return http.StatusUnauthorized, `{"error_message":"bad key"}` },
			status: result.Errored, kind: result.KindHTTP, want: "confirm: read conversation conv-1: "},
		{name: "not recorded, then 500", confirm: record, get: func(n int) (int, string) {
			if n < 3 {
				return http.StatusNotFound, `{"error_message":"conversation not found"}`
			}
			return http.StatusInternalServerError, `{"error_message":"boom"}`
		}, status: result.Errored, kind: result.KindHTTP, want: "confirm: read conversation conv-1: "},
		{name: "not recorded when the scenario timeout passes", confirm: record, scenarioTimeout: true,
			get:    func(int) (int, string) { return http.StatusNotFound, `{"error_message":"conversation not found"}` },
			status: result.Errored, kind: result.KindTimeout, want: "confirm: read conversation conv-1: scenario timeout of 10s exceeded"},
		{name: "record read cut by the turn timeout", confirm: record, hang: 1,
			status: result.Errored, kind: result.KindTimeout, want: "confirm: read conversation conv-1: turn timeout of 1m0s exceeded"},
		// What the platform answered before (not recorded yet) does not
		// stand when the scenario's timeout, not the bound, cut the read.
		{name: "not recorded, then a read cut by the scenario timeout", confirm: record, hang: 3, scenarioTimeout: true,
			get:    func(int) (int, string) { return http.StatusNotFound, `{"error_message":"conversation not found"}` },
			status: result.Errored, kind: result.KindTimeout, want: "confirm: read conversation conv-1: scenario timeout of 10s exceeded"},
		{name: "handoff state by shared id", confirm: `{conversation: {in_progress: true}, handoff_state: {shared_id: case-9, data: {reason: x}}}`,
			handoff: func(q url.Values) (int, string) {
				if q.Get("shared_id") != "case-9" || q.Has("id") {
					return http.StatusBadRequest, `{"error_message":"unexpected query ` + q.Encode() + `"}`
				}
				return http.StatusOK, `{"shared_id":"case-9","data":{"reason":"x"}}`
			}, status: result.Passed},
		{name: "shared id that cannot be expanded", confirm: `{conversation: {in_progress: true}, handoff_state: {shared_id: "${env:AGENTTEST_TEST_NO_SUCH_VARIABLE}"}}`,
			status: result.Errored, kind: result.KindConfig, want: "confirm: handoff_state: shared_id: "},
		{name: "channel wrong, then a shared id that cannot be expanded", confirm: `{conversation: {channel: VOICE}, handoff_state: {shared_id: "${env:AGENTTEST_TEST_NO_SUCH_VARIABLE}"}}`,
			status: result.Failed, want: "confirm: handoff_state: shared_id: "},
		{name: "handoff state read cut by the turn timeout", confirm: both, hang: 1, hangHandoff: true,
			status: result.Errored, kind: result.KindTimeout, want: "confirm: read handoff state of conv-1: turn timeout of 1m0s exceeded"},
		{name: "handoff state 500", confirm: both, handoff: func(url.Values) (int, string) { return http.StatusInternalServerError, `{"error_message":"boom"}` },
			status: result.Errored, kind: result.KindHTTP, want: "confirm: read handoff state of conv-1: "},
		{name: "handoff state not JSON", confirm: both, handoff: func(url.Values) (int, string) { return http.StatusOK, `[` },
			status: result.Errored, kind: result.KindHTTP, want: "confirm: read handoff state of conv-1: "},
		{name: "handoff state 429 past the budget", confirm: both, handoff: func(url.Values) (int, string) { return http.StatusTooManyRequests, `{}` },
			status: result.Errored, kind: result.KindRateLimited, want: "past the wait budget"},
		{name: "channel wrong, then handoff state 500", confirm: `{conversation: {channel: VOICE}, handoff_state: {data: {reason: x}}}`,
			handoff: func(url.Values) (int, string) { return http.StatusInternalServerError, `{"error_message":"boom"}` },
			status:  result.Failed, want: "confirm: read handoff state of conv-2: "},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// TestConfirmationWaitsToItsBound: a record is read with backoff until it
// exists, and ended when the checks ask for in_progress: false, for at
// most the bound on the runner's clock; a record never written by the
// bound is the platform's error (the conversation took place), a record
// that did not end the agent's failure, and the record's line says what
// was waited for.
// 100 ms doubling to 2 s: reads at 0, 0.1, 0.3, 0.7, 1.5, 3.1, then every
// 2 s until 29.1, 19 in all, and the pause after it passes the bound at
// 31.1 s. A 10 s wait on a 429 is left out of the bound: 19 reads still,
// the clock at 41.1 s.
func TestConfirmationWaitsToItsBound(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	type testCase struct {
		name    string
		confirm string
		// exists is the read at which the record exists, ended the one
		// at which it ended; 0 for never.
		exists, ended int
		// limited is the request answered 429, asking to wait 10 s,
		// which the client makes again: one read, two requests.
		limited int
		// broken is the request from which the platform answers 500.
		broken int
		status result.Status
		reads  int // requests for the record
		// clock is how far the runner's clock moved, when it waited to
		// the bound: the bound and the waits on rate limits.
		clock   time.Duration
		failure string // the failure's key and part of its message
		message string
		err     string // the error's message, in part (kind timeout)
		line    string // in the record's line
	}
	run := func(t *testing.T, tc testCase) {
		h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
			list: func(int) []string { return nil }, retryAfter: "10"}
		h.getAnswer = func(n int) (int, string) {
			if n == tc.limited {
				return http.StatusTooManyRequests, `{"error_message":"slow down"}`
			}
			if tc.broken != 0 && n >= tc.broken {
				return http.StatusInternalServerError, `{"error_message":"boom"}`
			}
			if tc.exists == 0 || n < tc.exists {
				return http.StatusNotFound, `{"error_message":"conversation not found"}`
			}
			return http.StatusOK, record("conv-1", "+447700900002", "SMS", started, tc.ended == 0 || n < tc.ended, false, "")
		}
		c := runHostile(t, h, smsConfirm(tc.confirm), func(o *Options) {
			// As a real pause does, one the bound ends says so.
			sleep := o.Sleep
			o.Sleep = func(ctx context.Context, d time.Duration) error {
				if err := sleep(ctx, d); err != nil {
					return err
				}
				return ctx.Err()
			}
		})
		a := c.Last()
		if c.Status != tc.status || h.getReads != tc.reads {
			t.Fatalf("%s after %d reads (clock %s), want %s after %d%s", c.Status, h.getReads, h.clk.Now().Sub(fakeclock.Start), tc.status, tc.reads, describe(c))
		}
		if tc.err != "" && (a.Error == nil || a.Error.Kind != result.KindTimeout || !strings.Contains(a.Error.Message, tc.err) || len(a.Failures) != 0) {
			t.Errorf("error %+v, failures %+v; want a timeout saying %q and no failure", a.Error, a.Failures, tc.err)
		}
		if tc.failure != "" && (len(a.Failures) != 1 || a.Failures[0].Key != tc.failure || !strings.Contains(a.Failures[0].Message, tc.message)) {
			t.Errorf("failures %+v, want %s saying %q", a.Failures, tc.failure, tc.message)
		}
		reads := tc.reads
		if tc.limited != 0 {
			reads--
		}
		if rec := a.Confirmations[1]; rec.Kind != result.ConfirmConversation || rec.Reads != reads || !strings.Contains(rec.Summary, tc.line) {
			t.Errorf("record line %+v, want %d reads saying %q", rec, reads, tc.line)
		}
		if waited := h.clk.Now().Sub(fakeclock.Start); waited != tc.clock && (tc.clock != 0 || waited >= 30*time.Second) {
			t.Errorf("the runner's clock moved %s, want %s", waited, tc.clock)
		}
	}
	for _, tc := range []testCase{
		{name: "never recorded", confirm: `{conversation: {in_progress: true}}`, status: result.Errored, reads: 19, clock: 31100 * time.Millisecond,
			err:  "confirm: read conversation conv-1: not recorded within the confirmation's wait of 30s (19 reads; the last answered GET /v3/ws-abcd1234/p1/conversations/conv-1: 404: conversation not found): the platform did not record a conversation that took place, its error, not the agent's",
			line: "not recorded within 30s"},
		{name: "never recorded, 10 s waited on a 429", confirm: `{conversation: {in_progress: true}}`, limited: 3, status: result.Errored, reads: 20, clock: 41100 * time.Millisecond,
			err: "not recorded within the confirmation's wait of 30s (19 reads; ", line: "not recorded within 30s"},
		// Only the handoff state is checked: the record is awaited
		// first all the same, and its absence is the platform's.
		{name: "never recorded, handoff state checked", confirm: `{handoff_state: {data: {reason: x}}}`, status: result.Errored, reads: 19, clock: 31100 * time.Millisecond,
			err: "not recorded within the confirmation's wait of 30s", line: "not recorded within 30s"},
		// The 17th request goes at 33.1 s, within the bound the wait
		// moved to 40 s: its 500 is the platform's error, not a read
		// cut by the bound after "not recorded" answers.
		{name: "a 500 after 10 s waited on a 429", confirm: `{conversation: {in_progress: true}}`, limited: 3, broken: 17, status: result.Errored, reads: 17,
			line: "", clock: 33100 * time.Millisecond},
		{name: "recorded at the fourth read", confirm: `{conversation: {in_progress: true}}`, exists: 4, status: result.Passed, reads: 4,
			line: "channel=SMS"},
		{name: "never ends", confirm: `{conversation: {in_progress: false}}`, exists: 1, status: result.Failed, reads: 19, clock: 31100 * time.Millisecond,
			failure: "confirm.conversation.in_progress", message: "conversation in_progress is true, expected false", line: "in_progress=true num_turns=1 handoff=false (still in progress after 30s)"},
		{name: "recorded, then ends", confirm: `{conversation: {in_progress: false}}`, exists: 2, ended: 5, status: result.Passed, reads: 5,
			line: "in_progress=false"},
		{name: "recorded in progress, not waited for", confirm: `{conversation: {channel: SMS}}`, exists: 2, status: result.Passed, reads: 2,
			line: "in_progress=true"},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// smsConfirm is a suite of one SMS probe of conversation conv-1 (the
// hostile runtime's) confirmed by confirm, at line 6.
func smsConfirm(confirm string) string {
	return "suite: s\nagent: p1\nscenarios:\n  - name: sms\n" +
		`    probe: {sms: {to: "+447700900002", message: "Reply YES"}}` + "\n    confirm: " + confirm + "\n"
}

// TestHandoffSharedIDEmpty: a shared_id whose references expand to
// nothing (a variable set empty, a capture that matched nothing) names no
// record. It was sent as no shared id at all, so the state was read by
// the conversation's id instead and its checks passed on a record the
// scenario did not ask about.
func TestHandoffSharedIDEmpty(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	rec := record("conv-1", "+447700900002", "SMS", started, true, false, "")
	// Blank, as the loader refuses a shared id written blank.
	for _, value := range []string{"", " \t"} {
		t.Run(strconv.Quote(value), func(t *testing.T) {
			t.Parallel()
			reads := 0
			h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
				list: func(int) []string { return nil }, getAnswer: func(int) (int, string) { return http.StatusOK, rec },
				handoff: func(url.Values) (int, string) {
					reads++
					return http.StatusOK, `{"id":"conv-1","data":{"reason":"x"}}`
				}}
			c := runHostile(t, h, smsConfirm(`{handoff_state: {shared_id: "${env:CASE_ID}", data: {reason: x}}}`), func(o *Options) {
				o.Getenv = func(name string) (string, bool) { return value, name == "CASE_ID" }
			})
			a := c.Last()
			if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || a.Error.Pos.Line != 6 ||
				!strings.Contains(a.Error.Message, `confirm: handoff_state: shared_id: "${env:CASE_ID}" is empty once expanded`) {
				t.Fatalf("%s, want errored at the shared id, empty%s", c.Status, describe(c))
			}
			if reads != 0 {
				t.Errorf("%d reads of the handoff state, want none: no shared id names a record", reads)
			}
		})
	}
}

// TestConfirmationBoundPassesDuringARead: the platform said the record
// was not there yet, then held a read unanswered past the confirmation's
// bound (the turn timeout longer than the bound): what it answered
// stands, and the record missing at the bound is the platform's error
// naming its last answer, as it would be had the held read answered 404.
// (A platform that answered no read at all errors the case too:
// TestConfirmationNeverAnswered.)
func TestConfirmationBoundPassesDuringARead(t *testing.T) {
	t.Parallel()
	reads := 0
	h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
		list:      func(int) []string { return nil },
		getAnswer: func(int) (int, string) { return http.StatusNotFound, `{"error_message":"conversation not found"}` },
		hang: func(r *http.Request, _ bool) bool {
			if !strings.Contains(r.URL.Path, "/conversations/") {
				return false
			}
			reads++
			return reads >= 3
		},
		held: time.Hour}
	c := runHostile(t, h, smsConfirm(`{conversation: {in_progress: true}}`), func(o *Options) { o.TurnTimeout = 2 * time.Hour })
	a := c.Last()
	if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindTimeout || len(a.Failures) != 0 ||
		!strings.Contains(a.Error.Message, "not recorded within the confirmation's wait of 30s (3 reads; the last answered GET /v3/ws-abcd1234/p1/conversations/conv-1: 404: conversation not found)") {
		t.Fatalf("%s, want errored: not recorded within the bound, naming the 404%s", c.Status, describe(c))
	}
}

// TestNeverRecordedIsRetried: a record the platform never wrote is its
// error, and a retry may find the next conversation recorded: the case
// is retried with --retries, not given up after one attempt.
func TestNeverRecordedIsRetried(t *testing.T) {
	t.Parallel()
	h := &hostileRuntime{smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
		list:      func(int) []string { return nil },
		getAnswer: func(int) (int, string) { return http.StatusNotFound, `{"error_message":"conversation not found"}` }}
	c := runHostile(t, h, smsConfirm(`{conversation: {in_progress: true}}`), func(o *Options) { o.Retries = 1 })
	if c.Status != result.Errored || len(c.Attempts) != 2 {
		t.Fatalf("%s after %d attempts, want errored after 2%s", c.Status, len(c.Attempts), describe(c))
	}
}
