package sim_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/sim"
)

func TestAlertRuleValidation(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{TickInterval: time.Hour})
	url := s.BuildURL + "/v1/alert-rules"
	valid := func() map[string]any {
		return map[string]any{"name": "slow", "metric": "turn_latency_p95", "operator": ">=", "threshold_value": 1500, "window_duration": "5m"}
	}
	with := func(k string, v any) map[string]any {
		m := valid()
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	type testCase struct {
		name  string
		body  any
		field string
	}
	run := func(t *testing.T, tc testCase) {
		r := call(t, "POST", url, s.BuildKey, tc.body)
		if r.status != 400 {
			t.Fatalf("status %d, want 400: %s", r.status, r.body)
		}
		m := r.json(t)
		if m["message"] == "" {
			t.Errorf("no message: %s", r.body)
		}
		errs := m["errors"].([]any)
		if tc.field == "" {
			return
		}
		for _, e := range errs {
			if e.(map[string]any)["field"] == tc.field {
				return
			}
		}
		t.Errorf("no error for field %s in %s", tc.field, r.body)
	}
	for _, tc := range []testCase{
		{"unknown metric", with("metric", "cpu"), "metric"},
		{"negative threshold", with("threshold_value", -1), "threshold_value"},
		{"fractional threshold", with("threshold_value", 1.5), "threshold_value"},
		{"string threshold", with("threshold_value", "10"), "threshold_value"},
		{"bad window", with("window_duration", "15m"), "window_duration"},
		{"bad operator", with("operator", "=>"), "operator"},
		{"missing metric", with("metric", nil), "metric"},
		{"missing window", with("window_duration", nil), "window_duration"},
		{"unknown project", with("project_id", "nobody"), "project_id"},
		{"empty name", with("name", ""), "name"},
		{"enabled not bool", with("enabled", "yes"), "enabled"},
		// null decodes into a number or a boolean as its zero value: it
		// must not read as a threshold of 0 or a disabled rule.
		{"null threshold", with("threshold_value", json.RawMessage("null")), "threshold_value"},
		{"null enabled", with("enabled", json.RawMessage("null")), "enabled"},
		{"unknown field", with("severity", "high"), "severity"},
		{"not an object", "[1]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
	t.Run("messages", func(t *testing.T) {
		r := call(t, "POST", url, s.BuildKey, with("threshold_value", -3))
		if !strings.Contains(string(r.body), "threshold must be a non-negative integer") {
			t.Errorf("message: %s", r.body)
		}
		r = call(t, "POST", url, s.BuildKey, with("metric", "x"))
		if !strings.Contains(string(r.body), "metric must be one of turn_latency_p50, turn_latency_p95, api_errors, function_errors, call_crashes, call_volume") {
			t.Errorf("message: %s", r.body)
		}
	})
	t.Run("auth", func(t *testing.T) {
		if r := call(t, "GET", url, "", nil); r.status != 401 || r.json(t)["message"] == nil {
			t.Errorf("no key: %d %s", r.status, r.body)
		}
		if r := call(t, "GET", url, s.RuntimeKey, nil); r.status != 401 {
			t.Errorf("runtime key: %d", r.status)
		}
		if r := call(t, "GET", s.RuntimeURL+"/v1/alerts", s.RuntimeKey, nil); r.status != 404 {
			t.Errorf("alerts on runtime host: %d", r.status)
		}
	})
}

func TestAlertRuleCRUD(t *testing.T) {
	t.Parallel()
	s, _ := startHelpdesk(t, sim.Options{TickInterval: time.Hour})
	url := s.BuildURL + "/v1/alert-rules"
	r := call(t, "POST", url, s.BuildKey, map[string]any{"name": "volume", "project_id": "helpdesk", "metric": "call_volume", "threshold_value": 100, "window_duration": "60m"})
	if r.status != 201 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	rule := r.json(t)
	id := rule["id"].(string)
	if !strings.HasPrefix(id, "alr_") || rule["state"] != "unknown" || rule["operator"] != ">=" || rule["enabled"] != true {
		t.Errorf("created rule %v", rule)
	}
	if got := call(t, "GET", url+"/"+id, s.BuildKey, nil).json(t); got["name"] != "volume" || got["project_id"] != "helpdesk" {
		t.Errorf("read %v", got)
	}
	r = call(t, "PATCH", url+"/"+id, s.BuildKey, map[string]any{"enabled": false, "threshold_value": 5})
	if got := r.json(t); r.status != 200 || got["enabled"] != false || got["threshold_value"] != 5.0 || got["metric"] != "call_volume" {
		t.Errorf("patch: %d %v", r.status, got)
	}
	if r := call(t, "PATCH", url+"/"+id, s.BuildKey, map[string]any{"window_duration": "1h"}); r.status != 400 {
		t.Errorf("bad patch: %d", r.status)
	}
	for i := range 9 {
		metric := []string{"api_errors", "function_errors", "call_crashes"}[i%3]
		body := map[string]any{"metric": metric, "threshold_value": i, "window_duration": "5m"}
		if r := call(t, "POST", url, s.BuildKey, body); r.status != 201 {
			t.Fatalf("rule %d: %d %s", i+2, r.status, r.body)
		}
	}
	r = call(t, "POST", url, s.BuildKey, map[string]any{"metric": "api_errors", "threshold_value": 1, "window_duration": "5m"})
	if r.status != 409 || r.json(t)["message"] == nil {
		t.Errorf("11th rule: %d %s", r.status, r.body)
	}

	list := func(q string) int {
		t.Helper()
		r := call(t, "GET", url+q, s.BuildKey, nil)
		if r.status != 200 {
			t.Fatalf("list %s: %d %s", q, r.status, r.body)
		}
		return len(r.json(t)["rules"].([]any))
	}
	for q, want := range map[string]int{"": 10, "?metric=api_errors": 3, "?enabled=false": 1, "?enabled=true": 9, "?project_id=helpdesk": 1, "?project_id=" + s.Info.ProjectIDs["helpdesk"]: 1} {
		if got := list(q); got != want {
			t.Errorf("list %q: %d rules, want %d", q, got, want)
		}
	}
	for _, q := range []string{"?metric=cpu", "?enabled=maybe"} {
		if r := call(t, "GET", url+q, s.BuildKey, nil); r.status != 400 {
			t.Errorf("list %s: %d", q, r.status)
		}
	}

	for _, tc := range []struct {
		method, id string
		want       int
	}{
		{"GET", "rule-1", 422}, {"PATCH", "alr_!", 422}, {"DELETE", "123", 422},
		{"GET", "alr_0000000000000000", 404}, {"PATCH", "alr_0000000000000000", 404}, {"DELETE", "alr_0000000000000000", 404},
	} {
		r := call(t, tc.method, url+"/"+tc.id, s.BuildKey, map[string]any{})
		if r.status != tc.want || r.json(t)["message"] == nil {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.id, r.status, r.body, tc.want)
		}
	}
	if r := call(t, "DELETE", url+"/"+id, s.BuildKey, nil); r.status != 204 {
		t.Errorf("delete: %d", r.status)
	}
	if r := call(t, "GET", url+"/"+id, s.BuildKey, nil); r.status != 404 {
		t.Errorf("read after delete: %d", r.status)
	}
	if r := call(t, "POST", url, s.BuildKey, map[string]any{"metric": "api_errors", "threshold_value": 1, "window_duration": "5m"}); r.status != 201 {
		t.Errorf("create after delete: %d", r.status)
	}
}

func TestAlertStates(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s, c := startHelpdesk(t, sim.Options{Now: clk.Now, TickInterval: time.Hour})
	url := s.BuildURL + "/v1/alert-rules"
	create := func(body map[string]any) string {
		r := call(t, "POST", url, s.BuildKey, body)
		if r.status != 201 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		return r.json(t)["id"].(string)
	}
	volume := create(map[string]any{"name": "busy", "metric": "call_volume", "threshold_value": 2, "window_duration": "5m"})
	crashes := create(map[string]any{"name": "crashes", "project_id": "helpdesk", "metric": "call_crashes", "operator": ">", "threshold_value": 0, "window_duration": "10m"})
	latency := create(map[string]any{"name": "latency", "metric": "turn_latency_p50", "operator": "<", "threshold_value": 1000000, "window_duration": "60m"})
	state := func(id string) string {
		t.Helper()
		return call(t, "GET", url+"/"+id, s.BuildKey, nil).json(t)["state"].(string)
	}
	firingIn := func(q string) []string {
		t.Helper()
		var out []string
		for _, a := range call(t, "GET", s.BuildURL+"/v1/alerts"+q, s.BuildKey, nil).json(t)["alerts"].([]any) {
			out = append(out, a.(map[string]any)["name"].(string))
		}
		return out
	}
	firing := func() []string { t.Helper(); return firingIn("") }
	for _, id := range []string{volume, crashes, latency} {
		if st := state(id); st != "no_data" {
			t.Errorf("rule %s without traffic: %s, want no_data", id, st)
		}
	}
	c.start(nil)
	if st := state(volume); st != "ok" {
		t.Errorf("one call: %s, want ok", st)
	}
	conv := c.start(nil)
	if st := state(volume); st != "alert" {
		t.Errorf("two calls: %s, want alert", st)
	}
	if st := state(latency); st != "alert" {
		t.Errorf("latency under the < threshold: %s, want alert", st)
	}
	// An idle-out is a call crash.
	clk.Advance(sim.DefaultChatIdleTimeout + time.Second)
	if r := c.turn(conv, "ping"); r.status != 408 {
		t.Fatalf("turn after idle: %d %s", r.status, r.body)
	}
	if st := state(crashes); st != "alert" {
		t.Errorf("after a crash: %s, want alert", st)
	}
	if got := fmt.Sprint(firing()); got != "[crashes latency]" {
		t.Errorf("firing %s, want [crashes latency] (the calls left the 5m window)", got)
	}
	// The alerts list filters as the rules list does (the reference's
	// "List endpoints ... can be filtered by project_id, metric and
	// enabled"), where it answered every firing rule whatever the query.
	for q, want := range map[string]string{
		"?project_id=helpdesk":                         "[crashes]",
		"?project_id=" + s.Info.ProjectIDs["helpdesk"]: "[crashes]",
		"?metric=turn_latency_p50":                     "[latency]",
		"?enabled=true":                                "[crashes latency]",
		"?enabled=false":                               "[]",
	} {
		if got := fmt.Sprint(firingIn(q)); got != want {
			t.Errorf("firing%s: %s, want %s", q, got, want)
		}
	}
	for _, q := range []string{"?metric=cpu", "?enabled=maybe"} {
		if r := call(t, "GET", s.BuildURL+"/v1/alerts"+q, s.BuildKey, nil); r.status != 400 || r.json(t)["message"] == nil {
			t.Errorf("alerts%s: %d %s, want 400", q, r.status, r.body)
		}
	}
	// Disabled: unknown, and no longer firing.
	call(t, "PATCH", url+"/"+crashes, s.BuildKey, map[string]any{"enabled": false})
	if st := state(crashes); st != "unknown" {
		t.Errorf("disabled: %s, want unknown", st)
	}
	clk.Advance(2 * time.Hour)
	if st := state(latency); st != "no_data" {
		t.Errorf("after the window: %s, want no_data", st)
	}
	if got := firing(); len(got) != 0 {
		t.Errorf("still firing: %v", got)
	}
}
