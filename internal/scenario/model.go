package scenario

import (
	"sort"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/steps"
)

// Suite is one suite file: a YAML suite (or, later, a feature file) with its
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
	// "from the target or flags".
	Agent string
	Env   string
	Tags  []string
	// Start holds the suite's session parameters; a scenario's own start
	// keys override them key by key.
	Start Start
	// Vars are the suite variables; scenario vars override them.
	Vars map[string]string
	// Scenarios in file order, examples expanded in row order.
	Scenarios []*Scenario
	// Source is the text of a feature file, which godog parses again to
	// run it; nil for YAML suites.
	Source []byte
	// EnvRefs are the ${env:NAME} references of the file, each once per
	// place, in file order: lint refuses those that read a variable
	// holding an API key.
	EnvRefs []EnvRef
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

// note records the ${env:NAME} references of s, written at pos.
func (e *envRefSet) note(pos diag.Pos, s string) {
	if !strings.Contains(s, "${env:") {
		return
	}
	refs, _ := interp.Scan(s) // a malformed reference is reported where the value is checked
	for _, r := range refs {
		ref := EnvRef{Name: r.Name, Pos: pos}
		if !r.Env || e.seen[ref] {
			continue
		}
		if e.seen == nil {
			e.seen = map[EnvRef]bool{}
		}
		e.seen[ref] = true
		e.refs = append(e.refs, ref)
	}
}

// Start is the session parameters of the debug-chat create call.
type Start struct {
	Pos     diag.Pos
	Channel string
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
		for k, v := range s.IntegrationAttributes {
			attrs[k] = v
		}
		for k, v := range over.IntegrationAttributes {
			attrs[k] = v
		}
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
	// Tags are the suite's tags followed by the scenario's own, without
	// duplicates, each without a leading @.
	Tags  []string
	Agent string
	Env   string
	Start Start
	// Vars are suite vars, then scenario vars, then the example row.
	Vars map[string]string
	// Greeting checks the reply to session creation; nil checks nothing.
	Greeting *assert.Expect
	Turns    []*Turn
	// Skip, when non-empty, is why the scenario is not run.
	Skip string
	// Timeout bounds one attempt of the whole scenario; zero means none
	// beyond the per-turn timeout.
	Timeout time.Duration
	// Retries is the number of extra attempts from a fresh session after a
	// failure or error; nil means "from the command line".
	Retries *int
	// Repeat, when above 1, runs the scenario that many times from fresh
	// sessions; it passes when the share of passing runs reaches PassRate.
	// The loader sets both to 1 when the file does not.
	Repeat   int
	PassRate float64
	// Steps are the steps of a feature scenario (one Gherkin pickle),
	// Background steps first; nil for a YAML scenario. Setup steps are
	// already applied to Agent, Env and Start.
	Steps []*Step
	// Pickle is the index of the scenario's pickle among the pickles of
	// its feature file, in the order Gherkin compiles them; godog's
	// pickles are matched to scenarios by it.
	Pickle int
	// Confirm checks what the platform recorded, after the session ends
	// (or after the probe); nil checks nothing.
	Confirm *assert.Confirm
	// Probe, when set, starts the scenario from an outbound call or an SMS
	// instead of a debug chat; such a scenario has no turns.
	Probe *Probe
}

// IsFeature reports whether the scenario comes from a feature file.
func (sc *Scenario) IsFeature() bool { return sc.Steps != nil }

// Step is one Gherkin step of a feature scenario, compiled.
type Step struct {
	// Pos is the position of the step's keyword.
	Pos diag.Pos
	// Keyword is the keyword as written, with its trailing space.
	Keyword string
	// Text is the step text after the keyword, placeholders substituted.
	Text string
	// DocString and Table are the step argument, when it has one.
	DocString *string
	Table     [][]string
	// Op is what the session driver does for the step.
	Op *steps.Op
}

// Turn is one user message and the checks on its reply.
type Turn struct {
	Pos diag.Pos
	// Say is the user message, with ${...} references still unexpanded. An
	// empty Say with Silent set sends an empty message (silence).
	Say    string
	Silent bool
	// Expect checks the reply; nil checks nothing.
	Expect *assert.Expect
	// Capture extracts values from the reply into variables for later turns.
	Capture []Capture
}

// Capture stores the first group (or the whole match) of a regular
// expression, applied to one field of the reply, into a variable.
type Capture struct {
	Pos  diag.Pos
	Name string
	// From is the field: "response", "node", "state.KEY", "metadata.PATH".
	From string
	// Pattern is an RE2 expression; its first group is stored, or the whole
	// match when it has no group.
	Pattern string
}
