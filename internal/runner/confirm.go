package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/steps"
	"github.com/agenttest/agenttest/internal/webhook"
)

// Records is what confirmations and probes need from the platform: the
// Conversations v3 reads, the handoff state, outbound calls and SMS.
// *platform.Client satisfies it; an interface lets tests count or fail
// calls.
type Records interface {
	GetConversation(ctx context.Context, projectID, conversationID string) (*reply.Conversation, error)
	ListConversations(ctx context.Context, projectID string, q platform.ListQuery) (*platform.ConversationPage, error)
	HandoffState(ctx context.Context, projectID, conversationID, sharedID string) (*reply.HandoffState, error)
	// ConversationAudioSize reads a recording's length and content
	// type: a confirmation keeps nothing of its bytes.
	ConversationAudioSize(ctx context.Context, projectID, conversationID string) (int64, string, error)
	PlaceCall(ctx context.Context, req platform.CallRequest) (*platform.Call, error)
	CallStatus(ctx context.Context, sid string) (*platform.CallStatus, error)
	SendSMS(ctx context.Context, req platform.SMSRequest) (*platform.SMSResult, error)
}

// Webhooks is the receiver confirmations wait on (*webhook.Receiver).
type Webhooks interface {
	// Wait blocks until a verified event of the type arrived for the
	// conversation, or ctx ends (then a *webhook.MissingError says why).
	Wait(ctx context.Context, conversationID, eventType string) (webhook.Event, error)
}

// MarkingWebhooks is a receiver that tells the events that arrived
// before an attempt began from those that came after (*webhook.Receiver):
// an attempt's confirmations count only the later ones, so that an event
// of an earlier conversation with the same id (a scenario that sets
// conversation_id, retried or repeated) never confirms this one.
type MarkingWebhooks interface {
	Webhooks
	Mark() webhook.Mark
	WaitAfter(ctx context.Context, conversationID, eventType string, after webhook.Mark) (webhook.Event, error)
}

var (
	_ Records         = (*platform.Client)(nil)
	_ MarkingWebhooks = (*webhook.Receiver)(nil)
)

// Defaults of the confirmation options.
const (
	// DefaultConfirmTimeout bounds each wait of a confirmation: for the
	// record to exist and end, for a webhook event. The platform writes
	// the record and sends events within seconds of the end of a
	// conversation; 30 s leaves room for a slow pipeline without letting
	// a missing record hold a nightly run for minutes.
	DefaultConfirmTimeout = 30 * time.Second
	// DefaultConfirmPoll is the first pause between two reads of a record
	// or a call status; it doubles up to maxConfirmPoll.
	DefaultConfirmPoll = 100 * time.Millisecond
	// maxConfirmPoll caps the pause between reads.
	maxConfirmPoll = 2 * time.Second
	// maxListPages bounds the pages of the conversations list read to find
	// a probe's conversation in its time window.
	maxListPages = 10
)

