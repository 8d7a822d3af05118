package sim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// outboundCalls holds the calls whose status is still readable.
type outboundCalls struct {
	mu sync.Mutex
	m  map[string]*outboundCall
}

// outboundCall is one triggered call. Its status is a function of the
// server clock: queued, then calling, then success or failure at
// created+Queued+Calling, when a connected call creates its conversation.
type outboundCall struct {
	sid, agentID, toNumber, fromNumber, env string
	metadata                                map[string]any
	created                                 time.Time
	unreachable                             bool

	finished       bool
	endedAt        time.Time
	conversationID string
}

// outboundRequest is the body of POST /v1/outbound-calling. The reference
// does not show the field names; the first of each group is the
// simulator's, the others are accepted alternatives.
type outboundRequest struct {
	ToNumber    string          `json:"to_number"`
	To          string          `json:"to"`
	PhoneNumber string          `json:"phone_number"`
	AgentID     string          `json:"agent_id"`
	ProjectID   string          `json:"project_id"`
	FromNumber  string          `json:"from_number"`
	AgentNumber string          `json:"agent_number"`
	Environment string          `json:"environment"`
	ClientEnv   string          `json:"client_env"`
	Metadata    map[string]any  `json:"metadata"`
	Encryption  json.RawMessage `json:"encryption"`
}

