package platform

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttest/agenttest/internal/secret"
)

// Defaults of Config, kept together so the documentation and the code agree.
const (
	// DefaultBrand is the word that stands for the platform's brand in
	// header names such as X-Vendor-Auth-Token.
	DefaultBrand = "Vendor"
	// DefaultMaxPerHost caps concurrent requests per host. A large suite
	// then queues in the client instead of flooding the platform (which
	// would answer with 429s that cost more time than the queue).
	DefaultMaxPerHost = 64
	// DefaultMaxBodyBytes bounds a JSON response body other than a
	// debug-chat reply. The reference does not give payload limits; 16 MiB
	// is far above any conversation page seen and low enough that a
	// misbehaving server cannot exhaust memory.
	DefaultMaxBodyBytes = 16 << 20
	// DefaultMaxReplyBytes bounds a debug-chat reply, after decompression.
	// A turn result is a reply text and its metadata: a few kilobytes.
	// 1 MiB leaves room for a large state or many function events while a
	// hostile server cannot make each of hundreds of parallel turns hold
	// tens of megabytes.
	DefaultMaxReplyBytes = 1 << 20
	// DefaultReplyBudget bounds the response bytes all calls of a client
	// hold while reading them, so memory does not grow with the number
	// of calls in flight times the body limit (see Config.ReplyBudget).
	DefaultReplyBudget = 64 << 20
	// maxRedirects bounds the same-origin redirects followed.
	maxRedirects = 5
	// DefaultMaxAudioBytes bounds a recording (about 4 hours of 8 kHz
	// 16-bit mono audio).
	DefaultMaxAudioBytes = 256 << 20
	// DefaultUserAgent identifies agenttest to the platform's logs.
	DefaultUserAgent = "agenttest"
)

// errorBodyLimit bounds how much of an error response is read; errorKeep how
// much of it an APIError keeps. Error bodies are short JSON or a proxy page;
// more than this is noise in a report.
const (
	errorBodyLimit = 64 << 10
	errorKeep      = 4 << 10
)

