package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/secret"
)

// reportKey is the key planted in the reports the tests of the commands
// that read reports edit: of the workspace, held in a variable its
// agenttest.yaml names (or in AGENTTEST_BUILD_KEY).
const reportKey = "sk-live-0123456789abcdefXYZ"

// reportKeysSuite fails its one check, so that a report of it holds a
// failure, a reply and node coverage to plant the key in.
const reportKeysSuite = "agent: restaurant\nscenarios:\n  - name: books\n    turns:\n      - say: hi\n        expect: {response: nothing like this}\n"

// reportKeysFeature is a feature file of the run, for merge --cucumber.
const reportKeysFeature = "@agent:restaurant\nFeature: f\n  Scenario: books\n    When the user says \"hi\"\n"

// appendFile appends text to the file at path.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// reportKeysConfig keeps the workspace's build key in SANDBOX_BUILD_KEY,
// as a team with several targets does: there is no AGENTTEST_BUILD_KEY.
const reportKeysConfig = "targets:\n  sandbox:\n    build_url: https://build.example.com\n    runtime_url: https://runtime.example.com\n    account_id: ws-a1b2c3d4\n    build_key: ${env:SANDBOX_BUILD_KEY}\n    runtime_key: ${env:SANDBOX_RUNTIME_KEY}\n"

// plantEveryForm writes key into the values of a report that the
// commands reading it show, each in every form a report from another
// machine, an older version or an editor may carry it in: as it is, in
// base64, URL-escaped, as JSON escapes inside the text, in upper case.
// The failure's message also holds it as the file's own JSON escapes
// (jsonEscapedKey, written by writeEscaped). A case, a node of the
// coverage section and a tag are named with it.
func plantEveryForm(key string) func(doc map[string]any) {
	var esc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&esc, `\u%04x`, r)
	}
	forms := []string{key, base64.StdEncoding.EncodeToString([]byte(key)), url.QueryEscape(key), esc.String(), strings.ToUpper(key)}
	all := strings.Join(forms, " | ")
	return func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			for _, name := range []string{"reply", "actual", "expected", "diff", "version", "say"} {
				if v, ok := o[name].(string); ok {
					o[name] = v + " " + all
				}
			}
			if v, ok := o["message"].(string); ok {
				o["message"] = v + " " + jsonEscapedKey + " " + all
			}
			if tags, ok := o["tags"].([]any); ok {
				o["tags"] = append(tags, "t-"+key)
			}
			if _, isCase := o["attempts"]; isCase {
				o["name"] = o["name"].(string) + " " + all
			}
		})
		cov := doc["coverage"].(map[string]any)["agents"].([]any)[0].(map[string]any)
		nodes := cov["nodes"].([]any)
		nodes[0].(map[string]any)["name"] = "Node" + key
	}
}

// jsonEscapedKey marks where writeEscaped puts the key as JSON escapes
// of the file itself (\u0073\u006b...), which decode to the key.
const jsonEscapedKey = "JSONESCAPEDKEY"

