package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/reply"
)

// Group orders the vocabulary for `agenttest steps` and the docs.
type Group int

const (
	// GroupSetup steps choose the session parameters.
	GroupSetup Group = iota
	// GroupTurns steps talk to the agent.
	GroupTurns
	// GroupChecks steps check the last reply.
	GroupChecks
	// GroupConfirm steps start a scenario from a probe and check what the
	// platform recorded (docs/confirmations.md).
	GroupConfirm
	// GroupMessaging steps check the events of a turn over the Messaging
	// channel.
	GroupMessaging
)

// Groups lists the groups in display order.
var Groups = []Group{GroupSetup, GroupTurns, GroupChecks, GroupMessaging, GroupConfirm}

// Title is the heading of a group in `agenttest steps`.
func (g Group) Title() string {
	switch g {
	case GroupSetup:
		return "Setup (before the conversation starts; the session starts at the first When, or at \"Given the conversation has started\")"
	case GroupTurns:
		return "Turns"
	case GroupChecks:
		return "Checks (on the last reply; And and But continue any step)"
	case GroupMessaging:
		return "Web chat over Messaging (after \"Given the conversation is over messaging\" or @via:messaging; on the events of the last turn)"
	case GroupConfirm:
		return "Probes and confirmations (what the platform recorded; a probe replaces the debug chat, @within:2m bounds the call)"
	}
	return "Other"
}

// ArgKind is the Gherkin step argument a definition takes.
type ArgKind int

const (
	// NoArg: the step has no DocString or DataTable.
	NoArg ArgKind = iota
	// DocStringArg: the step takes a DocString ("""...""").
	DocStringArg
	// TableArg: the step takes a DataTable (| a | b |).
	TableArg
)

// Def is one step definition: the single source for the godog
// registration, for `agenttest steps` and for lint.
type Def struct {
	Group Group
	// Pattern is matched against the step text without its keyword. It is
	// anchored, and its groups are the step's arguments.
	Pattern *regexp.Regexp
	// Arg is the Gherkin argument the step requires.
	Arg ArgKind
	// Example is a complete step, keyword included, matched by Pattern
	// and by no other definition (a test proves it). For steps with an
	// argument, ExampleArg holds it as it would be written.
	Example    string
	ExampleArg string
	// Doc says what the step does, in one sentence for designers.
	Doc string

	build func(c *call) (*Step, error)
}

// q is a quoted argument; \" inside it stands for a quote.
const q = `"((?:[^"\\]|\\.)*)"`

// apostrophe accepts the typewriter and the typographic apostrophe, since
// word processors turn one into the other.
const apostrophe = `(?:'|’)`

// docIgnoringCase is ignoringCase for the checks that take a DocString:
// "Then the agent's reply contains, ignoring case:".
const docIgnoringCase = `(, ignoring case)?`

// ignoringCase is the optional ending of the quoted text checks that
// folds case (the YAML's ignore_case); textCheck reads it as the second
// argument.
const ignoringCase = `( ignoring case)?`

func def(g Group, pattern string, arg ArgKind, example, exampleArg, doc string, build func(c *call) (*Step, error)) Def {
	return Def{
		Group:      g,
		Pattern:    regexp.MustCompile("^" + pattern + "$"),
		Arg:        arg,
		Example:    example,
		ExampleArg: exampleArg,
		Doc:        doc,
		build:      build,
	}
}

