package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/steps"
)

// probeWindow is how far before the probe's start a conversation may have
// started and still be the probe's: the platform's clock and ours differ
// by a little.
const probeWindow = time.Minute

// probe runs a Probe step: it places the call or sends the SMS and finds
// the conversation the SMS opened. A call's status is awaited by the
// CallStatus step after it (or by the first confirmation), so the probe
// step only places it.
func (s *Session) probe(st *steps.Step) (ok, retry bool) {
	pr := st.Probe
	s.probed = true
	switch {
	case pr == nil:
		s.errored(&result.Error{Pos: st.Pos, Kind: result.KindInternal, Message: prefixed(st.Text, "the step has no probe")})
		return false, false
	case pr.SMS != nil:
		_, ok, retry = s.probeSMS(st.Pos, pr.SMS)
		return ok, retry
	case pr.Call != nil:
		_, ok, retry = s.placeCall(st.Pos, pr)
		return ok, retry
	}
	s.errored(&result.Error{Pos: st.Pos, Kind: result.KindInternal, Message: "probe has neither outbound_call nor sms"})
	return false, false
}

// probeNumber expands a probe's number and applies the live-safety list.
func (s *Session) probeNumber(pos diag.Pos, what, raw string) (string, bool) {
	n, err := s.sendable(raw)
	if err != nil {
		s.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf("probe: %s: %v", what, err)})
		return "", false
	}
	if allow := s.opts.AllowNumber; allow != nil && !allow(n) {
		s.errored(&result.Error{Pos: pos, Kind: result.KindConfig,
			Message: s.opts.Settings.notListed(what, n)})
		return "", false
	}
	return n, true
}

// placedCall is an outbound call a probe placed, while its final status is
// awaited by the CallStatus step after the probe (or the first
// confirmation, in a feature that writes none).
type placedCall struct {
	sid, to string
	// project is the agent the platform's answer to the call names,
	// when it names one.
	project string
	// step is the text of the probe step that placed it (a feature
	// step as written), for the failures of a wait no step asked for.
	step    string
	started time.Time
	// within bounds the wait for its final status.
	within time.Duration
	// rec is the call's entry in the attempt's confirmations, completed
	// as the status is read.
	rec *result.Confirmation
	// status is the final status once awaited (nil before); convID is
	// the conversation of a successful call.
	status *platform.CallStatus
	convID string
	// known are the conversations of the call's window that were
	// already listed before it was placed: none of them is its own.
	known priorList
}

// placeCall places the probe's outbound call and keeps it on the attempt
// (s.placed) for awaitCall; pos is the probe step's.
func (s *Session) placeCall(pos diag.Pos, pr *steps.ProbeSpec) (pc *placedCall, ok, retry bool) {
	cp := pr.Call
	to, ok := s.probeNumber(cp.Pos, "outbound_call: to", cp.To)
	if !ok {
		return nil, false, false
	}
	from := ""
	if cp.AgentNumber != "" {
		if from, ok = s.probeNumber(cp.Pos, "outbound_call: agent_number", cp.AgentNumber); !ok {
			return nil, false, false
		}
	}
	meta, err := s.expandObject(cp.Metadata)
	if err != nil {
		s.errored(&result.Error{Pos: cp.Pos, Kind: result.KindConfig, Message: "probe: outbound_call: metadata: " + err.Error()})
		return nil, false, false
	}
	if s.opts.Records == nil {
		s.errored(&result.Error{Pos: cp.Pos, Kind: result.KindConfig, Message: "probe: " + s.opts.Settings.noRuntime()})
		return nil, false, false
	}
	agent := s.c.Agent
	rec := &result.Confirmation{Pos: pos, Kind: result.ConfirmCall, Subject: to}
	s.a.Confirmations = append(s.a.Confirmations, rec)
	// The line is given up once the call's conversation is known, or
	// the call ended without one (awaitCall), or the attempt ended.
	if ok, retry := s.takeLine(cp.Pos, to); !ok {
		rec.Summary = "not placed"
		return nil, false, retry
	}
	pc = &placedCall{to: to, step: s.stepText, started: s.opts.Now(), within: pr.Within, rec: rec}
	if pc.known = s.listedBefore(callChannels, pc.started); pc.known.err != nil && s.ctx.Err() != nil {
		pc.rec.Summary = "not placed"
		pc.rec.Duration = s.opts.Now().Sub(pc.started)
		return nil, false, s.platformFailed(cp.Pos, "probe: list the conversations before the call to "+to, pc.known.err)
	}

	ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
	rec.Saw(s.opts.Now(), result.SeenSent, "call to "+to+fromText(from)+" (POST /v1/outbound-calling)")
	call, err := s.opts.Records.PlaceCall(ctx, platform.CallRequest{To: to, AgentID: agent, AgentNumber: from, Env: s.c.Env, Metadata: meta})
	err = s.namedIf(ctx, err)
	cancel()
	if err != nil {
		pc.rec.Summary = "not placed"
		pc.rec.Duration = s.opts.Now().Sub(pc.started)
		return nil, false, s.platformFailed(cp.Pos, "probe: place call to "+to, err)
	}
	placed := "placed: call_sid " + call.SID
	if call.Status != "" {
		placed += ", status " + call.Status
	}
	rec.Saw(s.opts.Now(), result.SeenPlatform, placed)
	pc.sid = call.SID
	pc.project = call.AgentID
	// Lost on the line if it ends without its conversation
	// (releaseLine).
	s.sent = &lostProbe{key: s.onLine, sid: call.SID}
	pc.rec.Subject = call.SID
	pc.rec.Reads = 1
	pc.rec.Duration = s.opts.Now().Sub(pc.started)
	s.placed = pc
	return pc, true, false
}

