package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/actionstest"
)

// workflowPlatform is a debug-chat server whose every text is a workflow
// command of GitHub Actions: the reply (one command a line, indented as
// the console indents them, and in the older ##[ syntax), the node, the
// trace, a state key, the conversation id and the active deployment's
// id. Agent "down" answers 500 with commands in its body.
func workflowPlatform(t *testing.T) *httptest.Server {
	const reply = "Table booked.\n::stop-commands::pwned\n  ::error file=app.go,line=1::forged by the agent\n" +
		"::add-mask::booked\nsee ##[warning]old syntax\n::pwned::"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(parts) < 4 || parts[1] != "agents" {
			http.NotFound(w, r)
			return
		}
		if len(parts) >= 5 && parts[3] == "deployments" && parts[2] != "down" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id": "dep-1 ##[error]forged by the deployment", "version": "1"}`)
			return
		}
		if parts[2] == "down" {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "oops\n::error::forged by the body ##[error]again")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"conversationId": "conv-1\n::error::forged by the id", "userInput": "", "response": reply,
			"metadata": map[string]any{"currentNode": "Booking\n::error::forged by the node",
				"nodeTrace": []string{"Greeting\n::warning::forged by the trace"},
				"state":     map[string]any{"k\n::notice::forged by a key": "v"}},
			"conversationEnded": false, "delayedResponse": false,
		})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// workflowJob is a GitHub Actions job's directory, holding workflowSuite,
// and environment, whose target is workflowPlatform.
func workflowJob(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	srv := workflowPlatform(t)
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.yaml"), []byte(workflowSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"PATH": "/usr/bin:/bin", "AGENTTEST_BUILD_URL": srv.URL, "AGENTTEST_RUNTIME_URL": srv.URL,
		"AGENTTEST_ACCOUNT_ID": "acc-1", "AGENTTEST_BUILD_KEY": "build-key-0123456789", "AGENTTEST_RUNTIME_KEY": "runtime-key-0123456789",
		"GITHUB_ACTIONS": "true"}
	return dir, env
}

const workflowSuite = `suite: workflow commands
scenarios:
  - name: books a table
    agent: a
    turns:
      - say: hi
        expect: {response: "Table booked.", node: Greeting}
  - name: platform down
    agent: down
    turns:
      - say: hi
`

// onlyGuards fails t unless the runner, reading out, obeys at least one
// command and none but agenttest's stops of its commands.
func onlyGuards(t *testing.T, out string) {
	t.Helper()
	obeyed := actionstest.Obeyed(out)
	if len(obeyed) == 0 {
		t.Errorf("the output does not stop the runner's commands:\n%s", out)
	}
	for _, cmd := range obeyed {
		if !strings.HasPrefix(cmd, "::stop-commands::agenttest-") {
			t.Errorf("the runner obeys the command %q", cmd)
		}
	}
}

