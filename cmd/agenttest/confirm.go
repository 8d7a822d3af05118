package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agenttest/agenttest/internal/clock"
	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/sim"
	"github.com/agenttest/agenttest/internal/webhook"
)

// confirmOptions are the flags of `agenttest run` for confirmations:
// the webhook receiver, the alert gate and live safety.
type confirmOptions struct {
	// webhookListen and webhookURL start a receiver; webhookSecret reuses
	// an endpoint already registered for webhookURL.
	webhookListen, webhookURL, webhookSecret string
	// gateAlerts ends the run with the alert gate.
	gateAlerts bool
	// allowLive allows a run against the live environment.
	allowLive bool
	confirmWait
}

// confirmWait is --confirm-timeout, of run and of compare (per side):
// it bounds the wait for what a confirmation or a probe reads to be
// shown: a record, a probe's conversation, a call's final status
// without a within:.
type confirmWait struct {
	confirmTimeout time.Duration
}

func (c *confirmWait) register(f *flags) {
	f.durationVar(&c.confirmTimeout, "confirm-timeout", "AGENTTEST_CONFIRM_TIMEOUT", runner.DefaultConfirmTimeout, "wait up to `DURATION` for the platform to show what a confirmation or a probe reads (a conversation record, a handoff state, a probe's conversation)")
}

func (c *confirmWait) problems() []string {
	if c.confirmTimeout <= 0 {
		return []string{fmt.Sprintf("--confirm-timeout must be positive, got %s", c.confirmTimeout)}
	}
	return nil
}

// applyConfig takes the config's run: confirm_timeout where the command
// line and the environment left the flag unset.
func (c *confirmWait) applyConfig(cfg *config.File, fl *flags) {
	if cfg != nil && cfg.Run.ConfirmTimeout != nil && !fl.isSet("confirm-timeout") {
		c.confirmTimeout = *cfg.Run.ConfirmTimeout
	}
}

func (c *confirmOptions) register(f *flags) {
	f.stringVar(&c.webhookListen, "webhook-listen", config.EnvWebhookListen, "", "receive webhook deliveries on `ADDR` for confirm: webhooks (default with the embedded simulator: 127.0.0.1:0)")
	f.stringVar(&c.webhookURL, "webhook-url", config.EnvWebhookURL, "", "public `URL` the platform delivers webhooks to (https://; default http://ADDR/ for a loopback --webhook-listen)")
	f.secretVar(&c.webhookSecret, "webhook-secret", config.EnvWebhookSecret, "signing `SECRET` of an endpoint already registered for --webhook-url, to reuse it")
	f.boolVar(&c.gateAlerts, "gate-alerts", "AGENTTEST_GATE_ALERTS", "after the run, fail it when an alert rule for a tested agent (or the account) is firing")
	f.boolVar(&c.allowLive, "allow-live", "AGENTTEST_ALLOW_LIVE", "allow running against the live environment")
	c.confirmWait.register(f)
}

func (c *confirmOptions) problems() []string {
	var out []string
	if c.webhookURL != "" {
		if u, err := url.Parse(c.webhookURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			out = append(out, fmt.Sprintf("--webhook-url %q must be an absolute http(s) URL", platform.RedactURL(c.webhookURL)))
		}
	}
	out = append(out, c.confirmWait.problems()...)
	return append(out, checkWebhookSecret("--webhook-secret", c.webhookSecret)...)
}

// applyConfig takes the target's and the file's settings the command line
// left unset.
func (c *confirmOptions) applyConfig(cfg *config.File, fl *flags, t *config.Target) {
	if cfg != nil && cfg.Run.GateAlerts != nil && !fl.isSet("gate-alerts") {
		c.gateAlerts = *cfg.Run.GateAlerts
	}
	c.confirmWait.applyConfig(cfg, fl)
	if c.webhookListen == "" {
		c.webhookListen = t.WebhookListen
	}
	if c.webhookURL == "" {
		c.webhookURL = t.WebhookURL
	}
	if t.AllowLive {
		c.allowLive = true
	}
}

