package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/scenario"
)

// probeWindow is how far before the probe's start a conversation may have
// started and still be the probe's: the platform's clock and ours differ
// by a little.
const probeWindow = time.Minute

// runProbe plays a probe scenario: place the call or send the SMS, find
// the conversation it opened, then confirm. It mirrors run for debug
// chats.
func (ar *attemptRun) runProbe() (retry bool) {
	sc := ar.j.sc
	pr := sc.Probe
	var (
		convID string
		ok     bool
	)
	switch {
	case pr.Call != nil:
		convID, ok, retry = ar.probeCall(pr)
	case pr.SMS != nil:
		convID, ok, retry = ar.probeSMS(pr)
	default:
		ar.errored(&Error{Pos: pr.Pos, Kind: KindInternal, Message: "probe has neither outbound_call nor sms"})
		return false
	}
	if !ok {
		return retry
	}
	if sc.Confirm != nil {
		if convID == "" {
			ar.fail(assert.Failure{Pos: sc.Confirm.Pos, Key: "confirm",
				Message: "the call ended in failure: there is no conversation to confirm", Expected: "a conversation", Actual: "none"})
			return true
		}
		// A probe's conversation may stay open for long (an SMS waits for
		// the reply): wait for its end only when the checks ask for it.
		ended := sc.Confirm.Conversation.InProgress()
		if ok, retry := ar.confirm(sc.Confirm, convID, ended != nil && !*ended); !ok {
			return retry
		}
	}
	ar.a.Status = Passed
	return false
}

// probeNumber expands a probe's number and applies the live-safety list.
func (ar *attemptRun) probeNumber(pos diag.Pos, what, raw string) (string, bool) {
	n, err := ar.interpolate(raw)
	if err != nil {
		ar.errored(&Error{Pos: pos, Kind: KindConfig, Message: fmt.Sprintf("probe: %s: %v", what, err)})
		return "", false
	}
	if allow := ar.r.opts.AllowNumber; allow != nil && !allow(n) {
		ar.errored(&Error{Pos: pos, Kind: KindConfig,
			Message: fmt.Sprintf("probe: %s %s is not listed in the target's probe_numbers: a probe calls or texts only the numbers the config allows", what, n)})
		return "", false
	}
	return n, true
}

// probeCall places the outbound call, waits for its final status within
// the probe's bound and checks it, and finds the conversation the call
// created. convID is "" when the call (expectedly) failed.
func (ar *attemptRun) probeCall(pr *scenario.Probe) (convID string, ok, retry bool) {
	cp := pr.Call
	to, ok := ar.probeNumber(cp.Pos, "outbound_call: to", cp.To)
	if !ok {
		return "", false, false
	}
	from := ""
	if cp.AgentNumber != "" {
		if from, ok = ar.probeNumber(cp.Pos, "outbound_call: agent_number", cp.AgentNumber); !ok {
			return "", false, false
		}
	}
	meta, err := ar.expandObject(cp.Metadata)
	if err != nil {
		ar.errored(&Error{Pos: cp.Pos, Kind: KindConfig, Message: "probe: outbound_call: metadata: " + err.Error()})
		return "", false, false
	}
	agent := ar.j.c.Agent
	rec := &Confirmation{Pos: pr.Pos, Kind: ConfirmCall, Subject: to}
	started := ar.r.opts.Now()
	defer func() {
		rec.Duration = ar.r.opts.Now().Sub(started)
		ar.a.Confirmations = append(ar.a.Confirmations, rec)
	}()

	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.TurnTimeout)
	call, err := ar.r.opts.Records.PlaceCall(ctx, platform.CallRequest{To: to, AgentID: agent, AgentNumber: from, Env: ar.clientEnv, Metadata: meta})
	err = ar.namedIf(ctx, err)
	cancel()
	if err != nil {
		rec.Summary = "not placed"
		return "", false, ar.platformFailed(cp.Pos, "probe: place call to "+to, err)
	}
	rec.Subject = call.SID
	rec.Reads = 1

	var st *platform.CallStatus
	err = ar.pollFor(pr.Within, func(ctx context.Context) (bool, error) {
		rec.Reads++
		got, err := ar.r.opts.Records.CallStatus(ctx, call.SID)
		if err != nil {
			return false, err
		}
		st = got
		return got.Final(), nil
	})
	if err != nil {
		rec.Summary = "status unknown"
		return "", false, ar.platformFailed(pr.Pos, "probe: read status of call "+call.SID, err)
	}
	last := platform.CallQueued
	if st != nil {
		last = st.Status
	}
	rec.Summary = fmt.Sprintf("status=%s to=%s", last, to)
	if st != nil && st.FailureReason != "" {
		rec.Summary += " reason=" + st.FailureReason
	}
	if st == nil || !st.Final() {
		ar.fail(assert.Failure{Pos: pr.Pos, Key: "probe.status",
			Message:  fmt.Sprintf("call %s to %s did not reach a final status within %s (last status %s)", call.SID, to, pr.Within, last),
			Expected: pr.ExpectStatus, Actual: last})
		return "", false, true
	}
	rec.Found = true
	if st.Status != pr.ExpectStatus {
		msg := fmt.Sprintf("call %s to %s ended with status %s, expected %s", call.SID, to, st.Status, pr.ExpectStatus)
		if st.FailureReason != "" {
			msg += " (" + st.FailureReason + ")"
		}
		ar.fail(assert.Failure{Pos: pr.ExpectStatusPos, Key: "probe.expect_status", Message: msg, Expected: pr.ExpectStatus, Actual: st.Status})
		return "", false, true
	}
	if st.Status != platform.CallSuccess {
		return "", true, false
	}
	convID = st.ConversationID
	if convID == "" {
		// The reference shows no conversation id in the status: find the
		// conversation by the built-in state key call_sid, else by the
		// dialled number, among those started since the call was placed.
		convID, ok, retry = ar.findConversation(pr.Pos, "call "+call.SID, []string{"VOICE-SIP"}, started, func(c *platform.Conversation) int {
			if sid, _ := c.State["call_sid"].(string); sid == call.SID {
				return 2
			}
			if sameNumber(c.ToNumber, to) || sameNumber(c.FromNumber, to) {
				return 1
			}
			return 0
		})
		if !ok {
			return "", false, retry
		}
	}
	ar.a.ConversationID = convID
	rec.Summary += " conversation=" + convID
	return convID, true, false
}

