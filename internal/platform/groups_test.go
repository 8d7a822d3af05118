package platform

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agenttest/agenttest/internal/fakeclock"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/sim/simtest"
)

func TestOutboundCallAgainstSim(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := simtest.Start(t, sim.Options{Seed: 5, Now: clk.Now, TickInterval: time.Hour, Outbound: sim.OutboundOptions{
		Queued: time.Second, Calling: 2 * time.Second, Retention: time.Hour, Unreachable: []string{"+447700900999"},
	}})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond})
	ctx := context.Background()
	agentID := s.AgentIDs[0]

	call, err := c.PlaceCall(ctx, CallRequest{To: "+447700900001", AgentID: agentID, Env: "sandbox", Metadata: map[string]any{"reason": "reminder"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(call.SID, "OUT-") || call.Status != reply.CallQueued {
		t.Fatalf("call = %+v, want an OUT- sid, queued", call)
	}
	st, err := c.CallStatus(ctx, call.SID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != reply.CallQueued || st.Final() || st.To != "+447700900001" || st.Env != "sandbox" {
		t.Fatalf("status = %+v, want queued for +447700900001 in sandbox", st)
	}
	clk.Advance(1500 * time.Millisecond)
	if st, err = c.CallStatus(ctx, call.SID); err != nil || st.Status != reply.CallCalling {
		t.Fatalf("status = %+v, %v; want calling", st, err)
	}
	clk.Advance(2 * time.Second)
	st, err = c.CallStatus(ctx, call.SID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != reply.CallSuccess || !st.Final() || st.ConversationID == "" {
		t.Fatalf("status = %+v, want success with a conversation", st)
	}
	conv, err := c.GetConversation(ctx, agentID, st.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if conv.Channel != "VOICE-SIP" || conv.State["call_sid"] != call.SID {
		t.Errorf("conversation channel %q, call_sid %v; want VOICE-SIP and %s", conv.Channel, conv.State["call_sid"], call.SID)
	}

	// An unreachable number ends in failure, with the reason.
	bad, err := c.PlaceCall(ctx, CallRequest{To: "+447700900999", AgentID: agentID})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Second)
	if st, err := c.CallStatus(ctx, bad.SID); err != nil || st.Status != reply.CallFailure || st.FailureReason == "" {
		t.Fatalf("status = %+v, %v; want failure with a reason", st, err)
	}

	// After the retention the status is gone: a recognisable not-found.
	clk.Advance(2 * time.Hour)
	_, err = c.CallStatus(ctx, call.SID)
	if !IsNotFound(err) {
		t.Fatalf("after retention: err = %v, want a not-found", err)
	}
	for _, want := range []string{call.SID, "about 2h after it ends", "404"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestPlaceCallErrors(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 6})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 1})
	ctx := context.Background()
	type testCase struct {
		name string
		req  CallRequest
		want []string
	}
	run := func(t *testing.T, tc testCase) {
		_, err := c.PlaceCall(ctx, tc.req)
		if err == nil {
			t.Fatal("no error")
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
	}
	for _, tc := range []testCase{
		{name: "no number", req: CallRequest{}, want: []string{"destination number is empty"}},
		{name: "not a number", req: CallRequest{To: "call me", AgentID: s.AgentIDs[0]}, want: []string{"POST /v1/outbound-calling", "400", "not a phone number"}},
		{name: "unprovisioned agent number", req: CallRequest{To: "+447700900001", AgentID: s.AgentIDs[0], AgentNumber: "+15550000000"}, want: []string{"400", "not provisioned"}},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	// The auth token header carries the runtime key: a wrong key is 401.
	wrong, err := New(Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: "nope-not-the-key", Retry: RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wrong.PlaceCall(ctx, CallRequest{To: "+447700900001", AgentID: s.AgentIDs[0]}); !IsAuth(err) {
		t.Errorf("wrong key: err = %v, want 401", err)
	}
}

func TestSendSMSAgainstSim(t *testing.T) {
	t.Parallel()
	clk := fakeclock.New()
	s := simtest.Start(t, sim.Options{Seed: 7, Now: clk.Now, TickInterval: time.Hour, SMSRate: 1})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, Sleep: clk.Sleep, Rand: func() float64 { return 0 }})
	ctx := context.Background()
	agentID := s.AgentIDs[0]
	conn := s.Info.ConnectorIDs[agentID]["sandbox"]

	res, err := c.SendSMS(ctx, SMSRequest{To: "+447700900002", Message: "Reply YES to confirm", ConnectorID: conn})
	if err != nil {
		t.Fatal(err)
	}
	if res.ConversationID == "" || res.Env != "sandbox" || res.AgentNumber != s.Info.EnvNumbers[agentID]["sandbox"] {
		t.Fatalf("result = %+v, want a sandbox conversation from %s", res, s.Info.EnvNumbers[agentID]["sandbox"])
	}
	conv, err := c.GetConversation(ctx, agentID, res.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if !conv.InProgress || len(conv.Turns) == 0 || conv.Turns[0].AgentResponse != "Reply YES to confirm" {
		t.Errorf("conversation = in_progress %v, turns %+v; want open with the message as greeting", conv.InProgress, conv.Turns)
	}

	// The second SMS within the second meets the rate limit: the client
	// honours Retry-After (the sleep advances the clock) and succeeds.
	before := clk.Now()
	if _, err := c.SendSMS(ctx, SMSRequest{To: "+447700900003", Message: "again", ConnectorID: conn}); err != nil {
		t.Fatalf("rate-limited SMS was not retried to success: %v", err)
	}
	if waited := clk.Now().Sub(before); waited < time.Second {
		t.Errorf("waited %s before the retry, want at least the Retry-After of 1s", waited)
	}

	// With no waiting allowed the rate limit fails the call,
	// recognisable.
	once, err := New(Config{BuildURL: s.BuildURL, RuntimeURL: s.RuntimeURL, AccountID: s.AccountID, RuntimeKey: s.RuntimeKey, RateWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = once.SendSMS(ctx, SMSRequest{To: "+447700900004", Message: "third", ConnectorID: conn})
	if !IsRateLimited(err) {
		t.Errorf("err = %v, want a 429", err)
	}

	clk.Advance(time.Minute)
	_, err = c.SendSMS(ctx, SMSRequest{To: "+447700900005", Message: "hi", AgentNumber: "+15550000000", ConnectorID: conn})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
		t.Fatalf("unprovisioned number: err = %v, want a 400", err)
	}
	for _, want := range []string{"+15550000000", "provisioned"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	_, err = c.SendSMS(ctx, SMSRequest{To: "+447700900005", Message: "hi", ConnectorID: "CONN-unknown"})
	if !IsAuth(err) || !strings.Contains(err.Error(), "CONN-unknown") {
		t.Errorf("unknown connector: err = %v, want a 401 naming it", err)
	}
	_, err = c.SendSMS(ctx, SMSRequest{})
	if err == nil || !strings.Contains(err.Error(), "recipient number is empty") || !strings.Contains(err.Error(), "X-TOKEN-ID") {
		t.Errorf("empty request: err = %v, want every problem named", err)
	}
}

func TestAlertRulesAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 8})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 1})
	ctx := context.Background()
	agentID := s.AgentIDs[0]

	rule, err := c.CreateAlertRule(ctx, AlertRuleRequest{Name: "volume", ProjectID: agentID, Metric: "call_volume", Operator: ">=", ThresholdValue: 1, WindowDuration: "5m"})
	if err != nil {
		t.Fatal(err)
	}
	if rule.ID == "" || rule.Metric != "call_volume" || rule.ThresholdValue != 1 || !rule.Enabled || rule.ProjectID != agentID {
		t.Fatalf("rule = %+v", rule)
	}
	got, err := c.GetAlertRule(ctx, rule.ID)
	if err != nil || got.ID != rule.ID || got.Name != "volume" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	other, err := c.CreateAlertRule(ctx, AlertRuleRequest{Metric: "api_errors", ThresholdValue: 0, WindowDuration: "10m"})
	if err != nil {
		t.Fatal(err)
	}
	list, err := c.ListAlertRules(ctx, AlertRuleFilter{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v; want 2 rules", list, err)
	}
	list, err = c.ListAlertRules(ctx, AlertRuleFilter{Metric: "api_errors"})
	if err != nil || len(list) != 1 || list[0].ID != other.ID {
		t.Fatalf("filtered list = %+v, %v; want the api_errors rule", list, err)
	}

	// No traffic yet: nothing fires. One conversation makes call_volume 1.
	if firing, err := c.FiringAlerts(ctx); err != nil || len(firing) != 0 {
		t.Fatalf("firing = %+v, %v; want none", firing, err)
	}
	if _, err := c.StartChat(ctx, agentID, ChatStart{ClientEnv: "sandbox"}); err != nil {
		t.Fatal(err)
	}
	firing, err := c.FiringAlerts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var found *Alert
	for i := range firing {
		if firing[i].RuleID == rule.ID {
			found = &firing[i]
		}
	}
	if found == nil {
		t.Fatalf("firing = %+v, want rule %s", firing, rule.ID)
	}
	if d := found.Describe(); !strings.Contains(d, `rule "volume"`) || !strings.Contains(d, "call_volume >= 1 over 5m") {
		t.Errorf("Describe = %q", d)
	}

	disabled := false
	up, err := c.UpdateAlertRule(ctx, rule.ID, AlertRuleUpdate{Enabled: &disabled})
	if err != nil || up.Enabled {
		t.Fatalf("update = %+v, %v; want disabled", up, err)
	}
	if err := c.DeleteAlertRule(ctx, rule.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetAlertRule(ctx, rule.ID); !IsNotFound(err) {
		t.Errorf("after delete: err = %v, want 404", err)
	}
	_, err = c.CreateAlertRule(ctx, AlertRuleRequest{Metric: "nonsense", ThresholdValue: 1, WindowDuration: "5m"})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "metric") {
		t.Errorf("bad metric: err = %v, want a 400 naming the field", err)
	}
}

func TestAlertRuleCap(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 9})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 1})
	ctx := context.Background()
	for range 10 {
		if _, err := c.CreateAlertRule(ctx, AlertRuleRequest{Metric: "call_volume", ThresholdValue: 100, WindowDuration: "60m"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := c.CreateAlertRule(ctx, AlertRuleRequest{Metric: "call_volume", ThresholdValue: 100, WindowDuration: "60m"})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict {
		t.Fatalf("11th rule: err = %v, want 409", err)
	}
}

func TestWebhookEndpointsAgainstSim(t *testing.T) {
	t.Parallel()
	s := simtest.Start(t, sim.Options{Seed: 10, Webhooks: sim.WebhookOptions{AllowInsecure: true}})
	c := simClient(t, s, RetryPolicy{MaxAttempts: 1})
	ctx := context.Background()

	ep, err := c.RegisterWebhook(ctx, WebhookRegistration{URL: "http://127.0.0.1:9/hook", Description: "test", Events: []string{reply.EventConversationCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	if !webhookIDRe.MatchString(ep.ID) || ep.SigningSecret == "" || !ep.Enabled || len(ep.Events) != 1 {
		t.Fatalf("endpoint = %+v", ep)
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != ep.ID || list[0].SigningSecret != "" {
		t.Fatalf("list = %+v, %v; want the endpoint without its secret", list, err)
	}
	timeout := 2000
	up, err := c.UpdateWebhook(ctx, ep.ID, WebhookUpdate{EventTypes: []string{reply.EventConversationCompleted, reply.EventHandoffCreated}, TimeoutMS: &timeout})
	if err != nil || len(up.Events) != 2 || up.TimeoutMS != 2000 {
		t.Fatalf("update = %+v, %v", up, err)
	}
	got, err := c.GetWebhook(ctx, ep.ID)
	if err != nil || got.TimeoutMS != 2000 {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if err := c.DeleteWebhook(ctx, ep.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetWebhook(ctx, ep.ID); !IsNotFound(err) {
		t.Errorf("after delete: err = %v, want 404", err)
	}
	if _, err := c.GetWebhook(ctx, "whe_bad-id"); err == nil || !strings.Contains(err.Error(), "^whe_") {
		t.Errorf("bad id: err = %v, want the pattern named", err)
	}
	_, err = c.RegisterWebhook(ctx, WebhookRegistration{URL: "http://example.com/hook", Events: []string{reply.EventConversationCompleted}})
	if err == nil || !strings.Contains(err.Error(), "https://") {
		t.Errorf("http URL: err = %v, want the https rule", err)
	}
}

func TestSameWebhookURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://Example.com/hook", "https://example.com/hook/", true},
		{"https://example.com/hook", "https://example.com/other", false},
		{"https://example.com/hook?x=1", "https://example.com/hook?x=2", false},
		{"http://example.com/hook", "https://example.com/hook", false},
		// A URL that does not parse is the same only as itself.
		{"https://example.com/%zz", "https://example.com/%zz", true},
		{"https://example.com/%zz", "https://example.com/%zy", false},
	} {
		if got := SameWebhookURL(tc.a, tc.b); got != tc.same {
			t.Errorf("SameWebhookURL(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

// TestTolerantRecords feeds the shapes other implementations plausibly
// send (bare arrays, data envelopes, camelCase names) through the readers.
func TestTolerantRecords(t *testing.T) {
	t.Parallel()
	type testCase struct {
		name, body, envelope string
		want                 int
		err                  string
	}
	run := func(t *testing.T, tc testCase) {
		recs, err := decodeRecords([]byte(tc.body), tc.envelope)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			return
		}
		if err != nil || len(recs) != tc.want {
			t.Fatalf("records = %v, %v; want %d", recs, err, tc.want)
		}
	}
	for _, tc := range []testCase{
		{name: "envelope", body: `{"alerts":[{"rule_id":"a"}]}`, envelope: "alerts", want: 1},
		{name: "bare array", body: `[{"id":"a"},{"id":"b"}]`, envelope: "alerts", want: 2},
		{name: "data envelope", body: `{"data":[{"id":"a"}]}`, envelope: "alerts", want: 1},
		{name: "empty object", body: `{}`, envelope: "alerts", want: 0},
		{name: "null", body: `null`, envelope: "alerts", want: 0},
		// Go's encoding/json writes an empty (nil) slice as null.
		{name: "envelope null", body: `{"alerts":null,"meta":{"count":0}}`, envelope: "alerts", want: 0},
		{name: "data null", body: `{"data":null}`, envelope: "alerts", want: 0},
		{name: "another name null", body: `{"rules":null,"meta":{}}`, envelope: "alerts", err: `missing required field "alerts"`},
		{name: "empty body", body: ``, envelope: "alerts", err: "empty body, want a list"},
		{name: "white space", body: " \r\n", envelope: "alerts", err: "empty body, want a list"},
		{name: "wrong envelope", body: `{"rules":[]}`, envelope: "alerts", err: `missing required field "alerts"`},
		{name: "not a list", body: `{"alerts":{}}`, envelope: "alerts", err: `field "alerts": expected an array, got object`},
		{name: "item not an object", body: `[1]`, envelope: "alerts", err: "item 0: expected an object, got number"},
		{name: "truncated", body: `[{"id":`, envelope: "alerts", err: "truncated JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) { run(t, tc) })
	}

	r, err := decodeRecord([]byte(`{"data":{"ruleId":"alr_1","threshold":"10","metric":"api_errors","value":"12","triggeredAt":"2026-03-01T12:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	a := readAlert(r)
	if a.RuleID != "alr_1" || a.ThresholdValue != 10 || a.Value == nil || *a.Value != 12 || a.TriggeredAt.IsZero() {
		t.Errorf("alert = %+v", a)
	}
	w := readWebhookEndpoint(record{"id": "whe_1", "events": "conversation.completed", "enabled": "false"})
	if w.Enabled || len(w.Events) != 1 {
		t.Errorf("endpoint = %+v", w)
	}
}

// TestSendSMSOtherAnswers reads the answers another implementation may
// give to an SMS, whose response body the reference does not show: none
// at all (a 202 or 204 that accepts it), an envelope, camelCase.
func TestSendSMSOtherAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		conv    string
		wantErr string
	}{
		{name: "202 without a body", status: http.StatusAccepted},
		{name: "204", status: http.StatusNoContent},
		{name: "200 of blanks", status: http.StatusOK, body: " \n"},
		{name: "201 camelCase", status: http.StatusCreated, body: `{"conversationId":"c9"}`, conv: "c9"},
		{name: "data envelope", status: http.StatusOK, body: `{"data":{"conversation_id":"c8"}}`, conv: "c8"},
		{name: "data envelope with meta", status: http.StatusOK, body: `{"data":{"conversation_id":"c8"},"meta":{"request_id":"r1"}}`, conv: "c8"},
		{name: "not an object", status: http.StatusOK, body: `[1]`, wantErr: "expected an object"},
		{name: "not JSON", status: http.StatusOK, body: `sent`, wantErr: "malformed response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := serveFixed(t, &fixed{status: tc.status, body: tc.body})
			res, err := c.SendSMS(context.Background(), SMSRequest{To: "+447700900002", Message: "hi", ConnectorID: "CONN-1"})
			if erredAsWanted(t, err, tc.wantErr) {
				return
			}
			if res.ConversationID != tc.conv {
				t.Errorf("conversation %q, want %q", res.ConversationID, tc.conv)
			}
		})
	}
}

// TestRecordEnvelopes reads alert rules and webhook endpoints that another
// implementation wraps in a member named after the resource: the
// reference shows neither record's response shape (beyond the
// registration's id and signing_secret).
func TestRecordEnvelopes(t *testing.T) {
	t.Parallel()
	const rule = `{"id":"alr_1","metric":"api_errors","threshold_value":10,"window_duration":"5m"}`
	for _, tc := range []struct {
		name, body, wantID string
	}{
		{name: "bare", body: rule, wantID: "alr_1"},
		{name: "data", body: `{"data":` + rule + `}`, wantID: "alr_1"},
		{name: "rule", body: `{"rule":` + rule + `}`, wantID: "alr_1"},
		{name: "alert_rule with success", body: `{"success":true,"alert_rule":` + rule + `}`, wantID: "alr_1"},
		{name: "alertRule", body: `{"alertRule":` + rule + `}`, wantID: "alr_1"},
		// Beside the wrapper, the members an envelope carries about the
		// answer itself (JSON:API's meta and links, a request id).
		{name: "data with meta and links", body: `{"data":` + rule + `,"meta":{"version":"1"},"links":{"self":"/v1/alert-rules/alr_1"}}`, wantID: "alr_1"},
		{name: "rule with a request id", body: `{"rule":` + rule + `,"request_id":"req-1"}`, wantID: "alr_1"},
		// A record with members of its own keeps them: its "rule" is a
		// member, not a wrapper.
		{name: "member named rule", body: `{"id":"alr_2","metric":"call_volume","rule":{"id":"alr_9"}}`, wantID: "alr_2"},
	} {
		t.Run("alert rule "+tc.name, func(t *testing.T) {
			t.Parallel()
			c := serveFixed(t, &fixed{status: http.StatusCreated, body: tc.body})
			got, err := c.CreateAlertRule(context.Background(), AlertRuleRequest{Metric: "api_errors", ThresholdValue: 10, WindowDuration: "5m"})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.wantID {
				t.Errorf("id %q, want %q", got.ID, tc.wantID)
			}
		})
	}
	const ep = `{"id":"whe_1","name":"n","url":"https://example.com/h","enabled":true,"event_types":["alerts.triggered"],"timeout_ms":5000}`
	for _, body := range []string{ep, `{"endpoint":` + ep + `}`, `{"webhook_endpoint":` + ep + `}`, `{"webhook":` + ep + `}`, `{"success":true,"data":` + ep + `}`,
		`{"data":` + ep + `,"requestId":"req-1"}`} {
		c := serveFixed(t, &fixed{status: http.StatusOK, body: body})
		got, err := c.GetWebhook(context.Background(), "whe_1")
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got.ID != "whe_1" || got.TimeoutMS != 5000 || len(got.Events) != 1 {
			t.Errorf("%s: read %+v", body, got)
		}
	}
}

// TestFiringAlertNestedRule reads firing alerts that carry their rule
// nested, a shape the reference does not rule out (it shows none): the
// report names the rule, and the rule's own state never hides the alert.
func TestFiringAlertNestedRule(t *testing.T) {
	t.Parallel()
	c := serveFixed(t, &fixed{status: http.StatusOK, body: `{"alerts":[
		{"id":"alt_9","state":"alert","value":12,"triggered_at":1772366400,
		 "rule":{"id":"alr_1","name":"api errors","metric":"api_errors","operator":">=","threshold_value":10,"window_duration":"5m","state":"ok"}},
		{"alert_rule":{"id":"alr_2","metric":"call_volume","threshold_value":"3"}}]}`})
	got, err := c.FiringAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d alerts, want 2: %+v", len(got), got)
	}
	if d := got[0].Describe(); d != `rule "api errors" (alr_1): api_errors >= 10 over 5m, value 12` {
		t.Errorf("first: %s", d)
	}
	if got[0].TriggeredAt.IsZero() || got[0].Raw["id"] != "alt_9" {
		t.Errorf("first: triggered %v, raw %v", got[0].TriggeredAt, got[0].Raw)
	}
	if got[1].RuleID != "alr_2" || got[1].Metric != "call_volume" || got[1].ThresholdValue != 3 {
		t.Errorf("second: %+v", got[1])
	}
}

// TestUpdateAlertRuleWithoutBody reads the rule back when the update is
// answered without a body (a 204), which the reference does not rule out:
// it shows no answer to the PATCH.
func TestUpdateAlertRuleWithoutBody(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		wantReads int32
	}{
		{name: "204", status: http.StatusNoContent, wantReads: 1},
		{name: "200 without a body", status: http.StatusOK, wantReads: 1},
		{name: "200 with the rule", status: http.StatusOK, body: `{"id":"alr_1","metric":"api_errors","threshold_value":20}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var reads atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path != "/v1/alert-rules/alr_1":
					http.NotFound(w, r)
				case r.Method == http.MethodPatch:
					w.WriteHeader(tc.status)
					io.WriteString(w, tc.body)
				case r.Method == http.MethodGet:
					reads.Add(1)
					io.WriteString(w, `{"id":"alr_1","metric":"api_errors","threshold_value":20,"window_duration":"5m"}`)
				}
			}))
			defer srv.Close()
			c := newTestClient(t, srv.URL, RetryPolicy{MaxAttempts: 1})
			th := 20
			got, err := c.UpdateAlertRule(context.Background(), "alr_1", AlertRuleUpdate{ThresholdValue: &th})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != "alr_1" || got.ThresholdValue != 20 {
				t.Errorf("rule %+v", got)
			}
			if n := reads.Load(); n != tc.wantReads {
				t.Errorf("%d reads after the update, want %d", n, tc.wantReads)
			}
		})
	}
}