// Defs returns the step vocabulary, in display order. It is built on each
// call so that no caller can change what another sees.
func Defs() []Def {
	return append([]Def{
		// Setup.
		def(GroupSetup, `the agent `+q, NoArg, `Given the agent "restaurant"`, "",
			"Talks to this agent (same as @agent:restaurant).", setupNamed("the agent", "write the agent id", func(p *Params, v []string) { p.Agent = v[0] })),
		def(GroupSetup, `the environment `+q, NoArg, `Given the environment "sandbox"`, "",
			"Sends this clientEnv: sandbox, pre-release or live (same as @env:sandbox).",
			setupNamed("the environment", "one of "+strings.Join(reply.Envs, ", "), func(p *Params, v []string) { p.Env = v[0] })),
		def(GroupSetup, `the channel `+q, NoArg, `Given the channel "VOICE-SIP"`, "",
			"Opens the session on this channel.", setup(func(p *Params, v []string) { p.Channel = v[0] })),
		def(GroupSetup, `the variant `+q, NoArg, `Given the variant "spring"`, "",
			"Opens the session with this variant id.", setup(func(p *Params, v []string) { p.Variant = v[0] })),
		def(GroupSetup, `the ASR language `+q, NoArg, `Given the ASR language "en-GB"`, "",
			"Sends this asrLangCode when opening the session and on every turn.", setup(func(p *Params, v []string) { p.ASRLang = v[0] })),
		def(GroupSetup, `the TTS language `+q, NoArg, `Given the TTS language "en-GB"`, "",
			"Sends this ttsLangCode when opening the session and on every turn.", setup(func(p *Params, v []string) { p.TTSLang = v[0] })),
		def(GroupSetup, `the integration attribute `+q+` is `+q, NoArg, `Given the integration attribute "tier" is "gold"`, "",
			"Sets one integration attribute of the session.", setup(func(p *Params, v []string) { p.setAttr(v[0], v[1]) })),
		def(GroupSetup, `the integration attributes:`, TableArg, `Given the integration attributes:`, "| tier | gold |\n| region | north |",
			"Sets integration attributes, one | name | value | row each.", setupTable),
		def(GroupSetup, `the conversation is over (messaging|debug chat)`, NoArg, `Given the conversation is over messaging`, "",
			"Talks to the agent over the Messaging API that web chat uses instead of debug chat (same as @via:messaging; \"debug chat\" goes back).",
			setup(func(p *Params, v []string) {
				p.Via = ViaMessaging
				if v[0] == "debug chat" {
					p.Via = ViaDebugChat
				}
			})),
		def(GroupSetup, `the replies are (streamed|not streamed)`, NoArg, `Given the replies are streamed`, "",
			"Over messaging, asks for the agent's replies streamed in chunks, as a web chat that streams gets them (same as @streaming:true; \"not streamed\" goes back).",
			setup(func(p *Params, v []string) {
				on := v[0] == "streamed"
				p.Streaming = &on
			})),
		def(GroupSetup, `the conversation has started`, NoArg, `Given the conversation has started`, "",
			"Opens the session now; later checks before any When apply to the greeting.", func(c *call) (*Step, error) {
				return c.newStep(Open), nil
			}),

		// Turns.
		def(GroupTurns, `the user says `+q, NoArg, `When the user says "a table for 4 at 7pm"`, "",
			"Sends one user message.", func(c *call) (*Step, error) {
				st := c.newStep(Say)
				st.Say = c.args[0]
				return st, nil
			}),
		def(GroupTurns, `the user says `+q+` with the metadata:`, TableArg, `When the user says "my account" with the metadata:`, "| customer_id | C-1042 |\n| tier | gold |",
			"Sends one user message with user input metadata, one | key | value | row each (values are text; the agent reads them as input.KEY).", sayWithMetadata),
		def(GroupTurns, `the user says:`, DocStringArg, `When the user says:`, "\"\"\"\nI booked for Friday.\nCan I change it?\n\"\"\"",
			"Sends the DocString as one user message (several lines allowed).", func(c *call) (*Step, error) {
				st := c.newStep(Say)
				st.Say, st.SayPos = c.doc, c.docPos
				return st, nil
			}),
		def(GroupTurns, `the user stays silent`, NoArg, `When the user stays silent`, "",
			"Sends a turn without input (silence).", func(c *call) (*Step, error) {
				st := c.newStep(Say)
				st.Silent = true
				return st, nil
			}),

		// Checks on the reply text.
		def(GroupChecks, `the greeting contains `+q+ignoringCase, NoArg, `Then the greeting contains "Welcome"`, "",
			"The greeting (the reply to opening the session) contains the text (add \"ignoring case\" at the end to let the case differ).", textCheck(true, func(s string) *assert.Text { return &assert.Text{Contains: &s} })),
		def(GroupChecks, `the agent says `+q+ignoringCase, NoArg, `Then the agent says "How many people?"`, "",
			"The reply is exactly the text, surrounding spaces aside (add \"ignoring case\" at the end to let the case differ).", textCheck(false, func(s string) *assert.Text { return &assert.Text{Exact: &s} })),
		def(GroupChecks, `the agent says`+docIgnoringCase+`:`, DocStringArg, `Then the agent says:`, "\"\"\"\nYour table for 4 is booked.\nYour reference is R1234.\n\"\"\"",
			"The reply is exactly the DocString, lines and all, surrounding spaces aside (write \"says, ignoring case:\" to let the case differ).", textCheck(false, func(s string) *assert.Text { return &assert.Text{Exact: &s} })),
		def(GroupChecks, `the agent`+apostrophe+`s reply contains `+q+ignoringCase, NoArg, `Then the agent's reply contains "how many"`, "",
			"The reply contains the text (add \"ignoring case\" at the end to let the case differ).", textCheck(false, func(s string) *assert.Text { return &assert.Text{Contains: &s} })),
		def(GroupChecks, `the agent`+apostrophe+`s reply contains`+docIgnoringCase+`:`, DocStringArg, `Then the agent's reply contains:`, "\"\"\"\nOur opening hours:\nMonday to Friday\n\"\"\"",
			"The reply contains the DocString, lines and all (write \"contains, ignoring case:\" to let the case differ).", textCheck(false, func(s string) *assert.Text { return &assert.Text{Contains: &s} })),
		def(GroupChecks, `the agent`+apostrophe+`s reply contains one of:`, TableArg, `Then the agent's reply contains one of:`, "| how many |\n| party size |",
			"The reply contains at least one of the texts, one per row: the wordings an LLM agent may choose.", anyOfTable),
		def(GroupChecks, `the agent`+apostrophe+`s reply does not contain `+q+ignoringCase, NoArg, `Then the agent's reply does not contain "sorry"`, "",
			"The reply does not contain the text (add \"ignoring case\" at the end to let the case differ).", textCheck(false, func(s string) *assert.Text { return &assert.Text{NotContains: &s} })),
		def(GroupChecks, `the agent`+apostrophe+`s reply matches `+q, NoArg, `Then the agent's reply matches "table for \d+"`, "",
			"The reply matches the RE2 regular expression (unanchored).", regexCheck),
		def(GroupChecks, `the agent`+apostrophe+`s reply is similar to `+q+`(?: with at least (\d+(?:\.\d+)?%?))?`, NoArg,
			`Then the agent's reply is similar to "How many guests?" with at least 0.6`, "",
			"The reply is similar to the text (default threshold 0.8, or the one given: a share of 1, or a percentage such as 70%).", similarCheck),

		// Checks on the path through the agent.
		def(GroupChecks, `the node trace includes `+q, NoArg, `Then the node trace includes "ask_party_size"`, "",
			"The node trace of the reply includes the node.", check(func(c *call, e *assert.Expect) error {
				n, err := c.expand(0)
				e.Trace = &assert.Trace{Pos: c.pos, Includes: []string{n}}
				return err
			})),
		def(GroupChecks, `the node trace does not include `+q, NoArg, `Then the node trace does not include "handoff"`, "",
			"The node trace of the reply does not include the node.", check(func(c *call, e *assert.Expect) error {
				n, err := c.expand(0)
				e.Trace = &assert.Trace{Pos: c.pos, Excludes: []string{n}}
				return err
			})),
		def(GroupChecks, `the node trace passes through:`, TableArg, `Then the node trace passes through:`, "| start |\n| ask_party_size |",
			"The node trace includes these nodes in this order, gaps allowed (one node per row).", traceTable),
		def(GroupChecks, `the current node is `+q, NoArg, `Then the current node is "ask_party_size"`, "",
			"The current node of the reply is the node.", exactField(func(e *assert.Expect, t *assert.Text) { e.Node = t })),
		def(GroupChecks, `the flow is `+q, NoArg, `Then the flow is "booking"`, "",
			"The reply is in this flow (metadata inFlow).", exactField(func(e *assert.Expect, t *assert.Text) { e.Flow = t })),
		def(GroupChecks, `the step is `+q, NoArg, `Then the step is "collect_party"`, "",
			"The reply is at this flow step (metadata inStep).", exactField(func(e *assert.Expect, t *assert.Text) { e.Step = t })),

		// Checks on the state.
		def(GroupChecks, `the state `+q+` is `+q, NoArg, `Then the state "party_size" is "4"`, "",
			"The state key holds the value (numbers as written in JSON; a dotted key reaches into objects).", stateCheck(false, func(s string) *assert.Text { return &assert.Text{Exact: &s} })),
		def(GroupChecks, `the state `+q+` matches `+q, NoArg, `Then the state "booking_ref" matches "^R\d+$"`, "",
			"The state value matches the RE2 regular expression.", stateCheck(true, func(s string) *assert.Text { return &assert.Text{Matches: &s} })),
		def(GroupChecks, `the state has no `+q, NoArg, `Then the state has no "payment_card"`, "",
			"The state has no such key.", check(func(c *call, e *assert.Expect) error {
				k, err := stateKey(c)
				no := false
				e.State = []assert.StateCheck{{Pos: c.pos, Key: k, Present: &no}}
				return err
			})),
		def(GroupChecks, `the state includes:`, TableArg, `Then the state includes:`, "| party_size | 4 |\n| time | 7pm |",
			"Each | key | value | row holds in the state.", stateTable),

		// Checks on how the conversation goes on.
		def(GroupChecks, `the agent hands off to `+q, NoArg, `Then the agent hands off to "billing_team"`, "",
			"The reply hands off to this destination.", check(func(c *call, e *assert.Expect) error {
				d := c.args[0]
				if d == "" {
					// As YAML's handoff: "": no reply hands off to nowhere.
					return &Error{Message: fmt.Sprintf("step %q: an empty destination matches no handoff", c.step),
						Hint: `name the destination, or write "Then the agent does not hand off" for none`, arg: 1}
				}
				e.Handoff = &assert.Handoff{Pos: c.pos, Expected: true, Destination: &assert.Text{Pos: c.pos, Exact: &d}}
				return nil
			})),
		def(GroupChecks, `the agent does not hand off`, NoArg, `Then the agent does not hand off`, "",
			"The reply does not hand off.", check(func(c *call, e *assert.Expect) error {
				e.Handoff = &assert.Handoff{Pos: c.pos}
				return nil
			})),
		def(GroupChecks, `the conversation ends`, NoArg, `Then the conversation ends`, "",
			"The agent ended the conversation with this reply.", boolCheck(func(e *assert.Expect, b *assert.Bool) { e.Ended = b }, true)),
		def(GroupChecks, `the conversation continues`, NoArg, `Then the conversation continues`, "",
			"The conversation is still open after this reply.", boolCheck(func(e *assert.Expect, b *assert.Bool) { e.Ended = b }, false)),
		def(GroupChecks, `the reply is delayed`, NoArg, `Then the reply is delayed`, "",
			"The reply was delayed (delayedResponse).", boolCheck(func(e *assert.Expect, b *assert.Bool) { e.Delayed = b }, true)),
		def(GroupChecks, `the reply is not delayed`, NoArg, `Then the reply is not delayed`, "",
			"The reply was not delayed.", boolCheck(func(e *assert.Expect, b *assert.Bool) { e.Delayed = b }, false)),
		def(GroupChecks, `the ASR language is `+q, NoArg, `Then the ASR language is "en-GB"`, "",
			"The reply's speech recognition language is this code (metadata asrLangCode).",
			exactField(func(e *assert.Expect, t *assert.Text) { e.Lang = &assert.Lang{Pos: t.Pos, ASR: t} })),
		def(GroupChecks, `the TTS language is `+q, NoArg, `Then the TTS language is "en-GB"`, "",
			"The reply's speech synthesis language is this code (metadata ttsLangCode).",
			exactField(func(e *assert.Expect, t *assert.Text) { e.Lang = &assert.Lang{Pos: t.Pos, TTS: t} })),

		// Checks on metrics, functions and knowledge.
		def(GroupChecks, `the metric `+q+` is `+q, NoArg, `Then the metric "BOOKING_MADE" is "true"`, "",
			"The custom metric was written with this value (any value, when written several times).", check(func(c *call, e *assert.Expect) error {
				name, err := c.expand(0)
				v := c.args[1]
				e.Metrics = []assert.MetricCheck{{Pos: c.pos, Name: name, Match: &assert.Text{Pos: c.pos, Exact: &v}}}
				return err
			})),
		def(GroupChecks, `the metric `+q+` was written (\d+) times?`, NoArg, `Then the metric "CALL_TURN" was written 2 times`, "",
			"The custom metric was written this many times (0 when absent).", check(func(c *call, e *assert.Expect) error {
				name, err := c.expand(0)
				n, nerr := c.int(1, "count")
				e.Metrics = []assert.MetricCheck{{Pos: c.pos, Name: name, Count: &n}}
				return firstErr(nerr, err)
			})),
		def(GroupChecks, `the function `+q+` was called`, NoArg, `Then the function "check_availability" was called`, "",
			"The function was called for this reply.", functionCheck(func(f *assert.Functions, n string) { f.Called = []string{n} })),
		def(GroupChecks, `the function `+q+` was not called`, NoArg, `Then the function "cancel_booking" was not called`, "",
			"The function was not called for this reply.", functionCheck(func(f *assert.Functions, n string) { f.NotCalled = []string{n} })),
		def(GroupChecks, `the function `+q+` failed`, NoArg, `Then the function "lookup_bill" failed`, "",
			"The function was called and failed.", functionCheck(func(f *assert.Functions, n string) { f.Failed = []string{n} })),
		def(GroupChecks, `no function failed`, NoArg, `Then no function failed`, "",
			"No function call of this reply failed.", check(func(c *call, e *assert.Expect) error {
				e.Functions = &assert.Functions{Pos: c.pos, NoErrors: true}
				return nil
			})),
		def(GroupChecks, `the topic `+q+` was retrieved`, NoArg, `Then the topic "opening_hours" was retrieved`, "",
			"The knowledge topic was retrieved for this reply.", check(func(c *call, e *assert.Expect) error {
				t, err := c.expand(0)
				e.Topics = &assert.Topics{Pos: c.pos, Retrieved: []string{t}}
				return err
			})),
		def(GroupChecks, `the topic `+q+` was cited`, NoArg, `Then the topic "opening_hours" was cited`, "",
			"The reply cites the knowledge topic.", check(func(c *call, e *assert.Expect) error {
				t := c.args[0]
				e.Topics = &assert.Topics{Pos: c.pos, Cited: &assert.Text{Pos: c.pos, Exact: &t}}
				return nil
			})),
		def(GroupChecks, `the reply came within (\d+) ms`, NoArg, `Then the reply came within 2000 ms`, "",
			"The reply took at most this many milliseconds, as measured by agenttest.", check(func(c *call, e *assert.Expect) error {
				n, err := c.int(0, "milliseconds")
				if err == nil && n == 0 {
					// No reply comes in 0 ms: the YAML's latency_ms
					// refuses it too.
					return &Error{Message: fmt.Sprintf("step %q: the milliseconds must be above 0, not 0", c.step), arg: 1}
				}
				e.LatencyMS = &assert.Latency{Pos: c.pos, Max: n}
				return err
			})),

		// Captures.
		def(GroupChecks, `I remember `+q+` from the reply matching `+q, NoArg, `Then I remember "ref" from the reply matching "reference (R\d+)"`, "",
			"Stores the first group of the match in the reply; later steps use it as ${ref}.", captureStep("response")),
		def(GroupChecks, `I remember `+q+` from the state `+q, NoArg, `Then I remember "ref" from the state "booking_ref"`, "",
			"Stores a state value; later steps use it as ${ref}.", func(c *call) (*Step, error) {
				// The key may use ${...}: it is expanded when the step
				// runs, as the other state steps expand theirs. Here
				// only its syntax and its shape are checked, as the YAML
				// decoder checks a capture's state.KEY.
				key, err := c.expand(1)
				if err != nil {
					return nil, err
				}
				if bad := c.badKey(1, key, invalidStateKey); bad != nil {
					bad.Captures = c.args[0]
					return nil, bad
				}
				st := c.newStep(Capture)
				st.Capture = &CaptureSpec{Name: c.args[0], From: "state." + c.args[1], Expand: true}
				return st, c.captureName()
			}),
	}, append(messagingDefs(), confirmDefs()...)...)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// setup builds a Setup step whose arguments are expanded with the scenario's
// vars when the loader applies it.
func setup(apply func(p *Params, v []string)) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		st := c.newStep(Setup)
		args := c.args
		st.Setup = func(p *Params, x Expander) error {
			v := make([]string, len(args))
			for i, a := range args {
				var err error
				if v[i], err = x(a); err != nil {
					return err
				}
			}
			apply(p, v)
			return nil
		}
		return st, nil
	}
}

