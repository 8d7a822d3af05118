package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/reply"
)

// TestEventTypeProblem: a type not written as the platform writes types,
// or a near miss of a known one, is warned about with the type it likely
// means; every known type (under the reference's brand and another),
// another platform's well-formed type and a ${...} pass.
func TestEventTypeProblem(t *testing.T) {
	t.Parallel()
	type testCase struct {
		typ string
		// hint is the expected hint; "" means no warning.
		hint string
	}
	did := func(s string) string { return fmt.Sprintf("did you mean %q?", s) }
	tests := []testCase{
		// Near misses: letters dropped, added, swapped; words reordered;
		// under any brand word.
		{"EVENT_TYPE_SYSTEM_MESAGE", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"EVENT_TYPE_SYSTEM_MESSAGES", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"EVENT_TYPE_SYSTME_MESSAGE", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"EVENT_TYPE_MESSAGE_SYSTEM", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"EVENT_TYPE_SESION_END", did("EVENT_TYPE_SESSION_END")},
		{"EVENT_TYPE_HANDOFF_INITATED", did("EVENT_TYPE_HANDOFF_INITIATED")},
		{"EVENT_TYPE_LIVE_AGENT_JOIN", did("EVENT_TYPE_LIVE_AGENT_JOINED")},
		{"EVENT_TYPE_VENDOR_AGENT_JOINDE", did("EVENT_TYPE_VENDOR_AGENT_JOINED")},
		{"EVENT_TYPE_JOINED_AGENT_VENDOR", did("EVENT_TYPE_VENDOR_AGENT_JOINED")},
		{"EVENT_TYPE_ACME_AGENT_JOINDE", did("EVENT_TYPE_ACME_AGENT_JOINED")},
		{"EVENT_TYPE_ACME_AGENT_MESSAGE_CHUNKS", did("EVENT_TYPE_ACME_AGENT_MESSAGE_CHUNK")},
		{"EVENT_TYPE_REQUEST_VENDOR_AGENT_JION", did("EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN")},
		// Not written as the platform writes types.
		{"system message", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"SYSTEM_MESSAGE", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"event_type_system_message", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"Event-Type-Session-End", did("EVENT_TYPE_SESSION_END")},
		{"EVENT_SYSTEM_MESSAGE", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"EVENT_TYPE_SYSTEM_MESSAGE ", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"event_type_acme_agent_joined", did("EVENT_TYPE_ACME_AGENT_JOINED")},
		{"system mesage", did("EVENT_TYPE_SYSTEM_MESSAGE")},
		{"customer survey", "write the type as the platform sends it, such as EVENT_TYPE_SYSTEM_MESSAGE"},
		{"", "write the type as the platform sends it, such as EVENT_TYPE_SYSTEM_MESSAGE"},
		// Well-formed and near no known type: another platform's.
		{"EVENT_TYPE_CUSTOMER_SURVEY", ""},
		{"EVENT_TYPE_CALL_TRANSFERRED", ""},
		{"EVENT_TYPE_ACME_CORP_AGENT_JOINED", ""},
		// Known only at run time.
		{"${ended}", ""},
		{"EVENT_TYPE_${kind}_MESAGE", ""},
	}
	for _, form := range reply.KnownEventTypes() {
		for _, b := range []string{"VENDOR", "ACME", "B2"} {
			tests = append(tests, testCase{typ: reply.BrandEventType(form, b)})
		}
	}
	for _, tc := range tests {
		for _, excluded := range []bool{false, true} {
			msg, hint := eventTypeProblem(tc.typ, excluded)
			if hint != tc.hint || (msg == "") != (tc.hint == "") {
				t.Errorf("eventTypeProblem(%q, %v) = %q, %q; want hint %q", tc.typ, excluded, msg, hint, tc.hint)
				continue
			}
			outcome := "this check fails whatever arrives"
			if excluded {
				outcome = "this exclusion passes whatever arrives"
			}
			if msg != "" && !strings.HasSuffix(msg, outcome) {
				t.Errorf("eventTypeProblem(%q, %v) = %q, want it to say %q", tc.typ, excluded, msg, outcome)
			}
		}
	}
}

// TestEventTypeWarningsAlike: a YAML suite and a feature naming the same
// types in the same checks get the same warnings, each at its type.
func TestEventTypeWarningsAlike(t *testing.T) {
	t.Parallel()
	yamlSrc := `suite: s
agent: a
via: messaging
scenarios:
  - name: n
    greeting: {events: [EVENT_TYPE_VENDOR_AGENT_JOINDE]}
    turns:
      - say: hi
        expect:
          events:
            includes: [EVENT_TYPE_USER_MESAGE]
            excludes: [EVENT_TYPE_SYSTEM_MESAGE, EVENT_TYPE_SYSTEM_MESSAGE]
            sequence: [EVENT_TYPE_HANDOFF_INITIATED, live agent joined]
`
	featureSrc := `@agent:a @via:messaging
Feature: s
  Scenario: n
    Then the greeting events include "EVENT_TYPE_VENDOR_AGENT_JOINDE"
    When the user says "hi"
    Then the events include "EVENT_TYPE_USER_MESAGE"
    And the events do not include "EVENT_TYPE_SYSTEM_MESAGE"
    And the events do not include "EVENT_TYPE_SYSTEM_MESSAGE"
    And the events arrive in this order:
      | EVENT_TYPE_HANDOFF_INITIATED |
      | live agent joined            |
`
	type warning struct {
		line, col     int
		message, hint string
	}
	warnings := func(ds diag.Diagnostics) (out []warning, msgs []string) {
		for _, d := range ds {
			if d.Severity != diag.Warning {
				t.Errorf("unexpected %s", d)
				continue
			}
			out = append(out, warning{d.Pos.Line, d.Pos.Col, d.Message, d.Hint})
			msgs = append(msgs, d.Message+" ("+d.Hint+")")
		}
		return out, msgs
	}
	_, yds := LoadFile("s.yaml", []byte(yamlSrc))
	_, fds := loadFeature("s.feature", []byte(featureSrc))
	yw, ym := warnings(yds)
	fw, fm := warnings(fds)
	if !slices.Equal(ym, fm) {
		t.Errorf("the loaders warn differently:\nYAML:\n%s\nfeature:\n%s", strings.Join(ym, "\n"), strings.Join(fm, "\n"))
	}
	wantYAML := [][2]int{{6, 25}, {11, 24}, {12, 24}, {13, 54}}
	wantFeature := [][2]int{{4, 38}, {6, 29}, {7, 35}, {11, 9}}
	for _, c := range []struct {
		name string
		got  []warning
		want [][2]int
	}{{"YAML", yw, wantYAML}, {"feature", fw, wantFeature}} {
		var at [][2]int
		for _, w := range c.got {
			at = append(at, [2]int{w.line, w.col})
		}
		if !slices.Equal(at, c.want) {
			t.Errorf("%s: warnings at %v, want %v", c.name, at, c.want)
		}
	}
}