// confirm runs a confirm: block against the conversation convID (the
// session's, or the one a probe opened) and reports whether it held.
// waitEnded makes the read wait, within the bound, for in_progress to turn
// false. Check failures are Failures (retry may help: the record may lag);
// platform problems are Errors.
func (s *Session) confirm(c *assert.Confirm, convID string, waitEnded bool) (ok, retry bool) {
	if c == nil {
		return true, false
	}
	if s.opts.Records == nil {
		s.errored(&result.Error{Pos: c.Pos, Kind: result.KindConfig, Message: "confirm: " + s.opts.Settings.noRuntime()})
		return false, false
	}
	if len(c.Webhooks) > 0 && s.opts.Webhooks == nil {
		msg := "confirm: webhooks needs a webhook receiver, and none runs"
		if s.opts.NoWebhooks != "" {
			msg += ": " + s.opts.NoWebhooks
		}
		s.errored(&result.Error{Pos: c.Webhooks[0].Pos, Kind: result.KindConfig, Message: msg})
		return false, false
	}
	if convID == "" {
		if !s.probed && s.greeting != nil && s.greeting.Messaging != nil {
			// The reference shows no payload of a Messaging event: a
			// platform may name the conversation in none of them. That
			// is the platform's, not agenttest's, and a fresh session
			// would name none either.
			s.errored(&result.Error{Pos: c.Pos, Kind: result.KindMessaging, Message: "confirm: no event of the Messaging session named its conversation " +
				"(a conversation id in the joined event or any later one), so the platform's record of it cannot be read; confirm the record in a scenario over debug chat"})
			return false, false
		}
		s.errored(&result.Error{Pos: c.Pos, Kind: result.KindInternal, Message: "confirm: no conversation id to confirm"})
		return false, false
	}
	var fails []assert.Failure

	// The record is read first even when only handoff_state or webhooks
	// are checked: once it exists (and ended) the rest has settled too.
	// A feature confirms in several steps; a step without record checks
	// after one that read the record need not wait for it again.
	var conv *reply.Conversation
	var convRec *result.Confirmation // the record's line, when read here
	if c.Conversation != nil || s.recordRead != convID || (waitEnded && !s.recordEnded) {
		var stop, retry bool
		conv, convRec, stop, retry = s.readConversation(c.Pos, convID, waitEnded)
		if stop {
			return false, retry
		}
		if conv != nil {
			s.recordRead, s.recordEnded = convID, waitEnded || !conv.InProgress
		}
		// The conversation an SMS probe's platform named began before
		// the SMS (and its clock skew): the SMS went to a session still
		// open, whose earlier messages the checks would judge.
		if conv != nil && s.smsRec != nil && conv.StartedAt.Before(s.smsSent.Add(-probeWindow)) {
			convRec.Summary += " (began before the SMS)"
			s.smsRec.Held = false
			s.errored(continuedSession(c.Pos, "SMS to "+s.smsRec.Subject, fmt.Sprintf("the platform put it in conversation %s, which began at %s, before the SMS was sent at %s",
				convID, conv.StartedAt.UTC().Format(time.RFC3339), s.smsSent.UTC().Format(time.RFC3339))))
			return false, false
		}
	}
	if cc := c.Conversation; conv != nil && cc != nil && cc.Turns != nil && len(conv.Turns) == 0 && conv.NumTurns > 0 {
		// The record hides its transcript (the project's transcript
		// access is off): a turns check on it would judge an empty
		// list, passing an excludes or a count at most N unconfirmed
		// and failing the agent on the others.
		s.errored(&result.Error{Pos: cc.Turns.Pos, Kind: result.KindConfig, Message: fmt.Sprintf(
			"confirm: conversation %s has no turns while its num_turns is %d: transcript access is off for the project, and no turns check can be confirmed (turn it on for the runtime key's project, or check num_turns instead)",
			convID, conv.NumTurns)})
		return false, false
	}
	// A record that lists turns but counts none cannot judge a num_turns
	// check: the platform's error, unless a check it can judge failed.
	var uncounted *result.Error
	if f := assert.UncountedTurns(c.Conversation, conv); f != nil {
		uncounted = &result.Error{Pos: cmp.Or(f.Pos, c.Conversation.Pos), Kind: result.KindHTTP, Message: fmt.Sprintf(
			"confirm: read conversation %s: the record lists turns (%d) but its num_turns is 0 or left out: the platform's record contradicts itself, and the num_turns check cannot be confirmed on it",
			convID, len(conv.Turns))}
	}
	cf := assert.CheckConversation(c.Conversation, conv, s.expand)
	if ended := s.knownEnded(); len(cf) > 0 && conv.InProgress && ended != "" {
		// The agent ended the chat, or the probe's call completed (so
		// the read waited for the record to end, chatEnded,
		// probeEnded), and the platform's record of it never settled:
		// what failed was judged on fields that may still change (the
		// reference), not on the agent's outcome.
		keys := make([]string, len(cf))
		for i, f := range cf {
			keys[i] = f.Key
		}
		s.errored(&result.Error{Pos: c.Conversation.Pos, Kind: result.KindTimeout, Message: fmt.Sprintf(
			"confirm: read conversation %s: the record was still in progress %s after %s, and its fields may still change: %s cannot be confirmed on it",
			convID, s.opts.ConfirmTimeout, ended, strings.Join(keys, ", "))})
		return false, true
	}
	fails = append(fails, cf...)
	if conv != nil {
		// The record's line holds when its fields passed.
		convRec.Held = len(fails) == 0 && uncounted == nil
	}

	if h := c.HandoffState; h != nil {
		hf, stop, retry := s.confirmHandoff(h, convID)
		if stop {
			return s.confirmStopped(fails, retry)
		}
		fails = append(fails, hf...)
	}
	if r := c.Recording; r != nil {
		channel := ""
		if conv != nil {
			channel = conv.Channel
		}
		rf, stop, retry := s.confirmRecording(r, convID, channel)
		if stop {
			return s.confirmStopped(fails, retry)
		}
		fails = append(fails, rf...)
	}
	if len(c.Webhooks) > 0 {
		wf, stop, retry := s.confirmWebhooks(c.Webhooks, convID)
		if stop {
			return s.confirmStopped(fails, retry)
		}
		fails = append(fails, wf...)
	}
	if len(fails) > 0 {
		s.fail(fails...)
		return false, true
	}
	if uncounted != nil {
		s.errored(uncounted)
		return false, true
	}
	return true, false
}

