// Package sim is the embedded platform simulator: it serves the build-host
// debug-chat endpoints and the runtime-host Conversations and handoff
// endpoints of the platform reference over agents played by
// internal/sim/agent. It is agenttest's default target and the test bed of
// every test.
//
// Typical use in a test goes through simtest:
//
//	s := simtest.Start(t, sim.Options{Seed: 1})
//	// s.BuildURL, s.RuntimeURL, s.BuildKey, s.RuntimeKey, s.AgentIDs
//
// and in a process through ListenAndServe, as `agenttest sim` does.
package sim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agenttest/agenttest/internal/brand"
	"github.com/agenttest/agenttest/internal/sim/agent"
	"golang.org/x/sync/errgroup"
)

// Server is one simulated platform workspace. Create it with New, serve its
// handlers, and Close it to stop its janitor.
type Server struct {
	opts Options

	agents   map[string]*agent.Definition // by agent id
	aliases  map[string]string            // PROJECT-XXXXXXXX → agent id
	projects map[string]string            // agent id → PROJECT-XXXXXXXX
	agentIDs []string
	started  time.Time

	store    *Store
	sessions sessionTable
	limiter  *rateLimiter
	faults   faultInjector
	errIDs   errorIDs
	convSeq  atomic.Uint64

	keys map[string]keyScope
	// tokens are the X-<Brand>-Auth-Token values of outbound calling and
	// SMS: the call token's when Options.CallToken is set, else keys.
	tokens map[string]keyScope

	// deploys is the active deployment of each agent and environment.
	deploys deployments

	infoMu sync.Mutex
	info   Info

	// Outbound calling, SMS, alerts, webhooks, and the traffic counters
	// the alert evaluator reads.
	calls    outboundCalls
	sms      smsState
	alerts   alertRules
	webhooks *webhooks
	traffic  *traffic
	idSeq    atomic.Uint64 // call sids, rule and endpoint ids, secrets
	// msg is the Messaging API (messaging.go, messaging_ws.go).
	msg *messagingState

	closeOnce sync.Once
	done      chan struct{}
	janitorWG sync.WaitGroup
	// changes wakes tests waiting for background work (Changed).
	changes changes
}

// hostFamily says which host serves a key or a route.
type hostFamily int

const (
	buildHost hostFamily = iota
	runtimeHost
	// messagingHost is {messaging_url}: the Messaging API's HTTP steps
	// and its WebSocket, authenticated by connector token and JWT.
	messagingHost
)

func (h hostFamily) String() string {
	switch h {
	case buildHost:
		return "build"
	case runtimeHost:
		return "runtime"
	}
	return "messaging"
}

// keyScope is what an API key may do: which host family it belongs to and,
// when project is set, the one project it has rights for.
type keyScope struct {
	host    hostFamily
	project string
}

