package main

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// webChatSuite talks to the clinic over web chat.
const webChatSuite = `suite: web chat
agent: clinic
via: messaging
scenarios:
  - name: greets over web chat
    greeting: {events: [EVENT_TYPE_VENDOR_AGENT_JOINED]}
`

// TestMessagingTarget: a configured target carries scenarios over
// messaging with the connector of their agent and environment, and a
// target that cannot (no messaging settings, no connector for the agent)
// is refused before anything runs, at the scenario, saying what to add.
func TestMessagingTarget(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	type testCase struct {
		name string
		// target is the target's lines after build_url and build_key.
		target string
		env    map[string]string
		// args are the flags of run before the suite.
		args []string
		code int
		want []string
		// lacks is what the output must not say.
		lacks []string
		// suite replaces webChatSuite.
		suite string
	}
	clinic := s.Info.MessagingConnectors["clinic"]["sandbox"]
	messaging := "    messaging_url: " + s.MessagingURL + "\n    messaging_host: " + s.Info.MessagingHost + "\n"
	cases := []testCase{
		{name: "the agent's connector", target: messaging + "    connectors:\n      clinic: ${env:CLINIC_WEBCHAT}\n",
			env: map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitOK, want: []string{"PASS web.yaml:5 greets over web chat"}},
		{name: "connector_token from the environment", target: messaging + "    agent_id: clinic\n",
			env: map[string]string{"AGENTTEST_CONNECTOR_TOKEN": clinic}, code: exitOK, want: []string{"PASS web.yaml:5 greets over web chat"}},
		{name: "no messaging settings", code: exitUsage, want: []string{
			`web.yaml:3:6: scenario "greets over web chat" runs over messaging, and target "web" has no messaging_url (AGENTTEST_MESSAGING_URL) and messaging_host (AGENTTEST_MESSAGING_HOST)`}},
		// The scenarios of one via: meet one problem, said once at it; a
		// scenario's own via: is another place, said apart.
		{name: "no messaging settings, two scenarios of a suite's via", code: exitUsage,
			suite: webChatSuite + "  - name: b\n    turns: [{say: hi}]\n  - name: c\n    via: messaging\n    turns: [{say: hi}]\n  - name: over debug chat\n    via: debug_chat\n    turns: [{say: hi}]\n",
			want: []string{`web.yaml:3:6: 2 scenarios ("greets over web chat" and 1 more) run over messaging, and target "web" has no messaging_url (AGENTTEST_MESSAGING_URL) and messaging_host (AGENTTEST_MESSAGING_HOST)`,
				`web.yaml:10:10: scenario "c" runs over messaging, and target "web" has no messaging_url`, "\n2 errors\n"}},
		// One setting without the other is refused as well, naming the
		// one that is missing: the run cannot reach the platform without
		// either.
		{name: "no messaging_host", target: "    messaging_url: " + s.MessagingURL + "\n    connectors:\n      clinic: ${env:CLINIC_WEBCHAT}\n",
			env: map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitUsage, want: []string{
				`web.yaml:3:6: scenario "greets over web chat" runs over messaging, and target "web" has no messaging_host (AGENTTEST_MESSAGING_HOST)`}},
		{name: "another agent's connector", target: messaging + "    agent_id: restaurant\n    connector_token: ${env:RESTAURANT_WEBCHAT}\n",
			env: map[string]string{"RESTAURANT_WEBCHAT": s.Info.MessagingConnectors["restaurant"]["sandbox"]}, code: exitUsage, want: []string{
				`web.yaml:3:6: scenario "greets over web chat" runs over messaging: target "web" has no Messaging connector for agent clinic in sandbox: connector_token is the connector of restaurant; add connectors: {clinic: '${env:NAME}'}`}},
		// A refused connector is a configuration problem: the run stops
		// (exit 2), naming the setting and the variable that hold it, and
		// the messaging host the access-token step checks it against.
		{name: "a token the platform does not know", target: messaging + "    connectors:\n      clinic: ${env:CLINIC_WEBCHAT}\n",
			env: map[string]string{"CLINIC_WEBCHAT": "ct_revoked-0123456789"}, code: exitUsage, want: []string{
				"401: Connector token does not exist (check the connector token, and that the messaging host is the domain it is registered to)",
				`refused the connector token: `,
				`check CLINIC_WEBCHAT, which holds the connectors.clinic of target "web": it must be the web-chat connector of agent clinic in sandbox, and the messaging_host of target "web" (or AGENTTEST_MESSAGING_HOST), which sent X-Host "` + s.Info.MessagingHost + `", must be the domain it is registered to`}},
		{name: "a messaging host the connector is not registered to",
			target: "    messaging_url: " + s.MessagingURL + "\n    messaging_host: elsewhere.example.org\n    agent_id: clinic\n    connector_token: ${env:CLINIC_WEBCHAT}\n",
			env:    map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitUsage, want: []string{
				`check CLINIC_WEBCHAT, which holds the connector_token of target "web"`,
				`messaging_host of target "web" (or AGENTTEST_MESSAGING_HOST), which sent X-Host "elsewhere.example.org", must be the domain`}},
		// A connector written beside the file's env: opens conversations
		// there: a run that --env (or AGENTTEST_ENV) moves to another
		// environment is refused rather than test the file's, unless the
		// token is AGENTTEST_CONNECTOR_TOKEN, set beside the run's env.
		{name: "connector_token of the file's env, --env another", args: []string{"--env", "pre-release"},
			target: messaging + "    env: sandbox\n    agent_id: clinic\n    connector_token: ${env:CLINIC_WEBCHAT}\n",
			env:    map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitUsage, want: []string{
				`web.yaml:3:6: scenario "greets over web chat" runs over messaging: target "web" has no Messaging connector for agent clinic in pre-release: a connector token belongs to one environment, and the target's is sandbox; add connectors: {clinic: {pre-release: '${env:NAME}'}}`}},
		{name: "connectors.AGENT of the file's env, AGENTTEST_ENV another",
			target: messaging + "    env: sandbox\n    connectors:\n      clinic: ${env:CLINIC_WEBCHAT}\n",
			env:    map[string]string{"CLINIC_WEBCHAT": clinic, "AGENTTEST_ENV": "pre-release"}, code: exitUsage, want: []string{
				`target "web" has no Messaging connector for agent clinic in pre-release: its connectors are for sandbox; add connectors: {clinic: {pre-release: '${env:NAME}'}}`}},
		{name: "AGENTTEST_CONNECTOR_TOKEN beside AGENTTEST_ENV", target: messaging + "    env: sandbox\n    agent_id: clinic\n",
			env:  map[string]string{"AGENTTEST_CONNECTOR_TOKEN": s.Info.MessagingConnectors["clinic"]["pre-release"], "AGENTTEST_ENV": "pre-release"},
			code: exitOK, want: []string{"PASS web.yaml:5 greets over web chat"}},
		// A messaging_url that points nowhere stops the run too (exit 4),
		// naming the setting.
		{name: "an unreachable messaging host",
			target: "    messaging_url: http://127.0.0.1:1\n    messaging_host: " + s.Info.MessagingHost + "\n    agent_id: clinic\n    connector_token: ${env:CLINIC_WEBCHAT}\n",
			env:    map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitErrored, want: []string{
				"is unreachable: ", `check the messaging_url of target "web" (or AGENTTEST_MESSAGING_URL)`}},
		// A messaging_url at another host family answers the access-token
		// step 404, which the reference gives only to a socket whose
		// session is gone: the address is wrong, and every web-chat case
		// would meet it again. The run stops (exit 2), saying so once.
		{name: "a messaging_url at the build host", args: []string{"--retries", "1"},
			target: "    messaging_url: " + s.BuildURL + "\n    messaging_host: " + s.Info.MessagingHost + "\n    agent_id: clinic\n    connector_token: ${env:CLINIC_WEBCHAT}\n",
			suite:  webChatSuite + "  - name: greets again\n    greeting: {events: [EVENT_TYPE_VENDOR_AGENT_JOINED]}\n",
			env:    map[string]string{"CLINIC_WEBCHAT": clinic}, code: exitUsage, want: []string{
				"POST /api/v1/access-token: 404: ", "(no Messaging API answers at this address: check the messaging_url)",
				"agenttest: no Messaging API answers at " + strings.TrimPrefix(s.BuildURL, "http://") + ": ",
				`check the messaging_url of target "web" (or AGENTTEST_MESSAGING_URL): it must be the address of the platform's Messaging API`,
				"1 not run (the run stopped)"},
			lacks: []string{"session expired", "attempt 1 of 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := "default_target: web\ntargets:\n  web:\n    build_url: " + s.BuildURL + "\n    build_key: ${env:BUILD_KEY}\n" + tc.target
			for name, src := range map[string]string{"agenttest.yaml": cfg, "web.yaml": cmp.Or(tc.suite, webChatSuite)} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"BUILD_KEY": s.BuildKey}
			maps.Copy(env, tc.env)
			out := newCLI(t, dir, env, append(append([]string{"run"}, tc.args...), "web.yaml")...).expect(t, tc.code, tc.want...)
			for _, l := range tc.lacks {
				if strings.Contains(out, l) {
					t.Errorf("output says %q:\n%s", l, out)
				}
			}
			for _, tok := range env {
				if strings.HasPrefix(tok, "ct_") && strings.Contains(out, tok) {
					t.Errorf("output shows the connector token %s", tok)
				}
			}
		})
	}
}

