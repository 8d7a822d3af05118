package main

// The messages docs/configuration.md quotes of a target that is set up
// wrong, each reproduced from a config file laid out so that its
// positions are the guide's: a change of a message, or of where it
// points, cannot leave the guide quoting what no run prints.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocConfigurationMessages: every message block of the guide below
// is printed, line for line, by the command given the files and the
// environment of its case. None of them calls a platform: each is said
// before the first call.
func TestDocConfigurationMessages(t *testing.T) {
	t.Parallel()
	const guide = "docs/configuration.md"
	const suite = "suite: s\nagent: restaurant\nscenarios:\n  - name: greets\n    greeting: {response: {contains: Welcome}}\n"
	type testCase struct {
		name   string
		anchor string // a text of the guide's block
		files  map[string]string
		env    map[string]string
		args   []string
		code   int
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		lines, at := docBlock(t, guide, tc.anchor)
		c := newCLI(t, writeTree(t, tc.files), tc.env, tc.args...)
		out := c.expect(t, tc.code)
		checkDocBlock(t, guide, lines, at, out, func(string) bool { return false })
	}
	for _, tc := range []testCase{
		{
			name:   "embedded simulator",
			anchor: "no target configured; using the embedded simulator",
			files:  map[string]string{"s.yaml": suite},
			args:   []string{"run", "s.yaml"},
			code:   exitOK,
		},
		{
			name:   "messaging_quiet past the turn timeout",
			anchor: "is not shorter than the turn timeout of 5s",
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `targets:
  sandbox:
    build_url: https://build.us.example-platform.com
    messaging_url: https://messaging.us-1.example-platform.com
    messaging_host: webchat.example.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    build_key: ${env:SANDBOX_BUILD_KEY}
    messaging_quiet: 10s
`},
			env:  map[string]string{"SANDBOX_BUILD_KEY": "sandbox-build-key-0123456789"},
			args: []string{"run", "--target", "sandbox", "--turn-timeout", "5s", "s.yaml"},
			code: exitUsage,
		},
		{
			name:   "key moved to another host",
			anchor: "a key goes only to the host it was configured for",
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `targets:
  prod:
    build_url: https://build.prod.example.com
    runtime_url: https://runtime.prod.example.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    build_key: ${env:PROD_BUILD_KEY}
`},
			env:  map[string]string{"PROD_BUILD_KEY": "prod-build-key-0123456789", "AGENTTEST_BUILD_URL": "https://build.staging.example.com"},
			args: []string{"run", "--target", "prod", "s.yaml"},
			code: exitUsage,
		},
		{
			name:   "no connector for the agent",
			anchor: "has no Messaging connector for agent clinic",
			files: map[string]string{
				"suites/web.yaml": "suite: web\nagent: clinic\nvia: messaging\nscenarios:\n  - name: greets over web chat\n    greeting: {response: {contains: Hello}}\n",
				"agenttest.yaml": `default_target: sandbox
targets:
  sandbox:
    build_url: https://build.us.example-platform.com
    messaging_url: https://messaging.us-1.example-platform.com
    messaging_host: webchat.example.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    env: sandbox
    build_key: ${env:SANDBOX_BUILD_KEY}
    connector_token: ${env:RESTAURANT_WEBCHAT}
`},
			env:  map[string]string{"SANDBOX_BUILD_KEY": "sandbox-build-key-0123456789", "RESTAURANT_WEBCHAT": "ct-restaurant-0123456789"},
			args: []string{"run", "suites"},
			code: exitUsage,
		},
		{
			name:   "literal key",
			anchor: "must be an ${env:NAME} reference, not a literal key",
			files: map[string]string{"agenttest.yaml": `targets:
  t:
    build_url: https://build.example.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    build_key: sk-live-0123456789abcdef
`},
			args: []string{"lint", "agenttest.yaml"},
			code: exitUsage,
		},
		{
			name:   "short key",
			anchor: "keys shorter than 12 characters are refused",
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `targets:
  t:
    build_url: https://build.example.com
    account_id: ws-a1b2c3d4
    build_key: ${env:MY_KEY}
`},
			env:  map[string]string{"MY_KEY": "abcde"},
			args: []string{"run", "--target", "t", "s.yaml"},
			code: exitUsage,
		},
		{
			name:   "unset key variable",
			anchor: "which is not set (set LIVE_BUILD_KEY",
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `default_target: sandbox
targets:
  sandbox:
    build_url: https://build.us.example-platform.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    env: sandbox
    build_key: ${env:SANDBOX_BUILD_KEY}
  live:
    build_url: https://build.eu.example-platform.com
    runtime_url: https://runtime-euw-1.example-platform.com
    account_id: ws-a1b2c3d4
    agent_id: restaurant
    env: live
    allow_live: true
    runtime_key: ${env:LIVE_RUNTIME_KEY}
    build_key: ${env:LIVE_BUILD_KEY}
`},
			env:  map[string]string{"LIVE_RUNTIME_KEY": "live-runtime-key-0123456789"},
			args: []string{"run", "--target", "live", "s.yaml"},
			code: exitUsage,
		},
		{
			name:   "plain http",
			anchor: `build_url "http://build.example.com" is plain http`,
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `targets:
  t:
    account_id: ws-a1b2c3d4
    build_url: http://build.example.com
    build_key: ${env:K}
`},
			env:  map[string]string{"K": "build-key-0123456789"},
			args: []string{"run", "--target", "t", "s.yaml"},
			code: exitUsage,
		},
		{
			// Nothing selected: the warning is said and nothing is called.
			name:   "allow_http",
			anchor: "warning: target \"lab\": allow_http is set",
			files: map[string]string{"s.yaml": suite, "agenttest.yaml": `targets:
  lab:
    account_id: ws-a1b2c3d4
    build_url: http://build.lab.internal
    build_key: ${env:K}
    agent_id: restaurant
    allow_http: true
`},
			env:  map[string]string{"K": "build-key-0123456789"},
			args: []string{"run", "--target", "lab", "--tags", "@none", "s.yaml"},
			code: exitEmpty,
		},
		{
			name:   "variables without a key",
			anchor: "the target from AGENTTEST_* variables has no build_key",
			files:  map[string]string{"s.yaml": suite},
			env:    map[string]string{"AGENTTEST_BUILD_URL": "https://build.us.example-platform.com"},
			args:   []string{"run", "s.yaml"},
			code:   exitUsage,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestDocEnvPinSample: the refusal docs/configuration.md ("Live safety")
// quotes is the one the nightly job's selection of this repository's
// suites meets against the live target of examples/agenttest.yaml, whose
// suites pin env: sandbox.
func TestDocEnvPinSample(t *testing.T) {
	t.Parallel()
	const guide = "docs/configuration.md"
	lines, at := docBlock(t, guide, "selected scenarios of this file run in sandbox, not in live")
	files := map[string]string{}
	for _, name := range []string{"examples/agenttest.yaml", "suites/clinic.yaml", "suites/confirmations.yaml", "suites/restaurant.yaml", "suites/utility-billing.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(name, "examples/")] = string(b)
	}
	env := map[string]string{
		"LIVE_BUILD_KEY": "live-build-key-0123456789", "LIVE_RUNTIME_KEY": "live-runtime-key-0123456789",
		"LIVE_SMS_CONNECTOR_ID": "CONN-1234abcd", "WEBHOOK_PUBLIC_URL": "https://hooks.example.com/agenttest",
	}
	c := newCLI(t, writeTree(t, files), env, "run", "suites", "--target", "live", "--allow-live", "--tags", "@confirm || @smoke")
	out := c.expect(t, exitUsage)
	checkDocBlock(t, guide, lines, at, out, func(string) bool { return false })
}

// TestDocDiscoverySuiteKeys: a YAML file found in a directory whose top
// level holds only suite keys is a suite (docs/configuration.md,
// "Discovery"), so one whose scenarios are missing is reported, not
// passed over. Every suite key counts: before, via: and streaming:
// made a file of something else, and lint said "no problems" of a
// directory whose web-chat suite had lost its scenarios.
func TestDocDiscoverySuiteKeys(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/web.yaml": "suite: web chat\nagent: clinic\nvia: messaging\nstreaming: true\n"})
	newCLI(t, dir, nil, "lint", "suites").expect(t, exitUsage, "suites/web.yaml:1:1: suite has no scenarios")
}

// TestDocUnsetVariableHint: a setting that refers to a variable not set
// names the variable to set (docs/configuration.md, "Keys are ${env:...}
// references"), and the variable that overrides the setting only when
// there is one and it is another. Before, a probe_numbers item (or rate,
// rate_wait, max_reply_bytes, which have no variable of their own) read
// "(set NUM, or  to override it)", and a build_url written as
// ${env:AGENTTEST_BUILD_URL} "(set AGENTTEST_BUILD_URL, or
// AGENTTEST_BUILD_URL to override it)"; and a build_key written
// ${env:AGENTTEST_BUILD_KEY}, as the refusal of a literal key advises,
// "(set AGENTTEST_BUILD_KEY (or AGENTTEST_BUILD_KEY))".
func TestDocUnsetVariableHint(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"s.yaml": greetSuite, "agenttest.yaml": `targets:
  t:
    build_url: ${env:AGENTTEST_BUILD_URL}
    account_id: ws-a1b2c3d4
    build_key: ${env:AGENTTEST_BUILD_KEY}
    probe_numbers: ["${env:NUM}"]
    rate: ${env:RATE}
    sms_connector_id: ${env:SMSID}
    runtime_key: ${env:RK}
`})
	c := newCLI(t, dir, nil, "run", "--target", "t", "s.yaml")
	out := c.expect(t, exitUsage,
		`agenttest.yaml:3:16: target "t": build_url refers to AGENTTEST_BUILD_URL, which is not set (set AGENTTEST_BUILD_URL)`,
		`agenttest.yaml:5:16: target "t": build_key refers to AGENTTEST_BUILD_KEY, which is not set (set AGENTTEST_BUILD_KEY)`,
		`agenttest.yaml:6:21: target "t": probe_numbers refers to NUM, which is not set (set NUM)`,
		`agenttest.yaml:7:11: target "t": rate refers to RATE, which is not set (set RATE)`,
		`agenttest.yaml:8:23: target "t": sms_connector_id refers to SMSID, which is not set (set SMSID, or AGENTTEST_SMS_CONNECTOR_ID to override it)`,
		`agenttest.yaml:9:18: target "t": runtime_key refers to RK, which is not set (set RK (or AGENTTEST_RUNTIME_KEY))`)
	if strings.Contains(out, "or  to override") {
		t.Errorf("a hint names no variable:\n%s", out)
	}
}
