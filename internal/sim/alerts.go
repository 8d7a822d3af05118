package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// alertRules is the account's rules. The simulator serves one account, so
// the cap of 10 applies to the whole server.
type alertRules struct {
	mu    sync.Mutex
	rules map[string]*alertRule
	order []string // creation order, for stable listing
}

// alertRule is one rule and its evaluation state.
type alertRule struct {
	id, name, projectID, metric, operator, window string
	threshold                                     int64
	enabled                                       bool
	state                                         string
	value                                         *int64
	evaluatedAt, changedAt, triggeredAt           time.Time
	createdAt, updatedAt                          time.Time
}

// fieldError is one item of the alerts error body.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// alertError is the error body of the alerts (and webhooks) groups.
type alertError struct {
	Message string       `json:"message"`
	Errors  []fieldError `json:"errors"`
}

func failFields(w http.ResponseWriter, status int, msg string, errs ...fieldError) {
	if errs == nil {
		errs = []fieldError{}
	}
	writeJSON(w, status, alertError{Message: msg, Errors: errs})
}

// alertRuleJSON is the rule record; the reference does not show its
// identifier and read-only fields, so id, state, value, timestamps are the
// simulator's.
type alertRuleJSON struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	ProjectID       *string `json:"project_id"`
	Metric          string  `json:"metric"`
	Operator        string  `json:"operator"`
	ThresholdValue  int64   `json:"threshold_value"`
	WindowDuration  string  `json:"window_duration"`
	Enabled         bool    `json:"enabled"`
	State           string  `json:"state"`
	Value           *int64  `json:"value"`
	LastEvaluatedAt *string `json:"last_evaluated_at"`
	StateChangedAt  string  `json:"state_changed_at"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
}

// activeAlertJSON is one item of GET /v1/alerts (shape not shown).
type activeAlertJSON struct {
	RuleID         string  `json:"rule_id"`
	Name           string  `json:"name"`
	ProjectID      *string `json:"project_id"`
	Metric         string  `json:"metric"`
	Operator       string  `json:"operator"`
	ThresholdValue int64   `json:"threshold_value"`
	WindowDuration string  `json:"window_duration"`
	State          string  `json:"state"`
	Value          *int64  `json:"value"`
	TriggeredAt    string  `json:"triggered_at"`
	EvaluatedAt    string  `json:"evaluated_at"`
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (r *alertRule) json() alertRuleJSON {
	return alertRuleJSON{
		ID: r.id, Name: r.name, ProjectID: optString(r.projectID), Metric: r.metric, Operator: r.operator,
		ThresholdValue: r.threshold, WindowDuration: r.window, Enabled: r.enabled, State: r.state, Value: r.value,
		LastEvaluatedAt: optTime(r.evaluatedAt), StateChangedAt: formatTime(r.changedAt),
		CreatedAt: formatTime(r.createdAt), UpdatedAt: formatTime(r.updatedAt),
	}
}

var alertRuleIDRE = regexp.MustCompile(`^` + alertRuleIDPrefix + `[A-Za-z0-9]+$`)

// decodeFields reads a flat JSON object keeping which members are present,
// as PATCH needs. It returns a field error for anything else.
func decodeFields(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return nil, fmt.Errorf("read body: %v", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, errors.New("body must be a JSON object")
	}
	return m, nil
}

// isNull reports whether a member's value is JSON null. Decoding null
// into a number or a boolean leaves the zero value without an error, so
// a rule's "threshold_value": null or an "enabled": null would read as 0
// or false (a disabled rule or endpoint, a threshold nobody set) where a
// string member's null is refused by its own check.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// ruleFields applies the members of a create or PATCH body to r and
// returns every problem at once.
func (s *Server) ruleFields(r *alertRule, m map[string]json.RawMessage, k keyScope) []fieldError {
	var errs []fieldError
	bad := func(field, msg string) { errs = append(errs, fieldError{Field: field, Message: msg}) }
	// Sorted, so the errors come in a stable order.
	for _, key := range slices.Sorted(maps.Keys(m)) {
		raw := m[key]
		switch key {
		case "name":
			var v string
			if json.Unmarshal(raw, &v) != nil || len(v) < 1 || len(v) > 255 {
				bad(key, "name must be a string of 1 to 255 characters")
				continue
			}
			r.name = v
		case "project_id":
			var v *string
			if json.Unmarshal(raw, &v) != nil {
				bad(key, "project_id must be a string or null")
				continue
			}
			if v == nil || *v == "" {
				r.projectID = ""
				continue
			}
			id := *v
			if a, ok := s.aliases[id]; ok {
				id = a
			}
			if _, ok := s.agents[id]; !ok {
				bad(key, fmt.Sprintf("project_id %q is not a project of this account", *v))
				continue
			}
			r.projectID = id
		case "metric":
			var v string
			if json.Unmarshal(raw, &v) != nil || !slices.Contains(alertMetrics, v) {
				bad(key, "metric must be one of "+strings.Join(alertMetrics, ", "))
				continue
			}
			r.metric = v
		case "operator":
			var v string
			if json.Unmarshal(raw, &v) != nil || !slices.Contains(alertOperators, v) {
				bad(key, "operator must be one of "+strings.Join(alertOperators, ", "))
				continue
			}
			r.operator = v
		case "threshold_value":
			var f float64
			if isNull(raw) || json.Unmarshal(raw, &f) != nil || f < 0 || f != float64(int64(f)) || f > 1<<53 {
				bad(key, "threshold must be a non-negative integer")
				continue
			}
			r.threshold = int64(f)
		case "window_duration":
			var v string
			if json.Unmarshal(raw, &v) != nil || alertWindows[v] == 0 {
				bad(key, "window_duration must be one of 5m, 10m, 60m")
				continue
			}
			r.window = v
		case "enabled":
			var v bool
			if isNull(raw) || json.Unmarshal(raw, &v) != nil {
				bad(key, "enabled must be a boolean")
				continue
			}
			r.enabled = v
		default:
			bad(key, "unknown field; rules have name, project_id, metric, operator, threshold_value, window_duration, enabled")
		}
	}
	if k.project != "" && r.projectID != k.project {
		bad("project_id", fmt.Sprintf("the API key is scoped to project %q", k.project))
	}
	return errs
}

func (s *Server) handleAlertCreate(w http.ResponseWriter, r *http.Request, k keyScope) {
	m, err := decodeFields(r)
	if err != nil {
		failFields(w, http.StatusBadRequest, err.Error())
		return
	}
	now := s.opts.Now().UTC()
	rule := &alertRule{operator: defaultAlertOperator, enabled: true, state: AlertUnknown, createdAt: now, updatedAt: now, changedAt: now}
	errs := s.ruleFields(rule, m, k)
	for _, req := range []string{"metric", "threshold_value", "window_duration"} {
		if _, ok := m[req]; !ok {
			errs = append(errs, fieldError{Field: req, Message: req + " is required"})
		}
	}
	if len(errs) > 0 {
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	if rule.name == "" {
		rule.name = fmt.Sprintf("%s %s %d over %s", rule.metric, rule.operator, rule.threshold, rule.window)
	}
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	if len(s.alerts.rules) >= maxAlertRules {
		failFields(w, http.StatusConflict, fmt.Sprintf("resource limit exceeded: at most %d alert rules per account", maxAlertRules))
		return
	}
	if s.alerts.rules == nil {
		s.alerts.rules = map[string]*alertRule{}
	}
	rule.id = s.newID(alertRuleIDPrefix)
	s.alerts.rules[rule.id] = rule
	s.alerts.order = append(s.alerts.order, rule.id)
	// A new rule is unknown until its first evaluation (the next tick or read).
	writeJSON(w, http.StatusCreated, rule.json())
}

// ruleByID finds the rule of the path, writing 422 or 404 when it cannot.
// alerts.mu is held.
func (s *Server) ruleByID(w http.ResponseWriter, r *http.Request, k keyScope) *alertRule {
	id := r.PathValue("ruleId")
	if !alertRuleIDRE.MatchString(id) {
		failFields(w, http.StatusUnprocessableEntity, fmt.Sprintf("malformed alert rule id %q", id),
			fieldError{Field: "id", Message: "must match ^" + alertRuleIDPrefix + "[A-Za-z0-9]+$"})
		return nil
	}
	rule, ok := s.alerts.rules[id]
	if !ok || (k.project != "" && rule.projectID != k.project) {
		failFields(w, http.StatusNotFound, fmt.Sprintf("alert rule %q not found", id))
		return nil
	}
	return rule
}

func (s *Server) handleAlertGet(w http.ResponseWriter, r *http.Request, k keyScope) {
	s.evaluateAlerts(s.opts.Now().UTC())
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	if rule := s.ruleByID(w, r, k); rule != nil {
		writeJSON(w, http.StatusOK, rule.json())
	}
}

func (s *Server) handleAlertPatch(w http.ResponseWriter, r *http.Request, k keyScope) {
	m, err := decodeFields(r)
	if err != nil {
		failFields(w, http.StatusBadRequest, err.Error())
		return
	}
	now := s.opts.Now().UTC()
	s.alerts.mu.Lock()
	rule := s.ruleByID(w, r, k)
	if rule == nil {
		s.alerts.mu.Unlock()
		return
	}
	next := *rule
	if errs := s.ruleFields(&next, m, k); len(errs) > 0 {
		s.alerts.mu.Unlock()
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	next.updatedAt = now
	*rule = next
	s.alerts.mu.Unlock()
	// The changed rule is evaluated at once, so the answer shows its state
	// under the new settings.
	s.evaluateAlerts(now)
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	writeJSON(w, http.StatusOK, rule.json())
}

func (s *Server) handleAlertDelete(w http.ResponseWriter, r *http.Request, k keyScope) {
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	rule := s.ruleByID(w, r, k)
	if rule == nil {
		return
	}
	delete(s.alerts.rules, rule.id)
	for i, id := range s.alerts.order {
		if id == rule.id {
			s.alerts.order = append(s.alerts.order[:i], s.alerts.order[i+1:]...)
			break
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// alertFilter is the query of the two list endpoints, which the
// reference lets filter by project_id, metric and enabled.
type alertFilter struct {
	hasProject bool
	project    string
	metric     string
	enabled    string
}

// parseAlertFilter reads the filters of q; a metric or enabled out of
// their sets is 400.
func (s *Server) parseAlertFilter(q url.Values) (alertFilter, []fieldError) {
	f := alertFilter{hasProject: q.Has("project_id"), project: q.Get("project_id"), metric: q.Get("metric"), enabled: q.Get("enabled")}
	if a, ok := s.aliases[f.project]; ok {
		f.project = a
	}
	var errs []fieldError
	if f.metric != "" && !slices.Contains(alertMetrics, f.metric) {
		errs = append(errs, fieldError{Field: "metric", Message: "metric must be one of " + strings.Join(alertMetrics, ", ")})
	}
	if f.enabled != "" && f.enabled != "true" && f.enabled != "false" {
		errs = append(errs, fieldError{Field: "enabled", Message: "enabled must be true or false"})
	}
	return f, errs
}

// keeps says whether a rule passes the filter and the key's scope.
func (f alertFilter) keeps(rule *alertRule, k keyScope) bool {
	switch {
	case f.hasProject && rule.projectID != f.project,
		f.metric != "" && rule.metric != f.metric,
		f.enabled != "" && fmt.Sprint(rule.enabled) != f.enabled,
		k.project != "" && rule.projectID != k.project:
		return false
	}
	return true
}

func (s *Server) handleAlertList(w http.ResponseWriter, r *http.Request, k keyScope) {
	f, errs := s.parseAlertFilter(r.URL.Query())
	if len(errs) > 0 {
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	s.evaluateAlerts(s.opts.Now().UTC())
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	out := []alertRuleJSON{}
	for _, id := range s.alerts.order {
		if rule := s.alerts.rules[id]; f.keeps(rule, k) {
			out = append(out, rule.json())
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": out})
}

func (s *Server) handleAlertsFiring(w http.ResponseWriter, r *http.Request, k keyScope) {
	f, errs := s.parseAlertFilter(r.URL.Query())
	if len(errs) > 0 {
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	s.evaluateAlerts(s.opts.Now().UTC())
	s.alerts.mu.Lock()
	defer s.alerts.mu.Unlock()
	out := []activeAlertJSON{}
	for _, id := range s.alerts.order {
		rule := s.alerts.rules[id]
		if rule.state != AlertFiring || !f.keeps(rule, k) {
			continue
		}
		out = append(out, activeAlertJSON{
			RuleID: rule.id, Name: rule.name, ProjectID: optString(rule.projectID), Metric: rule.metric,
			Operator: rule.operator, ThresholdValue: rule.threshold, WindowDuration: rule.window,
			State: rule.state, Value: rule.value, TriggeredAt: formatTime(rule.triggeredAt), EvaluatedAt: formatTime(rule.evaluatedAt),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"alerts": out})
}

// breaches applies the rule's operator: "reaches or breaches" is >= by default.
func breaches(op string, v, threshold int64) bool {
	switch op {
	case ">":
		return v > threshold
	case "<=":
		return v <= threshold
	case "<":
		return v < threshold
	case "==":
		return v == threshold
	}
	return v >= threshold
}

// evaluateAlerts moves every rule to the state its metric shows at now and
// emits alerts.triggered / alerts.resolved on the transitions into and out
// of alert. A disabled rule is not evaluated: its state is unknown.
func (s *Server) evaluateAlerts(now time.Time) {
	type transition struct {
		event string
		data  map[string]any
	}
	var emit []transition
	s.alerts.mu.Lock()
	for _, id := range s.alerts.order {
		rule := s.alerts.rules[id]
		prev := rule.state
		next, value := AlertUnknown, (*int64)(nil)
		if rule.enabled {
			v, ok := s.traffic.measure(rule.metric, rule.projectID, now, alertWindows[rule.window])
			switch {
			case !ok:
				next = AlertNoData
			case breaches(rule.operator, v, rule.threshold):
				next, value = AlertFiring, &v
			default:
				next, value = AlertOK, &v
			}
			rule.evaluatedAt = now
		}
		rule.state, rule.value = next, value
		if next == prev {
			continue
		}
		rule.changedAt = now
		if next == AlertFiring {
			rule.triggeredAt = now
		}
		var event string
		switch {
		case next == AlertFiring:
			event = EventAlertsTriggered
		case prev == AlertFiring:
			event = EventAlertsResolved
		default:
			continue
		}
		emit = append(emit, transition{event, map[string]any{
			"rule_id":         rule.id,
			"name":            rule.name,
			"account_id":      s.opts.AccountID,
			"project_id":      optString(rule.projectID),
			"metric":          rule.metric,
			"operator":        rule.operator,
			"threshold_value": rule.threshold,
			"window_duration": rule.window,
			"value":           value,
			"state":           next,
			"previous_state":  prev,
			"evaluated_at":    formatTime(now),
		}})
	}
	s.alerts.mu.Unlock()
	for _, t := range emit {
		s.webhooks.emit(t.event, t.data, now)
	}
}
