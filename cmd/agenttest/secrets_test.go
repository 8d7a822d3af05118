package main

// Secrets: keys planted through AGENTTEST_* variables and through
// ${env:...} references of an agenttest.yaml target must appear in no
// output of a run, whole or in part, even when the platform echoes them
// back in error bodies, HTML pages or replies.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"html"
	htmltemplate "html/template"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

const (
	plantedBuildKey   = "PLANTbuild-6e1f0c9a7d3b42e5"
	plantedRuntimeKey = "PLANTruntime-b83d5a0f2c716e94"
	// plantedWebhookSecret is the signing secret of an endpoint already
	// registered (AGENTTEST_WEBHOOK_SECRET): the platform knows it, since
	// it signs with it, and echoes it like a key.
	plantedWebhookSecret = "PLANTwhsec-3c9e71d0a5b24f86"
)

// plantedConnectors are Messaging connector tokens of the example agents
// in sandbox, planted like the keys.
var plantedConnectors = map[string]string{
	"restaurant":      "PLANTconn-restaurant-5a1c9e0d",
	"utility-billing": "PLANTconn-billing-0b7e3f21",
	"clinic":          "PLANTconn-clinic-c4d28a96",
}

// plantedMessaging serves the planted connectors on the simulator.
func plantedMessaging() sim.MessagingOptions {
	var o sim.MessagingOptions
	for agent, tok := range plantedConnectors {
		o.Connectors = append(o.Connectors, sim.MessagingConnector{Token: tok, Host: sim.DefaultMessagingHost, AgentID: agent, Env: "sandbox"})
	}
	return o
}

// echoPlatform is a debug-chat server that does everything a careless
// proxy might: it puts the x-api-key it received into its answers, and
// the workspace's other secrets it knows (the webhook signing secret, the
// restaurant's Messaging connector token) into its replies. The agent id
// of the path picks the answer:
//
//	status500-N  500, text: N bytes of padding, then the key
//	json401      401, JSON error_message naming the key
//	html502      502, an HTML page with the key in its title and body
//	reply        200, a valid turn whose reply text, node and state hold
//	             the key and the other secrets
func echoPlatform(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key")
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(parts) < 4 || parts[1] != "agents" {
			http.NotFound(w, r)
			return
		}
		agent := parts[2]
		switch {
		case strings.HasPrefix(agent, "status500-"):
			n, _ := strconv.Atoi(strings.TrimPrefix(agent, "status500-"))
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s%s rejected", strings.Repeat("x", n), key)
		case agent == "json401":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]any{"error_message": "invalid key " + key, "key": key})
		case agent == "html502":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "<html><head><title>Bad gateway for %s</title></head><body>upstream refused %s</body></html>", key, key)
		case agent == "reply":
			conv := "conv-echo"
			if len(parts) > 4 {
				conv = parts[4]
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"conversationId": conv, "userInput": "", "response": "your key is " + key + ", your signing secret " + plantedWebhookSecret,
				"metadata": map[string]any{"currentNode": key, "nodeTrace": []string{"Greeting"},
					"state": map[string]any{"key": key, "connector": plantedConnectors["restaurant"], "signing": plantedWebhookSecret}},
				"conversationEnded": false, "delayedResponse": false,
			})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// echoSuite has one scenario per echo behaviour; the padding lengths put
// the key across the cuts the client makes (the 300-character message,
// the 4 KiB kept body). A 401 stops a run (the platform refused the key:
// exit 2), so it is a suite of its own, echo401Suite, whose stop message
// is checked too.
const echoSuite = `suite: echo
scenarios:
  - {name: key at the start of a 500, agent: status500-0, turns: [{say: hi}]}
  - {name: key across the message cut, agent: status500-290, turns: [{say: hi}]}
  - {name: key across the kept body cut, agent: status500-4090, turns: [{say: hi}]}
  - {name: key in an HTML page, agent: html502, turns: [{say: hi}]}
  - name: key in the reply
    agent: reply
    turns:
      - say: hi
        expect: {response: hello, node: Greeting, state: {key: nothing}}
`

