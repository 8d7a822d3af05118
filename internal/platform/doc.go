// Package platform is the one client of the agent platform API: the only
// place in agenttest that knows URLs, headers, status codes and the retry
// policy. Everything else (the runner, the conversation checks, later the
// webhook and SMS steps) goes through a *Client.
//
// Usage:
//
//	c, err := platform.New(platform.Config{
//		BuildURL:   "https://build.us.example.com",
//		RuntimeURL: "https://runtime.us-1.example.com",
//		AccountID:  "ws-a1b2c3d4",
//		BuildKey:   buildKey,
//		RuntimeKey: runtimeKey,
//	})
//	if err != nil { ... }
//	ex, err := c.StartChat(ctx, "restaurant", platform.ChatStart{ClientEnv: "sandbox"})
//	if err != nil { ... }
//	ex, err = c.SendTurn(ctx, "restaurant", ex.Result.ConversationID,
//		platform.ChatTurn{ClientEnv: "sandbox", Message: "a table for two"})
//
// Messaging (the real-time WebSocket API) runs one conversation per
// MessagingSession: OpenMessaging exchanges the connector token for an
// access token, creates the session, reads the history batch and joins;
// Say sends a user message and returns the answer once it is complete
// (messaging.go says how that is recognised and how dropped sockets are
// resumed). System messages come back as data in the turn.
//
// # Errors
//
// A non-2xx answer is an *APIError; a 2xx answer that cannot be decoded, is
// too large or carries a metadata member of the wrong JSON type is a
// *ResponseError; a redirect the client would not follow is a
// *RedirectError; a transport failure is a *NetworkError; a call that
// would wait on a rate limit past its case's budget is a *RateLimitError.
// All of them name
// the endpoint, and none ever contains a key: every body is redacted (in
// every form package secret knows) as it is read, before anything is
// decoded or kept, and every message built from server text goes through
// the same redactor. The predicates IsChatTimeout, IsNotFound,
// IsRateLimited, IsTransient and IsAuth classify them.
//
// # Keys stay home
//
// Keys are sent in headers only, and only to the configured origin: a
// redirect that changes scheme, host or port is never followed (nor a 301,
// 302 or 303 that would turn a POST into a GET; see redirect.go), whatever
// http.Client the caller passes. A plain http:// URL is refused for hosts
// that are not loopback unless Config.AllowHTTP is set. Keys shorter than
// secret.MinLen characters are refused.
//
// # Memory
//
// A debug-chat reply is bounded by Config.MaxReplyBytes (1 MiB by default)
// after decompression, other bodies by Config.MaxBodyBytes, and all bodies
// being read at once share Config.ReplyBudget, so memory does not grow with
// the calls in flight times the limit (see budget.go).
//
// # Retries
//
// Which failures are retried depends on whether repeating the request could
// change what the agent saw (see retryClass). A debug-chat turn is re-sent
// only when the platform certainly never received it; everything else a
// scenario needs is returned to the runner, which retries the whole
// scenario from a fresh session.
//
// # Rate limits
//
// A 429 is not retried but paced (pace.go): every call made with the same
// key to the same host waits its turn in one pacer, which a 429 pauses for
// its Retry-After and which learns the rate the platform accepts
// (Config.Rate caps it). The waits are charged to the RateAccount of the
// call's context (WithRateAccount; the runner gives each case one) and
// bounded by Config.RateWait in all:
//
//	ctx = platform.WithRateAccount(ctx, acct)
//	ex, err := c.SendTurn(ctx, agent, conv, turn) // waits out 429s within the budget
//	u := acct.Usage(time.Now())                   // u.Limited, u.Waited, u.Accepted
package platform
