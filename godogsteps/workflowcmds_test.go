package godogsteps_test

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/actionstest"
)

// TestFailuresObeyNoCommandInGitHubActions: a reply that holds workflow
// commands fails a step, and godog's terminal formatters print the
// failure, where in a GitHub Actions job (Options.Getenv says
// GITHUB_ACTIONS=true) the runner would obey them. The failure is
// printed between a stop of the runner's commands and their resumption:
// the runner obeys only the stops. Outside GitHub Actions it is printed
// as it was. Before, the runner obeyed the agent's ::error:: and
// ##[warning].
func TestFailuresObeyNoCommandInGitHubActions(t *testing.T) {
	for _, tc := range []struct {
		echo    string
		actions bool
	}{
		{echo: `a\n  ::error file=app.go::forged by the agent\n##[warning]old syntax`, actions: true},
		{echo: `##[error]forged by the agent in the old syntax alone`, actions: true},
		{echo: `a\n  ::error file=app.go::forged by the agent\n##[warning]old syntax`},
	} {
		actions := tc.actions
		steps := echoingPlatform(t, "whsec_LEARNT-7d2a9c41e0b3f856", tc.echo, nil, func(o *godogsteps.Options) {
			o.Getenv = func(name string) (string, bool) { return "true", actions && name == "GITHUB_ACTIONS" }
		})
		for _, format := range []string{"pretty", "progress"} {
			status, errs, out := godogOutput(steps, echoFeature, format, "hook.feature")
			if status != 1 || !strings.Contains(out, "forged by the agent") {
				t.Fatalf("%s: godog status %d: want the echo failing the step\n%s", format, status, out)
			}
			obeyed := actionstest.Obeyed(out)
			if !actions {
				if len(obeyed) == 0 || strings.Contains(out, "::stop-commands::") {
					t.Errorf("%s, outside GitHub Actions: the failure is not printed as it was: %q\n%s", format, obeyed, out)
				}
				continue
			}
			if len(obeyed) == 0 {
				t.Errorf("%s: the failure does not stop the runner's commands:\n%s", format, out)
			}
			for _, cmd := range obeyed {
				if !strings.HasPrefix(strings.TrimLeft(cmd, " \t"), "::stop-commands::agenttest-") {
					t.Errorf("%s: the runner obeys the agent's %q:\n%s", format, cmd, out)
				}
			}
			// The error's text, read by junit, cucumber and After hooks,
			// is the failure's own.
			if got := errs["an echo"]; strings.Contains(got, "stop-commands") {
				t.Errorf("%s: the error's text holds the guard: %s", format, got)
			}
		}
	}
}