const echo401Suite = `suite: echo 401
scenarios:
  - {name: key in a 401, agent: json401, turns: [{say: hi}]}
`

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	// Calls connect in tens of milliseconds, as in the fault drills
	// (drillCallFlags): the probes' calls are here for the keys they use,
	// not for the platform's call timings (by default 3 s or more, each
	// polled for).
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: plantedBuildKey, RuntimeKey: plantedRuntimeKey, Messaging: plantedMessaging(),
		TickInterval: 10 * time.Millisecond, Outbound: sim.OutboundOptions{Queued: 20 * time.Millisecond, Calling: 30 * time.Millisecond},
		Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	echo := echoPlatform(t)
	envTarget := func(url string) map[string]string {
		return map[string]string{
			"PATH": "/usr/bin:/bin", "AGENTTEST_BUILD_URL": url, "AGENTTEST_RUNTIME_URL": s.RuntimeURL,
			"AGENTTEST_ACCOUNT_ID": s.AccountID, "AGENTTEST_BUILD_KEY": plantedBuildKey, "AGENTTEST_RUNTIME_KEY": plantedRuntimeKey,
			// examples-failing talks to the restaurant over web chat too.
			"AGENTTEST_MESSAGING_URL": s.MessagingURL, "AGENTTEST_MESSAGING_HOST": s.Info.MessagingHost,
			"AGENTTEST_AGENT_ID": "restaurant", "AGENTTEST_CONNECTOR_TOKEN": plantedConnectors["restaurant"],
			"AGENTTEST_WEBHOOK_SECRET": plantedWebhookSecret,
		}
	}
	type testCase struct {
		name string
		env  map[string]string
		// dir prepares the working directory; args are the paths to run.
		dir  func(t *testing.T) string
		args []string
		code int
		// echoes: the platform sends the keys back, so the outputs must
		// show [REDACTED] where they were.
		echoes bool
	}
	shipped := func(*testing.T) string { return repoRoot }
	suiteDir := func(src string) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "echo.yaml"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	echoDir := suiteDir(echoSuite)
	cases := []testCase{
		{
			// Confirmations read conversations with the runtime key and
			// probes place calls with it: both keys are in use.
			name: "shipped suites with the right keys, from ${env:...} in agenttest.yaml",
			env: map[string]string{"PATH": "/usr/bin:/bin", "MY_BUILD": plantedBuildKey, "MY_RUNTIME": plantedRuntimeKey,
				"C_RESTAURANT": plantedConnectors["restaurant"], "C_BILLING": plantedConnectors["utility-billing"], "C_CLINIC": plantedConnectors["clinic"]},
			dir: func(t *testing.T) string {
				dir := t.TempDir()
				for _, d := range []string{"suites", "examples/suites", "examples-failing"} {
					copyTree(t, filepath.Join(repoRoot, d), filepath.Join(dir, d))
				}
				cfg := "default_target: sim\ntargets:\n  sim:\n    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL +
					"\n    account_id: " + s.AccountID + "\n    build_key: ${env:MY_BUILD}\n    runtime_key: ${env:MY_RUNTIME}\n" +
					"    probe_numbers: [\"+447700900001\", \"+447700900002\"]\n" +
					"    sms_connector_id: " + s.Info.ConnectorIDs["clinic"]["sandbox"] + "\n" +
					// The shipped suites confirm webhooks: a run without a
					// receiver is refused before it starts.
					"    webhook_listen: 127.0.0.1:0\n" +
					"    messaging_url: " + s.MessagingURL + "\n    messaging_host: " + s.Info.MessagingHost + "\n" +
					"    connectors:\n      restaurant: ${env:C_RESTAURANT}\n      utility-billing: ${env:C_BILLING}\n      clinic: ${env:C_CLINIC}\n"
				if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			args: []string{"suites", "examples/suites", "examples-failing"},
			code: exitFailed,
		},
		{name: "wrong key gives 401s", env: envTarget(s.BuildURL), dir: shipped, args: []string{"examples-failing"}, code: exitUsage},
		{name: "unreachable host", env: envTarget("http://127.0.0.1:1"), dir: shipped, args: []string{"examples-failing"}, code: exitErrored},
		{name: "platform echoes the key", env: envTarget(echo.URL), dir: echoDir, args: []string{"."}, code: exitFailed, echoes: true},
		{name: "platform echoes the key in a 401", env: envTarget(echo.URL), dir: suiteDir(echo401Suite), args: []string{"."}, code: exitUsage, echoes: true},
		{
			name: "keys from ${env:...} in agenttest.yaml, platform echoes them",
			env: map[string]string{"PATH": "/usr/bin:/bin", "MY_BUILD": plantedBuildKey, "MY_RUNTIME": plantedRuntimeKey,
				"MY_CONN": plantedConnectors["restaurant"], "AGENTTEST_WEBHOOK_SECRET": plantedWebhookSecret},
			dir: func(t *testing.T) string {
				dir := echoDir(t)
				cfg := "default_target: echo\ntargets:\n  echo:\n    build_url: " + echo.URL + "\n    runtime_url: " + s.RuntimeURL +
					"\n    account_id: " + s.AccountID + "\n    build_key: ${env:MY_BUILD}\n    runtime_key: ${env:MY_RUNTIME}\n" +
					"    messaging_url: " + s.MessagingURL + "\n    messaging_host: " + s.Info.MessagingHost + "\n" +
					"    connectors:\n      restaurant: ${env:MY_CONN}\n"
				if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			args:   []string{"."},
			code:   exitFailed,
			echoes: true,
		},
	}
	cases[1].env = envTarget(s.BuildURL)
	cases[1].env["AGENTTEST_BUILD_KEY"] = plantedBuildKey + "-wrong"
	// Every host of the unreachable target points nowhere: with a working
	// messaging host, its scenario could fail (exit 1) before the stop.
	cases[2].env["AGENTTEST_MESSAGING_URL"] = "http://127.0.0.1:1"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The platform client's own retries take seconds against
			// the failing hosts; the cases are independent.
			t.Parallel()
			out := t.TempDir()
			junitPath, jsonPath, htmlPath := filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json"), filepath.Join(out, "report.html")
			cucumberPath, summaryPath := filepath.Join(out, "cucumber.ndjson"), filepath.Join(out, "summary.md")
			args := append(append([]string{"run", "-v", "--retries", "1"}, tc.args...), "--junit", junitPath, "--json", jsonPath, "--html", htmlPath,
				"--cucumber", cucumberPath)
			// GitHub Actions: annotations on stdout, the step summary.
			env := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summaryPath}
			maps.Copy(env, tc.env)
			c := newCLI(t, tc.dir(t), env, args...)
			if code := c.run(t); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
			}
			texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
			for _, p := range []string{junitPath, jsonPath, htmlPath, cucumberPath, summaryPath} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("report missing: %v", err)
				}
				texts[filepath.Base(p)] = string(b)
			}
			keys := []string{plantedBuildKey, plantedRuntimeKey, plantedWebhookSecret}
			for _, tok := range plantedConnectors {
				keys = append(keys, tok)
			}
			if k := tc.env["AGENTTEST_BUILD_KEY"]; k != "" && k != plantedBuildKey {
				keys = append(keys, k)
			}
			for name, text := range texts {
				for _, key := range keys {
					if piece := leakedPiece(text, key); piece != "" {
						i := strings.Index(text, piece)
						t.Errorf("%s shows %q of the key %q: ...%s...", name, piece, key, text[max(i-80, 0):min(i+len(piece)+40, len(text))])
					}
				}
			}
			for name, text := range texts {
				// The Messaging access token (a JWT) never shows: its
				// header is the same for every token of the simulator.
				if strings.Contains(text, "eyJhbGci") {
					t.Errorf("%s shows a JWT", name)
				}
			}
			if tc.echoes && !strings.Contains(texts["result.json"]+texts["stdout"], secret.Mask) {
				t.Errorf("no [REDACTED] anywhere: the echoes were not exercised")
			}
		})
	}
}

