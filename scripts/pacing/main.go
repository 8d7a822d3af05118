// Command pacing reads the JSON report of a run against a slow or
// rate-limited platform and prints how close the run came to its ideal
// schedule (BENCHMARKS.md, "Pacing"; scripts/bench.sh paced):
//
//	go run ./scripts/pacing -report report.json -parallel 32 -rate 20 -burst 20
//
// The ideals: with a rate limit, (calls - burst) / rate; with latency, the
// calls' latencies spread over the workers (their sum / parallel), and the
// greedy schedule (each case, in order, on the worker free first, taking
// the sum of its calls' latencies). The run's wall time is compared with
// the larger of the rate ideal and the greedy schedule, and so is the
// span of the cases (the run's wall less its reads before the first case
// and after the last).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
)

type report struct {
	Run struct {
		DurationMS float64 `json:"duration_ms"`
		Status     string  `json:"status"`
		Pacing     *struct {
			Limited  int `json:"limited"`
			Accepted int `json:"accepted"`
		} `json:"pacing"`
	} `json:"run"`
	Counts map[string]int `json:"counts"`
	Files  []struct {
		Cases []struct {
			Attempts []struct {
				Started    time.Time `json:"started"`
				DurationMS float64   `json:"duration_ms"`
				Turns      []struct {
					LatencyMS float64 `json:"latency_ms"`
				} `json:"turns"`
			} `json:"attempts"`
		} `json:"cases"`
	} `json:"files"`
}

func main() {
	path := flag.String("report", "report.json", "JSON report of the run")
	parallel := flag.Int("parallel", 8, "--parallel of the run")
	rate := flag.Float64("rate", 0, "the platform's limit in requests per second (0: none)")
	burst := flag.Int("burst", 0, "the platform's burst")
	flag.Parse()
	data, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var cases []time.Duration
	calls := 0
	var sum time.Duration
	// first and last bound the cases' attempts: the run's wall less what
	// it does before the first case and after the last (the deployment
	// reads of docs/promoting.md, one call each).
	var first, last time.Time
	for _, f := range r.Files {
		for _, c := range f.Cases {
			var d time.Duration
			for _, a := range c.Attempts {
				if end := a.Started.Add(time.Duration(a.DurationMS * float64(time.Millisecond))); !a.Started.IsZero() {
					if first.IsZero() || a.Started.Before(first) {
						first = a.Started
					}
					if end.After(last) {
						last = end
					}
				}
				for _, t := range a.Turns {
					d += time.Duration(t.LatencyMS * float64(time.Millisecond))
					calls++
				}
			}
			cases = append(cases, d)
			sum += d
		}
	}
	limited := 0
	if p := r.Run.Pacing; p != nil {
		limited = p.Limited
	}
	wall := time.Duration(r.Run.DurationMS * float64(time.Millisecond))
	latencyIdeal := sum / time.Duration(max(*parallel, 1))
	greedy := schedule(cases, *parallel)
	var rateIdeal time.Duration
	if *rate > 0 {
		rateIdeal = time.Duration(float64(calls-*burst) / *rate * float64(time.Second))
	}
	ideal := max(rateIdeal, greedy)
	fmt.Printf("status %s: %d passed, %d flaky, %d failed, %d errored\n", r.Run.Status, r.Counts["passed"], r.Counts["flaky"], r.Counts["failed"], r.Counts["errored"])
	fmt.Printf("calls %d, answers 429 %d (%.1f%% of the calls)\n", calls, limited, 100*float64(limited)/float64(max(calls, 1)))
	fmt.Printf("wall %s; rate ideal %s, latency ideal %s, greedy schedule %s\n", round(wall), round(rateIdeal), round(latencyIdeal), round(greedy))
	fmt.Printf("x-ideal %.3f (wall / max(rate ideal, greedy schedule))\n", wall.Seconds()/ideal.Seconds())
	span := last.Sub(first)
	fmt.Printf("cases' span %s (first attempt's start to last attempt's end): x-ideal %.3f; before and after it %s\n",
		round(span), span.Seconds()/ideal.Seconds(), round(wall-span))
}

// schedule is the makespan of the durations run in order, each on the
// worker free first.
func schedule(ds []time.Duration, workers int) time.Duration {
	free := make([]time.Duration, max(workers, 1))
	for _, d := range ds {
		i := 0
		for j := range free {
			if free[j] < free[i] {
				i = j
			}
		}
		free[i] += d
	}
	return slices.Max(free)
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
