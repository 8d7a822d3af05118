// Package features_test runs the acceptance features of agenttest: the
// .feature files of this directory, against the embedded simulator and
// its example agents, through the same loader, runner and reports as
// `agenttest run features`.
package features_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// load loads the features under dirs of the repository, failing on any
// diagnostic: the shipped features must lint clean.
func load(t *testing.T, dirs ...string) []*scenario.Suite {
	t.Helper()
	suites, diags := scenario.Load(os.DirFS(".."), dirs)
	for _, d := range diags {
		t.Errorf("%s", d)
	}
	if len(suites) == 0 {
		t.Fatalf("no features under %v", dirs)
	}
	return suites
}

func TestAcceptance(t *testing.T) {
	suites := load(t, "features", "examples/features")
	// Fast calls, an unreachable number for the failing probe, and
	// webhook deliveries to a loopback receiver, as `agenttest run` sets
	// up the embedded simulator.
	e := platformtest.Start(t, nil)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runner.Run(ctx, suites, runner.Options{
		Channel:    runner.DebugChat(e.Client),
		Messaging:  runner.Messaging(runner.MessagingClients(e.MessagingConfig(), e.MessagingToken), runner.MessagingOptions{}),
		Records:    e.Client,
		Webhooks:   e.Receiver,
		Connector:  e.Connector,
		Parallel:   8,
		RetryDelay: -1,
		Observer:   report.NewHuman(&out, report.HumanOptions{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range res.Files {
		for _, c := range f.Cases {
			n++
			if c.Status != result.Passed && c.Status != result.Skipped {
				t.Errorf("%s %s: %s", c.Pos, c.Name, c.Status)
			}
		}
	}
	if n < 15 {
		t.Errorf("only %d cases ran", n)
	}
	if t.Failed() {
		t.Logf("run:\n%s", out.String())
	}
}

// faultSims are the simulators the scenarios of
// testdata/web-chat-faults.feature need, by tag.
var faultSims = map[string]sim.Options{
	"no-live-agent": {Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}},
	"overload":      {Faults: sim.Faults{Overload: 1}},
}

// TestAcceptanceFaults runs the web-chat scenarios that need a platform
// that fails on purpose, each against a simulator with its fault: what the
// platform says is what they check, so they pass.
func TestAcceptanceFaults(t *testing.T) {
	suites := load(t, "features/testdata/web-chat-faults.feature")
	if n := len(suites[0].Scenarios); n != len(faultSims) {
		t.Fatalf("%d scenarios, %d simulators", n, len(faultSims))
	}
	for tag, opts := range faultSims {
		t.Run(tag, func(t *testing.T) {
			t.Parallel()
			s := simtest.Start(t, opts)
			token := func(agent, env string) (string, error) { return s.Info.MessagingConnectors[agent][env], nil }
			base := platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey, MessagingURL: s.MessagingURL, MessagingHost: s.Info.MessagingHost}
			client, err := platform.New(base)
			if err != nil {
				t.Fatal(err)
			}
			expr, err := scenario.ParseTagExpr("@" + tag)
			if err != nil {
				t.Fatal(err)
			}
			res, err := runner.Run(context.Background(), suites, runner.Options{
				Channel:    runner.DebugChat(client),
				Messaging:  runner.Messaging(runner.MessagingClients(base, token), runner.MessagingOptions{}),
				Select:     scenario.Selection{Tags: &expr},
				RetryDelay: -1,
			})
			if err != nil {
				t.Fatal(err)
			}
			cases := res.Files[0].Cases
			if len(cases) != 1 || cases[0].Status != result.Passed {
				var out bytes.Buffer
				report.WriteJUnit(&out, res)
				t.Errorf("cases %d, first %s:\n%s", len(cases), cases[0].Status, out.String())
			}
		})
	}
}

// TestVocabularyIsExercised: every registered step is used by a feature
// that passes above, so each one is proven end to end.
func TestVocabularyIsExercised(t *testing.T) {
	lib := scenario.Steps()
	used := make([]bool, len(lib.Defs()))
	for _, s := range load(t, "features", "examples/features", "features/testdata") {
		for _, sc := range s.Scenarios {
			for _, st := range sc.Steps {
				_, text, _ := strings.Cut(st.Text, " ") // the step without its keyword
				for _, i := range lib.Match(text) {
					used[i] = true
				}
			}
		}
	}
	for i, d := range lib.Defs() {
		if !used[i] {
			t.Errorf("no feature uses %q", d.Example)
		}
	}
}
