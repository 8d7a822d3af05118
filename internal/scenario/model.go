package scenario

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/steps"
)

// Suite is one suite file: a YAML suite or a feature file, with its
// scenarios, fully expanded (examples rows become separate scenarios) and
// with every position kept.
type Suite struct {
	// Path is the file as found (slash-separated, relative when the search
	// path was).
	Path string
	// Name is `suite:`, or the file name without its extension.
	Name string
	Pos  diag.Pos
	// Agent and Env are the suite defaults (`agent:`, `env:`); empty means
	// "from the target or flags". AgentPos is where agent: is written.
	Agent    string
	AgentPos diag.Pos
	Env      string
	Tags     []string
	// Start holds the suite's session parameters; a scenario's own start
	// keys override them key by key.
	Start Start
	// Vars are the suite variables; scenario vars override them.
	Vars map[string]string
	// Scenarios in file order, examples expanded in row order.
	Scenarios []*Scenario
	// Lines is the number of lines of the file: a FILE:LINE past the
	// last scenario's last line is in none (Selection.Within).
	Lines int
	// Regions are the lines of a feature file outside any scenario that
	// belong to scenarios all the same (Selection.Within).
	Regions []Region
	// EnvRefs are the ${env:NAME} references of the file, each once per
	// place, in file order: lint refuses those that read a variable
	// holding an API key.
	EnvRefs []EnvRef
}

// Region is a span of lines, From to To, of a feature file that belongs
// to the scenarios written at Starts (a scenario's or an outline's line):
// a Background's, the scenarios it runs before; a Rule's header, its
// scenarios; a scenario's tags, the scenario.
type Region struct {
	From, To int
	Starts   []int
}

// EnvRef is one ${env:NAME} reference and where it is written (the value
// or step that holds it).
type EnvRef struct {
	Name string
	Pos  diag.Pos
}

// envRefSet collects EnvRefs without duplicates (examples rows decode a
// scenario once per row).
type envRefSet struct {
	refs []EnvRef
	seen map[EnvRef]bool
}

// sorted returns the references in file order.
func (e *envRefSet) sorted() []EnvRef {
	sort.SliceStable(e.refs, func(i, j int) bool { return e.refs[i].Pos.Before(e.refs[j].Pos) })
	return e.refs
}

// note records the ${env:NAME} references of s, each where at says its
// offset is written.
func (e *envRefSet) note(s string, at func(off int) diag.Pos) {
	if !strings.Contains(s, "${env:") {
		return
	}
	refs, _ := interp.Scan(s) // a malformed reference is reported where the value is checked
	for _, r := range refs {
		if r.Env {
			e.add(EnvRef{Name: r.Name, Pos: at(r.Off)})
		}
	}
}

// add records ref unless it is recorded already.
func (e *envRefSet) add(ref EnvRef) {
	if e.seen[ref] {
		return
	}
	if e.seen == nil {
		e.seen = map[EnvRef]bool{}
	}
	e.seen[ref] = true
	e.refs = append(e.refs, ref)
}

// Start is the session parameters: the channel the conversation runs
// over, and the fields of the debug-chat create call (over Messaging the
// integration attributes travel as the join's custom metadata).
type Start struct {
	Pos diag.Pos
	// Via is the channel, steps.ViaDebugChat or steps.ViaMessaging;
	// empty means debug chat. ViaPos is where it was chosen.
	Via    string
	ViaPos diag.Pos
	// Streaming asks, over messaging, for streamed replies
	// (streaming_enabled on the session); StreamingPos is where it was
	// set (`streaming:`, @streaming: or "Given the replies are
	// streamed"), zero when it was not: the channel's default applies.
	Streaming    bool
	StreamingPos diag.Pos
	Channel      string
	// Variant is the variantId sent on session creation.
	Variant               string
	ASRLang               string
	TTSLang               string
	IntegrationAttributes map[string]string
	// ConversationID, when set, asks for a custom conversation id (it may
	// use ${...}).
	ConversationID string
}

