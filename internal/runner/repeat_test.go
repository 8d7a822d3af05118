package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/stats"
)

var standardDesign = stats.Design{PassRate: 0.9, Margin: 0.1, Confidence: 0.95}

func TestSequentialRule(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name                    string
		passed, failed, errored int
		limit                   int
		wantDone                bool
		wantStatus              result.Status
		wantDecision            string
		// design is standardDesign when zero.
		design stats.Design
	}
	// quick passes on 2 passes and no failure.
	quick := stats.Design{PassRate: 0.9, Margin: 0.5, Confidence: 0.8}
	cases := []testCase{
		{name: "undecided goes on", passed: 20, limit: 282},
		{name: "passes", passed: 26, limit: 282, wantDone: true, wantStatus: result.Passed, wantDecision: result.DecisionPassed},
		{name: "fails", failed: 5, limit: 282, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionFailed},
		{name: "errored runs are not evidence", passed: 26, errored: 4, limit: 282, wantDone: true, wantStatus: result.Passed, wantDecision: result.DecisionPassed},
		{name: "errored runs do not use up the limit", passed: 20, errored: 4, limit: 22},
		{name: "the limit undecided is inconclusive", passed: 20, limit: 20, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionInconclusive},
		{name: "the limit undecided with failures is inconclusive", passed: 18, failed: 2, limit: 20, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionInconclusive},
		{name: "a third errored is tolerated", passed: 10, errored: 5, limit: 282},
		{name: "more than a third errored stops", passed: 9, errored: 5, limit: 282, wantDone: true, wantStatus: result.Errored, wantDecision: result.DecisionErrored},
		{name: "a few errored runs wait for more evidence", passed: 2, errored: 4, limit: 282},
		// Failures the errored runs could not undo, had each passed
		// (the test fails on 3 passes and 5 failures too): the agent's.
		// It errored, blaming the platform for a broken agent.
		{name: "more than a third errored at a failure", failed: 5, errored: 3, limit: 282, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionFailed},
		{name: "five errored at a failure they could undo", design: quick, failed: 1, errored: 5, limit: 282, wantDone: true, wantStatus: result.Errored, wantDecision: result.DecisionErrored},
		// The test fails on 2 failures, and would pass on 3 passes and
		// those 2: the errored runs could have made it a pass.
		{name: "more than a third errored at a failure they could undo", design: stats.Design{PassRate: 0.5, Margin: 0.3, Confidence: 0.6}, failed: 2, errored: 3, limit: 282, wantDone: true, wantStatus: result.Errored, wantDecision: result.DecisionErrored},
		{name: "more than a third errored at a failure they could not undo", design: quick, failed: 1, errored: 4, limit: 282, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionFailed},
		// At the limit: one pass is no evidence at this confidence, nor
		// would two be.
		{name: "more than a third errored at an inconclusive limit", passed: 1, errored: 1, limit: 1, wantDone: true, wantStatus: result.Failed, wantDecision: result.DecisionInconclusive},
		// Below minErrored, as the test decides: a pass on thin evidence
		// is no pass.
		{name: "more than a third errored at a pass", design: quick, passed: 2, errored: 2, limit: 282, wantDone: true, wantStatus: result.Errored, wantDecision: result.DecisionErrored},
		{name: "a third errored at a pass", design: quick, passed: 4, errored: 2, limit: 282, wantDone: true, wantStatus: result.Passed, wantDecision: result.DecisionPassed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := tally{runs: tc.passed + tc.failed + tc.errored, passed: tc.passed, failed: tc.failed, errored: tc.errored}
			d := standardDesign
			if tc.design != (stats.Design{}) {
				d = tc.design
			}
			st, dec, done := sequentialRule(d, tc.limit)(tl)
			if done != tc.wantDone || done && (st != tc.wantStatus || dec != tc.wantDecision) {
				t.Errorf("= %s %q done=%t, want %s %q done=%t", st, dec, done, tc.wantStatus, tc.wantDecision, tc.wantDone)
			}
		})
	}
}

