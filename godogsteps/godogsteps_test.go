package godogsteps_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/godogsteps"
	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/platformtest"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// paths are the features both runs take, relative to the repository.
var paths = []string{"features", "examples/features", "godogsteps/testdata"}

// probeNumbers are the numbers the features call or text, and the
// clinic's own number they call and text from.
var probeNumbers = []string{"+447700900001", "+447700900002", "+15555550199", platformtest.Unreachable}

// key names a scenario in both runs: its file and its name without the
// row suffix agenttest adds to an Examples row.
func key(file, name string) string {
	if i := strings.LastIndex(name, " ["); i > 0 && strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	return file + ": " + name
}

// verdicts counts the verdicts of each key, sorted, for comparison.
type verdicts map[string][]string

func (v verdicts) add(k, verdict string) { v[k] = append(v[k], verdict) }

func (v verdicts) String() string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := append([]string(nil), v[k]...)
		sort.Strings(vs)
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(vs, ","))
	}
	return b.String()
}

// verdictConfirmTimeout bounds the confirmations' waits of
// TestVerdictsMatchAgenttestRun, which runs on real clocks.
const verdictConfirmTimeout = time.Second

// TestVerdictsMatchAgenttestRun runs the project's features through godog
// with the package, scenarios concurrently, and through agenttest's runner,
// and requires the same verdict for every scenario: passed, failed or
// skipped.
func TestVerdictsMatchAgenttestRun(t *testing.T) {
	e := platformtest.Start(t, nil)
	repo := os.DirFS("..")

	// agenttest run.
	suites, diags := scenario.Load(repo, paths)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, err := runner.Run(context.Background(), suites, runner.Options{
		Channel:     runner.DebugChat(e.Client),
		Messaging:   runner.Messaging(runner.MessagingClients(e.MessagingConfig(), e.MessagingToken), runner.MessagingOptions{}),
		Records:     e.Client,
		Webhooks:    e.Receiver,
		Connector:   e.Connector,
		Parallel:    4,
		RetryDelay:  -1,
		TurnTimeout: 5 * time.Second,
		// A handoff state the agent never stored is read again to the
		// bound (the platform may store it late): the simulator stores
		// it at once, so a short bound keeps that scenario's real wait
		// short, on both sides alike.
		ConfirmTimeout: verdictConfirmTimeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := verdicts{}
	// The first line each failed scenario says what broke with, ids of
	// conversations and calls aside.
	wantMsgs, gotMsgs := verdicts{}, verdicts{}
	ids := regexp.MustCompile(`\b(conv|OUT|CONV)-[0-9A-Za-z]+`)
	// A confirmation that waited its bound says how many reads fit in
	// it, which on real clocks follows the machine's load, not the
	// step's meaning: both sides' counts are left out.
	reads := regexp.MustCompile(`\(\d+ reads;`)
	facts := func(msg string) string { return reads.ReplaceAllString(ids.ReplaceAllString(msg, "ID"), "(N reads;") }
	// Statistical scenarios (@repeat, @confidence) are decided over many
	// sessions by agenttest; godog runs them once, so on a stochastic
	// agent the one run may fail where the sequential test passes: they
	// have no single-run verdict to compare.
	statistical := map[string]bool{}
	for _, f := range res.Files {
		for _, c := range f.Cases {
			if c.Repeat != nil {
				statistical[key(f.Path, c.Name)] = true
				continue
			}
			v := "failed"
			switch c.Status {
			case result.Passed, result.Flaky:
				v = "passed"
			case result.Skipped:
				v = "skipped"
			}
			want.add(key(f.Path, c.Name), v)
			if v == "failed" {
				a := c.Attempts[len(c.Attempts)-1]
				msg := ""
				switch {
				case a.Error != nil:
					msg = fmt.Sprintf("%s: %s: %s", a.Error.Pos, a.Error.Kind, a.Error.Message)
				case len(a.Failures) > 0:
					f := a.Failures[0]
					msg = fmt.Sprintf("%s: %s: %s", f.Pos, f.Key, f.Message)
				}
				wantMsgs.add(key(f.Path, c.Name), facts(msg))
			}
		}
	}

	// The same features through godog.
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: e.Sim.BuildURL, BuildKey: e.Sim.BuildKey,
		RuntimeURL: e.Sim.RuntimeURL, AccountID: e.Sim.AccountID, RuntimeKey: e.Sim.RuntimeKey,
		MessagingURL: e.Sim.MessagingURL, MessagingHost: e.Sim.Info.MessagingHost, Connectors: e.Sim.Info.MessagingConnectors,
		TurnTimeout:    5 * time.Second,
		ConfirmTimeout: verdictConfirmTimeout,
		Features:       repo,
		ProbeNumbers:   probeNumbers,
		SMSConnector:   e.Connector,
		Webhooks: func(ctx context.Context, conv, event string) error {
			_, err := e.Receiver.Wait(ctx, conv, event)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A scenario's verdict: failed when godog reports an error for it,
	// skipped when none of its steps ran, passed otherwise. Read once
	// godog is done: godog#650 fires the After hook before the hooks of
	// the steps it skips.
	type pickle struct {
		uri, name string
		err       error
		ran       bool
	}
	var mu sync.Mutex
	pickles := map[string]*pickle{}
	get := func(p *godog.Scenario) *pickle {
		mu.Lock()
		defer mu.Unlock()
		if pickles[p.Id] == nil {
			pickles[p.Id] = &pickle{uri: p.Uri, name: p.Name}
		}
		return pickles[p.Id]
	}
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			var current *godog.Scenario
			sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
				current = p
				get(p)
				return ctx, nil
			})
			sc.StepContext().After(func(ctx context.Context, _ *godog.Step, st godog.StepResultStatus, _ error) (context.Context, error) {
				if current != nil && st != godog.StepSkipped {
					pk := get(current)
					mu.Lock()
					pk.ran = true
					mu.Unlock()
				}
				return ctx, nil
			})
			sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
				pk := get(p)
				mu.Lock()
				pk.err = err
				mu.Unlock()
				return ctx, nil
			})
		},
		Options: &godog.Options{
			Format:      "progress",
			Output:      io.Discard,
			FS:          repo.(fs.FS),
			Paths:       paths,
			Concurrency: 4,
			Strict:      true,
			NoColors:    true,
			// features/testdata: scenarios that need a failing platform
			// (agenttest's Find skips testdata; godog does not).
			Tags: "~@platform-fault",
		},
	}.Run()
	got := verdicts{}
	var failures []string
	for _, pk := range pickles {
		if statistical[key(pk.uri, pk.name)] {
			continue
		}
		v := "passed"
		switch {
		case pk.err != nil && !errors.Is(pk.err, godog.ErrSkip):
			v = "failed"
			failures = append(failures, pk.err.Error())
			first, _, _ := strings.Cut(pk.err.Error(), "\n")
			gotMsgs.add(key(pk.uri, pk.name), facts(first))
		case !pk.ran:
			v = "skipped"
		}
		got.add(key(pk.uri, pk.name), v)
	}
	if status != 1 {
		t.Errorf("godog status %d, want 1 (some scenarios fail on purpose)", status)
	}
	if got.String() != want.String() {
		t.Logf("failures:\n%s", strings.Join(failures, "\n"))
		t.Errorf("godog verdicts:\n%s\nagenttest run verdicts:\n%s", got, want)
	}
	if got, want := gotMsgs.String(), wantMsgs.String(); got != want {
		t.Errorf("godog failures:\n%s\nagenttest run failures:\n%s", got, want)
	}
	for _, v := range []string{"passed", "failed", "skipped"} {
		if !strings.Contains(want.String(), v) {
			t.Errorf("no scenario %s: the comparison proves little:\n%s", v, want)
		}
	}
	// A failing step says what broke, as agenttest's report does.
	joined := strings.Join(failures, "\n")
	for _, msg := range []string{
		`response: reply does not contain the expected text`, `expected: contains "we are closed"`,
		`state.party_size: `, `confirm.conversation.handoff: `, `http: Then the call ends with status "success": probe: call `,
	} {
		if !strings.Contains(joined, msg) {
			t.Errorf("no failure says %q:\n%s", msg, joined)
		}
	}
}

