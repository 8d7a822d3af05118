package sim

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
)

// This file serves the HTTP steps of the real-time Messaging API on the
// messaging host ({messaging_url}): connectors, the access token (a JWT),
// session creation, and the session table with its expiry. The WebSocket
// and the event log are in messaging_ws.go; names and numbers the
// reference leaves open are in choices.go.

// MessagingOptions configure the Messaging API. The zero value serves one
// connector per agent and environment (Info.MessagingConnectors) on the
// registered domain DefaultMessagingHost, with the default limits.
type MessagingOptions struct {
	// Connectors are served besides the default ones; a connector with
	// the token of a default one replaces it.
	Connectors []MessagingConnector
	// SessionExpiry is how long a session may go without a client event
	// or a handshake before it expires: SESSION_END with reason
	// "expired", then 404 on the handshake. Default DefaultSessionExpiry.
	// Expiry runs on the server clock, at each Tick and on the next
	// event of the session.
	SessionExpiry time.Duration
	// TokenLifetime is how long an access token is valid; default
	// DefaultTokenLifetime.
	TokenLifetime time.Duration
	// MaxConnections is the number of simultaneous sockets of a session;
	// one more is refused with 429. Default DefaultMaxConnections.
	MaxConnections int
	// HandshakeRate (per second, burst HandshakeBurst) limits the
	// WebSocket handshakes of one session: beyond it, 429 with
	// Retry-After. MessageRate (burst MessageBurst) limits the client
	// events of one session: beyond it they are dropped unanswered.
	// Zero values take the Default* numbers.
	HandshakeRate  float64
	HandshakeBurst int
	MessageRate    float64
	MessageBurst   int
	// Unlimited turns the per-session rate limits off.
	Unlimited bool
	// LiveAgent is the live agent that handoffs reach.
	LiveAgent LiveAgentOptions
}

// MessagingConnector is a web-chat connector: the token a site or app
// exchanges for an access token, the domain it is registered to, and the
// agent and environment its conversations run on.
type MessagingConnector struct {
	// Token is the X-Token value: at least 12 characters.
	Token string
	// Host is the registered domain (subdomains are accepted) or app
	// namespace. Empty is a connector without a host domain, which the
	// access-token step refuses.
	Host string
	// AgentID is a served agent. Required.
	AgentID string
	// Env is sandbox, pre-release or live; default sandbox.
	Env string
}

// LiveAgentOptions script the human agent a handoff reaches. The zero
// value is an available live agent who greets, answers every message
// with DefaultReply and ends the chat when the user says goodbye.
type LiveAgentOptions struct {
	// Absent: nobody picks up, every handoff fails with "Sorry, we could
	// not connect you to an agent. Please try again.".
	Absent bool
	// Destinations the handoff provider accepts; a handoff to any other
	// is refused with "Sorry, handoff could not be initiated.". Empty
	// accepts every destination.
	Destinations []string
	// Name of the live agent; default DefaultLiveAgentName.
	Name string
	// Greeting is the live agent's first message.
	Greeting string
	// Script answers user messages: the first line whose Contains occurs
	// in the message (case-insensitive; "" matches anything) wins.
	// Without a match DefaultReply answers. The default script ends the
	// chat on "bye".
	Script []LiveAgentLine
	// DefaultReply answers messages no line matches.
	DefaultReply string
	// ForwardFailures are the 1-based positions of user messages during
	// a handoff that are not delivered ("Failed to forward message to
	// live agent").
	ForwardFailures []int
}

// LiveAgentLine is one scripted answer of the live agent.
type LiveAgentLine struct {
	// Contains selects the messages this line answers (case-insensitive).
	Contains string
	// Reply is the live agent's answer.
	Reply string
	// End closes the chat after the reply: SESSION_END with reason
	// "live_agent_ended".
	End bool
}

func (m MessagingOptions) validate() error {
	var errs []error
	if m.SessionExpiry < 0 || m.TokenLifetime < 0 {
		errs = append(errs, errors.New("messaging session expiry and token lifetime must not be negative"))
	}
	if m.MaxConnections < 0 || m.HandshakeBurst < 0 || m.MessageBurst < 0 || !validRate(m.HandshakeRate) || !validRate(m.MessageRate) {
		errs = append(errs, errors.New("messaging connection limit and bursts must not be negative, and rates must be finite and not negative"))
	}
	for i, c := range m.Connectors {
		if len(c.Token) < 12 {
			errs = append(errs, fmt.Errorf("messaging connector %d: token must have at least 12 characters", i+1))
		}
		if c.AgentID == "" {
			errs = append(errs, fmt.Errorf("messaging connector %d: agent id is required", i+1))
		}
		if c.Env != "" && !validEnv(c.Env) {
			errs = append(errs, fmt.Errorf("messaging connector %d: env %q is not one of %s", i+1, c.Env, strings.Join(clientEnvs, ", ")))
		}
	}
	for _, n := range m.LiveAgent.ForwardFailures {
		if n < 1 {
			errs = append(errs, fmt.Errorf("live agent forward failure %d: positions start at 1", n))
		}
	}
	return errors.Join(errs...)
}

