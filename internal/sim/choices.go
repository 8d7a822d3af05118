package sim

import (
	"net/http"
	"time"
)

// This file gathers every decision the platform reference leaves open
// ("not shown"). Each is listed again in docs/simulator.md under "Choices
// where the reference is silent"; change both together.

// Default credentials and workspace. The values are fixed so that a user can
// paste them into a shell once, and they say loudly that they are fake.
const (
	// DefaultAccountID is the workspace id in the reference's ws-<8 chars> form.
	DefaultAccountID = "ws-sim00001"
	// DefaultAccountSlug is the same workspace in slug form (the studio URL form).
	DefaultAccountSlug = "sim-workspace"
	// DefaultBuildKey authorises build-host paths only.
	DefaultBuildKey = "sim-build-key-not-a-secret"
	// DefaultRuntimeKey authorises runtime-host paths only.
	DefaultRuntimeKey = "sim-runtime-key-not-a-secret"
	// ScopedProjectID is the one project the scoped keys may read. No agent has
	// this id, so a scoped key gets 403 on every real agent: the reference's
	// "valid key without rights for the project".
	ScopedProjectID = "PROJECT-0ther000"
	// scopedKeySuffix derives the scoped keys from the main ones.
	scopedKeySuffix = "-scoped-to-other-project"
)

// Defaults of the tunables.
const (
	// DefaultChatIdleTimeout is how long a debug-chat session may stay idle
	// before a turn gets CHAT_TIMEOUT. The reference gives no value; ten
	// minutes matches its messaging-session expiry.
	DefaultChatIdleTimeout = 10 * time.Minute
	// DefaultStoreCap bounds the conversation store.
	DefaultStoreCap = 50000
	// DefaultRetryAfter is the Retry-After of injected 429s.
	DefaultRetryAfter = time.Second
)

// Debug-chat error codes. The reference names only CHAT_TIMEOUT and
// CONVERSATIONS_NOT_FOUND; the others are the simulator's.
const (
	CodeChatTimeout           = "CHAT_TIMEOUT"
	CodeConversationsNotFound = "CONVERSATIONS_NOT_FOUND"
	CodeInvalidRequest        = "INVALID_REQUEST"
	CodeAgentNotFound         = "AGENT_NOT_FOUND"
	CodeConversationExists    = "CONVERSATION_ALREADY_EXISTS"
	CodeConversationEnded     = "CONVERSATION_ENDED"
	CodeUnauthorized          = "UNAUTHORIZED"
	CodeForbidden             = "FORBIDDEN"
	CodeRateLimited           = "RATE_LIMITED"
	CodeInternal              = "INTERNAL_ERROR"
	CodeNotFound              = "NOT_FOUND"
)

// debugChatStatus maps each debug-chat error code to its HTTP status; the
// reference does not show the mapping. CHAT_TIMEOUT is 408 because the
// session, not the request, timed out and a client should not blindly retry
// the same turn; clients should decide on error_code, not on status.
var debugChatStatus = map[string]int{
	CodeChatTimeout:           http.StatusRequestTimeout,
	CodeConversationsNotFound: http.StatusNotFound,
	CodeInvalidRequest:        http.StatusBadRequest,
	CodeAgentNotFound:         http.StatusNotFound,
	CodeConversationExists:    http.StatusConflict,
	CodeConversationEnded:     http.StatusConflict,
	CodeUnauthorized:          http.StatusUnauthorized,
	CodeForbidden:             http.StatusForbidden,
	CodeRateLimited:           http.StatusTooManyRequests,
	CodeInternal:              http.StatusInternalServerError,
	CodeNotFound:              http.StatusNotFound,
}

// Conversations API choices.
const (
	// statusConflictingParams is the status for conflicting retrieval modes,
	// query_type without query and variant_id with variant_name: the
	// reference lists only 400 as its validation status for this group.
	statusConflictingParams = http.StatusBadRequest
	// audioContentType is the type of the recording stream.
	audioContentType = "audio/wav"
	// audioSampleRate and audioSecondsPerTurn size the synthetic recording.
	audioSampleRate     = 8000
	audioSecondsPerTurn = 0.25
	// v3DefaultLimit, v3MaxLimit follow the v3 schema; v1 follows the prose.
	v3DefaultLimit = 1000
	v3MaxLimit     = 1000
	v1DefaultLimit = 5
	v1MaxLimit     = 5000
	// turnMetadataField is the per-turn key include_turn_metadata adds.
	turnMetadataField = "metadata"
)