// setupNamed is setup for a step whose argument names what the run talks
// to: an empty one is refused, as YAML's agent: "" and the tag @agent:
// are, where it would leave the target's in silence.
func setupNamed(what, hint string, apply func(p *Params, v []string)) func(c *call) (*Step, error) {
	build := setup(apply)
	return func(c *call) (*Step, error) {
		if strings.TrimSpace(c.args[0]) == "" {
			return nil, &Error{Message: fmt.Sprintf("step %q: %s must not be empty", c.step, what), Hint: hint, arg: 1}
		}
		return build(c)
	}
}

func (p *Params) setAttr(k, v string) {
	if p.Attributes == nil {
		p.Attributes = map[string]string{}
	}
	p.Attributes[k] = v
}

func setupTable(c *call) (*Step, error) {
	rows, err := c.pairs("name", "value")
	if err != nil {
		return nil, err
	}
	st := c.newStep(Setup)
	st.Setup = func(p *Params, x Expander) error {
		for _, r := range rows {
			k, err := x(r.key)
			if err != nil {
				return err
			}
			v, err := x(r.value)
			if err != nil {
				return err
			}
			p.setAttr(k, v)
		}
		return nil
	}
	return st, nil
}

// sayWithMetadata is a Say step whose table is the turn's user input
// metadata, flat: a key is sent as written, a value is text whose
// references are expanded when the step runs (Session.sendable).
func sayWithMetadata(c *call) (*Step, error) {
	rows, err := c.pairs("key", "value")
	if err != nil {
		return nil, err
	}
	meta := make(map[string]any, len(rows))
	for _, r := range rows {
		switch k := r.key; {
		case k == "":
			return nil, &Error{Message: fmt.Sprintf("step %q: a metadata key is empty", c.step), Row: r.row, Cell: 1}
		case strings.Contains(k, "${"):
			return nil, &Error{Message: fmt.Sprintf("step %q: metadata key %q: ${...} is not expanded in a key, which is sent as written", c.step, k), Row: r.row, Cell: 1}
		case meta[k] != nil:
			return nil, &Error{Message: fmt.Sprintf("step %q: metadata key %q is written twice", c.step, k), Row: r.row, Cell: 1}
		}
		meta[r.key] = r.value
	}
	st := c.newStep(Say)
	st.Say, st.Metadata = c.args[0], meta
	return st, nil
}

