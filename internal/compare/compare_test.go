package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/golden"
	"github.com/agenttest/agenttest/internal/jsonkind"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

const suite = "suites/restaurant.yaml"

// turn is one exchange: the user's text, the reply, the node path, the
// state after it, and its latency.
type turn struct {
	say, text string
	trace     []string
	state     map[string]any
	handoff   string
	ended     bool
	latency   time.Duration
}

// convo builds a case of one attempt from its turns (greeting first).
func convo(name string, line int, status result.Status, env string, turns ...turn) *result.Case {
	a := &result.Attempt{Number: 1, Status: status, ConversationID: "conv-" + env + "-" + name, Started: t0}
	for i, tt := range turns {
		md := reply.Metadata{}
		if tt.trace != nil {
			tr := make([]any, len(tt.trace))
			for j, n := range tt.trace {
				tr[j] = n
			}
			md["nodeTrace"] = tr
		}
		st := map[string]any{"environment": env, "conversation_id": a.ConversationID}
		maps.Copy(st, tt.state)
		md["state"] = st
		if tt.handoff != "" {
			md["handoffDestination"] = tt.handoff
		}
		a.Turns = append(a.Turns, &result.Turn{Index: i, Pos: diag.Pos{File: suite, Line: line + i, Col: 9}, Say: tt.say, Latency: tt.latency,
			Result: (&reply.TurnResult{ConversationID: a.ConversationID, Response: tt.text, ConversationEnded: tt.ended}).SetMetadata(md)})
	}
	if status == result.Failed {
		a.Failures = []assert.Failure{{Pos: diag.Pos{File: suite, Line: line + 1, Col: 11}, Message: "turn 1: reply does not contain the expected text"}}
	}
	if status == result.Errored {
		a.Error = &result.Error{Kind: result.KindHTTP, Message: "turn 1: 503 Service Unavailable\nmore"}
	}
	return &result.Case{Name: name, Pos: diag.Pos{File: suite, Line: line, Col: 5}, Status: status, Agent: "restaurant", Env: env, Attempts: []*result.Attempt{a}}
}

// TestFailedBeforeAnError: a candidate failed on an assertion, then
// errored on its retry, is a regression explained by its failure and
// compared by the attempt that failed. The comparison read the last
// attempt: its outcome gave the platform's error and no failure, and its
// cut transcript showed as changed replies.
func TestFailedBeforeAnError(t *testing.T) {
	nuts := turn{say: "is the kitchen nut-free?", text: "Yes, the whole kitchen is nut-free."}
	nutsLost := turn{say: nuts.say, text: "I cannot say."}
	base := convo("s", 10, result.Passed, "live", greet, nuts)
	cand := convo("s", 10, result.Failed, "pre-release", greet, nutsLost)
	retry := convo("s", 10, result.Errored, "pre-release", greet).Attempts[0]
	retry.Number = 2
	cand.Attempts = append(cand.Attempts, retry)
	c := build(&result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{base}}}},
		&result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{cand}}}}, DefaultOptions())
	p := c.Pairs[0]
	if p.Class != Regressed {
		t.Fatalf("class %s, want regressed", p.Class)
	}
	if o := p.Candidate; len(o.Failures) != 1 || o.Error != "" {
		t.Errorf("candidate outcome failures %q, error %q: want the failure of the attempt that failed", o.Failures, o.Error)
	}
	want := transcriptChanges(base.Attempts[0], cand.Attempts[0])
	if len(want) == 0 || !reflect.DeepEqual(p.Changes, want) {
		t.Errorf("changes %+v, want those of the failed attempt %+v", p.Changes, want)
	}
}

// erroredRepeat is a repeated case errored by its runs' errors (2 of 3),
// whose last run failed.
func erroredRepeat() *result.Case {
	c := convo("s", 10, result.Errored, "pre-release", greet)
	c.Attempts[0].Run = 1
	for i, st := range []result.Status{result.Errored, result.Failed} {
		r := convo("s", 10, st, "pre-release", greet).Attempts[0]
		r.Number, r.Run = i+2, i+2
		c.Attempts = append(c.Attempts, r)
	}
	c.Repeat = &result.Repeat{Procedure: result.ProcedureFixed, Decision: result.DecisionErrored, Runs: 3, Passed: 0, Failed: 1, Errored: 2, Limit: 3, PassRate: 1}
	return c
}

func ms2(n int) time.Duration { return time.Duration(n) * time.Millisecond }

var greet = turn{text: "Welcome to Bella Tavola!", trace: []string{"Greeting"}, latency: ms2(40)}