func TestNewValidates(t *testing.T) {
	_, err := godogsteps.New(godogsteps.Options{Env: "prod"})
	for _, want := range []string{"BuildURL is required: the build host's URL, usually AGENTTEST_BUILD_URL", "BuildKey is required: the build host's key, usually AGENTTEST_BUILD_KEY", "agenttest sim --print-env", `Env "prod"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}

// TestValidateReportsEveryProblem: each option out of bounds is named,
// along with the others, before anything is connected.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	ok := godogsteps.Options{BuildURL: "http://127.0.0.1:1", BuildKey: "bk-0123456789abcdef"}
	for _, tc := range []struct {
		name string
		edit func(o *godogsteps.Options)
		want string // "" when the options are valid
	}{
		{"valid", func(o *godogsteps.Options) {}, ""},
		{"no build key", func(o *godogsteps.Options) { o.BuildKey = "" }, "BuildKey is required"},
		{"negative rate wait", func(o *godogsteps.Options) { o.RateWait = -time.Second }, "MaxReplyBytes, Rate and RateWait must not be negative"},
		{"negative rate", func(o *godogsteps.Options) { o.Rate = -1 }, "MaxReplyBytes, Rate and RateWait must not be negative"},
		{"negative reply bound", func(o *godogsteps.Options) { o.MaxReplyBytes = -1 }, "MaxReplyBytes, Rate and RateWait must not be negative"},
		{"negative turn timeout", func(o *godogsteps.Options) { o.TurnTimeout = -time.Second }, "timeouts must not be negative"},
		{"negative confirm timeout", func(o *godogsteps.Options) { o.ConfirmTimeout = -time.Second }, "timeouts must not be negative"},
		{"messaging quiet", func(o *godogsteps.Options) { o.MessagingQuiet = 10 * time.Second }, ""},
		{"negative messaging quiet", func(o *godogsteps.Options) { o.MessagingQuiet = -time.Second },
			"MessagingQuiet -1s is negative: 0 completes an answer when the typing indicator goes off"},
		{"messaging quiet past 10s", func(o *godogsteps.Options) { o.MessagingQuiet = 11 * time.Second },
			"MessagingQuiet 11s is longer than 10s"},
		{"messaging quiet past the turn timeout", func(o *godogsteps.Options) { o.MessagingQuiet, o.TurnTimeout = 5*time.Second, 5*time.Second },
			"MessagingQuiet: messaging_quiet 5s is not shorter than the turn timeout of 5s: every web chat answer would wait it out and time out (TurnTimeout)"},
		{"connectors without a host", func(o *godogsteps.Options) {
			o.MessagingURL = "http://127.0.0.1:2"
			o.Connectors = map[string]map[string]string{"restaurant": {"sandbox": "ct-0123456789abcdef"}}
		}, "Connectors need MessagingURL and MessagingHost"},
		// A confirmation would send no key (the platform's 401 blamed on
		// it) or name no workspace: refused at New.
		{"runtime host without its key", func(o *godogsteps.Options) {
			o.RuntimeURL, o.AccountID = "http://127.0.0.1:3", "ws-a1b2c3d4"
		}, "RuntimeURL needs AccountID and RuntimeKey"},
		{"runtime host without its workspace", func(o *godogsteps.Options) {
			o.RuntimeURL, o.RuntimeKey = "http://127.0.0.1:3", "rk-0123456789abcdef"
		}, "RuntimeURL needs AccountID and RuntimeKey"},
		// Checked at New, as the build and runtime hosts are, not at the
		// first scenario over web chat.
		{"plain http messaging host", func(o *godogsteps.Options) {
			o.MessagingURL, o.MessagingHost = "http://chat.example.com", "web.example.com"
			o.Connectors = map[string]map[string]string{"restaurant": {"sandbox": "ct-0123456789abcdef"}}
		}, "AllowHTTP"},
		// As a target's probe_numbers: a number with separators is one,
		// a word is not (it would list nothing a probe can call).
		{"probe numbers", func(o *godogsteps.Options) { o.ProbeNumbers = []string{"+44 7700 900001", "(0)20-7946.0000"} }, ""},
		{"a probe number that is not one", func(o *godogsteps.Options) { o.ProbeNumbers = []string{"+44 7700 900001", "reception"} }, `ProbeNumbers: "reception" is not a phone number`},
		// Reported with the other problems, not after them.
		{"short connector token", func(o *godogsteps.Options) {
			o.BuildKey = ""
			o.MessagingURL, o.MessagingHost = "http://127.0.0.1:2", "web.example.com"
			o.Connectors = map[string]map[string]string{"restaurant": {"sandbox": "short"}}
		}, "connector token of restaurant in sandbox is 5 characters long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			_, err := godogsteps.New(o)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("New: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("New: err = %v, want %q", err, tc.want)
			}
		})
	}
}

// A plain http:// build host that is not loopback would carry the key in
// clear text: refused, as in a run, unless AllowHTTP says it is meant.
func TestNewRefusesPlainHTTP(t *testing.T) {
	o := godogsteps.Options{BuildURL: "http://build.example.com", BuildKey: "bk-0123456789abcdef"}
	if _, err := godogsteps.New(o); err == nil || !strings.Contains(err.Error(), "http://build.example.com") || !strings.Contains(err.Error(), "AllowHTTP") {
		t.Errorf("New with a plain http build host: err = %v, want it refused naming AllowHTTP", err)
	}
	o.AllowHTTP = true
	if _, err := godogsteps.New(o); err != nil {
		t.Errorf("New with AllowHTTP: %v", err)
	}
	o.MaxReplyBytes = -1
	if _, err := godogsteps.New(o); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("New with MaxReplyBytes -1: err = %v", err)
	}
}

// A key that a step reads (${env:...}) never reaches godog: the runner
// masks the failures it records as it records them, so the error a step
// returns, and godog's report of it, hold the mask. Nor does it reach the
// platform: a step that would say it errors before it is sent.
func TestStepErrorsHoldNoKey(t *testing.T) {
	const key = "eyJhbGci.PLANTED+key/0123"
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key})
	features := fstest.MapFS{"leak.feature": {Data: []byte(`Feature: leak
  @agent:restaurant
  Scenario: an expectation that reads the key
    When the user says "hello"
    Then the agent's reply contains "${env:LEAK}"

  @agent:restaurant
  Scenario: a turn that says the key
    When the user says "my key is ${env:LEAK}"
`)}}
	steps := leakySteps(t, s.BuildURL, key, features)
	var out strings.Builder
	var mu sync.Mutex
	stepErrs := map[string]error{}
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			sc.After(func(ctx context.Context, g *godog.Scenario, err error) (context.Context, error) {
				mu.Lock()
				defer mu.Unlock()
				stepErrs[g.Name] = err
				return ctx, nil
			})
		},
		Options: &godog.Options{Format: "pretty", Output: &out, FS: features, Paths: []string{"leak.feature"}, Strict: true, NoColors: true},
	}.Run()
	expectErr, sayErr := stepErrs["an expectation that reads the key"], stepErrs["a turn that says the key"]
	if status != 1 || expectErr == nil || sayErr == nil {
		t.Fatalf("godog status %d, step errors %v: want both scenarios to fail\n%s", status, stepErrs, out.String())
	}
	for _, text := range []string{expectErr.Error(), sayErr.Error(), out.String()} {
		for _, form := range secret.Forms(key) {
			if strings.Contains(text, form) {
				t.Errorf("godog shows %q:\n%s", form, text)
			}
		}
	}
	if !strings.Contains(expectErr.Error(), `expected: contains "`+secret.Mask+`"`) {
		t.Errorf("the step error does not show the masked expectation:\n%s", expectErr)
	}
	if !strings.Contains(sayErr.Error(), "leak.feature:9:5: config: turn 1: say: holds a key or secret of the target") {
		t.Errorf("the say was not refused:\n%s", sayErr)
	}
}

// A Go team registers its own steps next to agenttest's, as the docs tell
// it to, and uses both in one scenario: a Background of its own, its own
// step between a turn and a check, and a Scenario Outline. Only
// agenttest's steps make the session's program, so the team's steps are
// not "undefined steps" of agenttest, and a failing check after a team
// step points at its own line. godog's JUnit and cucumber formatters,
// with scenarios run concurrently, show no key.
func TestTeamStepsMixWithAgenttestSteps(t *testing.T) {
	const key = "eyJhbGci.PLANTED+mixkey/0123"
	s := simtest.Start(t, sim.Options{Seed: 1, BuildKey: key})
	features := fstest.MapFS{"booking.feature": {Data: []byte(`@agent:restaurant
Feature: booking through the agent and our backend

  Background:
    Given our backend has 3 free tables

  Scenario: the agent asks for the party size
    When the user says "I'd like to book a table"
    And our backend reserves 1 tables
    Then the agent's reply contains "How many"
    And our backend has 2 free tables left

  Scenario Outline: party of <n>
    When the user says "I'd like to book a table"
    And our backend reserves <n> tables
    Then the agent's reply contains "<word>"

    Examples:
      | n | word     |
      | 1 | How many |
      | 2 | How many |

  Scenario: our backend alone
    When our backend reserves 3 tables
    Then our backend has 0 free tables left

  Scenario: a failing check after a team step
    When the user says "I'd like to book a table"
    And our backend reserves 1 tables
    Then the agent's reply contains "${env:LEAK}"
`)}}
	steps := leakySteps(t, s.BuildURL, key, features)
	type tables struct{}
	dir := t.TempDir()
	var out strings.Builder
	var failed scenarioErrors
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			sc.Step(`^our backend has (\d+) free tables$`, func(ctx context.Context, n int) context.Context {
				return context.WithValue(ctx, tables{}, n)
			})
			sc.Step(`^our backend reserves (\d+) tables$`, func(ctx context.Context, n int) context.Context {
				return context.WithValue(ctx, tables{}, ctx.Value(tables{}).(int)-n)
			})
			sc.Step(`^our backend has (\d+) free tables left$`, func(ctx context.Context, n int) error {
				if got := ctx.Value(tables{}).(int); got != n {
					return fmt.Errorf("backend has %d tables, want %d", got, n)
				}
				return nil
			})
			failed.record(sc)
		},
		Options: &godog.Options{
			Format: "pretty,junit:" + dir + "/junit.xml,cucumber:" + dir + "/cucumber.json",
			Output: &out, FS: features, Paths: []string{"booking.feature"},
			Strict: true, NoColors: true, Concurrency: 2,
		},
	}.Run()
	want := map[string]string{"a failing check after a team step": "booking.feature:30:5: response: reply does not contain"}
	if status != 1 || len(failed.errs) != len(want) {
		t.Fatalf("godog status %d, failed scenarios %v: want only %q failed\n%s", status, failed.errs, "a failing check after a team step", out.String())
	}
	for name, prefix := range want {
		if !strings.HasPrefix(failed.errs[name], prefix) {
			t.Errorf("scenario %q failed with %q, want it to start %q", name, failed.errs[name], prefix)
		}
	}
	reports := []string{out.String()}
	for _, f := range []string{"junit.xml", "cucumber.json"} {
		b, err := os.ReadFile(dir + "/" + f)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, string(b))
	}
	for i, text := range reports {
		if !strings.Contains(text, "reply does not contain") {
			t.Errorf("report %d does not show the failure:\n%s", i, text)
		}
		for _, form := range secret.Forms(key) {
			if strings.Contains(text, form) {
				t.Errorf("report %d shows %q:\n%s", i, form, text)
			}
		}
	}
}

// leakySteps are steps whose ${env:LEAK} is the build key itself, the
// worst a feature can do, to prove it is masked.
func leakySteps(t *testing.T, buildURL, key string, features fs.FS) *godogsteps.Steps {
	t.Helper()
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: buildURL, BuildKey: key, Features: features,
		Getenv: func(name string) (string, bool) { return key, name == "LEAK" },
	})
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// A team's pattern that also matches one of agenttest's step texts, outside
// strict mode (where godog calls the step ambiguous), runs instead of
// agenttest's: the session never sees that step, and the next step of
// agenttest's says so instead of checking the greeting as if it were the
// reply; when none follows, the scenario fails at its end instead of
// passing with checks that never ran.
func TestShadowedStepIsNamed(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"shadow.feature": {Data: []byte(`@agent:restaurant
Feature: shadow
  Scenario: a team step shadows agenttest's
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"

  Scenario: a team step shadows agenttest's last check
    When the user says "I'd like to book a table"
    Then the agent's reply contains "nothing like this"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^the user says "([^"]*)"$`, func(string) error { return nil })
			sc.Step(`^the agent's reply contains "nothing like this"$`, func() error { return nil })
			steps.Register(sc)
		},
		Options: &godog.Options{Format: "progress", Output: &out, FS: features, Paths: []string{"shadow.feature"}, NoColors: true},
	}.Run()
	for _, want := range []string{
		`shadow.feature:4:5: "When the user says \"I'd like to book a table\"" ran with another step definition`,
		// Every step shadowed: no step of agenttest's runs, and the scenario
		// fails at its end rather than pass untested.
		`after scenario hook failed: shadow.feature:8:5: "When the user says \"I'd like to book a table\"" ran with another step definition`,
	} {
		if status != 1 || !strings.Contains(out.String(), want) {
			t.Errorf("godog status %d: want 1 and %s in\n%s", status, want, out.String())
		}
	}
}

