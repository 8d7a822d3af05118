package scenario

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/agenttest/agenttest/internal/diag"
)

// TestLoadFileDiagnostics checks single problems: each snippet must yield a
// diagnostic at the given line:col whose text contains want.
func TestLoadFileDiagnostics(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		src  string
		// at is "line:col" of the expected diagnostic.
		at   string
		want string
		// warning is set when the diagnostic must be a warning (the file
		// then still loads).
		warning bool
	}
	run := func(t *testing.T, tc testCase) {
		s, ds := LoadFile("s.yaml", []byte(tc.src))
		var found bool
		for _, d := range ds {
			if strings.HasPrefix(d.Pos.String(), "s.yaml:"+tc.at) && strings.Contains(d.String(), tc.want) {
				found = true
				if tc.warning != (d.Severity.String() == "warning") {
					t.Errorf("severity of %q is %s", d, d.Severity)
				}
			}
		}
		if !found {
			t.Errorf("no diagnostic at %s containing %q; got:\n%s", tc.at, tc.want, renderDiags(ds))
		}
		if tc.warning && s == nil {
			t.Errorf("a file with only warnings must load:\n%s", renderDiags(ds))
		}
		if !tc.warning && s != nil {
			t.Errorf("a file with errors must not load")
		}
	}
	const head = "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect:\n"
	testCases := []testCase{
		{name: "syntax error", src: "scenarios:\n  - name: a\n   turns: x\n", at: "3:4", want: "invalid YAML"},
		{name: "unknown suite key", src: "scenarios: []\nagnet: x\n", at: "2:1", want: `unknown key "agnet" in suite (did you mean "agent"?)`},
		{name: "no scenarios key", src: "agent: x\n", at: "1:1", want: "suite has no scenarios: key"},
		{name: "scenarios not a list", src: "scenarios: {a: 1}\n", at: "1:12", want: "scenarios must be a list, not a mapping (each scenario is an item of the list: start it with a dash, as in scenarios: then - name: ...)"},
		{name: "a scenario without its dash", src: "scenarios:\n  name: a\n  turns: [{say: hi}]\n", at: "2:3", want: "scenarios must be a list, not a mapping (each scenario is an item of the list: start it with a dash"},
		{name: "empty scenarios", src: "scenarios: []\n", at: "1:1", want: "scenarios is empty", warning: true},
		{name: "bad env", src: "env: sandbx\nscenarios: []\n", at: "1:6", want: `did you mean "sandbox"?`},
		{name: "scenario without name", src: "scenarios:\n  - turns: [{say: hi}]\n", at: "2:5", want: "scenario has no name:"},
		{name: "duplicate key", src: "scenarios:\n  - name: a\n    name: b\n    turns: [{say: hi}]\n", at: "3:5", want: `key "name" is already defined at line 2`},
		{name: "turn is a string", src: "scenarios:\n  - name: a\n    turns: [hello]\n", at: "3:13", want: "a turn must be a mapping with say:"},
		{name: "say is null", src: "scenarios:\n  - name: a\n    turns: [{say: }]\n", at: "3:19", want: "say has no value"},
		{name: "response list", src: head + "          response: [a, b]\n", at: "6:21", want: "a list is not a matcher"},
		{name: "matcher null", src: head + "          response: {contains: }\n", at: "6:32", want: "has no value"},
		{name: "one_of empty", src: head + "          response: {one_of: []}\n", at: "6:30", want: "one_of must not be empty"},
		{name: "any not list", src: head + "          response: {any: {contains: x}}\n", at: "6:27", want: "any must be a list of matchers"},
		{name: "similar without to", src: head + "          response: {similar: {min: 0.5}}\n", at: "6:31", want: "needs to:"},
		{name: "similar min negative", src: head + "          response: {similar: {to: a, min: -0.1}}\n", at: "6:44", want: "min must be between 0 and 1"},
		{name: "ignore_case not bool", src: head + "          response: {contains: a, ignore_case: 1}\n", at: "6:48", want: "ignore_case must be true or false"},
		{name: "only ignore_case", src: head + "          response: {ignore_case: true}\n", at: "6:21", want: "matcher has no checks"},
		// A reference stands for literal text at run time, so the syntax
		// around it is known at lint; left to run time it failed the
		// scenario as if the agent were at fault.
		{name: "regex broken around a var", src: "vars: {x: a}\n" + head + "          response: {matches: '${x}('}\n", at: "7:31", want: `invalid regular expression "${x}(": missing closing )`},
		{name: "capture regex broken around a var", src: "vars: {x: a}\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        capture: {r: {response: '(${x}'}}\n", at: "6:33", want: "missing closing )"},
		{name: "regex in not_matches", src: head + "          response: {not_matches: 'a)'}\n", at: "6:35", want: "unexpected ): `a)`"},
		{name: "trace bad key", src: head + "          trace: {include: [A]}\n", at: "6:19", want: `did you mean "includes"?`},
		{name: "state presence both", src: head + "          state: {a: {present: true, absent: false}}\n", at: "6:38", want: "present or absent, not both"},
		{name: "state list", src: head + "          state: {a: [1, 2]}\n", at: "6:22", want: "a list is not a matcher"},
		{name: "skip: no", src: "scenarios:\n  - name: a\n    skip: no\n    turns: [{say: hi}]\n", at: "3:11",
			want: `skip: no is not a boolean in YAML 1.2: it would skip the scenario with the reason "no" (write false, or leave skip out, to run it; quote it (skip: "no") for a reason of that word)`},
		{name: "skip: Off", src: "scenarios:\n  - name: a\n    skip: Off\n    turns: [{say: hi}]\n", at: "3:11", want: "skip: Off is not a boolean in YAML 1.2"},
		// Debug chat reports a handoff by its destination: "" expects
		// what no reply gives, so the check could never pass.
		{name: "handoff empty", src: head + "          handoff: \"\"\n", at: "6:20", want: `handoff: an empty destination matches no handoff (write true for any handoff, or false for none)`},
		{name: "handoff number", src: head + "          handoff: {equals: 1, x: 2}\n", at: "6:32", want: `unknown key "x" in handoff matcher`},
		{name: "ended string", src: head + "          ended: \"true\"\n", at: "6:18", want: "ended must be true or false, not a string"},
		{name: "delayed no", src: head + "          delayed: no\n", at: "6:20", want: "write false"},
		{name: "metric count negative", src: head + "          metrics: {A: {count: -1}}\n", at: "6:32", want: "count must be 0 or more"},
		{name: "metric count mixed", src: head + "          metrics: {A: {count: 1, contains: x}}\n", at: "6:35", want: `"contains" cannot be combined with count`},
		{name: "functions unknown", src: head + "          functions: {calls: [a]}\n", at: "6:23", want: `did you mean "called"?`},
		{name: "topics cited list", src: head + "          topics: {cited: [a]}\n", at: "6:27", want: "a list is not a matcher"},
		{name: "latency string", src: head + "          latency_ms: fast\n", at: "6:23", want: "latency_ms must be a whole number"},
		{name: "latency max missing", src: head + "          latency_ms: {min: 3}\n", at: "6:24", want: `unknown key "min" in latency_ms`},
		{name: "lang unknown", src: head + "          lang: {stt: en}\n", at: "6:18", want: `unknown key "stt" in lang`},
		{name: "metadata empty segment", src: head + "          metadata: {.a: x}\n", at: "6:22", want: "invalid path"},
		{name: "unknown var", src: head + "          response: \"${prty}\"\n", at: "6:22", want: "unknown variable ${prty}"},
		{name: "unknown var suggestion", src: "vars: {party: 2}\n" + head + "          response: \"${prty}\"\n", at: "7:22", want: "did you mean ${party}?"},
		{name: "capture used in same turn", src: "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect: {response: \"${r}\"}\n        capture: {r: {response: x}}\n", at: "5:29", want: "unknown variable ${r}"},
		{name: "capture bad regex", src: "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        capture: {r: {response: '['}}\n", at: "5:33", want: "invalid regular expression"},
		{name: "capture not mapping", src: "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        capture: {r: 'x'}\n", at: "5:22", want: "must be a mapping of one field"},
		{name: "capture state without key", src: "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        capture: {r: {state.: x}}\n", at: "5:23", want: `cannot read field "state."`},
		{name: "say with env ok but malformed", src: "scenarios:\n  - name: a\n    turns: [{say: \"${env:}\"}]\n", at: "3:20", want: "invalid environment variable name"},
		{name: "silence false without say", src: "scenarios:\n  - name: a\n    turns: [{silence: false}]\n", at: "3:13", want: "silence: false and no say:"},
		{name: "turns empty", src: "scenarios:\n  - name: a\n    turns: []\n", at: "3:12", want: "turns must not be empty"},
		{name: "turns mapping", src: "scenarios:\n  - name: a\n    turns: {say: hi}\n", at: "3:12", want: "turns must be a list"},
		{name: "greeting only warns when empty", src: "scenarios:\n  - name: a\n    greeting: {}\n", at: "2:5", want: "no turns and no greeting checks"},
		{name: "repeat past the most runs", src: "scenarios:\n  - name: a\n    repeat: 1000000000\n    turns: [{say: hi}]\n", at: "3:13", want: "repeat must be at most 100000, not 1000000000"},
		{name: "repeat not int", src: "scenarios:\n  - name: a\n    repeat: many\n    turns: [{say: hi}]\n", at: "3:13", want: "repeat must be a whole number"},
		{name: "pass_rate zero", src: "scenarios:\n  - name: a\n    repeat: 3\n    pass_rate: 0\n    turns: [{say: hi}]\n", at: "4:16", want: "pass_rate must be above 0"},
		{name: "pass_rate percent over", src: "scenarios:\n  - name: a\n    repeat: 3\n    pass_rate: 120%\n    turns: [{say: hi}]\n", at: "4:16", want: "not 1.2"},
		{name: "confirm in a turn", src: "scenarios:\n  - name: a\n    turns: [{say: hi, confirm: {}}]\n", at: "3:23", want: "belongs to the scenario, not to a turn"},
		{name: "empty probe", src: "scenarios:\n  - name: a\n    probe: {}\n", at: "3:5", want: "probe has neither outbound_call nor sms"},
		{name: "examples row not mapping", src: "scenarios:\n  - name: a\n    examples: [x]\n    turns: [{say: hi}]\n", at: "3:16", want: "examples row must be a mapping"},
		{name: "examples value list", src: "scenarios:\n  - name: a\n    examples: [{a: [1]}]\n    turns: [{say: hi}]\n", at: "3:20", want: "examples.a must be a single value"},
		{name: "examples row empty", src: "scenarios:\n  - name: a\n    examples: [{}]\n    turns: [{say: hi}]\n", at: "3:16", want: "examples row has no values"},
		{name: "tags mapping", src: "tags: {a: 1}\nscenarios: []\n", at: "1:7", want: "tags must be a list"},
		{name: "start not mapping", src: "start: WEBCHAT\nscenarios: []\n", at: "1:8", want: "start must be a mapping"},
		{name: "vars nested", src: "vars: {a: {b: c}}\nscenarios: []\n", at: "1:11", want: "vars.a must be a single value"},
		{name: "non-scalar key", src: "scenarios: []\n? [a]\n: b\n", at: "2:3", want: "keys must be plain names"},
		{name: "alias bomb", src: bomb(), at: "", want: "file is too complex to load"},
		// An alias inside the value it names was followed until the
		// alias budget ran out, each level longer to describe: minutes
		// and gigabytes for a file of two lines.
		{name: "alias merged into itself", src: "x-a: &a {name: a, <<: *a}\nscenarios: [*a]\n", at: "1:23",
			want: "alias *a is inside the value of its anchor &a: it would repeat that value inside itself without end"},
		{name: "alias inside its own matcher", src: "x-a: &a {not: *a}\nscenarios: [{name: a, turns: [{say: hi, expect: {response: *a}}]}]\n", at: "1:15",
			want: "alias *a is inside the value of its anchor &a"},
		{name: "alias inside its own list", src: "scenarios: &s [{name: a, turns: [{say: hi}], x: *s}]\n", at: "1:49",
			want: "alias *s is inside the value of its anchor &s"},
		// Line maxDepth holds the anchor whose value nests maxDepth+1
		// levels: a scalar, x-0's mapping, then one per anchor.
		{name: "anchors nested too deep", src: anchorChain(2 * maxDepth), at: fmt.Sprintf("%d:8", maxDepth),
			want: fmt.Sprintf("file is too complex to load: values nested more than %d levels deep, aliases followed", maxDepth)},
		// One level more than the chain that loads (TestLoadsCleanly):
		// the document's root is where the bound is passed.
		{name: "anchors nested one level too deep", src: anchorChain(maxDepth - 7), at: "1:1",
			want: "values nested more than"},
		// yaml.v3 keeps every key of a mapping it decodes into nodes; the
		// keys read without pairs took the last of two in silence.
		{name: "present twice", src: head + "          state: {k: {present: true, present: false}}\n", at: "6:38", want: `state.k: key "present" is already defined at line 6`},
		{name: "absent twice", src: head + "          state: {k: {absent: true, absent: false}}\n", at: "6:37", want: `state.k: key "absent" is already defined at line 6`},
		{name: "count twice", src: head + "          metrics: {k: {count: 1, count: 2}}\n", at: "6:35", want: `metrics.k: key "count" is already defined at line 6`},
		{name: "level twice", src: "scenarios:\n  - name: a\n    via: messaging\n    turns:\n      - say: hi\n        expect:\n          system_message: {level: warning, level: error}\n",
			at: "7:44", want: `system_message: key "level" is already defined at line 7`},
		{name: "confidence too high", src: sc("confidence: 1"), at: "3:17", want: "confidence must be above 0.5 and below 1, not 1"},
		{name: "confidence percent too low", src: sc(`confidence: "40%"`), at: "3:17", want: "confidence must be above 0.5 and below 1, not 0.4"},
		{name: "margin reaches zero", src: sc("pass_rate: 0.1", "margin: 0.2", "confidence: 0.9"), at: "4:13", want: "margin must be above 0 and below pass_rate 0.1"},
		{name: "margin zero is not the default", src: sc("pass_rate: 0.9", "margin: 0", "confidence: 0.9"), at: "4:13", want: "margin must be above 0 and below pass_rate, not 0"},
		{name: "confidence zero is not a fixed run", src: sc("repeat: 5", "confidence: 0"), at: "4:17", want: "confidence must be above 0.5 and below 1, not 0"},
		{name: "confidence zero percent", src: sc(`confidence: "0%"`), at: "3:17", want: "confidence must be above 0.5 and below 1, not 0"},
		// A negative confidence was read as "no confidence": the scenario
		// ran once, without a word.
		{name: "confidence negative", src: sc("pass_rate: 0.9", "confidence: -0.95"), at: "4:17", want: "confidence must be above 0.5 and below 1, not -0.95"},
		{name: "confidence negative percent", src: sc(`confidence: "-95%"`), at: "3:17", want: "confidence must be above 0.5 and below 1, not -0.95"},
		{name: "margin negative without confidence", src: sc("repeat: 5", "margin: -0.1"), at: "4:13", want: "margin must be above 0 and below pass_rate, not -0.1"},
		{name: "pass_rate not finite", src: sc("repeat: 5", "pass_rate: .nan"), at: "4:16", want: "pass_rate must be a finite number, not .nan"},
		{name: "confidence not finite", src: sc("confidence: -.inf"), at: "3:17", want: "confidence must be a finite number, not -.inf"},
		{name: "margin without confidence", src: sc("repeat: 5", "margin: 0.2"), at: "4:5", want: "margin has no effect without confidence", warning: true},
		{name: "repeat too few for the guarantee", src: sc("repeat: 40", "pass_rate: 0.9", "confidence: 0.95"), at: "3:5", warning: true,
			want: "repeat: 40 is too few for pass rate 0.9, margin 0.1 at 95% confidence: the guarantee needs up to 282 runs; with 40, an agent at exactly 0.9 passes only 25% of the time and is inconclusive (a failure) 74% of the time"},
		{name: "quarantine without reason", src: sc("quarantine: {until: 2026-12-31}"), at: "3:5", want: "quarantine needs a reason"},
		{name: "quarantine without until", src: sc("quarantine: {reason: flaky}"), at: "3:5", want: "quarantine needs until:"},
		{name: "quarantine bad until", src: sc("quarantine: {reason: flaky, until: next week}"), at: "3:40", want: `until must be a date such as 2026-12-31, not "next week"`},
		{name: "quarantine unknown key", src: sc("quarantine: {reason: flaky, until: 2026-12-31, expires: 2027-01-01}"), at: "3:52", want: `unknown key "expires" in quarantine (did you mean "until"?)`},
		{name: "quarantine not a mapping", src: sc("quarantine: 2026-12-31"), at: "3:17", want: "quarantine must be a mapping"},
		// x- keys hold anchors at the top level only: below it, one is
		// a key written wrong, never skipped.
		{name: "x- key in a scenario", src: sc("x-note: later"), at: "3:5", want: `unknown key "x-note" in scenario`},
		{name: "x- key in expect", src: head + "          x-response: hi\n", at: "6:11", want: `unknown key "x-response" in expect`},
		{name: "timeout a decimal without unit", src: sc("timeout: 1.5"), at: "3:14", want: "timeout 1.5 has no unit (add a unit, e.g. 1.5s)"},
		{name: "merge key", src: "x-m: &m {name: merged, turns: [{say: hi}]}\nscenarios:\n  - <<: *m\n    tunrs: []\n", at: "4:5", want: `did you mean "turns"?`},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// sc is a one-scenario suite with the given scenario keys, from line 3.
func sc(keys ...string) string {
	return "scenarios:\n  - name: a\n    " + strings.Join(keys, "\n    ") + "\n    turns: [{say: hi}]\n"
}

// bomb is a "billion laughs" document: nine levels of ten aliases inside
// a matcher, 10^9 matchers when walked naively.
func bomb() string {
	var b strings.Builder
	b.WriteString("x-0: &a0 {contains: x}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "x-%d: &a%d [", i, i)
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			if i == 1 {
				b.WriteString("*a0")
			} else {
				fmt.Fprintf(&b, "{any: *a%d}", i-1)
			}
		}
		b.WriteString("]\n")
	}
	b.WriteString("scenarios: [{name: a, turns: [{say: hi, expect: {response: {any: *a9}}}]}]\n")
	return b.String()
}

// anchorChain is a suite whose check is the last of n anchors, each
// nesting the one before: n+8 levels of values, aliases followed (the
// anchor n+1, the document down to the state key 7).
func anchorChain(n int) string {
	var b strings.Builder
	b.WriteString("x-0: &a0 {contains: x}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "x-%d: &a%d {not: *a%d}\n", i, i, i-1)
	}
	fmt.Fprintf(&b, "scenarios: [{name: a, turns: [{say: hi, expect: {state: {k: *a%d}}}]}]\n", n-1)
	return b.String()
}

// TestExpectKeysHaveDecoders keeps the allow-list and the decoders in step.
func TestExpectKeysHaveDecoders(t *testing.T) {
	t.Parallel()
	if len(expectKeys.keys) != len(expectDecoders) {
		t.Errorf("%d keys, %d decoders", len(expectKeys.keys), len(expectDecoders))
	}
	for _, k := range expectKeys.keys {
		if expectDecoders[k] == nil {
			t.Errorf("expect key %q has no decoder", k)
		}
	}
}

// TestOneProblemOneDiagnostic: a value that is wrong in one way is
// reported once, not also as every rule it then fails.
func TestOneProblemOneDiagnostic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value, want string }{
		{"null name", "null", "4:11: name has no value"},
		{"list name", "[a, b]", "4:11: name must be a single value, not a list"},
		{"empty name", `""`, "4:11: scenario name must not be empty"},
		{"blank name", `"  "`, "4:11: scenario name must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "suite: s\nagent: a\nscenarios:\n  - name: " + tc.value + "\n    turns: [{say: hi}]\n"
			_, ds := LoadFile("s.yaml", []byte(src))
			if len(ds) != 1 || !strings.HasPrefix(ds[0].String(), "s.yaml:"+tc.want) {
				t.Errorf("want one diagnostic %q, got:\n%s", tc.want, renderDiags(ds))
			}
		})
	}
}