// leakedPiece returns the longest start or end of key, 8 bytes or more,
// found in text.
func leakedPiece(text, key string) string {
	for n := len(key); n >= 8; n-- {
		for _, piece := range []string{key[:n], key[len(key)-n:]} {
			if strings.Contains(text, piece) {
				return piece
			}
		}
	}
	return ""
}

// keyForms renders a key the ways a careless platform or proxy echoes it.
var keyForms = map[string]func(key string) string{
	"raw": func(k string) string { return k },
	"json": func(k string) string { // every character as \uXXXX
		var b strings.Builder
		for _, r := range k {
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04X\u%04x`, r1, r2)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	},
	"php": func(k string) string { // json_encode: \/ for /
		b, _ := json.Marshal(k)
		return strings.ReplaceAll(string(b[1:len(b)-1]), "/", `\/`)
	},
	"utf16": func(k string) string { // UTF-16LE bytes passed on as Latin-1, NULs JSON-escaped
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(k)) {
			for _, c := range []byte{byte(u), byte(u >> 8)} {
				if c == 0 {
					b.WriteString(`\u0000`)
				} else {
					b.WriteRune(rune(c))
				}
			}
		}
		return b.String()
	},
	"url":    url.QueryEscape,
	"base64": func(k string) string { return base64.StdEncoding.EncodeToString([]byte(k)) },
	"html": func(k string) string { // an HTML page of Go's html/template: + as &#43;
		var b strings.Builder
		htmltemplate.Must(htmltemplate.New("").Parse(`{{.}}`)).Execute(&b, k)
		return b.String()
	},
	"dotnet": func(k string) string { // WebUtility.HtmlEncode: past ASCII as &#N;
		var b strings.Builder
		for _, r := range html.EscapeString(k) {
			if r < utf8.RuneSelf {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, "&#%d;", r)
			}
		}
		return b.String()
	},
	"esapi": func(k string) string { // OWASP ESAPI encodeForHTML: / as &#x2f;
		var b strings.Builder
		for _, r := range k {
			if r < utf8.RuneSelf && !strings.ContainsRune(",.-_ ", r) &&
				!('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
				fmt.Fprintf(&b, "&#x%x;", r)
			} else {
				b.WriteRune(r)
			}
		}
		return b.String()
	},
	// A server that shouts its errors, a gateway that lowercases what it
	// logs: the key to whoever tries the cases of its letters.
	"upper": strings.ToUpper,
	"lower": strings.ToLower,
	"wrapped": func(k string) string { // a request dumped as base64 in lines, in JSON (\n escaped)
		dump := base64.StdEncoding.EncodeToString([]byte("x-api-key: " + k + "\r\n"))
		var b strings.Builder
		for i := 0; i < len(dump); i += 10 {
			b.WriteString(dump[i:min(i+10, len(dump))] + `\n`)
		}
		return b.String()
	},
}

// formsPlatform answers debug chat with the key it received, in the form
// the agent id names ("raw", "json", ...), in the reply text and the
// metadata; the agent id "all-401" gets a 401 whose body holds the key in
// every form.
func formsPlatform(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(parts) < 4 {
			http.NotFound(w, r)
			return
		}
		key := r.Header.Get("x-api-key")
		w.Header().Set("Content-Type", "application/json")
		if parts[2] == "all-401" {
			var echoes []string
			for _, form := range keyForms {
				echoes = append(echoes, form(key))
			}
			all := strings.Join(echoes, " ")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error_message":"invalid key %s","key":"%s"}`, all, all)
			return
		}
		if parts[2] == "twice" {
			// The key as a key of the state, sent twice with different
			// values: the platform's error names the member.
			fmt.Fprintf(w, `{"conversationId":"conv-1","userInput":"","response":"hi","metadata":{"currentNode":"Greeting","state":{%q:1,%q:2}},"conversationEnded":false,"delayedResponse":false}`,
				key, key)
			return
		}
		echo := keyForms[parts[2]](key)
		fmt.Fprintf(w, `{"conversationId":"conv-1","userInput":"","response":"your key is %s","metadata":{"currentNode":"%s","nodeTrace":["Greeting"],"state":{"k":"%s","%s":1}},"conversationEnded":false,"delayedResponse":false}`,
			echo, echo, echo, echo)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Keys of several shapes, echoed by the platform in every form, reach no
// output: not the console, not the JUnit or JSON report, also once the
// reports are parsed and every string in them is decoded (JSON, URL,
// base64, regex quoting). A key copied into another variable and used in
// a matches: is masked too, regex-quoted as the failure shows it.
func TestSecretsInEveryForm(t *testing.T) {
	t.Parallel()
	keys := []string{"eyJhbGci.PLANTED+key/0123", "k&<ey>-PLANTED-0123", "clé-PLANTED-ünï-😀-ß"}
	// A 401 stops a run (exit 2), so the 401, whose body echoes the key
	// in every form at once, is a run of its own after the run of the
	// replies.
	var replies strings.Builder
	replies.WriteString("suite: forms\nscenarios:\n")
	for form := range keyForms {
		fmt.Fprintf(&replies, "  - {name: %s, agent: %s, turns: [{say: hi}], greeting: {response: nothing}}\n", form, form)
	}
	replies.WriteString("  - {name: copied, agent: raw, greeting: {response: {matches: \"${env:COPY}\"}}, turns: [{say: hi}]}\n")
	suites := map[string]string{
		"forms-401.yaml": "suite: forms 401\nscenarios:\n  - {name: every form in a 401, agent: all-401, turns: [{say: hi}]}\n",
		"twice.yaml":     "suite: twice\nscenarios:\n  - {name: the key sent twice in the state, agent: twice, turns: [{say: hi}]}\n",
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			srv := formsPlatform(t)
			dir := t.TempDir()
			suites := maps.Clone(suites)
			suites["forms.yaml"] = replies.String() + similarScenarios(key)
			for name, src := range suites {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_BUILD_KEY": key, "COPY": key}
			// Every form of the key, rendered once, and each echo as the
			// platform sent it: the checks below look for them in
			// thousands of strings.
			forms := secret.Forms(key)
			for _, form := range keyForms {
				forms = append(forms, form(key))
			}
			masked := 0
			for name := range suites {
				want := exitUsage
				switch name {
				case "forms.yaml":
					want = exitFailed
				case "twice.yaml":
					want = exitErrored
				}
				c := newCLI(t, dir, env, "run", "-v", name, "--junit", "junit.xml", "--json", "result.json", "--html", "report.html",
					"--cucumber", "cucumber.ndjson", "--github")
				if code := c.run(t); code != want {
					t.Fatalf("%s: exit %d, want %d\n%s%s", name, code, want, c.stdout, c.stderr)
				}
				texts := reportTexts(t, c, dir)
				noKeyForm(t, name, texts, forms)
				if name == "forms.yaml" && (!strings.Contains(texts["stdout"], "near threshold: similar") || !strings.Contains(texts["stdout"], "::notice ") ||
					!strings.Contains(texts["result.json"], "your key is "+secret.Mask) || !strings.Contains(texts["junit.xml"], "your key is "+secret.Mask)) {
					t.Errorf("the similar checks' texts and near note are not shown, masked: they test nothing\n%s", texts["stdout"])
				}
				if name == "twice.yaml" && !strings.Contains(texts["stdout"], `field "metadata.state.`+secret.Mask+`" is sent twice, with different values`) {
					t.Errorf("the error of a state key sent twice is not shown, masked: it tests nothing\n%s", texts["stdout"])
				}
				if strings.Contains(texts["result.json"], secret.Mask) && strings.Contains(texts["junit.xml"], secret.Mask) {
					masked++
				}
			}
			if masked != len(suites) {
				t.Errorf("%d of %d runs show %s in both reports: the echoes were not exercised", masked, len(suites), secret.Mask)
			}
			// On a terminal, with and without -v: the live lines and
			// colours, the near note without -v.
			for _, args := range [][]string{{"run", "forms.yaml"}, {"run", "-v", "forms.yaml"}} {
				c := newCLI(t, dir, env, args...)
				c.st.StdoutTTY = true
				if code := c.run(t); code != exitFailed {
					t.Fatalf("%v on a terminal: exit %d, want %d\n%s%s", args, code, exitFailed, c.stdout, c.stderr)
				}
				if f := keyIn(c.stdout.String()+c.stderr.String(), forms); f != "" {
					t.Errorf("%v on a terminal shows the key as %q", args, f)
				}
				if !strings.Contains(c.stdout.String(), "near threshold: similar") {
					t.Errorf("%v on a terminal: no near note\n%s", args, c.stdout)
				}
			}
		})
	}
}