// A failing step's error shows what agenttest run's console shows of the
// failure: the values compared (a multi-line one as a block) and the diff,
// with control characters escaped so that a reply or an expectation
// cannot drive the terminal godog prints to.
func TestStepErrorShowsDiff(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"diff.feature": {Data: []byte(`@agent:restaurant
Feature: diff
  Scenario: one line
    When the user says "I'd like to book a table"
    Then the agent says "How many people will be joining you tonight?"

  Scenario: several lines
    When the user says "I'd like to book a table"
    Then the agent says:
      """
      line one
      line two
      """

  Scenario: control characters
    When the user says "I'd like to book a table"
    Then the agent says "${env:CLEAR}"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features,
		Getenv: func(name string) (string, bool) { return "\x1b[2Jgone", name == "CLEAR" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed scenarioErrors
	var out strings.Builder
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			failed.record(sc)
		},
		Options: &godog.Options{Format: "progress", Output: &out, FS: features, Paths: []string{"diff.feature"}, Strict: true, NoColors: true, Concurrency: 2},
	}.Run()
	if status != 1 {
		t.Fatalf("godog status %d, want 1\n%s", status, out.String())
	}
	const reply = "Lovely! How many people will be joining you, and at what time?"
	for name, want := range map[string]string{
		"one line": "diff.feature:5:5: response: reply is not the expected text\n" +
			"  expected: How many people will be joining you tonight?\n" +
			"  actual:   " + reply + "\n" +
			"  diff:     {+Lovely! +}How many people will be joining you[- tonight-]{+, and at what time+}?",
		"several lines": "diff.feature:9:5: response: reply is not the expected text\n" +
			"  expected: |\n    line one\n    line two\n" +
			"  actual:   " + reply + "\n" +
			"  diff:\n    --- expected\n    +++ actual\n    - line one\n    - line two\n    + " + reply,
		"control characters": "diff.feature:17:5: response: reply is not the expected text\n" +
			`  expected: "\x1b[2Jgone"` + "\n" +
			"  actual:   " + reply + "\n" +
			`  diff:     [-\x1b[2Jgone-]{+` + reply + "+}",
	} {
		if failed.errs[name] != want {
			t.Errorf("scenario %q failed with\n%s\nwant\n%s", name, failed.errs[name], want)
		}
	}
}

// With no Options.Features the steps read a feature file as godog does
// without an FS: by the path godog was given, so an absolute or ../ path
// still gives failures their lines and Examples rows their values.
func TestFeaturesDefaultReadsGodogPaths(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/party.feature", []byte(`@agent:restaurant
Feature: party
  Scenario Outline: party of <n>
    When the user says "I'd like to book a table"
    And the user says "<n> people at 7pm"
    Then the state "party_size" is "${n}"
    And the agent's reply contains "never said"

    Examples:
      | n |
      | 3 |
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(features fs.FS) string {
		steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
		if err != nil {
			t.Fatal(err)
		}
		var stepErr error
		var out strings.Builder
		status := godog.TestSuite{
			ScenarioInitializer: func(sc *godog.ScenarioContext) {
				steps.Register(sc)
				sc.After(func(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
					stepErr = err
					return ctx, nil
				})
			},
			Options: &godog.Options{Format: "progress", Output: &out, Paths: []string{dir}, Strict: true, NoColors: true},
		}.Run()
		if status != 1 || stepErr == nil {
			t.Fatalf("godog status %d, error %v: want the last check to fail\n%s", status, stepErr, out.String())
		}
		return stepErr.Error()
	}
	if got, want := run(nil), dir+"/party.feature:7:5: response: reply does not contain"; !strings.HasPrefix(got, want) {
		t.Errorf("with no Options.Features the step failed with\n%s\nwant it to start %q", got, want)
	}
	// An FS that lacks the file: the error says why ${n} is unknown.
	if got, want := run(fstest.MapFS{}), "godogsteps cannot read the feature file "+dir+"/party.feature (Options.Features should be the FS godog reads from)"; !strings.Contains(got, "${n}") || !strings.Contains(got, want) {
		t.Errorf("with an FS that lacks the file the step failed with\n%s\nwant it to say %q", got, want)
	}
}

// scenarioErrors records the error each scenario of a godog suite ended
// with, by name.
type scenarioErrors struct {
	mu   sync.Mutex
	errs map[string]string
}

// record adds the After hook that records them to sc.
func (e *scenarioErrors) record(sc *godog.ScenarioContext) {
	sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
		if err != nil {
			e.mu.Lock()
			if e.errs == nil {
				e.errs = map[string]string{}
			}
			e.errs[p.Name] = err.Error()
			e.mu.Unlock()
		}
		return ctx, nil
	})
}

// TestMessagingEndAfterTypingOverGodog: a platform may turn its typing
// indicator off and only then end the session; the end is still the
// answer's whose checks expect it, over godog's steps as in agenttest
// run (runner.TestMessagingEndAfterTyping): a user turn's, and the
// greeting's.
func TestMessagingEndAfterTypingOverGodog(t *testing.T) {
	t.Parallel()
	var (
		joined  = platformtest.Joined("1", "c-1")
		welcome = platformtest.Message("2", "", "Welcome.")
		bye     = platformtest.Message("3", "", "Goodbye.")
		stop    = platformtest.TypingStop("4")
		end     = platformtest.SessionEnd("5", "agent_ended")
	)
	for _, tc := range []struct {
		name string
		// greeting: the join's answer says goodbye and ends the session;
		// else the answer to the user's message does.
		greeting bool
		feature  string
	}{
		{name: "a turn", feature: `@agent:billing @via:messaging
Feature: s
  Scenario: says goodbye
    When the user says "bye"
    Then the agent's reply contains "Goodbye"
    And the session ends
`},
		{name: "the greeting", greeting: true, feature: `@agent:billing @via:messaging
Feature: s
  Scenario: says goodbye
    Then the greeting contains "Goodbye"
    And the session ends
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
				switch {
				case n == 1 && tc.greeting:
					return []platformtest.Frame{joined, bye, stop, end}
				case n == 1:
					return []platformtest.Frame{joined, welcome, platformtest.TypingStop("s")}
				}
				return []platformtest.Frame{bye, stop, end}
			})
			status, failed, out := runOverMessaging(t, p, tc.feature)
			if status != 0 || len(failed) > 0 {
				t.Errorf("godog status %d, failed %v: want the scenario to pass\n%s", status, failed, out)
			}
		})
	}
}

// TestOptionsMeetTheScenario: what godog reports for a scenario when
// the options and the scenario meet, as agenttest run would: the
// scenario's agent and environment win over Options.Agent and Env, a probe calls only the
// ProbeNumbers (written with or without separators), a webhook that does
// not arrive fails its step, and an error names where it happened.
func TestOptionsMeetTheScenario(t *testing.T) {
	e := platformtest.Start(t, nil)
	features := fstest.MapFS{"opts.feature": {Data: []byte(`Feature: options
  @agent:restaurant
  Scenario: the scenario's agent
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"

  @agent:clinic @env:sandbox
  Scenario: the scenario's environment
    When the user says "goodbye"
    Then the conversation record shows:
      | environment | sandbox |

  @agent:clinic @within:5s
  Scenario: a listed number
    When an outbound call is placed to "+447700900001"
    Then the call ends with status "success"

  @agent:clinic
  Scenario: a number not listed
    When an outbound call is placed to "+447700900002"
    Then the call ends with status "success"

  @agent:restaurant
  Scenario: a webhook that does not arrive
    When the user says "goodbye"
    Then a "conversation.completed" webhook arrives

  @agent:restaurant
  Scenario: the last step shadowed
    Given the conversation has started
    Then the agent's reply contains "nothing like this"

  @agent:restaurant
  Scenario: a warning and an error
    When the user says "hi"
    Then the agent's reply contains ""
    Then the call ends with status "calling"

  @agent:restaurant
  Scenario: an expectation that reads a connector token
    When the user says "hi"
    Then the agent's reply contains "${env:TOKEN}"
`)}}
	// Any connector token of the simulator.
	var token string
	for _, byEnv := range e.Sim.Info.MessagingConnectors {
		for _, tok := range byEnv {
			token = tok
		}
	}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: e.Sim.BuildURL, BuildKey: e.Sim.BuildKey,
		RuntimeURL: e.Sim.RuntimeURL, AccountID: e.Sim.AccountID, RuntimeKey: e.Sim.RuntimeKey,
		MessagingURL: e.Sim.MessagingURL, MessagingHost: e.Sim.Info.MessagingHost, Connectors: e.Sim.Info.MessagingConnectors,
		Getenv:       func(name string) (string, bool) { return token, name == "TOKEN" },
		Agent:        "clinic",
		Env:          "pre-release",
		Features:     features,
		ProbeNumbers: []string{"+44 7700 900001"},
		Webhooks: func(ctx context.Context, conv, event string) error {
			return errors.New("no " + event + " event arrived")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var failed scenarioErrors
	var out strings.Builder
	godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^the agent's reply contains "nothing like this"$`, func() error { return nil })
			steps.Register(sc)
			failed.record(sc)
		},
		Options: &godog.Options{Format: "progress", Output: &out, FS: features, Paths: []string{"opts.feature"}, NoColors: true},
	}.Run()
	for name, want := range map[string]string{
		"the scenario's agent":           "",
		"the scenario's environment":     "",
		"a listed number":                "",
		"a number not listed":            "opts.feature:20:5: config: probe: outbound_call: to +447700900002 is not listed",
		"a webhook that does not arrive": "opts.feature:26:5: ",
		"the last step shadowed":         `opts.feature:31:5: "Then the agent's reply contains \"nothing like this\"" ran with another step definition`,
		// The error alone: the warning is lint's to show.
		"a warning and an error":                      `before scenario hook failed: opts.feature:37:36: step "Then the call ends with status \"calling\"": "calling" is not a final call status (write success or failure; queued and calling are not final)`,
		"an expectation that reads a connector token": "opts.feature:42:5: response: reply does not contain the expected text",
	} {
		got := failed.errs[name]
		if (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("scenario %q failed with %q, want %q\n%s", name, got, want, out.String())
		}
	}
	if got := failed.errs["a webhook that does not arrive"]; !strings.Contains(got, "no conversation.completed event arrived") {
		t.Errorf("the webhook step failed with %q, want the wait's reason", got)
	}
	if got := failed.errs["a warning and an error"]; strings.Contains(got, "\n") {
		t.Errorf("a scenario that cannot run failed with more than its error:\n%s", got)
	}
	if token == "" || strings.Contains(out.String(), token) || strings.Contains(failed.errs["an expectation that reads a connector token"], token) {
		t.Errorf("godog shows the connector token %q (or the simulator has none):\n%s", token, out.String())
	}
}

// TestInterruptedStep: a turn that the end of godog's context stops
// fails at its line saying the run was interrupted, as agenttest run
// errors the case, rather than pass or blame the platform.
func TestInterruptedStep(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"stop.feature": {Data: []byte(`@agent:restaurant
Feature: stop
  Scenario: interrupted
    When the user says "I'd like to book a table"
    And the run is interrupted
    When the user says "4 people at 7pm"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var failed scenarioErrors
	var out strings.Builder
	godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			sc.Step(`^the run is interrupted$`, func() error { cancel(); return nil })
			steps.Register(sc)
			failed.record(sc)
		},
		Options: &godog.Options{Format: "progress", Output: &out, FS: features, Paths: []string{"stop.feature"}, NoColors: true, DefaultContext: ctx},
	}.Run()
	if got := failed.errs["interrupted"]; got != "stop.feature:6:5: interrupted: run interrupted" {
		t.Errorf("the scenario failed with %q, want run interrupted\n%s", got, out.String())
	}
}

// TestRegisterOfUnmadeSteps: a Steps that New did not make (its error
// ignored, so nil, or a zero value) fails each of agenttest's steps
// saying so, instead of panicking in godog's goroutine, and leaves a
// scenario of the team's own steps alone.
func TestRegisterOfUnmadeSteps(t *testing.T) {
	features := fstest.MapFS{"unmade.feature": {Data: []byte(`@agent:restaurant
Feature: unmade
  Scenario: ours
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"

  Scenario: theirs
    Given our backend is up
`)}}
	for name, steps := range map[string]*godogsteps.Steps{"nil": nil, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			status, errs := godogRun(steps, func(sc *godog.ScenarioContext) {
				sc.Step(`^our backend is up$`, func() {})
			}, features, godog.Options{Strict: true}, "unmade.feature")
			want := "godogsteps: this Steps was not made by New (is New's error checked?): agenttest's steps cannot run"
			if status != 1 || errs["ours"] != want || len(errs) != 1 {
				t.Errorf("godog status %d, scenarios failed with %q, want 1 and only %q failing with %q", status, errs, "ours", want)
			}
		})
	}
}

// TestConfigErrorsNameOptions: a scenario that needs what the Options do
// not give fails naming the godogsteps.Options field to set, not the key
// of an agenttest.yaml target or a flag, which a Go team does not have.
func TestConfigErrorsNameOptions(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"config.feature": {Data: []byte(`@agent:clinic
Feature: configuration
  Scenario: a call
    When an outbound call is placed to "+447700900001"

  Scenario: an SMS
    When the SMS "Reply YES" is sent to "+447700900002"

  Scenario: a webhook
    When the user says "I have chest pain"
    Then a "handoff.created" webhook arrives

  @via:messaging
  Scenario: web chat
    When the user says "hello"

  @runtime
  Scenario: a record
    When the user says "goodbye"
    Then the conversation record shows:
      | channel | WEBCHAT |
`)}, "noagent.feature": {Data: []byte(`Feature: no agent
  Scenario: no agent
    When the user says "hello"
`)}}
	run := func(o godogsteps.Options, tags string) map[string]string {
		o.BuildURL, o.BuildKey, o.Features = s.BuildURL, s.BuildKey, features
		steps, err := godogsteps.New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, errs := godogRun(steps, nil, features, godog.Options{Strict: true, Tags: tags}, "config.feature", "noagent.feature")
		return errs
	}
	errs := run(godogsteps.Options{
		RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey,
		ProbeNumbers: []string{"+447700900002"},
	}, "~@runtime")
	maps.Copy(errs, run(godogsteps.Options{}, "@runtime"))
	for name, want := range map[string]string{
		"a call":    "Options.ProbeNumbers",
		"an SMS":    "Options.SMSConnector",
		"a webhook": "Options.Webhooks",
		"web chat":  "Options.MessagingURL",
		"a record":  "Options.RuntimeURL",
		"no agent":  "Options.Agent",
	} {
		got := errs[name]
		if !strings.Contains(got, "config: ") || !strings.Contains(got, want) || strings.Contains(got, "target") {
			t.Errorf("scenario %q failed with %q, want a configuration error naming %s", name, got, want)
		}
	}
}

// TestDebugChatStepOverMessagingOverGodog: a step that reads debug-chat
// metadata in a scenario over messaging is refused before godog runs it,
// naming the feature step that checks the record instead and the tag
// that goes back to debug chat, not YAML keys.
func TestDebugChatStepOverMessagingOverGodog(t *testing.T) {
	t.Parallel()
	p := platformtest.StartMessaging(t, func(n int, _ []byte) []platformtest.Frame {
		if n == 1 {
			return []platformtest.Frame{platformtest.Joined("1", "c-1"), platformtest.Message("2", "", "Welcome."), platformtest.TypingStop("3")}
		}
		return []platformtest.Frame{platformtest.Message("4", "", "Your plan is gold."), platformtest.TypingStop("5")}
	})
	_, failed, out := runOverMessaging(t, p, `@agent:billing @via:messaging
Feature: s
  Scenario: reads the state
    When the user says "my plan?"
    Then the state "plan" is "gold"

  Scenario: reads a delay
    When the user says "my plan?"
    Then the reply is delayed
`)
	for name, want := range map[string]string{
		"reads the state": "check what the platform recorded with Then the conversation record shows: (state, metrics, handoff), or test this in a scenario over debug chat (@via:debug_chat)",
		"reads a delay":   "test the delayed reply in a scenario over debug chat (@via:debug_chat)",
	} {
		if got := failed[name]; !strings.Contains(got, want) || strings.Contains(got, "confirm:") {
			t.Errorf("%s: error %q, want it to say %q\n%s", name, got, want, out)
		}
	}
}

// godogRun runs the features at paths with the steps and the team's own
// (own, when not nil), under o (its output, format and FS set here), and
// returns godog's status and the error each failed scenario ended with,
// by name.
func godogRun(steps *godogsteps.Steps, own func(*godog.ScenarioContext), features fs.FS, o godog.Options, paths ...string) (int, map[string]string) {
	var failed scenarioErrors
	o.Format, o.Output, o.FS, o.Paths, o.NoColors = "progress", io.Discard, features, paths, true
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			if own != nil {
				own(sc)
			}
			failed.record(sc)
		},
		Options: &o,
	}.Run()
	return status, failed.errs
}

// TestLiveNeedsAllowLive: a scenario in the live environment talks to the
// live agent; as agenttest run refuses it without --allow-live, the steps
// fail it before its first call without Options.AllowLive, and New
// refuses Env "live" without it.
func TestLiveNeedsAllowLive(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"live.feature": {Data: []byte(`@agent:restaurant
Feature: live
  @env:live
  Scenario: tagged
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"

  Scenario: set up
    Given the environment "live"
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"

  Scenario: sandbox
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
`)}}
	o := godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features}
	if _, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Env: "live"}); err == nil || !strings.Contains(err.Error(), "AllowLive") {
		t.Errorf("New with Env live: err = %v, want it refused naming AllowLive", err)
	}
	for _, allow := range []bool{false, true} {
		o.AllowLive = allow
		steps, err := godogsteps.New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, errs := godogRun(steps, nil, features, godog.Options{Strict: true}, "live.feature")
		for name, line := range map[string]string{"tagged": "live.feature:4:3", "set up": "live.feature:8:3"} {
			want := ""
			if !allow {
				want = "before scenario hook failed: " + line + `: config: scenario "` + name + `" runs in the live environment without godogsteps.Options.AllowLive: set it to test in live on purpose`
			}
			if got := errs[name]; got != want {
				t.Errorf("AllowLive %v: scenario %q failed with %q, want %q", allow, name, got, want)
			}
		}
		if got := errs["sandbox"]; got != "" {
			t.Errorf("AllowLive %v: the sandbox scenario failed with %q", allow, got)
		}
	}
}

// TestScenarioCutShortByGodog: a team's step that is pending or skips
// the scenario, or one godog does not know, ends the scenario before the
// agenttest steps after it, outside strict mode without an error; those
// steps did not run with another definition, and the scenario is not
// failed for it: godog reports it pending, skipped or undefined.
func TestScenarioCutShortByGodog(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"cut.feature": {Data: []byte(`@agent:restaurant
Feature: cut short
  Scenario: pending
    Given our backend is not ready yet
    When the user says "I'd like to book a table"

  Scenario: skipped
    When the user says "I'd like to book a table"
    And our backend skips this one
    Then the agent's reply contains "How many"

  Scenario: undefined
    When the user says "I'd like to book a table"
    And a step nobody wrote
    Then the agent's reply contains "How many"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	status, errs := godogRun(steps, func(sc *godog.ScenarioContext) {
		sc.Step(`^our backend is not ready yet$`, func() error { return godog.ErrPending })
		sc.Step(`^our backend skips this one$`, func() error { return godog.ErrSkip })
	}, features, godog.Options{}, "cut.feature")
	if status != 0 || len(errs) != 0 {
		t.Errorf("godog status %d, scenarios failed with %q: want 0 and none failed", status, errs)
	}
}

// TestLineFilteredPath: godog runs one scenario of a file given as
// path:LINE and names its pickles by that path, line included; the steps
// read the file without the line, so the Examples values resolve and
// failures point at the step's line, as without the filter.
func TestLineFilteredPath(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	src := []byte(`@agent:restaurant
Feature: line filter
  Scenario: not this one
    When the user says "hello"

  Scenario Outline: this one
    When the user says "I'd like to book a table"
    Then the agent's reply contains "${word}"

    Examples:
      | word    |
      | Nothing |
`)
	// A colon that godog does not read as a line filter (no digits
	// after it) is part of the file's name.
	features := fstest.MapFS{"line.feature": {Data: src}, "a:b.feature": {Data: src}, "colon.feature:": {Data: src}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	for path, file := range map[string]string{"line.feature:6": "line.feature", "a:b.feature": "a:b.feature", "colon.feature:": "colon.feature:"} {
		_, errs := godogRun(steps, nil, features, godog.Options{Strict: true}, path)
		want := file + ":8:5: response: reply does not contain the expected text"
		if got := errs["this one"]; !strings.HasPrefix(got, want) {
			t.Errorf("%s: scenarios failed with %q, want %q failing with %q", path, errs, "this one", want)
		}
	}
}

// TestOptionsMisplacedKey: a key in a setting that is not a key's (a
// build URL that carries it in its path or query, or its credentials, an
// Env or AccountID given the wrong variable) is refused by New, as a run
// refuses it in a target, and neither the refusal nor the options printed
// show it, nor the credentials of a URL. Before, New accepted a key in a
// URL's path (sent in every call's request line), and its errors and %v
// quoted the key and the URL's credentials as given.
func TestOptionsMisplacedKey(t *testing.T) {
	t.Parallel()
	const key, cred = "bk-PLANTED-0123456789", "PLANTEDcred-0123456789"
	ok := godogsteps.Options{BuildURL: "https://build.example.com", BuildKey: key}
	for _, tc := range []struct {
		name string
		edit func(o *godogsteps.Options)
		want string
	}{
		{"a URL's path", func(o *godogsteps.Options) { o.BuildURL += "/proxy/" + key }, "BuildURL holds a key"},
		{"a URL's query", func(o *godogsteps.Options) { o.BuildURL += "/?api_key=" + url.QueryEscape(key) }, "BuildURL holds a key"},
		{"Env", func(o *godogsteps.Options) { o.Env = key }, "Env holds a key"},
		{"AccountID", func(o *godogsteps.Options) {
			o.RuntimeURL, o.AccountID, o.RuntimeKey = "https://runtime.example.com", key, "rk-0123456789abcdef"
		}, "AccountID holds a key"},
		{"ProbeNumbers", func(o *godogsteps.Options) { o.ProbeNumbers = []string{"+447700900001", key} }, "ProbeNumbers holds a key"},
		// A key too short to mask beside it masks nothing itself, and
		// takes nothing from the others' masking.
		{"Env, beside a short key", func(o *godogsteps.Options) { o.Env, o.CallToken = key, "short-tok" }, "Env holds a key"},
		{"a URL's password", func(o *godogsteps.Options) { o.BuildURL = "https://user:" + cred + "@build.example.com" }, "credentials in the URL are not allowed"},
		{"a messaging URL's token", func(o *godogsteps.Options) {
			o.MessagingURL, o.MessagingHost = "https://chat.example.com/?token="+cred, "web.example.com"
		}, "must not have a query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := ok
			tc.edit(&o)
			_, err := godogsteps.New(o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want %q", err, tc.want)
			}
			texts := []string{fmt.Sprint(err)}
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
				texts = append(texts, fmt.Sprintf(verb, o))
			}
			for _, text := range texts {
				for _, k := range []string{key, cred} {
					for _, form := range secret.Forms(k) {
						if strings.Contains(text, form) {
							t.Errorf("shows %q:\n%s", form, text)
						}
					}
				}
			}
		})
	}
}

