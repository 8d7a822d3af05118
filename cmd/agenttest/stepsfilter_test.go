package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/golden"
)

// TestStepsFilter: agenttest steps WORD... prints only the steps whose
// example, description or group contains every word, ignoring case, and
// exits 5 (a selection matching nothing) when none does.
func TestStepsFilter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		golden string   // stdout, when set
		want   []string // in stdout and stderr
		not    []string // in neither
	}{
		{name: "one word", args: []string{"handoff"}, golden: "steps-handoff.golden"},
		{name: "case ignored", args: []string{"HandOff"}, golden: "steps-handoff.golden"},
		{name: "every word", args: []string{"reply", "contains"},
			want: []string{`Then the agent's reply contains "how many"`},
			not:  []string{`Then the agent says "`, "Tags on a Feature", "Setup ("}},
		{name: "description", args: []string{"conversations", "api"},
			want: []string{"Then the conversation record shows:"}},
		{name: "group heading", args: []string{"probes"},
			want: []string{"Probes and confirmations", `Then a "handoff.created" webhook arrives`},
			not:  []string{"Setup ("}},
		{name: "no step", args: []string{"zzz"}, code: exitEmpty,
			want: []string{`agenttest: steps: no step contains "zzz"; run 'agenttest steps' for all of them`},
			not:  []string{"Steps of agenttest"}},
		{name: "not every word", args: []string{"handoff", "zzz"}, code: exitEmpty,
			want: []string{`no step contains "handoff" and "zzz"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t, "testdata/pass", nil, append([]string{"steps"}, tc.args...)...)
			out := c.expect(t, tc.code, tc.want...)
			if tc.golden != "" {
				golden.Check(t, filepath.Join("testdata", "help", tc.golden), []byte(c.stdout.String()))
			}
			for _, n := range tc.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
			if tc.code != exitOK && c.stdout.String() != "" {
				t.Errorf("stdout of a selection of nothing: %q", c.stdout.String())
			}
		})
	}
}