// sides is a baseline (live) and a candidate (pre-release) with one
// scenario of every class.
func sides() (*result.Result, *result.Result) {
	hours := turn{say: "When do you close?", text: "Sorry, I didn't get that.", trace: []string{"Fallback"}, latency: ms2(50)}
	hoursFixed := turn{say: "When do you close?", text: "We close at 10pm.", trace: []string{"AnswerQuestion"}, latency: ms2(50)}
	nuts := turn{say: "Is it nut-free?", text: "Our kitchen is nut-free.", trace: []string{"AnswerQuestion"}, latency: ms2(50)}
	nutsLost := turn{say: "Is it nut-free?", text: "Every dish lists its allergens.", trace: []string{"AnswerQuestion"}, latency: ms2(50)}
	book := turn{say: "A table for 2", text: "Booked.", trace: []string{"StartBooking", "ConfirmBooking"}, state: map[string]any{"party_size": "2"}, latency: ms2(60)}
	bookSlow := book
	bookSlow.latency = ms2(460)
	noRef := turn{say: "my reference?", text: "I can't find a booking. Would you like to book?", latency: ms2(50)}
	noRefNew := turn{say: "my reference?", text: "I can't find a booking. Shall I book one for you?", latency: ms2(50)}
	bye := turn{say: "bye", text: "Goodbye!", ended: true, latency: ms2(30)}
	handoff := turn{say: "a human please", text: "Transferring you.", handoff: "front-desk", latency: ms2(30)}
	handoffNew := handoff
	handoffNew.handoff = "manager"

	base := &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "live", Env: "live"},
		Deployments: []*result.Deployment{{Agent: "restaurant", Env: "live", ID: "dep-live", After: "dep-live", Version: "1.0"}},
		Files: []*result.File{{Path: suite, Cases: []*result.Case{
			convo("says the kitchen is nut-free", 10, result.Passed, "live", greet, nuts),
			convo("tells callers when it closes", 20, result.Failed, "live", greet, hours),
			convo("offers a booking", 30, result.Passed, "live", greet, noRef),
			convo("books a table", 40, result.Passed, "live", greet, book),
			convo("says goodbye", 50, result.Passed, "live", greet, bye),
			convo("hands off", 60, result.Passed, "live", greet, handoff),
			convo("errors on live", 70, result.Errored, "live", greet),
			convo("gone from the candidate", 80, result.Passed, "live", greet),
		}}}}
	cand := &result.Result{Started: t0, Duration: time.Second, Target: result.Target{Name: "pre-release", Env: "pre-release"},
		Deployments: []*result.Deployment{{Agent: "restaurant", Env: "pre-release", ID: "dep-pre", After: "dep-pre", Version: "1.1"}},
		Files: []*result.File{{Path: "./" + suite, Cases: []*result.Case{
			convo("says the kitchen is nut-free", 10, result.Failed, "pre-release", greet, nutsLost),
			convo("tells callers when it closes", 20, result.Passed, "pre-release", greet, hoursFixed),
			convo("offers a booking", 30, result.Passed, "pre-release", greet, noRefNew),
			convo("books a table", 40, result.Passed, "pre-release", greet, bookSlow),
			convo("says goodbye", 50, result.Passed, "pre-release", greet, bye),
			convo("hands off", 60, result.Passed, "pre-release", greet, handoffNew),
			convo("errors on live", 70, result.Passed, "pre-release", greet),
			convo("new in the candidate", 90, result.Passed, "pre-release", greet),
		}}}}
	// A scenario that checks nothing: its outcome says so, as its case
	// does, for the gate.
	cand.Files[0].Cases[7].Unchecked = true
	// One that checks nothing on both sides, compared: unchanged, and
	// listed nowhere else.
	base.Files[0].Cases[4].Unchecked, cand.Files[0].Cases[4].Unchecked = true, true
	// One that checks nothing on the baseline alone (the candidate's
	// version of the scenario gained a check).
	base.Files[0].Cases[2].Unchecked = true
	return base, cand
}

func build(base, cand *result.Result, o Options) *Comparison {
	c := Build(Input{Spec: "live", Kind: KindEnvironment, Env: "live", Result: base, Status: base.RunStatus()},
		Input{Spec: "pre-release", Kind: KindEnvironment, Env: "pre-release", Result: cand, Status: cand.RunStatus()}, o)
	c.Started, c.DurationMS = t0, 1500
	return c
}

func classes(c *Comparison) map[string]Class {
	out := map[string]Class{}
	for _, p := range c.Pairs {
		out[p.Name] = p.Class
	}
	return out
}

