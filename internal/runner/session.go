package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/interp"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/steps"
	"github.com/agenttest/agenttest/internal/webhook"
)

// Session is one attempt at a scenario: one fresh conversation with the
// agent, the variables captured in it, and the Attempt it records. It is
// the one interpreter of the step program: Exec runs one step, whatever
// the format it was written in. The case loop (case.go) runs a scenario's
// steps through a Session per attempt; the godog integration
// (godogsteps) runs each godog step through one. A Session lives on one
// goroutine at a time.
type Session struct {
	opts *Options
	sc   *scenario.Scenario
	c    *result.Case
	a    *result.Attempt
	// runCtx is the run's context (cancelled on interruption); ctx is the
	// attempt's, bounded by the scenario timeout.
	runCtx, ctx context.Context
	// cancel releases ctx's timer, when there is one.
	cancel context.CancelFunc
	// turns bounds each call by the turn timeout, set up at the first
	// (its opts are nil until then). It is part of the Session rather
	// than made apart: one allocation fewer per attempt.
	turns turnTimer
	// params are the session parameters the conversation opens with: the
	// scenario's, changed by Setup steps until it opens.
	params scenario.Start
	// captures are the values captured so far in this session, a later
	// capture of a name replacing its value; they shadow the scenario's
	// vars. A list rather than a map: a session captures a few values,
	// and a map's first group of entries took 300 bytes.
	captures []captured
	// vars are the scenario's vars with the references in their values
	// (${env:NAME}, other vars) expanded; varsErr is why they could not be.
	vars    map[string]string
	varsErr error
	expand  assert.Expander
	// asr and tts are repeated on every turn, as the reference requires
	// clientEnv on each call (the case's Env).
	asr, tts string
	// conv is the open conversation; greeting is the reply to its
	// creation and last the latest reply; index is the number of the last
	// turn sent.
	conv           Conversation
	greeting, last *platform.Exchange
	index          int
	// probed is set once the scenario started from a probe: its later
	// steps act on the probe's conversation, not on a debug chat.
	probed bool
	// placed is the outbound call of a probe, once placed.
	placed *placedCall
	// line gives up the line of the number the probe calls or texts
	// (probeLines), while the probe holds it; nil otherwise. onLine is
	// that line's key.
	line   func()
	onLine string
	// sent is the probe that called or texted on that line, while its
	// conversation is not known.
	sent *lostProbe
	// smsSent is when the SMS probe whose conversation the platform
	// named was sent, smsRec its line (its Subject the number): a
	// record of it begun well before then is an earlier session's
	// (continuedSession).
	smsSent time.Time
	smsRec  *result.Confirmation
	// recordRead is the conversation whose record a confirmation of this
	// attempt already read (waiting for its end when recordEnded): a
	// feature's later handoff or webhook step need not wait for it again.
	recordRead  string
	recordEnded bool
	// retry reports whether a fresh attempt could help after the step
	// that ended this one.
	retry bool
	// stepText is the text of the step running (a feature step as
	// written; empty for YAML), for the failures it records.
	stepText string
	// turnBlock holds the Turns the attempt's program will record that
	// are not made yet: they are made in one block at the first call,
	// since the attempt keeps all of them together, where one allocation
	// each was five a conversation. A call the program does not count (a
	// step handed to Exec from outside it) makes its own.
	turnBlock []result.Turn
	// reached are the hosts that answered a call of the attempt; stop is
	// the platform stop the failure of a call called for (stop.go). The
	// scheduler reads both when the attempt ends. reached starts in
	// firstHost (newSession): an attempt's calls nearly always go to one
	// host, and a list grown from nothing was an allocation per attempt.
	reached   []string
	firstHost [1]string
	stop      *result.Stop
	// since marks the webhook events that arrived before the attempt
	// began: none of them is of its conversation (confirmWebhooks); nor
	// is an event of another environment than the case's.
	since webhook.Mark
}

// NewSession starts an attempt of sc recorded on c: a fresh Attempt (its
// number follows the case's earlier attempts), no conversation yet; the
// first step that needs one opens it. ctx bounds the attempt (with the
// scenario's timeout on top). c names the agent, clientEnv and variant;
// End must be called when the attempt is over. A ctx without a
// platform.RateAccount (a session outside a run, such as godogsteps')
// gets one for the attempt, so that it waits on rate limits as a run's
// case does, within the client's RateWait, its timeouts leaving the
// waits out: without one, a 429 whose Retry-After outlasted the turn
// timeout errored the step as a turn timeout.
func NewSession(ctx context.Context, sc *scenario.Scenario, c *result.Case, opts Options) (*Session, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	ctx = ensureAccount(ctx)
	return newSession(ctx, &o, sc, c), nil
}