// TestEvidenceInStartOrder feeds the same runs finishing in scrambled
// orders, as parallel runs do, and requires the verdict and the runs it
// rests on to be those of the runs one at a time.
func TestEvidenceInStartOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		outcomes := make([]result.Status, 400)
		for i := range outcomes {
			switch x := rng.Float64(); {
			case x < 0.05:
				outcomes[i] = result.Errored
			case x < 0.05+0.8:
				outcomes[i] = result.Passed
			default:
				outcomes[i] = result.Failed
			}
		}
		limit := 40 + trial
		inOrder := &evidence{decide: sequentialRule(standardDesign, limit)}
		for i, st := range outcomes {
			if inOrder.add(i, st) {
				break
			}
		}
		// Finishing order: runs started in windows of w at once, each
		// window finishing in a random order.
		w := 1 + trial%8
		scrambled := &evidence{decide: sequentialRule(standardDesign, limit)}
		for start := 0; start < len(outcomes) && !scrambled.decided; start += w {
			order := rng.Perm(min(w, len(outcomes)-start))
			for _, k := range order {
				scrambled.add(start+k, outcomes[start+k])
			}
		}
		if !inOrder.decided || scrambled.next != inOrder.next || scrambled.t != inOrder.t ||
			scrambled.verdict != inOrder.verdict || scrambled.decision != inOrder.decision {
			t.Fatalf("trial %d (window %d): in order %+v, scrambled %+v", trial, w, inOrder, scrambled)
		}
	}
}

// chatTimeout answers a turn with the platform's CHAT_TIMEOUT: the run
// errors (the client does not retry it, and the case has no retries).
func chatTimeout(w http.ResponseWriter) bool {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestTimeout)
	w.Write([]byte(`{"success":false,"error":"timeout","error_id":"e1","error_code":"CHAT_TIMEOUT","error_message":"the chat session exceeded the timeout limit","data":null}`))
	return true
}

// seqScenario is a booking greeting and first turn repeated under the sequential test.
func seqScenario(st scenario.Stats) *scenario.Scenario {
	sc := booking("varies", 10)
	keepTurns(sc, 1)
	sc.Stats = st
	return sc
}

// rudeEvery makes every n-th session's greeting fail the check.
func rudeEvery(n int64) func(kind string, k int64, body []byte) []byte {
	return func(kind string, k int64, body []byte) []byte {
		if kind == "start" && k%n == 0 {
			return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
		}
		return body
	}
}

