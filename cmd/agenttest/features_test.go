package main

// End-to-end tests of feature files through the CLI: one run over YAML
// suites and features gives one JUnit report; lint names undefined steps.

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/scenario"
)

// featureJUnit is the part of the JUnit report these tests read.
type featureJUnit struct {
	Suites []struct {
		Name  string `xml:"name,attr"`
		File  string `xml:"file,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			File      string `xml:"file,attr"`
			Line      int    `xml:"line,attr"`
			SystemOut string `xml:"system-out"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestRunMixedFilesOneJUnit(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "junit.xml")
	c := newCLI(t, repoRoot, examplesEnv(), "run", "--parallel", "16", "--junit", out,
		"suites", "features", "examples", "cmd/agenttest/testdata/featurefail")
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFailed, c.stdout, c.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc featureJUnit
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("JUnit does not parse: %v", err)
	}
	probes := probeScenarios(t, "features", "examples")
	yamlSuites, featureSuites, featureCases := 0, 0, 0
	var failure string
	for _, s := range doc.Suites {
		if !strings.HasSuffix(s.File, ".feature") {
			yamlSuites++
			continue
		}
		featureSuites++
		for _, tc := range s.Cases {
			featureCases++
			if tc.File != s.File || tc.Line <= 0 {
				t.Errorf("%s: testcase %q at %s:%d", s.File, tc.Name, tc.File, tc.Line)
			}
			// A probe scenario has no debug chat, so no transcript. A
			// failed case's is in its failure, not again in system-out.
			shown := tc.SystemOut
			if tc.Failure != nil {
				shown += tc.Failure.Body
			}
			if !strings.Contains(shown, "transcript (conversation ") && !probes[fmt.Sprintf("%s:%d", tc.File, tc.Line)] {
				t.Errorf("%s: testcase %q has no transcript:\n%s", s.File, tc.Name, shown)
			}
			if tc.Failure != nil {
				failure = tc.Failure.Message + "\n" + tc.Failure.Body
			}
		}
	}
	if yamlSuites < 6 || featureSuites < 8 || featureCases < 25 {
		t.Errorf("%d YAML suites, %d feature files with %d cases", yamlSuites, featureSuites, featureCases)
	}
	for _, want := range []string{
		`cmd/agenttest/testdata/featurefail/fail.feature:5:5: Then the agent's reply contains "how many guests": reply does not contain the expected text`,
		`expected: contains "how many guests"`,
		"> I'd like to book a table",
	} {
		if !strings.Contains(failure, want) {
			t.Errorf("failure lacks %q:\n%s", want, failure)
		}
	}
}

func TestLintUndefinedStep(t *testing.T) {
	t.Parallel()
	c := newCLI(t, repoRoot, nil, "lint", "cmd/agenttest/testdata/featurelint")
	if code := c.run(t); code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitUsage, c.stdout, c.stderr)
	}
	out := c.stdout.String()
	for _, want := range []string{
		`cmd/agenttest/testdata/featurelint/bad.feature:5:5: undefined step "Then the agents reply contain \"hello\""`,
		`closest defined steps: Then the agent's reply contains "hello"`,
		`Then the agents reply contain "hello"`, // the source line
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lint output lacks %q:\n%s", want, out)
		}
	}
}

func TestListFeatures(t *testing.T) {
	t.Parallel()
	c := newCLI(t, repoRoot, nil, "list", "--tags", "@emergency", "features", "examples")
	if code := c.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, c.stdout, c.stderr)
	}
	out := c.stdout.String()
	for _, want := range []string{"features/clinic.feature:30", "examples/features/clinic.feature:"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "chest pain") {
		t.Errorf("list shows an unselected row:\n%s", out)
	}
}

// probeScenarios returns the file:line of the probe scenarios of the
// feature files under dirs of the repository.
func probeScenarios(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	suites, diags := scenario.Load(os.DirFS(repoRoot), dirs)
	if diags.HasErrors() {
		t.Fatalf("load %v: %v", dirs, diags)
	}
	out := map[string]bool{}
	for _, s := range suites {
		for _, sc := range s.Scenarios {
			if strings.HasSuffix(sc.Pos.File, ".feature") && sc.Probe() != nil {
				out[fmt.Sprintf("%s:%d", sc.Pos.File, sc.Pos.Line)] = true
			}
		}
	}
	return out
}

// TestLintWarnsOfPointlessThresholds: a similarity threshold of 1 (or
// 100%) asks for the text's own words, one of 5% passes nearly any reply;
// lint warns of each at the threshold, in a suite and a feature alike,
// under not: too, and still passes (the scenarios are valid). A run
// says so before it starts.
func TestLintWarnsOfPointlessThresholds(t *testing.T) {
	t.Parallel()
	want := []string{
		`cmd/agenttest/testdata/thresholdlint/booking.feature:6:75: warning: similar with at least 5% passes nearly any reply: unrelated replies score up to 0.1; give a threshold above 0.1 and below 1 (the default is 0.8)`,
		`cmd/agenttest/testdata/thresholdlint/booking.yaml:8:61: warning: response: similar: min 1 passes only a reply with the very words of the text, which an LLM agent rewords: to ask for those words, check that the reply equals the text; to let the agent reword it`,
		`cmd/agenttest/testdata/thresholdlint/booking.yaml:11:83: warning: response: not: similar: min 1 under not passes every reply but one with the very words of the text: to forbid those words, check that the reply is not equal to the text`,
		"\n3 warnings",
	}
	for _, args := range [][]string{
		{"lint", "cmd/agenttest/testdata/thresholdlint"},
		{"run", "--sim", "cmd/agenttest/testdata/thresholdlint"},
	} {
		c := newCLI(t, repoRoot, nil, args...)
		code := c.run(t)
		out := c.stdout.String() + c.stderr.String()
		if args[0] == "lint" && code != exitOK {
			t.Fatalf("lint: exit %d, want %d\n%s", code, exitOK, out)
		}
		for _, w := range want {
			if args[0] == "run" && strings.HasPrefix(w, "\n3 warnings") {
				continue
			}
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", args[0], w, out)
			}
		}
	}
}