func TestBuild(t *testing.T) {
	base, cand := sides()
	c := build(base, cand, DefaultOptions())
	want := map[string]Class{
		"says the kitchen is nut-free": Regressed,
		"tells callers when it closes": Fixed,
		"offers a booking":             Changed,
		"books a table":                Slower,
		"says goodbye":                 Unchanged,
		"hands off":                    Changed,
		"errors on live":               NotCompared,
		"new in the candidate":         OnlyCandidate,
		"gone from the candidate":      OnlyBaseline,
	}
	got := classes(c)
	for name, cl := range want {
		if got[name] != cl {
			t.Errorf("%s: %s, want %s", name, got[name], cl)
		}
	}
	if len(got) != len(want) {
		t.Errorf("pairs %v", got)
	}
	if c.Status != result.RunFailed || c.Why != "1 scenario regressed" {
		t.Errorf("status %s (%s)", c.Status, c.Why)
	}
	if n := c.Counts; n.Total != 9 || n.Regressed != 1 || n.Fixed != 1 || n.Changed != 2 || n.Slower != 1 || n.Unchanged != 1 || n.NotCompared != 1 || n.OnlyBaseline != 1 || n.OnlyCandidate != 1 {
		t.Errorf("counts %+v", n)
	}
	byName := map[string]*Pair{}
	for _, p := range c.Pairs {
		byName[p.Name] = p
	}
	// A report written on Windows names its files with backslashes.
	winBase, _ := sides()
	for _, bc := range winBase.Files[0].Cases {
		bc.Pos.File = strings.ReplaceAll(".\\"+suite, "/", "\\")
	}
	if wc := classes(build(winBase, cand, DefaultOptions())); wc["says goodbye"] != Unchanged || len(wc) != len(want) {
		t.Errorf("a baseline with Windows paths: %v", wc)
	}
	// A name twice in a file pairs in order of appearance.
	twice := func(env string) *result.Result {
		return &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{
			convo("twice", 10, result.Passed, env, greet), convo("twice", 20, result.Failed, env, greet)}}}}
	}
	if tc := build(twice("live"), twice("pre-release"), DefaultOptions()); len(tc.Pairs) != 2 || tc.Pairs[0].Class != Unchanged || tc.Pairs[1].Class != Unchanged ||
		tc.Pairs[0].Pos.Line != 10 || tc.Pairs[1].Pos.Line != 20 {
		for _, p := range tc.Pairs {
			t.Errorf("a name twice: line %d %s", p.Pos.Line, p.Class)
		}
	}
	// A case that passed on a retry stands by its last attempt: the
	// failed first one is not the transcript compared.
	nuts := turn{say: "Is it nut-free?", text: "Our kitchen is nut-free.", trace: []string{"AnswerQuestion"}, latency: ms2(50)}
	retried := convo("retried", 10, result.Flaky, "live", greet, nuts)
	first := convo("retried", 10, result.Failed, "live", greet, turn{say: "Is it nut-free?", text: "Sorry?", trace: []string{"Fallback"}, latency: ms2(50)}).Attempts[0]
	retried.Attempts = append([]*result.Attempt{first}, retried.Attempts...)
	one := func(c *result.Case) *result.Result {
		return &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{c}}}}
	}
	if rc := build(one(retried), one(convo("retried", 10, result.Passed, "pre-release", greet, nuts)), DefaultOptions()); rc.Pairs[0].Class != Unchanged ||
		len(rc.Pairs[0].Baseline.Failures) != 0 {
		t.Errorf("a case passed on a retry: %s, changes %+v, baseline %+v", rc.Pairs[0].Class, rc.Pairs[0].Changes, rc.Pairs[0].Baseline)
	}
	// "./suites/..." pairs with "suites/...".
	if p := byName["books a table"]; p.File != suite || p.Latency == nil || p.Latency.MedianShift != 200 || p.Latency.P95Shift != 380 {
		t.Errorf("books a table: %+v latency %+v", p, p.Latency)
	}
	// The session's own values (conversation id, environment) are not
	// a change of state; the trace and the reply of a fixed pair are.
	if p := byName["says goodbye"]; len(p.Changes) != 0 {
		t.Errorf("says goodbye changes %+v", p.Changes)
	}
	fixed := byName["tells callers when it closes"]
	if len(fixed.Changes) != 2 || fixed.Changes[0].What != ChangeReply || fixed.Changes[0].Diff != "[-Sorry, I didn't get that-]{+We close at 10pm+}." ||
		fixed.Changes[1].What != ChangeTrace || fixed.Changes[1].Baseline != "Fallback" || fixed.Changes[1].Turn != 1 || fixed.Changes[1].Say != "When do you close?" {
		t.Errorf("fixed changes %+v", fixed.Changes)
	}
	if h := byName["hands off"].Changes; len(h) != 1 || h[0].What != ChangeHandoff || h[0].Baseline != "front-desk" || h[0].Candidate != "manager" {
		t.Errorf("handoff changes %+v", h)
	}
	if p := byName["errors on live"]; p.Note != "baseline errored: turn 1: 503 Service Unavailable" {
		t.Errorf("note %q", p.Note)
	}
	if p := byName["says the kitchen is nut-free"]; p.Candidate.Verdict != VerdictFailed || len(p.Candidate.Failures) != 1 {
		t.Errorf("regressed outcome %+v", p.Candidate)
	}
}

func TestStateWritten(t *testing.T) {
	ident := map[string]bool{"conv-1": true, "live": true}
	for _, tc := range []struct {
		prev, now map[string]any
		want      string
	}{
		{nil, map[string]any{"environment": "live", "conversation_id": "conv-1", "channel": "WEBCHAT"}, `channel="WEBCHAT"`},
		{map[string]any{"a": "1", "b": 2.0}, map[string]any{"a": "1", "b": 3.0, "c": true}, `b=3, c=true`},
		{map[string]any{"a": "1", "gone": "x"}, map[string]any{"a": "1"}, `-gone`},
		{map[string]any{"n": "4"}, map[string]any{"n": 4.0}, `n=4`},
	} {
		if got := written(tc.prev, tc.now, ident); got != tc.want {
			t.Errorf("written(%v, %v) = %q, want %q", tc.prev, tc.now, got, tc.want)
		}
	}
}

