package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	messages "github.com/cucumber/messages/go/v21"
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
