package main

import (
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// TestFiltersHoldingAKeyAreRefused: a --tags or --name that holds a key
// the environment holds, given as a flag or by its variable, or holding
// the key a variable agenttest.yaml names holds, is refused (exit 2)
// naming the flag and never the value, by run, list and compare, before
// anything runs or a report is written. Before, run recorded the filter
// as given in the JSON report (filter.name, filter.tags), which compare
// and the gate print, and an empty selection's message and a bad
// expression's error quoted it.
func TestFiltersHoldingAKeyAreRefused(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	dir := writeTree(t, map[string]string{
		"s.yaml":         "agent: restaurant\nscenarios:\n  - {name: books, tags: [smoke], turns: [{say: hi, expect: {response: {similar: {to: hello, min: 0.01}}}}]}\n",
		"agenttest.yaml": "targets:\n  live: {build_url: https://build.example.com, build_key: \"${env:LIVE_BUILD}\"}\n",
	})
	byVariable := map[string]string{"AGENTTEST_BUILD_KEY": key}
	byConfig := map[string]string{"LIVE_BUILD": key}
	for _, tc := range []struct {
		name, flag string
		env        map[string]string
		args       []string
	}{
		{"--name", "--name", byVariable, []string{"--name", key}},
		{"--name as a regex", "--name", byVariable, []string{"--name", "/books|" + key + "/"}},
		{"--tags", "--tags", byVariable, []string{"--tags", "@smoke || @" + key}},
		{"--tags that does not parse", "--tags", byVariable, []string{"--tags", "(@" + key}},
		{"AGENTTEST_NAME", "--name (set by AGENTTEST_NAME)", map[string]string{"AGENTTEST_BUILD_KEY": key, "AGENTTEST_NAME": "x" + key}, nil},
		{"AGENTTEST_TAGS", "--tags (set by AGENTTEST_TAGS)", map[string]string{"AGENTTEST_BUILD_KEY": key, "AGENTTEST_TAGS": "@" + key}, nil},
		{"a key agenttest.yaml names", "--name", byConfig, []string{"--name", key}},
	} {
		for _, cmd := range [][]string{
			{"run", "-v", "--sim", "--json", "result.json", "--junit", "junit.xml", "--html", "report.html"},
			{"list"},
			{"compare", "--baseline", "sandbox", "--candidate", "target:sim", "--sim", "--json", "compare.json"},
		} {
			args := append(append(append([]string(nil), cmd...), tc.args...), "s.yaml")
			c := newCLI(t, dir, tc.env, args...)
			out := c.expect(t, exitUsage, tc.flag+" holds a key the environment holds")
			if f := keyIn(out, secret.Forms(key)); f != "" {
				t.Errorf("%s: %v shows the key as %q:\n%s", tc.name, cmd[0], f, out)
			}
			for _, report := range []string{"result.json", "junit.xml", "report.html", "compare.json"} {
				if _, err := os.Stat(filepath.Join(dir, report)); err == nil {
					t.Errorf("%s: %v wrote %s", tc.name, cmd[0], report)
				}
			}
		}
	}
}

// TestCompareOfReportsShowsNoKey: a comparison of two stored reports
// has no target, but the environment's keys are masked in what it shows
// of them, as history and merge mask the reports they read: a report
// edited, or written by another tool, holds the key in a reply and in a
// similar matcher's text, and neither reaches the console, the JSON or
// the HTML comparison (whose transcript shows each turn's scores).
// Before, compare masked the keys of the sides' targets only: of two
// reports, none.
func TestCompareOfReportsShowsNoKey(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/s.yaml": scoresSuite, "agents/host.yaml": scoresAgent("Your table for four is booked for seven tonight")})
	newCLI(t, dir, nil, "run", "suites", "--sim-agents", "agents", "--seed", "1", "--json", "run.json").expect(t, exitOK)
	const key = "sk-live-0123456789abcdefXYZ"
	plant := func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			if to, ok := o["to"].(string); ok {
				o["to"] = to + " " + key
			}
			if r, ok := o["reply"].(string); ok && strings.Contains(r, "booked") {
				o["reply"] = r + " " + key
			}
		})
	}
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "candidate.json"), plant)
	texts := compareTexts(t, dir, key, "run.json")
	for name, text := range texts {
		if f := keyIn(text, secret.Forms(key)); f != "" {
			t.Errorf("%s shows the key as %q", name, f)
		}
	}
	if !strings.Contains(texts["stdout"], "tonight{+ "+secret.Mask) || !strings.Contains(texts["compare.html"], "how can I help you today? "+secret.Mask) {
		t.Errorf("the reply and the matcher's text are not shown masked: the test tests nothing\n%s", texts["stdout"])
	}
}

