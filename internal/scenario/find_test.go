package scenario

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const okSuite = "scenarios: [{name: a, turns: [{say: hi}]}]\n"

func testFS() fstest.MapFS {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	return fstest.MapFS{
		"suites/booking.yaml":           file(okSuite),
		"suites/nested/refund.yml":      file(okSuite),
		"suites/nested/login.feature":   file("Feature: x\n"),
		"suites/notes.md":               file("# notes"),
		"suites/.hidden/x.yaml":         file(okSuite),
		"suites/testdata/x.yaml":        file(okSuite),
		"suites/vendor/x.yaml":          file(okSuite),
		"suites/node_modules/x.yaml":    file(okSuite),
		"suites/.dotfile.yaml":          file(okSuite),
		"suites/broken.yaml":            file("scenarios:\n  - name: a\n\tturns: []\n"),
		"examples/agents/agent.yaml":    file("name: restaurant\nnodes: []\n"),
		"agenttest.yaml":                file("target: sim\n"),
		"features/checkout.feature":     file("Feature: y\n"),
		".github/workflows/ci.yaml":     file("jobs: {}\n"),
		"suites/bad.yaml":               file("scenarios: [{name: a}]\n"),
		"suites/list/not-a-suite.yaml":  file("- a\n- b\n"),
		"suites/list/scenarios-ish.txt": file(okSuite),
	}
}

// taken lists the files LoadAll took for suites (those it loaded and those
// whose problems it reported), sorted, and the problems of the paths.
func taken(fsys fs.FS, paths []string) (files []string, pathErrs string) {
	l := LoadAll(fsys, paths)
	for _, s := range l.Suites {
		files = append(files, s.Path)
	}
	var errs []string
	for _, d := range l.Diags {
		if d.Pos.File == "" {
			errs = append(errs, d.Message)
		} else if !slices.Contains(files, d.Pos.File) {
			files = append(files, d.Pos.File)
		}
	}
	slices.Sort(files)
	return files, strings.Join(errs, "\n")
}

