package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
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
	res, err := Run(context.Background(), loadYAML(t, strings.ReplaceAll(confirmSuite, "agent: clinic", "agent: "+e.clinic)), e.opts())
	if err != nil {
		t.Fatal(err)
	}
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
