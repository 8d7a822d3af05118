package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
)

// startSim runs `agenttest sim args...` until the test ends and returns
// what it printed once ready: its JSON line, or its environment lines,
// written at once.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	st := &State{Stdout: out, Stderr: errOut, Env: map[string]string{}, Dir: "."}
	// The wait for the output ends when runSim returns early too; its
	// bound is for a broken build.
	wait, stop := context.WithTimeout(context.Background(), hangBound)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- runSim(ctx, st, args)
		stop()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runSim: %v", err)
		}
	})
	first, err := out.await(wait, func(s string) bool { return strings.Contains(s, "\n") })
	if err != nil {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("runSim returned early: %v (stderr %s)", err, errOut.String())
		default:
			t.Fatalf("no output from runSim in %s", hangBound)
		}
	}
	return first
}

func TestRunSimJSONLine(t *testing.T) {
	t.Parallel()
	out := startSim(t, "--listen", "127.0.0.1:0", "--keys", "sim-test-build-key,sim-test-runtime-key", "--account", "ws-abcd1234", "--seed-conversations", "20",
		"--brand", "Acme", "--unreachable", "+15550009999, +15550008888", "--call-queued", "10ms", "--sms-rate", "2", "--webhook-backoff", "50ms", "--allow-http-webhooks")
	var info map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &info); err != nil {
		t.Fatalf("not one JSON line: %q", out)
	}
	if info["auth_token_header"] != "X-Acme-Auth-Token" || info["signature_header"] != "X-Acme-Signature" || len(info["unreachable_numbers"].([]any)) != 2 {
		t.Errorf("outbound, SMS and webhook facts missing: %s", out)
	}
	for _, k := range []string{"build_url", "runtime_url", "account_id", "agent_ids", "build_api_key", "runtime_api_key", "connector_ids", "numbers", "env_numbers",
		"messaging_url", "messaging_host", "messaging_connectors"} {
		if _, ok := info[k]; !ok {
			t.Errorf("missing %s in %s", k, out)
		}
	}
	if info["build_api_key"] != "sim-test-build-key" || info["runtime_api_key"] != "sim-test-runtime-key" || info["account_id"] != "ws-abcd1234" {
		t.Errorf("pinned values not used: %s", out)
	}
	if info["build_url"] == info["runtime_url"] || info["messaging_url"] == info["runtime_url"] || info["messaging_url"] == info["build_url"] {
		t.Errorf("separate hosts share a URL: %s", out)
	}
	agents := info["agent_ids"].([]any)
	req, _ := http.NewRequest("GET", info["runtime_url"].(string)+"/v3/ws-abcd1234/"+agents[0].(string)+"/conversations", nil)
	req.Header.Set("x-api-key", "sim-test-runtime-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("list: %d", resp.StatusCode)
	}
	token := info["messaging_connectors"].(map[string]any)[agents[0].(string)].(map[string]any)["sandbox"].(string)
	req, _ = http.NewRequest("POST", info["messaging_url"].(string)+"/api/v1/access-token", strings.NewReader("{}"))
	req.Header.Set("X-Token", token)
	req.Header.Set("X-Host", info["messaging_host"].(string))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("messaging access token: %d", resp.StatusCode)
	}
}

func TestRunSimPrintEnv(t *testing.T) {
	t.Parallel()
	out := startSim(t, "--single-host", "--print-env", "--seed", "3", "--keys", "sim-test-build-key,sim-test-runtime-key")
	env := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	for _, k := range []string{"AGENTTEST_BUILD_URL", "AGENTTEST_RUNTIME_URL", "AGENTTEST_ACCOUNT_ID", "AGENTTEST_AGENT_ID", "AGENTTEST_BUILD_KEY", "AGENTTEST_RUNTIME_KEY",
		"AGENTTEST_MESSAGING_URL", "AGENTTEST_MESSAGING_HOST", "AGENTTEST_CONNECTOR_TOKEN"} {
		if env[k] == "" {
			t.Errorf("%s missing in %q", k, out)
		}
	}
	if env["AGENTTEST_BUILD_URL"] != env["AGENTTEST_RUNTIME_URL"] || env["AGENTTEST_BUILD_URL"] != env["AGENTTEST_MESSAGING_URL"] {
		t.Errorf("single host has two URLs: %q", out)
	}
	if env["AGENTTEST_BUILD_KEY"] != "sim-test-build-key" || env["AGENTTEST_RUNTIME_KEY"] != "sim-test-runtime-key" {
		t.Errorf("the keys swapped or not pinned: %q", out)
	}
	// The connector token is the agent's sandbox one, as the JSON line of
	// the same seed lists it.
	var info struct {
		Connectors map[string]map[string]string `json:"messaging_connectors"`
	}
	if line := startSim(t, "--seed", "3"); json.Unmarshal([]byte(line), &info) != nil || info.Connectors[env["AGENTTEST_AGENT_ID"]]["sandbox"] != env["AGENTTEST_CONNECTOR_TOKEN"] {
		t.Errorf("AGENTTEST_CONNECTOR_TOKEN is not the sandbox token of %s in %s", env["AGENTTEST_AGENT_ID"], line)
	}
}

func TestRunSimBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--keys", "onlyone"}, {"--drop", "2"}, {"--nope"}, {"extra"}, {"--keys", "sim-test-same-key,sim-test-same-key"}, {"--brand", "Ac me"}, {"--unreachable", "call-me"}, {"--sms-rate", "-1"}, {"--webhook-attempts", "-2"}, {"--call-token", "sim-runtime-key-not-a-secret"}, {"--keys", "sim-test-build-key,sim-test-runtime-key", "--call-token", "sim-test-build-key"}, {"--keys", "bk,sim-test-runtime-key"}, {"--keys", "sim-test-build-key,rk"}, {"--call-token", "ct"}, {"--socket-drop", "1.5"}, {"--session-expiry", "-1s"}} {
		st := &State{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Env: map[string]string{}}
		err := runSim(context.Background(), st, args)
		if err == nil {
			t.Errorf("%q accepted", args)
			continue
		}
		if ec, ok := err.(interface{ ExitCode() int }); !ok || ec.ExitCode() != exitUsage {
			t.Errorf("%q: %v is not a usage error", args, err)
		}
	}
	// A fraction or rate that is not a finite number is refused with the
	// value, not served: NaN compares false with every bound, so a NaN
	// --drop injected nothing and a NaN --rate refused every request.
	for _, tc := range []struct{ flag, value, want string }{
		{"--drop", "NaN", "fault drop: fraction NaN is outside 0..1"},
		{"--error-500", "nan", "fault error-500: fraction NaN is outside 0..1"},
		{"--early-expiry", "-Inf", "fault early-expiry: fraction -Inf is outside 0..1"},
		{"--drop", "-0.5", "fault drop: fraction -0.5 is outside 0..1"},
		{"--rate", "NaN", "rate per key NaN: want a finite number, not negative (0 for unlimited)"},
		{"--rate", "-1", "rate per key -1: want a finite number, not negative (0 for unlimited)"},
		{"--rate", "Inf", "rate per key +Inf: want a finite number, not negative (0 for unlimited)"},
		{"--sms-rate", "NaN", "SMS rate NaN: want a finite number, not negative (0 for unlimited)"},
		{"--sms-rate", "+Inf", "SMS rate +Inf: want a finite number, not negative (0 for unlimited)"},
		{"--keys", "sim-test-build-key,", `--keys wants BUILD_KEY,RUNTIME_KEY, got "sim-test-build-key,"`},
		{"--keys", ",sim-test-runtime-key", `--keys wants BUILD_KEY,RUNTIME_KEY, got ",sim-test-runtime-key"`},
		// A cap given is checked as given, not raised to fit the seeds.
		{"--store-cap", "-1", "store cap must not be negative"},
		{"--store-cap=10 --seed-conversations=100", "", "seed conversations (100) exceed the store cap (10)"},
	} {
		// Cancelled: a simulator that started after all stops at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var stderr bytes.Buffer
		st := &State{Stdout: &bytes.Buffer{}, Stderr: &stderr, Env: map[string]string{}}
		args := append(strings.Fields(tc.flag), tc.value)
		if tc.value == "" {
			args = strings.Fields(tc.flag)
		}
		if code := exitCode(runSim(ctx, st, args), &stderr); code != exitUsage ||
			!strings.Contains(stderr.String(), "agenttest: sim: "+tc.want+"\n") {
			t.Errorf("%s %s: exit %d, want %d with %q:\n%s", tc.flag, tc.value, code, exitUsage, tc.want, stderr.String())
		}
	}
	// A key `agenttest run` would refuse is refused here, with its reason
	// and without the key.
	st := &State{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Env: map[string]string{}}
	err := runSim(context.Background(), st, []string{"--call-token", "tok-short"})
	if err == nil || !strings.Contains(err.Error(), "--call-token is 9 characters long; keys shorter than 12 characters are refused") || strings.Contains(err.Error(), "tok-short") {
		t.Errorf("short call token: %v", err)
	}
}