// TestMisspeltKeyOneDiagnostic: a required key written misspelt, or as
// the word people reach for (user: for say:), is reported once, as the
// unknown key with its did-you-mean, not also as the key that is then
// missing. An unknown key taken for another key leaves the missing one
// reported.
func TestMisspeltKeyOneDiagnostic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src string }{
		{"scenarios", "agent: a\nscenarois:\n  - name: a\n    turns: [{say: hi}]\n"},
		{"scenario name", "agent: a\nscenarios:\n  - nmae: a\n    turns: [{say: hi}]\n"},
		{"turns", "agent: a\nscenarios:\n  - name: a\n    steps: [{say: hi}]\n"},
		{"greeting", "agent: a\nscenarios:\n  - name: a\n    greting: {response: hi}\n"},
		{"say", "agent: a\nscenarios:\n  - name: a\n    turns: [{sya: hi}]\n"},
		{"say as user", "agent: a\nscenarios:\n  - name: a\n    turns: [{user: hi}]\n"},
		{"call to", "agent: a\nscenarios:\n  - name: a\n    probe: {outbound_call: {to_number: \"+447700900001\"}}\n"},
		{"sms to", "agent: a\nscenarios:\n  - name: a\n    probe: {sms: {number: \"+447700900001\", message: hi}}\n"},
		{"sms message", "agent: a\nscenarios:\n  - name: a\n    probe: {sms: {to: \"+447700900001\", body: hi}}\n"},
		{"outbound_call", "agent: a\nscenarios:\n  - name: a\n    probe: {outbound_cal: {to: \"+447700900001\"}}\n"},
		{"outbound_call as call", "agent: a\nscenarios:\n  - name: a\n    probe: {call: {to: \"+447700900001\"}}\n"},
		{"sms", "agent: a\nscenarios:\n  - name: a\n    probe: {smss: {to: \"+447700900001\", message: hi}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ds := LoadFile("s.yaml", []byte(tc.src))
			if errs := errorsOf(ds); len(errs) != 1 || !strings.Contains(errs[0], "did you mean") {
				t.Errorf("want one error, the did-you-mean of the unknown key, got:\n%s", renderDiags(ds))
			}
		})
	}
	for _, tc := range []struct{ name, src, want string }{
		{"another key misspelt", "agent: a\nscenarios:\n  - name: a\n    turns: [{expct: {response: hi}}]\n", "turn has no say:"},
		{"a key of another level", "agent: a\nscenarios:\n  - turns: [{say: hi}]\n    suite: x\n", "scenario has no name:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, ds := LoadFile("s.yaml", []byte(tc.src))
			if errs := errorsOf(ds); len(errs) != 2 || !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, tc.want) }) {
				t.Errorf("want the unknown key and %q, got:\n%s", tc.want, renderDiags(ds))
			}
		})
	}
}

