package report

import (
	"testing"

	"github.com/agenttest/agenttest/internal/result"
)

func TestQuarantineNote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		q    *result.Quarantine
		want string
	}{
		{"none", nil, ""},
		{"reason and owner", &result.Quarantine{Reason: "Welsh replies are being rewritten", Owner: "@clinic-team", Until: "2026-12-31"},
			"quarantined until 2026-12-31, @clinic-team: Welsh replies are being rewritten; does not gate"},
		{"a sentence keeps one stop", &result.Quarantine{Reason: "The results lookup times out now and then.", Until: "2026-12-31"},
			"quarantined until 2026-12-31: The results lookup times out now and then; does not gate"},
		{"lapsed", &result.Quarantine{Reason: "moved.", Until: "2026-03-01", Lapsed: true},
			"quarantine lapsed on 2026-03-01: gates again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := quarantineNote(&result.Case{Quarantine: tc.q}); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
