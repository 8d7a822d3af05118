package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
)

// godogMu serialises godog runs: TestSuite.Run sets process environment
// variables (GODOG_SEED) and reads a global formatter registry, so two runs
// in one process must not overlap (go-libs.md, godog pitfall 2). It is
// the only process-wide state of the package, forced by godog's.
var godogMu sync.Mutex

// godogFormat names our godog formatter. It prints nothing: results are
// collected by our hooks, because godog buffers formatter calls until a
// scenario ends (WrapOnFlush), too late for the case's verdict, while hooks
// run in step order on the scenario's goroutine; the reports are ours
// (internal/report). A built-in formatter writing to io.Discard would do
// the same work for nothing (progress reads godog's storage at every step).
const godogFormat = "agenttest-quiet"

// registerFormat adds godogFormat to godog's global registry once.
var registerFormat = sync.OnceFunc(func() {
	godog.Format(godogFormat, "prints nothing; agenttest reports from its hooks", func(string, io.Writer) godog.Formatter { return quiet{} })
})

// quiet is the formatter that prints nothing.
type quiet struct{}

func (quiet) TestRunStarted()                                                   {}
func (quiet) Feature(*messages.GherkinDocument, string, []byte)                 {}
func (quiet) Pickle(*godog.Scenario)                                            {}
func (quiet) Defined(*godog.Scenario, *godog.Step, *godog.StepDefinition)       {}
func (quiet) Failed(*godog.Scenario, *godog.Step, *godog.StepDefinition, error) {}
func (quiet) Passed(*godog.Scenario, *godog.Step, *godog.StepDefinition)        {}
func (quiet) Skipped(*godog.Scenario, *godog.Step, *godog.StepDefinition)       {}
func (quiet) Undefined(*godog.Scenario, *godog.Step, *godog.StepDefinition)     {}
func (quiet) Pending(*godog.Scenario, *godog.Step, *godog.StepDefinition)       {}
func (quiet) Ambiguous(*godog.Scenario, *godog.Step, *godog.StepDefinition, error) {
}
func (quiet) Summary() {}

// featureRun is the state of the one godog run of a Run: every feature
// scenario selected by the filters, in one godog TestSuite.
type featureRun struct {
	r    *runner
	ctx  context.Context
	sem  chan struct{}
	lib  *steps.Library
	byID map[string]*job // godog pickle id -> case; read-only during Run
}

// caseKey and stepKey carry a pickle's featureCase and the index of the
// running step through godog's context chain.
type (
	caseKey struct{}
	stepKey struct{}
)

// runFeatures runs the feature jobs through godog, sharing sem with the
// YAML jobs. Every job is finished (CaseFinished) exactly once, here or in
// the godog hooks.
func (r *runner) runFeatures(ctx context.Context, jobs []*job, sem chan struct{}) {
	if len(jobs) == 0 {
		return
	}
	fr := &featureRun{r: r, ctx: ctx, sem: sem, lib: scenario.Steps(), byID: make(map[string]*job, len(jobs))}
	contents, err := fr.index(jobs)
	if err == nil {
		err = fr.run(contents)
	}
	// Cases godog never started (interrupted, or godog refused the run)
	// and cases whose After hook did not fire are settled here.
	for _, j := range jobs {
		switch {
		case j.fc != nil:
			j.fc.finish()
		case err != nil:
			a := r.newAttempt(j.c)
			a.Status = result.Errored
			a.Error = &result.Error{Pos: j.sc.Pos, Kind: result.KindInternal, Message: "run features: " + err.Error()}
			j.c.Status = result.Errored
			r.finishJob(j)
		default:
			if r.gate(ctx, j) {
				// godog ran every pickle it was given; only an
				// interruption leaves one behind.
				r.cutOff(j.c)
			}
			r.finishJob(j)
		}
	}
}

