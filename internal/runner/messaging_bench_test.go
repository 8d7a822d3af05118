package runner

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/benchmem"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// BenchmarkRunnerMessaging runs 1,000 scenarios of a greeting and five
// turns (each checked, one capture) at Parallel 50 through the runner,
// over debug chat and over Messaging (whole replies, and with 10% of the
// sockets dropped), against a fresh in-process simulator per iteration.
// One op is the 1,000 scenarios. peak-heap-MB is the largest heap in use
// during the op (runner, client and simulator share the process, sampled
// every millisecond); kept-KB/case is what the Result holds per case once
// the run is over (transcripts with their events, after a GC):
//
//	go test -run '^$' -bench RunnerMessaging -benchtime 3x -count 3 ./internal/runner
func BenchmarkRunnerMessaging(b *testing.B) {
	const n, parallel = 1000, 50
	for _, tc := range []struct {
		name   string
		via    string
		faults sim.Faults
	}{
		{"debug-chat", "debug_chat", sim.Faults{}},
		{"messaging", "messaging", sim.Faults{}},
		{"messaging-drop10", "messaging", sim.Faults{SocketDrop: 0.1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			suites, diags := scenario.Load(fstest.MapFS{"bench.yaml": {Data: benchMessagingYAML(n, tc.via)}}, nil)
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			var peak atomic.Uint64
			var kept float64
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				opts, stopSim := benchMessagingSim(b, sim.Options{Seed: int64(i + 1), Faults: tc.faults}, parallel)
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				stop := benchmem.SampleHeap(&peak)
				b.StartTimer()
				res, err := Run(context.Background(), suites, opts)
				b.StopTimer()
				stop()
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range res.Files[0].Cases {
					if c.Status != result.Passed {
						b.Fatalf("%s: %s%s", c.Name, c.Status, describe(c))
					}
				}
				stopSim()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				kept += float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / 1024 / n
				runtime.KeepAlive(res)
				b.StartTimer()
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/1000-conversations")
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
			b.ReportMetric(kept/float64(b.N), "kept-KB/case")
		})
	}
}

// benchMessagingYAML is n booking conversations over via: a greeting and
// five turns, each with a reply check, one capture, and the end.
func benchMessagingYAML(n int, via string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "suite: bench\nagent: restaurant\nvia: %s\nscenarios:\n", via)
	for i := range n {
		fmt.Fprintf(&b, `  - name: books %d
    greeting: {response: {contains: Welcome}}
    turns:
      - say: I'd like to book a table
        expect: {response: {contains: How many}}
      - say: 4 people at 7pm
        expect: {response: {contains: reference}}
        capture: {ref: {response: 'reference ([A-Z0-9]{6})'}}
      - say: what was my reference?
        expect: {response: {contains: "${ref}"}}
      - say: what was my reference again?
        expect: {response: {contains: "${ref}"}}
      - say: thanks, bye
        expect: {ended: true}
`, i)
	}
	return []byte(b.String())
}

// benchMessagingSim starts a simulator on one loopback listener and
// returns run options with both channels to it, and its stop.
func benchMessagingSim(b *testing.B, opts sim.Options, parallel int) (Options, func()) {
	opts.StoreCap = 4000
	s, stopSim := simtest.Serve(b, opts)
	tr := platform.NewTransport(parallel)
	cfg := platform.Config{BuildURL: s.BuildURL, BuildKey: s.BuildKey, MessagingURL: s.MessagingURL, MessagingHost: s.Info.MessagingHost,
		MaxPerHost: parallel, HTTPClient: &http.Client{Transport: tr}}
	c, err := platform.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	token := func(agent, env string) (string, error) { return s.Info.MessagingConnectors[agent][env], nil }
	o := Options{
		Channel:   DebugChat(c),
		Messaging: Messaging(MessagingClients(cfg, token), MessagingOptions{MaxReconnects: 8}),
		Parallel:  parallel, RetryDelay: -1,
	}
	return o, func() {
		tr.CloseIdleConnections()
		stopSim()
	}
}