// New validates opts, loads the agents and seeds the store.
func New(opts Options) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("simulator options: %w", err)
	}
	opts = opts.withDefaults()
	defs := opts.Agents
	if defs == nil {
		var err error
		if defs, err = agent.Builtin(); err != nil {
			return nil, fmt.Errorf("load built-in agents: %w", err)
		}
	}
	if len(defs) == 0 {
		return nil, errors.New("simulator needs at least one agent")
	}
	s := &Server{
		opts:     opts,
		agents:   make(map[string]*agent.Definition, len(defs)),
		aliases:  make(map[string]string, len(defs)),
		projects: make(map[string]string, len(defs)),
		started:  opts.Now().UTC(),
		store:    NewStore(opts.StoreCap),
		limiter:  newRateLimiter(opts.RatePerKey, opts.Now),
		faults:   faultInjector{f: opts.Faults, seed: uint64(opts.Seed)},
		done:     make(chan struct{}),
	}
	s.sessions.m = make(map[string]*chatSession)
	s.traffic = newTraffic()
	s.calls.m = map[string]*outboundCall{}
	s.sms.limiter = newRateLimiter(opts.SMSRate, opts.Now)
	s.webhooks = newWebhooks(opts.Webhooks, opts.Brand, opts.AfterFunc, s.changes.note)
	for _, d := range defs {
		if _, dup := s.agents[d.ID]; dup {
			return nil, fmt.Errorf("agent id %q is defined twice", d.ID)
		}
		if !isSlug(d.ID) && !isPrefixedID(d.ID, "PROJECT-") {
			return nil, fmt.Errorf("agent id %q: want a slug or PROJECT-XXXXXXXX", d.ID)
		}
		alias := d.ID
		if !strings.HasPrefix(d.ID, "PROJECT-") {
			alias = projectAlias(d.ID)
		}
		s.agents[d.ID] = d
		s.aliases[alias] = d.ID
		s.projects[d.ID] = alias
		s.agentIDs = append(s.agentIDs, d.ID)
	}
	s.keys = map[string]keyScope{
		opts.BuildKey:                     {host: buildHost},
		opts.RuntimeKey:                   {host: runtimeHost},
		opts.BuildKey + scopedKeySuffix:   {host: buildHost, project: ScopedProjectID},
		opts.RuntimeKey + scopedKeySuffix: {host: runtimeHost, project: ScopedProjectID},
	}
	s.tokens = s.keys
	if t := opts.CallToken; t != "" {
		s.tokens = map[string]keyScope{
			t:                   {host: runtimeHost},
			t + scopedKeySuffix: {host: runtimeHost, project: ScopedProjectID},
		}
	}
	s.initDeployments()
	s.info = Info{
		AccountID:        opts.AccountID,
		AccountSlug:      opts.AccountSlug,
		AgentIDs:         append([]string(nil), s.agentIDs...),
		ProjectIDs:       s.projects,
		BuildKey:         opts.BuildKey,
		RuntimeKey:       opts.RuntimeKey,
		ScopedBuildKey:   opts.BuildKey + scopedKeySuffix,
		ScopedRuntimeKey: opts.RuntimeKey + scopedKeySuffix,
		ScopedProjectID:  ScopedProjectID,
		CallToken:        opts.CallToken,
	}
	s.fillMessagingInfo()
	if err := s.newMessaging(); err != nil {
		return nil, err
	}
	if err := s.seed(opts.SeedConversations); err != nil {
		return nil, err
	}
	// Hooks go in after seeding: seeded history feeds neither the alert
	// evaluator nor webhooks, only live traffic does.
	s.store.SetHooks(s.storeHooks())
	s.janitorWG.Add(2)
	go s.every(s.opts.JanitorInterval, s.sweep)
	go s.every(s.opts.TickInterval, s.Tick)
	s.webhooks.start(&s.janitorWG)
	return s, nil
}

// projectAlias derives the stable PROJECT-XXXXXXXX form of an agent id.
func projectAlias(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("PROJECT-%08X", h.Sum32())
}

// Info describes the server; the URLs are set once it listens.
func (s *Server) Info() Info {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	info := s.info
	info.AgentIDs = append([]string(nil), s.info.AgentIDs...)
	return info
}

func (s *Server) setURLs(build, runtime, messaging string) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	s.info.BuildURL, s.info.RuntimeURL, s.info.MessagingURL = build, runtime, messaging
}

// SetURLs records where the server is reachable, for Info. ListenAndServe
// calls it; callers serving the handlers themselves (httptest) call it too.
// The messaging URL is left as it was (see SetMessagingURL).
func (s *Server) SetURLs(buildURL, runtimeURL string) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	s.info.BuildURL, s.info.RuntimeURL = buildURL, runtimeURL
}

// SetMessagingURL records where the messaging host is reachable, for Info.
func (s *Server) SetMessagingURL(u string) {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	s.info.MessagingURL = u
}

// Store gives access to the conversation store (tests, later issues).
func (s *Server) Store() *Store { return s.store }

// Close stops the background goroutines (janitor, the tick loop, webhook
// workers) and cancels deliveries in flight; it returns once they are
// gone. Handlers keep working, but idle sessions are no longer swept,
// calls advance only when read, and no webhook is delivered any more.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.webhooks.stop()
		s.msg.closeSockets()
	})
	s.janitorWG.Wait()
	s.webhooks.closeIdle()
}

// authKind is how a route authenticates.
type authKind int

