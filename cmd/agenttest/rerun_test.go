package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// rerunSuite has an outline whose rows have bracketed names, one of them
// failing, a scenario that fails and one that passes.
const rerunSuite = `suite: rerun
agent: restaurant
scenarios:
  - name: greets
    examples:
      - {day: friday, word: Welcome}
      - {day: monday, word: Bonjour}
      - {day: sunday, word: Welcome}
    greeting: {response: {contains: "${word}"}}
  - name: fails on purpose
    greeting: {response: {contains: Bonjour}}
  - name: passes
    greeting: {response: {contains: Welcome}}
`

// caseLine is a result line of the console: status, id, name.
var caseLine = regexp.MustCompile(`(?m)^(PASS|FAIL|ERROR|SKIP) (\S+:\d+) (.*?)(?: \(.*\))?$`)

// ran returns the ids and names of the cases a run printed, by status.
func ran(out string) map[string][]string {
	m := map[string][]string{}
	for _, g := range caseLine.FindAllStringSubmatch(out, -1) {
		m[g[1]] = append(m[g[1]], g[2]+" "+g[3])
	}
	for _, v := range m {
		slices.Sort(v)
	}
	return m
}

// TestRerunByPrintedID: every id a run prints runs that case alone when
// passed back to run; the id of an outline's line runs all its rows.
func TestRerunByPrintedID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rerun.yaml"), []byte(rerunSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	first := newCLI(t, dir, nil, "run")
	if code := first.run(t); code != exitFailed {
		t.Fatalf("exit %d\n%s%s", code, first.stdout, first.stderr)
	}
	all := ran(first.stdout.String())
	if len(all["FAIL"]) != 2 || len(all["PASS"]) != 3 {
		t.Fatalf("cases %v", all)
	}
	for status, cases := range all {
		for _, c := range cases {
			id, name, _ := strings.Cut(c, " ")
			t.Run(id, func(t *testing.T) {
				again := newCLI(t, dir, nil, "run", id)
				code := again.run(t)
				want := map[string]int{"PASS": exitOK, "FAIL": exitFailed}[status]
				if code != want {
					t.Fatalf("exit %d, want %d\n%s%s", code, want, again.stdout, again.stderr)
				}
				if got := ran(again.stdout.String()); len(got[status]) != 1 || got[status][0] != id+" "+name || len(got)+len(got[status]) != 2 {
					t.Errorf("run %s ran %v, want only %s", id, got, name)
				}
			})
		}
	}
	outline := newCLI(t, dir, nil, "run", "rerun.yaml:4")
	if code := outline.run(t); code != exitFailed {
		t.Fatalf("outline: exit %d\n%s%s", code, outline.stdout, outline.stderr)
	}
	if got := ran(outline.stdout.String()); len(got["PASS"]) != 2 || len(got["FAIL"]) != 1 || !strings.Contains(got["FAIL"][0], "greets [day=monday word=Bonjour]") {
		t.Errorf("the outline's line ran %v, want its three rows", got)
	}
	// A line inside a scenario selects it: the examples: of the outline
	// all its rows, and the position a failure prints (file:line:col of
	// the broken check) the scenario that failed.
	inside := newCLI(t, dir, nil, "run", "rerun.yaml:5")
	if code := inside.run(t); code != exitFailed {
		t.Fatalf("a line inside the outline: exit %d\n%s%s", code, inside.stdout, inside.stderr)
	}
	if got := ran(inside.stdout.String()); len(got["PASS"]) != 2 || len(got["FAIL"]) != 1 {
		t.Errorf("a line inside the outline ran %v, want its three rows", got)
	}
	at := regexp.MustCompile(`(?m)^    (rerun\.yaml:11:\d+): greeting: `).FindStringSubmatch(first.stdout.String())
	if at == nil {
		t.Fatalf("no failure of the scenario at line 10 is printed at line 11:\n%s", first.stdout)
	}
	check := newCLI(t, dir, nil, "run", at[1])
	if code := check.run(t); code != exitFailed {
		t.Fatalf("%s: exit %d\n%s%s", at[1], code, check.stdout, check.stderr)
	}
	if got := ran(check.stdout.String()); len(got) != 1 || len(got["FAIL"]) != 1 || got["FAIL"][0] != "rerun.yaml:10 fails on purpose" {
		t.Errorf("the failure's position %s ran %v, want only the scenario that failed", at[1], got)
	}
	nowhere := newCLI(t, dir, nil, "run", "rerun.yaml:3")
	if code := nowhere.run(t); code != exitUsage {
		t.Fatalf("a line with no scenario: exit %d\n%s", code, nowhere.stderr)
	}
	if want := "agenttest: run: rerun.yaml:3: no scenario is written at line 3 (scenarios are written at lines 4, 6, 7, 8, 10, 12)"; !strings.Contains(nowhere.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, nowhere.stderr)
	}
}

