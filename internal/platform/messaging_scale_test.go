package platform

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMessagingTurnCostIsLinear: a turn's cost grows with what it
// receives, not with its square. A history batch is one frame of up to
// 16 MiB, read at once, which the turn's timeout cannot cut short: a
// cost in n squared made a hostile (or only long) batch of a few hundred
// thousand events hold the case for minutes past its timeout (the reply
// joined again at each message, every message looked up by a scan of the
// turn's, a long reply scanned for keys again at each stream end that
// changed nothing). The same batch is read at n and at 16n events: 16
// times the events must cost about 16 times the time (within three times
// that), where the square cost 256. The best of a few runs is
// compared, so that a busy machine does not fail it.
func TestMessagingTurnCostIsLinear(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// batch is a history batch of about n events.
		batch func(n int) []string
		// n is the smaller batch's: the cost of a scan at each event
		// grows slowly, and shows only over more.
		n int
	}{
		{name: "whole messages", n: 1000, batch: func(n int) []string {
			ev := make([]string, n)
			for i := range ev {
				ev[i] = `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`
			}
			return ev
		}},
		{name: "messages with ids", n: 2000, batch: func(n int) []string {
			ev := make([]string, n)
			for i := range ev {
				ev[i] = fmt.Sprintf(`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m%d","text":"Hello."}}`, i)
			}
			return ev
		}},
		{name: "stream ends after a long stream", n: 1000, batch: func(n int) []string {
			// The reply grows with n too: the rescan at each end cost
			// n times n.
			ev := []string{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","delta":"` + strings.Repeat("word ", n) + `","final":true}}`}
			for range n {
				ev = append(ev, `{"type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m"}}`)
			}
			return ev
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Config{BuildURL: "http://127.0.0.1:1", MessagingURL: "http://127.0.0.1:1", AllowHTTP: true,
				ConnectorToken: plantedConnector, MessagingHost: "example.com"})
			if err != nil {
				t.Fatal(err)
			}
			read := func(n int) time.Duration {
				frame := []byte(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[` + strings.Join(tc.batch(n), ",") + `]}`)
				best := time.Duration(1<<63 - 1)
				for range 3 {
					m := newMessagingSession(c, MessagingStart{})
					m.setJWT(plantedJWT)
					turn := &MessagingTurn{}
					start := time.Now()
					if err := m.accept(frame, turn, nil); err != nil {
						t.Fatal(err)
					}
					turn.finishReply()
					best = min(best, time.Since(start))
				}
				return best
			}
			n := tc.n
			small, large := read(n), read(16*n)
			if large > 48*small {
				t.Errorf("%d events took %v, %d took %v: %.1f times as long for 16 times the events", n, small, 16*n, large, float64(large)/float64(small))
			}
		})
	}
}