// check builds a Check step on the last reply. fill runs each time the step
// runs, with the session's expander, so captures are visible; the loader
// runs it once with a syntax-only expander to report bad arguments early.
func check(fill func(c *call, e *assert.Expect) error) func(c *call) (*Step, error) {
	return checkOn(false, fill)
}

func checkOn(greeting bool, fill func(c *call, e *assert.Expect) error) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		st := c.newStep(Check)
		st.Greeting = greeting
		pos := c.pos
		st.Expect = func(x Expander) (*assert.Expect, error) {
			e := &assert.Expect{Pos: pos}
			cc := *c
			cc.x = x
			if err := fill(&cc, e); err != nil {
				return nil, err
			}
			return e, nil
		}
		// Build once now: a bad number or table is a load error.
		if _, err := st.Expect(syntaxOnly); err != nil {
			return nil, err
		}
		return st, nil
	}
}

func textCheck(greeting bool, text func(s string) *assert.Text) func(c *call) (*Step, error) {
	return checkOn(greeting, func(c *call, e *assert.Expect) error {
		t := text(c.text())
		t.Pos = c.pos
		// The ignoring-case group follows the quoted text, or is the
		// only group of a DocString step.
		switch {
		case c.def.Arg == DocStringArg && len(c.args) == 1:
			t.IgnoreCase = c.args[0] != ""
		case len(c.args) == 2:
			t.IgnoreCase = c.args[1] != ""
		}
		e.Response = t
		return nil
	})
}

