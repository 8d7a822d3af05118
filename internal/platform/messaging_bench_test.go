package platform

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/agenttest/agenttest/internal/benchmem"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"github.com/agenttest/agenttest/internal/sim/simtest"
	"golang.org/x/sync/errgroup"
)

// benchScript is the five user turns of a benchmark conversation, after
// the greeting; the last one ends it.
var benchScript = []string{"ping", "what can you do", "ping", "ping", "bye"}

const (
	benchConversations = 1000
	benchParallel      = 50
)

// BenchmarkConversations runs 1,000 conversations of a greeting and five
// turns, 50 at a time, through the client against the in-process
// simulator, over Messaging (whole and streamed replies, and with 10% of
// the sockets dropped) and over debug chat. One op is the 1,000
// conversations on a fresh simulator; peak-heap-MB is the largest live
// heap (client and simulator together) sampled every millisecond.
//
//	go test -run '^$' -bench 'Conversations$' -benchtime 3x -count 3 ./internal/platform
func BenchmarkConversations(b *testing.B) {
	def := helpdeskAgent(b)
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, c *Client) error
		opts sim.Options
	}{
		{"debug-chat", benchDebugChat, sim.Options{}},
		{"messaging", benchMessaging(MessagingStart{}), sim.Options{}},
		{"messaging-streamed", benchMessaging(MessagingStart{Streaming: true}), sim.Options{}},
		{"messaging-drop10", benchMessaging(MessagingStart{MaxReconnects: 8}), sim.Options{Faults: sim.Faults{SocketDrop: 0.1}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak atomic.Uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				opts := tc.opts
				opts.Seed = int64(i + 1)
				opts.Agents = []*agent.Definition{def}
				opts.StoreCap = 2 * benchConversations
				c, closeSim := benchSim(b, opts)
				runtime.GC()
				stop := benchmem.SampleHeap(&peak)
				b.StartTimer()
				g, ctx := errgroup.WithContext(context.Background())
				g.SetLimit(benchParallel)
				for range benchConversations {
					g.Go(func() error { return tc.run(ctx, c) })
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				stop()
				closeSim()
				b.StartTimer()
			}
			b.ReportMetric(float64(benchConversations*b.N)/b.Elapsed().Seconds(), "conversations/s")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		})
	}
}

// benchSim starts a simulator for one iteration, so that each starts
// empty and the previous one's memory is gone.
func benchSim(b *testing.B, opts sim.Options) (*Client, func()) {
	s, stop := simtest.Serve(b, opts)
	c, err := New(Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, BuildKey: s.BuildKey, RuntimeKey: s.RuntimeKey,
		MessagingURL: s.MessagingURL, ConnectorToken: s.Info.MessagingConnectors["helpdesk"]["sandbox"], MessagingHost: s.Info.MessagingHost})
	if err != nil {
		b.Fatal(err)
	}
	return c, stop
}

func benchDebugChat(ctx context.Context, c *Client) error {
	ex, err := c.StartChat(ctx, "helpdesk", ChatStart{ClientEnv: "sandbox"})
	if err != nil {
		return err
	}
	for _, text := range benchScript {
		if _, err := c.SendTurn(ctx, "helpdesk", ex.Result.ConversationID, ChatTurn{ClientEnv: "sandbox", Message: text}); err != nil {
			return err
		}
	}
	return nil
}

func benchMessaging(st MessagingStart) func(ctx context.Context, c *Client) error {
	return func(ctx context.Context, c *Client) error {
		m, err := c.OpenMessaging(ctx, st)
		if m != nil {
			defer m.Close()
		}
		if err != nil {
			return err
		}
		for _, text := range benchScript {
			if _, err := m.Say(ctx, text); err != nil {
				return err
			}
		}
		return nil
	}
}

// BenchmarkStreamedReply folds one reply streamed in chunks into a turn,
// as the client does for each event of a socket. The reply's text grows
// in a secret.Stream (maskSpread), which scans at each chunk only the
// chunk and the redactor's reach before it and copies no earlier chunk,
// so the cost per chunk stays flat as the reply grows (it grew with the
// reply's length when the text was copied and redacted whole at each
// chunk: BENCHMARKS.md, "Streamed replies"). The sizes are those of a long
// LLM answer streamed a token at a time.
//
//	go test -run '^$' -bench 'StreamedReply' -count 5 ./internal/platform
func BenchmarkStreamedReply(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(strconv.Itoa(n)+"-chunks", func(b *testing.B) {
			c, err := New(Config{BuildURL: "http://127.0.0.1:1", MessagingURL: "http://127.0.0.1:1", AllowHTTP: true,
				ConnectorToken: plantedConnector, MessagingHost: "example.com"})
			if err != nil {
				b.Fatal(err)
			}
			events := make([]MessagingEvent, n)
			for i := range events {
				raw := fmt.Sprintf(`{"id":"%d","type":"EVENT_TYPE_AGENT_MESSAGE_CHUNK","payload":{"message_id":"m","delta":"token%d ","final":%v}}`, i+1, i, i == n-1)
				if events[i], err = decodeEvent([]byte(raw)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				m := newMessagingSession(c, MessagingStart{})
				m.setJWT(plantedJWT)
				turn := &MessagingTurn{}
				for _, e := range events {
					if err := m.add(e, turn, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