// TestRerunFailed runs again what a real previous report says failed,
// and says what cannot be matched once the suite changed.
func TestRerunFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	suite := filepath.Join(dir, "suites", "rerun.yaml")
	if err := os.MkdirAll(filepath.Dir(suite), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(suite, []byte(rerunSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	first := newCLI(t, dir, nil, "run", "suites", "--json", "first.json")
	if code := first.run(t); code != exitFailed {
		t.Fatalf("exit %d\n%s%s", code, first.stdout, first.stderr)
	}
	failed := ran(first.stdout.String())["FAIL"]

	again := newCLI(t, dir, nil, "run", "--rerun-failed", "first.json", "--json", "again.json")
	if code := again.run(t); code != exitFailed {
		t.Fatalf("rerun: exit %d\n%s%s", code, again.stdout, again.stderr)
	}
	// Its report says it reran another's failures, so that the gate
	// cannot take it for a run of the whole selection.
	rep := readDoc(t, filepath.Join(dir, "again.json"))
	if rr := rep.Result.Rerun; rr == nil || rr.Of != "first.json" || rr.Failed != len(failed) {
		t.Errorf("report's rerun %+v, want of first.json, %d failed", rr, len(failed))
	}
	if got := ran(again.stdout.String()); !slices.Equal(got["FAIL"], failed) || len(got) != 1 {
		t.Errorf("rerun ran %v, want exactly the failed %v", got, failed)
	}

	// The suite changes: one failing scenario is renamed, and the report
	// of another selection (a path given) still matches what it can.
	changed := strings.Replace(rerunSuite, "name: fails on purpose", "name: fails under a new name", 1)
	if err := os.WriteFile(suite, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	partial := newCLI(t, dir, nil, "run", "suites", "--rerun-failed", "first.json")
	if code := partial.run(t); code != exitFailed {
		t.Fatalf("partial rerun: exit %d\n%s%s", code, partial.stdout, partial.stderr)
	}
	if got := ran(partial.stdout.String()); len(got["FAIL"]) != 1 || !strings.Contains(got["FAIL"][0], "greets [day=monday word=Bonjour]") || len(got) != 1 {
		t.Errorf("partial rerun ran %v", got)
	}
	if want := `agenttest: --rerun-failed first.json: suites/rerun.yaml: no scenario named "fails on purpose"`; !strings.Contains(partial.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, partial.stderr)
	}

	// A report without failures runs nothing: nothing was tested.
	passing := newCLI(t, dir, nil, "run", "suites", "--name", "passes", "--json", "passing.json")
	if code := passing.run(t); code != exitOK {
		t.Fatalf("exit %d\n%s", code, passing.stderr)
	}
	nothing := newCLI(t, dir, nil, "run", "--rerun-failed", "passing.json")
	if code := nothing.run(t); code != exitEmpty {
		t.Fatalf("rerun of a passing report: exit %d\n%s%s", code, nothing.stdout, nothing.stderr)
	}
	// It says so of the report: nothing under the working directory was
	// looked at, whatever suites are there.
	for _, want := range []string{
		"--rerun-failed passing.json: the report lists no failed or errored case",
		"agenttest: nothing to test: --rerun-failed passing.json: no case of the report can run again\n",
	} {
		if !strings.Contains(nothing.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, nothing.stderr)
		}
	}

	// Under a path, the report is the filter that selected nothing.
	newCLI(t, dir, nil, "run", "suites", "--rerun-failed", "passing.json").
		expect(t, exitEmpty, "agenttest: nothing to test: no scenario of the 5 in 1 suite file matches --rerun-failed passing.json\n")

	// Under a path that holds no suite, the failures of the report are
	// not the reason: the path is.
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := newCLI(t, dir, nil, "run", "empty", "--rerun-failed", "first.json")
	elsewhere.expect(t, exitEmpty, "agenttest: nothing to test: no suite file under empty (")
}

// TestRerunFailedUnderFewerPaths: a rerun given a path that leaves out
// some of the report's files runs the failures under that path, and says
// of the others that the paths left them out, not that their scenarios
// were renamed or removed: they are still there. A path naming a file of
// the report otherwise (absolute, through ../) reruns its failures.
func TestRerunFailedUnderFewerPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "suites"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.yaml", "b.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, "suites", name), []byte(rerunSuite), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	first := newCLI(t, dir, nil, "run", "suites", "--json", "first.json")
	if code := first.run(t); code != exitFailed {
		t.Fatalf("exit %d\n%s%s", code, first.stdout, first.stderr)
	}
	again := newCLI(t, dir, nil, "run", "suites/a.yaml", "--rerun-failed", "first.json")
	if code := again.run(t); code != exitFailed {
		t.Fatalf("rerun: exit %d\n%s%s", code, again.stdout, again.stderr)
	}
	if got := ran(again.stdout.String()); len(got["FAIL"]) != 2 || len(got) != 1 || !strings.HasPrefix(got["FAIL"][0], "suites/a.yaml:") || !strings.HasPrefix(got["FAIL"][1], "suites/a.yaml:") {
		t.Errorf("rerun ran %v, want the 2 failures of suites/a.yaml", got)
	}
	stderr := again.stderr.String()
	if strings.Contains(stderr, "no scenario named") {
		t.Errorf("stderr says a scenario that is still there was renamed or removed:\n%s", stderr)
	}
	for _, want := range []string{
		`agenttest: --rerun-failed first.json: suites/b.yaml: not under the paths given; "fails on purpose" is not run again`,
		`agenttest: --rerun-failed first.json: suites/b.yaml: not under the paths given; "greets [day=monday word=Bonjour]" is not run again`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// The same file named otherwise than the report names it (absolute,
	// or through ../) is the same file: its failures run again.
	for _, path := range []string{filepath.Join(dir, "suites", "a.yaml"), "../" + filepath.Base(dir) + "/suites/a.yaml"} {
		other := newCLI(t, dir, nil, "run", path, "--rerun-failed", "first.json")
		if code := other.run(t); code != exitFailed {
			t.Fatalf("rerun of %s: exit %d\n%s%s", path, code, other.stdout, other.stderr)
		}
		if got := ran(other.stdout.String()); len(got["FAIL"]) != 2 || len(got) != 1 {
			t.Errorf("rerun of %s ran %v, want the 2 failures of suites/a.yaml\n%s", path, got, other.stderr)
		}
		if stderr := other.stderr.String(); strings.Contains(stderr, "a.yaml: ") {
			t.Errorf("rerun of %s says a case of suites/a.yaml cannot run again:\n%s", path, stderr)
		}
	}
}

