package reply

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