// The probe credential and the deployment controls reach a simulator
// process: the call token is printed for the client, and a publish through
// the admin endpoint changes the active sandbox deployment.
func TestRunSimCallTokenAndAdmin(t *testing.T) {
	t.Parallel()
	out := startSim(t, "--keys", "sim-test-build-key,sim-test-runtime-key", "--call-token", "sim-test-call-token", "--seed", "3")
	var info map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &info); err != nil || info["call_token"] != "sim-test-call-token" {
		t.Fatalf("call_token missing from %q (%v)", out, err)
	}
	build := info["build_url"].(string)
	get := func(method, path string) map[string]any {
		t.Helper()
		req, _ := http.NewRequest(method, build+path, strings.NewReader(`{}`))
		req.Header.Set("x-api-key", "sim-test-build-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %v", method, path, resp.StatusCode, err)
		}
		return m
	}
	before := get("GET", "/v1/agents/restaurant/deployments/active")
	published := get("POST", "/_sim/agents/restaurant/publish")
	after := get("GET", "/v1/agents/restaurant/deployments/active")
	if published["id"] == before["id"] || after["id"] != published["id"] {
		t.Errorf("publish did not change the sandbox deployment: before %v, published %v, after %v", before, published, after)
	}
	env := startSim(t, "--print-env", "--call-token", "sim-test-call-token")
	if !strings.Contains(env, "AGENTTEST_CALL_TOKEN=sim-test-call-token\n") || strings.Contains(env, "AGENTTEST_BRAND") {
		t.Errorf("--print-env lacks the call token, or names the reference's brand: %q", env)
	}
	if env := startSim(t, "--print-env", "--brand", "Acme"); !strings.Contains(env, "\nAGENTTEST_BRAND=Acme\n") {
		t.Errorf("--print-env lacks the brand: %q", env)
	}
}

// TestRunSimBusyPort: a port already in use is a usage error that says
// so, not an internal error.
func TestRunSimBusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stderr bytes.Buffer
	st := &State{Stdout: &bytes.Buffer{}, Stderr: &stderr, Env: map[string]string{}}
	code := exitCode(runSim(context.Background(), st, []string{"--listen", ln.Addr().String()}), &stderr)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr.String())
	}
	want := "agenttest: sim: cannot listen on " + ln.Addr().String() + ": the address is already in use"
	if got := stderr.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", got, want)
	}
}

// TestRunSimBadListenAddress: an address that does not parse is said as
// given, whichever host's flag gave it, where the build host's address
// was named for a bad --runtime-listen or --messaging-listen.
func TestRunSimBadListenAddress(t *testing.T) {
	t.Parallel()
	for _, flag := range []string{"--listen", "--runtime-listen", "--messaging-listen"} {
		t.Run(flag, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			st := &State{Stdout: &bytes.Buffer{}, Stderr: &stderr, Env: map[string]string{}}
			code := exitCode(runSim(context.Background(), st, []string{flag, "127.0.0.1:99999"}), &stderr)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr.String())
			}
			want := "agenttest: sim: cannot listen on 127.0.0.1:99999: "
			if got := stderr.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
				t.Errorf("stderr %q, want one line starting %q", got, want)
			}
		})
	}
}

// A broken agent definition given to --agents is reported as lint reports
// a suite: every problem at file:line:col with its source line and a
// caret, and exit 2.
func TestRunSimBadAgentsShowSourceLines(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"bad.yaml": "id: bad\nstart: A\nnodes:\n  A:\n    sya: hello\n  B: {goto: Nowhere}\n"})
	c := newCLI(t, dir, nil, "sim", "--agents", ".")
	if code := c.run(t); code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, c.stderr)
	}
	for _, want := range []string{
		"bad.yaml:5:5: unknown key \"sya\" in node A (did you mean \"say\"?)\n 5 |     sya: hello\n   |     ^\n",
		"bad.yaml:6:13: unknown node \"Nowhere\"\n 6 |   B: {goto: Nowhere}\n   |             ^\n",
		"2 errors\n",
	} {
		if !strings.Contains(c.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, c.stderr)
		}
	}
}

// TestRunSimAgents: --agents serves the definitions of its directory in
// place of the built-in agents, and a directory of none is refused.
func TestRunSimAgents(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"solo.yaml": "id: solo\nstart: A\nnodes:\n  A: {say: hello}\n"})
	var info struct {
		AgentIDs []string `json:"agent_ids"`
	}
	if out := startSim(t, "--agents", dir); json.Unmarshal([]byte(out), &info) != nil || len(info.AgentIDs) != 1 || info.AgentIDs[0] != "solo" {
		t.Errorf("sim --agents %s serves %q", dir, out)
	}
	// Cancelled: a simulator that started after all stops at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr bytes.Buffer
	st := &State{Stdout: &bytes.Buffer{}, Stderr: &stderr, Env: map[string]string{}, Dir: t.TempDir()}
	if code := exitCode(runSim(ctx, st, []string{"--agents", "."}), &stderr); code != exitUsage || stderr.String() != "agenttest: sim: no agent definitions (*.yaml) in .\n" {
		t.Errorf("sim --agents of no definitions: exit %d: %s", code, stderr.String())
	}
}
