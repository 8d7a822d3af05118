package runner

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/stats"
	"github.com/agenttest/agenttest/internal/steps"
)

func TestRunVerdicts(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name     string
		scenario func(e *env) *scenario.Scenario
		opts     func(o *Options)
		want     result.Status
		attempts int
		check    func(t *testing.T, c *result.Case)
	}
	run := func(t *testing.T, tc testCase) {
		e := newEnv(t, sim.Options{Seed: 1})
		opts := e.opts()
		if tc.opts != nil {
			tc.opts(&opts)
		}
		rec := newRecorder()
		opts.Observer = rec
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, tc.scenario(e))}, opts)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		rec.check(t, res)
		c := res.Files[0].Cases[0]
		if c.Status != tc.want {
			t.Fatalf("status = %s, want %s; attempts: %s", c.Status, tc.want, describe(c))
		}
		if len(c.Attempts) != tc.attempts {
			t.Fatalf("attempts = %d, want %d: %s", len(c.Attempts), tc.attempts, describe(c))
		}
		if res.Interrupted {
			t.Error("Interrupted set on a complete run")
		}
		if tc.check != nil {
			tc.check(t, c)
		}
	}

	testCases := []testCase{
		{
			name:     "booking passes with a capture feeding a later turn",
			scenario: func(*env) *scenario.Scenario { return booking("books a table", 10) },
			want:     result.Passed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				a := c.Attempts[0]
				if len(a.Turns) != 5 {
					t.Fatalf("turns = %d, want greeting + 4", len(a.Turns))
				}
				for i, tr := range a.Turns {
					if tr.Index != i || len(tr.Request) == 0 || len(tr.Response) == 0 || tr.Result == nil {
						t.Errorf("turn %d not fully recorded: %+v", i, tr)
					}
				}
				if a.ConversationID == "" || c.ConversationID() != a.ConversationID {
					t.Errorf("conversation id not recorded: %q", a.ConversationID)
				}
				if got := a.Turns[3].Say; got != "what was my reference?" {
					t.Errorf("turn 3 say = %q", got)
				}
				if a.Turns[2].Pos != pos(13, 5) {
					t.Errorf("turn 2 pos = %s", a.Turns[2].Pos)
				}
				if c.Env != "sandbox" || c.Agent == "" {
					t.Errorf("session parameters: agent %q env %q", c.Agent, c.Env)
				}
			},
		},
		{
			name: "vars and env are interpolated into say",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("interpolated", 10)
				sc.Vars = map[string]string{"when": "7pm"}
				sayAt(sc, 1).Say = "${env:PARTY} at ${when}"
				return sc
			},
			opts: func(o *Options) {
				o.Getenv = func(k string) (string, bool) { return map[string]string{"PARTY": "4 people"}[k], k == "PARTY" }
			},
			want:     result.Passed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if got := c.Attempts[0].Turns[2].Say; got != "4 people at 7pm" {
					t.Errorf("say = %q", got)
				}
			},
		},
		{
			name: "var values may refer to the environment and to other vars",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("var values", 10)
				sc.Vars = map[string]string{"party": "${env:PARTY}", "when": "7pm", "line": "${party} at ${when}"}
				sayAt(sc, 1).Say = "${line}"
				return sc
			},
			opts: func(o *Options) {
				o.Getenv = func(k string) (string, bool) { return map[string]string{"PARTY": "4 people"}[k], k == "PARTY" }
			},
			want:     result.Passed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if got := c.Attempts[0].Turns[2].Say; got != "4 people at 7pm" {
					t.Errorf("say = %q, want the vars expanded through each other and the environment", got)
				}
			},
		},
		{
			name: "a var referring to an unset environment variable is a config error",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("unset env in a var", 10)
				sc.Vars = map[string]string{"party": "${env:NO_SUCH_VAR}"}
				sayAt(sc, 1).Say = "${party} at 7pm"
				return sc
			},
			want:     result.Errored,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				e := c.Attempts[0].Error
				if e == nil || e.Kind != result.KindConfig || !strings.Contains(e.Message, "var party") || !strings.Contains(e.Message, "NO_SUCH_VAR") {
					t.Errorf("error = %+v, want a config error naming the var and the variable", e)
				}
			},
		},
		{
			name:     "a false expectation fails at its position and stops the attempt",
			scenario: func(*env) *scenario.Scenario { return broken("closed", 20) },
			want:     result.Failed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				a := c.Attempts[0]
				if a.Error != nil || len(a.Failures) == 0 {
					t.Fatalf("want failures and no error, got %+v", a)
				}
				if p := a.Failures[0].Pos; p.File != file || p.Line != 21 {
					t.Errorf("failure pos = %s, want %s:21", p, file)
				}
				if len(a.Turns) != 2 {
					t.Errorf("turns = %d, want greeting + the failing turn", len(a.Turns))
				}
			},
		},
		{
			name: "later turns are not sent after a failing one",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("stops early", 10)
				setCheck(sc, 0, expectReply(12, "sorry, no tables"))
				return sc
			},
			want:     result.Failed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if n := len(c.Attempts[0].Turns); n != 2 {
					t.Errorf("turns = %d, want 2", n)
				}
			},
		},
		{
			name:     "retries never hide a real failure",
			scenario: func(*env) *scenario.Scenario { return broken("still closed", 20) },
			opts:     func(o *Options) { o.Retries = 2 },
			want:     result.Failed,
			attempts: 3,
			check: func(t *testing.T, c *result.Case) {
				for _, a := range c.Attempts {
					if a.Status != result.Failed {
						t.Errorf("attempt %d: %s", a.Number, a.Status)
					}
				}
				if c.Attempts[2].Number != 3 || c.Attempts[0].ConversationID == c.Attempts[1].ConversationID {
					t.Error("attempts must be numbered and use fresh sessions")
				}
			},
		},
		{
			name: "a failing greeting is checked before any turn",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("rude greeting", 10)
				setGreeting(sc, expectReply(11, "go away"))
				return sc
			},
			want:     result.Failed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if n := len(c.Attempts[0].Turns); n != 1 {
					t.Errorf("turns = %d, want the greeting only", n)
				}
			},
		},
		{
			name: "an unknown agent errors and is not retried",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("nobody home", 10)
				sc.Agent = "no-such-agent"
				return sc
			},
			opts:     func(o *Options) { o.Retries = 3 },
			want:     result.Errored,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				e := c.Attempts[0].Error
				if e == nil || e.Kind != result.KindHTTP || e.Status != http.StatusNotFound || !strings.Contains(e.Message, "404") {
					t.Fatalf("error = %+v, want an http 404", e)
				}
				if e.Pos != pos(10, 3) {
					t.Errorf("error pos = %s, want the scenario", e.Pos)
				}
			},
		},
		{
			name: "an unresolved variable is a config error, not retried",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("typo", 10)
				sayAt(sc, 1).Say = "${party_sise} people"
				return sc
			},
			opts:     func(o *Options) { o.Retries = 2 },
			want:     result.Errored,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				e := c.Attempts[0].Error
				if e == nil || e.Kind != result.KindConfig || e.Pos != pos(13, 5) || !strings.Contains(e.Message, "party_sise") {
					t.Fatalf("error = %+v, want a config error at the turn naming the variable", e)
				}
			},
		},
		{
			name:     "no agent anywhere is a config error",
			scenario: func(*env) *scenario.Scenario { return booking("no agent", 10) },
			opts:     func(o *Options) { o.DefaultAgent = "" },
			want:     result.Errored,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				// Said at the scenario, before any call.
				if e := c.Attempts[0].Error; e == nil || e.Kind != result.KindConfig || e.Message != (Settings{}).noAgent() || e.Pos != pos(10, 3) || len(c.Attempts[0].Turns) != 0 {
					t.Fatalf("error = %+v", e)
				}
				// What agenttest run has to set: it has no --agent flag.
				if m := c.Attempts[0].Error.Message; !strings.HasSuffix(m, "or give the target an agent_id (AGENTTEST_AGENT_ID)") {
					t.Errorf("message = %q", m)
				}
			},
		},
		{
			name: "skip records the reason and runs nothing",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("skipped", 10)
				sc.Skip = "kitchen renovation"
				return sc
			},
			want:     result.Skipped,
			attempts: 0,
			check: func(t *testing.T, c *result.Case) {
				if c.SkipReason != "kitchen renovation" {
					t.Errorf("reason = %q", c.SkipReason)
				}
			},
		},
		{
			name: "a turn after the agent ended the conversation fails",
			scenario: func(*env) *scenario.Scenario {
				return &scenario.Scenario{Name: "too late", Pos: pos(30, 3), Steps: chat(30, nil,
					turn(31, "thanks, bye", nil),
					turn(32, "hello again", nil),
				)}
			},
			// The agent may not end it early next time: retried.
			opts:     func(o *Options) { o.Retries = 1 },
			want:     result.Failed,
			attempts: 2,
			check: func(t *testing.T, c *result.Case) {
				f := c.Attempts[0].Failures
				if len(f) != 1 || f[0].Key != "ended" || f[0].Pos != pos(32, 5) || f[0].Expected != "conversation still open" || f[0].Actual != "ended after turn 1" ||
					f[0].Message != "the agent ended the conversation before turn 2" {
					t.Errorf("failures = %+v", f)
				}
			},
		},
		{
			name: "a capture that does not match fails at the capture",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("no code", 10)
				captureAt(sc, 1).Capture.Pattern = `voucher ([0-9]+)`
				return sc
			},
			// The reply may vary: a fresh conversation may hold what was
			// to be captured, as a failed check is retried.
			opts:     func(o *Options) { o.Retries = 1 },
			want:     result.Failed,
			attempts: 2,
			check: func(t *testing.T, c *result.Case) {
				f := c.Attempts[0].Failures
				if len(f) != 1 || f[0].Key != "capture.ref" || f[0].Pos != pos(13, 20) ||
					!strings.Contains(f[0].Expected, "voucher") || !strings.Contains(f[0].Actual, "ZX59Q8") {
					t.Errorf("failures = %+v", f)
				}
			},
		},
		{
			name: "a capture shadows a var of its name, and a later capture of the name replaces it",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("recaptured", 10)
				sc.Vars = map[string]string{"ref": "NOPE"}
				at := turnStart(sc, 1) + 2
				sc.Steps = slices.Insert(sc.Steps, at, capture(pos(13, 15), "ref", "response", `(All set)`))
				return sc
			},
			want:     result.Passed,
			attempts: 1,
		},
		{
			name: "the session's languages go with every turn",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("languages", 10)
				sc.Start = scenario.Start{ASRLang: "en-US", TTSLang: "fr-FR"}
				return sc
			},
			want:     result.Passed,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				for _, tr := range c.Attempts[0].Turns[1:] {
					if req := string(tr.Request); !strings.Contains(req, `"asrLangCode":"en-US"`) || !strings.Contains(req, `"ttsLangCode":"fr-FR"`) {
						t.Errorf("turn %d request %s, want the session's languages", tr.Index, req)
					}
				}
			},
		},
		{
			// The agent has no variants: the case still says which one
			// it asked for.
			name: "the variant asked for is recorded expanded",
			scenario: func(*env) *scenario.Scenario {
				sc := booking("variant", 10)
				sc.Vars, sc.Start = map[string]string{"v": "B"}, scenario.Start{Variant: "${v}"}
				return sc
			},
			want: result.Errored, attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if e := c.Last().Error; c.Variant != "B" || e == nil || !strings.Contains(e.Message, `variantId "B"`) {
					t.Errorf("variant %q, error %+v; want B asked for and refused", c.Variant, e)
				}
			},
		},
		{
			name: "a greeting check after a turn reads the greeting",
			scenario: func(*env) *scenario.Scenario {
				g := check(expectReply(5, "welcome"))
				g.Greeting = true
				return &scenario.Scenario{Name: "greeting last", Pos: pos(3, 3),
					Steps: append(chat(3, nil, turn(4, "I'd like to book a table", expectReply(4, "how many"))), g)}
			},
			want:     result.Passed,
			attempts: 1,
		},
		{
			// Steps handed over one at a time (godog) may come in an
			// order no loader writes.
			name: "a setup step after the conversation opened errors at its step",
			scenario: func(*env) *scenario.Scenario {
				set := &steps.Step{Kind: steps.Setup, Pos: pos(5, 5), Setup: func(p *steps.Params, _ steps.Expander) error {
					p.Env = "production"
					return nil
				}}
				return &scenario.Scenario{Name: "late setup", Pos: pos(3, 3), Steps: append(chat(3, nil, turn(4, "hello", nil)), set)}
			},
			opts:     func(o *Options) { o.Retries = 1 },
			want:     result.Errored,
			attempts: 1,
			check: func(t *testing.T, c *result.Case) {
				if e := c.Last().Error; e == nil || e.Kind != result.KindConfig || e.Pos != pos(5, 5) || c.Env == "production" {
					t.Errorf("error %+v in env %s, want a config error at the setup step", e, c.Env)
				}
			},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// describe summarises the attempts of a case for failure messages.
func describe(c *result.Case) string {
	var b strings.Builder
	for _, a := range c.Attempts {
		b.WriteString("\n  #")
		b.WriteString(a.Status.String())
		if a.Error != nil {
			b.WriteString(" error[" + a.Error.Kind + "]: " + a.Error.Message)
		}
		for _, f := range a.Failures {
			b.WriteString(" failure " + f.Pos.String() + " " + f.Key + ": " + f.Message + " expected " + f.Expected + " actual " + f.Actual)
		}
	}
	return b.String()
}

func TestRunRetries(t *testing.T) {
	t.Parallel()
	chatTimeout := func(w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestTimeout)
		io.WriteString(w, `{"success":false,"error":"timeout","error_id":"e1","error_code":"CHAT_TIMEOUT","error_message":"the chat session exceeded the timeout limit","data":null}`)
		return true
	}
	type testCase struct {
		name      string
		retries   *int // scenario retries
		optRetry  int
		fault     func(kind string, n int64, w http.ResponseWriter) bool
		want      result.Status
		attempts  int
		firstKind string
	}
	run := func(t *testing.T, tc testCase) {
		e := newEnv(t, sim.Options{Seed: 1})
		e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool {
			return tc.fault(kind, n, w)
		})
		opts := e.opts()
		opts.Retries = tc.optRetry
		sc := booking("books", 10)
		sc.Retries = tc.retries
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != tc.want || len(c.Attempts) != tc.attempts {
			t.Fatalf("got %s after %d attempts, want %s after %d: %s", c.Status, len(c.Attempts), tc.want, tc.attempts, describe(c))
		}
		if e := c.Attempts[0].Error; e == nil || e.Kind != tc.firstKind {
			t.Fatalf("first attempt error = %+v, want kind %s", e, tc.firstKind)
		}
		if p := c.Attempts[0].Error.Pos; p.Line == 0 {
			t.Errorf("error has no position")
		}
	}
	// firstTurn answers the first turn with status and body.
	firstTurn := func(status int, body string) func(kind string, n int64, w http.ResponseWriter) bool {
		return func(kind string, n int64, w http.ResponseWriter) bool {
			if kind != "turn" || n != 1 {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return true
		}
	}
	testCases := []testCase{
		{
			name:     "a 500 on a turn is retried from a fresh session: flaky",
			optRetry: 1,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n == 2 && fail500(w)
			},
			want: result.Flaky, attempts: 2, firstKind: result.KindHTTP,
		},
		{
			name:     "CHAT_TIMEOUT is retried: flaky",
			optRetry: 2,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n == 1 && chatTimeout(w)
			},
			want: result.Flaky, attempts: 2, firstKind: result.KindTimeout,
		},
		{
			// The session vanished: a fresh one may work, and the agent
			// is known, so the run goes on.
			name:     "a 404 on a turn is retried from a fresh session: flaky",
			optRetry: 1,
			fault:    firstTurn(http.StatusNotFound, `{"success":false,"error":"not found","error_code":"CONVERSATIONS_NOT_FOUND","error_message":"no such conversation","data":null}`),
			want:     result.Flaky, attempts: 2, firstKind: result.KindHTTP,
		},
		{
			name:     "a reply that cannot be read is retried: flaky",
			optRetry: 1,
			fault:    firstTurn(http.StatusOK, `{"success":true,"data":{"conversationId":`),
			want:     result.Flaky, attempts: 2, firstKind: result.KindHTTP,
		},
		{
			name:     "errors that outlast the budget leave the case errored",
			optRetry: 2,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && fail500(w)
			},
			want: result.Errored, attempts: 3, firstKind: result.KindHTTP,
		},
		{
			name:     "the scenario's retries override the options",
			retries:  new(0),
			optRetry: 5,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && fail500(w)
			},
			want: result.Errored, attempts: 1, firstKind: result.KindHTTP,
		},
		{
			name:     "auth errors are not retried",
			optRetry: 3,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"success":false,"error":"unauthorized","error_message":"invalid api key"}`)
				return true
			},
			want: result.Errored, attempts: 1, firstKind: result.KindHTTP,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// simKey is a key given to the simulator so tests can check it never shows
// up in a report.
const simKey = "sk-build-secret-0123456789"

func TestRunWrongKeyIsNotRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1, BuildKey: simKey, RuntimeKey: "sk-runtime-other"})
	c, err := platform.New(platform.Config{BuildURL: e.proxy.URL, BuildKey: "sk-wrong-key"})
	if err != nil {
		t.Fatal(err)
	}
	opts := e.opts()
	opts.Channel = DebugChat(c)
	opts.Retries = 3
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("books", 10))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	cs := res.Files[0].Cases[0]
	if cs.Status != result.Errored || len(cs.Attempts) != 1 {
		t.Fatalf("got %s after %d attempts: %s", cs.Status, len(cs.Attempts), describe(cs))
	}
	if msg := cs.Attempts[0].Error.Message; !strings.Contains(msg, "401") || strings.Contains(msg, "sk-wrong-key") {
		t.Errorf("message = %q", msg)
	}
	if n := e.proxy.starts.Load(); n != 1 {
		t.Errorf("%d session creations, want 1", n)
	}
}

func TestRunSimFaults(t *testing.T) {
	t.Parallel()
	// Injected 500s and chat timeouts on a few requests: every case must
	// end passing (some flaky) thanks to retries, none failed.
	e := newEnv(t, sim.Options{Seed: 7, Faults: sim.Faults{Error500: 0.05, ChatTimeout: 0.03}})
	opts := e.opts()
	opts.Parallel = 1
	opts.Retries = 6
	var scs []*scenario.Scenario
	for i := range 20 {
		scs = append(scs, booking("books "+string(rune('a'+i)), 10))
	}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, scs...)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	flaky := 0
	for _, c := range res.Files[0].Cases {
		switch c.Status {
		case result.Passed:
			if len(c.Attempts) != 1 {
				t.Errorf("%s passed after %d attempts", c.Name, len(c.Attempts))
			}
		case result.Flaky:
			flaky++
			if len(c.Attempts) < 2 || c.Attempts[0].Status != result.Errored {
				t.Errorf("%s flaky: %s", c.Name, describe(c))
			}
		default:
			t.Errorf("%s: %s%s", c.Name, c.Status, describe(c))
		}
	}
	if flaky == 0 {
		t.Error("no case needed a retry; the faults did not fire")
	}
}

// TestRunTimeouts: every answer takes 60 ms on the runner's clock, so a
// scenario timeout of 150 ms cuts the third call and a turn timeout of
// 30 ms the first, the clock moved by the answers, not waited for.
func TestRunTimeouts(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	type testCase struct {
		name    string
		timeout time.Duration // scenario
		turn    time.Duration // options
		message string
		turns   int
	}
	run := func(t *testing.T, tc testCase) {
		clk := fakeclock.New()
		opts := e.opts()
		opts.Channel = e.slowChannel(t, clk, 60*time.Millisecond)
		opts.Now, opts.Sleep, opts.AfterFunc = clk.Now, clk.Sleep, clk.AfterFunc
		opts.TurnTimeout = tc.turn
		sc := booking("slow", 10)
		sc.Timeout = tc.timeout
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != result.Errored || len(c.Attempts) != 1 {
			t.Fatalf("got %s: %s", c.Status, describe(c))
		}
		a := c.Attempts[0]
		if a.Error.Kind != result.KindTimeout || !strings.Contains(a.Error.Message, tc.message) {
			t.Errorf("error = %+v, want timeout mentioning %q", a.Error, tc.message)
		}
		if n := len(a.Turns); n != tc.turns || a.Turns[n-1].Result != nil {
			t.Errorf("want %d turns, the last one cut off: %d turns", tc.turns, n)
		}
	}
	testCases := []testCase{
		{name: "scenario timeout bounds the attempt", timeout: 150 * time.Millisecond, turn: 5 * time.Second, message: "scenario timeout of 150ms exceeded (POST /v1/agents/", turns: 3},
		{name: "turn timeout bounds each call", turn: 30 * time.Millisecond, message: "turn timeout of 30ms exceeded (POST /v1/agents/", turns: 1},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestTurnTimeoutLeavesRateLimitWaitsOut refuses every call once with a
// 429 (Retry-After: 1, waited on the client's fake clock) and answers it
// after 60 ms on the runner's clock, with a turn timeout of 40 ms: the
// calls outlast the timeout only by the waits they were told to make, so
// every call of the session, not only the first, must be granted its
// wait; and without the 429s the same timeout cuts the first call.
func TestTurnTimeoutLeavesRateLimitWaitsOut(t *testing.T) {
	for _, limited := range []bool{true, false} {
		t.Run(map[bool]string{true: "limited", false: "not limited"}[limited], func(t *testing.T) {
			e := newEnv(t, sim.Options{Seed: 1})
			e.proxy.refuse(func(_ string, n int64) string {
				if !limited || n%2 == 0 {
					return ""
				}
				return "1"
			})
			opts := e.pacedOpts(t, fakeclock.New(), 60*time.Millisecond)
			res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("paced", 10))}, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Files[0].Cases[0]
			switch {
			case limited && (c.Status != result.Passed || c.RateLimited != 5):
				t.Errorf("got %s after %d rate limits, want passed after 5: %s", c.Status, c.RateLimited, describe(c))
			case !limited && (c.Status != result.Errored || !strings.Contains(c.Attempts[0].Error.Message, "turn timeout of 40ms")):
				t.Errorf("got %s, want the first call cut by the turn timeout: %s", c.Status, describe(c))
			}
		})
	}
}

func TestRunRepeat(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name     string
		rate     float64
		retries  int
		fault    func(kind string, n int64, w http.ResponseWriter) bool
		want     result.Status
		passed   int
		attempts int
	}
	run := func(t *testing.T, tc testCase) {
		e := newEnv(t, sim.Options{Seed: 1})
		// Every second session greets rudely: 3 of 5 runs pass.
		e.proxy.onResponse(func(kind string, n int64, body []byte) []byte {
			if kind == "start" && n%2 == 0 {
				return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
			}
			return body
		})
		if tc.fault != nil {
			e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool { return tc.fault(kind, n, w) })
		}
		opts := e.opts()
		opts.Parallel = 1
		opts.Retries = tc.retries
		sc := booking("repeated", 10)
		keepTurns(sc, 1)
		sc.Stats = scenario.Stats{Repeat: 5, PassRate: tc.rate}
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		if c.Status != tc.want {
			t.Fatalf("status = %s, want %s: %s", c.Status, tc.want, describe(c))
		}
		if r := c.Repeat; r == nil || r.Procedure != result.ProcedureFixed || r.Runs != 5 || r.Limit != 5 || r.Passed != tc.passed ||
			r.Passed+r.Failed+r.Errored != 5 || r.PassRate != tc.rate || r.Decision != tc.want.String() {
			t.Errorf("repeat = %+v, want 5 fixed runs, %d passed, decision %s", c.Repeat, tc.passed, tc.want)
		}
		if lo, hi := stats.Binomial(c.Repeat.Passed, c.Repeat.Passed+c.Repeat.Failed, 0.95); c.Repeat.Lower != lo || c.Repeat.Upper != hi || c.Repeat.Level != 0.95 {
			t.Errorf("bounds [%v, %v] at %v, want [%v, %v] at 0.95, of the runs that are evidence", c.Repeat.Lower, c.Repeat.Upper, c.Repeat.Level, lo, hi)
		}
		if len(c.Attempts) != tc.attempts {
			t.Errorf("attempts = %d, want %d", len(c.Attempts), tc.attempts)
		}
		for i, a := range c.Attempts {
			if a.Number != i+1 {
				t.Errorf("attempt %d numbered %d", i+1, a.Number)
			}
		}
	}
	testCases := []testCase{
		{name: "3 of 5 reach a 0.6 pass rate", rate: 0.6, want: result.Passed, passed: 3, attempts: 5},
		{name: "3 of 5 miss a 0.8 pass rate; failed runs are not retried", rate: 0.8, retries: 2, want: result.Failed, passed: 3, attempts: 5},
		{
			// Run 1 errors, its retry greets rudely (a failure, not
			// retried again): sessions 1-6 give error, fail, pass, fail,
			// pass, fail.
			name: "errored runs are retried", rate: 0.4, retries: 1, want: result.Passed, passed: 2, attempts: 6,
			fault: func(kind string, n int64, w http.ResponseWriter) bool { return kind == "turn" && n == 1 && fail500(w) },
		},
		{
			name: "a rate lost to errors is errored, not failed", rate: 0.6, want: result.Errored, passed: 1, attempts: 5,
			fault: func(kind string, n int64, w http.ResponseWriter) bool { return kind == "turn" && n <= 2 && fail500(w) },
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

func TestRunFailFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel = 1
	opts.FailFast = true
	rec := newRecorder()
	opts.Observer = rec
	skipped := booking("skipped anyway", 40)
	skipped.Skip = "not today"
	suites := []*scenario.Suite{
		suite("suites/a.yaml", booking("first", 10), broken("second", 20)),
		suite("suites/b.yaml", booking("third", 30), skipped),
	}
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	got := strings.Join(statuses(res), " ")
	if want := "first=passed second=failed third=skipped skipped anyway=skipped"; got != want {
		t.Fatalf("statuses = %s, want %s", got, want)
	}
	if r := res.Files[1].Cases[0].SkipReason; r != result.ReasonFailFast {
		t.Errorf("reason = %q", r)
	}
	if r := res.Files[1].Cases[1].SkipReason; r != "not today" {
		t.Errorf("a skipped scenario keeps its own reason, got %q", r)
	}
	if res.Interrupted {
		t.Error("Interrupted set: a fail-fast stop is no interruption")
	}
	if res.Stop == nil || res.Stop.Kind != result.StopFailFast || res.Stop.Reason != result.ReasonFailFast {
		t.Errorf("Stop = %+v, want the fail-fast stop", res.Stop)
	}
	if got := res.RunStatus(); got != result.RunFailed {
		t.Errorf("RunStatus = %s, want failed", got)
	}
}

func TestRunCancel(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1, Faults: sim.Faults{Latency: 2 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The 30th turn request cancels the run and hangs until the client
	// gives up: that case is certainly cut off in flight.
	e.proxy.onRequest(func(kind string, n int64, r *http.Request, w http.ResponseWriter) bool {
		if kind == "turn" && n == 30 {
			cancel()
			return hangUp(t, r, w)
		}
		return false
	})
	var scs []*scenario.Scenario
	for i := range 60 {
		scs = append(scs, booking("books "+strings.Repeat("x", i%7)+string(rune('A'+i%26)), 10+i))
	}
	before := runtime.NumGoroutine()
	opts := e.opts()
	opts.Parallel = 4
	rec := newRecorder()
	opts.Observer = rec
	res, err := Run(ctx, []*scenario.Suite{suite("suites/a.yaml", scs[:30]...), suite("suites/b.yaml", scs[30:]...)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if !res.Interrupted {
		t.Error("Interrupted not set")
	}
	passed, pending, cut := 0, 0, 0
	for _, f := range res.Files {
		for _, c := range f.Cases {
			switch c.Status {
			case result.Passed:
				passed++
			case result.Pending:
				pending++
				if c.SkipReason != result.ReasonInterrupted {
					t.Errorf("%s: reason %q", c.Name, c.SkipReason)
				}
				if a := c.Last(); a != nil {
					cut++
					if a.Error == nil || a.Error.Kind != result.KindInterrupted || len(a.Turns) == 0 {
						t.Errorf("%s: cut-off attempt not recorded: %+v", c.Name, a)
					}
				}
			default:
				t.Errorf("%s: %s%s", c.Name, c.Status, describe(c))
			}
		}
	}
	if passed == 0 || pending < 40 || cut == 0 {
		t.Errorf("passed %d, pending %d (%d cut off in flight)", passed, pending, cut)
	}
	// Nothing the run started may outlive it. Connections still finishing
	// a cancelled exchange go back to the pools late, so the pools are
	// emptied on every poll, not once.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		e.transport.CloseIdleConnections()
		e.proxy.transport.CloseIdleConnections()
		if runtime.NumGoroutine() <= before {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("goroutines: %d before, %d after\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

func TestRunOrderIsFileOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 3, Faults: sim.Faults{Jitter: 8 * time.Millisecond}})
	opts := e.opts()
	opts.Parallel = 8
	var suites []*scenario.Suite
	var want []string
	for fi, path := range []string{"suites/c.yaml", "suites/a.yaml", "suites/b.yaml"} {
		var scs []*scenario.Scenario
		for i := range 8 {
			name := path + "#" + string(rune('0'+i))
			if (fi+i)%3 == 0 {
				scs = append(scs, broken(name, 10*i))
				want = append(want, name+"=failed")
			} else {
				scs = append(scs, booking(name, 10*i))
				want = append(want, name+"=passed")
			}
		}
		suites = append(suites, suite(path, scs...))
	}
	res, err := Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(res); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Files[0].Path != "suites/c.yaml" || res.Files[0].Suite != "c" {
		t.Errorf("first file = %+v", res.Files[0])
	}
}

// panicky panics on the turns of one conversation, as a bug in a client
// wrapper would; only on the first such turn when once is set.
type panicky struct {
	DebugChatClient
	victim string
	once   *atomic.Bool
}

func (p panicky) SendTurn(ctx context.Context, agentID, conversationID string, req platform.ChatTurn) (*platform.Exchange, error) {
	if req.Message == p.victim && (p.once == nil || p.once.CompareAndSwap(false, true)) {
		panic("wrapper bug")
	}
	return p.DebugChatClient.SendTurn(ctx, agentID, conversationID, req)
}

func TestRunRecoversPanics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Channel = DebugChat(panicky{DebugChatClient: e.client, victim: "boom"})
	opts.Retries = 2
	rec := newRecorder()
	opts.Observer = rec
	bad := booking("explodes", 30)
	sayAt(bad, 1).Say = "boom"
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("before", 10), bad, booking("after", 50))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	if got := strings.Join(statuses(res), " "); got != "before=passed explodes=errored after=passed" {
		t.Fatalf("statuses = %s", got)
	}
	c := res.Files[0].Cases[1]
	a := c.Last()
	if len(c.Attempts) != 1 || a.Error == nil || a.Error.Kind != result.KindInternal || !strings.Contains(a.Error.Message, "wrapper bug") {
		t.Fatalf("panic not recorded: %s", describe(c))
	}
	if len(a.Turns) != 3 {
		t.Errorf("the partial transcript is kept: %d turns", len(a.Turns))
	}
}

func TestRunOptionsErrors(t *testing.T) {
	t.Parallel()
	if _, err := Run(context.Background(), nil, Options{}); err == nil || !strings.Contains(err.Error(), "no channel") {
		t.Errorf("no client: err = %v", err)
	}
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	// The first value out of range of each.
	opts.Parallel, opts.Retries, opts.TurnTimeout = -1, -1, -1
	_, err := Run(context.Background(), nil, opts)
	if err == nil || !strings.Contains(err.Error(), "parallel") || !strings.Contains(err.Error(), "retries") || !strings.Contains(err.Error(), "turn timeout") {
		t.Errorf("err = %v, want the three problems", err)
	}
	opts = e.opts()
	res, err := Run(context.Background(), nil, opts)
	if err != nil || res.Files == nil || len(res.Files) != 0 {
		t.Errorf("empty run: %+v, %v", res, err)
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	mk := func(name, agent, env string, tags ...string) *scenario.Scenario {
		return &scenario.Scenario{Name: name, Agent: agent, Env: env, Tags: tags, Start: scenario.Start{Variant: "v1"}}
	}
	suites := []*scenario.Suite{
		{Path: "suites/a.yaml", Name: "a", Agent: "suite-agent", Scenarios: []*scenario.Scenario{
			mk("books a table", "", "", "smoke"),
			mk("cancels", "own-agent", "live"),
		}},
		{Path: "suites/b.yaml", Name: "b", Env: "pre-release", Scenarios: []*scenario.Scenario{
			mk("pays a bill", "", "", "smoke"),
			// A scenario's env: wins over its suite's.
			mk("refunds", "", "live"),
		}},
		{Path: "suites/c.yaml", Name: "c", Scenarios: []*scenario.Scenario{mk("other", "", "")}},
	}
	type testCase struct {
		name string
		opts Options
		want []string
	}
	run := func(t *testing.T, tc testCase) {
		var got []string
		for _, f := range Plan(suites, tc.opts) {
			for _, c := range f.Cases {
				if c.Status != result.Pending {
					t.Errorf("%s: status %s", c.Name, c.Status)
				}
				got = append(got, f.Path+":"+c.Name+"@"+c.Agent+"/"+c.Env+"/"+c.Variant)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("plan:\n got %v\nwant %v", got, tc.want)
		}
	}
	testCases := []testCase{
		{
			name: "everything, with inherited and default agent and env",
			opts: Options{DefaultAgent: "target-agent"},
			want: []string{
				"suites/a.yaml:books a table@suite-agent/sandbox/v1",
				"suites/a.yaml:cancels@own-agent/live/v1",
				"suites/b.yaml:pays a bill@target-agent/pre-release/v1",
				"suites/b.yaml:refunds@target-agent/live/v1",
				"suites/c.yaml:other@target-agent/sandbox/v1",
			},
		},
		{
			name: "name filter drops emptied files",
			opts: Options{Select: scenario.Selection{Name: regexp.MustCompile(`^(cancels|other)$`)}, DefaultEnv: "live"},
			want: []string{"suites/a.yaml:cancels@own-agent/live/v1", "suites/c.yaml:other@/live/v1"},
		},
	}
	if expr, err := scenario.ParseTagExpr("smoke"); err == nil {
		testCases = append(testCases, testCase{
			name: "tag filter",
			opts: Options{Select: scenario.Selection{Tags: &expr}},
			want: []string{"suites/a.yaml:books a table@suite-agent/sandbox/v1", "suites/b.yaml:pays a bill@/pre-release/v1"},
		})
	} else {
		t.Fatalf("parse tag expression: %v", err)
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestPlanQuarantineLapsesOnTheClock: the plan `agenttest list` prints
// says a quarantine whose last day is past has lapsed, with the options'
// clock left to its default (the real one).
func TestPlanQuarantineLapsesOnTheClock(t *testing.T) {
	t.Parallel()
	sc := booking("quarantined", 10)
	sc.Quarantine = &scenario.Quarantine{Reason: "wording", Until: time.Date(2020, 1, 31, 0, 0, 0, 0, time.UTC)}
	files := Plan([]*scenario.Suite{suite(file, sc)}, Options{})
	if q := files[0].Cases[0].Quarantine; q == nil || !q.Lapsed {
		t.Errorf("quarantine %+v, want lapsed", q)
	}
}

func TestRunLeanKeepsRawReplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("one", 10), booking("two", 20), broken("three", 30))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	cases := res.Files[0].Cases
	lean := cases[0].Attempts[0].Turns[1]
	if !lean.Released() {
		t.Fatal("a passing case keeps its decoded reply by default")
	}
	r := lean.Reply()
	if got := r.Meta().NodeTrace(); len(got) == 0 || r.ConversationID != cases[0].ConversationID() ||
		!strings.Contains(string(lean.Response), string(r.RawMetadata)) || !strings.Contains(string(lean.Response), r.Response) {
		t.Errorf("Reply() = %+v, trace %v", r, got)
	}
	if !lean.Released() || lean.Reply() == r {
		t.Error("Reply modified the turn")
	}
	if kept := cases[2].Attempts[0].Turns[1]; kept.Released() || kept.Result.Meta() == nil || kept.Reply() != kept.Result {
		t.Error("a failing case must keep its decoded reply")
	}

	opts.LeanAbove = 2
	res, err = Run(context.Background(), []*scenario.Suite{suite(file, booking("one", 10), booking("two", 20))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files[0].Cases[0].Attempts[0].Turns[1].Result.Meta() == nil {
		t.Error("a run of no more than LeanAbove cases must keep everything")
	}
	opts.LeanAbove = -1
	res, err = Run(context.Background(), []*scenario.Suite{suite(file, booking("one", 10), booking("two", 20), booking("three", 30))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files[0].Cases[0].Attempts[0].Turns[1].Result.Meta() == nil {
		t.Error("LeanAbove < 0 must keep everything")
	}
}

// turnsSeen records how many turns each case had when the observer saw
// it finish.
type turnsSeen struct {
	result.NoopObserver
	mu    sync.Mutex
	turns map[string]int
}

func (o *turnsSeen) CaseFinished(_ *result.File, c *result.Case) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.turns[c.Name] = len(c.Last().Turns)
}

func TestRunVerdictsOnlyDropsPassingTranscripts(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	seen := &turnsSeen{turns: map[string]int{}}
	opts.Observer = seen
	opts.VerdictsOnly = true
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("one", 10), broken("two", 20))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	passed, failed := res.Files[0].Cases[0], res.Files[0].Cases[1]
	if passed.Status != result.Passed || failed.Status != result.Failed {
		t.Fatalf("statuses %s, %s", passed.Status, failed.Status)
	}
	if seen.turns["one"] != 5 || seen.turns["two"] != 2 {
		t.Errorf("the observer saw %v turns, want the whole transcripts (one: 5, two: 2)", seen.turns)
	}
	if a := passed.Last(); a.Turns != nil || a.Status != result.Passed || a.ConversationID == "" {
		t.Errorf("a passing case keeps %d turns, status %s, conversation %q: want only its verdict", len(a.Turns), a.Status, a.ConversationID)
	}
	if n := len(failed.Last().Turns); n != 2 {
		t.Errorf("a failing case keeps %d turns, want its transcript", n)
	}
}

func TestRunConversationIDOwnsItsMemory(t *testing.T) {
	e := newEnv(t, sim.Options{Seed: 1})
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("one", 10))}, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	a := res.Files[0].Cases[0].Last()
	body := a.Turns[0].Response
	id := unsafe.StringData(a.ConversationID)
	if a.ConversationID == "" || !strings.Contains(string(body), a.ConversationID) {
		t.Fatalf("conversation %q, greeting %s", a.ConversationID, body)
	}
	// The body is kept in chunks shared with other replies: an id cut
	// from it would keep its chunk alive after the case drops its turns.
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(body))), uintptr(unsafe.Pointer(unsafe.SliceData(body)))+uintptr(len(body))
	if p := uintptr(unsafe.Pointer(id)); p >= start && p < end {
		t.Error("the attempt's conversation id shares the memory of the greeting's body")
	}
}

func TestRunInvalidEnvIsAConfigError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Retries = 2
	sc := booking("staging", 10)
	sc.Env = "staging"
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Errored || len(c.Attempts) != 1 || c.Attempts[0].Error.Kind != result.KindConfig || !strings.Contains(c.Attempts[0].Error.Message, "staging") {
		t.Fatalf("got %s: %s", c.Status, describe(c))
	}
	if n := e.proxy.starts.Load(); n != 0 {
		t.Errorf("%d requests sent for an invalid env", n)
	}
}
