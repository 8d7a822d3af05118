package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/clock"
	"github.com/agenttest/agenttest/internal/sim/agent"
)

// Options configure a Server. The zero value serves the built-in example
// agents with default keys, no faults and no rate limit.
type Options struct {
	// Agents to serve; nil means agent.Builtin().
	Agents []*agent.Definition
	// AccountID is the workspace id (ws-XXXXXXXX form); default DefaultAccountID.
	AccountID string
	// AccountSlug is the same workspace in slug form; default DefaultAccountSlug.
	AccountSlug string
	// BuildKey and RuntimeKey are the x-api-key values of the two host
	// families; they must differ.
	BuildKey, RuntimeKey string
	// Seed makes fault injection, agent phrasing, sampling and seeded
	// conversations reproducible.
	Seed int64
	// ChatIdleTimeout is how long a debug-chat session may idle before a
	// turn gets CHAT_TIMEOUT; default DefaultChatIdleTimeout.
	ChatIdleTimeout time.Duration
	// StoreCap is the most conversations kept; the oldest ended ones are
	// evicted first. It also bounds the live debug-chat sessions: beyond
	// it the session opened first idles out (its next turn gets
	// CHAT_TIMEOUT, or not found once the store evicted its record), so
	// memory stays bounded however many conversations a run opens. Default DefaultStoreCap.
	StoreCap int
	// RatePerKey limits requests per second per API key; 0 is unlimited.
	// Beyond it the server answers 429 with Retry-After.
	RatePerKey float64
	// SeedConversations synthetic conversations fill the store at start.
	SeedConversations int
	// Faults injected into API requests.
	Faults Faults
	// Projects holds per-project settings keyed by agent id.
	Projects map[string]ProjectOptions
	// Now is the clock; default time.Now.
	Now func() time.Time
	// JanitorInterval is how often idle sessions are swept; default a
	// quarter of ChatIdleTimeout, clamped to [10ms, 30s].
	JanitorInterval time.Duration

	// Brand is the word that stands for "Vendor" in header and event names
	// (X-Vendor-Auth-Token, X-Vendor-Signature); default brand.Default.
	Brand string
	// Outbound configures outbound calling.
	Outbound OutboundOptions
	// SMSRate limits outbound SMS per project, in messages per second
	// (burst max(1, rate)); 0 is unlimited. Beyond it: 429 with Retry-After.
	SMSRate float64
	// SMSSessionTimeout is how long an SMS conversation stays open without
	// a reply before it ends; default DefaultSMSSessionTimeout.
	SMSSessionTimeout time.Duration
	// Webhooks configures webhook deliveries.
	Webhooks WebhookOptions
	// TickInterval is how often, in real time, the background loop
	// advances outbound calls, evaluates alert rules, drops expired calls
	// and expires idle messaging sessions; reads do the same on demand.
	// Default DefaultTickInterval.
	TickInterval time.Duration

	// CallToken, when set, is the only X-<Brand>-Auth-Token that outbound
	// calling and SMS accept (the reference does not say it is the runtime
	// key); empty means the runtime key, as before. It must differ from
	// both API keys.
	CallToken string
	// Sleep waits d or until ctx ends: the agents' simulated think time
	// (node latencyMs) and injected latency. Default a timer; tests on a
	// settable clock pass one that advances their clock instead.
	Sleep func(ctx context.Context, d time.Duration)
	// AfterFunc runs the timers of webhook deliveries (each attempt's
	// timeout_ms and the backoff before a retry): it calls f once d has
	// passed and stop cancels the call, reporting whether it did. Nil
	// means real timers (time.AfterFunc). Tests on a settable clock pass
	// its AfterFunc (fakeclock.Clock.AfterFunc), so that an attempt is cut
	// when they move the clock past its timeout, not after a real wait;
	// Sleep cannot stand in, as a fake clock's Sleep moves the clock at
	// once and would cut every attempt.
	AfterFunc clock.AfterFunc
	// Messaging configures the real-time Messaging API (messaging.go).
	Messaging MessagingOptions
}

// OutboundOptions are the timings and failures of simulated outbound calls.
// A call is queued for Queued, calling for Calling, then ends in success
// (a VOICE-SIP conversation is created) or failure (unreachable number).
type OutboundOptions struct {
	// Queued and Calling are the durations of the first two statuses on
	// the server clock; defaults DefaultCallQueued and DefaultCallCalling.
	Queued, Calling time.Duration
	// Retention is how long the status stays readable after the call
	// ends; then it answers 404. Default DefaultCallRetention.
	Retention time.Duration
	// Unreachable numbers end in failure (compared after dropping spaces,
	// dashes, dots and parentheses).
	Unreachable []string
}

