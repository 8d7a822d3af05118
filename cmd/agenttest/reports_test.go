package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// readEnvelopes reads a Cucumber Messages file with the messages
// library, as Cucumber's tools do.
func readEnvelopes(t *testing.T, path string) []*messages.Envelope {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var envs []*messages.Envelope
	dec := json.NewDecoder(f)
	for {
		var e messages.Envelope
		if err := dec.Decode(&e); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: envelope %d: %v", path, len(envs)+1, err)
		}
		envs = append(envs, &e)
	}
	return envs
}

// An errored case (the platform's fault) is FAILED in Cucumber Messages,
// the one status Cucumber's tools read as a broken scenario, but its
// message says first that it errored and that the platform broke, not
// the agent, and its exception is named after the error's kind. Before,
// the step said only "timeout: ... CHAT_TIMEOUT", as an agent's
// failure would. The run's end says why it did not pass.
func TestCucumberErrored(t *testing.T) {
	t.Parallel()
	ndjson := filepath.Join(t.TempDir(), "cucumber.ndjson")
	env := examplesEnv()
	env[simFlagsEnv] = "--chat-timeout 1"
	c := newCLI(t, repoRoot, env, "run", "examples/features/restaurant.feature", "--retries", "0", "--cucumber", ndjson)
	c.expect(t, exitErrored)
	const blame = "errored, not failed: the platform broke, not the agent; nothing was learnt about the agent\n"
	failed := 0
	var finished *messages.TestRunFinished
	for _, e := range readEnvelopes(t, ndjson) {
		if e.TestRunFinished != nil {
			finished = e.TestRunFinished
		}
		r := e.TestStepFinished
		if r == nil || r.TestStepResult.Status != messages.TestStepResultStatus_FAILED {
			continue
		}
		failed++
		res := r.TestStepResult
		if !strings.HasPrefix(res.Message, blame) || !strings.Contains(res.Message, "timeout: ") {
			t.Errorf("the failed step's message does not say the platform broke first:\n%s", res.Message)
		}
		if res.Exception == nil || res.Exception.Type != "agenttest.Error.timeout" || res.Exception.Message != res.Message {
			t.Errorf("exception %+v, want agenttest.Error.timeout with the message", res.Exception)
		}
	}
	if failed == 0 {
		t.Fatal("no FAILED step: the errored cases look passed or skipped")
	}
	if finished == nil || finished.Success || !strings.HasPrefix(finished.Message, "errored: no check failed, but ") {
		t.Errorf("testRunFinished %+v, want unsuccessful with the run's status and why", finished)
	}
}

// A run interrupted in GitHub Actions (a cancelled job sends SIGINT, then
// SIGTERM) says so on the job's page, before the annotations of the
// cases that finished: an ::error of its own, and the step summary's
// status with the scenarios it did not run. The signal comes when the
// first case has failed; from then on the simulator holds every request,
// so the cases after it cannot finish (as in TestInterruptWritesReports).
func TestGitHubInterruptedRun(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 1})
	env, hold := holdingBuild(t, s)
	summary := filepath.Join(t.TempDir(), "summary.md")
	env["GITHUB_ACTIONS"], env["GITHUB_STEP_SUMMARY"] = "true", summary
	c := newCLI(t, repoRoot, env, "run", "examples-failing/restaurant.yaml:22", "examples-failing/restaurant.yaml:30",
		"examples-failing/restaurant.yaml:38", "--parallel", "1")
	c.stdout.notify = func(all string) {
		if strings.Contains(all, "FAIL ") && hold.on.CompareAndSwap(false, true) {
			c.sigs <- struct{}{}
		}
	}
	out := c.expect(t, exitInterrupted)
	const why = "the run was stopped before every case finished (cancelled by a signal or a deadline): "
	first, rest, _ := strings.Cut(out[strings.Index(out, "::error"):], "\n")
	if !strings.HasPrefix(first, "::error title=agenttest run interrupted::"+why) || !strings.HasSuffix(first, " scenarios not run; the verdicts of the others stand") {
		t.Errorf("the first annotation does not say the run was interrupted: %s", first)
	}
	if !strings.Contains(rest, "::error file=examples-failing/restaurant.yaml,line=28,col=11,title=agenttest failed%3A ") {
		t.Errorf("the failed case is not annotated after it:\n%s", rest)
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "### ⏹️ agenttest: interrupted\n\n"+why) || !strings.Contains(string(b), "| failed | reply text mismatch shows a diff |") {
		t.Errorf("the step summary does not open with the interruption, then the failure:\n%s", b)
	}
}

