package sim

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/clock"
)

// webhooks holds the endpoints and delivers events to them: a bounded
// queue, a fixed set of workers, and retry timers, all stopped by
// Server.Close. Its timers (attempt timeouts and retries) run on after,
// Options.AfterFunc. Deliveries never block the request that caused them: when
// the queue is full an event is dropped and counted.
type webhooks struct {
	opts   WebhookOptions
	brand  string
	client *http.Client
	after  clock.AfterFunc
	// changed is called after each attempt (Server.Changed).
	changed func()
	own     bool // client is ours, so Close may close its idle connections
	ctx     context.Context
	cancel  context.CancelFunc
	queue   chan *delivery

	mu        sync.Mutex
	endpoints map[string]*webhookEndpoint
	order     []string
	timers    map[*delivery]func() bool // pending retries, by their stop
	stopped   bool

	seq                                   atomic.Uint64
	delivered, failed, dropped, attempted atomic.Uint64
}

// webhookEndpoint is one registered receiver.
type webhookEndpoint struct {
	id, name, description, url, secret string
	events                             []string
	headers                            map[string]string
	timeoutMS                          int
	enabled                            bool
	createdAt, updatedAt               time.Time
}

// delivery is one event on its way to one endpoint. body is fixed when the
// event happens; the endpoint's url, secret and headers are read at each
// attempt, so a PATCH applies to retries too.
type delivery struct {
	endpointID string
	body       []byte
	attempt    int // attempts made so far
}

// WebhookStats counts deliveries since the server started.
type WebhookStats struct {
	// Attempts is every HTTP attempt; Delivered the deliveries answered 2xx;
	// Failed those that ran out of attempts; Dropped those lost to a full
	// queue or to an endpoint deleted or disabled meanwhile.
	Attempts, Delivered, Failed, Dropped uint64
}

func newWebhooks(o WebhookOptions, brandWord string, after clock.AfterFunc, changed func()) *webhooks {
	ctx, cancel := context.WithCancel(context.Background())
	w := &webhooks{
		opts:      o,
		brand:     brandWord,
		client:    o.Client,
		after:     after,
		changed:   changed,
		ctx:       ctx,
		cancel:    cancel,
		queue:     make(chan *delivery, o.Queue),
		endpoints: map[string]*webhookEndpoint{},
		timers:    map[*delivery]func() bool{},
	}
	if w.client == nil {
		w.client = &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			// A receiver's redirect is not followed: its answer is the answer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		w.own = true
	}
	return w
}

// start launches the workers, counted in wg.
func (w *webhooks) start(wg *sync.WaitGroup) {
	for range w.opts.Workers {
		wg.Go(func() {
			for {
				select {
				case <-w.ctx.Done():
					return
				case d := <-w.queue:
					w.attempt(d)
				}
			}
		})
	}
}

// stop cancels deliveries in flight and pending retries.
func (w *webhooks) stop() {
	w.mu.Lock()
	w.stopped = true
	for d, stop := range w.timers {
		stop()
		delete(w.timers, d)
	}
	w.mu.Unlock()
	w.cancel()
}

func (w *webhooks) closeIdle() {
	if w.own {
		w.client.CloseIdleConnections()
	}
}

// Stats returns the delivery counters.
func (w *webhooks) Stats() WebhookStats {
	return WebhookStats{Attempts: w.attempted.Load(), Delivered: w.delivered.Load(), Failed: w.failed.Load(), Dropped: w.dropped.Load()}
}

// WebhookStats counts the webhook deliveries so far.
func (s *Server) WebhookStats() WebhookStats { return s.webhooks.Stats() }

// webhookBody is a delivery body: the reference's type and data, plus an
// event id (the same on every retry, so receivers can deduplicate) and the
// time of the event.
type webhookBody struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	CreatedAt string         `json:"created_at"`
	Data      map[string]any `json:"data"`
}

