package scenario

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/agenttest/agenttest/internal/benchmem"
)

// bookingSuite is a suite file of n booking scenarios as scripts/bench.sh's
// gen_suite writes them (the Botium comparison's and the RSS run's).
func bookingSuite(n int) []byte {
	var b strings.Builder
	b.WriteString("suite: rss\nagent: restaurant\nenv: sandbox\nscenarios:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - name: books a table %d
    greeting: {response: {contains: Welcome}}
    turns:
      - say: I'd like to book a table
        expect:
          response: {contains: how many, ignore_case: true}
          trace: {includes: [CollectPartySize]}
      - say: 4 people at 7pm
        expect:
          state: {party_size: "4", time: "19:00"}
          node: ConfirmBooking
        capture: {ref: {response: 'reference ([A-Z0-9]+)'}}
      - say: what was my reference?
        expect: {response: {contains: "${ref}"}}
      - say: thanks, bye
        expect: {ended: true}
`, i)
	}
	return []byte(b.String())
}

// BenchmarkLoadMemory loads two files of 1,000 booking scenarios (a
// 2,000-conversation run of scripts/bench.sh botium) and reports the heap
// the loaded suites keep per scenario, after a collection with them alive,
// and the peak heap in use while loading: the run's memory before its
// first case.
//
//	go test ./internal/scenario -run '^$' -bench LoadMemory -benchtime 5x
func BenchmarkLoadMemory(b *testing.B) {
	const files, per = 2, 1000
	fsys := fstest.MapFS{}
	for f := range files {
		fsys[fmt.Sprintf("suite/rss-%d.yaml", f)] = &fstest.MapFile{Data: bookingSuite(per)}
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := benchmem.SampleHeap(&peak)
		suites, ds := Load(fsys, []string{"suite"})
		stop()
		if ds.HasErrors() || len(suites) != files {
			b.Fatal(ds)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(files*per), "kept-B/scenario")
		b.ReportMetric(float64(peak.Load()-before.HeapInuse)/(1<<20), "peak-heap-MB")
		runtime.KeepAlive(suites)
	}
}