// WebhookOptions configure deliveries. The retry schedule is the
// simulator's choice (the reference shows none): attempt n+1 follows
// attempt n after Backoff·2^(n-1), capped at MaxBackoff.
type WebhookOptions struct {
	// AllowInsecure accepts http:// endpoint URLs on loopback hosts, for
	// test receivers; without it every URL must be https://.
	AllowInsecure bool
	// MaxAttempts is the number of attempts of one delivery, the first
	// included; default DefaultWebhookAttempts.
	MaxAttempts int
	// Backoff is the wait before the first retry; default DefaultWebhookBackoff.
	Backoff time.Duration
	// MaxBackoff caps the wait between attempts; default DefaultWebhookMaxBackoff.
	MaxBackoff time.Duration
	// Workers deliver concurrently; default DefaultWebhookWorkers.
	Workers int
	// Queue bounds the deliveries waiting for a worker; beyond it new
	// deliveries are dropped and counted. Default DefaultWebhookQueue.
	Queue int
	// Client sends deliveries; default a client of its own (tests pass the
	// client of an httptest TLS server). The per-endpoint timeout_ms is
	// applied per attempt on top of it.
	Client *http.Client
}

// ProjectOptions are the per-project toggles the reference mentions. The
// zero value is the common configuration: transcripts and metrics shown,
// v1 returns every field.
type ProjectOptions struct {
	// HideTranscripts is show_transcripts=false: turns are empty while
	// num_turns keeps its count.
	HideTranscripts bool
	// HideMetrics selects no response metrics: metrics is empty.
	HideMetrics bool
	// V1Whitelist is v1 field whitelisting: only id, started_at,
	// account_id and project_id are returned.
	V1Whitelist bool
	// Streaming sends v2/v3 lists with chunked transfer encoding.
	Streaming bool
}

// Faults are injected into API requests. Fractions are 0..1 and are drawn
// from a stream seeded by Options.Seed, so the n-th request of a run gets
// the same fate in every run.
type Faults struct {
	// Latency is added to every request, plus a uniform draw in [0, Jitter).
	Latency, Jitter time.Duration
	// Error500 is the fraction of requests answered 500.
	Error500 float64
	// Error429 is the fraction of requests answered 429 with Retry-After.
	Error429 float64
	// ChatTimeout is the fraction of debug-chat turns answered CHAT_TIMEOUT;
	// the session is ended, as a real timeout would.
	ChatTimeout float64
	// Drop is the fraction of requests whose connection is closed without
	// a response.
	Drop float64
	// RetryAfter is the Retry-After of injected 429s; default DefaultRetryAfter.
	RetryAfter time.Duration

	// Messaging faults are drawn per session from its id and the index of
	// the client event, so a session meets the same faults in every run.
	//
	// SocketDrop is the fraction of join requests and user messages
	// during which the socket is dropped without a close frame: either
	// before the event is processed (it is lost) or after the first few
	// events of the answer were delivered (the rest waits in the log for
	// the reconnect's replay).
	SocketDrop float64
	// Overload is the fraction of join requests and user messages
	// answered with the "high load" system message, unprocessed.
	Overload float64
	// ReplyFailure is the fraction of user messages whose reply fails:
	// unprocessed with "having trouble responding", or, when streaming,
	// cut off after the first chunks with "encountered an error".
	ReplyFailure float64
	// JoinFailure is the fraction of join requests answered "unable to
	// start a conversation"; the conversation is not created.
	JoinFailure float64
	// LookupFailure is the fraction of join requests and user messages
	// answered "Error: Unable to retrieve session" (the reference's
	// transient internal lookup error), unprocessed; the session stays.
	LookupFailure float64
	// EarlyExpiry is the fraction of join requests and user messages
	// after whose answer the session expires at once, as though it had
	// idled past the session expiry: the next Tick or client event ends
	// it (SESSION_END with reason "expired") and its handshake answers
	// 404. At 1 every session expires right after the join is answered,
	// whatever the speed of client and server, which an expiry of a
	// millisecond of real idleness cannot promise.
	EarlyExpiry float64
}