// TestFind: which files a directory walk and the named paths take for
// suites, and what a path that cannot be read says.
func TestFind(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name  string
		paths []string
		want  []string
		err   string
	}
	run := func(t *testing.T, tc testCase) {
		got, err := taken(testFS(), tc.paths)
		if tc.err != "" {
			if !strings.Contains(err, tc.err) {
				t.Fatalf("path errors %q, want one containing %q", err, tc.err)
			}
		} else if err != "" {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %q\nwant %q", got, tc.want)
		}
	}
	all := []string{
		"features/checkout.feature", "suites/bad.yaml", "suites/booking.yaml",
		"suites/broken.yaml", "suites/nested/login.feature", "suites/nested/refund.yml",
	}
	testCases := []testCase{
		{name: "whole tree", paths: []string{"."}, want: all},
		{name: "no paths means the current directory", paths: nil, want: all},
		{name: "dot slash and trailing slash", paths: []string{"./suites/nested/"}, want: []string{"suites/nested/login.feature", "suites/nested/refund.yml"}},
		{name: "duplicates merged and sorted", paths: []string{"suites/nested", "features", "suites/nested/refund.yml"}, want: []string{"features/checkout.feature", "suites/nested/login.feature", "suites/nested/refund.yml"}},
		{name: "explicit testdata dir is walked", paths: []string{"suites/testdata"}, want: []string{"suites/testdata/x.yaml"}},
		{name: "explicit non-suite yaml is kept", paths: []string{"agenttest.yaml"}, want: []string{"agenttest.yaml"}},
		{name: "missing path", paths: []string{"nope", "features"}, want: []string{"features/checkout.feature"}, err: "find suites in nope"},
		{name: "missing path says so plainly", paths: []string{"nope"}, err: "find suites in nope: file does not exist"},
		{name: "misspelt file", paths: []string{"./suites/bookng.yaml"}, err: "find suites in ./suites/bookng.yaml: file does not exist (did you mean ./suites/booking.yaml?)"},
		{name: "misspelt directory", paths: []string{"suite"}, err: "find suites in suite: file does not exist (did you mean suites?)"},
		{name: "wrong extension", paths: []string{"suites/notes.md"}, err: "not a suite file"},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFindNoGuessForShortNames: a missing path of one or two letters
// (the value of a flag after --, a stray argument) gets no did-you-mean,
// since it is one edit from any short name.
func TestFindNoGuessForShortNames(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"d/a.yaml": &fstest.MapFile{Data: []byte(okSuite)}}
	if _, err := taken(fsys, []string{"2"}); err != "find suites in 2: file does not exist" {
		t.Errorf("path errors %q, want find suites in 2: file does not exist", err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	suites, ds := Load(testFS(), []string{"suites", "missing"})
	var paths []string
	for _, s := range suites {
		paths = append(paths, s.Path)
	}
	// Files with errors load no suite.
	if want := []string{"suites/booking.yaml", "suites/nested/login.feature", "suites/nested/refund.yml"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("suites = %q, want %q", paths, want)
	}
	got := renderDiags(ds)
	for _, want := range []string{
		"find suites in missing",
		"suites/bad.yaml:1:13: scenario \"a\" has no turns and no greeting checks",
		"suites/broken.yaml:3:1: invalid YAML",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
}

// TestIsSuite: which YAML files found in a directory are taken for suites.
func TestIsSuite(t *testing.T) {
	t.Parallel()
	testCases := []struct {
		name string
		src  string
		want bool
	}{
		{"suite", okSuite, true},
		{"agent definition", "id: x\nname: x\nstart: Greeting\nnodes: []\n", false},
		{"list", "- scenarios: []\n", false},
		{"list of strings", "- a\n- b\n", false},
		{"scenarios written as a list", "- name: a\n  turns: [{say: hi}]\n", true},
		{"nested key", "a:\n  scenarios: []\n", false},
		{"empty", "", true},
		{"comments only", "# nothing yet\n", true},
		{"syntax error in a suite", "scenarios:\n  - name: a\n\tturns: []\n", true},
		{"syntax error elsewhere", "a: [\n", true},
		{"quoted key", "\"scenarios\": []\n", true},
		{"byte order mark", "\ufeffscenarios: []\n", true},
		{"misspelt scenarios", "suite: x\nscenario: []\n", true},
		{"capitalised scenarios", "Scenarios: []\n", true},
		{"suite keys without scenarios", "suite: x\nagent: restaurant\ntags: [a]\n", true},
		{"suite keys and a misspelt one", "agent: restaurant\nvar: {a: b}\n", true},
		{"CI job with env", "name: ci\non: push\nenv: {A: b}\njobs: {}\n", false},
		{"agenttest.yaml", "default_target: sim\ntargets: {}\nrun: {parallel: 2}\n", false},
		{"scalar", "just text\n", false},
	}
	for _, tc := range testCases {
		_, _, skipped := loadYAML("found.yaml", []byte(tc.src), false)
		if got := skipped == ""; got != tc.want {
			t.Errorf("%s: taken for a suite = %v (%s), want %v", tc.name, got, skipped, tc.want)
		}
	}
}

// TestLoadAllSkipped: a directory walk loads every suite-shaped file,
// broken ones included, and lists the other YAML files with what they
// are.
func TestLoadAllSkipped(t *testing.T) {
	t.Parallel()
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"s/ok.yaml":        file(okSuite),
		"s/misspelt.yaml":  file("suite: x\nscenario:\n  - {name: a, turns: [{say: hi}]}\n"),
		"s/empty.yaml":     file(""),
		"s/broken.yml":     file("scenarios: [\n"),
		"s/ci.yml":         file("name: ci\non: push\njobs: {}\n"),
		"s/agenttest.yaml": file("default_target: sim\n"),
	}
	l := LoadAll(fsys, []string{"s"})
	if len(l.Suites) != 1 || l.Suites[0].Path != "s/ok.yaml" {
		t.Errorf("suites %v", l.Suites)
	}
	got := renderDiags(l.Diags)
	for _, want := range []string{
		`s/misspelt.yaml:2:1: unknown key "scenario" in suite`,
		"s/empty.yaml:1:1: file is empty",
		"s/broken.yml:1: invalid YAML",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, got)
		}
	}
	want := []Skipped{
		{"s/agenttest.yaml", "not a suite (top-level keys: default_target)"},
		{"s/ci.yml", "not a suite (top-level keys: name, on, jobs)"},
	}
	if !reflect.DeepEqual(l.Skipped, want) {
		t.Errorf("skipped %+v\nwant %+v", l.Skipped, want)
	}
}