func TestStatus(t *testing.T) {
	type testCase struct {
		name string
		edit func(base, cand *result.Result, o *Options)
		want result.RunStatus
		why  string
		// whyNot is a part the reason must not hold.
		whyNot string
	}
	for _, tc := range []testCase{
		{name: "a regression", want: result.RunFailed, why: "1 scenario regressed"},
		{name: "a quarantined regression does not fail", edit: func(_, cand *result.Result, _ *Options) {
			cand.Files[0].Cases[0].Quarantine = &result.Quarantine{Reason: "flaky", Until: "2099-01-01"}
		}, want: result.RunErrored, why: "1 scenario could not be compared: a side errored"},
		{name: "no regression, errors", edit: func(base, cand *result.Result, _ *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
		}, want: result.RunErrored, why: "1 scenario could not be compared"},
		{name: "changes fail on demand", edit: func(base, cand *result.Result, o *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
			base.Files[0].Cases[6].Status, base.Files[0].Cases[6].Attempts[0].Status = result.Passed, result.Passed
			o.FailOnChange = true
		}, want: result.RunFailed, why: "3 scenarios changed (--fail-on-change)"},
		{name: "passed", edit: func(base, cand *result.Result, o *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
			base.Files[0].Cases[6].Status = result.Passed
		}, want: result.RunPassed, why: "nothing regressed"},
		// --fail-fast stops a run after a failure, on purpose: the
		// pairs it ran decide, not the stop.
		{name: "a side stopped by --fail-fast", edit: func(base, cand *result.Result, _ *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
			base.Files[0].Cases[6].Status = result.Passed
			base.Stop = &result.Stop{Kind: result.StopFailFast, Reason: "fail-fast"}
		}, want: result.RunPassed, why: "nothing regressed"},
		// A quarantined scenario that errored keeps nothing from
		// passing, as a quarantined regression fails nothing.
		{name: "a quarantined error", edit: func(_, cand *result.Result, _ *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
			cand.Files[0].Cases[6].Quarantine = &result.Quarantine{Reason: "flaky", Until: "2099-01-01"}
		}, want: result.RunPassed, why: "nothing regressed"},
		{name: "a deployment changed during a side's run", edit: func(_, cand *result.Result, _ *Options) {
			cand.Deployments[0].After = "dep-other"
		}, want: result.RunErrored, why: "deployment of restaurant changed during the run: dep-pre → dep-other (pre-release)"},
		{name: "interrupted", edit: func(base, _ *result.Result, _ *Options) { base.Interrupted = true }, want: result.RunInterrupted},
		{name: "nothing on both sides", edit: func(base, _ *result.Result, _ *Options) { base.Files = nil }, want: result.RunEmpty},
		// Scenarios on each side, none on both: the paths may differ
		// by the directory each side ran from.
		{name: "no scenario on both sides", edit: func(base, _ *result.Result, _ *Options) {
			for _, c := range base.Files[0].Cases {
				c.Pos.File = "other/restaurant.yaml"
			}
		},
			want: result.RunEmpty, why: "nothing was compared: no scenario ran on both sides (none of the baseline's 8 has a file and name of the candidate's 8: were they run from different directories?)"},
		// The candidate ran nothing: no directory to blame.
		{name: "nothing on the candidate", edit: func(_, cand *result.Result, _ *Options) { cand.Files = nil },
			want: result.RunEmpty, why: "nothing was compared: no scenario ran on both sides", whyNot: "different directories"},
		{name: "a side stopped", edit: func(base, cand *result.Result, _ *Options) {
			cand.Files[0].Cases[0] = convo("says the kitchen is nut-free", 10, result.Passed, "pre-release", greet)
			base.Stop = &result.Stop{Kind: result.StopUnreachable, Reason: result.ReasonUnreachable}
		}, want: result.RunErrored, why: "the baseline run stopped: not run: platform unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cand := sides()
			o := DefaultOptions()
			if tc.edit != nil {
				tc.edit(base, cand, &o)
			}
			c := build(base, cand, o)
			if c.Status != tc.want || !strings.Contains(c.Why, tc.why) || tc.whyNot != "" && strings.Contains(c.Why, tc.whyNot) {
				t.Errorf("status %s (%s), want %s (%s)\n%v", c.Status, c.Why, tc.want, tc.why, classes(c))
			}
		})
	}
}

// repeated is a statistical case: passed of runs, each run one attempt.
func repeated(name string, passed, runs int, decision string) *result.Case {
	c := convo(name, 100, result.Passed, "live", greet)
	if decision != result.DecisionPassed {
		c.Status = result.Failed
	}
	c.Repeat = &result.Repeat{Procedure: result.ProcedureSPRT, Runs: runs, Passed: passed, Failed: runs - passed, Decision: decision}
	return c
}

// withErrored adds errored runs to a statistical case: runs beside its
// passes and failures.
func withErrored(c *result.Case, n int) *result.Case {
	c.Repeat.Errored, c.Repeat.Runs = n, c.Repeat.Runs+n
	return c
}