// The JSON report of a run that was not sharded, merged alone, writes
// that run's reports again in every format: the same JSON and JUnit,
// byte for byte; the same Cucumber Messages (nanoseconds aside: the JSON
// holds microseconds); and the run's exit code. Two such reports are still refused: they are two runs. Before,
// a single report was refused as "not a shard's report".
func TestMergeRerenders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	run := newCLI(t, repoRoot, examplesEnv(), "run", "examples-failing/restaurant.yaml", "examples/features/restaurant.feature",
		"--json", p("run.json"), "--junit", p("run.xml"), "--cucumber", p("run.ndjson"))
	run.expect(t, exitFailed)
	merge := newCLI(t, repoRoot, examplesEnv(), "merge", p("run.json"),
		"--json", p("merged.json"), "--junit", p("merged.xml"), "--cucumber", p("merged.ndjson"), "--html", p("merged.html"))
	out := merge.expect(t, exitFailed, "status: failed (a check failed: the agent broke an expectation)")
	if strings.Contains(out, "::error") {
		t.Errorf("annotations outside GitHub Actions:\n%s", out)
	}
	// -v shows the passing cases' transcripts too, as run -v does.
	verbose := newCLI(t, repoRoot, examplesEnv(), "merge", "-v", p("run.json")).expect(t, exitFailed)
	if n, v := strings.Count(out, "transcript ("), strings.Count(verbose, "transcript ("); v <= n {
		t.Errorf("merge -v shows %d transcripts, merge %d", v, n)
	}
	read := func(name string, normalise *regexp.Regexp) string {
		b, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		if normalise == nil {
			return string(b)
		}
		return normalise.ReplaceAllString(string(b), "${1}N")
	}
	for _, tc := range []struct {
		run, merged string
		normalise   *regexp.Regexp
	}{
		{"run.json", "merged.json", nil},
		{"run.xml", "merged.xml", nil},
		{"run.ndjson", "merged.ndjson", regexp.MustCompile(`("nanos":)[0-9]+`)},
	} {
		if a, b := read(tc.run, tc.normalise), read(tc.merged, tc.normalise); a != b {
			t.Errorf("%s differs from %s of the run:\n%s", tc.merged, tc.run, firstDiff(a, b))
		}
	}
	if html := read("merged.html", nil); !strings.Contains(html, "reply text mismatch shows a diff") {
		t.Errorf("the HTML report lacks the run's cases")
	}

	again := filepath.Join(dir, "again.json")
	newCLI(t, repoRoot, examplesEnv(), "run", "examples/features/restaurant.feature", "--json", again).expect(t, exitOK)
	newCLI(t, repoRoot, examplesEnv(), "merge", p("run.json"), again).expect(t, exitUsage, "not a shard's report")
}

// firstDiff shows where two texts first differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, then %d", len(al), len(bl))
}

// Merged shards write Cucumber Messages, as run does: every case a test
// case of its pickle, its steps' statuses where the scenario broke
// (checkCucumber). Before, merge had no --cucumber.
func TestMergeCucumber(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	paths := []string{"examples/features/restaurant.feature", "examples-failing/restaurant.yaml"}
	var shards []string
	for k := 1; k <= 2; k++ {
		shard := filepath.Join(dir, fmt.Sprintf("shard-%d.json", k))
		args := append([]string{"run", "--shard", fmt.Sprintf("%d/2", k), "--json", shard}, paths...)
		newCLI(t, repoRoot, examplesEnv(), args...).run(t)
		shards = append(shards, shard)
	}
	ndjson, merged := filepath.Join(dir, "merged.ndjson"), filepath.Join(dir, "merged.json")
	args := append([]string{"merge", "--cucumber", ndjson, "--json", merged}, shards...)
	newCLI(t, repoRoot, examplesEnv(), args...).expect(t, exitFailed)
	res := readDoc(t, merged).Result
	if n := len(res.Files); n != 2 {
		t.Fatalf("merged %d files, want 2", n)
	}
	checkCucumber(t, ndjson, res)
}

