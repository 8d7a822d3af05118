package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmStepsShareTheRecordRead: the confirmation steps of a feature
// read the record once for all the steps that need it as it was read: a
// handoff state or webhook step reads it first when no step did (it has
// settled once the record is there), a conversation step reads it again
// (its checks judge it afresh), a step after a turn that ended the chat
// reads it again waiting for the end (a step of an open chat reads it
// without waiting), and no step waits again for a
// record a step before waited on to its bound. Each read is a record line
// of the attempt.
func TestConfirmStepsShareTheRecordRead(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	type testCase struct {
		name  string
		steps string
		// inProgress makes the record say in_progress: true, always.
		inProgress bool
		reads      int // record lines
		failed     bool
	}
	run := func(t *testing.T, tc testCase) {
		opts := e.opts()
		clk := fakeclock.New()
		opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		if tc.inProgress {
			opts.Records = e.unsettled(t)
		}
		src := "@agent:" + e.clinic + "\nFeature: steps\n\n  Scenario: steps\n" + tc.steps
		res, err := Run(context.Background(), loadFiles(t, map[string]string{"steps.feature": src}), opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if want := map[bool]result.Status{false: result.Passed, true: result.Failed}[tc.failed]; c.Status != want {
			t.Fatalf("%s, want %s%s", c.Status, want, describe(c))
		}
		var lines []string
		reads := 0
		for _, cf := range c.Last().Confirmations {
			lines = append(lines, cf.Kind+": "+cf.Summary)
			if cf.Kind == result.ConfirmConversation {
				reads++
			}
		}
		if joined := strings.Join(lines, "\n"); strings.Contains(joined, "still in progress") != tc.inProgress {
			t.Errorf("a record waited on to its end, or not:\n%s", joined)
		}
		if reads != tc.reads {
			t.Errorf("%d reads of the record, want %d:\n%s", reads, tc.reads, strings.Join(lines, "\n"))
		}
	}
	for _, tc := range []testCase{
		{name: "handoff state first, then the record's checks", reads: 2, steps: `    When the user says "I have chest pain"
    Then the handoff state "reason" is "urgent_symptoms"
    And the conversation record shows:
      | handoff_destination | on_call_nurse |
    And the handoff state "reason" is "urgent_symptoms"
`},
		{name: "handoff state first, the chat open", reads: 1, failed: true, steps: `    When the user says "hello"
    Then the handoff state "reason" is "urgent_symptoms"
`},
		{name: "an open chat checked as open", reads: 1, steps: `    When the user says "hello"
    Then the conversation record shows:
      | in_progress | true |
`},
		{name: "the chat ended after the record was read", reads: 2, steps: `    When the user says "hello"
    Then the conversation record shows:
      | channel | WEBCHAT |
    When the user says "I have chest pain"
    Then the handoff state "reason" is "urgent_symptoms"
`},
		{name: "waited on to the bound once", inProgress: true, reads: 1, steps: `    When the user says "I have chest pain"
    Then the conversation record shows:
      | channel | WEBCHAT |
    And the handoff state "reason" is "urgent_symptoms"
`},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}
