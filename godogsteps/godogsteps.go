package godogsteps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cucumber/godog"

	"github.com/agenttest/agenttest/internal/config"
	"github.com/agenttest/agenttest/internal/diag"
	"github.com/agenttest/agenttest/internal/platform"
	"github.com/agenttest/agenttest/internal/reply"
	"github.com/agenttest/agenttest/internal/report"
	"github.com/agenttest/agenttest/internal/result"
	"github.com/agenttest/agenttest/internal/runner"
	"github.com/agenttest/agenttest/internal/scenario"
	"github.com/agenttest/agenttest/internal/secret"
	"github.com/agenttest/agenttest/internal/steps"
	"github.com/agenttest/agenttest/internal/webhook"
)

// Options configure the steps: where the platform is, its keys, and the
// defaults of scenarios that set none. The zero value of each optional
// field means its default.
type Options struct {
	// BuildURL is the build host (debug chat, agents); required.
	BuildURL string
	// BuildKey is the workspace key of the build host; required.
	BuildKey string
	// RuntimeURL, AccountID and RuntimeKey reach the runtime host:
	// needed by the confirmation steps (conversation record, handoff
	// state) and the probes (outbound calls, SMS). A RuntimeURL needs
	// the other two.
	RuntimeURL string
	AccountID  string
	RuntimeKey string
	// CallToken is the X-<Brand>-Auth-Token of the probes (outbound
	// calls, SMS) when the platform gives them a credential of their own;
	// empty sends RuntimeKey, as the run's target key call_token does.
	CallToken string
	// HTTPClient carries the calls; nil means a client of the steps' own.
	HTTPClient *http.Client
	// AllowHTTP accepts plain http:// URLs of hosts that are not
	// loopback, keys in clear text included (the target key allow_http);
	// without it such a URL is refused.
	AllowHTTP bool
	// MaxReplyBytes bounds a debug-chat reply after decompression; 0
	// means 1 MiB (the run's --max-reply-bytes).
	MaxReplyBytes int64
	// Rate caps the requests per second sent with each key (the run's
	// --rate); 0 learns the pace from the platform's 429s. RateWait
	// bounds a scenario's waiting on rate limits (--rate-wait); 0 means
	// the run's default, 15 minutes.
	Rate     float64
	RateWait time.Duration

	// MessagingURL and MessagingHost (the X-Host the connectors are
	// registered to) reach the Messaging API, for scenarios over web chat
	// (@via:messaging or Given the conversation is over messaging);
	// Connectors are the connector tokens, agent -> environment ->
	// token. Without them those scenarios fail with a configuration
	// error.
	MessagingURL  string
	MessagingHost string
	Connectors    map[string]map[string]string
	// MessagingQuiet is how long a web chat turn waits, after the
	// agent's typing indicator went off with an answer, for the agent to
	// go on (the target key messaging_quiet): 0, the default, completes
	// the answer when the indicator goes off. At most 10s, and shorter
	// than TurnTimeout.
	MessagingQuiet time.Duration

	// Agent is the agent of scenarios that name none (@agent:NAME or
	// Given the agent "NAME").
	Agent string
	// Env is the clientEnv of scenarios that name none: sandbox (the
	// default), pre-release or live.
	Env string
	// AllowLive lets scenarios run in the live environment (Env "live",
	// @env:live, Given the environment "live"), where the debug chat
	// talks to the live agent. Without it such a scenario fails before
	// its first call, and New refuses Env "live", as agenttest run
	// refuses them without --allow-live.
	AllowLive bool
	// TurnTimeout bounds each platform call (default 30s).
	TurnTimeout time.Duration
	// ConfirmTimeout bounds the wait for a conversation record and for a
	// webhook event (default 30s).
	ConfirmTimeout time.Duration
	// Getenv resolves ${env:NAME} in step arguments; nil resolves
	// nothing (os.LookupEnv is the usual choice). The keys it holds in
	// the AGENTTEST_* key variables are masked, and GITHUB_ACTIONS=true
	// has godog's terminal formatters print a failure that could hold a
	// workflow command between a stop of the runner's commands and
	// their resumption.
	Getenv func(name string) (string, bool)

	// ProbeNumbers are the numbers the probe steps may call or text;
	// a probe to any other number fails with a configuration error. None
	// listed: no probe may run.
	ProbeNumbers []string
	// SMSConnector returns the connector id (X-TOKEN-ID) of an agent's
	// SMS number in an environment, for the SMS probe; nil fails SMS
	// probes with a configuration error.
	SMSConnector func(agent, env string) string
	// WebhookReceiver, when set, is the receiver the webhook steps wait
	// on (NewWebhookReceiver, Steps.RegisterWebhook): agenttest's own,
	// which verifies each delivery. Give it or Webhooks, not both.
	WebhookReceiver *WebhookReceiver
	// Webhooks waits until a verified webhook event of the type arrived
	// for the conversation, or ctx ends (then it returns why); nil fails
	// the webhook steps with a configuration error. An error returned
	// once ctx ended fails the step as the event not arriving in time,
	// the agent's failure at the key confirm.webhooks.EVENT, as in
	// agenttest run; one returned before says the receiver cannot
	// confirm anything (an http: error, the platform's side).
	Webhooks func(ctx context.Context, conversationID, event string) error

	// Features reads the feature files godog runs (by the path godog
	// gives each scenario), so that failures point at the step's line and
	// ${column} references to an Examples row resolve; nil reads them as
	// godog does without an FS, from the operating system by that path
	// (relative to the working directory, or absolute). Give the FS
	// godog reads from when godog.Options has one. A file it cannot read
	// runs without them, and a step that needs an Examples value says so.
	Features fs.FS

	// Now is the clock of start times and durations; nil means time.Now.
	Now func() time.Time
	// AfterFunc, with Now, runs the steps' bounds (TurnTimeout,
	// ConfirmTimeout, @timeout, @within) on that clock: it calls f once
	// d has passed on Now, and stop cancels the call and reports whether
	// it did. A test that moves a fake clock past a bound cuts what it
	// bounds at once instead of waiting for it. Nil means real timers.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// Validate returns every problem of the options at once, with no key in
// them: a key given to another setting (an Env or AccountID read from the
// wrong variable) is refused as such, and masked in the other problems
// that quote the setting.
func (o Options) Validate() error {
	red := o.redactor()
	errs := o.misplacedKeys(red)
	// Both are usually read from the environment, so an empty one most
	// often means the variables were never loaded (the simulator's
	// --print-env file not sourced, a CI secret not mapped): say where
	// the values come from rather than only that they are missing.
	if o.BuildURL == "" {
		errs = append(errs, errors.New("BuildURL is required: the build host's URL, usually AGENTTEST_BUILD_URL (`agenttest sim --print-env` prints it for the simulator)"))
	}
	if o.BuildKey == "" {
		errs = append(errs, errors.New("BuildKey is required: the build host's key, usually AGENTTEST_BUILD_KEY (`agenttest sim --print-env` prints it for the simulator)"))
	}
	if o.RuntimeURL != "" && (o.AccountID == "" || o.RuntimeKey == "") {
		errs = append(errs, errors.New("RuntimeURL needs AccountID and RuntimeKey: the workspace and key of the runtime host, usually AGENTTEST_ACCOUNT_ID and AGENTTEST_RUNTIME_KEY (`agenttest sim --print-env` prints them for the simulator)"))
	}
	for _, n := range o.ProbeNumbers {
		if !config.IsPhoneNumber(n) {
			errs = append(errs, fmt.Errorf(`ProbeNumbers: %q is not a phone number: write E.164 numbers such as "+447700900001"`, n))
		}
	}
	if o.Env != "" && !reply.ValidEnv(o.Env) {
		errs = append(errs, fmt.Errorf("Env %q must be one of %s", o.Env, strings.Join(reply.Envs, ", ")))
	}
	if o.Env == live && !o.AllowLive {
		errs = append(errs, errors.New(`Env "live" talks to the live agent: set AllowLive to test in live on purpose`))
	}
	if o.MaxReplyBytes < 0 || o.Rate < 0 || o.RateWait < 0 {
		errs = append(errs, errors.New("MaxReplyBytes, Rate and RateWait must not be negative"))
	}
	if o.TurnTimeout < 0 || o.ConfirmTimeout < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	if o.WebhookReceiver != nil && o.Webhooks != nil {
		errs = append(errs, errors.New("WebhookReceiver and Webhooks both wait for webhook events: give one of them"))
	}
	if err := config.CheckMessagingQuiet(o.MessagingQuiet); err != nil {
		errs = append(errs, fmt.Errorf("MessagingQuiet %s %w", o.MessagingQuiet, err))
	} else if err := o.messagingOptions().CheckQuiet(); err != nil {
		errs = append(errs, fmt.Errorf("MessagingQuiet: %w (TurnTimeout)", err))
	}
	if len(o.Connectors) > 0 && (o.MessagingURL == "" || o.MessagingHost == "") {
		errs = append(errs, errors.New("Connectors need MessagingURL and MessagingHost"))
	}
	for agent, byEnv := range o.Connectors {
		for env, tok := range byEnv {
			if err := secret.CheckKey(fmt.Sprintf("connector token of %s in %s", agent, env), tok); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return red.Error(errors.Join(errs...))
}

// messagingOptions are the Messaging channel's options.
func (o Options) messagingOptions() runner.MessagingOptions {
	return runner.MessagingOptions{TurnTimeout: o.TurnTimeout, Quiet: o.MessagingQuiet}
}

// redactor masks the keys and tokens of o long enough to be told apart
// from other text; a shorter one is refused (Validate, platform.New).
func (o Options) redactor() *secret.Redactor {
	red, _ := secret.New(secret.Maskable(append([]string{o.BuildKey, o.RuntimeKey, o.CallToken}, o.tokens()...)...)...)
	return red
}

// envKeys are the keys Getenv holds in the variables that hold keys
// (AGENTTEST_BUILD_KEY and the others), whichever the Options use: as
// agenttest run masks the environment's keys whatever its target, a
// ${env:AGENTTEST_RUNTIME_KEY} a feature file reads is a key, though the
// Options hold another or none. One too short to mask is left out.
func (o Options) envKeys() []string {
	if o.Getenv == nil {
		return nil
	}
	var keys []string
	for name := range config.KeyVariables(nil) {
		if v, ok := o.Getenv(name); ok {
			keys = append(keys, v)
		}
	}
	return secret.Maskable(keys...)
}

// settings are o's values that are not keys, by name, each URL with its
// credentials masked (platform.RedactURL), which is how they print.
func (o *Options) settings() (names []string, values []*string) {
	return []string{"BuildURL", "RuntimeURL", "MessagingURL", "MessagingHost", "AccountID", "Agent", "Env"},
		[]*string{&o.BuildURL, &o.RuntimeURL, &o.MessagingURL, &o.MessagingHost, &o.AccountID, &o.Agent, &o.Env}
}

// misplacedKeys refuses a key in a setting that is not a key's, as a run
// refuses it in a target: in a URL it goes into every call's request
// line, in an id or a number into bodies and logs, never where a key is
// sent.
func (o Options) misplacedKeys(red *secret.Redactor) []error {
	var errs []error
	names, values := o.settings()
	for i, v := range values {
		if red.Contains(*v) {
			errs = append(errs, fmt.Errorf("%s holds a key: a key is sent only in the headers of a call, never in a URL or an id; give it to its key setting", names[i]))
		}
	}
	if slices.ContainsFunc(o.ProbeNumbers, red.Contains) {
		errs = append(errs, errors.New("ProbeNumbers holds a key: a key is sent only in the headers of a call, never in a URL or an id; give it to its key setting"))
	}
	return errs
}

// Format prints the options with each key (BuildKey, RuntimeKey,
// CallToken, the Connectors' tokens) masked, whatever the verb: a log of
// the options shows every setting but no key, as agenttest's resolved
// target does (config.Secret); nor a key given to another setting, nor
// the credentials of a URL (which New refuses).
func (o Options) Format(f fmt.State, verb rune) {
	// plain is Options without this method, whose fields fmt prints.
	type plain Options
	red := o.redactor()
	_, values := o.settings()
	for _, v := range values {
		*v = red.String(platform.RedactURL(*v))
	}
	o.ProbeNumbers = slices.Clone(o.ProbeNumbers)
	for i, n := range o.ProbeNumbers {
		o.ProbeNumbers[i] = red.String(n)
	}
	m := plain(o)
	for _, k := range []*string{&m.BuildKey, &m.RuntimeKey, &m.CallToken} {
		if *k != "" {
			*k = secret.Mask
		}
	}
	if o.Connectors != nil {
		m.Connectors = make(map[string]map[string]string, len(o.Connectors))
		for agent, byEnv := range o.Connectors {
			masked := make(map[string]string, len(byEnv))
			for env := range byEnv {
				masked[env] = secret.Mask
			}
			m.Connectors[agent] = masked
		}
	}
	out := fmt.Sprintf(fmt.FormatString(f, verb), m)
	if verb == 'v' && f.Flag('#') {
		out = "godogsteps.Options" + strings.TrimPrefix(out, "godogsteps.plain")
	}
	_, _ = io.WriteString(f, out)
}

// live is the clientEnv of the live agent, which needs AllowLive.
const live = "live"

// tokens lists the connector tokens, for redaction.
func (o Options) tokens() []string {
	var out []string
	for _, byEnv := range o.Connectors {
		for _, tok := range byEnv {
			out = append(out, tok)
		}
	}
	return out
}

// Steps is agenttest's step vocabulary bound to a platform: one value per
// suite, shared by every scenario (it holds the platform client and is
// safe for concurrent use). Register it as godog's ScenarioInitializer.
// The probes of the scenarios it serves to one number take turns on it,
// as in one agenttest run; build it once per suite, not per scenario.
type Steps struct {
	opts runner.Options
	lib  *steps.Library
	// allowLive is Options.AllowLive.
	allowLive bool
	// inActions is whether Options.Getenv says the suite runs in a
	// GitHub Actions job, whose runner obeys workflow commands in what
	// godog prints (failure.Format).
	inActions bool
	// client is the steps' platform client; receiver is
	// Options.WebhookReceiver (RegisterWebhook).
	client   *platform.Client
	receiver *WebhookReceiver
	// endpoint is the id of the endpoint RegisterWebhook registered,
	// which UnregisterWebhook deletes; guarded by mu.
	endpoint string
	// features is Options.Features; nil reads the files as godog does
	// without an FS: by their path, relative to the working directory
	// or absolute.
	features fs.FS
	// docs holds each feature file parsed once; mu guards it and
	// endpoint.
	mu   sync.Mutex
	docs map[string]featureDoc
}

// featureDoc is a feature file as the steps read it: parsed, or why it
// could not be read (nil doc and err both when godog cannot parse it
// either, and reports that itself).
type featureDoc struct {
	doc *scenario.FeatureDoc
	err error
}

// New checks the options and connects nothing yet: calls happen when the
// steps run.
func New(o Options) (*Steps, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("godogsteps: %w", err)
	}
	red, err := secret.New(append(append([]string{o.BuildKey, o.RuntimeKey, o.CallToken}, o.tokens()...), o.envKeys()...)...)
	if err != nil {
		return nil, fmt.Errorf("godogsteps: %w", err) // Validate checked them
	}
	cfg := platform.Config{
		// One redactor for the client and the runner: the signing
		// secret RegisterWebhook learns, and one a refused registration
		// quotes, is masked by both from then on.
		Redactor: red,
		BuildURL: o.BuildURL, BuildKey: o.BuildKey,
		RuntimeURL: o.RuntimeURL, AccountID: o.AccountID, RuntimeKey: o.RuntimeKey, CallToken: o.CallToken,
		HTTPClient: o.HTTPClient, Now: o.Now, AllowHTTP: o.AllowHTTP, MaxReplyBytes: o.MaxReplyBytes,
		Rate: o.Rate, RateWait: o.RateWait,
		// Checked here with the other hosts, rather than at the first
		// scenario over web chat.
		MessagingURL: o.MessagingURL, MessagingHost: o.MessagingHost,
	}
	client, err := platform.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("godogsteps: %w", err)
	}
	ropts := runner.Options{
		Channel:        runner.DebugChat(client),
		TurnTimeout:    o.TurnTimeout,
		ConfirmTimeout: o.ConfirmTimeout,
		DefaultAgent:   o.Agent,
		DefaultEnv:     o.Env,
		Getenv:         o.Getenv,
		Now:            o.Now,
		AfterFunc:      o.AfterFunc,
		Connector:      o.SMSConnector,
		// The client masks what the platform sends; the runner masks the
		// failures and errors godog prints, which may hold an
		// expectation's ${env:...} expanded.
		Redactor:    red,
		AllowNumber: func(n string) bool { return config.ListsNumber(o.ProbeNumbers, n) },
		// A Go team has Options, not an agenttest.yaml target: the
		// configuration errors name the fields to set.
		Settings: runner.Settings{
			Agent:        "set godogsteps.Options.Agent",
			Runtime:      "godogsteps.Options.RuntimeURL, AccountID and RuntimeKey",
			ProbeNumbers: "godogsteps.Options.ProbeNumbers",
			SMSConnector: "godogsteps.Options.SMSConnector",
			Messaging:    "godogsteps.Options.MessagingURL, MessagingHost and Connectors",
		},
		NoWebhooks: "give godogsteps.Options.WebhookReceiver (or Options.Webhooks)",
	}
	if o.RuntimeURL != "" {
		// Without a runtime host the runner says which Options a
		// confirmation or a probe needs, where the client would only
		// say which value it lacks.
		ropts.Records = client
	}
	if o.Webhooks != nil {
		ropts.Webhooks = webhookFunc(o.Webhooks)
	}
	if o.WebhookReceiver != nil {
		ropts.Webhooks = o.WebhookReceiver.r
	}
	if o.MessagingURL != "" {
		token := func(agent, env string) (string, error) {
			if tok := o.Connectors[agent][env]; tok != "" {
				return tok, nil
			}
			return "", fmt.Errorf("no Messaging connector for agent %s in %s: add it to godogsteps.Options.Connectors", agent, env)
		}
		ropts.Messaging = runner.Messaging(runner.MessagingClients(cfg, token), o.messagingOptions())
	}
	// The scenarios of the suite, concurrent under godog's Concurrency,
	// share one set of probe lines, as the cases of a run do: their
	// probes to one number take turns, and none takes a conversation
	// another one found (runner's probeline.go).
	ropts = ropts.WithProbeLines()
	// A session made now checks the options once (runner defaults).
	if _, err := runner.NewSession(context.Background(), &scenario.Scenario{}, &result.Case{}, ropts); err != nil {
		return nil, fmt.Errorf("godogsteps: %w", err)
	}
	inActions := false
	if o.Getenv != nil {
		v, ok := o.Getenv("GITHUB_ACTIONS")
		inActions = ok && v == "true"
	}
	return &Steps{opts: ropts, lib: scenario.Steps(), allowLive: o.AllowLive, inActions: inActions, features: o.Features, docs: map[string]featureDoc{},
		client: client, receiver: o.WebhookReceiver}, nil
}

// doc returns the parsed feature file of uri, reading it once; a nil doc
// when it cannot be read (with why) or parsed (godog reports what it
// cannot parse itself).
func (s *Steps) doc(uri string) featureDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.docs[uri]; ok {
		return d
	}
	var d featureDoc
	var src []byte
	var err error
	if s.features == nil {
		// godog opens the paths it is given with os.Open when
		// godog.Options.FS is nil: the same path reads the same file,
		// "../features/x.feature" and absolute paths included.
		src, err = os.ReadFile(uri)
	} else {
		src, err = fs.ReadFile(s.features, path.Clean(strings.TrimPrefix(uri, "./")))
	}
	if err != nil {
		d.err = fmt.Errorf("godogsteps cannot read the feature file %s (Options.Features should be the FS godog reads from): %w", uri, err)
	} else {
		d.doc, _ = scenario.ParseFeatureDoc(uri, src)
	}
	s.docs[uri] = d
	return d
}