// Ordering: v3 and v2 list newest first (started_at descending, id
// descending on ties); v1 lists oldest first as the reference says. Ranked
// modes (semantic, sample) list in rank order. Time filters are inclusive of
// start_time and exclusive of end_time.

// Cursor format: base64url (no padding) of a small JSON object, either a
// keyset position {"t": unix-nanos, "id": ...} for time order or {"o": n} for
// ranked modes. Anything that does not decode is a malformed cursor (400).

// Obsolete account prefix: paths with ACCOUNT-... get 404 with a message that
// names the ws- form (the reference lists wrong ids under 404).
const obsoleteAccountPrefix = "ACCOUNT-"

// Deployments (deployments.go). The reference shows only that
// GET /v1/agents/{agentId}/deployments/active returns the active sandbox
// deployment, whose id is used to promote.
const (
	// deploymentIDPrefix starts deployment ids: dep- and 16 hex digits.
	deploymentIDPrefix = "dep-"
	// deploymentEnvParam is the query parameter of deployments/active that
	// asks for another environment's deployment (default sandbox), e.g.
	// ?environment=live; an unknown environment is 400.
	deploymentEnvParam = "environment"
	// adminPrefix roots the simulator's own admin endpoints (publish,
	// promote, rollback) on the build host: outside the platform's API.
	adminPrefix = "/_sim"
)

// defaultChatChannel is the channel of a debug-chat session created
// without one (the reference only says "channel type").
const defaultChatChannel = "WEBCHAT"

// Outbound calling and SMS (runtime host), alerts and webhooks (build
// host). Every value below is the simulator's choice; docs/simulator.md
// lists them under "Choices where the reference is silent".
const (
	// DefaultCallQueued and DefaultCallCalling are how long an outbound
	// call stays queued, then calling, before its final status.
	DefaultCallQueued  = time.Second
	DefaultCallCalling = 2 * time.Second
	// DefaultCallRetention is how long a finished call's status stays
	// readable: the reference's "about 2 hours".
	DefaultCallRetention = 2 * time.Hour
	// callSIDPrefix is the reference's OUT- prefix of call sids.
	callSIDPrefix = "OUT-"
	// outboundChannel is the channel of the conversation a connected call creates.
	outboundChannel = "VOICE-SIP"
	// outboundDefaultEnv is the environment of a call whose body names none.
	outboundDefaultEnv = "live"

	// DefaultSMSSessionTimeout follows the reference's SMS inactivity rule:
	// a warning after 24 hours idle, the end 10 minutes later.
	DefaultSMSSessionTimeout = 24*time.Hour + 10*time.Minute
	// smsWarningAfter is when the idle warning turn is recorded.
	smsWarningAfter = 24 * time.Hour
	// smsWarningText is the agent's idle warning.
	smsWarningText = "Are you still there? Reply within 10 minutes to keep this conversation open."
	// smsChannel is the channel of SMS conversations.
	smsChannel = "SMS"
	// connectorIDPrefix starts the X-TOKEN-ID connector ids listed in Info.
	connectorIDPrefix = "CONN-"

	// DefaultTickInterval is the period of the background loop.
	DefaultTickInterval = time.Second

	// alertRuleIDPrefix starts alert rule ids: alr_ and 16 hex digits.
	alertRuleIDPrefix = "alr_"
	// maxAlertRules is the reference's cap per account; the 11th is 409.
	maxAlertRules = 10
	// defaultAlertOperator is the operator of a rule created without one.
	defaultAlertOperator = ">="
	// trafficSlot is the resolution of the alert evaluator's counters.
	trafficSlot = time.Second

	// webhookIDPrefix is the reference's endpoint id prefix (^whe_[A-Za-z0-9]+$).
	webhookIDPrefix = "whe_"
	// webhookSecretPrefix starts signing secrets (whsec_ and 32 hex digits).
	webhookSecretPrefix = "whsec_"
	// webhookEventIDPrefix starts the id of each event (shared by retries).
	webhookEventIDPrefix = "evt_"
	// maxWebhookEndpoints bounds the endpoints of the account; beyond: 409.
	maxWebhookEndpoints = 50
	// Webhook timeout_ms bounds and default, from the reference.
	webhookTimeoutMin     = 1000
	webhookTimeoutMax     = 30000
	webhookTimeoutDefault = 5000

	// Webhook delivery defaults: 6 attempts, after 1 s, 2 s, 4 s, 8 s, 16 s.
	DefaultWebhookAttempts   = 6
	DefaultWebhookBackoff    = time.Second
	DefaultWebhookMaxBackoff = time.Minute
	DefaultWebhookWorkers    = 4
	DefaultWebhookQueue      = 1024
)