// emit queues an event for every enabled endpoint subscribed to it.
func (w *webhooks) emit(event string, data map[string]any, at time.Time) {
	w.mu.Lock()
	var targets []string
	if !w.stopped {
		for _, id := range w.order {
			if ep := w.endpoints[id]; ep.enabled && slices.Contains(ep.events, event) {
				targets = append(targets, id)
			}
		}
	}
	w.mu.Unlock()
	if len(targets) == 0 {
		return
	}
	body, err := json.Marshal(webhookBody{
		ID:        fmt.Sprintf("%s%016x", webhookEventIDPrefix, splitmix64(w.seq.Add(1))),
		Type:      event,
		CreatedAt: formatTime(at),
		Data:      data,
	})
	if err != nil {
		w.dropped.Add(uint64(len(targets)))
		return
	}
	for _, id := range targets {
		w.enqueue(&delivery{endpointID: id, body: body})
	}
}

func (w *webhooks) enqueue(d *delivery) {
	select {
	case w.queue <- d:
	default:
		w.dropped.Add(1)
	}
}

// Sign is the signature of a delivery body: the hex HMAC-SHA256 of the raw
// body with the endpoint's signing secret, as the reference specifies.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// attempt makes one delivery attempt and schedules the retry of a failure.
func (w *webhooks) attempt(d *delivery) {
	defer w.changed()
	w.mu.Lock()
	ep, ok := w.endpoints[d.endpointID]
	var target, secret string
	var headers map[string]string
	var timeout time.Duration
	if ok && ep.enabled {
		target, secret, headers = ep.url, ep.secret, ep.headers
		timeout = time.Duration(ep.timeoutMS) * time.Millisecond
	}
	w.mu.Unlock()
	if target == "" {
		w.dropped.Add(1)
		return
	}
	d.attempt++
	w.attempted.Add(1)
	if w.post(target, secret, headers, timeout, d.body) {
		w.delivered.Add(1)
		return
	}
	if d.attempt >= w.opts.MaxAttempts || w.ctx.Err() != nil {
		w.failed.Add(1)
		return
	}
	wait := w.opts.Backoff << (d.attempt - 1)
	if wait > w.opts.MaxBackoff || wait <= 0 {
		wait = w.opts.MaxBackoff
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.timers[d] = w.after(wait, func() {
		w.mu.Lock()
		_, pending := w.timers[d]
		delete(w.timers, d)
		w.mu.Unlock()
		if pending {
			w.enqueue(d)
		}
	})
}

// post sends one attempt; true means the receiver answered 2xx in time.
func (w *webhooks) post(target, secret string, headers map[string]string, timeout time.Duration, body []byte) bool {
	ctx, cancel := clock.WithTimeoutCause(w.ctx, timeout, nil, w.after)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agenttest-sim-webhooks")
	req.Header.Set(brand.SignatureHeader(w.brand), Sign(secret, body))
	resp, err := w.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 300
}

// webhookEndpointJSON is the Webhook endpoint record of the reference, plus
// description and events from the registration call's shape.
type webhookEndpointJSON struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	URL           string            `json:"url"`
	Enabled       bool              `json:"enabled"`
	EventTypes    []string          `json:"event_types"`
	Events        []string          `json:"events"`
	TimeoutMS     int               `json:"timeout_ms"`
	Headers       map[string]string `json:"headers"`
	CreatedAt     string            `json:"created_at"`
	UpdatedAt     string            `json:"updated_at"`
	SigningSecret string            `json:"signing_secret,omitempty"`
}

func (ep *webhookEndpoint) json(withSecret bool) webhookEndpointJSON {
	out := webhookEndpointJSON{
		ID: ep.id, Name: ep.name, Description: ep.description, URL: ep.url, Enabled: ep.enabled,
		EventTypes: ep.events, Events: ep.events, TimeoutMS: ep.timeoutMS, Headers: ep.headers,
		CreatedAt: formatTime(ep.createdAt), UpdatedAt: formatTime(ep.updatedAt),
	}
	if out.Headers == nil {
		out.Headers = map[string]string{}
	}
	if withSecret {
		out.SigningSecret = ep.secret
	}
	return out
}