// newSession is NewSession with options that already have their
// defaults.
func newSession(ctx context.Context, opts *Options, sc *scenario.Scenario, c *result.Case) *Session {
	s := &Session{opts: opts, sc: sc, c: c, a: newAttempt(c, opts.Now()), runCtx: ctx, ctx: ctx, params: sc.Start}
	s.reached = s.firstHost[:0]
	if t := sc.Timeout; t > 0 {
		s.ctx, s.cancel = withTimeout(ctx, t, opts)
	}
	s.vars, s.varsErr = resolveVars(sc.Vars, opts.Getenv)
	s.expand = s.interpolate
	if w, ok := opts.Webhooks.(MarkingWebhooks); ok {
		s.since = w.Mark().In(c.Env)
	}
	return s
}

// newAttempt appends a fresh attempt, numbered across the whole case (a
// repeated scenario numbers the attempts of all its runs in one sequence).
func newAttempt(c *result.Case, now time.Time) *result.Attempt {
	a := &result.Attempt{Number: len(c.Attempts) + 1, Status: result.Pending, Started: now}
	c.Attempts = append(c.Attempts, a)
	return a
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

// Attempt is the attempt this session records.
func (s *Session) Attempt() *result.Attempt { return s.a }

// Pass marks the attempt Passed: every step of the program held.
func (s *Session) Pass() { s.a.Status = result.Passed }

// Finish ends the program once its last step held: an outbound call whose
// final status no step awaited (a feature's call step with no status or
// confirmation step after it) is awaited now and must succeed, as a YAML
// probe: without expect_status says. It reports whether the attempt still
// holds; when not, it ended at the call step, as Exec's would.
func (s *Session) Finish() bool {
	pc := s.placed
	if pc == nil || pc.status != nil {
		return true
	}
	s.stepText = pc.step
	defer func() { s.stepText = "" }()
	ok, retry := s.awaitCall(pc, pc.rec.Pos, reply.CallSuccess, pc.rec.Pos)
	s.retry = retry
	return ok
}

// End closes the attempt: its duration is final, its conversation and its
// timer released. It may be called more than once.
func (s *Session) End() {
	s.a.Duration = s.opts.Now().Sub(s.a.Started)
	maskConfirmations(s.opts.Redactor, s.a)
	s.releaseLine()
	if s.conv != nil {
		_ = s.conv.Close()
		s.conv = nil
	}
	if s.turns.opts != nil {
		s.turns.stop()
	}
	if s.cancel != nil {
		s.cancel()
	}
}

// Exec runs one step in the session, opening the conversation first when
// the step needs one and none is open (a feature's first When). It
// reports whether the step held; when not, the attempt has ended there:
// it is Failed (an expectation broke), Errored (the platform or the
// harness broke) or still Pending (the run was interrupted), and the
// session keeps whether a fresh attempt could help (not for problems every
// attempt would meet, such as bad credentials, nor for interruptions) for
// the scheduler's retries. Failures a step records carry
// its text (a feature step as written).
func (s *Session) Exec(st *steps.Step) bool {
	ok, retry := s.exec(st)
	s.retry = retry
	return ok
}

func (s *Session) exec(st *steps.Step) (ok, retry bool) {
	if st.Kind == steps.Setup {
		return s.setup(st)
	}
	if st.NeedsChat() && s.greeting == nil && !s.probed {
		if ok, retry := s.open(st); !ok {
			return false, retry
		}
	}
	s.stepText = st.Text
	// The steps are a function of their own, so that this defer, with
	// few returns, runs inline rather than from a defer record.
	defer func() { s.stepText = "" }()
	return s.step(st)
}

// step runs st, the stepText set (exec).
func (s *Session) step(st *steps.Step) (ok, retry bool) {
	switch st.Kind {
	case steps.Open:
		return true, false
	case steps.Say:
		text := st.Say
		if st.Silent {
			text = ""
		}
		return s.say(st, text)
	case steps.Check:
		// s.expand, not s.interpolate: a method value made here would be
		// allocated at every check.
		exp, err := st.Expect(s.expand)
		if err != nil {
			s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig, Message: prefixed(st.Text, err.Error())})
			return false, false
		}
		on, index := s.last, s.index
		if st.Greeting {
			on, index = s.greeting, 0
		}
		if !s.viaAllows(st, exp, on) {
			return false, false
		}
		if !s.check(exp, on, index) {
			return false, true
		}
		return true, false
	case steps.Capture:
		if s.last != nil && s.last.Messaging != nil && st.Capture.From != "response" {
			s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig,
				Message: prefixed(st.Text, fmt.Sprintf("capture %s: %s needs debug-chat metadata, which a conversation over messaging does not have", st.Capture.Name, st.Capture.From))})
			return false, false
		}
		cp := *st.Capture
		if cp.Expand {
			from, err := s.interpolate(cp.From)
			if err != nil {
				s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig, Message: prefixed(st.Text, err.Error())})
				return false, false
			}
			cp.From = from
		}
		if !s.capture(st.Pos, cp) {
			return false, true
		}
		return true, false
	case steps.Probe:
		return s.probe(st)
	case steps.CallStatus:
		pc := s.placed
		if pc == nil {
			s.errored(&result.Error{Pos: st.Pos, Kind: result.KindInternal, Message: prefixed(st.Text, "no call was placed")})
			return false, false
		}
		return s.awaitCall(pc, st.Pos, st.Status.Want, st.Status.Pos)
	case steps.Confirm:
		return s.confirmStep(st)
	}
	s.errored(&result.Error{Pos: st.Pos, Kind: result.KindInternal, Message: fmt.Sprintf("step kind %s cannot run", st.Kind)})
	return false, false
}

