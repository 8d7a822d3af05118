package scenario

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
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
		{name: "a messaging suite's start, once though a scenario restates its via",
			src: "via: messaging\nstart: {channel: WEBCHAT}\nscenarios:\n  - name: a\n    via: messaging\n    turns: [{say: hi}]\n" +
				"  - name: b\n    start: {variant: v2}\n    turns: [{say: hi}]\n  - name: c\n    turns: [{say: hi}]\n",
			want: []string{"s.yaml:2:1: warning: start: channel is not sent over messaging (via: messaging at s.yaml:5:10): only debug chat's create call takes them",
				"s.yaml:8:5: warning: start: variant is not sent over messaging (via: messaging at s.yaml:1:6): only debug chat's create call takes them"}},
		{name: "feature: a setup step over messaging",
			src:  "@agent:a\nFeature: f\n  Scenario: a\n    Given the conversation is over messaging\n    And the integration attribute \"k\" is \"v\"\n    And the channel \"VOICE-SIP\"\n    And the TTS language \"en-GB\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:6:5: warning: the channel, the TTS language are not sent over messaging (over messaging at s.feature:4:5): only debug chat's create call takes them"}},
		{name: "feature: a language alone",
			src: "@via:messaging\nFeature: f\n  Scenario: a\n    Given the ASR language \"en-GB\"\n    When the user says \"hi\"\n" +
				"  Scenario: b\n    Given the TTS language \"en-GB\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:4:5: warning: the ASR language is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them",
				"s.feature:7:5: warning: the TTS language is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: a @via:messaging feature",
			src:  "@via:messaging\nFeature: f\n  Scenario: a\n    Given the variant \"spring\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:4:5: warning: the variant is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: brought back to debug chat",
			src: "@via:messaging\nFeature: f\n  Scenario: a\n    Given the channel \"VOICE-SIP\"\n    And the conversation is over debug chat\n    When the user says \"hi\"\n"},
		{name: "feature: a Background of scenarios over messaging, once",
			src:  "@via:messaging\nFeature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			want: []string{"s.feature:4:5: warning: the channel is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: the Backgrounds of two Rules, each once",
			src: "@via:messaging\nFeature: f\n  Rule: a\n    Background:\n      Given the channel \"VOICE-SIP\"\n    Scenario: a\n      When the user says \"hi\"\n" +
				"  Rule: b\n    Background:\n      Given the variant \"v2\"\n    Scenario: b\n      When the user says \"hi\"\n",
			want: []string{"s.feature:5:7: warning: the channel is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them",
				"s.feature:10:7: warning: the variant is not sent over messaging (over messaging at s.feature:1:1): only debug chat's create call takes them"}},
		{name: "feature: a Feature's Background beside a Rule's, that a debug-chat scenario uses",
			src: "Feature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n" +
				"  Rule: r\n    Background:\n      Given the variant \"v2\"\n    @via:messaging\n    Scenario: b\n      When the user says \"hi\"\n",
			// The Rule's Background serves scenarios over messaging only:
			// the Feature's, shared with debug chat, does not hide it.
			want: []string{"s.feature:8:7: warning: the channel, the variant are not sent over messaging (over messaging at s.feature:9:5): only debug chat's create call takes them"}},
		{name: "feature: a scenario's own setup step below a Background that a debug-chat scenario uses",
			src: "Feature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n" +
				"  @via:messaging\n  Scenario: b\n    Given the variant \"v2\"\n    When the user says \"hi\"\n",
			want: []string{"s.feature:8:5: warning: the channel, the variant are not sent over messaging (over messaging at s.feature:6:3): only debug chat's create call takes them"}},
		{name: "feature: a Background that its debug-chat scenarios use",
			src: "Feature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  @via:messaging\n  Scenario: b\n    When the user says \"hi\"\n"},
		{name: "feature: a Background that a later debug-chat scenario uses",
			src: "@via:messaging\nFeature: f\n  Background:\n    Given the channel \"VOICE-SIP\"\n  Scenario: a\n    When the user says \"hi\"\n  @via:debug_chat\n  Scenario: b\n    When the user says \"hi\"\n"},
		{name: "feature: debug chat", src: "Feature: f\n  Scenario: a\n    Given the channel \"VOICE-SIP\"\n    When the user says \"hi\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestStreaming: streaming: (suite and scenario, the scenario's word
// last), @streaming: and "Given the replies are streamed" (the step after
// the tag) set whether a scenario over messaging asks for streamed
// replies. A setting that no scenario over messaging uses is an error at
// it; one a suite, Feature or Background gives scenarios over messaging
// too is their default, and its debug-chat scenarios ignore it.
func TestStreaming(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		src  string
		// want is each scenario's "name=streaming@line:col" (the
		// position zero when unset), in order.
		want []string
		// errs are the errors, in order; warns the warnings about
		// streaming.
		errs, warns []string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		load := LoadFile
		file := "s.yaml"
		if strings.HasPrefix(tc.src, "@") || strings.HasPrefix(tc.src, "Feature:") {
			load, file = loadFeature, "s.feature"
		}
		s, ds := load(file, []byte(tc.src))
		var errs, warns []string
		for _, d := range ds {
			switch {
			case d.Severity == diag.Error:
				errs = append(errs, d.String())
			case strings.Contains(d.Message, "stream"):
				warns = append(warns, d.String())
			}
		}
		if strings.Join(warns, "\n") != strings.Join(tc.warns, "\n") {
			t.Errorf("warnings\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(tc.warns, "\n"))
		}
		if strings.Join(errs, "\n") != strings.Join(tc.errs, "\n") {
			t.Errorf("diagnostics\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(tc.errs, "\n"))
		}
		if len(tc.errs) > 0 {
			if s != nil {
				t.Error("loaded despite the errors")
			}
			return
		}
		if s == nil {
			t.Fatalf("not loaded:\n%s", renderDiags(ds))
		}
		var got []string
		for _, sc := range s.Scenarios {
			got = append(got, fmt.Sprintf("%s=%t@%d:%d", sc.Name, sc.Streaming(), sc.Start.StreamingPos.Line, sc.Start.StreamingPos.Col))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("scenarios %s, want %s", strings.Join(got, " "), strings.Join(tc.want, " "))
		}
	}
	for _, tc := range []testCase{
		{name: "suite and scenario, the scenario's word last",
			src:  "via: messaging\nstreaming: true\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    streaming: false\n    turns: [{say: hi}]\n",
			want: []string{"a=true@2:12", "b=false@7:16"}},
		{name: "a scenario's own",
			src:  "scenarios:\n  - name: a\n    via: messaging\n    streaming: true\n    turns: [{say: hi}]\n  - name: b\n    via: messaging\n    turns: [{say: hi}]\n",
			want: []string{"a=true@4:16", "b=false@0:0"}},
		{name: "a suite's default that its debug-chat scenario ignores",
			src:  "streaming: true\nscenarios:\n  - name: a\n    via: messaging\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n",
			want: []string{"a=true@1:12", "b=false@1:12"}},
		{name: "a scenario over debug chat",
			src:  "via: messaging\nscenarios:\n  - name: a\n    via: debug_chat\n    streaming: true\n    turns: [{say: hi}]\n",
			errs: []string{`s.yaml:5:16: streaming: applies to conversations over messaging, and scenario "a" runs over debug chat (add via: messaging to the scenario or the suite, or remove streaming:)`}},
		{name: "false over debug chat is as much a mistake",
			src:  "scenarios:\n  - name: a\n    streaming: false\n    turns: [{say: hi}]\n",
			errs: []string{`s.yaml:3:16: streaming: applies to conversations over messaging, and scenario "a" runs over debug chat (add via: messaging to the scenario or the suite, or remove streaming:)`}},
		{name: "a suite none of whose scenarios is over messaging",
			src:  "streaming: true\nscenarios:\n  - name: a\n    turns: [{say: hi}]\n  - name: b\n    turns: [{say: hi}]\n",
			errs: []string{`s.yaml:1:12: streaming: applies to conversations over messaging, and none of the 2 scenarios it applies to runs over messaging (add via: messaging to the scenario or the suite, or remove streaming:)`}},
		{name: "not a boolean",
			src:  "via: messaging\nscenarios:\n  - name: a\n    streaming: yes\n    turns: [{say: hi}]\n",
			errs: []string{`s.yaml:4:16: streaming must be true or false, not a string (write true)`}},
		{name: "feature: tag",
			src:  "@via:messaging @streaming:true\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n  @streaming:false\n  Scenario: b\n    When the user says \"hi\"\n",
			want: []string{"a=true@1:16", "b=false@5:3"}},
		{name: "feature: the step after the tag",
			src:  "@via:messaging @streaming:true\nFeature: f\n  Scenario: a\n    Given the replies are not streamed\n    When the user says \"hi\"\n  Scenario: b\n    Given the conversation is over messaging\n    And the replies are streamed\n    When the user says \"hi\"\n",
			want: []string{"a=false@4:5", "b=true@8:5"}},
		{name: "feature: the streaming step among other setup steps",
			src:  "@via:messaging\nFeature: f\n  Scenario: a\n    Given the replies are streamed\n    And the integration attribute \"k\" is \"v\"\n    When the user says \"hi\"\n",
			want: []string{"a=true@4:5"}},
		{name: "feature: a Background's default that a debug-chat scenario ignores",
			src:  "Feature: f\n  Background:\n    Given the replies are streamed\n  @via:messaging\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			want: []string{"a=true@3:5", "b=false@3:5"}},
		{name: "feature: a step over debug chat",
			src:  "Feature: f\n  Scenario: a\n    Given the replies are streamed\n    When the user says \"hi\"\n",
			errs: []string{`s.feature:3:5: step "Given the replies are streamed" applies to conversations over messaging, and scenario "a" runs over debug chat (add @via:messaging or Given the conversation is over messaging, or remove it)`}},
		{name: "feature: a tag of a feature over debug chat",
			src:  "@streaming:true\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			errs: []string{`s.feature:1:1: tag @streaming:true applies to conversations over messaging, and none of the 2 scenarios it applies to runs over messaging (add @via:messaging or Given the conversation is over messaging, or remove it)`}},
		{name: "feature: a bare @streaming over messaging is a filter tag, said once",
			src:   "@via:messaging @streaming\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n  Scenario: b\n    When the user says \"hi\"\n",
			want:  []string{"a=false@0:0", "b=false@0:0"},
			warns: []string{`s.feature:1:16: warning: tag @streaming is a filter tag: the replies are not streamed (to ask for streamed replies, write @streaming:true)`}},
		{name: "feature: a bare @Streaming, in another case, is the same filter tag",
			src:   "@via:messaging @Streaming\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			want:  []string{"a=false@0:0"},
			warns: []string{`s.feature:1:16: warning: tag @streaming is a filter tag: the replies are not streamed (to ask for streamed replies, write @streaming:true)`}},
		{name: "feature: a bare @streaming beside @streaming:true",
			src:  "@via:messaging @streaming @streaming:true\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			want: []string{"a=true@1:27"}},
		{name: "feature: a bare @streaming over debug chat is any filter tag",
			src:  "@streaming\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			want: []string{"a=false@0:0"}},
		{name: "the unused setting after a used one",
			src:  "scenarios:\n  - name: a\n    via: messaging\n    streaming: true\n    turns: [{say: hi}]\n  - name: b\n    streaming: false\n    turns: [{say: hi}]\n",
			errs: []string{`s.yaml:7:16: streaming: applies to conversations over messaging, and scenario "b" runs over debug chat (add via: messaging to the scenario or the suite, or remove streaming:)`}},
		{name: "feature: not a boolean",
			src:  "@via:messaging @streaming:yes\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n",
			errs: []string{`s.feature:1:16: tag @streaming:yes: streaming must be true or false`}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestVia: via: takes a channel, spaces around it aside; anything else is
// an error at the value, with the near channel or, when none is near,
// the list of channels.
func TestVia(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, via string
		want      string // the scenario's channel, or the error
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		src := "scenarios:\n  - name: a\n    via: " + tc.via + "\n    turns: [{say: hi}]\n"
		s, ds := LoadFile("s.yaml", []byte(src))
		var got string
		if len(ds) > 0 {
			got = ds[0].String()
		}
		if s != nil {
			got = s.Scenarios[0].Start.Via + "@" + s.Scenarios[0].Start.ViaPos.String()
		}
		if got != tc.want {
			t.Errorf("via: %s\ngot  %s\nwant %s", tc.via, got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "a channel", via: "messaging", want: "messaging@s.yaml:3:10"},
		{name: "spaces around it", via: `" messaging "`, want: "messaging@s.yaml:3:10"},
		{name: "a near miss", via: "debug-chat", want: `s.yaml:3:10: via "debug-chat" is not a channel (did you mean "debug_chat"?)`},
		{name: "nothing near", via: "carrier pigeon", want: `s.yaml:3:10: via "carrier pigeon" is not a channel (one of debug_chat, messaging)`},
		// The docs call the channel web chat: its names lead to messaging.
		{name: "web chat", via: "web_chat", want: `s.yaml:3:10: via "web_chat" is not a channel (did you mean "messaging"? web chat runs over the Messaging API)`},
		{name: "WebSocket", via: "WebSocket", want: `s.yaml:3:10: via "WebSocket" is not a channel (did you mean "messaging"? web chat runs over the Messaging API)`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestViaTag: a feature's @via: tag that names no channel is refused at
// the tag, with the channel it likely means.
func TestViaTag(t *testing.T) {
	t.Parallel()
	for tag, want := range map[string]string{
		"@via:webchat":    `s.feature:1:1: tag @via:webchat: via must be one of debug_chat, messaging (did you mean "messaging"? web chat runs over the Messaging API)`,
		"@via:debug-chat": `s.feature:1:1: tag @via:debug-chat: via must be one of debug_chat, messaging (did you mean "debug_chat"?)`,
		"@via:pigeon":     `s.feature:1:1: tag @via:pigeon: via must be one of debug_chat, messaging`,
	} {
		_, ds := loadFeature("s.feature", []byte(tag+"\nFeature: f\n  Scenario: a\n    When the user says \"hi\"\n"))
		if len(ds) != 1 || ds[0].String() != want {
			t.Errorf("%s: %v\nwant %s", tag, ds, want)
		}
	}
}
