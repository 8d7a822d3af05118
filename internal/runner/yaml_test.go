package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestRunLoadedSuite runs a suite written in YAML, so the runner is tested
// with what users write, positions included.
func TestRunLoadedSuite(t *testing.T) {
	t.Parallel()
	suites, diags := scenario.Load(os.DirFS("testdata"), []string{"restaurant.yaml"})
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
