package steps

import (
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
)

// Kind says what a Step does to the conversation.
type Kind int

const (
	// Setup changes the session parameters (agent, env, channel, variant,
	// languages, integration attributes) before the session opens. The
	// feature loader also applies setup steps to the scenario, so that
	// `agenttest list`, live safety and the reports know the agent of
	// every scenario before anything runs.
	Setup Kind = iota
	// Open opens the debug-chat session; its reply is the greeting. The
	// interpreter also opens the session at the first step that needs it,
	// so a feature's first When opens it.
	Open
	// Say sends one user turn (text or silence).
	Say
	// Check checks the last reply (or the greeting) with an assert.Expect.
	Check
	// Capture stores a value of the last reply in a variable.
	Capture
	// Probe starts the scenario from an outbound call or an SMS instead
	// of a debug chat.
	Probe
	// CallStatus waits for the final status of the probe's call and
	// checks it.
	CallStatus
	// Confirm checks what the platform recorded of the scenario's
	// conversation: the record, the handoff state or webhook events.
	Confirm
)

var kindNames = [...]string{"setup", "open", "say", "check", "capture", "probe", "call status", "confirm"}

// String names the kind in messages ("check").
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "step"
	}
	return kindNames[k]
}

// The channels a conversation runs over: `via:` in YAML, @via: and "Given
// the conversation is over ..." in features.
const (
	// ViaDebugChat is the debug-chat API, the default: each turn one HTTP
	// call, with the reply's metadata (trace, state, functions, ...).
	ViaDebugChat = "debug_chat"
	// ViaMessaging is the Messaging API that end users' web chat uses: a
	// WebSocket session with events, system messages and live-agent
	// handoff, and no debug metadata.
	ViaMessaging = "messaging"
)

// Vias lists the channels, the default first.
var Vias = []string{ViaDebugChat, ViaMessaging}

// Params are the session parameters a Setup step changes. Empty fields are
// left as they were.
type Params struct {
	Agent string
	Env   string
	// Via is the channel: ViaDebugChat or ViaMessaging.
	Via string
	// Streaming, when set, says whether a conversation over messaging
	// asks for streamed replies (streaming_enabled).
	Streaming  *bool
	Channel    string
	Variant    string
	ASRLang    string
	TTSLang    string
	Attributes map[string]string
}

// Expander expands ${name} and ${env:NAME} references; the runner gives the
// session's (captures, then vars, then the environment).
type Expander = func(string) (string, error)

// Step is one instruction of the step program both formats compile to: a
// YAML scenario's greeting, turns, captures, probe and confirm: become
// steps in that order, and each Gherkin step compiles to one. The
// interpreter (internal/runner) executes a scenario's steps one at a time
// in a session.
//
// A Step is built once at load time and may run many times (a retry runs
// the program again from a fresh session, a repeat runs it N times), so
// it holds no run state. Only the fields of its Kind are set.
type Step struct {
	Kind Kind
	// Pos is where the step is written: a feature step's keyword, or the
	// YAML key or list item it comes from. Errors of the step are reported
	// there; failures carry the position of the check that broke.
	Pos diag.Pos
	// Text is a feature step as written, keyword included ("And the agent
	// says \"hi\""); empty for a step decoded from YAML. Failures the step
	// records carry it (assert.Failure.Step), so a report names the step.
	Text string

	// Setup applies a Setup step to the parameters; it may expand
	// references with x.
	Setup func(p *Params, x Expander) error

	// Say is the user message of a Say step, references unexpanded; Silent
	// sends silence instead.
	Say    string
	Silent bool
	// SayPos is where Say is written when that is not at Pos (a feature's
	// DocString, a YAML block scalar): a reference the run cannot expand
	// (an unset ${env:NAME}) is reported there. Zero means Pos.
	SayPos diag.Pos
	// Metadata is the user input metadata a Say step sends with its
	// message (the turn's `metadata` body field, read by the agent as
	// input.KEY): its strings hold references, expanded when the step
	// runs; keys are sent as written. Nil sends none, and costs the turn
	// nothing.
	Metadata map[string]any

	// Greeting makes a Check apply to the greeting instead of the last
	// reply.
	Greeting bool
	// Expect builds the checks of a Check step with the session's
	// expander. A feature step expands its plain arguments (node names,
	// state keys, metric names) with x; matcher texts keep their
	// references for assert.Check, which expands them itself (quoting them
	// in regular expressions). A YAML expect: returns what it decoded.
	Expect func(x Expander) (*assert.Expect, error)

	// The fields of the rarer kinds are pointers, nil in the steps of
	// other kinds: a large suite holds the steps of every scenario until
	// each has run, and most of them are says and checks.

	// Capture is what a Capture step stores.
	Capture *CaptureSpec

	// Probe is the call or SMS a Probe step starts the scenario from.
	Probe *ProbeSpec

	// Status is the final call status a CallStatus step expects.
	Status *StatusSpec

	// Confirm builds the checks of a Confirm step with the session's
	// expander, as Expect does for a Check.
	Confirm func(x Expander) (*assert.Confirm, error)
	// Webhooks are the events a Confirm step waits for, kept apart so the
	// CLI can subscribe its receiver to them before the run.
	Webhooks []string
}

// CaptureSpec stores the first group (or the whole match) of a regular
// expression, applied to one field of the last reply, into a variable.
type CaptureSpec struct {
	Name string
	// From is the field: "response", "node", "state.KEY", "metadata.PATH".
	From string
	// Pattern is an RE2 expression, references unexpanded.
	Pattern string
	// Expand says From holds ${...} references the interpreter expands
	// when the step runs: the quoted key of a feature's `I remember "v"
	// from the state "${k}"`. A YAML capture's field is a key, read as
	// written.
	Expand bool
}

// StatusSpec is the final call status a CallStatus step expects. A call
// that reaches no final status in time fails at the step's Pos; another
// final status fails at Pos here.
type StatusSpec struct {
	// Want is reply.CallSuccess or reply.CallFailure.
	Want string
	// Pos is where it is written: a YAML probe's expect_status:, or the
	// step itself.
	Pos diag.Pos
}

// ProbeSpec starts a scenario from an outbound call or an SMS instead of a
// debug chat (a YAML `probe:`, or a probe step). Exactly one of Call and
// SMS is set.
type ProbeSpec struct {
	Call *CallProbe
	SMS  *SMSProbe
	// Within bounds the wait for the call's final status (calls only; the
	// loaders set DefaultProbeWithin when the file gives none).
	Within time.Duration
}

// CallProbe is `outbound_call: {to, metadata, agent_number}`.
type CallProbe struct {
	Pos diag.Pos
	// To is the number to call (it may use ${...}).
	To string
	// AgentNumber is the provisioned number to call from; empty lets the
	// platform choose.
	AgentNumber string
	// Metadata is handed to the agent with the call.
	Metadata map[string]any
}

// SMSProbe is `sms: {to, message, agent_number}`.
type SMSProbe struct {
	Pos         diag.Pos
	To          string
	Message     string
	AgentNumber string
}

// DefaultProbeWithin is how long an outbound-call probe waits for a final
// status when the scenario gives no `within:` (or @within): queueing and
// ringing take seconds to a minute on the platform.
const DefaultProbeWithin = 2 * time.Minute

// NeedsChat reports whether the step acts on a debug chat: the
// interpreter opens the session before running it when none is open and
// the scenario did not start from a probe.
func (s *Step) NeedsChat() bool {
	switch s.Kind {
	case Setup, Probe:
		return false
	}
	return true
}