// TestWorkflowCommandsFromThePlatformAreNotObeyed: on GitHub Actions the
// runner obeys workflow commands anywhere in a step's output, and a -v
// transcript, a failure's diff or an error line shows what the platform
// sent. agenttest run and agenttest merge stop the runner's commands
// before they print it and resume them for their own annotations, so the
// runner obeys those and nothing else: no annotation forged by the agent,
// no word of the log masked, and the run's own annotations not switched
// off by the agent's ::stop-commands::. Before, the runner obeyed the
// reply's commands, which switched off the run's annotations.
func TestWorkflowCommandsFromThePlatformAreNotObeyed(t *testing.T) {
	t.Parallel()
	dir, env := workflowJob(t)
	report := filepath.Join(dir, "result.json")
	// own is how many of the run's own annotations the runner obeys.
	check := func(t *testing.T, c *cli, code, own int) {
		t.Helper()
		if got := c.run(t); got != code {
			t.Fatalf("exit %d, want %d\n%s", got, code, c.stdout.String()+c.stderr.String())
		}
		out := c.stdout.String() + c.stderr.String()
		if !strings.Contains(out, "forged by the agent") || !strings.Contains(out, "forged by the node") || !strings.Contains(out, "forged by the body") {
			t.Fatalf("the platform's text is not in the output: the test tests nothing\n%s", out)
		}
		obeyed := actionstest.Obeyed(out)
		var ours []string
		for i, cmd := range obeyed {
			switch {
			case strings.HasPrefix(cmd, "::error file=w.yaml,"):
				ours = append(ours, cmd)
			case i == 0 && strings.HasPrefix(cmd, "::stop-commands::agenttest-"):
			default:
				t.Errorf("the runner obeys the platform's command %q", cmd)
			}
		}
		if len(ours) != own {
			t.Errorf("the runner obeys %d of the run's annotations, want %d:\n%s", len(ours), own, strings.Join(obeyed, "\n"))
		}
		if len(obeyed) == 0 || !strings.HasPrefix(obeyed[0], "::stop-commands::agenttest-") {
			t.Errorf("the output does not open with a stop of commands:\n%s", strings.Join(obeyed, "\n"))
		}
		if first, _, _ := strings.Cut(c.stdout.String(), "\n"); !strings.HasPrefix(first, "::stop-commands::") {
			t.Errorf("the first line is %q, not the stop of commands", first)
		}
	}
	// The run's own annotations: the failed check (two broken
	// expectations) and the errored case.
	t.Run("run", func(t *testing.T) {
		check(t, newCLI(t, dir, env, "run", "-v", ".", "--json", report), exitFailed, 3)
	})
	t.Run("merge", func(t *testing.T) {
		check(t, newCLI(t, dir, env, "merge", "-v", report), exitFailed, 3)
	})
	// --github=false (the shard jobs of examples/ci) turns off the
	// annotations, not the guard: the job's log is still the runner's.
	t.Run("run --github=false", func(t *testing.T) {
		check(t, newCLI(t, dir, env, "run", "-v", ".", "--github=false", "--json", filepath.Join(dir, "shard.json")), exitFailed, 0)
	})
	t.Run("merge --github=false", func(t *testing.T) {
		check(t, newCLI(t, dir, env, "merge", "-v", report, "--github=false"), exitFailed, 0)
	})
}