// index maps godog's pickle ids to the jobs. godog parses FeatureContents
// again with one id sequence across the files, so the same parse over the
// same files in the same order yields the same ids; the i-th pickle of a
// file is the scenario loaded with Pickle == i.
func (fr *featureRun) index(jobs []*job) ([]godog.Feature, error) {
	type file struct {
		suite *scenario.Suite
		jobs  map[int]*job
	}
	var files []*file
	seen := map[*scenario.Suite]*file{}
	for _, j := range jobs {
		f := seen[j.suite]
		if f == nil {
			f = &file{suite: j.suite, jobs: map[int]*job{}}
			seen[j.suite] = f
			files = append(files, f)
		}
		f.jobs[j.sc.Pickle] = j
	}
	newID := (&messages.Incrementing{}).NewId
	contents := make([]godog.Feature, 0, len(files))
	for _, f := range files {
		_, pickles, err := scenario.ParseFeature(f.suite.Path, f.suite.Source, newID)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", f.suite.Path, err)
		}
		for i, p := range pickles {
			if j := f.jobs[i]; j != nil {
				fr.byID[p.Id] = j
			}
		}
		contents = append(contents, godog.Feature{Name: f.suite.Path, Contents: f.suite.Source})
	}
	return contents, nil
}

func (fr *featureRun) run(contents []godog.Feature) error {
	godogMu.Lock()
	defer godogMu.Unlock()
	registerFormat()
	status := godog.TestSuite{
		Name:                "agenttest",
		ScenarioInitializer: fr.initScenario,
		Options: &godog.Options{
			Format:          godogFormat,
			Output:          io.Discard,
			FeatureContents: contents,
			Concurrency:     fr.r.opts.Parallel,
			// Undefined and ambiguous steps fail (the loader already
			// refused them); never StopOnFailure with Concurrency
			// (godog pitfall 1): --fail-fast is ours.
			Strict:         true,
			NoColors:       true,
			DefaultContext: fr.ctx,
		},
	}.Run()
	// 1 only says some scenario failed, which the cases already know.
	if status == 2 {
		return errors.New("godog refused the feature files (exit 2)")
	}
	return nil
}

// initScenario registers the step library and our hooks. godog calls it
// once per pickle; everything is registered here and nowhere at suite level
// (godog pitfall 8), and per-scenario state lives in the context.
func (fr *featureRun) initScenario(sc *godog.ScenarioContext) {
	for _, d := range fr.lib.Defs() {
		// Any keyword: And/But after a When may hold a check. The handler
		// takes only the context (godog passes the captured arguments,
		// which the compiled op already holds).
		sc.Step(d.Pattern, fr.step)
	}
	sc.Before(fr.before)
	sc.StepContext().Before(fr.beforeStep)
	sc.StepContext().After(fr.afterStep)
	sc.After(fr.after)
}

// before starts a case: it takes a slot, then decides whether the case
// runs. Pickles not selected by --tags or --name are skipped and do not
// appear in the Result.
func (fr *featureRun) before(ctx context.Context, p *godog.Scenario) (context.Context, error) {
	j := fr.byID[p.Id]
	if j == nil {
		return ctx, godog.ErrSkip
	}
	r := fr.r
	fc := &featureCase{r: r, j: j, ctx: fr.ctx, sem: fr.sem, steps: make(map[string]int, len(p.Steps))}
	for i, st := range p.Steps {
		fc.steps[st.Id] = i
	}
	j.fc = fc
	fc.slot = acquire(fr.ctx, fr.sem)
	fc.started = r.opts.Now()
	if !r.gate(fr.ctx, j) {
		fc.settled = true
		fc.finish()
		return ctx, godog.ErrSkip
	}
	r.opts.Observer.CaseStarted(j.file, j.c)
	if r.noAgent(j) {
		fc.settled = true
		fc.finish()
		return ctx, godog.ErrSkip
	}
	fc.budget = r.retries(j.sc)
	fc.retryFailed = j.sc.Repeat <= 1
	return context.WithValue(ctx, caseKey{}, fc), nil
}

func (fr *featureRun) beforeStep(ctx context.Context, st *godog.Step) (context.Context, error) {
	fc, _ := ctx.Value(caseKey{}).(*featureCase)
	if fc == nil {
		return ctx, nil
	}
	i, ok := fc.steps[st.Id]
	if !ok {
		return ctx, fmt.Errorf("agenttest: unknown step %q", st.Text)
	}
	return context.WithValue(ctx, stepKey{}, i), nil
}