// awaitCall polls the call's status with backoff until it is final or its
// bound passes, checks that it is expect, and for a successful call finds
// the conversation it created (then the attempt's conversation). A status
// that is not final in time fails at pos, another final status at
// expectPos.
func (s *Session) awaitCall(pc *placedCall, pos diag.Pos, expect string, expectPos diag.Pos) (ok, retry bool) {
	within := pc.within
	rec := pc.rec
	defer func() { rec.Duration = s.opts.Now().Sub(pc.started) }()
	// Whatever the outcome, the call's conversation is known, or there
	// is none, or the attempt ends: its number is free for other probes.
	defer s.releaseLine()
	if pc.status == nil {
		var st *platform.CallStatus
		// absent is the last answer that the status is not known (the
		// platform's own 404, not the client's word of the 2h it keeps
		// a status after a call ends).
		var absent *platform.APIError
		err := s.pollFor(within, func(ctx context.Context) (bool, error) {
			rec.Reads++
			got, err := s.opts.Records.CallStatus(ctx, pc.sid)
			if platform.IsNotFound(err) {
				// Not shown yet, as a record may lag (or forgotten,
				// which the platform does about 2h after the call
				// ends, far past within:): read again.
				errors.As(err, &absent)
				rec.Saw(s.opts.Now(), result.SeenPlatform, "no status (404)")
				return false, nil
			}
			if err != nil {
				return false, err
			}
			rec.Saw(s.opts.Now(), result.SeenPlatform, statusSeen(got))
			st = got
			return got.Final(), nil
		})
		if err != nil {
			rec.Summary = "status unknown"
			return false, s.platformFailed(pos, "probe: read status of call "+pc.sid, err)
		}
		if st == nil {
			// Every read answered 404: the platform gave a sid for the
			// call and never a status of it, its error, whatever the
			// call did.
			rec.Summary = "no status"
			s.errored(&result.Error{Pos: pos, Kind: result.KindTimeout, Message: prefixed(s.stepText, fmt.Sprintf(
				"probe: call %s to %s: the platform gave no status of it within %s (%d reads; the last answered %v): it placed the call and never showed its status, its error, not the agent's",
				pc.sid, pc.to, within, rec.Reads, absent))})
			return false, true
		}
		last := reply.CallQueued
		if st != nil {
			last = st.Status
			if where := s.elsewhere(cmp.Or(st.AgentID, pc.project), st.Env); where != "" {
				rec.Summary = fmt.Sprintf("status=%s to=%s %s", last, pc.to, where)
				s.errored(&result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf(
					"probe: call %s to %s: the platform placed it in %s: it did not take the agent and environment sent in the call's body (agent_id and environment: names the reference does not show), or the call token is another project's, so its conversation is not the scenario's to confirm",
					pc.sid, pc.to, where)})
				return false, false
			}
		}
		rec.Summary = fmt.Sprintf("status=%s to=%s", last, pc.to)
		if st != nil && st.FailureReason != "" {
			rec.Summary += " reason=" + st.FailureReason
		}
		if last == reply.CallQueued {
			// Queued for the whole bound: the platform never placed the
			// call, so no agent took it. Its error, as a read it never
			// answered would be.
			s.errored(&result.Error{Pos: pos, Kind: result.KindTimeout, Message: fmt.Sprintf(
				"probe: call %s to %s was still queued after %s: the platform never placed it, which says nothing of the agent", pc.sid, pc.to, within)})
			return false, true
		}
		if st == nil || !st.Final() {
			// Still calling: the reference's "being placed". The call
			// never completed, so no outcome of the agent is known.
			s.errored(&result.Error{Pos: pos, Kind: result.KindTimeout, Message: prefixed(s.stepText, fmt.Sprintf(
				"probe: call %s to %s was still %s after %s (the reference: a call being placed) and never reached a final status: the platform's, which says nothing of the agent (if the agent's calls last longer, raise within:)",
				pc.sid, pc.to, last, within))})
			return false, true
		}
		rec.Found = true
		pc.status = st
	}
	st := pc.status
	pc.rec.Held = st.Status == expect
	if st.Status != expect {
		// The final status is the call's connection, which the
		// platform and the line make before any agent takes the call
		// (the reference: failure is "failed to connect or not
		// answered"): another one than expected is no verdict on the
		// agent.
		msg := fmt.Sprintf("probe: call %s to %s ended with status %s, expected %s", pc.sid, pc.to, st.Status, expect)
		if st.FailureReason != "" {
			msg += " (" + st.FailureReason + ")"
		}
		if st.Status == reply.CallFailure {
			msg += ": the reference's failure is a call that failed to connect or was not answered, so it never reached the agent: the platform's or the line's, not the agent's"
		} else {
			msg += ": the call connected, where the scenario expected it not to: the number answered, which is the line's, not the agent's"
		}
		s.errored(&result.Error{Pos: expectPos, Kind: result.KindHTTP, Message: prefixed(s.stepText, msg)})
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
		// A conversation whose call_sid names another call is not this
		// call's, whatever its number.
		var found bool
		convID, found, retry = s.findConversation(pos, rec, "call "+pc.sid, "", callChannels, pc.started, pc.known, func(c *reply.Conversation) int {
			if sid, _ := c.State["call_sid"].(string); sid == pc.sid {
				return 2
			} else if sid != "" {
				return 0
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
	s.sent = nil
	s.opts.lines.claim(convID)
	s.a.ConversationID = convID
	rec.Summary += " conversation=" + convID
	return true, false
}

// probeSMS sends the SMS and finds the conversation it opened; pos is the
// probe step's.
func (s *Session) probeSMS(pos diag.Pos, sp *steps.SMSProbe) (convID string, ok, retry bool) {
	to, ok := s.probeNumber(sp.Pos, "sms: to", sp.To)
	if !ok {
		return "", false, false
	}
	from := ""
	if sp.AgentNumber != "" {
		if from, ok = s.probeNumber(sp.Pos, "sms: agent_number", sp.AgentNumber); !ok {
			return "", false, false
		}
	}
	msg, err := s.sendable(sp.Message)
	if err != nil {
		s.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig, Message: "probe: sms: message: " + err.Error()})
		return "", false, false
	}
	if s.opts.Records == nil {
		s.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig, Message: "probe: " + s.opts.Settings.noRuntime()})
		return "", false, false
	}
	agent := s.c.Agent
	connector := ""
	if s.opts.Connector != nil {
		connector = s.opts.Connector(agent, s.c.Env)
	}
	if connector == "" {
		s.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig,
			Message: s.opts.Settings.noSMSConnector(agent, s.c.Env)})
		return "", false, false
	}
	rec := &result.Confirmation{Pos: pos, Kind: result.ConfirmSMS, Subject: to}
	if ok, retry := s.takeLine(sp.Pos, to); !ok {
		rec.Summary = "not sent"
		s.a.Confirmations = append(s.a.Confirmations, rec)
		return "", false, retry
	}
	// Given up once the conversation is known (named or found), or the
	// probe ended without it.
	defer s.releaseLine()
	started := s.opts.Now()
	defer func() {
		rec.Duration = s.opts.Now().Sub(started)
		s.a.Confirmations = append(s.a.Confirmations, rec)
	}()
	known := s.listedBefore(nil, started)
	if known.err != nil && s.ctx.Err() != nil {
		rec.Summary = "not sent"
		return "", false, s.platformFailed(sp.Pos, "probe: list the conversations before the SMS to "+to, known.err)
	}
	// Lost on the line if it ends without its conversation
	// (releaseLine): the send may have reached the platform even when it
	// failed.
	s.sent = &lostProbe{key: s.onLine, message: msg}
	ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
	rec.Saw(s.opts.Now(), result.SeenSent, fmt.Sprintf("SMS to %s%s (POST /v1/outbound-sms): %s", to, fromText(from), msg))
	res, err := s.opts.Records.SendSMS(ctx, platform.SMSRequest{To: to, Message: msg, AgentNumber: from, ConnectorID: connector})
	err = s.namedIf(ctx, err)
	cancel()
	rec.Reads = 1
	if err != nil {
		rec.Summary = "not sent"
		return "", false, s.platformFailed(sp.Pos, "probe: send SMS to "+to, err)
	}
	rec.Saw(s.opts.Now(), result.SeenPlatform, smsSeen(res))
	rec.Found, rec.Held = true, true
	rec.Summary = "sent from " + cmp.Or(res.AgentNumber, "the environment's number")
	if where := s.elsewhere(res.ProjectID, res.Env); where != "" {
		// Its conversation is not where the confirmation reads: a wait
		// for it would fail the agent on the connector configured.
		// Sent, but not where the scenario asked: its line is ✗, as a
		// call placed elsewhere is.
		s.sent = nil
		rec.Held = false
		rec.Summary += ", " + where
		s.errored(&result.Error{Pos: sp.Pos, Kind: result.KindConfig, Message: fmt.Sprintf(
			"probe: SMS to %s: the platform opened its conversation in %s: an SMS runs in the project and environment of its connector id (%s), so the one sent is not the connector of agent %s in %s (check %s)",
			to, where, brand.TokenIDHeader, agent, s.c.Env, s.opts.Settings.smsConnector(agent))})
		return "", false, false
	}
	convID = res.ConversationID
	if convID != "" {
		// The reference: the SMS "opens a new conversation session".
		// One that names a conversation listed before it was sent, or
		// one a probe of the run confirmed, continued an SMS session
		// still open with the number (a session lasts a day after its
		// last message): its record holds earlier messages.
		since := ""
		switch {
		case known.ids[convID]:
			since = "listed before the SMS was sent"
		case s.opts.lines.isClaimed(convID):
			since = "the conversation of an earlier probe of the run"
		}
		if since != "" {
			// Lost on the line all the same: should the platform
			// open a conversation of its own for it after all, no
			// later probe takes that for its own.
			rec.Held = false
			rec.Summary += ", conversation " + convID + " (" + since + ")"
			s.errored(continuedSession(sp.Pos, "SMS to "+to, "the platform put it in conversation "+convID+", "+since))
			return "", false, false
		}
		s.smsSent, s.smsRec = started, rec
	}
	if convID == "" {
		convID, ok, retry = s.findConversation(pos, rec, "SMS to "+to, msg, nil, started, known, func(c *reply.Conversation) int {
			if sameNumber(c.ToNumber, to) || sameNumber(c.FromNumber, to) {
				return 1
			}
			return 0
		})
		if !ok {
			return "", false, retry
		}
	}
	s.sent = nil
	s.opts.lines.claim(convID)
	s.a.ConversationID = convID
	rec.Summary += ", conversation " + convID
	return convID, true, false
}

