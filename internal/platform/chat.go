package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// ChatStart is the body of the debug-chat create call. JSON names are the
// reference's.
type ChatStart struct {
	// ClientEnv is sandbox, pre-release or live. Required.
	ClientEnv string `json:"clientEnv"`
	// ASRLang and TTSLang override the agent's language codes.
	ASRLang string `json:"asrLangCode,omitempty"`
	TTSLang string `json:"ttsLangCode,omitempty"`
	// ConversationID is a custom session id; the platform generates one
	// when empty.
	ConversationID string `json:"conversationId,omitempty"`
	VariantID      string `json:"variantId,omitempty"`
	Channel        string `json:"channel,omitempty"`
	// IntegrationAttributes are readable as conv.integration_attributes
	// in the agent's functions.
	IntegrationAttributes map[string]any `json:"integrationAttributes,omitempty"`
}

// ChatTurn is the body of a debug-chat turn.
type ChatTurn struct {
	// ClientEnv is required by the reference on every turn.
	ClientEnv string `json:"clientEnv"`
	ASRLang   string `json:"asrLangCode,omitempty"`
	TTSLang   string `json:"ttsLangCode,omitempty"`
	// Message is the user's text; empty is a silence. Always sent,
	// because the reference gives it a default of "" rather than making
	// it optional.
	Message string `json:"message"`
	// Metadata is user input metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Exchange is one debug-chat request and its answer (or one turn of a
// Messaging conversation), everything the runner keeps for the transcript
// and the JSON report.
type Exchange struct {
	// Request is the JSON body sent. It never holds keys (they travel in
	// headers only).
	Request []byte
	// Response is the body received, redacted.
	Response []byte
	// Status is the HTTP status of the answer.
	Status int
	// Result is the decoded turn result.
	Result *reply.TurnResult
	// Started is when the final try was sent; Latency how long its answer
	// took (retry waits excluded, so latency checks measure the agent, not
	// the client's backoff).
	Started time.Time
	Latency time.Duration
	// Attempts is how many tries it took (1 without retries).
	Attempts int
	// Host is the host (host:port) that answered: the runner's stop rule
	// counts a host as reached once it answered (runner/stop.go).
	Host string
	// Messaging is set for a turn of a Messaging conversation
	// (MessagingTurn.Exchange): the events and what they said. Result
	// then holds the reply text and the session's end, Request the client
	// event sent and Response the events received, as a JSON array.
	Messaging *reply.Messaging
}

// StartChat creates a debug-chat session with agentID. The result is the
// greeting turn. On error the Exchange, when not nil, holds what is known
// of the failed call (see chat).
func (c *Client) StartChat(ctx context.Context, agentID string, req ChatStart) (*Exchange, error) {
	if err := checkChat(agentID, req.ClientEnv); err != nil {
		return nil, fmt.Errorf("start debug chat: %w", err)
	}
	key := startKey{req.ClientEnv, req.ASRLang, req.TTSLang, req.ConversationID, req.VariantID, req.Channel}
	body, kept, err := chatBody(c, &c.starts, key, req.IntegrationAttributes == nil, req)
	if err != nil {
		return nil, fmt.Errorf("start debug chat with %s: encode request: %w", agentID, err)
	}
	rq := c.chatCall(epChatStart, "v1", "agents", agentID, "debug-chat")
	rq.body, rq.noRetry5xx = body, req.ConversationID != ""
	return c.chat(ctx, &rq, kept, req.ConversationID)
}

// SendTurn sends a user turn into the session conversationID of agentID.
// Like StartChat, it returns a partial Exchange with most errors.
func (c *Client) SendTurn(ctx context.Context, agentID, conversationID string, req ChatTurn) (*Exchange, error) {
	if err := checkChat(agentID, req.ClientEnv); err != nil {
		return nil, fmt.Errorf("send debug-chat turn: %w", err)
	}
	if conversationID == "" {
		return nil, errors.New("send debug-chat turn: conversation id is empty")
	}
	key := turnKey{req.ClientEnv, req.ASRLang, req.TTSLang, req.Message}
	body, kept, err := chatBody(c, &c.turns, key, req.Metadata == nil, req)
	if err != nil {
		return nil, fmt.Errorf("send debug-chat turn to %s: encode request: %w", agentID, err)
	}
	rq := c.chatCall(epChatTurn, "v1", "agents", agentID, "debug-chat", conversationID)
	rq.body = body
	return c.chat(ctx, &rq, kept, conversationID)
}

// startKey and turnKey are the members of a ChatStart and a ChatTurn
// besides their maps: two requests without a map that agree on them have
// the same body (TestChatBodyKeys holds them to the structs' fields).
type (
	startKey struct{ clientEnv, asrLang, ttsLang, conversationID, variantID, channel string }
	turnKey  struct{ clientEnv, asrLang, ttsLang, message string }
)

// clone copies the strings of a key chatBodies keeps, so that it holds
// no more of the caller's memory than they are long.
func (k startKey) clone() startKey {
	return startKey{strings.Clone(k.clientEnv), strings.Clone(k.asrLang), strings.Clone(k.ttsLang),
		strings.Clone(k.conversationID), strings.Clone(k.variantID), strings.Clone(k.channel)}
}

func (k turnKey) clone() turnKey {
	return turnKey{strings.Clone(k.clientEnv), strings.Clone(k.asrLang), strings.Clone(k.ttsLang), strings.Clone(k.message)}
}

// chatKey is startKey or turnKey.
type chatKey[K any] interface {
	comparable
	clone() K
}

// chatBodies remembers the bodies of debug-chat requests by value. Suites
// send the same requests over and over (every scenario's session, its
// greeting, the rows of examples), and encoding/json takes longer to
// encode one than a look-up here: a request without a map member (use)
// is encoded once, up to keepSame of them of at most keepSameMax bytes.
type chatBodies[K chatKey[K]] struct {
	mu sync.Mutex
	m  map[K]chatEncoded
}

// chatEncoded is a request body as sent and its redacted, kept copy
// (Exchange.Request). Neither is ever written to.
type chatEncoded struct{ body, kept []byte }

// chatBody returns the body of the debug-chat request v, whose members
// besides its maps are key, and its redacted, kept copy; use says that v
// has no map member, so key decides the body.
func chatBody[K chatKey[K], V any](c *Client, memo *chatBodies[K], key K, use bool, v V) (body, kept []byte, err error) {
	if use {
		memo.mu.Lock()
		e, ok := memo.m[key]
		memo.mu.Unlock()
		if ok {
			return e.body, e.kept, nil
		}
	}
	if body, err = json.Marshal(v); err != nil {
		return nil, nil, err
	}
	kept = c.kept.request(c.red.JSON(body))
	if use && len(body) <= keepSameMax {
		memo.mu.Lock()
		if memo.m == nil {
			memo.m = make(map[K]chatEncoded)
		}
		if len(memo.m) < keepSame {
			memo.m[key.clone()] = chatEncoded{body, kept}
		}
		memo.mu.Unlock()
	}
	return body, kept, nil
}

func checkChat(agentID, env string) error {
	if agentID == "" {
		return errors.New("agent id is empty")
	}
	if !reply.ValidEnv(env) {
		return fmt.Errorf("client env %q: must be sandbox, pre-release or live", env)
	}
	return nil
}

// chat sends a debug-chat call, whose body's redacted, kept copy is kept
// (chatBody). On failure it still returns an Exchange
// holding what is known (the request, and the status and start of the body
// of an error answer), so a transcript can show the turn that broke.
// conv is the conversation the call is about (the turn's, or a session's
// custom id), "" when the platform chooses it: a result about another
// conversation is the platform's error, never a reply to check (a
// platform that mixes up its sessions would otherwise pass or fail this
// case on another user's conversation).
func (c *Client) chat(ctx context.Context, rq *call, kept []byte, conv string) (*Exchange, error) {
	start := c.now()
	resp, err := c.do(ctx, rq)
	if err != nil {
		// Without an answer, the timing covers every try and wait.
		ex := &Exchange{Request: kept, Started: start, Latency: c.now().Sub(start)}
		var ae *APIError
		var ne *NetworkError
		switch {
		case errors.As(err, &ae):
			ex.Status, ex.Response, ex.Attempts = ae.Status, ae.Body, ae.Attempts
		case errors.As(err, &ne):
			ex.Attempts = ne.Attempts
		}
		return ex, err
	}
	// The body (already redacted by attempt) outlives the pooled buffer:
	// it goes into the transcript, and the decoded result shares its
	// memory (fastTurn), so nothing may write to it from here on.
	raw := c.kept.copy(resp.body())
	resp.release()

	ex := &Exchange{
		Request:  kept,
		Response: raw,
		Status:   resp.status,
		Started:  resp.started,
		Latency:  resp.latency,
		Attempts: resp.attempts,
		Host:     c.hostOf(rq),
	}
	res, err := c.decodeTurn(rq, resp.status, raw, resp.attempts)
	if err != nil {
		return ex, err
	}
	if conv != "" && res.ConversationID != conv {
		return ex, c.responseError(rq, resp.status, raw, aboutAnother("conversationId", res.ConversationID, "conversation", conv))
	}
	ex.Result = res
	return ex, nil
}

// sharedIn returns part as body holds it, when it does: the raw metadata
// then points into the reply body, which the transcript keeps, instead of
// being a second copy (fastTurn's always does); the JSON report needs
// both, and a large run keeps every one of them until the end.
func sharedIn(body, part []byte) []byte {
	if i := bytes.Index(body, part); i >= 0 {
		return body[i : i+len(part) : i+len(part)]
	}
	return part
}

// wireTurn is the debug-chat turn result as sent, plus the members of the
// error body, because some deployments answer 200 with success: false, and
// of a {success, data} envelope around the result.
type wireTurn struct {
	ConversationID    jString         `json:"conversationId"`
	UserInput         jString         `json:"userInput"`
	Response          jString         `json:"response"`
	Metadata          json.RawMessage `json:"metadata"`
	ConversationEnded jBool           `json:"conversationEnded"`
	DelayedResponse   jBool           `json:"delayedResponse"`

	Success      jBool           `json:"success"`
	ErrorCode    jString         `json:"error_code"`
	ErrorMessage jString         `json:"error_message"`
	Error        json.RawMessage `json:"error"`
	Data         json.RawMessage `json:"data"`
}

// decodeTurn decodes a 2xx debug-chat body. The returned error is a
// *ResponseError (or an *APIError for a success: false body), so the runner
// reports the endpoint and status with it.
func (c *Client) decodeTurn(rq *call, status int, body []byte, attempts int) (*reply.TurnResult, error) {
	res, ok := fastTurn(body)
	if !ok {
		var err error
		if res, err = c.decodeWireTurn(rq, status, body, attempts); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// decodeWireTurn is decodeTurn's general path, for every body fastTurn
// leaves to it: it holds all the tolerances and error messages.
func (c *Client) decodeWireTurn(rq *call, status int, body []byte, attempts int) (*reply.TurnResult, error) {
	var w wireTurn
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, c.responseError(rq, status, body, describeDecodeError(err))
	}
	if w.Success.Set && !w.Success.V || (w.ErrorCode.V != "" && !w.ConversationID.Set) {
		code, msg := parseErrorBody(body, "application/json")
		return nil, &APIError{
			Method: rq.ep.method, Endpoint: rq.ep.template, Path: rq.path,
			Status: status, Code: c.red.String(code), Message: c.red.String(msg),
			Attempts: attempts, Body: keepBody(c.red, body),
		}
	}
	turn := body
	if !w.ConversationID.Set && len(w.Data) > 0 && w.Data[0] == '{' {
		// {"success": true, "data": {...turn result...}}
		var inner wireTurn
		if err := json.Unmarshal(w.Data, &inner); err != nil {
			return nil, c.responseError(rq, status, body, describeDecodeError(err))
		}
		w, turn = inner, w.Data
	}
	// fastTurn leaves a body with a member sent twice to this path.
	if err := sentTwice(turn, turnMemberNames[:]); err != nil {
		return nil, c.responseError(rq, status, body, err)
	}
	// The texts stay tolerated as null (read as empty, as other
	// implementations send an empty reply); a null metadata or flag
	// has no value to read.
	if err := required("", []member{
		{"conversationId", w.ConversationID.Set, false},
		{"userInput", w.UserInput.Set, false},
		{"response", w.Response.Set, false},
		{"metadata", len(w.Metadata) > 0, len(w.Metadata) > 0 && w.Metadata[0] == 'n'},
		{"conversationEnded", w.ConversationEnded.Set, w.ConversationEnded.Null},
		{"delayedResponse", w.DelayedResponse.Set, w.DelayedResponse.Null},
	}); err != nil {
		return nil, c.responseError(rq, status, body, err)
	}
	if w.ConversationID.V == "" {
		return nil, c.responseError(rq, status, body, errors.New(`field "conversationId" is empty`))
	}
	res := &reply.TurnResult{
		ConversationID:    w.ConversationID.V,
		UserInput:         w.UserInput.V,
		Response:          w.Response.V,
		ConversationEnded: w.ConversationEnded.V,
		DelayedResponse:   w.DelayedResponse.V,
	}
	var md reply.Metadata
	switch {
	case w.Metadata[0] == '{':
		if err := json.Unmarshal(w.Metadata, &md); err != nil {
			return nil, c.responseError(rq, status, body, fmt.Errorf("field \"metadata\": %w", describeDecodeError(err)))
		}
		// fastTurn leaves a metadata member sent twice to this path.
		if err := metadataSentTwice(w.Metadata); err != nil {
			return nil, c.responseError(rq, status, body, err)
		}
		res.RawMetadata = sharedIn(body, w.Metadata)
	case emptyArray(w.Metadata):
		// An empty map written as [] (emptyArray): no members.
		md = reply.Metadata{}
		res.RawMetadata = json.RawMessage("{}")
	default:
		return nil, c.responseError(rq, status, body,
			fmt.Errorf("field \"metadata\": expected an object, got %s", jsonKind(w.Metadata)))
	}
	// The types of its members, as fastTurn checks them (it leaves a
	// body whose metadata Check refuses to this path, for this error).
	if err := md.Check(); err != nil {
		return nil, c.responseError(rq, status, body, err)
	}
	res.SetMetadata(md)
	return res, nil
}
