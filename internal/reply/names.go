package reply

import (
	"slices"
	"strings"
	"unicode"
)

// Envs are the clientEnv values of the platform (reference: "Deployments
// and environments"), in promotion order. Every check of an environment
// name in agenttest reads this list.
var Envs = []string{"sandbox", "pre-release", "live"}

// ValidEnv reports whether env is one of Envs.
func ValidEnv(env string) bool { return slices.Contains(Envs, env) }

// EnvSpelled is the member of Envs that s spells in another letter case
// or with another separator ("PRE_RELEASE", "preRelease", "Live"), or ""
// when it spells none: what a platform names an environment in a record
// the reference does not show.
func EnvSpelled(s string) string {
	key := NameKey(s)
	for _, e := range Envs {
		if key == NameKey(e) {
			return e
		}
	}
	return ""
}

// NameKey is what stays of a name the platform sends whatever its letter
// case and separators: lower case without '_', '-' and white space
// (no_data, NO-DATA and noData are nodata).
func NameKey(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s))
}

// EnvMeant is the environment that a deployment pipeline's name for it
// means (prod for live, staging for pre-release), in any letter case and
// with any separators (NameKey: Pre-Prod), or "" for any other name.
func EnvMeant(name string) string { return envWords[NameKey(name)] }

// envWords are keyed by NameKey.
var envWords = map[string]string{
	"prod": "live", "production": "live",
	"staging": "pre-release", "stage": "pre-release", "preprod": "pre-release", "uat": "pre-release",
	"dev": "sandbox", "development": "sandbox", "test": "sandbox", "draft": "sandbox",
}

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