const (
	// authAPIKey is the x-api-key header of most groups.
	authAPIKey authKind = iota
	// authBrandToken is X-<Brand>-Auth-Token with the call token, or the
	// runtime key when none is set (outbound calling; SMS checks
	// X-TOKEN-ID in its handler).
	authBrandToken
)

// route is one endpoint of the reference.
type route struct {
	pattern string
	host    hostFamily
	fam     family
	handle  func(s *Server, w http.ResponseWriter, r *http.Request, k keyScope)
	auth    authKind
}

var routes = []route{
	{"POST /v1/agents/{agentId}/debug-chat", buildHost, familyDebugChat, (*Server).handleChatCreate, authAPIKey},
	{"POST /v1/agents/{agentId}/debug-chat/{conversationId}", buildHost, familyDebugChat, (*Server).handleChatTurn, authAPIKey},
	{"GET /v1/agents/{agentId}/deployments/active", buildHost, familyConversations, (*Server).handleActiveDeployment, authAPIKey},
	{"GET /{version}/{accountId}/{projectId}/conversations", runtimeHost, familyConversations, (*Server).handleList, authAPIKey},
	{"GET /{version}/{accountId}/{projectId}/conversations/{conversationId}", runtimeHost, familyConversations, (*Server).handleGet, authAPIKey},
	{"GET /{version}/{accountId}/{projectId}/conversations/{conversationId}/audio", runtimeHost, familyConversations, (*Server).handleAudio, authAPIKey},
	{"GET /v1/{accountId}/{projectId}/handoff_state", runtimeHost, familyConversations, (*Server).handleHandoffState, authAPIKey},
	{"POST /v1/outbound-calling", runtimeHost, familyConversations, (*Server).handleOutboundCall, authBrandToken},
	{"GET /v1/outbound-calling/{callSid}/status", runtimeHost, familyConversations, (*Server).handleOutboundStatus, authBrandToken},
	{"POST /v1/outbound-sms", runtimeHost, familyConversations, (*Server).handleOutboundSMS, authBrandToken},
	{"POST /v1/alert-rules", buildHost, familyAlerts, (*Server).handleAlertCreate, authAPIKey},
	{"GET /v1/alert-rules", buildHost, familyAlerts, (*Server).handleAlertList, authAPIKey},
	{"GET /v1/alert-rules/{ruleId}", buildHost, familyAlerts, (*Server).handleAlertGet, authAPIKey},
	{"PATCH /v1/alert-rules/{ruleId}", buildHost, familyAlerts, (*Server).handleAlertPatch, authAPIKey},
	{"DELETE /v1/alert-rules/{ruleId}", buildHost, familyAlerts, (*Server).handleAlertDelete, authAPIKey},
	{"GET /v1/alerts", buildHost, familyAlerts, (*Server).handleAlertsFiring, authAPIKey},
	{"POST /v1/webhooks/endpoints", buildHost, familyAlerts, (*Server).handleWebhookCreate, authAPIKey},
	{"GET /v1/webhooks/endpoints", buildHost, familyAlerts, (*Server).handleWebhookList, authAPIKey},
	{"GET /v1/webhook-endpoints/{endpointId}", buildHost, familyAlerts, (*Server).handleWebhookGet, authAPIKey},
	{"PATCH /v1/webhook-endpoints/{endpointId}", buildHost, familyAlerts, (*Server).handleWebhookPatch, authAPIKey},
	{"DELETE /v1/webhook-endpoints/{endpointId}", buildHost, familyAlerts, (*Server).handleWebhookDelete, authAPIKey},
}

// BuildHandler serves the build host family; runtime paths answer 404.
func (s *Server) BuildHandler() http.Handler { return s.handler(buildHost) }

// RuntimeHandler serves the runtime host family; build paths answer 404.
func (s *Server) RuntimeHandler() http.Handler { return s.handler(runtimeHost) }

// MessagingHandler serves the messaging host: POST /api/v1/access-token,
// POST /api/v1/sessions and the WebSocket at GET /ws.
func (s *Server) MessagingHandler() http.Handler { return s.handler(messagingHost) }

