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
	// RetryPolicy is the policy Register retries a failed registration
	// with.
	RetryPolicy() platform.RetryPolicy
}

// Description is the description of the endpoints agenttest registers, so
// people reading the platform's endpoint list know whose they are.
const Description = "agenttest webhook receiver"

// Register makes sure an endpoint for publicURL subscribes to events and
// returns it with its signing secret.
//
// An endpoint already registered for the same URL is reused when the
// caller knows its secret (knownSecret, e.g. from the config of a fixed
// receiver): it is enabled and its events widened to include events,
// unless it is enabled with them already. A platform that refuses the
// update (400 or 422: the reference's update call takes only alert event
// types) gets the endpoint deleted and registered afresh instead. The
// platform shows a signing secret only once, at registration, and the
// reference shows no rotation, so an existing endpoint whose secret is not
// known is deleted and registered afresh; otherwise every run would leave
// one more endpoint behind. When the platform has no list operation (404
// or 405) a new endpoint is registered.
//
// The client retries the list, update and delete calls itself, but not
// the registration (a POST that creates, re-sent only when it certainly
// never arrived). A registration that failed on the platform's side (5xx,
// a connection lost after sending) is retried here, from the list, with
// the client's retry policy (a Retry-After longer than it honours ends
// the retries with the error, as for the client's own calls): the list
// finds an endpoint the failed POST may have made for the URL after all,
// and since its secret was never seen it is deleted and registered
// afresh, so a retry leaves one endpoint, not two. Once the attempts are
// spent the error is the platform's (an *platform.APIError or
// *platform.NetworkError inside).
func Register(ctx context.Context, c Registrar, publicURL string, events []string, knownSecret string) (*platform.WebhookEndpoint, string, error) {
	if len(events) == 0 {
		events = DefaultEvents
	}
	pol := c.RetryPolicy()
	for attempt := 1; ; attempt++ {
		ep, secret, posted, err := register(ctx, c, publicURL, events, knownSecret)
		if err == nil || !posted || !failedOnPlatform(err) || attempt >= max(pol.MaxAttempts, 1) {
			if err != nil && attempt > 1 {
				err = fmt.Errorf("%w (gave up after %d registrations)", err, attempt)
			}
			return ep, secret, err
		}
		wait := pol.Backoff(attempt)
		if ae, ok := errors.AsType[*platform.APIError](err); ok && ae.RetryAfter > wait {
			if ae.RetryAfter > pol.MaxRetryAfter {
				// Asked to come back later than the policy waits: the
				// client ends its own retries so too, and a registration
				// sooner would only be refused again.
				return nil, "", err
			}
			wait = ae.RetryAfter // a 503 may say when
		}
		if serr := pol.Sleep(ctx, wait); serr != nil {
			return nil, "", err
		}
		// An endpoint at the URL now can only be what the failed POST
		// made: its secret was never seen, so it must not be reused.
		knownSecret = ""
	}
}

// register is one pass of Register: list, then reuse, replace or
// register. posted reports that err is the registration POST's.
func register(ctx context.Context, c Registrar, publicURL string, events []string, knownSecret string) (ep *platform.WebhookEndpoint, secret string, posted bool, err error) {
	list, err := c.ListWebhooks(ctx)
	if err != nil && !noListing(err) {
		return nil, "", false, fmt.Errorf("list webhook endpoints: %w", err)
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
		if existing.Enabled && len(want) == len(existing.Events) {
			return existing, knownSecret, false, nil // as wanted: nothing to change
		}
		enabled := true
		ep, err := c.UpdateWebhook(ctx, existing.ID, platform.WebhookUpdate{EventTypes: want, Enabled: &enabled})
		switch {
		case err == nil:
			return ep, knownSecret, false, nil
		case !Refused(err):
			return nil, "", false, fmt.Errorf("reuse webhook endpoint %s: %w", existing.ID, err)
		}
		// The reference's update call takes only alert event types
		// (event_types: alerts.triggered, alerts.resolved); a platform
		// that holds to it refuses conversation events there, and the
		// endpoint is replaced as one whose secret is unknown is.
	}
	if existing != nil {
		if err := c.DeleteWebhook(ctx, existing.ID); err != nil && !platform.IsNotFound(err) {
			return nil, "", false, fmt.Errorf("replace webhook endpoint %s (its signing secret is unknown): %w", existing.ID, err)
		}
	}
	ep, err = c.RegisterWebhook(ctx, platform.WebhookRegistration{URL: publicURL, Description: Description, Events: events})
	if err != nil {
		return nil, "", true, err
	}
	return ep, ep.SigningSecret, false, nil
}

// Refused reports whether the platform refused an endpoint's
// registration or update for what it asked (400, 422), not for a failure
// a retry could mend.
func Refused(err error) bool {
	var ae *platform.APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusUnprocessableEntity)
}

// failedOnPlatform reports whether a registration POST failed in a way
// the client does not retry and a later one may not meet: a 5xx, or a
// connection lost after the request was sent. A 429 and a connection
// never made were retried by the client already.
func failedOnPlatform(err error) bool {
	var ae *platform.APIError
	var ne *platform.NetworkError
	switch {
	case errors.As(err, &ae):
		return ae.Status >= http.StatusInternalServerError
	case errors.As(err, &ne):
		return ne.Sent && !errors.Is(err, context.Canceled)
	}
	return false
}

// noListing reports whether the platform lacks a list operation.
func noListing(err error) bool {
	var ae *platform.APIError
	return platform.IsNotFound(err) || (errors.As(err, &ae) && ae.Status == http.StatusMethodNotAllowed)
}
