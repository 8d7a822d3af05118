package platform

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestLooseRecordMembers reads alert rules, whose members the reference
// does not show beyond the writable ones, in the forms another
// implementation plausibly sends: a null member gives way to the next
// name, numbers and booleans as text, numbers as ids, and values that are
// no number (NaN, Inf, beyond an int32) read as none rather than as
// garbage.
func TestLooseRecordMembers(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body string
		check      func(r *AlertRule) bool
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		c := serveFixed(t, &fixed{status: http.StatusOK, body: tc.body})
		// A numeric id reads as its text: that rule is asked about.
		ask := "alr_1"
		if strings.Contains(tc.body, `"id":17`) {
			ask = "17"
		}
		r, err := c.GetAlertRule(context.Background(), ask)
		if err != nil {
			t.Fatal(err)
		}
		if !tc.check(r) {
			t.Errorf("read %+v", *r)
		}
	}
	for _, tc := range []testCase{
		{"null gives way to the next name", `{"id":null,"rule_id":"alr_1","metric":"api_errors","threshold_value":null,"threshold":5}`,
			func(r *AlertRule) bool { return r.ID == "alr_1" && r.ThresholdValue == 5 }},
		{"numeric id", `{"id":17,"metric":"api_errors"}`, func(r *AlertRule) bool { return r.ID == "17" }},
		{"boolean as text", `{"id":"alr_1","metric":"api_errors","name":true}`, func(r *AlertRule) bool { return r.Name == "true" }},
		{"enabled as padded text", `{"id":"alr_1","metric":"api_errors","enabled":" false "}`, func(r *AlertRule) bool { return !r.Enabled }},
		{"enabled not understood", `{"id":"alr_1","metric":"api_errors","enabled":"yes"}`, func(r *AlertRule) bool { return r.Enabled }},
		{"enabled as a number", `{"id":"alr_1","metric":"api_errors","enabled":-1}`, func(r *AlertRule) bool { return r.Enabled }},
		{"disabled as a number", `{"id":"alr_1","metric":"api_errors","enabled":0}`, func(r *AlertRule) bool { return !r.Enabled }},
		{"threshold as padded text", `{"id":"alr_1","metric":"api_errors","threshold_value":" 1500 "}`,
			func(r *AlertRule) bool { return r.ThresholdValue == 1500 }},
		{"threshold NaN", `{"id":"alr_1","metric":"api_errors","threshold_value":"NaN","value":"Inf"}`,
			func(r *AlertRule) bool { return r.ThresholdValue == 0 && r.Value == nil }},
		{"threshold beyond int32", `{"id":"alr_1","metric":"api_errors","threshold_value":1e12}`, func(r *AlertRule) bool { return r.ThresholdValue == 0 }},
		{"threshold below -int32", `{"id":"alr_1","metric":"api_errors","threshold_value":-1e12}`, func(r *AlertRule) bool { return r.ThresholdValue == 0 }},
		{"state as status", `{"id":"alr_1","metric":"api_errors","status":"alert"}`, func(r *AlertRule) bool { return r.State == "alert" }},
		{"times in Unix seconds", `{"id":"alr_1","metric":"api_errors","createdAt":1772366400}`,
			func(r *AlertRule) bool { return r.CreatedAt.Unix() == 1772366400 }},
		{"id without a metric", `{"id":"alr_1"}`, func(r *AlertRule) bool { return r.ID == "alr_1" }},
		{"metric without an id", `{"metric":"api_errors"}`, func(r *AlertRule) bool { return r.Metric == "api_errors" }},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestMalformedRecords: answers that are no record, or a list that is no
// list, are the platform's error, naming the endpoint, the status and
// what is wrong.
func TestMalformedRecords(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body string
		call       func(c *Client) error
		want       string
	}
	rule := func(c *Client) error { _, err := c.GetAlertRule(context.Background(), "alr_1"); return err }
	update := func(c *Client) error {
		_, err := c.UpdateAlertRule(context.Background(), "alr_1", AlertRuleUpdate{})
		return err
	}
	firing := func(c *Client) error { _, err := c.FiringAlerts(context.Background()); return err }
	sms := func(c *Client) error {
		_, err := c.SendSMS(context.Background(), SMSRequest{To: "+447700900002", Message: "hi", ConnectorID: "CONN-1"})
		return err
	}
	run := func(t *testing.T, tc testCase) {
		t.Parallel()
		err := tc.call(serveFixed(t, &fixed{status: http.StatusOK, body: tc.body}))
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
	}
	for _, tc := range []testCase{
		{"a rule of neither id nor metric", `{"name":"p95"}`, rule,
			`GET /v1/alert-rules/alr_1: 200: malformed response: missing required fields "id", "metric"`},
		{"a rule of another id", `{"id":"alr_2","metric":"api_errors"}`, rule,
			`GET /v1/alert-rules/alr_1: 200: malformed response: id is "alr_2", and the call was about rule "alr_1"`},
		{"a rule updated of another id", `{"rule":{"id":"alr_2","metric":"api_errors"}}`, update,
			`PATCH /v1/alert-rules/alr_1: 200: malformed response: id is "alr_2", and the call was about rule "alr_1"`},
		{"a null rule", `null`, rule, `GET /v1/alert-rules/alr_1: 200: malformed response: expected an object, got null`},
		{"a null SMS answer", `null`, sms, `POST /v1/outbound-sms: 200: malformed response: expected an object, got null`},
		{"alerts of booleans", `[true]`, firing, `GET /v1/alerts: 200: malformed response: item 0: expected an object, got boolean`},
		{"alerts of strings", `{"alerts":["a1"]}`, firing, `GET /v1/alerts: 200: malformed response: item 0: expected an object, got string`},
		{"alerts not a list", `{"alerts":"a1"}`, firing, `GET /v1/alerts: 200: malformed response: field "alerts": expected an array, got string`},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}
}

