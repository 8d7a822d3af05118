package platform

import (
	"context"
	"runtime"
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
				for n := 0; n < benchConversations; n++ {
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