func TestRates(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand *result.Case
		want       Class
		p          float64
	}{
		{"a significant drop", repeated("s", 48, 50, "passed"), repeated("s", 40, 50, "failed"), Regressed, 0.027756},
		{"a significant rise", repeated("s", 40, 50, "failed"), repeated("s", 48, 50, "passed"), Fixed, 0.027756},
		// The verdicts differ, the rates hardly: too few runs to say.
		{"a flip without evidence", repeated("s", 19, 20, "passed"), repeated("s", 17, 20, "inconclusive"), Changed, 0.605},
		{"a flip back without evidence", repeated("s", 17, 20, "inconclusive"), repeated("s", 19, 20, "passed"), Changed, 0.605},
		{"the same rate", repeated("s", 45, 50, "passed"), repeated("s", 45, 50, "passed"), Unchanged, 1},
		// Between α and 2α (Fisher p = 0.0916, checked with exact
		// fractions): not significant at 0.05, a flip, no regression.
		{"a drop short of significance", repeated("s", 48, 50, "passed"), repeated("s", 42, 50, "failed"), Changed, 0.0916},
		// Errored runs are not evidence on either side: 48 of 50 with 10
		// more errored is the baseline's 48 of 50 (counted as failures,
		// 48 of 60 would be a significant drop, p = 0.019).
		{"errored runs are not failures", repeated("s", 48, 50, "passed"), withErrored(repeated("s", 48, 50, "passed"), 10), Unchanged, 1},
		// Repeated on one side only (run once on the other, 1 of 1): the
		// rates are weighed still, and a verdict that flipped on one run
		// against 17 of 20 is no regression (Fisher: 18/21 + 3/21 = 1).
		{"repeated on the candidate only", convo("s", 10, result.Passed, "live", greet), repeated("s", 17, 20, "inconclusive"), Changed, 1},
		// A run once that failed is one run of evidence: against 20 of
		// 20, p = 1/21 (the one failure falls on the baseline's side).
		{"failed once against repeated passes", convo("s", 10, result.Failed, "live", greet), repeated("s", 20, 20, "passed"), Fixed, 1.0 / 21},
		// A repeat of a single run (a statistical limit of 1) is
		// statistical still: 1 of 1 against 1 of 1 says nothing.
		{"repeated once on the baseline", repeated("s", 1, 1, "inconclusive"), convo("s", 10, result.Passed, "pre-release", greet), Changed, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{tc.base}}}}
			cand := &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{tc.cand}}}}
			c := build(base, cand, DefaultOptions())
			p := c.Pairs[0]
			if p.Class != tc.want || p.Rates == nil || p.Rates.P < tc.p-0.001 || p.Rates.P > tc.p+0.001 {
				t.Fatalf("class %s rates %+v, want %s p %g", p.Class, p.Rates, tc.want, tc.p)
			}
			if tc.want == Changed && (len(p.Changes) != 1 || p.Changes[0].What != ChangeVerdict || !strings.Contains(p.Note, "do not differ significantly")) {
				t.Errorf("changes %+v note %q", p.Changes, p.Note)
			}
		})
	}
}

// TestCountsOf: each class's count is its own (gate reads them by class),
// and the total is every pair; a rate without runs is 0.
func TestCountsOf(t *testing.T) {
	t.Parallel()
	var n Counts
	for i, cl := range Classes {
		for range i + 1 {
			n.add(cl)
		}
	}
	for i, cl := range Classes {
		if got := n.Of(cl); got != i+1 {
			t.Errorf("Of(%s) = %d, want %d", cl, got, i+1)
		}
	}
	if want := len(Classes) * (len(Classes) + 1) / 2; n.Total != want {
		t.Errorf("Total = %d, want %d", n.Total, want)
	}
	if r := (&Rates{}); r.BaselineRate() != 0 || r.CandidateRate() != 0 {
		t.Errorf("rates without runs: %v, %v, want 0", r.BaselineRate(), r.CandidateRate())
	}
	// A side's duration keeps its fractions of a millisecond.
	if got := sideOf(Input{Result: &result.Result{Duration: 2500 * time.Microsecond}}).Run.DurationMS; got != 2.5 {
		t.Errorf("a run of 2.5ms: duration_ms %v", got)
	}
}

// TestNotCompared: a scenario that errored or did not run on either side
// says nothing of the agent there: it is not compared, and the note says
// which side and why. An error, or a case its run never got to (pending),
// keeps the comparison from passing; a case skipped on purpose leaves it
// with nothing compared.
func TestNotCompared(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, cand *result.Case
		note       string
		status     result.RunStatus
	}{
		{"the baseline errored", convo("s", 10, result.Errored, "live", greet), convo("s", 10, result.Passed, "pre-release", greet),
			"baseline errored: turn 1: 503 Service Unavailable", result.RunErrored},
		{"the candidate errored", convo("s", 10, result.Passed, "live", greet), convo("s", 10, result.Errored, "pre-release", greet),
			"candidate errored: turn 1: 503 Service Unavailable", result.RunErrored},
		// An errored repeat whose last run failed: the run that errored
		// says why, as every report of the run says it.
		{"the candidate's repeat errored", convo("s", 10, result.Passed, "live", greet), erroredRepeat(),
			"candidate errored: turn 1: 503 Service Unavailable", result.RunErrored},
		{"the candidate did not run", convo("s", 10, result.Passed, "live", greet), &result.Case{Name: "s", Pos: diag.Pos{File: suite, Line: 10, Col: 5}, Status: result.Skipped, SkipReason: "skip: flaky upstream"},
			"candidate skip: flaky upstream", result.RunEmpty},
		{"the baseline never got to it", &result.Case{Name: "s", Pos: diag.Pos{File: suite, Line: 10, Col: 5}, Status: result.Pending}, convo("s", 10, result.Failed, "pre-release", greet),
			"baseline not run", result.RunErrored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{tc.base}}}}
			cand := &result.Result{Files: []*result.File{{Path: suite, Cases: []*result.Case{tc.cand}}}}
			c := build(base, cand, DefaultOptions())
			if p := c.Pairs[0]; len(c.Pairs) != 1 || p.Class != NotCompared || p.Note != tc.note {
				t.Errorf("class %s note %q, want not compared, %q", p.Class, p.Note, tc.note)
			}
			if c.Status != tc.status {
				t.Errorf("status %s (%s), want %s", c.Status, c.Why, tc.status)
			}
		})
	}
}