// Handler serves every family on one host: the self-serve region.
func (s *Server) Handler() http.Handler { return s.handler(buildHost, runtimeHost, messagingHost) }

func (s *Server) handler(hosts ...hostFamily) http.Handler {
	mux := http.NewServeMux()
	served := map[hostFamily]bool{}
	for _, h := range hosts {
		served[h] = true
	}
	for _, rt := range routes {
		if served[rt.host] {
			mux.Handle(rt.pattern, s.endpoint(rt, len(hosts) > 1))
		}
	}
	if served[buildHost] {
		s.registerAdmin(mux)
	}
	if served[messagingHost] {
		for _, mr := range messagingRoutes {
			mux.Handle(mr.pattern, s.messagingEndpoint(mr))
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		msg := fmt.Sprintf("no endpoint %s %s on this host", r.Method, r.URL.Path)
		if len(hosts) == 1 {
			msg = fmt.Sprintf("no endpoint %s %s on the %s host", r.Method, r.URL.Path, hosts[0])
			if other, ok := otherFamilyServes(hosts[0], r); ok {
				msg += fmt.Sprintf(" (the path belongs to the %s host family)", other)
			}
		}
		failStatus(w, http.StatusNotFound, msg)
	})
	return mux
}

// otherFamilyServes says which other host family has a route matching the
// request, to make the wrong-host 404 say so.
func otherFamilyServes(h hostFamily, r *http.Request) (hostFamily, bool) {
	for _, other := range []hostFamily{buildHost, runtimeHost, messagingHost} {
		if other == h {
			continue
		}
		mux := http.NewServeMux()
		for _, rt := range routes {
			if rt.host == other {
				mux.Handle(rt.pattern, http.NotFoundHandler())
			}
		}
		if other == messagingHost {
			for _, mr := range messagingRoutes {
				mux.Handle(mr.pattern, http.NotFoundHandler())
			}
		}
		if _, pattern := mux.Handler(r); pattern != "" {
			return other, true
		}
	}
	return 0, false
}

// endpoint wraps a route with, in order: fault injection, authentication,
// the per-key rate limit.
func (s *Server) endpoint(rt route, singleHost bool) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// The alert evaluator counts the server's own 5xx answers, the
		// injected ones included, as api_errors.
		w := &statusWriter{ResponseWriter: rw}
		defer s.countRequest(rt, w, r)
		if !s.faults.apply(w, r, s, rt.fam) {
			return
		}
		header, keys := "x-api-key", s.keys
		if rt.auth == authBrandToken {
			header, keys = brand.AuthTokenHeader(s.opts.Brand), s.tokens
		}
		key := r.Header.Get(header)
		if key == "" {
			s.fail(w, rt.fam, CodeUnauthorized, "missing "+header+" header")
			return
		}
		scope, ok := keys[key]
		if !ok || scope.host != rt.host {
			msg := fmt.Sprintf("invalid API key for the %s host", rt.host)
			if rt.auth == authBrandToken && s.opts.CallToken != "" {
				msg = "invalid " + header + ": outbound calling and SMS take the call token, not an API key"
			}
			s.fail(w, rt.fam, CodeUnauthorized, msg)
			return
		}
		if wait, ok := s.limiter.allow(key); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
			s.fail(w, rt.fam, CodeRateLimited, "rate limit exceeded for this API key")
			return
		}
		rt.handle(s, w, r, scope)
	})
}

// retryAfterSeconds renders a wait as whole seconds, at least 1.
func retryAfterSeconds(d time.Duration) int {
	secs := int((d + time.Second - 1) / time.Second)
	return max(secs, 1)
}

// ListenAndServe serves on addr until ctx is done, then shuts down
// gracefully. With singleHost every family shares addr; otherwise addr is
// the build host, and the runtime and messaging hosts take the next free
// ports. ready, if set, is called with the URLs once the listeners are
// open.
func (s *Server) ListenAndServe(ctx context.Context, addr string, singleHost bool, ready func(Info)) error {
	return s.ListenAndServeAddrs(ctx, Addrs{Build: addr}, singleHost, ready)
}

