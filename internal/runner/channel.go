package runner

import (
	"context"

	"github.com/agenttest/agenttest/internal/platform"
)

// Channel is how a session talks to the agent: it opens a conversation,
// whose reply is the greeting. The debug-chat API is one channel
// (DebugChat), Messaging over WebSocket the other. Everything else a
// session does (checks, captures, confirmations, probes) is the same
// whatever the channel.
type Channel interface {
	// Open starts a conversation with the agent and returns it with the
	// greeting. On error the Exchange, when not nil, holds what is known
	// of the failed call (the transcript shows it).
	Open(ctx context.Context, agentID string, req platform.ChatStart) (Conversation, *platform.Exchange, error)
}

// Conversation is one open conversation of a Channel.
type Conversation interface {
	// Send sends one user turn and returns the agent's reply.
	Send(ctx context.Context, req platform.ChatTurn) (*platform.Exchange, error)
	// Close releases what the conversation holds (a connection); the
	// session calls it once, when the attempt ends.
	Close() error
}

// DebugChatClient is what the debug-chat channel needs from the platform
// client: the two debug-chat calls. *platform.Client satisfies it; tests
// wrap it to count calls or cancel a run at a precise moment.
type DebugChatClient interface {
	StartChat(ctx context.Context, agentID string, req platform.ChatStart) (*platform.Exchange, error)
	SendTurn(ctx context.Context, agentID, conversationID string, req platform.ChatTurn) (*platform.Exchange, error)
}

var _ DebugChatClient = (*platform.Client)(nil)

// DebugChat is the debug-chat channel: a conversation is a debug-chat
// session, each turn one HTTP call.
func DebugChat(c DebugChatClient) Channel { return debugChat{c} }

type debugChat struct{ c DebugChatClient }

func (d debugChat) Open(ctx context.Context, agentID string, req platform.ChatStart) (Conversation, *platform.Exchange, error) {
	exch, err := d.c.StartChat(ctx, agentID, req)
	if err != nil || exch == nil || exch.Result == nil {
		return nil, exch, err
	}
	return debugChatSession{c: d.c, agent: agentID, id: exch.Result.ConversationID}, exch, nil
}

// debugChatSession is an open debug chat: the agent and the conversation
// id each turn is sent to.
type debugChatSession struct {
	c         DebugChatClient
	agent, id string
}

func (s debugChatSession) Send(ctx context.Context, req platform.ChatTurn) (*platform.Exchange, error) {
	return s.c.SendTurn(ctx, s.agent, s.id, req)
}

// Close does nothing: a debug chat holds no connection of its own; the
// platform idles it out.
func (debugChatSession) Close() error { return nil }