var (
	webhookIDRE     = regexp.MustCompile(`^` + webhookIDPrefix + `[A-Za-z0-9]+$`)
	headerNameRE    = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	reservedHeaders = []string{"content-type", "content-length", "host", "user-agent", "transfer-encoding", "connection"}
)

// checkURL enforces the reference's ^https:// rule; with AllowInsecure a
// loopback http:// receiver passes too, for tests.
func (w *webhooks) checkURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "url must be an absolute URL matching ^https://"
	}
	switch {
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && w.opts.AllowInsecure && isLoopback(u.Hostname()):
		return ""
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return "url must match ^https:// (loopback http:// receivers need the simulator's --allow-http-webhooks)"
	}
	return "url must match ^https://"
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpointFields applies a registration or PATCH body to ep and returns
// every problem at once. Both shapes are accepted in both calls: events
// or event_types, description or name.
func (s *Server) endpointFields(ep *webhookEndpoint, m map[string]json.RawMessage) []fieldError {
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
			ep.name = v
		case "description":
			var v string
			if json.Unmarshal(raw, &v) != nil || len(v) > 1000 {
				bad(key, "description must be a string of at most 1000 characters")
				continue
			}
			ep.description = v
		case "url":
			var v string
			if json.Unmarshal(raw, &v) != nil {
				bad(key, "url must be a string")
				continue
			}
			if msg := s.webhooks.checkURL(v); msg != "" {
				bad(key, msg)
				continue
			}
			ep.url = v
		case "events", "event_types":
			var v []string
			if json.Unmarshal(raw, &v) != nil || len(v) == 0 {
				bad(key, key+" must be an array of at least 1 event name")
				continue
			}
			seen := map[string]bool{}
			var evs []string
			for _, e := range v {
				if !slices.Contains(webhookEvents, e) {
					bad(key, fmt.Sprintf("unknown event %q: want %s", e, strings.Join(webhookEvents, ", ")))
					continue
				}
				if !seen[e] {
					seen[e] = true
					evs = append(evs, e)
				}
			}
			if len(evs) == len(seen) && len(evs) > 0 {
				ep.events = evs
			}
		case "timeout_ms":
			var f float64
			if json.Unmarshal(raw, &f) != nil || f != float64(int(f)) || f < webhookTimeoutMin || f > webhookTimeoutMax {
				bad(key, fmt.Sprintf("timeout_ms must be an integer from %d to %d", webhookTimeoutMin, webhookTimeoutMax))
				continue
			}
			ep.timeoutMS = int(f)
		case "headers":
			var v map[string]string
			if json.Unmarshal(raw, &v) != nil {
				bad(key, "headers must be an object of string values")
				continue
			}
			ok := true
			for name := range v {
				lower := strings.ToLower(name)
				if !headerNameRE.MatchString(name) || slices.Contains(reservedHeaders, lower) || lower == strings.ToLower(brand.SignatureHeader(s.opts.Brand)) {
					bad(key, fmt.Sprintf("header %q is not a valid custom header name (or is set by the delivery itself)", name))
					ok = false
				}
			}
			if ok {
				ep.headers = v
			}
		case "enabled":
			var v bool
			if isNull(raw) || json.Unmarshal(raw, &v) != nil {
				bad(key, "enabled must be a boolean")
				continue
			}
			ep.enabled = v
		default:
			bad(key, "unknown field; endpoints have url, description, events, name, event_types, headers, timeout_ms, enabled")
		}
	}
	return errs
}

