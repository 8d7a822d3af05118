package runner

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
)

// attemptRun is the state of one attempt: one fresh session and the
// variables captured in it. It is the session driver of both formats: the
// YAML loop (run) and the feature steps (exec, in feature.go) drive the
// conversation through the same open, say, check and capture. It lives on
// one goroutine at a time.
type attemptRun struct {
	r *runner
	j *job
	a *result.Attempt
	// runCtx is the run's context (cancelled on interruption); ctx is the
	// attempt's, bounded by the scenario timeout.
	runCtx, ctx context.Context
	// cancel releases ctx's timer, when there is one.
	cancel context.CancelFunc
	// captures are the values captured so far in this session; they shadow
	// the scenario's vars.
	captures map[string]string
	// vars are the scenario's vars with the references in their values
	// (${env:NAME}, other vars) expanded; varsErr is why they could not be.
	vars    map[string]string
	varsErr error
	expand  assert.Expander
	// clientEnv, asr and tts are repeated on every turn, as the reference
	// requires clientEnv on each call.
	clientEnv, asr, tts string
	// greeting is the reply to the session creation and last the latest
	// reply; index is the number of the last turn sent.
	greeting, last *platform.Exchange
	index          int
	// placed is the outbound call of a probe, once placed.
	placed *placedCall
	// recordRead is the conversation whose record a confirmation of this
	// attempt already read (waiting for its end when recordEnded): a
	// feature's later handoff or webhook step need not wait for it again.
	recordRead  string
	recordEnded bool
}

// newAttemptRun starts a new attempt of the job: a fresh Attempt record, no
// session yet. end must be called when the attempt is over.
func (r *runner) newAttemptRun(ctx context.Context, j *job) *attemptRun {
	a := r.newAttempt(j.c)
	ar := &attemptRun{r: r, j: j, a: a, runCtx: ctx, ctx: ctx, clientEnv: j.c.Env}
	if t := j.sc.Timeout; t > 0 {
		ar.ctx, ar.cancel = context.WithTimeout(ctx, t)
	}
	ar.vars, ar.varsErr = resolveVars(j.sc.Vars, r.opts.Getenv)
	ar.expand = ar.interpolate
	return ar
}

// resolveVars expands the references inside var values, once per attempt
// (the environment is read when the scenario runs). Vars without any are
// the common case and are used as they are.
func resolveVars(vars map[string]string, getenv func(string) (string, bool)) (map[string]string, error) {
	for _, v := range vars {
		if strings.Contains(v, "${") {
			return interp.ResolveVars(vars, getenv)
		}
	}
	return vars, nil
}

// end closes the attempt: its duration is final and its timer released.
func (ar *attemptRun) end() {
	ar.a.Duration = ar.r.opts.Now().Sub(ar.a.Started)
	if ar.cancel != nil {
		ar.cancel()
	}
}

// attempt runs the scenario once from a fresh session. It returns the
// recorded attempt (Pending when the run was interrupted during it) and
// whether a failure or error of it is worth retrying.
func (r *runner) attempt(ctx context.Context, j *job) (a *result.Attempt, retry bool) {
	ar := r.newAttemptRun(ctx, j)
	defer ar.end()
	retry = ar.run()
	return ar.a, retry
}

// run plays the conversation: greeting, then each turn, stopping at the
// first turn that fails or errors because later turns depend on it.
func (ar *attemptRun) run() (retry bool) {
	sc := ar.j.sc
	if sc.Probe != nil {
		return ar.runProbe()
	}
	if ok, retry := ar.open(); !ok {
		return retry
	}
	if sc.Greeting != nil && !ar.check(sc.Greeting, ar.greeting) {
		return true
	}
	for _, t := range sc.Turns {
		if ok, retry := ar.say(t.Pos, t.Say); !ok {
			return retry
		}
		if t.Expect != nil && !ar.check(t.Expect, ar.last) {
			return true
		}
		for _, cp := range t.Capture {
			if !ar.capture(ar.index, cp, ar.last.Result) {
				return true
			}
		}
	}
	if ok, retry := ar.confirmSession(); !ok {
		return retry
	}
	ar.a.Status = result.Passed
	return false
}