// TestNameLiteralAndRegex: --name is literal text, brackets included, so
// a printed example-row name selects that row; /.../ is a regex.
func TestNameLiteralAndRegex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rerun.yaml"), []byte(rerunSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	type testCase struct {
		name string
		want []string
	}
	for _, tc := range []testCase{
		{"greets [day=friday word=Welcome]", []string{"rerun.yaml:6  greets [day=friday word=Welcome]"}},
		{"[day=", []string{"rerun.yaml:6  greets [day=friday word=Welcome]", "rerun.yaml:7  greets [day=monday word=Bonjour]", "rerun.yaml:8  greets [day=sunday word=Welcome]"}},
		{"/day=(friday|sunday)/", []string{"rerun.yaml:6  greets [day=friday word=Welcome]", "rerun.yaml:8  greets [day=sunday word=Welcome]"}},
		{"/^pa/", []string{"rerun.yaml:12  passes"}},
		{"^pa", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t, dir, nil, "list", "--name", tc.name)
			want := exitOK
			if tc.want == nil {
				want = exitEmpty // nothing selected
			}
			if code := c.run(t); code != want {
				t.Fatalf("exit %d, want %d: %s", code, want, c.stderr)
			}
			var got []string
			for line := range strings.SplitSeq(strings.TrimSpace(c.stdout.String()), "\n") {
				if line != "" {
					got = append(got, line)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("--name %q listed\n%q\nwant\n%q", tc.name, got, tc.want)
			}
		})
	}
}