// similarScenarios are scenarios of formsPlatform's raw agent whose
// similar checks compare its reply with a text holding key (a copy of
// it in COPY): a matcher's text is shown under its turn (-v, HTML,
// JUnit), in the JSON report's scores and a repeated case's spread, and
// a pass near its threshold is noted on its case line and in a GitHub
// notice. The near one's threshold sits just under the score of the
// reply the client masked.
func similarScenarios(key string) string {
	to := "your key is " + key
	near := assert.Similarity("your key is "+secret.Mask, to) - 0.01
	return "  - {name: similar, agent: raw, repeat: 2, turns: [{say: hi, expect: {response: {similar: {to: \"your key is ${env:COPY}\", min: 0.01}}}}]}\n" +
		fmt.Sprintf("  - {name: similar near, agent: raw, turns: [{say: hi, expect: {response: {similar: {to: \"your key is ${env:COPY}\", min: %.4f}}}}]}\n", near)
}

// reportTexts are the outputs of c, a run that wrote junit.xml,
// result.json, report.html and cucumber.ndjson in dir, by name: its
// stdout and stderr, and those reports.
func reportTexts(t *testing.T, c *cli, dir string) map[string]string {
	t.Helper()
	texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
	for _, report := range []string{"junit.xml", "result.json", "report.html", "cucumber.ndjson"} {
		b, err := os.ReadFile(filepath.Join(dir, report))
		if err != nil {
			t.Fatal(err)
		}
		texts[report] = string(b)
	}
	return texts
}