func (m MessagingOptions) withDefaults() MessagingOptions {
	if m.SessionExpiry == 0 {
		m.SessionExpiry = DefaultSessionExpiry
	}
	if m.TokenLifetime == 0 {
		m.TokenLifetime = DefaultTokenLifetime
	}
	if m.MaxConnections == 0 {
		m.MaxConnections = DefaultMaxConnections
	}
	if m.HandshakeRate == 0 {
		m.HandshakeRate = DefaultHandshakeRate
	}
	if m.HandshakeBurst == 0 {
		m.HandshakeBurst = DefaultHandshakeBurst
	}
	if m.MessageRate == 0 {
		m.MessageRate = DefaultMessageRate
	}
	if m.MessageBurst == 0 {
		m.MessageBurst = DefaultMessageBurst
	}
	la := &m.LiveAgent
	if la.Name == "" {
		la.Name = DefaultLiveAgentName
	}
	if la.Greeting == "" {
		la.Greeting = strings.Replace(defaultLiveAgentGreeting, DefaultLiveAgentName, la.Name, 1)
	}
	if la.DefaultReply == "" {
		la.DefaultReply = defaultLiveAgentReply
	}
	if la.Script == nil {
		la.Script = []LiveAgentLine{{Contains: "bye", Reply: defaultLiveAgentBye, End: true}}
	}
	return m
}

// connector is a served connector with its public id (the JWT subject:
// the token itself never goes into a token anyone can decode).
type connector struct {
	MessagingConnector
	id string
}

// messagingState is the server's Messaging API: connectors, the token
// key, live sessions and counters.
type messagingState struct {
	opts   MessagingOptions
	names  messagingNames
	jwtKey []byte

	connMu     sync.RWMutex
	connectors map[string]*connector // by token

	mu       sync.Mutex
	sessions map[string]*msgSession

	stats messagingCounters
}

// messagingCounters count what tests and benchmarks look at.
type messagingCounters struct {
	tokens, sessions, handshakes, duplicateJoins    atomic.Int64
	droppedEvents, droppedSockets, slowDisconnected atomic.Int64
	openSockets, normalClosures                     atomic.Int64
}

// MessagingStats is a snapshot of the Messaging API's counters.
type MessagingStats struct {
	// Tokens and Sessions count successful access-token and session calls.
	Tokens, Sessions int64
	// LiveSessions are the sessions held in memory (ended ones stay until
	// they expire, so a reconnect can replay their end).
	LiveSessions int
	// Handshakes counts accepted WebSocket upgrades; OpenSockets the ones
	// open now.
	Handshakes, OpenSockets int64
	// DuplicateJoins counts join requests on a session whose agent had
	// already joined: a client that reconnects correctly sends none.
	DuplicateJoins int64
	// DroppedEvents counts client events dropped by the per-session
	// message rate; DroppedSockets sockets dropped by the SocketDrop
	// fault; SlowDisconnected sockets closed because their reader fell
	// behind by more than the send queue.
	DroppedEvents, DroppedSockets, SlowDisconnected int64
	// NormalClosures counts sockets the client closed with a normal
	// closure (1000): a close frame, not a connection that went away.
	// The sockets the simulator closed itself are not counted.
	NormalClosures int64
}

// MessagingStats returns the Messaging API's counters.
func (s *Server) MessagingStats() MessagingStats {
	m := s.msg
	m.mu.Lock()
	live := len(m.sessions)
	m.mu.Unlock()
	c := &m.stats
	return MessagingStats{
		Tokens: c.tokens.Load(), Sessions: c.sessions.Load(), LiveSessions: live,
		Handshakes: c.handshakes.Load(), OpenSockets: c.openSockets.Load(),
		DuplicateJoins: c.duplicateJoins.Load(), DroppedEvents: c.droppedEvents.Load(),
		DroppedSockets: c.droppedSockets.Load(), SlowDisconnected: c.slowDisconnected.Load(),
		NormalClosures: c.normalClosures.Load(),
	}
}