// --cucumber of a merge reads the suite files the report names: a file
// edited since the run, whose scenario moved or was renamed, is refused
// before anything is written, naming the scenario.
func TestMergeCucumberEditedSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := bookingSuite(t)
	write := func(text string) {
		if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "suites", "booking.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(string(src))
	newCLI(t, dir, examplesEnv(), "run", "--json", "run.json").expect(t, exitOK)
	newCLI(t, dir, examplesEnv(), "merge", "run.json", "--cucumber", "ok.ndjson").expect(t, exitOK)
	for _, tc := range []struct{ name, text, want string }{
		{"moved", "# a comment\n" + string(src), `suites/booking.yaml:22:5: scenario "says goodbye" is at line 23 of suites/booking.yaml now`},
		{"renamed", strings.Replace(string(src), "says goodbye", "says bye", 1), `suites/booking.yaml:22:5: scenario "says goodbye" is not in suites/booking.yaml any more`},
	} {
		write(tc.text)
		c := newCLI(t, dir, examplesEnv(), "merge", "run.json", "--cucumber", tc.name+".ndjson", "--json", tc.name+".json")
		c.expect(t, exitUsage, tc.want, "the suite files changed since the run")
		for _, f := range []string{tc.name + ".ndjson", tc.name + ".json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s: a refused merge wrote %s", tc.name, f)
			}
		}
	}
}

// Merge writes every output run writes: each flag of `run` is either a
// report or console option, which merge has too, or one about what runs
// and how, which a merge of finished runs has no use for. A flag added to
// run must be placed here.
func TestMergeOutputsMatchRun(t *testing.T) {
	t.Parallel()
	outputs := []string{"--allow-empty", "--coverage-from", "--cucumber", "--github", "--html", "--json", "--junit", "--no-color", "-v, --verbose"}
	running := []string{"--allow-live", "--confidence", "--config", "--confirm-timeout", "--env", "--fail-fast", "--gate-alerts", "--margin", "--max-reply-bytes",
		"--name", "--parallel", "--pass-rate", "--rate", "--rate-wait", "--repeat", "--rerun-failed", "--retries", "--seed", "--shard",
		"--sim", "--sim-agents", "--tags", "--target", "--turn-timeout", "--webhook-listen", "--webhook-secret", "--webhook-url"}
	placeRunFlags(t, "merge", outputs, running)
}

// placeRunFlags holds each flag of run to cmd: one of shared is cmd's
// too, one of apart is not, and any other is new to run, to be placed.
func placeRunFlags(t *testing.T, cmd string, shared, apart []string) {
	t.Helper()
	has := helpFlags(t, cmd)
	for _, f := range helpFlags(t, "run") {
		switch {
		case slices.Contains(shared, f):
			if !slices.Contains(has, f) {
				t.Errorf("run has %s, %s does not", f, cmd)
			}
		case slices.Contains(apart, f):
			if slices.Contains(has, f) {
				t.Errorf("%s has %s, placed as a flag it has no use for", cmd, f)
			}
		default:
			t.Errorf("run's %s is new: say whether %s needs it", f, cmd)
		}
	}
}

// helpFlags are the flags cmd --help lists, -v, --verbose as one.
func helpFlags(t *testing.T, cmd string) []string {
	t.Helper()
	c := newCLI(t, "testdata/pass", nil, cmd, "--help")
	c.expect(t, exitOK)
	var out []string
	for line := range strings.SplitSeq(c.stdout.String(), "\n") {
		if strings.HasPrefix(line, "  -") {
			name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if name == "-v," {
				name = "-v, --verbose"
			}
			out = append(out, name)
		}
	}
	return out
}

