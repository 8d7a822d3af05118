package report

import (
	"bytes"
	"encoding/json"

	"github.com/agenttest/agenttest/internal/reply"
)

// turnView is what a transcript shows of one reply. The metadata members
// are read with reply.Metadata's accessors, so that the reports accept
// the same member shapes as the checks do.
type turnView struct {
	Reply     string
	Trace     []string
	Node      string
	State     map[string]any
	Handoff   string
	Ended     bool
	Delayed   bool
	HasResult bool
}

// viewTurn reads the members a transcript shows from a turn result; nil
// (the call failed) gives an empty view.
func viewTurn(tr *reply.TurnResult) turnView {
	if tr == nil {
		return turnView{}
	}
	m := tr.Meta()
	return turnView{
		Reply:     tr.Response,
		Trace:     m.NodeTrace(),
		Node:      m.CurrentNode(),
		State:     m.State(),
		Handoff:   m.HandoffDestination(),
		Ended:     tr.ConversationEnded,
		Delayed:   tr.DelayedResponse,
		HasResult: true,
	}
}

// stateValue renders a state value in a state change: as compact JSON, so
// that the string "4" and the number 4 read differently. HTML escaping is
// off: "<" must read as "<" in a transcript.
func stateValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Decoded JSON always encodes; reply.Render is the best effort
		// for anything else.
		return reply.Render(v)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