// TestOptionsPrintNoKey: a team that logs its Options (t.Logf("%+v",
// opts), a test helper's diff) shows every setting but no key, with any
// verb, as agenttest's resolved target does.
func TestOptionsPrintNoKey(t *testing.T) {
	keys := []string{"bk-0123456789abcdef", "rk-0123456789abcdef", "ct-0123456789abcdef", "mt-0123456789abcdef"}
	o := godogsteps.Options{
		BuildURL: "https://build.example.com", BuildKey: keys[0],
		RuntimeURL: "https://runtime.example.com", AccountID: "ws-a1b2c3d4", RuntimeKey: keys[1], CallToken: keys[2],
		Connectors: map[string]map[string]string{"restaurant": {"sandbox": keys[3]}},
		Agent:      "restaurant",
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		got := fmt.Sprintf(verb, o) + fmt.Sprintf(verb, &o)
		for _, k := range keys {
			for _, form := range secret.Forms(k) {
				if strings.Contains(got, form) {
					t.Errorf("%s shows a key (%q):\n%s", verb, form, got)
				}
			}
		}
		if verb != "%x" && (!strings.Contains(got, "https://build.example.com") || !strings.Contains(got, "restaurant")) {
			t.Errorf("%s hides the settings that are not keys:\n%s", verb, got)
		}
	}
	// A key not given prints empty: a reader debugging a secret not
	// mapped into the job must not see it as set.
	unset := o
	unset.CallToken = ""
	if got := fmt.Sprintf("%+v", unset); !strings.Contains(got, "CallToken: HTTPClient:") {
		t.Errorf("%%+v of options without a CallToken = %s, want it empty", got)
	}
	if got := fmt.Sprintf("%#v", o); !strings.HasPrefix(got, "godogsteps.Options{") {
		t.Errorf("%%#v = %s, want it to name godogsteps.Options", got)
	}
	if o.BuildKey != keys[0] || o.Connectors["restaurant"]["sandbox"] != keys[3] {
		t.Error("printing the options changed them")
	}
}