// newMessaging builds the connectors (defaults, then the configured ones)
// and fills the messaging part of Info. The agent ids are known by now.
func (s *Server) newMessaging() error {
	o := s.opts.Messaging
	m := &messagingState{
		opts:       o,
		names:      newMessagingNames(s.opts.Brand),
		connectors: map[string]*connector{},
		sessions:   map[string]*msgSession{},
	}
	key := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("agenttest-sim-jwt\x00"), uint64(s.opts.Seed)))
	m.jwtKey = key[:]
	s.info.MessagingHost = DefaultMessagingHost
	s.info.MessagingConnectors = map[string]map[string]string{}
	add := func(c MessagingConnector) {
		if c.Env == "" {
			c.Env = agentDefaultEnv
		}
		h := sha256.Sum256([]byte("connector\x00" + c.Token))
		m.connectors[c.Token] = &connector{MessagingConnector: c, id: "con_" + hex.EncodeToString(h[:8])}
	}
	for _, id := range s.agentIDs {
		s.info.MessagingConnectors[id] = map[string]string{}
		for _, env := range clientEnvs {
			tok := defaultConnectorToken(id, env)
			add(MessagingConnector{Token: tok, Host: DefaultMessagingHost, AgentID: id, Env: env})
			s.info.MessagingConnectors[id][env] = tok
		}
	}
	for i, c := range o.Connectors {
		if _, ok := s.agents[c.AgentID]; !ok {
			return fmt.Errorf("messaging connector %d: agent %q is not served", i+1, c.AgentID)
		}
		add(c)
	}
	s.msg = m
	return nil
}

// agentDefaultEnv is the environment of a connector that names none.
const agentDefaultEnv = "sandbox"

// defaultConnectorToken derives a stable, random-looking connector token
// for an agent and environment.
func defaultConnectorToken(agentID, env string) string {
	h := sha256.Sum256([]byte("agenttest-sim-connector\x00" + agentID + "\x00" + env))
	return "ct_" + hex.EncodeToString(h[:])[:connectorTokenLen]
}

// RevokeConnector withdraws a connector token: new access tokens are
// refused, and the next event of a session made with it gets "Error:
// Connector not found" and ends the session. It reports whether the
// token was served.
func (s *Server) RevokeConnector(token string) bool {
	m := s.msg
	m.connMu.Lock()
	defer m.connMu.Unlock()
	_, ok := m.connectors[token]
	delete(m.connectors, token)
	return ok
}

func (m *messagingState) connector(token string) (*connector, bool) {
	m.connMu.RLock()
	defer m.connMu.RUnlock()
	c, ok := m.connectors[token]
	return c, ok
}

// connectorByID finds a connector by its public id (the JWT subject).
func (m *messagingState) connectorByID(id string) (*connector, bool) {
	m.connMu.RLock()
	defer m.connMu.RUnlock()
	for _, c := range m.connectors {
		if c.id == id {
			return c, true
		}
	}
	return nil, false
}

// hostMatches is the reference's rule 4: a connector registered to a
// domain accepts the domain and its subdomains; an app namespace must
// match exactly. Host names compare case-insensitively.
func hostMatches(registered, given string) bool {
	r, g := strings.ToLower(registered), strings.ToLower(strings.TrimSpace(given))
	return g == r || strings.HasSuffix(g, "."+r)
}

// messagingError is the error body of the messaging host: the reference
// gives the texts, the shape is the simulator's choice.
type messagingError struct {
	Error string `json:"error"`
}

func failMessaging(w http.ResponseWriter, status int, text string) {
	writeJSON(w, status, messagingError{Error: text})
}

// messagingRoute is one HTTP endpoint of the messaging host. The group
// authenticates in its handlers (connector token, JWT), not by API key.
type messagingRoute struct {
	pattern string
	handle  func(s *Server, w http.ResponseWriter, r *http.Request)
	// internal is the text of an injected 500 (the reference's row for
	// the step).
	internal string
}

var messagingRoutes = []messagingRoute{
	{"POST /api/v1/access-token", (*Server).handleAccessToken, errTokenInternal},
	{"POST /api/v1/sessions", (*Server).handleSessionCreate, errSessionInternal},
	{"GET /ws", (*Server).handleSocket, errWSInternal},
}

