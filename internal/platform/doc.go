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
// A non-2xx answer is an *APIError; a 2xx answer that cannot be decoded (or
// is too large) is a *ResponseError; a transport failure is a
// *NetworkError. All three name the endpoint, and none ever contains a key:
// every text taken from the server goes through Client.Redact. The
// predicates IsChatTimeout, IsNotFound, IsRateLimited, IsTransient and
// IsAuth classify any of them.
//
// # Retries
//
// Which failures are retried depends on whether repeating the request could
// change what the agent saw (see retryClass). A debug-chat turn is re-sent
// only when the platform certainly never received it; everything else a
// scenario needs is returned to the runner, which retries the whole
// scenario from a fresh session.
package platform
