package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

const validConfig = `# targets for tests
default_target: sandbox
targets:
  sandbox:
    build_url: https://build.us.example.com
    runtime_url: https://runtime-us-1.example.com
    account_id: ws-abcd1234
    agent_id: restaurant
    env: sandbox
    build_key: ${env:SANDBOX_BUILD_KEY}
    runtime_key: ${env:SANDBOX_RUNTIME_KEY}
  live:
    build_url: ${env:LIVE_BUILD_URL}
    account_id: acme-corp
    agent_id: PROJECT-ab12CD34
    env: live
    build_key: ${env:LIVE_KEY}
run:
  parallel: 4
  retries: 2
  turn_timeout: 45s
  junit: reports/junit.xml
  json: reports/result.json
`

func TestLoadValid(t *testing.T) {
	f, diags := Load("agenttest.yaml", []byte(validConfig))
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", diags)
	}
	if f.DefaultTarget != "sandbox" || len(f.Targets) != 2 {
		t.Fatalf("default %q, %d targets", f.DefaultTarget, len(f.Targets))
	}
	sb := f.Target("sandbox")
	if sb.BuildURL.Value != "https://build.us.example.com" || sb.BuildKey.Value != "${env:SANDBOX_BUILD_KEY}" {
		t.Errorf("sandbox = %+v", sb)
	}
	if got := sb.Pos.String(); got != "agenttest.yaml:4:3" {
		t.Errorf("sandbox pos = %s", got)
	}
	if got := sb.AgentID.Pos.String(); got != "agenttest.yaml:8:15" {
		t.Errorf("agent_id pos = %s", got)
	}
	r := f.Run
	if *r.Parallel != 4 || *r.Retries != 2 || *r.TurnTimeout != 45*time.Second || r.JUnit != "reports/junit.xml" || r.JSON != "reports/result.json" {
		t.Errorf("run = %+v", r)
	}
}

