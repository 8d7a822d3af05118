package godogsteps

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/webhook"
)

// WebhookReceiver receives the platform's webhook deliveries for the
// webhook steps (Then a "handoff.created" webhook arrives), as agenttest
// run's receiver does (its --webhook-listen): it checks each delivery's
// signature, the X-<Brand>-Signature HMAC of the endpoint's signing
// secret, keeps the events that verify, and answers the platform at
// once. The steps then tell an event that never came (the agent's
// failure, at the key confirm.webhooks.EVENT) from deliveries that came
// but could not be verified (the platform's or the secret's, an http:
// error), and count only the events that arrived after their scenario
// began, of its environment.
//
// Serve it (it is an http.Handler) where the platform can reach it, give
// it to Options.WebhookReceiver, and register its public URL with
// Steps.RegisterWebhook before the scenarios run (and defer
// Steps.UnregisterWebhook). Safe for concurrent use; one receiver serves
// every scenario of the Steps.
type WebhookReceiver struct {
	r *webhook.Receiver
	// readTimeout bounds the reading of a delivery's body
	// (webhook.DefaultRequestTimeout).
	readTimeout time.Duration
}

// NewWebhookReceiver returns a receiver that reads the signature from
// the header X-<brand>-Signature, the brand word the platform uses in its
// header names; "" means Vendor (X-Vendor-Signature). Deliveries that
// arrive before Steps.RegisterWebhook gave it the signing secret are
// answered 503, so that the platform sends them again.
func NewWebhookReceiver(brand string) *WebhookReceiver {
	return &WebhookReceiver{r: webhook.NewReceiver(webhook.Options{Brand: brand}), readTimeout: webhook.DefaultRequestTimeout}
}

// ServeHTTP answers one delivery. Its body is read within 10 s, whatever
// the server's own timeouts, as agenttest run's receiver reads it: the
// URL is public, and a client that trickles a body would otherwise hold
// a connection as long as it liked. The server's ReadHeaderTimeout bounds
// the headers, which come before any handler: set it (5 s suits) on the
// http.Server that serves the receiver.
func (w *WebhookReceiver) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	// A connection's deadline is the network's wall clock. A server
	// that cannot set one (a test recorder) has none to set.
	_ = http.NewResponseController(rw).SetReadDeadline(time.Now().Add(w.readTimeout))
	w.r.ServeHTTP(rw, req)
}

// RegisterWebhook registers publicURL (the https:// URL that reaches the
// receiver of Options.WebhookReceiver) with the build host for the
// events of conversations (conversation.completed, handoff.created), and
// gives the receiver the endpoint's signing secret. An endpoint already
// registered for the URL is replaced, as agenttest run replaces its own:
// the platform shows a signing secret only when it registers one. Call it
// once, before the scenarios run, and defer UnregisterWebhook.
func (s *Steps) RegisterWebhook(ctx context.Context, publicURL string) error {
	if s == nil || s.client == nil {
		return errors.New("godogsteps: register webhook: this Steps was not made by New")
	}
	if s.receiver == nil {
		return errors.New("godogsteps: register webhook: no Options.WebhookReceiver to give the signing secret to")
	}
	// The URL may carry a credential of the receiver's (a ?token=, a
	// proxy's password), which a platform echoes in a refusal or a
	// reply: masked from now on, as agenttest run masks --webhook-url's.
	// One too short to be told from other text is masked where the URL
	// shows (platform.RedactURL) and nowhere else.
	for _, c := range secret.Maskable(platform.URLCredentials(publicURL)...) {
		if err := s.opts.Redactor.Learn("a credential of the webhook URL", c); err != nil {
			return fmt.Errorf("godogsteps: register webhook: %w", err)
		}
	}
	ep, signing, err := webhook.Register(ctx, s.client, publicURL, nil, "")
	if err != nil {
		// The platform's answer may echo what it was sent.
		return fmt.Errorf("godogsteps: register webhook: %s", s.client.Redact(err.Error()))
	}
	// The secret is known only now, after the redactors were built: a
	// platform that echoes it in a reply or an error body would put it
	// into godog's output and every formatter's report. The client and
	// the steps share the redactor that learns it. One too short to be
	// masked is of no use: the endpoint goes, and no delivery verifies.
	if err := s.opts.Redactor.Learn("the signing secret the platform issued for the webhook endpoint", signing); err != nil {
		derr := s.client.DeleteWebhook(ctx, ep.ID)
		if derr != nil && !platform.IsNotFound(derr) {
			err = fmt.Errorf("%w; and the endpoint could not be deleted: %s", err, s.client.Redact(derr.Error()))
		}
		return fmt.Errorf("godogsteps: register webhook: %w", err)
	}
	s.receiver.r.SetSecret(signing)
	s.mu.Lock()
	s.endpoint = ep.ID
	s.mu.Unlock()
	return nil
}

// UnregisterWebhook deletes the endpoint RegisterWebhook registered, as
// agenttest run deletes its own when it ends: the platform sends an
// endpoint the events of every environment for as long as it exists, and
// a tunnel's URL, once the job is gone, may be given to someone else.
// Defer it after a RegisterWebhook that succeeded. It does nothing when
// no endpoint is registered, and an endpoint already gone is what it
// wanted.
func (s *Steps) UnregisterWebhook(ctx context.Context) error {
	if s == nil || s.client == nil {
		return errors.New("godogsteps: unregister webhook: this Steps was not made by New")
	}
	s.mu.Lock()
	id := s.endpoint
	s.endpoint = ""
	s.mu.Unlock()
	if id == "" {
		return nil
	}
	if err := s.client.DeleteWebhook(ctx, id); err != nil && !platform.IsNotFound(err) {
		// The platform's answer may echo the endpoint, secret and all.
		return fmt.Errorf("godogsteps: unregister webhook: %s", s.client.Redact(err.Error()))
	}
	return nil
}
