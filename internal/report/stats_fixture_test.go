package report

import (
	"fmt"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/stats"
)

// statsFixture is a run of statistical and quarantined scenarios: a
// sequential test that passed with an errored run beside its counts, one
// that failed early, one inconclusive at a limit below what its guarantee
// needs, a fixed repeat, a quarantined failing scenario and one whose
// quarantine lapsed.
func statsFixture() *result.Result {
	const file = "suites/clinic.yaml"
	d := stats.Design{PassRate: 0.9, Margin: 0.1, Confidence: 0.95}
	ms := 0
	// runs builds the attempts of a repeated case from its outcomes, one
	// letter per run: P passed, F failed, E errored.
	runs := func(line int, outcomes string) []*result.Attempt {
		var out []*result.Attempt
		for i, o := range outcomes {
			ms += 50
			conv := fmt.Sprintf("conv-%d-%02d", line, i+1)
			reply := "The surgery is open Monday to Friday, 8am to 6:30pm."
			a := &result.Attempt{Number: i + 1, Run: i + 1, Status: result.Passed, ConversationID: conv, Started: at(ms), Duration: 40 * time.Millisecond}
			switch o {
			case 'F':
				reply = "The surgery is open every day from 8am to 8pm."
				a.Status = result.Failed
				a.Failures = []assert.Failure{failure(pos(file, line+3, 11), "response", "reply does not contain the expected text",
					`contains "Monday to Friday"`, reply, "")}
			case 'E':
				a.Status = result.Errored
				a.Error = &result.Error{Pos: pos(file, line+2, 9), Kind: result.KindTimeout, Message: "CHAT_TIMEOUT: the chat session exceeded the timeout limit"}
			}
			a.Turns = []*result.Turn{
				exchange{index: 0, pos: pos(file, line, 5), conv: conv, started: at(ms), latency: 10 * time.Millisecond, text: "Hello, Riverside Clinic."}.turn(),
				exchange{index: 1, pos: pos(file, line+2, 9), say: "When are you open?", conv: conv, started: at(ms + 10), latency: 20 * time.Millisecond,
					text: reply, failed: o == 'E'}.turn(),
			}
			out = append(out, a)
		}
		return out
	}
	sequential := func(name string, line int, limit int, outcomes string) *result.Case {
		c := &result.Case{Name: name, Pos: pos(file, line, 5), Agent: "clinic", Env: "sandbox", Duration: time.Duration(len(outcomes)) * 40 * time.Millisecond,
			Attempts: runs(line, outcomes)}
		r := &result.Repeat{Procedure: result.ProcedureSPRT, Limit: limit, Needed: d.Needed(), PassRate: d.PassRate, Margin: d.Margin,
			Confidence: d.Confidence, Level: d.Confidence}
		for _, o := range outcomes {
			r.Runs++
			switch o {
			case 'P':
				r.Passed++
			case 'F':
				r.Failed++
			default:
				r.Errored++
			}
		}
		r.Lower, r.Upper = d.Lower(r.Passed, r.Failed), d.Upper(r.Passed, r.Failed)
		switch d.Decide(r.Passed, r.Failed) {
		case stats.Pass:
			c.Status, r.Decision = result.Passed, result.DecisionPassed
		case stats.Fail:
			c.Status, r.Decision = result.Failed, result.DecisionFailed
		default:
			c.Status, r.Decision = result.Failed, result.DecisionInconclusive
		}
		c.Repeat = r
		return c
	}

	healthy := sequential("tells callers the opening hours", 10, 282, "PPPPPPPPPPPPEPPPPPPPPPPPPPPP")
	broken := sequential("renews a repeat prescription", 20, 282, "PFFPFFF")
	borderline := sequential("reads back test results", 30, 10, "PPPPFPPPPP")

	fixed := &result.Case{Name: "books an appointment", Pos: pos(file, 40, 5), Agent: "clinic", Env: "sandbox", Status: result.Passed,
		Duration: 160 * time.Millisecond, Attempts: runs(40, "PPPF")}
	fixed.Repeat = &result.Repeat{Procedure: result.ProcedureFixed, Runs: 4, Passed: 3, Failed: 1, Limit: 4, PassRate: 0.75, Level: 0.95,
		Decision: result.DecisionPassed}
	fixed.Repeat.Lower, fixed.Repeat.Upper = stats.Binomial(3, 4, 0.95)

	quarantined := sequential("answers in Welsh", 50, 282, "FFFFF")
	quarantined.Quarantine = &result.Quarantine{Reason: "Welsh replies are being rewritten", Owner: "@clinic-team", Until: "2026-12-31"}
	lapsed := &result.Case{Name: "hands over to reception", Pos: pos(file, 60, 5), Agent: "clinic", Env: "sandbox", Status: result.Failed,
		Duration: 40 * time.Millisecond, Attempts: runs(60, "F"),
		Quarantine: &result.Quarantine{Reason: "reception flow moved", Until: "2026-03-01", Lapsed: true}}
	lapsed.Attempts[0].Run = 0

	return &result.Result{
		Started:  t0,
		Duration: 2 * time.Second,
		Target:   result.Target{Name: "sim", Env: "sandbox", Embedded: true},
		Files: []*result.File{{Path: file, Suite: "Clinic statistics",
			Cases: []*result.Case{healthy, broken, borderline, fixed, quarantined, lapsed}}},
	}
}
