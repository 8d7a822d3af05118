package runner

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmUncountedTurns: a record that lists turns while its
// num_turns is 0 or left out contradicts itself (num_turns counts every
// turn), and a num_turns check on it is the platform's error, not the
// agent's failure. It was read as 0 and failed the agent ("conversation
// num_turns is 0, expected at least 1 (the record has turns but no
// num_turns)"). A check the record can judge still fails the agent
// beside it, and a record without turns still fails a count it misses.
func TestConfirmUncountedTurns(t *testing.T) {
	t.Parallel()
	started := fakeclock.Start.Add(time.Second)
	const oneTurn = `,"turns":[{"user_input":"","agent_response":"Reply YES to confirm","intents":[]}]`
	for _, tc := range []struct {
		name string
		// numTurns replaces the record's "num_turns":1 (empty: left out).
		numTurns, turns, check string
		want                   result.Status
	}{
		{name: "left out", numTurns: ``, turns: oneTurn, check: `{num_turns: {min: 1}}`, want: result.Errored},
		{name: "zero", numTurns: `"num_turns":0,`, turns: oneTurn, check: `{num_turns: 1}`, want: result.Errored},
		{name: "null", numTurns: `"num_turns":null,`, turns: oneTurn, check: `{num_turns: {min: 1}}`, want: result.Errored},
		{name: "another check fails beside it", numTurns: ``, turns: oneTurn, check: `{num_turns: {min: 1}, channel: VOICE-SIP}`, want: result.Failed},
		{name: "another check passes beside it", numTurns: ``, turns: oneTurn, check: `{num_turns: {min: 1}, channel: SMS}`, want: result.Errored},
		{name: "counted", numTurns: `"num_turns":1,`, turns: oneTurn, check: `{num_turns: 1}`, want: result.Passed},
		{name: "no turns listed", numTurns: `"num_turns":0,`, check: `{num_turns: {min: 1}}`, want: result.Failed},
		{name: "no num_turns check", numTurns: ``, turns: oneTurn, check: `{channel: SMS}`, want: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := strings.Replace(record("conv-1", "+447700900002", "SMS", started, true, false, ""), `"num_turns":1,`, tc.numTurns, 1)
			rec = strings.TrimSuffix(rec, "}") + tc.turns + `}`
			// Each attempt's SMS opens a conversation of its own: conv-1,
			// then conv-2 for the retry.
			h := &hostileRuntime{smsAnswer: newConversations,
				list: func(int) []string { return nil }, get: func(id string) *string {
					r := strings.Replace(rec, `"conv-1"`, strconv.Quote(id), 1)
					return &r
				}}
			confirm := "    confirm: {conversation: " + tc.check + "}"
			// Retried as the platform's errors are: a fresh session
			// may meet a record that counts its turns.
			c := runHostile(t, h, `suite: s
agent: p1
scenarios:
  - name: sms
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
`+confirm+"\n", func(o *Options) { o.Retries = 1 })
			if c.Status != tc.want {
				t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
			}
			a := c.Last()
			switch tc.want {
			case result.Errored:
				const want = "confirm: read conversation conv-2: the record lists turns (1) but its num_turns is 0 or left out: the platform's record contradicts itself, and the num_turns check cannot be confirmed on it"
				// At the num_turns check, not at the conversation:.
				col := strings.Index(confirm, "num_turns") + 1
				if a.Error.Kind != result.KindHTTP || a.Error.Pos.Line != 6 || a.Error.Pos.Col != col || a.Error.Message != want {
					t.Errorf("error %s %s: %s, want http at 6:%d: %s", a.Error.Kind, a.Error.Pos, a.Error.Message, col, want)
				}
				if len(c.Attempts) != 2 {
					t.Errorf("%d attempts, want the error retried once", len(c.Attempts))
				}
			case result.Failed:
				for _, f := range a.Failures {
					if f.Key == "confirm.conversation.num_turns" && tc.turns != "" {
						t.Errorf("the num_turns check failed the agent: %s", f.Message)
					}
				}
			}
		})
	}
}