// open creates the session; ok is false when the attempt ended there.
func (ar *attemptRun) open() (ok, retry bool) {
	greeting, retry := ar.start()
	if greeting == nil {
		return false, retry
	}
	ar.greeting, ar.last = greeting, greeting
	return true, false
}

// say sends the next user turn (text may hold ${...}; empty is silence).
// ok is false when the attempt ended: the conversation was already over,
// the text could not be expanded, or the call failed.
func (ar *attemptRun) say(pos diag.Pos, text string) (ok, retry bool) {
	index := ar.index + 1
	if ar.last.Result.ConversationEnded {
		ar.fail(assert.Failure{
			Pos:      pos,
			Key:      "ended",
			Message:  "the agent ended the conversation before this turn",
			Expected: "conversation still open",
			Actual:   fmt.Sprintf("ended after turn %d", index-1),
		})
		return false, true
	}
	say, err := ar.interpolate(text)
	if err != nil {
		ar.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf("turn %d: say: %v", index, err)})
		return false, false
	}
	req := platform.ChatTurn{ClientEnv: ar.clientEnv, ASRLang: ar.asr, TTSLang: ar.tts, Message: say}
	agent, conv := ar.j.c.Agent, ar.a.ConversationID
	exch, err := ar.call(pos, index, say, func(ctx context.Context) (*platform.Exchange, error) {
		return ar.r.opts.Chat.SendTurn(ctx, agent, conv, req)
	})
	if err != nil {
		return false, ar.callFailed(pos, fmt.Sprintf("turn %d", index), err, false)
	}
	ar.index, ar.last = index, exch
	return true, false
}

// start creates the session and returns the greeting exchange, or nil when
// the attempt ended there.
func (ar *attemptRun) start() (greeting *platform.Exchange, retry bool) {
	sc := ar.j.sc
	req, err := ar.startRequest()
	if err != nil {
		at := sc.Start.Pos
		if at.IsZero() {
			at = sc.Pos
		}
		ar.errored(&result.Error{Pos: at, Kind: result.KindConfig, Message: "start: " + err.Error()})
		return nil, false
	}
	// The greeting belongs to the scenario as a whole; a failed session
	// creation is reported there too.
	pos := sc.Pos
	ar.asr, ar.tts = req.ASRLang, req.TTSLang
	if req.VariantID != "" {
		ar.j.c.Variant = req.VariantID
	}
	agent := ar.j.c.Agent
	exch, err := ar.call(pos, 0, "", func(ctx context.Context) (*platform.Exchange, error) {
		return ar.r.opts.Chat.StartChat(ctx, agent, req)
	})
	if err != nil {
		return nil, ar.callFailed(pos, "start session", err, true)
	}
	ar.a.ConversationID = exch.Result.ConversationID
	return exch, true
}

