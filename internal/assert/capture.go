package assert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/reply"
)

// CaptureMiss is the error of a capture whose field the reply lacks or
// whose pattern does not match it: what the agent answered broke the
// scenario, and the runner reports it as a failure showing Expected and
// Actual like any broken check.
type CaptureMiss struct {
	// From is the field read: "response", "state.time".
	From string
	// Reason completes "capture from FIELD: ": "pattern does not match".
	Reason string
	// Expected is what was looked for ("matches /ref ([0-9]+)/",
	// "present"); Actual the field's value, or "absent".
	Expected, Actual string
}

func (e *CaptureMiss) Error() string { return "capture from " + e.From + ": " + e.Reason }

// Capture extracts a value from a reply for the runner's `capture:`. from
// names the field: "response", "node", "flow", "step", "state.KEY" (KEY may
// be a dotted path into nested state) or "metadata.PATH". pattern is an RE2
// expression whose ${...} references are expanded (their values quoted, so
// they match literally); the first group is returned, or the whole match
// when the pattern has no group, or the whole field when pattern is empty.
// A missing field and a pattern that does not match are a *CaptureMiss;
// a bad pattern is another error.
func Capture(res *reply.TurnResult, from, pattern string, expand Expander) (string, error) {
	if res == nil {
		return "", errors.New("no reply to capture from")
	}
	value, err := field(res, from)
	if err != nil {
		return "", err
	}
	if pattern == "" {
		return value, nil
	}
	if expand != nil && strings.Contains(pattern, "${") {
		if pattern, err = expandPattern(pattern, expand); err != nil {
			return "", &ExpandError{fmt.Errorf("capture from %s: %w", from, err)}
		}
	}
	re, err := compile(pattern, false)
	if err != nil {
		return "", fmt.Errorf("capture from %s: %w", from, err)
	}
	m := re.FindStringSubmatch(value)
	if m == nil {
		return "", &CaptureMiss{From: from, Reason: "pattern does not match", Expected: "matches /" + pattern + "/", Actual: value}
	}
	if len(m) > 1 {
		return m[1], nil
	}
	return m[0], nil
}

// field reads the reply field a capture names.
func field(res *reply.TurnResult, from string) (string, error) {
	if from == "response" {
		return res.Response, nil
	}
	absent := func(reason string) error {
		return &CaptureMiss{From: from, Reason: reason, Expected: "present", Actual: "absent"}
	}
	nonEmpty := func(v, what string) (string, error) {
		if v == "" {
			return "", absent("reply has no " + what)
		}
		return v, nil
	}
	switch {
	case from == "node":
		return nonEmpty(res.CurrentNode(), "current node")
	case from == "flow":
		return nonEmpty(res.InFlow(), "flow")
	case from == "step":
		return nonEmpty(res.InStep(), "step")
	case strings.HasPrefix(from, "state.") && len(from) > len("state."):
		key := strings.TrimPrefix(from, "state.")
		state := res.State()
		v, ok := state[key]
		if !ok {
			v, ok = reply.LookupPath(state, key)
		}
		if !ok {
			return "", absent(fmt.Sprintf("state has no key %q", key) + nearKey(key, state))
		}
		return reply.Render(v), nil
	case strings.HasPrefix(from, "metadata.") && len(from) > len("metadata."):
		path := strings.TrimPrefix(from, "metadata.")
		v, ok := res.Meta().Lookup(path)
		if !ok {
			return "", absent("metadata has no " + path)
		}
		return reply.Render(v), nil
	}
	return "", fmt.Errorf("cannot capture from %q: use response, node, flow, step, state.KEY or metadata.PATH", from)
}
