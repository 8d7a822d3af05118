package main

// Secrets: keys planted through AGENTTEST_* variables and through
// ${env:...} references of an agenttest.yaml target must appear in no
// output of a run, whole or in part, even when the platform echoes them
// back in error bodies, HTML pages or replies.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

const (
	plantedBuildKey   = "PLANTbuild-6e1f0c9a7d3b42e5"
	plantedRuntimeKey = "PLANTruntime-b83d5a0f2c716e94"
)

// echoPlatform is a debug-chat server that does everything a careless
// proxy might: it puts the x-api-key it received into its answers. The
// agent id of the path picks the answer:
//
//	status500-N  500, text: N bytes of padding, then the key
//	json401      401, JSON error_message naming the key
//	html502      502, an HTML page with the key in its title and body
//	reply        200, a valid turn whose reply text holds the key
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
				"conversationId": conv, "response": "your key is " + key,
				"metadata":          map[string]any{"currentNode": key, "nodeTrace": []string{"Greeting"}, "state": map[string]any{"key": key}},
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
// the 4 KiB kept body).
const echoSuite = `suite: echo
scenarios:
  - {name: key at the start of a 500, agent: status500-0, turns: [{say: hi}]}
  - {name: key across the message cut, agent: status500-290, turns: [{say: hi}]}
  - {name: key across the kept body cut, agent: status500-4090, turns: [{say: hi}]}
  - {name: key in a 401, agent: json401, turns: [{say: hi}]}
  - {name: key in an HTML page, agent: html502, turns: [{say: hi}]}
  - name: key in the reply
    agent: reply
    turns:
      - say: hi
        expect: {response: hello, node: Greeting, state: {key: nothing}}
`

func TestSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: plantedBuildKey, RuntimeKey: plantedRuntimeKey})
	echo := echoPlatform(t)
	envTarget := func(url string) map[string]string {
		return map[string]string{
			"PATH": "/usr/bin:/bin", "AGENTTEST_BUILD_URL": url, "AGENTTEST_RUNTIME_URL": s.RuntimeURL,
			"AGENTTEST_ACCOUNT_ID": s.AccountID, "AGENTTEST_BUILD_KEY": plantedBuildKey, "AGENTTEST_RUNTIME_KEY": plantedRuntimeKey,
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
	echoDir := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "echo.yaml"), []byte(echoSuite), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []testCase{
		{
			// Confirmations read conversations with the runtime key and
			// probes place calls with it: both keys are in use.
			name: "shipped suites with the right keys, from ${env:...} in agenttest.yaml",
			env:  map[string]string{"PATH": "/usr/bin:/bin", "MY_BUILD": plantedBuildKey, "MY_RUNTIME": plantedRuntimeKey},
			dir: func(t *testing.T) string {
				dir := t.TempDir()
				for _, d := range []string{"suites", "examples/suites", "examples-failing"} {
					copyTree(t, filepath.Join(repoRoot, d), filepath.Join(dir, d))
				}
				cfg := "default_target: sim\ntargets:\n  sim:\n    build_url: " + s.BuildURL + "\n    runtime_url: " + s.RuntimeURL +
					"\n    account_id: " + s.AccountID + "\n    build_key: ${env:MY_BUILD}\n    runtime_key: ${env:MY_RUNTIME}\n" +
					"    probe_numbers: [\"+447700900001\", \"+447700900002\"]\n"
				if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(cfg), 0o644); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			args: []string{"suites", "examples/suites", "examples-failing"},
			code: exitFailed,
		},
		{name: "wrong key gives 401s", env: envTarget(s.BuildURL), dir: shipped, args: []string{"examples-failing"}, code: exitFailed},
		{name: "unreachable host", env: envTarget("http://127.0.0.1:1"), dir: shipped, args: []string{"examples-failing"}, code: exitFailed},
		{name: "platform echoes the key", env: envTarget(echo.URL), dir: echoDir, args: []string{"."}, code: exitFailed, echoes: true},
		{
			name: "keys from ${env:...} in agenttest.yaml, platform echoes them",
			env:  map[string]string{"PATH": "/usr/bin:/bin", "MY_BUILD": plantedBuildKey, "MY_RUNTIME": plantedRuntimeKey},
			dir: func(t *testing.T) string {
				dir := echoDir(t)
				cfg := "default_target: echo\ntargets:\n  echo:\n    build_url: " + echo.URL + "\n    runtime_url: " + s.RuntimeURL +
					"\n    account_id: " + s.AccountID + "\n    build_key: ${env:MY_BUILD}\n    runtime_key: ${env:MY_RUNTIME}\n"
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
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The platform client's own retries take seconds against
			// the failing hosts; the cases are independent.
			t.Parallel()
			out := t.TempDir()
			junitPath, jsonPath := filepath.Join(out, "junit.xml"), filepath.Join(out, "result.json")
			args := append(append([]string{"run", "-v", "--retries", "1"}, tc.args...), "--junit", junitPath, "--json", jsonPath)
			c := newCLI(t, tc.dir(t), tc.env, args...)
			if code := c.run(t); code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, c.stdout, c.stderr)
			}
			texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
			for _, p := range []string{junitPath, jsonPath} {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("report missing: %v", err)
				}
				texts[filepath.Base(p)] = string(b)
			}
			keys := []string{plantedBuildKey, plantedRuntimeKey}
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
			if tc.echoes && !strings.Contains(texts["result.json"]+texts["stdout"], redactedText) {
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
