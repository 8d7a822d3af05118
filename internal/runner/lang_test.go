package runner

import (
	"cmp"
	"regexp"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestLanguageNotReported: a language check on a reply whose metadata
// has no asrLangCode (or ttsLangCode), or has it null, cannot judge the
// agent: the reference lets a reply leave any metadata member out, so
// the platform did not report it, and the case errors saying so, rather
// than fail the agent with a diff of the code against "". A code that is
// reported and wrong still fails the agent; another check that failed on
// what was reported keeps the case failed.
func TestLanguageNotReported(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// edit rewrites the reply of the first turn.
		edit   func(body string) string
		expect string
		want   result.Status
		msg    string // in the error, or the failure
		// kind is the error's, when not the platform's (http).
		kind string
	}
	drop := regexp.MustCompile(`"asrLangCode":"[^"]*",?`)
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		e := newEnv(t, sim.Options{})
		e.proxy.onResponse(func(kind string, n int64, body []byte) []byte {
			if kind == "turn" && n == 1 {
				return []byte(tc.edit(string(body)))
			}
			return body
		})
		src := "suite: s\nagent: " + e.restaurant + "\nscenarios:\n  - name: lang\n    turns:\n      - say: hello\n        expect: " + tc.expect + "\n"
		c := runOne(t, e.opts(), src)
		a := c.Last()
		if c.Status != tc.want {
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		}
		switch tc.want {
		case result.Errored:
			kind := cmp.Or(tc.kind, result.KindHTTP)
			if a.Error == nil || a.Error.Kind != kind || a.Error.Pos.Line != 7 || !strings.Contains(a.Error.Message, tc.msg) || len(a.Failures) != 0 {
				t.Errorf("error %+v, failures %+v; want a %s error at line 7 saying %q, no failure", a.Error, a.Failures, kind, tc.msg)
			}
		case result.Failed:
			if a.Error != nil || len(a.Failures) == 0 || !strings.Contains(a.Failures[0].Message, tc.msg) {
				t.Errorf("error %+v, failures %+v; want a failure saying %q", a.Error, a.Failures, tc.msg)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "left out", edit: func(b string) string { return drop.ReplaceAllString(b, "") }, expect: "{lang: {asr: en-GB}}", want: result.Errored,
			msg: "lang.asr: the platform did not report the reply's asr language: metadata.asrLangCode is not in the reply (the reference lets a reply leave any metadata member out), so the check cannot judge the agent"},
		{name: "null", edit: func(b string) string { return drop.ReplaceAllString(b, `"asrLangCode":null,`) }, expect: "{lang: {asr: en-GB}}", want: result.Errored,
			msg: "metadata.asrLangCode is not in the reply"},
		{name: "tts left out", edit: func(b string) string { return regexp.MustCompile(`"ttsLangCode":"[^"]*",?`).ReplaceAllString(b, "") }, expect: "{lang: {tts: en-GB}}", want: result.Errored,
			msg: "lang.tts: the platform did not report the reply's tts language: metadata.ttsLangCode is not in the reply"},
		{name: "reported, another code", edit: func(b string) string { return drop.ReplaceAllString(b, `"asrLangCode":"fr-FR",`) }, expect: "{lang: {asr: en-GB}}", want: result.Failed,
			msg: "asr language"},
		{name: "left out, and the reply wrong", edit: func(b string) string { return drop.ReplaceAllString(b, "") }, expect: "{response: {contains: zebra}, lang: {asr: en-GB}}", want: result.Failed,
			msg: "reply does not contain"},
		{name: "left out, a reference that does not expand", edit: func(b string) string { return drop.ReplaceAllString(b, "") }, expect: `{lang: {asr: "${env:AGENTTEST_TEST_UNSET_LANG}"}}`,
			// the scenario's problem, whatever the platform reported
			want: result.Errored, kind: result.KindConfig, msg: "lang.asr: cannot expand"},
		{name: "left out, a matcher that holds of nothing", edit: func(b string) string { return drop.ReplaceAllString(b, "") }, expect: `{lang: {asr: {one_of: [en-GB, ""]}}}`, want: result.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