func regexCheck(c *call) (*Step, error) {
	if err := c.regex(0); err != nil {
		return nil, err
	}
	return textCheck(false, func(s string) *assert.Text { return &assert.Text{Matches: &s} })(c)
}

func similarCheck(c *call) (*Step, error) {
	// The threshold is written out, so it is checked once, here, where
	// its error can point at it.
	var min float64
	if c.args[1] != "" {
		// "70%" is the YAML's min: "70%" (scenario's number), a share
		// written as a percentage.
		num, pct := strings.CutSuffix(c.args[1], "%")
		v, err := strconv.ParseFloat(num, 64)
		if pct {
			if err != nil || v <= 0 || v > 100 {
				return nil, &Error{Message: fmt.Sprintf("step %q: similarity %s must be above 0%% and at most 100%%", c.step, c.args[1]), arg: 2}
			}
			v /= 100
		} else if err != nil || v <= 0 || v > 1 {
			hint := ""
			if share, percent := assert.SimilarityShare(v); percent {
				hint = fmt.Sprintf("write %s or %s%%: the threshold is a share of 1", strconv.FormatFloat(share, 'f', -1, 64), num)
			}
			return nil, &Error{Message: fmt.Sprintf("step %q: similarity %s must be above 0 and at most 1", c.step, c.args[1]), Hint: hint, arg: 2}
		}
		min = v
	}
	return check(func(c *call, e *assert.Expect) error {
		e.Response = &assert.Text{Pos: c.pos, Similar: &assert.Similar{To: c.args[0], Min: min}}
		return nil
	})(c)
}

