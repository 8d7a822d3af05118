package sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTrafficMeasure(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tr := newTraffic()
	for i := 1; i <= 100; i++ {
		tr.turn("a", t0.Add(time.Duration(i)*time.Second), time.Duration(i*10)*time.Millisecond, i%10/9)
	}
	tr.turn("b", t0, 5*time.Second, 0)
	tr.call("a", t0)
	tr.crash("b", t0)
	tr.apiError("", t0)
	tw := t0.Add(-10 * time.Minute)
	tr.call("w", tw)
	tr.request("r", t0)
	now := t0.Add(100 * time.Second)
	type testCase struct {
		metric, project string
		window          time.Duration
		want            int64
		ok              bool
	}
	for _, tc := range []testCase{
		{"turn_latency_p50", "a", 5 * time.Minute, 500, true},
		{"turn_latency_p95", "a", 5 * time.Minute, 950, true},
		{"turn_latency_p95", "", 5 * time.Minute, 960, true},
		{"turn_latency_p50", "a", 10 * time.Second, 950, true},
		{"function_errors", "a", 5 * time.Minute, 10, true},
		{"call_volume", "", 5 * time.Minute, 1, true},
		{"call_crashes", "b", 5 * time.Minute, 1, true},
		{"api_errors", "", 5 * time.Minute, 1, true},
		{"api_errors", "a", 5 * time.Minute, 0, true},
		{"turn_latency_p50", "c", 5 * time.Minute, 0, false},
		{"call_volume", "c", 5 * time.Minute, 0, false},
		// Requests alone are data: the counts are 0, not no_data.
		{"api_errors", "r", 5 * time.Minute, 0, true},
	} {
		got, ok := tr.measure(tc.metric, tc.project, now, tc.window)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %q %v: %d %v, want %d %v", tc.metric, tc.project, tc.window, got, ok, tc.want, tc.ok)
		}
	}
	// The window is (now-window, now]: a call exactly a window ago is out,
	// and so is what comes after now.
	if got, ok := tr.measure("call_volume", "w", tw.Add(5*time.Minute), 5*time.Minute); ok {
		t.Errorf("call exactly a window ago measured: %d", got)
	}
	if got, _ := tr.measure("turn_latency_p50", "a", t0.Add(50*time.Second), 5*time.Minute); got != 250 {
		t.Errorf("p50 at 50s: %d, want 250 from the turns up to then", got)
	}
	// An hour later everything has left the longest window and is pruned.
	tr.request("a", now.Add(2*time.Hour))
	if _, ok := tr.measure("turn_latency_p50", "", now.Add(2*time.Hour), time.Hour); ok {
		t.Error("old turns still measured")
	}
	if n := len(tr.slots); n != 1 {
		t.Errorf("%d slots kept, want 1", n)
	}
}

func TestLatencyBucket(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]int64{0: 0, 999: 999, 1234: 1230, 98765: 98700, -5: 0} {
		if got := latencyBucket(in); got != want {
			t.Errorf("latencyBucket(%d) = %d, want %d", in, got, want)
		}
	}
}

// TestAPIErrorsCountInjected checks that injected 500s count as API errors.
func TestAPIErrorsCountInjected(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Now: func() time.Time { return now }, TickInterval: time.Hour, Faults: Faults{Error500: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	for range 3 {
		resp, err := http.Get(hs.URL + "/v1/agents/" + s.agentIDs[0] + "/deployments/active")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 500 {
			t.Fatalf("status %d, want the injected 500", resp.StatusCode)
		}
	}
	if got, ok := s.traffic.measure("api_errors", s.agentIDs[0], now, 5*time.Minute); got != 3 || !ok {
		t.Errorf("api_errors %d %v, want 3", got, ok)
	}
}