// liveSafety refuses, before anything runs, a run that would talk to the
// live environment without --allow-live, and probes whose numbers the
// target does not list in probe_numbers. suites are the run's plan (the
// selected scenarios). Each problem names what asked for it, with its
// position.
func liveSafety(suites []*scenario.Suite, allowLive bool, t *config.Target) diag.Diagnostics {
	var ds diag.Diagnostics
	const hint = "pass --allow-live (or set allow_live: true on the target) to test in live on purpose"
	if !allowLive {
		if t.Env == "live" {
			ds = ds.Append(diag.Diagnostic{Message: fmt.Sprintf("the run targets the live environment (set by %s) without --allow-live", t.EnvFrom), Hint: hint})
		}
		for _, s := range suites {
			for _, sc := range s.Scenarios {
				if sc.Env == "live" || (sc.Env == "" && s.Env == "live") {
					ds = ds.Append(diag.Diagnostic{Pos: sc.Pos, Message: fmt.Sprintf("scenario %q runs in the live environment (env: live in its suite or scenario, or an @env:live tag) without --allow-live", sc.Name), Hint: hint})
				}
			}
		}
	}
	if t.Embedded {
		return ds // the simulator dials nobody
	}
	listed := "the target lists no probe_numbers"
	if len(t.ProbeNumbers) > 0 {
		listed = "probe_numbers of target " + t.Name + " (" + t.ProbeNumbersPos.String() + "): " + strings.Join(t.ProbeNumbers, ", ")
	}
	for _, sc := range scenarios(suites) {
		pr := sc.Probe()
		if pr == nil {
			continue
		}
		var nums []struct {
			pos  diag.Pos
			what string
			n    string
		}
		add := func(pos diag.Pos, what, n string) {
			if n != "" && !strings.Contains(n, "${") {
				nums = append(nums, struct {
					pos  diag.Pos
					what string
					n    string
				}{pos, what, n})
			}
		}
		if c := pr.Call; c != nil {
			add(c.Pos, "outbound_call: to", c.To)
			add(c.Pos, "outbound_call: agent_number", c.AgentNumber)
		}
		if s := pr.SMS; s != nil {
			add(s.Pos, "sms: to", s.To)
			add(s.Pos, "sms: agent_number", s.AgentNumber)
		}
		for _, n := range nums {
			if !t.AllowsNumber(n.n) {
				ds = ds.Append(diag.Diagnostic{Pos: n.pos,
					Message: fmt.Sprintf("probe of scenario %q would call or text %s (%s), which is not an allowed probe number (%s)", sc.Name, n.n, n.what, listed),
					Hint:    "list the number under probe_numbers: on the target in agenttest.yaml; probes never call or text other numbers"})
			}
		}
	}
	return ds
}

// missingSMSConnector reports, before anything runs, the SMS probes a
// target cannot send: the SMS API names the connector the text goes out
// through (X-TOKEN-ID), which a configured target gives per agent as
// sms_connector_ids, or for every agent as sms_connector_id (the embedded
// simulator has one per agent and environment). Found only when the probe
// came, it errored the scenario as if the platform were at fault.
func missingSMSConnector(suites []*scenario.Suite, t *config.Target) diag.Diagnostics {
	if t.Embedded {
		// It has a connector for every agent it serves, and
		// unservedAgents refuses the others.
		return nil
	}
	var ds diag.Diagnostics
	// first is the first SMS probe of each agent, in the plan's order.
	type probeOf struct {
		agent string
		pos   diag.Pos
	}
	var first []probeOf
	for _, sc := range scenarios(suites) {
		pr := sc.Probe()
		if pr == nil || pr.SMS == nil {
			continue
		}
		agent, env := agentEnv(sc, t)
		setting := t.SMSConnectorSetting(agent, env)
		if setting == "" {
			ds = ds.Append(diag.Diagnostic{Pos: pr.SMS.Pos,
				Message: fmt.Sprintf("scenario %q sends an SMS probe of agent %s in %s, and target %q has no SMS connector id for it (sms_connector_ids.%s, or sms_connector_id, %s)", sc.Name, agent, env, t.Name, agent, config.EnvSMSConnectorID),
				Hint:    "the connector id (X-TOKEN-ID) of the agent's SMS connector: add it to the target in agenttest.yaml (sms_connector_ids: {" + agent + ": ID}, or sms_connector_id for one agent), or set the variable; docs/confirmations.md, section Running confirmations"})
			continue
		}
		// An agent's own sms_connector_ids entry is its project's:
		// only those that share sms_connector_id text as another.
		if setting == "sms_connector_id" && !slices.ContainsFunc(first, func(p probeOf) bool { return p.agent == agent }) {
			first = append(first, probeOf{agent, pr.SMS.Pos})
		}
	}
	// The reference's X-TOKEN-ID is the connector id of one project, and
	// an SMS runs in its connector's project whatever the scenario says:
	// the one sms_connector_id sends the SMS probes of all agents but one
	// to another agent. Said before the run, since a platform that names
	// no project in its answer leaves them to fail as the agent's.
	for _, p := range first[min(1, len(first)):] {
		ds = ds.Append(diag.Diagnostic{Severity: diag.Warning, Pos: p.pos,
			Message: fmt.Sprintf("SMS probe of agent %s, while the SMS probes of agent %s (%s) send the same sms_connector_id of target %q: a connector id is one project's, and an SMS runs in its connector's project, so the SMS probes of all but one of these agents text as another agent",
				p.agent, first[0].agent, first[0].pos, t.Name),
			Hint: fmt.Sprintf("give each agent its connector id under sms_connector_ids on the target (sms_connector_ids: {%s: ID}); docs/confirmations.md, section probe:", p.agent)})
	}
	return ds
}

