package main

import (
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// faultSuite is one scenario of the example clinic agent: its greeting,
// then a turn that books an appointment (or says what a row says). A
// row's expectation replaces the one written under expect:, its
// confirmation is written under confirm:.
const faultSuite = `agent: clinic
scenarios:
  - name: books
    turns:
      - say: {SAY}
        expect: {EXPECT}
{CONFIRM}`

// probeFaultSuite places a call to the number probeFaultConfig allows.
const (
	probeFaultSuite = `agent: clinic
scenarios:
  - name: books
    probe: {outbound_call: {to: "+15550009999"}, expect_status: success, within: 10s}
`
	probeFaultConfig = "default_target: t\ntargets:\n  t:\n    build_url: https://build.example.com\n    probe_numbers: [\"+15550009999\"]\n"
)

// TestFaultClassesAgreeAcrossReports runs one scenario per class of
// failure, real HTTP against the embedded simulator (its fault drills) or
// a hostile server, and reads every output a QA engineer may open on a
// red CI run: the exit code, the console, the JSON, JUnit and HTML
// reports, the GitHub annotations and step summary, Cucumber Messages and
// a merge of the JSON report. Each must say the same verdict and blame: a
// broken expectation is the agent's failure (exit 1, <failure>),
// whatever the platform did wrong is an error (exit 4, <error> of the
// error's kind) that names the endpoint and the status, what the target's
// configuration did wrong stops the run (exit 2) and says so, and a retry
// that passed after a platform error is flaky.
func TestFaultClassesAgreeAcrossReports(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name string
		// expect is the turn's expectation (default: one that holds).
		expect string
		// sim are the embedded simulator's fault flags; serve, when set,
		// is the build host instead.
		sim   string
		serve http.HandlerFunc
		// confirm is the scenario's confirm: (default none); runtime,
		// when set, is the runtime host, the build host a simulator.
		confirm string
		runtime http.HandlerFunc
		// messaging runs the scenario over the Messaging API.
		messaging bool
		// say is the turn's message (default: a booking); suite replaces
		// faultSuite, config is the agenttest.yaml, env more of the
		// environment.
		say, suite, config string
		env                map[string]string
		args               []string
		// code is the exit code, status the case's and run the run's.
		code        int
		status, run string
		// kind is the error's kind (JSON kind, JUnit type); empty for a
		// failure (type "assertion"). httpStatus is the error's status in
		// JSON: the platform's answer that the message names.
		kind       string
		httpStatus int
		// line is where a failure is placed (default 6, the turn's
		// expect:).
		line int
		// blame is whose fault an error is, as JUnit and Cucumber say
		// it ("errored, not failed: BLAME broke, not the agent"); by
		// default the platform's.
		blame string
		// says is in the case's message in every output.
		says []string
	}
	malformed := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/agents/clinic/debug-chat") {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(body))
		}
	}
	cases := []testCase{
		{name: "agent: reply text", expect: `{response: {contains: "Wednesday"}}`,
			code: exitFailed, status: "failed", run: "failed", says: []string{"reply does not contain"}},
		{name: "agent: node trace", expect: `{trace: {equals: [StartAppointment, AskSlot]}}`,
			code: exitFailed, status: "failed", run: "failed", says: []string{"node trace is not"}},
		{name: "agent: state", expect: `{state: {day: wednesday}}`,
			code: exitFailed, status: "failed", run: "failed", says: []string{`state "day" is not`}},
		{name: "agent: handoff", expect: `{handoff: on_call_nurse}`,
			code: exitFailed, status: "failed", run: "failed", says: []string{"did not hand off"}},
		{name: "agent: metrics", expect: `{metrics: {BOOKED: "false"}}`,
			code: exitFailed, status: "failed", run: "failed", says: []string{`metric "BOOKED" is not`}},
		{name: "platform: 500", sim: "--error-500 1",
			code: exitErrored, status: "errored", run: "errored", kind: "http", httpStatus: 500, says: []string{"POST /v1/agents/clinic/debug-chat: 500 INTERNAL_ERROR"}},
		{name: "platform: 429 beyond the wait budget", sim: "--error-429 1 --retry-after 5s", args: []string{"--rate-wait", "1s"},
			code: exitErrored, status: "errored", run: "errored", kind: "rate_limited", httpStatus: 429, says: []string{"POST /v1/agents/clinic/debug-chat", "429"}},
		{name: "target: the run's own rate past its wait budget", args: []string{"--rate", "0.001", "--rate-wait", "1s"},
			// The platform refused nothing: the deployment read spent
			// the key's one token, and the next is 1000s away. The
			// run's settings are at fault, not the platform.
			code: exitErrored, status: "errored", run: "errored", kind: "config", blame: "the scenario's configuration",
			says: []string{"POST /v1/agents/clinic/debug-chat (the platform answered no 429: the wait is the pace of the rate set for the key, 0.001 requests per second)"}},
		{name: "platform: chat timeout", sim: "--chat-timeout 1",
			code: exitErrored, status: "errored", run: "errored", kind: "timeout", httpStatus: 408, says: []string{"POST /v1/agents/clinic/debug-chat/", "408 CHAT_TIMEOUT"}},
		{name: "platform: connection dropped", sim: "--drop 1",
			code: exitErrored, status: "errored", run: "errored", kind: "network", blame: "the network or the platform", says: []string{"POST /v1/agents/clinic/debug-chat: connection lost"}},
		{name: "platform: truncated JSON", serve: malformed(200, `{"response": "Welcome`),
			code: exitErrored, status: "errored", run: "errored", kind: "http", says: []string{"POST /v1/agents/clinic/debug-chat: 200: malformed response"}},
		{name: "platform: wrong type", serve: malformed(200, `{"response": "Hi", "conversationId": {}}`),
			code: exitErrored, status: "errored", run: "errored", kind: "http", says: []string{`POST /v1/agents/clinic/debug-chat: 200: malformed response: field "conversationId": expected a string, got object`}},
		{name: "platform: redirect away", serve: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://198.51.100.7"+r.URL.Path, http.StatusTemporaryRedirect)
		}, // The key is kept from the host it leads to: the target's
			// build_url is to fix, not the platform (a configuration error).
			code: exitErrored, status: "errored", run: "errored", kind: "config", blame: "the scenario's configuration", says: []string{"POST /v1/agents/clinic/debug-chat: 307 redirect", "Fix build_url"}},
		{name: "agent: the recorded conversation", confirm: `{conversation: {handoff: true}}`,
			code: exitFailed, status: "failed", run: "failed", line: 7, says: []string{"conversation handoff is false, expected true"}},
		{name: "platform: the record never shown", confirm: `{conversation: {handoff: false}}`, args: []string{"--confirm-timeout", "100ms"},
			runtime: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error": "conversation not found"}`))
			},
			code: exitErrored, status: "errored", run: "errored", kind: "timeout", says: []string{"not recorded within", ": 404: conversation not found", "not the agent's"}},
		{name: "target: a key refused on the first turn", serve: malformed(403, `{"success": false, "error": "Forbidden", "error_code": "FORBIDDEN", "error_message": "the key has no rights on this agent", "data": null}`),
			// The run stops on it (exit 2), a configuration problem:
			// the case that met it is the target's, as the stop is.
			code: exitUsage, status: "errored", run: "errored", kind: "http", httpStatus: 403, blame: "the target's configuration", says: []string{"POST /v1/agents/clinic/debug-chat: 403 FORBIDDEN"}},
		{name: "target: an agent the platform does not know", serve: malformed(404, `{"success": false, "error": "Not Found", "error_code": "AGENT_NOT_FOUND", "error_message": "no agent clinic", "data": null}`),
			code: exitUsage, status: "errored", run: "errored", kind: "http", httpStatus: 404, blame: "the target's configuration", says: []string{"POST /v1/agents/clinic/debug-chat: 404 AGENT_NOT_FOUND", "check the agent id"}},
		{name: "agent: no webhook, the conversation left open", confirm: `{webhooks: [conversation.completed]}`, line: 7,
			// conversation.completed is sent when a conversation ends:
			// the agent did not end it.
			args: []string{"--confirm-timeout", "100ms"}, code: exitFailed, status: "failed", run: "failed",
			says: []string{`no verified "conversation.completed" event`, "the agent did not end it"}},
		{name: "platform: no webhook, the conversation ended", confirm: `{webhooks: [conversation.completed]}`, say: "I have chest pain", expect: `{ended: true}`,
			// Every delivery refused: the platform never delivers it.
			env:  map[string]string{webhookFailFirstEnv: "1000"},
			args: []string{"--confirm-timeout", "100ms"}, code: exitErrored, status: "errored", run: "errored", kind: "timeout",
			says: []string{`no verified "conversation.completed" event`, "while the conversation ended", "not the agent's"}},
		{name: "platform: a probe's call never connects", suite: probeFaultSuite, config: probeFaultConfig, line: 4,
			sim: "--unreachable +15550009999 --call-queued 10ms --call-calling 10ms --tick 10ms", args: []string{"--sim"},
			code: exitErrored, status: "errored", run: "errored", kind: "http",
			says: []string{"ended with status failure, expected success (unreachable)", "not the agent's"}},
		{name: "platform: messaging overload", sim: "--overload 1", messaging: true, expect: `{response: {contains: "booked in"}}`,
			code: exitErrored, status: "errored", run: "errored", kind: "messaging", says: []string{"error system message", "high load"}},
		{name: "platform: 500, then a pass on retry", sim: "--error-500 0.3", args: []string{"--retries", "3", "--seed", "8"},
			code: exitOK, status: "flaky", run: "passed", kind: "http", httpStatus: 500, says: []string{"POST /v1/agents/clinic/debug-chat", ": 500 INTERNAL_ERROR"}},
	}
	run := func(t *testing.T, tc testCase) {
		dir := t.TempDir()
		line := cmp.Or(tc.line, 6)
		expect := tc.expect
		if expect == "" {
			expect = `{node: ConfirmAppointment}`
		}
		confirm := ""
		if tc.confirm != "" {
			confirm = "    confirm: " + tc.confirm + "\n"
		}
		suite := strings.NewReplacer("{EXPECT}", expect, "{CONFIRM}", confirm).Replace(cmp.Or(tc.suite, faultSuite))
		suite = strings.Replace(suite, "{SAY}", cmp.Or(tc.say, "I'd like to book an appointment on Tuesday at 10am"), 1)
		if tc.messaging {
			suite = strings.Replace(suite, "    turns:", "    via: messaging\n    turns:", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(suite), 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.config != "" {
			if err := os.WriteFile(filepath.Join(dir, "agenttest.yaml"), []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := examplesEnv()
		maps.Copy(env, tc.env)
		env["GITHUB_STEP_SUMMARY"] = filepath.Join(dir, "summary.md")
		switch {
		case tc.serve != nil:
			srv := httptest.NewServer(tc.serve)
			t.Cleanup(srv.Close)
			env["AGENTTEST_BUILD_URL"], env["AGENTTEST_BUILD_KEY"] = srv.URL, "bk-fault-agree-0123"
		case tc.runtime != nil:
			s := simtest.Start(t, sim.Options{Seed: 1})
			srv := httptest.NewServer(tc.runtime)
			t.Cleanup(srv.Close)
			maps.Copy(env, map[string]string{"AGENTTEST_BUILD_URL": s.BuildURL, "AGENTTEST_BUILD_KEY": s.BuildKey, "AGENTTEST_ACCOUNT_ID": s.AccountID,
				"AGENTTEST_RUNTIME_URL": srv.URL, "AGENTTEST_RUNTIME_KEY": "rk-fault-agree-0123"})
		case tc.sim != "":
			env[simFlagsEnv] = tc.sim
		}
		args := append([]string{"run", "s.yaml", "--seed", "1", "--github", "--no-color",
			"--json", "r.json", "--junit", "r.xml", "--html", "r.html", "--cucumber", "r.ndjson"}, tc.args...)
		c := newCLI(t, dir, env, args...)
		code := c.run(t)
		out := c.stdout.String()
		if code != tc.code {
			t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out, c.stderr)
		}

		// A merge of the JSON report (one shard's: the whole run) ends
		// with the run's exit code.
		if got := newCLI(t, dir, examplesEnv(), "merge", "r.json").run(t); got != tc.code {
			t.Errorf("merge of the JSON report: exit %d, want the run's %d", got, tc.code)
		}

		// JSON: the verdict, and the cause of the attempt that decided it.
		var doc struct {
			Run struct {
				Status string `json:"status"`
			} `json:"run"`
			Files []struct {
				Cases []struct {
					Status   string `json:"status"`
					Attempts []struct {
						Number int `json:"number"`
						Error  *struct {
							Message string `json:"message"`
							Kind    string `json:"kind"`
							Status  int    `json:"status"`
						} `json:"error"`
						Failures []struct {
							Message string `json:"message"`
							Pos     struct {
								Line int `json:"line"`
							} `json:"pos"`
						} `json:"failures"`
					} `json:"attempts"`
				} `json:"cases"`
			} `json:"files"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil || len(doc.Files) != 1 || len(doc.Files[0].Cases) != 1 {
			t.Fatalf("no usable JSON report: %v\n%s", err, b)
		}
		cs := doc.Files[0].Cases[0]
		if doc.Run.Status != tc.run || cs.Status != tc.status {
			t.Errorf("JSON: run %s, case %s; want %s, %s", doc.Run.Status, cs.Status, tc.run, tc.status)
		}
		// The message every output renders: the decisive attempt's error,
		// or its first failure.
		var msg string
		for _, a := range cs.Attempts {
			switch {
			case tc.kind == "" && len(a.Failures) > 0:
				msg = a.Failures[0].Message
				if l := a.Failures[0].Pos.Line; l != line {
					t.Errorf("JSON: the failure is placed at line %d, want %d (the expectation)", l, line)
				}
			case tc.kind != "" && a.Error != nil:
				if a.Error.Kind != tc.kind {
					t.Errorf("JSON: attempt %d errored as %s, want %s: %s", a.Number, a.Error.Kind, tc.kind, a.Error.Message)
				}
				if a.Error.Status != tc.httpStatus {
					t.Errorf("JSON: attempt %d errored with status %d, want %d: %s", a.Number, a.Error.Status, tc.httpStatus, a.Error.Message)
				}
				msg = a.Error.Message
			case tc.kind != "" && len(a.Failures) > 0:
				t.Errorf("JSON: attempt %d failed the agent on the platform's fault: %+v", a.Number, a.Failures)
			case tc.kind == "" && a.Error != nil:
				t.Errorf("JSON: attempt %d errored on the agent's failure: %+v", a.Number, a.Error)
			}
			if msg != "" {
				break
			}
		}
		for _, w := range tc.says {
			if !strings.Contains(msg, w) {
				t.Errorf("JSON: the message %q does not say %q", msg, w)
			}
		}

		// Console: the case's line, the message, the run's status.
		word := map[string]string{"failed": "FAIL", "errored": "ERROR", "flaky": "FLAKY"}[tc.status]
		if !strings.Contains(out, "\n"+word+" s.yaml:3 books") {
			t.Errorf("console: no %s line for the case:\n%s", word, out)
		}
		// The run's status and why, which the step summary and the
		// HTML report say in the same words.
		why := ""
		if i := strings.Index(out, "\nstatus: "+tc.run); i < 0 {
			t.Errorf("console: no status %s:\n%s", tc.run, out)
		} else if rest, ok := strings.CutPrefix(out[i+len("\nstatus: "+tc.run):], " ("); ok {
			why, _, _ = strings.Cut(rest, ")\n")
		}
		if tc.status != "flaky" && !strings.Contains(out, msg) {
			t.Errorf("console: no %q:\n%s", msg, out)
		}
		if at := fmt.Sprintf("\n    s.yaml:%d:", line); tc.kind == "" && !strings.Contains(out, at) {
			t.Errorf("console: the failure is not placed at the expectation, %s\n%s", at[5:], out)
		}

		// JUnit: <failure> for the agent, <error> (flakyError for a
		// flaky pass) of the error's kind for the platform.
		var suites struct {
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Cases    []struct {
				Results []struct {
					XMLName xml.Name
					Type    string `xml:"type,attr"`
					Message string `xml:"message,attr"`
				} `xml:",any"`
			} `xml:"testsuite>testcase"`
		}
		b, err = os.ReadFile(filepath.Join(dir, "r.xml"))
		if err == nil {
			err = xml.Unmarshal(b, &suites)
		}
		if err != nil || len(suites.Cases) != 1 {
			t.Fatalf("no usable JUnit report: %v\n%s", err, b)
		}
		elem, typ := map[string]string{"failed": "failure", "errored": "error", "flaky": "flakyError"}[tc.status], tc.kind
		if typ == "" {
			typ = "assertion"
		}
		found, said := false, ""
		for _, r := range suites.Cases[0].Results {
			switch r.XMLName.Local {
			case "failure", "error", "flakyFailure", "flakyError":
				if r.XMLName.Local != elem || r.Type != typ {
					t.Errorf("JUnit: <%s type=%q>, want <%s type=%q>: %s", r.XMLName.Local, r.Type, elem, typ, r.Message)
				}
				found = found || strings.Contains(r.Message, msg)
				said += r.Message + "\n"
			}
		}
		if !found {
			t.Errorf("JUnit: no <%s> says %q:\n%s", elem, msg, b)
		}
		// Whose fault: said with the error in JUnit and in Cucumber's
		// failed step, as the run's status says it.
		blame := ""
		if tc.kind != "" {
			blame = "(errored, not failed: " + cmp.Or(tc.blame, "the platform") + " broke, not the agent"
			if !strings.Contains(said, blame) {
				t.Errorf("JUnit: no %q:\n%s", blame, said)
			}
		}
		nd, err := os.ReadFile(filepath.Join(dir, "r.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(firstLine(msg))
		if !strings.Contains(string(nd), strings.Trim(string(quoted), `"`)) || !strings.Contains(string(nd), strings.TrimPrefix(blame, "(")) {
			t.Errorf("Cucumber: no step says %s, %q:\n%s", quoted, blame, nd)
		}
		wantF, wantE := 0, 0
		switch tc.status {
		case "failed":
			wantF = 1
		case "errored":
			wantE = 1
		}
		if suites.Failures != wantF || suites.Errors != wantE {
			t.Errorf("JUnit: %d failures, %d errors; want %d, %d", suites.Failures, suites.Errors, wantF, wantE)
		}

		// GitHub: an error annotation of the verdict (a warning of a
		// flaky pass), the summary's status.
		level := "::error "
		if tc.status == "flaky" {
			level = "::warning "
		}
		ann := ""
		for line := range strings.SplitSeq(out, "\n") {
			if strings.HasPrefix(line, level) && strings.Contains(line, "title=agenttest "+tc.status) {
				ann = line
			}
		}
		if tc.kind == "" && !strings.Contains(ann, fmt.Sprintf("file=s.yaml,line=%d,", line)) {
			t.Errorf("GitHub: the annotation %q is not placed at the expectation, line %d", ann, line)
		}
		if ann == "" || !strings.Contains(ann, strings.NewReplacer("%", "%25", "\n", "%0A").Replace(firstLine(msg))) {
			t.Errorf("GitHub: no %sannotation %q saying %q:\n%s", level, "agenttest "+tc.status, firstLine(msg), out)
		}
		summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
		if err != nil || !strings.Contains(string(summary), "agenttest: "+tc.run+"\n\n"+why) {
			t.Errorf("GitHub summary does not say %s (%s): %v\n%s", tc.run, why, err, summary)
		}

		// HTML: the run's status, and the message.
		page, err := os.ReadFile(filepath.Join(dir, "r.html"))
		if err != nil {
			t.Fatal(err)
		}
		text := html.UnescapeString(string(page))
		if !strings.Contains(text, firstLine(msg)) {
			t.Errorf("HTML: no %q", firstLine(msg))
		}
		if badge := `<span class="badge">` + tc.run + `</span>`; !strings.Contains(text, badge) || !strings.Contains(text, why) {
			t.Errorf("HTML: the run is not %s (%s)", tc.run, why)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}
