package runner

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// confirmParityYAML and confirmParityFeature are the same confirmations
// and probes written in both formats, scenario for scenario (AGENT is the
// clinic agent's id).
const confirmParityYAML = `suite: confirmations
agent: AGENT
scenarios:
  - name: urgent handoff is recorded
    turns:
      - say: I have chest pain
    confirm:
      conversation:
        channel: WEBCHAT
        handoff: true
        handoff_destination: on_call_nurse
        num_turns: {min: 2}
        in_progress: false
      handoff_state: {data: {reason: urgent_symptoms}}
      webhooks: [conversation.completed, handoff.created]
  - name: wrong destination
    turns:
      - say: I have chest pain
    confirm:
      conversation:
        handoff_destination: reception
  - name: wrong state in the record
    turns:
      - say: I'd like to book an appointment on Tuesday at 10am
    confirm:
      conversation:
        state: {day: monday}
  - name: no handoff state for a goodbye
    turns:
      - say: goodbye
    confirm:
      handoff_state: {data: {reason: urgent_symptoms}}
  - name: call connects
    probe: {outbound_call: {to: "+447700900001"}, within: 5s}
    confirm: {conversation: {channel: VOICE-SIP, num_turns: {min: 1}}}
  - name: unreachable number fails as expected
    probe: {outbound_call: {to: "` + unreachable + `"}, expect_status: failure, within: 5s}
  - name: unreachable number fails the probe
    probe: {outbound_call: {to: "` + unreachable + `"}, within: 5s}
  - name: sms opens a conversation
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}
    confirm: {conversation: {in_progress: true, channel: SMS}}
  - name: unreachable number alone fails
    probe: {outbound_call: {to: "` + unreachable + `"}, within: 5s}
    retries: 1
  - name: a connecting call alone passes
    probe: {outbound_call: {to: "+447700900001"}, within: 5s}
`

const confirmParityFeature = `@agent:AGENT
Feature: confirmations

  Scenario: urgent handoff is recorded
    When the user says "I have chest pain"
    Then the conversation record shows:
      | field               | value         |
      | channel             | WEBCHAT       |
      | handoff             | true          |
      | handoff_destination | on_call_nurse |
      | num_turns           | at least 2    |
      | in_progress         | false         |
    And the handoff state "reason" is "urgent_symptoms"
    And a "conversation.completed" webhook arrives
    And a "handoff.created" webhook arrives

  Scenario: wrong destination
    When the user says "I have chest pain"
    Then the conversation record shows:
      | handoff_destination | reception |

  Scenario: wrong state in the record
    When the user says "I'd like to book an appointment on Tuesday at 10am"
    Then the conversation record shows:
      | state.day | monday |

  Scenario: no handoff state for a goodbye
    When the user says "goodbye"
    Then the handoff state "reason" is "urgent_symptoms"

  @within:5s
  Scenario: call connects
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"
    And the conversation record shows:
      | channel   | VOICE-SIP  |
      | num_turns | at least 1 |

  @within:5s
  Scenario: unreachable number fails as expected
    When an outbound call is placed to "` + unreachable + `"
    Then the call ends with status "failure"

  @within:5s
  Scenario: unreachable number fails the probe
    When an outbound call is placed to "` + unreachable + `"
    Then the call ends with status "success"

  Scenario: sms opens a conversation
    When the SMS "Reply YES to confirm" is sent to "+447700900002"
    Then the conversation record shows:
      | in_progress | true |
      | channel     | SMS  |

  # With no status or confirmation step, the call must succeed, as a YAML
  # probe without expect_status must, and its failure is retried alike.
  @within:5s @retries:1
  Scenario: unreachable number alone fails
    When an outbound call is placed to "` + unreachable + `"

  @within:5s
  Scenario: a connecting call alone passes
    When an outbound call is placed to "+447700900001"
`

// loadFiles loads inline files, failing on any error.
func loadFiles(t *testing.T, files map[string]string) []*scenario.Suite {
	t.Helper()
	fsys := fstest.MapFS{}
	var paths []string
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
		paths = append(paths, name)
	}
	suites, diags := scenario.Load(fsys, paths)
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	return suites
}

