package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/result"
)

// The status line of a run whose cases errored says whether their
// scenarios cannot be run as written (a configuration error, for the user
// to fix) or the platform or the network kept the run from a verdict (a
// retry may do better), and every renderer that states it says the same.
func TestStatusLineNamesConfigurationErrors(t *testing.T) {
	errored := func(kinds ...string) *result.Case {
		c := &result.Case{Status: result.Errored}
		for i, k := range kinds {
			c.Attempts = append(c.Attempts, &result.Attempt{Number: i + 1, Status: result.Errored, Error: &result.Error{Kind: k}})
		}
		return c
	}
	config := func() *result.Case { return errored(result.KindConfig) }
	network := func() *result.Case { return errored(result.KindNetwork) }
	// repeated errs a repeated case over runs, each a list of attempts:
	// "p" passed, "f" failed, or an error's kind.
	repeated := func(runs ...[]string) *result.Case {
		c := &result.Case{Status: result.Errored, Repeat: &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionErrored}}
		for i, run := range runs {
			for _, k := range run {
				a := &result.Attempt{Number: len(c.Attempts) + 1, Run: i + 1}
				switch k {
				case "p":
					a.Status = result.Passed
				case "f":
					a.Status = result.Failed
				default:
					a.Status, a.Error = result.Errored, &result.Error{Kind: k}
				}
				c.Attempts = append(c.Attempts, a)
			}
		}
		return c
	}
	quarantined := func(c *result.Case) *result.Case {
		c.Quarantine = &result.Quarantine{Reason: "flaky", Until: "2099-01-01"}
		return c
	}
	passed := func() *result.Case {
		return &result.Case{Status: result.Passed, Attempts: []*result.Attempt{{Status: result.Passed}}}
	}

	const (
		platform = "the platform or the network kept the run from telling whether the agent is fine"
		asOne    = "its scenario cannot be run as written (a configuration error; retrying will not help)"
		asMany   = "their scenarios cannot be run as written (a configuration error; retrying will not help)"
	)
	type testCase struct {
		cases []*result.Case
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		f := &result.File{Path: "s.yaml", Suite: "s"}
		for i, c := range tc.cases {
			c.Name, c.Pos.File, c.Pos.Line = fmt.Sprint("case ", i), "s.yaml", i+1
			f.Cases = append(f.Cases, c)
		}
		r := &result.Result{Files: []*result.File{f}, Duration: 1234567890}
		want := "status: errored (no check failed, but " + tc.want + ")"

		var b bytes.Buffer
		NewHuman(&b, HumanOptions{}).RunFinished(r)
		if got := lastLines(b.String(), 1); got != want {
			t.Errorf("console's last line =\n%s\nwant\n%s", got, want)
		}
		why := tc.want
		b.Reset()
		if err := WriteCucumber(&b, r, CucumberOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), `"message":"errored: no check failed, but `+why+`"`) {
			t.Errorf("cucumber testRunFinished does not say %q:\n%s", why, b.String())
		}
		b.Reset()
		if err := WriteGitHubSummary(&b, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\n"+mdText("no check failed, but "+why)+"\n") {
			t.Errorf("github summary does not say %q:\n%s", why, b.String())
		}
		b.Reset()
		if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "no check failed, but "+why) {
			t.Errorf("html report does not say %q", why)
		}
	}
	for name, tc := range map[string]testCase{
		"none by configuration": {[]*result.Case{passed(), network(), errored(result.KindHTTP)},
			"2 cases errored: " + platform},
		"one, by configuration": {[]*result.Case{passed(), config()},
			"1 case errored: " + asOne},
		"all by configuration": {[]*result.Case{config(), passed(), config()},
			"2 cases errored: " + asMany},
		"mixed": {[]*result.Case{config(), network(), errored(result.KindTimeout)},
			"3 cases errored: 1 cannot be run as written (a configuration error), and the platform or the network kept 2 from telling whether the agent is fine"},
		// A configuration error is never retried; a retry of a network
		// error that then met one (a later step) ends on it.
		"retried, then by configuration": {[]*result.Case{errored(result.KindNetwork, result.KindConfig)},
			"1 case errored: " + asOne},
		"by configuration, then retried into a network error": {[]*result.Case{errored(result.KindConfig, result.KindNetwork)},
			"1 case errored: " + platform},
		// A quarantined case does not gate the run: it is not counted,
		// whatever it errored of.
		"a quarantined configuration error not counted": {[]*result.Case{quarantined(config()), network()},
			"1 case errored: " + platform},
		"a quarantined network error not counted": {[]*result.Case{quarantined(network()), config()},
			"1 case errored: " + asOne},
		// A repeated case errored by configuration only when every run
		// that errored did.
		"repeat, every errored run by configuration": {[]*result.Case{repeated([]string{"p"}, []string{result.KindConfig}, []string{result.KindConfig})},
			"1 case errored: " + asOne},
		"repeat, a run retried out of a network error into a configuration one": {[]*result.Case{repeated([]string{result.KindNetwork, result.KindConfig}, []string{result.KindConfig}, []string{"f"})},
			"1 case errored: " + asOne},
		"repeat, one errored run by the network": {[]*result.Case{repeated([]string{"p"}, []string{result.KindNetwork}, []string{result.KindConfig}), config()},
			"2 cases errored: 1 cannot be run as written (a configuration error), and the platform or the network kept 1 from telling whether the agent is fine"},
		"repeat, errored before any run": {[]*result.Case{repeated()},
			"1 case errored: " + platform},
	} {
		t.Run(name, func(t *testing.T) { run(t, tc) })
	}
}

