package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

// The benchmarks compare the runner with a bare HTTP loop sending the same
// requests at the same concurrency, straight to the simulator (no proxy):
//
//	go test -run '^$' -bench 'Runner$|BareLoop|ClientLoop' -benchtime 3000x ./internal/runner
//	go test -run '^$' -bench 'RunnerVsBare' -benchtime 8x ./internal/runner
//	go test -run '^$' -bench 'LatencyBound|Memory' -benchtime 1x ./internal/runner
//
// turns/s of BenchmarkRunner should stay within 80% of BenchmarkBareLoop;
// BenchmarkRunnerVsBare measures the ratio directly (runner/bare ≥ 0.8);
// BenchmarkClientLoop shows how much of the gap is the platform client's.
// BenchmarkLatencyBound checks the schedule against the ideal under 100 ms
// of simulated latency; BenchmarkMemory reports the heap a large run keeps.

const benchParallel = 16

// benchSim starts a simulator and a client sized for parallel.
func benchSim(b *testing.B, opts sim.Options, parallel int) (*simtest.Sim, *platform.Client, string) {
	b.Helper()
	s := simtest.Start(b, opts)
	c, err := platform.New(platform.Config{
		BuildURL:   s.BuildURL,
		BuildKey:   s.BuildKey,
		MaxPerHost: parallel,
		HTTPClient: &http.Client{Transport: platform.NewTransport(parallel)},
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, c, agentID(b, s, "restaurant")
}

// benchSays are the user turns of every benchmark conversation.
var benchSays = []string{"I'd like to book a table", "4 people at 7pm", "what was my reference?", "thanks, bye"}

func benchSuite(n, turns int) []*scenario.Suite {
	scs := make([]*scenario.Scenario, n)
	for i := range scs {
		sc := booking(fmt.Sprintf("books %d", i), 10)
		if turns > 4 {
			extra := turn(20, "what was my reference?", expectReply(20, "${ref}"))
			at := turnStart(sc, 3)
			sc.Steps = slices.Concat(sc.Steps[:at:at], extra, sc.Steps[at:])
		}
		scs[i] = sc
	}
	return []*scenario.Suite{suite(file, scs...)}
}

func BenchmarkRunner(b *testing.B) {
	_, c, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	suites := benchSuite(b.N, 4)
	opts := Options{Channel: DebugChat(c), Parallel: benchParallel, DefaultAgent: agent}
	b.ResetTimer()
	start := time.Now()
	res, err := Run(context.Background(), suites, opts)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	for _, cs := range res.Files[0].Cases {
		if cs.Status != result.Passed {
			b.Fatalf("%s: %s%s", cs.Name, cs.Status, describe(cs))
		}
	}
	b.ReportMetric(float64(b.N*(1+len(benchSays)))/elapsed.Seconds(), "turns/s")
}

func BenchmarkBareLoop(b *testing.B) {
	s, _, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	hc := &http.Client{Transport: platform.NewTransport(benchParallel)}
	b.ResetTimer()
	elapsed := bareLoop(b, hc, s, agent, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N*(1+len(benchSays)))/elapsed.Seconds(), "turns/s")
}

// BenchmarkRunnerVsBare alternates rounds of the runner and of the bare
// loop against one simulator and reports the runner's share of the bare
// loop's throughput: on a busy machine the two separate benchmarks see
// different load, the alternation sees the same.
func BenchmarkRunnerVsBare(b *testing.B) {
	const round = 500
	s, c, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	hc := &http.Client{Transport: platform.NewTransport(benchParallel)}
	opts := Options{Channel: DebugChat(c), Parallel: benchParallel, DefaultAgent: agent}
	var runner, bare time.Duration
	for b.Loop() {
		suites := benchSuite(round, 4)
		start := time.Now()
		if _, err := Run(context.Background(), suites, opts); err != nil {
			b.Fatal(err)
		}
		runner += time.Since(start)
		bare += bareLoop(b, hc, s, agent, round)
	}
	b.ReportMetric(bare.Seconds()/runner.Seconds(), "runner/bare")
}

// BenchmarkClientLoop sends the same conversations through the platform
// client without the runner, separating the runner's own cost (sessions,
// checks, captures, bookkeeping) from the client's (decoding, redaction).
func BenchmarkClientLoop(b *testing.B) {
	_, c, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for range benchParallel {
		wg.Go(func() {
			for range jobs {
				ex, err := c.StartChat(ctx, agent, platform.ChatStart{ClientEnv: "sandbox"})
				if err != nil {
					b.Error(err)
					continue
				}
				for _, say := range benchSays {
					if _, err := c.SendTurn(ctx, agent, ex.Result.ConversationID, platform.ChatTurn{ClientEnv: "sandbox", Message: say}); err != nil {
						b.Error(err)
					}
				}
			}
		})
	}
	for range b.N {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N*(1+len(benchSays)))/elapsed.Seconds(), "turns/s")
}

