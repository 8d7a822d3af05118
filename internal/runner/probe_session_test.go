package runner

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestSMSContinuesAnOpenSession: a platform that puts a probe's SMS in
// the SMS session still open with the number (a session lasts a day
// after its last message) names a conversation that began before the
// SMS: one listed before it was sent, one an earlier probe of the run
// confirmed, or one whose record began yesterday. Its record holds the
// earlier messages, and its checks judged them: num_turns failed the
// agent. It is the configuration's (the number's open session), said,
// and not retried, since every attempt lands in the same session; a
// conversation the SMS did open is confirmed as before.
func TestSMSContinuesAnOpenSession(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	rec := func(id string, started time.Time) string {
		return fmt.Sprintf(`{"id":%q,"account_id":"ws-abcd1234","project_id":"p1","environment":"sandbox","started_at":%q,`+
			`"channel":"SMS","to_number":%q,"in_progress":true,"num_turns":1}`, id, started.UTC().Format(time.RFC3339Nano), to)
	}
	const probe = `    probe: {sms: {to: "` + to + `", message: "Reply YES to confirm"}}
    confirm: {conversation: {num_turns: 1}}
`
	for _, tc := range []struct {
		name string
		// started is when the named conversation began; listed, whether
		// the list read before the SMS holds it.
		started time.Time
		listed  bool
		// want is the outcome of each scenario that texts the number,
		// one after the other.
		want  []result.Status
		since string
		pos   string
	}{
		{name: "listed before the SMS", started: fakeclock.Start.Add(-30 * time.Second), listed: true,
			want: []result.Status{result.Errored}, since: "conv-1, listed before the SMS was sent", pos: "5:13"},
		{name: "begun yesterday", started: fakeclock.Start.Add(-20 * time.Hour),
			want: []result.Status{result.Errored}, since: "conv-1, which began at " + fakeclock.Start.Add(-20*time.Hour).UTC().Format(time.RFC3339) + ", before the SMS was sent at " + fakeclock.Start.UTC().Format(time.RFC3339), pos: "6:5"},
		{name: "begun within the minute the clocks may differ", started: fakeclock.Start.Add(-50 * time.Second),
			want: []result.Status{result.Passed}},
		{name: "an earlier probe's", started: fakeclock.Start.Add(time.Second),
			want: []result.Status{result.Passed, result.Errored}, since: "conv-1, the conversation of an earlier probe of the run", pos: "8:13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			named := rec("conv-1", tc.started)
			h := &hostileRuntime{
				smsStatus: http.StatusOK, smsBody: `{"conversation_id":"conv-1"}`,
				list: func(n int) []string {
					if tc.listed && n == 0 {
						return []string{named}
					}
					return nil
				},
				get: func(id string) *string {
					if id == "conv-1" {
						return &named
					}
					return nil
				},
			}
			for i, c := range runProbes(t, h, probe, tc.want) {
				a := c.Last()
				if c.Status == result.Passed {
					continue
				}
				want := "probe: SMS to " + to + ": the platform put it in conversation " + tc.since + ": an SMS to a number whose SMS session is still open continues that session"
				if len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) ||
					!strings.HasSuffix(a.Error.Pos.String(), tc.pos) || len(a.Failures) != 0 {
					t.Fatalf("case %d: %d attempts, error at %v, want one configuration error at %s: %q%s", i+1, len(c.Attempts), a.Error, tc.pos, want, describe(c))
				}
				for _, r := range a.Confirmations {
					if r.Held {
						t.Errorf("case %d: line %+v holds, want none: the probe's conversation is not known", i+1, r)
					}
				}
			}
		})
	}
}

