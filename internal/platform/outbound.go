package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// retryUnsafe is the retry class of the POSTs that create something on the
// platform (a call, an SMS, an alert rule, a webhook endpoint). Like a
// debug-chat turn, a second send after the platform may have received the
// first would create a second call or a second SMS, so such a request is
// re-sent only when it certainly never left or was refused with a 429.
const retryUnsafe = retryTurn

// Endpoints of outbound calling and SMS: runtime host, X-<Brand>-Auth-Token.
var (
	epCallCreate = endpoint{"POST", "/v1/outbound-calling", runtimeHost, authVendorToken, retryUnsafe}
	epCallStatus = endpoint{"GET", "/v1/outbound-calling/{call_sid}/status", runtimeHost, authVendorToken, retryRead}
	epSMS        = endpoint{"POST", EndpointSMS, runtimeHost, authVendorToken, retryUnsafe}
)

// EndpointSMS is the path of the outbound SMS endpoint, as APIError.Endpoint
// names it. Besides the call token it is sent the project's connector id
// (X-TOKEN-ID), so a refusal there may be of either.
const EndpointSMS = "/v1/outbound-sms"

// CallRetention is how long the platform keeps a finished call's status
// (reference, Limits: "about 2 hours"); afterwards CallStatus answers 404.
const CallRetention = 2 * time.Hour

// CallRequest triggers an outbound call. The reference names the contents
// (destination number, optional metadata, optional encryption) but not the
// body's field names; the names sent are those of callBody.
type CallRequest struct {
	// To is the destination number; E.164 is advised. Required.
	To string
	// AgentID is the agent (project) that places the call. Optional when
	// the key's account has one agent.
	AgentID string
	// AgentNumber is the provisioned number to call from; empty lets the
	// platform choose.
	AgentNumber string
	// Env is the environment of the conversation (sandbox, pre-release,
	// live); empty is the platform's default.
	Env string
	// Metadata is handed to the agent with the call.
	Metadata map[string]any
	// Encryption is passed through as given (its shape is not shown).
	Encryption any
}