// probeSMS sends the SMS and finds the conversation it opened.
func (ar *attemptRun) probeSMS(pr *scenario.Probe) (convID string, ok, retry bool) {
	sp := pr.SMS
	to, ok := ar.probeNumber(sp.Pos, "sms: to", sp.To)
	if !ok {
		return "", false, false
	}
	from := ""
	if sp.AgentNumber != "" {
		if from, ok = ar.probeNumber(sp.Pos, "sms: agent_number", sp.AgentNumber); !ok {
			return "", false, false
		}
	}
	msg, err := ar.interpolate(sp.Message)
	if err != nil {
		ar.errored(&Error{Pos: sp.Pos, Kind: KindConfig, Message: "probe: sms: message: " + err.Error()})
		return "", false, false
	}
	agent := ar.j.c.Agent
	connector := ""
	if ar.r.opts.Connector != nil {
		connector = ar.r.opts.Connector(agent, ar.clientEnv)
	}
	if connector == "" {
		ar.errored(&Error{Pos: sp.Pos, Kind: KindConfig,
			Message: fmt.Sprintf("probe: sms: no connector id (X-TOKEN-ID) for agent %s in %s: set sms_connector_id on the target", agent, ar.clientEnv)})
		return "", false, false
	}
	rec := &Confirmation{Pos: pr.Pos, Kind: ConfirmSMS, Subject: to}
	started := ar.r.opts.Now()
	defer func() {
		rec.Duration = ar.r.opts.Now().Sub(started)
		ar.a.Confirmations = append(ar.a.Confirmations, rec)
	}()
	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.TurnTimeout)
	res, err := ar.r.opts.Records.SendSMS(ctx, platform.SMSRequest{To: to, Message: msg, AgentNumber: from, ConnectorID: connector})
	err = ar.namedIf(ctx, err)
	cancel()
	rec.Reads = 1
	if err != nil {
		rec.Summary = "not sent"
		return "", false, ar.platformFailed(sp.Pos, "probe: send SMS to "+to, err)
	}
	rec.Found = true
	rec.Summary = "sent from " + firstNonEmpty(res.AgentNumber, "the environment's number")
	convID = res.ConversationID
	if convID == "" {
		convID, ok, retry = ar.findConversation(pr.Pos, "SMS to "+to, nil, started, func(c *platform.Conversation) int {
			if sameNumber(c.ToNumber, to) || sameNumber(c.FromNumber, to) {
				return 1
			}
			return 0
		})
		if !ok {
			return "", false, retry
		}
	}
	ar.a.ConversationID = convID
	rec.Summary += ", conversation " + convID
	return convID, true, false
}

// findConversation looks, with bounded backoff, through the conversations
// of the agent started since the probe (less probeWindow) for the best
// match (score > 0; the highest wins, the latest among equals). Not found
// within the bound is a failure of the probe.
func (ar *attemptRun) findConversation(pos diag.Pos, what string, channels []string, since time.Time, score func(*platform.Conversation) int) (id string, ok, retry bool) {
	agent := ar.j.c.Agent
	q := platform.ListQuery{ClientEnv: ar.clientEnv, Channels: channels, StartTime: since.Add(-probeWindow).UTC()}
	err := ar.poll(func(ctx context.Context) (bool, error) {
		best, bestAt := 0, time.Time{}
		q := q
		for page := 0; page < maxListPages; page++ {
			p, err := ar.r.opts.Records.ListConversations(ctx, agent, q)
			if err != nil {
				return false, err
			}
			for i := range p.Conversations {
				c := &p.Conversations[i]
				if s := score(c); s > best || (s == best && s > 0 && c.StartedAt.After(bestAt)) {
					best, bestAt, id = s, c.StartedAt, c.ID
				}
			}
			if p.Cursor == "" {
				break
			}
			q.Cursor = p.Cursor
		}
		return best > 0, nil
	})
	if err != nil {
		return "", false, ar.platformFailed(pos, "probe: find the conversation of "+what, err)
	}
	if id == "" {
		ar.fail(assert.Failure{Pos: pos, Key: "probe.conversation",
			Message:  fmt.Sprintf("no conversation of %s was recorded within %s", what, ar.r.opts.ConfirmTimeout),
			Expected: "a conversation", Actual: "none"})
		return "", false, true
	}
	return id, true, false
}

// namedIf is named for a possibly nil error.
func (ar *attemptRun) namedIf(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return ar.named(ctx, err)
}

// expandObject interpolates the strings of call metadata, at any depth.
func (ar *attemptRun) expandObject(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		x, err := ar.expandValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = x
	}
	return out, nil
}

func (ar *attemptRun) expandValue(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return ar.interpolate(x)
	case map[string]any:
		return ar.expandObject(x)
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			e, err := ar.expandValue(it)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return v, nil
}

// sameNumber compares phone numbers by their digits, as the platform
// normalises them.
func sameNumber(a, b string) bool {
	da, db := digits(a), digits(b)
	return da != "" && da == db
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
