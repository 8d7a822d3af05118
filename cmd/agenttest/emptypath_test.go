package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAnEmptyPathFlagIsRefused: a flag that names a file, given an empty
// value on the command line (--junit=$REPORT_PATH with the variable unset
// in a CI job), is a usage error naming the flag and saying what leaving
// it out does. Before, --junit= wrote no report, silently, and overrode
// the config file's run.junit: the job's JUnit upload found nothing, or
// a stale file.
func TestAnEmptyPathFlagIsRefused(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"s.yaml":         "agent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi}]}\n",
		"agenttest.yaml": "run:\n  junit: junit.xml\n  json: result.json\n  html: report.html\n",
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--sim", "--junit=", "s.yaml"}, "run: --junit is empty: name a file, or leave --junit out to write the report the config file's run.junit names, or none"},
		{[]string{"run", "--sim", "--junit", "", "s.yaml"}, "run: --junit is empty"},
		{[]string{"run", "--sim", "-json=", "s.yaml"}, "run: -json is empty: name a file, or leave -json out to write the report the config file's run.json names, or none"},
		{[]string{"run", "--sim", "--html=", "s.yaml"}, "run: --html is empty: name a file, or leave --html out"},
		{[]string{"run", "--sim", "--cucumber=", "s.yaml"}, "run: --cucumber is empty: name a file, or leave --cucumber out to write no report"},
		{[]string{"run", "--sim", "--config=", "s.yaml"}, "run: --config is empty: name a file, or leave --config out to read ./agenttest.yaml when present"},
		{[]string{"run", "--sim", "--rerun-failed=", "s.yaml"}, "run: --rerun-failed is empty: name a file, or leave --rerun-failed out to run every selected scenario"},
		{[]string{"run", "--sim-agents=", "s.yaml"}, "run: --sim-agents is empty: name a file, or leave --sim-agents out to serve the example agents"},
		{[]string{"list", "--rerun-failed=", "s.yaml"}, "list: --rerun-failed is empty: name a file, or leave --rerun-failed out to list every selected scenario"},
		{[]string{"lint", "--config=", "s.yaml"}, "lint: --config is empty"},
		{[]string{"gate", "--config=", "result.json"}, "gate: --config is empty"},
		{[]string{"webhooks", "listen", "--config="}, "webhooks: --config is empty"},
		{[]string{"compare", "--baseline", "sandbox", "--candidate", "target:sim", "--sim", "--json=", "s.yaml"}, "compare: --json is empty: name a file, or leave --json out to write no report"},
		{[]string{"compare", "--baseline", "sandbox", "--candidate", "target:sim", "--sim", "--html=", "s.yaml"}, "compare: --html is empty"},
		{[]string{"compare", "--config=", "s.yaml"}, "compare: --config is empty"},
		{[]string{"compare", "--sim-agents=", "s.yaml"}, "compare: --sim-agents is empty"},
		{[]string{"merge", "--junit=", "result.json"}, "merge: --junit is empty: name a file, or leave --junit out to write no report"},
		{[]string{"merge", "--json=", "result.json"}, "merge: --json is empty"},
		{[]string{"merge", "--html=", "result.json"}, "merge: --html is empty"},
		{[]string{"merge", "--cucumber=", "result.json"}, "merge: --cucumber is empty"},
		{[]string{"sim", "--agents="}, "sim: --agents is empty: name a file, or leave --agents out to serve the example agents"},
	} {
		newCLI(t, dir, nil, tc.args...).expect(t, exitUsage, tc.want)
		for _, report := range []string{"junit.xml", "result.json", "report.html"} {
			if _, err := os.Stat(filepath.Join(dir, report)); err == nil {
				t.Fatalf("%q wrote %s", tc.args, report)
			}
		}
	}
}

// TestAnEmptyReportVariableIsUnset: AGENTTEST_JUNIT= (a CI variable
// passed through empty) is no value, as an empty variable conventionally
// is: the config file's run.junit still names the report.
func TestAnEmptyReportVariableIsUnset(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{
		"s.yaml":         "agent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi}]}\n",
		"agenttest.yaml": "run:\n  junit: junit.xml\n  json: result.json\n",
	})
	env := map[string]string{"AGENTTEST_JUNIT": "", "AGENTTEST_JSON": "", "AGENTTEST_CONFIG": ""}
	newCLI(t, dir, env, "run", "--sim", "s.yaml").expect(t, exitOK)
	for _, report := range []string{"junit.xml", "result.json"} {
		if _, err := os.Stat(filepath.Join(dir, report)); err != nil {
			t.Errorf("the config's report %s is not written: %v", report, err)
		}
	}
}
