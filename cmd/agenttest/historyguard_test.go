package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// copyReport writes to dst the JSON report src with edit applied
// (editReport).
func copyReport(t *testing.T, src, dst string, edit func(doc map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	editReport(t, dst, edit)
}

// passedEarlier edits a report into one of a night before, in which its
// case named name passed.
func passedEarlier(name string) func(doc map[string]any) {
	return func(doc map[string]any) {
		doc["run"].(map[string]any)["started"] = "2026-01-01T02:30:00Z"
		for _, f := range doc["files"].([]any) {
			for _, c := range f.(map[string]any)["cases"].([]any) {
				c := c.(map[string]any)
				if c["name"] == name {
					c["status"] = "passed"
					for _, a := range c["attempts"].([]any) {
						a := a.(map[string]any)
						a["status"], a["failures"], a["error"] = "passed", []any{}, nil
					}
				}
			}
		}
	}
}

// TestHistoryObeysNoCommandOfTheReports: history names the deployments
// of a scenario that went from passing to failing, which the platform
// named ("dep-1 ##[error]forged by the deployment"). In GitHub Actions,
// where the runner obeys `##[` anywhere in a line, it prints the history
// between a stop of the runner's commands and their resumption; a
// history with no command in it is printed as it is, so a job that keeps
// it in a file (the nightly example's summary) gets no guard lines.
// Before, the runner obeyed the deployment's command.
func TestHistoryObeysNoCommandOfTheReports(t *testing.T) {
	t.Parallel()
	dir, env := workflowJob(t)
	if code := newCLI(t, dir, env, "run", ".", "--github=false", "--json", "2.json").run(t); code != exitFailed {
		t.Fatalf("run: exit %d, want %d", code, exitFailed)
	}
	copyReport(t, filepath.Join(dir, "2.json"), filepath.Join(dir, "1.json"), passedEarlier("books a table"))
	c := newCLI(t, dir, env, "history", "1.json", "2.json")
	c.expect(t, exitOK)
	out := c.stdout.String()
	if !strings.Contains(out, "forged by the deployment") {
		t.Fatalf("the deployment is not in the history: the test tests nothing\n%s", out)
	}
	onlyGuards(t, out)
	// A history of reports without a command is printed as it is.
	clean := func(doc map[string]any) {
		for _, d := range doc["deployments"].([]any) {
			d := d.(map[string]any)
			d["id"], d["after_id"] = "dep-1", "dep-1"
		}
	}
	copyReport(t, filepath.Join(dir, "1.json"), filepath.Join(dir, "c1.json"), clean)
	copyReport(t, filepath.Join(dir, "2.json"), filepath.Join(dir, "c2.json"), clean)
	c = newCLI(t, dir, env, "history", "c1.json", "c2.json")
	c.expect(t, exitOK)
	if strings.Contains(c.stdout.String(), "::") {
		t.Errorf("a history without commands is guarded:\n%s", c.stdout)
	}
}

// TestHistoryShowsNoKeyOfAnEditedReport: a report agenttest wrote holds
// no key, but one edited may, in any value history prints: a deployment's
// id and version (which the regression line names), a reason the run
// stopped, a schema it cannot read. history masks the keys the
// environment holds in the text, in --json and in the problems it names,
// as gate masks the report it quotes. Before, it printed them.
func TestHistoryShowsNoKeyOfAnEditedReport(t *testing.T) {
	t.Parallel()
	dir, env := workflowJob(t)
	delete(env, "GITHUB_ACTIONS")
	key := env["AGENTTEST_BUILD_KEY"]
	if code := newCLI(t, dir, env, "run", ".", "--json", "run.json").run(t); code != exitFailed {
		t.Fatalf("run: exit %d, want %d", code, exitFailed)
	}
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "1.json"), passedEarlier("books a table"))
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "2.json"), func(doc map[string]any) {
		for _, d := range doc["deployments"].([]any) {
			d := d.(map[string]any)
			d["id"], d["after_id"] = "dep-"+key, "dep-"+key
			d["version"], d["after_version"] = keyForms["base64"](key), keyForms["base64"](key)
		}
		doc["run"].(map[string]any)["stop"] = map[string]any{"reason": "not run: platform unreachable", "kind": "http", "cause": "refused " + key}
	})
	// A report edited past reading: history names it, quoting what it
	// found, and prints the others.
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "3.json"), func(doc map[string]any) {
		doc["schema"] = "agenttest/" + key
	})
	for _, args := range [][]string{{"history", "1.json", "2.json", "3.json"}, {"history", "--json", "1.json", "2.json", "3.json"}} {
		c := newCLI(t, dir, env, args...)
		c.expect(t, exitUsage)
		if !strings.Contains(c.stderr.String(), "3.json: not an agenttest JSON report (schema \"agenttest/"+secret.Mask) {
			t.Errorf("%s: the unreadable report is not named, its schema masked:\n%s", args, c.stderr)
		}
		out := c.stdout.String() + c.stderr.String()
		if !strings.Contains(out, "dep-"+secret.Mask) {
			t.Errorf("%s: the deployment is not in the history, masked: the test tests nothing\n%s", args, out)
		}
		for _, form := range secret.Forms(key) {
			if strings.Contains(out, form) {
				t.Errorf("%s: the history shows the key as %q:\n%s", args, form, out)
			}
		}
	}
}

// TestWriteGuarded: in GitHub Actions, text that could hold a workflow
// command is written between a stop and its resumption, each on a line
// of its own whether or not the text ends its last line; other text, and
// any text outside GitHub Actions, is written as it is.
func TestWriteGuarded(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, text string
		actions    bool
		guarded    bool
	}
	run := func(t *testing.T, tc testCase) {
		var out strings.Builder
		st := &State{Env: map[string]string{}}
		if tc.actions {
			st.Env["GITHUB_ACTIONS"] = "true"
		}
		if _, err := writeGuarded(st, &out, []byte(tc.text)); err != nil {
			t.Fatal(err)
		}
		if !tc.guarded {
			if out.String() != tc.text {
				t.Errorf("wrote %q, want %q as it is", out.String(), tc.text)
			}
			return
		}
		lines := strings.Split(out.String(), "\n")
		token, ok := strings.CutPrefix(lines[0], "::stop-commands::")
		body := strings.TrimSuffix(tc.text, "\n")
		if !ok || len(lines) != strings.Count(body, "\n")+4 || strings.Join(lines[1:len(lines)-2], "\n") != body ||
			lines[len(lines)-2] != "::"+token+"::" || lines[len(lines)-1] != "" {
			t.Errorf("wrote %q: want %q between a stop and its resumption, each on its own line", out.String(), body)
		}
	}
	for _, tc := range []testCase{
		{name: "a line", text: "dep ##[error]x\n", actions: true, guarded: true},
		{name: "no last line break", text: "a\n::error::x", actions: true, guarded: true},
		{name: "no command", text: "dep-1 (version 1.2)\n", actions: true},
		{name: "outside GitHub Actions", text: "dep ##[error]x\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}