func (s *Server) handleWebhookCreate(w http.ResponseWriter, r *http.Request, _ keyScope) {
	m, err := decodeFields(r)
	if err != nil {
		failFields(w, http.StatusBadRequest, err.Error())
		return
	}
	now := s.opts.Now().UTC()
	ep := &webhookEndpoint{enabled: true, timeoutMS: webhookTimeoutDefault, createdAt: now, updatedAt: now}
	errs := s.endpointFields(ep, m)
	if _, ok := m["url"]; !ok {
		errs = append(errs, fieldError{Field: "url", Message: "url is required"})
	}
	_, hasEvents := m["events"]
	_, hasTypes := m["event_types"]
	if !hasEvents && !hasTypes {
		errs = append(errs, fieldError{Field: "events", Message: "events is required: at least 1 of " + strings.Join(webhookEvents, ", ")})
	}
	if len(errs) > 0 {
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	if ep.name == "" {
		ep.name = ep.description
		if ep.name == "" {
			ep.name = ep.url
		}
		if len(ep.name) > 255 {
			ep.name = ep.name[:255]
		}
	}
	wh := s.webhooks
	wh.mu.Lock()
	defer wh.mu.Unlock()
	if len(wh.endpoints) >= maxWebhookEndpoints {
		failFields(w, http.StatusConflict, fmt.Sprintf("resource limit exceeded: at most %d webhook endpoints per account", maxWebhookEndpoints))
		return
	}
	ep.id = s.newID(webhookIDPrefix)
	ep.secret = s.newID(webhookSecretPrefix) + fmt.Sprintf("%016x", splitmix64(hashString(ep.id)^uint64(s.opts.Seed)))
	wh.endpoints[ep.id] = ep
	wh.order = append(wh.order, ep.id)
	writeJSON(w, http.StatusCreated, ep.json(true))
}

// endpointByID finds the endpoint of the path, writing 422 or 404 when it
// cannot. webhooks.mu is held.
func (s *Server) endpointByID(w http.ResponseWriter, r *http.Request) *webhookEndpoint {
	id := r.PathValue("endpointId")
	if !webhookIDRE.MatchString(id) {
		failFields(w, http.StatusUnprocessableEntity, fmt.Sprintf("malformed webhook endpoint id %q", id),
			fieldError{Field: "endpoint_id", Message: "must match ^" + webhookIDPrefix + "[A-Za-z0-9]+$"})
		return nil
	}
	ep, ok := s.webhooks.endpoints[id]
	if !ok {
		failFields(w, http.StatusNotFound, fmt.Sprintf("webhook endpoint %q not found", id))
		return nil
	}
	return ep
}

func (s *Server) handleWebhookGet(w http.ResponseWriter, r *http.Request, _ keyScope) {
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	if ep := s.endpointByID(w, r); ep != nil {
		writeJSON(w, http.StatusOK, ep.json(false))
	}
}

func (s *Server) handleWebhookList(w http.ResponseWriter, _ *http.Request, _ keyScope) {
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	out := []webhookEndpointJSON{}
	for _, id := range s.webhooks.order {
		out = append(out, s.webhooks.endpoints[id].json(false))
	}
	writeJSON(w, http.StatusOK, map[string]any{"endpoints": out})
}

func (s *Server) handleWebhookPatch(w http.ResponseWriter, r *http.Request, _ keyScope) {
	m, err := decodeFields(r)
	if err != nil {
		failFields(w, http.StatusBadRequest, err.Error())
		return
	}
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	ep := s.endpointByID(w, r)
	if ep == nil {
		return
	}
	next := *ep
	if errs := s.endpointFields(&next, m); len(errs) > 0 {
		failFields(w, http.StatusBadRequest, "validation failed", errs...)
		return
	}
	next.updatedAt = s.opts.Now().UTC()
	*ep = next
	writeJSON(w, http.StatusOK, ep.json(false))
}

func (s *Server) handleWebhookDelete(w http.ResponseWriter, r *http.Request, _ keyScope) {
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	ep := s.endpointByID(w, r)
	if ep == nil {
		return
	}
	delete(s.webhooks.endpoints, ep.id)
	for i, id := range s.webhooks.order {
		if id == ep.id {
			s.webhooks.order = append(s.webhooks.order[:i], s.webhooks.order[i+1:]...)
			break
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