// bareLoop sends the benchmark conversation n times over plain net/http,
// benchParallel at a time, and returns the wall time.
func bareLoop(b *testing.B, hc *http.Client, s *simtest.Sim, agent string, n int) time.Duration {
	base := s.BuildURL + "/v1/agents/" + agent + "/debug-chat"
	post := func(url string, body []byte) []byte {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", s.BuildKey)
		res, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return nil
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			b.Errorf("%s: %d %s", url, res.StatusCode, out)
		}
		return out
	}
	startBody, _ := json.Marshal(platform.ChatStart{ClientEnv: "sandbox"})
	turnBodies := make([][]byte, len(benchSays))
	for i, say := range benchSays {
		turnBodies[i], _ = json.Marshal(platform.ChatTurn{ClientEnv: "sandbox", Message: say})
	}
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range benchParallel {
		wg.Go(func() {
			for range jobs {
				var created struct {
					ConversationID string `json:"conversationId"`
				}
				if err := json.Unmarshal(post(base, startBody), &created); err != nil {
					b.Error(err)
					continue
				}
				for _, body := range turnBodies {
					post(base+"/"+created.ConversationID, body)
				}
			}
		})
	}
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	return time.Since(start)
}

// BenchmarkLatencyBound runs 1,000 scenarios of 5 turns at Parallel 100
// with 100 ms of simulated latency per call. The ideal is 1000/100 × 6 calls
// × 100 ms = 6 s; the reported x-ideal should stay at or below 1.1.
func BenchmarkLatencyBound(b *testing.B) {
	const (
		n        = 1000
		parallel = 100
		latency  = 100 * time.Millisecond
	)
	_, c, agent := benchSim(b, sim.Options{Seed: 1, Faults: sim.Faults{Latency: latency}}, parallel)
	ideal := time.Duration(n/parallel*6) * latency
	for b.Loop() {
		start := time.Now()
		res, err := Run(context.Background(), benchSuite(n, 5), Options{Channel: DebugChat(c), Parallel: parallel, DefaultAgent: agent})
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if cs := res.Files[0].Cases[0]; cs.Status != result.Passed || len(cs.Attempts[0].Turns) != 6 {
			b.Fatalf("%s: %s%s", cs.Name, cs.Status, describe(cs))
		}
		b.ReportMetric(elapsed.Seconds()/ideal.Seconds(), "x-ideal")
	}
}

// BenchmarkMemory runs 20,000 scenarios and reports the heap the Result
// keeps (after a GC, with the Result alive) and the peak heap of the
// process, simulator included.
func BenchmarkMemory(b *testing.B) {
	const n = 20000
	_, c, agent := benchSim(b, sim.Options{Seed: 1, StoreCap: 1000}, 64)
	for b.Loop() {
		suites := benchSuite(n, 4)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), suites, Options{Channel: DebugChat(c), Parallel: 64, DefaultAgent: agent})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MB")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20)/n*1024, "KB/case")
		b.ReportMetric(float64(after.Sys)/(1<<20), "sys-MB")
		runtime.KeepAlive(res)
	}
}