// Merge returns s with the non-empty fields of over applied on top.
func (s Start) Merge(over Start) Start {
	out := s
	if !over.Pos.IsZero() {
		out.Pos = over.Pos
	}
	if over.Via != "" {
		out.Via, out.ViaPos = over.Via, over.ViaPos
	}
	if !over.StreamingPos.IsZero() {
		out.Streaming, out.StreamingPos = over.Streaming, over.StreamingPos
	}
	if over.Channel != "" {
		out.Channel = over.Channel
	}
	if over.Variant != "" {
		out.Variant = over.Variant
	}
	if over.ASRLang != "" {
		out.ASRLang = over.ASRLang
	}
	if over.TTSLang != "" {
		out.TTSLang = over.TTSLang
	}
	if over.ConversationID != "" {
		out.ConversationID = over.ConversationID
	}
	if len(over.IntegrationAttributes) > 0 {
		attrs := make(map[string]string, len(s.IntegrationAttributes)+len(over.IntegrationAttributes))
		maps.Copy(attrs, s.IntegrationAttributes)
		maps.Copy(attrs, over.IntegrationAttributes)
		out.IntegrationAttributes = attrs
	}
	return out
}

// Scenario is one conversation to run. Everything it inherits from its
// suite (agent, env, start, vars, tags) is already resolved by the loader.
type Scenario struct {
	// Name is the scenario name; for an examples row it ends with the row,
	// e.g. "books a table [party=4 time=7pm]".
	Name string
	// Pos is the scenario's item in `scenarios:`; for an examples row it is
	// the row, so that each expansion has a place of its own.
	Pos diag.Pos
	// Outline is, for an examples row, where its scenario (the outline)
	// is written; zero for a scenario without examples. `agenttest run
	// FILE:LINE` at the outline's line selects all its rows.
	Outline diag.Pos
	// Tags are the suite's tags followed by the scenario's own, without
	// duplicates, each without a leading @.
	Tags  []string
	Agent string
	// AgentPos is where Agent is written: the scenario's agent:, the
	// suite's, the @agent: tag (a Feature's is shared by its scenarios)
	// or the setup step that names it; zero when the agent is the
	// target's. An agent the target does not serve is refused there,
	// once per place.
	AgentPos diag.Pos
	Env      string
	Start    Start
	// Vars are suite vars, then scenario vars, then the example row.
	Vars map[string]string
	// Skip, when non-empty, is why the scenario is not run.
	Skip string
	// Timeout bounds one attempt of the whole scenario; zero means none
	// beyond the per-turn timeout.
	Timeout time.Duration
	// Retries is the number of extra attempts from a fresh session after a
	// failure or error; nil means "from the command line".
	Retries *int
	// Stats are the statistical settings as written: repeat, pass_rate,
	// confidence and margin (zero when unset; Stats.Resolve applies the
	// defaults, Stats.Or the run's flags).
	Stats Stats
	// Quarantine, when set, keeps the scenario from gating the run until
	// it lapses.
	Quarantine *Quarantine
	// Steps is the scenario's program, in order: what the interpreter
	// runs in each attempt. A YAML scenario's greeting:, turns: (say,
	// expect, capture), probe: and confirm: are compiled to it by the
	// decoder; a feature scenario's steps (Background first) by the
	// Gherkin compiler, setup steps included (they are also applied to
	// Agent, Env and Start above).
	Steps []*steps.Step
	// EnvRefs are the ${env:NAME} references a run of the scenario
	// expands, in file order: those of its program's texts, of its start
	// parameters when it opens a conversation, and of all its vars once
	// it expands any ${...} (expansions). A feature's setup steps are
	// left out: the runner reads some of their arguments as written. The
	// run refuses to start while one of them is unset.
	EnvRefs []EnvRef
}

// Messaging reports whether the scenario's conversation runs over the
// Messaging API (`via: messaging`).
func (sc *Scenario) Messaging() bool { return sc.Start.Via == steps.ViaMessaging }

// Streaming reports whether the scenario asks for streamed replies: over
// messaging, with streaming set on.
func (sc *Scenario) Streaming() bool { return sc.Messaging() && sc.Start.Streaming }

// Probe returns the probe the scenario starts from, or nil for a debug
// chat. The loaders allow one probe, as the first step that acts; the CLI
// checks its numbers against the target's probe_numbers before the run.
func (sc *Scenario) Probe() *steps.ProbeSpec {
	for _, st := range sc.Steps {
		if st.Kind == steps.Probe {
			return st.Probe
		}
	}
	return nil
}

// WebhookEvents lists the webhook events the scenario confirms, in order,
// without duplicates: the CLI subscribes its receiver to them before the
// run.
func (sc *Scenario) WebhookEvents() []string {
	var out []string
	for _, st := range sc.Steps {
		for _, ev := range st.Webhooks {
			if ev != "" && !slices.Contains(out, ev) {
				out = append(out, ev)
			}
		}
	}
	return out
}