// writeEscaped replaces jsonEscapedKey in the report at path with key
// written as the file's JSON escapes.
func writeEscaped(t *testing.T, path, key string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var esc strings.Builder
	for _, r := range key {
		fmt.Fprintf(&esc, `\u%04X`, r)
	}
	out := strings.ReplaceAll(string(b), jsonEscapedKey, esc.String())
	if out == string(b) {
		t.Fatal("no place for the JSON-escaped key: the report has no failure message")
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportReadersMaskTheWorkspaceKeys: the commands that read reports
// written earlier (merge, compare, history, coverage, gate, and
// --coverage-from of run and merge) mask the workspace's keys in every
// output, whatever form a report holds them in, and in the errors that
// quote a report, also when the workspace keeps them in variables
// agenttest.yaml names (the file AGENTTEST_CONFIG names, or --config's).
// Before, coverage masked nothing, --coverage-from neither (its node
// names reached the coverage of run's and merge's reports), and the
// others knew AGENTTEST_BUILD_KEY and its siblings only:
//
//	$ SANDBOX_BUILD_KEY=sk-live-... agenttest merge planted.json --junit m.xml
//	FAIL s.yaml:3 books (0ms)
//	    s.yaml:6:18: turn 1: reply is not the expected text sk-live-0123456789abcdefXYZ | c2stbGl2ZS0w...
//	$ SANDBOX_BUILD_KEY=sk-live-... agenttest coverage bad.json
//	agenttest: coverage: bad.json:1:142: not a JSON report: run.status: unknown run status "sk-live-0123456789abcdefXYZ" ...
func TestReportReadersMaskTheWorkspaceKeys(t *testing.T) {
	t.Parallel()
	forms := secret.Forms(reportKey)
	for _, ws := range []struct {
		name  string
		files map[string]string
		env   map[string]string
		// config is the --config of gate and compare; "" for none.
		config string
	}{
		{"AGENTTEST_BUILD_KEY", nil, map[string]string{"AGENTTEST_BUILD_KEY": reportKey}, ""},
		{"agenttest.yaml", map[string]string{"agenttest.yaml": reportKeysConfig}, map[string]string{"SANDBOX_BUILD_KEY": reportKey}, ""},
		{"AGENTTEST_CONFIG", map[string]string{"ci/at.yaml": reportKeysConfig}, map[string]string{"SANDBOX_BUILD_KEY": reportKey, "AGENTTEST_CONFIG": "ci/at.yaml"}, ""},
		{"--config", map[string]string{"ci/at.yaml": reportKeysConfig}, map[string]string{"SANDBOX_BUILD_KEY": reportKey}, "ci/at.yaml"},
	} {
		t.Run(ws.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"s.yaml": reportKeysSuite, "f.feature": reportKeysFeature}
			maps.Copy(files, ws.files)
			dir := writeTree(t, files)
			env := func(extra map[string]string) map[string]string {
				e := maps.Clone(ws.env)
				maps.Copy(e, extra)
				return e
			}
			newCLI(t, dir, env(nil), "run", "--sim", "s.yaml", "f.feature", "--json", "run.json").expect(t, exitFailed)
			// The feature file, which merge --cucumber reads again, holds
			// the key since.
			appendFile(t, filepath.Join(dir, "f.feature"), "  # "+reportKey+"\n")
			copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "planted.json"), plantEveryForm(reportKey))
			writeEscaped(t, filepath.Join(dir, "planted.json"), reportKey)
			copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "bad.json"), func(doc map[string]any) {
				doc["run"].(map[string]any)["status"] = reportKey
			})
			withConfig := func(args ...string) []string {
				if ws.config == "" {
					return args
				}
				return append(args, "--config", ws.config)
			}
			type outcome struct {
				args []string
				// files are the outputs written; masked is where a
				// masked key must show (the test tests something).
				files  []string
				masked string
			}
			cases := []outcome{
				{withConfig("gate", "--sim", "planted.json"), nil, ""},
				{withConfig("compare", "--baseline", "planted.json", "--candidate", "run.json", "--json", "c.json", "--html", "c.html"), []string{"c.json", "c.html"}, "stdout"},
				{withConfig("gate", "--sim", "bad.json"), nil, "stderr"},
				{withConfig("compare", "--baseline", "bad.json", "--candidate", "run.json"), nil, "stderr"},
				{withConfig("run", "--sim", "s.yaml", "--coverage-from", "bad.json"), nil, "stderr"},
			}
			if ws.config == "" {
				cases = append(cases,
					outcome{[]string{"merge", "planted.json", "--github", "--junit", "m.xml", "--json", "m.json", "--html", "m.html"}, []string{"m.xml", "m.json", "m.html", "summary.md"}, "stdout"},
					outcome{[]string{"merge", "run.json", "--cucumber", "m.ndjson"}, []string{"m.ndjson"}, "m.ndjson"},
					outcome{[]string{"history", "planted.json", "run.json"}, nil, "stdout"},
					outcome{[]string{"coverage", "planted.json"}, nil, "stdout"},
					outcome{[]string{"coverage", "--json", "run.json", "--coverage-from", "planted.json"}, nil, "stdout"},
					outcome{[]string{"run", "--sim", "s.yaml", "--coverage-from", "planted.json", "--json", "r.json", "--html", "r.html"}, []string{"r.json", "r.html"}, "r.json"},
					outcome{[]string{"merge", "run.json", "--coverage-from", "planted.json", "--json", "mc.json"}, []string{"mc.json"}, "mc.json"},
					outcome{[]string{"merge", "bad.json"}, nil, "stderr"},
					outcome{[]string{"history", "bad.json"}, nil, "stderr"},
					outcome{[]string{"coverage", "bad.json"}, nil, "stderr"},
				)
			}
			for _, tc := range cases {
				c := newCLI(t, dir, env(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": "summary.md"}), tc.args...)
				c.run(t)
				texts := map[string]string{"stdout": c.stdout.String(), "stderr": c.stderr.String()}
				for _, name := range tc.files {
					b, err := os.ReadFile(filepath.Join(dir, name))
					if err != nil {
						t.Fatalf("%q: %v\n%s%s", tc.args, err, c.stdout, c.stderr)
					}
					texts[name] = string(b)
				}
				for name, text := range texts {
					if f := keyInDecoded(text, forms); f != "" {
						t.Errorf("%q: %s shows the key (%s)", tc.args, name, f)
					}
				}
				if tc.masked != "" && !strings.Contains(texts[tc.masked], secret.Mask) {
					t.Errorf("%q: %s shows no masked key: the test tests nothing\n%s", tc.args, tc.masked, texts[tc.masked])
				}
			}
		})
	}
}

