package report

import (
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
)

// probesFixture is a nightly's probes: an SMS whose conversation's record
// did not say what was expected (the agent's), a call that never
// connected (the line's), and a call that passed. What each probe did and
// saw (result.Seen) is what tells the first two apart.
func probesFixture() *result.Result {
	const file = "suites/reminders.yaml"
	sms := &result.Case{
		Name: "reminder SMS names the clinic", Pos: pos(file, 4, 5), Status: result.Failed,
		Duration: 1500 * time.Millisecond, Agent: "clinic", Env: "live",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Failed, ConversationID: "conv-sms-1", Started: at(0), Duration: 1500 * time.Millisecond,
			Failures: []assert.Failure{{Pos: pos(file, 7, 40), Key: "confirm.conversation.turns.responses",
				Message: "the recorded agent text does not contain the expected text", Expected: `contains "Riverside"`, Actual: "Reply YES to confirm"}},
			Confirmations: []*result.Confirmation{
				{Pos: pos(file, 5, 5), Kind: result.ConfirmSMS, Subject: "+447700900002", Found: true, Held: true,
					Summary: "sent from +15555550199, conversation conv-sms-1", Reads: 1, Duration: 200 * time.Millisecond,
					Seen: []result.Seen{
						{At: at(0), Who: result.SeenSent, Text: "SMS to +447700900002 (POST /v1/outbound-sms): Reply YES to confirm"},
						{At: at(200), Who: result.SeenPlatform, Text: "answered: conversation conv-sms-1, from +15555550199, project clinic, environment live"},
					}},
				{Pos: pos(file, 7, 5), Kind: result.ConfirmConversation, Subject: "conv-sms-1", Found: true,
					Summary: "channel=SMS environment=live in_progress=true num_turns=1 handoff=false", Reads: 2, Duration: 1300 * time.Millisecond,
					Seen: []result.Seen{{At: at(150), Who: result.SeenAgent, Text: "Reply YES to confirm"}}},
			},
		}},
	}
	busy := &result.Case{
		Name: "reminder call connects", Pos: pos(file, 10, 5), Status: result.Errored,
		Duration: 4 * time.Second, Agent: "clinic", Env: "live",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Errored, Started: at(10), Duration: 4 * time.Second,
			Error: &result.Error{Pos: pos(file, 11, 60), Kind: result.KindHTTP,
				Message: "probe: call OUT-7f3a to +447700900001 ended with status failure, expected success (busy): the reference's failure is a call that failed to connect or was not answered, so it never reached the agent: the platform's or the line's, not the agent's"},
			Confirmations: []*result.Confirmation{{Pos: pos(file, 11, 5), Kind: result.ConfirmCall, Subject: "OUT-7f3a", Found: true,
				Summary: "status=failure to=+447700900001 reason=busy", Reads: 5, Duration: 4 * time.Second,
				Seen: []result.Seen{
					{At: at(10), Who: result.SeenSent, Text: "call to +447700900001 (POST /v1/outbound-calling)"},
					{At: at(90), Who: result.SeenPlatform, Text: "placed: call_sid OUT-7f3a, status queued"},
					{At: at(100), Who: result.SeenPlatform, Text: "status queued", Reads: 2, Until: at(300)},
					{At: at(700), Who: result.SeenPlatform, Text: "status calling"},
					{At: at(4010), Who: result.SeenPlatform, Text: "status failure (busy)"},
				}}},
		}},
	}
	ok := &result.Case{
		Name: "confirmation call is answered", Pos: pos(file, 20, 5), Status: result.Passed,
		Duration: 3 * time.Second, Agent: "clinic", Env: "live",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Passed, ConversationID: "conv-call-2", Started: at(20), Duration: 3 * time.Second,
			Confirmations: []*result.Confirmation{
				{Pos: pos(file, 21, 5), Kind: result.ConfirmCall, Subject: "OUT-9b1c", Found: true, Held: true,
					Summary: "status=success to=+447700900003 conversation=conv-call-2", Reads: 4, Duration: 2500 * time.Millisecond,
					Seen: []result.Seen{
						{At: at(20), Who: result.SeenSent, Text: "call to +447700900003 (POST /v1/outbound-calling)"},
						{At: at(60), Who: result.SeenPlatform, Text: "placed: call_sid OUT-9b1c"},
						{At: at(2000), Who: result.SeenPlatform, Text: "status success"},
						{At: at(2100), Who: result.SeenPlatform, Text: "listed no conversation of the call OUT-9b1c yet"},
						{At: at(2500), Who: result.SeenPlatform, Text: "listed conversation conv-call-2 as the call OUT-9b1c's"},
					}},
				{Pos: pos(file, 22, 5), Kind: result.ConfirmConversation, Subject: "conv-call-2", Found: true, Held: true,
					Summary: "channel=VOICE-SIP environment=live in_progress=false num_turns=2 handoff=false", Reads: 1, Duration: 400 * time.Millisecond,
					Seen: []result.Seen{
						{At: at(700), Who: result.SeenAgent, Text: "Hello, this is Riverside Clinic with a reminder of your appointment tomorrow."},
						// A control character in what the platform recorded
						// is shown escaped, as in a transcript.
						{At: at(1500), Who: result.SeenUser, Text: "thanks\r"},
						{Who: result.SeenAgent, Text: "Goodbye."},
					}},
			},
		}},
	}
	// A probe of a report written before probes kept what they saw:
	// its JUnit output is what it was.
	older := &result.Case{
		Name: "reminder SMS is sent", Pos: pos(file, 30, 5), Status: result.Passed,
		Duration: 200 * time.Millisecond, Agent: "clinic", Env: "live",
		Attempts: []*result.Attempt{{
			Number: 1, Status: result.Passed, ConversationID: "conv-sms-0", Started: at(30), Duration: 200 * time.Millisecond,
			Confirmations: []*result.Confirmation{{Pos: pos(file, 31, 5), Kind: result.ConfirmSMS, Subject: "+447700900004", Found: true, Held: true,
				Summary: "sent from the environment's number, conversation conv-sms-0", Reads: 1, Duration: 200 * time.Millisecond}},
		}},
	}
	return &result.Result{
		Started:  t0,
		Duration: 4100 * time.Millisecond,
		Target:   result.Target{Name: "live", Env: "live", BuildURL: "https://build.example.com", RuntimeURL: "https://runtime.example.com", AccountID: "ws-abcdefgh"},
		Files:    []*result.File{{Path: file, Suite: "reminders", Cases: []*result.Case{sms, busy, ok, older}}},
	}
}
