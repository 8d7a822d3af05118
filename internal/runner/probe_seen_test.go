package runner

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// TestProbeSeen: a probe keeps what it did and saw on its line, so a
// reader tells a call that never connected from an agent that answered
// wrong. Before, a failed call showed its last status, the read count and
// the time alone, and an SMS nothing of what was sent or recorded. Real
// HTTP against the simulator: the call to the unreachable number goes
// from queued to failure (calling too, when a read falls in it), the
// SMS's text comes back as its conversation's greeting, and the call
// that connected has its record's turns.
func TestProbeSeen(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	res := runWaitingOut(t, func() []*scenario.Suite {
		return loadYAML(t, strings.ReplaceAll(confirmSuite, "agent: clinic", "agent: "+e.clinic))
	}, e.opts())
	byName := map[string]*result.Attempt{}
	for _, c := range res.Files[0].Cases {
		byName[c.Name] = c.Last()
	}
	line := func(a *result.Attempt, kind string) *result.Confirmation {
		t.Helper()
		for _, c := range a.Confirmations {
			if c.Kind == kind {
				return c
			}
		}
		t.Fatalf("no %s line in %+v", kind, a.Confirmations)
		return nil
	}
	// seen checks that the line's entries are first, then any of middle
	// (each said once in a row: reads again are counted), then last, in
	// time order.
	seen := func(name string, c *result.Confirmation, first []result.Seen, middle map[string]bool, last []result.Seen) {
		t.Helper()
		got := c.Seen
		if len(got) < len(first)+len(last) {
			t.Fatalf("%s: seen %+v", name, got)
		}
		for i, s := range got {
			if i > 0 && s.At.Before(got[i-1].At) {
				t.Errorf("%s: entry %d at %s, before %s", name, i, s.At, got[i-1].At)
			}
			if i > 0 && s.Who == got[i-1].Who && s.Text == got[i-1].Text {
				t.Errorf("%s: entry %d says %q again, where reads are counted", name, i, s.Text)
			}
			if s.Reads > 1 && s.Until.Before(s.At) {
				t.Errorf("%s: entry %d read until %s, before %s", name, i, s.Until, s.At)
			}
			var want *result.Seen
			switch {
			case i < len(first):
				want = &first[i]
			case i >= len(got)-len(last):
				want = &last[i-(len(got)-len(last))]
			default:
				if !middle[s.Text] {
					t.Errorf("%s: entry %d %+v, want one of %v", name, i, s, middle)
				}
				continue
			}
			if s.Who != want.Who || s.Text != want.Text {
				t.Errorf("%s: entry %d %s %q, want %s %q", name, i, s.Who, s.Text, want.Who, want.Text)
			}
		}
	}

	a := byName["unreachable number fails the probe"]
	call := line(a, result.ConfirmCall)
	seen("unreachable", call,
		[]result.Seen{
			{Who: result.SeenSent, Text: "call to " + unreachable + " (POST /v1/outbound-calling)"},
			{Who: result.SeenPlatform, Text: "placed: call_sid " + call.Subject + ", status queued"},
		},
		map[string]bool{"status queued": true, "status calling": true},
		[]result.Seen{{Who: result.SeenPlatform, Text: "status failure (unreachable)"}})

	a = byName["sms opens a conversation"]
	sms := line(a, result.ConfirmSMS)
	seen("sms", sms,
		[]result.Seen{{Who: result.SeenSent, Text: "SMS to +447700900002 (POST /v1/outbound-sms): Reply YES to confirm"}}, nil,
		[]result.Seen{{Who: result.SeenPlatform, Text: "answered: conversation " + a.ConversationID + ", from +15555550199, project " + e.clinic + ", environment sandbox"}})
	// The reference: the message acts as the greeting.
	seen("sms record", line(a, result.ConfirmConversation), nil, nil,
		[]result.Seen{{Who: result.SeenAgent, Text: "Reply YES to confirm"}})

	a = byName["call connects"]
	seen("call", line(a, result.ConfirmCall),
		[]result.Seen{{Who: result.SeenSent, Text: "call to +447700900001 (POST /v1/outbound-calling)"}},
		map[string]bool{"placed: call_sid " + line(a, result.ConfirmCall).Subject + ", status queued": true, "status queued": true, "status calling": true},
		[]result.Seen{{Who: result.SeenPlatform, Text: "status success, conversation " + a.ConversationID}})
	rec := line(a, result.ConfirmConversation)
	if len(rec.Seen) == 0 || rec.Seen[0].Who != result.SeenAgent || !strings.Contains(rec.Seen[0].Text, "Riverside Clinic") || rec.Seen[0].At.IsZero() {
		t.Errorf("the call's record: seen %+v, want the agent's greeting first, at the platform's time", rec.Seen)
	}

	// A debug chat's record keeps no turns on its line: its transcript
	// has them.
	for _, c := range byName["urgent handoff is recorded"].Confirmations {
		if len(c.Seen) > 0 {
			t.Errorf("debug chat's %s line: seen %+v", c.Kind, c.Seen)
		}
	}
}