// noKeyForm fails t when a text of a run (name) holds a form of a key
// (forms: secret.Forms of it): the texts as they are, keyed by the
// output's name, and every string of the JSON, HTML and JUnit reports
// among them decoded every way a reader might.
func noKeyForm(t *testing.T, name string, texts map[string]string, forms []string) {
	t.Helper()
	for text, body := range texts {
		if f := keyIn(body, forms); f != "" {
			t.Errorf("%s: %s holds the key as %q", name, text, f)
		}
	}
	// Each string once: a report repeats its member names, statuses
	// and replies case after case.
	for _, s := range distinct(jsonStrings(t, texts["result.json"])) {
		if f := keyInDecoded(s, forms); f != "" {
			t.Errorf("%s: result.json: the string %q decodes to the key (%s)", name, s, f)
		}
	}
	for _, s := range distinct(jsonStrings(t, htmlData(t, texts["report.html"]))) {
		if f := keyInDecoded(s, forms); f != "" {
			t.Errorf("%s: report.html: the string %q decodes to the key (%s)", name, s, f)
		}
	}
	for _, s := range distinct(xmlStrings(t, texts["junit.xml"])) {
		if f := keyInDecoded(s, forms); f != "" {
			t.Errorf("%s: junit.xml: the text %q decodes to the key (%s)", name, s, f)
		}
	}
}

// htmlData is the JSON document of the cases an HTML report embeds.
func htmlData(t *testing.T, page string) string {
	t.Helper()
	const open = `<script type="application/json" id="agenttest-data">`
	i := strings.Index(page, open)
	j := strings.Index(page[max(i, 0):], "</script>")
	if i < 0 || j < 0 {
		t.Fatalf("no data block in the HTML report")
	}
	return page[i+len(open) : i+j]
}

// keyIn returns the form of a key (forms: secret.Forms of it) that text
// holds, or "".
func keyIn(text string, forms []string) string {
	for _, f := range forms {
		if strings.Contains(text, f) {
			return f
		}
	}
	return ""
}

// regexEscape is a backslash escape, as regex quoting writes it, and
// base64Run a run of characters that may be base64 of either alphabet.
var (
	regexEscape = regexp.MustCompile(`\\(.)`)
	base64Run   = regexp.MustCompile(`[A-Za-z0-9+/_=-]{16,}`)
)

// keyInDecoded decodes s every way a reader might and says which decoding
// shows the key (forms: secret.Forms of it).
func keyInDecoded(s string, forms []string) string {
	decoded := map[string]string{"as is": s}
	if u, err := url.QueryUnescape(s); err == nil {
		decoded["URL-decoded"] = u
	}
	var j string
	if json.Unmarshal([]byte(`"`+s+`"`), &j) == nil {
		decoded["JSON-decoded"] = j
	}
	decoded["regex-unquoted"] = regexEscape.ReplaceAllString(s, "$1")
	runs := base64Run.FindAllString(s, -1)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, run := range runs {
			if b, err := enc.DecodeString(run); err == nil {
				decoded["base64-decoded"] += string(b)
			}
		}
	}
	for how, d := range decoded {
		if how != "as is" && d == s {
			continue // the same text: looked at as it is
		}
		if f := keyIn(d, forms); f != "" {
			return how + ": " + f
		}
	}
	return ""
}

// distinct returns the strings of ss, sorted, each once (ss is sorted in
// place).
func distinct(ss []string) []string {
	slices.Sort(ss)
	return slices.Compact(ss)
}