// outboundStatus is the status response; the reference shows only status.
type outboundStatus struct {
	CallSID        string `json:"call_sid"`
	Status         string `json:"status"`
	AgentID        string `json:"agent_id"`
	ToNumber       string `json:"to_number"`
	FromNumber     string `json:"from_number"`
	Environment    string `json:"environment"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
	ConversationID string `json:"conversation_id,omitempty"`
	FailureReason  string `json:"failure_reason,omitempty"`
}

// Outbound call statuses of the reference.
const (
	CallQueued  = "queued"
	CallCalling = "calling"
	CallSuccess = "success"
	CallFailure = "failure"
)

// normalizeNumber drops the separators people write in phone numbers and
// checks what remains: an optional + and 6 to 15 digits (E.164 is advised,
// not required, by the reference).
func normalizeNumber(n string) (string, bool) {
	var b strings.Builder
	for i, r := range strings.TrimSpace(n) {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && i == 0:
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", false
		}
	}
	out := b.String()
	digits := len(strings.TrimPrefix(out, "+"))
	return out, digits >= 6 && digits <= 15
}

// pickAgent resolves the agent a runtime body names, or the only agent
// when the body names none. It writes the error response on failure.
func (s *Server) pickAgent(w http.ResponseWriter, k keyScope, id string) (*agent.Definition, string) {
	if id == "" {
		if len(s.agentIDs) != 1 {
			failStatus(w, http.StatusBadRequest, "agent_id is required: the simulator serves "+strings.Join(s.agentIDs, ", "))
			return nil, ""
		}
		id = s.agentIDs[0]
	}
	return s.resolveAgent(w, familyConversations, k, id)
}

func (s *Server) handleOutboundCall(w http.ResponseWriter, r *http.Request, k keyScope) {
	var req outboundRequest
	if err := decodeBody(r, &req); err != nil {
		failStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	raw := cmp.Or(req.ToNumber, req.To, req.PhoneNumber)
	if raw == "" {
		failStatus(w, http.StatusBadRequest, "to_number is required: the destination phone number, E.164 advised (also accepted as to or phone_number)")
		return
	}
	to, ok := normalizeNumber(raw)
	if !ok {
		failStatus(w, http.StatusBadRequest, fmt.Sprintf("to_number %q is not a phone number: want + and 6 to 15 digits (E.164)", raw))
		return
	}
	if msg := checkEncryption(req.Encryption); msg != "" {
		failStatus(w, http.StatusBadRequest, msg)
		return
	}
	env := cmp.Or(req.Environment, req.ClientEnv)
	if env == "" {
		env = outboundDefaultEnv
	} else if !validEnv(env) {
		failStatus(w, http.StatusBadRequest, fmt.Sprintf("environment %q is not one of %s", env, strings.Join(clientEnvs, ", ")))
		return
	}
	agentRef := cmp.Or(req.AgentID, req.ProjectID)
	def, agentID := s.pickAgent(w, k, agentRef)
	if def == nil {
		return
	}
	nums := provisionedNumbers(def)
	from := nums[0]
	if f := cmp.Or(req.AgentNumber, req.FromNumber); f != "" {
		norm, _ := normalizeNumber(f)
		if !slices.Contains(nums, norm) {
			failStatus(w, http.StatusBadRequest, fmt.Sprintf("agent_number %q is not provisioned for project %q (provisioned: %s)", f, agentID, strings.Join(nums, ", ")))
			return
		}
		from = norm
	}
	c := &outboundCall{
		sid:         s.newID(callSIDPrefix),
		agentID:     agentID,
		toNumber:    to,
		fromNumber:  from,
		env:         env,
		metadata:    req.Metadata,
		created:     s.opts.Now().UTC(),
		unreachable: s.unreachable(to),
	}
	s.calls.mu.Lock()
	s.calls.m[c.sid] = c
	s.calls.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"call_sid":  c.sid,
		"status":    CallQueued,
		"agent_id":  agentID,
		"to_number": to,
	})
}

// checkEncryption accepts the optional encryption member as an object, a
// string or a boolean; the reference does not show its shape.
func checkEncryption(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	if t == "" || t == "null" || t[0] == '{' || t[0] == '"' || t == "true" || t == "false" {
		return ""
	}
	return "encryption must be an object, a string or a boolean"
}

func (s *Server) unreachable(to string) bool {
	for _, n := range s.opts.Outbound.Unreachable {
		if norm, _ := normalizeNumber(n); norm == to {
			return true
		}
	}
	return false
}

func (s *Server) handleOutboundStatus(w http.ResponseWriter, r *http.Request, k keyScope) {
	sid := r.PathValue("callSid")
	now := s.opts.Now().UTC()
	s.calls.mu.Lock()
	c, ok := s.calls.m[sid]
	var st outboundStatus
	if ok {
		s.advanceCallLocked(c, now)
		if c.finished && now.Sub(c.endedAt) > s.opts.Outbound.Retention {
			delete(s.calls.m, sid)
			ok = false
		} else {
			st = c.status(now, s.opts.Outbound)
		}
	}
	s.calls.mu.Unlock()
	switch {
	case !ok && !strings.HasPrefix(sid, callSIDPrefix):
		failStatus(w, http.StatusNotFound, fmt.Sprintf("call %q not found: call sids start with %s", sid, callSIDPrefix))
	case !ok:
		failStatus(w, http.StatusNotFound, fmt.Sprintf("call %q not found (statuses are kept %s after the call ends)", sid, s.opts.Outbound.Retention))
	case k.project != "" && k.project != c.agentID && k.project != s.projects[c.agentID]:
		failStatus(w, http.StatusForbidden, fmt.Sprintf("auth token has no rights for the project of call %q", sid))
	default:
		writeJSON(w, http.StatusOK, st)
	}
}

// status renders the call at now; advanceCallLocked has run.
func (c *outboundCall) status(now time.Time, o OutboundOptions) outboundStatus {
	st := outboundStatus{
		CallSID: c.sid, AgentID: c.agentID, ToNumber: c.toNumber, FromNumber: c.fromNumber,
		Environment: c.env, CreatedAt: formatTime(c.created), ConversationID: c.conversationID,
	}
	switch el := now.Sub(c.created); {
	case c.finished && c.unreachable:
		st.Status, st.UpdatedAt, st.FailureReason = CallFailure, formatTime(c.endedAt), "unreachable"
	case c.finished:
		st.Status, st.UpdatedAt = CallSuccess, formatTime(c.endedAt)
	case el < o.Queued:
		st.Status, st.UpdatedAt = CallQueued, formatTime(c.created)
	default:
		st.Status, st.UpdatedAt = CallCalling, formatTime(c.created.Add(o.Queued))
	}
	return st
}

// advanceCalls finishes every call that is due and forgets the statuses
// past retention.
func (s *Server) advanceCalls(now time.Time) {
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	sids := make([]string, 0, len(s.calls.m))
	for sid := range s.calls.m {
		sids = append(sids, sid)
	}
	sort.Strings(sids) // a stable order keeps conversation ids reproducible
	for _, sid := range sids {
		c := s.calls.m[sid]
		s.advanceCallLocked(c, now)
		if c.finished && now.Sub(c.endedAt) > s.opts.Outbound.Retention {
			delete(s.calls.m, sid)
		}
	}
}

// advanceCallLocked finishes a due call: a reachable number connects, the
// agent greets, the callee hangs up, and the conversation ends. calls.mu
// is held; the store never calls back into calls, so this cannot deadlock.
func (s *Server) advanceCallLocked(c *outboundCall, now time.Time) {
	connect := c.created.Add(s.opts.Outbound.Queued + s.opts.Outbound.Calling)
	if c.finished || now.Before(connect) {
		return
	}
	c.finished, c.endedAt = true, connect
	if c.unreachable {
		return
	}
	c.conversationID = s.newConversationID()
	sess := s.newSession(s.served(c.agentID, c.env), agent.SessionOptions{
		ConversationID:        c.conversationID,
		Env:                   c.env,
		Channel:               outboundChannel,
		IntegrationAttributes: c.metadata,
		Now:                   func() time.Time { return connect },
	})
	reply := sess.Start()
	state := copyMap(reply.Metadata.State)
	// The call is the agent's: from_ is its number, to the callee, and
	// call_sid the OUT- sid, so a harness finds the conversation by it.
	state["from_"], state["to"], state["call_sid"] = c.fromNumber, c.toNumber, c.sid
	if len(c.metadata) > 0 {
		state["outbound_metadata"] = c.metadata
	}
	conv := &Conversation{
		ID:          c.conversationID,
		AccountID:   s.opts.AccountID,
		ProjectID:   c.agentID,
		Environment: c.env,
		Channel:     outboundChannel,
		FromNumber:  c.fromNumber,
		ToNumber:    c.toNumber,
		StartedAt:   connect.Truncate(time.Millisecond),
	}
	if !s.store.Add(conv) {
		c.conversationID = ""
		return
	}
	s.appendGreeting(conv, reply, reply.Response, state, connect)
	s.store.End(conv, connect, false)
}

// appendGreeting records the first turn of a conversation the server opened
// itself (outbound call, SMS): the agent speaks first, nobody typed.
func (s *Server) appendGreeting(conv *Conversation, reply agent.Reply, text string, state map[string]any, at time.Time) {
	t := Turn{
		UserInputAt:     at,
		AgentResponse:   text,
		AgentResponseAt: at,
		Intents:         reply.Intents,
		Entities:        reply.Entities,
		GenAI:           genAIMetadata(reply.Metadata),
		FunctionErrors:  reply.FunctionErrors,
	}
	u := TurnUpdate{State: state, Metrics: reply.Metadata.Metrics}
	if h := reply.Handoff; h != nil {
		u.Handoff = &HandoffRecord{Destination: h.Destination, Reason: h.Reason, SharedID: h.SharedID, Data: h.Data}
	}
	conv.AppendTurn(t, u)
	if u.Handoff != nil {
		s.store.IndexSharedID(conv, u.Handoff.SharedID)
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+4)
	maps.Copy(out, m)
	return out
}