// TestNamedAgentDefinition: an agent definition named on the command
// line ("agenttest lint agents/pharmacy.yaml") is said to be one, once,
// with where it is checked, rather than read as a suite written wrong,
// an error for each of its keys.
func TestNamedAgentDefinition(t *testing.T) {
	t.Parallel()
	src := "id: pharmacy\nname: Pharmacy\nstart: Greeting\nnodes:\n  Greeting: {say: hi}\n"
	s, ds, skipped := loadYAML("agents/pharmacy.yaml", []byte(src), true)
	got := renderDiags(ds)
	if s != nil || skipped != "" || len(ds) != 1 ||
		!strings.Contains(got, "agents/pharmacy.yaml:4:1: an agent definition of the simulator (id:, start:, nodes:), not a suite") ||
		!strings.Contains(got, "agenttest run --sim-agents agents/pharmacy.yaml (docs/agent-definition.md)") {
		t.Errorf("suite %v, skipped %q, diagnostics:\n%s", s, skipped, got)
	}
	// A suite with a stray nodes: is a suite written wrong.
	_, ds, _ = loadYAML("s.yaml", []byte("start: {channel: WEBCHAT}\nnodes: {}\nscenarios: []\n"), true)
	if got := renderDiags(ds); !strings.Contains(got, `s.yaml:2:1: unknown key "nodes" in suite`) {
		t.Errorf("a suite with nodes:\n%s", got)
	}
}

// TestNamedConfigFile: agenttest's config file named on the command line
// under another name ("agenttest lint ci.yaml") is said to be one, once,
// with the flag that reads it, rather than a suite written wrong with an
// error (and an echoed line) for each of its keys.
func TestNamedConfigFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"default_target: sandbox\n\ntargets:\n  sandbox:\n    build_key: ${env:BK}\nrun: {parallel: 4}\n", "ci.yaml:3:1: agenttest's config file (targets:), not a suite"},
		{"# no targets yet\ndefault_target: sandbox\n", "ci.yaml:2:1: agenttest's config file (targets:), not a suite"},
	} {
		s, ds, skipped := loadYAML("ci.yaml", []byte(tc.src), true)
		got := renderDiags(ds)
		if s != nil || skipped != "" || len(ds) != 1 || !strings.Contains(got, tc.want) || !strings.Contains(got, "pass it with --config ci.yaml") {
			t.Errorf("%q: suite %v, skipped %q, diagnostics:\n%s", tc.src, s, skipped, got)
		}
	}
	// A suite with a stray targets: is a suite written wrong.
	_, ds, _ := loadYAML("s.yaml", []byte("targets: x\nscenarios: []\n"), true)
	if got := renderDiags(ds); !strings.Contains(got, `s.yaml:1:1: unknown key "targets" in suite`) {
		t.Errorf("a suite with targets:\n%s", got)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]Kind{"a.yaml": YAMLSuite, "a.YML": YAMLSuite, "a.feature": Feature, "a.json": NotSuite, "yaml": NotSuite} {
		if got := KindOf(name); got != want {
			t.Errorf("KindOf(%q) = %v, want %v", name, got, want)
		}
	}
}