// featurePath is the path of the feature file of a pickle's uri. godog
// runs one scenario of a path given as path:LINE and appends the line to
// the uri of its pickles (its parser's ExtractFeaturePathLine, whose rule
// this is: a trailing colon and digits).
func featurePath(uri string) string {
	i := strings.LastIndexByte(uri, ':')
	if i < 0 || i == len(uri)-1 || strings.Trim(uri[i+1:], "0123456789") != "" {
		return uri
	}
	return uri[:i]
}

// ours reports whether a step's text is one of agenttest's steps, matched
// as godog matches it: by the step definitions' patterns.
func (s *Steps) ours(text string) bool {
	for _, d := range s.lib.Defs() {
		if d.Pattern.MatchString(text) {
			return true
		}
	}
	return false
}

// webhookFunc adapts Options.Webhooks to the runner's receiver.
type webhookFunc func(ctx context.Context, conversationID, event string) error

// Wait reads an error the function returned once ctx ended as the event
// not arriving in time, the agent's failure, as agenttest run's receiver
// says it (*webhook.MissingError, with the function's reason after it);
// an error while ctx still runs is the receiver's own (it cannot confirm
// anything), the platform's side, as in agenttest run.
func (f webhookFunc) Wait(ctx context.Context, conversationID, event string) (webhook.Event, error) {
	if err := f(ctx, conversationID, event); err != nil {
		if ctx.Err() != nil {
			missing := &webhook.MissingError{Type: event, ConversationID: conversationID, Err: context.Cause(ctx)}
			return webhook.Event{}, fmt.Errorf("%w (Options.Webhooks: %v)", missing, err)
		}
		return webhook.Event{}, err
	}
	return webhook.Event{Type: event, ConversationID: conversationID}, nil
}

