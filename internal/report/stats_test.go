package report

import (
	"strings"
	"testing"
)

// TestStatsInEveryView checks that the console, JUnit and the summary say
// the same about statistical and quarantined cases: the quarantined
// failure does not fail anything, the inconclusive one does, and its
// failure says it is inconclusive.
func TestStatsInEveryView(t *testing.T) {
	r := statsFixture()
	s := Summarize(r)
	if s.Passed != 2 || s.Failed != 3 || s.Inconclusive != 1 || s.Quarantined != 1 || s.Lapsed != 1 || s.Total != 6 || s.Status.String() != "failed" {
		t.Errorf("summary %+v", s)
	}
	doc := junitOf(t, r)
	if doc.Failures != 3 || doc.Skipped != 1 || doc.Errors != 0 {
		t.Errorf("JUnit totals: %d failures, %d skipped, %d errors", doc.Failures, doc.Skipped, doc.Errors)
	}
	byName := map[string]xCase{}
	for _, c := range doc.Suites[0].Cases {
		byName[c.Name] = c
	}
	props := func(c xCase) map[string]string {
		m := map[string]string{}
		for _, p := range c.Properties {
			m[p.Name] = p.Value
		}
		return m
	}
	healthy := props(byName["tells callers the opening hours"])
	for k, v := range map[string]string{"repeat.procedure": "sprt", "repeat.decision": "passed", "repeat.runs": "28", "repeat.passed": "27",
		"repeat.errored": "1", "repeat.confidence": "0.95", "repeat.interval": "[0.805, 1.000] at 90%"} {
		if healthy[k] != v {
			t.Errorf("property %s = %q, want %q", k, healthy[k], v)
		}
	}
	if c := byName["reads back test results"]; c.Failure == nil || c.Failure.Type != "inconclusive" || !strings.HasPrefix(c.Failure.Message, "inconclusive: passed 9 of 10 runs") {
		t.Errorf("inconclusive case: %+v", c.Failure)
	}
	q := byName["answers in Welsh"]
	if q.Failure != nil || q.Skipped == nil || !strings.Contains(q.Skipped.Message, "quarantined until 2026-12-31") ||
		!strings.Contains(q.SystemOut, "run 1 of 5 failed") || props(q)["quarantined"] != "true" {
		t.Errorf("quarantined case: skipped %+v, properties %v, system-out:\n%s", q.Skipped, props(q), q.SystemOut)
	}
	if l := byName["hands over to reception"]; l.Failure == nil || props(l)["quarantined"] != "false" {
		t.Errorf("lapsed quarantine does not fail: %+v", l)
	}
	// Every failed run's transcript is in the file reports.
	if body := byName["renews a repeat prescription"].Failure.Body; strings.Count(body, "transcript (conversation") != 5 {
		t.Errorf("the JUnit body holds %d transcripts of 5 failed runs:\n%s", strings.Count(body, "transcript (conversation"), body)
	}
}