// The environments that get an SMS connector id and a number are
// clientEnvs: the reference names dev, sandbox and live for SMS tokens, but
// the simulator's conversations use the three environments of the
// Conversations API, so those are the token environments too.

// Webhook event names of the reference.
const (
	EventConversationCompleted = "conversation.completed"
	EventHandoffCreated        = "handoff.created"
	EventAlertsTriggered       = "alerts.triggered"
	EventAlertsResolved        = "alerts.resolved"
)

// webhookEvents is every event an endpoint may subscribe to, by either of
// the two registration shapes.
var webhookEvents = []string{EventConversationCompleted, EventHandoffCreated, EventAlertsTriggered, EventAlertsResolved}

// Alert rule metrics, operators, windows and states.
var (
	alertMetrics   = []string{"turn_latency_p50", "turn_latency_p95", "api_errors", "function_errors", "call_crashes", "call_volume"}
	alertOperators = []string{">=", ">", "<=", "<", "=="}
	alertWindows   = map[string]time.Duration{"5m": 5 * time.Minute, "10m": 10 * time.Minute, "60m": 60 * time.Minute}
)

// Alert states of the reference.
const (
	AlertOK      = "ok"
	AlertFiring  = "alert"
	AlertNoData  = "no_data"
	AlertUnknown = "unknown"
)

// Messaging (the real-time WebSocket API on the messaging host). The
// reference names the three steps, the join request, the history batch,
// the joined event, the system message and its error level, a SESSION_END
// event and the error texts; everything below is the simulator's choice and
// is listed in docs/simulator.md under "Messaging choices". Event names
// holding the brand are built by messagingNames from these patterns, where
// %s is brand.EventWord (VENDOR by default).
const (
	// Client events: the reference's join request and the four others.
	evJoinPattern    = "EVENT_TYPE_REQUEST_%s_AGENT_JOIN" // payload {}
	EvUserMessage    = "EVENT_TYPE_USER_MESSAGE"          // payload {text}
	EvUserTyping     = "EVENT_TYPE_USER_TYPING"           // payload {typing?}; logged, no answer
	EvRequestLive    = "EVENT_TYPE_REQUEST_LIVE_AGENT"    // payload {reason?}: client-requested handoff
	EvEndSession     = "EVENT_TYPE_END_SESSION"           // payload {}: the user closes the chat
	evJoinedPattern  = "EVENT_TYPE_%s_AGENT_JOINED"       // payload {conversation_id, agent_id, environment}
	evMessagePattern = "EVENT_TYPE_%s_AGENT_MESSAGE"      // payload {message_id, text, delayed?}
	evChunkPattern   = "EVENT_TYPE_%s_AGENT_MESSAGE_CHUNK"
	evTypingPattern  = "EVENT_TYPE_%s_AGENT_TYPING" // payload {typing}
	// Server events without the brand word.
	EvEventBatch       = "EVENT_TYPE_EVENT_BATCH" // payload {events: [...]}
	EvSystemMessage    = "EVENT_TYPE_SYSTEM_MESSAGE"
	EvSessionEnd       = "EVENT_TYPE_SESSION_END"        // payload {reason}
	EvHandoffInitiated = "EVENT_TYPE_HANDOFF_INITIATED"  // payload {destination, reason}
	EvLiveAgentJoined  = "EVENT_TYPE_LIVE_AGENT_JOINED"  // payload {name, destination}
	EvLiveAgentMessage = "EVENT_TYPE_LIVE_AGENT_MESSAGE" // payload {message_id, name, text}

	// System message levels: the reference names the error level.
	LevelError = "SYSTEM_MESSAGE_LEVEL_ERROR"

	// Reasons of EVENT_TYPE_SESSION_END.
	EndAgent         = "agent_ended"      // the virtual agent ended the conversation
	EndUser          = "user_ended"       // EVENT_TYPE_END_SESSION
	EndLiveAgent     = "live_agent_ended" // the live agent closed the chat
	EndExpired       = "expired"          // inactivity
	EndHandoffFailed = "handoff_failed"   // the agent ended on a handoff nobody took
	EndError         = "error"            // the connector was revoked

	// DefaultMessagingHost is the registered domain (X-Host) of the
	// default connectors; subdomains are accepted too.
	DefaultMessagingHost = "webchat.example.com"
	// DefaultSessionExpiry is the reference's "about 10 minutes of inactivity".
	DefaultSessionExpiry = 10 * time.Minute
	// DefaultTokenLifetime is the access token's lifetime (not shown).
	DefaultTokenLifetime = time.Hour
	// DefaultMaxConnections is the reference's 10 simultaneous sockets.
	DefaultMaxConnections = 10
	// DefaultHandshakeRate and DefaultHandshakeBurst limit WebSocket
	// handshakes per session (beyond: 429 with Retry-After);
	// DefaultMessageRate and DefaultMessageBurst limit client events per
	// session (beyond: dropped, as the reference allows).
	DefaultHandshakeRate  = 5.0
	DefaultHandshakeBurst = 20
	DefaultMessageRate    = 10.0
	DefaultMessageBurst   = 20
	// DefaultLiveAgentName and the live agent's default lines.
	DefaultLiveAgentName     = "Sam"
	defaultLiveAgentGreeting = "Hi, this is Sam, a live agent. I can see your conversation so far. How can I help?"
	defaultLiveAgentReply    = "Thanks, I'm looking into that for you."
	defaultLiveAgentBye      = "You're welcome. Goodbye!"
	// defaultLiveAgentAlready answers a live-agent request while a live
	// agent has the chat (the reference does not say what a platform
	// does): the live agent says so, with no second handoff. Answered by
	// typing alone, the request would leave a client waiting for an
	// answer that never comes.
	defaultLiveAgentAlready = "You're already talking to Sam, a live agent. How can I help?"
	// liveAgentDestination is the destination of a client-requested handoff.
	liveAgentDestination = "live_agent"

	// messagingChannel is the channel of conversations made over Messaging.
	messagingChannel = "WEBCHAT"
	// sessionIDPrefix, connectorIDPrefixMsg and tokenIssuer shape ids.
	sessionIDPrefix   = "ses_"
	messageIDPrefix   = "msg_"
	tokenIssuer       = "agenttest-sim"
	tokenAudience     = "messaging"
	connectorTokenLen = 40 // hex digits of a default connector token
	// chunkBytes is the target size of a streamed chunk; chunks end at word
	// boundaries, so concatenating their texts gives the message back.
	chunkBytes = 24
	// maxClientEvent bounds one client frame (the reference shows no limit).
	maxClientEvent = 64 << 10
	// socketQueue bounds the events waiting for one socket's writer; a
	// reader slower than that is disconnected and must reconnect with its
	// cursor, as with any dropped socket.
	socketQueue = 256
	// customEchoKey is where client metadata lives (metadata.custom).
	customEchoKey = "custom"
)