// missingWebhookReceiver reports, before anything runs, scenarios that
// confirm webhooks when the run starts no receiver (no --webhook-listen,
// webhook_listen or AGENTTEST_WEBHOOK_LISTEN on a configured platform):
// each would error at its confirmation, and exit 4 would tell a pipeline
// to retry a job that can only meet the same missing setting.
func missingWebhookReceiver(suites []*scenario.Suite, t *config.Target, listen string) diag.Diagnostics {
	if t.Embedded || listen != "" {
		return nil
	}
	var ds diag.Diagnostics
	for _, sc := range scenarios(suites) {
		for _, st := range sc.Steps {
			if len(st.Webhooks) == 0 {
				continue
			}
			ds = ds.Append(diag.Diagnostic{Pos: st.Pos,
				Message: fmt.Sprintf("scenario %q confirms webhooks (%s), and the run starts no webhook receiver for target %q", sc.Name, strings.Join(st.Webhooks, ", "), t.Name),
				Hint:    "run with --webhook-listen ADDR --webhook-url PUBLIC_URL (or webhook_listen and webhook_url on the target, AGENTTEST_WEBHOOK_LISTEN and AGENTTEST_WEBHOOK_URL), or leave these scenarios out with --tags; docs/confirmations.md, section confirm: webhooks:"})
			break
		}
	}
	return ds
}

// webhookEvents lists the events the scenarios of the plan confirm, or nil
// when none does.
func webhookEvents(suites []*scenario.Suite) []string {
	var out []string
	for _, sc := range scenarios(suites) {
		for _, ev := range sc.WebhookEvents() {
			if !slices.Contains(out, ev) {
				out = append(out, ev)
			}
		}
	}
	return out
}

// scenarios lists the scenarios of suites in order.
func scenarios(suites []*scenario.Suite) []*scenario.Scenario {
	var out []*scenario.Scenario
	for _, s := range suites {
		out = append(out, s.Scenarios...)
	}
	return out
}

// embeddedTweaks adapts the embedded simulator to a run: loopback http://
// receivers are allowed (the receiver is ours, on 127.0.0.1), outbound
// calls connect in a fraction of a second instead of the simulator's
// realistic 3 s, so probe suites stay quick, and the simulator keeps only
// the conversations a run can still read back (embeddedStoreCap).
// embeddedStoreCap bounds the conversations the embedded simulator keeps
// (sim.Options.StoreCap): ten times more than any --parallel the open-file
// limit allows has open or reads back in confirmations, while a run of
// 100,000 scenarios does not keep 100,000 conversations in the process
// (10 MB instead of 200).
const embeddedStoreCap = 5000

func embeddedTweaks(o *sim.Options) {
	o.Webhooks.AllowInsecure = true
	if o.CallToken == "" {
		// A call token distinct from the runtime key, so that every run
		// on the simulator proves probes send call_token, not the key.
		o.CallToken = embeddedCallToken
	}
	if o.StoreCap == 0 {
		o.StoreCap = embeddedStoreCap
	}
	if o.Webhooks.Backoff == 0 {
		o.Webhooks.Backoff = 200 * time.Millisecond
	}
	if o.Outbound.Queued == 0 {
		o.Outbound.Queued = 100 * time.Millisecond
	}
	if o.Outbound.Calling == 0 {
		o.Outbound.Calling = 200 * time.Millisecond
	}
}

