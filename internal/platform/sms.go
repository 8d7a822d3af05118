package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agenttest/agenttest/internal/brand"
)

// SMSRequest sends an outbound SMS, which opens a conversation whose
// greeting is the message.
type SMSRequest struct {
	// To is the recipient number. Required.
	To string
	// Message is the text; it becomes the agent's greeting. Required.
	Message string
	// AgentNumber is the provisioned number to send from; empty lets the
	// platform pick the number of the connector's environment. A number
	// the project does not have is refused with 400.
	AgentNumber string
	// ConnectorID is the X-TOKEN-ID of the project (one per project and
	// environment). Required: it says which project sends.
	ConnectorID string
}

// smsBody is the request body. The reference does not show the names of
// the recipient and text fields; to_number matches the Conversation
// summary, message the prose ("message text").
type smsBody struct {
	To          string `json:"to_number"`
	Message     string `json:"message"`
	AgentNumber string `json:"agent_number,omitempty"`
}

// SMSResult is the answer to a sent SMS. The reference does not show it;
// the members are read when present, and an answer without a body (a 202
// or 204, say) is an SMSResult with none.
type SMSResult struct {
	// ConversationID is the conversation the SMS opened, when the platform
	// says; else find it by number and time.
	ConversationID string
	AgentNumber    string
	To             string
	ProjectID      string
	Env            string
	// Raw is the whole answer.
	Raw map[string]any
}

// errUnprovisioned marks the reference's 400 for an SMS or a call from an
// agent_number the project does not have (IsUnprovisioned).
var errUnprovisioned = errors.New("the agent number must be one provisioned for the project")

// IsUnprovisioned reports whether err is the platform's refusal of an SMS
// or a call from an agent_number the project does not have: the request
// as written is refused, and sent again it would be refused again.
func IsUnprovisioned(err error) bool { return errors.Is(err, errUnprovisioned) }

// unprovisioned marks err as that refusal when it is a 400 to a request
// that named an agent number (the reference's group of outbound calling
// and SMS: "400 for an agent_number that is not provisioned").
func unprovisioned(agentNumber string, err error) error {
	var ae *APIError
	if agentNumber != "" && errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return fmt.Errorf("from %s: %w: %w", agentNumber, errUnprovisioned, err)
	}
	return err
}

// SendSMS sends an SMS. A 429 (the per-project SMS rate) is retried as the
// client's retry policy says, honouring Retry-After; other failures are not
// repeated, since the platform may have sent the message.
func (c *Client) SendSMS(ctx context.Context, req SMSRequest) (*SMSResult, error) {
	var problems []string
	if req.To == "" {
		problems = append(problems, "the recipient number is empty")
	}
	if strings.TrimSpace(req.Message) == "" {
		problems = append(problems, "the message is empty")
	}
	if req.ConnectorID == "" {
		problems = append(problems, "the connector id ("+brand.TokenIDHeader+") is empty")
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("send SMS: %s", strings.Join(problems, "; "))
	}
	body, err := json.Marshal(smsBody{To: req.To, Message: req.Message, AgentNumber: req.AgentNumber})
	if err != nil {
		return nil, fmt.Errorf("send SMS to %s: encode body: %w", req.To, err)
	}
	rq := &call{ep: epSMS, path: epSMS.template, body: body,
		header: http.Header{brand.TokenIDHeader: {req.ConnectorID}}}
	resp, err := c.do(ctx, rq)
	if err != nil {
		// It names the call (POST /v1/outbound-sms); the caller says
		// which number it was for, as for a malformed answer.
		return nil, unprovisioned(req.AgentNumber, err)
	}
	defer resp.release()
	if len(bytes.TrimSpace(resp.body())) == 0 {
		// The reference shows no response body: a 202 or 204 without
		// one (or a 200 without one) says the SMS was accepted, and
		// the conversation is found by number and time.
		return &SMSResult{}, nil
	}
	r, err := decodeRecord(resp.body())
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	return &SMSResult{
		// Not session_id: a platform may name its SMS session apart
		// from the conversation (Messaging does), and an id that is no
		// conversation's would be waited for in vain.
		ConversationID: r.str("conversation_id", "conversationId"),
		AgentNumber:    r.str("agent_number", "from_number", "from"),
		To:             r.str("to_number", "to"),
		ProjectID:      r.str("project_id", "agent_id"),
		Env:            r.str("environment", "client_env"),
		Raw:            r,
	}, nil
}