func exactField(set func(e *assert.Expect, t *assert.Text)) func(c *call) (*Step, error) {
	return check(func(c *call, e *assert.Expect) error {
		v := c.args[0]
		set(e, &assert.Text{Pos: c.pos, Exact: &v})
		return nil
	})
}

// anyOfTable is the YAML's response: {any: [{contains: ...}, ...]}.
func anyOfTable(c *call) (*Step, error) {
	texts, err := c.column("text")
	if err != nil {
		return nil, err
	}
	return check(func(c *call, e *assert.Expect) error {
		alts := make([]*assert.Text, len(texts))
		for i, s := range texts {
			alts[i] = &assert.Text{Pos: c.pos, Contains: &s}
		}
		e.Response = &assert.Text{Pos: c.pos, Any: alts}
		return nil
	})(c)
}

func traceTable(c *call) (*Step, error) {
	nodes, err := c.column("node")
	if err != nil {
		return nil, err
	}
	// Once, shared by every Expect built: the checks only read it.
	parts := c.rowParts("sequence", len(nodes))
	return check(func(c *call, e *assert.Expect) error {
		// As written: the check expands each row, so a reference that
		// cannot be expanded fails at its row, not at the step.
		e.Trace = &assert.Trace{Pos: c.pos, Parts: parts, Sequence: nodes}
		return nil
	})(c)
}