// interrupted is the error of a call the run's cut reached: the attempt
// stays Pending with its partial transcript.
func interrupted(pos diag.Pos, what string) *result.Error {
	return &result.Error{Pos: pos, Kind: result.KindInterrupted, Message: prefixed(what, "run interrupted")}
}

// prefixed puts a feature step's text before a message about it; a YAML
// step has none.
func prefixed(step, msg string) string {
	if step == "" {
		return msg
	}
	return step + ": " + msg
}

// setup applies a Setup step to the parameters the conversation will open
// with. A loaded feature's setup steps were already applied to its
// scenario, so applying them again changes nothing; steps handed over one
// at a time (godog) set them here.
func (s *Session) setup(st *steps.Step) (ok, retry bool) {
	if s.greeting != nil || s.probed {
		s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig,
			Message: prefixed(st.Text, "a setup step must come before the conversation starts")})
		return false, false
	}
	var p steps.Params
	// References stay as written: the start parameters are expanded when
	// the conversation opens.
	if err := st.Setup(&p, func(v string) (string, error) { return v, nil }); err != nil {
		s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig, Message: prefixed(st.Text, err.Error())})
		return false, false
	}
	if p.Agent != "" {
		s.c.Agent = p.Agent
	}
	if p.Env != "" {
		s.c.Env = p.Env
	}
	for _, f := range []struct{ from, to *string }{
		{&p.Channel, &s.params.Channel}, {&p.Variant, &s.params.Variant},
		{&p.ASRLang, &s.params.ASRLang}, {&p.TTSLang, &s.params.TTSLang},
	} {
		if *f.from != "" {
			*f.to = *f.from
		}
	}
	if len(p.Attributes) > 0 {
		attrs := maps.Clone(s.params.IntegrationAttributes)
		if attrs == nil {
			attrs = make(map[string]string, len(p.Attributes))
		}
		maps.Copy(attrs, p.Attributes)
		s.params.IntegrationAttributes = attrs
	}
	return true, false
}

// open opens the conversation at step st, the first that needs it; ok is
// false when the attempt ended there.
func (s *Session) open(st *steps.Step) (ok, retry bool) {
	greeting, retry := s.start(st)
	if greeting == nil {
		return false, retry
	}
	s.greeting, s.last = greeting, greeting
	if m := greeting.Messaging; m != nil {
		if s.joinedElsewhere(m) {
			return false, false
		}
		if e := systemError(m, true, s.claimsSystem(st, true)); e != nil {
			// The greeting is in the transcript at the scenario.
			return false, s.callFailed(s.sc.Pos, "", e, true)
		}
	}
	return true, false
}