// TestRefusedCaptureOneDiagnostic: a capture refused for its field, its
// pattern or its shape is one mistake, reported at the capture: the
// ${name} of a later turn that uses it is not reported again as unknown.
// A name used before its capture still is.
func TestRefusedCaptureOneDiagnostic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, capture, want string }{
		{"unknown field", "{ref: {reply: 'R(\\d+)'}}", `cannot read field "reply"`},
		{"bad pattern", "{ref: {response: 'R(\\d+'}}", "invalid regular expression"},
		{"two fields", "{ref: {response: a, node: b}}", "must name exactly one field"},
		{"not a mapping", "{ref: 'R(\\d+)'}", "must be a mapping of one field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "agent: a\nscenarios:\n  - name: a\n    turns:\n      - say: hi\n        capture: " + tc.capture +
				"\n      - say: my ref is ${ref}\n        expect: {response: {contains: '${ref}'}}\n"
			_, ds := LoadFile("s.yaml", []byte(src))
			if errs := errorsOf(ds); len(errs) != 1 || !strings.Contains(errs[0], "s.yaml:6:") || !strings.Contains(errs[0], tc.want) {
				t.Errorf("want one error at the capture, %q, got:\n%s", tc.want, renderDiags(ds))
			}
		})
	}
	src := "agent: a\nscenarios:\n  - name: a\n    turns:\n      - say: my ref is ${ref}\n        capture: {ref: {reply: x}}\n"
	if _, ds := LoadFile("s.yaml", []byte(src)); len(errorsOf(ds)) != 2 {
		t.Errorf("a name used in the turn that captures it: want it reported beside the capture, got:\n%s", renderDiags(ds))
	}
}