// Register registers every step of the vocabulary and the hooks that give
// each scenario its session on sc. godog calls it once per scenario (as
// the ScenarioInitializer); the scenario's state is created here, so
// concurrent scenarios share nothing but the Steps. On a Steps that New
// did not make (nil, when New's error went unchecked), agenttest's steps
// fail saying so and the team's own scenarios run.
func (s *Steps) Register(sc *godog.ScenarioContext) {
	if s == nil || s.lib == nil {
		// A Steps New did not make (its error ignored, or a zero
		// value): each of agenttest's steps fails saying so, where the
		// nil library would panic in godog's goroutine; the team's own
		// scenarios still run.
		for _, d := range scenario.Steps().Defs() {
			sc.Step(d.Pattern, notMade)
		}
		return
	}
	st := &state{steps: s}
	// Every error of ours reaches godog's formatters through these
	// three, masked here once: the session's are masked already, but a
	// scenario that cannot be compiled, one refused for live and a
	// shadowed step quote the feature file, where a key may be pasted
	// (godog prints the file's own text as it is; the errors we add to it
	// name where the key was, never the key).
	run := func(ctx context.Context) (context.Context, error) { return st.mask(st.run(ctx)) }
	for _, d := range s.lib.Defs() {
		// Any keyword: And/But after a When may hold a check. The handler
		// takes only the context: the step compiled from the pickle
		// already holds godog's arguments.
		sc.Step(d.Pattern, run)
	}
	sc.Before(func(ctx context.Context, p *godog.Scenario) (context.Context, error) {
		return st.mask(st.before(ctx, p))
	})
	sc.StepContext().Before(st.beforeStep)
	sc.StepContext().After(st.afterStep)
	sc.After(func(ctx context.Context, p *godog.Scenario, err error) (context.Context, error) {
		return st.mask(st.after(ctx, p, err))
	})
}

