package config

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const messagingConfig = `default_target: web
targets:
  web:
    build_url: https://build.us.example.com
    messaging_url: https://messaging.us-1.example.com
    messaging_host: webchat.example.com
    agent_id: restaurant
    env: sandbox
    build_key: ${env:BUILD_KEY}
    connector_token: ${env:RESTAURANT_WEBCHAT}
    connectors:
      clinic: ${env:CLINIC_WEBCHAT}
      utility-billing:
        sandbox: ${env:BILLING_SANDBOX_WEBCHAT}
        live: ${env:BILLING_LIVE_WEBCHAT}
`

// messagingEnv holds the variables messagingConfig refers to.
var messagingEnv = map[string]string{
	"BUILD_KEY":               "build-key-0123456789",
	"RESTAURANT_WEBCHAT":      "ct_restaurant-0123456789",
	"CLINIC_WEBCHAT":          "ct_clinic-0123456789",
	"BILLING_SANDBOX_WEBCHAT": "ct_billing-sandbox-0123456789",
	"BILLING_LIVE_WEBCHAT":    "ct_billing-live-0123456789",
}

func resolveWith(t *testing.T, src string, env map[string]string) (*Target, string) {
	t.Helper()
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		return nil, diags.Error()
	}
	tg, diags := Resolve(f, Selection{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Needs: Needs{Build: true}})
	return tg, diags.Error()
}

