package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// writeTree writes files (path → content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const greetSuite = "suite: greet\nagent: clinic\nscenarios:\n  - name: greets\n    turns:\n      - say: hello\n"

const probeSuite = `suite: probes
agent: clinic
scenarios:
  - name: allowed call
    probe: {outbound_call: {to: "+447700900001"}, within: 10s}
  - name: unlisted sms
    probe: {sms: {to: "+447700900777", message: hi}}
`

func TestLiveSafetyRefusals(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	remote := simEnv(s)
	remote["AGENTTEST_AGENT_ID"] = "clinic"
	withProbes := "targets:\n  remote:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    probe_numbers: [\"+44 7700 900001\"]\n"
	type testCase struct {
		name  string
		files map[string]string
		env   map[string]string
		args  []string
		want  []string
		// once is said once, however many steps of a scenario ask for it.
		once string
	}
	run := func(t *testing.T, tc testCase) {
		dir := writeTree(t, tc.files)
		c := newCLI(t, dir, tc.env, tc.args...)
		if code := c.run(t); code != exitUsage {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, c.stdout, c.stderr)
		}
		if strings.Contains(c.stdout.String(), "running ") {
			t.Errorf("something ran before the refusal:\n%s", c.stdout)
		}
		for _, w := range tc.want {
			if !strings.Contains(c.stderr.String(), w) {
				t.Errorf("stderr lacks %q:\n%s", w, c.stderr)
			}
		}
		if n := strings.Count(c.stderr.String(), tc.once); tc.once != "" && n != 1 {
			t.Errorf("stderr says %q %d times, want once:\n%s", tc.once, n, c.stderr)
		}
	}
	for _, tc := range []testCase{
		{
			name:  "env flag",
			files: map[string]string{"suites/greet.yaml": greetSuite},
			args:  []string{"run", "--env", "live", "suites"},
			want:  []string{"live environment (set by --env) without --allow-live", "--allow-live"},
		},
		{
			name:  "env variable",
			files: map[string]string{"suites/greet.yaml": greetSuite},
			env:   map[string]string{"AGENTTEST_ENV": "live"},
			args:  []string{"run", "suites"},
			want:  []string{"set by AGENTTEST_ENV"},
		},
		{
			name:  "suite env",
			files: map[string]string{"suites/greet.yaml": strings.Replace(greetSuite, "agent: clinic\n", "agent: clinic\nenv: live\n", 1)},
			args:  []string{"run", "suites"},
			want:  []string{"suites/greet.yaml:5:5", `scenario "greets" runs in the live environment (env: live in its suite or scenario`},
		},
		{
			name:  "target env",
			files: map[string]string{"suites/greet.yaml": greetSuite, "agenttest.yaml": "targets:\n  prod:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    env: live\n"},
			env:   remote,
			args:  []string{"run", "--target", "prod", "suites"},
			want:  []string{`set by target "prod" env (agenttest.yaml:4:10)`},
		},
		{
			name:  "unlisted probe number",
			files: map[string]string{"suites/probes.yaml": probeSuite, "agenttest.yaml": withProbes},
			env:   remote,
			args:  []string{"run", "--target", "remote", "suites"},
			want:  []string{"suites/probes.yaml:7:13", "+447700900777 (sms: to), which is not an allowed probe number", "probe_numbers of target remote (agenttest.yaml:4:20)"},
		},
		{
			name: "unlisted agent numbers",
			files: map[string]string{"agenttest.yaml": withProbes, "suites/probes.yaml": "suite: probes\nagent: clinic\nscenarios:\n" +
				"  - name: texts from an unlisted number\n    probe: {sms: {to: \"+447700900001\", agent_number: \"+447700900888\", message: hi}}\n" +
				"  - name: calls from an unlisted number\n    probe: {outbound_call: {to: \"+447700900001\", agent_number: \"+447700900889\"}, within: 10s}\n"},
			env:  remote,
			args: []string{"run", "--target", "remote", "suites"},
			want: []string{"suites/probes.yaml:5:13", "+447700900888 (sms: agent_number), which is not an allowed probe number",
				"suites/probes.yaml:7:13", "+447700900889 (outbound_call: agent_number), which is not an allowed probe number"},
		},
		{
			name: "scenario env",
			files: map[string]string{"suites/greet.yaml": "suite: greet\nagent: clinic\nscenarios:\n" +
				"  - name: greets in live\n    env: live\n    turns:\n      - say: hello\n"},
			args: []string{"run", "suites"},
			want: []string{"suites/greet.yaml:4:5", `scenario "greets in live" runs in the live environment`},
		},
		{
			name:  "no probe numbers at all",
			files: map[string]string{"suites/probes.yaml": probeSuite},
			env:   remote,
			args:  []string{"run", "suites"},
			want:  []string{"suites/probes.yaml:5:13", "suites/probes.yaml:7:13", "the target lists no probe_numbers"},
		},
		// Each would error at its confirmation (exit 4, "retry the job"),
		// where no retry can help: refused before anything runs.
		{
			name: "webhook confirmation without a receiver",
			files: map[string]string{"suites/hooks.yaml": "suite: hooks\nagent: clinic\nscenarios:\n" +
				"  - name: hands over\n    turns:\n      - say: I have chest pain\n    confirm: {webhooks: [handoff.created]}\n"},
			env:  remote,
			args: []string{"run", "suites"},
			want: []string{"suites/hooks.yaml:7:5", `scenario "hands over" confirms webhooks (handoff.created), and the run starts no webhook receiver`, "--webhook-listen ADDR --webhook-url PUBLIC_URL"},
		},
		{
			name: "webhook steps without a receiver",
			files: map[string]string{"features/hooks.feature": "@agent:clinic\nFeature: hooks\n  Scenario: hands over\n" +
				"    When the user says \"I have chest pain\"\n    Then a \"handoff.created\" webhook arrives\n    And a \"conversation.completed\" webhook arrives\n"},
			env:  remote,
			args: []string{"run", "features"},
			want: []string{"features/hooks.feature:5:5: "},
			once: `scenario "hands over" confirms webhooks`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// probeSim starts a simulator whose outbound calls end at once and
// returns the environment of a remote target on it for agent clinic.
func probeSim(t *testing.T) map[string]string {
	s := simtest.Start(t, sim.Options{Seed: 1, Outbound: sim.OutboundOptions{Queued: 10 * time.Millisecond, Calling: 10 * time.Millisecond}})
	env := simEnv(s)
	env["AGENTTEST_AGENT_ID"] = "clinic"
	return env
}

// TestAllowLiveAndProbeNumbers runs what the refusals refuse once allowed:
// a live run with --allow-live, a probe to a listed number written with
// separators.
func TestAllowLiveAndProbeNumbers(t *testing.T) {
	t.Parallel()
	env := probeSim(t)
	dir := writeTree(t, map[string]string{
		"suites/probes.yaml": strings.Split(probeSuite, "  - name: unlisted sms")[0],
		"agenttest.yaml":     "targets:\n  remote:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    allow_live: true\n    probe_numbers: [\"+44 7700 900001\"]\n",
	})
	c := newCLI(t, dir, env, "run", "--target", "remote", "--env", "live", "suites")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, c.stdout, c.stderr)
	}
}