// TestOverallLatency: a shift in every scenario is slower overall; a tiny
// one, significant or not, is not (the thresholds); one slow scenario
// among many is not either (the test).
func TestOverallLatency(t *testing.T) {
	mk := func(shifts []int) *Comparison {
		base := &result.Result{Files: []*result.File{{Path: suite}}}
		cand := &result.Result{Files: []*result.File{{Path: suite}}}
		for i, s := range shifts {
			name := string(rune('a' + i))
			b, c := greet, greet
			b.latency, c.latency = ms2(400+10*i), ms2(400+10*i+s)
			base.Files[0].Cases = append(base.Files[0].Cases, convo(name, 10*i, result.Passed, "live", b))
			cand.Files[0].Cases = append(cand.Files[0].Cases, convo(name, 10*i, result.Passed, "pre-release", c))
		}
		return build(base, cand, DefaultOptions())
	}
	for _, tc := range []struct {
		name   string
		shifts []int
		want   string
	}{
		{"everything slower", []int{150, 160, 170, 180, 190, 200, 210, 220}, "slower"},
		{"everything faster", []int{-150, -160, -170, -180, -190, -200, -210, -220}, "faster"},
		{"noise", []int{3, -2, 5, -4, 1, -1, 2, -3}, "unchanged"},
		{"significant but small", []int{3, 2, 5, 4, 1, 1, 2, 3}, "unchanged"},
		{"one slow scenario", []int{900, 1, -1, 2, -2, 0, 1, -1}, "unchanged"},
		{"too few scenarios", []int{150, 160, 170, 180, 190}, "unchanged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mk(tc.shifts)
			if c.Latency.Verdict != tc.want || c.Latency.Scenarios != len(tc.shifts) {
				t.Errorf("latency %+v, want %s", c.Latency, tc.want)
			}
		})
	}
}