// TestSetupStepsAloneOpenNoSession: a Background of agenttest's setup
// steps (Given the agent ...) above a scenario of the team's own steps
// leaves that scenario the team's, as one with no step of agenttest's is:
// no session opens (the agent is never called, so an agent the platform
// does not know does not fail it), and it is not refused for having no
// When or Then steps; without a step of the team's it is refused, as
// agenttest run refuses it.
func TestSetupStepsAloneOpenNoSession(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"bg.feature": {Data: []byte(`Feature: a Background of ours
  Background:
    Given the agent "no-such-agent"
    And the channel "WEBCHAT"

  Scenario: our backend alone
    Given our backend is up

  Scenario: the agent
    When the user says "hello"

  Scenario: nothing at all
    Given the variant "spring"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	status, errs := godogRun(steps, func(sc *godog.ScenarioContext) {
		sc.Step(`^our backend is up$`, func() {})
	}, features, godog.Options{Strict: true}, "bg.feature")
	if got := errs["our backend alone"]; got != "" || status != 1 || !strings.Contains(errs["the agent"], "no-such-agent") {
		t.Errorf("godog status %d, scenarios failed with %q: want only %q failing, on its unknown agent", status, errs, "the agent")
	}
	// Setup steps with no step of the team's either check nothing: refused
	// as agenttest run refuses them.
	if got := errs["nothing at all"]; !strings.Contains(got, `scenario "nothing at all" has no When or Then steps`) {
		t.Errorf("a scenario of setup steps alone failed with %q, want it refused", got)
	}
}

// runOverMessaging runs feature through godog with agenttest's steps
// against the Messaging platform p (agent billing's connector in
// sandbox): godog's status, the errors of the failed scenarios by name,
// and godog's output.
func runOverMessaging(t *testing.T, p *platformtest.Messaging, feature string) (int, map[string]string, string) {
	t.Helper()
	features := fstest.MapFS{"s.feature": {Data: []byte(feature)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: p.URL, BuildKey: "bk_0123456789abcdef", AllowHTTP: true,
		MessagingURL: p.URL, MessagingHost: p.Host,
		Connectors:  map[string]map[string]string{"billing": {"sandbox": "ct_0123456789abcdef"}},
		TurnTimeout: 5 * time.Second, Features: features,
	})
	if err != nil {
		t.Fatal(err)
	}
	return godogOutput(steps, features, "pretty", "s.feature")
}

// godogOutput runs paths of features through godog in strict mode with
// the formatters of format, and returns godog's status, the errors of the
// failed scenarios by name, and the formatters' output.
func godogOutput(steps *godogsteps.Steps, features fs.FS, format string, paths ...string) (int, map[string]string, string) {
	var out strings.Builder
	var failed scenarioErrors
	status := godog.TestSuite{
		ScenarioInitializer: func(sc *godog.ScenarioContext) {
			steps.Register(sc)
			failed.record(sc)
		},
		Options: &godog.Options{Format: format, Output: &out, FS: features, Paths: paths, Strict: true, NoColors: true},
	}.Run()
	return status, failed.errs, out.String()
}

// TestWebhookThatDoesNotArrive: Options.Webhooks says why it gave up; an
// event that has not come when the wait's context ends, of a handoff the
// agent did not make (its record says so), is the agent's failure, at the
// check's key with what was expected, as agenttest run says it, not the
// platform's error; a receiver that fails before then
// cannot confirm anything, which agenttest run blames on the platform's
// side.
func TestWebhookThatDoesNotArrive(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	clock := fakeclock.New()
	features := fstest.MapFS{"hook.feature": {Data: []byte(`@agent:clinic
Feature: webhooks
  Scenario: urgent
    When the user says "hello"
    Then a "handoff.created" webhook arrives
`)}}
	type testCase struct {
		name string
		wait func(ctx context.Context, conv, event string) error
		want []string // the scenario's error holds each, in order; none: it passes
	}
	run := func(t *testing.T, tc testCase) {
		steps, err := godogsteps.New(godogsteps.Options{
			BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features,
			RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey,
			Now: clock.Now, AfterFunc: clock.AfterFunc,
			Webhooks: tc.wait,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, errs := godogRun(steps, nil, features, godog.Options{Strict: true}, "hook.feature")
		got := errs["urgent"]
		if len(tc.want) == 0 {
			if got != "" {
				t.Errorf("the scenario failed with %q, want it to pass", got)
			}
			return
		}
		rest := got
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Fatalf("the scenario failed with\n%s\nwant, in order:\n%s", got, strings.Join(tc.want, "\n"))
			}
			rest = rest[i+len(w):]
		}
	}
	for _, tc := range []testCase{
		{
			name: "the wait ends without the event",
			wait: func(ctx context.Context, conv, event string) error {
				// No event comes before the confirmation bound passes.
				clock.Advance(time.Hour)
				<-ctx.Done()
				return fmt.Errorf("no %s yet: %w", event, ctx.Err())
			},
			want: []string{
				`hook.feature:5:5: confirm.webhooks.handoff.created: no verified "handoff.created" event for conversation conv-`,
				`arrived within 30s: its record says handoff=false: the agent did not hand off`,
				`(Options.Webhooks: no handoff.created yet: context deadline exceeded)`,
				"\n  expected: handoff.created event, signed\n  actual:   none verified",
			},
		},
		{
			name: "the receiver fails",
			wait: func(ctx context.Context, conv, event string) error {
				return errors.New("receiver not registered")
			},
			want: []string{`hook.feature:5:5: http: confirm: webhooks: receiver not registered`},
		},
		{
			name: "the event arrives",
			wait: func(ctx context.Context, conv, event string) error { return nil },
		},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestStepContextBoundsTheSteps: the context godog hands an agenttest
// step (what the Before hooks and the team's steps before it made of the
// scenario's) bounds it, whichever order the hooks were registered in:
// a deadline of the team's that passed, or a cancellation of theirs, even
// one that comes while the step's call is on its way, stops the step as
// an interruption that says why, and the values the team put in the
// context reach their later steps through agenttest's.
func TestStepContextBoundsTheSteps(t *testing.T) {
	// The team's cancel of the scenario running now, which the
	// simulator calls while the platform thinks about a turn.
	var (
		mu         sync.Mutex
		cancelTeam context.CancelCauseFunc
		released   = make(chan struct{})
	)
	s := simtest.Start(t, sim.Options{
		Seed:   1,
		Faults: sim.Faults{Latency: time.Hour},
		Sleep: func(ctx context.Context, _ time.Duration) {
			mu.Lock()
			cancel := cancelTeam
			mu.Unlock()
			if cancel == nil {
				return // no wait: the turn is answered at once
			}
			cancel(errors.New("our backend went away"))
			// Only the client's going away ends the step. The server
			// may not see it go (the request's body is not read yet), so
			// the test's end lets the request go.
			select {
			case <-ctx.Done():
			case <-released:
			}
		},
	})
	t.Cleanup(func() { close(released) }) // before the simulator closes
	features := fstest.MapFS{"ctx.feature": {Data: []byte(`@agent:restaurant
Feature: context
  @deadline
  Scenario: a deadline that passed
    When the user says "I'd like to book a table"

  @cancel
  Scenario: cancelled by the team
    When the user says "I'd like to book a table"

  @late
  Scenario: a check after the deadline
    When the user says "hi"
    And our time is up
    Then the agent's reply contains "a"

  @after @agent:clinic
  Scenario: a call awaited after the deadline
    When an outbound call is placed to "+447700900001"
    And our time is up

  @values
  Scenario: the team's values
    Given our order number is "A-17"
    When the user says "hi"
    Then our order number is still "A-17"
`)}}
	type orderKey struct{}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features,
		RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey,
		ProbeNumbers: []string{"+447700900001"},
	})
	if err != nil {
		t.Fatal(err)
	}
	own := func(sc *godog.ScenarioContext) {
		// Registered after agenttest's: they run after its Before hook.
		sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
			switch p.Tags[len(p.Tags)-1].Name {
			case "@deadline":
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, time.Unix(0, 0))
				t.Cleanup(cancel)
			case "@cancel":
				var cancel context.CancelCauseFunc
				ctx, cancel = context.WithCancelCause(ctx)
				mu.Lock()
				cancelTeam = cancel
				mu.Unlock()
			}
			return ctx, nil
		})
		sc.Step(`^our time is up$`, func(ctx context.Context) context.Context {
			ctx, cancel := context.WithDeadline(ctx, time.Unix(0, 0))
			t.Cleanup(cancel)
			return ctx
		})
		sc.Step(`^our order number is "([^"]*)"$`, func(ctx context.Context, n string) context.Context {
			return context.WithValue(ctx, orderKey{}, n)
		})
		sc.Step(`^our order number is still "([^"]*)"$`, func(ctx context.Context, n string) error {
			if got, _ := ctx.Value(orderKey{}).(string); got != n {
				return fmt.Errorf("order number %q, want %q", got, n)
			}
			return nil
		})
	}
	type testCase struct {
		tags, want string
	}
	run := func(t *testing.T, tc testCase) {
		mu.Lock()
		cancelTeam = nil
		mu.Unlock()
		_, errs := godogRun(steps, own, features, godog.Options{Strict: true, Tags: tc.tags}, "ctx.feature")
		var got string
		for _, err := range errs {
			got = err
		}
		if got != tc.want && !(strings.HasSuffix(tc.want, "OUT-") && strings.HasPrefix(got, tc.want) && strings.HasSuffix(got, ": run interrupted (context deadline exceeded)")) {
			t.Errorf("the scenario failed with %q, want %q", got, tc.want)
		}
	}
	for _, tc := range []testCase{
		{tags: "@deadline", want: "ctx.feature:5:5: interrupted: run interrupted (context deadline exceeded)"},
		// The session opens at the scenario's line, as in agenttest run.
		{tags: "@cancel", want: "ctx.feature:8:3: interrupted: run interrupted (our backend went away)"},
		// A check makes no call, and stops all the same.
		{tags: "@late", want: "ctx.feature:15:5: interrupted: run interrupted (context deadline exceeded)"},
		// The call no step awaited is awaited in the After hook, under
		// the context of the last step.
		{tags: "@after", want: "ctx.feature:19:5: interrupted: probe: read status of call OUT-"},
		{tags: "@values", want: ""},
	} {
		t.Run(tc.tags, func(t *testing.T) { run(t, tc) })
	}
}