// confirmStopped ends a confirm block whose later part (the handoff
// state, the webhooks) could not be read after its earlier parts had
// already failed: what was learnt of the agent stands, and the case fails
// on those checks, as a feature's confirm steps do (the first failing step
// ends the attempt before the next one reads anything), where the error
// replaced them and the case errored with no failure shown, the record's
// ✓ line the only trace of it. The part that could not be read keeps the
// error in its confirmation line. An interruption stays one: no verdict.
func (s *Session) confirmStopped(fails []assert.Failure, retry bool) (ok, again bool) {
	e := s.a.Error
	if len(fails) == 0 || e == nil || e.Kind == result.KindInterrupted {
		return false, retry
	}
	if n := len(s.a.Confirmations); n > 0 {
		if rec := s.a.Confirmations[n-1]; !rec.Found && rec.Summary == "" {
			rec.Summary = e.Message
		}
	}
	s.a.Error = nil
	s.fail(fails...)
	return false, true
}

// readConversation reads the record by id with bounded backoff until it
// exists and, when waitEnded, no longer is in progress. At the bound it
// returns what it last read, for the checks to say what is wrong; a
// record that never appeared is the platform's error. stop is true when
// the attempt ended on a platform problem or an interruption. rec is the
// read's line among the attempt's confirmations.
func (s *Session) readConversation(pos diag.Pos, convID string, waitEnded bool) (conv *reply.Conversation, rec *result.Confirmation, stop, retry bool) {
	rec = &result.Confirmation{Pos: pos, Kind: result.ConfirmConversation, Subject: convID}
	started := s.opts.Now()
	defer func() {
		rec.Duration = s.opts.Now().Sub(started)
		s.a.Confirmations = append(s.a.Confirmations, rec)
	}()
	agent := s.c.Agent
	var absent error // the last answer that the record is not there
	err := s.poll(func(ctx context.Context) (bool, error) {
		rec.Reads++
		got, err := s.opts.Records.GetConversation(ctx, agent, convID)
		if platform.IsNotFound(err) {
			absent = err
			return false, nil // not recorded yet
		}
		if err != nil {
			return false, err
		}
		conv = got
		return !waitEnded || !got.InProgress, nil
	})
	if err != nil {
		return nil, rec, true, s.platformFailed(pos, "confirm: read conversation "+convID, err)
	}
	if conv == nil {
		// The conversation took place (the platform answered its turns,
		// named it for the probe, or listed it) and the platform kept
		// no record of it: writing the record is the platform's part,
		// and no check on it can be judged. Its error, retried: the
		// agent did not fail.
		rec.Summary = fmt.Sprintf("not recorded within %s", s.opts.ConfirmTimeout)
		last := "no read answered"
		if absent != nil {
			last = "the last answered " + absent.Error()
		}
		msg := fmt.Sprintf(
			"confirm: read conversation %s: not recorded within the confirmation's wait of %s (%d reads; %s): the platform did not record a conversation that took place, its error, not the agent's",
			convID, s.opts.ConfirmTimeout, rec.Reads, last)
		if s.c.Via == steps.ViaMessaging {
			// A joined event that names no agent or environment
			// lets a connector of another through (joinedElsewhere):
			// its conversation is recorded there, not under this one.
			msg += fmt.Sprintf(", unless the connector token sent for agent %s in %s is another agent's or environment's, which records its conversations there", agent, s.c.Env)
		}
		s.errored(&result.Error{Pos: pos, Kind: result.KindTimeout, Message: msg})
		return nil, rec, true, true
	}
	rec.Found, rec.Summary = true, conversationSummary(conv)
	if s.probed {
		// A probe has no transcript of its own: what was said on its
		// call or by SMS is what the record holds.
		recordTurns(rec, conv)
	}
	if waitEnded && conv.InProgress {
		rec.Summary += fmt.Sprintf(" (still in progress after %s)", s.opts.ConfirmTimeout)
	}
	return conv, rec, false, false
}