// TestReportReadersMaskAKeyAcrossChunks: a report's stream cut before its
// end is shown as its chunks joined (the stream stopped after "..."); a
// report of an older version, or one edited, whose chunks spell a key
// between them, none holding it whole, has it masked where merge
// re-renders it (console, GitHub annotation, JUnit, HTML), though
// masking each value as it is read finds no key in any. Before, merge
// printed `the stream stopped after "token sk-live-0123456789abcdefXYZ end"`.
func TestReportReadersMaskAKeyAcrossChunks(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, map[string]string{"m.yaml": "agent: restaurant\nscenarios:\n  - name: streams\n    via: messaging\n    streaming: true\n    turns:\n      - say: hi\n        expect: {response: nothing like this}\n"})
	newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_KEY": reportKey}, "run", "--sim", "m.yaml", "--json", "run.json").expect(t, exitFailed)
	cut := 0
	copyReport(t, filepath.Join(dir, "run.json"), filepath.Join(dir, "cut.json"), func(doc map[string]any) {
		eachObject(doc, func(o map[string]any) {
			m, ok := o["messaging"].(map[string]any)
			if !ok || o["index"].(float64) != 1 {
				return
			}
			// The stream ends with no complete message: the turn's reply
			// is empty, and its chunks are what the reports show.
			o["reply"] = ""
			var chunks []map[string]any
			for _, e := range m["events"].([]any) {
				if e := e.(map[string]any); e["kind"] == "agent_chunk" {
					chunks = append(chunks, e)
				}
			}
			if len(chunks) < 2 {
				t.Fatalf("the streamed turn has %d chunks: the test needs two", len(chunks))
			}
			chunks[0]["text"], chunks[1]["text"] = "token "+reportKey[:10], reportKey[10:]+" end"
			for _, e := range chunks[2:] {
				e["text"] = ""
			}
			cut++
		})
	})
	if cut != 1 {
		t.Fatalf("%d streamed turns edited, want 1", cut)
	}
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_KEY": reportKey, "GITHUB_ACTIONS": "true"}, "merge", "cut.json", "--github", "--junit", "m.xml", "--html", "m.html", "--json", "m.json")
	c.run(t)
	texts := map[string]string{"console": c.stdout.String() + c.stderr.String()}
	for _, name := range []string{"m.xml", "m.html", "m.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v\n%s", err, texts["console"])
		}
		texts[name] = string(b)
	}
	for name, text := range texts {
		if f := keyInDecoded(text, secret.Forms(reportKey)); f != "" {
			t.Errorf("%s shows the key (%s)", name, f)
		}
	}
	if want := `the stream stopped after "` + secret.Mask; !strings.Contains(texts["console"], want) {
		t.Errorf("the console lacks %q: the test tests nothing\n%s", want, texts["console"])
	}
	// The turn's chunks lose their text; its other events, and the
	// greeting's chunks, keep theirs.
	var doc map[string]any
	if err := json.Unmarshal([]byte(texts["m.json"]), &doc); err != nil {
		t.Fatal(err)
	}
	kinds := map[string][]string{}
	eachObject(doc, func(o map[string]any) {
		if k, ok := o["kind"].(string); ok {
			text, _ := o["text"].(string)
			kinds[k] = append(kinds[k], text)
		}
	})
	chunks := kinds["agent_chunk"]
	if n := len(chunks); n < 3 || chunks[0] == secret.Mask || chunks[n-2] != secret.Mask || chunks[n-1] != secret.Mask {
		t.Errorf("the chunks' texts are %q, want the greeting's kept and the turn's %q", chunks, secret.Mask)
	}
	if echo := kinds["echo"]; len(echo) != 2 || echo[1] != "hi" {
		t.Errorf("the echoes' texts are %q, want the turn's to keep %q", echo, "hi")
	}
}