// TestFormats: the console view and the JSON document of the fixture,
// against golden files; the JSON reads back to the same document.
func TestFormats(t *testing.T) {
	base, cand := sides()
	c := build(base, cand, DefaultOptions())
	var text, colour, verbose, js bytes.Buffer
	for _, w := range []struct {
		b *bytes.Buffer
		o TextOptions
	}{{&text, TextOptions{}}, {&colour, TextOptions{Color: true}}, {&verbose, TextOptions{Verbose: true}}} {
		if err := WriteText(w.b, c, w.o); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/compare.txt", text.Bytes())
	golden.Check(t, "testdata/compare-color.txt", colour.Bytes())
	golden.Check(t, "testdata/compare-verbose.txt", verbose.Bytes())
	golden.Check(t, "testdata/compare.json", js.Bytes())
	back, err := ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := WriteJSON(&again, back); err != nil {
		t.Fatal(err)
	}
	if again.String() != js.String() {
		t.Error("the comparison read back writes another document")
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc["schema"] != SchemaV1 {
		t.Errorf("schema %v %v", doc["schema"], err)
	}
	if _, err := ReadJSON(strings.NewReader(`{"schema":"agenttest/result/v1"}`)); err == nil {
		t.Error("a run report read as a comparison")
	}
}

// TestHostileText: names, ids, states and replies come from the runs or
// from report files anyone may edit; none of their control characters
// reaches the terminal raw, in plain or coloured output.
func TestHostileText(t *testing.T) {
	t.Parallel()
	base, cand := sides()
	const evil = "\x1b[2J\x1b]0;owned\x07\rgate: passed\u202e"
	cand.Deployments[0].ID += evil
	cand.Deployments[0].Version += evil
	for _, r := range []*result.Result{base, cand} {
		for _, cs := range r.Files[0].Cases {
			if cs.Name == "says the kitchen is nut-free" || cs.Name == "hands off" {
				cs.Name += evil
				for _, tr := range cs.Attempts[0].Turns {
					tr.Say += evil
					tr.Result.Response += evil
					tr.Result.Meta()["state"].(map[string]any)["party"] = evil
				}
				for i := range cs.Attempts[0].Failures {
					cs.Attempts[0].Failures[i].Message += evil
				}
			}
		}
	}
	c := build(base, cand, DefaultOptions())
	for _, o := range []TextOptions{{}, {Color: true, Verbose: true}} {
		var b bytes.Buffer
		if err := WriteText(&b, c, o); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%+v: the hostile text is not shown escaped:\n%s", o, out)
		}
		for _, code := range []string{sgrRed, sgrGreen, sgrYellow, sgrMagenta, sgrFaint, sgrReset} {
			out = strings.ReplaceAll(out, code, "")
		}
		if i := strings.IndexAny(out, "\x1b\x07\r\u202e"); i >= 0 {
			t.Errorf("%+v: a control character reaches the terminal at %d: %q", o, i, out[max(0, i-40):min(len(out), i+40)])
		}
	}
}

// TestSideOfPartialRun: a side whose run tested part of its selection (a
// shard's report, a --rerun-failed run) says so in the JSON, read back
// as written, and in the side's line of the text; a run of the whole
// selection says neither.
func TestSideOfPartialRun(t *testing.T) {
	t.Parallel()
	base, cand := sides()
	base.Rerun = &result.Rerun{Of: "first.json", Failed: 3, Unrun: 2}
	cand.Shard = &result.Shard{Index: 2, Total: 4, Selection: "sel-1", Selected: 47}
	c := build(base, cand, DefaultOptions())
	c.Rerun = &result.Rerun{Of: "first.json", Failed: 3, Unrun: 2}
	var js, text bytes.Buffer
	if err := WriteJSON(&js, c); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Rerun == nil || *back.Rerun != *c.Rerun || back.Baseline.Rerun == nil || *back.Baseline.Rerun != *base.Rerun ||
		back.Candidate.Shard == nil || *back.Candidate.Shard != *cand.Shard || back.Baseline.Shard != nil || back.Candidate.Rerun != nil {
		t.Errorf("read back: rerun %+v, baseline %+v %+v, candidate %+v %+v", back.Rerun, back.Baseline.Shard, back.Baseline.Rerun, back.Candidate.Shard, back.Candidate.Rerun)
	}
	if err := WriteText(&text, c, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"baseline  live (target live, env live): run failed, started 2026-03-14 09:00:00Z, a rerun of the 3 cases that failed or errored in first.json and the 2 cases its run left unrun\n",
		"candidate pre-release (target pre-release, env pre-release): run failed, started 2026-03-14 09:00:00Z, shard 2 of 4\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	// A whole run: no member, as in the golden JSON.
	whole, _ := sides()
	var plain bytes.Buffer
	if err := WriteJSON(&plain, build(whole, whole, DefaultOptions())); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `"rerun"`) || strings.Contains(plain.String(), `"shard"`) {
		t.Errorf("a comparison of whole runs names a rerun or a shard:\n%s", plain.String())
	}
}

// TestReadJSONDurations: a comparison whose durations no run has (agenttest
// gate reads when its candidate's run ended from one) is refused at the
// value: before, 1e16 milliseconds wrapped around, and a run that ended
// centuries ahead of the gate's clock read as one that ended in 1734.
func TestReadJSONDurations(t *testing.T) {
	t.Parallel()
	js := comparisonJSON(t)
	for _, tc := range []struct {
		path []string
		ms   float64
		want string
	}{
		{[]string{"duration_ms"}, -1, "duration_ms: -1 is a negative duration"},
		{[]string{"baseline", "run", "duration_ms"}, -0.5, "baseline.run.duration_ms: -0.5 is a negative duration"},
		{[]string{"candidate", "run", "duration_ms"}, 1e16, "candidate.run.duration_ms: 1e+16 milliseconds is longer than a duration can be (about 292 years)"},
	} {
		refusedAt(t, js.Bytes(), func(doc map[string]any) {
			obj := doc
			for _, k := range tc.path[:len(tc.path)-1] {
				obj = obj[k].(map[string]any)
			}
			obj[tc.path[len(tc.path)-1]] = tc.ms
		}, tc.ms, tc.want)
	}
}

// refusedAt checks that the comparison js, with edit made to its
// document, is refused with the ValueError want, placed at the value at.
func refusedAt(t *testing.T, js []byte, edit func(doc map[string]any), at any, want string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadJSON(bytes.NewReader(data))
	var ve *jsonkind.ValueError
	if !errors.As(err, &ve) || ve.Error() != want {
		t.Errorf("error %v, want a ValueError %q", err, want)
		return
	}
	if text, _ := json.Marshal(at); !bytes.HasPrefix(data[ve.Offset:], text) {
		t.Errorf("offset at %.20q, want the value %s", data[ve.Offset:], text)
	}
}

// TestReadJSONShard: a side's shard no run deals is refused at its
// member, as a run report's is (report.Values): before, a candidate of
// "1/0" shards read as a whole run, which the gate does not refuse.
func TestReadJSONShard(t *testing.T) {
	t.Parallel()
	js := comparisonJSON(t)
	refusedAt(t, js.Bytes(), func(doc map[string]any) {
		doc["candidate"].(map[string]any)["shard"] = map[string]any{"index": 1, "total": 0}
	}, 0, "candidate.shard.total: 0 shards: a selection is dealt into 1 or more")
	refusedAt(t, js.Bytes(), func(doc map[string]any) {
		doc["baseline"].(map[string]any)["shard"] = map[string]any{"index": 3, "total": 2}
	}, 3, "baseline.shard.index: shard 3 of 2: want 1 <= index <= total")
}

// TestReadJSONNulls: a null pair or deployment of a comparison read back
// is none, as a run report's null deployment is: agenttest gate derives
// the verdict of what is left, where before it dereferenced the null and
// panicked.
func TestReadJSONNulls(t *testing.T) {
	t.Parallel()
	base, cand := sides()
	var js bytes.Buffer
	want := build(base, cand, DefaultOptions())
	if err := WriteJSON(&js, want); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	doc["pairs"] = append([]any{nil}, doc["pairs"].([]any)...)
	for _, side := range []string{"baseline", "candidate"} {
		doc[side].(map[string]any)["deployments"] = []any{nil}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != len(want.Pairs) || len(c.Baseline.Deployments) != 0 || len(c.Candidate.Deployments) != 0 {
		t.Errorf("read %d pairs and %d+%d deployments, want %d and none", len(c.Pairs), len(c.Baseline.Deployments), len(c.Candidate.Deployments), len(want.Pairs))
	}
	if status, why := c.Verdict(); status != want.Status || why != want.Why {
		t.Errorf("verdict %s (%s), want %s (%s)", status, why, want.Status, want.Why)
	}
	// Verdict itself skips them too, as CountPairs does.
	c.Pairs = append(c.Pairs, nil)
	c.Candidate.Deployments = append(c.Candidate.Deployments, nil)
	if status, why := c.Verdict(); status != want.Status || why != want.Why {
		t.Errorf("with nulls: verdict %s (%s), want %s (%s)", status, why, want.Status, want.Why)
	}
}

// TestReadJSONPlacesValues: a value that reads itself and refuses (a
// status, a time, a deployment) is refused at its place in the document,
// as a duration is: encoding/json said only "unknown status", and the
// gate could not say where.
func TestReadJSONPlacesValues(t *testing.T) {
	t.Parallel()
	js := comparisonJSON(t)
	for _, tc := range []struct {
		path  []any
		value any
		want  string
	}{
		{[]any{"started"}, "yesterday", `started: parsing time "yesterday"`},
		{[]any{"candidate", "run", "started"}, "soon", `candidate.run.started: parsing time "soon"`},
		{[]any{"pairs", 1, "candidate", "status"}, "bogus", `pairs[1].candidate.status: unknown status "bogus"`},
		{[]any{"baseline", "deployments", 0, "read_at"}, "noon", `baseline.deployments[0]: deployment of "restaurant": read_at: parsing time "noon"`},
	} {
		var doc any
		if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		v := doc
		for _, k := range tc.path[:len(tc.path)-1] {
			switch k := k.(type) {
			case string:
				v = v.(map[string]any)[k]
			case int:
				v = v.([]any)[k]
			}
		}
		v.(map[string]any)[tc.path[len(tc.path)-1].(string)] = tc.value
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadJSON(bytes.NewReader(data))
		var ve *jsonkind.ValueError
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Error(), tc.want) {
			t.Errorf("%v: error %v, want a ValueError %q", tc.path, err, tc.want)
			continue
		}
		want := fmt.Sprintf("%q", tc.value)
		if tc.path[0] == "baseline" {
			want = "{" // the deployment refuses as a whole
		}
		if !bytes.HasPrefix(data[ve.Offset:], []byte(want)) {
			t.Errorf("%v: offset at %.20q, want the value %s", tc.path, data[ve.Offset:], want)
		}
	}
}

// comparisonJSON is the comparison of sides() as WriteJSON writes it.
func comparisonJSON(t *testing.T) *bytes.Buffer {
	t.Helper()
	base, cand := sides()
	var js bytes.Buffer
	if err := WriteJSON(&js, build(base, cand, DefaultOptions())); err != nil {
		t.Fatal(err)
	}
	return &js
}

// TestMsText: latencies read as people write them: tenths of a
// millisecond below 10ms, whole ones below a second, seconds beyond.
func TestMsText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ms   float64
		want string
	}{
		{0.4, "0.4ms"}, {-9.5, "-9.5ms"}, {10, "10ms"}, {-10, "-10ms"}, {12.4, "12ms"}, {999, "999ms"},
		{1000, "1.00s"}, {-1000, "-1.00s"}, {1250, "1.25s"},
	} {
		if got := msText(tc.ms); got != tc.want {
			t.Errorf("msText(%g) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

// TestCompared: a pair of a class that ran on both sides with a verdict
// on each was compared; the others say nothing of the candidate against
// the baseline, and a comparison of them alone is empty.
func TestCompared(t *testing.T) {
	compared := map[Class]bool{Regressed: true, Fixed: true, Changed: true, Slower: true, Faster: true, Unchanged: true,
		NotCompared: false, OnlyBaseline: false, OnlyCandidate: false, Class("edited"): false}
	var pairs []*Pair
	want := 0
	for cl, ok := range compared {
		if cl.Compared() != ok {
			t.Errorf("%s: compared %v, want %v", cl, cl.Compared(), ok)
		}
		pairs = append(pairs, &Pair{Class: cl}, &Pair{Class: cl})
		if ok {
			want += 2
		}
	}
	if got := CountPairs(pairs).Compared(); got != want {
		t.Errorf("counts compared %d, want %d", got, want)
	}
}

// TestTextUnchecked: the console lists the pairs that check nothing on a
// side, and only when there are such; a pair written nowhere is named by
// its file.
func TestTextUnchecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		pair *Pair
		want string
	}{
		{"checks", &Pair{Name: "greets", File: "s.yaml", Class: OnlyCandidate, Candidate: &Outcome{}}, ""},
		{"checks nothing, named by its file", &Pair{Name: "greets", File: "s.yaml", Class: OnlyCandidate, Candidate: &Outcome{Unchecked: true}},
			"\nchecked nothing (passes whenever the agent answers, so its class says nothing of the agent):\n  s.yaml greets (on the candidate)\n"},
	} {
		var b strings.Builder
		if err := WriteText(&b, &Comparison{Status: result.RunPassed, Pairs: []*Pair{tc.pair}}, TextOptions{}); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if tc.want == "" && strings.Contains(got, "checked nothing") || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if !strings.Contains(got, "ONLY-CANDIDATE s.yaml greets") {
			t.Errorf("%s: the pair is not named by its file: %q", tc.name, got)
		}
	}
}