// jsonStrings parses a JSON document and returns every string in it,
// member names included.
func jsonStrings(t *testing.T, doc string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("the JSON report does not parse: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case map[string]any:
			for k, x := range v {
				out = append(out, k)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// xmlStrings parses an XML document and returns its character data and
// attribute values.
func xmlStrings(t *testing.T, doc string) []string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var out []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the JUnit report does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			out = append(out, string(tok))
		case xml.StartElement:
			for _, a := range tok.Attr {
				out = append(out, a.Value)
			}
		}
	}
}

// A key equal to a word of our own report structure masks the platform's
// text but leaves the reports' structure as it is; a key shorter than 12
// characters is refused before anything runs.
func TestKeyLikeOurStructure(t *testing.T) {
	t.Parallel()
	const key = "conversation_id" // a member of every attempt in the JSON report
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key, RuntimeKey: "sim-runtime-key-0123"})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"restaurant.yaml", "clinic.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples/suites", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "suites", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": key}
	// The web-chat scenarios need connectors this target does not give.
	c := newCLI(t, dir, env, "run", "suites", "--tags", "~@webchat", "--junit", "junit.xml", "--json", "result.json")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	var r struct {
		Files []struct {
			Cases []struct {
				Attempts []map[string]json.RawMessage `json:"attempts"`
			} `json:"cases"`
		} `json:"files"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Files) == 0 {
		t.Fatalf("the JSON report does not parse: %v", err)
	}
	for _, f := range r.Files {
		for _, cs := range f.Cases {
			for _, a := range cs.Attempts {
				if _, ok := a["conversation_id"]; !ok {
					t.Fatalf("an attempt lost its conversation_id member: %v", a)
				}
			}
		}
	}
	if !regexp.MustCompile(`"\[REDACTED\]":\s*"conv-`).Match(b) {
		t.Errorf("the simulator's state member of the same name was not masked")
	}
	x, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	xmlStrings(t, string(x))
	if !bytes.HasPrefix(x, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n<testsuites")) {
		t.Errorf("the JUnit report starts %q", x[:min(len(x), 80)])
	}

	short := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": "test"}, "run", "suites", "--tags", "~@webchat", "--junit", "short.xml")
	if code := short.run(t); code != exitUsage || !strings.Contains(short.stderr.String(), "keys shorter than 12 characters are refused") {
		t.Errorf("a 4-character key: exit %d\n%s", code, short.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "short.xml")); err == nil {
		t.Errorf("a report was written for a refused key")
	}
}

// A key written into a target's URL (its userinfo or its path), from
// agenttest.yaml or an AGENTTEST_* variable, is refused at the URL's
// position before anything runs. A run with nothing to call used to print
// the URL, key and all, on the console and in its reports; any run, in
// its reports.
func TestKeyInTargetURL(t *testing.T) {
	t.Parallel()
	const cfg = "default_target: prod\ntargets:\n  prod:\n    build_url: https://apikey:${env:MY_BUILD}@build.example.com\n" +
		"    build_key: ${env:MY_BUILD}\n    account_id: ws-abcd1234\n"
	for _, tc := range []struct {
		name string
		cfg  string
		env  map[string]string
		want string
	}{
		{"password, agenttest.yaml", cfg, map[string]string{"MY_BUILD": plantedBuildKey},
			`agenttest.yaml:4:16: target "prod": build_url "https://apikey:xxxxx@build.example.com": credentials in the URL are not allowed`},
		{"user, AGENTTEST_BUILD_URL", "", map[string]string{"AGENTTEST_BUILD_KEY": plantedBuildKey, "AGENTTEST_BUILD_URL": "https://" + plantedBuildKey + "@build.example.com"},
			`AGENTTEST_BUILD_URL: build_url "https://xxxxx@build.example.com": credentials in the URL are not allowed`},
		{"path, AGENTTEST_BUILD_URL", cfg, map[string]string{"MY_BUILD": plantedBuildKey, "AGENTTEST_BUILD_URL": "https://build.example.com/proxy/" + plantedBuildKey},
			`target "prod": AGENTTEST_BUILD_URL holds the build_key: a key is sent only in the headers of a call`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"echo.yaml": echoSuite}
			if tc.cfg != "" {
				files["agenttest.yaml"] = tc.cfg
			}
			for name, src := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"PATH": "/usr/bin:/bin"}
			maps.Copy(env, tc.env)
			c := newCLI(t, dir, env, "run", "--name", "no such scenario", "--allow-empty", "--json", "result.json", "--html", "report.html", ".")
			if code := c.run(t); code != exitUsage {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitUsage, c.stdout, c.stderr)
			}
			texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
			for _, name := range []string{"result.json", "report.html"} {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
					texts[name] = string(b)
				}
			}
			for name, text := range texts {
				if piece := leakedPiece(text, plantedBuildKey); piece != "" {
					t.Errorf("%s shows %q of the key", name, piece)
				}
			}
			if !strings.Contains(c.stderr.String(), tc.want) {
				t.Errorf("stderr does not say %q:\n%s", tc.want, c.stderr)
			}
		})
	}
}

