package platform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/agenttest/agenttest/internal/reply"
)

// Endpoints of alerts: build host, x-api-key with the workspace key. The
// reference shows the create and firing-list paths; the rule list, read,
// update and delete paths are not shown and are taken as the REST
// collection of the create path (/v1/alert-rules and /v1/alert-rules/{id}),
// which is what the simulator serves.
var (
	epAlertRuleCreate = endpoint{"POST", "/v1/alert-rules", buildHost, authBuildKey, retryUnsafe}
	epAlertRuleList   = endpoint{"GET", "/v1/alert-rules", buildHost, authBuildKey, retryRead}
	epAlertRuleGet    = endpoint{"GET", "/v1/alert-rules/{id}", buildHost, authBuildKey, retryRead}
	epAlertRuleUpdate = endpoint{"PATCH", "/v1/alert-rules/{id}", buildHost, authBuildKey, retryRead}
	epAlertRuleDelete = endpoint{"DELETE", "/v1/alert-rules/{id}", buildHost, authBuildKey, retryRead}
	epAlertsFiring    = endpoint{"GET", "/v1/alerts", buildHost, authBuildKey, retryRead}
)

// AlertMetrics are the six metrics a rule may watch (reference, Alert rule).
var AlertMetrics = []string{"turn_latency_p50", "turn_latency_p95", "api_errors", "function_errors", "call_crashes", "call_volume"}

// AlertWindows are the allowed window_duration values.
var AlertWindows = []string{"5m", "10m", "60m"}

// AlertRule is a rule record. The reference shows the writable members;
// the identifier and read-only members are not shown and are read under
// the names in readAlertRule.
type AlertRule struct {
	ID   string
	Name string
	// ProjectID scopes the rule to one agent; empty is account-wide.
	ProjectID string
	Metric    string
	Operator  string
	// ThresholdValue is a non-negative integer (milliseconds for the
	// latency metrics, a count for the others).
	ThresholdValue int
	WindowDuration string
	Enabled        bool
	// State is the evaluation state when the platform reports one
	// ("alert" while firing).
	State string
	// Value is the last evaluated value, when reported.
	Value     *float64
	CreatedAt time.Time
	UpdatedAt time.Time
	// Raw is the whole record.
	Raw map[string]any
}

// AlertRuleRequest creates a rule. Metric, ThresholdValue and
// WindowDuration are what the reference lists as a rule's substance; the
// rest may be left to the platform's defaults.
type AlertRuleRequest struct {
	Name           string `json:"name,omitempty"`
	ProjectID      string `json:"project_id,omitempty"`
	Metric         string `json:"metric"`
	Operator       string `json:"operator,omitempty"`
	ThresholdValue int    `json:"threshold_value"`
	WindowDuration string `json:"window_duration"`
	// Enabled nil leaves the platform's default.
	Enabled *bool `json:"enabled,omitempty"`
}

// AlertRuleUpdate is a PATCH: flat JSON of the fields to change; nil
// fields are left out.
type AlertRuleUpdate struct {
	Name           *string `json:"name,omitempty"`
	ProjectID      *string `json:"project_id,omitempty"`
	Metric         *string `json:"metric,omitempty"`
	Operator       *string `json:"operator,omitempty"`
	ThresholdValue *int    `json:"threshold_value,omitempty"`
	WindowDuration *string `json:"window_duration,omitempty"`
	Enabled        *bool   `json:"enabled,omitempty"`
}

// AlertRuleFilter filters the rule list; zero fields filter nothing.
type AlertRuleFilter struct {
	ProjectID string
	Metric    string
	Enabled   *bool
}

// Alert is one rule currently in state alert (GET /v1/alerts). The
// reference does not show its members; they are read under the names in
// readAlert.
type Alert struct {
	// RuleID is the firing rule.
	RuleID         string
	Name           string
	ProjectID      string
	Metric         string
	Operator       string
	ThresholdValue int
	WindowDuration string
	State          string
	// Value is the metric's value when it fired, when reported.
	Value       *float64
	TriggeredAt time.Time
	// Raw is the whole record.
	Raw map[string]any
}