// A report path that names a file the command reads is refused before
// anything is removed or run, and the file is left as it was. Before, a
// hurried "run --json suites/booking.yaml" deleted the suite at the start
// of the run, "run --rerun-failed r.json --json r.json" deleted the report
// it was about to read (then said it did not exist), and a config whose
// run section gave two reports one path lost one of them without a word.
func TestReportPathNamesAnInput(t *testing.T) {
	t.Parallel()
	suite := bookingSuite(t)
	prior := filepath.Join(t.TempDir(), "prior.json")
	newCLI(t, "testdata/pass", nil, "run", "--json", prior).expect(t, exitOK)
	report, err := os.ReadFile(prior)
	if err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name string
		// config is agenttest.yaml, none when empty.
		config string
		// files are more files of the directory, outside the selection.
		files map[string]string
		args  []string
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		files := map[string][]byte{"suites/booking.yaml": suite, "prior.json": report}
		if tc.config != "" {
			files["agenttest.yaml"] = []byte(tc.config)
		}
		for name, src := range tc.files {
			files[name] = []byte(src)
		}
		for name, data := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args := make([]string, len(tc.args))
		for i, a := range tc.args {
			args[i] = strings.ReplaceAll(a, "$DIR", dir)
		}
		newCLI(t, dir, nil, args...).expect(t, exitUsage, strings.ReplaceAll(tc.want, "$DIR", dir))
		for name, data := range files {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(got) != string(data) {
				t.Errorf("%s was removed or changed (err %v)", name, err)
			}
		}
	}
	cases := []testCase{
		{
			name: "a suite file",
			args: []string{"run", "suites/booking.yaml", "--json", "suites/booking.yaml"},
			want: "run: --json suites/booking.yaml: it is a .yaml file, not a report: the report would replace it; name another file",
		},
		{
			name: "a suite file outside the selection",
			args: []string{"run", "prior.json", "--rerun-failed", "prior.json", "--junit", "suites/booking.yaml"},
			want: "--junit suites/booking.yaml: it is a .yaml file",
		},
		{
			name:  "a CI job",
			files: map[string]string{".github/ci.yml": "on: push\n"},
			args:  []string{"run", "suites", "--junit", ".github/ci.yml"},
			want:  "run: --junit .github/ci.yml: it is a .yml file, not a report",
		},
		{
			name:  "a feature written in capitals",
			files: map[string]string{"NOTES.FEATURE": "Feature: notes\n"},
			args:  []string{"run", "suites", "--html", "NOTES.FEATURE"},
			want:  "run: --html NOTES.FEATURE: it is a .FEATURE file, not a report",
		},
		{
			// Not the config file, which none was read as: a directory.
			name: "the working directory",
			args: []string{"run", "suites", "--json", "."},
			want: "run: --json .: it is a directory; name a file in it, e.g. results.json\n",
		},
		{
			// The CI job's merge step, its --json given the artifacts'
			// directory: the example names a file of the report's kind.
			name:  "a directory of reports",
			files: map[string]string{"reports/shard-1.json": "{}"},
			args:  []string{"merge", "prior.json", "--json", "reports"},
			want:  "merge: --json reports: it is a directory; name a file in it, e.g. reports/results.json\n",
		},
		{
			name:   "the config file read by default",
			config: "run:\n  parallel: 2\n",
			args:   []string{"run", "suites", "--cucumber", "./agenttest.yaml"},
			want:   "run: --cucumber ./agenttest.yaml is the file --config reads",
		},
		{
			name: "the report --rerun-failed reads",
			args: []string{"run", "--rerun-failed", "prior.json", "--json", "./prior.json"},
			want: "run: --json ./prior.json is the file --rerun-failed reads: name another file for the report",
		},
		{
			name: "a report --coverage-from reads, named another way",
			args: []string{"run", "suites", "--coverage-from", "prior.json", "--html", "$DIR/prior.json"},
			want: "is the file --coverage-from reads",
		},
		{
			name: "the baseline report of compare",
			args: []string{"compare", "--baseline", "prior.json", "--candidate", "sandbox", "suites", "--json", "prior.json"},
			want: "compare: --json prior.json is the file --baseline reads",
		},
		{
			name: "the report merge reads",
			args: []string{"merge", "prior.json", "--json", "prior.json"},
			want: "merge: --json prior.json is the file merge reads: name another file for the report",
		},
		{
			name: "a report merge reads, named another way",
			args: []string{"merge", "prior.json", "--json", "$DIR/prior.json"},
			want: "merge: --json $DIR/prior.json is the file merge reads",
		},
		{
			name:   "two reports of the config file at one path",
			config: "run:\n  json: out/r.json\n  junit: out/r.json\n",
			args:   []string{"run", "suites"},
			want:   "run: run.json of agenttest.yaml and run.junit of agenttest.yaml both write out/r.json",
		},
		{
			name:   "a flag and the config file at one path",
			config: "run:\n  junit: out/r.xml\n",
			args:   []string{"run", "suites", "--json", "./out/r.xml"},
			want:   "run: --json and run.junit of agenttest.yaml both write out/r.xml",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// Every command that reads JSON reports says what is wrong with one that
// is malformed at its file:line:col, in JSON's terms: before, a file of
// another tool said "json: cannot unmarshal string into Go struct field
// jsonDoc.run of type report.jsonRun" (history even printed a whole Go
// struct type), a truncated one "unexpected EOF" and an empty one "EOF",
// none of them where. A file holding more after the report (two reports
// joined) is refused where the more starts: history refused it, the
// others read the first report as if it were the whole file.
func TestMalformedJSONReports(t *testing.T) {
	t.Parallel()
	commands := [][]string{
		{"gate"}, {"merge"}, {"history"}, {"coverage"},
		{"run", "--rerun-failed"},
		{"compare", "--candidate", "sandbox", "--baseline"},
		{"run", "--coverage-from"},
	}
	type testCase struct {
		name, data string
		// want follows "agenttest: CMD: [FLAG ]bad.json".
		want string
		// notRerun leaves out run --rerun-failed, and notHistory
		// history, which read only the members they need (and check
		// those by the rules of the others).
		notRerun, notHistory bool
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range commands {
			if tc.notRerun && cmd[len(cmd)-1] == "--rerun-failed" || tc.notHistory && cmd[0] == "history" {
				continue
			}
			c := newCLI(t, dir, nil, append(cmd, "bad.json")...)
			out := c.expect(t, exitUsage, "bad.json"+tc.want)
			// A file's content is no matter of usage: the readers of
			// reports alone say nothing of their help (run and compare
			// read a report for a flag, and point at the flag's help).
			if len(cmd) == 1 && strings.Contains(out, "agenttest help") {
				t.Errorf("%s: a bad report points at the command's help:\n%s", cmd[0], out)
			}
			for _, bad := range []string{"Go struct", "Go value", "jsonDoc", "report.", "EOF"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s: output shows %q:\n%s", cmd[0], bad, out)
				}
			}
		}
	}
	const head = `{"schema": "agenttest/result/v1", `
	for _, tc := range []testCase{
		{name: "empty", data: "\n", want: ": not a JSON report: the file is empty"},
		{name: "truncated", data: head + "\n  \"files\": [{\"path\": \"a", want: ":2:24: not a JSON report: the file ends inside a JSON value (cut short?)"},
		{name: "two reports joined", data: `{"schema": "agenttest/result/v1"}` + "\n" + `{"schema": "agenttest/result/v1"}` + "\n",
			want: ":2:1: not a JSON report: more follows the end of the report (two files joined?)"},
		{name: "a stray brace at the end", data: `{"schema": "agenttest/result/v1"}` + "\n}", want: ":2:1: not a JSON report: more follows the end of the report (two files joined?)"},
		{name: "Cucumber Messages", data: `{"meta": {"protocolVersion": "21.0.1"}}` + "\n" + `{"source": {"uri": "a.feature"}}` + "\n",
			want: `: not an agenttest JSON report (schema "", want "agenttest/result/v1")`},
		{name: "a bad value at the very end", data: head + `"run": x`, want: ":1:42: not a JSON report: invalid character 'x' looking for beginning of value"},
		{name: "not JSON", data: "module x\n", want: ":1:1: not a JSON report: invalid character 'm' looking for beginning of value"},
		// The other reports of the run, from a glob of its artifacts.
		{name: "the JUnit report", data: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n",
			want: ":1:1: not a JSON report: the file is XML or HTML (the JUnit or the HTML report?); give the report of --json"},
		{name: "the HTML report", data: "\n<!DOCTYPE html>\n<html>\n",
			want: ":2:1: not a JSON report: the file is XML or HTML (the JUnit or the HTML report?); give the report of --json"},
		{name: "another tool's array", data: `[{"file": "x"}]`, want: ":1:1: not a JSON report: the file holds an array, where an agenttest report is an object"},
		{name: "a schema that is no string", data: `{"schema": 1}`, want: ":1:12: not a JSON report: schema is a number, where an agenttest report has a string"},
		{name: "a member of the wrong type", data: head + "\n\"files\": [{\"cases\": [{\"status\": true}]}]}", want: ":2:33: not a JSON report: files.cases.status is a boolean, where an agenttest report has a string"},
		{name: "a string for an object", data: head + `"run": "x\"y"}`, want: ":1:42: not a JSON report: run is a string, where an agenttest report has an object",
			notRerun: true},
		{name: "a fraction for a count", data: head + `"shard": {"index": 1.5}}`, want: ":1:54: not a JSON report: shard.index is a number, where an agenttest report has an integer",
			notRerun: true},
		// Values that decode but that no run writes: a negative duration,
		// and one past what a time.Duration holds, which wrapped around
		// (gate took a run that ended centuries ahead for one that ended
		// before it); a run that states no verdict (gate refused it as a
		// run that "did not pass: its status is ", exit 1); a null where a
		// case was. Before, the durations were read as valid, the run was
		// read as a run, and the null case was refused as "case : unknown
		// status" with no place.
		{name: "a negative duration", data: head + `"run": {"status": "passed", "duration_ms": -5}}`,
			want: ":1:78: not a JSON report: run.duration_ms: -5 is a negative duration", notRerun: true, notHistory: true},
		{name: "a duration no clock measures", data: head + "\n" + `"run": {"duration_ms": 1e16}}`,
			want: ":2:24: not a JSON report: run.duration_ms: 1e+16 milliseconds is longer than a duration can be (about 292 years)", notRerun: true, notHistory: true},
		// history and --rerun-failed check what they read by the same
		// rules: before, history read a run without a status, a case
		// of an unknown status or a null case as a case that did not
		// run, and a start that is no time as none (and still said
		// "oldest first"); --rerun-failed left such a case out.
		{name: "no run status", data: head + "\n" + `"run": {"started": "2026-03-14T09:00:00Z"}}`,
			want: `:2:8: not a JSON report: run.status: unknown run status "" (one of passed, failed, errored, interrupted, empty)`, notRerun: true},
		{name: "a null for a case", data: head + "\n" + `"files": [{"path": "a.yaml", "cases": [null]}]}`,
			want: `:2:40: not a JSON report: files[0].cases[0].status: unknown status ""`},
		{name: "a case status no run writes", data: head + `"run": {"status": "failed"},` + "\n" + `"files": [{"path": "a.yaml", "cases": [{"name": "c", "status": "great"}]}]}`,
			want: `:2:64: not a JSON report: files[0].cases[0].status: unknown status "great"`},
		{name: "an attempt status no run writes", data: head + `"run": {"status": "failed"},` + "\n" + `"checks": [{"name": "c", "status": "failed", "attempts": [{"status": "bad"}]}]}`,
			want: `:2:70: not a JSON report: checks[0].attempts[0].status: unknown status "bad"`, notRerun: true},
		{name: "a start that is no time", data: head + "\n" + `"run": {"started": "yesterday", "status": "passed"}}`,
			want: `:2:20: not a JSON report: run.started: "yesterday" is not an RFC 3339 time`, notRerun: true},
		// A report saved with a byte order mark, or as UTF-16, is read
		// as the text it holds: a bad value in it is at the line and
		// column an editor shows.
		{name: "a bad value after a byte order mark", data: "\ufeff" + head + "\n" + `"files": [{"path": "a.yaml", "cases": [null]}]}`,
			want: `:2:40: not a JSON report: files[0].cases[0].status: unknown status ""`},
		{name: "a bad value in UTF-16", data: utf16LE("\ufeff" + head + "\n" + `"files": [{"path": "a.yaml", "cases": [null]}]}`),
			want: `:2:40: not a JSON report: files[0].cases[0].status: unknown status ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// utf16LE encodes s as UTF-16, little-endian: what PowerShell's > and
// Out-File write.
func utf16LE(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// TestJSONReportsWithByteOrderMark: a report of a real run saved again
// with a byte order mark (Notepad's "UTF-8 with BOM") or as UTF-16
// (PowerShell's > and Out-File) reads as the report it holds in every
// command that reads reports, as a suite file does: before, each refused
// it at 1:1 with "invalid character 'ï' looking for beginning of value".
func TestJSONReportsWithByteOrderMark(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/rerun.yaml": rerunSuite})
	newCLI(t, dir, nil, "run", "suites", "--json", "plain.json").expect(t, exitFailed)
	plain, err := os.ReadFile(filepath.Join(dir, "plain.json"))
	if err != nil {
		t.Fatal(err)
	}
	commands := [][]string{
		{"gate", "r.json"},
		{"merge", "r.json"},
		{"history", "r.json"},
		{"coverage", "r.json"},
		{"run", "--rerun-failed", "r.json"},
		{"compare", "--candidate", "sandbox", "--baseline", "r.json"},
		{"run", "--coverage-from", "r.json", "suites"},
	}
	// want is each command's exit code, and its output where it depends
	// on the report alone, with the report as written.
	type outcome struct {
		code int
		out  string
	}
	read := func(args []string) outcome {
		c := newCLI(t, dir, nil, args...)
		code := c.run(t)
		out := c.stdout.String()
		if args[0] == "gate" || args[0] == "run" || args[0] == "compare" {
			out = "" // times and durations of their own
		}
		return outcome{code, out}
	}
	var want []outcome
	for _, args := range commands {
		args = slices.Clone(args)
		args[slices.Index(args, "r.json")] = "plain.json"
		w := read(args)
		if w.code == exitUsage {
			t.Fatalf("%v: exit %d with the report as written", args, w.code)
		}
		want = append(want, w)
	}
	for _, enc := range []struct {
		name string
		data string
	}{
		{"UTF-8 with a byte order mark", "\ufeff" + string(plain)},
		{"UTF-16LE", utf16LE("\ufeff" + string(plain))},
		{"UTF-16BE", func() string {
			le := []byte(utf16LE("\ufeff" + string(plain)))
			for i := 0; i+1 < len(le); i += 2 {
				le[i], le[i+1] = le[i+1], le[i]
			}
			return string(le)
		}()},
	} {
		// One file, r.json, rewritten per encoding: its name is in
		// the output.
		if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte(enc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, args := range commands {
			got := read(args)
			if got.code != want[i].code || strings.ReplaceAll(got.out, "r.json", "plain.json") != want[i].out {
				t.Errorf("%s: %v: exit %d, want %d as with the report as written; output:\n%s\nwant:\n%s", enc.name, args, got.code, want[i].code, got.out, want[i].out)
			}
		}
	}
}

// TestConfigWithByteOrderMark: agenttest.yaml saved with a byte order
// mark or as UTF-16 is read as the text it holds, as a suite file is:
// yaml.v3 decodes both forms by itself, but the problems of the file
// were placed, explained and echoed from its raw bytes (a UTF-16 file's
// unclosed [ at "2" with no column nor hint, its misindented key at a
// line past its end).
func TestConfigWithByteOrderMark(t *testing.T) {
	t.Parallel()
	for _, cfg := range []string{
		"targets:\n  a:\n    env: [sandbox\n",
		"targets:\n  a:\n    env: sandbox\n   b: 1\n",
		"\ttargets: {}\n",
	} {
		lint := func(data string) (int, string) {
			dir := writeTree(t, map[string]string{"agenttest.yaml": data, "suites/rerun.yaml": rerunSuite})
			c := newCLI(t, dir, nil, "lint", "suites")
			code := c.run(t)
			return code, c.stdout.String() + c.stderr.String()
		}
		wantCode, want := lint(cfg)
		if wantCode != exitUsage || !strings.Contains(want, "agenttest.yaml:") {
			t.Fatalf("%q as written: exit %d\n%s", cfg, wantCode, want)
		}
		for name, data := range map[string]string{
			"UTF-8 with a byte order mark": "\ufeff" + cfg,
			"UTF-16LE":                     utf16LE("\ufeff" + cfg),
		} {
			if code, out := lint(data); code != wantCode || out != want {
				t.Errorf("%q, %s: exit %d\n%s\nwant exit %d as written:\n%s", cfg, name, code, out, wantCode, want)
			}
		}
	}
}

// TestReportInputIsADirectory: the directory a CI job downloaded its
// reports to, named where a JSON report is read, is said to be one, with
// the reports it holds. Before: "reports: read: is a directory".
func TestReportInputIsADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"reports/shard-1.json", "reports/shard-2.json", "reports/junit.xml", "empty/notes.txt",
		"many/1.json", "many/2.json", "many/3.json", "many/4.json", "many/5.json", "many/6.JSON"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const holds = ": it is a directory, not a JSON report; it holds reports/shard-1.json, reports/shard-2.json\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "reports"}, "agenttest: gate: reports" + holds},
		{[]string{"merge", "reports/"}, "agenttest: merge: reports/" + holds},
		{[]string{"compare", "--baseline", "reports", "--candidate", "pre-release", "."}, "agenttest: compare: --baseline reports" + holds},
		{[]string{"gate", "empty"}, "agenttest: gate: empty: it is a directory, not a JSON report, and holds no .json file\n"},
		{[]string{"gate", "many"}, "agenttest: gate: many: it is a directory, not a JSON report; it holds many/1.json, many/2.json, many/3.json, many/4.json, and 2 more\n"},
	} {
		newCLI(t, dir, nil, tc.args...).expect(t, exitUsage, tc.want)
	}
}
