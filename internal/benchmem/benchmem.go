// Package benchmem measures the memory of benchmarks: the largest heap in
// use while an operation runs, sampled every millisecond.
//
//	var peak atomic.Uint64
//	stop := benchmem.SampleHeap(&peak)
//	... the operation ...
//	stop()
//	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
//
// It is imported by benchmarks only.
package benchmem

import (
	"runtime"
	"sync/atomic"
	"time"
)

// SampleHeap records the largest heap in use (runtime.MemStats.HeapInuse)
// into peak every millisecond, keeping any larger value already there,
// until the returned function is called; that function waits for the
// sampler to end.
func SampleHeap(peak *atomic.Uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			for p := peak.Load(); ms.HeapInuse > p && !peak.CompareAndSwap(p, ms.HeapInuse); p = peak.Load() {
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
