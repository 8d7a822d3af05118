package scenario

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/steps"
)

func loadOneFeature(t *testing.T, src string) ([]*Suite, diag.Diagnostics) {
	t.Helper()
	return Load(fstest.MapFS{"p.feature": {Data: []byte(src)}}, []string{"p.feature"})
}

// TestFeatureProbeBecomesTheScenarioProbe: the probe step is recorded as
// the scenario's Probe (what live safety and the runner read), @within
// bounds its call, and webhook steps are listed for the receiver.
func TestFeatureProbeBecomesTheScenarioProbe(t *testing.T) {
	t.Parallel()
	suites, diags := loadOneFeature(t, `@agent:clinic
Feature: probes

  @within:45s
  Scenario: call
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "failure"

  Scenario: sms
    When the SMS "Reply YES" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress | true |
    And a "conversation.completed" webhook arrives
    And a "handoff.created" webhook arrives
    And a "conversation.completed" webhook arrives

  Scenario: chat
    When the user says "hi"
    Then the agent's reply contains "hello"
`)
	// Only the warnings that an SMS's conversation does not complete
	// while it awaits the reply, one per conversation.completed step.
	ended := 0
	for _, d := range diags {
		if d.Severity == diag.Warning && strings.Contains(d.Message, "waits for the end of an SMS probe's conversation") {
			ended++
		}
	}
	if diags.HasErrors() || len(diags) != 2 || ended != 2 {
		t.Fatalf("diagnostics: %v", diags)
	}
	call, sms, chat := suites[0].Scenarios[0], suites[0].Scenarios[1], suites[0].Scenarios[2]
	pr := call.Probe()
	status := stepOf(call, steps.CallStatus)
	if pr == nil || pr.Call == nil || pr.Call.To != "+447700900001" || pr.Call.Pos.String() != "p.feature:6:5" ||
		pr.Within != 45*time.Second || status.Status.Want != "failure" || status.Status.Pos.Line != 7 {
		t.Errorf("call probe %+v, status %+v", pr, status)
	}
	if pr := sms.Probe(); pr == nil || pr.SMS == nil || pr.SMS.To != "+447700900002" || pr.SMS.Message != "Reply YES" || pr.SMS.Pos.Line != 10 {
		t.Errorf("sms probe %+v", pr)
	}
	if got := strings.Join(sms.WebhookEvents(), ","); got != "conversation.completed,handoff.created" {
		t.Errorf("webhook events %s", got)
	}
	if chat.Probe() != nil || chat.WebhookEvents() != nil {
		t.Errorf("chat scenario: probe %+v, events %v", chat.Probe(), chat.WebhookEvents())
	}
	if call.Probe().Within != 45*time.Second || sms.Probe().Within != 0 {
		t.Errorf("within %s, %s", call.Probe().Within, sms.Probe().Within)
	}
}