func TestRunSequential(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name     string
		stats    scenario.Stats
		parallel int
		rewrite  func(kind string, n int64, body []byte) []byte
		fault    func(kind string, n int64, w http.ResponseWriter) bool
		status   result.Status
		decision string
		// most is the most runs the verdict may rest on.
		most int
		// errored is the least number of errored runs.
		errored int
	}
	healthy := scenario.Stats{PassRate: 0.9, Confidence: 0.95}
	cases := []testCase{
		{name: "a healthy agent passes", stats: healthy, parallel: 1, rewrite: rudeEvery(20),
			status: result.Passed, decision: result.DecisionPassed, most: 60},
		{name: "parallel runs reach the same kind of verdict", stats: healthy, parallel: 4, rewrite: rudeEvery(20),
			status: result.Passed, decision: result.DecisionPassed, most: 60},
		{name: "a broken agent fails early", stats: healthy, parallel: 3, rewrite: rudeEvery(2),
			status: result.Failed, decision: result.DecisionFailed, most: 20},
		{name: "a limit too small is inconclusive", stats: scenario.Stats{Repeat: 10, PassRate: 0.9, Confidence: 0.95}, parallel: 2,
			status: result.Failed, decision: result.DecisionInconclusive, most: 10},
		// One run is a statistical case still, not a case run once: its
		// one pass is no evidence at this confidence.
		{name: "a limit of one run is inconclusive", stats: scenario.Stats{Repeat: 1, PassRate: 0.9, Confidence: 0.95}, parallel: 1,
			status: result.Failed, decision: result.DecisionInconclusive, most: 1},
		// The errored run is not evidence, so it does not count against
		// the limit: the case reaches it, and its verdict.
		{name: "errored runs do not use up the limit", stats: scenario.Stats{Repeat: 10, PassRate: 0.9, Confidence: 0.95}, parallel: 1,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n == 1 && chatTimeout(w)
			},
			status: result.Failed, decision: result.DecisionInconclusive, most: 10, errored: 1},
		{name: "errored runs are excluded", stats: healthy, parallel: 1, rewrite: rudeEvery(20),
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n%7 == 3 && chatTimeout(w)
			},
			status: result.Passed, decision: result.DecisionPassed, most: 70, errored: 3},
		// Four sessions time out, then the agent answers every turn
		// wrong: its five failures fail it whatever the errored runs
		// would have shown, had each passed. It errored (more than a
		// third of the runs), the platform blamed for a broken agent.
		{name: "failures the errored runs could not undo fail the case", stats: healthy, parallel: 1,
			rewrite: func(kind string, _ int64, body []byte) []byte {
				if kind != "turn" {
					return body
				}
				return regexp.MustCompile(`(?i)how many`).ReplaceAll(body, []byte("no idea"))
			},
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n <= 4 && chatTimeout(w)
			},
			status: result.Failed, decision: result.DecisionFailed, most: 5, errored: 4},
		{name: "more than a third errored errors the case", stats: healthy, parallel: 2,
			fault: func(kind string, n int64, w http.ResponseWriter) bool {
				return kind == "turn" && n%2 == 0 && chatTimeout(w)
			},
			status: result.Errored, decision: result.DecisionErrored, most: 30, errored: minErrored},
	}
	run := func(t *testing.T, tc testCase) {
		e := newEnv(t, sim.Options{Seed: 1})
		if tc.rewrite != nil {
			e.proxy.onResponse(tc.rewrite)
		}
		if tc.fault != nil {
			e.proxy.onRequest(func(kind string, n int64, _ *http.Request, w http.ResponseWriter) bool { return tc.fault(kind, n, w) })
		}
		opts := e.opts()
		opts.Parallel = tc.parallel
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, seqScenario(tc.stats))}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		r := c.Repeat
		if c.Status != tc.status || r == nil || r.Decision != tc.decision {
			t.Fatalf("%s, repeat %+v; want %s (%s)%s", c.Status, r, tc.status, tc.decision, describe(c))
		}
		d := tc.stats.Design()
		switch {
		case r.Procedure != result.ProcedureSPRT || r.Confidence != 0.95 || r.Margin != 0.1 || r.Level != 0.95:
			t.Errorf("design not recorded: %+v", r)
		case r.Runs != r.Passed+r.Failed+r.Errored || r.Runs > tc.most+r.Errored || r.Errored < tc.errored:
			t.Errorf("runs %d = %d passed + %d failed + %d errored; want at most %d counted, at least %d errored", r.Runs, r.Passed, r.Failed, r.Errored, tc.most, tc.errored)
		case r.Needed != d.Needed():
			t.Errorf("needed %d, want %d", r.Needed, d.Needed())
		case r.Lower != d.Lower(r.Passed, r.Failed) || r.Upper != d.Upper(r.Passed, r.Failed):
			t.Errorf("bounds [%v, %v], want those of %d passes and %d failures", r.Lower, r.Upper, r.Passed, r.Failed)
		}
		// The verdict rests on exactly the runs counted: the test had not
		// decided one counted run earlier (errored runs aside).
		if tc.decision == result.DecisionPassed || tc.decision == result.DecisionFailed {
			if got := d.Decide(r.Passed, r.Failed); got.String() != strings.TrimSuffix(tc.decision, "ed") {
				t.Errorf("stats.Decide(%d, %d) = %s, but the case %s", r.Passed, r.Failed, got, tc.decision)
			}
			last := c.Attempts[len(c.Attempts)-1]
			p, f := r.Passed, r.Failed
			if last.Status == result.Passed {
				p--
			} else {
				f--
			}
			if d.Decide(p, f) != stats.Continue {
				t.Errorf("the test had decided before the last counted run (%d passes, %d failures)", p, f)
			}
		}
		// Every run counted is in the transcript, numbered in start order;
		// every session started is counted or discarded.
		runs := 0
		for i, a := range c.Attempts {
			if a.Number != i+1 || a.Run < runs || a.Run > runs+1 {
				t.Fatalf("attempt %d: number %d, run %d after run %d", i+1, a.Number, a.Run, runs)
			}
			runs = a.Run
		}
		if runs != r.Runs {
			t.Errorf("attempts cover %d runs, the repeat counts %d", runs, r.Runs)
		}
		// (A discarded run may have been stopped before its session
		// opened.)
		if got := e.proxy.starts.Load(); got < int64(r.Runs) || got > int64(r.Runs+r.Discarded) {
			t.Errorf("%d sessions started, %d runs counted and %d discarded", got, r.Runs, r.Discarded)
		}
		// At its limit, a case starts no run past it.
		if tc.decision == result.DecisionInconclusive && r.Discarded != 0 {
			t.Errorf("%d runs discarded past the limit of %d", r.Discarded, r.Limit)
		}
		if peak := e.proxy.peak.Load(); peak > int64(tc.parallel) {
			t.Errorf("%d requests at once with --parallel %d", peak, tc.parallel)
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run(t, tc)
		})
	}
}

