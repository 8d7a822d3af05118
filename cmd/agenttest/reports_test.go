package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// readEnvelopes reads a Cucumber Messages file with the messages
// library, as Cucumber's tools do.
func readEnvelopes(t *testing.T, path string) []*messages.Envelope {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var envs []*messages.Envelope
	dec := json.NewDecoder(f)
	for {
		var e messages.Envelope
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: envelope %d: %v", path, len(envs)+1, err)
		}
		envs = append(envs, &e)
	}
	return envs
}

// An errored case (the platform's fault) is FAILED in Cucumber Messages,
// the one status Cucumber's tools read as a broken scenario, but its
// message says first that it errored and that the platform broke, not
// the agent, and its exception is named after the error's kind. Before,
// the step said only "timeout: ... CHAT_TIMEOUT", as an agent's
// failure would. The run's end says why it did not pass.
func TestCucumberErrored(t *testing.T) {
	t.Parallel()
	ndjson := filepath.Join(t.TempDir(), "cucumber.ndjson")
	env := examplesEnv()
	env[simFlagsEnv] = "--chat-timeout 1"
	c := newCLI(t, repoRoot, env, "run", "examples/features/restaurant.feature", "--retries", "0", "--cucumber", ndjson)
	c.expect(t, exitErrored)
	const blame = "errored, not failed: the platform broke, not the agent; nothing was learnt about the agent\n"
	failed := 0
	var finished *messages.TestRunFinished
	for _, e := range readEnvelopes(t, ndjson) {
		if e.TestRunFinished != nil {
			finished = e.TestRunFinished
		}
		r := e.TestStepFinished
		if r == nil || r.TestStepResult.Status != messages.TestStepResultStatus_FAILED {
			continue
		}
		failed++
		res := r.TestStepResult
		if !strings.HasPrefix(res.Message, blame) || !strings.Contains(res.Message, "timeout: ") {
			t.Errorf("the failed step's message does not say the platform broke first:\n%s", res.Message)
		}
		if res.Exception == nil || res.Exception.Type != "agenttest.Error.timeout" || res.Exception.Message != res.Message {
			t.Errorf("exception %+v, want agenttest.Error.timeout with the message", res.Exception)
		}
	}
	if failed == 0 {
		t.Fatal("no FAILED step: the errored cases look passed or skipped")
	}
	if finished == nil || finished.Success || !strings.HasPrefix(finished.Message, "errored: no check failed, but ") {
		t.Errorf("testRunFinished %+v, want unsuccessful with the run's status and why", finished)
	}
}

// A run interrupted in GitHub Actions (a cancelled job sends SIGINT, then
// SIGTERM) says so on the job's page, before the annotations of the
// cases that finished: an ::error of its own, and the step summary's
// status with the scenarios it did not run. The signal comes when the
// first case has failed; from then on the simulator holds every request,
// so the cases after it cannot finish (as in TestInterruptWritesReports).
func TestGitHubInterruptedRun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	var holding atomic.Bool
	release := make(chan struct{})
	env := wrapBuild(t, s, func(w http.ResponseWriter, r *http.Request) bool {
		if !holding.Load() {
			return false
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
		return true
	})
	t.Cleanup(func() { close(release) })
	summary := filepath.Join(t.TempDir(), "summary.md")
	env["GITHUB_ACTIONS"], env["GITHUB_STEP_SUMMARY"] = "true", summary
	c := newCLI(t, repoRoot, env, "run", "examples-failing/restaurant.yaml:22", "examples-failing/restaurant.yaml:30",
		"examples-failing/restaurant.yaml:38", "--parallel", "1")
	c.stdout.notify = func(all string) {
		if strings.Contains(all, "FAIL ") && holding.CompareAndSwap(false, true) {
			c.sigs <- struct{}{}
		}
	}
	out := c.expect(t, exitInterrupted)
	const why = "the run was stopped before every case finished (cancelled by a signal or a deadline): "
	first, rest, _ := strings.Cut(out[strings.Index(out, "::"):], "\n")
	if !strings.HasPrefix(first, "::error title=agenttest run interrupted::"+why) || !strings.HasSuffix(first, " scenarios not run; the verdicts of the others stand") {
		t.Errorf("the first annotation does not say the run was interrupted: %s", first)
	}
	if !strings.Contains(rest, "::error file=examples-failing/restaurant.yaml,line=28,col=11,title=agenttest failed%3A ") {
		t.Errorf("the failed case is not annotated after it:\n%s", rest)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "### ⏹️ agenttest: interrupted\n\n"+why) || !strings.Contains(string(b), "| failed | reply text mismatch shows a diff |") {
		t.Errorf("the step summary does not open with the interruption, then the failure:\n%s", b)
	}
}
