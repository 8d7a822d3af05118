package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// agenttestLine finds an agenttest command in a CI step: at the start of
// a line or after a shell separator.
var agenttestLine = regexp.MustCompile(`(?m)(?:^|&&\s*)\s*(?:exec\s+)?(agenttest\s[^\n#]*)`)

// ciExample is a CI example of examples/ci, decoded.
type ciExample struct {
	file string // its base name
	doc  map[string]any
}

// ciExamples reads every CI example; each must be valid YAML.
func ciExamples(t *testing.T) []ciExample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples/ci/*.yml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("CI examples %v: %v", files, err)
	}
	var out []ciExample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, ciExample{filepath.Base(f), doc})
	}
	return out
}

// TestCIExamplesUseRealFlags: every agenttest command in examples/ci is
// valid YAML and names a command and flags that exist, so the examples
// cannot drift from the CLI unnoticed. The commands are parsed, not run
// (--help ends each after its flags were read).
func TestCIExamplesUseRealFlags(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, ex := range ciExamples(t) {
		f, doc := ex.file, ex.doc
		for _, s := range yamlStrings(doc) {
			for _, args := range ciCommands(ciVars.Replace(s)) {
				if args[0] == "version" {
					continue
				}
				seen[args[0]] = true
				c := newCLI(t, repoRoot, nil, append(args, "--help")...)
				if code := c.run(t); code != exitOK {
					t.Errorf("%s: agenttest %s: exit %d\n%s", f, strings.Join(args, " "), code, c.stderr)
				}
			}
		}
	}
	for _, cmd := range []string{"run", "lint", "gate", "compare", "merge", "history"} {
		if !seen[cmd] {
			t.Errorf("no CI example runs agenttest %s", cmd)
		}
	}
}

// ciCommands lists the agenttest commands of a CI step's text, each as its
// arguments after "agenttest".
func ciCommands(text string) [][]string {
	var out [][]string
	for _, m := range agenttestLine.FindAllStringSubmatch(text, -1) {
		args := shellFields(m[1])[1:]
		// A shell fallback, a redirection, the next command
		// (`; echo ...`) or a background job's `&` ends the command.
		if i := slices.IndexFunc(args, func(a string) bool { return a == "||" || a == ">" || a == ";" || a == "&" }); i >= 0 {
			args = args[:i]
		}
		if i := slices.IndexFunc(args, func(a string) bool { return strings.HasSuffix(a, ";") }); i >= 0 {
			args = append(args[:i:i], strings.TrimSuffix(args[i], ";"))
		}
		if len(args) > 0 {
			out = append(out, args)
		}
	}
	return out
}

// ciVars stands for the values CI fills in: a matrix entry of GitHub
// Actions, GitLab's parallel job numbers, a glob of report files.
var ciVars = strings.NewReplacer("${{ matrix.shard }}", "1", "$CI_NODE_INDEX", "1", "$CI_NODE_TOTAL", "4")

// TestCIExamplesShard: the sharded jobs give --shard a K/N that parses
// and merge the reports they upload.
func TestCIExamplesShard(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"shards-github-actions.yml", "shards-gitlab-ci.yml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci", f))
		if err != nil {
			t.Fatal(err)
		}
		text := ciVars.Replace(string(b))
		for _, want := range []string{"agenttest merge ", "--json reports/shard-1.json"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
		shards := regexp.MustCompile(`(?m)^[^#\n]*--shard (\S+)`).FindAllStringSubmatch(text, -1)
		if len(shards) == 0 {
			t.Errorf("%s runs no shard", f)
		}
		for _, m := range shards {
			if _, err := scenario.ParseShard(m[1]); err != nil {
				t.Errorf("%s: --shard %s: %v", f, m[1], err)
			}
		}
	}
}

// yamlStrings lists every string value of a decoded YAML document.
func yamlStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			out = append(out, yamlStrings(x)...)
		}
		return out
	case map[string]any:
		var out []string
		for _, x := range v {
			out = append(out, yamlStrings(x)...)
		}
		return out
	}
	return nil
}

// shellFields splits a shell command line into words the way the shell
// would for the simple commands of the CI examples: single and double
// quotes group and are removed (variables stay as written). Without it,
// --tags '@confirm || @smoke' ended the nightly command at its ||.
func shellFields(s string) []string {
	var (
		out   []string
		word  strings.Builder
		quote rune
		in    bool
	)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, word.String())
				word.Reset()
				in = false
			}
		default:
			word.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, word.String())
	}
	return out
}

// nightlyCommand is the agenttest run command of examples/ci/nightly-live.yml,
// as words.
func nightlyCommand(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci/nightly-live.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, s := range yamlStrings(doc) {
		for _, m := range agenttestLine.FindAllStringSubmatch(s, -1) {
			args := shellFields(m[1])[1:]
			if args[0] != "run" {
				continue
			}
			for i, a := range args {
				if a == "&" {
					return args[:i]
				}
				if before, ok := strings.CutSuffix(a, ";"); ok {
					return append(args[:i:i], before)
				}
			}
			return args
		}
	}
	t.Fatal("examples/ci/nightly-live.yml runs no agenttest run")
	return nil
}

// TestCIExampleNightlyRuns runs the nightly job's command as written, with
// examples/agenttest.yaml as its config and the job's secrets, against the
// simulator standing in for live. Over this repository's suites, which
// all pin env: sandbox, it is refused (exit 2) instead of passing on
// sandbox; over the same suites without their pins (what the job's
// comment asks for) every agent is tested in live, the statistical flags
// repeat the scenarios, the probes run once, and the run passes.
func TestCIExampleNightlyRuns(t *testing.T) {
	t.Parallel()
	args := nightlyCommand(t)
	s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true},
		Outbound: sim.OutboundOptions{Queued: 10 * time.Millisecond, Calling: 10 * time.Millisecond}})
	listen := platformtest.FreeAddr(t)
	for i, a := range args {
		// The receiver listens on a free port of its own: the tests run
		// side by side.
		args[i] = strings.ReplaceAll(a, "127.0.0.1:8787", listen)
	}
	config, err := os.ReadFile(filepath.Join(repoRoot, "examples/agenttest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"agenttest.yaml": string(config)}
	unpinned := map[string]string{"agenttest.yaml": string(config)}
	suites, err := filepath.Glob(filepath.Join(repoRoot, "suites/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range suites {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := "suites/" + filepath.Base(f)
		files[name] = string(b)
		// What a team that read the job's comment does: no env: pin, and
		// the environment the scenarios expect in the records is live.
		text := strings.ReplaceAll(string(b), "\nenv: sandbox\n", "\n")
		unpinned[name] = strings.ReplaceAll(text, "environment: sandbox", "environment: live")
	}
	info := s.Server.Info()
	// The simulator stands in for live: its URLs come with its own keys,
	// since live's keys go only to live's hosts.
	env := map[string]string{
		"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_RUNTIME_URL": s.RuntimeURL, "AGENTTEST_ACCOUNT_ID": s.AccountID,
		"AGENTTEST_BUILD_KEY": s.BuildKey, "AGENTTEST_RUNTIME_KEY": s.RuntimeKey,
		"AGENTTEST_AGENT_ID": "clinic",
		"LIVE_BUILD_KEY":     s.BuildKey, "LIVE_RUNTIME_KEY": s.RuntimeKey,
		"LIVE_SMS_CONNECTOR_ID": info.ConnectorIDs["clinic"]["live"],
		"WEBHOOK_PUBLIC_URL":    "http://" + listen,
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "$WEBHOOK_PUBLIC_URL", env["WEBHOOK_PUBLIC_URL"])
	}

	pinned := newCLI(t, writeTree(t, files), env, args...)
	pinned.expect(t, exitUsage, `suites/clinic.yaml:15:5: 5 selected scenarios of this file run in sandbox, not in live, the environment of target "live"`,
		"no selected scenario runs in live")

	dir := writeTree(t, unpinned)
	c := newCLI(t, dir, env, args...)
	c.expect(t, exitOK, "agenttest: note: --pass-rate, --confidence not applied to 2 scenarios with a probe", "status: passed")
	data, err := os.ReadFile(filepath.Join(dir, "reports/nightly.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Deployments []struct{ Agent, Env string }
		Files       []struct {
			Cases []struct {
				Name   string
				Repeat *struct{ Runs int }
			}
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Deployments) != 3 {
		t.Errorf("deployments %+v, want the three agents", doc.Deployments)
	}
	for _, d := range doc.Deployments {
		if d.Env != "live" {
			t.Errorf("%s tested in %s, want live", d.Agent, d.Env)
		}
	}
	statistical := 0
	for _, f := range doc.Files {
		for _, c := range f.Cases {
			if c.Repeat != nil && c.Repeat.Runs >= 26 {
				statistical++
			}
		}
	}
	if statistical < 10 {
		t.Errorf("%d statistical scenarios, want every selected one but the 2 probes", statistical)
	}
}

// TestNightlyAlertRoutes runs the alert step of examples/ci/nightly-live.yml
// with bash and curl, its two webhooks in-process servers: an agent that
// broke an expectation (exit 1) goes to the agent's owners, the platform's
// nights and the job's own problems (4, 2, 5, 130) to the platform's and
// the job's owner, or to the agent's owners when that secret is not set.
// The step used to post every code to one webhook, while its comment and
// docs/reliability.md said that the exit code says who to wake.
func TestNightlyAlertRoutes(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "examples/ci/nightly-live.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string
				Env  map[string]string
				Run  string
			}
		}
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var script string
	var env map[string]string
	for _, s := range doc.Jobs["live"].Steps {
		if s.Name == "Alert" {
			script, env = s.Run, s.Env
		}
	}
	if script == "" {
		t.Fatal("examples/ci/nightly-live.yml: no step named Alert")
	}
	if env["PLATFORM_ALERT_WEBHOOK_URL"] != "${{ secrets.NIGHTLY_PLATFORM_ALERT_WEBHOOK_URL }}" {
		t.Errorf("the Alert step's env: PLATFORM_ALERT_WEBHOOK_URL = %q", env["PLATFORM_ALERT_WEBHOOK_URL"])
	}
	type hook struct {
		srv *httptest.Server
		mu  sync.Mutex
		got []string
	}
	// posts are the alerts a webhook received; curl has exited, but the
	// race detector cannot see that the handler ran before it did.
	posts := func(h *hook) []string {
		h.mu.Lock()
		defer h.mu.Unlock()
		return slices.Clone(h.got)
	}
	newHook := func() *hook {
		h := &hook{}
		h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			h.mu.Lock()
			h.got = append(h.got, string(body))
			h.mu.Unlock()
		}))
		t.Cleanup(h.srv.Close)
		return h
	}
	for _, tc := range []struct {
		code      string
		platform  bool // NIGHTLY_PLATFORM_ALERT_WEBHOOK_URL set
		toAgent   bool
		wantWords string
	}{
		{"1", true, true, "the agent broke an expectation"},
		{"4", true, false, "the platform or the network kept it from one"},
		{"2", true, false, "the job is misconfigured"},
		{"5", true, false, "nothing was tested"},
		{"130", true, false, "the run was interrupted"},
		{"4", false, true, "the platform or the network kept it from one"},
	} {
		agent, platform := newHook(), newHook()
		cmd := exec.CommandContext(t.Context(), bash, "-e", "-c", script)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CODE=" + tc.code, "ALERT_WEBHOOK_URL=" + agent.srv.URL,
			"GITHUB_SERVER_URL=https://github.com", "GITHUB_REPOSITORY=acme/agents", "GITHUB_RUN_ID=42"}
		if tc.platform {
			cmd.Env = append(cmd.Env, "PLATFORM_ALERT_WEBHOOK_URL="+platform.srv.URL)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("exit %s: the Alert step: %v\n%s", tc.code, err, out)
		}
		toAgent, toPlatform := posts(agent), posts(platform)
		want, other, whose := toPlatform, toAgent, "platform"
		if tc.toAgent {
			want, other, whose = toAgent, toPlatform, "agent"
		}
		if len(want) != 1 || !strings.Contains(want[0], tc.wantWords) || len(other) != 0 {
			t.Errorf("exit %s (platform webhook set: %v): to the agent's webhook %q, to the platform's %q; want one alert saying %q to the %s's",
				tc.code, tc.platform, toAgent, toPlatform, tc.wantWords, whose)
		}
	}
}