// Describe renders a firing alert for a report: `rule "p95 slow"
// (alr_1): turn_latency_p95 >= 1500 over 5m, value 2100`.
func (a Alert) Describe() string {
	name := a.Name
	if name == "" {
		name = a.RuleID
	}
	s := fmt.Sprintf("rule %q", name)
	if a.RuleID != "" && a.RuleID != name {
		s += " (" + a.RuleID + ")"
	}
	op := a.Operator
	if op == "" {
		op = ">="
	}
	s += fmt.Sprintf(": %s %s %d", a.Metric, op, a.ThresholdValue)
	if a.WindowDuration != "" {
		s += " over " + a.WindowDuration
	}
	if a.Value != nil {
		s += ", value " + strconv.FormatFloat(*a.Value, 'f', -1, 64)
	}
	return s
}

func readAlertRule(r record) AlertRule {
	th, _ := r.integer("threshold_value", "threshold", "thresholdValue")
	en, ok := r.boolean("enabled")
	if !ok {
		en = true
	}
	out := AlertRule{
		ID:             r.str("id", "rule_id", "ruleId", "alert_rule_id"),
		Name:           r.str("name"),
		ProjectID:      r.str("project_id", "projectId", "agent_id"),
		Metric:         r.str("metric"),
		Operator:       r.str("operator"),
		ThresholdValue: th,
		WindowDuration: r.str("window_duration", "window", "windowDuration"),
		Enabled:        en,
		State:          r.str("state", "status"),
		CreatedAt:      r.when("created_at", "createdAt"),
		UpdatedAt:      r.when("updated_at", "updatedAt"),
		Raw:            r,
	}
	if v, ok := r.number("value", "current_value", "metric_value"); ok {
		out.Value = &v
	}
	return out
}

func readAlert(r record) Alert {
	// A firing alert may carry its rule nested ({"rule": {...}, "state":
	// "alert", "value": 12}): the rule's members fill in what the alert
	// itself does not say, and its id is the rule's id. The rule's own
	// state is not the alert's: a stale one must not hide a firing
	// alert from the gate.
	if nested := r.object("rule", "alert_rule", "alertRule"); nested != nil {
		merged := make(record, len(r)+len(nested)+1)
		for k, v := range nested {
			if k != "state" && k != "status" {
				merged[k] = v
			}
		}
		if id, ok := nested["id"]; ok {
			merged["rule_id"] = id
		}
		for k, v := range r {
			if v != nil {
				merged[k] = v
			}
		}
		a := readFlatAlert(merged)
		a.Raw = r
		return a
	}
	return readFlatAlert(r)
}

// readFlatAlert reads an alert whose members are all at its top level.
func readFlatAlert(r record) Alert {
	th, _ := r.integer("threshold_value", "threshold", "thresholdValue")
	out := Alert{
		RuleID:         r.str("rule_id", "ruleId", "alert_rule_id", "id"),
		Name:           r.str("name", "rule_name"),
		ProjectID:      r.str("project_id", "projectId", "agent_id"),
		Metric:         r.str("metric"),
		Operator:       r.str("operator"),
		ThresholdValue: th,
		WindowDuration: r.str("window_duration", "window", "windowDuration"),
		State:          r.str("state", "status"),
		TriggeredAt:    r.when("triggered_at", "triggeredAt", "state_changed_at", "started_at"),
		Raw:            r,
	}
	if v, ok := r.number("value", "current_value", "metric_value"); ok {
		out.Value = &v
	}
	return out
}

// alertRulePath is /v1/alert-rules/{id}.
func alertRulePath(id string) string { return buildPath("v1", "alert-rules", id) }

// CreateAlertRule creates a rule. Beyond 10 rules per account the platform
// answers 409.
func (c *Client) CreateAlertRule(ctx context.Context, req AlertRuleRequest) (*AlertRule, error) {
	if req.Metric == "" {
		return nil, errors.New("create alert rule: metric is empty")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("create alert rule: encode body: %w", err)
	}
	rq := &call{ep: epAlertRuleCreate, path: epAlertRuleCreate.template, body: body}
	return c.alertRule(ctx, rq, "")
}

// GetAlertRule reads one rule.
func (c *Client) GetAlertRule(ctx context.Context, id string) (*AlertRule, error) {
	if id == "" {
		return nil, errors.New("get alert rule: id is empty")
	}
	return c.alertRule(ctx, &call{ep: epAlertRuleGet, path: alertRulePath(id)}, id)
}