// Validate reports every problem of the fault settings at once.
func (f Faults) Validate() error {
	var errs []error
	for _, fr := range []struct {
		name string
		v    float64
	}{{"error-500", f.Error500}, {"error-429", f.Error429}, {"chat-timeout", f.ChatTimeout}, {"drop", f.Drop},
		{"socket-drop", f.SocketDrop}, {"overload", f.Overload}, {"reply-failure", f.ReplyFailure}, {"join-failure", f.JoinFailure},
		{"lookup-failure", f.LookupFailure}, {"early-expiry", f.EarlyExpiry}} {
		// Written so that NaN, which compares false with everything, is
		// refused too: it would silently inject nothing.
		if !(fr.v >= 0 && fr.v <= 1) {
			errs = append(errs, fmt.Errorf("fault %s: fraction %v is outside 0..1", fr.name, fr.v))
		}
	}
	if f.Latency < 0 || f.Jitter < 0 || f.RetryAfter < 0 {
		errs = append(errs, errors.New("fault durations must not be negative"))
	}
	return errors.Join(errs...)
}

// Validate reports every problem of the options at once.
func (o Options) Validate() error {
	var errs []error
	if o.BuildKey != "" && o.BuildKey == o.RuntimeKey {
		errs = append(errs, errors.New("build and runtime keys must differ: the host families are separate services"))
	}
	if o.AccountID != "" && !isPrefixedID(o.AccountID, "ws-") && !isSlug(o.AccountID) {
		errs = append(errs, fmt.Errorf("account id %q: want ws-XXXXXXXX or a slug", o.AccountID))
	}
	if o.ChatIdleTimeout < 0 {
		errs = append(errs, errors.New("chat idle timeout must not be negative"))
	}
	if o.StoreCap < 0 {
		errs = append(errs, errors.New("store cap must not be negative"))
	}
	if !validRate(o.RatePerKey) {
		errs = append(errs, fmt.Errorf("rate per key %v: want a finite number, not negative (0 for unlimited)", o.RatePerKey))
	}
	if o.SeedConversations < 0 {
		errs = append(errs, errors.New("seed conversations must not be negative"))
	}
	if cap := o.StoreCap; cap > 0 && o.SeedConversations > cap {
		errs = append(errs, fmt.Errorf("seed conversations (%d) exceed the store cap (%d)", o.SeedConversations, cap))
	}
	if err := o.Faults.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := brand.Validate(o.Brand); err != nil {
		errs = append(errs, err)
	}
	if o.Outbound.Queued < 0 || o.Outbound.Calling < 0 || o.Outbound.Retention < 0 {
		errs = append(errs, errors.New("outbound call durations must not be negative"))
	}
	for _, n := range o.Outbound.Unreachable {
		if _, ok := normalizeNumber(n); !ok {
			errs = append(errs, fmt.Errorf("unreachable number %q is not a phone number", n))
		}
	}
	if t := o.CallToken; t != "" && (t == cmp.Or(o.BuildKey, DefaultBuildKey) || t == cmp.Or(o.RuntimeKey, DefaultRuntimeKey)) {
		errs = append(errs, errors.New("call token must differ from the build and runtime keys (leave it unset to use the runtime key)"))
	}
	if !validRate(o.SMSRate) {
		errs = append(errs, fmt.Errorf("SMS rate %v: want a finite number, not negative (0 for unlimited)", o.SMSRate))
	}
	if o.SMSSessionTimeout < 0 || o.TickInterval < 0 {
		errs = append(errs, errors.New("SMS session timeout and tick interval must not be negative"))
	}
	if err := o.Messaging.validate(); err != nil {
		errs = append(errs, err)
	}
	w := o.Webhooks
	if w.MaxAttempts < 0 || w.Workers < 0 || w.Queue < 0 || w.Backoff < 0 || w.MaxBackoff < 0 {
		errs = append(errs, errors.New("webhook attempts, workers, queue and backoffs must not be negative"))
	}
	return errors.Join(errs...)
}

// validRate says whether r is a usable rate: finite and not negative. A
// NaN rate would refuse every request, an infinite one means nothing
// that 0 (unlimited) does not.
func validRate(r float64) bool {
	return r >= 0 && !math.IsInf(r, 0)
}

