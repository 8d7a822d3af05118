package scenario

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLintParity loads the same conversation written in YAML and as a
// feature and requires the same verdict of lint: each problem one format
// reports, the other reports too, at its own file:line:col and with the
// same severity (a feature's message names its step before the problem).
func TestLintParity(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name          string
		yaml, feature string
		// want is each format's rendered diagnostics, one per line,
		// reduced to "file:line:col: [warning: ]" and a part of the
		// message both formats share.
		wantYAML, wantFeature []string
	}
	run := func(t *testing.T, tc testCase) {
		for _, f := range []struct {
			path, src string
			want      []string
		}{{"s.yaml", tc.yaml, tc.wantYAML}, {"s.feature", tc.feature, tc.wantFeature}} {
			_, ds := Load(fstest.MapFS{f.path: {Data: []byte(f.src)}}, []string{f.path})
			var got []string
			for _, d := range ds {
				got = append(got, d.String())
			}
			if len(got) != len(f.want) {
				t.Errorf("%s: %d diagnostics, want %d:\n%s", f.path, len(got), len(f.want), strings.Join(got, "\n"))
				continue
			}
			for i, w := range f.want {
				at, part, _ := strings.Cut(w, " ~ ")
				if !strings.HasPrefix(got[i], at) || !strings.Contains(got[i], part) {
					t.Errorf("%s: diagnostic\n  %s\nwant it to start %q and contain %q", f.path, got[i], at, part)
				}
			}
		}
	}
	for _, tc := range []testCase{
		{
			name: "a webhook event the reference does not name",
			yaml: `scenarios:
  - name: hook
    agent: clinic
    turns:
      - say: I have chest pain
    confirm:
      webhooks: [handoff.create]
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: hook
    When the user says "I have chest pain"
    Then a "handoff.create" webhook arrives
`,
			wantYAML:    []string{`s.yaml:7:18: warning: ~ webhook event "handoff.create" is not one the reference names; it is expected as written (did you mean "handoff.created"?)`},
			wantFeature: []string{`s.feature:6:12: warning: ~ webhook event "handoff.create" is not one the reference names; it is expected as written (did you mean "handoff.created"?)`},
		},
		{
			// An alert event names no conversation: confirmed, it was
			// awaited for the whole bound and failed the agent (exit 1)
			// on a check that cannot hold.
			name: "an alert event confirmed of a conversation",
			yaml: `scenarios:
  - name: alert
    agent: restaurant
    turns: [{say: a table for 12 at 7pm}]
    confirm: {webhooks: alerts.triggered}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: alert
    When the user says "a table for 12 at 7pm"
    Then an "alerts.resolved" webhook arrives
`,
			wantYAML:    []string{`s.yaml:5:25: webhook event alerts.triggered ~ carries no conversation`},
			wantFeature: []string{`s.feature:6:13: webhook event alerts.resolved ~ carries no conversation`},
		},
		{
			// A similarity threshold that checks next to nothing, as a
			// share in one format and a percentage in the other.
			name: "a similarity threshold of 1 and one of 5%",
			yaml: `scenarios:
  - name: similar
    turns:
      - say: a table please
        expect: {response: {similar: {to: "How many guests?", min: 1}}}
      - say: four
        expect: {response: {similar: {to: "What time?", min: "5%"}}}
`,
			feature: `Feature: F

  Scenario: similar
    When the user says "a table please"
    Then the agent's reply is similar to "How many guests?" with at least 1
    When the user says "four"
    Then the agent's reply is similar to "What time?" with at least 5%
`,
			wantYAML: []string{`s.yaml:5:68: warning: ~ passes only a reply with the very words of the text`,
				`s.yaml:7:62: warning: ~ passes nearly any reply: unrelated replies score up to 0.1`},
			wantFeature: []string{`s.feature:5:75: warning: ~ passes only a reply with the very words of the text`,
				`s.feature:7:69: warning: ~ passes nearly any reply: unrelated replies score up to 0.1`},
		},
		{
			name: "a count of the record that is not a whole number",
			yaml: `scenarios:
  - name: count
    agent: clinic
    turns: [{say: I have chest pain}]
    confirm: {conversation: {handoff: true, num_turns: {min: 1.5}}}
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: count
    When the user says "I have chest pain"
    Then the conversation record shows:
      | handoff   | true         |
      | num_turns | at least 1.5 |
`,
			wantYAML:    []string{`s.yaml:5:62: conversation.num_turns: min: 1.5 ~ is not a whole number 0 or more`},
			wantFeature: []string{`s.feature:8:21: ~ num_turns: 1.5 is not a whole number 0 or more`},
		},
		{
			// Run, the confirmation failed the agent ("there is no
			// conversation to confirm") after the call did as asked.
			name: "a confirmation after a call expected to fail",
			yaml: `scenarios:
  - name: unreachable
    agent: clinic
    probe: {outbound_call: {to: "+447700900001"}, expect_status: failure}
    confirm: {conversation: {channel: VOICE-SIP}}
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: unreachable
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "failure"
    And the conversation record shows:
      | channel | VOICE-SIP |
`,
			wantYAML:    []string{`s.yaml:5:5: a confirmation after a call expected to end in failure ~ has no conversation to confirm`},
			wantFeature: []string{`s.feature:7:5: a confirmation after a call expected to end in failure ~ has no conversation to confirm`},
		},
		{
			// The bound of a call's status wait, on an SMS that has
			// none: of no effect in either format.
			name: "within on an SMS probe",
			yaml: `scenarios:
  - name: text
    agent: clinic
    probe: {sms: {to: "+447700900002", message: "Reply YES"}, within: 1m}
    confirm: {conversation: {in_progress: true}}
`,
			feature: `Feature: F

  @agent:clinic @within:1m
  Scenario: text
    When the SMS "Reply YES" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress | true |
`,
			wantYAML:    []string{`s.yaml:4:63: warning: ~ places no call`},
			wantFeature: []string{`s.feature:3:17: warning: ~ places no call`},
		},
		{
			// Run, each waited out its bound and failed the agent.
			name: "an SMS probe's conversation confirmed ended",
			yaml: `scenarios:
  - name: text
    agent: clinic
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm:
      conversation: {in_progress: false}
      webhooks: [conversation.completed]
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: text
    When the SMS "Reply YES" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress | false |
    And a "conversation.completed" webhook arrives
`,
			wantYAML: []string{`s.yaml:6:22: warning: ~ waits for the end of an SMS probe's conversation, which stays open for the reply`,
				`s.yaml:7:18: warning: ~ waits for the end of an SMS probe's conversation, which stays open for the reply`},
			wantFeature: []string{`s.feature:7:9: warning: ~ waits for the end of an SMS probe's conversation, which stays open for the reply`,
				`s.feature:8:5: warning: ~ waits for the end of an SMS probe's conversation, which stays open for the reply`},
		},
		{
			// What may end within the bound is not warned of: a call's
			// conversation, and an SMS's other fields.
			name: "probes confirmed as they may end",
			yaml: `scenarios:
  - name: call
    agent: clinic
    probe: {outbound_call: {to: "+447700900001"}}
    confirm: {conversation: {in_progress: false}, webhooks: [conversation.completed]}
  - name: text
    agent: clinic
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
    confirm: {conversation: {in_progress: true, handoff: false}, webhooks: [handoff.created]}
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: call
    When an outbound call is placed to "+447700900001"
    Then the conversation record shows:
      | in_progress | false |
    And a "conversation.completed" webhook arrives

  @agent:clinic
  Scenario: text
    When the SMS "Reply YES" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress | true  |
      | handoff     | false |
    And a "handoff.created" webhook arrives
`,
		},
		{
			name: "a capture named like an examples column",
			yaml: `scenarios:
  - name: shadows
    agent: restaurant
    examples: [{n: "3"}]
    turns:
      - say: "${n} people at 7pm"
        capture: {n: {state.party_size: ''}}
      - say: "a table for ${n}"
        expect: {response: {contains: "${n}"}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario Outline: shadows
    When the user says "${n} people at 7pm"
    Then I remember "n" from the state "party_size"
    When the user says "a table for ${n}"
    Then the agent's reply contains "${n}"

    Examples:
      | n |
      | 3 |
`,
			wantYAML:    []string{"s.yaml:7:19: warning: ~ capture n replaces the variable of the same name from here on"},
			wantFeature: []string{"s.feature:6:21: warning: ~ capture n replaces the variable of the same name from here on"},
		},
		{
			name: "a name captured twice",
			yaml: `scenarios:
  - name: twice
    agent: restaurant
    turns:
      - say: hi
        capture: {node: {node: '.+'}}
      - say: a table for 2 at 7pm
        capture: {node: {node: '.+'}}
        expect: {response: {contains: "${node}"}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: twice
    When the user says "hi"
    Then I remember "node" from the reply matching ".+"
    When the user says "a table for 2 at 7pm"
    Then I remember "node" from the reply matching ".+"
    And the agent's reply contains "${node}"
`,
			wantYAML:    []string{"s.yaml:8:19: warning: ~ capture node replaces the variable"},
			wantFeature: []string{"s.feature:8:21: warning: ~ capture node replaces the variable"},
		},
		{
			name: "a malformed state key to capture",
			yaml: `scenarios:
  - name: key
    agent: restaurant
    turns:
      - say: hi
        capture: {r: {state.a..b: '.+'}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: key
    When the user says "hi"
    Then I remember "r" from the state "a..b"
`,
			wantYAML:    []string{`s.yaml:6:23: ~ cannot read field "state.a..b"`},
			wantFeature: []string{`s.feature:6:40: ~ invalid state key "a..b"`},
		},
		{
			name: "a malformed state key to check",
			yaml: `scenarios:
  - name: key
    agent: restaurant
    turns:
      - say: hi
        expect: {state: {a..b: '1'}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: key
    When the user says "hi"
    Then the state "a..b" is "1"
`,
			wantYAML:    []string{`s.yaml:6:26: ~ state: invalid key "a..b"`},
			wantFeature: []string{`s.feature:6:20: ~ invalid state key "a..b"`},
		},
		{
			name: "a reply expected in 0 ms",
			yaml: `scenarios:
  - name: fast
    agent: restaurant
    turns:
      - say: hi
        expect: {latency_ms: {max: 0}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: fast
    When the user says "hi"
    Then the reply came within 0 ms
`,
			wantYAML:    []string{"s.yaml:6:36: ~ must be above 0, not 0"},
			wantFeature: []string{"s.feature:6:32: ~ must be above 0, not 0"},
		},
		{
			name: "a bound past the whole numbers a suite holds",
			yaml: `scenarios:
  - name: slow
    agent: restaurant
    turns:
      - say: hi
        expect: {latency_ms: 9223372036854, metrics: {CALL_TURN: {count: 4294967296}}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: slow
    When the user says "hi"
    Then the reply came within 9223372036854 ms
    And the metric "CALL_TURN" was written 4294967296 times
`,
			wantYAML:    []string{"s.yaml:6:30: ~ 9223372036854 is out of range", "s.yaml:6:74: ~ 4294967296 is out of range"},
			wantFeature: []string{"s.feature:6:32: ~ 9223372036854 is out of range", "s.feature:7:44: ~ 4294967296 is out of range"},
		},
		{
			name: "an SMS probe that nothing confirms, after setup",
			yaml: `scenarios:
  - name: sms
    agent: clinic
    start: {channel: SMS}
    probe: {sms: {to: "+447700900002", message: "Reply YES"}}
`,
			feature: `Feature: F

  @agent:clinic
  Scenario: sms
    Given the channel "SMS"
    When the SMS "Reply YES" is sent to "+447700900002"
`,
			wantYAML: []string{"s.yaml:2:5: warning: ~ only checks that the SMS is accepted",
				"s.yaml:4:5: warning: ~ configures a debug-chat session and has no effect on a probe"},
			wantFeature: []string{"s.feature:4:3: warning: ~ only checks that the SMS is accepted",
				"s.feature:5:5: warning: ~ configures a debug-chat session and has no effect on a probe"},
		},
		{
			name: "an outlined SMS probe, each row at the outline",
			yaml: `scenarios:
  - name: sms
    agent: clinic
    examples: [{n: "+447700900002"}, {n: "+447700900001"}]
    probe: {sms: {to: "${n}", message: "Reply YES"}}
`,
			feature: `Feature: F

  @agent:clinic
  Scenario Outline: sms
    When the SMS "Reply YES" is sent to "<n>"

    Examples:
      | n             |
      | +447700900002 |
      | +447700900001 |
`,
			wantYAML: []string{`s.yaml:2:5: warning: ~ probe scenario "sms [n=+447700900002]" has no confirm`,
				`s.yaml:2:5: warning: ~ probe scenario "sms [n=+447700900001]" has no confirm`},
			wantFeature: []string{`s.feature:4:3: warning: ~ probe scenario "sms [n=+447700900002]" has no confirmation step`,
				`s.feature:4:3: warning: ~ probe scenario "sms [n=+447700900001]" has no confirmation step`},
		},
		{
			// A reference is at its own line and column in a DocString,
			// as in a YAML literal block; before, at the step or the
			// block's indicator.
			name: "a malformed reference in a multi-line say",
			yaml: `scenarios:
  - name: m
    agent: restaurant
    turns:
      - say: |
          hello
            token ${env:}
        expect: {response: {contains: Welcome}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: m
    When the user says:
      """
      hello
        token ${env:}
      """
    Then the agent's reply contains "Welcome"
`,
			wantYAML:    []string{"s.yaml:7:19: ~ invalid environment variable name in ${env:}"},
			wantFeature: []string{"s.feature:8:15: ~ invalid environment variable name in ${env:}"},
		},
		{
			name: "an unknown variable in a multi-line say",
			yaml: `scenarios:
  - name: m
    agent: restaurant
    turns:
      - say: |

          é ${nobody}
        expect: {response: {contains: Welcome}}
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario: m
    When the user says:
      """

      é ${nobody}
      """
    Then the agent's reply contains "Welcome"
`,
			wantYAML:    []string{"s.yaml:7:13: ~ unknown variable ${nobody}"},
			wantFeature: []string{"s.feature:8:9: ~ unknown variable ${nobody}"},
		},
		{
			// A name is one line (badName): a YAML escape and an
			// Examples cell's \n both put a line end in one, each
			// refused at the text that wrote it.
			name: "a scenario name with a line end",
			yaml: `scenarios:
  - name: "say a\nb"
    agent: restaurant
    turns: [{say: hi, expect: {response: {contains: Welcome}}}]
`,
			feature: `Feature: F

  @agent:restaurant
  Scenario Outline: say <x>
    When the user says "hi"
    Then the agent's reply contains "Welcome"

    Examples:
      | x    |
      | a\nb |
`,
			wantYAML:    []string{"s.yaml:2:11: ~ scenario name holds control character U+000A, which is not allowed"},
			wantFeature: []string{"s.feature:10:9: ~ scenario name holds control character U+000A, which is not allowed"},
		},
		{
			name: "a suite name with a control character",
			yaml: `suite: "F\a"
scenarios:
  - name: s
    agent: restaurant
    turns: [{say: hi, expect: {response: {contains: Welcome}}}]
`,
			feature:     "Feature: F\a\n\n  @agent:restaurant\n  Scenario: s\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n",
			wantYAML:    []string{"s.yaml:1:8: ~ suite name holds control character U+0007, which is not allowed"},
			wantFeature: []string{"s.feature:1:11: ~ control character U+0007 is not allowed"},
		},
		{
			name:    "a name with NEL, which a file may hold",
			yaml:    "suite: \"F\\N\"\nscenarios:\n  - name: \"s\\Nt\"\n    agent: restaurant\n    turns: [{say: hi, expect: {response: {contains: Welcome}}}]\n",
			feature: "Feature: F\u0085G\n\n  @agent:restaurant\n  Scenario: s\u0085t\n    When the user says \"hi\"\n    Then the agent's reply contains \"Welcome\"\n",
			wantYAML: []string{"s.yaml:1:8: ~ suite name holds control character U+0085",
				"s.yaml:3:11: ~ scenario name holds control character U+0085"},
			wantFeature: []string{"s.feature:1:1: ~ suite name holds control character U+0085",
				"s.feature:4:3: ~ scenario name holds control character U+0085"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}