// TestRunStatsFromOptions: the run's settings apply to a scenario that
// sets none, never to one with its own.
func TestRunStatsFromOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Stats = scenario.Stats{PassRate: 0.9, Confidence: 0.95}
	own := seqScenario(scenario.Stats{Repeat: 3, PassRate: 1})
	own.Name = "own"
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, seqScenario(scenario.Stats{}), own)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	flagged, kept := res.Files[0].Cases[0].Repeat, res.Files[0].Cases[1].Repeat
	if flagged == nil || flagged.Procedure != result.ProcedureSPRT || flagged.Limit != 282 || flagged.Decision != result.DecisionPassed {
		t.Errorf("scenario without settings: %+v", flagged)
	}
	if kept == nil || kept.Procedure != result.ProcedureFixed || kept.Runs != 3 {
		t.Errorf("scenario with its own settings: %+v", kept)
	}
	opts.Stats = scenario.Stats{Confidence: 1.5}
	if _, err := Run(context.Background(), nil, opts); err == nil || !strings.Contains(err.Error(), "--confidence must be above 0.5") {
		t.Errorf("invalid run settings: %v", err)
	}
}

// TestQuarantineLapses: the run's clock decides whether a quarantine
// holds, once, when the run is planned; a quarantined case keeps its real
// outcome and gates only after the quarantine lapsed.
func TestQuarantineLapses(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		now    time.Time
		lapsed bool
	}{
		{until.Add(23 * time.Hour), false},
		{until.AddDate(0, 0, 1), true},
	} {
		e := newEnv(t, sim.Options{Seed: 1})
		e.proxy.onResponse(rudeEvery(1))
		opts := e.opts()
		opts.Now = func() time.Time { return tc.now }
		sc := seqScenario(scenario.Stats{})
		sc.Quarantine = &scenario.Quarantine{Reason: "greeting wording changes", Owner: "@desk", Until: until}
		res, err := Run(context.Background(), []*scenario.Suite{suite(file, sc)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c := res.Files[0].Cases[0]
		q := c.Quarantine
		if c.Status != result.Failed || q == nil || q.Lapsed != tc.lapsed || q.Until != "2026-01-31" || q.Reason != "greeting wording changes" || q.Owner != "@desk" {
			t.Fatalf("at %s: %s, quarantine %+v", tc.now, c.Status, q)
		}
		want := result.Passed
		if tc.lapsed {
			want = result.Failed
		}
		if c.Gate() != want || res.Files[0].Status() != want {
			t.Errorf("at %s: gates as %s, file %s; want %s", tc.now, c.Gate(), res.Files[0].Status(), want)
		}
	}
}

// TestFailFastIgnoresQuarantine: --fail-fast stops after the first case
// that gates the run as failed or errored. A quarantined failure does
// not: it cannot fail the run, so stopping on it would leave every other
// case untested behind a green run.
func TestFailFastIgnoresQuarantine(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel, opts.FailFast = 1, true
	opts.Now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	q := broken("quarantined", 10)
	q.Quarantine = &scenario.Quarantine{Reason: "being rewritten", Until: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, q, booking("books", 20), broken("breaks", 30), booking("never runs", 40))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(statuses(res), " ")
	if want := "quarantined=failed books=passed breaks=failed never runs=skipped"; got != want {
		t.Errorf("statuses %q, want %q", got, want)
	}
	if st := res.Stop; st == nil || st.Kind != result.StopFailFast {
		t.Errorf("Stop = %+v, want fail-fast after breaks", st)
	}
}

// TestRepeatRunsNameTheirConversations: the runs of a repeated scenario
// number their attempts from 1 each until they are merged into the case,
// so a conversation named from the attempt alone (ConversationIDs, as
// `agenttest compare` names them on the embedded simulator) must also
// carry the run: with the same name twice the simulator answers 409 and
// every run after the first errored.
func TestRepeatRunsNameTheirConversations(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	var mu sync.Mutex
	named := map[string]bool{}
	opts.ConversationIDs = func(c *result.Case, a *result.Attempt) string {
		id := fmt.Sprintf("rep-%d-%d", a.Run, a.Number)
		mu.Lock()
		defer mu.Unlock()
		if named[id] {
			t.Errorf("%s: %s named twice", c.Name, id)
		}
		named[id] = true
		return id
	}
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, seqScenario(scenario.Stats{Repeat: 4, PassRate: 1}))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Passed || c.Repeat == nil || c.Repeat.Runs != 4 || len(c.Attempts) != 4 {
		t.Fatalf("%s with %d attempts, repeat %+v, want 4 passing runs%s", c.Status, len(c.Attempts), c.Repeat, describe(c))
	}
	for i, a := range c.Attempts {
		if want := fmt.Sprintf("rep-%d-1", i+1); a.ConversationID != want || a.Run != i+1 {
			t.Errorf("attempt %d: run %d, conversation %q, want run %d in %q", a.Number, a.Run, a.ConversationID, i+1, want)
		}
	}
}

