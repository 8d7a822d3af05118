package report

import (
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

func TestNotRunLine(t *testing.T) {
	say := func(n int) *result.Step { return &result.Step{Kind: result.StepSay, Turn: n} }
	check := func(n int) *result.Step { return &result.Step{Kind: result.StepCheck, Turn: n} }
	capture := func(n int) *result.Step { return &result.Step{Kind: result.StepCapture, Turn: n} }
	confirm := func(reads ...string) *result.Step { return &result.Step{Kind: result.StepConfirm, Confirms: reads} }
	type testCase struct {
		name  string
		steps []*result.Step
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		if got := notRunLine(tc.steps); got != tc.want {
			t.Errorf("notRunLine = %q, want %q", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "every step ran", want: ""},
		{name: "turns and a YAML confirm",
			steps: []*result.Step{say(2), check(2), say(3), check(3), capture(3), confirm("conversation", "webhooks")},
			want:  "not run: turns 2-3, confirm (conversation, webhooks)"},
		{name: "one turn", steps: []*result.Step{say(4)}, want: "not run: turn 4"},
		{name: "the rest of the turn that broke",
			steps: []*result.Step{check(1), capture(1), say(2), check(2)},
			want:  "not run: turn 1 check and capture, turn 2"},
		{name: "a feature's Then steps after the one that broke, counted",
			steps: []*result.Step{check(1), check(1), capture(1), check(1), say(2), check(2)},
			want:  "not run: turn 1 checks (3) and capture, turn 2"},
		{name: "captures counted", steps: []*result.Step{capture(0), capture(0)}, want: "not run: greeting captures (2)"},
		{name: "a feature's confirm steps read as one",
			steps: []*result.Step{confirm("conversation"), confirm("handoff_state"), confirm("webhooks"), confirm("webhooks")},
			want:  "not run: confirm (conversation, handoff_state, webhooks)"},
		{name: "a confirmation mid-chat parts the turns",
			steps: []*result.Step{say(2), confirm("conversation"), say(3), say(5)},
			want:  "not run: turn 2, confirm (conversation), turn 3, turn 5"},
		{name: "the greeting",
			steps: []*result.Step{{Kind: result.StepOpen}, check(0), say(1)},
			want:  "not run: greeting, turn 1"},
		{name: "the greeting's check", steps: []*result.Step{check(0), say(1), say(2)}, want: "not run: greeting check, turns 1-2"},
		{name: "a probe's steps",
			steps: []*result.Step{{Kind: result.StepCallStatus}, confirm()},
			want:  "not run: call status, confirm"},
		{name: "nil steps are passed by", steps: []*result.Step{nil, say(1), nil}, want: "not run: turn 1"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