// confirmHandoff reads the handoff state (by shared id when the check
// gives one) and checks it. A 404 at the bound of the confirmation's
// wait is "no record", a failure of the check.
func (s *Session) confirmHandoff(h *assert.HandoffStateCheck, convID string) (fails []assert.Failure, stop, retry bool) {
	shared, err := s.sendable(h.SharedID)
	if err == nil && h.SharedID != "" && strings.TrimSpace(shared) == "" {
		// Sent as no shared id, the state would be read by the
		// conversation's id: a record the check did not ask about.
		err = fmt.Errorf("%q is empty once expanded, and names no record", h.SharedID)
	}
	if err != nil {
		msg := "confirm: handoff_state: shared_id: " + err.Error()
		// The state's line says why it was not read: when a check of
		// the record failed before, that failure stands (confirmStopped)
		// and this error is shown nowhere else.
		s.a.Confirmations = append(s.a.Confirmations, &result.Confirmation{Pos: h.Pos, Kind: result.ConfirmHandoffState, Subject: h.SharedID, Summary: msg})
		s.errored(&result.Error{Pos: h.Pos, Kind: result.KindConfig, Message: msg})
		return nil, true, false
	}
	id := convID
	if shared != "" {
		id = "" // the platform prefers shared_id anyway; send only what was asked
	}
	rec := &result.Confirmation{Pos: h.Pos, Kind: result.ConfirmHandoffState, Subject: cmp.Or(shared, convID)}
	started := s.opts.Now()
	defer func() {
		rec.Duration = s.opts.Now().Sub(started)
		s.a.Confirmations = append(s.a.Confirmations, rec)
	}()
	// The agent writes the state at handoff, but the platform may store
	// it a moment after the conversation ends, as it does the record: a
	// 404 is read again within the confirmation's wait, and only at its
	// bound is it "no record", the agent's failure.
	var hs *reply.HandoffState
	err = s.poll(func(ctx context.Context) (bool, error) {
		rec.Reads++
		got, err := s.opts.Records.HandoffState(ctx, s.c.Agent, id, shared)
		if platform.IsNotFound(err) {
			return false, nil // not stored yet
		}
		hs = got
		return true, err // the state, or poll's error
	})
	if err != nil {
		return nil, true, s.platformFailed(h.Pos, "confirm: read handoff state of "+rec.Subject, err)
	}
	if hs == nil {
		rec.Summary = fmt.Sprintf("no handoff state stored within %s", s.opts.ConfirmTimeout)
	} else {
		rec.Found, rec.Summary = true, "data: "+reply.Render(hs.Data)
	}
	fails = assert.CheckHandoffState(h, hs, s.expand)
	if hs == nil {
		for i := range fails {
			fails[i].Message += fmt.Sprintf(" within the confirmation's wait of %s (%d reads; the last answer a 404)", s.opts.ConfirmTimeout, rec.Reads)
		}
	}
	rec.Held = len(fails) == 0
	return fails, false, false
}

