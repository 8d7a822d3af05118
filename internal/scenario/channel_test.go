package scenario

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/diag"
)

// TestChannelNearMiss: a session channel written near one the platform
// names ("voice-sip", "VOICE_SIP") was sent as written without a word:
// the session was then no call, and every check of call_sid, from_ or a
// recording failed the agent. It is warned of at the value, in YAML and
// in a feature alike; a known channel, one near none (another
// platform's), and one built with ${...} are not. The hint says channels
// are written in capitals only of one that is not: said of "VOICE_SIP"
// it sent the reader after the wrong mistake.
func TestChannelNearMiss(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, channel string
		// want is the channel meant; "" for no warning.
		want string
		// capitals: the hint says channels are written in capitals,
		// which is news only to a channel not written in them.
		capitals bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		yamlSrc := "agent: a\nscenarios:\n  - name: s\n    start: {channel: \"" + tc.channel + "\"}\n    greeting: {response: hi}\n"
		feature := "@agent:a\nFeature: f\n  Scenario: s\n    Given the channel \"" + tc.channel + "\"\n    Then the greeting contains \"hi\"\n"
		for _, f := range []struct{ name, src, at string }{{"s.yaml", yamlSrc, "s.yaml:4:22"}, {"s.feature", feature, "s.feature:4:23"}} {
			_, ds := Load(fstest.MapFS{f.name: {Data: []byte(f.src)}}, []string{f.name})
			var got []diag.Diagnostic
			for _, d := range ds {
				if strings.Contains(d.Message, "is not one the platform names") {
					got = append(got, d)
				}
			}
			if tc.want == "" {
				if len(got) != 0 || ds.HasErrors() {
					t.Errorf("%s: diagnostics %v, want none", f.name, ds)
				}
				continue
			}
			if len(got) != 1 || got[0].Severity != diag.Warning || got[0].Pos.String() != f.at ||
				!strings.Contains(got[0].Message, "close to "+tc.want) || !strings.Contains(got[0].Hint, `did you mean "`+tc.want+`"?`) {
				t.Errorf("%s: diagnostics %v, want one warning at %s meaning %s", f.name, ds, f.at, tc.want)
			}
			if says := strings.Contains(got[0].Hint, "written in capitals"); says != tc.capitals {
				t.Errorf("%s: hint %q says channels are written in capitals: %v, want %v", f.name, got[0].Hint, says, tc.capitals)
			}
			if call := strings.Contains(got[0].Message, "not a call"); call != (tc.want == "VOICE-SIP") {
				t.Errorf("%s: %q says it is not a call: %v", f.name, got[0].Message, call)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "voice", channel: "VOICE-SIP"},
		{name: "web chat", channel: "WEBCHAT"},
		{name: "lower case", channel: "voice-sip", want: "VOICE-SIP", capitals: true},
		{name: "underscore", channel: "VOICE_SIP", want: "VOICE-SIP"},
		{name: "no separator", channel: "VoiceSip", want: "VOICE-SIP", capitals: true},
		{name: "typo", channel: "VOICE-SPI", want: "VOICE-SIP"},
		{name: "web chat spaced", channel: "Web Chat", want: "WEBCHAT", capitals: true},
		{name: "another platform's", channel: "WHATSAPP"},
		{name: "a reference", channel: "${env:CHANNEL}"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