// TestLoadMerges: targets share settings through YAML anchors and merge
// keys, as suites do: an x- key or another target holds them, keys written
// in the target win over merged ones, and an earlier merged mapping over a
// later one.
func TestLoadMerges(t *testing.T) {
	src := `x-platform: &platform
  build_url: https://build.us.example.com
  runtime_url: https://runtime-us-1.example.com
  account_id: ws-abcd1234
  build_key: ${env:BUILD_KEY}
x-clinic: &clinic
  agent_id: clinic
  build_url: https://elsewhere.example.com
targets:
  sandbox: &sandbox
    <<: *platform
    agent_id: restaurant
    env: sandbox
    probe_numbers: &numbers ["+447700900001"]
  live:
    <<: *sandbox
    env: live
  clinic-live:
    <<: [*platform, *clinic]
    env: live
    probe_numbers: *numbers
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", diags)
	}
	for _, tc := range []struct {
		target, buildURL, agent, env, numbers string
	}{
		{"sandbox", "https://build.us.example.com", "restaurant", "sandbox", "+447700900001"},
		{"live", "https://build.us.example.com", "restaurant", "live", "+447700900001"},
		{"clinic-live", "https://build.us.example.com", "clinic", "live", "+447700900001"},
	} {
		td := f.Target(tc.target)
		if td == nil {
			t.Fatalf("no target %s", tc.target)
		}
		var numbers []string
		for _, n := range td.ProbeNumbers {
			numbers = append(numbers, n.Value)
		}
		got := []string{td.BuildURL.Value, td.AgentID.Value, td.Env.Value, strings.Join(numbers, ","), td.BuildKey.Value, td.AccountID.Value}
		want := []string{tc.buildURL, tc.agent, tc.env, tc.numbers, "${env:BUILD_KEY}", "ws-abcd1234"}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", tc.target, got, want)
		}
	}
	// A merged value keeps the position where it is written.
	if got := f.Target("live").BuildURL.Pos.String(); got != "agenttest.yaml:2:14" {
		t.Errorf("merged build_url at %s, want agenttest.yaml:2:14", got)
	}
}

func TestLoadEmpty(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "~\n"} {
		f, diags := Load("a.yaml", []byte(src))
		if len(diags) > 0 || len(f.Targets) != 0 {
			t.Errorf("%q: diags %v targets %d", src, diags, len(f.Targets))
		}
	}
}

func TestLoadProblems(t *testing.T) {
	type testCase struct {
		name string
		src  string
		// want holds the expected diagnostics, rendered, in order.
		want []string
	}
	run := func(t *testing.T, tc testCase) {
		_, diags := Load("c.yaml", []byte(tc.src))
		var got []string
		for _, d := range diags {
			got = append(got, d.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
	cases := []testCase{
		{
			name: "unknown keys with suggestions",
			src:  "defualt_target: a\ntargets:\n  a:\n    build_ulr: https://x.example.com\n    colour: red\n",
			want: []string{
				`c.yaml:1:1: unknown top-level key "defualt_target" (did you mean "default_target"?)`,
				`c.yaml:4:5: unknown target key "build_ulr" (did you mean "build_url"?)`,
				`c.yaml:5:5: unknown target key "colour" (known keys: build_url, runtime_url, messaging_url, messaging_host, brand, account_id, agent_id, env, build_key, runtime_key, call_token, connector_token, connectors, webhook_listen, webhook_url, allow_live, probe_numbers, sms_connector_id, sms_connector_ids, allow_http, max_reply_bytes, rate, rate_wait, messaging_quiet)`,
			},
		},
		{
			// The reference writes {build_url}/v1/...: copied with the
			// version, every call went to /v1/v1/... and its 404 read as
			// an unknown agent.
			name: "a URL that holds where the API's paths begin",
			src: "targets:\n  a:\n    build_url: https://build.us.example.com/v1/\n    runtime_url: https://gw.example.com/platform/v3/ws-abcd1234\n" +
				"    messaging_url: wss://messaging.us-1.example.com/ws\n  b:\n    build_url: https://gw.example.com/platform\n    messaging_url: https://m.example.com/api/v1\n",
			want: []string{
				`c.yaml:3:16: build_url "https://build.us.example.com/v1/": /v1 is part of the paths agenttest appends to it (/v1/... and /v3/...): the calls would go to /v1/v1/...; write https://build.us.example.com`,
				`c.yaml:4:18: runtime_url "https://gw.example.com/platform/v3/ws-abcd1234": /v3/ws-abcd1234 is part of the paths agenttest appends to it (/v1/... and /v3/...): the calls would go to /v3/ws-abcd1234/v1/...; write https://gw.example.com/platform`,
				`c.yaml:5:20: messaging_url "wss://messaging.us-1.example.com/ws": /ws is part of the paths agenttest appends to it (/api/v1/... and the socket's /ws): the calls would go to /ws/api/v1/...; write wss://messaging.us-1.example.com`,
				`c.yaml:8:20: messaging_url "https://m.example.com/api/v1": /api/v1 is part of the paths agenttest appends to it (/api/v1/... and the socket's /ws): the calls would go to /api/v1/api/v1/...; write https://m.example.com`,
			},
		},
		{
			name: "literal keys are errors at the value",
			src:  "targets:\n  a:\n    build_key: sk-live-0123456789\n    runtime_key: \"${env:RK} extra\"\n",
			want: []string{
				`c.yaml:3:16: build_key must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write build_key: ${env:AGENTTEST_BUILD_KEY} and set that variable)`,
				`c.yaml:4:18: runtime_key must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write runtime_key: ${env:AGENTTEST_RUNTIME_KEY} and set that variable)`,
			},
		},
		{
			// A shell's form of a variable is what a newcomer writes first;
			// a value with one inside is still a literal.
			name: "keys written as shell variables say how to write them",
			src:  "targets:\n  a:\n    build_key: ${SIM_BUILD_KEY}\n    runtime_key: $SIM_RUNTIME_KEY\n    call_token: $TOKEN-x\n    build_url: ${SIM_BUILD_URL}\n    connector_token: tok-$SUFFIX\n",
			want: []string{
				`c.yaml:3:16: build_key is written as a shell variable ($NAME or ${NAME}), which agenttest does not expand: a variable is an ${env:NAME} reference (write build_key: ${env:NAME}, NAME the variable you wrote)`,
				`c.yaml:4:18: runtime_key is written as a shell variable ($NAME or ${NAME}), which agenttest does not expand: a variable is an ${env:NAME} reference (write runtime_key: ${env:NAME}, NAME the variable you wrote)`,
				`c.yaml:5:17: call_token must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write call_token: ${env:AGENTTEST_CALL_TOKEN} and set that variable)`,
				`c.yaml:6:16: build_url is written as a shell variable ($NAME or ${NAME}), which agenttest does not expand: a variable is an ${env:NAME} reference (write build_url: ${env:NAME}, NAME the variable you wrote)`,
				`c.yaml:7:22: connector_token must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write connector_token: ${env:AGENTTEST_CONNECTOR_TOKEN} and set that variable)`,
			},
		},
		{
			name: "bad values",
			src: "default_target: sandbx\ntargets:\n  sandbox:\n    env: staging\n    build_url: build.example.com\n    account_id: ACCOUNT-12345678\n    agent_id: My Agent\n" +
				"run:\n  parallel: 0\n  retries: many\n  turn_timeout: soon\n",
			want: []string{
				`c.yaml:4:10: env "staging" is not one of sandbox, pre-release, live (did you mean "pre-release"?)`,
				`c.yaml:5:16: build_url "build.example.com": must be an absolute URL, with a host and scheme http or https`,
				`c.yaml:6:17: account id "ACCOUNT-12345678": the ACCOUNT- prefix is obsolete; use the workspace id in the form ws-XXXXXXXX (or the slug from the studio console URL)`,
				`c.yaml:7:15: agent id "My Agent": expected PROJECT-XXXXXXXX or a slug of letters, digits, '-' and '_'`,
				`c.yaml:9:13: parallel must be an integer of at least 1, not "0"`,
				`c.yaml:10:12: retries must be an integer of at least 0, not "many"`,
				`c.yaml:11:17: turn_timeout must be a positive duration such as 30s or 2m, not "soon"`,
				`c.yaml:1:17: default_target "sandbx" is not a target of this file (did you mean "sandbox"?)`,
			},
		},
		{
			name: "duplicates and shapes",
			src:  "targets:\n  a:\n    env: sandbox\n    env: live\n  b: just-a-string\n  a: {}\nrun: [1]\n",
			want: []string{
				`c.yaml:4:5: "env" is given twice (first at line 3)`,
				`c.yaml:5:6: target "b" must be a mapping with keys build_url, runtime_url, messaging_url, messaging_host, brand, account_id, agent_id, env, build_key, runtime_key, call_token, connector_token, connectors, webhook_listen, webhook_url, allow_live, probe_numbers, sms_connector_id, sms_connector_ids, allow_http, max_reply_bytes, rate, rate_wait, messaging_quiet`,
				`c.yaml:6:3: target "a" is defined twice`,
				`c.yaml:7:6: run must be a mapping with keys parallel, retries, turn_timeout, confirm_timeout, junit, json, html, gate_alerts`,
			},
		},
		// Syntax errors are explained as in suites (internal/yamlerr): at
		// the mistake, not where yaml.v3 noticed it, with the fix.
		{
			name: "syntax error: a [ never closed",
			src:  "targets:\n  a:\n    env: [sandbox\n",
			want: []string{`c.yaml:3:10: invalid YAML: did not find expected ',' or ']' (this [ is never closed: end the list with ])`},
		},
		{
			name: "syntax error: a tab",
			src:  "targets:\n\ta: {}\n",
			want: []string{`c.yaml:2:1: invalid YAML: found character that cannot start any token (indent with spaces: YAML does not allow tabs in indentation)`},
		},
		{
			name: "syntax error: an alias of no anchor",
			src:  "targets:\n  a:\n    build_url: *hosts\n",
			want: []string{`c.yaml:3:16: invalid YAML: unknown anchor 'hosts' referenced (no &hosts is defined above this line: an alias (*hosts) can only repeat an anchor (&hosts) written before it)`},
		},
		{
			name: "syntax error: bytes that are not UTF-8",
			src:  "targets:\n  a:\n    env: \xff\n",
			want: []string{`c.yaml:3:10: invalid YAML: invalid leading UTF-8 octet`},
		},
		{
			name: "syntax error: a value with a colon",
			src:  "targets:\n  a:\n    env: live: now\n",
			want: []string{`c.yaml:3:10: invalid YAML: mapping values are not allowed in this context (a value that contains ": " must be quoted: "live: now")`},
		},
		{
			name: "not a mapping",
			src:  "- a\n- b\n",
			want: []string{`c.yaml:1:1: agenttest.yaml must be a mapping with keys default_target, targets, run`},
		},
		{
			name: "merges of what is not a mapping, and of a mapping with unknown keys",
			src:  "x-hosts: &h {build_ulr: https://b.example.com}\ntargets:\n  a:\n    <<: [*h, oops]\n  b:\n    <<: 3\n",
			want: []string{
				`c.yaml:4:14: << must merge a mapping (<<: *anchor) or a list of them, not a value`,
				`c.yaml:1:14: unknown target key "build_ulr" (did you mean "build_url"?)`,
				`c.yaml:6:9: << must merge a mapping (<<: *anchor) or a list of them, not a value`,
			},
		},
		{
			name: "an anchor that merges itself",
			src:  "targets:\n  a: &a\n    env: live\n    <<: *a\n",
			want: []string{`c.yaml:2:6: << merges are nested more than 16 deep (does an anchor merge itself?)`},
		},
		{
			name: "unknown x- keys are extensions only at the top",
			src:  "x-anything: {a: 1}\ntargets:\n  a:\n    x-note: hi\n",
			want: []string{`c.yaml:4:5: unknown target key "x-note" (known keys: build_url, runtime_url, messaging_url, messaging_host, brand, account_id, agent_id, env, build_key, runtime_key, call_token, connector_token, connectors, webhook_listen, webhook_url, allow_live, probe_numbers, sms_connector_id, sms_connector_ids, allow_http, max_reply_bytes, rate, rate_wait, messaging_quiet)`},
		},
		{
			name: "a scalar file",
			src:  "just text\n",
			want: []string{`c.yaml:1:1: agenttest.yaml must be a mapping with keys default_target, targets, run`},
		},
		{
			name: "the smallest values that pass, and the largest that do not",
			src: "targets:\n  a:\n    max_reply_bytes: 4096\n    rate: 0\n    rate_wait: 0s\n  b:\n    max_reply_bytes: 4095\n    rate: -0.1\n    rate_wait: -1s\n" +
				"run:\n  parallel: 1\n  retries: 0\n  turn_timeout: 0s\n",
			want: []string{
				`c.yaml:7:22: max_reply_bytes: "4095" is not a number of bytes of at least 4096 (1 MiB is 1048576)`,
				`c.yaml:8:11: rate: "-0.1" is not a number of requests per second (such as 20 or 0.5; 0 for no cap)`,
				`c.yaml:9:16: rate_wait: "-1s" is not a duration such as 15m or 90s`,
				`c.yaml:13:17: turn_timeout must be a positive duration such as 30s or 2m, not "0s"`,
			},
		},
		{
			name: "a default_target like none of the targets, and a gate_alerts not a bool",
			src:  "default_target: zzz\ntargets:\n  sandbox: {}\nrun:\n  gate_alerts: maybe\n",
			want: []string{
				`c.yaml:5:16: gate_alerts must be true or false, not "maybe"`,
				`c.yaml:1:17: default_target "zzz" is not a target of this file (targets: sandbox)`,
			},
		},
		{
			name: "a negative turn_timeout",
			src:  "run:\n  turn_timeout: -1s\n",
			want: []string{`c.yaml:2:17: turn_timeout must be a positive duration such as 30s or 2m, not "-1s"`},
		},
		{
			name: "a brand that cannot be in a header name",
			src:  "targets:\n  a:\n    brand: Ac-me\n",
			want: []string{`c.yaml:3:12: brand "Ac-me": use ASCII letters and digits only, it goes into header names`},
		},
		{
			name: "a messaging_host with a path",
			src:  "targets:\n  a:\n    messaging_host: webchat.example.com/chat\n",
			want: []string{`c.yaml:3:21: messaging_host "webchat.example.com/chat" must be a domain or app namespace such as webchat.example.com, not a URL`},
		},
		{
			name: "what follows a name or key given twice is still read",
			src:  "targets:\n  a: {}\n  a: {}\n  b:\n    env: sandbox\n    env: live\n    agent_id: My Agent\n",
			want: []string{
				`c.yaml:3:3: target "a" is defined twice`,
				`c.yaml:6:5: "env" is given twice (first at line 5)`,
				`c.yaml:7:15: agent id "My Agent": expected PROJECT-XXXXXXXX or a slug of letters, digits, '-' and '_'`,
			},
		},
		{
			name: "an anchor that merges itself through a list",
			src:  "targets:\n  a: &a\n    env: live\n    <<: [*a]\n",
			want: []string{`c.yaml:2:6: << merges are nested more than 16 deep (does an anchor merge itself?)`},
		},
		{
			name: "a key that is not a single value",
			src:  "targets:\n  a:\n    build_key: {env: X}\n",
			want: []string{`c.yaml:3:16: build_key must be a single value, not a mapping`},
		},
		{
			name: "nested value where a scalar belongs",
			src:  "targets:\n  a:\n    build_url: {host: x}\n",
			want: []string{`c.yaml:3:16: build_url must be a single value, not a mapping`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestSourceMasksSecrets(t *testing.T) {
	src := "targets:\n  a:\n    build_key: sk-live-0123456789\n    runtime_key: |\n      sk-multi-line-secret\n      second-line\n    env: sandbox\n    api_token: tok-987\n    connectors:\n      clinic: ct_literal-connector-0123\n      billing:\n        live: ct_literal-live-connector-0123\n    call_token: {a: tok-flow-0123, b: tok-flow-4567}\n"
	f, diags := Load("c.yaml", []byte(src))
	if !diags.HasErrors() {
		t.Fatal("literal keys were accepted")
	}
	masked := string(f.Source())
	for _, secret := range []string{"sk-live-0123456789", "sk-multi-line-secret", "second-line", "tok-987", "ct_literal-connector-0123", "ct_literal-live-connector-0123", "tok-flow-0123", "tok-flow-4567"} {
		if strings.Contains(masked, secret) {
			t.Errorf("masked source still holds %q:\n%s", secret, masked)
		}
		for _, d := range diags {
			if strings.Contains(d.String(), secret) {
				t.Errorf("diagnostic holds %q: %s", secret, d)
			}
		}
	}
	if got, want := strings.Count(masked, "\n"), strings.Count(src, "\n"); got != want {
		t.Errorf("masking changed the line count: %d, want %d", got, want)
	}
	// connectors: is masked value by value, keeping the agent and
	// environment names, so a diagnostic at connectors.clinic echoes a
	// line that says which connector it is about.
	for _, want := range []string{"    env: sandbox\n", "build_key: [REDACTED]\n", "    connectors:\n      clinic: [REDACTED]\n      billing:\n        live: [REDACTED]\n", "call_token: [REDACTED]\n"} {
		if !strings.Contains(masked, want) {
			t.Errorf("masked source lacks %q:\n%s", want, masked)
		}
	}
}

// The masked source hides every line of a secret's value, whatever its
// shape, and keeps every other line as written: a diagnostic echoes the
// line it points at.
func TestSourceMaskShapes(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		keep      []string
	}{
		{"a block scalar with a blank line", "targets:\n  a:\n    runtime_key: |\n      sk-PLANTED-first-0123\n\n      sk-PLANTED-after-blank\n    env: sandbox\n", []string{"    env: sandbox\n"}},
		{"a block scalar one column deeper", "targets:\n  a:\n    runtime_key: |\n     sk-PLANTED-one-deeper\n    env: sandbox\n", []string{"    env: sandbox\n"}},
		{"a key without a value", "targets:\n  a:\n    build_key:\n    env: sandbox\n", []string{"    build_key:\n    env: sandbox\n"}},
		{"other secret-looking names", "targets:\n  a:\n    db_Password: hunter2-PLANTED\n    Client_SECRET: x-PLANTED\n    env: sandbox\n", []string{"    env: sandbox\n"}},
		{"a URL with nothing to mask", "targets:\n  a:\n    build_url: https://build.example.com\n    build_key: ${env:BK}\n", []string{"    build_url: https://build.example.com\n"}},
		{"a file that does not parse", "targets:\n  t:\n    build_key: sk-PLANTED-0123456789: x\n    env: sandbox\n", []string{"    env: sandbox\n"}},
		// A reference is no secret, and says which variable a diagnostic
		// at it is about; a comment after it may quote an old key.
		{"references shown, comments not", "targets:\n  t:\n    build_key: ${env:BK}   # was sk-PLANTED-0123456789\n    runtime_key: \"${env:RK}\"\n    connectors:\n      clinic: {live: '${env:CT}'}\n    call_token: ${env:A}${env:B}\n",
			[]string{"    build_key: ${env:BK}\n", "    runtime_key: \"${env:RK}\"\n", "    call_token: [REDACTED]\n"}},
		// The parser's hint quotes the second value: masking the first,
		// its prefix, first would leave the rest of it.
		{"a value that starts with another", "targets:\n  t:\n    runtime_key: sk-0123456789abc\n    build_key: sk-0123456789abc-PLANTED: x\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Load("c.yaml", []byte(tc.src))
			masked := string(f.Source())
			if strings.Contains(masked, "PLANTED") {
				t.Errorf("masked source holds a key:\n%s", masked)
			}
			if strings.Contains(diags.Error(), "PLANTED") {
				t.Errorf("diagnostics hold a key: %s", diags.Error())
			}
			for _, want := range tc.keep {
				if !strings.Contains(masked, want) {
					t.Errorf("masked source lacks %q:\n%s", want, masked)
				}
			}
		})
	}
}