// A key written literally into an agenttest.yaml that does not parse is
// in no command's output: lint reports the file once, as the config file,
// with the key's line masked, and a directory walk (list, lint) passes it
// over rather than echo it as a broken suite's line.
func TestBrokenConfigKeyNeverEchoed(t *testing.T) {
	t.Parallel()
	const cfg = "targets:\n  t:\n    build_url: https://build.example.com\n    build_key: " + plantedBuildKey + ": x\n"
	dir := t.TempDir()
	for name, src := range map[string]string{"agenttest.yaml": cfg, "echo.yaml": echoSuite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"lint"}, exitUsage},
		{[]string{"lint", "."}, exitUsage},
		{[]string{"lint", "agenttest.yaml"}, exitUsage},
		{[]string{"list", "-v"}, 0},
		{[]string{"run", "--target", "t", "."}, exitUsage},
	} {
		c := newCLI(t, dir, map[string]string{"PATH": "/usr/bin:/bin"}, tc.args...)
		code := c.run(t)
		out := c.stdout.String() + c.stderr.String()
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
		if piece := leakedPiece(out, plantedBuildKey); piece != "" {
			t.Errorf("%v shows %q of the key:\n%s", tc.args, piece, out)
		}
		if tc.code == exitUsage && strings.Count(out, "agenttest.yaml:4:") != 1 {
			t.Errorf("%v: the config's error is not reported once:\n%s", tc.args, out)
		}
	}
}

// A --webhook-url (webhooks listen --url) refused as not a URL is quoted
// with its credentials masked: those of its authority and the values of
// its query's credential parameters.
func TestWebhookURLCredentialsMasked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--webhook-url", "https://u:" + plantedBuildKey + "@hook.example.com/%zz", "."},
			`--webhook-url "https://xxxxx@hook.example.com/%zz" must be an absolute http(s) URL`},
		{[]string{"run", "--webhook-url", "https://hook.example.com/%zz?team=ops&token=" + plantedBuildKey, "."},
			`--webhook-url "https://hook.example.com/%zz?team=ops&token=xxxxx" must be an absolute http(s) URL`},
		{[]string{"webhooks", "listen", "--url", "https://hook.example.com/%zz?Access-Token=" + plantedBuildKey},
			`--url "https://hook.example.com/%zz?Access-Token=xxxxx" must be an absolute http(s) URL`},
	} {
		c := newCLI(t, t.TempDir(), map[string]string{"PATH": "/usr/bin:/bin"}, tc.args...)
		if code := c.run(t); code != exitUsage {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, c.stderr)
		}
		out := c.stdout.String() + c.stderr.String()
		if piece := leakedPiece(out, plantedBuildKey); piece != "" || !strings.Contains(out, tc.want) {
			t.Errorf("%v shows %q of the key:\n%s", tc.args, piece, out)
		}
	}
}

// A suite may not read the webhook signing secret, as it may not read a
// key: ${env:AGENTTEST_WEBHOOK_SECRET} in a say: sent the secret to the
// build host as the user's words, and printed it on the console and in
// every report.
func TestSuiteMayNotReadWebhookSecret(t *testing.T) {
	t.Parallel()
	const planted = "whsec_PLANTED_0123456789"
	dir := t.TempDir()
	const suite = "agent: clinic\nscenarios:\n  - name: a\n    turns:\n      - say: \"my code is ${env:AGENTTEST_WEBHOOK_SECRET}\"\n        expect: {ended: false}\n"
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_WEBHOOK_SECRET": planted}
	for _, args := range [][]string{{"lint"}, {"run", "--json", "r.json", "."}} {
		c := newCLI(t, dir, env, args...)
		code := c.run(t)
		out := c.stdout.String() + c.stderr.String()
		if b, err := os.ReadFile(filepath.Join(dir, "r.json")); err == nil {
			out += string(b)
		}
		if code != exitUsage || strings.Contains(out, "PLANTED") ||
			!strings.Contains(out, "s.yaml:5:26: ${env:AGENTTEST_WEBHOOK_SECRET} reads AGENTTEST_WEBHOOK_SECRET, which holds the webhook signing secret: a suite may not read a secret") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
}

// A query of the build URL (an api_key= the platform never asked for) is
// refused before anything runs, unshown: a run with nothing to call
// printed it in its headline and its reports.
func TestQueryOfTargetURLNeverShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.yaml"), []byte(echoSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_BUILD_KEY": plantedBuildKey, "AGENTTEST_ACCOUNT_ID": "ws-abcd1234",
		"AGENTTEST_BUILD_URL": "https://build.example.com/?api_key=sk-PLANTED-query-0123"}
	c := newCLI(t, dir, env, "run", "--name", "no such scenario", "--allow-empty", "--json", "result.json", "--html", "report.html", ".")
	code := c.run(t)
	var out strings.Builder
	out.WriteString(c.stdout.String() + c.stderr.String())
	for _, name := range []string{"result.json", "report.html"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			out.WriteString(string(b))
		}
	}
	if code != exitUsage || strings.Contains(out.String(), "PLANTED") ||
		!strings.Contains(out.String(), `AGENTTEST_BUILD_URL: build_url "https://build.example.com/": must not have a query or fragment`) {
		t.Errorf("exit %d\n%s", code, out.String())
	}
}