func stateCheck(regex bool, text func(s string) *assert.Text) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		if regex {
			if err := c.regex(1); err != nil {
				return nil, err
			}
		}
		return check(func(c *call, e *assert.Expect) error {
			k, err := stateKey(c)
			t := text(c.args[1])
			t.Pos = c.pos
			e.State = []assert.StateCheck{{Pos: c.pos, Key: k, Match: t}}
			return err
		})(c)
	}
}

// stateKey is the state key of a check's first argument, expanded. A key
// that is no path of dot-separated members (a..b, a blank) is refused at
// its quote, as YAML refuses it and as the state capture does: it is a
// typo of the scenario, which the agent's state could only fail. A key
// built from ${...} is checked again with its values when the step runs.
func stateKey(c *call) (string, error) {
	k, err := c.expand(0)
	if err != nil {
		return k, err
	}
	if bad := c.badKey(0, k, invalidStateKey); bad != nil {
		return k, bad
	}
	return k, nil
}

func stateTable(c *call) (*Step, error) {
	rows, err := c.pairs("key", "value")
	if err != nil {
		return nil, err
	}
	return check(func(c *call, e *assert.Expect) error {
		for _, r := range rows {
			k, err := c.x(r.key)
			if err != nil {
				return err
			}
			if !reply.ValidPath(k) {
				return &Error{Message: fmt.Sprintf("step %q: %s", c.step, invalidStateKey(r.key)), Row: r.row, Cell: 1}
			}
			v, pos := r.value, c.rowPos(r.row)
			e.State = append(e.State, assert.StateCheck{Pos: pos, Key: k, Match: &assert.Text{Pos: pos, Exact: &v}})
		}
		return nil
	})(c)
}

