package scenario

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/steps"
)

// contractSuite is the YAML contract of confirmations and probes, as the
// issue writes it.
const contractSuite = `agent: clinic
scenarios:
  - name: urgent symptoms are handed off
    turns:
      - say: I have chest pain
    confirm:
      conversation:
        num_turns: 4
        handoff: true
        handoff_destination: on_call_nurse
        handoff_reason: {contains: urgent}
        channel: WEBCHAT
        environment: sandbox
        total_duration: {min: 1, max: 600}
        metrics: {CALL_TURN: {count: 4}, BOOKED: "true"}
        state: {booking_code: {present: true}}
        turns: {count: 4, intents: {includes: [book_appointment]}}
      handoff_state: {data: {reason: urgent_symptoms}, shared_id: "case-1"}
      webhooks: [conversation.completed, handoff.created]
  - name: reminder call connects
    probe: {outbound_call: {to: "+447700900001", metadata: {reason: reminder, attempt: 1}}, expect_status: success, within: 2m}
    confirm: {conversation: {channel: VOICE-SIP, num_turns: {min: 1}}}
  - name: reminder SMS opens a conversation
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm", agent_number: "+447700900100"}}
    confirm: {conversation: {in_progress: true}}
  - name: unreachable
    probe: {outbound_call: {to: "+447700900999"}, expect_status: failure}
`

func TestConfirmContractLoads(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, contractSuite)
	golden.Check(t, "testdata/valid/confirm.golden", []byte(dump(s.Scenarios)))

	c := confirmOf(s.Scenarios[0])
	if c == nil || c.Conversation == nil || len(c.Conversation.Fields) != 7 || len(c.Conversation.Metrics) != 2 ||
		len(c.Conversation.State) != 1 || c.Conversation.Turns == nil || c.HandoffState == nil || len(c.Webhooks) != 2 {
		t.Fatalf("confirm = %s", dump(c))
	}
	call := s.Scenarios[1].Probe()
	if st := stepOf(s.Scenarios[1], steps.CallStatus); st == nil || st.Status.Want != "success" {
		t.Fatalf("call status step = %s", dump(st))
	}
	if call == nil || call.Call == nil || call.Call.To != "+447700900001" || call.Within != 2*time.Minute ||
		call.Call.Metadata["reason"] != "reminder" || call.Call.Metadata["attempt"] != 1 {
		t.Fatalf("call probe = %s", dump(call))
	}
	if stepOf(s.Scenarios[1], steps.Say) != nil || stepOf(s.Scenarios[1], steps.Open) != nil {
		t.Error("a probe scenario has turns")
	}
	sms := s.Scenarios[2].Probe()
	if sms == nil || sms.SMS == nil || sms.SMS.Message != "Reply YES to confirm" || sms.Within != 0 {
		t.Fatalf("sms probe = %s", dump(sms))
	}
	if v := confirmOf(s.Scenarios[2]).Conversation.InProgress(); v == nil || !*v {
		t.Error("the SMS confirmation does not ask for in_progress: true")
	}
	if st := stepOf(s.Scenarios[3], steps.CallStatus); st.Status.Want != "failure" || s.Scenarios[3].Probe().Within != steps.DefaultProbeWithin || st.Status.Pos.Line != 27 {
		t.Errorf("defaults: %s", dump(st))
	}
}