// Help prints a flag's default from the environment, but never a secret
// and never a URL's credentials: `agenttest run -h` in a job that sets
// AGENTTEST_WEBHOOK_SECRET printed the signing secret. A webhook secret
// too short to be masked is refused before anything runs, saying which
// variable set it.
func TestHelpAndRefusalsShowNoSecret(t *testing.T) {
	t.Parallel()
	// AGENTTEST_GATE_ALERTS=false sets a flag that is no secret to its
	// zero value: help says nothing of it.
	env := map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_WEBHOOK_SECRET": plantedWebhookSecret,
		"AGENTTEST_WEBHOOK_URL": "https://" + plantedBuildKey + "@hook.example.com/in", "AGENTTEST_GATE_ALERTS": "false"}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		code int
		want string
	}{
		{args: []string{"run", "-h"}, env: env, code: exitOK, want: "(env AGENTTEST_WEBHOOK_SECRET) (set, not shown)"},
		{args: []string{"webhooks", "listen", "-h"}, env: env, code: exitOK, want: "(default https://xxxxx@hook.example.com/in)"},
		{args: []string{"run", "-h"}, env: map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_WEBHOOK_URL": "https://hook.example.com/in?team=ops&token=" + plantedBuildKey},
			code: exitOK, want: "(default https://hook.example.com/in?team=ops&token=xxxxx)"},
		{args: []string{"webhooks", "listen", "--url", "https://u:" + plantedBuildKey + "@hook.example.com/%zz"}, env: env, code: exitUsage,
			want: `--url "https://xxxxx@hook.example.com/%zz" must be an absolute http(s) URL`},
		{args: []string{"run", "."}, env: map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_WEBHOOK_SECRET": "whsec_abc"}, code: exitUsage,
			want: "--webhook-secret is 9 characters long; keys shorter than 12 characters are refused"},
		{args: []string{"webhooks", "listen", "--secret", "whsec_abc"}, env: env, code: exitUsage,
			want: "--secret is 9 characters long; keys shorter than 12 characters are refused"},
	} {
		c := newCLI(t, t.TempDir(), tc.env, tc.args...)
		code := c.run(t)
		out := c.stdout.String() + c.stderr.String()
		if code != tc.code || strings.Count(out, tc.want) != 1 || tc.code == exitOK && strings.Count(out, "(set, not shown)") > 1 {
			t.Errorf("%v: exit %d, want %d and %q once (and no other flag \"(set, not shown)\"):\n%s", tc.args, code, tc.code, tc.want, out)
		}
		for _, key := range []string{plantedWebhookSecret, plantedBuildKey, "whsec_abc"} {
			if piece := leakedPiece(out, key); piece != "" {
				t.Errorf("%v: shows %q of %q:\n%s", tc.args, piece, key, out)
			}
		}
	}
}

// GODEBUG=http2debug=1, which a job sets to see why HTTP/2 calls to a
// platform behind a proxy fail, makes Go's HTTP/2 transport log every
// header it sends on the process's log, x-api-key included. The process
// routes that log through its command's redactor: the lines stay, the
// key is masked. Before, an agenttest process printed the build key on
// stderr once per call.
func TestGoDebugLogShowsNoKey(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	var h2 atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"conversationId":"c1","userInput":"","response":"hello","metadata":{},"conversationEnded":false,"delayedResponse":false}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	dir := writeTree(t, map[string]string{"s.yaml": "agent: a1\nscenarios:\n  - {name: a, turns: [{say: hi, expect: {response: hello}}]}\n",
		"cert.pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))})
	cmd := exec.Command(os.Args[0], "run", "--retries", "0", "s.yaml")
	cmd.Dir = dir
	cmd.Env = processEnv(t, t.TempDir(), "GODEBUG=http2debug=1", "SSL_CERT_FILE="+filepath.Join(dir, "cert.pem"),
		"AGENTTEST_BUILD_URL="+srv.URL, "AGENTTEST_BUILD_KEY="+key)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil || h2.Load() == 0 || !strings.Contains(out, `http2: Transport encoding header "x-api-key" = "`+secret.Mask+`"`) {
		t.Fatalf("err %v, %d calls over HTTP/2, want a passing run over HTTP/2 whose debug log masks the key:\n%s", err, h2.Load(), out)
	}
	if f := keyIn(out, secret.Forms(key)); f != "" {
		t.Errorf("the output holds the key as %q:\n%s", f, out)
	}
}

// The process's log masks the keys of every redactor a command built:
// compare builds one per side, each with its side's keys, and both sides'
// calls log their headers. Before, the second replaced the first, and
// the first side's key showed.
func TestProcessLogMasksEverySide(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	l := &processLog{w: &out}
	for _, key := range []string{plantedBuildKey, plantedRuntimeKey} {
		r, err := secret.New(key)
		if err != nil {
			t.Fatal(err)
		}
		l.mask(r)
	}
	fmt.Fprintf(l, "x-api-key = %q, x-api-key = %q\n", plantedBuildKey, plantedRuntimeKey)
	if want := fmt.Sprintf("x-api-key = %q, x-api-key = %q\n", secret.Mask, secret.Mask); out.String() != want {
		t.Errorf("the log wrote %q, want %q", out.String(), want)
	}
}