// confirmRecording reads the conversation's recording (the audio
// endpoint) and checks that there is one, or none. The record was read
// first, so the conversation exists and a 404 is "no recording", as the
// reference answers a chat conversation. A recording may be stored a
// little after the call ends: one expected of a voice conversation (or
// of one whose channel the record does not say) is read with backoff
// within the confirmation's bound; none expected, or one of a chat, which
// never has one, is read once.
func (s *Session) confirmRecording(rc *assert.RecordingCheck, convID, channel string) (fails []assert.Failure, stop, retry bool) {
	rec := &result.Confirmation{Pos: rc.Pos, Kind: result.ConfirmRecording, Subject: convID}
	started := s.opts.Now()
	defer func() {
		rec.Duration = s.opts.Now().Sub(started)
		s.a.Confirmations = append(s.a.Confirmations, rec)
	}()
	var got assert.Recording
	read := func(ctx context.Context) (bool, error) {
		rec.Reads++
		size, ctype, err := s.opts.Records.ConversationAudioSize(ctx, s.c.Agent, convID)
		if platform.IsNotFound(err) {
			got = assert.Recording{}
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got = assert.Recording{Found: true, Size: size, ContentType: ctype}
		return size > 0, nil
	}
	var err error
	if rc.Want && (channel == "" || assert.IsVoiceChannel(channel)) {
		err = s.poll(read)
	} else {
		ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
		_, err = read(ctx)
		err = s.namedIf(ctx, err)
		cancel()
	}
	if err != nil {
		rec.Summary = "not read"
		return nil, true, s.platformFailed(rc.Pos, "confirm: read the recording of conversation "+convID, err)
	}
	rec.Found, rec.Summary = got.Found, got.String()
	if !got.Found {
		rec.Summary = "none (the audio endpoint answered 404)"
		if !rc.Want {
			// The platform had nothing, which is what the check asked
			// for: its line holds (✓), and says why.
			rec.Summary = "none, as expected (the audio endpoint answered 404)"
		}
	}
	fails = assert.CheckRecording(rc, convID, channel, got)
	rec.Held = len(fails) == 0
	return fails, false, false
}

// confirmWebhooks waits for every expected event of the conversation under
// one deadline: the events are sent together when the conversation ends,
// so they are waited for side by side, not one bound after another. An
// event missing at that deadline is a failure; a wait the scenario's
// timeout cut short is that timeout's error, as for every other call of
// the attempt: the event may have been on its way.
func (s *Session) confirmWebhooks(checks []assert.WebhookCheck, convID string) (fails []assert.Failure, stop, retry bool) {
	ctx, cancel := s.opts.timeout(s.ctx, s.opts.ConfirmTimeout)
	defer cancel()
	for _, w := range checks {
		started := s.opts.Now()
		var ev webhook.Event
		var err error
		if mw, ok := s.opts.Webhooks.(MarkingWebhooks); ok {
			ev, err = mw.WaitAfter(ctx, convID, w.Event, s.since)
		} else {
			ev, err = s.opts.Webhooks.Wait(ctx, convID, w.Event)
		}
		rec := &result.Confirmation{Pos: w.Pos, Kind: result.ConfirmWebhook, Subject: w.Event, Duration: s.opts.Now().Sub(started)}
		s.a.Confirmations = append(s.a.Confirmations, rec)
		if err == nil {
			rec.Found, rec.Held = true, true
			rec.Summary = "verified, conversation " + ev.ConversationID
			if ev.Environment != "" {
				rec.Summary += ", environment " + ev.Environment
			}
			continue
		}
		if s.runCtx.Err() != nil {
			s.errored(&result.Error{Pos: w.Pos, Kind: result.KindInterrupted, Message: "confirm: webhooks: run interrupted"})
			return nil, true, false
		}
		if s.ctx.Err() != nil {
			rec.Summary = "wait cut short by the scenario timeout"
			return nil, true, s.platformFailed(w.Pos, "confirm: wait for webhook "+w.Event, s.named(ctx, err))
		}
		missing := (*webhook.MissingError)(nil)
		if !errors.As(err, &missing) {
			// Not an event that failed to come: the receiver cannot
			// confirm anything (the platform would not register its
			// endpoint). The platform's error, and a retry meets it again.
			rec.Summary = err.Error()
			s.errored(&result.Error{Pos: w.Pos, Kind: result.KindHTTP, Message: "confirm: webhooks: " + err.Error()})
			return nil, true, false
		}
		// What wraps the receiver's word (godogsteps' reason after it)
		// is kept after it, as the receiver's word grows below.
		after, wrapped := strings.CutPrefix(err.Error(), missing.Error())
		said := func() string {
			if !wrapped {
				return err.Error()
			}
			return missing.Error() + after
		}
		missing.Waited = s.opts.ConfirmTimeout
		rec.Summary = said()
		if sentUnverified(missing, convID, w.Event) {
			// The platform sent the event, as far as its unverified body
			// says, but no copy could be verified (a signature that does
			// not match, a body that is no event): the platform's error,
			// or the webhook secret's, never the agent's failure.
			s.errored(&result.Error{Pos: w.Pos, Kind: result.KindHTTP, Message: "confirm: webhooks: " + said() +
				" (the platform sent the event, but no delivery could be verified: check the webhook secret, or the platform's signing)"})
			return nil, true, false
		}
		happened, state, unread := s.whoseEvent(w.Event, convID)
		if happened {
			// The record (or the end of the chat) shows what the event
			// is sent for: the agent did its part, and the delivery was
			// the platform's (or the webhook URL's, to reach the
			// receiver).
			missing.State = ", while " + state + ": the platform never delivered the event of what happened, its error (or the webhook URL's), not the agent's"
			missing.Happened = true
			rec.Summary = said()
			s.errored(&result.Error{Pos: w.Pos, Kind: result.KindTimeout, Message: "confirm: webhooks: " + rec.Summary})
			return nil, true, true
		}
		if unread != nil {
			// Whether what the event is sent for happened is the
			// record's to say, and the platform did not answer its
			// read: nothing is known of the agent.
			rec.Summary = said()
			return nil, true, s.platformFailed(w.Pos, "confirm: webhooks: "+rec.Summary+
				"; read conversation "+convID+" to tell whether what the event is sent for happened", unread)
		}
		if state != "" {
			missing.State = ": " + state
		}
		rec.Summary = said()
		fails = append(fails, assert.WebhookFailure(w, errors.New(rec.Summary)))
	}
	return fails, false, false
}

// whoseEvent tells, for an event that never arrived for conversation
// convID, whether what the platform sends it for happened, by the
// conversation's record read again now the wait is over (what it said
// before may have changed during the wait) and by the agent's end of the
// chat: the reference
// sends conversation.completed when a conversation ends, handoff.created
// when a handoff happens. state says what they show, "" when nothing
// does (another event). What happened and was never delivered is the
// platform's to deliver; what did not happen is the agent's, and the
// failure says what it did not do. unread is why the record could not be
// read, when nothing else tells: then neither is known.
func (s *Session) whoseEvent(event, convID string) (happened bool, state string, unread error) {
	if event != reply.EventConversationCompleted && event != reply.EventHandoffCreated {
		return false, "", nil
	}
	ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
	conv, err := s.opts.Records.GetConversation(ctx, s.c.Agent, convID)
	err = s.namedIf(ctx, err)
	cancel()
	if err != nil {
		conv = nil
	}
	switch event {
	case reply.EventConversationCompleted:
		switch ended := s.knownEnded(); {
		case conv != nil && !conv.InProgress:
			state = "the conversation ended (its record says in_progress=false)"
		case ended != "":
			state = ended
		case conv != nil:
			return false, "the conversation is still in progress (its record says in_progress=true): the agent did not end it, and the platform sends conversation.completed when a conversation ends", nil
		default:
			return false, "", err
		}
		if conv != nil && conv.Channel != "" && !slices.Contains(callChannels, conv.Channel) {
			// The reference: conversation.completed is sent when "a
			// call ends". A platform may send none for a chat.
			state += fmt.Sprintf(" (the reference names conversation.completed for a call that ends: a platform may send none for a %s conversation; confirm it after a call)", conv.Channel)
		}
		return true, state, nil
	default: // handoff.created
		switch {
		case conv != nil && conv.Handoff:
			state = "the agent handed off (its record says handoff=true"
			if conv.HandoffDestination != "" {
				state += ", handoff_destination=" + conv.HandoffDestination
			}
			return true, state + ")", nil
		case conv != nil:
			return false, "its record says handoff=false: the agent did not hand off, and the platform sends handoff.created when a handoff happens", nil
		}
		return false, "", err
	}
}

// sentUnverified reports whether a delivery rejected during the wait
// named the awaited event and conversation in its body: the platform sent
// it. A body that names neither (junk posted to a public receiver) says
// nothing of this conversation, and leaves the verdict to the agent.
func sentUnverified(m *webhook.MissingError, convID, event string) bool {
	for _, rej := range m.Rejected {
		if rej.Type == event && rej.ConversationID == convID {
			return true
		}
	}
	return false
}

// poll calls read with backoff until it reports done, returns an error, or
// the confirmation bound passes (then poll returns nil: the caller judges
// what it last read). Each read is bounded by the turn timeout.
func (s *Session) poll(read func(ctx context.Context) (done bool, err error)) error {
	return s.pollFor(s.opts.ConfirmTimeout, read)
}

// pollFor is poll with another bound (a probe's within:). The bound is
// kept on the runner's clock (Options.Now), which the pauses of
// Options.Sleep move, as well as by a context that cuts a read in flight
// on the clock of the runner's timers (Options.AfterFunc): on a fake
// clock without timers of its own a record that never comes is read for
// the bound's worth of pauses, not for as long as the bound really
// lasts, at no pause at all.
func (s *Session) pollFor(bound time.Duration, read func(ctx context.Context) (done bool, err error)) error {
	// The bound leaves out the reads' waits on rate limits, as the turn
	// timeout does (withTimeout): it is how long the platform may take
	// to show what is awaited, and a Retry-After longer than what was
	// left of it ended the read with its 429 and errored the case.
	wctx, cancel := withTimeout(s.ctx, bound, s.opts)
	defer cancel()
	acct := platform.RateAccountFrom(s.ctx)
	waited := func() time.Duration {
		if acct == nil {
			return 0
		}
		return acct.Waited(s.opts.Now())
	}
	granted := waited()
	// ends is when wctx's timer is due: a read's own turn timeout, due at
	// about the same time, may fire before it, so whether the bound
	// passed is told by the clock, not by which timer ran first. Both it
	// and deadline move out by the waits on rate limits since.
	ends := s.opts.timerNow().Add(bound)
	deadline := s.opts.Now().Add(bound)
	delay := s.opts.ConfirmPoll
	answered := false
	for {
		ctx, cancelRead := withTimeout(wctx, s.opts.TurnTimeout, s.opts)
		done, err := read(ctx)
		bounded := err != nil && s.ctx.Err() == nil && (wctx.Err() != nil || !s.opts.timerNow().Before(ends.Add(waited()-granted)))
		switch {
		case err == nil:
			answered = true
		case bounded && answered:
			// The bound passed while a read was in flight: what the
			// platform answered before (not there yet) stands.
			err = nil
		case bounded:
			// The bound passed and the platform answered no read: it
			// never said the record was missing, or the call not
			// over. Its error, not the agent's failure.
			err = &timeoutError{what: fmt.Sprintf("wait of %s for the platform's answer", bound), err: err}
		default:
			err = s.named(ctx, err)
		}
		cancelRead()
		if done || err != nil {
			return err
		}
		if s.opts.Sleep(wctx, delay) != nil {
			if s.ctx.Err() != nil {
				return s.named(wctx, s.ctx.Err())
			}
			return nil
		}
		if !s.opts.Now().Before(deadline.Add(waited() - granted)) {
			return nil
		}
		delay = min(delay*2, maxConfirmPoll)
	}
}

// named wraps an error of a read so classify knows which limit expired,
// as call does for chat turns.
func (s *Session) named(ctx context.Context, err error) error {
	switch {
	case s.runCtx.Err() != nil:
		return &cutError{err: err}
	case s.ctx.Err() != nil:
		return &timeoutError{what: fmt.Sprintf("scenario timeout of %s", s.sc.Timeout), err: err}
	case ctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded)):
		return &timeoutError{what: fmt.Sprintf("turn timeout of %s", s.opts.TurnTimeout), err: err}
	}
	return err
}