// embeddedCallToken is the call token of the embedded simulator: the only
// X-<Brand>-Auth-Token its outbound calling and SMS accept.
const embeddedCallToken = "sim-call-token-not-a-secret"

// receiver is a webhook receiver serving for one run, and how to stop it.
type receiver struct {
	// webhooks is what confirmations wait on: the receiver, or, when
	// the platform would not register its endpoint, unregistered.
	webhooks runner.Webhooks
	stop     func()
	// calls is the account of the registration's calls, counted in the
	// run's pacing (runner.Options.Setup); nil when none was made.
	calls *platform.RateAccount
}

// unregistered stands for the receiver of a run whose webhook endpoint
// the platform would not register (a 5xx that outlasted the retries): no
// event can arrive, which is the platform's doing, so every wait errors
// its case at once (exit 4), never fails it.
type unregistered struct{ why string }

func (u unregistered) Wait(context.Context, string, string) (webhook.Event, error) {
	return webhook.Event{}, errors.New(u.why)
}

// partlyRegistered is the run's receiver when the platform registered its
// endpoint for the events the reference names but refused the others the
// scenarios confirm: a wait for a refused event errors its case at once,
// saying why, as unregistered's waits do; the others wait as the
// receiver's.
type partlyRegistered struct {
	*webhook.Receiver
	refused []string
	why     string
}

var _ runner.MarkingWebhooks = partlyRegistered{}

func (p partlyRegistered) Wait(ctx context.Context, conversationID, eventType string) (webhook.Event, error) {
	return p.WaitAfter(ctx, conversationID, eventType, webhook.Mark{})
}

func (p partlyRegistered) WaitAfter(ctx context.Context, conversationID, eventType string, after webhook.Mark) (webhook.Event, error) {
	if slices.Contains(p.refused, eventType) {
		return webhook.Event{}, errors.New(p.why)
	}
	return p.Receiver.WaitAfter(ctx, conversationID, eventType, after)
}

// webhookFailFirstEnv makes the run's webhook receiver answer 503 to the
// first N deliveries of every event (webhook.FailFirst). Like simFlagsEnv
// it exists for the fault drills (docs/reliability.md): it tests that the
// platform's retries and agenttest's confirmations get through a receiver
// that fails first, and stays out of --help.
const webhookFailFirstEnv = "AGENTTEST_WEBHOOK_FAIL_FIRST"

func webhookFailFirst(st *State) (int, error) {
	v := strings.TrimSpace(st.Getenv(webhookFailFirstEnv))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, usageErrorf("%s=%q: want a number of deliveries to refuse, 0 or more", webhookFailFirstEnv, v)
	}
	return n, nil
}