// continuedSession is the error of an SMS probe (what: "SMS to NUMBER")
// whose conversation began before the SMS (lead says how that is known):
// the SMS continued a session still open with the number, so the record
// holds earlier messages, and its checks would judge them. Not the
// agent's, and not retried: every attempt would land in that session.
func continuedSession(pos diag.Pos, what, lead string) *result.Error {
	return &result.Error{Pos: pos, Kind: result.KindConfig, Message: fmt.Sprintf(
		"probe: %s: %s: an SMS to a number whose SMS session is still open continues that session, so its record holds earlier messages and is not the probe's to confirm "+
			"(the reference: a session stays open a day after its last message, and ends 10 minutes after the platform's warning goes unanswered); text a number no SMS session holds, one per SMS probe, listed in probe_numbers",
		what, lead)}
}

// elsewhere says where a probe's (or a web chat's) conversation went when the platform's
// answer names another project or environment than the scenario's
// ("project p2, not p1"), and "" when it names neither or the same ones.
// The platform chooses them from what agenttest sent: for an SMS from the
// connector id alone (its body names neither), for a call from the body's
// agent_id and environment, whose names the reference does not show, for
// a web chat from the connector token alone (joinedElsewhere). Such
// a conversation is never where the confirmation reads it, and waiting
// for it would fail the agent on what the configuration chose. A project
// is another only when named in the scenario's form (a slug, or
// PROJECT-XXXXXXXX; platform.AgentIDForm): the platform may name the
// agent in the other one, or by an internal id (a UUID).
// An environment that is none of the conversations' (the reference names
// a token environment "dev") says nothing of where the record went.
func (s *Session) elsewhere(project, env string) string {
	var where []string
	agent := s.c.Agent
	if form := platform.AgentIDForm(project); form != "" && form == platform.AgentIDForm(agent) && !strings.EqualFold(project, agent) {
		where = append(where, fmt.Sprintf("project %s, not %s", project, agent))
	}
	if e := reply.EnvSpelled(env); e != "" && s.c.Env != "" && e != s.c.Env {
		where = append(where, fmt.Sprintf("environment %s, not %s", e, s.c.Env))
	}
	return strings.Join(where, ", ")
}