// TestConfirmFeatureParity runs the confirmations and probes of a YAML
// suite and of the same feature in one run, and requires the same
// verdicts, attempts and failure facts.
func TestConfirmFeatureParity(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	res := runWaitingOut(t, func() []*scenario.Suite {
		return loadFiles(t, map[string]string{
			"confirm.yaml":    strings.ReplaceAll(confirmParityYAML, "AGENT", e.clinic),
			"confirm.feature": strings.ReplaceAll(confirmParityFeature, "AGENT", e.clinic),
		})
	}, e.opts())
	if len(res.Files) != 2 {
		t.Fatalf("files: %d", len(res.Files))
	}
	feat, yml := res.Files[0], res.Files[1]
	if feat.Path != "confirm.feature" {
		feat, yml = yml, feat
	}
	// Call ids differ from run to run.
	sid := regexp.MustCompile(`OUT-[0-9a-f]+`)
	got, want := sid.ReplaceAllString(allFacts(feat), "OUT-x"), sid.ReplaceAllString(allFacts(yml), "OUT-x")
	if got != want {
		t.Errorf("feature facts:\n%s\nYAML facts:\n%s", got, want)
	}
	for _, st := range []string{"urgent handoff is recorded: passed", "call connects: passed", "sms opens a conversation: passed",
		"unreachable number fails as expected: passed", "wrong destination: failed", "unreachable number fails the probe: errored",
		"unreachable number alone fails: errored", "a connecting call alone passes: passed"} {
		if !strings.Contains(want, st) {
			t.Errorf("no %q in:\n%s", st, want)
		}
	}
	// Feature failures point at the step and name it; a row of the
	// record's table, at the row, as YAML points at the field's key.
	wants := map[string]struct{ pos, step, key string }{
		"wrong destination":              {"confirm.feature:20:9", "Then the conversation record shows:", "confirm.conversation.handoff_destination"},
		"wrong state in the record":      {"confirm.feature:25:9", "Then the conversation record shows:", "confirm.conversation.state.day"},
		"no handoff state for a goodbye": {"confirm.feature:29:5", `Then the handoff state "reason" is "urgent_symptoms"`, "confirm.handoff_state"},
		// A call's final status is no verdict on the agent: the case
		// errors at the step, named as a failure would be.
		"unreachable number fails the probe": {"confirm.feature:47:5", `Then the call ends with status "success"`, result.KindHTTP},
		"unreachable number alone fails":     {"confirm.feature:59:5", `When an outbound call is placed to "` + unreachable + `"`, result.KindHTTP},
	}
	for _, c := range feat.Cases {
		w, ok := wants[c.Name]
		if !ok {
			continue
		}
		if e := c.Last().Error; w.key == result.KindHTTP {
			if e == nil || e.Pos.String() != w.pos || e.Kind != w.key || !strings.HasPrefix(e.Message, w.step+": probe: call OUT-") {
				t.Errorf("%s: error %+v, want %s at %s by %q", c.Name, e, w.key, w.pos, w.step)
			}
			continue
		}
		fs := c.Last().Failures
		if len(fs) == 0 || fs[0].Pos.String() != w.pos || fs[0].Step != w.step || fs[0].Key != w.key {
			t.Errorf("%s: failures %+v, want %s at %s by %q", c.Name, fs, w.key, w.pos, w.step)
		}
	}
	// What was read is recorded as for YAML: the handoff and webhook
	// steps do not read the record the step before them read.
	first := feat.Cases[0].Last()
	var kinds []string
	for _, c := range first.Confirmations {
		kinds = append(kinds, c.Kind+":"+c.Subject)
	}
	if got := strings.Join(kinds, ","); got != "conversation:"+first.ConversationID+",handoff_state:"+first.ConversationID+",webhook:conversation.completed,webhook:handoff.created" {
		t.Errorf("confirmations = %s", got)
	}
	if call := feat.Cases[4].Last(); len(call.Confirmations) == 0 || !strings.HasPrefix(call.Confirmations[0].Subject, "OUT-") || call.ConversationID == "" || len(call.Turns) != 0 {
		t.Errorf("call probe: confirmations %+v, conversation %q, %d turns", call.Confirmations, call.ConversationID, len(call.Turns))
	}
}

