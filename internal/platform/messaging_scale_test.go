package platform

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// historyBatches are history batches of about n events, of the shapes
// whose cost grew with the square of n: a history batch is one frame of
// up to 16 MiB, read at once, which the turn's timeout cannot cut short,
// so a batch of a few hundred thousand events (a long session's, or a
// hostile one) held the case for minutes past its timeout.
var historyBatches = []struct {
	name string
	// n is the smaller batch's size in the test (the benchmark's is
	// 4n): 16n events allocate n squared many times over n's bytes on
	// quadratic code, and take half a second under -race on linear code.
	n     int
	batch func(n int) []string
}{
	// The reply was joined again at each message.
	{name: "whole messages", n: 250, batch: func(n int) []string {
		ev := make([]string, n)
		for i := range ev {
			ev[i] = `{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"text":"Hello."}}`
		}
		return ev
	}},
	// Each message was also looked up by a scan of the turn's.
	{name: "messages with ids", n: 500, batch: func(n int) []string {
		ev := make([]string, n)
		for i := range ev {
			ev[i] = fmt.Sprintf(`{"type":"EVENT_TYPE_AGENT_MESSAGE","payload":{"message_id":"m%d","text":"Hello."}}`, i)
		}
		return ev
	}},
	// A long reply was scanned for keys again at each stream end that
	// changed nothing; the reply grows with n, so the rescans cost n
	// times n.
	{name: "stream ends after a long stream", n: 250, batch: func(n int) []string {
		ev := []string{`{"type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","delta":"` + strings.Repeat("word ", n) + `","final":true}}`}
		for range n {
			ev = append(ev, `{"type":"EVENT_TYPE_AGENT_MESSAGE_END","payload":{"message_id":"m"}}`)
		}
		return ev
	}},
}

// batchFrame is the history batch frame of events.
func batchFrame(events []string) []byte {
	return []byte(`{"type":"EVENT_TYPE_EVENT_BATCH","payload":[` + strings.Join(events, ",") + `]}`)
}

// readBatch reads frame into the opening turn of a new session, as the
// client does with the history batch, and hands the turn out.
func readBatch(tb testing.TB, c *Client, frame []byte) *MessagingTurn {
	m := newMessagingSession(c, MessagingStart{})
	m.setJWT(plantedJWT)
	turn := &MessagingTurn{}
	if err := m.accept(frame, turn, nil); err != nil {
		tb.Fatal(err)
	}
	turn.finishReply()
	return turn
}

func batchClient(tb testing.TB) *Client {
	c, err := New(Config{BuildURL: "http://127.0.0.1:1", MessagingURL: "http://127.0.0.1:1", AllowHTTP: true,
		ConnectorToken: plantedConnector, MessagingHost: "example.com"})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestMessagingTurnMemoryIsLinear: 16 times the events of a history
// batch allocate about 16 times the memory (within 24 times), where the
// reply joined again at each message, and a long reply copied into a new
// scan at each stream end, allocated 256 times (97–265 times on the code before). It
// counts bytes, not time, so a busy machine cannot fail it; the lookups
// by a scan, which allocate nothing, show in BenchmarkMessagingHistory.
// Not parallel: the bytes counted are the process's.
func TestMessagingTurnMemoryIsLinear(t *testing.T) {
	c := batchClient(t)
	for _, tc := range historyBatches {
		t.Run(tc.name, func(t *testing.T) {
			allocated := func(n int) uint64 {
				frame := batchFrame(tc.batch(n))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				turn := readBatch(t, c, frame)
				runtime.ReadMemStats(&after)
				if len(turn.Messages) == 0 || turn.Reply == "" {
					t.Fatalf("%d events: no reply read", n)
				}
				return after.TotalAlloc - before.TotalAlloc
			}
			small, large := allocated(tc.n), allocated(16*tc.n)
			if large > 24*small {
				t.Errorf("%d events allocated %d bytes, %d events %d: %.1f times as much for 16 times the events", tc.n, small, 16*tc.n, large, float64(large)/float64(small))
			}
		})
	}
}

// BenchmarkMessagingHistory reads the history batches of
// TestMessagingTurnMemoryIsLinear at 4n and 64n events: the time per
// event should stay flat (BENCHMARKS.md, "Messaging history batches").
//
//	go test -run '^$' -bench 'MessagingHistory' -benchtime 3x ./internal/platform
func BenchmarkMessagingHistory(b *testing.B) {
	c := batchClient(b)
	for _, tc := range historyBatches {
		for _, n := range []int{4 * tc.n, 64 * tc.n} {
			b.Run(tc.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				frame := batchFrame(tc.batch(n))
				for b.Loop() {
					readBatch(b, c, frame)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
			})
		}
	}
}