// TestInterruptedRepeatCountsEveryFinishedRun: a repeated case cut off
// before its verdict reports every run that finished, also one that
// finished while a run started before it was still going (no verdict is
// drawn from them, so the start order does not matter): run 1 hangs, run
// 2 passes, and the run is interrupted as run 3 starts.
func TestInterruptedRepeatCountsEveryFinishedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel = 2
	opts.ConversationIDs = func(_ *result.Case, a *result.Attempt) string { return fmt.Sprintf("rep-%d", a.Run) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.proxy.onRequest(func(kind string, _ int64, r *http.Request, w http.ResponseWriter) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		switch {
		case kind != "start":
			return false
		case bytes.Contains(body, []byte(`"rep-3"`)):
			cancel()
		case !bytes.Contains(body, []byte(`"rep-1"`)):
			return false
		}
		return hangUp(t, r, w)
	})
	res, err := Run(ctx, []*scenario.Suite{suite(file, seqScenario(scenario.Stats{Repeat: 4, PassRate: 1}))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if r := c.Repeat; c.Status != result.Pending || c.SkipReason != result.ReasonInterruptedRuns || r == nil ||
		r.Decision != result.DecisionInterrupted || r.Runs != 1 || r.Passed != 1 {
		t.Fatalf("%s (%s), repeat %+v; want pending after one passing run%s", c.Status, c.SkipReason, c.Repeat, describe(c))
	}
}

// finishSignal is a recorder that closes done when the case named name
// finishes.
type finishSignal struct {
	*recorder
	name string
	done chan struct{}
}

func (f *finishSignal) CaseFinished(file *result.File, c *result.Case) {
	f.recorder.CaseFinished(file, c)
	if c.Name == f.name {
		close(f.done)
	}
}

// TestFailFastLetsCasesInFlightFinish: --fail-fast stops starting cases,
// and the cases in flight finish, retries included. The first greeting of
// the flaky case is held until the run has stopped on the failure of
// another, then comes back rude: that attempt fails after the stop, and
// the case gets its retry, which passes. Reported failed on its first
// attempt, it would be a failure of the agent its own retry budget
// judged otherwise.
func TestFailFastLetsCasesInFlightFinish(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel, opts.FailFast, opts.Retries = 2, true, 1
	opts.ConversationIDs = func(c *result.Case, a *result.Attempt) string {
		return fmt.Sprintf("%s-%d", strings.ReplaceAll(c.Name, " ", "-"), a.Number)
	}
	rec := &finishSignal{recorder: newRecorder(), name: "breaks", done: make(chan struct{})}
	opts.Observer = rec
	e.proxy.onResponse(func(kind string, _ int64, body []byte) []byte {
		if kind != "start" || !strings.Contains(string(body), "flaky-1") {
			return body
		}
		select {
		case <-rec.done:
		case <-time.After(10 * time.Second):
			t.Error("the failing case did not finish")
		}
		return []byte(strings.ReplaceAll(string(body), "Welcome", "Go away"))
	})
	breaks := broken("breaks", 30)
	breaks.Retries = new(0)
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, booking("flaky", 10), breaks, booking("never runs", 40))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.check(t, res)
	got := strings.Join(statuses(res), " ")
	if want := "flaky=flaky breaks=failed never runs=skipped"; got != want {
		t.Errorf("statuses %q, want %q", got, want)
	}
	if c := res.Files[0].Cases[0]; len(c.Attempts) != 2 {
		t.Errorf("flaky case: %d attempts, want 2%s", len(c.Attempts), describe(c))
	}
	if st := res.Stop; st == nil || st.Kind != result.StopFailFast {
		t.Errorf("Stop = %+v, want fail-fast after breaks", st)
	}
}