// platformFailed ends the attempt on a failed read or probe call.
func (s *Session) platformFailed(pos diag.Pos, what string, err error) (retry bool) {
	return s.callFailed(pos, what, err, false)
}

// maxRecordTurns bounds the turns of a probe's record kept on its line:
// a nightly run keeps hundreds of lines, and a call that went on for
// long says what it needs to in its first turns.
const maxRecordTurns = 50

// recordTurns keeps on rec, the line of a probe's record, the turns the
// record holds: what the user (the one called or texted) said and what
// the agent said, at the platform's times.
func recordTurns(rec *result.Confirmation, conv *reply.Conversation) {
	for i, t := range conv.Turns {
		if i == maxRecordTurns {
			rec.Saw(time.Time{}, result.SeenPlatform, fmt.Sprintf("… %d more turns in the record", len(conv.Turns)-i))
			return
		}
		switch {
		case t.UserInput != "":
			rec.Saw(t.UserInputAt, result.SeenUser, t.UserInput)
		case t.UserInputDTMF != "":
			rec.Saw(t.UserInputAt, result.SeenUser, "(DTMF "+t.UserInputDTMF+")")
		case t.IsSilence:
			rec.Saw(t.UserInputAt, result.SeenUser, "(silence)")
		}
		if t.AgentResponse != "" {
			rec.Saw(t.AgentResponseAt, result.SeenAgent, t.AgentResponse)
		}
	}
}

