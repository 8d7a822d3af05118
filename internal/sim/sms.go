package sim

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// smsState holds the connector ids, the per-project rate and the SMS
// conversations still open.
type smsState struct {
	connectors map[string]smsConnector // X-TOKEN-ID → project and environment; fixed after New
	limiter    *rateLimiter            // keyed by agent id

	mu   sync.Mutex
	open []*Conversation // in start order
}

// smsConnector is what an X-TOKEN-ID stands for.
type smsConnector struct{ agentID, env string }

// smsRequest is the body of POST /v1/outbound-sms. The reference does not
// show the names of the recipient and text fields; the first of each group
// is the simulator's, the others are accepted alternatives.
type smsRequest struct {
	ToNumber    string `json:"to_number"`
	To          string `json:"to"`
	PhoneNumber string `json:"phone_number"`
	Message     string `json:"message"`
	Body        string `json:"body"`
	Text        string `json:"text"`
	AgentNumber string `json:"agent_number"`
}

// smsResponse is the simulator's response shape (not shown in the reference).
type smsResponse struct {
	ConversationID string `json:"conversation_id"`
	AgentNumber    string `json:"agent_number"`
	ToNumber       string `json:"to_number"`
	ProjectID      string `json:"project_id"`
	Environment    string `json:"environment"`
}

func (s *Server) handleOutboundSMS(w http.ResponseWriter, r *http.Request, k keyScope) {
	tok := r.Header.Get(brand.TokenIDHeader)
	if tok == "" {
		failStatus(w, http.StatusUnauthorized, "missing "+brand.TokenIDHeader+" header: the connector id of the project")
		return
	}
	conn, ok := s.sms.connectors[tok]
	if !ok {
		failStatus(w, http.StatusUnauthorized, fmt.Sprintf("unknown connector id %q in %s", tok, brand.TokenIDHeader))
		return
	}
	def, agentID := s.resolveAgent(w, familyConversations, k, conn.agentID)
	if def == nil {
		return
	}
	var req smsRequest
	if err := decodeBody(r, &req); err != nil {
		failStatus(w, http.StatusBadRequest, err.Error())
		return
	}
	raw := cmp.Or(req.ToNumber, req.To, req.PhoneNumber)
	if raw == "" {
		failStatus(w, http.StatusBadRequest, "to_number is required: the recipient phone number (also accepted as to or phone_number)")
		return
	}
	to, ok := normalizeNumber(raw)
	if !ok {
		failStatus(w, http.StatusBadRequest, fmt.Sprintf("to_number %q is not a phone number: want + and 6 to 15 digits (E.164)", raw))
		return
	}
	text := cmp.Or(req.Message, req.Body, req.Text)
	if strings.TrimSpace(text) == "" {
		failStatus(w, http.StatusBadRequest, "message is required: the SMS text (also accepted as body or text)")
		return
	}
	nums := provisionedNumbers(def)
	from := s.info.EnvNumbers[agentID][conn.env]
	if req.AgentNumber != "" {
		norm, _ := normalizeNumber(req.AgentNumber)
		if !slices.Contains(nums, norm) {
			failStatus(w, http.StatusBadRequest, fmt.Sprintf("agent_number %q is not provisioned for project %q (provisioned: %s)", req.AgentNumber, agentID, strings.Join(nums, ", ")))
			return
		}
		from = norm
	}
	if wait, ok := s.sms.limiter.allow(agentID); !ok {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		failStatus(w, http.StatusTooManyRequests, fmt.Sprintf("SMS rate limit exceeded for project %q; retry with exponential backoff", agentID))
		return
	}
	now := s.opts.Now().UTC()
	id := s.newConversationID()
	sess := s.newSession(s.served(agentID, conn.env), agent.SessionOptions{
		ConversationID: id,
		Env:            conn.env,
		Channel:        smsChannel,
		Now:            s.opts.Now,
	})
	// The agent plays its start node (state, metrics, node), but what the
	// user receives, and what the record holds, is the message sent.
	reply := sess.Start()
	state := copyMap(reply.Metadata.State)
	state["from_"], state["to"] = from, to
	conv := &Conversation{
		ID:          id,
		AccountID:   s.opts.AccountID,
		ProjectID:   agentID,
		Environment: conn.env,
		Channel:     smsChannel,
		FromNumber:  from,
		ToNumber:    to,
		StartedAt:   now.Truncate(time.Millisecond),
	}
	if !s.store.Add(conv) {
		failStatus(w, http.StatusInternalServerError, fmt.Sprintf("conversation id %q is taken", id))
		return
	}
	s.appendGreeting(conv, reply, text, state, now)
	s.sms.mu.Lock()
	s.sms.open = append(s.sms.open, conv)
	s.sms.mu.Unlock()
	writeJSON(w, http.StatusOK, smsResponse{ConversationID: id, AgentNumber: from, ToNumber: to, ProjectID: agentID, Environment: conn.env})
}

// expireSMS ends the SMS conversations idle past the session timeout: the
// agent's idle warning is recorded smsWarningAfter after the last activity
// and the conversation ends at the timeout. Replies are not simulated, so
// the last activity is the message itself.
func (s *Server) expireSMS(now time.Time) {
	s.sms.mu.Lock()
	var due []*Conversation
	keep := s.sms.open[:0]
	for _, c := range s.sms.open {
		if now.Sub(c.snapshot().lastActivity) >= s.opts.SMSSessionTimeout {
			due = append(due, c)
		} else {
			keep = append(keep, c)
		}
	}
	clear(s.sms.open[len(keep):])
	s.sms.open = keep
	s.sms.mu.Unlock()
	for _, c := range due {
		last := c.snapshot().lastActivity
		if warn := last.Add(smsWarningAfter); warn.Before(last.Add(s.opts.SMSSessionTimeout)) {
			c.AppendTurn(Turn{UserInputAt: warn, AgentResponse: smsWarningText, AgentResponseAt: warn}, TurnUpdate{})
		}
		s.store.End(c, last.Add(s.opts.SMSSessionTimeout), false)
	}
}
