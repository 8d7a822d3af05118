package config

import (
	"testing"
	"time"
)

// TestMessagingQuietKey: messaging_quiet is a duration from 0 to
// MaxMessagingQuiet, refused at its position otherwise (negative, not a
// duration, past the bound), and AGENTTEST_MESSAGING_QUIET overrides it,
// on the embedded simulator's target too; unset, it is 0 (the answer is
// complete when the typing indicator goes off).
func TestMessagingQuietKey(t *testing.T) {
	t.Parallel()
	_, diags := Load("c.yaml", []byte("targets:\n  a:\n    messaging_quiet: -1s\n  b:\n    messaging_quiet: soon\n  c:\n    messaging_quiet: 11s\n  d:\n    messaging_quiet: 10s\n  e:\n    messaging_quiet: 0\n"))
	want := `c.yaml:3:22: messaging_quiet: "-1s" is not a duration such as 1s or 500ms (0 for none)
c.yaml:5:22: messaging_quiet: "soon" is not a duration such as 1s or 500ms (0 for none)
c.yaml:7:22: messaging_quiet: "11s" is longer than 10s: the quiet is waited within every web chat turn's timeout (turn_timeout, default 30s)`
	if diags.Error() != want {
		t.Errorf("load:\n got  %s\n want %s", diags.Error(), want)
	}

	f, diags := Load("agenttest.yaml", []byte("targets:\n  quiet:\n    build_url: https://build.example.com\n    messaging_quiet: 1500ms\n  plain:\n    build_url: https://build.example.com\n  fromvar:\n    build_url: https://build.example.com\n    messaging_quiet: ${env:QUIET}\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	type testCase struct {
		target string
		sim    bool
		env    map[string]string
		want   time.Duration
		diag   string
	}
	for _, tc := range []testCase{
		{target: "quiet", want: 1500 * time.Millisecond},
		{target: "plain", want: 0},
		{target: "quiet", env: map[string]string{EnvMessagingQuiet: "250ms"}, want: 250 * time.Millisecond},
		{target: "quiet", env: map[string]string{EnvMessagingQuiet: "1h"}, diag: `AGENTTEST_MESSAGING_QUIET: messaging_quiet: "1h" is longer than 10s: the quiet is waited within every web chat turn's timeout (turn_timeout, default 30s)`},
		{target: "fromvar", env: map[string]string{"QUIET": "2s"}, want: 2 * time.Second},
		{target: "fromvar", env: map[string]string{"QUIET": "-2s"}, diag: `agenttest.yaml:9:22: target "fromvar": messaging_quiet: "-2s" is not a duration such as 1s or 500ms (0 for none)`},
		{sim: true, want: 0},
		{sim: true, env: map[string]string{EnvMessagingQuiet: "1s"}, want: time.Second},
		{sim: true, env: map[string]string{EnvMessagingQuiet: "x"}, diag: `AGENTTEST_MESSAGING_QUIET: messaging_quiet: "x" is not a duration such as 1s or 500ms (0 for none)`},
	} {
		getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		tg, diags := Resolve(f, Selection{Target: tc.target, Sim: tc.sim, Getenv: getenv})
		if got := diags.Error(); got != tc.diag {
			t.Errorf("%s %v: diagnostics\n got  %s\n want %s", tc.target, tc.env, got, tc.diag)
		}
		if tc.diag == "" && tg.MessagingQuiet != tc.want {
			t.Errorf("%s %v: messaging_quiet %s, want %s", tc.target, tc.env, tg.MessagingQuiet, tc.want)
		}
	}
	// No config file, no --sim: the embedded simulator all the same.
	only := map[string]string{EnvMessagingQuiet: "750ms"}
	tg, diags := Resolve(nil, Selection{Getenv: func(k string) (string, bool) { v, ok := only[k]; return v, ok }})
	if diags.HasErrors() || !tg.Embedded || tg.MessagingQuiet != 750*time.Millisecond {
		t.Errorf("without a config file: %v, embedded %v, messaging_quiet %s", diags, tg.Embedded, tg.MessagingQuiet)
	}
}