// UpdateAlertRule changes the fields of upd that are set and returns the
// rule as the platform then holds it.
func (c *Client) UpdateAlertRule(ctx context.Context, id string, upd AlertRuleUpdate) (*AlertRule, error) {
	if id == "" {
		return nil, errors.New("update alert rule: id is empty")
	}
	body, err := json.Marshal(upd)
	if err != nil {
		return nil, fmt.Errorf("update alert rule %s: encode body: %w", id, err)
	}
	rq := &call{ep: epAlertRuleUpdate, path: alertRulePath(id), body: body}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(resp.body())) == 0 {
		// The reference does not show the update's answer: a 204 (or
		// a 200 without a body) applied it, and the rule is read back.
		resp.release()
		return c.GetAlertRule(ctx, id)
	}
	defer resp.release()
	return c.readAlertRuleAnswer(rq, resp, id)
}

// DeleteAlertRule deletes a rule.
func (c *Client) DeleteAlertRule(ctx context.Context, id string) error {
	if id == "" {
		return errors.New("delete alert rule: id is empty")
	}
	resp, err := c.do(ctx, &call{ep: epAlertRuleDelete, path: alertRulePath(id)})
	if err != nil {
		return err
	}
	resp.release()
	return nil
}

func (c *Client) alertRule(ctx context.Context, rq *call, id string) (*AlertRule, error) {
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	return c.readAlertRuleAnswer(rq, resp, id)
}

// readAlertRuleAnswer reads a rule from the answer to rq, about rule id
// ("" for a new rule). A rule that names another id is someone else's;
// one that names none is taken to be the one asked about.
func (c *Client) readAlertRuleAnswer(rq *call, resp response, id string) (*AlertRule, error) {
	r, err := decodeRecord(resp.body(), "rule", "alert_rule", "alertRule")
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	rule := readAlertRule(r)
	if rule.Metric == "" && rule.ID == "" {
		return nil, c.responseError(rq, resp.status, resp.body(), missing("", []string{"id", "metric"}))
	}
	if id != "" && rule.ID != "" && rule.ID != id {
		return nil, c.responseError(rq, resp.status, resp.body(), aboutAnother("id", rule.ID, "rule", id))
	}
	return &rule, nil
}

// ListAlertRules lists the rules of the account (no pagination).
func (c *Client) ListAlertRules(ctx context.Context, f AlertRuleFilter) ([]AlertRule, error) {
	q := url.Values{}
	if f.ProjectID != "" {
		q.Set("project_id", f.ProjectID)
	}
	if f.Metric != "" {
		q.Set("metric", f.Metric)
	}
	if f.Enabled != nil {
		q.Set("enabled", strconv.FormatBool(*f.Enabled))
	}
	rq := &call{ep: epAlertRuleList, path: epAlertRuleList.template, query: q}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	recs, err := decodeList(resp, "rules", "alert_rules", "alertRules")
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	out := make([]AlertRule, len(recs))
	for i, r := range recs {
		out[i] = readAlertRule(r)
	}
	return out, nil
}

// notFiring are the states (reply.NameKey) of a record
// of the firing list that does not fire: the reference's other three
// alert states, and what other alerting systems call a rule that is not
// or no longer firing.
var notFiring = map[string]bool{
	"ok": true, "nodata": true, "unknown": true,
	"resolved": true, "inactive": true, "pending": true, "normal": true,
}

// FiringAlerts lists the rules currently in state alert, for the account
// of the key.
func (c *Client) FiringAlerts(ctx context.Context) ([]Alert, error) {
	rq := &call{ep: epAlertsFiring, path: epAlertsFiring.template}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	recs, err := decodeList(resp, "alerts", "active_alerts", "firing")
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	out := make([]Alert, 0, len(recs))
	for _, r := range recs {
		a := readAlert(r)
		// The list holds rules in state alert; a record in a state
		// that says it does not fire (an implementation that lists
		// every rule) is left out. Any other state fires, in any
		// spelling: the reference shows no state in this list (it
		// calls its records active alerts), and an active or ALARM
		// read as not firing would pass the alert gate.
		if notFiring[reply.NameKey(a.State)] {
			continue
		}
		out = append(out, a)
	}
	return out, nil
}