// endedBefore fails turn index at pos, sent (or about to be) to a
// conversation the agent had ended: the scenario goes on past the
// agent's goodbye, over debug chat as over Messaging.
func (s *Session) endedBefore(pos diag.Pos, index int, msg string) (ok, retry bool) {
	s.fail(assert.Failure{
		Pos:      pos,
		Key:      "ended",
		Message:  msg,
		Expected: "conversation still open",
		Actual:   fmt.Sprintf("ended after turn %d", index-1),
	})
	return false, true
}

// say sends the next user turn of step st (text may hold ${...}; empty is
// silence). ok is false when the attempt ended: the conversation was
// already over, the text could not be expanded, the call failed, or the
// platform answered with an error system message no check of the turn
// reads.
func (s *Session) say(st *steps.Step, text string) (ok, retry bool) {
	pos := st.Pos
	index := s.index + 1
	if s.last.Result.ConversationEnded {
		// Never sent, so not in the transcript: reports label the
		// failure with the turn before it, and the message names this one.
		this := fmt.Sprintf("turn %d", index)
		msg := "the agent ended the conversation before " + this
		if m := s.last.Messaging; m != nil {
			msg = (&endedError{reason: m.EndReason}).before(this)
		}
		return s.endedBefore(pos, index, msg)
	}
	say, err := s.sendable(text)
	if err != nil {
		// At the say's own text when it is not on the step's line (a
		// DocString, a YAML block).
		s.errored(&result.Error{Pos: cmp.Or(st.SayPos, pos), Kind: result.KindConfig, Message: fmt.Sprintf("turn %d: say: %v", index, err)})
		return false, false
	}
	req := platform.ChatTurn{ClientEnv: s.c.Env, ASRLang: s.asr, TTSLang: s.tts, Message: say}
	if st.Metadata != nil {
		// Checked like the say: a key in a value is refused unsent.
		if req.Metadata, err = s.expandObject(st.Metadata); err != nil {
			s.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf("turn %d: metadata: %v", index, err)})
			return false, false
		}
	}
	exch, err := s.call(pos, index, say, func(ctx context.Context) (*platform.Exchange, error) {
		exch, err := s.conv.Send(ctx, req)
		return s.untilEnd(ctx, st, false, req.Message, exch, err)
	})
	if err != nil {
		if ended, ok := errors.AsType[*endedError](err); ok {
			return s.endedBefore(pos, index, ended.Error())
		}
		// The turn is in the transcript at pos: reports name it.
		return false, s.callFailed(pos, "", err, false)
	}
	s.index, s.last = index, exch
	if exch.Messaging != nil && s.a.ConversationID == "" && exch.Result != nil {
		// A Messaging platform may name the conversation first in a
		// later event than the joined one (platform.MessagingSession
		// keeps the first it names): the records are that one's.
		s.a.ConversationID = strings.Clone(exch.Result.ConversationID)
	}
	if m := exch.Messaging; m != nil {
		if e := systemError(m, false, s.claimsSystem(st, false)); e != nil {
			// The turn is in the transcript at pos: reports name it.
			return false, s.callFailed(pos, "", e, false)
		}
	}
	return true, false
}

// start opens the conversation through the channel at step st and
// returns the greeting exchange, or nil when the attempt ended there.
func (s *Session) start(st *steps.Step) (greeting *platform.Exchange, retry bool) {
	req, err := s.startRequest()
	if err != nil {
		at := s.params.Pos
		if at.IsZero() {
			at = s.sc.Pos
		}
		s.errored(&result.Error{Pos: at, Kind: result.KindConfig, Message: "start: " + err.Error()})
		return nil, false
	}
	// The greeting belongs to the scenario as a whole; a failed session
	// creation is reported there too.
	pos := s.sc.Pos
	if s.c.Agent == "" {
		// The case loop refuses such a case before its session; a
		// session made by the godog steps meets it here.
		s.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: "start: " + s.opts.Settings.noAgent()})
		return nil, false
	}
	s.asr, s.tts = req.ASRLang, req.TTSLang
	if req.VariantID != "" {
		s.c.Variant = req.VariantID
	}
	ch, via := s.opts.Channel, ""
	if s.params.Via == steps.ViaMessaging {
		ch, via = s.opts.Messaging, steps.ViaMessaging
	}
	s.c.Via = via
	if ch == nil && via == steps.ViaMessaging {
		at := s.params.ViaPos
		if at.IsZero() {
			at = s.sc.Pos
		}
		s.errored(&result.Error{Pos: at, Kind: result.KindConfig, Message: "start: " + s.opts.Settings.noMessaging()})
		return nil, false
	}
	if via == steps.ViaMessaging {
		var ok bool
		if ch, ok = s.streaming(ch); !ok {
			return nil, false
		}
	}
	agent := s.c.Agent
	exch, err := s.call(pos, 0, "", func(ctx context.Context) (*platform.Exchange, error) {
		conv, exch, err := ch.Open(ctx, agent, req)
		s.conv = conv
		return s.untilEnd(ctx, st, true, "", exch, err)
	})
	if err != nil {
		// The greeting is in the transcript at pos: reports name it.
		return nil, s.callFailed(pos, "", err, true)
	}
	// A copy: the decoded reply shares the memory of its body, which a
	// passing case drops (Options.VerdictsOnly) and which is kept in
	// chunks shared with other replies.
	s.a.ConversationID = strings.Clone(exch.Result.ConversationID)
	return exch, true
}

