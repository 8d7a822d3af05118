package runner

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// runYAML loads the suite at path in fsys and runs it against the
// simulator, failing the test on any load or run error.
func runYAML(t *testing.T, fsys fs.FS, path string) *result.Result {
	t.Helper()
	suites, diags := scenario.Load(fsys, []string{path})
	if diags.HasErrors() {
		t.Fatalf("load: %v", diags)
	}
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.DefaultAgent = ""
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunLoadedSuite runs a suite written in YAML, so the runner is tested
// with what users write, positions included.
func TestRunLoadedSuite(t *testing.T) {
	t.Parallel()
	res := runYAML(t, os.DirFS("testdata"), "restaurant.yaml")
	got := strings.Join(statuses(res), "\n")
	want := strings.Join([]string{
		"books a table [time=7pm]=passed",
		"expects the wrong party size=failed",
		"not yet=skipped",
	}, "\n")
	if got != want {
		t.Fatalf("statuses:\n%s\nwant:\n%s%s", got, want, describe(res.Files[0].Cases[0]))
	}
	f := res.Files[0]
	if f.Path != "restaurant.yaml" || f.Suite != "Restaurant booking" {
		t.Errorf("file = %q %q", f.Path, f.Suite)
	}
	if say := f.Cases[0].Attempts[0].Turns[2].Say; say != "4 people at 7pm" {
		t.Errorf("say = %q", say)
	}
	fail := f.Cases[1].Attempts[0].Failures
	if len(fail) != 1 || fail[0].Pos.File != "restaurant.yaml" || fail[0].Pos.Line != 31 {
		t.Errorf("failures = %+v, want one at restaurant.yaml:31", fail)
	}
	if p := f.Cases[1].Pos; p.File != "restaurant.yaml" || p.Line != 25 {
		t.Errorf("case pos = %s", p)
	}
}

// TestCompoundCheckPositions: each part of a trace, events, functions or
// topics check that breaks is reported at its own key, not at the
// check's, and an item of a trace or events list (a node missing, out of
// its sequence) at that item, so a designer is sent to the name that is
// wrong. equals fails as one list, at its key.
func TestCompoundCheckPositions(t *testing.T) {
	t.Parallel()
	const suite = `suite: Parts
scenarios:
  - name: debug chat
    agent: restaurant
    turns:
      - say: what's on the menu
        expect:
          trace:
            includes: [CheckParty]
            excludes: [AnswerQuestion]
            sequence: [AnswerQuestion, Goodbye]
            equals: [Goodbye]
          functions:
            called: [check_availability]
            not_called: [nothing]
            failed: [check_availability]
          topics:
            cited: menu
            retrieved: [allergens]
  - name: web chat
    agent: restaurant
    via: messaging
    turns:
      - say: I'd like to book a table
        expect:
          events:
            includes: [EVENT_TYPE_LIVE_AGENT_JOINED]
            excludes: [EVENT_TYPE_USER_MESSAGE]
`
	res := runYAML(t, fstest.MapFS{"parts.yaml": {Data: []byte(suite)}}, "parts.yaml")
	var got []string
	for _, c := range res.Files[0].Cases {
		for _, f := range c.Last().Failures {
			got = append(got, f.Key+" at "+f.Pos.String())
		}
	}
	want := []string{
		"trace.includes at parts.yaml:9:24",
		"trace.excludes at parts.yaml:10:24",
		"trace.sequence at parts.yaml:11:40",
		"trace.equals at parts.yaml:12:13",
		"functions.called at parts.yaml:14:13",
		"functions.failed at parts.yaml:16:13",
		"topics.retrieved at parts.yaml:19:13",
		"events.includes at parts.yaml:27:24",
		"events.excludes at parts.yaml:28:24",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