// TestMessagingPlatformErrorExits4: a Messaging platform that sends
// another conversation's reply on the session's socket errors the case
// (exit 4, naming the socket and what was wrong), even though the reply
// matches the check: it is the platform's error, never the agent's pass
// or failure.
func TestMessagingPlatformErrorExits4(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
		if n == 1 {
			return []platformtest.Frame{platformtest.Event("1", "EVENT_TYPE_VENDOR_AGENT_JOINED", "conversation_id", "c-1"),
				platformtest.Event("5", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "Welcome."),
				platformtest.Event("2", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
		}
		// Another conversation's reply: the frame is what is tested.
		return append(platformtest.Texts(`{"id":"3","type":"EVENT_TYPE_VENDOR_AGENT_MESSAGE","payload":{"conversation_id":"c-2","text":"We open at nine."}}`),
			platformtest.Event("4", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false))
	})
	dir := t.TempDir()
	cfg := "default_target: web\ntargets:\n  web:\n    build_url: " + s.BuildURL + "\n    build_key: ${env:BUILD_KEY}\n" +
		"    messaging_url: " + p.URL + "\n    messaging_host: " + p.Host + "\n    allow_http: true\n" +
		"    agent_id: clinic\n    connector_token: ${env:CLINIC_WEBCHAT}\n"
	suite := webChatSuite + "    turns:\n      - say: When do you open?\n        expect: {response: {contains: nine}}\n"
	for name, src := range map[string]string{"agenttest.yaml": cfg, "web.yaml": suite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const token = "ct_HOSTILE_connector_0123456789"
	out := newCLI(t, dir, map[string]string{"BUILD_KEY": s.BuildKey, "CLINIC_WEBCHAT": token}, "run", "web.yaml").expect(t, exitErrored,
		`WS /ws: 101: malformed response: EVENT_TYPE_VENDOR_AGENT_MESSAGE names conversation "c-2", and this session's conversation is "c-1"`)
	if strings.Contains(out, "HOSTILE") {
		t.Errorf("output shows a credential:\n%s", out)
	}
}