// callChannels are the channels a call's conversation is listed under.
var callChannels = []string{"VOICE-SIP"}

// probeQuery lists the conversations of the agent that may be a probe's:
// those started since the probe (less probeWindow).
// Its pages are as long as the reference's v3 schema allows: the
// platform's default page may be far shorter (5, in its prose), and a
// busy minute would fill the pages the search reads.
func (s *Session) probeQuery(channels []string, since time.Time) platform.ListQuery {
	return platform.ListQuery{ClientEnv: s.c.Env, Channels: channels, StartTime: since.Add(-probeWindow).UTC(), Limit: listPageSize}
}

// listPageSize is the longest page of the v3 list.
const listPageSize = 1000

// listConversations reads the pages of q (at most maxListPages), handing
// each conversation to each. A list longer than that is an error
// (*pagesError): what its pages left unread may hold the conversation
// sought, or one known before the probe.
func (s *Session) listConversations(ctx context.Context, q platform.ListQuery, each func(*reply.Conversation)) error {
	for range maxListPages {
		p, err := s.opts.Records.ListConversations(ctx, s.c.Agent, q)
		if err != nil {
			return err
		}
		for i := range p.Conversations {
			each(&p.Conversations[i])
		}
		var more bool
		if q, more = p.Next(q); !more {
			return nil
		}
	}
	return &pagesError{since: q.StartTime}
}