// mask is ctx and err with the keys the steps know masked in err's text,
// by the redactor of the client and the runner. An error with nothing to
// mask is returned as it is: a failure keeps its layout for godog's
// terminal formatters, and godog.ErrSkip stays godog's.
func (st *state) mask(ctx context.Context, err error) (context.Context, error) {
	return ctx, st.steps.opts.Redactor.Error(err)
}

// notMade is the step of a Steps that New did not make.
func notMade() error {
	return errors.New("godogsteps: this Steps was not made by New (is New's error checked?): agenttest's steps cannot run")
}

// state is one scenario's: its compiled program and its session.
type state struct {
	steps *Steps
	sc    *scenario.Scenario
	// index maps godog's pickle step ids to the program's steps.
	index   map[string]int
	session *runner.Session
	// stop ends the session's context, with the cause that ended the
	// context godog gave a step or hook of ours (bound).
	stop context.CancelCauseFunc
	// current is the step godog is about to run, at index at of the
	// program; next is the program's step that should run next.
	current  *steps.Step
	at, next int
	// setupOnly is set when the scenario's steps of ours are setup steps
	// alone: they pass, and no session opens.
	setupOnly bool
	// shadowed is set once godog ran a step of the program with another
	// definition: the session lacks it. A step godog skipped (after a
	// pending, skipped or undefined step) is not shadowed: godog reports
	// the scenario's end itself.
	shadowed bool
}