// TestFailedStepCarriesTranscript: godog's cucumber JSON carries the
// transcript of a failed agenttest step (up to the turn that broke, and
// what was confirmed) as the step's embedding, as agenttest's own
// Cucumber Messages file attaches it, with every key masked; a step that
// passed carries none.
func TestFailedStepCarriesTranscript(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"transcript.feature": {Data: []byte(`@agent:restaurant
Feature: transcript
  Scenario: the wrong party size
    When the user says "I'd like to book a table"
    Then the agent's reply contains "How many"
    When the user says "4 people at 7pm"
    Then the state "party_size" is "${env:KEY}"

  Scenario: the record
    When the user says "that's all, bye"
    Then the conversation record shows:
      | handoff | true |
`)}}
	steps, err := godogsteps.New(godogsteps.Options{
		BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features,
		RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey,
		Getenv: func(name string) (string, bool) { return s.BuildKey, name == "KEY" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	godog.TestSuite{
		ScenarioInitializer: steps.Register,
		Options: &godog.Options{Format: "cucumber", Output: &out, FS: features, Paths: []string{"transcript.feature"},
			Strict: true, NoColors: true, Concurrency: 2},
	}.Run()
	var report []struct {
		Elements []struct {
			Name  string `json:"name"`
			Steps []struct {
				Name       string `json:"name"`
				Embeddings []struct {
					Name     string `json:"name"`
					MimeType string `json:"mime_type"`
					Data     []byte `json:"data"` // base64
				} `json:"embeddings"`
			} `json:"steps"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(out.String()), &report); err != nil || len(report) != 1 {
		t.Fatalf("cucumber JSON: %v\n%s", err, out.String())
	}
	attached := map[string]string{}
	for _, el := range report[0].Elements {
		for _, st := range el.Steps {
			for _, e := range st.Embeddings {
				if e.Name != "transcript.txt" || e.MimeType != "text/plain" {
					t.Errorf("%s: embedding %q of type %q, want transcript.txt, text/plain", st.Name, e.Name, e.MimeType)
				}
				attached[el.Name+": "+st.Name] += string(e.Data)
			}
		}
	}
	for step, want := range map[string][]string{
		`the wrong party size: the state "party_size" is "${env:KEY}"`: {
			"transcript (conversation conv-", "greeting", "< Welcome to Bella Tavola!",
			"turn 1", "> I'd like to book a table", "turn 2", "> 4 people at 7pm",
			"node: ConfirmBooking", `+party_size="4"`,
		},
		`the record: the conversation record shows:`: {"> that's all, bye", "confirmed:", "✗ conversation conv-"},
	} {
		got, ok := attached[step]
		delete(attached, step)
		if !ok {
			t.Errorf("%s: no transcript attached\n%s", step, out.String())
			continue
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: the transcript lacks %q:\n%s", step, w, got)
			}
		}
	}
	if len(attached) > 0 {
		t.Errorf("transcripts attached to steps that did not fail: %v", attached)
	}
	if strings.Contains(out.String(), s.BuildKey) {
		t.Errorf("the cucumber JSON holds the key:\n%s", out.String())
	}
}

// TestTeamStepsReadWhatAgenttestFound: a team's own step reads the values
// agenttest's steps captured and the conversation's id from the context
// godog gives it; an unknown name, or a scenario without agenttest's
// conversation, fails its expansion.
func TestTeamStepsReadWhatAgenttestFound(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"team.feature": {Data: []byte(`@agent:restaurant
Feature: team
  Scenario: the team reads the booking
    Given our backend is empty
    When the user says "a table for 4 at 7pm"
    Then I remember "ref" from the state "booking_ref"
    And I remember "conv" from the state "conversation_id"
    And our backend has the booking "${ref}" for "${conv}"

  Scenario: a name never captured
    When the user says "hello"
    Then our backend has the booking "${nothing}" for "${conv}"

  Scenario: the team's steps alone
    Then our backend has the booking "${ref}" for "${conv}"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		found = map[string]string{}
	)
	own := func(sc *godog.ScenarioContext) {
		sc.Step(`^our backend is empty$`, func(ctx context.Context) error {
			if id := godogsteps.ConversationID(ctx); id != "" {
				return fmt.Errorf("a conversation %q before any turn", id)
			}
			// A text without references needs no scenario.
			if got, err := godogsteps.Expand(context.Background(), "plain"); got != "plain" || err != nil {
				return fmt.Errorf("plain text expanded to %q, %v", got, err)
			}
			return nil
		})
		sc.Step(`^our backend has the booking "([^"]*)" for "([^"]*)"$`, func(ctx context.Context, ref, conv string) error {
			ref, err := godogsteps.Expand(ctx, ref)
			if err != nil {
				return err
			}
			conv, err = godogsteps.Expand(ctx, conv)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			found["ref"], found["conv"], found["id"] = ref, conv, godogsteps.ConversationID(ctx)
			return nil
		})
	}
	_, errs := godogRun(steps, own, features, godog.Options{Strict: true, Concurrency: 2}, "team.feature")
	if found["id"] == "" || found["conv"] != found["id"] || !regexp.MustCompile(`^[A-Z0-9]{6}$`).MatchString(found["ref"]) {
		t.Errorf("the team's step read ref %q, conversation %q and id %q: want the booking reference, and the id twice", found["ref"], found["conv"], found["id"])
	}
	for name, want := range map[string]string{
		"the team reads the booking": "",
		"a name never captured":      `godogsteps: expand "${nothing}": `,
		"the team's steps alone":     `godogsteps: expand "${ref}": not in a scenario with agenttest's steps`,
	} {
		if got := errs[name]; (want == "") != (got == "") || !strings.HasPrefix(got, want) {
			t.Errorf("scenario %q failed with %q, want %q", name, got, want)
		}
	}
}

// TestPlatformFaultsOverGodog: the web chat scenarios that check what a
// failing platform says (system messages, the session's end) pass
// through godog against a simulator with their fault, as they pass in
// agenttest run (features.TestAcceptanceFaults), so the system message
// steps hold under godog too.
func TestPlatformFaultsOverGodog(t *testing.T) {
	repo := os.DirFS("..")
	for tag, opts := range map[string]sim.Options{
		"no-live-agent": {Messaging: sim.MessagingOptions{LiveAgent: sim.LiveAgentOptions{Absent: true}}},
		"overload":      {Faults: sim.Faults{Overload: 1}},
	} {
		t.Run(tag, func(t *testing.T) {
			t.Parallel()
			s := simtest.Start(t, opts)
			steps, err := godogsteps.New(godogsteps.Options{
				BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: repo,
				MessagingURL: s.MessagingURL, MessagingHost: s.Info.MessagingHost, Connectors: s.Info.MessagingConnectors,
			})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			status := godog.TestSuite{
				ScenarioInitializer: steps.Register,
				Options: &godog.Options{Format: "progress", Output: &out, FS: repo, Paths: []string{"features/testdata/web-chat-faults.feature"},
					Tags: "@" + tag, Strict: true, NoColors: true},
			}.Run()
			if status != 0 || !strings.Contains(out.String(), "1 scenarios (1 passed)") {
				t.Errorf("godog status %d:\n%s", status, out.String())
			}
		})
	}
}

// TestTerminalFormattersIndentFailure: godog's pretty and progress
// formatters print the first line of a failed step's error indented under
// the step and the rest as it is; the lines of what was compared come
// indented under the first, as agenttest run's console shows them, not
// left of the step they belong to. The error's text, which junit,
// cucumber and the After hooks read, keeps its own layout.
func TestTerminalFormattersIndentFailure(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1})
	features := fstest.MapFS{"indent.feature": {Data: []byte(`@agent:restaurant
Feature: indent
  Scenario: the agent's words
    When the user says "I'd like to book a table"
    Then the agent says "How many people will be joining you tonight?"
`)}}
	steps, err := godogsteps.New(godogsteps.Options{BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	const values = "expected: How many people will be joining you tonight?\n" +
		"%[1]sactual:   Lovely! How many people will be joining you, and at what time?\n" +
		"%[1]sdiff:     {+Lovely! +}How many people will be joining you[- tonight-]{+, and at what time+}?"
	for format, want := range map[string]string{
		"pretty":   "\n    indent.feature:5:5: response: reply is not the expected text\n      " + fmt.Sprintf(values, "      "),
		"progress": "      Error: indent.feature:5:5: response: reply is not the expected text\n      " + fmt.Sprintf(values, "      "),
		"junit":    "indent.feature:5:5: response: reply is not the expected text&#xA;  " + strings.ReplaceAll(fmt.Sprintf(values, "  "), "\n", "&#xA;"),
	} {
		t.Run(format, func(t *testing.T) {
			var out strings.Builder
			godog.TestSuite{
				ScenarioInitializer: steps.Register,
				Options:             &godog.Options{Format: format, Output: &out, FS: features, Paths: []string{"indent.feature"}, NoColors: true},
			}.Run()
			if !strings.Contains(out.String(), want) {
				t.Errorf("godog's %s output lacks\n%s\nin\n%s", format, want, out.String())
			}
		})
	}
}

// TestWebhookReceiver: a team serves agenttest's own receiver and
// registers it through the steps; the platform's signed deliveries then
// confirm the webhook steps, as in agenttest run.
func TestWebhookReceiver(t *testing.T) {
	s := simtest.Start(t, sim.Options{Seed: 1, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	features := fstest.MapFS{"hook.feature": {Data: []byte(`@agent:clinic
Feature: webhooks
  Scenario: urgent
    When the user says "I have chest pain"
    Then the agent hands off to "on_call_nurse"
    And a "handoff.created" webhook arrives
    And a "conversation.completed" webhook arrives
`)}}
	rcv := godogsteps.NewWebhookReceiver("")
	hs := httptest.NewServer(rcv)
	t.Cleanup(hs.Close)
	o := godogsteps.Options{
		BuildURL: s.BuildURL, BuildKey: s.BuildKey, Features: features,
		RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey,
		WebhookReceiver: rcv,
	}
	steps, err := godogsteps.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := steps.RegisterWebhook(context.Background(), hs.URL+"/"); err != nil {
		t.Fatal(err)
	}
	status, errs := godogRun(steps, nil, features, godog.Options{Strict: true}, "hook.feature")
	if status != 0 {
		t.Errorf("godog status %d: %v", status, errs)
	}

	// A receiver or a function, not both; and a receiver to register.
	o.Webhooks = func(context.Context, string, string) error { return nil }
	if _, err := godogsteps.New(o); err == nil || !strings.Contains(err.Error(), "WebhookReceiver and Webhooks") {
		t.Errorf("New with both: %v", err)
	}
	o.WebhookReceiver = nil
	none, err := godogsteps.New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.RegisterWebhook(context.Background(), hs.URL+"/"); err == nil || !strings.Contains(err.Error(), "no Options.WebhookReceiver") {
		t.Errorf("RegisterWebhook without a receiver: %v", err)
	}
}
