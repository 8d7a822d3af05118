package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/assert"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
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
		ar.errored(&result.Error{Pos: pr.Pos, Kind: result.KindInternal, Message: "probe has neither outbound_call nor sms"})
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
		if ok, retry := ar.confirm(sc.Confirm, convID, probeEnded(sc.Confirm)); !ok {
			return retry
		}
	}
	ar.a.Status = result.Passed
	return false
}

// probeNumber expands a probe's number and applies the live-safety list.
func (ar *attemptRun) probeNumber(pos diag.Pos, what, raw string) (string, bool) {
	n, err := ar.interpolate(raw)
	if err != nil {
		ar.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf("probe: %s: %v", what, err)})
		return "", false
	}
	if allow := ar.r.opts.AllowNumber; allow != nil && !allow(n) {
		ar.errored(&result.Error{Pos: pos, Kind: result.KindConfig,
			Message: fmt.Sprintf("probe: %s %s is not listed in the target's probe_numbers: a probe calls or texts only the numbers the config allows", what, n)})
		return "", false
	}
	return n, true
}

// placedCall is an outbound call a probe placed, while its final status is
// awaited: a YAML probe awaits it at once, a feature at its `Then the call
// ends with status` step (or its first confirmation).
type placedCall struct {
	sid, to string
	started time.Time
	// rec is the call's entry in the attempt's confirmations, completed
	// as the status is read.
	rec *result.Confirmation
	// status is the final status once awaited (nil before); convID is
	// the conversation of a successful call.
	status *platform.CallStatus
	convID string
}

// probeCall places the outbound call, waits for its final status within
// the probe's bound and checks it, and finds the conversation the call
// created. convID is "" when the call (expectedly) failed.
func (ar *attemptRun) probeCall(pr *scenario.Probe) (convID string, ok, retry bool) {
	pc, ok, retry := ar.placeCall(pr)
	if !ok {
		return "", false, retry
	}
	if ok, retry := ar.awaitCall(pc, pr.Within, pr.Pos, pr.ExpectStatus, pr.ExpectStatusPos); !ok {
		return "", false, retry
	}
	return pc.convID, true, false
}

// placeCall places the probe's outbound call and keeps it on the attempt
// (ar.placed) for awaitCall.
func (ar *attemptRun) placeCall(pr *scenario.Probe) (pc *placedCall, ok, retry bool) {
	cp := pr.Call
	to, ok := ar.probeNumber(cp.Pos, "outbound_call: to", cp.To)
	if !ok {
		return nil, false, false
	}
	from := ""
	if cp.AgentNumber != "" {
		if from, ok = ar.probeNumber(cp.Pos, "outbound_call: agent_number", cp.AgentNumber); !ok {
			return nil, false, false
		}
	}
	meta, err := ar.expandObject(cp.Metadata)
	if err != nil {
		ar.errored(&result.Error{Pos: cp.Pos, Kind: result.KindConfig, Message: "probe: outbound_call: metadata: " + err.Error()})
		return nil, false, false
	}
	if ar.r.opts.Records == nil {
		ar.errored(&result.Error{Pos: cp.Pos, Kind: result.KindConfig, Message: "probe: no client for the runtime host (give the target a runtime_url and runtime_key)"})
		return nil, false, false
	}
	agent := ar.j.c.Agent
	pc = &placedCall{to: to, started: ar.r.opts.Now(), rec: &result.Confirmation{Pos: pr.Pos, Kind: result.ConfirmCall, Subject: to}}
	ar.a.Confirmations = append(ar.a.Confirmations, pc.rec)

	ctx, cancel := context.WithTimeout(ar.ctx, ar.r.opts.TurnTimeout)
	call, err := ar.r.opts.Records.PlaceCall(ctx, platform.CallRequest{To: to, AgentID: agent, AgentNumber: from, Env: ar.clientEnv, Metadata: meta})
	err = ar.namedIf(ctx, err)
	cancel()
	if err != nil {
		pc.rec.Summary = "not placed"
		pc.rec.Duration = ar.r.opts.Now().Sub(pc.started)
		return nil, false, ar.platformFailed(cp.Pos, "probe: place call to "+to, err)
	}
	pc.sid = call.SID
	pc.rec.Subject = call.SID
	pc.rec.Reads = 1
	pc.rec.Duration = ar.r.opts.Now().Sub(pc.started)
	ar.placed = pc
	return pc, true, false
}