// TestRepeatVerdictCutsRunsInFlight: once a repeated case's verdict is
// in, its runs still in flight are cut, not waited for: on a slow
// platform each would hold a session (and the run's time) for nothing,
// since they are not counted. Every run fails; the sequential test decides
// on the first n of them, and the platform holds the sessions of the runs
// after those until the client gives them up (hangUp fails the test if it
// never does: with no cut they would wait out a turn timeout of an hour).
func TestRepeatVerdictCutsRunsInFlight(t *testing.T) {
	t.Parallel()
	st := scenario.Stats{PassRate: 0.9, Confidence: 0.95}
	decide := sequentialRule(st.Design(), st.Resolve().Repeat)
	n := 0
	for tl := (tally{}); ; {
		tl.add(result.Failed)
		n++
		if _, _, done := decide(tl); done {
			break
		}
	}
	e := newEnv(t, sim.Options{Seed: 1})
	opts := e.opts()
	opts.Parallel, opts.TurnTimeout = 3, time.Hour
	// The conversation id tells the platform which run a session is of.
	opts.ConversationIDs = func(_ *result.Case, a *result.Attempt) string { return fmt.Sprintf("cut-%d-%d", a.Run, a.Number) }
	runOf := regexp.MustCompile(`"cut-(\d+)-`)
	var held atomic.Int64
	e.proxy.onRequest(func(kind string, _ int64, r *http.Request, w http.ResponseWriter) bool {
		if kind != "start" {
			return false
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m := runOf.FindSubmatch(body)
		if run, err := strconv.Atoi(string(m[1])); err != nil || run <= n {
			return false
		}
		held.Add(1)
		return hangUp(t, r, w)
	})
	e.proxy.onResponse(rudeEvery(1))
	res, err := Run(context.Background(), []*scenario.Suite{suite(file, seqScenario(st))}, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Files[0].Cases[0]
	if c.Status != result.Failed || c.Repeat == nil || c.Repeat.Decision != result.DecisionFailed || c.Repeat.Runs != n || len(c.Attempts) != n {
		t.Fatalf("%s, repeat %+v, %d attempts; want failed on the first %d runs%s", c.Status, c.Repeat, len(c.Attempts), n, describe(c))
	}
	// With two runs at once, run n+1 had started when run n decided; it
	// was cut before or while the platform held its session.
	if d, h := c.Repeat.Discarded, held.Load(); d < 1 || h > int64(d) {
		t.Errorf("%d runs discarded, %d sessions held; want at least 1 discarded, none held but theirs", d, h)
	}
}