// startReceiver starts the run's webhook receiver when one is configured,
// or, on the embedded simulator, when a selected scenario confirms
// webhooks. It registers (or reuses) the endpoint and removes at the end
// an endpoint it registered. nil means no receiver. Each call of the
// registration is bounded by callTimeout (--turn-timeout). With no
// events it subscribes to webhook.DefaultEvents (webhook.Register).
func startReceiver(ctx context.Context, st *State, c *confirmOptions, t *config.Target, client *platform.Client, red *secret.Redactor, events []string, callTimeout time.Duration) (*receiver, error) {
	listen := c.webhookListen
	if listen == "" {
		if !t.Embedded || len(events) == 0 {
			return nil, nil
		}
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, usageErrorf("run: --webhook-listen: %s", listenProblem(listen, err))
	}
	public := c.webhookURL
	if public == "" {
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			ln.Close()
			return nil, usageErrorf("run: --webhook-url is required when --webhook-listen is not a loopback address: give the public https:// URL that reaches %s", ln.Addr())
		}
		public = "http://" + ln.Addr().String() + "/"
	}
	failFirst, err := webhookFailFirst(st)
	if err != nil {
		ln.Close()
		return nil, err
	}
	rcv := webhook.NewReceiver(webhook.Options{Now: st.Now, Brand: t.Brand})
	srv := webhook.Serve(ln, webhook.FailFirst(rcv, failFirst), webhook.ServerOptions{})
	shutdown := func() {
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}
	// The registration's calls wait on rate limits as the runner's do,
	// charged to one account: a Retry-After longer than the turn
	// timeout failed it.
	calls := platform.NewRateAccount()
	rctx := platform.WithRateAccount(ctx, calls)
	reg := boundedRegistrar{Client: client, timeout: callTimeout, now: st.Now, after: st.AfterFunc}
	ep, secret, err := webhook.Register(rctx, reg, public, events, c.webhookSecret)
	// The reference names four events and says others are not shown:
	// a platform that refuses one it does not name would otherwise fail
	// the registration, and every scenario that confirms webhooks with
	// it. The endpoint subscribes to the named ones, and only the waits
	// for the refused events error.
	var refused []string
	var refusal string
	known := slices.DeleteFunc(slices.Clone(events), func(e string) bool { return !slices.Contains(reply.WebhookEvents, e) })
	if err != nil && ctx.Err() == nil && webhook.Refused(err) && len(known) > 0 && len(known) < len(events) {
		if kep, ksecret, kerr := webhook.Register(rctx, reg, public, known, c.webhookSecret); kerr == nil {
			for _, e := range events {
				if !slices.Contains(known, e) {
					refused = append(refused, e)
				}
			}
			refusal = "the run's webhook endpoint could not be registered for " + strings.Join(refused, ", ") + ": " + client.Redact(err.Error()) +
				" (it was registered for the events the reference names)"
			fmt.Fprintf(st.Stderr, "agenttest: %s; the scenarios that confirm them will error\n", refusal)
			ep, secret, err = kep, ksecret, nil
		}
	}
	if err != nil {
		shutdown()
		if ctx.Err() != nil {
			// Interrupted while registering: the user's doing, not the
			// platform's. The run concludes as interrupted, and its
			// cases are not run.
			return &receiver{webhooks: unregistered{why: "run interrupted"}, stop: func() {}, calls: calls}, nil
		}
		// err names the URL (register webhook URL: POST ...: 500 ...).
		msg := "the run's webhook endpoint could not be registered: " + client.Redact(err.Error())
		if !fromPlatform(err) {
			return nil, errors.New("run: " + msg)
		}
		// The platform's error, after the retries: the run goes on, and
		// the scenarios that confirm webhooks error saying why. A
		// platform that could not be reached at all is likely to stop
		// the run at its first call, and its scenarios then do not run.
		then := "the scenarios that confirm webhooks will error"
		if ne := (*platform.NetworkError)(nil); errors.As(err, &ne) {
			then = "the run goes on, and stops if the platform stays unreachable; the scenarios that confirm webhooks will error if they run"
		}
		fmt.Fprintf(st.Stderr, "agenttest: %s; %s\n", msg, then)
		return &receiver{webhooks: unregistered{why: msg}, stop: func() {}, calls: calls}, nil
	}
	created := c.webhookSecret == "" || secret != c.webhookSecret
	if err := learnSigningSecret(red, secret); err != nil {
		// Of no use: a signing secret that cannot be masked must not
		// be kept, so no delivery can be verified.
		if created {
			deleteEndpoint(st, client, ep.ID)
		}
		shutdown()
		msg := "the run's webhook endpoint is of no use: " + err.Error()
		fmt.Fprintf(st.Stderr, "agenttest: %s; the scenarios that confirm webhooks will error\n", msg)
		return &receiver{webhooks: unregistered{why: msg}, stop: func() {}, calls: calls}, nil
	}
	rcv.SetSecret(secret)
	var hooks runner.Webhooks = rcv
	if len(refused) > 0 {
		hooks = partlyRegistered{Receiver: rcv, refused: refused, why: refusal}
	}
	return &receiver{webhooks: hooks, calls: calls, stop: func() {
		if created {
			// Registered by this run, so removed by it.
			deleteEndpoint(st, client, ep.ID)
		}
		shutdown()
	}}, nil
}

// deleteBound bounds the deletion of a webhook endpoint at exit, and
// deleteRateWait the time it may wait on rate limits besides.
const (
	deleteBound    = 5 * time.Second
	deleteRateWait = time.Minute
)