// streaming returns the Messaging channel ch with the scenario's
// streaming setting (its own default when the scenario sets none), and
// records on the case whether its replies are asked for streamed. ok is
// false when the scenario asks for a setting ch cannot give.
func (s *Session) streaming(ch Channel) (_ Channel, ok bool) {
	sc, can := ch.(streamingChannel)
	if !can {
		if s.params.Streaming {
			s.errored(&result.Error{Pos: s.params.StreamingPos, Kind: result.KindConfig, Message: "start: " + msgNoStreaming})
			return nil, false
		}
		s.c.Streaming = false
		return ch, true
	}
	if !s.params.StreamingPos.IsZero() {
		sc = sc.withStreaming(s.params.Streaming)
	}
	s.c.Streaming = sc.streams()
	return sc, true
}

// startRequest builds the create call from the session parameters,
// interpolated.
func (s *Session) startRequest() (platform.ChatStart, error) {
	st := s.params
	req := platform.ChatStart{ClientEnv: s.c.Env, ASRLang: st.ASRLang, TTSLang: st.TTSLang,
		ConversationID: st.ConversationID, VariantID: st.Variant, Channel: st.Channel}
	var err error
	// The names apart from the pointers: escape analysis follows a
	// struct as a whole, and a name given to fmt.Errorf beside a pointer
	// into req moved req to the heap at every start.
	names := [...]string{"asr_lang", "tts_lang", "conversation_id", "variant", "channel"}
	for i, text := range [...]*string{&req.ASRLang, &req.TTSLang, &req.ConversationID, &req.VariantID, &req.Channel} {
		if *text, err = s.sendable(*text); err != nil {
			return req, fmt.Errorf("%s: %w", names[i], err)
		}
	}
	if s.params.Via == steps.ViaMessaging {
		// The Messaging API takes no conversation id: the scenario's is
		// not sent (lint says so). Only the name ConversationIDs gives
		// on the embedded simulator is, so that the conversation draws
		// alike whatever the order its session joins in.
		req.ConversationID = ""
	}
	if req.ConversationID == "" && s.opts.ConversationIDs != nil {
		req.ConversationID = s.opts.ConversationIDs(s.c, s.a)
	}
	if len(st.IntegrationAttributes) > 0 {
		req.IntegrationAttributes = make(map[string]any, len(st.IntegrationAttributes))
		for k, v := range st.IntegrationAttributes {
			if s.opts.Redactor.Contains(k) {
				return req, fmt.Errorf("integration_attributes: %w", errSecretName)
			}
			if req.IntegrationAttributes[k], err = s.sendable(v); err != nil {
				return req, fmt.Errorf("integration_attributes.%s: %w", k, err)
			}
		}
	}
	return req, nil
}

