package main

import (
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platformtest"
)

// TestWebhookRegistrationPlatformDown: with the platform unreachable, the
// run's webhook endpoint cannot be registered either. The run says so
// without promising what will not happen (the scenarios that confirm
// webhooks are not run: the first call stops the run), then stops on the
// unreachable platform, exit 4. The client's pauses go to a fake clock.
func TestWebhookRegistrationPlatformDown(t *testing.T) {
	t.Parallel()
	addr := platformtest.ClosedAddr(t)
	dir := writeTree(t, map[string]string{"hooks.yaml": webhookSuite})
	env := plainTarget("http://" + addr)
	c := newCLI(t, dir, env, "run", "--webhook-listen", "127.0.0.1:0", "hooks.yaml")
	clk := fakeclock.New()
	c.st.Now, c.st.Sleep = clk.Now, clk.Sleep
	out := c.expect(t, exitErrored,
		"the run's webhook endpoint could not be registered: ",
		"the run goes on, and stops if the platform stays unreachable; the scenarios that confirm webhooks will error if they run",
		"SKIP hooks.yaml:4 completes (not run: platform unreachable)",
		"run stopped: the platform is unreachable at "+addr)
	if strings.Contains(out, "webhooks will error\n") {
		t.Errorf("the registration note promises an error that will not come:\n%s", out)
	}
}
