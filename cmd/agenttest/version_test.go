package main

import (
	"encoding/json"
	"runtime/debug"
	"testing"
)

// TestVersionOf pins version --json's keys: a release's module version,
// a work tree's "(devel)", and the commit when the build recorded one.
func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.25.0", Main: debug.Module{Version: "v1.2.0"}},
			`{"version":"v1.2.0","go":"go1.25.0"}`},
		{"work tree with its commit", debug.BuildInfo{GoVersion: "go1.25.0", Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}},
			`{"version":"(devel)","go":"go1.25.0","revision":"0123abcd"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(versionOf(&tc.info))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got %s, want %s", b, tc.want)
			}
		})
	}
}