func boolCheck(set func(e *assert.Expect, b *assert.Bool), v bool) func(c *call) (*Step, error) {
	return check(func(c *call, e *assert.Expect) error {
		set(e, &assert.Bool{Pos: c.pos, Value: v})
		return nil
	})
}

func functionCheck(set func(f *assert.Functions, name string)) func(c *call) (*Step, error) {
	return check(func(c *call, e *assert.Expect) error {
		n, err := c.expand(0)
		f := &assert.Functions{Pos: c.pos}
		set(f, n)
		e.Functions = f
		return err
	})
}

func captureStep(from string) func(c *call) (*Step, error) {
	return func(c *call) (*Step, error) {
		if err := c.regex(1); err != nil {
			if se, ok := err.(*Error); ok {
				se.Captures = c.args[0]
			}
			return nil, err
		}
		st := c.newStep(Capture)
		st.Capture = &CaptureSpec{Name: c.args[0], From: from, Pattern: c.args[1]}
		return st, c.captureName()
	}
}

// captureName checks the name a capture step stores its value in, its
// first argument, by the ${name} syntax of the YAML format.
func (c *call) captureName() error {
	if !capName.MatchString(c.args[0]) {
		return &Error{Message: fmt.Sprintf("step %q: invalid variable name %q: use letters, digits, '_' and '-', starting with a letter or '_'", c.step, c.args[0]), arg: 1}
	}
	return nil
}

var capName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