// TestLongLineSource: a diagnostic keeps its whole source line, cut to
// the part around the problem only when printed, after the keys on it
// are masked: a cut when loading could go through a key and leave a part
// no redactor knows. The lines are slices of one copy of the file's text,
// so a minified file's thousands of diagnostics do not each hold a copy
// of its long line.
func TestLongLineSource(t *testing.T) {
	t.Parallel()
	line := "    turns: [{say: \"" + strings.Repeat("x", 5000) + "\", expct: 1, nxet: 2}]"
	src := "agent: a\nscenarios:\n  - name: a\n" + line + "\n"
	_, ds := LoadFile("s.yaml", []byte(src))
	if len(ds) < 2 {
		t.Fatalf("want a diagnostic for each unknown key, got:\n%s", renderDiags(ds))
	}
	for _, d := range ds[:2] {
		if d.Source != line || d.SourceCol != 0 {
			t.Errorf("%s: source %.40q… (%d bytes), col %d: want the whole line, at the diagnostic's column", d, d.Source, len(d.Source), d.SourceCol)
		}
	}
	if unsafe.StringData(ds[0].Source) != unsafe.StringData(ds[1].Source) {
		t.Error("two diagnostics of one line hold two copies of it")
	}
}

// errorsOf renders the errors of ds, warnings left out.
func errorsOf(ds diag.Diagnostics) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == diag.Error {
			out = append(out, d.String())
		}
	}
	return out
}

