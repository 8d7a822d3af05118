package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agenttest/agenttest/internal/sim/agent"
)

// maxBodyBytes bounds request bodies; the reference gives no limit.
const maxBodyBytes = 1 << 20

// clientEnvs is the environment enum of the platform (clientEnv of the
// debug-chat bodies, client_env of the conversations list, the
// environments of numbers and SMS tokens), as the agent definitions name
// them. The simulator keeps its own copy: it imports nothing of the
// harness it is tested with.
var clientEnvs = agent.Environments

func validEnv(env string) bool {
	return slices.Contains(clientEnvs, env)
}

// chatCreateRequest is the body of POST /v1/agents/{agentId}/debug-chat.
type chatCreateRequest struct {
	ClientEnv             string         `json:"clientEnv"`
	ASRLangCode           string         `json:"asrLangCode"`
	TTSLangCode           string         `json:"ttsLangCode"`
	ConversationID        string         `json:"conversationId"`
	VariantID             string         `json:"variantId"`
	Channel               string         `json:"channel"`
	IntegrationAttributes map[string]any `json:"integrationAttributes"`
}

// chatTurnRequest is the body of POST /v1/agents/{agentId}/debug-chat/{conversationId}.
type chatTurnRequest struct {
	ClientEnv   string         `json:"clientEnv"`
	ASRLangCode string         `json:"asrLangCode"`
	TTSLangCode string         `json:"ttsLangCode"`
	Message     string         `json:"message"`
	Metadata    map[string]any `json:"metadata"`
}

// turnResult is the reference's Debug chat turn result.
type turnResult struct {
	ConversationID    string         `json:"conversationId"`
	UserInput         string         `json:"userInput"`
	Response          string         `json:"response"`
	Metadata          agent.Metadata `json:"metadata"`
	ConversationEnded bool           `json:"conversationEnded"`
	DelayedResponse   bool           `json:"delayedResponse"`
}

// chatSession is a live debug-chat session. agent.Session is not safe for
// concurrent use, so every use holds mu.
type chatSession struct {
	mu         sync.Mutex
	agentID    string
	sess       *agent.Session
	conv       *Conversation
	lastActive time.Time
	closed     bool // ended or idled out; no longer in the table
}

// sessionTable holds the live sessions. Ended and idled-out sessions leave
// it; their records stay in the store, which is what lets a late turn tell
// CHAT_TIMEOUT from CONVERSATIONS_NOT_FOUND without unbounded memory.
type sessionTable struct {
	mu sync.RWMutex
	m  map[string]*chatSession
	// order holds the sessions in the order they opened, the oldest
	// first, for idling out the oldest when there are too many; closed
	// ones are skipped, and dropped when they are most of it.
	order []*chatSession
}

func (t *sessionTable) get(id string) (*chatSession, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	cs, ok := t.m[id]
	return cs, ok
}

// put adds a live session and returns the sessions beyond limit, the
// oldest first, for the caller to idle out.
func (t *sessionTable) put(id string, cs *chatSession, limit int) []*chatSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[id] = cs
	t.order = append(t.order, cs)
	var over []*chatSession
	for n := len(t.m) - limit; n > 0 && len(t.order) > 0; {
		old := t.order[0]
		t.order[0] = nil
		t.order = t.order[1:]
		if t.m[old.conv.ID] == old && old != cs {
			over = append(over, old)
			n--
		}
	}
	if len(t.order) > 2*len(t.m)+64 {
		live := make([]*chatSession, 0, len(t.m))
		for _, s := range t.order {
			if t.m[s.conv.ID] == s {
				live = append(live, s)
			}
		}
		t.order = live
	}
	return over
}

func (t *sessionTable) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}

// Len is the number of live sessions.
func (t *sessionTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.m)
}

func (t *sessionTable) all() []*chatSession {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]*chatSession, 0, len(t.m))
	for _, cs := range t.m {
		out = append(out, cs)
	}
	return out
}