func TestConnectors(t *testing.T) {
	tg, errs := resolveWith(t, messagingConfig, messagingEnv)
	if errs != "" {
		t.Fatal(errs)
	}
	if tg.MessagingHost != "webchat.example.com" || tg.MessagingURL == "" || len(tg.Connectors) == 0 {
		t.Errorf("messaging host %q, URL %q, %d connectors", tg.MessagingHost, tg.MessagingURL, len(tg.Connectors))
	}
	type testCase struct {
		agent, env string
		want       string
		// setting is what ConnectorSetting names.
		setting string
		err     string
	}
	for _, tc := range []testCase{
		{agent: "restaurant", env: "sandbox", want: "ct_restaurant-0123456789", setting: "connector_token"},
		{agent: "", env: "", want: "ct_restaurant-0123456789", setting: "connector_token"},
		{agent: "clinic", env: "sandbox", want: "ct_clinic-0123456789", setting: "connectors.clinic"},
		{agent: "utility-billing", env: "live", want: "ct_billing-live-0123456789", setting: "connectors.utility-billing.live"},
		{agent: "utility-billing", env: "sandbox", want: "ct_billing-sandbox-0123456789", setting: "connectors.utility-billing.sandbox"},
		{agent: "restaurant", env: "live",
			err: `target "web" has no Messaging connector for agent restaurant in live: a connector token belongs to one environment, and the target's is sandbox; add connectors: {restaurant: {live: '${env:NAME}'}}`},
		{agent: "clinic", env: "live",
			err: `target "web" has no Messaging connector for agent clinic in live: its connectors are for sandbox; add connectors: {clinic: {live: '${env:NAME}'}}`},
		{agent: "utility-billing", env: "pre-release",
			err: `target "web" has no Messaging connector for agent utility-billing in pre-release: its connectors are for live, sandbox; add connectors: {utility-billing: {pre-release: '${env:NAME}'}}`},
		{agent: "helpdesk", env: "sandbox",
			err: `target "web" has no Messaging connector for agent helpdesk in sandbox: connector_token is the connector of restaurant; add connectors: {helpdesk: '${env:NAME}'}`},
	} {
		got, err := tg.Connector(tc.agent, tc.env)
		if setting := tg.ConnectorSetting(tc.agent, tc.env); setting != tc.setting {
			t.Errorf("%s/%s: setting %q, want %q", tc.agent, tc.env, setting, tc.setting)
		}
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s/%s: error %v\nwant %s", tc.agent, tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got.Reveal() != tc.want {
			t.Errorf("%s/%s: %q, %v; want %q", tc.agent, tc.env, got.Reveal(), err, tc.want)
		}
	}
	// Without connector_token, the hint does not name one.
	bare := &Target{Name: "web", AgentID: "restaurant", Env: "sandbox"}
	if _, err := bare.Connector("helpdesk", "sandbox"); err == nil || err.Error() != `target "web" has no Messaging connector for agent helpdesk in sandbox: add connector_token: ${env:NAME} (or AGENTTEST_CONNECTOR_TOKEN), or connectors: {helpdesk: '${env:NAME}'}` {
		t.Errorf("bare target: %v", err)
	}
	// A target of AGENTTEST_* variables alone has no connectors: to
	// reach: the hint names the variables.
	for _, tc := range []struct {
		tg         *Target
		agent, env string
		want       string
	}{
		{&Target{Name: EnvTargetName, Source: FromEnv, AgentID: "clinic", ConnectorToken: "ct_clinic-0123456789"}, "helpdesk", "sandbox",
			`target "env" has no Messaging connector for agent helpdesk in sandbox: AGENTTEST_CONNECTOR_TOKEN is the connector of clinic (AGENTTEST_AGENT_ID); set AGENTTEST_AGENT_ID=helpdesk, AGENTTEST_ENV=sandbox and AGENTTEST_CONNECTOR_TOKEN to its connector, or write a target with connectors: in agenttest.yaml for several agents`},
		{&Target{Name: EnvTargetName, Source: FromEnv, AgentID: "clinic", Env: "sandbox", ConnectorToken: "ct_clinic-0123456789"}, "clinic", "live",
			`target "env" has no Messaging connector for agent clinic in live: AGENTTEST_CONNECTOR_TOKEN is a connector in sandbox; set AGENTTEST_AGENT_ID=clinic, AGENTTEST_ENV=live and AGENTTEST_CONNECTOR_TOKEN to its connector, or write a target with connectors: in agenttest.yaml for several agents`},
		{&Target{Name: EnvTargetName, Source: FromEnv, ConnectorToken: "ct_clinic-0123456789"}, "clinic", "sandbox",
			`target "env" has no Messaging connector for agent clinic in sandbox: AGENTTEST_AGENT_ID is not set, so AGENTTEST_CONNECTOR_TOKEN is the connector of no agent; set AGENTTEST_AGENT_ID=clinic, AGENTTEST_ENV=sandbox and AGENTTEST_CONNECTOR_TOKEN to its connector, or write a target with connectors: in agenttest.yaml for several agents`},
		{&Target{Name: EnvTargetName, Source: FromEnv, AgentID: "clinic"}, "clinic", "sandbox",
			`target "env" has no Messaging connector for agent clinic in sandbox: AGENTTEST_CONNECTOR_TOKEN is not set; set AGENTTEST_AGENT_ID=clinic, AGENTTEST_ENV=sandbox and AGENTTEST_CONNECTOR_TOKEN to its connector, or write a target with connectors: in agenttest.yaml for several agents`},
	} {
		if _, err := tc.tg.Connector(tc.agent, tc.env); err == nil || err.Error() != tc.want {
			t.Errorf("%s/%s: %v\nwant %s", tc.agent, tc.env, err, tc.want)
		}
	}
	secrets := tg.Secrets()
	for _, v := range messagingEnv {
		if !slices.Contains(secrets, v) {
			t.Errorf("Secrets lacks %s", v)
		}
	}
	vars := KeyVariables(mustLoad(t, messagingConfig))
	for _, name := range []string{EnvConnectorToken, "RESTAURANT_WEBCHAT", "CLINIC_WEBCHAT", "BILLING_LIVE_WEBCHAT"} {
		if vars[name] == "" {
			t.Errorf("KeyVariables lacks %s: %v", name, vars)
		}
	}
	if got := vars["BILLING_LIVE_WEBCHAT"]; got != `the connectors.utility-billing.live of target "web" (agenttest.yaml:15:15)` {
		t.Errorf("BILLING_LIVE_WEBCHAT holds %q", got)
	}
}