// Merges nest as deep as maxMergeDepth, and no deeper.
func TestMergeDepth(t *testing.T) {
	chain := func(n int) string {
		var b strings.Builder
		b.WriteString("x-0: &m0 {env: live}\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "x-%d: &m%d {<<: *m%d}\n", i, i, i-1)
		}
		fmt.Fprintf(&b, "targets:\n  a:\n    <<: *m%d\n", n-1)
		return b.String()
	}
	f, diags := Load("c.yaml", []byte(chain(maxMergeDepth+1)))
	if diags.HasErrors() || f.Target("a").Env.Value != "live" {
		t.Errorf("%d merges deep: %v", maxMergeDepth, diags)
	}
	if _, diags := Load("c.yaml", []byte(chain(maxMergeDepth+2))); !strings.Contains(diags.Error(), "nested more than 16 deep") {
		t.Errorf("%d merges deep: %v", maxMergeDepth+1, diags)
	}
}

func TestResolve(t *testing.T) {
	f, diags := Load("agenttest.yaml", []byte(validConfig))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	keys := map[string]string{"SANDBOX_BUILD_KEY": "sb-build-secret", "SANDBOX_RUNTIME_KEY": "sb-runtime-secret"}
	type testCase struct {
		name string
		file *File
		sel  Selection
		env  map[string]string
		// want is the resolved target rendered by describe, or the
		// diagnostics when wantErr.
		want    string
		wantErr bool
	}
	run := func(t *testing.T, tc testCase) {
		env := map[string]string{}
		maps.Copy(env, keys)
		maps.Copy(env, tc.env)
		tc.sel.Getenv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		tc.sel.Needs.Build = true
		got, diags := Resolve(tc.file, tc.sel)
		if tc.wantErr {
			if !diags.HasErrors() {
				t.Fatalf("no error; target %s", describe(got))
			}
			if diags.Error() != tc.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", diags.Error(), tc.want)
			}
			for _, v := range env {
				if strings.Contains(diags.Error(), v) && strings.Contains(v, "secret") {
					t.Errorf("diagnostics leak %q", v)
				}
			}
			return
		}
		if diags.HasErrors() {
			t.Fatalf("unexpected diagnostics:\n%s", diags.Error())
		}
		if d := describe(got); d != tc.want {
			t.Errorf("target:\n got %s\nwant %s", d, tc.want)
		}
	}
	cases := []testCase{
		{
			name: "default target from the file",
			file: f,
			want: "sandbox/config build=https://build.us.example.com runtime=https://runtime-us-1.example.com account=ws-abcd1234 agent=restaurant env=sandbox bk=sb-build-secret rk=sb-runtime-secret",
		},
		{
			name: "environment overrides the file",
			file: f,
			env:  map[string]string{EnvBuildURL: "http://127.0.0.1:9000", EnvAgentID: "clinic", EnvEnv: "pre-release", EnvBuildKey: "env-build-secret"},
			want: "sandbox/config build=http://127.0.0.1:9000 runtime=https://runtime-us-1.example.com account=ws-abcd1234 agent=clinic env=pre-release bk=env-build-secret rk=sb-runtime-secret",
		},
		{
			name: "flag overrides the environment",
			file: f,
			sel:  Selection{Env: "live"},
			env:  map[string]string{EnvEnv: "pre-release"},
			want: "sandbox/config build=https://build.us.example.com runtime=https://runtime-us-1.example.com account=ws-abcd1234 agent=restaurant env=live bk=sb-build-secret rk=sb-runtime-secret",
		},
		{
			// The flag stands alone: a variable it overrides is not read,
			// so a bad one left in the job's environment is no error.
			name: "flag overrides a bad AGENTTEST_ENV",
			file: f,
			sel:  Selection{Env: "sandbox"},
			env:  map[string]string{EnvEnv: "prod"},
			want: "sandbox/config build=https://build.us.example.com runtime=https://runtime-us-1.example.com account=ws-abcd1234 agent=restaurant env=sandbox bk=sb-build-secret rk=sb-runtime-secret",
		},
		{
			name: "flag overrides a bad AGENTTEST_ENV without a config target",
			sel:  Selection{Env: "pre-release"},
			env:  map[string]string{EnvBuildURL: "http://127.0.0.1:1", EnvBuildKey: "k-secret-0123456", EnvEnv: "prod"},
			want: "env/environment build=http://127.0.0.1:1 runtime= account= agent= env=pre-release bk=k-secret-0123456 rk=",
		},
		{
			// The file's env: holds the connectors written beside it, so
			// it is read whatever env the run asks for.
			name:    "flag does not hide the file's unset env reference",
			file:    mustLoad(t, "targets:\n  t:\n    build_url: https://build.us.example.com\n    env: ${env:TARGET_ENV}\n    build_key: ${env:SANDBOX_BUILD_KEY}\n"),
			sel:     Selection{Target: "t", Env: "sandbox"},
			want:    `agenttest.yaml:4:10: target "t": env refers to TARGET_ENV, which is not set (set TARGET_ENV)`,
			wantErr: true,
		},
		{
			name: "target chosen by flag with env references",
			file: f,
			sel:  Selection{Target: "live"},
			env:  map[string]string{"LIVE_BUILD_URL": "https://build.eu.example.com", "LIVE_KEY": "live-secret-key"},
			want: "live/config build=https://build.eu.example.com runtime= account=acme-corp agent=PROJECT-ab12CD34 env=live bk=live-secret-key rk=",
		},
		{
			name: "no config: environment target",
			env:  map[string]string{EnvBuildURL: "http://127.0.0.1:1", EnvBuildKey: "k-secret-0123456", EnvAccountID: "ws-00000000"},
			want: "env/environment build=http://127.0.0.1:1 runtime= account=ws-00000000 agent= env= bk=k-secret-0123456 rk=",
		},
		{
			name: "nothing configured: embedded simulator",
			env:  map[string]string{EnvEnv: "pre-release"},
			want: "sim/embedded embedded env=pre-release",
		},
		{
			name: "targets but none selected: embedded simulator",
			file: &File{Targets: f.Targets},
			want: "sim/embedded embedded env=",
		},
		{
			name: "--sim wins over everything",
			file: f,
			sel:  Selection{Sim: true, Env: "live"},
			env:  map[string]string{EnvBuildURL: "http://127.0.0.1:1"},
			want: "sim/embedded embedded forced env=live",
		},
		{
			name:    "unknown target",
			file:    f,
			sel:     Selection{Target: "sandbx"},
			want:    `unknown target "sandbx" (did you mean "sandbox"?)`,
			wantErr: true,
		},
		{
			name:    "unknown target like none of the file's",
			file:    f,
			sel:     Selection{Target: "staging"},
			want:    `unknown target "staging" (targets: sandbox, live)`,
			wantErr: true,
		},
		{
			name:    "target of a file without targets",
			file:    &File{Path: "ci.yaml"},
			sel:     Selection{Target: "sandbox"},
			want:    `unknown target "sandbox" (ci.yaml defines no targets: add it under targets:)`,
			wantErr: true,
		},
		{
			name:    "target without config file",
			sel:     Selection{Target: "sandbox"},
			want:    `unknown target "sandbox" (no config file was read: ./agenttest.yaml is not in the working directory; targets are defined there, or in the file --config FILE names)`,
			wantErr: true,
		},
		{
			name:    "unset key reference names the variable",
			file:    f,
			sel:     Selection{Target: "live"},
			env:     map[string]string{"LIVE_BUILD_URL": "https://b.example.com"},
			want:    `agenttest.yaml:17:16: target "live": build_key refers to LIVE_KEY, which is not set (set LIVE_KEY (or AGENTTEST_BUILD_KEY))`,
			wantErr: true,
		},
		{
			// A CI job passes a secret the repository lacks as an empty
			// value: "not set" would contradict the job's env: block.
			name:    "a key reference to an empty variable",
			file:    f,
			sel:     Selection{Target: "live"},
			env:     map[string]string{"LIVE_BUILD_URL": "https://b.example.com", "LIVE_KEY": ""},
			want:    `agenttest.yaml:17:16: target "live": build_key refers to LIVE_KEY, which is set but empty (a CI secret that does not exist is passed as an empty value) (set LIVE_KEY (or AGENTTEST_BUILD_KEY))`,
			wantErr: true,
		},
		{
			name:    "a URL reference to an empty variable",
			file:    f,
			sel:     Selection{Target: "live"},
			env:     map[string]string{"LIVE_BUILD_URL": "", "LIVE_KEY": "live-secret-key"},
			want:    `agenttest.yaml:13:16: target "live": build_url refers to LIVE_BUILD_URL, which is set but empty (a CI secret that does not exist is passed as an empty value) (set LIVE_BUILD_URL, or AGENTTEST_BUILD_URL to override it)`,
			wantErr: true,
		},
		{
			name:    "unset URL reference",
			file:    f,
			sel:     Selection{Target: "live"},
			env:     map[string]string{"LIVE_KEY": "live-secret-key"},
			want:    `agenttest.yaml:13:16: target "live": build_url refers to LIVE_BUILD_URL, which is not set (set LIVE_BUILD_URL, or AGENTTEST_BUILD_URL to override it)`,
			wantErr: true,
		},
		{
			name: "environment target missing its key",
			env:  map[string]string{EnvRuntimeURL: "http://127.0.0.1:2", EnvAccountID: "ACCOUNT-1"},
			want: "AGENTTEST_ACCOUNT_ID: account id \"ACCOUNT-1\": the ACCOUNT- prefix is obsolete; use the workspace id in the form ws-XXXXXXXX (or the slug from the studio console URL)\n" +
				"the target from AGENTTEST_* variables has no build_url (set AGENTTEST_BUILD_URL, or add build_url to the target in agenttest.yaml)\n" +
				"the target from AGENTTEST_* variables has no build_key (set AGENTTEST_BUILD_KEY, or add build_key: ${env:NAME} to the target in agenttest.yaml)",
			wantErr: true,
		},
		{
			name:    "bad AGENTTEST_ENV",
			env:     map[string]string{EnvEnv: "prod"},
			want:    `AGENTTEST_ENV="prod" is not one of sandbox, pre-release, live (did you mean "live"?)`,
			wantErr: true,
		},
		{
			// Reported once, not again as the target's env.
			name:    "bad AGENTTEST_ENV with a target",
			env:     map[string]string{EnvBuildURL: "http://127.0.0.1:9000", EnvBuildKey: "env-build-secret", EnvEnv: "prod"},
			want:    `AGENTTEST_ENV="prod" is not one of sandbox, pre-release, live (did you mean "live"?)`,
			wantErr: true,
		},
		{
			// Load refuses a literal; a File built otherwise still never
			// uses one as a key.
			name:    "a literal key is never used",
			file:    &File{Targets: []*TargetDef{{Name: "lit", BuildURL: Field{Value: "https://build.example.com"}, BuildKey: Field{Value: "sk-literal-secret-0123"}}}},
			sel:     Selection{Target: "lit"},
			want:    `target "lit" has no build_key (set AGENTTEST_BUILD_KEY, or add build_key: ${env:NAME} to the target in agenttest.yaml)`,
			wantErr: true,
		},
		{
			name: "a value that names a setting does not report it",
			env:  map[string]string{EnvRuntimeURL: "http://127.0.0.1:2", EnvAgentID: "no build_url"},
			want: "AGENTTEST_AGENT_ID: agent id \"no build_url\": expected PROJECT-XXXXXXXX or a slug of letters, digits, '-' and '_'\n" +
				"the target from AGENTTEST_* variables has no build_url (set AGENTTEST_BUILD_URL, or add build_url to the target in agenttest.yaml)\n" +
				"the target from AGENTTEST_* variables has no build_key (set AGENTTEST_BUILD_KEY, or add build_key: ${env:NAME} to the target in agenttest.yaml)",
			wantErr: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// describe renders a target for comparison, revealing keys on purpose.
func describe(t *Target) string {
	if t == nil {
		return "<nil>"
	}
	if t.Embedded {
		forced := ""
		if t.Forced {
			forced = " forced"
		}
		return fmt.Sprintf("%s/%s embedded%s env=%s", t.Name, t.Source, forced, t.Env)
	}
	return fmt.Sprintf("%s/%s build=%s runtime=%s account=%s agent=%s env=%s bk=%s rk=%s",
		t.Name, t.Source, t.BuildURL, t.RuntimeURL, t.AccountID, t.AgentID, t.Env, t.BuildKey.Reveal(), t.RuntimeKey.Reveal())
}

func TestSecretNeverFormats(t *testing.T) {
	tg := Target{Name: "x", BuildKey: "bk-secret-1", RuntimeKey: "rk-secret-2"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		out := fmt.Sprintf(verb, tg) + fmt.Sprintf(verb, tg.BuildKey)
		if strings.Contains(out, "secret") || strings.Contains(out, fmt.Sprintf("%x", "bk-secret-1")) {
			t.Errorf("%s leaks a key: %s", verb, out)
		}
	}
	if got := tg.Secrets(); len(got) != 2 || got[0] != "bk-secret-1" {
		t.Errorf("Secrets() = %v", got)
	}
}

// Keys stay home: plain http only to loopback hosts unless the target
// allows it (then a warning on every resolution), keys of at least 12
// characters, and a reply limit that parses.
func TestResolveTransportAndKeys(t *testing.T) {
	const src = `targets:
  remote:
    build_url: http://build.example.com
    build_key: ${env:REMOTE_KEY}
  allowed:
    build_url: http://build.example.com
    allow_http: true
    build_key: ${env:REMOTE_KEY}
  local:
    build_url: http://127.0.0.5:8080
    runtime_url: http://localhost:9000
    messaging_url: ws://[::1]:9001
    build_key: ${env:SHORT_KEY}
    max_reply_bytes: 2097152
    rate: 19.5
    rate_wait: 0s
  badlimit:
    build_url: https://build.example.com
    build_key: ${env:REMOTE_KEY}
    max_reply_bytes: ${env:LIMIT}
  mixed:
    build_url: https://build.example.com
    runtime_url: http://runtime.example.com
    messaging_url: ws://chat.example.com
    build_key: ${env:REMOTE_KEY}
  allowedall:
    runtime_url: http://runtime.example.com
    messaging_url: ws://chat.example.com
    allow_http: true
    build_key: ${env:REMOTE_KEY}
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	env := map[string]string{"REMOTE_KEY": "remote-key-0123456789", "SHORT_KEY": "short", "LIMIT": "2MB"}
	type testCase struct {
		target string
		env    map[string]string
		want   string
	}
	for _, tc := range []testCase{
		{"remote", nil, `agenttest.yaml:3:16: target "remote": build_url "http://build.example.com" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))`},
		{"remote", map[string]string{EnvBuildURL: "http://10.0.0.1:80", EnvBuildKey: "remote-key-0123456789"}, `target "remote": AGENTTEST_BUILD_URL "http://10.0.0.1:80" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))`},
		{"allowed", nil, `agenttest.yaml:7:17: warning: target "allowed": allow_http is set, so the API key travels in clear text to build.example.com (build_url) (use https:// and remove allow_http)`},
		{"local", nil, `agenttest.yaml:13:16: target "local": build_key (from SHORT_KEY) is 5 characters long; keys shorter than 12 characters are refused, since they cannot be told apart from ordinary text in replies and reports (use the full key the platform issued)`},
		{"local", map[string]string{"SHORT_KEY": "long-enough-key"}, ``},
		{"badlimit", nil, `agenttest.yaml:20:22: target "badlimit": max_reply_bytes: "2MB" is not a number of bytes of at least 4096 (1 MiB is 1048576)`},
		{"badlimit", map[string]string{EnvBuildKey: "tiny"}, `target "badlimit": build_key (from AGENTTEST_BUILD_KEY) is 4 characters long; keys shorter than 12 characters are refused, since they cannot be told apart from ordinary text in replies and reports (use the full key the platform issued)
agenttest.yaml:20:22: target "badlimit": max_reply_bytes: "2MB" is not a number of bytes of at least 4096 (1 MiB is 1048576)`},
		// Every URL is checked, whichever comes first.
		{"mixed", nil, `agenttest.yaml:23:18: target "mixed": runtime_url "http://runtime.example.com" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))
agenttest.yaml:24:20: target "mixed": messaging_url "ws://chat.example.com" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))`},
		{"allowedall", nil, `agenttest.yaml:26:3: target "allowedall" has no build_url (set AGENTTEST_BUILD_URL, or add build_url to the target in agenttest.yaml)
agenttest.yaml:29:17: warning: target "allowedall": allow_http is set, so the API key travels in clear text to runtime.example.com (runtime_url) (use https:// and remove allow_http)
agenttest.yaml:29:17: warning: target "allowedall": allow_http is set, so the API key travels in clear text to chat.example.com (messaging_url) (use https:// and remove allow_http)`},
	} {
		getenv := func(k string) (string, bool) {
			if v, ok := tc.env[k]; ok {
				return v, true
			}
			v, ok := env[k]
			return v, ok
		}
		tg, diags := Resolve(f, Selection{Target: tc.target, Getenv: getenv, Needs: Needs{Build: true}})
		diags.Sort()
		if got := diags.Error(); got != tc.want {
			t.Errorf("%s %v:\n got  %s\n want %s", tc.target, tc.env, got, tc.want)
		}
		if strings.Contains(diags.Error(), "remote-key") || strings.Contains(diags.Error(), "tiny") {
			t.Errorf("a key is in the message: %s", diags.Error())
		}
		if strings.Contains(diags.Error(), "characters long") && tg.BuildKey != "" {
			t.Errorf("a key refused is still the target's")
		}
		if tc.target == "local" && tc.want == "" && (tg.MaxReplyBytes != 2097152 || tg.Rate != 19.5 || tg.RateWait == nil || *tg.RateWait != 0) {
			t.Errorf("max_reply_bytes = %d, rate = %v, rate_wait = %v", tg.MaxReplyBytes, tg.Rate, tg.RateWait)
		}
		if tc.target == "remote" && (tg.Rate != 0 || tg.RateWait != nil) {
			t.Errorf("rate = %v, rate_wait = %v where neither is set", tg.Rate, tg.RateWait)
		}
	}
	_, diags = Load("c.yaml", []byte("targets:\n  a:\n    max_reply_bytes: 2MB\n    allow_http: maybe\n    rate: -3\n    rate_wait: forever\n"))
	want := `c.yaml:3:22: max_reply_bytes: "2MB" is not a number of bytes of at least 4096 (1 MiB is 1048576)
c.yaml:4:17: allow_http must be true or false, not "maybe"
c.yaml:5:11: rate: "-3" is not a number of requests per second (such as 20 or 0.5; 0 for no cap)
c.yaml:6:16: rate_wait: "forever" is not a duration such as 15m or 90s`
	if diags.Error() != want {
		t.Errorf("load:\n got  %s\n want %s", diags.Error(), want)
	}
}