// messagingEndpoint wraps a messaging route with the request-level faults,
// answered in the group's error body, and the traffic counters.
func (s *Server) messagingEndpoint(mr messagingRoute) http.Handler {
	rt := route{fam: familyMessaging}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := &statusWriter{ResponseWriter: rw}
		defer s.countRequest(rt, w, r)
		switch s.faults.pick(r, s.opts.Sleep) {
		case faultAborted:
			return
		case faultDrop:
			dropConnection(w)
			return
		case fault500:
			failMessaging(w, http.StatusInternalServerError, mr.internal)
			return
		case fault429:
			w.Header().Set("Retry-After", s.faults.retryAfter())
			failMessaging(w, http.StatusTooManyRequests, errRateLimited)
			return
		}
		mr.handle(s, w, r)
	})
}

// readJSONObject reads an optional JSON object body. An empty body is
// nil; anything but one object (and whitespace) is an error.
func readJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBodyBytes {
		return nil, errors.New("body too large")
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// handleAccessToken is step 1: X-Token and X-Host for a JWT.
func (s *Server) handleAccessToken(w http.ResponseWriter, r *http.Request) {
	token, host := r.Header.Get("X-Token"), r.Header.Get("X-Host")
	if token == "" || host == "" {
		failMessaging(w, http.StatusUnauthorized, errMissingAuthHeaders)
		return
	}
	c, ok := s.msg.connector(token)
	switch {
	case !ok:
		failMessaging(w, http.StatusUnauthorized, errUnknownConnector)
		return
	case c.Host == "":
		failMessaging(w, http.StatusUnauthorized, errConnectorNoHost)
		return
	case !hostMatches(c.Host, host):
		failMessaging(w, http.StatusUnauthorized, errConnectorHost)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		failMessaging(w, http.StatusBadRequest, "Missing required header Content-Type: application/json")
		return
	}
	if _, err := readJSONObject(r); err != nil {
		failMessaging(w, http.StatusBadRequest, errParsing)
		return
	}
	now := s.opts.Now().UTC()
	life := s.opts.Messaging.TokenLifetime
	jwt := s.msg.mint(tokenClaims{
		Issuer: tokenIssuer, Audience: tokenAudience, Subject: c.id, Host: strings.ToLower(host),
		IssuedAt: now.Unix(), Expires: now.Add(life).Unix(), ID: s.newID("tok_"),
	})
	s.msg.stats.tokens.Add(1)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": jwt,
		"token_type":   "Bearer",
		"expires_in":   int(life / time.Second),
	})
}

// handleSessionCreate is step 2: a session for the bearer's connector.
func (s *Server) handleSessionCreate(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		failMessaging(w, http.StatusBadRequest, errMissingToken)
		return
	}
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		failMessaging(w, http.StatusUnauthorized, errMissingAuthHeaders)
		return
	}
	now := s.opts.Now().UTC()
	claims, err := s.msg.verify(strings.TrimSpace(tok), now)
	if err != nil {
		failMessaging(w, http.StatusUnauthorized, errInvalidToken)
		return
	}
	c, ok := s.msg.connectorByID(claims.Subject)
	if !ok {
		failMessaging(w, http.StatusUnauthorized, errInvalidToken)
		return
	}
	body, err := readJSONObject(r)
	if err != nil {
		failMessaging(w, http.StatusBadRequest, errParsing)
		return
	}
	streaming := false
	if raw, ok := body["streaming_enabled"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &streaming); err != nil {
			failMessaging(w, http.StatusBadRequest, errParsing)
			return
		}
	}
	// conversation_id, beyond the reference's body, names the
	// conversation the agent's join opens, as debug chat's create call
	// does: its draws are seeded by that name, not by the order in which
	// sessions join.
	name := ""
	if raw, ok := body["conversation_id"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &name); err != nil {
			failMessaging(w, http.StatusBadRequest, errParsing)
			return
		}
		if !validConversationID(name) {
			failMessaging(w, http.StatusBadRequest, fmt.Sprintf("conversation_id %q: use letters, digits, '-', '_' or '.', at most 128", name))
			return
		}
		if _, taken := s.store.Get(name); taken {
			failMessaging(w, http.StatusConflict, fmt.Sprintf("conversation %q already exists", name))
			return
		}
	}
	ms := s.newMsgSession(c, claims.ID, streaming, name, now)
	s.msg.stats.sessions.Add(1)
	writeJSON(w, http.StatusOK, map[string]any{"session_id": ms.id, "streaming_enabled": streaming})
}