// LiveSessions is the number of debug-chat sessions held in memory.
func (s *Server) LiveSessions() int { return s.sessions.Len() }

// decodeBody reads a JSON body into v; an empty body decodes as {}.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBodyBytes))
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("malformed JSON body: %v", err)
	}
	return nil
}

func checkClientEnv(env string) string {
	switch {
	case env == "":
		return "clientEnv is required: one of " + strings.Join(clientEnvs, ", ")
	case !validEnv(env):
		return fmt.Sprintf("clientEnv %q is not one of %s", env, strings.Join(clientEnvs, ", "))
	}
	return ""
}

// validConversationID accepts the characters that survive a URL path
// segment unescaped.
func validConversationID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !isAlnum(r) && r != '-' && r != '_' && r != '.' {
			return false
		}
	}
	return true
}

func (s *Server) handleChatCreate(w http.ResponseWriter, r *http.Request, k keyScope) {
	def, agentID := s.resolveAgent(w, familyDebugChat, k, r.PathValue("agentId"))
	if def == nil {
		return
	}
	var req chatCreateRequest
	if err := decodeBody(r, &req); err != nil {
		s.fail(w, familyDebugChat, CodeInvalidRequest, err.Error())
		return
	}
	if msg := checkClientEnv(req.ClientEnv); msg != "" {
		s.fail(w, familyDebugChat, CodeInvalidRequest, msg)
		return
	}
	// The version the environment serves decides the variants too.
	def = s.served(agentID, req.ClientEnv)
	variantName := ""
	if req.VariantID != "" {
		name, ok := def.VariantName(req.VariantID)
		if !ok {
			s.fail(w, familyDebugChat, CodeInvalidRequest, fmt.Sprintf("variantId %q is not a variant of agent %q", req.VariantID, agentID))
			return
		}
		variantName = name
	}
	id := req.ConversationID
	if id == "" {
		id = s.newConversationID()
	} else if !validConversationID(id) {
		s.fail(w, familyDebugChat, CodeInvalidRequest, fmt.Sprintf("conversationId %q: use letters, digits, '-', '_' or '.', at most 128", id))
		return
	}
	channel := req.Channel
	if channel == "" {
		channel = defaultChatChannel
	}
	cs, reply, ok := s.openConversation(r.Context(), def, agentID, convStart{
		id: id, env: req.ClientEnv, channel: channel, variantID: req.VariantID, variantName: variantName,
		asr: req.ASRLangCode, tts: req.TTSLangCode, attrs: req.IntegrationAttributes,
	})
	if !ok {
		s.fail(w, familyDebugChat, CodeConversationExists, fmt.Sprintf("conversation %q already exists", id))
		return
	}
	if !reply.Ended {
		// Beyond the store's capacity the sessions opened first idle out,
		// as a platform ends sessions under pressure: memory stays
		// bounded however many conversations a run opens.
		for _, old := range s.sessions.put(id, cs, s.opts.StoreCap) {
			if old.mu.TryLock() { // else in use: not idle
				if !old.closed {
					s.closeSession(old, s.opts.Now().UTC(), true)
				}
				old.mu.Unlock()
			}
		}
	}
	writeJSON(w, http.StatusOK, resultOf(id, "", reply))
}

// convStart is what a new conversation needs besides its agent: the
// parameters of a debug-chat create call, or of a messaging join.
type convStart struct {
	id, env, channel       string
	variantID, variantName string
	asr, tts               string
	attrs                  map[string]any
}

