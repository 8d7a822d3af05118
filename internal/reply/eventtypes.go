package reply

import (
	"slices"
	"strings"
)

// The Messaging event types agenttest knows, in one list: those the
// reference names ("Messaging API", "Messaging system messages"), the
// simulator's choices (docs/simulator.md, "Messaging choices") and the
// plausible forms of other implementations. The client reads events by
// these lists (internal/platform), lint holds the types an events check
// names to them (internal/scenario), and a test of the client holds the
// simulator's names to them. The reference's catalogue of server events is
// "not shown", so a type outside the list may be real: it is accepted,
// and only a near miss of a known type is warned about.
//
// EventBrandSlot stands where a type holds the platform's brand word,
// which the reference writes VENDOR (EVENT_TYPE_VENDOR_AGENT_JOINED). The
// client fills it with the configured brand (brand.EventWord); a suite is
// written without knowing the target, so KnownEventType accepts any one
// word there, as IsAgentJoined does.
const (
	EventBrandSlot = "%s"

	// The reference's join request and joined event.
	EventTypeJoinRequest = "EVENT_TYPE_REQUEST_%s_AGENT_JOIN"
	EventTypeAgentJoined = "EVENT_TYPE_%s_AGENT_JOINED"
	// EventTypeSessionEnd is the reference's "SESSION_END event", as the
	// simulator names it.
	EventTypeSessionEnd = "EVENT_TYPE_SESSION_END"

	// The four client events besides the join request; their names are
	// "not shown", these are the simulator's.
	EventTypeUserMessage      = "EVENT_TYPE_USER_MESSAGE"
	EventTypeUserTyping       = "EVENT_TYPE_USER_TYPING"
	EventTypeRequestLiveAgent = "EVENT_TYPE_REQUEST_LIVE_AGENT"
	EventTypeEndSession       = "EVENT_TYPE_END_SESSION"
)

// ReferenceBrandWord is the word the reference writes in the brand slot
// (brand.EventWord of brand.Default, which a test holds it to: the reply
// model is a leaf of the standard library alone).
const ReferenceBrandWord = "VENDOR"

// The server event types by meaning, with EventBrandSlot where the brand
// goes; the simulator's choice comes first in each list. Callers must not
// modify them.
var (
	EventTypesBatch   = []string{EventTypeBatch, "EVENT_TYPE_HISTORY", "EVENT_TYPE_HISTORY_BATCH"}
	EventTypesJoined  = []string{EventTypeAgentJoined, "EVENT_TYPE_AGENT_JOINED"}
	EventTypesMessage = []string{"EVENT_TYPE_%s_AGENT_MESSAGE", "EVENT_TYPE_AGENT_MESSAGE"}
	// EventTypesChunk are the parts of a streamed message, and
	// EventTypesStreamEnd the events that end one.
	EventTypesChunk     = suffixed(EventTypesMessage, "_CHUNK", "_DELTA", "_STREAM", "_PART")
	EventTypesStreamEnd = suffixed(EventTypesMessage, "_END", "_COMPLETE", "_COMPLETED", "_DONE", "_STREAM_END")
	// EventTypesTyping carry the state in the payload (typing, is_typing,
	// active: true or false; state: start or stop); EventTypesTypingStart
	// and EventTypesTypingStop say it in the name.
	EventTypesTyping      = []string{"EVENT_TYPE_%s_AGENT_TYPING", "EVENT_TYPE_AGENT_TYPING", "EVENT_TYPE_TYPING_INDICATOR", "EVENT_TYPE_TYPING"}
	EventTypesTypingStart = suffixed([]string{"EVENT_TYPE_%s_AGENT_TYPING", "EVENT_TYPE_AGENT_TYPING", "EVENT_TYPE_TYPING"}, "_START", "_STARTED", "_ON")
	EventTypesTypingStop  = suffixed([]string{"EVENT_TYPE_%s_AGENT_TYPING", "EVENT_TYPE_AGENT_TYPING", "EVENT_TYPE_TYPING"}, "_STOP", "_STOPPED", "_END", "_OFF")
	EventTypesSystem      = []string{EventTypeSystemMessage}
	EventTypesSessionEnd  = []string{EventTypeSessionEnd, "EVENT_TYPE_SESSION_ENDED", "EVENT_TYPE_SESSION_CLOSED", "EVENT_TYPE_SESSION_EXPIRED", "EVENT_TYPE_CONVERSATION_ENDED"}
	EventTypesHandoff     = []string{"EVENT_TYPE_HANDOFF_INITIATED", "EVENT_TYPE_HANDOFF_STARTED", "EVENT_TYPE_HANDOFF_REQUESTED", "EVENT_TYPE_LIVE_AGENT_HANDOFF", "EVENT_TYPE_HANDOFF"}
	EventTypesLiveJoined  = []string{"EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_HUMAN_AGENT_JOINED"}
	EventTypesLiveMessage = []string{"EVENT_TYPE_LIVE_AGENT_MESSAGE", "EVENT_TYPE_HUMAN_AGENT_MESSAGE"}
	// EventTypesClient are the five client events, the join request
	// first. The platform echoes them into the log, so a turn's events
	// may hold them.
	EventTypesClient = []string{EventTypeJoinRequest, EventTypeUserMessage, EventTypeUserTyping, EventTypeRequestLiveAgent, EventTypeEndSession}
)

func suffixed(bases []string, suffixes ...string) []string {
	var out []string
	for _, b := range bases {
		for _, s := range suffixes {
			out = append(out, b+s)
		}
	}
	return out
}

// knownEventTypes is every list above, sorted, each form once.
var knownEventTypes = func() []string {
	var all []string
	for _, l := range [][]string{EventTypesBatch, EventTypesJoined, EventTypesMessage, EventTypesChunk, EventTypesStreamEnd,
		EventTypesTyping, EventTypesTypingStart, EventTypesTypingStop, EventTypesSystem, EventTypesSessionEnd,
		EventTypesHandoff, EventTypesLiveJoined, EventTypesLiveMessage, EventTypesClient} {
		all = append(all, l...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}()

// KnownEventTypes returns every event type agenttest knows, client and
// server, sorted, with EventBrandSlot where the brand goes.
func KnownEventTypes() []string { return slices.Clone(knownEventTypes) }

// BrandEventType fills the brand slot of a form with word (an upper-case
// brand word, brand.EventWord); a form without the slot is returned as it
// is.
func BrandEventType(form, word string) string {
	return strings.Replace(form, EventBrandSlot, word, 1)
}

// KnownEventType reports whether typ is one of KnownEventTypes, any one
// word of capitals and digits filling the brand slot (VENDOR, ACME).
func KnownEventType(typ string) bool {
	for _, form := range knownEventTypes {
		before, after, branded := strings.Cut(form, EventBrandSlot)
		if !branded {
			if typ == form {
				return true
			}
			continue
		}
		if len(typ) > len(before)+len(after) && strings.HasPrefix(typ, before) && strings.HasSuffix(typ, after) &&
			IsBrandWord(typ[len(before):len(typ)-len(after)]) {
			return true
		}
	}
	return false
}

// IsBrandWord reports whether w can fill the brand slot of an event type:
// capitals and digits, at least one (brand.Validate allows letters and
// digits; the event word is upper case).
func IsBrandWord(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
