package runner

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
)

// stepKinds names the kinds of the step program in reports (result.Step).
var stepKinds = map[steps.Kind]string{
	steps.Setup: result.StepSetup, steps.Open: result.StepOpen, steps.Say: result.StepSay, steps.Check: result.StepCheck,
	steps.Capture: result.StepCapture, steps.Probe: result.StepProbe, steps.CallStatus: result.StepCallStatus,
	steps.Confirm: result.StepConfirm,
}

// notRun records on the attempt the steps of the program from index from
// on: the attempt ended at the step before them, so they never ran. The
// program is the one of both formats, so a YAML scenario and a feature
// list what they left untested alike (Attempt.NotRun).
func (s *Session) notRun(program []*steps.Step, from int) {
	turn := 0
	for i, st := range program {
		if st == nil {
			continue
		}
		if st.Kind == steps.Say {
			turn++
		}
		if i < from {
			continue
		}
		rs := &result.Step{Pos: st.Pos, Kind: stepKinds[st.Kind], Text: scenario.StepText(st)}
		if rs.Kind == "" {
			rs.Kind = st.Kind.String()
		}
		switch st.Kind {
		case steps.Say, steps.Capture:
			rs.Turn = turn
		case steps.Check:
			if !st.Greeting {
				rs.Turn = turn
			}
		case steps.Confirm:
			rs.Confirms = s.confirms(st)
		}
		s.a.NotRun = append(s.a.NotRun, rs)
	}
}

// confirms says what a Confirm step reads, building its checks as it
// would have run them (with the session's variables); when they cannot be
// built, what the step says without them (its webhooks).
func (s *Session) confirms(st *steps.Step) []string {
	var out []string
	var cf *assert.Confirm
	if st.Confirm != nil {
		cf, _ = st.Confirm(s.interpolate)
	}
	if cf != nil && cf.Conversation != nil {
		out = append(out, "conversation")
	}
	if cf != nil && cf.HandoffState != nil {
		out = append(out, "handoff_state")
	}
	if cf != nil && cf.Recording != nil {
		out = append(out, "recording")
	}
	if (cf != nil && len(cf.Webhooks) > 0) || len(st.Webhooks) > 0 {
		out = append(out, "webhooks")
	}
	return out
}