// Addrs are the listen addresses of the three host families. An empty
// Runtime (Messaging) address is the next free port after the build
// (runtime) host's, an ephemeral one when that was ephemeral.
type Addrs struct {
	Build, Runtime, Messaging string
}

// ListenAndServeAddrs is ListenAndServe with every address explicit. With
// singleHost only a.Build is used.
func (s *Server) ListenAndServeAddrs(ctx context.Context, a Addrs, singleHost bool, ready func(Info)) error {
	var lc net.ListenConfig
	buildLn, err := lc.Listen(ctx, "tcp", a.Build)
	if err != nil {
		return &ListenError{Addr: a.Build, Host: buildHost.String(), Err: err}
	}
	servers := []*http.Server{}
	listeners := []net.Listener{buildLn}
	if singleHost {
		u := listenURL(buildLn)
		s.setURLs(u, u, u)
		servers = append(servers, s.newHTTPServer(s.Handler()))
	} else {
		if host, port, err := net.SplitHostPort(a.Build); err == nil && (port == "0" || port == "") {
			if a.Runtime == "" {
				a.Runtime = net.JoinHostPort(host, "0")
			}
			if a.Messaging == "" {
				a.Messaging = net.JoinHostPort(host, "0")
			}
		}
		prev := buildLn
		for _, h := range []struct {
			addr   *string
			family hostFamily
		}{{&a.Runtime, runtimeHost}, {&a.Messaging, messagingHost}} {
			ln, err := listenNext(ctx, &lc, prev, *h.addr, h.family)
			if err != nil {
				for _, l := range listeners {
					l.Close()
				}
				return err
			}
			listeners = append(listeners, ln)
			prev = ln
		}
		s.setURLs(listenURL(listeners[0]), listenURL(listeners[1]), listenURL(listeners[2]))
		servers = append(servers, s.newHTTPServer(s.BuildHandler()), s.newHTTPServer(s.RuntimeHandler()), s.newHTTPServer(s.MessagingHandler()))
	}
	if ready != nil {
		ready(s.Info())
	}
	g, gctx := errgroup.WithContext(ctx)
	for i, srv := range servers {
		ln := listeners[i]
		g.Go(func() error {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve %s: %w", ln.Addr(), err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var errs []error
		for _, srv := range servers {
			if err := srv.Shutdown(shutCtx); err != nil {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("shut down simulator: %w", err)
		}
		return nil
	})
	return g.Wait()
}

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	// Shutdown does not touch hijacked connections: close the sockets.
	srv.RegisterOnShutdown(s.msg.closeSockets)
	return srv
}

// ListenError is a host's listener that could not be opened at the
// address it was given (Addrs, or the build address). Addr is that
// address as given: the net package's error leaves it out when it does
// not parse ("address 99999: invalid port"), and a caller that named the
// build address then blamed the wrong flag.
type ListenError struct {
	Addr string
	Host string // "build", "runtime" or "messaging"
	Err  error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("listen on %s for the %s host: %v", e.Addr, e.Host, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// listenNext opens the listener of a host family: at addr when given,
// else on the next free port after prev's.
func listenNext(ctx context.Context, lc *net.ListenConfig, prev net.Listener, addr string, family hostFamily) (net.Listener, error) {
	if addr != "" {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return nil, &ListenError{Addr: addr, Host: family.String(), Err: err}
		}
		return ln, nil
	}
	tcp, ok := prev.Addr().(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("listener %s is not TCP", prev.Addr())
	}
	var lastErr error
	for port := tcp.Port + 1; port <= tcp.Port+100 && port < 65536; port++ {
		ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(tcp.IP.String(), strconv.Itoa(port)))
		if err == nil {
			return ln, nil
		}
		lastErr = err
	}
	// A free port near the previous one could not be found: fall back to
	// an ephemeral one rather than failing.
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(tcp.IP.String(), "0"))
	if err != nil {
		return nil, fmt.Errorf("listen for the %s host: %w (after %v)", family, err, lastErr)
	}
	return ln, nil
}

// listenURL turns a listener address into a URL a client can dial: an
// unspecified host (0.0.0.0, ::) becomes loopback.
func listenURL(ln net.Listener) string {
	tcp, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + ln.Addr().String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
