package runner

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
)

// A suite that expands the key into what it expects (lint refuses it; a
// run must still not record it) leaves no form of the key in the result:
// the client masks the request and reply bodies, the runner the failure's
// texts and diff, and a skip reason. What it would say errors unsent
// (TestSentTextHoldsNoSecret).
func TestRunnerRedactsWhatItRecords(t *testing.T) {
	t.Parallel()
	const key = "eyJhbGci.PLANTED+key/0123"
	e := newEnv(t, sim.Options{Seed: 1, BuildKey: key})
	opts := e.opts()
	opts.Redactor = e.client.Redactor()
	opts.Getenv = func(name string) (string, bool) { return key, name == "LEAK" }
	sc := &scenario.Scenario{
		Name: "leaks", Pos: pos(3, 3),
		Steps: chat(3, nil, turn(4, "hello", &assert.Expect{
			Pos:      pos(4, 7),
			Response: &assert.Text{Pos: pos(4, 9), Exact: new("welcome ${env:LEAK}")},
		})),
	}
	quoted := &scenario.Scenario{
		Name: "quoted", Pos: pos(8, 3),
		Steps: chat(8, nil, turn(9, "hello", &assert.Expect{
			Pos:      pos(9, 7),
			Response: &assert.Text{Pos: pos(9, 9), Matches: new("^" + regexp.QuoteMeta(key) + "$")},
		})),
	}
	// A similar check keeps the text it compared with (Turn.Scores).
	similar := &scenario.Scenario{
		Name: "similar", Pos: pos(14, 3),
		Steps: chat(14, nil, turn(15, "hello", &assert.Expect{
			Pos:      pos(15, 7),
			Response: &assert.Text{Pos: pos(15, 9), Similar: &assert.Similar{To: "welcome ${env:LEAK}", Min: 0.01}},
		})),
	}
	// A skip reason is the user's text too.
	skipped := &scenario.Scenario{Name: "skipped", Pos: pos(12, 3), Skip: "until " + key + " is rotated"}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc, quoted, similar, skipped)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if sc := res.Files[0].Cases[2].Last().Turns[1].Scores; len(sc) != 1 || !strings.Contains(sc[0].To, secret.Mask) {
		t.Errorf("the similar check's score %+v does not hold the masked text", sc)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(out, form) {
			t.Errorf("the result holds %q:\n%s", form, out)
		}
	}
	if !strings.Contains(out, secret.Mask) || res.Files[0].Cases[0].Status != result.Failed {
		t.Errorf("the key was not exercised: %s", out)
	}
}

// A failure whose diff is made again from its masked texts keeps the rule
// it was made with: a check that ignored case marks no change of case.
func TestMaskFailureDiffIgnoresCase(t *testing.T) {
	t.Parallel()
	const key = "eyJhbGci.PLANTED+key/0123"
	red, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	f := assert.Failure{Key: "response", Message: "reply is not the expected text (ignoring case)",
		Expected: "Code " + key + ": how many guests?", Actual: "CODE " + key + ": HOW MANY PEOPLE?", IgnoreCase: true}
	f.Diff = assert.DiffTextFor(f, f.Expected, f.Actual, false)
	maskFailure(red, &f)
	if strings.Contains(f.Diff, key) || strings.Contains(f.Expected, key) {
		t.Fatalf("key left in %+v", f)
	}
	if want := assert.DiffTextFor(f, f.DiffBase(), f.Actual, false); f.Diff != want || !strings.Contains(f.Diff, "HOW MANY [-guests-]{+PEOPLE+}?") ||
		strings.Contains(f.Diff, "[-Code") {
		t.Errorf("masked diff %q, want %q", f.Diff, want)
	}
}

// plantedSentKey is the key the tests of sent texts plant.
const plantedSentKey = "eyJhbGci.PLANTED+key/0123"

// plantedSentEnv is a simulator whose runs mask plantedSentKey, which
// the variable LEAK holds.
func plantedSentEnv(t *testing.T) (*confirmEnv, Options) {
	t.Helper()
	e := newConfirmEnv(t, nil)
	opts := e.opts()
	red, err := secret.New(plantedSentKey)
	if err != nil {
		t.Fatal(err)
	}
	opts.Redactor = red
	opts.Getenv = func(name string) (string, bool) { return plantedSentKey, name == "LEAK" }
	return e, opts
}

// What a session sends holds no secret, written out or expanded, in any
// form: each place a suite's text goes to the platform (a say, a session
// parameter and an integration attribute, a probe's number, message and
// call metadata, the shared id a handoff state is read by; of metadata
// and attributes, the members' names too) errors the
// case as a configuration error at its place, before the call, and the
// result holds no form of the key. Expected values may hold one: they are
// compared, not sent (TestRunnerRedactsWhatItRecords). Before, each was
// sent as it was, masked only in the result.
// noPlantedKey fails t when res holds a form of plantedSentKey.
func noPlantedKey(t *testing.T, res *result.Result) {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range secret.Forms(plantedSentKey) {
		if strings.Contains(string(b), form) {
			t.Errorf("the result holds %q:\n%s", form, b)
		}
	}
}