// Config says where the platform is and how to talk to it. The zero value of
// every optional field means its default.
type Config struct {
	// BuildURL is the build host ({build_url}): debug chat, agents,
	// alerts, webhooks. Required.
	BuildURL string
	// RuntimeURL is the runtime host ({runtime_url}): conversations,
	// handoff state, outbound calls, SMS. Optional; the methods that need
	// it fail with a clear error when it is empty.
	RuntimeURL string
	// AccountID is the workspace, in slug form or as ws-XXXXXXXX. Needed
	// by the runtime endpoints only.
	AccountID string
	// BuildKey is the workspace key for the build host. Sent only in the
	// x-api-key header, never logged.
	BuildKey string
	// RuntimeKey is the key for the runtime host. Sent only in headers,
	// never logged.
	RuntimeKey string
	// MessagingURL is {messaging_url}: the Messaging API's HTTP steps
	// (http or https; ws and wss are read as http and https). Optional;
	// OpenMessaging fails with a clear error when it is empty.
	MessagingURL string
	// MessagingSocketURL is the WebSocket endpoint, wss://{messaging_host}/ws.
	// Default: the host of MessagingURL, with ws or wss, and path /ws.
	MessagingSocketURL string
	// CallToken is the X-<Brand>-Auth-Token of outbound calling and SMS.
	// Empty means RuntimeKey: the reference does not say whether they
	// are one credential. Sent only in that header, never logged.
	CallToken string
	// ConnectorToken is the Messaging connector token, sent only in the
	// X-Token header of the access-token step, never logged.
	ConnectorToken string
	// Redactor holds the workspace's other secrets, which this client
	// never sends but masks wherever it keeps the platform's text, as it
	// masks its keys: the connector tokens of other agents, a webhook
	// signing secret, and those its owner learns while the client is in
	// use (secret.Redactor.Learn: the signing secret of an endpoint
	// registered through the client). A platform knows them all, and
	// one that echoes them must not put them into reports. The client
	// masks with a redactor made from it (With) that adds its keys; nil
	// means its keys alone.
	Redactor *secret.Redactor
	// MessagingHost is the domain or app namespace the connector is
	// registered to, sent as X-Host.
	MessagingHost string
	// Brand replaces the word Vendor in header names
	// (X-<Brand>-Auth-Token). Default DefaultBrand.
	Brand string
	// HTTPClient sends the requests. Default: a client whose transport
	// keeps MaxPerHost idle connections per host, so parallel scenarios
	// reuse connections instead of opening new ones. New uses a copy
	// whose CheckRedirect is the client's own redirect policy (see
	// checkRedirect), whatever the given client had.
	HTTPClient *http.Client
	// MaxPerHost caps concurrent requests per host. Default
	// DefaultMaxPerHost.
	MaxPerHost int
	// MaxBodyBytes bounds JSON response bodies other than debug-chat
	// replies. Default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxReplyBytes bounds a debug-chat reply, counted after
	// decompression (a gzip bomb stops at the limit). Default
	// DefaultMaxReplyBytes.
	MaxReplyBytes int64
	// MaxReplyHint says how to raise MaxReplyBytes; it ends the error of
	// a reply over the limit (the CLI names its flag and target key).
	MaxReplyHint string
	// ReplyBudget bounds the bytes of JSON responses being read at once
	// across every call of the client: a call acquires budget as its body
	// arrives and releases it when the body is decoded. Default
	// DefaultReplyBudget, raised when needed so that a body at its limit
	// always fits.
	ReplyBudget int64
	// AllowHTTP accepts plain http:// URLs for hosts that are not
	// loopback addresses. Without it, a key would travel in clear text
	// and Validate refuses such a URL.
	AllowHTTP bool
	// MaxAudioBytes bounds recordings. Default DefaultMaxAudioBytes.
	MaxAudioBytes int64
	// Retry is the retry policy; zero fields take their defaults.
	Retry RetryPolicy
	// Rate caps the requests per second sent with each key to each host
	// before the platform refuses any (pace.go); 0 means no cap: the
	// client learns the rate from the platform's 429s.
	Rate float64
	// RateWait bounds how long one case (a RateAccount in the context of
	// its calls; a single call without one) may wait on rate limits in
	// all: Retry-After pauses and its turn at the key's pace. Past it the
	// call fails with a *RateLimitError. Default DefaultRateWait;
	// negative means no waiting at all: the first 429 fails the call.
	RateWait time.Duration
	// RateWaitHint says how to raise RateWait; it ends a RateLimitError
	// (the CLI names its flag and target key).
	RateWaitHint string
	// UserAgent is sent with every request. Default DefaultUserAgent.
	UserAgent string
	// Now is the clock used for Exchange timings and HTTP-date
	// Retry-After values. Default time.Now; tests and the CLI State
	// inject their own.
	Now func() time.Time
	// AfterFunc, when set, runs the Messaging client's timers on Now: the
	// settle window, AwaitEnd's quiet and the turn timeout
	// (MessagingStart). It calls f once d has passed on Now, and stop
	// cancels the call and reports whether it did: the signature of
	// fakeclock.Clock.AfterFunc and runner.Options.AfterFunc. A test that
	// moves its fake clock past a window then closes it at once, and no
	// window closes while the clock stands still. Nil means real timers,
	// whatever Now is.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// secrets are the keys the client sends, which it masks besides
// Redactor's.
func (c Config) secrets() []string {
	return []string{c.BuildKey, c.RuntimeKey, c.CallToken, c.ConnectorToken}
}

// redactor is the redactor of the client: Redactor's secrets, those it
// learns later too, and the keys. It scans every reply the client keeps,
// so it is built whole (Derive), to skip as New's does.
func (c Config) redactor() (*secret.Redactor, error) {
	return c.Redactor.Derive(c.secrets()...)
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.BuildURL == "" {
		errs = append(errs, errors.New("build URL is required"))
	} else if err := checkURL("build URL", c.BuildURL, CheckBaseURL, c.AllowHTTP); err != nil {
		errs = append(errs, err)
	}
	if c.RuntimeURL != "" {
		if err := checkURL("runtime URL", c.RuntimeURL, CheckBaseURL, c.AllowHTTP); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.validateMessaging(); err != nil {
		errs = append(errs, err)
	}
	for _, k := range []struct{ what, key string }{{"build key", c.BuildKey}, {"runtime key", c.RuntimeKey}, {"call token", c.CallToken}, {"connector token", c.ConnectorToken}} {
		if k.key == "" {
			continue
		}
		if err := secret.CheckKey(k.what, k.key); err != nil {
			errs = append(errs, err)
		}
	}
	if c.AccountID != "" {
		if err := CheckAccountID(c.AccountID); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxPerHost < 0 {
		errs = append(errs, fmt.Errorf("max requests per host must not be negative, got %d", c.MaxPerHost))
	}
	if c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) {
		errs = append(errs, fmt.Errorf("rate must be a number of requests per second, 0 or more, got %v", c.Rate))
	}
	if c.MaxBodyBytes < 0 || c.MaxAudioBytes < 0 || c.MaxReplyBytes < 0 || c.ReplyBudget < 0 {
		errs = append(errs, errors.New("body size limits must not be negative"))
	}
	if c.Brand != "" && !validHeaderToken(c.Brand) {
		errs = append(errs, fmt.Errorf("brand %q cannot be part of a header name", c.Brand))
	}
	if err := c.Retry.validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	// A key pasted into a URL setting must not reach the terminal. The
	// keys may be the problem themselves, so only the valid ones redact.
	red, _ := c.Redactor.With(secret.Maskable(c.secrets()...)...)
	return errors.New(red.String(errors.Join(errs...).Error()))
}

func validHeaderToken(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s != ""
}

// Client talks to one platform deployment. It is safe for concurrent use;
// share one Client across a run so the per-host cap and the connection pool
// are shared too.
type Client struct {
	cfg     Config
	http    *http.Client
	build   *url.URL
	runtime *url.URL // nil when not configured
	// messaging is the Messaging API's HTTP base, socket its WebSocket
	// URL; nil and "" when not configured.
	messaging *url.URL
	socket    string
	// buildBase and runtimeBase are the URLs as strings, computed once
	// because every request starts with one.
	buildBase, runtimeBase string
	retry                  RetryPolicy
	red                    *secret.Redactor
	now                    func() time.Time

	bufs bufPool
	kept keeper
	// starts and turns remember debug-chat request bodies (chatBody).
	starts chatBodies[startKey]
	turns  chatBodies[turnKey]
	budget *budget
	mu     sync.Mutex
	hosts  map[string]chan struct{}
	// pacers pace each (host, key); see pacerFor.
	pacers map[pacerKey]*pacer
	// buildSem and buildPacer are the build host's entries of hosts and
	// pacers (its build key's pacer), made by New: every debug-chat call
	// needs them, and they need no lock then.
	buildSem   chan struct{}
	buildPacer *pacer
	// userAgent, buildKey and runtimeKey are header values, made once:
	// requests only read them (http.Client copies headers it changes).
	userAgent, buildKey, runtimeKey []string

	// skew is the time (ns) the pacers' sleeps were promised but did
	// not take (see paceNow).
	skew atomic.Int64

	// formsOnce builds forms, the Messaging event names of the brand.
	formsOnce sync.Once
	forms     *eventForms
	// msgLimits bound what a Messaging session receives; zero fields
	// take the defaults (tests make them small).
	msgLimits messagingLimits
}

// New validates cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("platform config: %w", err)
	}
	if cfg.Brand == "" {
		cfg.Brand = DefaultBrand
	}
	if cfg.MaxPerHost == 0 {
		cfg.MaxPerHost = DefaultMaxPerHost
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxAudioBytes == 0 {
		cfg.MaxAudioBytes = DefaultMaxAudioBytes
	}
	if cfg.MaxReplyBytes == 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if cfg.ReplyBudget == 0 {
		cfg.ReplyBudget = DefaultReplyBudget
	}
	if cfg.RateWait == 0 {
		cfg.RateWait = DefaultRateWait
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Client{
		cfg:    cfg,
		http:   cfg.HTTPClient,
		retry:  cfg.Retry.withDefaults(),
		now:    cfg.Now,
		hosts:  make(map[string]chan struct{}),
		pacers: make(map[pacerKey]*pacer),
	}
	if c.http == nil {
		c.http = &http.Client{Transport: NewTransport(cfg.MaxPerHost)}
	}
	// A copy, so the redirect policy holds whatever client was given and
	// the caller's client is left as it was.
	hc := *c.http
	hc.CheckRedirect = c.checkRedirect
	c.http = &hc
	c.build, _ = url.Parse(strings.TrimRight(cfg.BuildURL, "/"))
	c.buildBase = c.build.String()
	c.userAgent = []string{cfg.UserAgent}
	if cfg.BuildKey != "" {
		c.buildKey = []string{cfg.BuildKey}
	}
	if cfg.RuntimeKey != "" {
		c.runtimeKey = []string{cfg.RuntimeKey}
	}
	c.buildSem = c.sem(c.build.Host)
	c.buildPacer = newPacer(cfg.Rate)
	c.pacers[pacerKey{c.build.Host, "build"}] = c.buildPacer
	if cfg.RuntimeURL != "" {
		c.runtime, _ = url.Parse(strings.TrimRight(cfg.RuntimeURL, "/"))
		c.runtimeBase = c.runtime.String()
	}
	c.messaging, c.socket = cfg.messagingURLs()
	red, err := cfg.redactor()
	if err != nil {
		return nil, fmt.Errorf("platform config: %w", err) // Validate checked the keys
	}
	c.red = red
	// Calls in flight are at most MaxPerHost on each of the two hosts.
	c.budget = newBudget(cfg.ReplyBudget, 2*cfg.MaxPerHost, max(cfg.MaxReplyBytes, cfg.MaxBodyBytes)+1)
	return c, nil
}

// NewTransport returns an http.Transport for many parallel keep-alive
// connections to a few hosts: the default transport keeps only 2 idle
// connections per host, so a parallel suite would open and close
// connections on every turn.
func NewTransport(maxPerHost int) *http.Transport {
	if maxPerHost <= 0 {
		maxPerHost = DefaultMaxPerHost
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 4 * maxPerHost
	t.MaxIdleConnsPerHost = maxPerHost
	t.IdleConnTimeout = 90 * time.Second
	return t
}

// RetryPolicy is the client's retry policy, defaults applied: for callers
// that retry a whole sequence of calls the client cannot retry alone
// (webhook.Register).
func (c *Client) RetryPolicy() RetryPolicy { return c.retry }

// Redactor returns the redactor of the client's keys, for text the
// client did not produce itself (the runner's records of user files).
func (c *Client) Redactor() *secret.Redactor { return c.red }

// Redact replaces every configured key in s, in every form package secret
// knows, with [REDACTED]. The client applies it to every body and every
// message built from server text, because a misbehaving server or proxy
// may echo request headers back.
func (c *Client) Redact(s string) string { return c.red.String(s) }

// sem returns the semaphore of a host, creating it on first use.
func (c *Client) sem(host string) chan struct{} {
	if c.buildSem != nil && host == c.build.Host {
		return c.buildSem
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.hosts[host]
	if !ok {
		s = make(chan struct{}, c.cfg.MaxPerHost)
		c.hosts[host] = s
	}
	return s
}

// maxPooled keeps occasional huge bodies from being held by the pool.
const maxPooled = 1 << 20

// bufPool recycles response buffers: a parallel suite reads thousands of
// similar bodies, and without the pool each read grows a fresh buffer.
type bufPool struct{ p sync.Pool }

func (bp *bufPool) get() *bytes.Buffer {
	if b, ok := bp.p.Get().(*bytes.Buffer); ok {
		return b
	}
	return new(bytes.Buffer)
}

func (bp *bufPool) put(b *bytes.Buffer) {
	if b == nil || b.Cap() > maxPooled {
		return
	}
	b.Reset()
	bp.p.Put(b)
}

// response is a successful (2xx) answer. body is pooled and holds reply
// budget: call release when done, and copy whatever must outlive it.
type response struct {
	status int
	header http.Header
	// buf is nil when the body was counted, not kept (call.count);
	// size is then its length.
	buf      *bytes.Buffer
	size     int64
	client   *Client
	held     int64
	started  time.Time
	latency  time.Duration
	attempts int
}

func (r *response) body() []byte { return r.buf.Bytes() }

func (r *response) release() {
	r.client.bufs.put(r.buf)
	r.client.budget.release(r.held)
	r.buf, r.held = nil, 0
}

// do sends one call, retrying as its class allows, and returns the 2xx
// answer or a typed error. The answer is a value, not a pointer: every
// call made one more allocation for it, and its callers keep it in a
// local.
func (c *Client) do(ctx context.Context, rq *call) (response, error) {
	base, target := c.build, c.buildBase
	switch rq.ep.host {
	case runtimeHost:
		if c.runtime == nil {
			return response{}, fmt.Errorf("%s %s: the runtime URL is not configured", rq.ep.method, rq.path)
		}
		base, target = c.runtime, c.runtimeBase
	case messagingHost:
		if c.messaging == nil {
			return response{}, fmt.Errorf("%s %s: the messaging URL is not configured", rq.ep.method, rq.path)
		}
		base, target = c.messaging, c.messaging.String()
	}
	if rq.url != "" {
		target = rq.url
	} else {
		target += rq.path
		if len(rq.query) > 0 {
			target += "?" + rq.query.Encode()
		}
	}
	sem := c.sem(base.Host)
	limit := c.cfg.MaxBodyBytes
	switch {
	case rq.limit > 0:
		limit = rq.limit
	case rq.ep.chat():
		limit = c.cfg.MaxReplyBytes
	}

	acct := RateAccountFrom(ctx)
	if acct == nil {
		acct = NewRateAccount()
	}
	acct.setLimit(c.cfg.RateWait)
	pc := c.pacerFor(base.Host, rq)
	// A 429 is not an attempt: the request was refused before it was
	// processed, and waiting is what the platform asked for. Only the
	// case's wait budget bounds those waits.
	for attempt := 1; ; {
		if err := ctx.Err(); err != nil {
			return response{}, c.networkError(rq, err, false, attempt-1)
		}
		t, err := pc.wait(ctx, acct, c.paceNow, c.paceSleep)
		if err != nil {
			if eb, ok := errors.AsType[errBudget](err); ok {
				return response{}, c.rateLimitError(rq, acct, eb)
			}
			return response{}, c.networkError(rq, err, false, attempt-1)
		}
		resp, err := c.attempt(ctx, rq, target, sem, limit, attempt)
		answered, limited, pause := c.outcome(err, pc)
		pc.done(c.paceNow(), rq, t, answered, limited, pause)
		if answered {
			acct.count(limited)
		}
		if limited {
			// Context deadlines are wall-clock times. A pause that
			// would outlast the caller's deadline ends the call now,
			// with its real cause.
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < pause {
				return response{}, err
			}
			continue
		}
		if err == nil {
			return resp, nil
		}
		wait, retry := c.shouldRetry(ctx, rq, err, attempt)
		if !retry {
			return response{}, err
		}
		if err := c.retry.sleep(ctx, wait); err != nil {
			return response{}, c.networkError(rq, err, false, attempt)
		}
		attempt++
	}
}

// outcome classifies the result of one try for pacing: whether the
// platform answered at all, whether the answer was a 429, and the pause
// it asked for (its Retry-After, or the backoff of the key's run of 429s
// without one).
func (c *Client) outcome(err error, pc *pacer) (answered, limited bool, pause time.Duration) {
	if err == nil {
		return true, false, 0
	}
	if ae, ok := errors.AsType[*APIError](err); ok {
		if ae.Status != http.StatusTooManyRequests {
			return true, false, 0
		}
		pause = ae.RetryAfter
		if pause <= 0 {
			pause = pc.backoffPause(c.retry)
		}
		return true, true, pause
	}
	var re *ResponseError
	return errors.As(err, &re), false, 0
}

// attempt sends the request once, holding the host's semaphore for the
// duration of the exchange (not during retry waits).
func (c *Client) attempt(ctx context.Context, rq *call, target string, sem chan struct{}, limit int64, attempt int) (response, error) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return response{}, c.networkError(rq, ctx.Err(), false, attempt)
	}
	// The exchange is a function of its own so that each keeps one
	// deferred call and few returns: Go runs such defers inline, and
	// heap-allocated defer records cost every call.
	defer func() { <-sem }()
	return c.exchange(ctx, rq, target, limit, attempt)
}

// exchange is attempt's request and its answer, the semaphore held.
func (c *Client) exchange(ctx context.Context, rq *call, target string, limit int64, attempt int) (response, error) {
	var body io.Reader
	if rq.body != nil {
		body = bytes.NewReader(rq.body)
	}
	if rq.ep == epAudio {
		ctx = context.WithValue(ctx, storageRedirects{}, true)
	}
	req, err := http.NewRequestWithContext(ctx, rq.ep.method, target, body)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: build request: %w", rq.ep.method, rq.path, err)
	}
	h := req.Header
	if rq.body != nil {
		h["Content-Type"] = jsonContentType
	}
	if rq.accept != "" {
		h["Accept"] = []string{rq.accept}
	} else {
		h["Accept"] = jsonContentType
	}
	h["User-Agent"] = c.userAgent
	c.authenticate(h, rq)
	// The extra headers of the call (sms.go).
	maps.Copy(h, rq.header)

	started := c.now()
	res, err := c.http.Do(req)
	if err != nil {
		return response{}, c.networkError(rq, err, !neverSent(err), attempt)
	}
	defer res.Body.Close()

	if isRedirect(res.StatusCode) {
		// checkRedirect refused to follow it (or it had no Location).
		return response{}, c.redirectError(rq, req, res)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return response{}, c.apiError(rq, res, attempt)
	}
	if res.ContentLength > limit {
		return response{}, c.tooLarge(rq, res.StatusCode, limit)
	}
	if rq.count {
		// Only the length is wanted: the bytes go nowhere, so a
		// recording at its limit costs no memory, whatever length the
		// server announced.
		n, err := io.Copy(io.Discard, io.LimitReader(res.Body, limit+1))
		switch {
		case err == nil && n > limit:
			return response{}, c.tooLarge(rq, res.StatusCode, limit)
		case err != nil && corruptEncoding(err):
			return response{}, c.responseError(rq, res.StatusCode, nil, fmt.Errorf("the gzip body does not decompress: %w", err))
		case err != nil:
			return response{}, c.networkError(rq, err, true, attempt)
		}
		return response{status: res.StatusCode, header: res.Header, client: c, size: n,
			started: started, latency: c.now().Sub(started), attempts: attempt}, nil
	}
	buf := c.bufs.get()
	var held int64
	if rq.binary {
		// Recordings have their own limit, far above the budget, and
		// are not text to redact.
		if res.ContentLength > 0 {
			// The declared length is the server's word: grown to it
			// whole, a server that announces the limit and sends a few
			// bytes would cost the limit per read. Beyond a pooled
			// buffer's size, the bytes that arrive grow it.
			buf.Grow(int(min(res.ContentLength, maxPooled)))
		}
		var n int64
		if n, err = buf.ReadFrom(io.LimitReader(res.Body, limit+1)); err == nil && n > limit {
			err = errTooLarge
		}
	} else {
		held, err = c.budget.read(ctx, buf, res.Body, res.ContentLength, limit)
	}
	if err != nil {
		c.bufs.put(buf)
		c.budget.release(held)
		if errors.Is(err, errTooLarge) {
			return response{}, c.tooLarge(rq, res.StatusCode, limit)
		}
		if corruptEncoding(err) {
			return response{}, c.responseError(rq, res.StatusCode, nil, fmt.Errorf("the gzip body does not decompress: %w", err))
		}
		// The server answered, so the request was received: never
		// re-send a turn after this.
		return response{}, c.networkError(rq, err, true, attempt)
	}
	if !rq.binary {
		// Keys leave the client in no body: redact once, here, for every
		// caller, before anything is decoded or kept.
		if clean := c.redactor(rq).JSON(buf.Bytes()); len(clean) != buf.Len() || (len(clean) > 0 && &clean[0] != &buf.Bytes()[0]) {
			buf.Reset()
			buf.Write(clean)
		}
	}
	return response{
		status:   res.StatusCode,
		header:   res.Header,
		buf:      buf,
		client:   c,
		held:     held,
		started:  started,
		latency:  c.now().Sub(started),
		attempts: attempt,
	}, nil
}

var jsonContentType = []string{"application/json"}

// corruptEncoding reports whether err is a body the transport could not
// decompress (it asks for gzip and decompresses it itself): the server's
// malformed answer, not a lost connection, since the connection delivers
// the bytes sent. A gzip stream cut short is io.ErrUnexpectedEOF, as a
// connection cut short is, and stays a network error.
func corruptEncoding(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &ce)
}

