package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
)

// TestClassifyRateLimits: a scenario whose wait budget a rate limit spent
// errors as the platform's (rate_limited, status 429) when the platform
// answered 429, to its calls or to another call with the key; at the pace
// of the run's own rate alone, no 429 at all, as a configuration error
// (no status), which it read as the platform's. Neither is retried:
// another attempt would only wait more.
func TestClassifyRateLimits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		err    *platform.RateLimitError
		kind   string
		status int
	}{
		{"the scenario's 429s", &platform.RateLimitError{Limited: 3}, result.KindRateLimited, 429},
		{"another call's 429", &platform.RateLimitError{PacedBy: "GET /v1/agents/a1/deployments/active"}, result.KindRateLimited, 429},
		{"the run's own rate", &platform.RateLimitError{Rate: 0.5}, result.KindConfig, 0},
	} {
		tc.err.Method, tc.err.Path, tc.err.Next, tc.err.Budget = "POST", "/v1/agents/a1/debug-chat", time.Second, time.Second
		e, retry := classify(fmt.Errorf("turn 1: %w", tc.err), false)
		if e == nil || e.Kind != tc.kind || e.Status != tc.status || retry || e.Message != "turn 1: "+tc.err.Error() {
			t.Errorf("%s: %+v (retry %t), want kind %s, status %d, not retried, with the message", tc.name, e, retry, tc.kind, tc.status)
		}
	}
}

// TestClassifyTimeoutStatus: the platform's CHAT_TIMEOUT keeps its 408 in
// the recorded error, as a 5xx keeps its status; a timeout of the client's
// own has none (no answer came).
func TestClassifyTimeoutStatus(t *testing.T) {
	t.Parallel()
	chat := &platform.APIError{Method: "POST", Path: "/v1/agents/a1/debug-chat/c1", Status: 408, Code: platform.CodeChatTimeout}
	own := &timeoutError{what: "turn timeout of 1s", err: &platform.NetworkError{Method: "POST", Path: "/v1/agents/a1/debug-chat/c1"}}
	for _, tc := range []struct {
		err    error
		status int
	}{{chat, 408}, {own, 0}} {
		if e, _ := classify(tc.err, false); e == nil || e.Kind != result.KindTimeout || e.Status != tc.status {
			t.Errorf("%v: %+v, want a timeout of status %d", tc.err, e, tc.status)
		}
	}
}