// conversationSummary is the one line a report shows of a record read.
func conversationSummary(c *reply.Conversation) string {
	parts := []string{
		"channel=" + c.Channel,
		"environment=" + c.Environment,
		fmt.Sprintf("in_progress=%t", c.InProgress),
		fmt.Sprintf("num_turns=%d", c.NumTurns),
		fmt.Sprintf("handoff=%t", c.Handoff),
	}
	if c.HandoffDestination != "" {
		parts = append(parts, "handoff_destination="+c.HandoffDestination)
	}
	if len(c.Metrics) > 0 {
		parts = append(parts, fmt.Sprintf("metrics=%d", len(c.Metrics)))
	}
	return strings.Join(parts, " ")
}

// confirmStep runs a Confirm step on the scenario's conversation: the
// debug chat's after its last turn so far, or the probe's. The record is
// awaited until it ends by the waiting rule of each (chatEnded,
// probeEnded).
func (s *Session) confirmStep(st *steps.Step) (ok, retry bool) {
	cf, err := st.Confirm(s.interpolate)
	if err != nil {
		s.errored(&result.Error{Pos: st.Pos, Kind: result.KindConfig, Message: prefixed(st.Text, err.Error())})
		return false, false
	}
	if !s.probed {
		return s.confirm(cf, s.a.ConversationID, s.chatEnded(cf))
	}
	if pc := s.placed; pc != nil {
		if pc.status == nil {
			// Confirmed before any status step: only a call that
			// connected has a conversation, so it must succeed, as a
			// YAML probe's default expect_status says.
			if ok, retry := s.awaitCall(pc, st.Pos, reply.CallSuccess, st.Pos); !ok {
				return false, retry
			}
		}
		if pc.convID == "" {
			// After a status step that expected the failure: no loader
			// writes it (a call that did not connect opened no
			// conversation), and the call did as asked, so it is no
			// failure of the agent.
			s.errored(&result.Error{Pos: st.Pos, Kind: result.KindInternal, Message: "confirm: the call ended in failure: there is no conversation to confirm"})
			return false, false
		}
	}
	return s.confirm(cf, s.a.ConversationID, probeEnded(cf) || s.knownEnded() != "")
}