// before compiles the pickle (tag parameters, setup steps, probe rules,
// positions and row variables from the feature file)
// and opens the scenario's session; the conversation itself opens at the
// first step that needs it.
func (st *state) before(ctx context.Context, p *godog.Scenario) (context.Context, error) {
	// Only agenttest's steps make the program: the team's own steps,
	// registered next to ours, are godog's to run. Each step's text is
	// matched against the definitions once, here.
	ours := make(map[string]bool, len(p.Steps))
	for _, ps := range p.Steps {
		if st.steps.ours(ps.Text) {
			ours[ps.Text] = true
		}
	}
	// A scenario of the team's own steps alone is not agenttest's: no
	// program to compile (it would have "no When or Then steps"), no
	// session.
	if len(ours) == 0 {
		return ctx, nil
	}
	uri := featurePath(p.Uri)
	doc := st.steps.doc(uri)
	sc, diags := doc.doc.CompileSteps(uri, p, func(text string) bool { return ours[text] })
	if diags.HasErrors() {
		err := diagError(diags)
		if doc.err != nil {
			// The Examples values (${column}) come from the file: say
			// why they are missing rather than only that they are.
			err = fmt.Errorf("%w\n%w", err, doc.err)
		}
		return ctx, err
	}
	if sc.Skip != "" {
		return ctx, godog.ErrSkip
	}
	if !slices.ContainsFunc(sc.Steps, func(s *steps.Step) bool { return s.Kind != steps.Setup }) {
		// Setup steps alone (a Background's Given the agent above a
		// scenario of the team's own steps) choose a conversation that
		// never opens: the scenario is the team's, and no session.
		st.setupOnly = true
		return ctx, nil
	}
	st.sc = sc
	// The program holds one step per step of ours, in order.
	st.index = make(map[string]int, len(p.Steps))
	for _, ps := range p.Steps {
		if ours[ps.Text] {
			st.index[ps.Id] = len(st.index)
		}
	}
	o := st.steps.opts
	c := &result.Case{
		Name: sc.Name, Pos: sc.Pos, Tags: sc.Tags, Status: result.Pending,
		Agent: cmp.Or(sc.Agent, o.DefaultAgent),
		Env:   cmp.Or(sc.Env, o.DefaultEnv, runner.DefaultEnv),
	}
	if c.Env == live && !st.steps.allowLive {
		return ctx, fmt.Errorf("%s: config: scenario %q runs in the live environment without godogsteps.Options.AllowLive: set it to test in live on purpose", sc.Pos, sc.Name)
	}
	// The session's context is this hook's, and ends too when the
	// context of a later step or hook of ours ends (bound): the Before
	// hooks registered after Register and the team's steps may have
	// given it a deadline or a cancel of their own.
	sctx, stop := context.WithCancelCause(ctx)
	s, err := runner.NewSession(sctx, sc, c, o)
	if err != nil {
		stop(nil)
		return ctx, err
	}
	st.session, st.stop = s, stop
	return context.WithValue(ctx, stateKey{}, st), nil
}

