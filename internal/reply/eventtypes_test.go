package reply

import (
	"slices"
	"strings"
	"testing"

	"github.com/agenttest/agenttest/internal/brand"
)

func TestKnownEventType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ  string
		want bool
	}{
		// The reference's names, VENDOR standing for the brand.
		{"EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN", true},
		{"EVENT_TYPE_EVENT_BATCH", true},
		{"EVENT_TYPE_VENDOR_AGENT_JOINED", true},
		{"EVENT_TYPE_SYSTEM_MESSAGE", true},
		{"EVENT_TYPE_SESSION_END", true},
		// Any one brand word fills the slot; the brandless forms too.
		{"EVENT_TYPE_ACME_AGENT_JOINED", true},
		{"EVENT_TYPE_ACME2_AGENT_MESSAGE_CHUNK", true},
		{"EVENT_TYPE_REQUEST_ACME_AGENT_JOIN", true},
		{"EVENT_TYPE_AGENT_JOINED", true},
		{"EVENT_TYPE_USER_MESSAGE", true},
		{"EVENT_TYPE_AGENT_MESSAGE_PART", true},
		// Brand words at the ends of their ranges.
		{"EVENT_TYPE_Z_AGENT_JOINED", true},
		{"EVENT_TYPE_A0_AGENT_JOINED", true},
		{"EVENT_TYPE_A9_AGENT_JOINED", true},
		// A known form is not a prefix.
		{"EVENT_TYPE_USER_MESSAGES", false},
		// Not a brand word: empty, lower case, two words.
		{"EVENT_TYPE__AGENT_JOINED", false},
		{"EVENT_TYPE_acme_AGENT_JOINED", false},
		{"EVENT_TYPE_ACME_CORP_AGENT_JOINED", false},
		// Misspelt, or another platform's.
		{"EVENT_TYPE_SYSTEM_MESAGE", false},
		{"EVENT_TYPE_CUSTOMER_SURVEY", false},
		{"event_type_system_message", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := KnownEventType(tc.typ); got != tc.want {
			t.Errorf("KnownEventType(%q) = %v, want %v", tc.typ, got, tc.want)
		}
	}
}

// TestKnownEventTypesShape: the list is sorted, each form once, every form
// an EVENT_TYPE_ name with at most one brand slot, and known itself under
// the reference's brand.
func TestKnownEventTypesShape(t *testing.T) {
	t.Parallel()
	all := KnownEventTypes()
	if len(all) < 20 || !slices.IsSorted(all) || len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Fatalf("KnownEventTypes not sorted and unique, or too short: %v", all)
	}
	for _, f := range all {
		if !strings.HasPrefix(f, EventTypePrefix) || strings.Count(f, EventBrandSlot) > 1 || !KnownEventType(BrandEventType(f, "VENDOR")) {
			t.Errorf("form %q", f)
		}
	}
	all[0] = "changed"
	if KnownEventTypes()[0] == "changed" {
		t.Error("KnownEventTypes returns the list itself")
	}
}

// TestEventTypeListsDisjoint: an event type belongs to one list, so a
// chunk or the end of a stream is never read as a whole message.
func TestEventTypeListsDisjoint(t *testing.T) {
	t.Parallel()
	lists := map[string][]string{
		"Batch": EventTypesBatch, "Joined": EventTypesJoined, "Message": EventTypesMessage, "Chunk": EventTypesChunk,
		"StreamEnd": EventTypesStreamEnd, "Typing": EventTypesTyping, "TypingStart": EventTypesTypingStart,
		"TypingStop": EventTypesTypingStop, "System": EventTypesSystem, "SessionEnd": EventTypesSessionEnd,
		"Handoff": EventTypesHandoff, "LiveJoined": EventTypesLiveJoined, "LiveMessage": EventTypesLiveMessage,
		"Client": EventTypesClient,
	}
	seen := map[string]string{}
	for name, l := range lists {
		for _, typ := range l {
			if other, dup := seen[typ]; dup && other != name {
				t.Errorf("%s is in both EventTypes%s and EventTypes%s", typ, other, name)
			}
			seen[typ] = name
		}
	}
}

func TestIsBrandWord(t *testing.T) {
	t.Parallel()
	checkPredicate(t, "IsBrandWord", IsBrandWord, map[string]bool{
		"VENDOR": true, "A": true, "Z": true, "A0": true, "A9": true, "ACME2": true,
		"": false, "acme": false, "ACME_CORP": false, "@": false, "[": false, "/": false, ":": false,
	})
}

// Named fills the brand slot of a type the reference writes with VENDOR
// with the platform's word, and leaves every other type as written.
func TestMessagingNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ brand, typ, want string }{
		{"ACME", "EVENT_TYPE_VENDOR_AGENT_JOINED", "EVENT_TYPE_ACME_AGENT_JOINED"},
		{"ACME", "EVENT_TYPE_REQUEST_VENDOR_AGENT_JOIN", "EVENT_TYPE_REQUEST_ACME_AGENT_JOIN"},
		{"ACME", "EVENT_TYPE_VENDOR_AGENT_MESSAGE_CHUNK", "EVENT_TYPE_ACME_AGENT_MESSAGE_CHUNK"},
		{"ACME", "EVENT_TYPE_VENDOR_AGENT_TYPING_STOP", "EVENT_TYPE_ACME_AGENT_TYPING_STOP"},
		{"ACME", "EVENT_TYPE_ACME_AGENT_JOINED", "EVENT_TYPE_ACME_AGENT_JOINED"},
		{"ACME", "EVENT_TYPE_LIVE_AGENT_JOINED", "EVENT_TYPE_LIVE_AGENT_JOINED"},
		{"ACME", "EVENT_TYPE_AGENT_MESSAGE", "EVENT_TYPE_AGENT_MESSAGE"},
		{"ACME", "EVENT_TYPE_SESSION_END", "EVENT_TYPE_SESSION_END"},
		{"ACME", "EVENT_TYPE_VENDOR_SOMETHING", "EVENT_TYPE_VENDOR_SOMETHING"},
		{"ACME", "XEVENT_TYPE_VENDOR_AGENT_JOINED", "XEVENT_TYPE_VENDOR_AGENT_JOINED"},
		{"ACME", "EVENT_TYPE_VENDOR_AGENT_JOINEDX", "EVENT_TYPE_VENDOR_AGENT_JOINEDX"},
		{"VENDOR", "EVENT_TYPE_VENDOR_AGENT_JOINED", "EVENT_TYPE_VENDOR_AGENT_JOINED"},
		{"", "EVENT_TYPE_VENDOR_AGENT_JOINED", "EVENT_TYPE_VENDOR_AGENT_JOINED"},
	} {
		if got := (&Messaging{Brand: tc.brand}).Named(tc.typ); got != tc.want {
			t.Errorf("brand %q: Named(%s) = %s, want %s", tc.brand, tc.typ, got, tc.want)
		}
	}
}

// TestReferenceBrandWord holds the reply model's copy of the reference's
// brand word to the one the client and the simulator spell.
func TestReferenceBrandWord(t *testing.T) {
	t.Parallel()
	if want := brand.EventWord(brand.Default); ReferenceBrandWord != want {
		t.Errorf("ReferenceBrandWord = %q, want %q", ReferenceBrandWord, want)
	}
}