// A failed run whose other cases errored says so after the broken
// expectation, and why they errored: the platform, or a scenario that
// cannot be run as written.
func TestStatusLineFailedBesideErrored(t *testing.T) {
	failed := &result.Case{Status: result.Failed, Attempts: []*result.Attempt{{Status: result.Failed}}}
	inconclusive := &result.Case{Name: "reads the hours", Pos: diag.Pos{File: "s.yaml", Line: 7, Col: 5}, Status: result.Failed,
		Repeat: &result.Repeat{Decision: result.DecisionInconclusive}, Attempts: []*result.Attempt{{Status: result.Passed}}}
	errored := func(kind string) *result.Case {
		return &result.Case{Status: result.Errored, Attempts: []*result.Attempt{{Status: result.Errored, Error: &result.Error{Kind: kind}}}}
	}
	for _, tc := range []struct {
		name  string
		cases []*result.Case
		want  string
	}{
		{"none errored", []*result.Case{failed}, "a check failed: the agent broke an expectation"},
		{"the platform", []*result.Case{failed, errored(result.KindHTTP), errored(result.KindTimeout)},
			"a check failed: the agent broke an expectation; 2 cases errored too: the platform or the network broke, not the agent"},
		{"a configuration error", []*result.Case{failed, errored(result.KindConfig)},
			"a check failed: the agent broke an expectation; 1 case errored too: its scenario cannot be run as written (a configuration error; retrying will not help)"},
		// An inconclusive statistical case counts as failed, but its
		// runs said nothing against the agent: alone, it is what is said;
		// beside a broken expectation, the counts line says it.
		{"only inconclusive", []*result.Case{inconclusive},
			"1 statistical case was inconclusive (s.yaml:7:5 reads the hours): its runs showed neither that the agent reaches its pass rate nor that it falls short, and it counts as failed; let it run more (raise or leave out repeat:) or widen its margin"},
		{"inconclusive beside a broken expectation", []*result.Case{failed, inconclusive}, "a check failed: the agent broke an expectation"},
	} {
		f := &result.File{Path: "s.yaml", Suite: "s", Cases: tc.cases}
		r := &result.Result{Files: []*result.File{f}}
		if got := failedWhy(r); got != tc.want {
			t.Errorf("%s: failedWhy = %q, want %q", tc.name, got, tc.want)
		}
	}
}