func TestFeatureProbeRules(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name  string
		body  string
		want  []string // "line:col: text"
		error bool
	}
	run := func(t *testing.T, tc testCase) {
		_, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  Scenario: s\n"+tc.body)
		if diags.HasErrors() != tc.error {
			t.Errorf("errors %v, want %v: %v", diags.HasErrors(), tc.error, diags)
		}
		for _, w := range tc.want {
			at, text, _ := strings.Cut(w, ": ")
			found := false
			for _, d := range diags {
				if strings.HasSuffix(d.Pos.String(), ":"+at) && strings.Contains(d.Message+" "+d.Hint, text) {
					found = true
				}
			}
			if !found {
				t.Errorf("no diagnostic %q in %v", w, diags)
			}
		}
	}
	for _, tc := range []testCase{
		{"probe after a turn", "    When the user says \"hi\"\n    And an outbound call is placed to \"+447700900001\"\n",
			[]string{"6:5: comes after the conversation started", "6:5: a probe replaces the debug chat"}, true},
		{"turn after a probe", "    When the SMS \"hi\" is sent to \"+447700900002\"\n    And the user says \"yes\"\n",
			[]string{"6:5: needs a debug chat, but the scenario starts from a probe at p.feature:5:5"}, true},
		{"reply check after a probe", "    When an outbound call is placed to \"+447700900001\"\n    Then the agent's reply contains \"hi\"\n",
			[]string{"6:5: needs a debug chat"}, true},
		{"two probes", "    When an outbound call is placed to \"+447700900001\"\n    And the SMS \"hi\" is sent to \"+447700900002\"\n",
			[]string{"6:5: already starts from a probe", "6:5: one probe per scenario"}, true},
		{"status without a call", "    When the SMS \"hi\" is sent to \"+447700900002\"\n    Then the call ends with status \"success\"\n",
			[]string{"6:5: has no call to wait for"}, true},
		{"bad number", "    When an outbound call is placed to \"call me\"\n",
			[]string{`5:5: "call me" is not a phone number`}, true},
		{"bad status", "    When an outbound call is placed to \"+447700900001\"\n    Then the call ends with status \"queued\"\n",
			[]string{`6:36: "queued" is not a final call status`}, true},
		{"unknown record field", "    When the user says \"hi\"\n    Then the conversation record shows:\n      | num_turn | 2 |\n",
			[]string{`7:9: unknown field "num_turn"`, `7:9: did you mean "num_turns"?`}, true},
		{"call status without a probe", "    When the user says \"hi\"\n    Then the call ends with status \"success\"\n",
			[]string{"6:5: has no call to wait for"}, true},
		// As YAML refuses outbound_call: {to: ""}.
		{"empty number", "    When an outbound call is placed to \"\"\n    Then the call ends with status \"success\"\n",
			[]string{`5:5: "" is not a phone number`}, true},
		{"sms number", "    When the SMS \"hi\" is sent to \"12\"\n    Then the conversation record shows:\n      | num_turns | 1 |\n",
			[]string{`5:5: "12" is not a phone number`}, true},
		{"reference number is checked when run", "    When an outbound call is placed to \"${env:PROBE_NUMBER}\"\n", nil, false},
		{"call from a number", "    When an outbound call is placed to \"+447700900001\" from \"+442071230002\"\n    Then the call ends with status \"success\"\n", nil, false},
		{"call from no number", "    When an outbound call is placed to \"+447700900001\" from \" \"\n",
			[]string{`5:61: the agent number is empty`}, true},
		{"sms from a bad number", "    When the SMS \"hi from us\" is sent to \"+447700900002\" from \"reception\"\n    Then the conversation record shows:\n      | num_turns | 1 |\n",
			[]string{`5:5: "reception" is not a phone number`}, true},
		{"sms saying from, from no number", "    When the SMS \"hi from us\" is sent to \"+447700900002\"\n    Then the conversation record shows:\n      | num_turns | 1 |\n", nil, false},
		{"recording of an SMS", "    When the SMS \"hi\" is sent to \"+447700900002\"\n    Then the conversation has a recording\n",
			[]string{"6:5: an SMS probe's conversation has no recording"}, true},
		{"no recording of an SMS", "    When the SMS \"hi\" is sent to \"+447700900002\"\n    Then the conversation has no recording\n", nil, false},
		{"recording of a chat", "    Given the channel \"CHAT\"\n    When the user says \"hi\"\n    Then the conversation has a recording\n",
			[]string{`7:5: scenario "s" runs on the channel CHAT, whose conversations have no recording`}, true},
		{"no recording of a chat", "    Given the channel \"CHAT\"\n    When the user says \"hi\"\n    Then the conversation has no recording\n", nil, false},
		{"recording of a voice chat", "    Given the channel \"VOICE-SIP\"\n    When the user says \"hi\"\n    Then the conversation has a recording\n", nil, false},
		{"recording of a chat on the default channel", "    When the user says \"hi\"\n    Then the conversation has a recording\n", nil, false},
		{"recording of a call", "    When an outbound call is placed to \"+447700900001\"\n    Then the conversation has a recording\n", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	t.Run("within without a call", func(t *testing.T) {
		suites, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  @within:1m\n  Scenario: s\n    When the user says \"hi\"\n    Then the agent's reply contains \"hello\"\n")
		if diags.HasErrors() || len(suites) != 1 || len(diags) != 1 || diags[0].Severity != diag.Warning || !strings.Contains(diags[0].Message, "places no call") || diags[0].Pos.Line != 4 {
			t.Errorf("diagnostics %v", diags)
		}
	})
	t.Run("within on an SMS probe", func(t *testing.T) {
		suites, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  @within:1m\n  Scenario: s\n    When the SMS \"hi\" is sent to \"+447700900001\"\n    Then the conversation record shows:\n      | num_turns | 1 |\n")
		if diags.HasErrors() || len(suites) != 1 || len(diags) != 1 || !strings.Contains(diags[0].Message, "places no call") || diags[0].Pos.Line != 4 {
			t.Errorf("diagnostics %v", diags)
		}
	})
	t.Run("bad within", func(t *testing.T) {
		_, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  @within:soon\n  Scenario: s\n    When an outbound call is placed to \"+447700900001\"\n")
		if !diags.HasErrors() || !strings.Contains(diags[0].Message, "within must be a duration") {
			t.Errorf("diagnostics %v", diags)
		}
	})
}

