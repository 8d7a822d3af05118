package runner

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmRecordedResponses: confirm: conversation: turns: responses:
// over real HTTP against the simulator. A probe opens no debug chat, so
// what the agent said on an outbound call, and the SMS that the
// reference makes the greeting of its conversation, could be confirmed
// only by counting turns; the recorded text now takes any matcher.
func TestConfirmRecordedResponses(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	type testCase struct {
		name, probe, responses string
		want                   result.Status
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		src := "suite: s\nagent: " + e.clinic + "\nscenarios:\n  - name: probe\n    probe: " + tc.probe + "\n" +
			"    confirm: {conversation: {turns: {responses: " + tc.responses + "}}}\n"
		res, err := Run(t.Context(), loadYAML(t, src), e.opts())
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != tc.want {
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		}
		if a := c.Last(); tc.want == result.Failed && (len(a.Failures) != 1 || a.Failures[0].Key != "confirm.conversation.turns.responses" ||
			!strings.Contains(a.Failures[0].Message, "the recorded agent text")) {
			t.Fatalf("failures %+v, want one of the recorded agent text", a.Failures)
		}
	}
	const sms = `{sms: {to: "+447700900123", message: "Your appointment is tomorrow at 10. Reply C to cancel."}}`
	const call = `{outbound_call: {to: "+447700900124"}, within: 1m}`
	for _, tc := range []testCase{
		{name: "the SMS is the greeting", probe: sms, responses: `"Your appointment is tomorrow at 10. Reply C to cancel."`, want: result.Passed},
		{name: "another SMS text", probe: sms, responses: `{contains: "Reply YES"}`, want: result.Failed},
		{name: "the call's greeting", probe: call, responses: `{contains: "Riverside"}`, want: result.Passed},
		{name: "not what the call said", probe: call, responses: `{not_contains: "Riverside"}`, want: result.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
