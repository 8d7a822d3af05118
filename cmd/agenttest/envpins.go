package main

import (
	"fmt"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/scenario"
)

// envPins says which selected scenarios run in another environment than
// the one the target (or --env, AGENTTEST_ENV) names: a suite's env:, a
// scenario's or an @env: tag wins over the target's, so a job that asks
// for live can test sandbox and pass. One diagnostic per file, at its
// first such scenario. They are warnings, unless the run asks for live
// and no selected scenario runs there: then nothing it was set up to test
// would be tested, and the run is refused (the nightly job against live
// that tested sandbox every night and stayed green).
func envPins(suites []*scenario.Suite, t *config.Target) diag.Diagnostics {
	if t.EnvFrom == "" {
		return nil // no environment was asked for: the scenarios choose
	}
	var (
		ds       diag.Diagnostics
		inTarget int
	)
	for _, s := range suites {
		var first *scenario.Scenario
		n, env := 0, ""
		for _, sc := range s.Scenarios {
			if sc.Env == "" || sc.Env == t.Env {
				inTarget++
				continue
			}
			if first == nil {
				first, env = sc, sc.Env
			}
			n++
		}
		if first == nil {
			continue
		}
		what := fmt.Sprintf("%d selected %s of this file run", n, plural(n, "scenario", "scenarios"))
		if n == 1 {
			what = fmt.Sprintf("scenario %q runs", first.Name)
		}
		ds = ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: first.Pos,
			Message: fmt.Sprintf("%s in %s, not in %s, the environment of target %q (set by %s): a suite's or scenario's env: (or an @env: tag) wins over the target's",
				what, env, t.Env, t.Name, t.EnvFrom),
			Hint: "remove env: from the suite and its scenarios to test them in " + t.Env})
	}
	if inTarget == 0 && t.Env == "live" && len(ds) > 0 {
		for i := range ds {
			ds[i].Severity = diag.Error
			ds[i].Hint += "; no selected scenario runs in live, so the run would test nothing there and pass"
		}
	}
	return ds
}
