package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNearestPhrasing runs scenarios that list phrasings of the clinic's
// opening hours, none of which the reply matches, against the embedded
// simulator (seed fixed: the reply is the clinic's usual one). Each
// report must name the nearest phrasing, say how near it is, and diff
// the reply against it: a diff against the list itself says nothing.
func TestNearestPhrasing(t *testing.T) {
	t.Parallel()
	const (
		file   = "cmd/agenttest/testdata/nearest/clinic.yaml"
		actual = "The surgery is open Monday to Friday, 8am to 6:30pm."
	)
	type testCase struct {
		name    string
		line    string
		message string
		nearest string
		diff    string
	}
	cases := []testCase{
		{name: "one_of", line: file + ":7", message: "reply is none of the expected values (the nearest is 0.73 similar)",
			nearest: "The surgery is open Monday to Friday, 9am to 5pm.",
			diff:    "The surgery is open Monday to Friday, [-9am-]{+8am+} to [-5pm-]{+6:30pm+}."},
		{name: "any", line: file + ":15", message: "reply matches none of the alternatives (the nearest is 0.68 similar)",
			nearest: "The surgery opens Monday to Friday from 9am to 5pm.",
			diff:    "The surgery [-opens-]{+is open+} Monday to Friday[- from 9am to 5pm-]{+, 8am to 6:30pm+}."},
	}
	run := func(t *testing.T, tc testCase) {
		out := t.TempDir()
		jsonPath, junitPath, htmlPath := filepath.Join(out, "r.json"), filepath.Join(out, "r.xml"), filepath.Join(out, "r.html")
		c := newCLI(t, repoRoot, examplesEnv(), "run", tc.line, "--seed", "2", "--parallel", "1",
			"--json", jsonPath, "--junit", junitPath, "--html", htmlPath)
		if code := c.run(t); code != exitFailed {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout.String(), c.stderr.String())
		}
		console := c.stdout.String()
		for _, want := range []string{
			tc.message,
			"nearest:  " + tc.nearest + "\n",
			"actual:   " + actual + "\n",
			"diff:     " + tc.diff + "\n",
		} {
			if !strings.Contains(console, want) {
				t.Errorf("console lacks %q:\n%s", want, console)
			}
		}
		var doc struct {
			Files []struct {
				Cases []struct {
					Attempts []struct {
						Failures []struct {
							Message, Actual, Diff, Nearest string
						} `json:"failures"`
					} `json:"attempts"`
				} `json:"cases"`
			} `json:"files"`
		}
		b, err := os.ReadFile(jsonPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		f := doc.Files[0].Cases[0].Attempts[0].Failures[0]
		if !strings.HasSuffix(f.Message, tc.message) || f.Nearest != tc.nearest || f.Actual != actual || f.Diff != tc.diff {
			t.Errorf("JSON failure %+v, want nearest %q and diff %q", f, tc.nearest, tc.diff)
		}
		x, err := os.ReadFile(junitPath)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(x), "nearest:  "+tc.nearest) || !strings.Contains(string(x), tc.diff) {
			t.Errorf("JUnit report lacks the nearest phrasing or its diff:\n%s", x)
		}
		h, err := os.ReadFile(htmlPath)
		if err != nil {
			t.Fatal(err)
		}
		if near, _ := json.Marshal(tc.nearest); !strings.Contains(string(h), `"near":`+string(near)) {
			t.Errorf("HTML report lacks \"near\":%s", near)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}
