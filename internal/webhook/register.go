package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
)

// DefaultEvents are the events a receiver subscribes to when none are
// named: the two that concern conversations. Alert events are for the
// alert gate, which reads GET /v1/alerts instead.
var DefaultEvents = []string{reply.EventConversationCompleted, reply.EventHandoffCreated}

// Registrar is the part of the platform client Register uses
// (*platform.Client implements it).
type Registrar interface {
	ListWebhooks(ctx context.Context) ([]platform.WebhookEndpoint, error)
	RegisterWebhook(ctx context.Context, reg platform.WebhookRegistration) (*platform.WebhookEndpoint, error)
	UpdateWebhook(ctx context.Context, id string, upd platform.WebhookUpdate) (*platform.WebhookEndpoint, error)
	DeleteWebhook(ctx context.Context, id string) error
}

// Description is the description of the endpoints agenttest registers, so
// people reading the platform's endpoint list know whose they are.
const Description = "agenttest webhook receiver"

// Register makes sure an endpoint for publicURL subscribes to events and
// returns it with its signing secret.
//
// An endpoint already registered for the same URL is reused when the
// caller knows its secret (knownSecret, e.g. from the config of a fixed
// receiver): it is enabled and its events widened to include events. The
// platform shows a signing secret only once, at registration, and the
// reference shows no rotation, so an existing endpoint whose secret is not
// known is deleted and registered afresh; otherwise every run would leave
// one more endpoint behind. When the platform has no list operation (404
// or 405) a new endpoint is registered.
func Register(ctx context.Context, c Registrar, publicURL string, events []string, knownSecret string) (*platform.WebhookEndpoint, string, error) {
	if len(events) == 0 {
		events = DefaultEvents
	}
	list, err := c.ListWebhooks(ctx)
	if err != nil && !noListing(err) {
		return nil, "", fmt.Errorf("list webhook endpoints: %w", err)
	}
	var existing *platform.WebhookEndpoint
	for i := range list {
		if platform.SameWebhookURL(list[i].URL, publicURL) {
			existing = &list[i]
			break
		}
	}
	if existing != nil && knownSecret != "" {
		want := slices.Clone(existing.Events)
		for _, e := range events {
			if !slices.Contains(want, e) {
				want = append(want, e)
			}
		}
		enabled := true
		ep, err := c.UpdateWebhook(ctx, existing.ID, platform.WebhookUpdate{EventTypes: want, Enabled: &enabled})
		if err != nil {
			return nil, "", fmt.Errorf("reuse webhook endpoint %s: %w", existing.ID, err)
		}
		return ep, knownSecret, nil
	}
	if existing != nil {
		if err := c.DeleteWebhook(ctx, existing.ID); err != nil && !platform.IsNotFound(err) {
			return nil, "", fmt.Errorf("replace webhook endpoint %s (its signing secret is unknown): %w", existing.ID, err)
		}
	}
	ep, err := c.RegisterWebhook(ctx, platform.WebhookRegistration{URL: publicURL, Description: Description, Events: events})
	if err != nil {
		return nil, "", err
	}
	return ep, ep.SigningSecret, nil
}

// noListing reports whether the platform lacks a list operation.
func noListing(err error) bool {
	var ae *platform.APIError
	return platform.IsNotFound(err) || (errors.As(err, &ae) && ae.Status == http.StatusMethodNotAllowed)
}