// step runs one step of the pickle through the session driver.
func (fr *featureRun) step(ctx context.Context) (err error) {
	fc, _ := ctx.Value(caseKey{}).(*featureCase)
	i, ok := ctx.Value(stepKey{}).(int)
	if fc == nil || !ok {
		return errors.New("agenttest: step run outside an agenttest scenario")
	}
	defer func() {
		if p := recover(); p != nil {
			fc.panicked(p, debug.Stack())
			err = &stepFailed{msg: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	if fc.advance(i) {
		return nil
	}
	return fc.failure()
}

// afterStep notices steps that failed in godog without our driver saying
// so (a failure godog made itself): the case must not pass.
func (fr *featureRun) afterStep(ctx context.Context, st *godog.Step, status godog.StepResultStatus, err error) (context.Context, error) {
	fc, _ := ctx.Value(caseKey{}).(*featureCase)
	if fc == nil || err == nil || errors.Is(err, godog.ErrSkip) {
		return ctx, nil
	}
	var ours *stepFailed
	if !errors.As(err, &ours) && fc.foreign == nil {
		fc.foreign = fmt.Errorf("step %q: %s: %v", st.Text, status, err)
	}
	return ctx, nil
}

// after settles the case. godog#650: the hook fires right after a failing
// step, before the skipped steps' hooks; nothing of ours runs after it, so
// that is the end of the case.
func (fr *featureRun) after(ctx context.Context, _ *godog.Scenario, _ error) (context.Context, error) {
	if fc, _ := ctx.Value(caseKey{}).(*featureCase); fc != nil {
		fc.finish()
	}
	return ctx, nil
}

// stepFailed is the error a step returns to godog when the case failed
// there; the case itself already holds the facts.
type stepFailed struct{ msg string }

func (e *stepFailed) Error() string { return e.msg }

// featureCase is the state of one feature scenario while godog runs it:
// the attempt in progress and how far it got. The godog steps advance it
// one step at a time; retries and repeats replay the compiled steps in a
// fresh session, so the attempts are those of the same conversation in
// YAML. It lives on the pickle's goroutine.
type featureCase struct {
	r   *runner
	j   *job
	ctx context.Context
	sem chan struct{}
	// steps maps godog's pickle step ids to step indexes.
	steps map[string]int
	// slot is set while the case holds a slot of sem.
	slot    bool
	started time.Time

	budget      int
	retryFailed bool
	// ar is the attempt in progress (nil between attempts); done is the
	// number of steps that hold in it; n is the number of the attempt in
	// the current run (0 for the first).
	ar   *attemptRun
	done int
	n    int
	// decided is set when the current run has its verdict early (a step
	// failed for good, or the run was cut): verdict and cut hold it.
	decided bool
	verdict result.Status
	cut     bool
	// foreign is a failure godog made without our driver (never
	// expected): the case is Errored.
	foreign error
	// settled is set when the case's status is already final; finished
	// when finish ran.
	settled, finished bool
}

// advance makes steps 0..k hold in the current attempt, starting fresh
// attempts (replaying the earlier steps) while the retry budget lasts. It
// reports whether they hold; when not, the run has its verdict.
func (fc *featureCase) advance(k int) bool {
	if fc.decided {
		return false
	}
	st, cut := fc.r.retryLoop(fc.ctx, fc.j, fc.budget, fc.retryFailed, fc.n, func(n int) (result.Status, bool) {
		fc.n = n
		if fc.ar == nil {
			fc.ar = fc.r.newAttemptRun(fc.ctx, fc.j)
			fc.done = 0
		}
		for fc.done <= k {
			ok, retry := fc.ar.exec(fc.j.sc.Steps[fc.done])
			if !ok {
				ar := fc.ar
				fc.ar = nil
				ar.end()
				return ar.a.Status, retry
			}
			fc.done++
		}
		return result.Passed, false
	})
	if st == result.Passed || st == result.Flaky {
		return true
	}
	fc.decided, fc.verdict, fc.cut = true, st, cut
	return false
}

// complete returns the verdict of the current run: the early one, or,
// when every step held, Passed (Flaky after a retry).
func (fc *featureCase) complete() (result.Status, bool) {
	if !fc.decided && fc.done < len(fc.j.sc.Steps) {
		// godog stopped before the last step without our driver
		// failing: only a foreign failure or an interruption does that.
		fc.advanceRest()
	}
	if fc.decided {
		return fc.verdict, fc.cut
	}
	if fc.ar != nil {
		fc.ar.a.Status = result.Passed
		fc.ar.end()
		fc.ar = nil
	}
	if fc.n > 0 {
		return result.Flaky, false
	}
	return result.Passed, false
}

// advanceRest settles a run godog left unfinished.
func (fc *featureCase) advanceRest() {
	if fc.foreign == nil && fc.ctx.Err() == nil {
		fc.foreign = errors.New("godog did not run every step")
	}
	if fc.foreign == nil {
		// Interrupted between steps.
		if fc.ar != nil {
			fc.ar.end()
			fc.ar = nil
		}
		fc.decided, fc.verdict, fc.cut = true, result.Pending, true
		return
	}
	ar := fc.ar
	if ar == nil {
		ar = fc.r.newAttemptRun(fc.ctx, fc.j)
	}
	fc.ar = nil
	ar.errored(&result.Error{Pos: fc.j.sc.Pos, Kind: result.KindInternal, Message: "internal error (please report it): " + fc.foreign.Error()})
	ar.end()
	fc.decided, fc.verdict = true, result.Errored
}

// reset starts the next run of a repeated scenario.
func (fc *featureCase) reset() {
	fc.ar, fc.done, fc.n = nil, 0, 0
	fc.decided, fc.verdict, fc.cut = false, result.Pending, false
}

// finish gives the case its verdict (running the remaining runs of a
// repeated scenario) and reports it. It runs once.
func (fc *featureCase) finish() {
	if fc.finished {
		return
	}
	fc.finished = true
	r, j := fc.r, fc.j
	c := j.c
	defer func() {
		if p := recover(); p != nil {
			r.internalError(j, p, debug.Stack())
		}
		if !fc.settled {
			c.Duration = r.opts.Now().Sub(fc.started)
		}
		if fc.slot {
			fc.slot = false
			<-fc.sem
		}
		r.finishJob(j)
	}()
	if fc.settled {
		return
	}
	if fc.foreign != nil && !fc.decided {
		fc.advanceRest()
	}
	if j.sc.Repeat > 1 {
		last := len(j.sc.Steps) - 1
		r.repeat(fc.ctx, j, func(i int) (result.Status, bool) {
			if i > 0 {
				fc.reset()
				fc.advance(last)
			}
			return fc.complete()
		})
		return
	}
	st, cut := fc.complete()
	if cut {
		r.cutOff(c)
		return
	}
	c.Status = st
}

// panicked records a panic of a step as an internal error of the case.
func (fc *featureCase) panicked(p any, stack []byte) {
	if fc.ar != nil {
		fc.ar.end()
		fc.ar = nil
	}
	a := fc.r.newAttempt(fc.j.c)
	a.Status = result.Errored
	a.Error = &result.Error{Pos: fc.j.sc.Pos, Kind: result.KindInternal, Message: fmt.Sprintf("internal error (please report it): panic: %v\n%s", p, stack)}
	fc.decided, fc.verdict = true, result.Errored
}

// failure describes, for godog, why the run failed at this step: the
// facts of the last attempt.
func (fc *featureCase) failure() error {
	a := fc.j.c.Last()
	var b strings.Builder
	switch {
	case fc.cut:
		b.WriteString("run interrupted")
	case a == nil:
		b.WriteString(fc.verdict.String())
	case a.Error != nil:
		fmt.Fprintf(&b, "%s: %s: %s", a.Error.Pos, a.Error.Kind, a.Error.Message)
	default:
		for i, f := range a.Failures {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s: %s: %s", f.Pos, f.Step, f.Message)
			if f.Expected != "" {
				fmt.Fprintf(&b, "\n  expected: %s", f.Expected)
			}
			fmt.Fprintf(&b, "\n  actual:   %s", f.Actual)
		}
	}
	return &stepFailed{msg: b.String()}
}

// exec runs one compiled step in the attempt's session, which it opens at
// the first step that needs it. ok is false when the attempt ended there.
func (ar *attemptRun) exec(st *scenario.Step) (ok, retry bool) {
	op := st.Op
	if op == nil || op.Kind == steps.Setup {
		// Setup steps were applied to the scenario when it was loaded.
		return true, false
	}
	// A probe scenario has no debug chat (the loader refuses chat steps
	// in it): its steps act on the probe's conversation.
	if ar.greeting == nil && ar.j.sc.Probe == nil {
		if ok, retry := ar.open(); !ok {
			return false, retry
		}
	}
	n := len(ar.a.Failures)
	defer func() {
		for i := n; i < len(ar.a.Failures); i++ {
			ar.a.Failures[i].Step = op.Step
		}
	}()
	switch op.Kind {
	case steps.Start:
		return true, false
	case steps.Say:
		text := op.Say
		if op.Silent {
			text = ""
		}
		return ar.say(op.Pos, text)
	case steps.Check:
		exp, err := op.Expect(ar.interpolate)
		if err != nil {
			ar.errored(&result.Error{Pos: op.Pos, Kind: result.KindConfig, Message: op.Step + ": " + err.Error()})
			return false, false
		}
		on := ar.last
		if op.Greeting {
			on = ar.greeting
		}
		if !ar.check(exp, on) {
			return false, true
		}
		return true, false
	case steps.Capture:
		cp := scenario.Capture{Pos: op.Pos, Name: op.CaptureName, From: op.CaptureFrom, Pattern: op.CapturePattern}
		if !ar.capture(ar.index, cp, ar.last.Result) {
			return false, true
		}
		return true, false
	case steps.Probe:
		return ar.execProbe(op)
	case steps.CallStatus:
		pc := ar.placed
		if pc == nil {
			ar.errored(&result.Error{Pos: op.Pos, Kind: result.KindInternal, Message: op.Step + ": no call was placed"})
			return false, false
		}
		return ar.awaitCall(pc, ar.j.sc.Probe.Within, op.Pos, op.ExpectStatus, op.Pos)
	case steps.Confirm:
		return ar.execConfirm(op)
	}
	ar.errored(&result.Error{Pos: op.Pos, Kind: result.KindInternal, Message: fmt.Sprintf("step kind %s cannot run", op.Kind)})
	return false, false
}

// execProbe runs the probe step: the scenario's Probe, which the loader
// built from this step, as a YAML probe runs it. A call is only placed
// here; its status is awaited by the status step or the first
// confirmation.
func (ar *attemptRun) execProbe(op *steps.Op) (ok, retry bool) {
	pr := ar.j.sc.Probe
	switch {
	case pr == nil:
		ar.errored(&result.Error{Pos: op.Pos, Kind: result.KindInternal, Message: op.Step + ": the scenario has no probe"})
		return false, false
	case pr.SMS != nil:
		_, ok, retry = ar.probeSMS(pr)
		return ok, retry
	}
	_, ok, retry = ar.placeCall(pr)
	return ok, retry
}

// execConfirm runs a confirmation step on the scenario's conversation: the
// debug chat's after its last turn so far, or the probe's. The record is
// awaited as a YAML confirm: block awaits it (chatEnded, probeEnded).
func (ar *attemptRun) execConfirm(op *steps.Op) (ok, retry bool) {
	cf, err := op.ConfirmChecks(ar.interpolate)
	if err != nil {
		ar.errored(&result.Error{Pos: op.Pos, Kind: result.KindConfig, Message: op.Step + ": " + err.Error()})
		return false, false
	}
	sc := ar.j.sc
	if sc.Probe == nil {
		return ar.confirm(cf, ar.a.ConversationID, ar.chatEnded(cf))
	}
	if pc := ar.placed; pc != nil {
		if pc.status == nil {
			// Confirmed before any status step: only a call that
			// connected has a conversation, so it must succeed, as a
			// YAML probe's default expect_status says.
			if ok, retry := ar.awaitCall(pc, sc.Probe.Within, op.Pos, reply.CallSuccess, op.Pos); !ok {
				return false, retry
			}
		}
		if pc.convID == "" {
			ar.fail(assert.Failure{Pos: op.Pos, Key: "confirm",
				Message: "the call ended in failure: there is no conversation to confirm", Expected: "a conversation", Actual: "none"})
			return false, true
		}
	}
	return ar.confirm(cf, ar.a.ConversationID, probeEnded(cf))
}