// call makes one platform call bounded by the turn timeout and records it
// in the transcript, whether it succeeded or not: a failed call is part of
// what the user needs to see.
func (s *Session) call(pos diag.Pos, index int, say string, do func(context.Context) (*platform.Exchange, error)) (*platform.Exchange, error) {
	if s.turns.opts == nil {
		s.turns.init(s.ctx, s.opts)
	}
	ctx := s.turns.arm(s.opts.TurnTimeout)
	defer s.turns.disarm()
	if s.a.Turns == nil {
		n := s.calls()
		s.a.Turns, s.turnBlock = make([]*result.Turn, 0, n), make([]result.Turn, n)
	}
	var t *result.Turn
	if len(s.turnBlock) > 0 {
		t, s.turnBlock = &s.turnBlock[0], s.turnBlock[1:]
	} else {
		t = new(result.Turn)
	}
	// Say is copied for the reason Case.Name is (plan).
	*t = result.Turn{Index: index, Pos: pos, Say: strings.Clone(s.opts.Redactor.String(say)), Started: s.opts.Now()}
	s.a.Turns = append(s.a.Turns, t)
	exch, err := do(ctx)
	if exch != nil && exch.Host != "" && (err == nil || exch.Status != 0) {
		s.reach(exch.Host)
	}
	if exch != nil {
		t.Request, t.Response = exch.Request, exch.Response
		t.Result, t.Latency = exch.Result, exch.Latency
		t.Messaging = exch.Messaging
		if !exch.Started.IsZero() {
			t.Started = exch.Started
		}
	} else {
		t.Latency = s.opts.Now().Sub(t.Started)
	}
	if err == nil && (exch == nil || exch.Result == nil) {
		err = errNoResult
	}
	if err != nil {
		// Name the context that expired: the client's error only says
		// "deadline exceeded", which does not tell the user which limit.
		switch {
		case s.runCtx.Err() != nil:
			err = &cutError{err: err}
		case s.ctx.Err() != nil:
			err = &timeoutError{what: fmt.Sprintf("scenario timeout of %s", s.sc.Timeout), err: err}
		case ctx.Err() != nil:
			err = &timeoutError{what: fmt.Sprintf("turn timeout of %s", s.opts.TurnTimeout), err: err}
		}
	}
	return exch, err
}

// calls is the number of calls the attempt's program makes (its opening
// and its say steps), the room its list of turns is made with: growing it
// from nothing took four allocations for a greeting and four turns.
func (s *Session) calls() int {
	n := 1
	for _, st := range s.sc.Steps {
		if st.Kind == steps.Say {
			n++
		}
	}
	return n
}

// callFailed ends the attempt on a failed call and reports whether a retry
// could help. what names the call in the message ("probe: place call to
// ..."); it is empty for the calls of the transcript (the greeting and the
// turns), which reports name from the turn at pos, so that no message
// says "turn 2" twice.
func (s *Session) callFailed(pos diag.Pos, what string, err error, starting bool) (retry bool) {
	e, retry := classify(err, starting)
	if e == nil {
		// Interrupted: the attempt stays Pending with its partial
		// transcript.
		s.errored(interrupted(pos, what))
		return false
	}
	s.reach(answeredBy(err))
	e.Pos = pos
	e.Message = prefixed(what, e.Message)
	s.errored(e)
	if s.stop == nil {
		s.stop = platformStop(err, starting, s.c.Agent, s.c.Env, e.Message)
	}
	return retry
}

// reach records that host answered a call of the attempt.
func (s *Session) reach(host string) {
	if host != "" && !slices.Contains(s.reached, host) {
		s.reached = append(s.reached, host)
	}
}

// check runs the expectations on a reply, the reply of turn index,
// records any failures and the scores of its similar checks, and
// reports whether they all held.
func (s *Session) check(exp *assert.Expect, exch *platform.Exchange, index int) bool {
	obs := assert.Observation{Result: exch.Result, Latency: exch.Latency, Messaging: exch.Messaging}
	fails, scores := assert.CheckScores(exp, obs, s.expand)
	if len(scores) > 0 {
		recordScores(s.opts.Redactor, s.turn(index), scores)
	}
	if len(fails) == 0 {
		return true
	}
	s.fail(fails...)
	return false
}

// turn is the turn of the transcript numbered index, the last one so
// numbered (after retried calls); nil when the attempt recorded none,
// which a reply the session holds never is.
func (s *Session) turn(index int) *result.Turn {
	for _, t := range slices.Backward(s.a.Turns) {
		if t != nil && t.Index == index {
			return t
		}
	}
	return nil
}

