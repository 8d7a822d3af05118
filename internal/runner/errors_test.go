package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// TestClassifyRateLimits: a scenario whose wait budget a rate limit spent
// errors as the platform's (rate_limited) when the platform answered 429,
// to its calls or to another call with the key; at the pace of the run's
// own rate alone, no 429 at all, as a configuration error, which it read
// as the platform's. Neither is retried: another attempt would only wait
// more.
func TestClassifyRateLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  *platform.RateLimitError
		kind string
	}{
		{"the scenario's 429s", &platform.RateLimitError{Limited: 3}, result.KindRateLimited},
		{"another call's 429", &platform.RateLimitError{PacedBy: "GET /v1/agents/a1/deployments/active"}, result.KindRateLimited},
		{"the run's own rate", &platform.RateLimitError{Rate: 0.5}, result.KindConfig},
	} {
		tc.err.Method, tc.err.Path, tc.err.Next, tc.err.Budget = "POST", "/v1/agents/a1/debug-chat", time.Second, time.Second
		e, retry := classify(fmt.Errorf("turn 1: %w", tc.err), false)
		if e == nil || e.Kind != tc.kind || retry || e.Message != "turn 1: "+tc.err.Error() {
			t.Errorf("%s: %+v (retry %t), want kind %s, not retried, with the message", tc.name, e, retry, tc.kind)
		}
	}
}