// chatEnded is the waiting rule of a debug chat's confirmation: wait for
// the record to end when the agent ended the chat (so far) or the checks
// ask for in_progress: false.
func (s *Session) chatEnded(c *assert.Confirm) bool {
	ended := s.agentEndedChat()
	if v := c.Conversation.InProgress(); v != nil && !*v {
		ended = true
	}
	return ended
}

// knownEnded says how the conversation is known to have ended apart from
// its record: the agent ended the debug chat, or the probe's call reached
// success, a call that connected and completed (the reference: a final
// status); "" when neither is known. Its record may lag behind.
func (s *Session) knownEnded() string {
	switch {
	case s.agentEndedChat():
		return "the agent ended the chat"
	case s.placed != nil && s.placed.status != nil && s.placed.status.Status == reply.CallSuccess:
		return "the call ended (its status is success: completed)"
	}
	return ""
}

// agentEndedChat reports whether the agent ended the debug chat (so far):
// its last reply said the conversation ended.
func (s *Session) agentEndedChat() bool {
	return !s.probed && s.last != nil && s.last.Result != nil && s.last.Result.ConversationEnded
}

// probeEnded is the waiting rule of a probe's confirmation: a probe's
// conversation may stay open for long (an SMS waits for the reply), so
// wait for its end only when the checks ask for in_progress: false.
func probeEnded(c *assert.Confirm) bool {
	v := c.Conversation.InProgress()
	return v != nil && !*v
}