// capture stores one captured value of the last reply, failing the
// attempt when the reply does not hold it: the later turns that use it
// could only fail obscurely.
func (s *Session) capture(pos diag.Pos, cp steps.CaptureSpec) bool {
	v, err := assert.Capture(s.last.Result, cp.From, cp.Pattern, s.expand)
	if _, ok := errors.AsType[*assert.ExpandError](err); ok {
		s.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: prefixed(s.stepText, fmt.Sprintf("capture %s: %v", cp.Name, err))})
		return false
	}
	if err != nil {
		// The reports name the turn (or the feature step) before the
		// message, as for every failure.
		f := assert.Failure{Pos: pos, Key: "capture." + cp.Name, Message: fmt.Sprintf("cannot capture %s: %v", cp.Name, err)}
		if miss, ok := errors.AsType[*assert.CaptureMiss](err); ok {
			f.Message = fmt.Sprintf("cannot capture %s from %s: %s", cp.Name, miss.From, miss.Reason)
			f.Expected, f.Actual = miss.Expected, miss.Actual
		}
		s.fail(f)
		return false
	}
	for i := range s.captures {
		if s.captures[i].name == cp.Name {
			s.captures[i].value = v
			return true
		}
	}
	s.captures = append(s.captures, captured{cp.Name, v})
	return true
}

// captured is one value a session captured, by its name.
type captured struct{ name, value string }

// fail records broken expectations; the attempt is Failed. Each carries
// the text of the step that made it (a feature step as written). An
// expectation that could not be evaluated (a reference in it that does
// not expand) is no verdict on the agent: the attempt errors on the
// first such one as a configuration error, as a say's would.
func (s *Session) fail(fs ...assert.Failure) {
	for _, f := range fs {
		if f.Unexpanded {
			s.errored(&result.Error{Pos: f.Pos, Kind: result.KindConfig, Message: prefixed(s.stepText, f.Key+": "+f.Message)})
			return
		}
	}
	// A check that failed only for want of what the platform did not
	// report judged nothing of the agent: the platform's error, unless
	// another check failed on what it did report.
	if i := slices.IndexFunc(fs, func(f assert.Failure) bool { return !f.Unreported }); i < 0 && len(fs) > 0 {
		f := fs[0]
		s.errored(&result.Error{Pos: f.Pos, Kind: result.KindHTTP, Message: prefixed(s.stepText, f.Key+": "+f.Message)})
		return
	}
	for i := range fs {
		fs[i].Step = s.stepText
	}
	recordFailures(s.opts.Redactor, s.a, fs...)
}

// errored records an infrastructure problem (or an interruption); the
// attempt is Errored (or stays Pending).
func (s *Session) errored(e *result.Error) { recordError(s.opts.Redactor, s.a, e) }

// Expand expands the ${...} references of text as the session's steps
// do: the values captured so far, the scenario's vars (an Examples row)
// and ${env:NAME}. For the steps of others that run beside the program
// (a Go team's godog steps). A text that holds a secret the session
// masks, written out or expanded (${env:AGENTTEST_BUILD_KEY}), is refused
// as a text the session sends is (sendable): what such a step does with
// it is unknown, and a feature file would otherwise hand the key to code
// that sends it to another host or prints it.
func (s *Session) Expand(text string) (string, error) { return s.sendable(text) }

// interpolate expands ${name} (captures, then vars) and ${env:NAME}.
func (s *Session) interpolate(text string) (string, error) {
	if !strings.Contains(text, "${") {
		return text, nil
	}
	if s.varsErr != nil {
		return "", s.varsErr
	}
	return interp.Interpolate(text, s.lookup, s.opts.Getenv)
}

// sendable is interpolate for a text the session sends (a say, a session
// parameter or attribute, a probe's number, message or metadata, an id a
// record is read by): it refuses one that holds a secret the redactor
// masks, in any form, written out or expanded. A key goes only in the
// headers of its own host; as the user's words it would reach the
// platform's records, or another host (a build key said over messaging
// goes to the Messaging host). Only that the text holds one is said,
// never which or where. Expected values are compared, never sent, and
// may hold one (interpolate).
func (s *Session) sendable(text string) (string, error) {
	out, err := s.interpolate(text)
	if err == nil && s.opts.Redactor.Contains(out) {
		return "", errSecretText
	}
	return out, err
}

// errSecretName is errSecretText of a member's name, sent as written: the
// name is not said, as the member it is would quote it.
var errSecretName = fmt.Errorf("a member's name %w", errSecretText)

var errSecretText = errors.New("holds a key or secret of the target, which a suite never sends: a key goes only in the headers of a call to its own host; remove it (or the reference that expands to it)")

func (s *Session) lookup(name string) (string, bool) {
	for _, c := range s.captures {
		if c.name == name {
			return c.value, true
		}
	}
	v, ok := s.vars[name]
	return v, ok
}