// TestCommandErrorsShowNoKey: a key the environment holds, given by
// mistake as the value of another setting (a flag, or the variable that
// sets it), is masked in the error that refuses it, whatever the
// command. Before, the message quoted it as given: `--rate:
// "PLANTbuild-..." is not a number of requests per second`.
func TestCommandErrorsShowNoKey(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	dir := writeTree(t, map[string]string{"s.yaml": "agent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi, expect: {response: hi}}]}\n"})
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"AGENTTEST_RATE": key}, []string{"run", "--sim", "s.yaml"}, `--rate: "` + secret.Mask + `" is not a number`},
		{nil, []string{"run", "--sim", "--rate", key, "s.yaml"}, `--rate: "` + secret.Mask + `" is not a number`},
		{map[string]string{"AGENTTEST_SHARD": key}, []string{"list", "s.yaml"}, secret.Mask},
		{nil, []string{"compare", "--baseline", "sandbox", "--candidate", "pre-release", "--sim", "--confidence", key, "s.yaml"}, secret.Mask},
	} {
		env := map[string]string{"AGENTTEST_BUILD_KEY": key}
		maps.Copy(env, tc.env)
		c := newCLI(t, dir, env, tc.args...)
		out := c.expect(t, exitUsage, tc.want)
		if f := keyIn(out, secret.Forms(key)); f != "" {
			t.Errorf("%v shows the key as %q:\n%s", tc.args, f, out)
		}
	}
}

// TestListKnowsTheKeysOfTheConfigFile: list reads agenttest.yaml (or
// the file AGENTTEST_CONFIG names) for the key variables it names only,
// and refuses a --name holding such a key, and a scenario name holding
// one, where it quoted the key (exit 5) or listed the name.
func TestListKnowsTheKeysOfTheConfigFile(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	dir := writeTree(t, map[string]string{
		"s.yaml":       "agent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi}]}\n",
		"named.yaml":   "agent: restaurant\nscenarios:\n  - {name: \"books " + key + "\", turns: [{say: hi}]}\n",
		"ci/conf.yaml": "targets:\n  live: {build_url: https://build.example.com, build_key: \"${env:LIVE_BUILD}\"}\n",
	})
	env := map[string]string{"LIVE_BUILD": key, "AGENTTEST_CONFIG": "ci/conf.yaml"}
	for _, args := range [][]string{{"list", "--name", key, "s.yaml"}, {"list", "named.yaml"}} {
		out := newCLI(t, dir, env, args...).expect(t, exitUsage)
		if f := keyIn(out, secret.Forms(key)); f != "" {
			t.Errorf("%q shows the key as %q:\n%s", args, f, out)
		}
	}
}

// TestPathsHoldingAKeyAreRefused: a suite file whose path holds a key
// the environment holds (a directory named by a variable) is refused
// (exit 2) by run, lint, list and gate --suite, naming the problem with
// the path masked, before anything runs or a report is written. Before,
// the console masked the path but the JSON report (paths, each file and
// case), the JUnit (file, classname) and the HTML report held it as it
// was, and the diagnostic of a scenario name holding the key named the
// file with the key in it.
func TestPathsHoldingAKeyAreRefused(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	key := s.BuildKey
	suites := "suites-" + key
	dir := writeTree(t, map[string]string{
		suites + "/r.yaml":       "suite: r\nagent: restaurant\nscenarios:\n  - {name: bye, turns: [{say: bye, expect: {ended: true}}]}\n",
		"named/r.yaml":           "suite: r\nagent: restaurant\nscenarios:\n  - {name: bye, turns: [{say: bye, expect: {ended: true}}]}\n",
		"named/" + key + ".yaml": "agent: restaurant\nscenarios:\n  - {name: \"bye " + key + "\", turns: [{say: bye}]}\n",
	})
	newCLI(t, dir, simEnv(s), "run", "--json", "all.json", "named/r.yaml").expect(t, exitOK, "status: passed")
	env := simEnv(s)
	env["GITHUB_ACTIONS"] = "true"
	reports := []string{"result.json", "junit.xml", "report.html"}
	for _, args := range [][]string{
		{"run", "-v", "--json", "result.json", "--junit", "junit.xml", "--html", "report.html", suites},
		{"run", "--json", "result.json", suites + "/r.yaml"},
		{"run", "--json", "result.json", "named"},
		{"lint", suites},
		{"list", suites},
		{"gate", "--suite", suites, "all.json"},
	} {
		c := newCLI(t, dir, env, args...)
		out := c.expect(t, exitUsage, "holds a key the environment holds")
		if f := keyIn(out, secret.Forms(key)); f != "" {
			t.Errorf("%v shows the key as %q:\n%s", args, f, out)
		}
		if args[0] != "lint" && !strings.Contains(out, "suites-"+secret.Mask+"/r.yaml:") && args[len(args)-1] != "named" {
			t.Errorf("%v does not name the file, masked:\n%s", args, out)
		}
		for _, report := range reports {
			if _, err := os.Stat(filepath.Join(dir, report)); err == nil {
				t.Errorf("%v wrote %s", args, report)
			}
		}
	}
}