// TestConnectorHintsLoadAsWritten: the connectors: entry a missing
// connector's hint proposes, pasted into agenttest.yaml with its NAME
// filled in, parses and gives the connector asked for. A flow mapping
// ends a plain value at "{": {clinic: ${env:NAME}} is not YAML.
func TestConnectorHintsLoadAsWritten(t *testing.T) {
	const head = "default_target: web\ntargets:\n  web:\n    build_url: https://build.us.example.com\n    messaging_url: https://messaging.us-1.example.com\n" +
		"    messaging_host: webchat.example.com\n    agent_id: restaurant\n    env: sandbox\n    build_key: ${env:BUILD_KEY}\n"
	entry := regexp.MustCompile(`connectors: \{.*\}$`)
	env := map[string]string{"BUILD_KEY": "build-key-0123456789", "RESTAURANT_WEBCHAT": "ct_restaurant-0123456789", "NEW_WEBCHAT": "ct_new-connector-0123456789"}
	for _, tc := range []struct {
		name, target, agent, env string
	}{
		{"another agent", "    connector_token: ${env:RESTAURANT_WEBCHAT}\n", "clinic", "sandbox"},
		{"no connector at all", "", "clinic", "sandbox"},
		{"another environment", "    connector_token: ${env:RESTAURANT_WEBCHAT}\n", "restaurant", "live"},
		{"another environment of an agent with connectors", "    connectors:\n      clinic: ${env:RESTAURANT_WEBCHAT}\n", "clinic", "pre-release"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg, errs := resolveWith(t, head+tc.target, env)
			if errs != "" {
				t.Fatal(errs)
			}
			_, err := tg.Connector(tc.agent, tc.env)
			if err == nil {
				t.Fatal("no error")
			}
			hint := entry.FindString(err.Error())
			if hint == "" {
				t.Fatalf("no connectors: entry at the end of %q", err)
			}
			hint = strings.ReplaceAll(hint, "NAME", "NEW_WEBCHAT")
			src := head + "    " + hint + "\n"
			if tc.target != "" && !strings.Contains(tc.target, "connectors:") {
				src += tc.target
			}
			tg, errs = resolveWith(t, src, env)
			if errs != "" {
				t.Fatalf("the hint %q does not load:\n%s", hint, errs)
			}
			got, err := tg.Connector(tc.agent, tc.env)
			if err != nil || got.Reveal() != env["NEW_WEBCHAT"] {
				t.Errorf("after the hint %q: %q, %v", hint, got.Reveal(), err)
			}
		})
	}
}