// openConversation starts a session of the agent, stores its conversation
// with the greeting as the first turn and returns it with the greeting.
// ok is false when the conversation id is taken. The session is in no
// table yet: the caller decides who holds it (debug chat's session table,
// a messaging session). ctx bounds the agent's think time.
func (s *Server) openConversation(ctx context.Context, def *agent.Definition, agentID string, st convStart) (*chatSession, agent.Reply, bool) {
	now := s.opts.Now().UTC()
	sess := s.newSession(def, agent.SessionOptions{
		ConversationID:        st.id,
		Env:                   st.env,
		Channel:               st.channel,
		VariantID:             st.variantID,
		ASRLang:               st.asr,
		TTSLang:               st.tts,
		IntegrationAttributes: st.attrs,
		Now:                   s.opts.Now,
	})
	reply := sess.Start()
	s.think(ctx, reply.Latency)
	done := s.opts.Now().UTC()
	conv := &Conversation{
		ID:          st.id,
		AccountID:   s.opts.AccountID,
		ProjectID:   agentID,
		VariantID:   st.variantID,
		VariantName: st.variantName,
		Environment: st.env,
		Channel:     st.channel,
		StartedAt:   now.Truncate(time.Millisecond),
	}
	// The numbers are the agent's built-in state, which the greeting carries.
	conv.FromNumber, _ = reply.Metadata.State["from_"].(string)
	conv.ToNumber, _ = reply.Metadata.State["to"].(string)
	if !s.store.Add(conv) {
		return nil, reply, false
	}
	cs := &chatSession{agentID: agentID, sess: sess, conv: conv, lastActive: done}
	s.record(cs, "", nil, now, done, reply)
	return cs, reply, true
}

func (s *Server) handleChatTurn(w http.ResponseWriter, r *http.Request, k keyScope) {
	def, agentID := s.resolveAgent(w, familyDebugChat, k, r.PathValue("agentId"))
	if def == nil {
		return
	}
	var req chatTurnRequest
	if err := decodeBody(r, &req); err != nil {
		s.fail(w, familyDebugChat, CodeInvalidRequest, err.Error())
		return
	}
	if msg := checkClientEnv(req.ClientEnv); msg != "" {
		s.fail(w, familyDebugChat, CodeInvalidRequest, msg)
		return
	}
	id := r.PathValue("conversationId")
	cs, ok := s.sessions.get(id)
	if !ok || cs.agentID != agentID {
		s.failGone(w, id, agentID)
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		s.failGone(w, id, agentID)
		return
	}
	now := s.opts.Now().UTC()
	idle := now.Sub(cs.lastActive) > s.opts.ChatIdleTimeout
	if idle || s.faults.chatTimeout() {
		end := now
		if idle {
			// It idled out when the limit passed, as sweep dates it: the
			// record must not depend on which of the two noticed first.
			end = cs.lastActive.Add(s.opts.ChatIdleTimeout)
		}
		s.closeSession(cs, end, true)
		s.fail(w, familyDebugChat, CodeChatTimeout, fmt.Sprintf("chat session %q exceeded the timeout limit", id))
		return
	}
	reply := cs.sess.Turn(req.Message, req.Metadata)
	s.think(r.Context(), reply.Latency)
	done := s.opts.Now().UTC()
	s.record(cs, req.Message, req.Metadata, now, done, reply)
	cs.lastActive = done
	writeJSON(w, http.StatusOK, resultOf(id, req.Message, reply))
}

// failGone answers a turn for a session that is not live: it idled out,
// ended, or never existed.
func (s *Server) failGone(w http.ResponseWriter, id, agentID string) {
	conv, ok := s.store.Get(id)
	switch {
	case ok && conv.ProjectID == agentID && conv.TimedOut():
		s.fail(w, familyDebugChat, CodeChatTimeout, fmt.Sprintf("chat session %q exceeded the timeout limit", id))
	case ok && conv.ProjectID == agentID && !conv.InProgress():
		s.fail(w, familyDebugChat, CodeConversationEnded, fmt.Sprintf("conversation %q has ended", id))
	default:
		s.fail(w, familyDebugChat, CodeConversationsNotFound, fmt.Sprintf("conversation %q not found", id))
	}
}