// pagesError says that the conversations of a probe's window fill more
// pages than a search reads: the probe's outcome cannot be confirmed,
// which says nothing of the agent.
type pagesError struct{ since time.Time }

func (e *pagesError) Error() string {
	return fmt.Sprintf("the list of conversations since %s fills more than %d pages (a next page was left unread), so the probe's conversation cannot be searched for: its outcome cannot be confirmed",
		e.since.Format(time.RFC3339), maxListPages)
}

// priorList is what the conversations list held before a probe called
// or texted: ids, or the error that kept it from being read.
type priorList struct {
	ids map[string]bool
	err error
}

// listedBefore lists, before a probe calls or texts, the conversations
// its search (findConversation) will read: none of them is the probe's.
// The window reaches probeWindow back for the platform's clock, so it
// holds the conversation of an earlier attempt or run that called or
// texted the same number moments before, which would be found by number
// while the probe's own is not listed yet. A list that cannot be read
// fails only the search, when one is needed: a probe whose conversation
// the platform names needs no list.
func (s *Session) listedBefore(channels []string, since time.Time) priorList {
	known := priorList{ids: map[string]bool{}}
	ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
	defer cancel()
	err := s.listConversations(ctx, s.probeQuery(channels, since), func(c *reply.Conversation) { known.ids[c.ID] = true })
	known.err = s.namedIf(ctx, err)
	return known
}

