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

// A suite that expands the key into what it says and expects (lint refuses
// it; a run must still not record it) leaves no form of the key in the
// result: the client masks the request and reply bodies, the runner the
// turn, the failure's texts and diff, and a skip reason.
func TestRunnerRedactsWhatItRecords(t *testing.T) {
	t.Parallel()
	const key = "eyJhbGci.PLANTED+key/0123"
	e := newEnv(t, sim.Options{Seed: 1, BuildKey: key})
	opts := e.opts()
	opts.Redactor = e.client.Redactor()
	opts.Getenv = func(name string) (string, bool) { return key, name == "LEAK" }
	sc := &scenario.Scenario{
		Name: "leaks", Pos: pos(3, 3),
		Steps: chat(3, nil, turn(4, "my key is ${env:LEAK}", &assert.Expect{
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
	// A skip reason is the user's text too.
	skipped := &scenario.Scenario{Name: "skipped", Pos: pos(12, 3), Skip: "until " + key + " is rotated"}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc, quoted, skipped)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
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

// A confirmation whose subject is expanded from the environment (a
// handoff state read by a shared id that is, by mistake, a key) shows the
// key masked: the subjects are masked when the attempt ends. So does an
// error that quotes an expanded value (a probe number the target does not
// allow).
func TestRunnerRedactsExpandedValues(t *testing.T) {
	t.Parallel()
	const key = "eyJhbGci.PLANTED+key/0123"
	e := newConfirmEnv(t, nil)
	opts := e.opts()
	red, err := secret.New(key)
	if err != nil {
		t.Fatal(err)
	}
	opts.Redactor = red
	opts.Getenv = func(name string) (string, bool) { return key, name == "LEAK" }
	opts.AllowNumber = func(n string) bool { return n != key }
	res, err := Run(context.Background(), loadYAML(t, `suite: leaks
agent: `+e.clinic+`
scenarios:
  - name: state read by a shared id
    turns:
      - say: I have chest pain
    confirm:
      handoff_state: {shared_id: "${env:LEAK}", data: {reason: urgent_symptoms}}
  - name: number refused
    probe: {sms: {to: "${env:LEAK}", message: hello}}
`), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range secret.Forms(key) {
		if strings.Contains(string(b), form) {
			t.Errorf("the result holds %q:\n%s", form, b)
		}
	}
	a := res.Files[0].Cases[0].Last()
	if n := len(a.Confirmations); n == 0 || a.Confirmations[n-1].Kind != result.ConfirmHandoffState || a.Confirmations[n-1].Subject != secret.Mask {
		t.Errorf("confirmations %+v, want the handoff state's subject masked", a.Confirmations)
	}
	if e := res.Files[0].Cases[1].Last().Error; e == nil || !strings.Contains(e.Message, "probe: sms: to "+secret.Mask+" is not listed") {
		t.Errorf("error %+v, want the number refused, masked", e)
	}
}
