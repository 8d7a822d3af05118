package platform

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Endpoints of webhooks: build host, x-api-key with the workspace key. The
// reference shows two paths of different shape: the registration
// (/v1/webhooks/endpoints, fields url, description, events) and the update
// (/v1/webhook-endpoints/{id}, fields name, url, event_types, ...). List,
// read and delete are not shown; the list is taken as GET on the
// registration path and read and delete as GET and DELETE on the update
// path, which is what the simulator serves.
var (
	epWebhookRegister = endpoint{"POST", "/v1/webhooks/endpoints", buildHost, authBuildKey, retryUnsafe}
	epWebhookList     = endpoint{"GET", "/v1/webhooks/endpoints", buildHost, authBuildKey, retryRead}
	epWebhookGet      = endpoint{"GET", "/v1/webhook-endpoints/{endpoint_id}", buildHost, authBuildKey, retryRead}
	epWebhookUpdate   = endpoint{"PATCH", "/v1/webhook-endpoints/{endpoint_id}", buildHost, authBuildKey, retryRead}
	epWebhookDelete   = endpoint{"DELETE", "/v1/webhook-endpoints/{endpoint_id}", buildHost, authBuildKey, retryRead}
)

// webhookIDRe is the endpoint id pattern of the reference.
var webhookIDRe = regexp.MustCompile(`^whe_[A-Za-z0-9]+$`)

// WebhookRegistration registers an endpoint (the registration call's
// fields).
type WebhookRegistration struct {
	// URL receives the deliveries; the platform requires https://.
	URL         string   `json:"url"`
	Description string   `json:"description,omitempty"`
	Events      []string `json:"events"`
}

// WebhookUpdate is a PATCH of an endpoint (the update call's fields); nil
// and empty fields are left out.
type WebhookUpdate struct {
	Name       *string           `json:"name,omitempty"`
	URL        *string           `json:"url,omitempty"`
	EventTypes []string          `json:"event_types,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	TimeoutMS  *int              `json:"timeout_ms,omitempty"`
	Enabled    *bool             `json:"enabled,omitempty"`
}

// WebhookEndpoint is an endpoint record: the Webhook endpoint table of the
// reference, with description and events of the registration shape.
type WebhookEndpoint struct {
	// ID matches ^whe_[A-Za-z0-9]+$.
	ID          string
	Name        string
	Description string
	URL         string
	Enabled     bool
	// Events are the subscribed event names (event_types, or events in
	// the registration shape).
	Events    []string
	TimeoutMS int
	Headers   map[string]string
	CreatedAt time.Time
	UpdatedAt time.Time
	// SigningSecret is returned by the registration only: keep it, the
	// platform does not show it again.
	SigningSecret string
	// Raw is the whole record.
	Raw map[string]any
}

func readWebhookEndpoint(r record) WebhookEndpoint {
	en, ok := r.boolean("enabled")
	if !ok {
		en = true // the reference's default
	}
	tm, _ := r.integer("timeout_ms", "timeoutMs")
	out := WebhookEndpoint{
		ID:            r.str("id", "endpoint_id", "endpointId"),
		Name:          r.str("name"),
		Description:   r.str("description"),
		URL:           r.str("url"),
		Enabled:       en,
		Events:        r.strs("event_types", "events", "eventTypes"),
		TimeoutMS:     tm,
		CreatedAt:     r.when("created_at", "createdAt"),
		UpdatedAt:     r.when("updated_at", "updatedAt"),
		SigningSecret: r.str(webhookSecretNames...),
		Raw:           r,
	}
	if h := r.object("headers"); len(h) > 0 {
		out.Headers = make(map[string]string, len(h))
		for k, v := range h {
			if s, ok := v.(string); ok {
				out.Headers[k] = s
			}
		}
	}
	return out
}

// RegisterWebhook registers an endpoint and returns it with its id and
// signing secret.
func (c *Client) RegisterWebhook(ctx context.Context, reg WebhookRegistration) (*WebhookEndpoint, error) {
	if reg.URL == "" {
		return nil, errors.New("register webhook: url is empty")
	}
	if len(reg.Events) == 0 {
		return nil, errors.New("register webhook: no events given")
	}
	body, err := json.Marshal(reg)
	if err != nil {
		return nil, fmt.Errorf("register webhook: encode body: %w", err)
	}
	rq := &call{ep: epWebhookRegister, path: epWebhookRegister.template, body: body}
	ep, status, err := c.webhookEndpointStatus(ctx, rq)
	if err != nil {
		// The URL may carry credentials for a proxy in front of the
		// receiver: masked, as in every message about a URL.
		return nil, fmt.Errorf("register webhook %s: %w", RedactURL(reg.URL), err)
	}
	if ep.SigningSecret == "" {
		// The body is withheld: the secret may be in it under a name
		// readWebhookEndpoint does not know.
		return nil, fmt.Errorf("register webhook %s: %w", RedactURL(reg.URL), c.responseError(rq, status, nil, missing("", []string{"signing_secret"})))
	}
	return ep, nil
}

// webhookSecretNames are the names of an endpoint's signing secret.
var webhookSecretNames = []string{"signing_secret", "signingSecret", "secret"}

// secretMember finds a signing secret in the text of an answer, as
// readWebhookEndpoint names it, at any depth: the body of a refusal is
// read as text, and may be cut short.
var secretMember = regexp.MustCompile(`"(?:signing_secret|signingSecret|secret)"\s*:\s*"((?:[^"\\]|\\.)*)"`)