// TestRerunFailedNamesNoSuite: a report whose case to run again names a
// file that is not a suite (a hand-edited or hostile report: no run
// writes one) is refused at the entry that names it, with the report's
// name, its line and column, and the case. Before, with no path given,
// the file was loaded as if named on the command line ("find suites in
// notes.txt: not a suite file", nothing said the report named it), and
// a directory (or no file at all: ".") was walked for suites; with a
// path given, the case was "not under the paths given".
func TestRerunFailedNamesNoSuite(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/rerun.yaml": rerunSuite, "notes.txt": "not a suite\n"})
	type testCase struct {
		name string
		// entry is the report's one file entry.
		entry string
		want  string
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		doc := `{"schema": "agenttest/result/v1", "run": {"status": "failed"},` + "\n" + `"files": [` + tc.entry + `]}`
		name := strings.ReplaceAll(tc.name, " ", "-") + ".json"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"run", "--rerun-failed", name},
			{"run", "--rerun-failed", name, "suites"},
			{"list", "--rerun-failed", name},
		} {
			c := newCLI(t, dir, nil, args...)
			out := c.expect(t, exitUsage, "agenttest: "+args[0]+": --rerun-failed "+name+tc.want)
			if strings.Contains(out, "find suites") {
				t.Errorf("%v: the report's file was loaded:\n%s", args, out)
			}
			// Each file is named once, however many cases name it.
			if n := strings.Count(out, "is not a suite file"); n != 1 {
				t.Errorf("%v: %d files refused, want 1:\n%s", args, n, out)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "a file", entry: `{"path": "suites/rerun.yaml", "cases": [{"name": "passes", "status": "passed"}, {"name": "fails", "pos": {"file": "notes.txt"}, "status": "failed"}]}`,
			want: `:2:125: files[0].cases[1].pos.file: "notes.txt", the file of the case "fails", is not a suite file (want .yaml, .yml or .feature)`},
		{name: "a directory", entry: `{"path": "suites/rerun.yaml", "cases": [{"name": "fails", "pos": {"file": "suites"}, "status": "errored"}]}`,
			want: `:2:85: files[0].cases[0].pos.file: "suites", the file of the case "fails", is not a suite file (want .yaml, .yml or .feature)`},
		{name: "the path of the entry", entry: `{"path": "notes.txt", "cases": [{"name": "fails", "status": "failed"}]}`,
			want: `:2:20: files[0].path: "notes.txt", the file of the case "fails", is not a suite file (want .yaml, .yml or .feature)`},
		{name: "the file of two cases", entry: `{"path": "notes.txt", "cases": [{"name": "fails", "status": "failed"}, {"name": "errs", "status": "errored"}]}`,
			want: `:2:20: files[0].path: "notes.txt", the file of the case "fails", is not a suite file (want .yaml, .yml or .feature)`},
		{name: "no file", entry: `{"cases": [{"name": "cut off", "status": "pending"}]}`,
			want: `:2:11: files[0].path: "", the file of the case "cut off", is not a suite file (want .yaml, .yml or .feature)`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestRerunFailedNotesEscaped: the notes of --rerun-failed quote the
// report (a case's file and name), which is anyone's text: a terminal
// escape in it reaches stderr escaped, as in an error. Before, it reached
// the terminal raw.
func TestRerunFailedNotesEscaped(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"suites/rerun.yaml": rerunSuite})
	doc := `{"schema": "agenttest/result/v1", "run": {"status": "failed"}, "files": [
		{"path": "suites/gone\u001b[2J.yaml", "cases": [{"name": "a\u001b[31m", "status": "failed"}]},
		{"path": "suites/rerun.yaml", "cases": [{"name": "renamed\u202e", "status": "failed"}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "r.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t, dir, nil, "run", "--rerun-failed", "r.json", "suites")
	out := c.expect(t, exitEmpty,
		`agenttest: --rerun-failed r.json: suites/gone\x1b[2J.yaml: the file is gone; "a\x1b[31m" cannot run again`,
		`agenttest: --rerun-failed r.json: suites/rerun.yaml: no scenario named "renamed\u202e"`)
	if i := strings.IndexAny(out, "\x1b\u202e"); i >= 0 {
		t.Errorf("a control character reaches the terminal: %q", out[max(0, i-40):min(len(out), i+40)])
	}
}