// stateKey is the context key of the scenario's state, for Expand and
// ConversationID.
type stateKey struct{}

// Expand expands the ${...} references in text as agenttest's steps
// expand theirs, in the scenario of ctx (the context godog gives a step
// of yours): the values the scenario's "I remember ..." steps captured so
// far, the columns of its Examples row, and ${env:NAME} through
// Options.Getenv. A step of yours that takes a captured value (a booking
// reference the agent gave) passes its argument through it:
//
//	sc.Step(`^our backend has the booking "([^"]*)"$`, func(ctx context.Context, ref string) error {
//		ref, err := godogsteps.Expand(ctx, ref) // "${ref}" -> "R1234"
//		...
//	})
//
// It fails for a name the scenario has no value of, and in a scenario
// with no conversation of agenttest's steps (one of your steps alone, or
// ctx not godog's). It fails too for a text that holds a key or token of
// the Options, written out or expanded (${env:AGENTTEST_BUILD_KEY}), as
// agenttest's steps refuse to send one: a key goes only in the headers of
// a call to its own host, never to a step that may send it elsewhere or
// print it. The error names neither the key nor where it was.
func Expand(ctx context.Context, text string) (string, error) {
	st, ok := ctx.Value(stateKey{}).(*state)
	if !ok {
		if !strings.Contains(text, "${") {
			return text, nil
		}
		return "", fmt.Errorf("godogsteps: expand %q: not in a scenario with agenttest's steps (pass the context godog gives your step)", text)
	}
	out, err := st.session.Expand(text)
	if err != nil {
		// The text is the feature file's, which may quote a key as
		// written; the error goes to godog's output and reports.
		return "", st.steps.opts.Redactor.Error(fmt.Errorf("godogsteps: expand %q: %w", text, err))
	}
	return out, nil
}