// record stores one exchange (the greeting has an empty user input) and
// ends the session when the agent ended the conversation. cs.mu is held
// or cs is not yet shared.
func (s *Server) record(cs *chatSession, input string, _ map[string]any, at, done time.Time, reply agent.Reply) {
	md := reply.Metadata
	t := Turn{
		UserInput:       input,
		UserInputAt:     at,
		AgentResponse:   reply.Response,
		AgentResponseAt: done,
		Latency:         done.Sub(at),
		Intents:         reply.Intents,
		Entities:        reply.Entities,
		IsOOD:           reply.IsOOD,
		IsSilence:       reply.IsSilence,
		GenAI:           genAIMetadata(md),
		FunctionErrors:  reply.FunctionErrors,
	}
	u := TurnUpdate{State: md.State, Metrics: md.Metrics}
	if h := reply.Handoff; h != nil {
		u.Handoff = &HandoffRecord{Destination: h.Destination, Reason: h.Reason, SharedID: h.SharedID, Data: h.Data}
	}
	cs.conv.AppendTurn(t, u)
	if u.Handoff != nil {
		s.store.IndexSharedID(cs.conv, u.Handoff.SharedID)
	}
	if reply.Ended {
		s.closeSession(cs, done, false)
	}
}

// closeSession ends a session's conversation and drops it from memory.
func (s *Server) closeSession(cs *chatSession, at time.Time, timedOut bool) {
	cs.closed = true
	s.store.End(cs.conv, at, timedOut)
	s.sessions.remove(cs.conv.ID)
	cs.sess = nil
}

// sweep ends every session idle past the limit, so its memory is freed
// and its conversation stops being in progress. The janitor loop runs it
// every Options.JanitorInterval.
func (s *Server) sweep() {
	now := s.opts.Now().UTC()
	for _, cs := range s.sessions.all() {
		if !cs.mu.TryLock() {
			continue // in use, so not idle
		}
		if !cs.closed && now.Sub(cs.lastActive) > s.opts.ChatIdleTimeout {
			s.closeSession(cs, cs.lastActive.Add(s.opts.ChatIdleTimeout), true)
		}
		cs.mu.Unlock()
	}
}

func resultOf(id, input string, reply agent.Reply) turnResult {
	md := reply.Metadata
	if md.State == nil {
		md.State = map[string]any{}
	}
	if md.NodeTrace == nil {
		md.NodeTrace = []string{}
	}
	return turnResult{
		ConversationID:    id,
		UserInput:         input,
		Response:          reply.Response,
		Metadata:          md,
		ConversationEnded: reply.Ended,
		DelayedResponse:   reply.Delayed,
	}
}

// genAIMetadata is what include_turn_metadata adds to a stored turn: the
// generative-AI members of the debug-chat metadata.
func genAIMetadata(md agent.Metadata) map[string]any {
	m := map[string]any{}
	if len(md.LLMRequests) > 0 {
		m["llmRequests"] = md.LLMRequests
	}
	if len(md.RetrievedTopics) > 0 {
		m["retrievedTopics"] = md.RetrievedTopics
	}
	if len(md.RetrievedSources) > 0 {
		m["retrievedSources"] = md.RetrievedSources
	}
	if md.CitedTopic != "" {
		m["citedTopic"] = md.CitedTopic
	}
	if md.InFlow != "" {
		m["inFlow"] = md.InFlow
	}
	if md.InStep != "" {
		m["inStep"] = md.InStep
	}
	return m
}

// newConversationID makes a server-unique id, reproducible under a seed.
func (s *Server) newConversationID() string {
	n := s.convSeq.Add(1)
	return fmt.Sprintf("conv-%016x", splitmix64(uint64(s.opts.Seed)^splitmix64(n)))
}

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// isVoice reports whether a channel carries audio (and so a recording).
func isVoice(channel string) bool { return strings.HasPrefix(channel, "VOICE") }
