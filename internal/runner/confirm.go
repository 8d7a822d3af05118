package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
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

var (
	_ Records  = (*platform.Client)(nil)
	_ Webhooks = (*webhook.Receiver)(nil)
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
func (ar *attemptRun) confirm(c *assert.Confirm, convID string, waitEnded bool) (ok, retry bool) {
	if c == nil {
		return true, false
	}
	if ar.r.opts.Records == nil {
		ar.errored(&result.Error{Pos: c.Pos, Kind: result.KindConfig, Message: "confirm: no client for the runtime host (give the target a runtime_url and runtime_key)"})
		return false, false
	}
	if len(c.Webhooks) > 0 && ar.r.opts.Webhooks == nil {
		ar.errored(&result.Error{Pos: c.Webhooks[0].Pos, Kind: result.KindConfig,
			Message: "confirm: webhooks needs a webhook receiver: run with --webhook-listen ADDR --webhook-url PUBLIC_URL (automatic with the embedded simulator)"})
		return false, false
	}
	if convID == "" {
		ar.errored(&result.Error{Pos: c.Pos, Kind: result.KindInternal, Message: "confirm: no conversation id to confirm"})
		return false, false
	}
	var fails []assert.Failure

	// The record is read first even when only handoff_state or webhooks
	// are checked: once it exists (and ended) the rest has settled too.
	// A feature confirms in several steps; a step without record checks
	// after one that read the record need not wait for it again.
	var conv *reply.Conversation
	if c.Conversation != nil || ar.recordRead != convID || (waitEnded && !ar.recordEnded) {
		var stop, retry bool
		conv, stop, retry = ar.readConversation(c.Pos, convID, waitEnded)
		if stop {
			return false, retry
		}
		if conv != nil {
			ar.recordRead, ar.recordEnded = convID, waitEnded || !conv.InProgress
		}
	}
	if conv == nil && c.Conversation != nil {
		fails = append(fails, assert.Failure{
			Pos: c.Conversation.Pos, Key: "confirm.conversation",
			Message:  fmt.Sprintf("conversation %s was not recorded within %s", convID, ar.r.opts.ConfirmTimeout),
			Expected: "a conversation record", Actual: "none",
		})
	} else {
		fails = append(fails, assert.CheckConversation(c.Conversation, conv, ar.expand)...)
	}

	if h := c.HandoffState; h != nil {
		hf, stop, retry := ar.confirmHandoff(h, convID)
		if stop {
			return false, retry
		}
		fails = append(fails, hf...)
	}
	if len(c.Webhooks) > 0 {
		wf, stop := ar.confirmWebhooks(c.Webhooks, convID)
		if stop {
			return false, false
		}
		fails = append(fails, wf...)
	}
	if len(fails) > 0 {
		ar.fail(fails...)
		return false, true
	}
	return true, false
}

// readConversation reads the record by id with bounded backoff until it
// exists and, when waitEnded, no longer is in progress. At the bound it
// returns what it last read (nil when the record never appeared): the
// checks then say what is wrong. stop is true when the attempt ended on a
// platform problem or an interruption.
func (ar *attemptRun) readConversation(pos diag.Pos, convID string, waitEnded bool) (conv *reply.Conversation, stop, retry bool) {
	rec := &result.Confirmation{Pos: pos, Kind: result.ConfirmConversation, Subject: convID}
	started := ar.r.opts.Now()
	defer func() {
		rec.Duration = ar.r.opts.Now().Sub(started)
		ar.a.Confirmations = append(ar.a.Confirmations, rec)
	}()
	agent := ar.j.c.Agent
	err := ar.poll(func(ctx context.Context) (bool, error) {
		rec.Reads++
		got, err := ar.r.opts.Records.GetConversation(ctx, agent, convID)
		if platform.IsNotFound(err) {
			return false, nil // not recorded yet
		}
		if err != nil {
			return false, err
		}
		conv = got
		return !waitEnded || !got.InProgress, nil
	})
	if err != nil {
		return nil, true, ar.platformFailed(pos, "confirm: read conversation "+convID, err)
	}
	if conv == nil {
		rec.Summary = fmt.Sprintf("not recorded within %s", ar.r.opts.ConfirmTimeout)
		return nil, false, false
	}
	rec.Found, rec.Summary = true, conversationSummary(conv)
	if waitEnded && conv.InProgress {
		rec.Summary += fmt.Sprintf(" (still in progress after %s)", ar.r.opts.ConfirmTimeout)
	}
	return conv, false, false
}

// confirmHandoff reads the handoff state (by shared id when the check
// gives one) and checks it. A 404 is "no record", a failure of the check.
func (ar *attemptRun) confirmHandoff(h *assert.HandoffStateCheck, convID string) (fails []assert.Failure, stop, retry bool) {
	shared, err := ar.interpolate(h.SharedID)
	if err != nil {
		ar.errored(&result.Error{Pos: h.Pos, Kind: result.KindConfig, Message: "confirm: handoff_state: shared_id: " + err.Error()})
		return nil, true, false
	}
	id := convID
	if shared != "" {
		id = "" // the platform prefers shared_id anyway; send only what was asked
	}
	rec := &result.Confirmation{Pos: h.Pos, Kind: result.ConfirmHandoffState, Subject: firstNonEmpty(shared, convID)}
	started := ar.r.opts.Now()
	defer func() {
		rec.Duration = ar.r.opts.Now().Sub(started)
		ar.a.Confirmations = append(ar.a.Confirmations, rec)
	}()
	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.TurnTimeout)
	defer cancel()
	rec.Reads = 1
	hs, err := ar.r.opts.Records.HandoffState(ctx, ar.j.c.Agent, id, shared)
	switch {
	case platform.IsNotFound(err):
		hs = nil
		rec.Summary = "no handoff state stored"
	case err != nil:
		return nil, true, ar.platformFailed(h.Pos, "confirm: read handoff state of "+rec.Subject, ar.named(ctx, err))
	default:
		rec.Found, rec.Summary = true, "data: "+reply.Render(hs.Data)
	}
	return assert.CheckHandoffState(h, hs, ar.expand), false, false
}