// learnRefusedSecrets learns the signing secrets the answer to a webhook
// registration holds when it refuses it (a platform that registered the
// endpoint and failed after, or echoes the record in its error): the
// error quotes the body, and an unknown secret would be shown there and
// in every output that says the error. Learnt, it is masked from then on,
// as that of a registration that succeeded is. It reports false when a
// secret cannot be masked (too short to tell from text): the body is then
// to be withheld.
func (c *Client) learnRefusedSecrets(body []byte) bool {
	var found []string
	// The pattern finds the members of a body cut short, and each of a
	// name written twice, of which decoding keeps the last.
	for _, m := range secretMember.FindAllSubmatch(body, -1) {
		var s string
		if json.Unmarshal(append(append([]byte{'"'}, m[1]...), '"'), &s) != nil {
			return false // an escape JSON has not: what it holds is unknown
		}
		found = append(found, s)
	}
	// Decoding finds those whose name is escaped ("\u0073igning_secret"),
	// which the pattern does not, and reads them as readWebhookEndpoint
	// would.
	var doc any
	if json.Unmarshal(body, &doc) == nil {
		found = appendSecrets(found, doc)
	}
	red := c.cfg.Redactor
	if red == nil {
		red = c.red
	}
	for _, s := range found {
		if s == "" {
			continue
		}
		if red.Learn("the signing secret in the platform's refusal of a webhook registration", s) != nil {
			return false
		}
	}
	return true
}

// appendSecrets appends the signing secrets of v, at any depth, as
// readWebhookEndpoint reads each of its names.
func appendSecrets(found []string, v any) []string {
	switch x := v.(type) {
	case map[string]any:
		for _, name := range webhookSecretNames {
			found = append(found, record(x).str(name))
		}
		for _, e := range x {
			found = appendSecrets(found, e)
		}
	case []any:
		for _, e := range x {
			found = appendSecrets(found, e)
		}
	}
	return found
}

// ListWebhooks lists the endpoints of the workspace (without secrets).
func (c *Client) ListWebhooks(ctx context.Context) ([]WebhookEndpoint, error) {
	rq := &call{ep: epWebhookList, path: epWebhookList.template}
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.release()
	recs, err := decodeList(resp, "endpoints", "webhook_endpoints", "webhooks")
	if err != nil {
		return nil, c.responseError(rq, resp.status, resp.body(), err)
	}
	out := make([]WebhookEndpoint, len(recs))
	for i, r := range recs {
		out[i] = readWebhookEndpoint(r)
		if err := checkWebhookID(out[i].ID); err != nil {
			return nil, c.responseError(rq, resp.status, nil, fmt.Errorf("endpoint %d of %d: %w", i+1, len(recs), err))
		}
	}
	return out, nil
}

// GetWebhook reads one endpoint.
func (c *Client) GetWebhook(ctx context.Context, id string) (*WebhookEndpoint, error) {
	if err := checkWebhookID(id); err != nil {
		return nil, fmt.Errorf("get webhook: %w", err)
	}
	return c.webhookEndpoint(ctx, &call{ep: epWebhookGet, path: buildPath("v1", "webhook-endpoints", id)}, id)
}

