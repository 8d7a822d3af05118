package platform

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agenttest/agenttest/internal/secret"
)

// hostKind says which host family serves an endpoint. The families are
// separate services with separate keys; a request to the wrong one is a 404.
type hostKind int

const (
	buildHost hostKind = iota
	runtimeHost
	// messagingHost is {messaging_url}: the Messaging API (messaging.go).
	messagingHost
)

// authKind says which credential an endpoint group takes (reference,
// Authentication).
type authKind int

const (
	// authBuildKey: x-api-key with the workspace key (agents, alerts,
	// webhooks, debug chat).
	authBuildKey authKind = iota
	// authRuntimeKey: x-api-key with the runtime key (conversations,
	// handoff state).
	authRuntimeKey
	// authVendorToken: X-<Brand>-Auth-Token with the call token, or the
	// runtime key when none is set (outbound calling, SMS).
	authVendorToken
	// authConnector: X-Token (the connector token) and X-Host (the
	// registered domain), the Messaging API's access-token step.
	authConnector
	// authBearer: Authorization: Bearer with the call's access token
	// (call.bearer), the Messaging API's session step.
	authBearer
)

// credentialOf names the credential the client sends to an endpoint
// group, for errors.
func (c *Client) credentialOf(a authKind) string {
	switch a {
	case authBuildKey:
		return CredentialBuildKey
	case authRuntimeKey:
		return CredentialRuntimeKey
	case authVendorToken:
		if c.cfg.CallToken == "" {
			return CredentialRuntimeKeyAsCallToken
		}
		return CredentialCallToken
	case authConnector:
		return CredentialConnectorToken
	case authBearer:
		return CredentialAccessToken
	}
	return ""
}

// retryClass says what may be repeated after a failure. It is the heart of
// the retry policy: repeating a request must never change what the agent
// saw, because the runner then asserts on a conversation that is not the one
// the scenario describes.
type retryClass int

const (
	// retryRead: GETs. Reading twice changes nothing, so any connection
	// failure and any 5xx is retried.
	retryRead retryClass = iota
	// retrySession: debug-chat session creation. A repeated create at
	// worst leaves an unused session behind, which no scenario observes,
	// so connection failures and 5xx are retried. With a caller-chosen
	// conversation id the second create could collide with a half-made
	// first one, so then a 5xx is returned instead.
	retrySession
	// retryTurn: a debug-chat turn. If the platform received it, the
	// agent may have applied it (state written, function called), and a
	// second send would be a second user turn. It is re-sent only when
	// the request certainly never left (dial failure) or was refused
	// before processing (429); a 5xx or a connection lost after sending
	// is returned, and the runner retries the scenario from a fresh
	// session.
	retryTurn
)

// endpoint is one operation of the reference: its method, path template
// (for error messages and metrics), host family and credential.
type endpoint struct {
	method   string
	template string
	host     hostKind
	auth     authKind
	class    retryClass
}

// The endpoints, in one table so the whole API surface is visible at once.
var (
	epChatStart = endpoint{"POST", "/v1/agents/{agentId}/debug-chat", buildHost, authBuildKey, retrySession}
	epChatTurn  = endpoint{"POST", "/v1/agents/{agentId}/debug-chat/{conversationId}", buildHost, authBuildKey, retryTurn}
	epActiveDep = endpoint{"GET", "/v1/agents/{agentId}/deployments/active", buildHost, authBuildKey, retryRead}

	epListV3  = endpoint{"GET", "/v3/{account_id}/{project_id}/conversations", runtimeHost, authRuntimeKey, retryRead}
	epListV2  = endpoint{"GET", "/v2/{account_id}/{project_id}/conversations", runtimeHost, authRuntimeKey, retryRead}
	epListV1  = endpoint{"GET", "/v1/{account_id}/{project_id}/conversations", runtimeHost, authRuntimeKey, retryRead}
	epConv    = endpoint{"GET", "/v3/{account_id}/{project_id}/conversations/{conversation_id}", runtimeHost, authRuntimeKey, retryRead}
	epAudio   = endpoint{"GET", "/v3/{account_id}/{project_id}/conversations/{conversation_id}/audio", runtimeHost, authRuntimeKey, retryRead}
	epHandoff = endpoint{"GET", "/v1/{account_id}/{project_id}/handoff_state", runtimeHost, authRuntimeKey, retryRead}
)

// chat reports whether e is a debug-chat call, whose reply has its own
// size limit (Config.MaxReplyBytes).
func (e endpoint) chat() bool { return e == epChatStart || e == epChatTurn }

// call is one request to send: an endpoint with its concrete path.
type call struct {
	ep endpoint
	// path is the escaped concrete path, appended to the host's base URL.
	// It is what error messages show; queries are left out of messages.
	path string
	// url is the whole URL of a call made with its path in one string
	// (chatCall); do joins the host's base and path otherwise.
	url   string
	query url.Values
	body  []byte
	// accept overrides the Accept header (audio).
	accept string
	// limit overrides the body size limit (audio).
	limit int64
	// binary marks a body that is not text (audio): it is neither
	// redacted nor counted in the reply budget.
	binary bool
	// count, with binary, reads the body without keeping it: the
	// answer holds its length alone (response.size).
	count bool
	// noRetry5xx turns off 5xx retries of a retrySession call (custom
	// conversation id).
	noRetry5xx bool
	// header holds extra request headers (X-TOKEN-ID of SMS). Never a
	// key: credentials go through authenticate only.
	header http.Header
	// bearer is the access token of an authBearer call: obtained at run
	// time, so it cannot live in Config.
	bearer string
	// red redacts the answer and the errors of the call when they may
	// echo a credential the client's redactor does not know (the
	// Messaging access token); nil means the client's. It must apply
	// before a message or a kept body is cut short, or half a token
	// would match nothing and show.
	red *secret.Redactor
}

// redactor is the redactor of what rq's answer shows.
func (c *Client) redactor(rq *call) *secret.Redactor {
	if rq.red != nil {
		return rq.red
	}
	return c.red
}

// buildPath joins escaped segments into a path. Each segment is escaped on
// its own, so an id holding '/', '?' or '..' cannot change the endpoint.
func buildPath(segments ...string) string { return joinPath("", segments...) }

// joinPath is prefix followed by the path of segments (buildPath), in one
// string.
func joinPath(prefix string, segments ...string) string {
	n := len(prefix)
	for _, s := range segments {
		n += len(s) + 1
	}
	var b strings.Builder
	b.Grow(n + 8)
	b.WriteString(prefix)
	for _, s := range segments {
		b.WriteByte('/')
		esc := url.PathEscape(s)
		// PathEscape keeps dots; "." and ".." segments would be
		// resolved by servers and proxies.
		switch esc {
		case ".":
			esc = "%2E"
		case "..":
			esc = "%2E%2E"
		}
		b.WriteString(esc)
	}
	return b.String()
}

// chatCall is a call of ep, a debug-chat endpoint (on the build host), to
// the path of segments, with its URL and its path built as one string:
// joining them in do made a second string for every turn.
func (c *Client) chatCall(ep endpoint, segments ...string) call {
	u := joinPath(c.buildBase, segments...)
	return call{ep: ep, path: u[len(c.buildBase):], url: u}
}
