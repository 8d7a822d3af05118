package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// TestConfirmRecordNeverSettles: when the agent ended the chat and the
// platform's record of it still says in_progress at the bound, a check
// that fails on the record was judged on fields that may still change:
// the platform's error (timeout, retried), where it failed the agent
// ("conversation in_progress is true, expected false", exit 1). Checks
// that pass on it pass; a chat the agent left open still fails a check
// of in_progress: false, and a record that settled still fails the
// agent.
func TestConfirmRecordNeverSettles(t *testing.T) {
	t.Parallel()
	e := newConfirmEnv(t, nil)
	type testCase struct {
		name, say, check string
		// inProgress makes the record say in_progress: true, always.
		inProgress bool
		want       result.Status
		// keys are those the error names.
		keys string
	}
	run := func(t *testing.T, tc testCase) {
		opts := e.opts()
		clk := fakeclock.New()
		opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		opts.Retries = 1
		if tc.inProgress {
			opts.Records = e.unsettled(t)
		}
		src := "@agent:" + e.clinic + "\nFeature: settles\n\n  Scenario: settles\n    When the user says \"" + tc.say +
			"\"\n    Then the conversation record shows:\n" + tc.check
		res, err := Run(context.Background(), loadFiles(t, map[string]string{"settles.feature": src}), opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != tc.want {
			t.Fatalf("%s, want %s%s", c.Status, tc.want, describe(c))
		}
		if tc.want != result.Errored {
			return
		}
		a := c.Last()
		want := "confirm: read conversation " + a.ConversationID + ": the record was still in progress 3s after the agent ended the chat, and its fields may still change: " +
			tc.keys + " cannot be confirmed on it"
		if a.Error.Kind != result.KindTimeout || a.Error.Pos.Line != 6 || a.Error.Message != want {
			t.Errorf("error %s at %s: %s\nwant timeout at line 6: %s", a.Error.Kind, a.Error.Pos, a.Error.Message, want)
		}
		if len(c.Attempts) != 2 {
			t.Errorf("%d attempts, want the error retried once", len(c.Attempts))
		}
	}
	for _, tc := range []testCase{
		{name: "asked to have ended", say: "I have chest pain", inProgress: true, want: result.Errored,
			check: "      | in_progress | false |\n", keys: "confirm.conversation.in_progress"},
		{name: "a field of the unsettled record", say: "I have chest pain", inProgress: true, want: result.Errored,
			check: "      | handoff_destination | reception |\n      | channel | VOICE-SIP |\n",
			keys:  "confirm.conversation.handoff_destination, confirm.conversation.channel"},
		{name: "what holds of it holds", say: "I have chest pain", inProgress: true, want: result.Passed,
			check: "      | handoff_destination | on_call_nurse |\n"},
		{name: "the agent left the chat open", say: "hello", inProgress: true, want: result.Failed,
			check: "      | in_progress | false |\n"},
		{name: "a settled record", say: "I have chest pain", want: result.Failed,
			check: "      | handoff_destination | reception |\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { t.Parallel(); run(t, tc) })
	}
}

// unsettled is a client of the simulator whose conversation records
// always say in_progress: true, as a platform's that never settles them.
func (e *confirmEnv) unsettled(t *testing.T) *platform.Client {
	t.Helper()
	return e.rewritten(t, func(body string) string {
		return strings.ReplaceAll(body, `"in_progress":false`, `"in_progress":true`)
	})
}

// rewritten is a client of the simulator whose runtime answers are
// rewritten by rw on their way.
func (e *confirmEnv) rewritten(t *testing.T, rw func(body string) string) *platform.Client {
	t.Helper()
	p := newProxy(t, e.sim.RuntimeURL)
	p.onResponse(func(_ string, _ int64, body []byte) []byte { return []byte(rw(string(body))) })
	c, err := platform.New(platform.Config{BuildURL: e.sim.BuildURL, RuntimeURL: p.URL, AccountID: e.sim.AccountID,
		BuildKey: e.sim.BuildKey, RuntimeKey: e.sim.RuntimeKey, CallToken: e.sim.Info.CallToken})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