// callBody is the request body. Field names are not shown by the
// reference: to_number, agent_id, agent_number and environment follow the
// snake_case of the runtime groups (to_number as in the Conversation
// summary).
type callBody struct {
	To          string         `json:"to_number"`
	AgentID     string         `json:"agent_id,omitempty"`
	AgentNumber string         `json:"agent_number,omitempty"`
	Env         string         `json:"environment,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Encryption  any            `json:"encryption,omitempty"`
}

// Call is the answer to a triggered call.
type Call struct {
	// SID is the call_sid, prefixed OUT-.
	SID string
	// Status is the status in the answer, when it carries one (usually
	// queued).
	Status  string
	AgentID string
	To      string
	// Raw is the whole answer, for members the reference does not show.
	Raw map[string]any
}

// CallStatus is the status of a call. Only Status is in the reference; the
// other members are read when the platform sends them.
type CallStatus struct {
	SID    string
	Status string
	// AgentID, To and From are the agent, the dialled number and the
	// agent's number.
	AgentID string
	To      string
	From    string
	Env     string
	// CreatedAt and UpdatedAt are when the call was placed and when its
	// status last changed.
	CreatedAt time.Time
	UpdatedAt time.Time
	// ConversationID is the conversation a connected call created, when
	// the platform says (the simulator does); else find it by the
	// call_sid state key.
	ConversationID string
	// FailureReason says why a call failed, when the platform says.
	FailureReason string
	// Raw is the whole answer.
	Raw map[string]any
}

// Final reports whether the status will not change any more.
func (s *CallStatus) Final() bool {
	return s != nil && (s.Status == reply.CallSuccess || s.Status == reply.CallFailure)
}

// PlaceCall triggers an outbound call and returns its call_sid. The POST is
// not repeated after a 5xx or a connection lost after sending, since the
// platform may have placed the call.
func (c *Client) PlaceCall(ctx context.Context, req CallRequest) (*Call, error) {
	if req.To == "" {
		return nil, errors.New("place call: the destination number is empty")
	}
	body, err := json.Marshal(callBody{
		To: req.To, AgentID: req.AgentID, AgentNumber: req.AgentNumber,
		Env: req.Env, Metadata: req.Metadata, Encryption: req.Encryption,
	})
	if err != nil {
		return nil, fmt.Errorf("place call to %s: encode body: %w", req.To, err)
	}
	rq := &call{ep: epCallCreate, path: epCallCreate.template, body: body}
	resp, err := c.do(ctx, rq)
	if err != nil {
		// It names the call (POST /v1/outbound-calling); the caller
		// says which number it was for, as for a malformed answer.
		return nil, unprovisioned(req.AgentNumber, err)
	}
	defer resp.release()
	r, err := decodeRecord(resp.body())
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	out := &Call{
		SID:     r.str("call_sid", "callSid", "sid", "id"),
		Status:  r.str("status", "call_status"),
		AgentID: r.str("agent_id", "project_id", "agentId"),
		To:      r.str("to_number", "to", "phone_number"),
		Raw:     r,
	}
	if out.SID == "" {
		return nil, c.responseError(rq, resp.status, resp.body(), missing("", []string{"call_sid"}))
	}
	return out, nil
}

// CallStatus reads the status of a call. About two hours after the call
// ends the platform forgets it and answers 404: the error then satisfies
// IsNotFound and says so.
func (c *Client) CallStatus(ctx context.Context, sid string) (*CallStatus, error) {
	if sid == "" {
		return nil, errors.New("get call status: call sid is empty")
	}
	rq := &call{ep: epCallStatus, path: buildPath("v1", "outbound-calling", sid, "status")}
	resp, err := c.do(ctx, rq)
	if err != nil {
		if IsNotFound(err) {
			return nil, fmt.Errorf("call %s: no status (the platform keeps a call's status about %s after it ends): %w", sid, durationText(CallRetention), err)
		}
		return nil, err
	}
	defer resp.release()
	r, err := decodeRecord(resp.body())
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	st := &CallStatus{
		SID:            r.str("call_sid", "callSid", "sid"),
		Status:         r.str("status", "call_status", "state"),
		AgentID:        r.str("agent_id", "project_id", "agentId"),
		To:             r.str("to_number", "to"),
		From:           r.str("from_number", "from", "agent_number"),
		Env:            r.str("environment", "client_env"),
		CreatedAt:      r.when("created_at", "createdAt"),
		UpdatedAt:      r.when("updated_at", "updatedAt"),
		ConversationID: r.str("conversation_id", "conversationId"),
		FailureReason:  oneLine(r.str("failure_reason", "reason", "error")), // shown in the summary and the failure
		Raw:            r,
	}
	if st.Status == "" {
		return nil, c.responseError(rq, resp.status, resp.body(), missing("", []string{"status"}))
	}
	// The reference gives the status one of four values. Another (a
	// telephony provider's completed, busy or no-answer, say) is not
	// read as either outcome: taken as still in progress, it would be
	// polled until the probe's bound and then fail the agent, for what
	// the platform said wrong.
	status, ok := callStatusValue(st.Status)
	if !ok {
		return nil, c.responseError(rq, resp.status, resp.body(),
			fmt.Errorf("status is %q, want one of %s", st.Status, strings.Join(callStatuses, ", ")))
	}
	st.Status = status
	switch st.SID {
	case "":
		st.SID = sid
	case sid:
	default:
		// Another call's status would end the probe on its outcome.
		return nil, c.responseError(rq, resp.status, resp.body(), aboutAnother("call_sid", st.SID, "call", sid))
	}
	return st, nil
}

// callStatuses are the values of a call's status, in the order of a call.
var callStatuses = []string{reply.CallQueued, reply.CallCalling, reply.CallSuccess, reply.CallFailure}

// callStatusValue returns the reference's status that s names, in any
// letter case and without surrounding spaces, and whether it names one.
func callStatusValue(s string) (string, bool) {
	v := strings.ToLower(strings.TrimSpace(s))
	return v, slices.Contains(callStatuses, v)
}

// durationText renders 2h0m0s as "2h".
func durationText(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