// ConversationID is the id of the conversation of the scenario of ctx
// (the debug chat or web chat session, or the one a probe's call or SMS
// opened), once agenttest's steps opened or found it; "" before, and
// outside a scenario with agenttest's steps. A step of yours checks your
// own systems for this conversation with it.
func ConversationID(ctx context.Context) string {
	st, ok := ctx.Value(stateKey{}).(*state)
	if !ok {
		return ""
	}
	return st.session.Attempt().ConversationID
}

// bound makes the end of ctx, the context godog gives one step or hook of
// ours, end the session's context while it runs, with ctx's cause; the
// returned func stops that. godog chains each step's context from the
// one before, so it descends from the Before hook's, but a team's hook
// or step on the way may have added a deadline or a cancel: those bound
// agenttest's calls too.
func (st *state) bound(ctx context.Context) (release func() bool) {
	if ctx.Err() != nil {
		// Ended already: the session must see it before the step
		// calls anything, not whenever AfterFunc's goroutine runs.
		st.stop(context.Cause(ctx))
	}
	return context.AfterFunc(ctx, func() { st.stop(context.Cause(ctx)) })
}

// interrupted is the error of a step whose context ended: the session's
// "run interrupted", with why the context ended when that is a reason of
// the team's (a deadline, a cause of theirs), not a plain cancel.
func (st *state) interrupted(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	return err
}

func (st *state) beforeStep(ctx context.Context, gs *godog.Step) (context.Context, error) {
	st.current = nil
	if i, ok := st.index[gs.Id]; ok && st.sc != nil && i < len(st.sc.Steps) {
		st.current, st.at = st.sc.Steps[i], i
	}
	return ctx, nil
}

// afterStep notes a step of the program that godog ran with another
// definition: it passed, and the session did not run it.
func (st *state) afterStep(ctx context.Context, gs *godog.Step, status godog.StepResultStatus, _ error) (context.Context, error) {
	if i, ok := st.index[gs.Id]; ok && status == godog.StepPassed && i >= st.next {
		st.shadowed = true
	}
	return ctx, nil
}

// run executes the current step in the scenario's session.
func (st *state) run(ctx context.Context) (context.Context, error) {
	if st.setupOnly {
		return ctx, nil
	}
	if st.session == nil || st.current == nil {
		return ctx, errors.New("agenttest: step run outside an agenttest scenario")
	}
	// A step of the program that godog ran with another definition (a
	// team's pattern that matches agenttest's text, outside strict mode)
	// left the session without it: say so rather than check what follows
	// against a conversation that lacks it.
	if st.at != st.next {
		return ctx, st.shadowedStep()
	}
	st.next = st.at + 1
	defer st.bound(ctx)()
	a := st.session.Attempt()
	failures := len(a.Failures)
	if ctx.Err() != nil {
		// A check needs no call that would notice the end: say it
		// here, as the session says it of a call.
		return st.failed(ctx, fmt.Errorf("%s: %s: run interrupted", st.current.Pos, result.KindInterrupted))
	}
	if st.session.Exec(st.current) {
		return ctx, nil
	}
	return st.failed(ctx, stepError(a, failures))
}