// Messaging system messages of the reference, word for word.
const (
	SysInvalidEvent      = "Unknown event type or invalid message format"
	sysNotAllowedPrefix  = "Event type not allowed: "
	SysOverload          = "Our system is experiencing high load. Please try again in a moment."
	SysStartFailed       = "Sorry, I'm unable to start a conversation right now. Please try again later."
	SysReplyFailed       = "Sorry, I'm having trouble responding right now. Please try again."
	SysStreamFailed      = "Sorry, I encountered an error. Please try again."
	SysSessionNotFound   = "Error: Session not found"
	SysLookupFailed      = "Error: Unable to retrieve session"
	SysConnectorNotFound = "Error: Connector not found"
	SysConvNotFound      = "Error: Conversation not found"
	SysConvIDNotFound    = "Error: Conversation ID not found in session"
	SysNoLiveAgent       = "Sorry, we could not connect you to an agent. Please try again."
	SysForwardFailed     = "Failed to forward message to live agent"
	SysHandoffRejected   = "Sorry, handoff could not be initiated."
)

// Messaging HTTP error texts of the reference, word for word; the body is
// {"error": text}.
const (
	errMissingAuthHeaders = "Missing authentication headers"
	errUnknownConnector   = "Connector token does not exist"
	errConnectorHost      = "Failed to validate connector"
	errConnectorNoHost    = "Connector missing host domain"
	errTokenInternal      = "Failed to create access token"
	errMissingToken       = "Missing access token"
	errInvalidToken       = "Invalid access token"
	errParsing            = "Error parsing request"
	errSessionInternal    = "Failed to create session"
	errWSSessionNotFound  = "session not found"
	errWSAuth             = "authentication failed"
	errWSConnLimit        = "connection limit exceeded for session"
	errWSParams           = "invalid connection parameters"
	errRateLimited        = "rate limit exceeded"
	errWSInternal         = "internal server error"
)