// startRequest builds the create call from the scenario's start parameters,
// interpolated.
func (ar *attemptRun) startRequest() (platform.ChatStart, error) {
	st := ar.j.sc.Start
	req := platform.ChatStart{ClientEnv: ar.clientEnv, Channel: st.Channel}
	var err error
	fields := []struct {
		name string
		src  string
		dst  *string
	}{
		{"asr_lang", st.ASRLang, &req.ASRLang},
		{"tts_lang", st.TTSLang, &req.TTSLang},
		{"conversation_id", st.ConversationID, &req.ConversationID},
		{"variant", st.Variant, &req.VariantID},
		{"channel", st.Channel, &req.Channel},
	}
	for _, f := range fields {
		if *f.dst, err = ar.interpolate(f.src); err != nil {
			return req, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if len(st.IntegrationAttributes) > 0 {
		req.IntegrationAttributes = make(map[string]any, len(st.IntegrationAttributes))
		for k, v := range st.IntegrationAttributes {
			if req.IntegrationAttributes[k], err = ar.interpolate(v); err != nil {
				return req, fmt.Errorf("integration_attributes.%s: %w", k, err)
			}
		}
	}
	return req, nil
}

// call makes one platform call bounded by the turn timeout and records it
// in the transcript, whether it succeeded or not: a failed call is part of
// what the user needs to see.
func (ar *attemptRun) call(pos diag.Pos, index int, say string, do func(context.Context) (*platform.Exchange, error)) (*platform.Exchange, error) {
	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.TurnTimeout)
	defer cancel()
	t := &result.Turn{Index: index, Pos: pos, Say: say, Started: ar.r.opts.Now()}
	ar.a.Turns = append(ar.a.Turns, t)
	exch, err := do(ctx)
	if exch != nil {
		t.Request, t.Response = exch.Request, exch.Response
		t.Result, t.Latency = exch.Result, exch.Latency
		shareRawMetadata(exch)
		if !exch.Started.IsZero() {
			t.Started = exch.Started
		}
	} else {
		t.Latency = ar.r.opts.Now().Sub(t.Started)
	}
	if err == nil && (exch == nil || exch.Result == nil) {
		err = errNoResult
	}
	if err != nil {
		// Name the context that expired: the client's error only says
		// "deadline exceeded", which does not tell the user which limit.
		switch {
		case ar.runCtx.Err() != nil:
			err = &cutError{err: err}
		case ar.ctx.Err() != nil:
			err = &timeoutError{what: fmt.Sprintf("scenario timeout of %s", ar.j.sc.Timeout), err: err}
		case ctx.Err() != nil:
			err = &timeoutError{what: fmt.Sprintf("turn timeout of %s", ar.r.opts.TurnTimeout), err: err}
		}
	}
	return exch, err
}

// shareRawMetadata points the raw metadata of a reply into the response
// body it was cut from instead of keeping a second copy: the JSON report
// needs both, and a large run keeps every one of them until the end.
func shareRawMetadata(exch *platform.Exchange) {
	res := exch.Result
	if res == nil || len(res.RawMetadata) == 0 {
		return
	}
	if i := bytes.Index(exch.Response, res.RawMetadata); i >= 0 {
		res.RawMetadata = exch.Response[i : i+len(res.RawMetadata) : i+len(res.RawMetadata)]
	}
}

// callFailed ends the attempt on a failed call and reports whether a retry
// could help.
func (ar *attemptRun) callFailed(pos diag.Pos, what string, err error, starting bool) (retry bool) {
	e, retry := classify(err, starting)
	if e == nil {
		// Interrupted: the attempt stays Pending with its partial
		// transcript.
		ar.a.Error = &result.Error{Pos: pos, Kind: result.KindInterrupted, Message: what + ": run interrupted"}
		return false
	}
	e.Pos = pos
	e.Message = what + ": " + e.Message
	ar.errored(e)
	return retry
}

// check runs the expectations on a reply, records any failures and reports
// whether they all held.
func (ar *attemptRun) check(exp *assert.Expect, exch *platform.Exchange) bool {
	obs := assert.Observation{Result: exch.Result, Latency: exch.Latency}
	fails := assert.Check(exp, obs, ar.expand)
	if len(fails) == 0 {
		return true
	}
	ar.fail(fails...)
	return false
}

// capture stores one captured value, failing the attempt when the reply
// does not hold it: the later turns that use it could only fail obscurely.
func (ar *attemptRun) capture(index int, cp scenario.Capture, res *reply.TurnResult) bool {
	v, err := assert.Capture(res, cp.From, cp.Pattern, ar.expand)
	if err != nil {
		ar.fail(assert.Failure{
			Pos:     cp.Pos,
			Key:     "capture." + cp.Name,
			Message: fmt.Sprintf("turn %d: cannot capture %s: %v", index, cp.Name, err),
		})
		return false
	}
	if ar.captures == nil {
		ar.captures = make(map[string]string, 4)
	}
	ar.captures[cp.Name] = v
	return true
}

// fail records broken expectations; the attempt is Failed.
func (ar *attemptRun) fail(fs ...assert.Failure) {
	ar.a.Failures = append(ar.a.Failures, fs...)
	ar.a.Status = result.Failed
}

// errored records an infrastructure problem; the attempt is Errored.
func (ar *attemptRun) errored(e *result.Error) {
	ar.a.Error = e
	ar.a.Status = result.Errored
}

// interpolate expands ${name} (captures, then vars) and ${env:NAME}.
func (ar *attemptRun) interpolate(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if ar.varsErr != nil {
		return "", ar.varsErr
	}
	return interp.Interpolate(s, ar.lookup, ar.r.opts.Getenv)
}

func (ar *attemptRun) lookup(name string) (string, bool) {
	if v, ok := ar.captures[name]; ok {
		return v, true
	}
	v, ok := ar.vars[name]
	return v, ok
}