// TestWorkflowCommandsInComparesAndGatesAreNotObeyed: compare and gate
// print what the platform sent too (an error body, a reply's word diff),
// and the promotion jobs of examples/ci run them in GitHub Actions; they
// write no annotations, so the runner's commands stay stopped from their
// first line to their last. Before, the runner obeyed the ##[error] of
// an error body in compare's NOT-COMPARED line.
func TestWorkflowCommandsInComparesAndGatesAreNotObeyed(t *testing.T) {
	t.Parallel()
	dir, env := workflowJob(t)
	report := filepath.Join(dir, "result.json")
	if code := newCLI(t, dir, env, "run", ".", "--github=false", "--json", report).run(t); code != exitFailed {
		t.Fatalf("run: exit %d, want %d", code, exitFailed)
	}
	type testCase struct {
		name string
		args []string
		code int
	}
	run := func(t *testing.T, tc testCase) {
		c := newCLI(t, dir, env, tc.args...)
		if got := c.run(t); got != tc.code {
			t.Fatalf("exit %d, want %d\n%s", got, tc.code, c.stdout.String()+c.stderr.String())
		}
		out := c.stdout.String() + c.stderr.String()
		if !strings.Contains(out, "forged by the body") && !strings.Contains(out, "forged by the deployment") {
			t.Fatalf("the platform's text is not in the output: the test tests nothing\n%s", out)
		}
		// Stdout's stop, and for gate, whose refusal quotes the body,
		// the stop around the message on stderr.
		onlyGuards(t, out)
	}
	for _, tc := range []testCase{
		{name: "compare", args: []string{"compare", "-v", "--baseline", "sandbox", "--candidate", "live", "--allow-live", "."}, code: exitErrored},
		{name: "compare with a report", args: []string{"compare", "--baseline", report, "--candidate", "sandbox", "."}, code: exitErrored},
		{name: "gate", args: []string{"gate", report, "--agent", "down"}, code: exitFailed},
		{name: "gate's deployments", args: []string{"gate", report, "--agent", "a"}, code: exitFailed},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestGitHubAnnotationFilesAreTheRepositorys: the runner reads an
// annotation's relative file against the repository's checkout
// ($GITHUB_WORKSPACE), not the step's working directory, so a run in a
// subdirectory (working-directory: agents) names its suites from the
// checkout; an absolute path inside it is made relative, and one outside
// it, or a run with no workspace, keeps the run's own path. Before, the
// annotations of a run in agents/ pointed at suites/... of the
// repository's root, a file that is not there.
func TestGitHubAnnotationFilesAreTheRepositorys(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "agents")
	const suite = "suite: s\nagent: restaurant\nscenarios:\n  - name: fails\n    turns:\n      - say: I'd like to book a table\n        expect: {response: nope}\n"
	if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "suites", "s.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name, workspace, path, want string
	}
	run := func(t *testing.T, tc testCase) {
		env := map[string]string{"GITHUB_ACTIONS": "true"}
		if tc.workspace != "" {
			env["GITHUB_WORKSPACE"] = tc.workspace
		}
		out := newCLI(t, dir, env, "run", tc.path).expect(t, exitFailed)
		var files []string
		for _, cmd := range actionstest.Obeyed(out) {
			if rest, ok := strings.CutPrefix(cmd, "::error file="); ok {
				file, _, _ := strings.Cut(rest, ",")
				files = append(files, file)
			}
		}
		if len(files) != 1 || files[0] != tc.want {
			t.Errorf("annotated files %q, want [%q]", files, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "run in a subdirectory", workspace: root, path: "suites", want: "agents/suites/s.yaml"},
		{name: "absolute path", workspace: root, path: filepath.Join(dir, "suites"), want: "agents/suites/s.yaml"},
		{name: "run at the root", workspace: dir, path: "suites", want: "suites/s.yaml"},
		{name: "suites outside the checkout", workspace: filepath.Join(root, "elsewhere"), path: "suites", want: "suites/s.yaml"},
		{name: "no workspace", path: "suites", want: "suites/s.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestGuardMessage: in GitHub Actions, a command's closing error message
// that could hold a workflow command (`::`, or `##[` anywhere) is printed
// between a stop of the runner's commands and their resumption, on
// stderr with it, and the error comes back printed; any other message,
// or one outside GitHub Actions, is left for exitCode to print.
func TestGuardMessage(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name    string
		actions bool
		err     error
		guarded bool
	}
	run := func(t *testing.T, tc testCase) {
		var stderr strings.Builder
		st := &State{Env: map[string]string{}, Stderr: &stderr}
		if tc.actions {
			st.Env["GITHUB_ACTIONS"] = "true"
		}
		err := guardMessage(st, tc.err)
		var printed strings.Builder
		code := exitCode(err, &printed)
		if want := exitCode(tc.err, io.Discard); code != want {
			t.Errorf("exit %d, want %d", code, want)
		}
		out := stderr.String() + printed.String()
		if !strings.Contains(out, "forged") && tc.err != nil {
			t.Fatalf("the message is lost:\n%s", out)
		}
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		switch {
		case tc.guarded && (len(lines) < 3 || !strings.HasPrefix(lines[0], "::stop-commands::agenttest-") ||
			lines[len(lines)-1] != "::"+strings.TrimPrefix(lines[0], "::stop-commands::")+"::" || printed.Len() != 0):
			t.Errorf("not printed between a stop and its resumption:\nstderr: %q\nafter: %q", stderr.String(), printed.String())
		case !tc.guarded && stderr.Len() != 0:
			t.Errorf("guarded, though it need not be: %q", stderr.String())
		}
	}
	for _, tc := range []testCase{
		{name: "old syntax", actions: true, err: usageErrorf("gate: read failed: 500: ##[error]forged"), guarded: true},
		{name: "new syntax", actions: true, err: usageErrorf("gate: read failed: 500: oops\n::error::forged"), guarded: true},
		{name: "plain", actions: true, err: usageErrorf("gate: suites/a.yaml:3:5: forged, not a command")},
		{name: "outside GitHub Actions", err: usageErrorf("gate: ##[error]forged")},
		{name: "internal", actions: true, err: errors.New("##[error]forged"), guarded: true},
		{name: "no error", actions: true},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