// awaitCall polls the call's status with backoff until it is final or
// within passes, checks that it is expect, and for a successful call finds
// the conversation it created (then the attempt's conversation). A status
// that is not final in time fails at pos, another final status at
// expectPos.
func (ar *attemptRun) awaitCall(pc *placedCall, within time.Duration, pos diag.Pos, expect string, expectPos diag.Pos) (ok, retry bool) {
	rec := pc.rec
	defer func() { rec.Duration = ar.r.opts.Now().Sub(pc.started) }()
	if pc.status == nil {
		var st *platform.CallStatus
		err := ar.pollFor(within, func(ctx context.Context) (bool, error) {
			rec.Reads++
			got, err := ar.r.opts.Records.CallStatus(ctx, pc.sid)
			if err != nil {
				return false, err
			}
			st = got
			return got.Final(), nil
		})
		if err != nil {
			rec.Summary = "status unknown"
			return false, ar.platformFailed(pos, "probe: read status of call "+pc.sid, err)
		}
		last := reply.CallQueued
		if st != nil {
			last = st.Status
		}
		rec.Summary = fmt.Sprintf("status=%s to=%s", last, pc.to)
		if st != nil && st.FailureReason != "" {
			rec.Summary += " reason=" + st.FailureReason
		}
		if st == nil || !st.Final() {
			ar.fail(assert.Failure{Pos: pos, Key: "probe.status",
				Message:  fmt.Sprintf("call %s to %s did not reach a final status within %s (last status %s)", pc.sid, pc.to, within, last),
				Expected: expect, Actual: last})
			return false, true
		}
		rec.Found = true
		pc.status = st
	}
	st := pc.status
	if st.Status != expect {
		msg := fmt.Sprintf("call %s to %s ended with status %s, expected %s", pc.sid, pc.to, st.Status, expect)
		if st.FailureReason != "" {
			msg += " (" + st.FailureReason + ")"
		}
		ar.fail(assert.Failure{Pos: expectPos, Key: "probe.expect_status", Message: msg, Expected: expect, Actual: st.Status})
		return false, true
	}
	if st.Status != reply.CallSuccess || pc.convID != "" {
		return true, false
	}
	convID := st.ConversationID
	if convID == "" {
		// The reference shows no conversation id in the status: find the
		// conversation by the built-in state key call_sid, else by the
		// dialled number, among those started since the call was placed.
		var found bool
		convID, found, retry = ar.findConversation(pos, "call "+pc.sid, []string{"VOICE-SIP"}, pc.started, func(c *reply.Conversation) int {
			if sid, _ := c.State["call_sid"].(string); sid == pc.sid {
				return 2
			}
			if sameNumber(c.ToNumber, pc.to) || sameNumber(c.FromNumber, pc.to) {
				return 1
			}
			return 0
		})
		if !found {
			return false, retry
		}
	}
	pc.convID = convID
	ar.a.ConversationID = convID
	rec.Summary += " conversation=" + convID
	return true, false
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
		ar.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig, Message: "probe: sms: message: " + err.Error()})
		return "", false, false
	}
	if ar.r.opts.Records == nil {
		ar.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig, Message: "probe: no client for the runtime host (give the target a runtime_url and runtime_key)"})
		return "", false, false
	}
	agent := ar.j.c.Agent
	connector := ""
	if ar.r.opts.Connector != nil {
		connector = ar.r.opts.Connector(agent, ar.clientEnv)
	}
	if connector == "" {
		ar.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig,
			Message: fmt.Sprintf("probe: sms: no connector id (X-TOKEN-ID) for agent %s in %s: set sms_connector_id on the target", agent, ar.clientEnv)})
		return "", false, false
	}
	rec := &result.Confirmation{Pos: pr.Pos, Kind: result.ConfirmSMS, Subject: to}
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
		convID, ok, retry = ar.findConversation(pr.Pos, "SMS to "+to, nil, started, func(c *reply.Conversation) int {
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
func (ar *attemptRun) findConversation(pos diag.Pos, what string, channels []string, since time.Time, score func(*reply.Conversation) int) (id string, ok, retry bool) {
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