// failed returns the error of a step (or of the After hook) that ended
// the attempt, with the cause of ctx's end, and attaches the attempt's
// transcript and confirmations to the step, as agenttest's Cucumber
// Messages file attaches them to its failed step: godog's cucumber
// formatter writes it as the step's embedding. Masked: the confirmations
// of an attempt are masked only when it ends.
func (st *state) failed(ctx context.Context, err error) (context.Context, error) {
	// The cause is the team's text, which may quote a key of the
	// Options: masked as the session's own errors are.
	err = st.steps.opts.Redactor.Error(st.interrupted(ctx, err))
	if body := st.steps.opts.Redactor.String(report.TranscriptText(st.session.Attempt())); body != "" {
		ctx = godog.Attach(ctx, godog.Attachment{Body: []byte(body), FileName: "transcript.txt", MediaType: "text/plain"})
	}
	return ctx, &failure{err: err, guard: st.steps.inActions}
}

// failure is the error of a step that ended the attempt. godog's pretty
// and progress formatters print it with %+v, the first line indented
// under the step and the others as they are, which put what was compared
// ("  expected: ...") left of the step it belongs to. With %+v its lines
// after the first are indented further, so that they sit under the first
// as in agenttest run's console; Error, which the junit and cucumber
// formatters and the After hooks read, keeps the text as it is.
//
// In a GitHub Actions job (guard), the runner obeys workflow commands in
// what godog prints: a line that starts, after blanks, with `::`, or
// holds `##[`. A reply or an error body in the failure is the
// platform's text, so %+v prints a failure that could hold one between a
// stop of the runner's commands and their resumption, with a token no
// one could know when the text was written, as agenttest run guards its
// console.
type failure struct {
	err   error
	guard bool
}

// terminalIndent is the column godog's pretty formatter prints an
// error's first line at: the later lines move by as much to sit under
// it.
const terminalIndent = "    "

func (f *failure) Error() string { return f.err.Error() }

func (f *failure) Unwrap() error { return f.err }

func (f *failure) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		msg := f.err.Error()
		text := strings.ReplaceAll(msg, "\n", "\n"+terminalIndent)
		if f.guard && report.MayHoldCommand(msg) {
			g := report.NewCommandGuard()
			// The stop goes on a line of its own: godog prints the first
			// line after words of its own ("Error: "), where the runner
			// would not read a command.
			text = "\n" + terminalIndent + g.Stop + "\n" + terminalIndent + text + "\n" + terminalIndent + g.Resume
		}
		io.WriteString(s, text)
		return
	}
	fmt.Fprintf(s, fmt.FormatString(s, verb), f.err.Error())
}

// after ends the session. godog#650: the hook fires right after a failing
// step, before the skipped steps' hooks; none of ours runs after it.
func (st *state) after(ctx context.Context, _ *godog.Scenario, err error) (context.Context, error) {
	if st.session != nil && err == nil && st.next < len(st.sc.Steps) {
		// The program's last steps never ran. When another definition
		// took one, a pass would be a green that tested nothing; else
		// godog cut the scenario short (a step pending, skipped or
		// undefined outside strict mode) and reports that itself.
		st.end()
		if st.shadowed {
			return ctx, st.shadowedStep()
		}
		return ctx, nil
	}
	if st.session != nil {
		if a := st.session.Attempt(); err == nil && a.Status == result.Pending {
			// A call no step awaited is awaited now, as in agenttest
			// run (Session.Finish).
			failures := len(a.Failures)
			release := st.bound(ctx)
			ok := st.session.Finish()
			release()
			if !ok {
				ctx, err = st.failed(ctx, stepError(a, failures))
				st.end()
				return ctx, err
			}
			st.session.Pass()
		}
		st.end()
	}
	return ctx, nil
}

// end ends the session and releases its context.
func (st *state) end() {
	st.session.End()
	st.stop(nil)
}

// shadowedStep says which step of the program godog ran with another
// definition.
func (st *state) shadowedStep() error {
	skipped := st.sc.Steps[st.next]
	return fmt.Errorf("%s: %q ran with another step definition, not agenttest's, so the session lacks it: keep your own step patterns from matching agenttest's step texts (agenttest steps lists them)", skipped.Pos, skipped.Text)
}

// stepError says why the attempt ended at this step: its new failures, or
// its error.
func stepError(a *result.Attempt, from int) error {
	var b strings.Builder
	switch {
	case a.Error != nil:
		fmt.Fprintf(&b, "%s: %s: %s", a.Error.Pos, a.Error.Kind, a.Error.Message)
	case len(a.Failures) > from:
		for i, f := range a.Failures[from:] {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s: %s: %s", f.Pos, f.Key, f.Message)
			// What was compared, and the diff, as agenttest run's
			// console shows them.
			if v := report.FailureValues(f, "  "); v != "" {
				b.WriteString("\n" + v)
			}
		}
	default:
		b.WriteString("run interrupted")
	}
	return errors.New(b.String())
}

// diagError joins the problems of a pickle that cannot run.
func diagError(ds diag.Diagnostics) error {
	var msgs []string
	for _, d := range ds {
		if d.Severity == diag.Error {
			msgs = append(msgs, d.String())
		}
	}
	return errors.New(strings.Join(msgs, "\n"))
}