// TestSMSInAnOpenSessionUnnamed: a platform that names no conversation
// for an SMS, and puts it in the SMS session still open with the number
// (begun yesterday, half a minute before from outside the run, or by an
// earlier probe of the run), lists no new conversation of the number: the
// search found none (which errors the case: the platform's, retried).
// When a conversation of the number is still open from before the SMS,
// that is the configuration's, said, and not retried; with none open (or
// only one that began after the SMS, listed late), the probe errors as
// before.
func TestSMSInAnOpenSessionUnnamed(t *testing.T) {
	t.Parallel()
	const to = "+447700900002"
	yesterday := fakeclock.Start.Add(-20 * time.Hour)
	halfAMinute := fakeclock.Start.Add(-30 * time.Second)
	recTo := func(id, number string, started time.Time, open bool) string {
		return fmt.Sprintf(`{"id":%q,"account_id":"ws-abcd1234","project_id":"p1","environment":"sandbox","started_at":%q,`+
			`"channel":"SMS","to_number":%q,"in_progress":%t,"num_turns":1}`, id, started.UTC().Format(time.RFC3339Nano), number, open)
	}
	rec := func(id string, started time.Time, open bool) string { return recTo(id, to, started, open) }
	const sms = `    probe: {sms: {to: "` + to + `", message: "Reply YES to confirm"}}
    confirm: {conversation: {num_turns: 1}}
`
	lead := func(id string, began time.Time) string {
		return "the platform named no conversation, and none began after it was sent within 30s, while conversation " + id +
			", begun at " + began.UTC().Format(time.RFC3339) + ", is still open with the number"
	}
	for _, tc := range []struct {
		name string
		// old are conversations of the number the list of those in
		// progress holds, unbounded; near one every list holds.
		old  []string
		near string
		// first, when set, answers the first SMS (the second is
		// accepted without a body); its conversation, conv-1, stays
		// open, and is listed in the window (windowed) or only among
		// those in progress.
		first    bool
		windowed bool
		// call probes with a call (whose status names no conversation)
		// instead of an SMS.
		call bool
		want []result.Status
		lead string
	}{
		{name: "a session open since yesterday", old: []string{rec("conv-old", yesterday, true)},
			want: []result.Status{result.Errored}, lead: lead("conv-old", yesterday)},
		// Said of the latest, in whatever order listed.
		{name: "sessions open since yesterday and the day before",
			old:  []string{rec("conv-older", yesterday.Add(-24*time.Hour), true), rec("conv-old", yesterday, true), rec("conv-oldest", yesterday.Add(-48*time.Hour), true)},
			want: []result.Status{result.Errored}, lead: lead("conv-old", yesterday)},
		{name: "a session open with another number", old: []string{recTo("conv-other", "+447700900003", yesterday, true)},
			want: []result.Status{result.Errored}},
		// A call never continues a session: one that opened nothing
		// errors as before.
		{name: "a call to a number of an open conversation", old: []string{rec("conv-old", yesterday, true)}, call: true,
			want: []result.Status{result.Errored}},
		{name: "a session opened half a minute before, outside the run", near: rec("conv-near", halfAMinute, true),
			want: []result.Status{result.Errored}, lead: lead("conv-near", halfAMinute)},
		{name: "an earlier probe's session", first: true, windowed: true,
			want: []result.Status{result.Passed, result.Errored}, lead: lead("conv-1", fakeclock.Start.Add(time.Second))},
		{name: "an earlier probe's session, listed late", first: true,
			want: []result.Status{result.Passed, result.Errored}, lead: lead("conv-1", fakeclock.Start.Add(time.Second))},
		{name: "yesterday's session ended", old: []string{rec("conv-old", yesterday, false)},
			want: []result.Status{result.Errored}},
		{name: "the SMS's own, listed late", old: []string{rec("conv-late", fakeclock.Start.Add(time.Second), true)},
			want: []result.Status{result.Errored}},
		{name: "no session", want: []result.Status{result.Errored}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fresh := rec("conv-1", fakeclock.Start.Add(time.Second), true)
			var h *hostileRuntime
			h = &hostileRuntime{
				status: func(int) string { return `{"call_sid":"OUT-1","status":"success"}` },
				smsAnswer: func(n int) (int, string) {
					if tc.first && n == 1 {
						return newConversations(n)
					}
					return http.StatusAccepted, ""
				},
				// A platform that ignores in_progress is met by the old
				// conversation that ended.
				page: func(q url.Values) ([]string, string) {
					var items []string
					unbounded := q.Get("start_time") == ""
					if unbounded {
						if q.Get("in_progress") != "true" {
							t.Errorf("an unbounded list of %s, want only those in progress", q.Encode())
						}
						items = append(items, tc.old...)
					}
					if tc.near != "" {
						items = append(items, tc.near)
					}
					if tc.first && h.smsSends >= 1 && (tc.windowed || unbounded) {
						items = append(items, fresh)
					}
					return items, ""
				},
				get: func(id string) *string {
					if id == "conv-1" && tc.first {
						return &fresh
					}
					return nil
				},
			}
			probe := sms
			if tc.call {
				probe = `    probe: {outbound_call: {to: "` + to + `"}, within: 1m}` + "\n    confirm: {conversation: {num_turns: 1}}\n"
			}
			for i, c := range runProbes(t, h, probe, tc.want) {
				a := c.Last()
				switch c.Status {
				case result.Errored:
					if tc.lead == "" {
						// Nothing open from before: the conversation the
						// SMS or call opened was never listed, the
						// platform's, retried.
						if len(c.Attempts) != 2 || a.Error == nil || a.Error.Kind != result.KindTimeout || len(a.Failures) != 0 ||
							!strings.Contains(a.Error.Message, "none listed within the confirmation's wait of 30s") {
							t.Fatalf("case %d: %d attempts, error %v, want two erroring on no conversation listed%s", i+1, len(c.Attempts), a.Error, describe(c))
						}
						break
					}
					want := "probe: SMS to " + to + ": " + tc.lead + ": an SMS to a number whose SMS session is still open continues that session"
					pos := fmt.Sprintf("%d:5", 5+3*i)
					if len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) ||
						!strings.HasSuffix(a.Error.Pos.String(), pos) || len(a.Failures) != 0 {
						t.Fatalf("case %d: %d attempts, error %v, want one configuration error at %s: %q%s", i+1, len(c.Attempts), a.Error, pos, want, describe(c))
					}
				}
			}
		})
	}
}

// runProbes runs, against h with one retry, a suite of agent p1 whose
// scenarios each hold probe, one per status wanted, and checks that each
// case ends with its status.
func runProbes(t *testing.T, h *hostileRuntime, probe string, want []result.Status) []*result.Case {
	t.Helper()
	src := "suite: probes\nagent: p1\nscenarios:\n"
	for i := range want {
		src += fmt.Sprintf("  - name: probe %d\n", i+1) + probe
	}
	cases := runHostileRun(t, h, src, func(o *Options) { o.Retries = 1 }).Files[0].Cases
	for i, c := range cases {
		if c.Status != want[i] {
			t.Fatalf("case %d: %s, want %s%s", i+1, c.Status, want[i], describe(c))
		}
	}
	return cases
}
