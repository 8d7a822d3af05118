package reply

import "slices"

// Envs are the clientEnv values of the platform (reference: "Deployments
// and environments"), in promotion order. Every check of an environment
// name in agenttest reads this list.
var Envs = []string{"sandbox", "pre-release", "live"}

// ValidEnv reports whether env is one of Envs.
func ValidEnv(env string) bool { return slices.Contains(Envs, env) }

// Outbound call statuses (reference, States and transitions). The first two
// are in progress; success and failure are final.
const (
	CallQueued  = "queued"
	CallCalling = "calling"
	CallSuccess = "success"
	CallFailure = "failure"
)

// The webhook events of the reference.
const (
	EventConversationCompleted = "conversation.completed"
	EventHandoffCreated        = "handoff.created"
	EventAlertsTriggered       = "alerts.triggered"
	EventAlertsResolved        = "alerts.resolved"
)

// WebhookEvents are the four event names the reference lists. Others are
// "not shown": they may exist, so callers warn rather than refuse.
var WebhookEvents = []string{EventConversationCompleted, EventHandoffCreated, EventAlertsTriggered, EventAlertsResolved}