// TestSkipWords: skip: no (n, off) was read as the reason "no" by
// yaml.v3, where YAML 1.1 read false, and the scenario meant to run was
// skipped, the run green without it. It is an error, as handoff: no is;
// quoted it is a reason, and the words that skip still skip.
func TestSkipWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value, skip string
		err         bool
	}{
		{value: "no", err: true},
		{value: "N", err: true},
		{value: "off", err: true},
		{value: `"no"`, skip: "no"},
		{value: "'off'", skip: "off"},
		{value: "false"},
		{value: "true", skip: "skipped"},
		{value: "yes", skip: "yes"},
		{value: "waiting for the new flow", skip: "waiting for the new flow"},
	} {
		s, ds := LoadFile("s.yaml", []byte("scenarios:\n  - name: a\n    skip: "+tc.value+"\n    turns: [{say: hi, expect: {ended: false}}]\n"))
		if tc.err {
			if !ds.HasErrors() {
				t.Errorf("skip: %s: no error", tc.value)
			}
			continue
		}
		if s == nil {
			t.Errorf("skip: %s:\n%s", tc.value, renderDiags(ds))
			continue
		}
		if got := s.Scenarios[0].Skip; got != tc.skip {
			t.Errorf("skip: %s skips with %q, want %q", tc.value, got, tc.skip)
		}
	}
}

// TestSimilarMinAsAPercentage: a similar min written as a percentage
// without its sign (70) says the share to write; a value no percentage
// can be (170, -0.1) only that it is out of range.
func TestSimilarMinAsAPercentage(t *testing.T) {
	t.Parallel()
	for minText, hint := range map[string]string{"70": `write 0.7 or "70%"`, "100": `write 1 or "100%"`, "170": "", "-0.1": "", "1.5": "", "10": `write 0.1 or "10%"`, "9": ""} {
		src := "scenarios:\n  - name: a\n    turns:\n      - say: hi\n        expect:\n          response: {similar: {to: a, min: " + minText + "}}\n"
		_, ds := LoadFile("s.yaml", []byte(src))
		if len(ds) != 1 || ds[0].Message != "response: similar: min must be between 0 and 1, not "+minText || ds[0].Hint != hint {
			t.Errorf("min %s: %s, want the range error with the hint %q", minText, renderDiags(ds), hint)
		}
	}
}
