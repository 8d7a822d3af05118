package scenario

import (
	"strings"
	"testing"
)

// TestStartOverMessaging: the session parameters only debug chat's create
// call sends are warned about where a messaging scenario set them, once
// per start: mapping, and not where a suite's defaults serve its
// debug-chat scenarios too; in a feature, where a setup step set them in
// a scenario over messaging.
func TestStartOverMessaging(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		src  string
		want []string // warnings, in order; none when empty
	}
	run := func(t *testing.T, tc testCase) {
		s, ds := LoadFile("s.yaml", []byte(tc.src))
		if strings.HasPrefix(tc.src, "@") || strings.HasPrefix(tc.src, "Feature:") {
			s, ds = loadFeature("s.feature", []byte(tc.src))
		}
		if s == nil {
			t.Fatalf("not loaded:\n%s", renderDiags(ds))
		}
		var got []string
		for _, d := range ds {
			if strings.Contains(d.Message, "not sent over messaging") {
				got = append(got, d.String())
			}
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	for _, tc := range []testCase{
		{name: "a scenario's own start", src: "scenarios:\n  - name: a\n    via: messaging\n    start: {channel: WEBCHAT, variant: v2, integration_attributes: {k: v}}\n    turns: [{say: hi}]\n",
			want: []string{"s.yaml:4:5: warning: start: channel, variant are not sent over messaging (via: messaging at s.yaml:3:10): only debug chat's create call takes them"}},
		{name: "a messaging suite's start, once for all its scenarios",
			src:  "via: messaging\nstart: {asr_lang: en-GB}\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n",
			want: []string{"s.yaml:2:1: warning: start: asr_lang is not sent over messaging (via: messaging at s.yaml:1:6): only debug chat's create call takes them"}},
		{name: "a suite's defaults that its debug-chat scenarios use",
			src: "start: {channel: WEBCHAT}\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    via: messaging\n    turns: [{say: hi}]\n"},
		{name: "what messaging sends", src: "scenarios:\n  - name: a\n    via: messaging\n    start: {integration_attributes: {k: v}}\n    turns: [{say: hi}]\n"},
		{name: "debug chat", src: "scenarios:\n  - name: a\n    start: {channel: WEBCHAT}\n    turns: [{say: hi}]\n"},
		{name: "feature: a setup step over messaging",
			src:  "@agent:a\nFeature: f\n  Scenario: a\n    Given the conversation is over messaging\n    And the integration attribute \"k\" is \"v\"\n    And the channel \"VOICE-SIP\"\n    And the TTS language \"en-GB\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:6:5: warning: the channel, the TTS language are not sent over messaging (over messaging at s.feature:4:5): only debug chat's create call takes them"}},
		{name: "feature: a @via:messaging feature",
			src:  "@via:messaging\nFeature: f\n  Scenario: a\n    Given the variant \"spring\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:4:5: warning: the variant is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: brought back to debug chat",
			src: "@via:messaging\nFeature: f\n  Scenario: a\n    Given the channel \"VOICE-SIP\"\n    And the conversation is over debug chat\n    When the user says \"hi\"\n"},
		{name: "feature: a Background of scenarios over messaging, once",
			src:  "@via:messaging\nFeature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			want: []string{"s.feature:4:5: warning: the channel is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: a Background that its debug-chat scenarios use",
			src: "Feature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  @via:messaging\n  Scenario: b\n    When the user says \"hi\"\n"},
		{name: "feature: a Background that a later debug-chat scenario uses",
			src: "@via:messaging\nFeature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  @via:debug_chat\n  Scenario: b\n    When the user says \"hi\"\n"},
		{name: "feature: debug chat", src: "Feature: f\n  Scenario: a\n    Given the channel \"VOICE-SIP\"\n    When the user says \"hi\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
