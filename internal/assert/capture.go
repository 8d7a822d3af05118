package assert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/reply"
)

// maxQuoted bounds how much of an actual value a capture error quotes, so a
// long reply does not flood the log line.
const maxQuoted = 200

// Capture extracts a value from a reply for the runner's `capture:`. from
// names the field: "response", "node", "flow", "step", "state.KEY" (KEY may
// be a dotted path into nested state) or "metadata.PATH". pattern is an RE2
// expression whose ${...} references are expanded (their values quoted, so
// they match literally); the first group is returned, or the whole match
// when the pattern has no group, or the whole field when pattern is empty.
// A missing field, a bad pattern and a pattern that does not match are
// errors that quote the actual value.
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
			return "", fmt.Errorf("capture from %s: %w", from, err)
		}
	}
	re, err := compile(pattern, false)
	if err != nil {
		return "", fmt.Errorf("capture from %s: %w", from, err)
	}
	m := re.FindStringSubmatch(value)
	if m == nil {
		return "", fmt.Errorf("capture from %s: pattern /%s/ does not match %s", from, pattern, quoteShort(value))
	}
	if len(m) > 1 {
		return m[1], nil
	}
	return m[0], nil
}

// field reads the reply field a capture names.
func field(res *reply.TurnResult, from string) (string, error) {
	md := res.Metadata
	nonEmpty := func(v, what string) (string, error) {
		if v == "" {
			return "", fmt.Errorf("capture from %s: reply has no %s", from, what)
		}
		return v, nil
	}
	switch {
	case from == "response":
		return res.Response, nil
	case from == "node":
		return nonEmpty(md.CurrentNode(), "current node")
	case from == "flow":
		return nonEmpty(md.InFlow(), "flow")
	case from == "step":
		return nonEmpty(md.InStep(), "step")
	case strings.HasPrefix(from, "state.") && len(from) > len("state."):
		key := strings.TrimPrefix(from, "state.")
		state := md.State()
		v, ok := state[key]
		if !ok {
			v, ok = reply.LookupPath(state, key)
		}
		if !ok {
			return "", fmt.Errorf("capture from %s: state has no key %q", from, key)
		}
		return reply.Render(v), nil
	case strings.HasPrefix(from, "metadata.") && len(from) > len("metadata."):
		path := strings.TrimPrefix(from, "metadata.")
		v, ok := md.Lookup(path)
		if !ok {
			return "", fmt.Errorf("capture from %s: metadata has no %s", from, path)
		}
		return reply.Render(v), nil
	}
	return "", fmt.Errorf("cannot capture from %q: use response, node, flow, step, state.KEY or metadata.PATH", from)
}

// quoteShort quotes s, cutting it when it is long.
func quoteShort(s string) string {
	if cut, truncated := truncate(s, maxQuoted); truncated {
		return fmt.Sprintf("%q…", cut)
	}
	return fmt.Sprintf("%q", s)
}