// TestCompareUncheckedListShowsNoKey: the list of pairs that check
// nothing, on the console and in the HTML comparison, and the gate's
// header over a comparison, mask a key the environment holds in a case's
// name and in the paths a run was given, as a report edited (or written by another tool) may hold it
// there. It was so before this test; it pins the masking of each.
func TestCompareUncheckedListShowsNoKey(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 2})
	dir := writeTree(t, map[string]string{"s.yaml": "agent: restaurant\nscenarios:\n  - {name: says hi, turns: [{say: hi}]}\n"})
	newCLI(t, dir, simEnv(s), "run", "s.yaml", "--json", "run.json").expect(t, exitOK)
	const key = "sk-live-0123456789abcdefXYZ"
	plant := func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			if _, ok := o["unchecked"]; ok {
				o["name"] = "says hi " + key
			}
		})
	}
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "baseline.json"), plant)
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "candidate.json"), plant)
	texts := compareTexts(t, dir, key, "baseline.json")
	// The comparison as written holds the mask: the gate is given one
	// edited to hold the key again, and in the paths its runs were given.
	if err := os.WriteFile(filepath.Join(dir, "edited.json"), []byte(strings.NewReplacer(secret.Mask, key, `"s.yaml"`, `"s`+key+`.yaml"`).Replace(texts["compare.json"])), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_KEY": key, "AGENTTEST_SIM": "1"}, "gate", "edited.json")
	g.run(t)
	texts["gate"] = g.stdout.String() + g.stderr.String()
	for name, text := range texts {
		if f := keyIn(text, secret.Forms(key)); f != "" {
			t.Errorf("%s shows the key as %q\n%s", name, f, text)
		}
	}
	if !strings.Contains(texts["stdout"], "checked nothing (passes whenever the agent answers") || !strings.Contains(texts["stdout"], "says hi "+secret.Mask+" (on both sides)") ||
		!strings.Contains(texts["compare.html"], "says hi "+secret.Mask) || !strings.Contains(texts["gate"], ".yaml:3:5 says hi "+secret.Mask+"\n") ||
		!strings.Contains(texts["gate"], "paths the candidate's run was given: s"+secret.Mask+".yaml\n") {
		t.Errorf("the list of pairs that check nothing, or the gate's header, does not show the name and path, masked: the test tests nothing\n%s\n%s", texts["stdout"], texts["gate"])
	}
}

// compareTexts compares baseline with candidate.json in dir, the
// environment holding key: what the console and the comparison's JSON
// and HTML files show.
func compareTexts(t *testing.T, dir, key, baseline string) map[string]string {
	t.Helper()
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_KEY": key}, "compare", "--baseline", baseline, "--candidate", "candidate.json", "--json", "compare.json", "--html", "compare.html")
	c.run(t)
	texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
	for _, name := range []string{"compare.json", "compare.html"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v\n%s%s", err, c.stdout, c.stderr)
		}
		texts[name] = string(b)
	}
	return texts
}

// TestCommandErrorMasksTheGivenConfigsKeys: the error a command ends with
// masks the keys of the variables the config it was given (--config)
// names, not only those of ./agenttest.yaml: a key in a variable only
// other.yaml names, given by mistake as --rate, was quoted as it was.
func TestCommandErrorMasksTheGivenConfigsKeys(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	dir := writeTree(t, map[string]string{
		"s.yaml":         "agent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi}]}\n",
		"agenttest.yaml": "targets:\n  sandbox: {build_url: https://build.example.com, build_key: \"${env:SANDBOX_BUILD}\"}\n",
		"other.yaml":     "targets:\n  live: {build_url: https://build.example.com, build_key: \"${env:LIVE_BUILD}\"}\n",
	})
	env := map[string]string{"LIVE_BUILD": key}
	for _, args := range [][]string{
		{"run", "--config", "other.yaml", "--sim", "--rate", key, "s.yaml"},
		{"run", "--config=other.yaml", "--rate", key, "--sim", "s.yaml"},
		{"compare", "--config", "other.yaml", "--baseline", "sandbox", "--candidate", "pre-release", "--sim", "--confidence", key, "s.yaml"},
	} {
		out := newCLI(t, dir, env, args...).expect(t, exitUsage)
		if f := keyIn(out, secret.Forms(key)); f != "" {
			t.Errorf("%q shows the key as %q:\n%s", args, f, out)
		}
	}
}
