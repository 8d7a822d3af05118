package runner

import (
	"context"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/sim"
)

func BenchmarkZZRounds(b *testing.B) {
	s, c, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	hc := &http.Client{Transport: platform.NewTransport(benchParallel)}
	opts := Options{Channel: DebugChat(c), Parallel: benchParallel, DefaultAgent: agent}
	for i := 0; i < 20; i++ {
		suites := benchSuite(500, 4)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		gc0 := ms.NumGC
		c0 := cpu()
		start := time.Now()
		if _, err := Run(context.Background(), suites, opts); err != nil {
			b.Fatal(err)
		}
		r := time.Since(start)
		c1 := cpu()
		runtime.ReadMemStats(&ms)
		gc1 := ms.NumGC
		bb := bareLoop(b, hc, s, agent, 500)
		c2 := cpu()
		runtime.ReadMemStats(&ms)
		gc2 := ms.NumGC
		b.Logf("runner %v cpu %v (gc %d) bare %v cpu %v (gc %d) ratio %.2f cpuratio %.2f", r, c1-c0, gc1-gc0, bb, c2-c1, gc2-gc1, bb.Seconds()/r.Seconds(), (c2-c1).Seconds()/(c1-c0).Seconds())
	}
}

func BenchmarkZZTiny(b *testing.B) {
	s, c, agent := benchSim(b, sim.Options{Seed: 1}, benchParallel)
	hc := &http.Client{Transport: platform.NewTransport(benchParallel)}
	opts := Options{Channel: DebugChat(c), Parallel: benchParallel, DefaultAgent: agent}
	for i := 0; i < 8; i++ {
		suites := benchSuite(16, 4)
		start := time.Now()
		if _, err := Run(context.Background(), suites, opts); err != nil {
			b.Fatal(err)
		}
		r := time.Since(start)
		bb := bareLoop(b, hc, s, agent, 16)
		b.Logf("runner %v bare %v", r, bb)
	}
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