// TestProbeSeenHostile: what a probe saw on a platform that names no
// conversation, shows a call's status late, and records turns of every
// kind: a 404 before the first status, each status once with its reads,
// the searches of the list, and the record's turns (the user's text,
// DTMF and silence, the agent's answers, two alike kept apart), the first
// maxRecordTurns of them.
func TestProbeSeenHostile(t *testing.T) {
	t.Parallel()
	const to, dialled = "+447700900002", "+447700900003"
	turn := func(user, dtmf string, silence bool, agent string) string {
		return fmt.Sprintf(`{"user_input":%q,"user_input_dtmf":%q,"is_silence":%t,"agent_response":%q,"agent_response_datetime":"2026-03-01T12:00:01.500Z"}`, user, dtmf, silence, agent)
	}
	turns := []string{turn("", "", false, "Reply YES to confirm"), turn("YES", "", false, "Booked."), turn("", "", false, "Booked."),
		turn("", "1", false, "Pressed one."), turn("", "", true, "Still there?")}
	for len(turns) < maxRecordTurns+3 {
		turns = append(turns, turn("more", "", false, "ok"))
	}
	rec := strings.TrimSuffix(record("conv-own", to, "SMS", fakeclock.Start.Add(time.Second), true, false, ""), "}") +
		`,"num_turns":` + strconv.Itoa(len(turns)) + `,"turns":[` + strings.Join(turns, ",") + "]}"
	call := record("conv-call", dialled, "VOICE-SIP", fakeclock.Start.Add(time.Second), false, false, `"call_sid":"OUT-1"`)
	h := &hostileRuntime{
		smsStatus: http.StatusAccepted,
		// 404, queued twice, success.
		status: func(n int) string {
			switch n {
			case 1:
				return ""
			case 2, 3:
				return `{"call_sid":"OUT-1","status":"queued"}`
			}
			return `{"call_sid":"OUT-1","status":"success"}`
		},
		// Each probe's conversation from its second read of the list on.
		list: func(n int) []string {
			if n > 0 && n%2 == 0 {
				return []string{rec, call}
			}
			return nil
		},
		get: func(id string) *string {
			switch id {
			case "conv-own":
				return &rec
			case "conv-call":
				return &call
			}
			return nil
		},
	}
	res := runHostileRun(t, h, `suite: seen
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "`+to+`", message: "Reply YES to confirm", agent_number: "+15555550100"}}
    confirm: {conversation: {num_turns: {min: 1}}}
`)
	a := res.Files[0].Cases[0].Last()
	if len(a.Confirmations) != 2 {
		t.Fatalf("confirmations %+v%s", a.Confirmations, describe(res.Files[0].Cases[0]))
	}
	got := seenText(a.Confirmations[0].Seen)
	want := "sent SMS to " + to + " from +15555550100 (POST /v1/outbound-sms): Reply YES to confirm (0)\n" +
		"platform answered: no conversation named (0)\n" +
		"platform listed no conversation of the SMS to " + to + " yet (0)\n" +
		"platform listed conversation conv-own as the SMS to " + to + "'s (0)\n"
	if got != want {
		t.Errorf("the SMS saw\n%s\nwant\n%s", got, want)
	}
	rs := a.Confirmations[1].Seen
	got = seenText(append(rs[:8:8], rs[len(rs)-2:]...))
	want = "agent Reply YES to confirm (0)\nuser YES (0)\nagent Booked. (0)\nagent Booked. (0)\nuser (DTMF 1) (0)\nagent Pressed one. (0)\nuser (silence) (0)\nagent Still there? (0)\n" +
		"agent ok (0)\nplatform … 3 more turns in the record (0)\n"
	if got != want {
		t.Errorf("the record saw\n%s\nwant\n%s", got, want)
	}
	if at := a.Confirmations[1].Seen[0].At; !at.Equal(time.Date(2026, 3, 1, 12, 0, 1, 500e6, time.UTC)) {
		t.Errorf("the agent's turn at %s, want the record's agent_response_datetime", at)
	}

	h.probed, h.listReads = false, 0
	res = runHostileRun(t, h, `suite: seen
agent: p1
scenarios:
  - name: call
    probe: {outbound_call: {to: "`+dialled+`"}, within: 2m}
`)
	got = seenText(res.Files[0].Cases[0].Last().Confirmations[0].Seen)
	want = "sent call to " + dialled + " (POST /v1/outbound-calling) (0)\nplatform placed: call_sid OUT-1, status queued (0)\n" +
		"platform no status (404) (0)\nplatform status queued (2)\nplatform status success (0)\n" +
		"platform listed no conversation of the call OUT-1 yet (0)\nplatform listed conversation conv-call as the call OUT-1's (0)\n"
	if got != want {
		t.Errorf("the call saw\n%s\nwant\n%s", got, want)
	}
}

// seenText is what a probe saw, one "who text (reads)" line each.
func seenText(seen []result.Seen) string {
	var b strings.Builder
	for _, s := range seen {
		fmt.Fprintf(&b, "%s %s (%d)\n", s.Who, s.Text, s.Reads)
	}
	return b.String()
}