func TestKeyVariables(t *testing.T) {
	f, diags := Load("agenttest.yaml", []byte(validConfig))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := KeyVariables(f)
	for name, want := range map[string]string{
		EnvBuildKey:           "the build key",
		EnvRuntimeKey:         "the runtime key",
		EnvConnectorToken:     "the connector token",
		"SANDBOX_BUILD_KEY":   `the build_key of target "sandbox" (agenttest.yaml:10:16)`,
		"SANDBOX_RUNTIME_KEY": `the runtime_key of target "sandbox" (agenttest.yaml:11:18)`,
		"LIVE_KEY":            `the build_key of target "live" (agenttest.yaml:17:16)`,
		EnvCallToken:          "the call token",
		EnvWebhookSecret:      "the webhook signing secret",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if len(got) != 8 {
		t.Errorf("got %v", got)
	}
	// A variable two targets refer to is named by the first.
	shared := mustLoad(t, "targets:\n  a:\n    build_key: ${env:SHARED}\n  b:\n    runtime_key: ${env:SHARED}\n")
	if got := KeyVariables(shared)["SHARED"]; got != `the build_key of target "a" (agenttest.yaml:3:16)` {
		t.Errorf("SHARED holds %q", got)
	}
}

// TestNeeds: a command requires the URLs and keys of the hosts it calls,
// and gate (BuildKeyOnly) no key but the build key, while every key set
// is still among the secrets to mask.
func TestNeeds(t *testing.T) {
	f := mustLoad(t, `targets:
  t:
    build_url: https://build.example.com
    runtime_url: https://runtime.example.com
    messaging_url: https://messaging.example.com
    build_key: ${env:BK}
    runtime_key: ${env:RK}
    call_token: ${env:CT}
    connectors: {a: "${env:CA}", b: "${env:CB}"}
  buildonly:
    build_url: https://build.example.com
    build_key: ${env:BK}
`)
	const bk, cb = "bk-0123456789abcdef", "cb-0123456789abcdef"
	for _, tc := range []struct {
		name, target string
		needs        Needs
		env          map[string]string
		want         string
	}{
		{"gate with the build key alone", "t", Needs{Build: true, BuildKeyOnly: true}, map[string]string{"BK": bk, "CB": cb}, ``},
		{"gate without the build key", "t", Needs{Build: true, BuildKeyOnly: true}, map[string]string{"CB": cb},
			`agenttest.yaml:6:16: target "t": build_key refers to BK, which is not set (set BK (or AGENTTEST_BUILD_KEY))`},
		{"run needs every key", "t", Needs{Build: true, Runtime: true}, map[string]string{"BK": bk, "RK": "rk-0123456789abcdef", "CA": "ca-0123456789abcdef"},
			`agenttest.yaml:8:17: target "t": call_token refers to CT, which is not set (set CT (or AGENTTEST_CALL_TOKEN))
agenttest.yaml:9:37: target "t": connectors.b refers to CB, which is not set (set CB)`},
		{"runtime hosts of a target without them", "buildonly", Needs{Build: true, Runtime: true}, map[string]string{"BK": bk},
			`agenttest.yaml:10:3: target "buildonly" has no runtime_url (set AGENTTEST_RUNTIME_URL, or add runtime_url to the target in agenttest.yaml)
agenttest.yaml:10:3: target "buildonly" has no runtime_key (set AGENTTEST_RUNTIME_KEY, or add runtime_key: ${env:NAME} to the target in agenttest.yaml)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, diags := Resolve(f, Selection{Target: tc.target, Getenv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }, Needs: tc.needs})
			diags.Sort()
			if got := diags.Error(); got != tc.want {
				t.Fatalf("\n got  %s\n want %s", got, tc.want)
			}
			for _, v := range tc.env {
				if tc.want == "" && !slices.Contains(tg.Secrets(), v) {
					t.Errorf("Secrets lacks %s", v)
				}
			}
		})
	}
}

// TestEnvFrom: what set the environment, for the live-safety refusal, and
// the target's allow_live.
func TestEnvFrom(t *testing.T) {
	f := mustLoad(t, "targets:\n  t:\n    build_url: https://build.example.com\n    env: pre-release\n    allow_live: true\n  u:\n    build_url: https://build.example.com\n")
	for _, tc := range []struct {
		name string
		sel  Selection
		env  map[string]string
		want string
	}{
		{"--env", Selection{Target: "t", Env: "live"}, map[string]string{EnvEnv: "sandbox"}, "env=live from=--env allow_live=true"},
		{"AGENTTEST_ENV", Selection{Target: "t"}, map[string]string{EnvEnv: "live"}, "env=live from=AGENTTEST_ENV allow_live=true"},
		{"the target's env", Selection{Target: "t"}, nil, `env=pre-release from=target "t" env (agenttest.yaml:4:10) allow_live=true`},
		{"none", Selection{Target: "u"}, nil, "env= from= allow_live=false"},
		{"--sim with --env", Selection{Target: "t", Sim: true, Env: "live"}, nil, "env=live from=--env allow_live=false"},
		{"the simulator with AGENTTEST_ENV", Selection{}, map[string]string{EnvEnv: "live"}, "env=live from=AGENTTEST_ENV allow_live=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.sel.Getenv = func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			tg, diags := Resolve(f, tc.sel)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if got := fmt.Sprintf("env=%s from=%s allow_live=%t", tg.Env, tg.EnvFrom, tg.AllowLive); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestCallToken: call_token is a key setting: an ${env:NAME} reference
// only, never echoed, at least 12 characters, overridden by
// AGENTTEST_CALL_TOKEN, named by KeyVariables, and among the secrets to
// redact.
func TestCallToken(t *testing.T) {
	_, diags := Load("c.yaml", []byte("targets:\n  a:\n    call_token: tok-literal-0123456789\n"))
	if got := diags.Error(); !strings.Contains(got, "c.yaml:3:17: call_token must be an ${env:NAME} reference, not a literal key") ||
		!strings.Contains(got, "${env:AGENTTEST_CALL_TOKEN}") || strings.Contains(got, "tok-literal") {
		t.Errorf("literal call_token: %s", got)
	}
	src := "targets:\n  a:\n    build_url: https://build.example.com\n    build_key: ${env:BK}\n    call_token: ${env:CT}\n"
	f, diags := Load("c.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if got := KeyVariables(f)["CT"]; got != `the call_token of target "a" (c.yaml:5:17)` {
		t.Errorf("KeyVariables[CT] = %q", got)
	}
	for _, tc := range []struct {
		env       map[string]string
		token     string
		variable  string
		diagnosed string
	}{
		{map[string]string{"CT": "call-token-0123456789"}, "call-token-0123456789", "CT", ""},
		{map[string]string{"CT": "call-token-0123456789", EnvCallToken: "env-token-0123456789"}, "env-token-0123456789", EnvCallToken, ""},
		{map[string]string{"CT": "short"}, "", "", `c.yaml:5:17: target "a": call_token (from CT) is 5 characters long`},
		{map[string]string{}, "", "", `c.yaml:5:17: target "a": call_token refers to CT, which is not set`},
	} {
		env := map[string]string{"BK": "build-key-0123456789"}
		maps.Copy(env, tc.env)
		tg, diags := Resolve(f, Selection{Target: "a", Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Needs: Needs{Build: true}})
		if got := diags.Error(); tc.diagnosed == "" && got != "" || !strings.Contains(got, tc.diagnosed) {
			t.Errorf("%v: diagnostics %q, want %q", tc.env, got, tc.diagnosed)
			continue
		}
		if tc.diagnosed != "" {
			continue
		}
		if tg.CallToken.Reveal() != tc.token || tg.KeyVars["call_token"] != tc.variable || !slices.Contains(tg.Secrets(), tc.token) {
			t.Errorf("%v: call token %q from %q, secrets %d", tc.env, tg.CallToken.Reveal(), tg.KeyVars["call_token"], len(tg.Secrets()))
		}
	}
}

// A key that reaches another setting, through the variable of its key
// setting or the setting's own, is masked in the diagnostics that quote
// that setting's value.
func TestResolveDiagnosticsMaskKeys(t *testing.T) {
	const key, connector = "bk-PLANTED-key-0123456789", "ct/PLANTED/connector-0123"
	const src = `targets:
  userinfo:
    build_url: http://apikey:${env:BK}@build.example.com
    runtime_url: https://apikey:${env:BK}@runtime.example.com/%zz
    build_key: ${env:BK}
  misplaced:
    build_url: https://build.example.com
    env: ${env:BK}
    messaging_host: ${env:CT}
    build_key: ${env:BK}
    connectors:
      clinic: ${env:CT}
  fromenv:
    build_url: https://build.example.com
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	for _, tc := range []struct {
		target string
		env    map[string]string
	}{
		{"userinfo", map[string]string{"BK": key}},
		{"misplaced", map[string]string{"BK": key, "CT": connector}},
		{"fromenv", map[string]string{EnvBuildKey: key, EnvBuildURL: "https://u:" + key + "@build.example.com/%zz", EnvAccountID: key}},
		{"fromenv", map[string]string{EnvBuildKey: key, EnvMessagingURL: "http://u:" + key + "@msg.example.com", EnvEnv: key}},
	} {
		getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		_, diags := Resolve(f, Selection{Target: tc.target, Getenv: getenv, Needs: Needs{Build: true}})
		if !diags.HasErrors() {
			t.Errorf("%s: no error", tc.target)
		}
		for _, d := range diags {
			out := d.String() + d.Source
			if strings.Contains(out, "PLANTED") {
				t.Errorf("%s: a key is in the diagnostic: %s", tc.target, out)
			}
		}
	}
}

// A key written into a setting that is not a key is refused at that
// setting, naming the key setting it belongs to and never the key.
func TestResolveRefusesKeysInSettings(t *testing.T) {
	const src = `targets:
  t:
    build_url: https://build.example.com/proxy/${env:BK}
    runtime_url: https://runtime.example.com
    account_id: ws-abcd1234
    agent_id: ${env:CLINIC}
    build_key: ${env:BK}
    runtime_key: ${env:RK}
    connectors:
      clinic: ${env:CLINIC}
  clean:
    build_url: https://build.example.com/proxy
    runtime_url: https://runtime.example.com
    account_id: ws-abcd1234
    agent_id: clinic
    build_key: ${env:BK}
    runtime_key: ${env:RK}
  numeric:
    build_url: https://build.example.com
    runtime_url: https://runtime.example.com
    build_key: ${env:NK}
    runtime_key: ${env:RK}
    probe_numbers: ["+447700900001", "${env:NK}"]
    max_reply_bytes: ${env:NK}
    rate: ${env:NK}
    rate_wait: ${env:NK}ns
  plain:
    build_url: http://build.example.com/${env:BK}
    runtime_url: https://runtime.example.com
    build_key: ${env:BK}
    runtime_key: ${env:RK}
`
	const bk, rk, ct = "bk-PLANTED-key-0123456789", "rk+PLANTED/key=0123456789", "ct-PLANTED-clinic-0123"
	// A key of digits alone reads as a phone number, a size or a rate.
	const nk = "4477009000123"
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	for _, tc := range []struct {
		target string
		env    map[string]string
		want   string
	}{
		{"t", nil, `agenttest.yaml:3:16: target "t": build_url holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from build_url; agenttest sends the build_key with every call itself)
agenttest.yaml:6:15: target "t": agent_id holds the connectors.clinic: a key is sent only in the headers of a call, never in a URL or an id (remove the key from agent_id; agenttest sends the connectors.clinic with every call itself)`},
		// Percent-encoded in a query, from a variable.
		{"clean", map[string]string{EnvRuntimeURL: "https://runtime.example.com/?k=" + url.QueryEscape(rk)},
			`target "clean": AGENTTEST_RUNTIME_URL holds the runtime_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_RUNTIME_URL; agenttest sends the runtime_key with every call itself)`},
		{"clean", nil, ``},
		{"numeric", nil, `agenttest.yaml:23:38: target "numeric": probe_numbers holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from probe_numbers; agenttest sends the build_key with every call itself)
agenttest.yaml:24:22: target "numeric": max_reply_bytes holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from max_reply_bytes; agenttest sends the build_key with every call itself)
agenttest.yaml:25:11: target "numeric": rate holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from rate; agenttest sends the build_key with every call itself)
agenttest.yaml:26:16: target "numeric": rate_wait holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from rate_wait; agenttest sends the build_key with every call itself)`},
		// Every setting, whichever key it holds, and named once.
		{"clean", map[string]string{EnvMessagingHost: bk, EnvAccountID: bk}, `target "clean": AGENTTEST_MESSAGING_HOST holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_MESSAGING_HOST; agenttest sends the build_key with every call itself)
target "clean": AGENTTEST_ACCOUNT_ID holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_ACCOUNT_ID; agenttest sends the build_key with every call itself)`},
		{"clean", map[string]string{EnvWebhookURL: "https://hooks.example.com/" + bk + "/" + url.PathEscape(rk)}, `target "clean": AGENTTEST_WEBHOOK_URL holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_WEBHOOK_URL; agenttest sends the build_key with every call itself)`},
		{"clean", map[string]string{EnvCallToken: "call-PLANTED-token-0123", EnvSMSConnectorID: "call-PLANTED-token-0123", EnvConnectorToken: "conn-PLANTED-token-0123", EnvWebhookListen: "conn-PLANTED-token-0123"}, `target "clean": AGENTTEST_WEBHOOK_LISTEN holds the connector_token: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_WEBHOOK_LISTEN; agenttest sends the connector_token with every call itself)
target "clean": AGENTTEST_SMS_CONNECTOR_ID holds the call_token: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_SMS_CONNECTOR_ID; agenttest sends the call_token with every call itself)`},
		// A key too short to mask, refused as such, keeps no other from
		// being found in the settings.
		{"clean", map[string]string{EnvCallToken: "short", EnvAccountID: bk}, `target "clean": call_token (from AGENTTEST_CALL_TOKEN) is 5 characters long; keys shorter than 12 characters are refused, since they cannot be told apart from ordinary text in replies and reports (use the full key the platform issued)
target "clean": AGENTTEST_ACCOUNT_ID holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_ACCOUNT_ID; agenttest sends the build_key with every call itself)`},
		// A brand is a word of letters and digits: one that holds a key
		// is said to, and one that cannot be a brand is refused without
		// its value.
		{"clean", map[string]string{EnvCallToken: "PLANTEDcalltoken0123", EnvBrand: "PLANTEDcalltoken0123"}, `target "clean": AGENTTEST_BRAND holds the call_token: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_BRAND; agenttest sends the call_token with every call itself)`},
		{"clean", map[string]string{EnvBrand: bk}, `AGENTTEST_BRAND: brand "[REDACTED]": use ASCII letters and digits only, it goes into header names`},
		// Refused for plain http, the URL is not refused again.
		{"plain", nil, `agenttest.yaml:28:16: target "plain": build_url "http://build.example.com/[REDACTED]" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))`},
	} {
		env := map[string]string{"BK": bk, "RK": rk, "CLINIC": ct, "NK": nk}
		maps.Copy(env, tc.env)
		_, diags := Resolve(f, Selection{Target: tc.target, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Needs: Needs{Build: true, Runtime: true}})
		diags.Sort()
		if got := diags.Error(); got != tc.want {
			t.Errorf("%s %v:\n got  %s\n want %s", tc.target, tc.env, got, tc.want)
		}
	}
}

// A key the config file writes for a host goes to no other: an
// AGENTTEST_*_URL variable that moves the target to another origin needs
// the key of that origin from its own variable too.
func TestKeysFollowHosts(t *testing.T) {
	const src = `targets:
  prod:
    build_url: https://build.prod.example.com
    runtime_url: https://runtime.prod.example.com
    messaging_url: wss://chat.prod.example.com
    messaging_host: webchat.example.com
    build_key: ${env:BK}
    runtime_key: ${env:RK}
    connectors:
      clinic: ${env:CT}
  nourl:
    build_key: ${env:BK}
  byref:
    build_url: ${env:PROD_URL}
    build_key: ${env:BK}
  tokens:
    build_url: https://build.prod.example.com
    runtime_url: https://runtime.prod.example.com
    messaging_url: ws://127.0.0.1:9001
    build_key: ${env:BK}
    call_token: ${env:CALL}
    connector_token: ${env:CT}
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	const bk, rk, ct = "bk-PLANTED-key-0123456789", "rk-PLANTED-key-0123456789", "ct-PLANTED-connector-0123"
	for _, tc := range []struct {
		name, target string
		env          map[string]string
		want         string
	}{
		{"another host", "prod", map[string]string{EnvBuildURL: "https://build.staging.example.com"},
			`agenttest.yaml:7:16: target "prod": build_key is written for build.prod.example.com (build_url at agenttest.yaml:3:16), but AGENTTEST_BUILD_URL sends it to build.staging.example.com: a key goes only to the host it was configured for (set AGENTTEST_BUILD_KEY to the key of build.staging.example.com as well, or unset AGENTTEST_BUILD_URL)`},
		{"another port", "prod", map[string]string{EnvRuntimeURL: "https://runtime.prod.example.com:8443"},
			`agenttest.yaml:8:18: target "prod": runtime_key is written for runtime.prod.example.com (runtime_url at agenttest.yaml:4:18), but AGENTTEST_RUNTIME_URL sends it to runtime.prod.example.com:8443: a key goes only to the host it was configured for (set AGENTTEST_RUNTIME_KEY to the key of runtime.prod.example.com:8443 as well, or unset AGENTTEST_RUNTIME_URL)`},
		{"a connector", "prod", map[string]string{EnvMessagingURL: "https://chat.other.example.com"},
			`agenttest.yaml:10:15: target "prod": connectors.clinic is written for chat.prod.example.com (messaging_url at agenttest.yaml:5:20), but AGENTTEST_MESSAGING_URL sends it to chat.other.example.com: a key goes only to the host it was configured for (unset AGENTTEST_MESSAGING_URL, or set the target's messaging_url to it)`},
		{"the key from its variable too", "prod", map[string]string{EnvBuildURL: "https://build.staging.example.com", EnvBuildKey: "bk-staging-key-0123456789"}, ``},
		{"the same origin, another path", "prod", map[string]string{EnvBuildURL: "https://BUILD.prod.example.com:443/proxy"}, ``},
		{"the WebSocket form of the same origin", "prod", map[string]string{EnvMessagingURL: "https://chat.prod.example.com"}, ``},
		{"no host in the file", "nourl", map[string]string{EnvBuildURL: "https://build.staging.example.com"}, ``},
		// The file names the key's host through a variable: unset, or
		// naming no host, it is still not the variable's host.
		{"the file's host from a variable not set", "byref", map[string]string{EnvBuildURL: "https://build.staging.example.com"},
			`agenttest.yaml:15:16: target "byref": build_key is written for the host of PROD_URL, which is not set (build_url at agenttest.yaml:14:16), but AGENTTEST_BUILD_URL sends it to build.staging.example.com: a key goes only to the host it was configured for (set AGENTTEST_BUILD_KEY to the key of build.staging.example.com as well, or unset AGENTTEST_BUILD_URL)`},
		{"the file's host from a variable without one", "byref", map[string]string{"PROD_URL": "build.prod.example.com", EnvBuildURL: "https://build.staging.example.com"},
			`agenttest.yaml:15:16: target "byref": build_key is written for a build_url without a host (build_url at agenttest.yaml:14:16), but AGENTTEST_BUILD_URL sends it to build.staging.example.com: a key goes only to the host it was configured for (set AGENTTEST_BUILD_KEY to the key of build.staging.example.com as well, or unset AGENTTEST_BUILD_URL)`},
		{"the file's host from a variable, the same", "byref", map[string]string{"PROD_URL": "https://build.staging.example.com", EnvBuildURL: "https://build.staging.example.com/gw"}, ``},
		{"the call token", "tokens", map[string]string{EnvRuntimeURL: "https://runtime.staging.example.com"},
			`agenttest.yaml:21:17: target "tokens": call_token is written for runtime.prod.example.com (runtime_url at agenttest.yaml:18:18), but AGENTTEST_RUNTIME_URL sends it to runtime.staging.example.com: a key goes only to the host it was configured for (set AGENTTEST_CALL_TOKEN to the key of runtime.staging.example.com as well, or unset AGENTTEST_RUNTIME_URL)`},
		{"the connector token", "tokens", map[string]string{EnvMessagingURL: "https://chat.other.example.com"},
			`agenttest.yaml:22:22: target "tokens": connector_token is written for 127.0.0.1:9001 (messaging_url at agenttest.yaml:19:20), but AGENTTEST_MESSAGING_URL sends it to chat.other.example.com: a key goes only to the host it was configured for (set AGENTTEST_CONNECTOR_TOKEN to the key of chat.other.example.com as well, or unset AGENTTEST_MESSAGING_URL)`},
		{"the HTTP form of a ws:// origin", "tokens", map[string]string{EnvMessagingURL: "http://127.0.0.1:9001"}, ``},
		// The same host by another scheme: the message shows the
		// schemes, where the hosts alone would name one host twice.
		{"another scheme", "tokens", map[string]string{EnvMessagingURL: "https://127.0.0.1:9001"},
			`agenttest.yaml:22:22: target "tokens": connector_token is written for ws://127.0.0.1:9001 (messaging_url at agenttest.yaml:19:20), but AGENTTEST_MESSAGING_URL sends it to https://127.0.0.1:9001: a key goes only to the host it was configured for (set AGENTTEST_CONNECTOR_TOKEN to the key of https://127.0.0.1:9001 as well, or unset AGENTTEST_MESSAGING_URL)`},
		{"plain http to the same host", "prod", map[string]string{EnvBuildURL: "http://build.prod.example.com"},
			`target "prod": AGENTTEST_BUILD_URL "http://build.prod.example.com" is plain http to a host that is not loopback: the API key would travel in clear text (use https://, or set allow_http: true on the target to accept the risk (a warning is printed on every run))
agenttest.yaml:7:16: target "prod": build_key is written for https://build.prod.example.com (build_url at agenttest.yaml:3:16), but AGENTTEST_BUILD_URL sends it to http://build.prod.example.com: a key goes only to the host it was configured for (set AGENTTEST_BUILD_KEY to the key of http://build.prod.example.com as well, or unset AGENTTEST_BUILD_URL)`},
		// A variable without a host is refused for itself; the others are
		// still checked.
		{"after a variable without a host", "prod", map[string]string{EnvBuildURL: "build.example.com", EnvRuntimeURL: "https://runtime.staging.example.com"},
			`AGENTTEST_BUILD_URL: build_url "build.example.com": must be an absolute URL, with a host and scheme http or https
agenttest.yaml:8:18: target "prod": runtime_key is written for runtime.prod.example.com (runtime_url at agenttest.yaml:4:18), but AGENTTEST_RUNTIME_URL sends it to runtime.staging.example.com: a key goes only to the host it was configured for (set AGENTTEST_RUNTIME_KEY to the key of runtime.staging.example.com as well, or unset AGENTTEST_RUNTIME_URL)`},
		// The hint names the variable's host too, which here spells the key.
		{"a key in the variable's host", "prod", map[string]string{EnvBuildURL: "https://" + bk + ".example.com"},
			`target "prod": AGENTTEST_BUILD_URL holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from AGENTTEST_BUILD_URL; agenttest sends the build_key with every call itself)
agenttest.yaml:7:16: target "prod": build_key is written for build.prod.example.com (build_url at agenttest.yaml:3:16), but AGENTTEST_BUILD_URL sends it to [REDACTED].example.com: a key goes only to the host it was configured for (set AGENTTEST_BUILD_KEY to the key of [REDACTED].example.com as well, or unset AGENTTEST_BUILD_URL)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BK": bk, "RK": rk, "CT": ct, "CALL": "call-PLANTED-token-0123"}
			maps.Copy(env, tc.env)
			_, diags := Resolve(f, Selection{Target: tc.target, Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Needs: Needs{Build: true}})
			diags.Sort()
			if got := diags.Error(); got != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
			if strings.Contains(diags.Error(), "PLANTED") {
				t.Errorf("a key is in the diagnostics")
			}
		})
	}
}

// Credentials written literally into a URL of the file (a user name
// alone, a password, or a URL that does not parse), or into an
// AGENTTEST_* URL, are in neither the diagnostic that refuses them nor
// the source line echoed under it: url.URL.Redacted kept a user name,
// and the other messages quoted the URL as written.
func TestURLCredentialsAreMasked(t *testing.T) {
	const src = `targets:
  t:
    build_url: https://sk-PLANTED-user-0123@build.example.com
    runtime_url: https://apikey:sk-PLANTED-pass-0123@runtime.example.com:99999
    messaging_url: "https://apikey:sk-PLANTED-quoted-0123@msg.example.com/%zz"
    build_key: ${env:BK}
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if len(diags) != 3 {
		t.Fatalf("want 3 diagnostics, got %v", diags)
	}
	lines := strings.Split(string(f.Source()), "\n")
	for _, d := range diags {
		out := d.String()
		if d.Pos.Line >= 1 && d.Pos.Line <= len(lines) {
			out += "\n" + lines[d.Pos.Line-1]
		}
		if strings.Contains(out, "PLANTED") || !strings.Contains(out, "xxxxx") {
			t.Errorf("diagnostic or its line shows the credentials, or does not mask them: %s", out)
		}
	}
	if strings.Contains(string(f.Source()), "PLANTED") {
		t.Errorf("the masked source holds the credentials:\n%s", f.Source())
	}

	clean, diags := Load("agenttest.yaml", []byte("targets:\n  t:\n    build_url: https://build.example.com\n    build_key: ${env:BK}\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, u := range []string{
		"https://sk-PLANTED-user-0123@build.example.com",
		"http://u:sk-PLANTED-pass-0123@build.example.com",
		"https://u:sk-PLANTED-pass-0123@build.example.com/%zz",
	} {
		env := map[string]string{"BK": "bk-0123456789abcdef", EnvBuildURL: u}
		getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		_, diags := Resolve(clean, Selection{Target: "t", Getenv: getenv, Needs: Needs{Build: true}})
		if !diags.HasErrors() {
			t.Errorf("%s: accepted", u)
		}
		for _, d := range diags {
			if strings.Contains(d.String(), "PLANTED") {
				t.Errorf("%s: the diagnostic shows the credentials: %s", u, d)
			}
		}
	}
}

// A file that does not parse has no node tree to mask from: the line of
// a secret-looking key is masked by its text, in the echoed source and in
// the parser's message, which may quote the value.
func TestSyntaxErrorMasksKeyLines(t *testing.T) {
	for _, src := range []string{
		"targets:\n  t:\n    build_key: sk-PLANTED-0123456789: x\n",
		"targets:\n  t:\n    build_key: \"sk-PLANTED-0123456789\n",
		"targets:\n  t:\n    runtime_key: 'sk-PLANTED-0123456789'\n   env: x\n",
		"targets:\n  t:\n    connectors:\n      clinic: ct-PLANTED-0123456789\n      x: \"ct-PLANTED-unclosed\n",
		"targets:\n  t:\n    \"api_token\": sk-PLANTED-0123456789: x\r\n",
		"targets:\n  t:\n    build_key: |\n      sk-PLANTED-0123456789\n    x: [\n",
		// Read as an alias, named without its * by the parser.
		"targets:\n  t:\n    build_key: *sk-PLANTED-0123456789\n",
		// A connector's line under connectors:, which the parser's hint
		// quotes by its value alone.
		"targets:\n  t:\n    connectors:\n      clinic: ct-PLANTED-0123456789: x\n",
		"targets:\n  t:\n    connectors:\n      clinic:\n        live: @ct-PLANTED-0123456789\n",
		"targets:\n  t:\n    connectors:\n      clinic: *ct-PLANTED-0123456789\n",
		// Beside references, which such a line shows (below).
		"targets:\n  t:\n    connectors:\n      clinic: ct-PLANTED-0123456789: ${env:X}\n    x: [\n",
		"targets:\n  t:\n    connectors:\n      clinic: {live: ${env:X}, sandbox: ct-PLANTED-0123456789}\n",
		"targets:\n  t:\n    connectors:\n      clinic: {live: ct-PLANTED-0123456789: ${env:X}}\n",
		"targets:\n  t:\n    connectors:\n      clinic: ${env:X} # was ct-PLANTED-0123456789\n    x: [\n",
		"targets:\n  t:\n    build_key: ${env:X} ct-PLANTED-0123456789\n    x: [\n",
		// A token written where a name goes: a key with no reference.
		"targets:\n  t:\n    connectors:\n      ct-PLANTED-0123456789:\n    x: [\n",
		"targets:\n  t:\n    connectors:\n      clinic: {ct-PLANTED-0123456789:, live: ${env:X}}\n",
	} {
		f, diags := Load("agenttest.yaml", []byte(src))
		if !diags.HasErrors() {
			t.Errorf("%q: parsed", src)
			continue
		}
		for _, d := range diags {
			if strings.Contains(d.String(), "PLANTED") {
				t.Errorf("%q: the diagnostic shows the key: %s", src, d)
			}
		}
		if strings.Contains(string(f.Source()), "PLANTED") {
			t.Errorf("%q: the masked source holds the key:\n%s", src, f.Source())
		}
	}
}

// A secret's line that holds references alone is echoed as written in a
// file that does not parse, as in one that does: the connectors: line a
// flow mapping breaks is the one the caret points at. (A pasted
// connectors: {clinic: ${env:X}} does not parse: YAML ends the plain
// value at its "{".)
func TestSyntaxErrorShowsReferenceLines(t *testing.T) {
	for _, tc := range []struct{ src, line string }{
		{"targets:\n  t:\n    connectors:\n      clinic: {pre-release: ${env:CLINIC_PR}, live: ${env:CLINIC_LIVE}}\n",
			"      clinic: {pre-release: ${env:CLINIC_PR}, live: ${env:CLINIC_LIVE}}\n"},
		{"targets:\n  t:\n    connectors: {clinic: ${env:CLINIC}}\n", "    connectors: {clinic: ${env:CLINIC}}\n"},
		{"targets:\n  t:\n    build_key: ${env:BK}\n    x: [\n", "    build_key: ${env:BK}\n"},
		{"targets:\n  t:\n    connectors:\n      clinic:\n        live: '${env:CL}'\n    x: [\n", "        live: '${env:CL}'\n"},
	} {
		f, diags := Load("agenttest.yaml", []byte(tc.src))
		if !diags.HasErrors() {
			t.Errorf("%q: parsed", tc.src)
			continue
		}
		if !strings.Contains(string(f.Source()), tc.line) {
			t.Errorf("%q: the masked source does not show %q:\n%s", tc.src, tc.line, f.Source())
		}
	}
}

// A query or fragment of build_url, runtime_url or messaging_url, which the client
// refuses only once it is built, is refused by the config without being
// shown: a run with nothing to call printed the URL, api_key= and all, in
// its headline and reports.
func TestURLQueryRefusedUnshown(t *testing.T) {
	f, diags := Load("agenttest.yaml", []byte("targets:\n  lit:\n    build_url: https://build.example.com/?api_key=sk-PLANTED-0123\n    build_key: ${env:BK}\n"))
	if got := diags.Error(); !strings.Contains(got, `agenttest.yaml:3:16: build_url "https://build.example.com/": must not have a query or fragment`) || strings.Contains(got, "PLANTED") {
		t.Errorf("literal query: %s", got)
	}
	if src := string(f.Source()); strings.Contains(src, "PLANTED") || !strings.Contains(src, "build_url: https://build.example.com/?xxxxx\n") {
		t.Errorf("the echoed source shows the query:\n%s", src)
	}
	clean, diags := Load("agenttest.yaml", []byte("targets:\n  t:\n    build_url: https://build.example.com\n    runtime_url: ${env:RU}\n    build_key: ${env:BK}\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvBuildURL: "https://build.example.com/v1?api_key=sk-PLANTED-0123"}, `AGENTTEST_BUILD_URL: build_url "https://build.example.com/v1": must not have a query or fragment`},
		{map[string]string{"RU": "https://runtime.example.com/#sk-PLANTED-0123"}, `agenttest.yaml:4:18: target "t": runtime_url "https://runtime.example.com/": must not have a query or fragment`},
		{map[string]string{EnvRuntimeURL: "https://runtime.example.com/?"}, `AGENTTEST_RUNTIME_URL: runtime_url "https://runtime.example.com/": must not have a query or fragment`},
		{map[string]string{EnvMessagingURL: "wss://messaging.example.com/?token=sk-PLANTED-0123"}, `AGENTTEST_MESSAGING_URL: messaging_url "wss://messaging.example.com/": must not have a query or fragment`},
		// Refused for plain http first, the URL is still shown without them.
		{map[string]string{EnvBuildURL: "http://build.example.com/?api_key=sk-PLANTED-0123"}, `target "t": AGENTTEST_BUILD_URL "http://build.example.com/" is plain http to a host that is not loopback`},
		{map[string]string{"RU": "http://runtime.example.com/#sk-PLANTED-0123"}, `agenttest.yaml:4:18: target "t": runtime_url "http://runtime.example.com/" is plain http to a host that is not loopback`},
	} {
		tc.env["BK"] = "bk-0123456789abcdef"
		getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		_, diags := Resolve(clean, Selection{Target: "t", Getenv: getenv, Needs: Needs{Build: true}})
		if got := diags.Error(); !strings.Contains(got, tc.want) || strings.Contains(got, "PLANTED") {
			t.Errorf("%v:\n got  %s\n want %s", tc.env, got, tc.want)
		}
		if got := diags.Error(); strings.Contains(tc.want, "plain http") && strings.Contains(got, "must not have a query") {
			t.Errorf("%v: refused twice:\n%s", tc.env, got)
		}
	}
}

// TestProbeSettings: a probe calls only the target's probe_numbers
// (written with or without separators), except on the simulator; the
// X-TOKEN-ID of SMS probes is the target's, or the simulator's per agent
// and environment.
func TestProbeSettings(t *testing.T) {
	tg := &Target{ProbeNumbers: []string{"+44 7700-900001"}, SMSConnectorID: "sms-target"}
	if !tg.AllowsNumber("+44 (7700) 900001") || tg.AllowsNumber("+447700900002") {
		t.Errorf("AllowsNumber: probe_numbers %v", tg.ProbeNumbers)
	}
	if got := tg.SMSConnector("clinic", "live"); got != "sms-target" {
		t.Errorf("SMSConnector = %q", got)
	}
	// A number that is empty or not one is left out, and the rest kept.
	f, _ := Load("c.yaml", []byte("targets:\n  a:\n    probe_numbers: [\"\", \"12\", \"+447700900001\"]\n"))
	if got := f.Target("a").ProbeNumbers; len(got) != 1 || got[0].Value != "+447700900001" {
		t.Errorf("probe_numbers read as %v", got)
	}
	sim := &Target{Embedded: true, SMSConnectorIDs: map[string]map[string]string{"clinic": {"live": "sms-clinic-live"}}, SMSConnectorID: "sms-target"}
	if !sim.AllowsNumber("+15550100") {
		t.Errorf("the simulator refuses a number")
	}
	if a, b := sim.SMSConnector("clinic", "live"), sim.SMSConnector("restaurant", "live"); a != "sms-clinic-live" || b != "" {
		t.Errorf("SMSConnector = %q, %q", a, b)
	}
}

// TestProbeNumbersExpanded: a probe number from ${env:NAME} is held to
// the rule of a number written out once expanded, and refused at its
// file:line:col by its reference, never by the value, which may be
// anything the environment holds; a key there is refused as a key, once.
func TestProbeNumbersExpanded(t *testing.T) {
	const src = `targets:
  t:
    build_url: https://build.example.com
    build_key: ${env:BK}
    probe_numbers: ["+447700900001", "${env:P1}", "+44 ${env:P2}", "${env:BK}"]
`
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	const bk, planted = "bk-PLANTED-key-0123456789", "PLANTED-token-abcdef"
	for _, tc := range []struct {
		name   string
		p1, p2 string
		want   string
	}{
		{"numbers", "+1 (555) 123-4567", "7700 900002", `agenttest.yaml:5:68: target "t": probe_numbers holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from probe_numbers; agenttest sends the build_key with every call itself)`},
		{"not numbers", planted, "12", `agenttest.yaml:5:38: target "t": probe_numbers: ${env:P1} is not a phone number once P1 is expanded (set P1 so that it reads as an E.164 number such as +447700900001 (+ and 6 to 15 digits))
agenttest.yaml:5:51: target "t": probe_numbers: +44 ${env:P2} is not a phone number once P2 is expanded (set P2 so that it reads as an E.164 number such as +447700900001 (+ and 6 to 15 digits))
agenttest.yaml:5:68: target "t": probe_numbers holds the build_key: a key is sent only in the headers of a call, never in a URL or an id (remove the key from probe_numbers; agenttest sends the build_key with every call itself)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BK": bk, "P1": tc.p1, "P2": tc.p2}
			_, diags := Resolve(f, Selection{Target: "t", Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Needs: Needs{Build: true}})
			diags.Sort()
			got := diags.Error()
			if got != tc.want {
				t.Errorf("\n got  %s\n want %s", got, tc.want)
			}
			if strings.Contains(got, "PLANTED") {
				t.Errorf("a value shows: %s", got)
			}
		})
	}
}