// TestConfirmFeatureOnly covers what only features can write: a
// confirmation with no status step before it (the call must then
// succeed), and confirmations in the middle of a chat. (A confirmation
// after a call expected to fail is refused at load: TestLintParity.)
func TestConfirmFeatureOnly(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	src := `@agent:` + e.clinic + ` @within:5s
Feature: feature-only confirmations

  Scenario: confirmation awaits the call
    When an outbound call is placed to "` + unreachable + `"
    Then the conversation record shows:
      | channel | VOICE-SIP |

  Scenario: confirm mid-chat and after
    When the user says "hello"
    Then the conversation record shows:
      | in_progress | true |
      | num_turns   | at least 1 |
    When the user says "I have chest pain"
    Then the conversation record shows:
      | in_progress | false |
      | handoff     | true  |

  Scenario: record confirmed without a status step
    When an outbound call is placed to "+447700900001"
    Then the conversation record shows:
      | channel | VOICE-SIP |
    And the call ends with status "success"
`
	// An errored case is retried: its call did not end as the
	// confirmation needed, which is the platform's or the line's.
	opts := e.opts()
	opts.Retries = 1
	res, err := Run(context.Background(), loadFiles(t, map[string]string{"only.feature": src}), opts)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		status result.Status
		key    string
		line   int
		msg    string
	}
	wants := []want{
		{result.Errored, result.KindHTTP, 6, "ended with status failure, expected success"},
		{result.Passed, "", 0, ""},
		{result.Passed, "", 0, ""},
	}
	cases := res.Files[0].Cases
	if len(cases) != len(wants) {
		t.Fatalf("%d cases", len(cases))
	}
	for i, w := range wants {
		c := cases[i]
		if c.Status != w.status {
			t.Errorf("%s: %s, want %s%s", c.Name, c.Status, w.status, describe(c))
			continue
		}
		if w.key == "" {
			continue
		}
		if len(c.Attempts) != 2 {
			t.Errorf("%s: %d attempts, want the error retried", c.Name, len(c.Attempts))
		}
		if e := c.Last().Error; e == nil || e.Kind != w.key || e.Pos.Line != w.line || !strings.Contains(e.Message, w.msg) || len(c.Last().Failures) != 0 {
			t.Errorf("%s: error %+v, failures %+v, want %s at line %d with %q", c.Name, e, c.Last().Failures, w.key, w.line, w.msg)
		}
	}
}

// TestConfirmFeatureConfig: feature probes and confirmations meet the
// same configuration rules as YAML ones (a number outside probe_numbers,
// webhooks without a receiver).
func TestConfirmFeatureConfig(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	src := `@agent:` + e.clinic + `
Feature: config

  Scenario: webhooks need a receiver
    When the user says "I have chest pain"
    Then a "handoff.created" webhook arrives

  Scenario: number not allowed
    When the SMS "hi" is sent to "+447700900002"

  Scenario: a value that cannot be expanded
    When the user says "hello"
    Then the handoff state "${env:AGENTTEST_TEST_NO_SUCH_VARIABLE}" is "x"
`
	opts := e.opts()
	opts.Webhooks = nil
	opts.AllowNumber = func(n string) bool { return n == "+447700900001" }
	res, err := Run(context.Background(), loadFiles(t, map[string]string{"config.feature": src}), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"needs a webhook receiver", "+447700900002 is not listed in the target's probe_numbers", "AGENTTEST_TEST_NO_SUCH_VARIABLE"} {
		c := res.Files[0].Cases[i]
		a := c.Last()
		if c.Status != result.Errored || a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, want) {
			t.Errorf("%s: %s%s, want a config error with %q", c.Name, c.Status, describe(c), want)
		}
	}
}