// UpdateWebhook changes an endpoint and returns it as updated.
func (c *Client) UpdateWebhook(ctx context.Context, id string, upd WebhookUpdate) (*WebhookEndpoint, error) {
	if err := checkWebhookID(id); err != nil {
		return nil, fmt.Errorf("update webhook: %w", err)
	}
	body, err := json.Marshal(upd)
	if err != nil {
		return nil, fmt.Errorf("update webhook %s: encode body: %w", id, err)
	}
	return c.webhookEndpoint(ctx, &call{ep: epWebhookUpdate, path: buildPath("v1", "webhook-endpoints", id), body: body}, id)
}

// DeleteWebhook deletes an endpoint; pending deliveries to it are dropped.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	if err := checkWebhookID(id); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	resp, err := c.do(ctx, &call{ep: epWebhookDelete, path: buildPath("v1", "webhook-endpoints", id)})
	if err != nil {
		return err
	}
	resp.release()
	return nil
}

// checkWebhookID refuses ids the platform would answer with 422, before the
// network, with the pattern in the message. An id the platform answered
// with is checked too: one that does not match, or that held a key and
// was masked with the rest of the answer, could be neither used nor
// deleted, and is a malformed response (the platform's error, not an
// internal one).
func checkWebhookID(id string) error {
	if !webhookIDRe.MatchString(id) {
		return fmt.Errorf("endpoint id %q does not match ^whe_[A-Za-z0-9]+$", id)
	}
	return nil
}

// webhookEndpoint reads the endpoint id that rq is about. An answer about
// another endpoint is the platform's error, as a record of another
// conversation or call is: taken as the one asked about, a reused
// endpoint would be believed updated and enabled when it is not.
func (c *Client) webhookEndpoint(ctx context.Context, rq *call, id string) (*WebhookEndpoint, error) {
	ep, status, err := c.webhookEndpointStatus(ctx, rq)
	if err == nil && ep.ID != id {
		return nil, c.responseError(rq, status, nil, aboutAnother("id", ep.ID, "endpoint", id))
	}
	return ep, err
}

// webhookEndpointStatus is webhookEndpoint, with the status of the answer.
func (c *Client) webhookEndpointStatus(ctx context.Context, rq *call) (*WebhookEndpoint, int, error) {
	resp, err := c.do(ctx, rq)
	if err != nil {
		return nil, 0, err
	}
	defer resp.release()
	wrappers := []string{"data", "endpoint", "webhook_endpoint", "webhookEndpoint", "webhook"}
	r, err := decodeRecord(resp.body(), wrappers[1:]...)
	if err != nil {
		return nil, 0, c.responseError(rq, resp.status, resp.body(), err)
	}
	ep := readWebhookEndpoint(r)
	if inner := r.object(wrappers...); ep.ID == "" && inner != nil {
		// The endpoint wrapped and its signing secret beside it (the
		// reference's endpoint record has no secret; its registration
		// shows the secret once): the secret is the answer's.
		secret := ep.SigningSecret
		ep = readWebhookEndpoint(inner)
		ep.SigningSecret = cmp.Or(ep.SigningSecret, secret)
	}
	// From here the body is withheld: a registration's carries the
	// signing secret, perhaps under a name readWebhookEndpoint does not
	// know, as RegisterWebhook says.
	if ep.ID == "" {
		return nil, 0, c.responseError(rq, resp.status, nil, missing("", []string{"id"}))
	}
	if err := checkWebhookID(ep.ID); err != nil {
		return nil, 0, c.responseError(rq, resp.status, nil, err)
	}
	return &ep, resp.status, nil
}

// SameWebhookURL reports whether two endpoint URLs name the same receiver:
// equal after parsing, ignoring the case of scheme and host and a trailing
// slash of the path.
func SameWebhookURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	norm := func(u *url.URL) string {
		p := u.EscapedPath()
		for len(p) > 0 && p[len(p)-1] == '/' {
			p = p[:len(p)-1]
		}
		return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host) + p + "?" + u.RawQuery
	}
	return norm(ua) == norm(ub)
}
