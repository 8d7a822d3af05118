package sim

import (
	"math"
	"slices"
	"sync"
	"time"
)

// traffic counts what the alert metrics are computed from, in one-second
// slots per project, over the longest alert window. Counting as events
// happen keeps evaluation cheap and memory bounded, whatever the store
// holds: at most (60m / trafficSlot) slots per project plus the unscoped one.
type traffic struct {
	mu      sync.Mutex
	slots   map[trafficKey]*trafficSlotData
	newest  int64 // newest slot seen, to prune once per slot
	horizon int64 // slots kept behind newest
}

// trafficKey is one slot of one project; project "" holds what cannot be
// tied to a project (API errors on paths without one).
type trafficKey struct {
	slot    int64
	project string
}

// trafficSlotData is one slot's counters. latency maps a latency bucket
// (see latencyBucket) to its count.
type trafficSlotData struct {
	requests, apiErrors, funcErrors, crashes, calls, turns int
	latency                                                map[int64]int
}

func newTraffic() *traffic {
	var longest time.Duration
	for _, d := range alertWindows {
		longest = max(longest, d)
	}
	return &traffic{slots: map[trafficKey]*trafficSlotData{}, horizon: int64(longest/trafficSlot) + 1}
}

func slotOf(t time.Time) int64 { return t.UnixNano() / int64(trafficSlot) }

// add runs f on the counters of project's slot at t.
func (tr *traffic) add(project string, at time.Time, f func(d *trafficSlotData)) {
	slot := slotOf(at)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if slot > tr.newest {
		tr.newest = slot
		for k := range tr.slots {
			if k.slot < slot-tr.horizon {
				delete(tr.slots, k)
			}
		}
	}
	if slot < tr.newest-tr.horizon {
		return // older than any window
	}
	k := trafficKey{slot, project}
	d := tr.slots[k]
	if d == nil {
		d = &trafficSlotData{}
		tr.slots[k] = d
	}
	f(d)
}

// latencyBucket keeps milliseconds exact below one second and to three
// significant digits above, so percentiles are exact where tests look and
// the histogram stays small under load.
func latencyBucket(ms int64) int64 {
	if ms < 1000 {
		return max(ms, 0)
	}
	p := int64(math.Pow10(int(math.Log10(float64(ms))) - 2))
	return ms / p * p
}

func (tr *traffic) request(project string, at time.Time) {
	tr.add(project, at, func(d *trafficSlotData) { d.requests++ })
}

func (tr *traffic) apiError(project string, at time.Time) {
	tr.add(project, at, func(d *trafficSlotData) { d.apiErrors++ })
}

func (tr *traffic) turn(project string, at time.Time, latency time.Duration, funcErrors int) {
	tr.add(project, at, func(d *trafficSlotData) {
		d.turns++
		d.funcErrors += funcErrors
		if d.latency == nil {
			d.latency = map[int64]int{}
		}
		d.latency[latencyBucket(latency.Milliseconds())]++
	})
}

func (tr *traffic) call(project string, at time.Time) {
	tr.add(project, at, func(d *trafficSlotData) { d.calls++ })
}

func (tr *traffic) crash(project string, at time.Time) {
	tr.add(project, at, func(d *trafficSlotData) { d.crashes++ })
}

// measure computes metric over (now-window, now] for project ("" means
// account-wide: every project and the unscoped counters). ok is false when
// the window holds no data for the metric: no turns for the latency
// metrics, no traffic at all for the counts.
func (tr *traffic) measure(metric, project string, now time.Time, window time.Duration) (value int64, ok bool) {
	last := slotOf(now)
	first := last - int64(window/trafficSlot) + 1
	var sum trafficSlotData
	hist := map[int64]int{}
	tr.mu.Lock()
	for k, d := range tr.slots {
		if k.slot < first || k.slot > last || (project != "" && k.project != project) {
			continue
		}
		sum.requests += d.requests
		sum.apiErrors += d.apiErrors
		sum.funcErrors += d.funcErrors
		sum.crashes += d.crashes
		sum.calls += d.calls
		sum.turns += d.turns
		for b, n := range d.latency {
			hist[b] += n
		}
	}
	tr.mu.Unlock()
	switch metric {
	case "turn_latency_p50":
		return percentile(hist, sum.turns, 0.50), sum.turns > 0
	case "turn_latency_p95":
		return percentile(hist, sum.turns, 0.95), sum.turns > 0
	}
	if sum.requests+sum.apiErrors+sum.turns+sum.calls+sum.crashes == 0 {
		return 0, false
	}
	switch metric {
	case "api_errors":
		return int64(sum.apiErrors), true
	case "function_errors":
		return int64(sum.funcErrors), true
	case "call_crashes":
		return int64(sum.crashes), true
	case "call_volume":
		return int64(sum.calls), true
	}
	return 0, false
}

// percentile is the nearest-rank percentile of a histogram of n values.
func percentile(hist map[int64]int, n int, p float64) int64 {
	if n == 0 {
		return 0
	}
	keys := make([]int64, 0, len(hist))
	for k := range hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rank := int(math.Ceil(p * float64(n)))
	seen := 0
	for _, k := range keys {
		seen += hist[k]
		if seen >= rank {
			return k
		}
	}
	return keys[len(keys)-1]
}