// deleteEndpoint removes, at the command's exit, the webhook endpoint it
// registered: nightly runs and debugging sessions must not pile endpoints
// up on the platform. A platform that does not answer holds the exit
// deleteBound; a rate limit is waited out, as long as a per-minute limit
// may ask (a second interrupt ends the wait), where a Retry-After of 5s
// left the endpoint registered. A failure is a warning, which says which
// bound ended the deletion when one did: the client's error then says
// only that its context ended. Both bounds run on the State's clock.
func deleteEndpoint(st *State, client *platform.Client, id string) {
	limit, cancel := clock.WithTimeoutCause(platform.WithRateAccount(context.Background(), platform.NewRateAccount()), deleteBound+deleteRateWait, nil, st.AfterFunc)
	defer cancel()
	ctx, stop := runner.CallTimeout(limit, deleteBound, st.Now, st.AfterFunc)
	defer stop()
	err := client.DeleteWebhook(ctx, id)
	if err == nil || platform.IsNotFound(err) {
		return
	}
	why := err.Error()
	switch {
	case limit.Err() != nil:
		why += fmt.Sprintf(" (%s of rate-limit waits exceeded)", deleteRateWait)
	case ctx.Err() != nil:
		why += fmt.Sprintf(" (the deletion's bound of %s exceeded)", deleteBound)
	}
	// The id is the platform's too, and may hold the signing secret
	// learnt since it was read.
	fmt.Fprintf(st.Stderr, "agenttest: %s\n", client.Redact("could not delete webhook endpoint "+id+": "+why))
}

// boundedRegistrar bounds each call of the registration of a run's
// webhook endpoint by the turn timeout, as the runner bounds each of its
// own calls: a platform that takes a request and never answers would
// otherwise hold the run before its first case until an interrupt ended
// it, having tested nothing.
type boundedRegistrar struct {
	*platform.Client
	timeout time.Duration
	// now is the client's clock, which measures its waits on rate
	// limits (runner.CallTimeout), and after runs the bound's timer on
	// it (State.AfterFunc).
	now   func() time.Time
	after clock.AfterFunc
}

func (b boundedRegistrar) ListWebhooks(ctx context.Context) ([]platform.WebhookEndpoint, error) {
	return runner.Bounded(ctx, b.timeout, b.now, b.after, b.Client.ListWebhooks)
}

func (b boundedRegistrar) RegisterWebhook(ctx context.Context, reg platform.WebhookRegistration) (*platform.WebhookEndpoint, error) {
	return runner.Bounded(ctx, b.timeout, b.now, b.after, func(ctx context.Context) (*platform.WebhookEndpoint, error) {
		return b.Client.RegisterWebhook(ctx, reg)
	})
}

func (b boundedRegistrar) UpdateWebhook(ctx context.Context, id string, upd platform.WebhookUpdate) (*platform.WebhookEndpoint, error) {
	return runner.Bounded(ctx, b.timeout, b.now, b.after, func(ctx context.Context) (*platform.WebhookEndpoint, error) {
		return b.Client.UpdateWebhook(ctx, id, upd)
	})
}

func (b boundedRegistrar) DeleteWebhook(ctx context.Context, id string) error {
	_, err := runner.Bounded(ctx, b.timeout, b.now, b.after, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, b.Client.DeleteWebhook(ctx, id)
	})
	return err
}

// fromPlatform reports whether err is the platform's: an answer the
// client could not use, no answer at all, or 429s that outlasted the
// wait budget.
func fromPlatform(err error) bool {
	var (
		ae *platform.APIError
		re *platform.ResponseError
		ne *platform.NetworkError
		rd *platform.RedirectError
		rl *platform.RateLimitError
	)
	return errors.As(err, &ae) || errors.As(err, &re) || errors.As(err, &ne) || errors.As(err, &rd) || errors.As(err, &rl)
}

// confirmRunOptions fills the runner options of confirmations, probes and
// the gate.
func confirmRunOptions(ro *runner.Options, c *confirmOptions, t *config.Target, client *platform.Client, rcv *receiver) {
	ro.Records = client
	ro.ConfirmTimeout = c.confirmTimeout
	if rcv != nil {
		ro.Webhooks, ro.Setup = rcv.webhooks, rcv.calls
	}
	// missingWebhookReceiver refuses such a run before it starts; this is
	// said should a scenario get past it.
	ro.NoWebhooks = "run with --webhook-listen ADDR --webhook-url PUBLIC_URL (automatic with the embedded simulator)"

	if c.gateAlerts {
		ro.Alerts = client
	}
	ro.AllowNumber = t.AllowsNumber
	ro.Connector = t.SMSConnector
}
