package platform

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/benchmem"
)

// BenchmarkHostileReplies: 256 turns at once, each answered with a 20 MB
// reply (no Content-Length, so nothing is refused before reading; half of
// them trickled in 64 KiB pieces so that all are read at once, half
// gzip-compressed, so the limit is met after decompression), through one
// client as a --parallel 256 run has. It reports the peak heap while
// they are read and the peak reply budget held:
//
//	go test -run '^$' -bench HostileReplies -benchtime 3x ./internal/platform
//
// The target is a peak heap under 300 MB (BENCHMARKS.md).
func BenchmarkHostileReplies(b *testing.B) {
	const parallel, size = 256, 20_000_000
	reply := bytes.Repeat([]byte("a"), 64<<10)
	var gz bytes.Buffer
	gzipped(&gz, size)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/agents/gzip/debug-chat" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
			return
		}
		w.Write([]byte(`{"conversationId":"c1","response":"`))
		for sent := 0; sent < size; sent += len(reply) {
			if _, err := w.Write(reply); err != nil {
				return
			}
			// Trickle, as a slow or hostile server does, so that
			// all the replies are being read at the same time.
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
	}))
	b.Cleanup(srv.Close)
	c, err := New(Config{BuildURL: srv.URL, BuildKey: "bk-secret-build", MaxPerHost: parallel,
		HTTPClient: &http.Client{Transport: NewTransport(parallel)}, Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		b.Fatal(err)
	}
	var peakHeap atomic.Uint64
	for b.Loop() {
		runtime.GC()
		stop := benchmem.SampleHeap(&peakHeap)
		var wg sync.WaitGroup
		for i := range parallel {
			wg.Go(func() {
				agent := "plain"
				if i%2 == 1 {
					agent = "gzip"
				}
				if _, err := c.StartChat(context.Background(), agent, ChatStart{ClientEnv: "sandbox"}); err == nil {
					b.Errorf("a 20 MB reply was accepted")
				}
			})
		}
		wg.Wait()
		stop()
	}
	b.ReportMetric(float64(peakHeap.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(c.budget.peak.Load())/(1<<20), "peak-budget-MiB")
}

// gzipped writes the gzip of a JSON reply of about size bytes.
func gzipped(w *bytes.Buffer, size int) {
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	zw.Write([]byte(`{"conversationId":"c1","response":"`))
	zw.Write(bytes.Repeat([]byte("a"), size))
	zw.Close()
}