// TestConfirmDiagnostics checks one problem per snippet, at its position.
func TestConfirmDiagnostics(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		body    string // the scenario's keys after its name, indented 4
		at      string // line:col
		want    string
		warning bool
	}
	run := func(t *testing.T, tc testCase) {
		src := "scenarios:\n  - name: a\n" + tc.body
		s, ds := LoadFile("s.yaml", []byte(src))
		var found bool
		for _, d := range ds {
			if strings.HasPrefix(d.Pos.String(), "s.yaml:"+tc.at) && strings.Contains(d.String(), tc.want) {
				found = true
				if tc.warning != (d.Severity.String() == "warning") {
					t.Errorf("severity of %q is %s", d, d.Severity)
				}
			}
		}
		if !found {
			t.Errorf("no diagnostic at %s containing %q; got:\n%s", tc.at, tc.want, renderDiags(ds))
		}
		if tc.warning != (s != nil) {
			t.Errorf("loaded = %v, want %v:\n%s", s != nil, tc.warning, renderDiags(ds))
		}
	}
	const turns = "    turns: [{say: hi}]\n"
	for _, tc := range []testCase{
		{name: "field typo", body: turns + "    confirm: {conversation: {num_turn: 4}}\n", at: "4:30", want: `unknown key "num_turn" in confirm: conversation (did you mean "num_turns"?)`},
		{name: "camelCase field", body: turns + "    confirm: {conversation: {handoffReason: x}}\n", at: "4:30", want: `did you mean "handoff_reason"?`},
		{name: "intents at the top", body: turns + "    confirm: {conversation: {intents: [a]}}\n", at: "4:30", want: "under turns: {intents"},
		{name: "unknown confirm key", body: turns + "    confirm: {conversaton: {}}\n", at: "4:15", want: `did you mean "conversation"?`},
		{name: "field outside conversation", body: turns + "    confirm: {handoff: true}\n", at: "4:15", want: "handoff is a field of the record"},
		{name: "number not a number", body: turns + "    confirm: {conversation: {num_turns: many}}\n", at: "4:41", want: "conversation.num_turns must be a number"},
		{name: "number range inverted", body: turns + "    confirm: {conversation: {num_turns: {min: 5, max: 2}}}\n", at: "4:41", want: "min 5 is above max 2"},
		// The record counts in whole numbers: a bound that is not one
		// never holds (or, negative, always does), and judged the agent.
		{name: "number not whole", body: turns + "    confirm: {conversation: {num_turns: 2.5}}\n", at: "4:41", want: "conversation.num_turns: 2.5 is not a whole number 0 or more"},
		{name: "number negative", body: turns + "    confirm: {conversation: {num_ood: -1}}\n", at: "4:39", want: "conversation.num_ood: -1 is not a whole number 0 or more"},
		{name: "number share", body: turns + "    confirm: {conversation: {num_silences: 50%}}\n", at: "4:44", want: "conversation.num_silences: 0.5 is not a whole number 0 or more"},
		{name: "range bound not whole", body: turns + "    confirm: {conversation: {total_duration: {min: 0.5, max: 3}}}\n", at: "4:52", want: "conversation.total_duration: min: 0.5 is not a whole number 0 or more"},
		{name: "range max not whole", body: turns + "    confirm: {conversation: {num_turns: {max: 2.5}}}\n", at: "4:47", want: "conversation.num_turns: max: 2.5 is not a whole number 0 or more"},
		{name: "turns count not whole", body: turns + "    confirm: {conversation: {turns: {count: 1.5}}}\n", at: "4:45", want: "conversation.turns: count: 1.5 is not a whole number 0 or more"},
		{name: "number range empty", body: turns + "    confirm: {conversation: {num_turns: {}}}\n", at: "4:41", want: "the range has no bounds"},
		{name: "number value key", body: turns + "    confirm: {conversation: {num_turns: {value: 3}}}\n", at: "4:42", want: "write the number itself"},
		{name: "bool as word", body: turns + "    confirm: {conversation: {handoff: yes}}\n", at: "4:39", want: "conversation.handoff must be true or false"},
		{name: "text list", body: turns + "    confirm: {conversation: {channel: [a]}}\n", at: "4:39", want: "a list is not a matcher"},
		{name: "metric count negative", body: turns + "    confirm: {conversation: {metrics: {X: {count: -1}}}}\n", at: "4:51", want: "count must be 0 or more"},
		{name: "state bad presence", body: turns + "    confirm: {conversation: {state: {k: {present: maybe}}}}\n", at: "4:51", want: "must be true or false"},
		{name: "turns unknown key", body: turns + "    confirm: {conversation: {turns: {includes: [a]}}}\n", at: "4:38", want: "intents are checked under intents:"},
		{name: "turns agent_response", body: turns + "    confirm: {conversation: {turns: {agent_response: x}}}\n", at: "4:38", want: `did you mean "responses"?`},
		{name: "turns responses list", body: turns + "    confirm: {conversation: {turns: {responses: [a]}}}\n", at: "4:49", want: "a list is not a matcher"},
		{name: "intents empty", body: turns + "    confirm: {conversation: {turns: {intents: {}}}}\n", at: "4:47", want: "intents has no checks"},
		{name: "handoff_state id", body: turns + "    confirm: {handoff_state: {id: x}}\n", at: "4:31", want: "write shared_id:"},
		{name: "handoff_state empty shared id", body: turns + "    confirm: {handoff_state: {shared_id: \"\"}}\n", at: "4:42", want: "shared_id must not be empty"},
		{name: "handoff_state blank shared id", body: turns + "    confirm: {handoff_state: {shared_id: \" \"}}\n", at: "4:42", want: "shared_id must not be empty"},
		{name: "webhooks empty", body: turns + "    confirm: {webhooks: []}\n", at: "4:25", want: "webhooks must list at least one event"},
		{name: "webhooks typo warns", body: turns + "    confirm: {webhooks: [conversation.complete]}\n", at: "4:26", want: `did you mean "conversation.completed"?`, warning: true},
		{name: "webhooks unknown warns", body: turns + "    confirm: {webhooks: [call.recorded]}\n", at: "4:26", want: "not one the reference names", warning: true},
		{name: "webhooks duplicate warns", body: turns + "    confirm: {webhooks: [handoff.created, handoff.created]}\n", at: "4:43", want: "listed twice", warning: true},
		{name: "empty confirm warns", body: turns + "    confirm: {}\n", at: "4:5", want: "confirm has no checks", warning: true},
		{name: "recording as word", body: turns + "    confirm: {recording: yes}\n", at: "4:26", want: "recording must be true or false"},
		{name: "recording as audio", body: turns + "    confirm: {audio: true}\n", at: "4:15", want: `did you mean "recording"?`},
		{name: "recording of a web chat", body: "    start: {channel: WEBCHAT}\n" + turns + "    confirm: {recording: true}\n", at: "5:15",
			want: `scenario "a" runs on the channel WEBCHAT, whose conversations have no recording`},
		{name: "recording over messaging", body: "    via: messaging\n" + turns + "    confirm: {recording: true}\n", at: "5:15",
			want: `scenario "a" runs on the channel WEBCHAT, whose conversations have no recording`},
		{name: "recording of an SMS", body: "    probe: {sms: {to: \"+447700900002\", message: hi}}\n    confirm: {recording: true}\n", at: "4:15",
			want: "an SMS probe's conversation has no recording: only voice conversations (VOICE-SIP) have one"},
		{name: "probe with turns", body: turns + "    probe: {outbound_call: {to: \"+447700900001\"}}\n", at: "3:5", want: "a probe scenario has no turns"},
		{name: "probe with greeting", body: "    greeting: {response: hi}\n    probe: {outbound_call: {to: \"+447700900001\"}}\n", at: "3:5", want: "a probe scenario has no greeting"},
		{name: "probe both kinds", body: "    probe: {outbound_call: {to: \"+447700900001\"}, sms: {to: \"+447700900001\", message: hi}}\n", at: "3:51", want: "not both"},
		{name: "probe typo", body: "    probe: {outbound: {to: \"+447700900001\"}}\n", at: "3:13", want: `did you mean "outbound_call"?`},
		{name: "call without to", body: "    probe: {outbound_call: {metadata: {a: 1}}}\n", at: "3:13", want: "outbound_call needs to:"},
		{name: "call bad number", body: "    probe: {outbound_call: {to: call-me}}\n", at: "3:33", want: `"call-me" is not a phone number`},
		{name: "metadata not a mapping", body: "    probe: {outbound_call: {to: \"+447700900001\", metadata: x}}\n", at: "3:60", want: "metadata must be a mapping"},
		{name: "status not final", body: "    probe: {outbound_call: {to: \"+447700900001\"}, expect_status: calling}\n", at: "3:66", want: `expect_status "calling" is not a final call status`},
		{name: "status typo", body: "    probe: {outbound_call: {to: \"+447700900001\"}, expect_status: sucess}\n", at: "3:66", want: `did you mean "success"?`},
		{name: "within without unit", body: "    probe: {outbound_call: {to: \"+447700900001\"}, within: 120}\n", at: "3:59", want: "has no unit"},
		{name: "sms status", body: "    probe: {sms: {to: \"+447700900002\", message: hi}, expect_status: success}\n", at: "3:54", want: "expect_status applies to outbound_call probes"},
		{name: "sms without message", body: "    probe: {sms: {to: \"+447700900002\"}}\n", at: "3:13", want: "sms needs message:"},
		{name: "sms empty message", body: "    probe: {sms: {to: \"+447700900002\", message: \" \"}}\n", at: "3:49", want: "message must not be empty"},
		{name: "sms text key", body: "    probe: {sms: {to: \"+447700900002\", text: hi}}\n", at: "3:40", want: `did you mean "message"?`},
		{name: "sms without confirm warns", body: "    probe: {sms: {to: \"+447700900002\", message: hi}}\n", at: "2:5", want: "has no confirm", warning: true},
		{name: "unknown variable in metadata", body: "    probe: {outbound_call: {to: \"+447700900001\", metadata: {who: \"${nobody}\"}}}\n", at: "3:67", want: "unknown variable ${nobody}"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestConfirmWithExamplesAndVars(t *testing.T) {
	t.Parallel()
	s := mustLoad(t, `scenarios:
  - name: calls
    vars: {reason: reminder}
    examples: [{number: "+447700900001"}, {number: "+447700900002"}]
    probe: {outbound_call: {to: "${number}", metadata: {reason: "${reason}"}}}
    confirm: {conversation: {to_number: "${number}"}}
`)
	if len(s.Scenarios) != 2 {
		t.Fatalf("%d scenarios, want 2", len(s.Scenarios))
	}
	for _, sc := range s.Scenarios {
		if sc.Probe() == nil || sc.Probe().Call.To != "${number}" || confirmOf(sc) == nil {
			t.Errorf("scenario %s: %s", sc.Name, dump(sc.Steps))
		}
	}
}

// TestConfirmationsDocLoads keeps the format block of docs/confirmations.md
// loadable.
func TestConfirmationsDocLoads(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../docs/confirmations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "```yaml\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("no yaml block in docs/confirmations.md")
	}
	s, ds := LoadFile("doc.yaml", []byte(block))
	if len(ds) > 0 || s == nil || len(s.Scenarios) != 3 {
		t.Fatalf("the format block does not load cleanly:\n%s", renderDiags(ds))
	}
}