// withDefaults fills the zero fields.
func (o Options) withDefaults() Options {
	if o.AccountID == "" {
		o.AccountID = DefaultAccountID
	}
	if o.AccountSlug == "" {
		o.AccountSlug = DefaultAccountSlug
	}
	if o.BuildKey == "" {
		o.BuildKey = DefaultBuildKey
	}
	if o.RuntimeKey == "" {
		o.RuntimeKey = DefaultRuntimeKey
	}
	if o.ChatIdleTimeout == 0 {
		o.ChatIdleTimeout = DefaultChatIdleTimeout
	}
	if o.StoreCap == 0 {
		o.StoreCap = max(DefaultStoreCap, o.SeedConversations)
	}
	if o.Faults.RetryAfter == 0 {
		o.Faults.RetryAfter = DefaultRetryAfter
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.AfterFunc == nil {
		o.AfterFunc = afterFunc
	}
	if o.JanitorInterval <= 0 {
		o.JanitorInterval = min(max(o.ChatIdleTimeout/4, 10*time.Millisecond), 30*time.Second)
	}
	o.Brand = brand.Word(o.Brand)
	if o.Outbound.Queued == 0 {
		o.Outbound.Queued = DefaultCallQueued
	}
	if o.Outbound.Calling == 0 {
		o.Outbound.Calling = DefaultCallCalling
	}
	if o.Outbound.Retention == 0 {
		o.Outbound.Retention = DefaultCallRetention
	}
	if o.SMSSessionTimeout == 0 {
		o.SMSSessionTimeout = DefaultSMSSessionTimeout
	}
	if o.TickInterval == 0 {
		o.TickInterval = DefaultTickInterval
	}
	w := &o.Webhooks
	if w.MaxAttempts == 0 {
		w.MaxAttempts = DefaultWebhookAttempts
	}
	if w.Backoff == 0 {
		w.Backoff = DefaultWebhookBackoff
	}
	if w.MaxBackoff == 0 {
		w.MaxBackoff = DefaultWebhookMaxBackoff
	}
	if w.Workers == 0 {
		w.Workers = DefaultWebhookWorkers
	}
	if w.Queue == 0 {
		w.Queue = DefaultWebhookQueue
	}
	o.Messaging = o.Messaging.withDefaults()
	return o
}

// Info is what a client needs to talk to a running simulator.
type Info struct {
	// BuildURL and RuntimeURL are set once the server listens (equal in
	// single-host mode).
	BuildURL   string `json:"build_url"`
	RuntimeURL string `json:"runtime_url"`
	AccountID  string `json:"account_id"`
	// AccountSlug is the workspace in slug form, accepted wherever AccountID is.
	AccountSlug string   `json:"account_slug"`
	AgentIDs    []string `json:"agent_ids"`
	// ProjectIDs maps each agent id to its PROJECT-XXXXXXXX alias.
	ProjectIDs map[string]string `json:"project_ids"`
	BuildKey   string            `json:"build_api_key"`
	RuntimeKey string            `json:"runtime_api_key"`
	// ScopedBuildKey and ScopedRuntimeKey are valid keys with rights only
	// for ScopedProjectID: they get 403 on every served agent.
	ScopedBuildKey   string `json:"scoped_build_api_key"`
	ScopedRuntimeKey string `json:"scoped_runtime_api_key"`
	ScopedProjectID  string `json:"scoped_project_id"`
	// CallToken is the X-<Brand>-Auth-Token of outbound calling and SMS
	// when Options.CallToken is set; empty means the runtime key.
	CallToken string `json:"call_token,omitempty"`
	// Brand is the word of the branded headers: AuthTokenHeader is
	// "X-<Brand>-Auth-Token", SignatureHeader "X-<Brand>-Signature".
	Brand           string `json:"brand"`
	AuthTokenHeader string `json:"auth_token_header"`
	SignatureHeader string `json:"signature_header"`
	// ConnectorIDs are the X-TOKEN-ID values of SMS: agent id →
	// environment (sandbox, pre-release, live) → connector id.
	ConnectorIDs map[string]map[string]string `json:"connector_ids"`
	// Numbers are the numbers provisioned for each agent (agent id → list);
	// EnvNumbers the one SMS picks per environment when agent_number is
	// omitted (agent id → environment → number).
	Numbers    map[string][]string          `json:"numbers"`
	EnvNumbers map[string]map[string]string `json:"env_numbers"`
	// UnreachableNumbers are the outbound destinations that end in failure.
	UnreachableNumbers []string `json:"unreachable_numbers"`
	// MessagingURL is {messaging_url}, set once the server listens: the
	// HTTP steps under /api/v1 and the WebSocket at /ws (ws:// of the same
	// host). Equal to BuildURL in single-host mode.
	MessagingURL string `json:"messaging_url"`
	// MessagingHost is the registered domain (X-Host) of the default
	// connectors; its subdomains are accepted too.
	MessagingHost string `json:"messaging_host"`
	// MessagingConnectors are the default connectors' tokens (X-Token):
	// agent id → environment → token. Options.Messaging.Connectors are
	// not listed (their owner knows them).
	MessagingConnectors map[string]map[string]string `json:"messaging_connectors"`
}
