package steps

import (
	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
)

// Kind says what an Op does to the conversation.
type Kind int

const (
	// Setup changes the session parameters (agent, env, channel, variant,
	// languages, integration attributes). Setup ops are applied by the
	// loader, before anything runs, so `agenttest list` and the reports
	// know the agent of every scenario; they must come before the
	// conversation starts.
	Setup Kind = iota
	// Start opens the session when it is not open yet (the greeting).
	Start
	// Say sends one user turn (text or silence).
	Say
	// Check checks the last reply (or the greeting) with an assert.Expect.
	Check
	// Capture stores a value of the last reply in a variable.
	Capture
	// Probe starts the scenario from an outbound call or an SMS instead
	// of a debug chat; the loader records it as the scenario's Probe, so
	// live safety and `list` see it before anything runs.
	Probe
	// CallStatus waits for the final status of the probe's call and
	// checks it.
	CallStatus
	// Confirm checks what the platform recorded of the scenario's
	// conversation: the record, the handoff state or a webhook event.
	Confirm
)

var kindNames = [...]string{"setup", "start", "say", "check", "capture", "probe", "call status", "confirm"}

// String names the kind in messages ("check").
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "op"
	}
	return kindNames[k]
}

// Params are the session parameters a Setup op changes. Empty fields are
// left as they were.
type Params struct {
	Agent      string
	Env        string
	Channel    string
	Variant    string
	ASRLang    string
	TTSLang    string
	Attributes map[string]string
}

// Expander expands ${name} and ${env:NAME} references; the runner gives the
// session's (captures, then vars, then the environment).
type Expander = func(string) (string, error)

// Op is one compiled step: what the session driver does for it. An Op is
// built once per step at load time and may run many times (retries replay
// the ops before a failing step, repeat replays them all), so it holds no
// run state.
type Op struct {
	Kind Kind
	// Pos is the step's position (its keyword), for failures and errors.
	Pos diag.Pos
	// Step is the step as written, keyword included ("And the agent says
	// \"hi\""), for failure messages.
	Step string

	// Setup applies a Setup op to the parameters; it may expand
	// references with x (scenario vars only, at load time).
	Setup func(p *Params, x Expander) error

	// Say is the user message of a Say op, references unexpanded; Silent
	// sends silence instead.
	Say    string
	Silent bool

	// Greeting makes a Check apply to the greeting instead of the last
	// reply.
	Greeting bool
	// Expect builds the checks of a Check op. Plain arguments (node names,
	// state keys, metric names) are expanded with x now; matcher texts
	// keep their references for assert.Check, which expands them itself
	// (quoting them in regular expressions).
	Expect func(x Expander) (*assert.Expect, error)

	// CaptureName, CaptureFrom and CapturePattern describe a Capture op
	// with the arguments of assert.Capture.
	CaptureName    string
	CaptureFrom    string
	CapturePattern string

	// ProbeTo is the number a Probe op calls or texts, references
	// unexpanded; ProbeSMS makes it an SMS of ProbeMessage instead of a
	// call.
	ProbeTo      string
	ProbeSMS     bool
	ProbeMessage string

	// ExpectStatus is the final call status a CallStatus op expects
	// (reply.CallSuccess or reply.CallFailure).
	ExpectStatus string

	// ConfirmChecks builds the checks of a Confirm op, as Expect does for
	// a Check: plain arguments (field names, metric names, state keys)
	// are expanded with x now, matcher texts keep their references for
	// assert to expand.
	ConfirmChecks func(x Expander) (*assert.Confirm, error)
	// Webhook is the event a webhook confirmation waits for, kept apart
	// so the CLI can subscribe its receiver to it before the run.
	Webhook string
}