func TestSentTextHoldsNoSecret(t *testing.T) {
	t.Parallel()
	const key = plantedSentKey
	e, opts := plantedSentEnv(t)
	res, err := Run(context.Background(), loadYAML(t, `suite: leaks
agent: `+e.clinic+`
scenarios:
  - name: state read by a shared id
    turns:
      - say: I have chest pain
    confirm:
      handoff_state: {shared_id: "${env:LEAK}", data: {reason: urgent_symptoms}}
  - name: number
    probe: {sms: {to: "${env:LEAK}", message: hello}}
  - name: message
    probe: {sms: {to: "+447700900001", message: "code ${env:LEAK}"}}
  - name: call metadata
    probe: {outbound_call: {to: "+447700900001", metadata: {a: [{b: "${env:LEAK}"}]}}}
  - name: say
    turns:
      - say: "`+key+`"
  - name: session parameter
    start: {channel: "${env:LEAK}"}
    turns:
      - say: hi
  - name: attribute
    start: {integration_attributes: {k: "${env:LEAK}"}}
    turns:
      - say: hi
  - name: turn metadata
    turns:
      - say: hi
        metadata: {a: [{b: "${env:LEAK}"}]}
  - name: turn metadata key
    turns:
      - say: hi
        metadata: {"`+key+`": x}
  - name: nested metadata key
    turns:
      - say: hi
        metadata: {a: [{"`+key+`": x}]}
  - name: call metadata key
    probe: {outbound_call: {to: "+447700900001", metadata: {"`+key+`": x}}}
  - name: attribute key
    start: {integration_attributes: {"`+key+`": v}}
    turns:
      - say: hi
`), opts)
	if err != nil {
		t.Fatal(err)
	}
	noPlantedKey(t, res)
	for i, want := range []string{
		"confirm.yaml:8:7: confirm: handoff_state: shared_id: ",
		"confirm.yaml:10:13: probe: sms: to: ",
		"confirm.yaml:12:13: probe: sms: message: ",
		"confirm.yaml:14:13: probe: outbound_call: metadata: a: b: ",
		"confirm.yaml:17:9: turn 1: say: ",
		"confirm.yaml:19:5: start: channel: ",
		"confirm.yaml:23:5: start: integration_attributes.k: ",
		"confirm.yaml:28:9: turn 1: metadata: a: b: ",
		"confirm.yaml:32:9: turn 1: metadata: a member's name ",
		"confirm.yaml:36:9: turn 1: metadata: a: a member's name ",
		"confirm.yaml:39:13: probe: outbound_call: metadata: a member's name ",
		"confirm.yaml:41:5: start: integration_attributes: a member's name ",
	} {
		a := res.Files[0].Cases[i].Last()
		if a.Error == nil || a.Error.Kind != result.KindConfig || a.Error.Pos.String()+": "+a.Error.Message != want+errSecretText.Error() {
			t.Errorf("%s: error %+v, want %s%v", res.Files[0].Cases[i].Name, a.Error, want, errSecretText)
		}
	}
}

// TestFeatureMetadataSendsNoSecret: the "with the metadata:" table of a
// feature sends no key, written in a key cell or a value cell, or filled
// in from an Examples row; each errors its case unsent. Before, a key
// cell was sent as written.
func TestFeatureMetadataSendsNoSecret(t *testing.T) {
	t.Parallel()
	const key = plantedSentKey
	e, opts := plantedSentEnv(t)
	res, err := Run(context.Background(), loadFiles(t, map[string]string{"m.feature": `@agent:` + e.clinic + `
Feature: metadata
  Scenario: key cell
    When the user says "hi" with the metadata:
      | ` + key + ` | x |

  Scenario: value cell
    When the user says "hi" with the metadata:
      | a | ` + key + ` |

  Scenario Outline: examples
    When the user says "hi" with the metadata:
      | <k> | <v> |

    Examples:
      | k     | v     |
      | ` + key + ` | x |
      | a     | ` + key + ` |
`}), opts)
	if err != nil {
		t.Fatal(err)
	}
	cases := res.Files[0].Cases
	// An outline's name holds its Examples row: the command refuses a
	// name that holds a key before it runs (TestNamesHoldingAKeyAreRefused).
	for _, c := range cases {
		c.Name = ""
	}
	noPlantedKey(t, res)
	if len(cases) != 4 {
		t.Fatalf("%d cases, want 4", len(cases))
	}
	for _, c := range cases {
		a := c.Last()
		if a.Error == nil || a.Error.Kind != result.KindConfig || !strings.Contains(a.Error.Message, errSecretText.Error()) || len(a.Turns) > 1 {
			t.Errorf("%s: error %+v, %d turns; want the secret refused unsent after the greeting", c.Pos, a.Error, len(a.Turns))
		}
	}
}