// confirmWebhooks waits for every expected event of the conversation under
// one deadline: the events are sent together when the conversation ends,
// so they are waited for side by side, not one bound after another.
func (ar *attemptRun) confirmWebhooks(checks []assert.WebhookCheck, convID string) (fails []assert.Failure, stop bool) {
	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.ConfirmTimeout)
	defer cancel()
	for _, w := range checks {
		started := ar.r.opts.Now()
		ev, err := ar.r.opts.Webhooks.Wait(ctx, convID, w.Event)
		rec := &result.Confirmation{Pos: w.Pos, Kind: result.ConfirmWebhook, Subject: w.Event, Duration: ar.r.opts.Now().Sub(started)}
		ar.a.Confirmations = append(ar.a.Confirmations, rec)
		if err == nil {
			rec.Found = true
			rec.Summary = "verified, conversation " + ev.ConversationID
			if ev.Environment != "" {
				rec.Summary += ", environment " + ev.Environment
			}
			continue
		}
		if ar.runCtx.Err() != nil {
			ar.a.Error = &result.Error{Pos: w.Pos, Kind: result.KindInterrupted, Message: "confirm: webhooks: run interrupted"}
			return nil, true
		}
		rec.Summary = err.Error()
		fails = append(fails, assert.WebhookFailure(w, err))
	}
	return fails, false
}

// poll calls read with backoff until it reports done, returns an error, or
// the confirmation bound passes (then poll returns nil: the caller judges
// what it last read). Each read is bounded by the turn timeout.
func (ar *attemptRun) poll(read func(ctx context.Context) (done bool, err error)) error {
	return ar.pollFor(ar.r.opts.ConfirmTimeout, read)
}

// pollFor is poll with another bound (a probe's within:).
func (ar *attemptRun) pollFor(bound time.Duration, read func(ctx context.Context) (done bool, err error)) error {
	wctx, cancel := context.WithTimeout(ar.ctx, bound)
	defer cancel()
	delay := ar.r.opts.ConfirmPoll
	for {
		ctx, cancelRead := context.WithTimeout(wctx, ar.r.opts.TurnTimeout)
		done, err := read(ctx)
		if err != nil && wctx.Err() != nil && ar.ctx.Err() == nil {
			// The bound passed while the read was in flight.
			err = nil
		}
		if err != nil {
			err = ar.named(ctx, err)
		}
		cancelRead()
		if done || err != nil {
			return err
		}
		if !sleep(wctx, delay) {
			if ar.ctx.Err() != nil {
				return ar.named(wctx, ar.ctx.Err())
			}
			return nil
		}
		delay = min(delay*2, maxConfirmPoll)
	}
}

// named wraps an error of a read so classify knows which limit expired,
// as call does for chat turns.
func (ar *attemptRun) named(ctx context.Context, err error) error {
	switch {
	case ar.runCtx.Err() != nil:
		return &cutError{err: err}
	case ar.ctx.Err() != nil:
		return &timeoutError{what: fmt.Sprintf("scenario timeout of %s", ar.j.sc.Timeout), err: err}
	case ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded):
		return &timeoutError{what: fmt.Sprintf("turn timeout of %s", ar.r.opts.TurnTimeout), err: err}
	}
	return err
}

// platformFailed ends the attempt on a failed read or probe call.
func (ar *attemptRun) platformFailed(pos diag.Pos, what string, err error) (retry bool) {
	return ar.callFailed(pos, what, err, false)
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

// confirmSession runs the scenario's confirm: after the last turn of a
// debug chat. The record is awaited until it ends when the agent ended
// the chat or the checks ask for in_progress: false; a chat left open
// stays in progress until the platform idles it out, minutes later, so
// then the record is checked as soon as it exists.
func (ar *attemptRun) confirmSession() (ok, retry bool) {
	c := ar.j.sc.Confirm
	if c == nil {
		return true, false
	}
	return ar.confirm(c, ar.a.ConversationID, ar.chatEnded(c))
}

// chatEnded is the waiting rule of a debug chat's confirmation: wait for
// the record to end when the agent ended the chat (so far) or the checks
// ask for in_progress: false. The YAML confirm: block and the feature
// confirmation steps both use it.
func (ar *attemptRun) chatEnded(c *assert.Confirm) bool {
	ended := ar.last != nil && ar.last.Result != nil && ar.last.Result.ConversationEnded
	if v := c.Conversation.InProgress(); v != nil && !*v {
		ended = true
	}
	return ended
}

// probeEnded is the waiting rule of a probe's confirmation: a probe's
// conversation may stay open for long (an SMS waits for the reply), so
// wait for its end only when the checks ask for in_progress: false.
func probeEnded(c *assert.Confirm) bool {
	v := c.Conversation.InProgress()
	return v != nil && !*v
}