// expireMessaging ends the sessions idle past the expiry and forgets
// those whose end is older than it; Tick calls it.
func (s *Server) expireMessaging(now time.Time) {
	m := s.msg
	m.mu.Lock()
	all := make([]*msgSession, 0, len(m.sessions))
	for _, ms := range m.sessions {
		all = append(all, ms)
	}
	m.mu.Unlock()
	for _, ms := range all {
		ms.mu.Lock()
		if ms.expired(now, m.opts.SessionExpiry) {
			s.expireLocked(ms, false)
		}
		ms.mu.Unlock()
	}
}

// lookupSession returns a session still in the table.
func (m *messagingState) lookupSession(id string) (*msgSession, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sessions[id]
	return ms, ok
}

func (m *messagingState) forget(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
}

// closeSockets drops every open socket (server shutdown): hijacked
// connections are not closed by http.Server.
func (m *messagingState) closeSockets() {
	m.mu.Lock()
	all := make([]*msgSession, 0, len(m.sessions))
	for _, ms := range m.sessions {
		all = append(all, ms)
	}
	m.mu.Unlock()
	for _, ms := range all {
		ms.mu.Lock()
		for sc := range ms.conns {
			ms.detachLocked(sc, endKill)
		}
		ms.mu.Unlock()
	}
}

// tokenClaims are the access token's claims.
type tokenClaims struct {
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
	Subject  string `json:"sub"` // the connector's public id
	Host     string `json:"host"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	ID       string `json:"jti"` // sessions are bound to it
}

var (
	jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	b64       = base64.RawURLEncoding
)

// mint signs claims as an HS256 JWT.
func (m *messagingState) mint(c tokenClaims) string {
	payload, _ := json.Marshal(c) // plain struct of strings and ints
	signing := jwtHeader + "." + b64.EncodeToString(payload)
	return signing + "." + b64.EncodeToString(m.sign(signing))
}

func (m *messagingState) sign(s string) []byte {
	mac := hmac.New(sha256.New, m.jwtKey)
	mac.Write([]byte(s))
	return mac.Sum(nil)
}

// verify checks a JWT's form, signature, audience and lifetime.
func (m *messagingState) verify(tok string, now time.Time) (tokenClaims, error) {
	var c tokenClaims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != jwtHeader {
		return c, errors.New("malformed token")
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, m.sign(parts[0]+"."+parts[1])) {
		return c, errors.New("bad signature")
	}
	payload, err := b64.DecodeString(parts[1])
	if err != nil || json.Unmarshal(payload, &c) != nil {
		return c, errors.New("malformed claims")
	}
	if c.Audience != tokenAudience || c.ID == "" {
		return c, errors.New("wrong audience")
	}
	if now.Unix() >= c.Expires {
		return c, errors.New("expired")
	}
	return c, nil
}

// messagingNames are the event names holding the brand word.
type messagingNames struct {
	join, joined, message, chunk, typing string
	// client and serverOnly classify a received type.
	client, serverOnly map[string]bool
}

func newMessagingNames(b string) messagingNames {
	w := brand.EventWord(b)
	n := messagingNames{
		join:    fmt.Sprintf(evJoinPattern, w),
		joined:  fmt.Sprintf(evJoinedPattern, w),
		message: fmt.Sprintf(evMessagePattern, w),
		chunk:   fmt.Sprintf(evChunkPattern, w),
		typing:  fmt.Sprintf(evTypingPattern, w),
	}
	n.client = map[string]bool{n.join: true, EvUserMessage: true, EvUserTyping: true, EvRequestLive: true, EvEndSession: true}
	n.serverOnly = map[string]bool{}
	for _, t := range []string{EvEventBatch, EvSystemMessage, EvSessionEnd, EvHandoffInitiated, EvLiveAgentJoined, EvLiveAgentMessage,
		n.joined, n.message, n.chunk, n.typing} {
		n.serverOnly[t] = true
	}
	return n
}

// MessagingEventNames lists the event types of a brand: the five client
// events first (the join request first), then the server events.
func MessagingEventNames(b string) (client, server []string) {
	n := newMessagingNames(b)
	return []string{n.join, EvUserMessage, EvUserTyping, EvRequestLive, EvEndSession},
		[]string{EvEventBatch, n.joined, n.message, n.chunk, n.typing, EvSystemMessage, EvSessionEnd, EvHandoffInitiated, EvLiveAgentJoined, EvLiveAgentMessage}
}

// retryAfterHeader renders a limiter's wait for the Retry-After header.
func retryAfterHeader(d time.Duration) string { return strconv.Itoa(retryAfterSeconds(d)) }