func mustLoad(t *testing.T, src string) *File {
	t.Helper()
	f, diags := Load("agenttest.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return f
}

// TestConnectorProblems: tokens are references only, never echoed, at
// least 12 characters; the environment variables win over the file.
func TestConnectorProblems(t *testing.T) {
	type testCase struct {
		name string
		src  string
		env  map[string]string
		want string
		// whole says want is every diagnostic, not their start.
		whole bool
	}
	const head = "default_target: web\ntargets:\n  web:\n    build_url: https://b.example.com\n    build_key: ${env:BUILD_KEY}\n"
	for _, tc := range []testCase{
		{name: "literal token", src: head + "    connector_token: ct_literal-secret-value\n",
			want: "agenttest.yaml:6:22: connector_token must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write connector_token: ${env:AGENTTEST_CONNECTOR_TOKEN} and set that variable)"},
		{name: "literal in connectors", src: head + "    connectors:\n      clinic: {live: ct_literal-secret-value}\n",
			want: "agenttest.yaml:7:22: connectors.clinic.live must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write connectors.clinic.live: ${env:NAME} and set that variable)"},
		{name: "not an environment", src: head + "    connectors:\n      clinic:\n        prod: ${env:X}\n        live: ct_literal-secret-value\n",
			want: `agenttest.yaml:8:9: connectors.clinic: "prod" is not an environment (one of sandbox, pre-release, live)
agenttest.yaml:9:15: connectors.clinic.live must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write connectors.clinic.live: ${env:NAME} and set that variable)`},
		{name: "not a mapping", src: head + "    connectors: [a, b]\n",
			want: "agenttest.yaml:6:17: connectors must be a mapping of agent to connector token (write connectors: {AGENT: '${env:NAME}'} or connectors: {AGENT: {ENV: '${env:NAME}'}})"},
		{name: "short token", src: head + "    connector_token: ${env:SHORT}\n", env: map[string]string{"SHORT": "tiny"},
			want: `agenttest.yaml:6:22: target "web": connector_token (from SHORT) is 4 characters long`},
		{name: "unset variable", src: head + "    connectors:\n      clinic: ${env:MISSING}\n",
			want: `agenttest.yaml:7:15: target "web": connectors.clinic refers to MISSING, which is not set (set MISSING)`},
		{name: "an empty agent", src: head + "    connectors:\n      \"\": ${env:X}\n      clinic: ct_literal-secret-value\n",
			want: `agenttest.yaml:7:7: connectors: the agent must not be empty
agenttest.yaml:8:15: connectors.clinic must be an ${env:NAME} reference, not a literal key: keys are secrets and never belong in the file (write connectors.clinic: ${env:NAME} and set that variable)`, whole: true},
		{name: "a token that is not a single value", src: head + "    connectors:\n      clinic: [a]\n",
			want: `agenttest.yaml:7:15: connector token must be a single value, not a list`, whole: true},
		{name: "a URL as host", src: head + "    messaging_host: https://webchat.example.com\n",
			want: `agenttest.yaml:6:21: messaging_host "https://webchat.example.com" must be a domain or app namespace such as webchat.example.com, not a URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"BUILD_KEY": "build-key-0123456789"}
			maps.Copy(env, tc.env)
			_, errs := resolveWith(t, tc.src, env)
			if !strings.HasPrefix(errs, tc.want) || tc.whole && errs != tc.want {
				t.Errorf("got  %s\nwant %s", errs, tc.want)
			}
			if strings.Contains(errs, "secret-value") || strings.Contains(errs, "tiny") {
				t.Errorf("a token is in the message: %s", errs)
			}
		})
	}
	// The environment wins over the file.
	env := map[string]string{"BUILD_KEY": "build-key-0123456789", "RESTAURANT_WEBCHAT": "ct_from-the-file-0123",
		EnvConnectorToken: "ct_from-the-environment-0123", EnvMessagingHost: "chat.example.org"}
	tg, errs := resolveWith(t, head+"    agent_id: restaurant\n    messaging_host: webchat.example.com\n    connector_token: ${env:RESTAURANT_WEBCHAT}\n", env)
	if errs != "" {
		t.Fatal(errs)
	}
	if tok, _ := tg.Connector("restaurant", "sandbox"); tok.Reveal() != "ct_from-the-environment-0123" || tg.MessagingHost != "chat.example.org" {
		t.Errorf("token %q host %q", tok.Reveal(), tg.MessagingHost)
	}
}

// brand: names the platform's word for Vendor; AGENTTEST_BRAND wins over
// it, and a value that cannot go into a header name is refused, the
// variable's named.
func TestResolveBrand(t *testing.T) {
	t.Parallel()
	src := messagingConfig + "    brand: Acme\n"
	for _, tc := range []struct {
		name      string
		src       string
		env       map[string]string
		want, err string
	}{
		{"none", messagingConfig, nil, "", ""},
		{"the file's", src, nil, "Acme", ""},
		{"the variable's over the file's", src, map[string]string{EnvBrand: "Globex"}, "Globex", ""},
		{"a variable of a word no header takes", src, map[string]string{EnvBrand: "Glo bex"}, "", `AGENTTEST_BRAND: brand "Glo bex": use ASCII letters and digits only`},
	} {
		env := maps.Clone(messagingEnv)
		maps.Copy(env, tc.env)
		tg, errs := resolveWith(t, tc.src, env)
		if tc.err != "" {
			if !strings.Contains(errs, tc.err) {
				t.Errorf("%s: errors %q, want %q", tc.name, errs, tc.err)
			}
			continue
		}
		if errs != "" || tg.Brand != tc.want {
			t.Errorf("%s: brand %q (%s), want %q", tc.name, tg.Brand, errs, tc.want)
		}
	}
}

// TestSMSConnectorIDs: sms_connector_ids gives agents their own SMS
// connector id, as connectors: gives their web-chat tokens: per agent in
// the environment the file writes beside them, or per environment; the
// target's one sms_connector_id stays every other agent's. Before, a
// target had one id, sent for every agent's SMS probes.
func TestSMSConnectorIDs(t *testing.T) {
	const head = "default_target: t\ntargets:\n  t:\n    build_url: https://b.example.com\n    build_key: ${env:BUILD_KEY}\n    env: sandbox\n"
	env := map[string]string{"BUILD_KEY": "build-key-0123456789", "BILLING_LIVE_SMS": "CONN-billing-live"}
	tg, errs := resolveWith(t, head+"    sms_connector_id: CONN-shared\n    sms_connector_ids:\n      clinic: CONN-clinic\n"+
		"      utility-billing: {live: '${env:BILLING_LIVE_SMS}', sandbox: CONN-billing-sandbox}\n", env)
	if errs != "" {
		t.Fatal(errs)
	}
	for _, tc := range []struct{ agent, env, want, setting string }{
		{"clinic", "sandbox", "CONN-clinic", "sms_connector_ids.clinic"},
		{"clinic", "", "CONN-clinic", "sms_connector_ids.clinic"},
		// The env-less entry is the file's env's: another environment
		// has the target's one id.
		{"clinic", "live", "CONN-shared", "sms_connector_id"},
		{"utility-billing", "live", "CONN-billing-live", "sms_connector_ids.utility-billing.live"},
		{"utility-billing", "sandbox", "CONN-billing-sandbox", "sms_connector_ids.utility-billing.sandbox"},
		{"utility-billing", "", "CONN-billing-sandbox", "sms_connector_ids.utility-billing.sandbox"},
		{"utility-billing", "pre-release", "CONN-shared", "sms_connector_id"},
		{"restaurant", "sandbox", "CONN-shared", "sms_connector_id"},
	} {
		if got, setting := tg.SMSConnector(tc.agent, tc.env), tg.SMSConnectorSetting(tc.agent, tc.env); got != tc.want || setting != tc.setting {
			t.Errorf("%s in %q: %q from %q, want %q from %q", tc.agent, tc.env, got, setting, tc.want, tc.setting)
		}
	}
	// Without sms_connector_id, an agent sms_connector_ids does not name
	// has none.
	tg, errs = resolveWith(t, head+"    sms_connector_ids: {clinic: CONN-clinic}\n", env)
	if errs != "" {
		t.Fatal(errs)
	}
	if got, setting := tg.SMSConnector("restaurant", "sandbox"), tg.SMSConnectorSetting("restaurant", "sandbox"); got != "" || setting != "" {
		t.Errorf("restaurant: %q from %q, want none", got, setting)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"not a mapping", "    sms_connector_ids: [a]\n",
			"agenttest.yaml:7:24: sms_connector_ids must be a mapping of agent to SMS connector id (write sms_connector_ids: {AGENT: '${env:NAME}'} or sms_connector_ids: {AGENT: {ENV: '${env:NAME}'}})"},
		{"not an environment", "    sms_connector_ids: {clinic: {prod: CONN-1}}\n",
			`agenttest.yaml:7:34: sms_connector_ids.clinic: "prod" is not an environment (one of sandbox, pre-release, live)`},
		{"an empty agent", "    sms_connector_ids: {\"\": CONN-1}\n", `agenttest.yaml:7:25: sms_connector_ids: the agent must not be empty`},
		{"an unset variable", "    sms_connector_ids: {clinic: '${env:MISSING}'}\n",
			`agenttest.yaml:7:33: target "t": sms_connector_ids.clinic refers to MISSING, which is not set (set MISSING)`},
		// A key is no connector id: refused, and not shown.
		{"a key", "    sms_connector_ids: {clinic: '${env:BUILD_KEY}'}\n", `agenttest.yaml:7:33: target "t": sms_connector_ids.clinic holds the build_key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := resolveWith(t, head+tc.src, env)
			if !strings.HasPrefix(errs, tc.want) {
				t.Errorf("got  %s\nwant %s", errs, tc.want)
			}
			if strings.Contains(errs, "build-key-0123456789") {
				t.Errorf("a key is in the message: %s", errs)
			}
		})
	}
}