// TestBackgroundSetupBeforeAProbe: a Background's setup step serves the
// chat scenarios of its feature, so a probe scenario under it is not
// warned that the step has no effect on it; its own setup step is.
func TestBackgroundSetupBeforeAProbe(t *testing.T) {
	t.Parallel()
	_, diags := loadOneFeature(t, `@agent:clinic
Feature: f
  Background:
    Given the channel "SMS"
    And the integration attribute "tier" is "gold"

  Scenario: call
    When an outbound call is placed to "+447700900001"

  Scenario: own setup
    Given the ASR language "en-GB"
    And the variant "v2"
    When an outbound call is placed to "+447700900001"

  Scenario: own TTS language
    Given the TTS language "en-GB"
    When an outbound call is placed to "+447700900001"

  Scenario: own variant
    Given the variant "v2"
    When an outbound call is placed to "+447700900001"

  Scenario: own attribute, next to the Background's
    Given the integration attribute "region" is "north"
    When an outbound call is placed to "+447700900001"

  Scenario: chat
    When the user says "hi"
    Then the agent says "hi"
`)
	var got []string
	for _, d := range diags {
		if strings.Contains(d.Message, "no effect on a probe") {
			got = append(got, d.Pos.String()+": "+d.Message)
		}
	}
	// Once per scenario, at its first such step.
	want := []string{`p.feature:11:5: setup step "Given the ASR language \"en-GB\"" configures a debug-chat session and has no effect on a probe`,
		`p.feature:16:5: setup step "Given the TTS language \"en-GB\"" configures a debug-chat session and has no effect on a probe`,
		`p.feature:20:5: setup step "Given the variant \"v2\"" configures a debug-chat session and has no effect on a probe`,
		`p.feature:24:5: setup step "Given the integration attribute \"region\" is \"north\"" configures a debug-chat session and has no effect on a probe`}
	if !slices.Equal(got, want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
}

// TestMalformedReferenceReportedOnce: a malformed ${ in a step's argument,
// DocString or table cell is one mistake, reported once where it is
// written, not again at the step by the compiler of its argument.
func TestMalformedReferenceReportedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want string // line:col of the one diagnostic
	}{
		{"    Then the node trace includes \"${x\"\n", "6:35"},
		{"    Then the agent's reply matches \"${x\"\n", "6:37"},
		{"    Then the handoff state \"${k\" is \"v\"\n", "6:29"},
		{"    Then the state includes:\n      | ${k | v |\n", "7:9"},
		{"    Then the conversation record shows:\n      | state.${k | v |\n", "7:9"},
		{"    Then a \"handoff.created\" webhook arrives\n    And the metric \"${m\" is \"1\"\n", "7:21"},
	} {
		_, diags := loadOneFeature(t, "@agent:clinic\nFeature: f\n\n  Scenario: s\n    When the user says \"hi\"\n"+tc.body)
		var errs []string
		for _, d := range diags {
			if d.Severity == diag.Error {
				errs = append(errs, d.Pos.String()+": "+d.Message)
			}
		}
		if len(errs) != 1 || !strings.HasPrefix(errs[0], "p.feature:"+tc.want+": unterminated ${") {
			t.Errorf("%s: errors\n%s\nwant one, unterminated ${ at %s", tc.body, strings.Join(errs, "\n"), tc.want)
		}
	}
}
