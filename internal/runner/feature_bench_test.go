package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/sim"
)

// benchFiles, when set, is a directory where BenchmarkFeatureVsYAML writes
// the two files it runs.
var benchFiles = flag.String("benchfiles", "", "write the files of BenchmarkFeatureVsYAML into `DIR`")

// BenchmarkFeatureVsYAML runs the same n booking conversations (greeting
// and four turns, seven checks, one capture) written as YAML and as a
// feature, at --parallel 50, against the in-process simulator with and
// without simulated latency. Each iteration runs both forms in turn against
// one simulator, so a load spike from another job hits both alike, and
// reports feature/yaml, the ratio of their wall times (BENCHMARKS.md,
// "Feature files vs YAML": target at most 1.2 without latency; both
// formats compile to the same steps, run by the same interpreter):
//
//	go test -run '^$' -bench FeatureVsYAML -benchtime 4x -count 3 ./internal/runner
func BenchmarkFeatureVsYAML(b *testing.B) {
	const n, parallel = 500, 50
	load := func(b *testing.B, name string, src []byte) []*scenario.Suite {
		suites, diags := scenario.Load(fstest.MapFS{name: {Data: src}}, nil)
		if diags.HasErrors() {
			b.Fatal(diags)
		}
		return suites
	}
	yml, feat := load(b, "bench.yaml", benchYAML(n)), load(b, "bench.feature", benchFeature(n))
	if dir := *benchFiles; dir != "" {
		// For the CLI comparison in BENCHMARKS.md.
		for name, src := range map[string][]byte{"bench.yaml": benchYAML(n), "bench.feature": benchFeature(n)} {
			if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, latency := range []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%s", latency), func(b *testing.B) {
			_, client, _ := benchSim(b, sim.Options{Seed: 1, Faults: sim.Faults{Latency: latency}}, parallel)
			opts := Options{Channel: DebugChat(client), Parallel: parallel, RetryDelay: -1}
			run := func(suites []*scenario.Suite) time.Duration {
				start := time.Now()
				res, err := Run(context.Background(), suites, opts)
				if err != nil {
					b.Fatal(err)
				}
				d := time.Since(start)
				for _, c := range res.Files[0].Cases {
					if c.Status != result.Passed {
						b.Fatalf("%s: %s%s", c.Name, c.Status, describe(c))
					}
				}
				return d
			}
			var ty, tf time.Duration
			for range b.N {
				ty += run(yml)
				tf += run(feat)
			}
			b.ReportMetric(ty.Seconds()/float64(b.N), "yaml-s/run")
			b.ReportMetric(tf.Seconds()/float64(b.N), "feature-s/run")
			b.ReportMetric(tf.Seconds()/ty.Seconds(), "feature/yaml")
		})
	}
}

func benchYAML(n int) []byte {
	var b strings.Builder
	b.WriteString(`suite: bench
agent: restaurant
scenarios:
  - name: books
    greeting: {response: {contains: Welcome}}
    turns:
      - say: I'd like to book a table
        expect: {node: CollectPartySize, trace: {includes: [CollectPartySize]}}
      - say: 4 people at 7pm
        expect: {node: ConfirmBooking, state: {party_size: "4"}}
        capture: {ref: {response: 'reference ([A-Z0-9]{6})'}}
      - say: what was my reference?
        expect: {response: {contains: "${ref}"}}
      - say: thanks, bye
        expect: {ended: true}
    examples:
`)
	for i := range n {
		fmt.Fprintf(&b, "      - {i: %d}\n", i)
	}
	return []byte(b.String())
}

func benchFeature(n int) []byte {
	var b strings.Builder
	b.WriteString(`@agent:restaurant
Feature: bench
  Scenario Outline: books
    Then the greeting contains "Welcome"
    When the user says "I'd like to book a table"
    Then the current node is "CollectPartySize"
    And the node trace includes "CollectPartySize"
    When the user says "4 people at 7pm"
    Then the current node is "ConfirmBooking"
    And the state "party_size" is "4"
    And I remember "ref" from the reply matching "reference ([A-Z0-9]{6})"
    When the user says "what was my reference?"
    Then the agent's reply contains "${ref}"
    When the user says "thanks, bye"
    Then the conversation ends

    Examples:
      | i |
`)
	for i := range n {
		fmt.Fprintf(&b, "      | %d |\n", i)
	}
	return []byte(b.String())
}
