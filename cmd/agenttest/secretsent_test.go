package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/secret"
)

// sentRecorder keeps every body and frame a hostile platform received.
type sentRecorder struct {
	mu   sync.Mutex
	sent []string
}

func (r *sentRecorder) add(where, s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, where+": "+s)
}

func (r *sentRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.sent...)
}

// A key reaches a platform only in the headers of its own host: a suite
// text that holds one — a variable that copies it, in any form the
// redactor knows, or the key written out — is refused as the case's
// configuration error before anything is sent. Before, the runner sent
// it as the user's words (masked in the transcript, so it knew), to the
// build host in a debug-chat body and to the Messaging host, another
// host, in a WebSocket frame.
func TestSuiteTextNeverSendsAKey(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	rec := &sentRecorder{}
	m := platformtest.StartMessaging(t, func(n int, ev []byte) []platformtest.Frame {
		rec.add("messaging", string(ev))
		id := fmt.Sprint(n)
		if n == 1 {
			return []platformtest.Frame{platformtest.Event("j", "EVENT_TYPE_VENDOR_AGENT_JOINED", "conversation_id", "c-1"),
				platformtest.Event("w", "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "Welcome."),
				platformtest.Event("t", "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
		}
		return []platformtest.Frame{platformtest.Event("m"+id, "EVENT_TYPE_VENDOR_AGENT_MESSAGE", "text", "ok"),
			platformtest.Event("t"+id, "EVENT_TYPE_VENDOR_AGENT_TYPING", "typing", false)}
	})
	build := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rec.add("build", r.URL.String()+" "+string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"conversationId":"c1","userInput":"","response":"hello","metadata":{},"conversationEnded":false,"delayedResponse":false}`)
	}))
	t.Cleanup(build.Close)
	const suite = "agent: a1\nscenarios:\n" +
		"  - {name: copied over web chat, via: messaging, turns: [{say: \"${env:COPY}\", expect: {response: ok}}]}\n" +
		"  - {name: copied, turns: [{say: \"my key: ${env:COPY}\", expect: {response: hello}}]}\n" +
		"  - {name: URL-encoded, turns: [{say: \"${env:COPY_URL}\", expect: {response: hello}}]}\n" +
		"  - {name: base64, turns: [{say: \"${env:COPY_B64}\", expect: {response: hello}}]}\n" +
		"  - {name: written out, turns: [{say: \"" + key + "\", expect: {response: hello}}]}\n" +
		"  - {name: in an attribute, start: {integration_attributes: {k: \"${env:COPY}\"}}, turns: [{say: hi, expect: {response: hello}}]}\n" +
		"  - {name: clean, turns: [{say: hi, expect: {response: hello}}]}\n"
	dir := writeTree(t, map[string]string{"s.yaml": suite})
	env := map[string]string{"AGENTTEST_BUILD_URL": build.URL, "AGENTTEST_BUILD_KEY": key,
		"COPY": key, "COPY_URL": "%50" + url.QueryEscape(key[1:]), "COPY_B64": base64.StdEncoding.EncodeToString([]byte(key)),
		"AGENTTEST_MESSAGING_URL": m.URL, "AGENTTEST_MESSAGING_HOST": m.Host, "AGENTTEST_AGENT_ID": "a1",
		"AGENTTEST_CONNECTOR_TOKEN": plantedConnectors["restaurant"]}
	c := newCLI(t, dir, env, "run", ".", "--json", "r.json")
	code := c.run(t)
	out := c.stdout.String() + c.stderr.String()
	if code != exitErrored || !strings.Contains(out, "holds a key or secret of the target") {
		t.Errorf("exit %d, want %d and the case's error saying why\n%s", code, exitErrored, out)
	}
	forms := secret.Forms(key)
	for _, s := range rec.all() {
		if f := keyIn(s, forms); f != "" {
			t.Errorf("the platform received the key as %q: %s", f, s)
		}
	}
	if f := keyIn(out, forms); f != "" {
		t.Errorf("the output shows the key as %q:\n%s", f, out)
	}
	for name, got := range verdicts(readDoc(t, filepath.Join(dir, "r.json"))) {
		want := "errored"
		if name == "s.yaml:clean" {
			want = "passed"
		}
		if got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// A key written into a suite file (a say that pastes it, an expected text
// that quotes it) is in no diagnostic: neither the line echoed under a
// problem nor the problem's words, in lint, list and run, for the keys of
// the environment (AGENTTEST_* and the variables agenttest.yaml's keys
// name). Before, the line was echoed as written, key and all.
func TestDiagnosticsShowNoKey(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	files := map[string]string{
		// A warning on the key's line: the scenario checks nothing.
		"warn.yaml": "agent: a1\nscenarios:\n  - {name: pastes, turns: [{say: \"" + key + "\"}]}\n",
		// An error on it, whose words quote the value.
		"bad/err.yaml": "agent: a1\nscenarios:\n  - {name: quotes, env: \"" + plantedRuntimeKey + "\", turns: [{say: hi, expect: {response: \"" + key + "\"}}]}\n",
		// A variable not set, on the key's line: a problem found after
		// loading, whose line is read from the file.
		"unset.yaml": "agent: a1\nscenarios:\n  - {name: unset, turns: [{say: \"" + key + " ${env:NOT_SET}\", expect: {response: hi}}]}\n",
		// A definition of the embedded simulator's (--sim-agents).
		"agents/a.yaml": "id: a1\nstart: A\nnodes:\n  A: {sya: \"" + key + "\"}\n",
		"agenttest.yaml": "targets:\n  t: {build_url: https://build.example.com, build_key: \"${env:MY_BUILD}\", runtime_url: https://runtime.example.com," +
			" runtime_key: \"${env:MY_RUNTIME}\", account_id: ws-abcd1234}\n",
	}
	dir := writeTree(t, files)
	named := map[string]string{"MY_BUILD": key, "MY_RUNTIME": plantedRuntimeKey}
	// list reads no agenttest.yaml: the AGENTTEST_* keys are those it
	// knows. A key too short to mask beside them takes nothing from
	// their masking.
	own := map[string]string{"AGENTTEST_BUILD_KEY": key, "AGENTTEST_RUNTIME_KEY": plantedRuntimeKey, "AGENTTEST_CALL_TOKEN": "short-tok"}
	for _, tc := range []struct {
		env  map[string]string
		args []string
	}{
		{named, []string{"lint"}},
		{named, []string{"lint", "bad"}},
		{own, []string{"list", "-v", "warn.yaml"}},
		{own, []string{"list", "bad"}},
		{own, []string{"run", "--sim-agents", "agents", "warn.yaml"}},
		{named, []string{"run", "--target", "t", "bad"}},
		{named, []string{"run", "--target", "t", "unset.yaml"}},
		{named, []string{"run", "--target", "t", "--name", "none", "--allow-empty", "warn.yaml"}},
	} {
		args := tc.args
		c := newCLI(t, dir, tc.env, args...)
		c.run(t)
		out := c.stdout.String() + c.stderr.String()
		if !strings.Contains(out, secret.Mask) {
			t.Errorf("%v: nothing masked: the key's line was not shown\n%s", args, out)
		}
		for _, k := range []string{key, plantedRuntimeKey} {
			if f := keyIn(out, secret.Forms(k)); f != "" {
				t.Errorf("%v shows %q:\n%s", args, f, out)
			}
		}
	}
}

// A long line is echoed as its part around the problem: the key on it is
// masked before the line is cut, else the cut can go through the key and
// leave a part of it the redactor no longer knows (before, a suite's and
// an agent definition's lines were cut when loaded, and the 19 characters
// of the key inside the cut showed). The caret stays under the problem
// with the mask shorter than the key before it (before, it was moved
// past the problem by the difference).
func TestDiagnosticsShowNoPartOfAKey(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	// Each line ends 104 to 114 characters after the key, so the last 120
	// that the echo shows begin inside it.
	pad, filler := strings.Repeat("x", 300), strings.Repeat("y", 100)
	files := map[string]string{
		"long.yaml":     "agent: a1\nscenarios:\n  - {name: long, turns: [{say: \"" + pad + key + filler[:90] + "\", bogus: 1}]}\n",
		"unset.yaml":    "agent: a1\nscenarios:\n  - {name: unset, turns: [{say: \"" + pad + key + filler[:67] + " ${env:NOT_SET}\", expect: {response: hi}}]}\n",
		"agents/a.yaml": "id: a1\nstart: A\nnodes:\n  A: {say: \"" + pad + key + filler + "\", sya: 1}\n",
		"ok.yaml":       "agent: a1\nscenarios:\n  - {name: ok, turns: [{say: hi, expect: {response: hi}}]}\n",
	}
	dir := writeTree(t, files)
	env := map[string]string{"AGENTTEST_BUILD_KEY": key}
	for _, tc := range []struct {
		args  []string
		under string // what the caret points at
	}{
		{[]string{"lint", "long.yaml"}, "bogus"},
		{[]string{"run", "--sim", "unset.yaml"}, "${env:NOT_SET}"},
		{[]string{"run", "--sim-agents", "agents", "ok.yaml"}, "sya"},
	} {
		c := newCLI(t, dir, env, tc.args...)
		c.run(t)
		out := c.stdout.String() + c.stderr.String()
		for i := 0; i+6 <= len(key); i++ {
			if part := key[i : i+6]; strings.Contains(out, part) {
				t.Errorf("%v shows %q, a part of the key:\n%s", tc.args, part, out)
				break
			}
		}
		if got := underCaret(out); !strings.HasPrefix(got, tc.under) {
			t.Errorf("%v: the caret is under %q, want %q:\n%s", tc.args, got, tc.under, out)
		}
	}
}

// underCaret is the text of the first echoed source line from the column
// its caret line points at.
func underCaret(out string) string {
	lines := strings.Split(out, "\n")
	for i := 0; i+1 < len(lines); i++ {
		_, echo, ok := strings.Cut(lines[i], " | ")
		_, caret, okc := strings.Cut(lines[i+1], " | ")
		if !ok || !okc || !strings.HasSuffix(caret, "^") {
			continue
		}
		r := []rune(echo)
		if n := len([]rune(caret)) - 1; n < len(r) {
			return string(r[n:])
		}
		return ""
	}
	return ""
}

// A key pasted into a scenario's name or tags, or a suite's name, is
// refused where it is written: names and tags are printed as they are
// (compare, history and --rerun-failed match on them), so before, list,
// run and every report showed the key.
func TestNamesHoldingAKeyAreRefused(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	dir := writeTree(t, map[string]string{
		"name.yaml":       "agent: restaurant\nscenarios:\n  - {name: \"books " + key + "\", turns: [{say: hi, expect: {response: hi}}]}\n",
		"tags.yaml":       "agent: restaurant\nscenarios:\n  - {name: books, tags: [\"t" + key + "\"], turns: [{say: hi, expect: {response: hi}}]}\n",
		"suite.yaml":      "suite: \"s " + key + "\"\nagent: restaurant\nscenarios:\n  - {name: books, turns: [{say: hi, expect: {response: hi}}]}\n",
		"f.feature":       "Feature: f\n  Scenario: books " + key + "\n    Given the agent \"restaurant\"\n    When the user says \"hi\"\n    Then the agent's reply contains \"hi\"\n",
		"outline.feature": "Feature: o\n  Scenario Outline: books <who>\n    Given the agent \"restaurant\"\n    When the user says \"hi\"\n    Then the agent's reply contains \"hi\"\n    Examples:\n      | who |\n      | " + key + " |\n",
	})
	env := map[string]string{"AGENTTEST_BUILD_KEY": key}
	for _, file := range []string{"name.yaml", "tags.yaml", "suite.yaml", "f.feature", "outline.feature"} {
		for _, args := range [][]string{{"lint", file}, {"list", file}, {"run", "--sim", file}} {
			c := newCLI(t, dir, env, args...)
			code := c.run(t)
			out := c.stdout.String() + c.stderr.String()
			if code != exitUsage || !strings.Contains(out, "a key the environment holds") {
				t.Errorf("%v: exit %d, want %d and the name refused:\n%s", args, code, exitUsage, out)
			}
			if f := keyIn(out, secret.Forms(key)); f != "" {
				t.Errorf("%v shows %q:\n%s", args, f, out)
			}
		}
	}
}

// A run on the embedded simulator (--sim, --sim-agents, or no target)
// sends the simulator's keys, but the job's environment may hold the
// platform's own (AGENTTEST_BUILD_KEY set for every step): those are
// masked and never sent as well. Before, the command's redactor knew only
// the simulator's keys, so a suite that said a copy of the real key sent
// it to the simulator and showed it in the transcript and the reports.
func TestEmbeddedRunMasksTheEnvironmentsKeys(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	suite := "agent: restaurant\nscenarios:\n" +
		"  - {name: says it, turns: [{say: \"${env:COPY}\", expect: {response: hello}}]}\n" +
		"  - {name: expects it, turns: [{say: hi, expect: {response: \"${env:COPY}\"}}]}\n"
	// The key in AGENTTEST_BUILD_KEY, or in a variable agenttest.yaml's
	// key setting names for a target this run does not use (before, only
	// the AGENTTEST_* variables were masked).
	config := "targets:\n  live: {build_url: https://build.example.com, build_key: \"${env:LIVE_BUILD}\"}\n"
	for name, env := range map[string]map[string]string{
		"AGENTTEST_BUILD_KEY": {"AGENTTEST_BUILD_KEY": key, "COPY": key},
		"named by the config": {"LIVE_BUILD": key, "COPY": key},
	} {
		dir := writeTree(t, map[string]string{"s.yaml": suite, "agenttest.yaml": config})
		c := newCLI(t, dir, env, "run", "-v", "--sim", "s.yaml", "--junit", "junit.xml", "--json", "result.json", "--html", "report.html",
			"--cucumber", "cucumber.ndjson")
		if code := c.run(t); code != exitFailed {
			t.Fatalf("%s: exit %d, want %d\n%s%s", name, code, exitFailed, c.stdout, c.stderr)
		}
		texts := reportTexts(t, c, dir)
		noKeyForm(t, name, texts, secret.Forms(key))
		if !strings.Contains(texts["stdout"], "say: holds a key or secret of the target") || !strings.Contains(texts["result.json"], secret.Mask) {
			t.Errorf("%s: the say was not refused, or nothing masked:\n%s", name, texts["stdout"])
		}
	}
}

// A key pasted into a feature file (a say, a metadata table's key or
// value cell, an expected text) is refused unsent, and no report shows
// it: Cucumber Messages carry the feature's source, document and
// pickles as written, and are masked as they are written. Before, the
// NDJSON file quoted the key in each of them, though every other report
// masked it.
func TestCucumberMessagesShowNoKeyOfTheFiles(t *testing.T) {
	t.Parallel()
	const key = plantedBuildKey
	feature := "@agent:restaurant\nFeature: pasted\n" +
		"  Scenario: key cell\n    When the user says \"hi\" with the metadata:\n      | " + key + " | x |\n    Then the agent says \"x\"\n\n" +
		"  Scenario: value cell\n    When the user says \"hi\" with the metadata:\n      | a | " + key + " |\n    Then the agent says \"x\"\n\n" +
		"  Scenario: said\n    When the user says \"" + key + "\"\n    Then the agent says \"x\"\n\n" +
		"  Scenario: expected\n    When the user says \"hi\"\n    Then the agent says \"" + key + "\"\n"
	dir := writeTree(t, map[string]string{"f.feature": feature})
	c := newCLI(t, dir, map[string]string{"AGENTTEST_BUILD_KEY": key}, "run", "-v", "--sim", "f.feature", "--junit", "junit.xml", "--json", "result.json",
		"--html", "report.html", "--cucumber", "cucumber.ndjson")
	if code := c.run(t); code != exitFailed {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailed, c.stdout, c.stderr)
	}
	texts := reportTexts(t, c, dir)
	noKeyForm(t, "pasted", texts, secret.Forms(key))
	for _, s := range jsonStrings(t, "["+strings.ReplaceAll(strings.TrimSpace(texts["cucumber.ndjson"]), "\n", ",")+"]") {
		if f := keyInDecoded(s, secret.Forms(key)); f != "" {
			t.Errorf("cucumber.ndjson: the string %q decodes to the key (%s)", s, f)
		}
	}
	if n := strings.Count(texts["cucumber.ndjson"], secret.Mask); n < 4 {
		t.Errorf("cucumber.ndjson masks %d texts, want the key's every quote:\n%s", n, texts["cucumber.ndjson"])
	}
	if n := strings.Count(texts["stdout"], "holds a key or secret of the target"); n != 3 {
		t.Errorf("%d texts refused, want the cells and the say:\n%s", n, texts["stdout"])
	}
}