// findConversation looks, with bounded backoff, through the conversations
// of the agent started since the probe (less probeWindow), leaving out
// those known before it, those another probe of the run made its own and
// those a probe lost on the line the session holds names (for a probe
// whose SMS text is own; empty for a call), for the best match (score >
// 0; the highest wins). Not found within the bound is an error of the
// platform, which took the SMS or connected the call. Two conversations
// that match equally well cannot be told apart:
// the probe's outcome cannot be confirmed, and that is an error of the
// platform (which named neither), never a pass nor the agent's failure.
// Within a run, the probes to one number take turns (probeLines), so the
// other is a call or an SMS to the number from outside the run. Each read
// of the list counts on rec, the probe's line, whose reads and time the
// reports show: how long the platform took to list the conversation.
func (s *Session) findConversation(pos diag.Pos, rec *result.Confirmation, what, own string, channels []string, since time.Time, known priorList, score func(*reply.Conversation) int) (id string, ok, retry bool) {
	if known.err != nil {
		return "", false, s.platformFailed(pos, "probe: list the conversations before the "+what, known.err)
	}
	q := s.probeQuery(channels, since)
	var ids []string
	err := s.poll(func(ctx context.Context) (bool, error) {
		rec.Reads++
		best := 0
		ids = ids[:0]
		err := s.listConversations(ctx, q, func(c *reply.Conversation) {
			if known.ids[c.ID] || s.opts.lines.isClaimed(c.ID) {
				return
			}
			n := score(c)
			if n == 0 || n < best || s.opts.lines.lateOf(s.onLine, c, own) {
				return
			}
			if n > best {
				best, ids = n, ids[:0]
			}
			if !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		})
		if err != nil {
			return false, err
		}
		if best == 0 {
			rec.Saw(s.opts.Now(), result.SeenPlatform, "listed no conversation of the "+what+" yet")
		} else {
			rec.Saw(s.opts.Now(), result.SeenPlatform, "listed conversation "+strings.Join(ids, ", ")+" as the "+what+"'s")
		}
		return best > 0, nil
	})
	if err != nil {
		return "", false, s.platformFailed(pos, "probe: find the conversation of "+what, err)
	}
	switch len(ids) {
	case 0:
		if own != "" {
			// An SMS (own is its text) that opened nothing may have
			// gone to the session still open with the number.
			if c := s.openSession(since, known, score); c != nil {
				s.errored(continuedSession(pos, what, fmt.Sprintf(
					"the platform named no conversation, and none began after it was sent within %s, while conversation %s, begun at %s, is still open with the number",
					s.opts.ConfirmTimeout, c.ID, c.StartedAt.UTC().Format(time.RFC3339))))
				return "", false, false
			}
		}
		// The platform took the SMS (which opens a conversation
		// session) or connected the call: the conversation exists
		// whatever the agent does, and listing it is the platform's
		// part, as writing its record is (readConversation).
		s.errored(&result.Error{Pos: pos, Kind: result.KindTimeout, Message: fmt.Sprintf(
			"probe: find the conversation of %s: none listed within the confirmation's wait of %s (%d reads): the platform took the %s, which opens a conversation whatever the agent does, and never listed it: the platform's error (or the runtime key's, without the permission to read conversation data), not the agent's",
			what, s.opts.ConfirmTimeout, rec.Reads, what)})
		return "", false, true
	case 1:
		return ids[0], true, false
	}
	s.errored(&result.Error{Pos: pos, Kind: result.KindHTTP, Message: fmt.Sprintf(
		"probe: find the conversation of %s: %d conversations match it (%s), and the platform named none of them as the probe's: "+
			"another call or SMS to this number, from outside the run, overlapped the probe, so its outcome cannot be confirmed",
		what, len(ids), strings.Join(ids, ", "))})
	return "", false, true
}