// hostOf is the host (host:port) a call goes to, for errors.
func (c *Client) hostOf(rq *call) string {
	switch rq.ep.host {
	case runtimeHost:
		if c.runtime != nil {
			return c.runtime.Host
		}
	case messagingHost:
		if c.messaging != nil {
			return c.messaging.Host
		}
	default:
		return c.build.Host
	}
	return ""
}

// authenticate sets the credential header of an endpoint group. Keys go
// only here: never into URLs, bodies or messages.
func (c *Client) authenticate(h http.Header, rq *call) {
	switch rq.ep.auth {
	case authBuildKey:
		if c.buildKey != nil {
			h["X-Api-Key"] = c.buildKey
		}
	case authRuntimeKey:
		if c.runtimeKey != nil {
			h["X-Api-Key"] = c.runtimeKey
		}
	case authVendorToken:
		if t := cmp.Or(c.cfg.CallToken, c.cfg.RuntimeKey); t != "" {
			h[http.CanonicalHeaderKey("X-"+c.cfg.Brand+"-Auth-Token")] = []string{t}
		}
	case authConnector:
		h["X-Token"] = []string{c.cfg.ConnectorToken}
		h["X-Host"] = []string{c.cfg.MessagingHost}
	case authBearer:
		h["Authorization"] = []string{"Bearer " + rq.bearer}
	}
}

// AccountID returns the configured workspace id (not a secret), for
// reports and for building Target descriptions.
func (c *Client) AccountID() string { return c.cfg.AccountID }

// BuildURL returns the configured build host URL.
func (c *Client) BuildURL() string { return c.buildBase }

// RuntimeURL returns the configured runtime host URL, or "".
func (c *Client) RuntimeURL() string {
	return c.runtimeBase
}
