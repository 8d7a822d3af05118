package platform

import (
	"testing"

	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/sim"
)

// TestMessagingEventNamesAreKnown holds the simulator, a separate
// implementation with names of its own, to the one list of event types
// (reply.KnownEventTypes) that the client reads events by and lint checks
// events checks against: every type it sends or accepts, under the
// reference's brand and another, is known, and the client gives each a
// meaning. A type the simulator added without the list would be read as
// "other" by the client and warned about as unknown by lint.
func TestMessagingEventNamesAreKnown(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"", "Acme"} {
		client, server := sim.MessagingEventNames(b)
		f := newEventForms(b)
		if client[0] != f.join {
			t.Errorf("brand %q: the simulator's join request is %s, the client's %s", b, client[0], f.join)
		}
		for _, typ := range append(client, server...) {
			if !reply.KnownEventType(typ) {
				t.Errorf("brand %q: the simulator's %s is not in reply.KnownEventTypes", b, typ)
			}
		}
		for _, typ := range server {
			if f.byType[typ] == EventOther && !f.typing[typ] {
				t.Errorf("brand %q: the client reads the simulator's %s as other", b, typ)
			}
		}
	}
}