// TestAlertGateInReports fires a rule on the simulator and checks that the
// gate fails the run and appears in the console, JUnit and JSON.
func TestAlertGateInReports(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, TickInterval: 10 * time.Millisecond})
	env := simEnv(s)
	env["AGENTTEST_AGENT_ID"] = "clinic"
	client, err := platform.New(platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey})
	if err != nil {
		t.Fatal(err)
	}
	dir := writeTree(t, map[string]string{"suites/greet.yaml": greetSuite})

	c := newCLI(t, dir, env, "run", "--gate-alerts", "suites")
	if code := c.run(t); code != exitOK {
		t.Fatalf("no rule: exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	if _, err := client.CreateAlertRule(context.Background(), platform.AlertRuleRequest{
		Name: "clinic volume", ProjectID: "clinic", Metric: "call_volume", Operator: ">=", ThresholdValue: 1, WindowDuration: "5m"}); err != nil {
		t.Fatal(err)
	}
	c = newCLI(t, dir, env, "run", "--gate-alerts", "--junit", "out/junit.xml", "--json", "out/result.json", "suites")
	if code := c.run(t); code != exitFailed {
		t.Fatalf("firing rule: exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
	}
	for _, want := range []string{"FAIL alert gate", `alerts.call_volume: alert firing (agent clinic): rule "clinic volume"`, "call_volume >= 1 over 5m"} {
		if !strings.Contains(c.stdout.String(), want) {
			t.Errorf("console lacks %q:\n%s", want, c.stdout)
		}
	}
	junit, err := os.ReadFile(filepath.Join(dir, "out/junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `name="alert gate"`) || !strings.Contains(string(junit), "clinic volume") {
		t.Errorf("JUnit lacks the gate:\n%s", junit)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out/result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Checks []struct {
			Name     string `json:"name"`
			Status   string `json:"status"`
			Attempts []struct {
				Failures []struct {
					Key string `json:"key"`
				} `json:"failures"`
			} `json:"attempts"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Checks) != 1 || doc.Checks[0].Name != "alert gate" || doc.Checks[0].Status != "failed" ||
		len(doc.Checks[0].Attempts) != 1 || doc.Checks[0].Attempts[0].Failures[0].Key != "alerts.call_volume" {
		t.Errorf("JSON checks = %+v", doc.Checks)
	}

	// run.gate_alerts in agenttest.yaml turns the gate on as the flag
	// does, and --gate-alerts=false on the command line wins over it.
	if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte("run:\n  gate_alerts: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"run", "suites"}, exitFailed},
		{[]string{"run", "--gate-alerts=false", "suites"}, exitOK},
	} {
		c = newCLI(t, dir, env, tc.args...)
		if code := c.run(t); code != tc.want {
			t.Errorf("gate_alerts: true, %q: exit %d, want %d\n%s%s", tc.args, code, tc.want, c.stdout, c.stderr)
		}
	}
}

// TestConfirmationsInReports runs the shipped confirmations suite and
// checks that what was confirmed is in the JSON report.
func TestConfirmationsInReports(t *testing.T) {
	t.Parallel()
	c := newCLI(t, repoRoot, examplesEnv(), "run", "--json", filepath.Join(t.TempDir(), "r.json"), "suites/confirmations.yaml")
	out := c.st.Args[2]
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind": "webhook"`, `"subject": "handoff.created"`, `"kind": "call"`, `"kind": "sms"`, `"kind": "handoff_state"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestCallToken runs call and SMS probes against a simulator that accepts
// only its own call token, distinct from the runtime key, for outbound
// calling and SMS: the target's call_token goes there; without it the
// runtime key is sent and refused, and a wrong token is refused; both
// stop the run as a configuration problem naming what to set.
func TestCallToken(t *testing.T) {
	t.Parallel()
	const token = "probe-call-token-7c1d2e3f"
	s := simtest.Start(t, sim.Options{Seed: 1, CallToken: token,
		Outbound: sim.OutboundOptions{Queued: 10 * time.Millisecond, Calling: 10 * time.Millisecond}})
	suite := `suite: probes
agent: clinic
scenarios:
  - name: calls
    probe: {outbound_call: {to: "+447700900001"}, expect_status: success, within: 10s}
    confirm: {conversation: {channel: VOICE-SIP}}
  - name: texts
    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}
    confirm: {conversation: {channel: SMS}}
`
	target := "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL +
		"\n    account_id: " + s.AccountID + "\n    agent_id: clinic\n    build_key: ${env:BK}\n    runtime_key: ${env:RK}\n" +
		"    sms_connector_id: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + "\n" +
		"    probe_numbers: [\"+447700900001\", \"+447700900002\"]\n"
	type testCase struct {
		name   string
		config string
		env    map[string]string
		code   int
		stderr []string
	}
	keys := map[string]string{"BK": s.BuildKey, "RK": s.RuntimeKey}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		maps.Copy(out, keys)
		maps.Copy(out, extra)
		return out
	}
	run := func(t *testing.T, tc testCase) {
		dir := writeTree(t, map[string]string{"suites/probes.yaml": suite, "agenttest.yaml": tc.config})
		c := newCLI(t, dir, tc.env, "run", "--json", "r.json", "suites")
		if code := c.run(t); code != tc.code {
			t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
		}
		for _, want := range tc.stderr {
			if !strings.Contains(c.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, c.stderr)
			}
		}
		out := c.stdout.String() + c.stderr.String()
		for _, secret := range []string{token, s.RuntimeKey, "wrong-call-token-0000"} {
			if strings.Contains(out, secret) {
				t.Errorf("output shows a key or token %q", secret)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "call_token from the config", config: target + "    call_token: ${env:CT}\n", env: with(map[string]string{"CT": token}), code: exitOK},
		{name: "call_token from AGENTTEST_CALL_TOKEN", config: target, env: with(map[string]string{"AGENTTEST_CALL_TOKEN": token}), code: exitOK},
		{
			name: "no call_token: the runtime key is refused", config: target, env: with(nil), code: exitUsage,
			stderr: []string{"refused the runtime key (as the call token)", "check RK, which holds the runtime_key of target \"t\"", "or set call_token (AGENTTEST_CALL_TOKEN)",
				"; it went as X-Vendor-Auth-Token: if the platform's brand word is not Vendor, set brand (AGENTTEST_BRAND)"},
		},
		{
			name: "a wrong call token", config: target + "    call_token: ${env:CT}\n", env: with(map[string]string{"CT": "wrong-call-token-0000"}), code: exitUsage,
			stderr: []string{"refused the call token", "check CT, which holds the call_token of target \"t\"",
				"it went as X-Vendor-Auth-Token: if the platform's brand word is not Vendor, set brand (AGENTTEST_BRAND)"},
		},
		// A platform of another brand finds no token in the headers.
		{
			name: "a platform of another brand", config: target + "    call_token: ${env:CT}\n    brand: Acme\n", env: with(map[string]string{"CT": token}), code: exitUsage,
			stderr: []string{"refused the call token", "it went as X-Acme-Auth-Token: if the platform's brand word is not Acme, set brand (AGENTTEST_BRAND)"},
		},
		// The platform refuses the connector id sent beside a good
		// token: the stop names the token it was sent with, and also
		// the connector id setting, which was the one at fault.
		{
			name: "a wrong sms_connector_id", config: strings.Replace(target, "    sms_connector_id: "+s.Info.ConnectorIDs["clinic"]["sandbox"]+"\n", "    sms_connector_id: wrong-connector\n", 1) + "    call_token: ${env:CT}\n",
			env: with(map[string]string{"CT": token}), code: exitUsage,
			stderr: []string{"refused the call token", `unknown connector id "wrong-connector"`, "the SMS endpoint also checks the connector id it is sent (X-TOKEN-ID): check the sms_connector_id of target \"t\" (or AGENTTEST_SMS_CONNECTOR_ID)"},
		},
		// Refused before anything runs, at the probe, naming the setting.
		{
			name: "no sms_connector_id", config: strings.Replace(target, "    sms_connector_id: "+s.Info.ConnectorIDs["clinic"]["sandbox"]+"\n", "", 1) + "    call_token: ${env:CT}\n",
			env: with(map[string]string{"CT": token}), code: exitUsage,
			stderr: []string{`probes.yaml:8:13: scenario "texts" sends an SMS probe of agent clinic in sandbox, and target "t" has no SMS connector id for it (sms_connector_ids.clinic, or sms_connector_id, AGENTTEST_SMS_CONNECTOR_ID)`},
		},
		{
			name: "sms_connector_id from AGENTTEST_SMS_CONNECTOR_ID", config: strings.Replace(target, "    sms_connector_id: "+s.Info.ConnectorIDs["clinic"]["sandbox"]+"\n", "", 1) + "    call_token: ${env:CT}\n",
			env: with(map[string]string{"CT": token, "AGENTTEST_SMS_CONNECTOR_ID": s.Info.ConnectorIDs["clinic"]["sandbox"]}), code: exitOK,
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRedirectedRecordReadsErr: the runtime host redirects the read of
// a record to a path it does not serve. Its 404 there is the platform's
// error, not a record the agent failed to leave: the case errors (exit 4)
// in the console, JSON and JUnit, and says what was called and where the
// redirect led. Before, the 404 read as "not recorded": the conversation
// was polled for the whole confirm timeout (30s), and the case failed,
// blaming the agent (exit 1).
func TestRedirectedRecordReadsErr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, redirected, confirm, want string
	}{
		{"conversation", "/conversations/", "{conversation: {handoff: true}}", "/conversations/conv-"},
		{"handoff state", "/handoff_state", "{handoff_state: {data: {reason: urgent_symptoms}}}", "/handoff_state: 404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := simBehind(t, sim.Options{Seed: 1}, nil, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet && strings.Contains(r.URL.Path, tc.redirected) {
						http.Redirect(w, r, "/elsewhere", http.StatusFound)
						return
					}
					h.ServeHTTP(w, r)
				})
			})
			suite := "suite: redirected\nagent: clinic\nscenarios:\n  - name: confirms\n    turns: [{say: I have chest pain}]\n    confirm: " + tc.confirm + "\n"
			dir := writeTree(t, map[string]string{"redirected.yaml": suite})
			c := newCLI(t, dir, env, "run", "--json", "out/result.json", "--junit", "out/junit.xml", "redirected.yaml")
			out := c.expect(t, exitErrored, "ERROR redirected.yaml:4 confirms", tc.want, "(answered by /elsewhere, which a redirect led to)")
			if strings.Contains(out, "FAIL") {
				t.Errorf("the case is blamed on the agent:\n%s", out)
			}
			var doc struct {
				Files []struct{ Cases []struct{ Status string } }
			}
			b, err := os.ReadFile(filepath.Join(dir, "out/result.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Files) != 1 || len(doc.Files[0].Cases) != 1 || doc.Files[0].Cases[0].Status != "errored" {
				t.Errorf("JSON: %+v, want the case errored", doc.Files)
			}
			junit, err := os.ReadFile(filepath.Join(dir, "out/junit.xml"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(junit), "<error ") || strings.Contains(string(junit), "<failure ") {
				t.Errorf("JUnit: want an <error> and no <failure>:\n%s", junit)
			}
		})
	}
}

// TestProbeNumberFromVariable: a probe number written as ${var} is known
// only once the scenario runs, so the refusal before the run leaves it to
// the runner, which holds the expanded number to probe_numbers: a listed
// one is called, an unlisted one errors its scenario at the probe and
// is not called. The suite's env: live is overridden by each
// scenario's own env, so nothing here needs --allow-live.
func TestProbeNumberFromVariable(t *testing.T) {
	t.Parallel()
	env := probeSim(t)
	dir := writeTree(t, map[string]string{
		"agenttest.yaml": "targets:\n  remote:\n    build_url: ${env:AGENTTEST_BUILD_URL}\n    probe_numbers: [\"+44 7700 900001\"]\n",
		"suites/probes.yaml": `suite: probes
agent: clinic
env: live
scenarios:
  - name: listed by variable
    env: sandbox
    vars: {phone: "+447700900001"}
    probe: {outbound_call: {to: "${phone}"}, within: 10s}
  - name: unlisted by variable
    env: sandbox
    vars: {phone: "+447700900777"}
    probe: {outbound_call: {to: "${phone}"}, within: 10s}
`,
	})
	c := newCLI(t, dir, env, "run", "--target", "remote", "suites")
	code := c.run(t)
	out := c.stdout.String() + c.stderr.String()
	if code != exitErrored {
		t.Fatalf("exit %d, want %d\n%s", code, exitErrored, out)
	}
	for _, want := range []string{"PASS suites/probes.yaml:5 listed by variable", "to +447700900777 is not listed in the target's probe_numbers"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestWebhookFailFirstSetting: AGENTTEST_WEBHOOK_FAIL_FIRST (the fault
// drills' receiver that refuses the first deliveries) takes a number of
// deliveries, 0 or more, spaces around it allowed; anything else is a
// usage error naming the variable and its value.
func TestWebhookFailFirstSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		want  int
		bad   bool
	}{
		{value: "", want: 0},
		{value: "0", want: 0},
		{value: " 2 ", want: 2},
		{value: "-1", bad: true},
		{value: "two", bad: true},
	} {
		st := &State{Env: map[string]string{webhookFailFirstEnv: tc.value}}
		n, err := webhookFailFirst(st)
		if tc.bad {
			if exitCode(err, io.Discard) != exitUsage || !strings.Contains(fmt.Sprint(err), fmt.Sprintf("%s=%q: want a number of deliveries to refuse, 0 or more", webhookFailFirstEnv, strings.TrimSpace(tc.value))) {
				t.Errorf("%q: %d, %v; want a usage error naming it", tc.value, n, err)
			}
			continue
		}
		if n != tc.want || err != nil {
			t.Errorf("%q: %d, %v; want %d", tc.value, n, err, tc.want)
		}
	}
}

// TestEmbeddedSimulatorTakesOnlyItsCallToken: the embedded simulator
// runs with a call token of its own, so that every run on it shows that
// probes send the target's call token: the runtime key sent in its place
// (a client without a call token) is refused.
func TestEmbeddedSimulatorTakesOnlyItsCallToken(t *testing.T) {
	t.Parallel()
	opts := sim.Options{Seed: 1}
	embeddedTweaks(&opts)
	s := simtest.Start(t, opts)
	for token, accepted := range map[string]bool{"": false, embeddedCallToken: true} {
		client, err := platform.New(platform.Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID,
			BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey, CallToken: token})
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.PlaceCall(context.Background(), platform.CallRequest{To: "+447700900001", AgentID: "clinic"})
		if accepted && err != nil || !accepted && !platform.IsAuth(err) {
			t.Errorf("call token %q: %v; want accepted: %t", token, err, accepted)
		}
	}
}

// TestSMSConnectorSharedByAgents: the SMS probes of two agents through a
// target's one sms_connector_id, the connector of one project: the
// probes of the second text as the first (an SMS runs in its connector's
// project). Warned of before the run, at the second agent's first probe,
// naming the first's; the run goes on, and the platform's answer errors
// the probe it names another project for. The probes of one agent are
// not warned of.
func TestSMSConnectorSharedByAgents(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	const warning = `suites/probes.yaml:9:13: warning: SMS probe of agent restaurant, while the SMS probes of agent clinic (suites/probes.yaml:5:13) send the same sms_connector_id of target "t": a connector id is one project's, and an SMS runs in its connector's project, so the SMS probes of all but one of these agents text as another agent`
	probe := func(name, agent string) string {
		return "  - name: " + name + "\n    agent: " + agent + "\n" +
			`    probe: {sms: {to: "+447700900002", message: "Reply YES to confirm"}}` + "\n    confirm: {conversation: {channel: SMS}}\n"
	}
	target := "default_target: t\ntargets:\n  t:\n    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL +
		"\n    account_id: " + s.AccountID + "\n    agent_id: clinic\n    build_key: ${env:BK}\n    runtime_key: ${env:RK}\n" +
		"    sms_connector_id: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + "\n" +
		"    probe_numbers: [\"+447700900002\"]\n"
	env := map[string]string{"BK": s.BuildKey, "RK": s.RuntimeKey}
	for _, tc := range []struct {
		name   string
		second string // the second probe's agent
		// noConnector leaves sms_connector_id out of the target.
		noConnector bool
		// ids is the target's sms_connector_ids, when it has one.
		ids    string
		code   int
		warned bool
	}{
		{name: "two agents", second: "restaurant", code: exitErrored, warned: true},
		// Each agent its own connector id (sms_connector_ids): no
		// probe texts as another agent, and nothing is warned of.
		// Before, a target had one id, and a nightly over every agent
		// needed a target per agent.
		{name: "two agents, the second's own id", second: "restaurant", code: exitOK,
			ids: "{restaurant: " + s.Info.ConnectorIDs["restaurant"]["sandbox"] + "}"},
		{name: "two agents, each its own id per environment", second: "restaurant", noConnector: true, code: exitOK,
			ids: "{clinic: {sandbox: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + "}, restaurant: {sandbox: " + s.Info.ConnectorIDs["restaurant"]["sandbox"] + "}}"},
		// An id of another environment is no id of sandbox's: the
		// restaurant's probe is refused before the run.
		{name: "two agents, the second's id of another environment", second: "restaurant", noConnector: true, code: exitUsage,
			ids: "{clinic: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + ", restaurant: {live: " + s.Info.ConnectorIDs["restaurant"]["live"] + "}}"},
		{name: "one agent", second: "clinic", code: exitOK},
		// No connector is shared where there is none: each probe is
		// refused, without a word of sharing.
		{name: "two agents, no sms_connector_id", second: "restaurant", noConnector: true, code: exitUsage},
	} {
		// compare warns of it as run does, for each side, once when
		// both sides would say the same; before, it said nothing. Both
		// sides in sandbox, where the connector is clinic's.
		for _, cmd := range [][]string{{"run"}, {"compare", "--baseline", "sandbox", "--candidate", "target:t"}} {
			t.Run(cmd[0]+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				suite := "suite: probes\nscenarios:\n" + probe("clinic texts", "clinic") + probe("second texts", tc.second)
				config := target
				if tc.noConnector {
					config = strings.Replace(target, "    sms_connector_id: "+s.Info.ConnectorIDs["clinic"]["sandbox"]+"\n", "", 1)
				}
				if tc.ids != "" {
					config += "    sms_connector_ids: " + tc.ids + "\n"
				}
				dir := writeTree(t, map[string]string{"suites/probes.yaml": suite, "agenttest.yaml": config})
				c := newCLI(t, dir, env, append(cmd, "suites")...)
				if code := c.run(t); code != tc.code {
					t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
				}
				if got := strings.Count(c.stderr.String(), warning); got != map[bool]int{true: 1}[tc.warned] {
					t.Errorf("warned %d times, want it %v once: %q\nstderr:\n%s", got, tc.warned, warning, c.stderr)
				}
				if !tc.warned && strings.Contains(c.stderr.String(), "warning") {
					t.Errorf("a warning of one agent's probes:\n%s", c.stderr)
				}
				if tc.warned && cmd[0] == "compare" && !strings.Contains(c.stderr.String(), "agenttest: --candidate target:t: the same as --baseline sandbox\n") {
					t.Errorf("the candidate side does not say it warns the same:\n%s", c.stderr)
				}
			})
		}
	}
}

// TestConfirmTimeout: the wait for what a confirmation reads is
// --confirm-timeout (or the config's run: confirm_timeout), where it was
// 30s whatever a platform that shows its records later needed. A record
// never written is said not recorded within the wait given.
func TestConfirmTimeout(t *testing.T) {
	t.Parallel()
	env := simBehind(t, sim.Options{Seed: 1}, nil, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/conversations/") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprint(w, `{"error_message":"conversation not found"}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	const suite = "suite: late\nagent: clinic\nscenarios:\n  - name: confirms\n    turns: [{say: I have chest pain}]\n    confirm: {conversation: {handoff: true}}\n"
	for _, tc := range []struct {
		name, config string
		args         []string
		env          map[string]string
		code         int
		want         string
	}{
		{name: "the default", code: exitErrored, want: "not recorded within the confirmation's wait of 30s"},
		{name: "the flag", args: []string{"--confirm-timeout", "2m"}, code: exitErrored, want: "not recorded within the confirmation's wait of 2m0s"},
		{name: "the variable", env: map[string]string{"AGENTTEST_CONFIRM_TIMEOUT": "75s"}, code: exitErrored, want: "not recorded within the confirmation's wait of 1m15s"},
		{name: "the config", config: "run:\n  confirm_timeout: 90s\n", code: exitErrored, want: "not recorded within the confirmation's wait of 1m30s"},
		{name: "the flag over the config", config: "run:\n  confirm_timeout: 90s\n", args: []string{"--confirm-timeout", "45s"}, code: exitErrored,
			want: "not recorded within the confirmation's wait of 45s"},
		{name: "not positive", args: []string{"--confirm-timeout", "0s"}, code: exitUsage, want: "--confirm-timeout must be positive, got 0s"},
		{name: "not positive in the config", config: "run:\n  confirm_timeout: -1s\n", code: exitUsage,
			want: `confirm_timeout must be a positive duration such as 30s or 2m, not "-1s"`},
	} {
		// Each side of a comparison waits as run does; before, compare
		// had no such flag and waited 30s.
		for _, cmd := range [][]string{{"run"}, {"compare", "--baseline", "sandbox", "--candidate", "pre-release"}} {
			t.Run(cmd[0]+" "+tc.name, func(t *testing.T) {
				t.Parallel()
				files := map[string]string{"late.yaml": suite}
				if tc.config != "" {
					files["agenttest.yaml"] = tc.config
				}
				dir := writeTree(t, files)
				e := maps.Clone(env)
				maps.Copy(e, tc.env)
				c := newCLI(t, dir, e, slices.Concat(cmd, tc.args, []string{"late.yaml"})...)
				clk := fakeclock.New()
				c.st.Now, c.st.Sleep, c.st.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
				out := c.expect(t, tc.code, tc.want)
				if cmd[0] == "compare" && tc.code == exitErrored && strings.Count(out, tc.want) != 2 {
					t.Errorf("want both sides to wait %q:\n%s", tc.want, out)
				}
			})
		}
	}
}