// openSession is the latest conversation in progress that score matches
// and that is not a probe's own: one listed before it, one a probe of
// the run made its own, or one begun before its window (since, less
// probeWindow). It is the SMS session an SMS to the number may have
// continued. nil when there is none, or the list cannot be read (the
// probe then errors as it would have).
func (s *Session) openSession(since time.Time, known priorList, score func(*reply.Conversation) int) *reply.Conversation {
	open := true
	q := platform.ListQuery{ClientEnv: s.c.Env, InProgress: &open, Limit: listPageSize}
	var latest *reply.Conversation
	ctx, cancel := withTimeout(s.ctx, s.opts.TurnTimeout, s.opts)
	defer cancel()
	err := s.listConversations(ctx, q, func(c *reply.Conversation) {
		earlier := known.ids[c.ID] || s.opts.lines.isClaimed(c.ID) || c.StartedAt.Before(since.Add(-probeWindow))
		if !c.InProgress || !earlier || score(c) == 0 {
			return
		}
		if latest == nil || c.StartedAt.After(latest.StartedAt) {
			cp := *c
			latest = &cp
		}
	})
	if err != nil {
		return nil
	}
	return latest
}

// takeLine waits for the line of the probe's number (probeLines),
// ending the attempt at pos when the wait is cut short (the run
// interrupted, the scenario's timeout).
func (s *Session) takeLine(pos diag.Pos, number string) (ok, retry bool) {
	key := lineKey(s.c.Agent, s.c.Env, number)
	release, err := s.opts.lines.take(s.ctx, key)
	if err != nil {
		return false, s.platformFailed(pos, "probe: wait for the other probes to "+number, s.named(s.ctx, err))
	}
	s.line, s.onLine = release, key
	return true, false
}

// releaseLine gives up the line the session's probe took, if any; a
// probe that called or texted and does not know its conversation is lost
// on it (probeLines).
func (s *Session) releaseLine() {
	if s.sent != nil {
		s.opts.lines.lose(*s.sent)
		s.sent = nil
	}
	if s.line != nil {
		s.line()
		s.line, s.onLine = nil, ""
	}
}

// namedIf is named for a possibly nil error.
func (s *Session) namedIf(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return s.named(ctx, err)
}

// expandObject interpolates the strings of call metadata, at any depth.
func (s *Session) expandObject(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		// A member's name is sent as written, as its value is: a key
		// in it would reach the platform's records as surely.
		if s.opts.Redactor.Contains(k) {
			return nil, errSecretName
		}
		x, err := s.expandValue(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = x
	}
	return out, nil
}

func (s *Session) expandValue(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return s.sendable(x)
	case map[string]any:
		return s.expandObject(x)
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			e, err := s.expandValue(it)
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

// fromText names the agent number a probe sends from, "" when the
// platform picks the environment's.
func fromText(from string) string {
	if from == "" {
		return ""
	}
	return " from " + from
}

// statusSeen is a call status as a probe's line shows it: the status,
// and what the platform said with it.
func statusSeen(st *platform.CallStatus) string {
	out := "status " + st.Status
	if st.FailureReason != "" {
		out += " (" + st.FailureReason + ")"
	}
	if st.ConversationID != "" {
		out += ", conversation " + st.ConversationID
	}
	return out
}

// smsSeen is the platform's answer to an SMS as a probe's line shows it.
func smsSeen(res *platform.SMSResult) string {
	var parts []string
	if res.ConversationID != "" {
		parts = append(parts, "conversation "+res.ConversationID)
	} else {
		parts = append(parts, "no conversation named")
	}
	for _, kv := range [][2]string{{"from", res.AgentNumber}, {"project", res.ProjectID}, {"environment", res.Env}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return "answered: " + strings.Join(parts, ", ")
}