// TestFiringAlertShapes reads firing alerts in the shapes the reference
// does not rule out (it shows none) and pins how a report describes
// them: the envelope wins over a generic member beside it, a nested rule
// fills in what the alert does not say (a null member of the alert says
// nothing), the rule's own state or status never hides the alert, and
// Raw is the alert as sent.
func TestFiringAlertShapes(t *testing.T) {
	t.Parallel()
	c := serveFixed(t, &fixed{status: http.StatusOK, body: `{"items":2,"alerts":[
		{"rule_id":"alr_1","metric":"api_errors","threshold_value":10},
		{"rule_id":"alr_2","name":"alr_2","metric":"call_volume","operator":"<","threshold_value":3,"window_duration":"60m","value":0.5},
		{"name":null,"rule":{"id":"alr_3","name":"slow","metric":"turn_latency_p95","threshold_value":1500,"status":"ok"}},
		{"alert_rule":{"id":"alr_4","metric":"call_crashes","state":"ok"}}]}`})
	got, err := c.FiringAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var described []string
	for _, a := range got {
		described = append(described, a.Describe())
	}
	want := []string{
		`rule "alr_1": api_errors >= 10`,
		`rule "alr_2": call_volume < 3 over 60m, value 0.5`,
		`rule "slow" (alr_3): turn_latency_p95 >= 1500`,
		`rule "alr_4": call_crashes >= 0`,
	}
	if strings.Join(described, "\n") != strings.Join(want, "\n") {
		t.Errorf("described\n%s\nwant\n%s", strings.Join(described, "\n"), strings.Join(want, "\n"))
	}
	if len(got) == 4 {
		if _, merged := got[2].Raw["metric"]; merged || got[2].Raw["rule"] == nil {
			t.Errorf("raw of a nested alert %v, want the alert as sent", got[2].Raw)
		}
	}
}

// TestAlertRuleListFilter pins the rule list's filters as sent.
func TestAlertRuleListFilter(t *testing.T) {
	t.Parallel()
	c, rec := serveRecorded(t, http.StatusOK, `{"rules":[{"id":"alr_1","metric":"api_errors"}],"items":1}`, func(r *http.Request) string { return r.URL.RawQuery })
	off := false
	for _, tc := range []struct {
		f    AlertRuleFilter
		want string
	}{
		{AlertRuleFilter{}, ""},
		{AlertRuleFilter{ProjectID: "p1", Metric: "api_errors", Enabled: &off}, "enabled=false&metric=api_errors&project_id=p1"},
	} {
		rules, err := c.ListAlertRules(context.Background(), tc.f)
		sent := rec.take()
		if err != nil || len(rules) != 1 || rules[0].ID != "alr_1" || sent != tc.want {
			t.Errorf("%+v: sent %q, read %+v, %v; want %q", tc.f, sent, rules, err, tc.want)
		}
	}
}

// TestDeleteRefused: a delete the platform refuses is an error naming the
// call and the status, never a silent success (the cleanup of a run
// would leave the rule or the endpoint behind unsaid).
func TestDeleteRefused(t *testing.T) {
	t.Parallel()
	c := serveFixed(t, &fixed{status: http.StatusNotFound, body: `{"error":"no such thing"}`})
	for _, tc := range []struct {
		call func() error
		want string
	}{
		{func() error { return c.DeleteAlertRule(context.Background(), "alr_1") }, "DELETE /v1/alert-rules/alr_1: 404"},
		{func() error { return c.DeleteWebhook(context.Background(), "whe_1") }, "DELETE /v1/webhook-endpoints/whe_1: 404"},
	} {
		if err := tc.call(); !IsNotFound(err) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("err = %v, want a not-found starting %q", err, tc.want)
		}
	}
}
